"""Result documents as files: written as strict JSON (no NaN/Infinity, no secrets), read back
bounded and checked. :mod:`dbbench.document.build` builds them."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dbbench.dialects.plan import MAX_DEPTH
from dbbench.document.model import ResultFileError
from verdict.files import read_text_bounded, text_depth_exceeds

if TYPE_CHECKING:
    from dbbench.document.model import Document


def dumps(doc: dict[str, Any]) -> str:
    """``doc`` as the strict JSON text dbbench writes (no NaN/Infinity; a final newline)."""
    return json.dumps(doc, indent=2, allow_nan=False, default=str) + "\n"


def write(path: Path | str, doc: dict[str, Any]) -> str:
    """Write ``doc`` as strict JSON (:func:`dumps`; :func:`verdict.files.write_output`: an ordinary
    file atomically, a device or link written through); returns the text written."""
    from verdict.files import write_output

    text = dumps(doc)
    write_output(path, text)
    return text


RESULT_LIMIT = 64 * 1024 * 1024  # a result of 1,000 shapes with their plans is a few MiB
_MAX_NUMBER_CHARS = 100  # a float needs 17 significant digits; dbbench rounds to 4 places
_MAX_JSON_DEPTH = 2 * MAX_DEPTH + 16  # a plan level is an object inside a "children" list


def load(path: Path | str, kind: str = "explain") -> dict[str, Any]:
    """:func:`load_document` as the dict dbbench writes (:meth:`Document.to_json`)."""
    return load_document(path, kind).to_json()


def load_document(path: Path | str, kind: str = "explain") -> Document:
    """Read a result document written by ``dbbench explain --output`` / ``check --output`` /
    ``baseline save`` and check the fields the renderers and ``diff`` rely on, naming the first bad
    one (``results[3].remediated.samples_ms``)."""
    from dbbench.document.model import Document

    path = Path(path)
    try:
        text = read_text_bounded(path, limit=RESULT_LIMIT, what="dbbench result")
    except FileNotFoundError:
        raise ResultFileError(f"{path}: no such file") from None
    except OSError as exc:
        raise ResultFileError(f"{path}: {exc.strerror}") from None

    def no_constant(name: str):
        raise ResultFileError(f"{path}: {name} is not a number (dbbench writes JSON without NaN/Infinity)")

    def bounded(literal: str) -> str:
        if len(literal) > _MAX_NUMBER_CHARS:
            raise ResultFileError(
                f"{path}: a number has too many digits ({len(literal)}; "
                f"dbbench writes at most {_MAX_NUMBER_CHARS})"
            )
        return literal

    def finite_float(literal: str) -> float:
        value = float(bounded(literal))
        if not math.isfinite(value):
            raise ResultFileError(
                f"{path}: {literal[:40]} is not a finite number (dbbench writes JSON without NaN/Infinity)"
            )
        return value

    # Nesting is bounded before decoding: the decoder recurses, and a plan is the deepest thing a
    # result holds (two JSON levels per plan level).
    if text_depth_exceeds(text, _MAX_JSON_DEPTH):
        raise ResultFileError(
            f"{path}: JSON nested more than {_MAX_JSON_DEPTH} levels deep "
            f"(a dbbench result holds plans of at most {MAX_DEPTH} levels)"
        )
    try:
        doc = json.loads(
            text, parse_constant=no_constant, parse_int=lambda s: int(bounded(s)), parse_float=finite_float
        )
    except json.JSONDecodeError as exc:
        raise ResultFileError(
            f"{path}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        ) from None
    return Document.from_json(doc, path, kind)
