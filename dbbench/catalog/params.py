"""SQL text shared by data files: ``:name`` parameters, converted for the drivers."""

from __future__ import annotations

import re

_PARAM = re.compile(r"(?<![:\w]):([A-Za-z_]\w*)")


def to_pyformat(sql: str) -> str:
    """``:name`` (portable, readable in data files) to the drivers' ``%(name)s``; ``%`` escaped."""
    return _PARAM.sub(r"%(\1)s", sql.replace("%", "%%"))


def param_names(sql: str) -> list[str]:
    return list(dict.fromkeys(_PARAM.findall(sql)))
