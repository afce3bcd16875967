"""The limits of a data spec and of a fill (documented in docs/volume.md, "Limits").

A spec comes from a pull request like catalog SQL: whatever it says, reading and checking it
ends, and a fill it asks for is one that ends too, or is refused before anything is touched.
"""

from __future__ import annotations

from verdict.files import MiB

MAX_ROWS = 100_000_000  # rows of one table (or slice) of a spec, at the run's :scale
MAX_SCALE = 100_000_000  # --scale (and grow's --sizes, a spec's scale and check_scale)
MAX_DISTINCT = 1_000_000  # a column's ``distinct``: its pool is kept in memory
MAX_FAKER_POOL = 100_000  # a faker column's ``distinct``: faker is called up to 3x this many times
MAX_FAKER_NUMBER = 100_000  # a number among a faker provider's ``args`` (sizes and counts)
MAX_FAKER_TEXT = 64 * MiB  # characters of a faker column's whole pool
MAX_EXPR = 200  # characters of one expression (``rows = ":scale * 10"``)
MAX_FORMAT = 200  # characters of a sequence's ``format``; a width or precision in it at most 1,000
MAX_WIDTH = 1_000
MAX_DIGITS = 30  # a decimal's ``digits`` (MySQL's largest DECIMAL scale)
SPEC_READ_LIMIT = 4 * MiB  # the spec file itself
FILE_READ_LIMIT = 16 * MiB  # a file a ``choice`` draws its lines from
LONG_FILL_ROWS = 1_000_000  # a fill of more rows (all tables) says its estimate before it starts
