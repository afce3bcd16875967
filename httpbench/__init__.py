"""httpbench: same-host A/B HTTP benchmarks of a candidate against a baseline."""

__version__ = "0.1.0"
