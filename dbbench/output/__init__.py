"""Everything dbbench prints or writes for people and CI: the one place renderers live.

The measuring modules (:mod:`dbbench.measure.explain`, :mod:`dbbench.dataset.seed`, :mod:`dbbench.diff`, …) never
format; the commands hand their results or documents to these modules:

* :mod:`dbbench.output.explain`: shape / remediation tables, failures, JUnit, the write-up Markdown;
* :mod:`dbbench.output.html`: the self-contained HTML page with the per-sample chart;
* :mod:`dbbench.output.diff`: a diff as text, Markdown and JUnit;
* :mod:`dbbench.output.commands`: the tables of ``seed``, ``validate``, ``info``, ``servers``, ``bench``.

This module holds what they share: number formats, tables (terminal, Markdown or HTML) and the JUnit
writer. They return text; the command line writes it (:func:`dbbench.cli.app.write_file`).
"""

from __future__ import annotations

import html as _html
from typing import Any

from tabulate import tabulate

from verdict.junit import Case as Case  # the JUnit writer, shared with httpbench
from verdict.junit import junit as junit


def md_table(headers: list[str], rows: list[list[Any]], align: str = "") -> str:
    """A Markdown table in the published write-up's style (``| --- | ---: |``); ``align`` holds one
    letter per column, ``l`` or ``r``."""

    def cell(text: Any) -> str:
        return str(text).replace("|", "\\|").replace("\n", " ")

    sep = ["---:" if (align[i : i + 1] == "r") else "---" for i in range(len(headers))]
    lines = ["| " + " | ".join(cell(h) for h in headers) + " |", "| " + " | ".join(sep) + " |"]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def html_table(headers: list[str], rows: list[list[Any]], align: str = "") -> str:
    """An HTML ``<table>`` (escaped; a column whose ``align`` letter is ``r`` right-aligned)."""

    def cell(tag: str, text: Any, i: int) -> str:
        style = ' style="text-align:right"' if align[i : i + 1] == "r" else ""
        return f"<{tag}{style}>{_html.escape(str(text))}</{tag}>"

    head = "<tr>" + "".join(cell("th", h, i) for i, h in enumerate(headers)) + "</tr>"
    body = "\n".join("<tr>" + "".join(cell("td", c, i) for i, c in enumerate(row)) + "</tr>" for row in rows)
    return f"<table>\n<thead>{head}</thead>\n<tbody>\n{body}\n</tbody>\n</table>"


# The tables of the HTML pages (dbbench report --html, dbbench grow --html), the same on each.
HTML_TABLE_CSS = (
    "table{border-collapse:collapse;margin:1em 0}th,td{border:1px solid #ccc;padding:4px 8px;font-size:13px}"
    "th{background:#f0f3f6}td{font-variant-numeric:tabular-nums}"
)


def html_start(title: str, width: int, css: str = "") -> list[str]:
    """The lines an HTML page of dbbench's starts with, through its ``<h1>`` title: the body at
    most ``width`` pixels wide, the tables' style, and ``css``."""
    esc = _html.escape
    return [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{esc(title)}</title>",
        f"<style>body{{font-family:sans-serif;max-width:{width}px;margin:2em auto;color:#222}}"
        + css
        + HTML_TABLE_CSS
        + "</style>",
        "</head><body>",
        f"<h1>{esc(title)}</h1>",
    ]


def table(headers: list[str], rows: list[list[Any]], align: str, fmt: str) -> str:
    """A table as Markdown (``fmt == "markdown"``), HTML (``"html"``) or as a tabulate terminal
    table of that format."""
    if fmt == "markdown":
        return md_table(headers, rows, align)
    if fmt == "html":
        return html_table(headers, rows, align)
    colalign = tuple("right" if a == "r" else "left" for a in align.ljust(len(headers), "l"))
    return tabulate(rows, headers=headers, tablefmt=fmt, disable_numparse=True, colalign=colalign)


def table_format(fmt: str) -> str:
    """The ``--format`` option's value (``table`` / ``markdown``) as a :func:`table` format."""
    return "markdown" if fmt == "markdown" else "simple"
