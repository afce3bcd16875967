"""The dataset's rows: a :class:`~dbbench.dataset.definition.Dataset` definition turned into tables.

Rows come from one ``random.Random(ds.seed)`` stream consumed in a fixed order (tables in load
order, each table's draws in a fixed order), plus SHA-256 of their own text, so the same
definition gives the same rows on every run, machine and Python version. This module holds the
model's shape (which rows are special and why). Its source is part of the prepared-file cache key (:mod:`dbbench.dataset.loadfiles`).
"""

from __future__ import annotations

import hashlib
import random
from datetime import timedelta
from typing import Any

from dbbench.dataset.definition import Dataset, Table, sha256, word_pool


def generate(ds: Dataset) -> list[Table]:
    """All rows of the dataset, in load order."""
    rng = random.Random(ds.seed)
    words = word_pool(ds)
    tables = [_repositories(ds)]
    packages = _packages(ds, rng, words)
    tables.append(packages)
    tables.append(_relations(ds, rng, words, packages))
    suites = _suites(ds, rng, words)
    snapshots = _snapshots(ds, rng, suites)
    tables += [suites, snapshots]
    tables += _groups(ds, rng)
    return tables


def _repositories(ds: Dataset) -> Table:
    rows = [(r["id"], r["name"], r["format"], r["type"], bool(r["online"])) for r in ds.raw["repositories"]]
    return Table("repository", ["id", "name", "format", "type", "online"], rows)


def _package_names(words: list[str]) -> list[str]:
    """Realistic Alpine-style names: plain words plus the usual sub-package affixes."""
    names = []
    for w in words:
        names += [w, f"{w}-dev", f"{w}-doc", f"py3-{w}", f"lib{w}", f"{w}-openrc"]
    return names


_PACKAGE_COLUMNS = [
    "id",
    "repository_id",
    "distribution_name",
    "component_name",
    "architecture",
    "package_name",
    "version",
    "asset_path",
    "path_sha256",
    "size_bytes",
    "created_at",
]


def _packages(ds: Dataset, rng: random.Random, words: list[str]) -> Table:
    spec = ds.section("packages")
    names = _package_names(words)
    coords = _package_namespaces(ds, spec, rng)
    rows = []
    seen_per_namespace: dict[tuple[int, str], int] = {}
    for pid, (repo, dist) in enumerate(coords, start=1):
        n = seen_per_namespace.get((repo, dist), 0)
        seen_per_namespace[(repo, dist)] = n + 1
        rows.append(_package_row(ds, spec, rng, pid, repo, dist, names[n % len(names)], n // len(names)))
    return Table("package", list(_PACKAGE_COLUMNS), rows)


def _package_namespaces(ds: Dataset, spec: dict[str, Any], rng: random.Random) -> list[tuple[int, str]]:
    """(repository, distribution) of every package, shuffled: the hot namespace's first, then
    decoys drawn among the other Alpine repositories and distributions."""
    decoy_repos = [
        r["id"] for r in ds.raw["repositories"] if r["format"] == "alpine" and r["type"] != "group"
    ]
    coords = []
    for i in range(spec["rows"]):
        if i < spec["hot_rows"]:
            repo, dist = spec["hot_repository"], spec["hot_distribution"]
        else:
            repo = decoy_repos[int(rng.random() * len(decoy_repos))]
            dist = spec["distributions"][int(rng.random() * len(spec["distributions"]))]
            if (repo, dist) == (spec["hot_repository"], spec["hot_distribution"]):
                dist = spec["distributions"][0]
        coords.append((repo, dist))
    rng.shuffle(coords)  # ids are not in name order, as in a real repository
    return coords


def _package_row(
    ds: Dataset,
    spec: dict[str, Any],
    rng: random.Random,
    pid: int,
    repo: int,
    dist: str,
    name: str,
    generation: int,
) -> tuple[Any, ...]:
    """One package row (:data:`_PACKAGE_COLUMNS`); ``generation``: how many times its name came
    round in its namespace before (it sets the version)."""
    version = f"{1 + generation // 40}.{generation % 40}.{int(rng.random() * 10)}-r{int(rng.random() * 5)}"
    component = spec["components"][int(rng.random() * len(spec["components"]))]
    arch = spec["architectures"][int(rng.random() * len(spec["architectures"]))]
    path = f"{spec['path_prefix']}/{dist}/{component}/{arch}/{name}-{version}.apk"
    created = ds.now - timedelta(seconds=int(rng.random() * 86400 * 365))
    size = 1024 + int(rng.random() * 8 * 2**20)
    return (pid, repo, dist, component, arch, name, version, path, sha256(path), size, created)


def _relations(ds: Dataset, rng: random.Random, words: list[str], packages: Table) -> Table:
    spec = ds.section("relations")
    hot = ds.section("packages")["hot_repository"]
    by_repo: dict[int, list[int]] = {}
    for row in packages.rows:
        by_repo.setdefault(row[1], []).append(row[0])
    match = spec["match_token"]
    other_repos = [r for r in by_repo if r != spec["match_repository"]]
    rows: list[tuple[Any, ...]] = []

    def add(repo: int, pkg: int, kind: str, token: str) -> None:
        rows.append((len(rows) + 1, repo, pkg, kind, token, sha256(token)))

    def pick(repo: int) -> int:
        ids = by_repo[repo]
        return ids[int(rng.random() * len(ids))]

    match_repo_ids = sorted(by_repo[spec["match_repository"]])
    for pkg in rng.sample(match_repo_ids, spec["match_rows"]):
        add(spec["match_repository"], pkg, spec["match_kind"], match)
    other_kinds = [k for k in spec["kinds"] if k != spec["match_kind"]]
    for j in range(spec["decoy_rows"]):
        if j % 2 and other_repos:  # right token and kind, wrong repository
            repo = other_repos[j % len(other_repos)]
            add(repo, pick(repo), spec["match_kind"], match)
        else:  # right repository and token, wrong kind
            add(
                spec["match_repository"],
                pick(spec["match_repository"]),
                other_kinds[j % len(other_kinds)],
                match,
            )
    repos = sorted(by_repo)
    while len(rows) < spec["rows"]:
        repo = hot if rng.random() < 0.9 else repos[int(rng.random() * len(repos))]
        w = words[int(rng.random() * len(words))]
        token = [f"so:lib{w}.so.{int(rng.random() * 4)}", f"cmd:{w}", f"pc:{w}", w][int(rng.random() * 4)]
        if token == match:
            continue
        add(repo, pick(repo), spec["kinds"][int(rng.random() * len(spec["kinds"]))], token)
    rng.shuffle(rows)
    rows = [(i, *r[1:]) for i, r in enumerate(rows, start=1)]
    return Table(
        "package_relation",
        ["id", "repository_id", "package_id", "relation_kind", "token", "token_sha256"],
        rows,
    )


def _suites(ds: Dataset, rng: random.Random, words: list[str]) -> Table:
    spec = ds.section("suites")
    repos = [r for r in ds.raw["repositories"] if r["format"] == "alpine"]
    eligible = {r["id"] for r in repos if r["online"]}
    dists = list(ds.section("packages")["distributions"])
    pairs: list[tuple[int, str]] = []
    k = 0
    while len(pairs) < spec["rows"]:
        if k >= len(dists):
            dists.append(f"v3.23-{words[k % len(words)]}-{k}")
        for r in repos:
            if len(pairs) < spec["rows"]:
                pairs.append((r["id"], dists[k]))
        k += 1
    eligible_idx = [i for i, (repo, _) in enumerate(pairs) if repo in eligible]
    pending = set(rng.sample(eligible_idx, spec["pending_rows"]))
    rows = []
    for i, (repo, dist) in enumerate(pairs):
        published = 10 + int(rng.random() * 1000)
        desired = published + 1 if i in pending else published
        desired_at = ds.now - timedelta(seconds=1 + int(rng.random() * 86400 * 30))
        next_attempt = desired_at if i in pending else ds.now + timedelta(days=1)
        rows.append([repo, dist, desired, published, desired_at, next_attempt, 0])
    return Table(
        "suite_state",
        [
            "repository_id",
            "distribution_name",
            "desired_revision",
            "published_revision",
            "desired_at",
            "next_attempt_at",
            "error_count",
        ],
        rows,
    )


def _snapshots(ds: Dataset, rng: random.Random, suites: Table) -> Table:
    """Cleanup suites carry old published history (exactly the candidates); the rest is recent."""
    spec = ds.section("snapshots")
    grp = ds.section("groups")
    per_cleanup = spec["candidates_per_suite"] + spec["retain"]
    owners = [
        row for row in suites.rows if not (row[0] == grp["repository"] and row[1] == grp["distribution"])
    ]
    group_suite = next(
        row for row in suites.rows if (row[0], row[1]) == (grp["repository"], grp["distribution"])
    )
    cleanup = owners[: spec["cleanup_suites"]]
    rest = owners[spec["cleanup_suites"] :]
    rows: list[tuple[Any, ...]] = []
    old = ds.cleanup_cutoff - timedelta(days=30)
    for suite in cleanup:
        for rev in range(1, per_cleanup + 1):
            at = old + timedelta(hours=rev)
            rows.append((suite[0], suite[1], rev, at, at + timedelta(minutes=5), None))
        _republish(suite, per_cleanup)
    # The group snapshot with its binding token: published, recent.
    token = hashlib.sha256(f"{ds.seed}:group-token:published".encode()).digest()
    at = ds.now - timedelta(hours=1)
    rows.append((grp["repository"], grp["distribution"], grp["snapshot_revision"], at, at, token))
    _republish(group_suite, grp["snapshot_revision"])
    remaining = spec["rows"] - len(rows)
    old_unpublished = spec["old_unpublished_rows"]
    per_suite, extra = divmod(remaining, len(rest))
    for n, suite in enumerate(rest):
        count = per_suite + (1 if n < extra else 0)
        newest = suite[3]
        for rev in range(newest - count + 1, newest + 1):
            if old_unpublished > 0 and rev == newest - count + 1 and count > 1:
                at = ds.cleanup_cutoff - timedelta(days=1 + int(rng.random() * 30))
                rows.append((suite[0], suite[1], rev, at, None, None))  # old draft, never published
                old_unpublished -= 1
                continue
            at = ds.cleanup_cutoff + timedelta(seconds=1 + int(rng.random() * 86400 * 13))
            published = at + timedelta(seconds=30) if rng.random() < 0.5 or rev == newest else None
            rows.append((suite[0], suite[1], rev, at, published, None))
    suites.rows[:] = [tuple(r) for r in suites.rows]
    return Table(
        "snapshot",
        [
            "repository_id",
            "distribution_name",
            "revision",
            "created_at",
            "published_at",
            "group_binding_token",
        ],
        rows,
    )


def _republish(suite: list, revision: int) -> None:
    """Make ``revision`` the suite's published one, keeping whether it is pending."""
    delta = suite[2] - suite[3]
    suite[3] = revision
    suite[2] = revision + delta


def _groups(ds: Dataset, rng: random.Random) -> list[Table]:
    grp = ds.section("groups")
    published_token = hashlib.sha256(f"{ds.seed}:group-token:published".encode()).digest()
    orphan_token = hashlib.sha256(f"{ds.seed}:group-token:orphan".encode()).digest()
    stage_key = (grp["repository"], grp["distribution"], grp["snapshot_revision"])
    orphan_key = (grp["repository"], grp["distribution"], grp["snapshot_revision"] + 1)
    stages = Table(
        "group_snapshot_stage",
        ["group_repository_id", "distribution_name", "snapshot_revision", "binding_token", "created_at"],
        [
            (*stage_key, published_token, ds.now - timedelta(hours=2)),
            (*orphan_key, orphan_token, ds.cleanup_cutoff - timedelta(days=2)),
        ],
    )
    members = [r["id"] for r in ds.raw["repositories"] if r["format"] == "alpine" and r["type"] != "group"]
    rows = []
    for i in range(grp["bindings"]):
        key, token = (
            (stage_key, published_token)
            if i < grp["published_stage_bindings"]
            else (orphan_key, orphan_token)
        )
        rows.append(
            (
                i + 1,
                *key,
                token,
                members[int(rng.random() * len(members))],
                1 + int(rng.random() * ds.section("packages")["rows"]),
            )
        )
    order = list(range(len(rows)))
    rng.shuffle(order)
    rows = [(n + 1, *rows[j][1:]) for n, j in enumerate(order)]
    return [
        stages,
        Table(
            "group_binding",
            [
                "id",
                "group_repository_id",
                "distribution_name",
                "snapshot_revision",
                "binding_token",
                "member_repository_id",
                "package_id",
            ],
            rows,
        ),
    ]
