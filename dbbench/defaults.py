"""dbbench's constants, in one place: its version, the commands' option defaults and the library's
keyword defaults, and the bounds the options, the library and the values read back from result
files are held to."""

from __future__ import annotations

import re
from typing import Literal

Dialect = Literal["postgresql", "mysql"]
# The one dialect order: every per-dialect table (dbbench.dialects.MODULES, the local servers)
# lists them in it, and targets, results and tables follow it (tests/test_urls.py checks).
DIALECTS: tuple[Dialect, ...] = ("postgresql", "mysql")
DIALECT_LABEL = {"postgresql": "PostgreSQL", "mysql": "MySQL"}

VERSION = "0.1.0"  # as in pyproject.toml; written into every result file (tool.version)
WARMUPS = 3  # untimed EXPLAIN ANALYZE runs before the timed ones
RUNS = 7  # timed samples per spelling (nearest-rank p50 / p95)
TIMEOUT_S = 30.0  # per-statement timeout: a pathological plan is reported as timeout
CATALOG = "alpine"  # catalog name under sql/catalog/
NAMESPACE = "dbbench"  # the PostgreSQL schema / MySQL database dbbench owns
CHECK_NAMESPACE = "dbbench_check"  # `dbbench check`'s scratch namespace (when --namespace is the default)
DATASET = "alpine-100k"  # `dbbench seed`'s dataset
CHECK_DATASET = "alpine-ci"  # `dbbench check`'s scratch dataset (a catalog without setup SQL)
GROW_SIZES = "10k,100k,1m"  # `dbbench grow`'s ladder (dbbench.measure.grow.parse_sizes)
GROW_NAMESPACE = "dbbench_grow"  # `dbbench grow`'s namespace prefix (one namespace per size)
GROW_WARMUPS = 1  # `dbbench grow`: untimed runs per spelling and size
GROW_RUNS = 3  # `dbbench grow`: timed samples per spelling and size
GROW_TIMEOUT_S = 60.0  # `dbbench grow`: per-statement timeout
SCALE = 10_000  # `:scale` of a catalog's data spec (dbbench.volume), unless a command says
# Every statement dbbench itself runs in a namespace starts with this comment, so that `dbbench
# capture` (which reads what clients ran there) leaves it out.
QUERY_TAG = "/* dbbench */ "

# The bounds of the sampling options, for the command line (dbbench.cli.options, dbbench.cli) and for
# the same values read back from a result file or baseline (dbbench.document.check.check_config): a
# baseline cannot make `diff` do what no command line could.
WARMUPS_RANGE = (0, 1000)  # --warmups
RUNS_RANGE = (1, 1000)  # --runs; also the most samples a spelling of a result file holds
TIMEOUT_RANGE_S = (0.1, 3600)  # --timeout, seconds (finite: verdict.cli.Float)
NAMESPACE_PATTERN = r"[a-z_][a-z0-9_]{0,62}"  # a namespace dbbench creates (seed) and uses
NAMESPACE_RULE = "use lower-case letters, digits and _ (max 63)"


def valid_namespace(name: object) -> bool:
    """Whether ``name`` is a namespace name dbbench accepts (:data:`NAMESPACE_PATTERN`)."""
    return isinstance(name, str) and re.fullmatch(NAMESPACE_PATTERN, name) is not None
