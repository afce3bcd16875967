"""Candidate indexes read from a shape's query, per table it reads: nothing runs here.

:func:`derive` reads the statement with the catalog's own lexer and operand readers
(:mod:`dbbench.catalog.sqltext`) and the table columns the caller read from the live schema:

* equality columns first (``col = :x``, ``col IN (…)``, ``col IS NULL``, a bare boolean), then one
  range column or the ORDER BY columns in order with their direction, the LIMIT noted; a join key
  (the columns of the inner table a join compares with an outer one) after the equalities;
* a covering variant (the other columns the query reads there: PostgreSQL ``INCLUDE``, MySQL extra
  key parts);
* an expression key part where the predicate wraps a column (``lower(title) = lower(:x)``:
  PostgreSQL expression index, MySQL 8.0.13+ functional key part);
* a partial index (PostgreSQL only) where a predicate holds no parameter (``WHERE pending``,
  ``state = 'x'``, ``published_at IS NOT NULL``, ``a > b``);
* what no index can bound, and why: OFFSET pagination, a leading wildcard, a window over a derived
  table, a function of several tables' columns, an ORDER BY across tables.

Only top-level conjuncts of a WHERE or ON narrow an index (a comparison under OR, NOT or CASE is a
column read). Every candidate is a guess until the advise stage builds and measures it.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from dbbench import dialects
from dbbench.advise.trial import PREFIX  # the names a trial accepts

# The operand readers of the comparisons (:func:`~dbbench.catalog.sqltext.comparisons`) find where
# each side of an operator starts and ends; reused so that both read SQL alike.
from dbbench.catalog.sqltext import _operand_left, _operand_right, significant
from verdict.files import excerpt

Kind = Literal["btree", "expression", "partial", "covering"]
NAME_MAX = 63  # PostgreSQL's identifier length (MySQL's is 64)
MYSQL_KEY_BYTES = 3072  # InnoDB's longest key (DYNAMIC rows): wider text key parts keep a prefix
MYSQL_KEY_PARTS = 16
_CHAR_BYTES = 4  # utf8mb4: the widest a character is, so a key's bytes are never underestimated
_NUMBER_BYTES = 8  # a column whose length the caller did not give

# clause keywords, as the clause they start (``join`` continues the FROM clause)
_CLAUSES = {
    "select": "select",
    "from": "from",
    "join": "from",
    "straight_join": "from",
    "on": "on",
    "using": "using",
    "where": "where",
    "having": "having",
    "limit": "limit",
    "offset": "offset",
    "fetch": "limit",
    "for": "for",
    "window": "window",
    "returning": "returning",
    "set": "set",
    "values": "values",
    "union": "select",
    "intersect": "select",
    "except": "select",
    "update": "update",
    "delete": "delete",
    "into": "into",
    "with": "with",
}
_NEEDS_BY = {"order": "order", "group": "group"}
_READING = {"select", "where", "on", "using", "group", "having", "order", "set", "returning", "window"}
_FILTERS = {"where", "on"}
_OPS = {"=", "<", ">", "<=", ">=", "<>", "!=", "like", "ilike", "in", "between", "is"}
_EQ = {"=", "in"}
_RANGE = {"<", ">", "<=", ">=", "between", "like"}


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# words that are never a table's alias, nor (unqualified) a column
_KEYWORDS = _words(
    "and or not null true false unknown is in like ilike between case when then else end asc desc nulls "
    "first last distinct all any some exists select from where on as by order group limit offset join "
    "straight_join inner left right full cross natural outer lateral using having union intersect except "
    "for window fetch returning set values force use ignore index key partition tablesample of skip "
    "locked nowait update share interval current_date current_time current_timestamp localtime "
    "localtimestamp"
)
_LITERAL_WORDS = _words("true false null unknown date time timestamp timestamptz interval")
_BARE_BEFORE = {"where", "and", "on", "(", "not"}
_BARE_AFTER = {
    "and", "or", ")", ";", "", "order", "group", "limit", "having", "for", "union", "intersect", "except",
    "window", "offset", "fetch", "join", "straight_join", "left", "right", "inner", "full", "cross",
    "natural", "where", "returning",
}  # fmt: skip
_NOT_CONJUNCT_BEFORE = {"not", "when", "then", "else", "case"}
_QUOTED = 24  # tokens of a predicate a reason quotes
_SCOPE_REACH = 64  # subqueries a column's table is looked for out through
_KIND_ORDER = {"partial": 0, "btree": 1, "expression": 1, "covering": 2}


@dataclass(frozen=True)
class KeyPart:
    """One key part: a column, or an expression as the query writes it (``lower(title)``, table
    qualifiers dropped); ``desc`` from the ORDER BY; ``prefix``: MySQL keeps only the leading
    characters of a text column too wide for a key."""

    name: str
    expression: bool = False
    desc: bool = False
    prefix: int | None = None

    def sql(self, dialect: str) -> str:
        if self.expression:
            text = f"({self.name})"
        else:
            text = dialects.get(dialect).quote(self.name)
            if self.prefix and dialect == "mysql":
                text += f"({self.prefix})"
        return text + (" DESC" if self.desc else "")

    def __str__(self) -> str:
        shown = self.name + (f"({self.prefix})" if self.prefix else "")
        return shown + (" DESC" if self.desc else "")


@dataclass(frozen=True)
class Candidate:
    """An index worth building for ``table``: its key parts, the columns it carries for an
    index-only read (``include``: PostgreSQL ``INCLUDE``, MySQL extra key parts), the predicate of
    a partial index (PostgreSQL), what it is and why. ``equality``: the rows it pins by equality
    (key parts and the partial predicate's), ``ordered``: it gives the query's ORDER BY; the rank."""

    table: str
    columns: tuple[KeyPart, ...]
    include: tuple[str, ...] = ()
    where: str | None = None
    kind: Kind = "btree"
    reason: str = ""
    equality: int = 0
    ordered: bool = False

    @property
    def name(self) -> str:
        """``dbbench_adv_<table>_<hash8>``: the same for the same index, short enough for both servers."""
        ident = repr((self.table, self.columns, self.include, self.where)).encode()
        digest = hashlib.sha256(ident).hexdigest()[:8]
        room = NAME_MAX - len(PREFIX) - 1 - len(digest)
        table = re.sub(r"[^a-z0-9_]", "_", self.table.lower())[:room]  # what a trial's name may hold
        return f"{PREFIX}{table}_{digest}"

    @property
    def migration_name(self) -> str:
        """The name a migration gives it: ``ix_<table>_<key words>`` (``ix_tickets_lower_subject``),
        never the trial prefix (every dbbench command undoes an index named that), the digest of
        :attr:`name` added when the words do not fit."""
        words = "_".join(re.findall(r"[a-z0-9]+", " ".join(p.name for p in self.columns).lower()))
        text = f"ix_{re.sub(r'[^a-z0-9_]', '_', self.table.lower())}_{words}" + (
            "_partial" if self.where else ""
        )
        if self.include:
            text += "_covering"
        if len(text) <= NAME_MAX:
            return text
        digest = self.name.rsplit("_", 1)[1]
        return f"{text[: NAME_MAX - len(digest) - 1]}_{digest}"

    def _table(self, dialect: str, namespace: str | None) -> str:
        q = dialects.get(dialect).quote
        return f"{q(namespace)}.{q(self.table)}" if namespace else q(self.table)

    def ddl(self, dialect: str, name: str | None = None, *, namespace: str | None = None) -> str:
        """The statement that builds it: PostgreSQL ``CREATE INDEX``, MySQL ``ALTER TABLE … ADD INDEX``."""
        q = dialects.get(dialect).quote
        index = q(name or self.name)
        if dialect == "mysql":
            if self.where is not None:
                raise ValueError(f"MySQL has no partial index: {self.table} WHERE {self.where}")
            parts = [p.sql(dialect) for p in self.columns] + [q(c) for c in self.include]
            return f"ALTER TABLE {self._table(dialect, namespace)} ADD INDEX {index} ({', '.join(parts)})"
        text = f"CREATE INDEX {index} ON {self._table(dialect, namespace)} ({', '.join(p.sql(dialect) for p in self.columns)})"
        if self.include:
            text += f" INCLUDE ({', '.join(q(c) for c in self.include)})"
        if self.where:
            text += f" WHERE {self.where}"
        return text

    def drop_ddl(self, dialect: str, name: str | None = None, *, namespace: str | None = None) -> str:
        """The statement that drops it again."""
        q = dialects.get(dialect).quote
        index = q(name or self.name)
        if dialect == "mysql":
            return f"ALTER TABLE {self._table(dialect, namespace)} DROP INDEX {index}"
        return f"DROP INDEX IF EXISTS {q(namespace) + '.' if namespace else ''}{index}"

    def __str__(self) -> str:
        text = f"{self.table} ({', '.join(map(str, self.columns))})"
        if self.include:
            text += f" INCLUDE ({', '.join(self.include)})"
        return text + (f" WHERE {self.where}" if self.where else "")


@dataclass(frozen=True)
class Advice:
    """What one statement offers: the candidates, best first, and why no index bounds some of its
    work (``unbounded``, empty when every part of it can be bounded). ``limit``: the outer LIMIT."""

    candidates: tuple[Candidate, ...]
    unbounded: tuple[str, ...] = ()
    limit: str | None = None
    tables: tuple[str, ...] = ()

    def on(self, table: str) -> tuple[Candidate, ...]:
        return tuple(c for c in self.candidates if c.table == table)


# -- reading the statement ---------------------------------------------------------------------------
@dataclass(frozen=True)
class _Tok:
    kind: str
    text: str
    low: str
    start: int
    end: int


@dataclass
class _Entry:
    """A table (or derived table) the statement reads, as its FROM names it."""

    name: str  # alias, or the table's name
    table: str  # lower case ('' for a derived table)
    scope: int
    pos: int
    depth: int
    inner: int | None = None  # a derived table's (or CTE's) scope


@dataclass(frozen=True)
class _Ref:
    target: tuple[int, str]  # the entry whose table holds the column: (scope, name)
    table: str  # lower case
    column: str  # as the caller's column list spells it
    rank: tuple[int, int]  # (depth, position) of the entry the query named: later is inner


@dataclass
class _Region:
    kind: str  # clause | group
    word: str  # the clause, or the token before the '('
    parent: int | None = None
    has_or: bool = False


@dataclass
class _Side:
    start: int
    end: int
    refs: list[tuple[int, _Ref]]
    params: list[int]
    constant: bool  # literals only
    subquery: bool
    row: bool  # (a, b) of plain columns

    @property
    def plain(self) -> bool:
        return self.end - self.start == 1 and bool(self.refs)

    @property
    def targets(self) -> set[tuple[int, str]]:
        return {r.target for _, r in self.refs}


@dataclass
class _Order:
    parts: tuple[KeyPart, ...]
    limit: str | None


@dataclass
class _Found:
    """What the statement says about one table occurrence."""

    table: str
    equal: list[tuple[KeyPart, bool]] = field(default_factory=list)  # (part, fixed by a constant)
    join: list[KeyPart] = field(default_factory=list)
    joined_with: list[str] = field(default_factory=list)
    ranges: list[KeyPart] = field(default_factory=list)
    orders: list[_Order] = field(default_factory=list)
    predicates: list[str] = field(default_factory=list)
    reads: list[str] = field(default_factory=list)
    reads_all: bool = False
    exprs: dict[str, tuple[str, ...]] = field(default_factory=dict)  # expression -> the columns it reads


class _Reader:
    """The statement's tokens with, for each: its matching parenthesis, its scope (the subquery
    holding it), its clause and its boolean region; the tables each scope reads."""

    def __init__(self, sql: str, columns: Mapping[str, Sequence[str]]):
        self.toks = [_Tok(k, m[0], m[0].lower(), m.start(), m.end()) for k, m in significant(sql)]
        self.sig = [(t.kind, t.low) for t in self.toks]  # what sqltext's operand readers take
        self.columns = {t.lower(): {c.lower(): c for c in cols} for t, cols in columns.items()}
        self.tables = {t.lower(): t for t in columns}
        n = len(self.toks)
        self.match = [-1] * n
        self.scope = [-1] * n
        self.clause = [""] * n
        self.region = [-1] * n
        self.at_scope = [True] * n  # directly in a subquery (or the statement), not in a group
        self.subqueries: set[int] = set()
        self.regions: dict[int, _Region] = {-1: _Region("clause", "")}
        self.parent: dict[int, int] = {}  # scope -> enclosing scope
        self.depth: dict[int, int] = {-1: 0}
        self.derived_from: set[int] = set()  # scopes that are a FROM item
        self.entries: dict[int, list[_Entry]] = {-1: []}
        self.declared: set[int] = set()  # tokens naming a table or an alias
        self.ctes: dict[str, int] = {}
        self._refs: dict[int, _Ref | None] = {}
        self._conjuncts: dict[int, bool] = {}
        self._holders: dict[tuple[int, str, str], tuple[tuple[int, str], str, str] | None] = {}
        self.windows: set[int] = set()  # scopes holding a window function (OVER)
        self._read()

    def low(self, i: int) -> str:
        return self.toks[i].low if 0 <= i < len(self.toks) else ""

    def _read(self) -> None:
        # frames: (open, is_subquery, clause, region, scope)
        frames: list[list[Any]] = [[-1, True, "", -1, -1]]
        for i, t in enumerate(self.toks):
            f = frames[-1]
            self.scope[i], self.clause[i], self.region[i], self.at_scope[i] = f[4], f[2], f[3], f[1]
            if t.low == "(":
                if self.low(i + 1) in ("select", "with", "values"):
                    self.subqueries.add(i)
                    self.parent[i], self.depth[i] = f[4], self.depth[f[4]] + 1
                    self.entries[i] = []
                    self.regions[i] = _Region("clause", "")
                    if f[2] == "from":
                        self.derived_from.add(i)
                    if f[2] == "with" and self.low(i - 1) == "as" and i >= 2:
                        self.ctes[self.low(i - 2)] = i
                    frames.append([i, True, "", i, i])
                else:
                    self.regions[i] = _Region("group", self.low(i - 1), parent=f[3])
                    frames.append([i, False, f[2], i, f[4]])
                continue
            if t.low == ")" and len(frames) > 1:
                opened = frames.pop()
                self.match[opened[0]], self.match[i] = i, opened[0]
                f = frames[-1]
                self.scope[i], self.clause[i], self.region[i], self.at_scope[i] = f[4], f[2], f[3], f[1]
                if opened[0] in self.derived_from:
                    self._derived(opened[0], i + 1)
                continue
            if t.kind != "word":
                continue
            word = _CLAUSES.get(t.low) or (_NEEDS_BY.get(t.low) if self.low(i + 1) == "by" else None)
            if word and not (t.low == "update" and self.low(i - 1) in ("for", "key")):
                f[2] = self.clause[i] = word
                if f[1]:  # a new clause of the subquery: a new boolean region
                    self.regions[i] = _Region("clause", word)
                    f[3] = self.region[i] = i
            elif t.low == "or":
                self.regions[f[3]].has_or = True
            elif t.low == "over" and self.low(i + 1) == "(":
                self.windows.add(f[4])
            if self._names_a_table(i):
                self._table(i)

    def _names_a_table(self, i: int) -> bool:
        before = self.low(i - 1)
        if self.toks[i].kind not in ("word", "ident") or self.low(i) in _KEYWORDS:
            return False
        if before in ("from", "join", "straight_join"):
            return True
        if before == "update":
            return self.low(i - 2) not in ("for", "key")
        return before == "," and self.clause[i] == "from" and self.at_scope[i]

    def _name(self, i: int) -> str:
        t = self.toks[i]
        return t.text[1:-1] if t.kind == "ident" else t.low

    def _alias_at(self, j: int) -> int | None:
        if self.low(j) == "as":
            j += 1
        if (
            0 <= j < len(self.toks)
            and self.toks[j].kind in ("word", "ident")
            and self.low(j) not in _KEYWORDS
        ):
            return j
        return None

    def _table(self, i: int) -> None:
        table = self._name(i).split(".")[-1]
        alias = self._alias_at(i + 1)
        self.declared.add(i)
        if alias is not None:
            self.declared.add(alias)
        s = self.scope[i]
        entry = _Entry(self._name(alias) if alias is not None else table, table, s, i, self.depth[s])
        for outer in self._chain(s):
            if table in self.ctes and self.parent.get(self.ctes[table], -2) == outer:
                entry.inner, entry.table = self.ctes[table], ""
                break
        self.entries[s].append(entry)

    def _derived(self, open_at: int, after: int) -> None:
        alias = self._alias_at(after)
        if alias is None:
            return
        self.declared.add(alias)
        s = self.parent[open_at]
        self.entries[s].append(_Entry(self._name(alias), "", s, alias, self.depth[s], inner=open_at))

    def _chain(self, s: int) -> Iterable[int]:
        """``s`` and the scopes around it, innermost first (a name is looked up this far out)."""
        for _ in range(_SCOPE_REACH):
            yield s
            if s == -1:
                return
            s = self.parent[s]

    # -- columns ----------------------------------------------------------------------------------
    def ref(self, i: int) -> _Ref | None:
        """The column token ``i`` names, resolved to the table occurrence holding it; None when it
        names none (a keyword, a function, a select-list alias, a column of no known table)."""
        if i not in self._refs:
            self._refs[i] = self._resolve(i)
        return self._refs[i]

    def _resolve(self, i: int) -> _Ref | None:
        t = self.toks[i]
        if t.kind not in ("word", "ident") or i in self.declared or self.clause[i] not in _READING:
            return None
        if self.low(i + 1) in ("(", ".") or self.low(i - 1) in ("as", "::", "."):
            return None
        parts = [t.text[1:-1]] if t.kind == "ident" else t.low.split(".")
        if len(parts) == 1 and t.kind == "word" and parts[0] in _KEYWORDS:
            return None
        if len(parts) > 3:
            return None
        qualifier, column = (parts[-2] if len(parts) > 1 else None), parts[-1].lower()
        for s in self._chain(self.scope[i]):
            for e in self.entries[s]:
                if qualifier is not None and e.name != qualifier:
                    continue
                found = self._through(e, column, (e.depth, e.pos))
                if found is not None or qualifier is not None:
                    return found
        return None

    def _through(self, e: _Entry, column: str, rank: tuple[int, int]) -> _Ref | None:
        held = self._holder(e, column, _SCOPE_REACH)
        return None if held is None else _Ref(held[0], held[1], held[2], rank)

    def _holder(self, e: _Entry, column: str, reach: int) -> tuple[tuple[int, str], str, str] | None:
        """(entry, table, column as spelt) of the table occurrence ``e`` reads ``column`` from:
        ``e`` itself, or for a derived table the table inside it that has the column."""
        key = (e.scope, e.name, column)
        if key not in self._holders:
            held = None
            if e.inner is None:
                cols = self.columns.get(e.table)
                if cols is not None and column in cols:
                    held = ((e.scope, e.name), e.table, cols[column])
            elif reach > 0:
                held = next(
                    (h for i in self.entries.get(e.inner, []) if (h := self._holder(i, column, reach - 1))),
                    None,
                )
            self._holders[key] = held
        return self._holders[key]

    def side(self, a: int, b: int) -> _Side:
        refs: list[tuple[int, _Ref]] = []
        params: list[int] = []
        constant, subquery = True, False
        j = a
        while j < b:
            t = self.toks[j]
            if j in self.subqueries:
                subquery, constant = True, False
                j = max(self.match[j], j) + 1
                continue
            found = self.ref(j)
            if found is not None:
                refs.append((j, found))
                constant = False
            elif t.kind == "param":
                params.append(j)
                constant = False
            elif t.kind in ("word", "ident") and not (t.low in _LITERAL_WORDS or self.low(j - 1) == "::"):
                constant = False
            j += 1
        row = (
            self.low(a) == "("
            and self.match[a] == b - 1
            and b - a > 3
            and all(
                self.low(k) == "," if (k - a) % 2 == 0 else self.ref(k) is not None
                for k in range(a + 1, b - 1)
            )
        )
        return _Side(a, b, refs, params, constant, subquery, row)

    def text(self, a: int, b: int, most: int | None = None) -> str:
        """``toks[a:b]`` as the query writes them, each column's table qualifier dropped; ``most``:
        at most that many tokens, then ``…`` (what a message quotes)."""
        out = []
        for j in range(a, b if most is None else min(b, a + most)):
            if j > a and self.toks[j - 1].end < self.toks[j].start:
                out.append(" ")
            found = self.ref(j)
            out.append(
                found.column if found is not None and self.toks[j].kind == "word" else self.toks[j].text
            )
        if most is not None and b - a > most:
            out.append(" …")
        return excerpt("".join(out), 120) if most is not None else "".join(out)

    def conjunct(self, at: int, start: int) -> bool:
        """Whether the predicate at ``at`` (starting at ``start``) is a top-level conjunct of a
        WHERE or ON: only ANDs and plain parentheses between it and the clause."""
        if self.low(start - 1) in _NOT_CONJUNCT_BEFORE:
            return False
        return self._conjunct_region(self.region[at])

    def _conjunct_region(self, r: int) -> bool:
        climbed: list[int] = []
        answer = False
        while r not in self._conjuncts:
            region = self.regions[r]
            climbed.append(r)
            if region.has_or or region.kind == "clause" or region.word not in ("where", "and", "on", "("):
                answer = not region.has_or and region.kind == "clause" and region.word in _FILTERS
                break
            if region.parent is None:
                break
            r = region.parent
        else:
            answer = self._conjuncts[r]
        for c in climbed:  # every region on the way shares the answer
            self._conjuncts[c] = answer
        return answer


_At = Callable[[_Ref], _Found]
_Say = Callable[[str], None]


# -- deriving ----------------------------------------------------------------------------------------
def derive(
    sql: str,
    columns: Mapping[str, Sequence[str]],
    dialect: str,
    *,
    params: Mapping[str, Any] | None = None,
    lengths: Mapping[str, Mapping[str, int | None]] | None = None,
) -> Advice:
    """The candidate indexes of ``sql`` (a catalog shape's statement, ``:name`` parameters) on
    ``dialect``, for the tables of ``columns`` (table -> its column names, in order, as the live
    schema has them). ``params``: sample values (a LIKE pattern's leading wildcard is seen in them).
    ``lengths``: per table, the declared length of its text and binary columns, so that a MySQL key
    never exceeds what InnoDB takes (a wider text column keeps a prefix, a covering part is left
    out)."""
    if dialect not in dialects.MODULES:
        raise ValueError(f"unknown dialect {dialect!r}")
    r = _Reader(sql, columns)
    found: dict[tuple[int, str], _Found] = {}
    unbounded: list[str] = []

    def at(ref: _Ref) -> _Found:
        return found.setdefault(ref.target, _Found(r.tables[ref.table]))

    def say(reason: str) -> None:
        if reason not in unbounded:
            unbounded.append(reason)

    for i in range(len(r.toks)):
        ref = r.ref(i)
        if ref is not None:
            f = at(ref)
            if ref.column not in f.reads:
                f.reads.append(ref.column)
    _stars(r, found)
    for k, t in enumerate(r.toks):
        if t.low in _OPS and t.kind in ("op", "word") and r.clause[k] in _FILTERS:
            _comparison(r, k, at, say, params or {}, dialect)
        elif t.kind in ("word", "ident") and r.clause[k] in _FILTERS:
            _bare_boolean(r, k, at)
    limits = _limits(r, say)
    _orders(r, at, say, limits)
    for s in sorted(r.derived_from & r.windows):
        alias = next((e.name for e in r.entries[r.parent[s]] if e.inner == s), "")
        say(
            f"a window function (… OVER (…)) in the derived table {alias} is computed over every row it "
            "reads, before the outer WHERE and LIMIT: no index bounds that work (a correlated subquery "
            "with ORDER BY … LIMIT can)"
        )
    read: list[str] = []
    # the table occurrences whose rows are found by their address (None: an unqualified ctid)
    addressed = {t.low.rpartition(".")[0] or None for t in r.toks if t.low.rpartition(".")[2] == "ctid"}
    for s in sorted(r.entries):
        for e in r.entries[s]:
            if e.table in r.tables and r.tables[e.table] not in read:
                read.append(r.tables[e.table])
            seen = found.get((e.scope, e.name))
            if e.name in addressed or (None in addressed):
                continue  # PostgreSQL rows found by their address (ctid = ANY (…)): a Tid Scan
            if e.table in r.tables and (
                seen is None or not (seen.equal or seen.join or seen.ranges or seen.orders or seen.predicates)
            ):
                say(
                    f"nothing narrows the rows of {r.tables[e.table]}"
                    f"{'' if e.name == e.table else ' ' + e.name}: no equality, range, join key or "
                    "ORDER BY … LIMIT on it, so every row is read"
                )
    out: list[Candidate] = []
    for f in found.values():
        out.extend(_candidates(f, dialect, (lengths or {}).get(f.table) or {}))
    return Advice(_ranked(out), tuple(unbounded), limits.get(-1, (None, None))[0], tuple(read))


def _stars(r: _Reader, found: dict[tuple[int, str], _Found]) -> None:
    """``SELECT *`` and ``t.*``: every column of the table read (no covering variant)."""
    for i, t in enumerate(r.toks):
        if t.text != "*" or r.clause[i] != "select" or not r.at_scope[i]:
            continue
        before = r.low(i - 1)
        if before in ("select", "distinct", ","):
            named = None
        elif before == "." and i >= 2:
            named = r.low(i - 2)
        else:
            continue
        for e in r.entries[r.scope[i]]:
            if named is None or e.name == named:
                for inner in [e] if e.inner is None else r.entries.get(e.inner, []):
                    if inner.table in r.tables:
                        found.setdefault(
                            (inner.scope, inner.name), _Found(r.tables[inner.table])
                        ).reads_all = True


def _part(r: _Reader, side: _Side, f: _Found, collation: str | None = None) -> KeyPart:
    """The key part of a compared side: its column, or its expression as written; ``collation``:
    the one the value imposes on the comparison, which the key must be in to serve it."""
    if side.plain and collation is None:
        return KeyPart(side.refs[0][1].column)
    text = r.text(side.start, side.end) + (f" COLLATE {collation}" if collation else "")
    f.exprs[text] = tuple(ref.column for _, ref in side.refs)
    return KeyPart(text, expression=True)


def _collation(r: _Reader, side: _Side, value: _Side | None) -> str | None:
    """The collation the value side names (``lower(:x) COLLATE "C"``, ``lower(:x COLLATE c)``),
    which the comparison then takes; None when it names none, or the column side names its own
    (then it is part of the column side's expression already)."""
    if value is None or value.subquery or any(r.low(j) == "collate" for j in range(side.start, side.end)):
        return None
    for j in range(value.start, value.end - 1):
        if r.low(j) == "collate":
            return r.toks[j + 1].text
    return None


def _comparison(
    r: _Reader, k: int, at: _At, say: _Say, params: Mapping[str, Any], dialect: str = "postgresql"
) -> None:
    op = r.low(k)
    if r.low(k - 1) == "not" and op in ("in", "like", "ilike", "between"):
        return
    if op in ("<>", "!="):
        return
    a = _operand_left(r.sig, k - 1)
    if op == "is":
        negated = r.low(k + 1) == "not"
        what = r.low(k + 1 + negated)
        if what not in ("null", "true", "false", "unknown"):
            return
        left, right = r.side(a, k), None
        end = k + 2 + negated
    else:
        if op == "in" and r.low(k + 1) == "(" and r.match[k + 1] > k:
            end = r.match[k + 1] + 1
        else:
            end = _operand_right(r.sig, k + 1, between=op == "between")
        if end <= k + 1 or a >= k:
            return
        left, right = r.side(a, k), r.side(k + 1, end)
    if not r.conjunct(k, a):
        return
    text = r.text(a, end, _QUOTED)  # what a reason quotes; a predicate is written whole
    if right is not None and left.refs and right.refs:
        _columns_compared(r, op, left, right, (a, end), at, say)
        return
    side, value = (left, right) if left.refs else (right, left)
    if side is None or not side.refs or side.subquery:
        return
    if len(side.targets) > 1:
        say(f"{text}: a function of columns of several tables: no index can hold it")
        return
    if side.params:
        say(f"{text}: a parameter inside the column's side: no index can hold it (move it to the other side)")
        return
    f = at(side.refs[0][1])
    constant = value is None or (value.constant and not value.subquery)
    if op == "is":
        if r.low(k + 1) != "not":
            f.equal.append((_part(r, side, f), True))
        f.predicates.append(r.text(a, end))
        return
    if op in ("like", "ilike"):
        if _leading_wildcard(r, value, params):
            say(
                f"{text}: the pattern starts with a wildcard; a btree is ordered by the leading characters, "
                "so every row is read (a trigram index would serve it)"
            )
            return
        if op == "ilike":
            say(
                f"{text}: ILIKE compares without case; no btree serves it (lower(col) LIKE lower(:x) "
                "with an expression index on lower(col) can)"
            )
            return
    if side.row:
        parts = [KeyPart(ref.column) for _, ref in side.refs]
        if op in ("=", "in"):  # (a, b) = (…), (a, b) IN (SELECT …): the row found by its key
            f.equal.extend((p, constant) for p in parts)
        elif op in _RANGE:
            f.ranges.append(parts[0])
        return
    collation = _collation(r, side, value)
    if collation is not None and dialect == "mysql":
        # MySQL uses a functional key part only where the query writes its very expression, and
        # the comparison is in the value's collation, not the key's (the column's): no key serves it
        column = r.text(side.start, side.end)
        say(
            f"{text}: the value's COLLATE {collation} sets the comparison's collation, which no key on "
            f"{column} is in (MySQL matches a functional key part by the expression the query writes): "
            f"write {column} COLLATE {collation} on the column's side and index that expression"
        )
        return
    part = _part(r, side, f, collation)
    if op in _EQ:
        f.equal.append((part, constant and op == "="))
    elif op in _RANGE:
        f.ranges.append(part)
    if constant and value is not None and not value.subquery:
        f.predicates.append(r.text(a, end))


def _columns_compared(
    r: _Reader, op: str, left: _Side, right: _Side, span: tuple[int, int], at: _At, say: _Say
) -> None:
    """A column compared with a column: a join key of the inner table (the later one in the
    query: the joined table, the subquery's), or a predicate of one row when both are one table's."""
    if len(left.targets) != 1 or len(right.targets) != 1:
        say(f"{r.text(*span, _QUOTED)}: compares expressions over several tables: no index can hold it")
        return
    if left.targets == right.targets:
        if not (left.params or right.params or left.subquery or right.subquery):
            at(left.refs[0][1]).predicates.append(r.text(*span))
        return
    inner, outer = (left, right) if left.refs[0][1].rank > right.refs[0][1].rank else (right, left)
    if inner.params or inner.subquery:
        return
    f = at(inner.refs[0][1])
    part = _part(r, inner, f)
    if op in _EQ:
        f.join.append(part)
        f.joined_with.append(outer.refs[0][1].table)
    elif op in _RANGE - {"like"}:
        f.ranges.append(part)


def _leading_wildcard(r: _Reader, value: _Side | None, params: Mapping[str, Any]) -> bool:
    if value is None:
        return False
    for j in range(value.start, value.end):
        t = r.toks[j]
        if t.low == "(" or (t.kind == "word" and r.low(j + 1) == "("):
            continue  # concat('%', :x), lower(…)
        if t.kind == "str":
            body = t.text[t.text.index("'") + 1 :]
            return body[:1] in ("%", "_")
        if t.kind == "param":
            sample = params.get(t.text[1:])
            return isinstance(sample, str) and sample[:1] in ("%", "_")
        return False
    return False


def _bare_boolean(r: _Reader, k: int, at: _At) -> None:
    """``WHERE pending``, ``AND NOT s.archived``: a boolean column as a predicate of its own."""
    ref = r.ref(k)
    if ref is None or r.low(k + 1) not in _BARE_AFTER:
        return
    negated = r.low(k - 1) == "not"
    start = k - negated
    if r.low(start - 1) not in _BARE_BEFORE or (negated and r.low(start - 1) == "not"):
        return
    if r.low(start - 1) == "and" and r.low(_operand_left(r.sig, start - 2) - 1) == "between":
        return  # the upper bound of a BETWEEN
    if not r.conjunct(k, start):
        return
    f = at(ref)
    f.equal.append((KeyPart(ref.column), True))
    f.predicates.append(("NOT " if negated else "") + ref.column)


def _limits(r: _Reader, say: _Say) -> dict[int, tuple[str | None, str | None]]:
    """scope -> (LIMIT, OFFSET) as written; an OFFSET taken from a parameter is unbounded work."""
    out: dict[int, tuple[str | None, str | None]] = {}
    for i, t in enumerate(r.toks):
        if not r.at_scope[i] or t.low not in ("limit", "offset", "fetch"):
            continue
        limit, offset = out.get(r.scope[i], (None, None))
        if t.low == "limit":
            limit = r.toks[i + 1].text if i + 1 < len(r.toks) else None
            if r.low(i + 2) == "," and i + 3 < len(r.toks):  # MySQL's LIMIT offset, count
                offset, limit = limit, r.toks[i + 3].text
        elif t.low == "offset":
            offset = r.toks[i + 1].text if i + 1 < len(r.toks) else None
        elif r.low(i + 1) in ("first", "next") and i + 2 < len(r.toks):
            limit = r.toks[i + 2].text
        out[r.scope[i]] = (limit, offset)
    for s, (_, offset) in out.items():
        if offset is not None and offset.startswith(":"):
            where = "" if s == -1 else " (in a subquery)"
            say(
                f"OFFSET {offset}{where}: the rows skipped are read whatever the index, so the work grows "
                "with the offset (a keyset condition on the ORDER BY columns bounds it)"
            )
    return out


def _orders(r: _Reader, at: _At, say: _Say, limits: dict[int, tuple[str | None, str | None]]) -> None:
    """Each ORDER BY of the statement (not a window's): the table occurrence whose index order gives it."""
    n = len(r.toks)
    for i in range(n - 1):
        if r.low(i) != "order" or r.low(i + 1) != "by" or not r.at_scope[i]:
            continue
        items: list[tuple[int, int]] = []
        start, j, depth = i + 2, i + 2, 0
        while j < n:
            low = r.low(j)
            if low == "(":
                depth += 1
            elif low == ")":
                if not depth:
                    break
                depth -= 1
            elif not depth and (
                low in ("limit", "offset", "fetch", "for", "union", ";") or low in ("intersect", "except")
            ):
                break
            elif not depth and low == ",":
                items.append((start, j))
                start = j + 1
            j += 1
        items.append((start, j))
        parts: list[tuple[_Ref, KeyPart]] = []
        for a, b in items:
            desc = False
            while b > a and r.low(b - 1) in ("asc", "desc", "nulls", "first", "last"):
                desc = desc or r.low(b - 1) == "desc"
                b -= 1
            ref = r.ref(a) if b - a == 1 else None
            if ref is None:
                break
            parts.append((ref, KeyPart(ref.column, desc=desc)))
        limit = limits.get(r.scope[i], (None, None))[0]
        targets = {ref.target for ref, _ in parts}
        if len(parts) < len(items):
            continue  # an expression: no column order gives it
        if len(targets) > 1:
            if limit is not None:
                tables = ", ".join(dict.fromkeys(ref.table for ref, _ in parts))
                say(
                    f"ORDER BY {r.text(i + 2, j, _QUOTED)} reads columns of several tables ({tables}): the rows are "
                    "sorted after the join, so the LIMIT does not stop the read early"
                )
            continue
        if parts:
            at(parts[0][0]).orders.append(_Order(tuple(p for _, p in parts), limit))


# -- the candidates of one table occurrence ----------------------------------------------------------
def _unique(parts: Iterable[KeyPart]) -> tuple[KeyPart, ...]:
    seen: dict[str, KeyPart] = {}
    for p in parts:
        seen.setdefault(p.name, p)
    return tuple(seen.values())


def _candidates(f: _Found, dialect: str, lengths: Mapping[str, int | None]) -> list[Candidate]:
    equal = list(_unique(p for p, _ in f.equal))
    fixed = {p.name for p, is_fixed in f.equal if is_fixed}
    tails: list[tuple[tuple[KeyPart, ...], _Order | None]] = [(o.parts, o) for o in f.orders]
    ranges = [p for p in _unique(f.ranges) if p.name not in {q.name for q in equal}]
    if ranges and all(o.parts[0].name != ranges[0].name for o in f.orders):
        tails.append(((ranges[0],), None))  # one range column: the first the query names
    if not tails:
        tails.append(((), None))
    keys: list[tuple[tuple[KeyPart, ...], _Order | None, bool]] = []  # (key, order, by join)
    join = [p for p in _unique(f.join) if p.name not in {q.name for q in equal}]
    for tail, order in tails:
        if join:
            keys.append((_unique([*equal, *join, *tail]), order, True))
        keys.append((_unique([*equal, *tail]), order, False))
    where = " AND ".join(dict.fromkeys(f.predicates)) if dialect == "postgresql" and f.predicates else None
    out: list[Candidate] = []
    for n, (key, order, by_join) in enumerate(k for k in keys if k[0]):
        base = _described(f, key, order, by_join, fixed)
        out.append(base)
        if where is not None:
            kept = tuple(p for p in key if p.name not in fixed) or key
            out.append(
                replace(
                    base,
                    columns=kept,
                    where=where,
                    kind="partial",
                    reason=f"{base.reason}; only the rows where {where}",
                )
            )
        if n == 0 and not f.reads_all:  # the best key set's covering variants
            for c in list(out):
                named = {p.name for p in c.columns}
                extra = tuple(col for col in f.reads if col not in named and not (c.where and col in fixed))
                if extra:
                    out.append(
                        replace(
                            c,
                            include=extra,
                            kind="covering",
                            reason=f"{c.reason}; covering: also holds {', '.join(extra)}, so the table is not read",
                        )
                    )
    if dialect == "mysql":
        out = [c for c in (_fit_mysql(c, f, lengths) for c in out) if c is not None]
    return out


def _described(
    f: _Found, key: tuple[KeyPart, ...], order: _Order | None, by_join: bool, fixed: set[str]
) -> Candidate:
    equal = [p for p, _ in f.equal if p in key]
    joined = [p for p in f.join if p in key and p not in equal] if by_join else []
    said = []
    if equal:
        said.append(f"equality on {', '.join(p.name for p in _unique(equal))}")
    if joined:
        said.append(
            f"join key {', '.join(p.name for p in joined)} (compared with {', '.join(dict.fromkeys(f.joined_with))})"
        )
    rest = key[len(_unique(equal)) + len(joined) :]
    if order is not None:
        limit = f": the read stops at LIMIT {order.limit}" if order.limit else ": no sort"
        said.append(f"then ORDER BY {', '.join(map(str, order.parts))} in index order{limit}")
    elif rest:
        said.append(f"then the range on {rest[0].name}")
    expressions = [p.name for p in key if p.expression]
    if expressions:
        said.append(f"the predicate wraps the column: {', '.join(expressions)} indexed as written")
    return Candidate(
        f.table,
        key,
        kind="expression" if expressions else "btree",
        reason="; ".join(said),
        equality=len(_unique(equal)) + len(joined),
        ordered=order is not None,
    )


def _fit_mysql(c: Candidate, f: _Found, lengths: Mapping[str, int | None]) -> Candidate | None:
    """``c`` within InnoDB's key limits: at most 16 parts and 3,072 bytes, a too-wide text column
    kept as a prefix, a covering column that does not fit left out (None: nothing left to add)."""
    low = {k.lower(): v for k, v in lengths.items()}

    def width(part: KeyPart) -> int:
        if part.expression:  # its hidden column is as wide as the widest column it reads
            return max((width(KeyPart(c)) for c in f.exprs.get(part.name, ())), default=_NUMBER_BYTES)
        size = low.get(part.name.lower())
        return size * _CHAR_BYTES if size else _NUMBER_BYTES

    parts = list(c.columns)
    total = sum(width(p) for p in parts)
    notes = []
    while total > MYSQL_KEY_BYTES:
        widest = max(
            (p for p in parts if not p.expression and not p.prefix and low.get(p.name.lower())),
            key=width,
            default=None,
        )
        if widest is None:
            return None
        keep = max(1, (width(widest) - (total - MYSQL_KEY_BYTES)) // _CHAR_BYTES)
        total += keep * _CHAR_BYTES - width(widest)
        parts[parts.index(widest)] = replace(widest, prefix=keep)
        notes.append(
            f"{widest.name} as its first {keep} characters (a MySQL key holds at most {MYSQL_KEY_BYTES:,} bytes)"
        )
    include = c.include
    if include:
        if any(p.prefix for p in parts):
            return None  # a prefix is no copy of the column: nothing is covered
        kept: list[str] = []
        for col in include:
            w = width(KeyPart(col))
            if total + w <= MYSQL_KEY_BYTES and len(parts) + len(kept) < MYSQL_KEY_PARTS:
                kept.append(col)
                total += w
        if not kept:
            return None
        include = tuple(kept)
    if len(parts) > MYSQL_KEY_PARTS:
        return None
    reason = "; ".join([c.reason, *notes]) if notes else c.reason
    return replace(c, columns=tuple(parts), include=include, reason=reason)


def _ranked(found: list[Candidate]) -> tuple[Candidate, ...]:
    """Most equality first, then the ones that give the ORDER BY, the narrower kinds and keys
    first; an identical index once (a prefix of another is a candidate of its own)."""
    found = sorted(
        found,
        key=lambda c: (
            -c.equality,
            not c.ordered,
            _KIND_ORDER[c.kind],
            len(c.columns) + len(c.include),
            str(c),
        ),
    )
    seen: set[tuple[Any, ...]] = set()
    out = []
    for c in found:
        ident = (c.table, c.columns, c.include, c.where)
        if ident not in seen:
            seen.add(ident)
            out.append(c)
    return tuple(out)
