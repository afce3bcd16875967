"""Is the timing client fast enough: httpbench against wrk on the same server (``bench-client``)."""
