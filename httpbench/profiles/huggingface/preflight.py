"""The ``huggingface`` profile's preflight, on every target before any timing: model info (commit,
id, file list, ETag and 304), the model file's HEAD and GET (commit, linked ETag and size, SHA-256),
the 64 KiB Range slice, and the leak checks on every answer."""

from __future__ import annotations

import hashlib
import re
from typing import Any, Protocol

import httpx

from httpbench.errors import HttpbenchError
from httpbench.measure.preflight import send
from httpbench.model import Target
from httpbench.profiles import Context, Section
from httpbench.profiles.huggingface.base import ModelProfile
from httpbench.profiles.huggingface.leaks import leak
from httpbench.profiles.huggingface.models.preflight import NO_COMMIT

RANGE_BYTES = 65536  # the Range scenario's slice, checked here exactly
_HEX40 = re.compile(r"^[0-9a-f]{40}$")


def _unquote_etag(value: str | None) -> str | None:
    return None if value is None else value.strip().removeprefix("W/").strip('"')


class PreflightProfile(ModelProfile, Protocol):
    """What the preflight reads from the profile, and completes (commit of a branch, size and slice
    digest of a file given by SHA-256 only)."""

    commit: str | None
    range_sha256: str | None

    @property
    def info_path(self) -> str: ...

    def range_header(self) -> str: ...


class ModelPreflight:
    """The preflight checks of one profile: :meth:`run` checks every target of a context."""

    def __init__(self, profile: PreflightProfile):
        self.p = profile

    def run(self, ctx: Context) -> Section:
        section = Section()
        expected_files: list[str] | None = sorted(self.p.values["expect_file"]) or None
        per: dict[str, Any] = {}
        for target in ctx.targets:
            info = self._check_info(ctx, target, expected_files)
            if expected_files is None:
                expected_files = info["files"]
            per[target.name] = {"info": info, "file": self._check_file(ctx, target, info["sha"])}
            if self.p.commit is None:
                self.p.commit = info["sha"]  # a branch: every target must resolve it alike
        section.records = {
            "targets": per,
            "expected": {
                "repo": self.p.repo,
                "revision": self.p.revision,
                "commit": self.p.commit,
                "file": self.p.file,
                "sha256": self.p.sha256,
                "size": self.p.size,
                "range_sha256": self.p.range_sha256,
                "files": expected_files,
                "upstream_hosts": list(self.p.values["upstream_host"]),
            },
        }
        ctx.progress(
            f"huggingface preflight passed on {len(ctx.targets)} targets "
            f"(commit {self.p.commit}, {self.p.file} {self.p.size} bytes)"
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
        problem = leak(target, label, resp, tuple(self.p.values["upstream_host"]))
        if problem:
            raise HttpbenchError(f"preflight: {problem}")
        return resp

    def _fail(self, target: Target, request: str, message: str) -> HttpbenchError:
        return HttpbenchError(f"preflight: target {target.name!r} {request}: {message}")

    def _check_info(self, ctx: Context, target: Target, expected: list[str] | None) -> dict[str, Any]:
        req = f"GET {self.p.info_path}"
        resp = self._fetch(ctx, target, "GET", self.p.info_path)
        if resp.status_code != 200:
            raise self._fail(target, req, f"returned {resp.status_code}, expected 200")
        try:
            doc = resp.json()
        except ValueError:
            raise self._fail(target, req, "model info is not JSON") from None
        if not isinstance(doc, dict):
            raise self._fail(target, req, "model info is not a JSON object")
        sha = doc.get("sha")
        want = self.p.commit
        if not isinstance(sha, str) or not _HEX40.match(sha):
            raise self._fail(target, req, f"model info has no commit sha (got {sha!r})")
        if want is not None and sha != want:
            raise self._fail(
                target,
                req,
                f"model info sha {sha} is not the expected commit {want} (--revision {self.p.revision})",
            )
        if doc.get("id") not in (None, self.p.repo):
            raise self._fail(target, req, f"model info id {doc.get('id')!r} is not {self.p.repo!r}")
        siblings = doc.get("siblings")
        if not isinstance(siblings, list):
            raise self._fail(target, req, "model info has no siblings list")
        files = sorted(str(s["rfilename"]) for s in siblings if isinstance(s, dict) and s.get("rfilename"))
        if self.p.file not in files:
            raise self._fail(target, req, f"model info does not list {self.p.file}")
        if expected is not None and files != expected:
            missing, extra = sorted(set(expected) - set(files)), sorted(set(files) - set(expected))
            raise self._fail(
                target, req, f"file list differs from the expected one (missing {missing}, extra {extra})"
            )
        etag = resp.headers.get("etag")
        if not etag:
            raise self._fail(target, req, "model info has no ETag (the 304 scenario needs one)")
        cond = self._fetch(ctx, target, "GET", self.p.info_path, {"If-None-Match": etag})
        if cond.status_code != 304 or cond.content:
            raise self._fail(
                target,
                f"GET {self.p.info_path} (If-None-Match)",
                f"returned {cond.status_code} with {len(cond.content)} body bytes, expected 304 "
                "with an empty body",
            )
        return {"sha": sha, "files": files, "etag": etag, "bytes": len(resp.content)}

    def _check_file(self, ctx: Context, target: Target, commit: str) -> dict[str, Any]:
        path = self.p.file_path()
        head = self._fetch(ctx, target, "HEAD", path)
        head_facts = self._check_file_headers(target, f"HEAD {path}", head, commit, None)
        get = self._fetch(ctx, target, "GET", path, expected_length=self.p.size)  # --file-size, when known
        facts = self._check_file_headers(target, f"GET {path}", get, commit, len(get.content))
        if facts["etag"] != head_facts["etag"]:
            raise self._fail(
                target,
                f"GET {path}",
                f"ETag {facts['etag']} differs from the HEAD answer's {head_facts['etag']}",
            )
        body = get.content
        digest = hashlib.sha256(body).hexdigest()
        if digest != self.p.sha256:
            raise self._fail(
                target,
                f"GET {path}",
                f"body SHA-256 {digest} is not the expected {self.p.sha256} (--file-sha256)",
            )
        if self.p.size is None:
            self.p.size = len(body)
        elif len(body) != self.p.size:
            raise self._fail(target, f"GET {path}", f"body is {len(body)} bytes, expected {self.p.size}")
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
            found = h.get("x-repo-commit")
            what = f"no X-Repo-Commit: {NO_COMMIT}" if found is None else f"X-Repo-Commit {found!r}"
            raise self._fail(target, req, f"{what} is not the commit {commit}" if found else what)
        linked = _unquote_etag(h.get("x-linked-etag"))
        if linked != self.p.sha256:
            raise self._fail(
                target,
                req,
                f"X-Linked-Etag {h.get('x-linked-etag')!r} is not the file's SHA-256 {self.p.sha256}",
            )
        etag = h.get("etag")
        if not etag:
            raise self._fail(target, req, "no ETag")
        sizes = {"X-Linked-Size": h.get("x-linked-size"), "Content-Length": h.get("content-length")}
        for name, value in sizes.items():
            if value is None and name == "X-Linked-Size":
                raise self._fail(target, req, "no X-Linked-Size")
            if value is not None and self.p.size is not None and value != str(self.p.size):
                raise self._fail(target, req, f"{name} {value} is not the file size {self.p.size}")
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
        rng = self.p.range_header()
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
        if self.p.range_sha256 is None:
            self.p.range_sha256 = want  # from the verified body: exact for every timed answer
        elif want != self.p.range_sha256:
            raise self._fail(target, req, "the slice digest differs from the expected content's")
        return {"content_range": want_cr, "sha256": digest, "bytes": len(resp.content)}
