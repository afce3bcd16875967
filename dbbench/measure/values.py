"""The values a shape runs with: the dataset's, the shape's literal ``[params]``, then each of its
setup queries' row (what ``dbbench explain`` binds, and what the holder of a race binds)."""

from __future__ import annotations

from dbbench.catalog.entries import Shape
from dbbench.catalog.params import to_pyformat
from dbbench.errors import DbbenchError


def resolve_params(conn, d, shape: Shape, base: dict | None = None) -> dict:
    """The dataset's values, then the shape's literal ``[params]``, then each setup query's row."""
    params = {**(base or {}), **shape.params}
    for sql in shape.setup:
        row = d.query_row(conn, to_pyformat(sql), params)
        if row is None:
            raise DbbenchError(
                f"{shape.path.name}: setup query returned no row (is the dataset seeded?): "
                f"{' '.join(sql.split())[:120]}"
            )
        params.update({k.lower(): v for k, v in row.items()})
    return params


def holder_params(conn, d, holder: Shape, mapping: dict, params: dict) -> dict:
    """The parameters of a race's holder (:mod:`dbbench.measure.race`): resolved as its own
    (``params``, this shape's, as the base), then ``mapping`` (``race.params``: a value ``":name"``
    is this shape's parameter ``name``)."""
    out = resolve_params(conn, d, holder, params)
    for key, value in mapping.items():
        named = isinstance(value, str) and value.startswith(":")
        out[key.lower()] = params[value[1:].lower()] if named else value
    return out
