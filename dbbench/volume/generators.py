"""The column generators of a data spec: a small registry a team can extend in Python.

A generator is registered under a name with the parameters it takes (checked when the spec is
read, every problem named) and builds, for one column of one table, a :class:`Gen`: an object
that makes the column's values for a list of row positions, reading the values other columns of
the same rows already have (``needs``). Each column draws from its own ``random.Random``, seeded
from the spec's seed, the table and the column, so adding or changing a column never changes the
others, and generating in chunks of any size gives the same rows.

>>> from dbbench.volume.generators import Gen, register
>>> @register("initials", text={"type": "text"})
... def initials(ctx, text):
...     return Gen("text", lambda rows, get: [text[i % len(text)] for i in rows], indexed=True)

``indexed``: the values are a pure function of the position (a sequence), so another table's
foreign key can compute a parent's key instead of remembering it.
"""

from __future__ import annotations

import functools
import hashlib
import math
import random
import re
import string
import struct
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

from dbbench.errors import DbbenchError
from dbbench.volume import limits
from dbbench.volume.expr import Expr
from dbbench.volume.sampling import Permutation, Zipf, offsets
from verdict.files import excerpt, read_text_bounded, resolves_inside

Rows = Sequence[int]  # the row positions (0-based) values are made for
Get = Callable[[str], list[Any]]  # another column's values at the same positions
DISTS = ("uniform", "normal", "zipf")


class GeneratorError(DbbenchError, ValueError):
    """A column a generator cannot make as asked (the message names the column's problem)."""


@dataclass
class Gen:
    """One column's values: ``make(rows, get)``; ``kind`` is how they are written (int, text,
    bool, date, datetime, decimal, bytes)."""

    kind: str
    make: Callable[[Rows, Get], list[Any]]
    needs: tuple[str, ...] = ()
    indexed: bool = False  # values depend on the positions only
    unique: bool = False  # no two positions give the same value
    values: Sequence[Any] | None = None  # drawn from these only (a choice, a constant, a pool)
    value_name: Callable[[int], str] = lambda i: f"value {i + 1}"  # how a message names values[i]


@dataclass(frozen=True)
class ParentKey:
    """A referenced column: its table's row count and its values at parent positions."""

    rows: int
    kind: str
    at: Callable[[Rows], list[Any]]


@dataclass
class Context:
    """What a generator knows about its column."""

    table: str
    column: str
    rows: int  # of the table (or of the slice)
    rng: random.Random
    seed: int
    locale: str
    unique: bool = False
    distinct: int | None = None  # pooled generators: the pool's size (the column's ``distinct``)
    skew: float | None = None  # pooled generators: Zipf exponent of the draws from the pool
    max_length: int | None = None  # text columns: the schema's limit, in characters
    base: Path = Path(".")  # the spec's folder: files are read relative to it
    root: Path | None = None  # a file the spec names must resolve inside it (default: base)
    dry: bool = False  # checking the spec without a server (`dbbench validate`): faker pools kept small
    number: Callable[[Expr], int] = lambda e: e.value(1)  # an expression at the run's scale
    parent: Callable[[str], ParentKey] | None = None  # "table.column" -> its key
    sibling: Callable[[str], Gen] = field(default=lambda name: Gen("text", lambda r, g: []))


Build = Callable[..., Gen]


@dataclass(frozen=True)
class Generator:
    name: str
    params: dict[str, dict[str, Any]]  # name -> {"type": …, "default": …} (no default: required)
    build: Build
    unique: bool  # can make every value distinct (``unique = true``)
    pooled: bool  # draws from a pool it sizes by ``distinct`` itself (else the spec's pool does)
    doc: str


GENERATORS: dict[str, Generator] = {}
PARAM_TYPES = ("int", "number", "text", "list", "bool", "expr", "date", "datetime", "table", "any")


def register(
    name: str, *, unique: bool = False, pooled: bool = False, **params: dict[str, Any]
) -> Callable[[Build], Build]:
    """Register ``build(ctx, **params) -> Gen`` as the generator ``name``; ``unique``: it honours
    ``ctx.unique``; ``pooled``: it honours ``ctx.distinct`` and ``ctx.skew``."""

    def add(build: Build) -> Build:
        for p, how in params.items():
            if how.get("type") not in PARAM_TYPES:
                raise ValueError(f"generator {name}: parameter {p}: type must be one of {PARAM_TYPES}")
        GENERATORS[name] = Generator(name, params, build, unique, pooled, (build.__doc__ or "").strip())
        return build

    return add


# -- numbers, dates and times --------------------------------------------------------------------
def _range_values(
    ctx: Context,
    lo: int,
    hi: int,
    dist: str,
    s: float,
    sigma: float | None,
    shown: tuple[Any, Any] | None = None,
    every: Expr | None = None,
):
    """(make, unique) of integer offsets in [lo, hi] with ``dist``; ``unique``: a permutation;
    ``sequential``: row i -> lo + (i // every) mod span (the row's rank within its parent when a
    sequential foreign key walks ``every`` parents in turn). ``shown``: min and max as the spec
    wrote them (for messages)."""
    span = hi - lo + 1
    if span < 1:
        a, b = shown if shown is not None else (lo, hi)
        raise GeneratorError(f"min {excerpt(str(a))} is above max {excerpt(str(b))}")
    _check_dist(dist, (*DISTS, "sequential"), s)
    if every is not None and dist != "sequential":
        raise GeneratorError("every: only with dist = 'sequential'")
    if dist == "sequential":
        stride = max(ctx.number(every), 1) if every is not None else 1
        if ctx.unique and (stride != 1 or span < ctx.rows):
            raise GeneratorError(
                f"unique: dist = 'sequential' repeats values ({ctx.rows:,} rows, every {stride:,}, "
                f"[min, max] has {span:,})"
            )
        return (lambda rows: [lo + (i // stride) % span for i in rows]), ctx.unique
    if sigma is not None and not 0 < sigma < math.inf:
        raise GeneratorError(f"sigma {sigma!r} is not a number above 0")
    if ctx.unique:
        if dist != "uniform":
            raise GeneratorError("unique values need dist = 'uniform'")
        if span < ctx.rows:
            raise GeneratorError(
                f"unique: {ctx.rows:,} rows need at least as many values, [min, max] has {span:,}"
            )
        perm = Permutation(ctx.rng, span)
        return (lambda rows: [lo + v for v in perm.at(rows)]), True
    rng = ctx.rng
    return (lambda rows: [lo + v for v in offsets(rng, len(rows), span, dist, s, sigma)]), False


def _check_dist(dist: str, known: Sequence[str], s: float) -> None:
    if dist not in known:
        raise GeneratorError(f"dist {excerpt(repr(dist))} is not one of {', '.join(known)}")
    if dist == "zipf" and not 0 < s < math.inf:
        raise GeneratorError(f"s {s!r} is not a number above 0 (the Zipf exponent)")


_DIST = {"type": "text", "default": "uniform"}  # uniform | normal | zipf
_S = {"type": "number", "default": 1.1}  # the Zipf exponent
_SIGMA = {"type": "number", "default": None}  # the normal law's standard deviation
_EVERY = {"type": "expr", "default": None}  # dist = "sequential": each value this many rows in turn


@register(
    "int",
    unique=True,
    min={"type": "int"},
    max={"type": "int"},
    dist=_DIST,
    s=_S,
    sigma=_SIGMA,
    every=_EVERY,
)
def _int(
    ctx: Context, min: int, max: int, dist: str, s: float, sigma: float | None, every: Expr | None
) -> Gen:
    """Integers in [min, max]: dist uniform, normal (sigma, default a sixth of the range), zipf
    (exponent s; min the most frequent) or sequential (row i: min + (i // every) mod the range)."""
    draw, unique = _range_values(ctx, min, max, dist, s, sigma, every=every)
    return Gen("int", lambda rows, get: draw(rows), indexed=unique or dist == "sequential", unique=unique)


@register(
    "decimal",
    unique=True,
    min={"type": "number"},
    max={"type": "number"},
    digits={"type": "int", "default": 2},
    dist=_DIST,
    s=_S,
    sigma=_SIGMA,
    every=_EVERY,
)
def _decimal(
    ctx: Context,
    min: float,
    max: float,
    digits: int,
    dist: str,
    s: float,
    sigma: float | None,
    every: Expr | None,
) -> Gen:
    """Decimals in [min, max] with ``digits`` after the point (write the column's scale)."""
    if not 0 <= digits <= limits.MAX_DIGITS:
        raise GeneratorError(f"digits {digits} is not between 0 and {limits.MAX_DIGITS}")
    unit = 10**digits
    lo, hi = round(Decimal(str(min)) * unit), round(Decimal(str(max)) * unit)
    scaled = None if sigma is None else sigma * unit
    draw, unique = _range_values(ctx, int(lo), int(hi), dist, s, scaled, (min, max), every)
    indexed = unique or dist == "sequential"
    fmt = f"{{:.{digits}f}}"
    if digits == 0:
        return Gen("decimal", lambda rows, get: list(map(str, draw(rows))), indexed=indexed, unique=unique)
    parts = f"%d.%0{digits}d"  # the same text as fmt, from integer parts (no Decimal per value)

    def make(rows: Rows, get: Get) -> list[Any]:
        if lo >= 0:
            return [parts % divmod(v, unit) for v in draw(rows)]
        return [fmt.format(Decimal(v).scaleb(-digits)) for v in draw(rows)]

    return Gen("decimal", make, indexed=indexed, unique=unique)


def _day(value: Any) -> date:
    return (
        value
        if isinstance(value, date) and not isinstance(value, datetime)
        else datetime.fromisoformat(str(value)).date()
    )


def _moment(value: Any) -> datetime:
    if isinstance(value, datetime):
        return value.replace(tzinfo=None)
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day)
    return datetime.fromisoformat(str(value)).replace(tzinfo=None)


@register(
    "date",
    unique=True,
    min={"type": "date"},
    max={"type": "date"},
    dist=_DIST,
    s=_S,
    sigma=_SIGMA,
    every=_EVERY,
)
def _date(
    ctx: Context, min: Any, max: Any, dist: str, s: float, sigma: float | None, every: Expr | None
) -> Gen:
    """Dates in [min, max] (ISO dates), dist as for int (zipf: min the most frequent; sequential:
    a day further every ``every`` rows)."""
    lo, hi = _day(min).toordinal(), _day(max).toordinal()
    draw, unique = _range_values(ctx, lo, hi, dist, s, sigma, (_day(min), _day(max)), every)
    return Gen(
        "date",
        lambda rows, get: list(map(date.fromordinal, draw(rows))),
        indexed=unique or dist == "sequential",
        unique=unique,
    )


@register(
    "timestamp",
    unique=True,
    min={"type": "datetime"},
    max={"type": "datetime"},
    dist=_DIST,
    s=_S,
    sigma=_SIGMA,
    format={"type": "text", "default": None},
    every=_EVERY,
)
def _timestamp(
    ctx: Context,
    min: Any,
    max: Any,
    dist: str,
    s: float,
    sigma: float | None,
    format: str | None,
    every: Expr | None,
) -> Gen:
    """Timestamps in [min, max] to the second, dist as for int (zipf: min the most frequent);
    ``format`` ("%Y%m%d%H%M%S", strftime's codes) makes text of them (a MediaWiki BINARY(14))."""
    start, end = _moment(min), _moment(max)
    draw, unique = _range_values(
        ctx,
        0,
        int((end - start).total_seconds()),
        dist,
        s,
        sigma,
        (start.isoformat(" "), end.isoformat(" ")),
        every,
    )
    indexed = unique or dist == "sequential"

    def make(rows: Rows, get: Get) -> list[Any]:
        return [start + timedelta(seconds=v) for v in draw(rows)]

    if format is None:
        return Gen("datetime", make, indexed=indexed, unique=unique)
    if len(format) > limits.MAX_FORMAT or not re.fullmatch(r"(?:[^%]|%[%a-zA-Z])*", format):
        raise GeneratorError(
            f"format {excerpt(repr(format))}: strftime codes (%Y, %m, %d, %H, %M, %S …) and text, "
            f"at most {limits.MAX_FORMAT} characters"
        )
    try:
        start.strftime(format)
    except ValueError as exc:
        raise GeneratorError(f"format {excerpt(repr(format))}: {excerpt(str(exc))}") from None
    return Gen(
        "text",
        lambda rows, get: [v.strftime(format) for v in make(rows, get)],
        indexed=indexed,
        unique=unique,
    )


@register("bool", p={"type": "number", "default": 0.5})
def _bool(ctx: Context, p: float) -> Gen:
    """True with probability p."""
    if not 0 <= p <= 1:
        raise GeneratorError(f"p {p!r} is not a probability between 0 and 1")
    rnd = ctx.rng.random
    return Gen("bool", lambda rows, get: [rnd() < p for _ in rows])


# -- sequences, constants, choices ---------------------------------------------------------------
@register(
    "sequence",
    unique=True,
    start={"type": "int", "default": 1},
    step={"type": "int", "default": 1},
    mod={"type": "int", "default": None},
    format={"type": "text", "default": None},
)
def _sequence(ctx: Context, start: int, step: int, mod: int | None, format: str | None) -> Gen:
    """start, start + step, …; ``mod`` N: start again every N rows (1, 2, 3, 1, 2, 3: not unique);
    ``format`` ("SKU-{:06d}") makes text of it."""
    if step == 0 or (mod is not None and mod < 1):
        raise GeneratorError("step must not be 0, mod must be at least 1")
    if ctx.unique and mod is not None:
        raise GeneratorError("unique: a sequence with mod repeats its values")
    if format is not None:
        number_format(format, start)

    def number(rows: Rows, get: Get) -> list[Any]:
        if mod is None:
            return [start + step * i for i in rows]
        return [start + step * (i % mod) for i in rows]

    if format is None:
        return Gen("int", number, indexed=True, unique=mod is None)
    fmt = format.format
    return Gen("text", lambda rows, get: list(map(fmt, number(rows, get))), indexed=True, unique=mod is None)


# ``[[fill]align][sign][z][#][0][width][grouping][.precision][type]``: Python's format spec, no nesting
_FORMAT_SPEC = re.compile(r"(?:.?[<>=^])?[-+ ]?z?#?0?(\d*)[,_]?(?:\.(\d+))?[bcdeEfFgGnoxX%]?", re.S)


def number_format(fmt: str, sample: int = 1) -> None:
    """Refuse a ``format`` that is not literal text with ``{}`` / ``{:SPEC}`` fields: a field
    name, an index, an attribute (``{0.__class__}``), a conversion or a nested field would let a
    spec walk Python's objects. Widths and precisions are at most :data:`limits.MAX_WIDTH`."""
    shown = excerpt(repr(fmt))
    if len(fmt) > limits.MAX_FORMAT:
        raise GeneratorError(f"format {shown}: longer than {limits.MAX_FORMAT} characters")
    try:
        fields = [
            (name, spec, conv) for _, name, spec, conv in string.Formatter().parse(fmt) if name is not None
        ]
    except ValueError as exc:
        raise GeneratorError(f"format {shown}: {exc}") from None
    if not fields:
        raise GeneratorError(f"format {shown}: no {{}} field for the number (write e.g. 'SKU-{{:06d}}')")
    for name, spec, conv in fields:
        m = _FORMAT_SPEC.fullmatch(spec or "")
        if name not in ("", "0") or conv is not None or m is None:
            raise GeneratorError(
                f"format {shown}: only {{}} and {{:SPEC}} fields with a format spec such as {{:06d}} "
                "are allowed (no names, indexes, attributes or conversions)"
            )
        if any(int(g or 0) > limits.MAX_WIDTH for g in m.groups()):
            raise GeneratorError(f"format {shown}: a width or precision above {limits.MAX_WIDTH:,}")
    try:
        fmt.format(sample)
    except (ValueError, IndexError, KeyError) as exc:
        raise GeneratorError(f"format {shown} does not format a number: {excerpt(str(exc))}") from None


def _kind_of(values: Sequence[Any]) -> str:
    sample = next((v for v in values if v is not None), "")
    if isinstance(sample, bool):
        return "bool"
    if isinstance(sample, int):
        return "int"
    if isinstance(sample, datetime):
        return "datetime"
    if isinstance(sample, date):
        return "date"
    if isinstance(sample, (float, Decimal)):
        return "decimal"
    return "text"


@register("const", value={"type": "any", "default": None})
def _const(ctx: Context, value: Any) -> Gen:
    """The same value in every row (none: NULL)."""
    _scalars([value], "value")
    return Gen(
        _kind_of([value]),
        lambda rows, get: [value] * len(rows),
        indexed=True,
        values=[] if value is None else [value],
        value_name=lambda i: "value",
    )


_SCALAR = (str, int, float, date, datetime, Decimal)


def _scalars(values: Sequence[Any], what: str) -> None:
    """Values a column takes: text, numbers (finite), booleans, dates and times (or none)."""
    for i, v in enumerate(values):
        if v is not None and not isinstance(v, _SCALAR):
            raise GeneratorError(
                f"{what}: value {i + 1} is not text, a number or a date (a {type(v).__name__})"
            )
        if isinstance(v, float) and not math.isfinite(v):
            raise GeneratorError(f"{what}: value {i + 1} is not a finite number")


def inside(ctx: Context, file: str) -> Path:
    """``file`` (relative to the spec's folder) as a path that resolves, after symbolic links,
    inside the catalog directory (:attr:`Context.root`); refused otherwise, without reading it."""
    root = (ctx.root if ctx.root is not None else ctx.base).resolve()
    given = Path(file)
    shown = excerpt(repr(file))
    if given.is_absolute() or "\x00" in file:
        raise GeneratorError(f"file {shown}: write a path relative to the spec, inside the catalog directory")
    target = (ctx.base / given).resolve()
    if not resolves_inside(target, root):
        raise GeneratorError(
            f"file {shown}: resolves outside the catalog directory {root} (files a spec names must be in it)"
        )
    return target


def _draw_pool(ctx: Context, pool: Sequence[Any], weights: list[float] | None, skew: float | None):
    """A ``make`` drawing from ``pool``: uniform, by ``weights``, or Zipf(``skew``) (the first the most frequent)."""
    rng, n = ctx.rng, len(pool)
    if weights is not None:
        return lambda rows, get: rng.choices(pool, weights, k=len(rows))
    if skew is not None:
        z, rnd = Zipf(n, skew), rng.random
        return lambda rows, get: [pool[z.draw(rnd) - 1] for _ in rows]
    rnd = rng.random
    return lambda rows, get: [pool[int(rnd() * n)] for _ in rows]


@register(
    "choice",
    values={"type": "list", "default": None},
    file={"type": "text", "default": None},
    weights={"type": "list", "default": None},
)
def _choice(ctx: Context, values: list[Any] | None, file: str | None, weights: list[Any] | None) -> Gen:
    """One of ``values`` (or of the lines of ``file``, relative to the spec), uniform or by ``weights``."""
    if (values is None) == (file is None):
        raise GeneratorError("give values or file, not both")
    name: Callable[[int], str] = lambda i: f"value {i + 1}"
    if file is not None:
        path, shown = inside(ctx, file), excerpt(repr(file))
        try:
            text = read_text_bounded(path, limit=limits.FILE_READ_LIMIT, what="choice file")
        except OSError as exc:
            raise GeneratorError(f"file {shown}: {exc.strerror or exc}") from None
        lines = [(n, line) for n, line in enumerate(text.splitlines(), start=1) if line]
        values, numbers = [line for _, line in lines], [n for n, _ in lines]
        name = lambda i: f"line {numbers[i]} of {shown}"
    assert values is not None
    if not values:
        raise GeneratorError("values: at least one value is needed")
    _scalars(values, "values")
    if weights is not None and (
        len(weights) != len(values)
        or not all(isinstance(w, (int, float)) and not isinstance(w, bool) and w >= 0 for w in weights)
        or not sum(weights)
    ):
        raise GeneratorError(f"weights: {len(values)} numbers >= 0 (one per value, not all 0) are needed")
    if weights is not None and not all(math.isfinite(w) for w in weights):
        raise GeneratorError("weights: finite numbers are needed")
    return Gen(_kind_of(values), _draw_pool(ctx, values, weights, None), values=values, value_name=name)


# -- faker -----------------------------------------------------------------------------------------
POOL = 1000  # distinct faker values drawn when the column says no ``distinct``


def faker_version() -> str:
    import faker

    return str(faker.VERSION)


# Providers that take a template faker fills by name (``{{name}}``, ``{width}``), or build an
# archive or an image of the size asked: not for a spec.
REFUSED_PROVIDERS = frozenset(
    {"pystr_format", "json", "json_bytes", "xml", "dsv", "csv", "tsv", "psv", "fixed_width", "image_url"}
    | {"image", "zip", "tar"}
)


def _new_faker(locale: str):
    from faker import Faker

    try:
        return Faker(locale)
    except (AttributeError, ValueError, TypeError):
        raise GeneratorError(f"locale {excerpt(repr(locale))} is not one faker has") from None


@functools.lru_cache(maxsize=16)
def faker_providers(locale: str) -> frozenset[str]:
    """The provider names a spec may call in ``locale``: the public methods of faker's providers
    (never an attribute of faker's own objects: ``__class__``, ``seed_instance``, ``parse``…),
    less :data:`REFUSED_PROVIDERS`."""
    names = {
        n
        for p in _new_faker(locale).providers
        for n in dir(p)
        if not n.startswith("_") and callable(getattr(p, n, None))
    }
    return frozenset(names - REFUSED_PROVIDERS - {"seed", "seed_instance", "generator"})


def _faker_arg(value: Any, where: str) -> None:
    """An argument a spec gives a provider: numbers (at most :data:`limits.MAX_FAKER_NUMBER`),
    booleans, dates, short text that is no template and names no hidden attribute, or an array of these."""
    if isinstance(value, list):
        if len(value) > 1_000:
            raise GeneratorError(f"args: {where}: more than 1,000 values")
        for v in value:
            _faker_arg(v, where)
        return
    if isinstance(value, (bool, date, datetime)):
        return
    if isinstance(value, (int, float)):
        if not abs(value) <= limits.MAX_FAKER_NUMBER:
            raise GeneratorError(f"args: {where}: a number above {limits.MAX_FAKER_NUMBER:,} in size")
        return
    if isinstance(value, str):
        if len(value) > 1_000 or "{" in value or "}" in value or "__" in value or value.startswith("_"):
            raise GeneratorError(
                f"args: {where}: text of at most 1,000 characters, without {{ }}, __ or a leading _"
            )
        return
    raise GeneratorError(
        f"args: {where}: not a number, text, date or array of them (a {type(value).__name__})"
    )


def check_faker(provider: str, args: dict[str, Any], locale: str) -> None:
    """Refuse a provider faker does not have as a provider in ``locale``, and arguments
    :func:`_faker_arg` refuses (before faker is called)."""
    if provider not in faker_providers(locale):
        raise GeneratorError(
            f"provider {excerpt(repr(provider))}: faker ({excerpt(locale, 40)}) has no such provider"
        )
    for name, value in args.items():
        if not isinstance(name, str) or not name.isidentifier() or name.startswith("_"):
            raise GeneratorError(f"args: {excerpt(repr(name))} is not an argument name")
        _faker_arg(value, name)


def faker_pool(provider: str, args: dict[str, Any], locale: str, seed: int, size: int) -> list[Any]:
    """``size`` values of a faker provider (distinct where it has that many: three tries each),
    at most :data:`limits.MAX_FAKER_TEXT` characters of text in all."""
    check_faker(provider, args, locale)
    fake = _new_faker(locale)
    fake.seed_instance(seed)
    method = getattr(fake, provider)
    seen: dict[Any, None] = {}
    chars = 0
    for _ in range(3 * size):
        try:
            value = method(**args)
            seen[value] = None
        except Exception as exc:  # whatever a provider raises on arguments it refuses
            reason = excerpt(f"{type(exc).__name__}: {exc}", 200)
            raise GeneratorError(f"provider {provider!r}: {reason}") from None
        chars += len(value) if isinstance(value, (str, bytes)) else 0
        if chars > limits.MAX_FAKER_TEXT:
            raise GeneratorError(
                f"provider {provider!r}: the pool's values hold more than {limits.MAX_FAKER_TEXT:,} characters"
            )
        if len(seen) == size:
            break
    return list(seen)


def _clip(values: list[Any], limit: int | None) -> list[Any]:
    if limit is None:
        return values
    return [v[:limit].rstrip() if isinstance(v, str) and len(v) > limit else v for v in values]


def _suffixed(value: str, n: int, limit: int | None) -> str:
    """``value`` made unique by the number ``n``: ``local+n@domain`` for an email, ``value #n`` else."""
    if n == 0:
        return value
    tag = f"+{n}" if "@" in value else f" #{n}"
    local, at, domain = value.partition("@") if "@" in value else (value, "", "")
    room = None if limit is None else limit - len(tag) - len(at + domain)
    return (local if room is None else local[: max(room, 0)]) + tag + at + domain


@register(
    "faker",
    unique=True,
    pooled=True,
    provider={"type": "text"},
    args={"type": "table", "default": {}},
    locale={"type": "text", "default": None},
)
def _faker(ctx: Context, provider: str, args: dict[str, Any], locale: str | None) -> Gen:
    """A faker provider (``name``, ``email``, ``city``, ``date_between`` with ``args``, …) in
    ``locale``: values drawn from a pool of distinct ones (the column's ``distinct``, else 1,000),
    uniform or Zipf(the column's ``skew``). ``unique``: each pool value once, then again numbered
    (``anna+1@…``, ``Acme #1``), so a million unique emails cost a thousand faker calls."""
    if ctx.distinct is not None and not 1 <= ctx.distinct <= limits.MAX_FAKER_POOL:
        raise GeneratorError(
            f"distinct: {ctx.distinct:,} is not between 1 and {limits.MAX_FAKER_POOL:,} (faker)"
        )
    size = ctx.distinct or min(ctx.rows, POOL) or 1
    if ctx.dry:
        size = min(size, 20)  # the provider and its arguments checked, not the whole pool made
    pool = _clip(faker_pool(provider, args, locale or ctx.locale, ctx.seed, size), ctx.max_length)
    pool = list(dict.fromkeys(pool))
    kind = _kind_of(pool)
    if not ctx.unique:
        return Gen(kind, _draw_pool(ctx, pool, None, ctx.skew), values=pool)
    if kind != "text":
        raise GeneratorError(f"unique: provider {provider!r} gives {kind} values, not text")
    n, limit = len(pool), ctx.max_length
    return Gen(
        "text",
        lambda rows, get: [_suffixed(pool[i % n], i // n, limit) for i in rows],
        indexed=True,
        unique=True,
    )


_IP_LO, _IP_HI = 0x01000000, 0xDFFFFFFF  # 1.0.0.0 to 223.255.255.255: unicast IPv4


@register("ip", unique=True)
def _ip(ctx: Context) -> Gen:
    """IPv4 addresses (1.0.0.0 to 223.255.255.255; ``unique``: each once), text both servers read
    (PostgreSQL's ``inet`` / ``cidr`` as a /32)."""
    draw, unique = _range_values(ctx, _IP_LO, _IP_HI, "uniform", 1.1, None)

    def make(rows: Rows, get: Get) -> list[Any]:
        return [f"{v >> 24}.{v >> 16 & 255}.{v >> 8 & 255}.{v & 255}" for v in draw(rows)]

    return Gen("text", make, indexed=unique, unique=unique)


@register("uuid", unique=True)
def _uuid(ctx: Context) -> Gen:
    """Random (version 4) UUIDs as text."""
    bits = ctx.rng.getrandbits
    return Gen(
        "text", lambda rows, get: [str(uuid.UUID(int=bits(128), version=4)) for _ in rows], unique=True
    )


# -- values of the same row, and of other tables ---------------------------------------------------
@register("copy", column={"type": "text"}, add={"type": "number", "default": 0})
def _copy(ctx: Context, column: str, add: float) -> Gen:
    """The value of another ``column`` of the row, plus ``add`` (numbers; days of a date, seconds of a timestamp)."""
    source = ctx.sibling(column)

    def plus(v: Any) -> Any:
        if v is None or not add:
            return v
        if isinstance(v, datetime):
            return v + timedelta(seconds=add)
        if isinstance(v, date):
            return v + timedelta(days=add)
        if isinstance(v, str):
            return f"{Decimal(v) + Decimal(str(add)):f}"
        return v + add

    return Gen(source.kind, lambda rows, get: [plus(v) for v in get(column)], needs=(column,))


@register("sha256", column={"type": "text"})
def _sha256(ctx: Context, column: str) -> Gen:
    """The SHA-256 (32 bytes) of another ``column``'s text, for hash-keyed lookups."""
    ctx.sibling(column)  # a column of the table, not read from this one

    def make(rows: Rows, get: Get) -> list[Any]:
        return [None if v is None else hashlib.sha256(str(v).encode()).digest() for v in get(column)]

    return Gen("bytes", make, needs=(column,))


FK_DISTS = ("uniform", "zipf", "sequential")


@register(
    "fk",
    unique=True,
    ref={"type": "text"},
    dist={"type": "text", "default": "uniform"},
    s={"type": "number", "default": 1.1},
    every={"type": "expr", "default": None},
    follows={"type": "text", "default": None},
)
def _fk(ctx: Context, ref: str, dist: str, s: float, every: Expr | None, follows: str | None) -> Gen:
    """A key of another table (``ref = "table.column"``): each row's parent drawn uniform, zipf
    (exponent s; the first parent rows the hottest) or sequential (row i -> parent (i // every)
    mod parents: every parent in turn, unique while rows <= parents). ``follows = "col"``: the
    same parent row as the foreign key of column ``col`` (composite keys)."""
    assert ctx.parent is not None
    if ref == f"{ctx.table}.{ctx.column}":
        raise GeneratorError(f"ref {excerpt(repr(ref))}: a foreign key cannot reference its own column")
    key = ctx.parent(ref)
    if follows is not None:
        led: list[list[int]] | None = getattr(ctx.sibling(follows), "drawn", None)
        if led is None:
            raise GeneratorError(
                f"follows: column {excerpt(repr(follows))} is not a foreign key of this table"
            )
        return Gen(key.kind, lambda rows, get: key.at(led[0]), needs=(follows,))
    if key.rows < 1:
        raise GeneratorError(f"ref {excerpt(repr(ref))}: the referenced table has no rows")
    _check_dist(dist, FK_DISTS, s)
    if ctx.unique and (dist != "sequential" or ctx.rows > key.rows):
        raise GeneratorError("unique: needs dist = 'sequential' and no more rows than the referenced table")
    n, rnd = key.rows, ctx.rng.random
    if dist == "sequential":
        stride = max(ctx.number(every), 1) if every is not None else 1

        def pick(rows: Rows) -> list[int]:
            return [(i // stride) % n for i in rows]
    elif dist == "zipf":
        z = Zipf(n, s)

        def pick(rows: Rows) -> list[int]:
            return [z.draw(rnd) - 1 for _ in rows]
    else:

        def pick(rows: Rows) -> list[int]:
            return [int(rnd() * n) for _ in rows]

    drawn: list[list[int]] = [[]]  # the parent positions of the last rows made (``follows``)

    def make(rows: Rows, get: Get) -> list[Any]:
        drawn[0] = pick(rows)
        return key.at(drawn[0])

    gen = Gen(key.kind, make, indexed=dist == "sequential", unique=ctx.unique)
    gen.drawn = drawn  # type: ignore[attr-defined]
    return gen


# -- values whose bulk-load text is the dialect's own: geometry, bit strings ---------------------------
@dataclass(frozen=True)
class Native:
    """A value each dialect reads in its own spelling (kind ``native``): ``text`` for PostgreSQL's
    COPY (``(1.5,2)``, ``10110000``), ``binary`` for MySQL's LOAD DATA (through UNHEX: a geometry's
    SRID and WKB, a BIT's bytes)."""

    text: str
    binary: bytes

    def __str__(self) -> str:
        return self.text


SHAPES = ("point", "linestring", "polygon", "box", "circle", "lseg", "line", "path")
MULTI = {"multipoint": 4, "multilinestring": 5, "multipolygon": 6, "geometrycollection": 7}  # WKB types
_WKB_POINT, _WKB_LINESTRING, _WKB_POLYGON = 1, 2, 3


def _wkb(kind: int, points: list[tuple[float, float]]) -> bytes:
    """Little-endian WKB of a point, a linestring or a polygon of one (closed) ring."""
    head = struct.pack("<BI", 1, kind)
    if kind == _WKB_POINT:
        return head + struct.pack("<dd", *points[0])
    coords = b"".join(struct.pack("<dd", x, y) for x, y in points)
    if kind == _WKB_LINESTRING:
        return head + struct.pack("<I", len(points)) + coords
    return head + struct.pack("<II", 1, len(points)) + coords


def _shape(shape: str, x: float, y: float) -> tuple[str, bytes]:
    """(PostgreSQL's text, WKB) of ``shape`` a unit around (x, y) (valid in any SRID's range)."""
    d = 1.0

    def pt(a: float, b: float) -> str:
        return f"({a:g},{b:g})"

    if shape == "point":
        return pt(x, y), _wkb(_WKB_POINT, [(x, y)])
    if shape in ("linestring", "lseg", "line", "path"):
        a, b = (x, y), (x + d, y + d)
        return f"[{pt(*a)},{pt(*b)}]", _wkb(_WKB_LINESTRING, [a, b])  # an open path, a segment, a line
    ring = [(x, y), (x + d, y), (x + d, y + d), (x, y + d), (x, y)]
    if shape == "box":
        text = f"{pt(x + d, y + d)},{pt(x, y)}"
    elif shape == "circle":
        text = f"<{pt(x, y)},{d:g}>"
    else:
        text = "(" + ",".join(pt(a, b) for a, b in ring[:-1]) + ")"
    return text, _wkb(_WKB_POLYGON, ring)


def _geometry_value(shape: str, x: float, y: float, srid: int) -> Native:
    """``shape`` as PostgreSQL's text and MySQL's internal geometry (the SRID, 4 bytes, then WKB);
    a multi shape or a collection holds one of its kind (a collection: a point)."""
    if shape in MULTI:
        inner = {"multilinestring": "linestring", "multipolygon": "polygon"}.get(shape, "point")
        text, one = _shape(inner, x, y)
        return Native(text, struct.pack("<IBII", srid, 1, MULTI[shape], 1) + one)
    text, wkb = _shape(shape, x, y)
    return Native(text, struct.pack("<I", srid) + wkb)


@register("geometry", shape={"type": "text", "default": "point"}, srid={"type": "int", "default": 0})
def _geometry(ctx: Context, shape: str, srid: int) -> Gen:
    """A shape around a random point (x and y in [-90, 90], two decimals): ``shape`` point,
    linestring, polygon (MySQL geometry and PostgreSQL's built-in types), box, circle, lseg, line,
    path (PostgreSQL's; MySQL takes them as a polygon or a linestring), multipoint,
    multilinestring, multipolygon, geometrycollection (MySQL's: one shape each); ``srid``: MySQL's SRID."""
    if shape not in SHAPES and shape not in MULTI:
        raise GeneratorError(f"shape {excerpt(repr(shape))} is not one of {', '.join([*SHAPES, *MULTI])}")
    if not 0 <= srid < 2**32:
        raise GeneratorError(f"srid {srid} is not an SRID")
    rnd = ctx.rng.randrange

    def make(rows: Rows, get: Get) -> list[Any]:
        return [_geometry_value(shape, rnd(-9000, 8901) / 100, rnd(-9000, 8901) / 100, srid) for _ in rows]

    return Gen("native", make)


@register("bits", length={"type": "int", "default": 1})
def _bits(ctx: Context, length: int) -> Gen:
    """A random bit string of ``length`` bits (BIT(n), bit varying): PostgreSQL reads ``0110``,
    MySQL the bytes."""
    if not 1 <= length <= 64:
        raise GeneratorError(f"length {length} is not between 1 and 64")
    bits = ctx.rng.getrandbits

    def make(rows: Rows, get: Get) -> list[Any]:
        out = []
        for _ in rows:
            v = bits(length)
            out.append(Native(format(v, f"0{length}b"), v.to_bytes((length + 7) // 8, "big")))
        return out

    return Gen("native", make)
