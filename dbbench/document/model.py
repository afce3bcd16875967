"""The explain result document (``dbbench.explain/2``) as typed, immutable values.

:func:`dbbench.document.build.explain_document` writes the document as a dict; :meth:`Document.from_json`
validates a decoded one (a result or baseline file: :func:`dbbench.document.store.load_document`) and
:meth:`Document.to_json` gives the dict back, key for key and in order, so a file written by
dbbench survives a round trip byte for byte. The checks name the first bad field by its path
(``results[3].remediated.samples_ms``); :class:`DocumentError` carries it.

Only the standard library: :mod:`dataclasses` (see ``docs/results.md`` for the fields).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

from dbbench.defaults import DIALECTS
from dbbench.dialects.plan import PlanNode
from dbbench.dialects.timing import RESOLVED
from dbbench.document.check import (
    SCHEMA_VERSION,
    WORK_SINCE,
    DocumentError,
    ResultFileError,
    as_object,
    check_config,
    check_plan,
    check_samples,
    known,
    numbers,
    schema_version,
    text,
)

__all__ = [
    "ABSENT",
    "SCHEMA_VERSION",
    "DatasetInfo",
    "Document",
    "DocumentError",
    "IndexDefinition",
    "RemediationRow",
    "ResultFileError",
    "RunConfig",
    "Server",
    "ShapeResult",
    "Spelling",
    "Verdict",
    "as_document",
    "check_plan",
]


class _Absent:
    """The marker of a key the document does not hold (a baseline's dropped ``raw_plan``)."""

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Any = _Absent()


@dataclass(frozen=True, kw_only=True)
class Server:
    dialect: str
    version: str | None = None
    url: str | None = None  # passwords masked

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> Server:
        return cls(dialect=obj["dialect"], version=obj.get("version"), url=obj.get("url"))

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"dialect": self.dialect, "version": self.version}
        if self.url is not None:
            out["url"] = self.url
        return out


@dataclass(frozen=True, kw_only=True)
class RunConfig:
    """What the run measured (:meth:`dbbench.workflow.Run.config`); a field the file does not
    hold is None (files of older dbbench have no ``isolation``). The settings are held to the
    command line's bounds (:func:`dbbench.document.check.check_config`): ``diff`` runs them again."""

    command: str | None = None
    catalog: str | None = None
    namespace: str | None = None
    warmups: int | None = None
    runs: int | None = None
    timeout_s: float | None = None
    natural: bool | None = None
    shapes: tuple[str, ...] | None = None
    isolation: str | None = None  # the role the catalog SQL ran as, or "none"
    extra: dict[str, Any] = field(default_factory=dict)  # keys this dbbench does not know, kept

    @classmethod
    def from_json(cls, obj: Mapping[str, Any], at: str = "config") -> RunConfig:
        check_config(obj, at)
        given = {k: v for k, v in obj.items() if k in known(cls)}
        if given.get("shapes") is not None:
            given["shapes"] = tuple(given["shapes"])
        return cls(**given, extra={k: v for k, v in obj.items() if k not in known(cls)})

    def to_json(self) -> dict[str, Any]:
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "extra"}
        if self.shapes is not None:
            out["shapes"] = list(self.shapes)
        return {k: v for k, v in out.items() if v is not None} | self.extra


@dataclass(frozen=True, kw_only=True)
class IndexDefinition:
    """One index of the namespace when the run measured it: its table, its name and its
    definition as the server states it (the namespace's own name left out, so that runs in two
    namespaces compare: PostgreSQL ``CREATE INDEX ix ON t USING btree (a)``, MySQL ``BTREE (`a`)``)."""

    table: str
    index: str
    definition: str

    @classmethod
    def from_json(cls, obj: object, at: str) -> IndexDefinition:
        m = as_object(obj, at, "must be an object with table, index and definition")
        return cls(
            table=text(m, "table", at), index=text(m, "index", at), definition=text(m, "definition", at)
        )

    def to_json(self) -> dict[str, Any]:
        return {"table": self.table, "index": self.index, "definition": self.definition}

    @property
    def key(self) -> tuple[str, str]:
        """(table, index), lower-cased: how two runs' indexes are matched (MySQL's names are
        case-insensitive; PostgreSQL's unquoted ones are lower case already)."""
        return self.table.lower(), self.index.lower()


@dataclass(frozen=True, kw_only=True)
class DatasetInfo:
    """What one dialect's namespace held: dataset name, seed, setup SQL digest, table fingerprints
    and, in documents written since issue 35, its indexes when the run measured it (``indexes``;
    None in older files, whose index changes are then unknown: ``dbbench diff`` names none)."""

    name: str | None = None
    seed: int | None = None
    setup_sha256: str | None = None
    fingerprints: dict[str, str] = field(default_factory=dict)
    indexes: tuple[IndexDefinition, ...] | None = None

    @classmethod
    def from_json(cls, obj: Mapping[str, Any], at: str = "datasets") -> DatasetInfo:
        indexes = obj.get("indexes")
        if indexes is not None and not isinstance(indexes, list):
            raise DocumentError(f"{at}.indexes", "must be a list of indexes or null")
        return cls(
            name=obj.get("name"),
            seed=obj.get("seed"),
            setup_sha256=obj.get("setup_sha256"),
            fingerprints=dict(obj.get("fingerprints") or {}),
            indexes=None
            if indexes is None
            else tuple(IndexDefinition.from_json(x, f"{at}.indexes[{k}]") for k, x in enumerate(indexes)),
        )

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "seed": self.seed,
            "setup_sha256": self.setup_sha256,
            "fingerprints": dict(self.fingerprints),
        }
        if self.indexes is not None:  # absent in older files, which round-trip as they were
            out["indexes"] = [i.to_json() for i in self.indexes]
        return out


@dataclass(frozen=True, kw_only=True)
class Verdict:
    """The catalog assertion of one shape on one dialect."""

    expected: str
    actual: str
    problems: tuple[str, ...] = ()

    @classmethod
    def from_json(cls, obj: object, at: str) -> Verdict:
        v = as_object(obj, at, "must be an object or null")
        expected, actual = text(v, "expected", at), text(v, "actual", at)
        problems = v.get("problems", [])
        if not isinstance(problems, list):
            raise DocumentError(f"{at}.problems", "must be a list")
        return cls(expected=expected, actual=actual, problems=tuple(problems))

    def to_json(self) -> dict[str, Any]:
        return {"expected": self.expected, "actual": self.actual, "problems": list(self.problems)}


@dataclass(frozen=True, kw_only=True)
class Spelling:
    """One spelling (remediated or natural) of a shape measured: its samples and last plan."""

    sql: str = ""
    samples_ms: tuple[float, ...] = ()
    p50_ms: float | None = None
    p95_ms: float | None = None
    rows: float | None = None
    timeout: str | None = None  # why it did not finish, when it did not
    plan: PlanNode | None = None  # normalized tree of the last timed run
    raw_plan: Any = ABSENT  # the server's own output (ABSENT in a baseline)
    # what samples_ms are (dbbench.dialects.timing; None in files written before it was recorded:
    # executor time), the executor's time of every sample and PostgreSQL's planning time
    timing: str | None = None
    executor_samples_ms: tuple[float, ...] | None = None
    planning_samples_ms: tuple[float, ...] | None = None
    # a write's or a locking read's lock footprint (dbbench.dialects.common.footprint); None for a
    # plain read and in files written before it was recorded
    locks: dict[str, Any] | None = None

    @property
    def locked_rows(self) -> int | None:
        """The rows the statement locked, every table counted; None when not recorded."""
        if not isinstance(self.locks, dict) or not isinstance(self.locks.get("rows"), int):
            return None
        return int(self.locks["rows"])

    @classmethod
    def from_json(cls, obj: object, at: str) -> Spelling:
        from dbbench.dialects.timing import KINDS

        m = as_object(obj, at)
        samples = check_samples(m.get("samples_ms"), f"{at}.samples_ms")
        numbers(m, ("p50_ms", "p95_ms"), at)
        plan = m.get("plan")
        timing = m.get("timing")
        if timing is not None and timing not in KINDS:
            raise DocumentError(f"{at}.timing", f"must be one of {', '.join(KINDS)} or null")
        extra = {
            key: None if m.get(key) is None else check_samples(m[key], f"{at}.{key}")
            for key in ("executor_samples_ms", "planning_samples_ms")
        }
        locks = m.get("locks")
        if locks is not None and not (isinstance(locks, dict) and isinstance(locks.get("rows", 0), int)):
            raise DocumentError(f"{at}.locks", "must be an object with a whole number of rows")
        return cls(
            sql=m.get("sql", ""),
            samples_ms=samples,
            p50_ms=m.get("p50_ms"),
            p95_ms=m.get("p95_ms"),
            rows=m.get("rows"),
            timeout=m.get("timeout"),
            plan=None if plan is None else check_plan(plan, f"{at}.plan"),
            raw_plan=m.get("raw_plan", ABSENT),
            timing=timing,
            locks=locks,
            **extra,
        )

    def to_json(self) -> dict[str, Any]:
        out = {
            "sql": self.sql,
            "samples_ms": list(self.samples_ms),
            "p50_ms": self.p50_ms,
            "p95_ms": self.p95_ms,
            "rows": self.rows,
            "timeout": self.timeout,
            "plan": None if self.plan is None else self.plan.to_dict(),
        }
        if self.raw_plan is not ABSENT:
            out["raw_plan"] = self.raw_plan
        if self.timing is not None:  # absent in older files, which round-trip as they were
            out["timing"] = self.timing
            out["executor_samples_ms"] = (
                None if self.executor_samples_ms is None else list(self.executor_samples_ms)
            )
            out["planning_samples_ms"] = (
                None if self.planning_samples_ms is None else list(self.planning_samples_ms)
            )
        if self.locks is not None:  # absent for reads and in older files
            out["locks"] = self.locks
        return out

    @property
    def time_kind(self) -> str:
        """What ``samples_ms`` are: ``timing``, else (a file written before it was recorded)
        executor time, resolved while planning when the plan's root was."""
        from dbbench.dialects import timing

        if self.timing is not None:
            return self.timing
        return timing.kind_of(False, self.plan)

    def comparable(self, other: Spelling) -> tuple[list[float], list[float], str | None] | str:
        """:func:`dbbench.dialects.timing.comparable` of this spelling's samples and ``other``'s."""
        from dbbench.dialects import timing

        return timing.comparable(
            self.time_kind,
            self.samples_ms,
            self.executor_samples_ms,
            other.time_kind,
            other.samples_ms,
            other.executor_samples_ms,
        )


@dataclass(frozen=True, kw_only=True)
class ShapeResult:
    """One shape on one dialect: the assertion's verdict and both spellings measured."""

    shape: str
    dialect: str
    ok: bool
    remediated: Spelling
    natural: Spelling | None = None
    cardinality: str = ""
    access_path: str | None = None  # the catalog's words for the expected path
    expect_rows: int | None = None
    params: Any = None
    cascade: dict[str, Any] | None = None  # rows counted before / after a delete / after rollback
    natural_label: str | None = None
    verdict: Verdict | None = None
    # a write's tables' fingerprints before the first and after the last run ({"tables", "equal"})
    unchanged: dict[str, Any] | None = None
    # the two-session check of a shape with [race] (dbbench.measure.race)
    race: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # keys this dbbench does not know, kept

    @property
    def key(self) -> tuple[str, str]:
        return self.shape, self.dialect

    @classmethod
    def from_json(cls, obj: object, at: str) -> ShapeResult:
        r = as_object(obj, at)
        shape, dialect = text(r, "shape", at), text(r, "dialect", at)
        if dialect not in DIALECTS:
            raise DocumentError(f"{at}.dialect", f"{dialect!r} is not postgresql or mysql")
        if not isinstance(r.get("ok"), bool):
            raise DocumentError(f"{at}.ok", "must be true or false")
        remediated = Spelling.from_json(r.get("remediated"), f"{at}.remediated")
        natural = None if r.get("natural") is None else Spelling.from_json(r["natural"], f"{at}.natural")
        verdict = None if r.get("verdict") is None else Verdict.from_json(r["verdict"], f"{at}.verdict")
        for key in ("cardinality", "access_path", "natural_label"):
            if r.get(key) is not None and not isinstance(r[key], str):
                raise DocumentError(f"{at}.{key}", "must be text")
        return cls(
            shape=shape,
            dialect=dialect,
            ok=r["ok"],
            remediated=remediated,
            natural=natural,
            cardinality=r.get("cardinality") or "",
            access_path=r.get("access_path"),
            expect_rows=r.get("expect_rows"),
            params=r.get("params"),
            cascade=r.get("cascade"),
            natural_label=r.get("natural_label"),
            verdict=verdict,
            unchanged=r.get("unchanged") if isinstance(r.get("unchanged"), dict) else None,
            race=r.get("race") if isinstance(r.get("race"), dict) else None,
            extra={k: v for k, v in r.items() if k not in known(cls)},
        )

    def to_json(self) -> dict[str, Any]:
        out = {
            "shape": self.shape,
            "dialect": self.dialect,
            "cardinality": self.cardinality,
            "access_path": self.access_path,
            "expect_rows": self.expect_rows,
            "params": self.params,
            "ok": self.ok,
            "cascade": self.cascade,
            "natural_label": self.natural_label,
            "verdict": None if self.verdict is None else self.verdict.to_json(),
            "remediated": self.remediated.to_json(),
        }
        for key in ("unchanged", "race"):  # absent for reads and in older files
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        if self.natural is not None:
            out["natural"] = self.natural.to_json()
        return out | self.extra

    def spellings(self) -> list[tuple[str, Spelling]]:
        """(name, measurement) of the spellings measured: remediated first."""
        out = [("remediated", self.remediated)]
        return out + ([("natural", self.natural)] if self.natural is not None else [])


@dataclass(frozen=True, kw_only=True)
class RemediationRow:
    """Natural vs remediated p50 of one shape and dialect."""

    dialect: str
    shape: str
    change: str
    before_p50_ms: float | None = None
    final_p50_ms: float | None = None
    natural_timeout: str | None = None
    speedup: float | None = None

    @classmethod
    def from_json(cls, obj: object, at: str) -> RemediationRow:
        item = as_object(obj, at)
        if item.get("dialect") not in DIALECTS:
            raise DocumentError(f"{at}.dialect", "must be postgresql or mysql")
        shape, change = text(item, "shape", at), text(item, "change", at)
        numbers(item, ("before_p50_ms", "final_p50_ms", "speedup"), at)
        return cls(
            dialect=item["dialect"],
            shape=shape,
            change=change,
            before_p50_ms=item.get("before_p50_ms"),
            final_p50_ms=item.get("final_p50_ms"),
            natural_timeout=item.get("natural_timeout"),
            speedup=item.get("speedup"),
        )

    @classmethod
    def of(cls, entries: list[ShapeResult]) -> list[RemediationRow]:
        """The rows of the entries that measured a natural spelling."""
        out = []
        for r in entries:
            if r.natural is None:
                continue
            before, after = r.natural.p50_ms, r.remediated.p50_ms
            # a time resolved while planning (or an executor time beside a statement time) is
            # no base for a speed-up: the row says so (RemediationRow.unlike)
            like = r.natural.time_kind == r.remediated.time_kind != RESOLVED
            out.append(
                cls(
                    dialect=r.dialect,
                    shape=r.shape,
                    change=r.natural_label or "natural to remediated",
                    before_p50_ms=before,
                    final_p50_ms=after,
                    natural_timeout=r.natural.timeout,
                    speedup=(before / after) if (before and after and like) else None,
                )
            )
        return out

    def to_json(self) -> dict[str, Any]:
        return asdict(self)  # every field, in order, all plain values


@dataclass(frozen=True, kw_only=True)
class Document:
    """A ``dbbench.explain/2`` document (or /1, read): a live run, a result file or a baseline."""

    schema: str = f"dbbench.explain/{SCHEMA_VERSION}"
    results: tuple[ShapeResult, ...] = ()
    generated_at: str | None = None
    tool: dict[str, Any] | None = None  # name, version
    host: dict[str, Any] | None = None  # machine, python
    servers: tuple[Server, ...] = ()
    config: RunConfig | None = None
    datasets: dict[str, DatasetInfo] | None = None  # by dialect
    remediation: tuple[RemediationRow, ...] | None = None
    failures: tuple[str, ...] | None = None
    baseline: dict[str, Any] | None = None  # saved_at, from (a baseline only)
    extra: dict[str, Any] = field(default_factory=dict)  # keys this dbbench does not know, kept

    @classmethod
    def from_json(cls, obj: object, source: object = "document", kind: str = "explain") -> Document:
        """Validate a decoded document, naming the first bad field: ``SOURCE: WHERE: WHAT``
        (:class:`ResultFileError`)."""
        try:
            return cls._from_json(obj, source, kind)
        except DocumentError as exc:
            raise ResultFileError(f"{source}: {exc}") from None

    @classmethod
    def _from_json(cls, doc: object, source: object, kind: str) -> Document:
        if not isinstance(doc, dict) or not isinstance(doc.get("schema"), str):
            raise ResultFileError(f'{source}: not a dbbench result (no "schema" field)')
        name, _, version = doc["schema"].partition("/")
        if name != f"dbbench.{kind}":
            raise ResultFileError(
                f"{source}: schema {doc['schema']!r} is not a dbbench.{kind} result "
                "(write one with `dbbench explain --output` or `dbbench baseline save`)"
            )
        if not version.isdigit() or int(version) > schema_version(kind):
            raise ResultFileError(
                f"{source}: schema version {version!r} is newer than this dbbench understands ({schema_version(kind)})"
            )
        entries = doc.get("results")
        if not isinstance(entries, list):
            raise DocumentError("results", "must be a list")
        for key in ("config", "datasets", "tool", "host", "baseline"):
            if doc.get(key) is not None:
                as_object(doc[key], key)
        datasets = doc.get("datasets")
        if datasets is not None:
            datasets = {
                d: DatasetInfo.from_json(as_object(meta, f"datasets.{d}"), f"datasets.{d}")
                for d, meta in datasets.items()
            }
        servers = doc.get("servers", [])
        if not isinstance(servers, list) or not all(
            isinstance(x, dict) and isinstance(x.get("dialect"), str) for x in servers
        ):
            raise DocumentError("servers", "must be a list of objects with a dialect")
        if not isinstance(doc.get("generated_at", ""), str):
            raise DocumentError("generated_at", "must be text")
        failures = doc.get("failures")
        if failures is not None and not isinstance(failures, list):
            raise DocumentError("failures", "must be a list")
        remediation = doc.get("remediation")
        if remediation is not None and not isinstance(remediation, list):
            raise DocumentError("remediation", "must be a list")
        rows = None  # checked before the results, as the fields are named in the file
        if remediation is not None:
            rows = tuple(RemediationRow.from_json(x, f"remediation[{k}]") for k, x in enumerate(remediation))
        return cls(
            schema=doc["schema"],
            results=tuple(ShapeResult.from_json(r, f"results[{i}]") for i, r in enumerate(entries)),
            generated_at=doc.get("generated_at"),
            tool=doc.get("tool"),
            host=doc.get("host"),
            servers=tuple(Server.from_json(x) for x in servers),
            config=None if doc.get("config") is None else RunConfig.from_json(doc["config"]),
            datasets=datasets,
            remediation=rows,
            failures=None if failures is None else tuple(failures),
            baseline=doc.get("baseline"),
            extra={k: v for k, v in doc.items() if k not in known(cls)},
        )

    def to_json(self) -> dict[str, Any]:
        """The document as dbbench writes it (the keys it does not hold are left out)."""
        out: dict[str, Any] = {"schema": self.schema}
        optional = {
            "generated_at": self.generated_at,
            "tool": self.tool,
            "host": self.host,
            "servers": [s.to_json() for s in self.servers],
            "config": None if self.config is None else self.config.to_json(),
            "datasets": None
            if self.datasets is None
            else {d: meta.to_json() for d, meta in self.datasets.items()},
            "results": [r.to_json() for r in self.results],
            "remediation": None if self.remediation is None else [x.to_json() for x in self.remediation],
            "failures": None if self.failures is None else list(self.failures),
            "baseline": self.baseline,
        }
        out |= {k: v for k, v in optional.items() if v is not None}
        return out | self.extra

    # -- reading ---------------------------------------------------------------------------
    def by_key(self) -> dict[tuple[str, str], ShapeResult]:
        """The results by (shape, dialect)."""
        return {r.key: r for r in self.results}

    @property
    def records_work(self) -> bool:
        """Whether the plans hold the work of every node (``dbbench.explain/2`` on): a /1
        document's PostgreSQL plans lack the rows their scans filtered away and the buffers."""
        version = self.schema.partition("/")[2]
        return version.isdigit() and int(version) >= WORK_SINCE

    def server_versions(self) -> dict[str, str | None]:
        return {s.dialect: s.version for s in self.servers}

    def remediation_rows(self) -> list[RemediationRow]:
        """The document's remediation rows, else those its results give."""
        return list(self.remediation or ()) or RemediationRow.of(list(self.results))

    def as_baseline(self, saved_at: str, source: str) -> Document:
        """This document as a baseline: raw plans dropped (the normalized ``plan`` trees stay)."""

        def drop(m: Spelling | None) -> Spelling | None:
            return None if m is None else replace(m, raw_plan=ABSENT)

        entries = tuple(
            replace(r, remediated=replace(r.remediated, raw_plan=ABSENT), natural=drop(r.natural))
            for r in self.results
        )
        return replace(self, results=entries, baseline={"saved_at": saved_at, "from": source})


def as_document(doc: Document | Mapping[str, Any], source: object = "document") -> Document:
    """``doc`` itself, or the dict (a live run's :func:`dbbench.document.build.explain_document`) as one
    (validated; a dict built in memory need not name its schema)."""
    if isinstance(doc, Document):
        return doc
    return Document.from_json({"schema": f"dbbench.explain/{SCHEMA_VERSION}"} | dict(doc), source)
