"""The deterministic logical dataset: a definition under ``seeds/`` turned into rows.

The definition (TOML) holds the cardinalities, distributions, name pools and the seed value; this
module loads and validates it. :mod:`dbbench.dataset.generate` holds the model's shape (which rows are
special and why) and generates the rows (:func:`generate`): one ``random.Random(seed)`` stream
consumed in a fixed order, plus SHA-256 of their own text, so the same definition gives the same
rows on every run, machine and Python version; Faker only drew the word pool once, and that pool is
stored as data.
"""

from __future__ import annotations

import hashlib
import tomllib
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from dbbench.errors import DbbenchError
from verdict.files import excerpt, loads_toml, read_text_bounded

SEEDS_DIR = Path(__file__).resolve().parents[2] / "seeds"
DEFINITION_LIMIT = 1024 * 1024  # a dataset definition is a few KiB of TOML

# Load order: parents before children (the FKs are added after the load, but keep it natural).
TABLE_ORDER = [
    "repository",
    "package",
    "package_relation",
    "suite_state",
    "snapshot",
    "group_snapshot_stage",
    "group_binding",
]
PRIMARY_KEYS = {
    "repository": ["id"],
    "package": ["id"],
    "package_relation": ["id"],
    "suite_state": ["repository_id", "distribution_name"],
    "snapshot": ["repository_id", "distribution_name", "revision"],
    "group_snapshot_stage": [
        "group_repository_id",
        "distribution_name",
        "snapshot_revision",
        "binding_token",
    ],
    "group_binding": ["id"],
}


# The most rows dbbench generates for one table. Rows are generated in memory before they are
# encoded (1M rows in each table take about 1.4 GB and 15 s), so this bounds the memory and time a
# definition can ask for: twice what the largest size of `dbbench grow` needs (alpine-1m: 1,000,001
# snapshots).
MAX_TABLE_ROWS = 2_000_000
# The counts of a definition, (section, key), and the table each counts rows of.
ROW_COUNTS = {
    ("packages", "rows"): "package",
    ("packages", "hot_rows"): "package",
    ("relations", "rows"): "package_relation",
    ("relations", "match_rows"): "package_relation",
    ("relations", "decoy_rows"): "package_relation",
    ("suites", "rows"): "suite_state",
    ("suites", "pending_rows"): "suite_state",
    ("snapshots", "rows"): "snapshot",
    ("snapshots", "cleanup_suites"): "snapshot",
    ("snapshots", "candidates_per_suite"): "snapshot",
    ("snapshots", "retain"): "snapshot",
    ("snapshots", "old_unpublished_rows"): "snapshot",
    ("groups", "stages"): "group_snapshot_stage",
    ("groups", "bindings"): "group_binding",
    ("groups", "published_stage_bindings"): "group_binding",
}


@dataclass
class Table:
    name: str
    columns: list[str]
    rows: list[Any]  # tuples (suite_state's are lists until the snapshots republish them)


@dataclass
class Dataset:
    """A dataset definition (what the TOML says), plus where it came from."""

    name: str
    path: Path
    raw: dict[str, Any] = field(repr=False)
    seed: int = 0
    now: datetime = datetime(2026, 1, 1)
    cleanup_cutoff: datetime = datetime(2026, 1, 1)

    def section(self, key: str) -> dict[str, Any]:
        try:
            return self.raw[key]
        except KeyError:
            raise DbbenchError(f"{self.path}: missing section [{key}]") from None

    @property
    def expected_counts(self) -> dict[str, int]:
        return {
            "repository": len(self.raw["repositories"]),
            "package": self.section("packages")["rows"],
            "package_relation": self.section("relations")["rows"],
            "suite_state": self.section("suites")["rows"],
            "snapshot": self.section("snapshots")["rows"],
            "group_snapshot_stage": self.section("groups")["stages"],
            "group_binding": self.section("groups")["bindings"],
        }

    @property
    def verify(self) -> list[dict[str, Any]]:
        return self.raw.get("verify", [])

    def params(self) -> dict[str, Any]:
        """Named values queries may use (``:now``, ``:cleanup_cutoff``, ``:match_token``…)."""
        rel = self.section("relations")
        grp = self.section("groups")
        pkg = self.section("packages")
        return {
            **self.raw.get("catalog", {}),
            "hot_repository": pkg["hot_repository"],
            "hot_distribution": pkg["hot_distribution"],
            "now": self.now,
            "cleanup_cutoff": self.cleanup_cutoff,
            "retain": self.section("snapshots")["retain"],
            "match_repository": rel["match_repository"],
            "match_kind": rel["match_kind"],
            "match_token": rel["match_token"],
            "match_token_sha256": sha256(rel["match_token"]),
            "group_repository": grp["repository"],
            "group_distribution": grp["distribution"],
            "group_snapshot_revision": grp["snapshot_revision"],
        }


def resolve(name_or_path: str) -> Path:
    """A dataset by name (``alpine-100k`` → ``seeds/alpine-100k.toml``) or by path."""
    path = Path(name_or_path)
    if path.suffix != ".toml":
        path = SEEDS_DIR / f"{name_or_path}.toml"
    if not path.exists():
        known = ", ".join(sorted(p.stem for p in SEEDS_DIR.glob("*.toml")))
        raise DbbenchError(f"no dataset {name_or_path!r} (known: {known}; or give a .toml path)")
    return path


def _read(path: Path, depth: int = 0) -> dict[str, Any]:
    """The TOML at ``path``; ``extends = "other"`` merges it over another definition."""
    try:
        raw = loads_toml(read_text_bounded(path, limit=DEFINITION_LIMIT, what="dataset definition"))
    except tomllib.TOMLDecodeError as exc:
        raise DbbenchError(f"{path}: not valid TOML: {excerpt(str(exc), 200)}") from None
    except OSError as exc:
        raise DbbenchError(f"{path}: {exc.strerror or exc}") from None
    parent = raw.pop("extends", None)
    if parent is None:
        return raw
    if depth > 5:
        raise DbbenchError(f"{path}: 'extends' nests too deep")
    base = _read(resolve(parent), depth + 1)
    for key, value in raw.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            base[key] = {**base[key], **value}
        else:
            base[key] = value
    return base


def expected_value(ds: Dataset, expect: Any) -> int:
    """A verify entry's ``expect``: a number, or a dotted reference such as ``"packages.hot_rows"``."""
    if isinstance(expect, int):
        return expect
    section, _, key = str(expect).partition(".")
    try:
        return int(ds.raw[section][key])
    except (KeyError, TypeError, ValueError):
        raise DbbenchError(f"{ds.path}: verify expect {expect!r} names no dataset value") from None


def load(name_or_path: str) -> Dataset:
    path = resolve(name_or_path)
    raw = _read(path)
    try:
        ds = Dataset(
            name=raw["name"],
            path=path,
            raw=raw,
            seed=int(raw["seed"]),
            now=datetime.fromisoformat(raw["now"]),
            cleanup_cutoff=datetime.fromisoformat(raw["cleanup_cutoff"]),
        )
    except (KeyError, ValueError) as exc:
        raise DbbenchError(f"{path}: bad or missing field {exc}") from None
    _validate(ds)
    return ds


def _check_counts(ds: Dataset) -> None:
    """Every row count a whole number from 0 to :data:`MAX_TABLE_ROWS`, before any row is made."""
    for (section, key), table in ROW_COUNTS.items():
        spec = ds.section(section)
        if not isinstance(spec, dict):
            raise DbbenchError(f"{ds.path}: {section} must be a section ([{section}])")
        value = spec.get(key)
        if value is None:
            raise DbbenchError(f"{ds.path}: [{section}] {key} is missing")
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise DbbenchError(f"{ds.path}: [{section}] {key} = {value!r}: must be a whole number of rows")
        if value > MAX_TABLE_ROWS:
            raise DbbenchError(
                f"{ds.path}: [{section}] {key} = {value:,}: too many rows for table {table} "
                f"(dbbench generates at most {MAX_TABLE_ROWS:,} rows per table)"
            )


def _validate(ds: Dataset) -> None:
    _check_counts(ds)
    pk, rel, su, sn, gr = (ds.section(k) for k in ("packages", "relations", "suites", "snapshots", "groups"))
    checks = [
        (pk["hot_rows"] <= pk["rows"], "packages.hot_rows exceeds packages.rows"),
        (
            rel["match_rows"] + rel["decoy_rows"] <= rel["rows"],
            "relations: match_rows + decoy_rows exceed rows",
        ),
        (rel["match_rows"] <= pk["hot_rows"], "relations.match_rows exceeds packages.hot_rows"),
        (su["pending_rows"] <= su["rows"], "suites.pending_rows exceeds suites.rows"),
        (
            sn["cleanup_suites"] * (sn["candidates_per_suite"] + sn["retain"])
            + sn["old_unpublished_rows"]
            + 1
            <= sn["rows"],
            "snapshots.rows too small for the cleanup and group snapshots",
        ),
        (sn["cleanup_suites"] + 1 < su["rows"], "suites.rows too small for the cleanup suites"),
        (gr["stages"] == 2, "groups.stages must be 2 (one published, one orphan)"),
        (
            gr["published_stage_bindings"] < gr["bindings"],
            "groups.published_stage_bindings must leave bindings for the orphan stage",
        ),
    ]
    for ok, message in checks:
        if not ok:
            raise DbbenchError(f"{ds.path}: {message}")


def sha256(text: str) -> bytes:
    return hashlib.sha256(text.encode()).digest()


def word_pool(ds: Dataset) -> list[str]:
    path = ds.path.parent / ds.raw["word_pool"]
    if not path.exists():  # a user definition extending one of ours shares our pool
        path = SEEDS_DIR / ds.raw["word_pool"]
    words = [w.strip() for w in path.read_text().splitlines() if w.strip() and not w.startswith("#")]
    if len(words) < 50:
        raise DbbenchError(f"{path}: the word pool needs at least 50 words")
    return words
