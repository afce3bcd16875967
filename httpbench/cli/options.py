"""How httpbench's commands declare their click options: a default, where there is one, is shown in
``--help``."""

from __future__ import annotations

from typing import Any

import click


def option(*decls: str, **attrs: Any):
    """``click.option(*decls, **attrs)``, with ``show_default`` when a default other than None is given."""
    if attrs.get("default") is not None:
        attrs.setdefault("show_default", True)
    return click.option(*decls, **attrs)
