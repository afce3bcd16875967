"""``httpbench report RESULT.json``: a saved compare result rendered again: its tables (text or
``--markdown``) on stdout, or one self-contained HTML page (``--html FILE``: the verdict with its
intervals, the preflight, per-round plots per scenario and target, the profile's tables)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from httpbench.errors import HttpbenchError
from verdict.cli import InputFile, OutputFile
from verdict.files import excerpt, read_text_bounded, text_depth_exceeds

SCHEMA = "httpbench.compare/1"


RESULT_LIMIT = 256 * 1024 * 1024  # a compare result with every sample kept (--samples) is tens of MiB
MAX_NESTING = 64  # a compare result nests about ten levels deep


def read_result(path: Path) -> dict:
    """A compare result document, or one line saying why it is not one: read bounded in size
    (:data:`RESULT_LIMIT`), its nesting bounded before decoding (:data:`MAX_NESTING`)."""
    try:
        text = read_text_bounded(path, limit=RESULT_LIMIT, what="compare result")
    except OSError as exc:
        raise HttpbenchError(f"{path}: {exc.strerror}") from None
    if text_depth_exceeds(text, MAX_NESTING):
        raise HttpbenchError(f"{path}: JSON nested more than {MAX_NESTING} levels deep: not a compare result")
    try:
        doc = json.loads(text)
    except ValueError:
        raise HttpbenchError(f"{path}: not JSON") from None
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        found = doc.get("schema") if isinstance(doc, dict) else type(doc).__name__
        raise HttpbenchError(
            f"{path}: not an httpbench compare result (schema {excerpt(repr(found))}, expected {SCHEMA!r})"
        )
    return doc


@click.command("report")
@click.argument("result", type=InputFile())
@click.option(
    "--html",
    "html_out",
    type=OutputFile(),
    default=None,
    metavar="FILE",
    help="Write the result as one HTML page here.",
)
@click.option("--markdown", is_flag=True, help="Print the tables as GitHub Markdown.")
def report(result: Path, html_out: str | None, markdown: bool) -> None:
    """Render a saved `httpbench compare --output` result: tables, or an HTML page with plots."""
    from httpbench.report import tables
    from httpbench.report.html import html
    from verdict.files import write_output

    doc = read_result(result)
    try:
        if html_out:
            write_output(html_out, html(doc))
            click.echo(f"httpbench: wrote {html_out}", err=True)
        else:
            click.echo(tables(doc, markdown=markdown))
    except (KeyError, TypeError, AttributeError) as exc:
        raise HttpbenchError(
            f"{result}: an incomplete compare result ({type(exc).__name__}: {excerpt(str(exc))})"
        ) from None
