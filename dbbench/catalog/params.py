"""SQL text shared by data files: ``:name`` parameters, converted for the drivers."""

from __future__ import annotations

import re

# Values every dataset offers to query catalogs as `:name` (dbbench.dataset's Dataset.params
# supplies them; a catalog may name them without declaring them)
DATASET_PARAMS = (
    "now",
    "cleanup_cutoff",
    "retain",
    "match_repository",
    "match_kind",
    "match_token",
    "match_token_sha256",
    "hot_repository",
    "hot_distribution",
    "group_repository",
    "group_distribution",
    "group_snapshot_revision",
    "exact_row_offset",
    "late_row_offset",
)

_PARAM = re.compile(r"(?<![:\w]):([A-Za-z_]\w*)")


def to_pyformat(sql: str) -> str:
    """``:name`` (portable, readable in data files) to the drivers' ``%(name)s``; ``%`` escaped."""
    return _PARAM.sub(r"%(\1)s", sql.replace("%", "%%"))


def param_names(sql: str) -> list[str]:
    return list(dict.fromkeys(_PARAM.findall(sql)))
