"""httpbench: same-host A/B HTTP benchmarks of a candidate against a baseline.

The folders, in the order a comparison goes through them:

* :mod:`httpbench.cli`: the command line: parse, one library call, render;
* :mod:`httpbench.config`: what a comparison is asked (targets, credentials, scenarios, gates),
  built into the run's config;
* :mod:`httpbench.measure`: the preflight, the timing client, seed and paired rounds, real-client
  rounds, summaries and gates;
* :mod:`httpbench.profiles`: protocol profiles, one folder per protocol
  (:mod:`~httpbench.profiles.alpine`, :mod:`~httpbench.profiles.huggingface`: format or fixture,
  clients, checks, demo);
* :mod:`httpbench.peers`: the real servers the project starts on loopback (nginx, caddy, a proxy cache);
* :mod:`httpbench.report`: every renderer of the result;
* :mod:`httpbench.bench`: is the timing client fast enough (against wrk).

Beside them :mod:`httpbench.model` (what a comparison is: targets, scenarios, rounds, gates) and
:mod:`httpbench.errors` (every error, and the one tree they form).
"""

__version__ = "0.1.0"
