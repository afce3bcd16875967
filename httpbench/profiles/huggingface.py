"""``--profile huggingface``: a Hugging Face model proxy against a baseline (the Models protocol).

Warm scenarios (timed by the generic engine): ``model info GET`` and ``model info 304``
(``/api/models/{repo}/revision/{rev}``), ``model file HEAD``, ``model file GET`` and
``model file Range 64 KiB`` (``/{repo}/resolve/{rev}/{file}``).

Preflight, on every target before any timing:

* model info: ``sha`` is the pinned revision, ``id`` the repository, the file list is the expected
  one (``--expect-file``, else the baseline's) and holds ``--file``; the ETag it sends answers 304 to If-None-Match;
* file HEAD and GET: ``X-Repo-Commit`` = commit, ``X-Linked-Etag`` = the SHA-256, ``X-Linked-Size``
  and ``Content-Length`` = the size, the same ETag on HEAD and GET; the body's SHA-256 and size;
* Range ``bytes=0-65535``: 206, ``Content-Range: bytes 0-65535/<size>``, the exact slice (its digest
  then checks every timed Range answer; timed GET answers are checked by length, and by SHA-256 on
  the engine's sample of large bodies);
* leak checks on every answer: a ``Location`` to another host, any ``X-Xet-*`` header, a ``Link``
  with a Xet relation, or an ``--upstream-host`` value in any header or JSON body is an error.

After the warm rounds:

* **cold fill** (``--cold-samples``): each sample fetches the model file from a repository the
  target has never seen (``--cold-repo``, ``--cold-target``), targets alternating; total time, TTFB,
  MiB/s, status and SHA-256 per sample. One more sample sends ``--cold-concurrency`` simultaneous
  requests for one fresh repository. When the upstream fixture's ``/__stats`` is reachable
  (``--stats-url``, or ``/__stats`` at the target's origin) the upstream resolve and body fetches per
  fresh repository are recorded; a candidate with more than one body fetch per repository fails
  (no singleflight). Gate: candidate/baseline median MiB/s >= the ``cold`` gate (0.90x).
* **real clients** (``--hf-client``): ``hf_hub_download``, ``snapshot_download`` and ``hf download``,
  each sample a subprocess with ``HF_ENDPOINT`` = the target, a fresh ``HF_HOME``, telemetry and Xet
  off; the downloaded file's SHA-256 is verified. The API samples time the call itself (import
  excluded), the CLI sample the whole process. Gate: p95 ratio <= the ``client`` gate (1.25x).
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import urlsplit

import httpx

from httpbench import clients, engine
from httpbench.errors import HttpbenchError
from httpbench.fixtures import huggingface as fixture
from httpbench.gates import PAIRED_MIN_SAMPLES, add_failures, decision_message, paired_samples
from httpbench.model import Expectation, Gate, RoundResult, Scenario, Target
from httpbench.preflight import request_within, send
from httpbench.profiles import Context, Defaults, Option, Profile, Section
from httpbench.schedule import round_order
from httpbench.stats import median_or_none, percentiles, ratio

RANGE_BYTES = 65536
STATS_MAX_BYTES = 16 << 20          # an upstream /__stats document larger than this is not read
INFO_GET, INFO_304 = "model info GET", "model info 304"
FILE_HEAD, FILE_GET, FILE_RANGE = "model file HEAD", "model file GET", "model file Range 64 KiB"
DEFAULT_COLD_REPO = "{org}/cold-{run}-{target}-{i}"
_HEX40 = re.compile(r"^[0-9a-f]{40}$")
_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_PLACEHOLDERS = ("{i}", "{run}", "{repo}", "{target}", "{org}", "{name}")
_CLIENT_ENV = {"HF_HUB_DISABLE_TELEMETRY": "1", "HF_HUB_DISABLE_XET": "1",
               "HF_HUB_DISABLE_UPDATE_CHECK": "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1",
               "HF_HUB_DISABLE_IMPLICIT_TOKEN": "1", "DO_NOT_TRACK": "1"}


@lru_cache(maxsize=1)
def _fixture_defaults() -> tuple[str, int, str]:
    """SHA-256 and size of the default fixture's model file, and the digest of its first 64 KiB."""
    data = fixture.model_bytes()
    return hashlib.sha256(data).hexdigest(), len(data), hashlib.sha256(data[:RANGE_BYTES]).hexdigest()


def _unquote_etag(value: str | None) -> str | None:
    return None if value is None else value.strip().removeprefix("W/").strip('"')


# -- leak checks ------------------------------------------------------------------------------------

def leak(target: Target, request: str, resp: httpx.Response, upstream_hosts: tuple[str, ...]) -> str | None:
    """The first client-visible leak in one answer, as a one-line reason; None when clean."""
    where = f"target {target.name!r} {request}"
    location = resp.headers.get("location")
    if location:
        parts = urlsplit(location)
        try:
            port = parts.port or (443 if parts.scheme == "https" else 80)
        except ValueError:
            return f"{where}: Location header is not a valid URL ({location[:120]})"
        if parts.netloc and ((parts.hostname or "").lower(), port) != (target.host.lower(), target.port):
            return f"{where}: Location header points to another host ({parts.netloc})"
    for name, value in resp.headers.items():
        if name.lower().startswith("x-xet-"):
            return f"{where}: leaked header {_title(name)} (Xet storage must not be visible to clients)"
        if name.lower() == "link" and re.search(r"rel\s*=\s*\"?[^\";,]*xet", value, re.IGNORECASE):
            return f"{where}: leaked header Link with a Xet relation ({value[:120]})"
        for host in upstream_hosts:
            if host.lower() in value.lower():
                return f"{where}: header {_title(name)} names upstream host {host!r}"
    if upstream_hosts and "json" in resp.headers.get("content-type", "") and resp.content:
        text = resp.content.decode("utf-8", "replace").lower()
        for host in upstream_hosts:
            if host.lower() in text:
                return f"{where}: JSON body names upstream host {host!r}"
    return None


def _title(name: str) -> str:
    return "-".join(p.capitalize() for p in name.split("-"))


# -- options ----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ColdPlan:
    """Per target: the base URL of each cold sample (index 1..n) and the stats URL, if any."""

    urls: dict[str, list[str]]
    stats: dict[str, str | None]
    repos: dict[str, list[str]]


def _fill(template: str, **values: str) -> str:
    for key, value in values.items():
        template = template.replace("{" + key + "}", value)
    return template


class HuggingFaceProfile(Profile):
    name = "huggingface"
    description = ("Hugging Face model proxy: model info GET/304, model file HEAD/GET/Range with commit, "
                   "linked ETag/size, SHA-256 and leak checks; cold fill with upstream fetch counts; "
                   "optional real huggingface_hub client rounds")
    defaults = Defaults(warmups=64, requests=500, concurrency=16, rounds=5)
    paired_defaults: ClassVar[dict[str, int]] = {"cold_samples": PAIRED_MIN_SAMPLES, "hf_client_rounds": PAIRED_MIN_SAMPLES}
    options = (
        Option("--repo", "Model repository id ORG/NAME.", default=fixture.DEFAULT_REPO, metavar="ORG/NAME"),
        Option("--revision", "Pinned revision: the commit every target must report (a branch name is "
               "resolved on the baseline).", default=fixture.COMMIT, metavar="REV"),
        Option("--file", "Model file in the repository.", default=fixture.MODEL_FILE, metavar="PATH"),
        Option("--file-sha256", "SHA-256 of the model file (default: the fixture's).", metavar="HEX"),
        Option("--file-size", "Size of the model file in bytes (default: the fixture's).", kind="int",
               metavar="BYTES"),
        Option("--expect-file", "A file the model info must list; repeat for the exact list "
               "(default: the baseline's list).", multiple=True, metavar="PATH"),
        Option("--upstream-host", "A host name (or host:port) that must never appear in headers or "
               "JSON; repeat.", multiple=True, metavar="HOST"),
        Option("--cold-target", "Cold-fill base URL per sample for target NAME: a template with {i} "
               "(sample), {run}, {repo}, {target}, or a comma list of URLs. Default: the target's URL.",
               multiple=True, metavar="NAME=TEMPLATE"),
        Option("--cold-repo", "Repository id per cold sample (template with {org}, {name}, {repo}, "
               "{run}, {target}, {i}).", default=DEFAULT_COLD_REPO, metavar="TEMPLATE"),
        Option("--cold-samples", "Cold-fill samples per target (0: no cold fill).", kind="int", default=5,
               metavar="N"),
        Option("--cold-concurrency", "Simultaneous requests in the concurrent-miss sample (0: none).",
               kind="int", default=4, metavar="N"),
        Option("--stats-url", "The upstream fixture's /__stats as seen for target NAME (NAME=URL), or one "
               "URL for all targets. Default: /__stats at the target's origin, when it answers.",
               multiple=True, metavar="[NAME=]URL"),
        Option("--hf-client", "Time the real huggingface_hub client (hf_hub_download, "
               "snapshot_download, hf download) against every target.", kind="bool", default=False),
        Option("--hf-client-rounds", "Rounds of real-client samples (alternating order).", kind="int",
               default=3, metavar="N"),
    )

    def __init__(self, **options: Any):
        full = {o.dest: (tuple(o.default or ()) if o.multiple else o.default) for o in self.options}
        full.update({k: v for k, v in options.items() if v is not None})
        super().__init__(**full)
        v = self.values
        self.repo: str = v["repo"].strip("/")
        if not re.fullmatch(r"[\w.-]+/[\w.-]+", self.repo):
            raise HttpbenchError(f"--repo must be ORG/NAME, not {self.repo!r}")
        self.revision: str = v["revision"]
        self.file: str = v["file"].lstrip("/")
        default_sha, default_size, default_slice = _fixture_defaults()
        given_sha = (v["file_sha256"] or "").lower() or None
        if given_sha is not None and not _HEX64.match(given_sha):
            raise HttpbenchError("--file-sha256 must be 64 hex digits")
        self.sha256: str = given_sha or default_sha
        fixture_file = self.sha256 == default_sha
        self.size: int | None = v["file_size"] if v["file_size"] is not None else (
            default_size if fixture_file else None)
        if self.size is not None and self.size <= 0:
            raise HttpbenchError("--file-size must be positive")
        # the exact slice digest is known up front for the fixture's content; otherwise preflight
        # derives it from the verified body (compare refreshes the scenarios after the preflight)
        self.range_sha256: str | None = default_slice if fixture_file else None
        for opt, low in (("cold_samples", 0), ("cold_concurrency", 0), ("hf_client_rounds", 1)):
            if v[opt] < low:
                raise HttpbenchError(f"--{opt.replace('_', '-')} must be >= {low}")
        self.commit: str | None = self.revision if _HEX40.match(self.revision) else None
        self.run_token = os.urandom(4).hex()

    # -- scenarios --------------------------------------------------------------------------------
    @property
    def info_path(self) -> str:
        return f"/api/models/{self.repo}/revision/{self.revision}"

    def file_path(self, repo: str | None = None) -> str:
        return f"/{repo or self.repo}/resolve/{self.revision}/{self.file}"

    def range_header(self) -> str:
        return f"bytes=0-{RANGE_BYTES - 1}"

    def scenarios(self) -> list[Scenario]:
        slice_len = None if self.size is None else min(RANGE_BYTES, self.size)
        return [
            # model info is compared by content in the preflight (commit, id, file list): two
            # endpoints need not serialize it alike (a cached copy has other download counts)
            Scenario(INFO_GET, self.info_path, same_body=False),
            Scenario(INFO_304, self.info_path, conditional=True, same_body=False),
            Scenario(FILE_HEAD, self.file_path(), "HEAD"),
            # the engine checks the SHA-256 of sampled large bodies (first per connection, then
            # every 8th; --digest-every 1 for all): hashing every 4 MiB answer would make the
            # client the bottleneck
            Scenario(FILE_GET, self.file_path(), klass="payload", length=self.size, sha256=self.sha256),
            Scenario(FILE_RANGE, self.file_path(), headers=(("Range", self.range_header()),),
                     klass="payload", length=slice_len, sha256=self.range_sha256),
        ]

    def options_json(self) -> dict[str, Any]:
        """The options as recorded in the result: URLs without any ``user:password@``."""
        from httpbench.clients import redact

        out = super().options_json()
        for key in ("cold_target", "stats_url"):
            out[key] = [redact(v) for v in out[key]]
        return out

    # -- preflight --------------------------------------------------------------------------------
    def preflight(self, ctx: Context) -> Section:
        if self.values["hf_client"] and importlib.util.find_spec("huggingface_hub") is None:
            raise HttpbenchError("--hf-client needs huggingface_hub in this Python "
                                 "(pip install 'huggingface_hub>=0.34')")
        if self.values["cold_samples"]:
            self._cold_plan(ctx.targets)          # option errors surface before any timing
        section = Section()
        expected_files: list[str] | None = sorted(self.values["expect_file"]) or None
        per: dict[str, Any] = {}
        for target in ctx.targets:
            info = self._check_info(ctx, target, expected_files)
            if expected_files is None:
                expected_files = info["files"]
            per[target.name] = {"info": info, "file": self._check_file(ctx, target, info["sha"])}
            if self.commit is None:
                self.commit = info["sha"]          # a branch: every target must resolve it alike
        section.records = {"targets": per,
                           "expected": {"repo": self.repo, "revision": self.revision, "commit": self.commit,
                                        "file": self.file, "sha256": self.sha256, "size": self.size,
                                        "range_sha256": self.range_sha256, "files": expected_files,
                                        "upstream_hosts": list(self.values["upstream_host"])}}
        ctx.progress(f"huggingface preflight passed on {len(ctx.targets)} targets "
                     f"(commit {self.commit}, {self.file} {self.size} bytes)")
        return section

    def _fetch(self, ctx: Context, target: Target, method: str, path: str,
               headers: dict[str, str] | None = None, expected_length: int | None = None) -> httpx.Response:
        """``expected_length``: the body a correct answer has (reading stops a margin past it; else
        at the preflight's default bound)."""
        resp = (ctx.fetch(target, path, method, headers) if expected_length is None
                else send(ctx.client, target, method, path, headers or {}, expected_length=expected_length))
        sent = ", ".join(f"{k}: {v}" for k, v in (headers or {}).items())
        label = f"{method} {path}" + (f" ({sent})" if sent else "")
        problem = leak(target, label, resp, tuple(self.values["upstream_host"]))
        if problem:
            raise HttpbenchError(f"preflight: {problem}")
        return resp

    def _fail(self, target: Target, request: str, message: str) -> HttpbenchError:
        return HttpbenchError(f"preflight: target {target.name!r} {request}: {message}")

    def _check_info(self, ctx: Context, target: Target, expected: list[str] | None) -> dict[str, Any]:
        req = f"GET {self.info_path}"
        resp = self._fetch(ctx, target, "GET", self.info_path)
        if resp.status_code != 200:
            raise self._fail(target, req, f"returned {resp.status_code}, expected 200")
        try:
            doc = resp.json()
        except ValueError:
            raise self._fail(target, req, "model info is not JSON") from None
        if not isinstance(doc, dict):
            raise self._fail(target, req, "model info is not a JSON object")
        sha = doc.get("sha")
        want = self.commit
        if not isinstance(sha, str) or not _HEX40.match(sha):
            raise self._fail(target, req, f"model info has no commit sha (got {sha!r})")
        if want is not None and sha != want:
            raise self._fail(target, req, f"model info sha {sha} is not the expected commit {want} "
                                          f"(--revision {self.revision})")
        if doc.get("id") not in (None, self.repo):
            raise self._fail(target, req, f"model info id {doc.get('id')!r} is not {self.repo!r}")
        siblings = doc.get("siblings")
        if not isinstance(siblings, list):
            raise self._fail(target, req, "model info has no siblings list")
        files = sorted(str(s["rfilename"]) for s in siblings if isinstance(s, dict) and s.get("rfilename"))
        if self.file not in files:
            raise self._fail(target, req, f"model info does not list {self.file}")
        if expected is not None and files != expected:
            missing, extra = sorted(set(expected) - set(files)), sorted(set(files) - set(expected))
            raise self._fail(target, req, f"file list differs from the expected one (missing {missing}, "
                                          f"extra {extra})")
        etag = resp.headers.get("etag")
        if not etag:
            raise self._fail(target, req, "model info has no ETag (the 304 scenario needs one)")
        cond = self._fetch(ctx, target, "GET", self.info_path, {"If-None-Match": etag})
        if cond.status_code != 304 or cond.content:
            raise self._fail(target, f"GET {self.info_path} (If-None-Match)",
                             f"returned {cond.status_code} with {len(cond.content)} body bytes, expected 304 "
                             "with an empty body")
        return {"sha": sha, "files": files, "etag": etag, "bytes": len(resp.content)}

    def _check_file(self, ctx: Context, target: Target, commit: str) -> dict[str, Any]:
        path = self.file_path()
        head = self._fetch(ctx, target, "HEAD", path)
        head_facts = self._check_file_headers(target, f"HEAD {path}", head, commit, None)
        get = self._fetch(ctx, target, "GET", path, expected_length=self.size)   # --file-size, when known
        facts = self._check_file_headers(target, f"GET {path}", get, commit, len(get.content))
        if facts["etag"] != head_facts["etag"]:
            raise self._fail(target, f"GET {path}", f"ETag {facts['etag']} differs from the HEAD answer's "
                                                    f"{head_facts['etag']}")
        body = get.content
        digest = hashlib.sha256(body).hexdigest()
        if digest != self.sha256:
            raise self._fail(target, f"GET {path}", f"body SHA-256 {digest} is not the expected "
                                                    f"{self.sha256} (--file-sha256)")
        if self.size is None:
            self.size = len(body)
        elif len(body) != self.size:
            raise self._fail(target, f"GET {path}", f"body is {len(body)} bytes, expected {self.size}")
        facts["range"] = self._check_range(ctx, target, path, body)
        facts.update(sha256=digest, size=len(body))
        return facts

    def _check_file_headers(self, target: Target, req: str, resp: httpx.Response, commit: str,
                            body_len: int | None) -> dict[str, Any]:
        if resp.status_code != 200:
            hint = " (a redirect: the proxy must serve the bytes)" if "location" in resp.headers else ""
            raise self._fail(target, req, f"returned {resp.status_code}, expected 200{hint}")
        h = resp.headers
        if h.get("x-repo-commit") != commit:
            raise self._fail(target, req, f"X-Repo-Commit {h.get('x-repo-commit')!r} is not the commit "
                                          f"{commit}")
        linked = _unquote_etag(h.get("x-linked-etag"))
        if linked != self.sha256:
            raise self._fail(target, req, f"X-Linked-Etag {h.get('x-linked-etag')!r} is not the file's "
                                          f"SHA-256 {self.sha256}")
        etag = h.get("etag")
        if not etag:
            raise self._fail(target, req, "no ETag")
        sizes = {"X-Linked-Size": h.get("x-linked-size"), "Content-Length": h.get("content-length")}
        for name, value in sizes.items():
            if value is None and name == "X-Linked-Size":
                raise self._fail(target, req, "no X-Linked-Size")
            if value is not None and self.size is not None and value != str(self.size):
                raise self._fail(target, req, f"{name} {value} is not the file size {self.size}")
        if body_len is not None and h.get("content-length") not in (None, str(body_len)):
            raise self._fail(target, req, f"Content-Length {h.get('content-length')} but {body_len} "
                                          "body bytes")
        return {"etag": etag, "linked_etag": h.get("x-linked-etag"), "linked_size": h.get("x-linked-size"),
                "content_length": h.get("content-length"), "commit": h.get("x-repo-commit"),
                "etag_is_linked": _unquote_etag(etag) == linked}

    def _check_range(self, ctx: Context, target: Target, path: str, body: bytes) -> dict[str, Any]:
        rng = self.range_header()
        req = f"GET {path} (Range: {rng})"
        resp = self._fetch(ctx, target, "GET", path, {"Range": rng})
        last = min(RANGE_BYTES, len(body)) - 1
        want_cr = f"bytes 0-{last}/{len(body)}"
        if resp.status_code != 206:
            raise self._fail(target, req, f"returned {resp.status_code}, expected 206")
        if resp.headers.get("content-range") != want_cr:
            raise self._fail(target, req, f"Content-Range {resp.headers.get('content-range')!r}, expected "
                                          f"{want_cr!r}")
        digest = hashlib.sha256(resp.content).hexdigest()
        want = hashlib.sha256(body[:last + 1]).hexdigest()
        if digest != want:
            raise self._fail(target, req, f"the {len(resp.content)} bytes are not bytes 0-{last} of the file "
                                          "(wrong offset or corrupt slice)")
        if self.range_sha256 is None:
            self.range_sha256 = want             # from the verified body: exact for every timed answer
        elif want != self.range_sha256:
            raise self._fail(target, req, "the slice digest differs from the expected content's")
        return {"content_range": want_cr, "sha256": digest, "bytes": len(resp.content)}

    # -- after the warm rounds --------------------------------------------------------------------
    def after_rounds(self, ctx: Context) -> Section:
        section = Section()
        gates = ctx.gates
        if self.values["cold_samples"]:
            gate = gates.get("cold", Gate(0.90, float("inf")))
            cold = ColdFill(self, ctx, self._cold_plan(ctx.targets), gate)
            section.records["cold_fill"] = cold.run(section)
        if self.values["hf_client"]:
            clients = ClientRounds(self, ctx, gates.get("client", Gate(0.0, 1.25)))
            section.records["clients"] = clients.run(section)
        return section

    def _cold_plan(self, targets: list[Target]) -> ColdPlan:
        names = [t.name for t in targets]
        n = self.values["cold_samples"] + (1 if self.values["cold_concurrency"] else 0)
        org, name = self.repo.split("/")
        templates = {}
        for text in self.values["cold_target"]:
            key, sep, template = text.partition("=")
            if not sep or key.strip() not in names or not template.strip():
                raise HttpbenchError(f"--cold-target expects NAME=TEMPLATE with NAME one of "
                                     f"{', '.join(names)}")
            if key.strip() in templates:
                raise HttpbenchError(f"--cold-target: target {key.strip()!r} is given twice")
            templates[key.strip()] = template.strip()
        urls: dict[str, list[str]] = {}
        repos: dict[str, list[str]] = {}
        for target in targets:
            fill = lambda tpl, i, target=target: _fill(tpl, i=str(i), run=self.run_token, target=target.name,
                                        org=org, name=name, repo=self.repo)
            repos[target.name] = [fill(self.values["cold_repo"], i) for i in range(1, n + 1)]
            for repo in repos[target.name]:
                if not re.fullmatch(r"[\w.-]+/[\w.-]+", repo):
                    raise HttpbenchError(f"--cold-repo gives {repo!r}, not a repository id ORG/NAME")
            template = templates.get(target.name, target.url)
            if "," in template:
                items = [u.strip() for u in template.split(",") if u.strip()]
                if len(items) < n:
                    raise HttpbenchError(f"--cold-target {target.name}: {len(items)} URLs for {n} "
                                         "cold samples")
                urls[target.name] = items[:n]
            else:
                urls[target.name] = [_fill(template, i=str(i), run=self.run_token, target=target.name,
                                           repo=repos[target.name][i - 1]) for i in range(1, n + 1)]
            for url in urls[target.name]:
                try:
                    Target.parse(target.name, url)       # a bad URL fails now, not mid-run
                except HttpbenchError as exc:
                    raise HttpbenchError(f"--cold-target {target.name}: "
                                         f"{str(exc).removeprefix(f'target {target.name!r}: ')}") from None
            pairs = list(zip(urls[target.name], repos[target.name]))
            if len(set(pairs)) < len(pairs):
                raise HttpbenchError(f"cold fill for {target.name}: samples repeat the same URL and "
                                     "repository, so only the first would be cold (use {i} in --cold-repo "
                                     "or --cold-target)")
        return ColdPlan(urls, self._stats_urls(targets), repos)

    def _stats_urls(self, targets: list[Target]) -> dict[str, str | None]:
        names = [t.name for t in targets]
        out: dict[str, str | None] = {t.name: None for t in targets}
        shared = None
        for text in self.values["stats_url"]:
            key, sep, url = text.partition("=")
            if sep and key.strip() in names:
                out[key.strip()] = url.strip()
            elif "://" in text:
                shared = text.strip()
            else:
                raise HttpbenchError(f"--stats-url expects NAME=URL (NAME one of {', '.join(names)}) "
                                     "or a URL")
        for target in targets:
            if out[target.name] is None:
                out[target.name] = shared or f"{target.scheme}://{target.host_header}/__stats"
        return out


# -- cold fill --------------------------------------------------------------------------------------

class ColdFill:
    """Fresh-repository samples per target (alternating), plus one concurrent-miss sample."""

    def __init__(self, profile: HuggingFaceProfile, ctx: Context, plan: ColdPlan, gate: Gate):
        self.p = profile
        self.ctx = ctx
        self.plan = plan
        self.gate = gate
        self.timeout = max(ctx.timeout, 30.0)
        self.stats_ok: dict[str, bool] = {}

    def run(self, section: Section) -> dict[str, Any]:
        targets = {t.name: t for t in self.ctx.targets}
        names = list(targets)
        samples: dict[str, list[dict[str, Any]]] = {n: [] for n in names}
        concurrent: dict[str, dict[str, Any]] = {}
        n = self.p.values["cold_samples"]
        with asyncio.Runner(loop_factory=engine.new_event_loop) as runner:
            for i in range(1, n + 1):
                for pos, name in enumerate(round_order(names, 0, i - 1), 1):
                    samples[name].append(self._sample(runner, targets[name], i, pos, 1))
            k = self.p.values["cold_concurrency"]
            if k:
                for pos, name in enumerate(round_order(names, 1, n), 1):
                    concurrent[name] = self._sample(runner, targets[name], n + 1, pos, k)
        summary = {name: self._summarize(samples[name], concurrent.get(name)) for name in names}
        record = {"samples_per_target": n, "concurrency": self.p.values["cold_concurrency"],
                  "run": self.p.run_token, "gate": self.gate.to_json(), "samples": samples,
                  "concurrent": concurrent, "summary": summary,
                  "comparisons": self._compare(names, summary, section, samples)}
        self._singleflight(names, samples, concurrent, section)
        return record

    def _sample(self, runner: asyncio.Runner, main: Target, i: int, pos: int, k: int) -> dict[str, Any]:
        url = self.plan.urls[main.name][i - 1]
        repo = self.plan.repos[main.name][i - 1]
        target, userinfo = Target.parse(main.name, url)
        if userinfo:
            target = target.with_credentials(userinfo)
        elif (target.scheme, target.host, target.port) == (main.scheme, main.host, main.port):
            target = replace(target, auth_header=main.auth_header)   # same server: its credentials
        # another server gets no credentials unless its URL carries them: never leak them elsewhere
        path = self.p.file_path(repo)
        scenario = Scenario("cold fill", path, klass="payload", length=self.p.size, sha256=self.p.sha256)
        spec = engine.RoundSpec(target, scenario, Expectation(200, self.p.size, self.p.sha256), 0, k, k,
                                self.timeout, keep_samples=True, verify_digest=True)
        before = self._stats(main.name)
        result: RoundResult = runner.run(engine.run_round(spec, i, pos, [main.name]))
        after = self._stats(main.name)
        upstream = _delta(before, after, repo, self.p.file)
        out = {"sample": i, "position": pos, "url": target.url, "repo": repo, "requests": k,
               "ok": result.ok, "failure_kinds": result.failure_kinds,
               "total_ms": result.max_ms if k > 1 else result.p50_ms,
               "ttfb_ms": result.ttfb_p50_ms, "samples_ms": result.samples_ms,
               "mibps": (self.p.size / 1048576) / (result.p50_ms / 1000.0)
               if result.ok and result.p50_ms and self.p.size else None,
               "connect_ms": result.connect_ms.get("p50"), "upstream": upstream}
        if k == 1:
            out.pop("samples_ms")
        state = (f"{out['total_ms']:.1f} ms" if result.ok == k else f"FAILED {result.failure_kinds}")
        fetches = ("" if upstream is None
                   else f", upstream resolve {upstream['resolve']} body {upstream['body']}")
        self.ctx.progress(f"cold fill {'x' + str(k) + ' concurrent' if k > 1 else 'sample ' + str(i)} "
                          f"{main.name}: {state}{fetches}")
        return out

    def _stats(self, name: str) -> dict[str, Any] | None:
        url = self.plan.stats[name]
        if url is None or self.stats_ok.get(name) is False:
            return None
        try:
            resp = request_within(self.ctx.client, "GET", url, {"Accept": "application/json",
                                                                "Accept-Encoding": "identity"},
                                  max_bytes=STATS_MAX_BYTES)
            doc = resp.json() if resp.status_code == 200 else None
        except (httpx.HTTPError, ValueError):
            doc = None
        if not isinstance(doc, dict) or doc.get("schema") != fixture.STATS_SCHEMA:
            self.stats_ok[name] = False
            return None
        self.stats_ok[name] = True
        return doc

    def _summarize(self, samples: list[dict[str, Any]], conc: dict[str, Any] | None) -> dict[str, Any]:
        good = [s for s in samples if s["ok"] == s["requests"]]
        ups = [s["upstream"] for s in samples if s["upstream"] is not None]
        return {"samples": len(samples), "ok": len(good), "failures": len(samples) - len(good),
                "median_total_ms": median_or_none(s["total_ms"] for s in good),
                "median_ttfb_ms": median_or_none(s["ttfb_ms"] for s in good),
                "median_mibps": median_or_none(s["mibps"] for s in good),
                "upstream_resolve_per_repo": max((u["resolve"] for u in ups), default=None),
                "upstream_body_per_repo": max((u["body"] for u in ups), default=None),
                "concurrent": None if conc is None else {
                    "requests": conc["requests"], "ok": conc["ok"], "max_ms": conc["total_ms"],
                    "upstream_body": None if conc["upstream"] is None else conc["upstream"]["body"],
                    "upstream_resolve": None if conc["upstream"] is None else conc["upstream"]["resolve"]}}

    def _compare(self, names: list[str], summary: dict[str, Any], section: Section,
                 samples: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
        base = names[0]
        out = {}
        for cand in names[1:]:
            if self.ctx.method == "paired":
                out[cand] = self._paired(base, cand, summary, samples, section)
                continue
            r = ratio(summary[cand]["median_mibps"], summary[base]["median_mibps"])
            fails = [f"cold fill: {n} had {summary[n]['failures']} failed sample(s)"
                     for n in (base, cand) if summary[n]["failures"]]
            if r is None:
                fails.append(f"cold fill: {cand} throughput ratio cannot be computed")
            elif r < self.gate.min_throughput_ratio:
                fails.append(f"cold fill: {cand} median throughput {r:.3f}x {base} < "
                             f"{self.gate.min_throughput_ratio:.2f}x (cold gate)")
            out[cand] = {"baseline": base, "throughput_ratio": r,
                         "ttfb_ratio": ratio(summary[cand]["median_ttfb_ms"],
                                             summary[base]["median_ttfb_ms"]),
                         "passed": not fails}
            add_failures(section.gate_failures, fails)
        return out

    def _paired(self, base: str, cand: str, summary: dict[str, Any], samples: dict[str, list[dict[str, Any]]],
                section: Section) -> dict[str, Any]:
        """The cold gate on the interval of the per-sample throughput ratios (sample i of every
        target is a pair: adjacent in time, alternating order)."""
        def mibps(name: str) -> list[float | None]:
            return [s["mibps"] if s["ok"] == s["requests"] else None for s in samples[name]]

        fails = [f"cold fill: {n} had {summary[n]['failures']} failed sample(s)"
                 for n in (base, cand) if summary[n]["failures"]]
        d = paired_samples("cold throughput", mibps(base), mibps(cand), self.gate.min_throughput_ratio,
                           "below", self.ctx.alpha)
        if d.verdict == "fail":
            fails.append(decision_message(f"cold fill: {cand}", d, "cold"))
        elif d.verdict == "inconclusive" and not fails:
            section.inconclusive.append(decision_message(f"cold fill: {cand}", d, "cold"))
        add_failures(section.gate_failures, fails)
        verdict = "fail" if fails else d.verdict
        return {"baseline": base,
                "throughput_ratio": ratio(summary[cand]["median_mibps"], summary[base]["median_mibps"]),
                "ttfb_ratio": ratio(summary[cand]["median_ttfb_ms"], summary[base]["median_ttfb_ms"]),
                "decision": d.to_json(), "verdict": verdict, "passed": verdict == "pass"}

    def _singleflight(self, names: list[str], samples: dict[str, list[dict[str, Any]]],
                      concurrent: dict[str, dict[str, Any]], section: Section) -> None:
        for idx, name in enumerate(names):
            if not self.stats_ok.get(name):
                section.notes.append(f"cold fill: no upstream request counts for {name} (no fixture "
                                     "/__stats; give --stats-url)")
                continue
            runs = samples[name] + ([concurrent[name]] if name in concurrent else [])
            worst = max(runs, key=lambda s: (s["upstream"] or {}).get("body", 0))
            body = (worst["upstream"] or {}).get("body", 0)
            if body <= 1:
                continue
            what = (f"{body} upstream body fetches of {self.p.file} for one fresh repository "
                    f"({worst['requests']} request(s) in sample {worst['sample']})")
            if idx == 0:
                section.notes.append(f"cold fill: baseline {name}: {what}")
            else:
                add_failures(section.gate_failures, [f"cold fill: {name}: {what}; expected 1 (singleflight)"])


def _delta(before: dict[str, Any] | None, after: dict[str, Any] | None, repo: str,
           file: str) -> dict[str, int] | None:
    if before is None or after is None:
        return None

    def counts(doc: dict[str, Any]) -> dict[str, int]:
        return (doc.get("files") or {}).get(repo, {}).get(file, {})

    b, a = counts(before), counts(after)
    return {k: a.get(k, 0) - b.get(k, 0) for k in ("resolve", "head", "body", "range", "cdn")}


# -- real clients -----------------------------------------------------------------------------------

_CLIENT_SCRIPT = r"""
import hashlib, json, os, sys, time
kind, repo, rev, name = sys.argv[1:5]
from huggingface_hub import hf_hub_download, snapshot_download
start = time.perf_counter()
if kind == "hf_hub_download":
    path = hf_hub_download(repo, name, revision=rev)
    files = [name]
else:
    folder = snapshot_download(repo, revision=rev)
    path = os.path.join(folder, name)
    files = sorted(os.path.relpath(os.path.join(d, f), folder) for d, _, fs in os.walk(folder) for f in fs)
elapsed = (time.perf_counter() - start) * 1000.0
with open(path, "rb") as fh:
    digest = hashlib.sha256(fh.read()).hexdigest()
print(json.dumps({"ms": elapsed, "sha256": digest, "files": files}))
"""

CLIENTS = ("hf_hub_download", "snapshot_download", "hf download")


class ClientRounds:
    """The real huggingface_hub client against every target, one subprocess per sample."""

    def __init__(self, profile: HuggingFaceProfile, ctx: Context, gate: Gate):
        self.p = profile
        self.ctx = ctx
        self.gate = gate
        self.timeout = max(ctx.timeout * 6, 120.0)
        self.hf = _hf_cli()

    def run(self, section: Section) -> dict[str, Any]:
        names = [t.name for t in self.ctx.targets]
        by_name = {t.name: t for t in self.ctx.targets}
        rounds = self.p.values["hf_client_rounds"]
        out: dict[str, Any] = {"rounds": rounds, "gate": self.gate.to_json(), "clients": {}}
        for c_idx, client in enumerate(CLIENTS):
            if client == "hf download" and self.hf is None:
                section.notes.append("client rounds: the hf command was not found next to this Python; "
                                     "skipped")
                continue
            samples = clients.alternate(client, c_idx, names, rounds,
                                        lambda name, client=client: self._sample(client, by_name[name]),
                                        self.ctx.progress)
            out["clients"][client] = self._summarize(client, names, samples, section)
        return out

    def _sample(self, client: str, target: Target) -> dict[str, Any]:
        tmp = tempfile.mkdtemp(prefix="httpbench-hf-client-")
        try:
            env = client_env(target, os.path.join(tmp, "hf-home"))
            argv = client_argv(client, self.p.repo, self.p.revision, self.p.file, self.hf)
            start = time.perf_counter()
            try:
                proc = clients.run_process(argv, cwd=tmp, env=env, timeout=self.timeout)
            except subprocess.TimeoutExpired:
                return {"ms": None, "process_ms": None, "ok": False,
                        "error": f"timed out after {self.timeout:g} s"}
            process_ms = (time.perf_counter() - start) * 1000.0
            return self._verify(client, proc, process_ms, Path(env["HF_HOME"]))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def _verify(self, client: str, proc: subprocess.CompletedProcess, process_ms: float,
                home: Path) -> dict[str, Any]:
        out: dict[str, Any] = {"ms": None, "process_ms": process_ms, "ok": False}
        lines = [line for line in proc.stdout.splitlines() if line.strip()]
        if proc.returncode != 0 or (not lines and client != "hf download"):
            err = [line for line in proc.stderr.splitlines() if line.strip()]
            out["error"] = f"exit {proc.returncode}: {(err or lines or ['no output'])[-1][:300]}"
            return out
        if client == "hf download":           # its output format varies by version: find the file
            found = sorted(home.glob(f"hub/models--*/snapshots/*/{self.p.file}"))
            digest = hashlib.sha256(found[0].read_bytes()).hexdigest() if found else None
            out["ms"] = process_ms
        else:
            try:
                result = json.loads(lines[-1])
            except ValueError:
                out["error"] = f"unexpected output: {lines[-1][:200]}"
                return out
            digest, out["ms"] = result["sha256"], result["ms"]
            if client == "snapshot_download":
                out["files"] = len(result["files"])
        if digest != self.p.sha256:
            out["error"] = f"downloaded {self.p.file} has SHA-256 {digest}, expected {self.p.sha256}"
            return out
        out["ok"] = True
        return out

    def _summarize(self, client: str, names: list[str], samples: list[dict[str, Any]],
                   section: Section) -> dict[str, Any]:
        summary, comparisons, fails = clients.summarize(client, names, samples, self.gate, self.ctx.method,
                                                        self.ctx.alpha)
        for name in names:
            ok = [s for s in samples if s["target"] == name and s["ok"]]
            w50, w95 = percentiles([s["process_ms"] for s in ok], (0.5, 0.95))
            summary[name].update(process_p50_ms=w50, process_p95_ms=w95,
                                 timed="process" if client == "hf download" else "call")
        add_failures(section.gate_failures, fails)
        add_failures(section.inconclusive,
                     [c["inconclusive"] for c in comparisons.values() if c.get("inconclusive")])
        return {"samples": samples, "summary": summary, "comparisons": comparisons}


def client_env(target: Target, home: str, xet: bool = False) -> dict[str, str]:
    """The environment of one client sample: ``HF_ENDPOINT`` = the target, a fresh ``HF_HOME``,
    telemetry, update checks and (unless ``xet``) Xet off; no inherited ``HF_*`` setting."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGINGFACE_"))}
    env.update(_CLIENT_ENV)
    if xet:
        env.pop("HF_HUB_DISABLE_XET")
    env.update(HF_ENDPOINT=target.url, HF_HOME=home)
    if target.auth_header and target.auth_header.startswith("Bearer "):
        env["HF_TOKEN"] = target.auth_header[7:]
    return env


def client_argv(client: str, repo: str, revision: str, file: str, hf: str | None = None) -> list[str]:
    """One client sample: ``hf download`` (needs the ``hf`` program) or a Python subprocess calling
    ``hf_hub_download`` / ``snapshot_download`` that prints the call's time and the file's SHA-256."""
    if client == "hf download":
        if hf is None:
            raise HttpbenchError("the hf command was not found next to this Python")
        return [hf, "download", repo, file, "--revision", revision]
    if client not in CLIENTS:
        raise HttpbenchError(f"unknown client {client!r} (known: {', '.join(CLIENTS)})")
    return [sys.executable, "-c", _CLIENT_SCRIPT, client, repo, revision, file]


def _hf_cli() -> str | None:
    local = Path(sys.executable).parent / "hf"
    return str(local) if local.is_file() and os.access(local, os.X_OK) else shutil.which("hf")


PROFILE = HuggingFaceProfile
