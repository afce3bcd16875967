"""dbbench's defaults, in one place: the commands' option defaults and the library's keyword defaults."""

from __future__ import annotations

WARMUPS = 3  # untimed EXPLAIN ANALYZE runs before the timed ones
RUNS = 7  # timed samples per spelling (nearest-rank p50 / p95)
TIMEOUT_S = 30.0  # per-statement timeout: a pathological plan is reported as timeout
CATALOG = "alpine"  # catalog name under sql/catalog/
NAMESPACE = "dbbench"  # the PostgreSQL schema / MySQL database dbbench owns
CHECK_NAMESPACE = "dbbench_check"  # `dbbench check`'s scratch namespace (when --namespace is the default)
DATASET = "alpine-100k"  # `dbbench seed`'s dataset
CHECK_DATASET = "alpine-ci"  # `dbbench check`'s scratch dataset (a catalog without setup SQL)
