"""The ``huggingface`` profile: options, scenarios, the preflight (model info, file HEAD/GET/Range,
leak checks) and the phases after the warm rounds (cold fill, real clients).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
from functools import lru_cache
from typing import Any, ClassVar

import httpx

from httpbench.errors import HttpbenchError
from httpbench.fixtures import huggingface as fixture
from httpbench.gates import PAIRED_MIN_SAMPLES
from httpbench.model import Gate, Scenario, Target
from httpbench.preflight import send
from httpbench.profiles import Context, Defaults, Option, Profile, Section
from httpbench.profiles.huggingface.clientrounds import ClientRounds
from httpbench.profiles.huggingface.cold import ColdFill, ColdPlan
from httpbench.profiles.huggingface.leaks import leak

RANGE_BYTES = 65536
INFO_GET, INFO_304 = "model info GET", "model info 304"
FILE_HEAD, FILE_GET, FILE_RANGE = "model file HEAD", "model file GET", "model file Range 64 KiB"
DEFAULT_COLD_REPO = "{org}/cold-{run}-{target}-{i}"
_HEX40 = re.compile(r"^[0-9a-f]{40}$")
_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_PLACEHOLDERS = ("{i}", "{run}", "{repo}", "{target}", "{org}", "{name}")


@lru_cache(maxsize=1)
def _fixture_defaults() -> tuple[str, int, str]:
    """SHA-256 and size of the default fixture's model file, and the digest of its first 64 KiB."""
    data = fixture.model_bytes()
    return hashlib.sha256(data).hexdigest(), len(data), hashlib.sha256(data[:RANGE_BYTES]).hexdigest()


def _unquote_etag(value: str | None) -> str | None:
    return None if value is None else value.strip().removeprefix("W/").strip('"')


def _fill(template: str, **values: str) -> str:
    for key, value in values.items():
        template = template.replace("{" + key + "}", value)
    return template


class HuggingFaceProfile(Profile):
    name = "huggingface"
    description = (
        "Hugging Face model proxy: model info GET/304, model file HEAD/GET/Range with commit, "
        "linked ETag/size, SHA-256 and leak checks; cold fill with upstream fetch counts; "
        "optional real huggingface_hub client rounds"
    )
    defaults = Defaults(warmups=64, requests=500, concurrency=16, rounds=5)
    paired_defaults: ClassVar[dict[str, int]] = {
        "cold_samples": PAIRED_MIN_SAMPLES,
        "hf_client_rounds": PAIRED_MIN_SAMPLES,
    }
    options = (
        Option("--repo", "Model repository id ORG/NAME.", default=fixture.DEFAULT_REPO, metavar="ORG/NAME"),
        Option(
            "--revision",
            "Pinned revision: the commit every target must report (a branch name is "
            "resolved on the baseline).",
            default=fixture.COMMIT,
            metavar="REV",
        ),
        Option("--file", "Model file in the repository.", default=fixture.MODEL_FILE, metavar="PATH"),
        Option("--file-sha256", "SHA-256 of the model file (default: the fixture's).", metavar="HEX"),
        Option(
            "--file-size",
            "Size of the model file in bytes (default: the fixture's).",
            kind="int",
            metavar="BYTES",
        ),
        Option(
            "--expect-file",
            "A file the model info must list; repeat for the exact list (default: the baseline's list).",
            multiple=True,
            metavar="PATH",
        ),
        Option(
            "--upstream-host",
            "A host name (or host:port) that must never appear in headers or JSON; repeat.",
            multiple=True,
            metavar="HOST",
        ),
        Option(
            "--cold-target",
            "Cold-fill base URL per sample for target NAME: a template with {i} "
            "(sample), {run}, {repo}, {target}, or a comma list of URLs. Default: the target's URL.",
            multiple=True,
            metavar="NAME=TEMPLATE",
        ),
        Option(
            "--cold-repo",
            "Repository id per cold sample (template with {org}, {name}, {repo}, {run}, {target}, {i}).",
            default=DEFAULT_COLD_REPO,
            metavar="TEMPLATE",
        ),
        Option(
            "--cold-samples",
            "Cold-fill samples per target (0: no cold fill).",
            kind="int",
            default=5,
            metavar="N",
        ),
        Option(
            "--cold-concurrency",
            "Simultaneous requests in the concurrent-miss sample (0: none).",
            kind="int",
            default=4,
            metavar="N",
        ),
        Option(
            "--stats-url",
            "The upstream fixture's /__stats as seen for target NAME (NAME=URL), or one "
            "URL for all targets. Default: /__stats at the target's origin, when it answers.",
            multiple=True,
            metavar="[NAME=]URL",
        ),
        Option(
            "--hf-client",
            "Time the real huggingface_hub client (hf_hub_download, "
            "snapshot_download, hf download) against every target.",
            kind="bool",
            default=False,
        ),
        Option(
            "--hf-client-rounds",
            "Rounds of real-client samples (alternating order).",
            kind="int",
            default=3,
            metavar="N",
        ),
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
        self.size: int | None = (
            v["file_size"] if v["file_size"] is not None else (default_size if fixture_file else None)
        )
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
            Scenario(
                FILE_RANGE,
                self.file_path(),
                headers=(("Range", self.range_header()),),
                klass="payload",
                length=slice_len,
                sha256=self.range_sha256,
            ),
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
            raise HttpbenchError(
                "--hf-client needs huggingface_hub in this Python (pip install 'huggingface_hub>=0.34')"
            )
        if self.values["cold_samples"]:
            self._cold_plan(ctx.targets)  # option errors surface before any timing
        section = Section()
        expected_files: list[str] | None = sorted(self.values["expect_file"]) or None
        per: dict[str, Any] = {}
        for target in ctx.targets:
            info = self._check_info(ctx, target, expected_files)
            if expected_files is None:
                expected_files = info["files"]
            per[target.name] = {"info": info, "file": self._check_file(ctx, target, info["sha"])}
            if self.commit is None:
                self.commit = info["sha"]  # a branch: every target must resolve it alike
        section.records = {
            "targets": per,
            "expected": {
                "repo": self.repo,
                "revision": self.revision,
                "commit": self.commit,
                "file": self.file,
                "sha256": self.sha256,
                "size": self.size,
                "range_sha256": self.range_sha256,
                "files": expected_files,
                "upstream_hosts": list(self.values["upstream_host"]),
            },
        }
        ctx.progress(
            f"huggingface preflight passed on {len(ctx.targets)} targets "
            f"(commit {self.commit}, {self.file} {self.size} bytes)"
        )
        return section

    def _fetch(
        self,
        ctx: Context,
        target: Target,
        method: str,
        path: str,
        headers: dict[str, str] | None = None,
        expected_length: int | None = None,
    ) -> httpx.Response:
        """``expected_length``: the body a correct answer has (reading stops a margin past it; else
        at the preflight's default bound)."""
        resp = (
            ctx.fetch(target, path, method, headers)
            if expected_length is None
            else send(ctx.client, target, method, path, headers or {}, expected_length=expected_length)
        )
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
            raise self._fail(
                target,
                req,
                f"model info sha {sha} is not the expected commit {want} (--revision {self.revision})",
            )
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
            raise self._fail(
                target, req, f"file list differs from the expected one (missing {missing}, extra {extra})"
            )
        etag = resp.headers.get("etag")
        if not etag:
            raise self._fail(target, req, "model info has no ETag (the 304 scenario needs one)")
        cond = self._fetch(ctx, target, "GET", self.info_path, {"If-None-Match": etag})
        if cond.status_code != 304 or cond.content:
            raise self._fail(
                target,
                f"GET {self.info_path} (If-None-Match)",
                f"returned {cond.status_code} with {len(cond.content)} body bytes, expected 304 "
                "with an empty body",
            )
        return {"sha": sha, "files": files, "etag": etag, "bytes": len(resp.content)}

    def _check_file(self, ctx: Context, target: Target, commit: str) -> dict[str, Any]:
        path = self.file_path()
        head = self._fetch(ctx, target, "HEAD", path)
        head_facts = self._check_file_headers(target, f"HEAD {path}", head, commit, None)
        get = self._fetch(ctx, target, "GET", path, expected_length=self.size)  # --file-size, when known
        facts = self._check_file_headers(target, f"GET {path}", get, commit, len(get.content))
        if facts["etag"] != head_facts["etag"]:
            raise self._fail(
                target,
                f"GET {path}",
                f"ETag {facts['etag']} differs from the HEAD answer's {head_facts['etag']}",
            )
        body = get.content
        digest = hashlib.sha256(body).hexdigest()
        if digest != self.sha256:
            raise self._fail(
                target,
                f"GET {path}",
                f"body SHA-256 {digest} is not the expected {self.sha256} (--file-sha256)",
            )
        if self.size is None:
            self.size = len(body)
        elif len(body) != self.size:
            raise self._fail(target, f"GET {path}", f"body is {len(body)} bytes, expected {self.size}")
        facts["range"] = self._check_range(ctx, target, path, body)
        facts.update(sha256=digest, size=len(body))
        return facts

    def _check_file_headers(
        self, target: Target, req: str, resp: httpx.Response, commit: str, body_len: int | None
    ) -> dict[str, Any]:
        if resp.status_code != 200:
            hint = " (a redirect: the proxy must serve the bytes)" if "location" in resp.headers else ""
            raise self._fail(target, req, f"returned {resp.status_code}, expected 200{hint}")
        h = resp.headers
        if h.get("x-repo-commit") != commit:
            raise self._fail(
                target, req, f"X-Repo-Commit {h.get('x-repo-commit')!r} is not the commit {commit}"
            )
        linked = _unquote_etag(h.get("x-linked-etag"))
        if linked != self.sha256:
            raise self._fail(
                target,
                req,
                f"X-Linked-Etag {h.get('x-linked-etag')!r} is not the file's SHA-256 {self.sha256}",
            )
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
            raise self._fail(
                target, req, f"Content-Length {h.get('content-length')} but {body_len} body bytes"
            )
        return {
            "etag": etag,
            "linked_etag": h.get("x-linked-etag"),
            "linked_size": h.get("x-linked-size"),
            "content_length": h.get("content-length"),
            "commit": h.get("x-repo-commit"),
            "etag_is_linked": _unquote_etag(etag) == linked,
        }

    def _check_range(self, ctx: Context, target: Target, path: str, body: bytes) -> dict[str, Any]:
        rng = self.range_header()
        req = f"GET {path} (Range: {rng})"
        resp = self._fetch(ctx, target, "GET", path, {"Range": rng})
        last = min(RANGE_BYTES, len(body)) - 1
        want_cr = f"bytes 0-{last}/{len(body)}"
        if resp.status_code != 206:
            raise self._fail(target, req, f"returned {resp.status_code}, expected 206")
        if resp.headers.get("content-range") != want_cr:
            raise self._fail(
                target, req, f"Content-Range {resp.headers.get('content-range')!r}, expected {want_cr!r}"
            )
        digest = hashlib.sha256(resp.content).hexdigest()
        want = hashlib.sha256(body[: last + 1]).hexdigest()
        if digest != want:
            raise self._fail(
                target,
                req,
                f"the {len(resp.content)} bytes are not bytes 0-{last} of the file "
                "(wrong offset or corrupt slice)",
            )
        if self.range_sha256 is None:
            self.range_sha256 = want  # from the verified body: exact for every timed answer
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
                raise HttpbenchError(
                    f"--cold-target expects NAME=TEMPLATE with NAME one of {', '.join(names)}"
                )
            if key.strip() in templates:
                raise HttpbenchError(f"--cold-target: target {key.strip()!r} is given twice")
            templates[key.strip()] = template.strip()
        urls: dict[str, list[str]] = {}
        repos: dict[str, list[str]] = {}
        for target in targets:
            fill = lambda tpl, i, target=target: _fill(
                tpl, i=str(i), run=self.run_token, target=target.name, org=org, name=name, repo=self.repo
            )
            repos[target.name] = [fill(self.values["cold_repo"], i) for i in range(1, n + 1)]
            for repo in repos[target.name]:
                if not re.fullmatch(r"[\w.-]+/[\w.-]+", repo):
                    raise HttpbenchError(f"--cold-repo gives {repo!r}, not a repository id ORG/NAME")
            template = templates.get(target.name, target.url)
            if "," in template:
                items = [u.strip() for u in template.split(",") if u.strip()]
                if len(items) < n:
                    raise HttpbenchError(
                        f"--cold-target {target.name}: {len(items)} URLs for {n} cold samples"
                    )
                urls[target.name] = items[:n]
            else:
                urls[target.name] = [
                    _fill(
                        template,
                        i=str(i),
                        run=self.run_token,
                        target=target.name,
                        repo=repos[target.name][i - 1],
                    )
                    for i in range(1, n + 1)
                ]
            for url in urls[target.name]:
                try:
                    Target.parse(target.name, url)  # a bad URL fails now, not mid-run
                except HttpbenchError as exc:
                    raise HttpbenchError(
                        f"--cold-target {target.name}: {str(exc).removeprefix(f'target {target.name!r}: ')}"
                    ) from None
            pairs = list(zip(urls[target.name], repos[target.name]))
            if len(set(pairs)) < len(pairs):
                raise HttpbenchError(
                    f"cold fill for {target.name}: samples repeat the same URL and "
                    "repository, so only the first would be cold (use {i} in --cold-repo "
                    "or --cold-target)"
                )
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
                raise HttpbenchError(
                    f"--stats-url expects NAME=URL (NAME one of {', '.join(names)}) or a URL"
                )
        for target in targets:
            if out[target.name] is None:
                out[target.name] = shared or f"{target.scheme}://{target.host_header}/__stats"
        return out


PROFILE = HuggingFaceProfile
