"""The tiny model repositories' preflight, on every target before any timing: what Transformers and
Diffusers need from a Hub-like server, checked file by file against the pinned bytes, each failure
one line naming what a real client would break on.

Per repository: model info (commit, the exact file list), the recursive tree listing (the file list
and the LFS SHA-256s), and for every file HEAD and GET of ``/{repo}/resolve/{rev}/{file}``:
``X-Repo-Commit``, the ETag the client keys its cache on (``X-Linked-Etag`` or ``ETag``: the SHA-256
of an LFS file, the git blob id of another), and the body's SHA-256; the leak checks on every answer.
"""

from __future__ import annotations

import hashlib
from typing import Any

import httpx

from httpbench.errors import HttpbenchError
from httpbench.model import Target
from httpbench.profiles import Context
from httpbench.profiles.huggingface.leaks import leak
from httpbench.profiles.huggingface.models.repos import is_lfs, repo_id

# what each client does without it (observed with transformers 4.57/5.25, diffusers 0.35/0.42)
NO_COMMIT = (
    "Transformers cannot load the files ('We couldn't connect to … to load the files') and Diffusers stops "
    "('is missing the X-Repo-Commit header')"
)
NO_ETAG = "huggingface_hub refuses the file ('Distant resource does not have an ETag')"
WRONG_ETAG = (
    "huggingface_hub stores and finds the file in its cache by this ETag, so a client keeps a copy "
    "under a wrong blob name and cannot tell a changed file from the cached one"
)
NO_TREE = (
    "huggingface_hub >= 1.0 lists a snapshot with it: Diffusers' StableDiffusionPipeline.from_pretrained "
    "fails ('no file named scheduler_config.json found'); Transformers and the old client line "
    "(model info siblings) still work"
)


def git_blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _unquote(value: str | None) -> str | None:
    return None if value is None else value.strip().removeprefix("W/").strip('"')


class ModelsPreflight:
    """Checks every pinned repository (``manifest["repos"]``) on every target at ``commit``."""

    def __init__(
        self, manifest: dict[str, Any], commit: str, upstream_hosts: tuple[str, ...], strict: bool = True
    ):
        """``strict``: a failure stops the run (exit 2); else it is recorded per target (``problems``,
        a note) and the client rounds show what each client line does against that target."""
        self.manifest = manifest
        self.commit = commit
        self.upstream_hosts = upstream_hosts
        self.strict = strict

    def run(self, ctx: Context, notes: list[str] | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {}
        problems: dict[str, str] = {}
        for target in ctx.targets:
            try:
                out[target.name] = {
                    repo_id(name): self._repo(ctx, target, repo_id(name), pins)
                    for name, pins in self.manifest["repos"].items()
                }
            except HttpbenchError as exc:
                if self.strict:
                    raise
                problems[target.name] = str(exc).removeprefix("preflight: ")
                if notes is not None:
                    notes.append(f"model repositories (--model-preflight report): {problems[target.name]}")
        files = sum(len(p) for p in self.manifest["repos"].values())
        ctx.progress(
            f"model repositories preflight {'passed' if not problems else 'found problems'} on "
            f"{len(ctx.targets)} targets ({len(self.manifest['repos'])} repositories, {files} files)"
        )
        return {"repos": out, "problems": problems, "versions": self.manifest.get("versions") or {}}

    def _get(self, ctx: Context, target: Target, method: str, path: str) -> httpx.Response:
        resp = ctx.fetch(target, path, method)
        problem = leak(target, f"{method} {path}", resp, self.upstream_hosts)
        if problem:
            raise HttpbenchError(f"preflight: {problem}")
        return resp

    def _fail(self, target: Target, request: str, message: str) -> HttpbenchError:
        return HttpbenchError(f"preflight: target {target.name!r} {request}: {message}")

    def _json_list(self, ctx: Context, target: Target, path: str, what: str, breaks: str) -> Any:
        resp = self._get(ctx, target, "GET", path)
        if resp.status_code != 200:
            raise self._fail(target, f"GET {path}", f"{what} returned {resp.status_code}: {breaks}")
        try:
            return resp.json()
        except ValueError:
            raise self._fail(target, f"GET {path}", f"{what} is not JSON: {breaks}") from None

    def _repo(self, ctx: Context, target: Target, repo: str, pins: dict[str, Any]) -> dict[str, Any]:
        info_path = f"/api/models/{repo}/revision/{self.commit}"
        info = self._json_list(ctx, target, info_path, "model info", "Diffusers cannot load the pipeline")
        siblings = info.get("siblings") if isinstance(info, dict) else None
        listed = sorted(str(s.get("rfilename")) for s in siblings or [] if isinstance(s, dict))
        if not isinstance(info, dict) or info.get("sha") != self.commit or listed != sorted(pins):
            got = info.get("sha") if isinstance(info, dict) else None
            raise self._fail(
                target,
                f"GET {info_path}",
                f"model info (sha {got!r}, {len(listed)} files) is not commit {self.commit} with the "
                f"{len(pins)} pinned files: clients would download another file set",
            )
        tree_path = f"/api/models/{repo}/tree/{self.commit}?recursive=true&expand=false"
        tree = self._json_list(ctx, target, tree_path, "the tree endpoint", NO_TREE)
        entries = {
            str(e.get("path")): e
            for e in (tree if isinstance(tree, list) else [])
            if isinstance(e, dict) and e.get("type") == "file"
        }
        if sorted(entries) != sorted(pins):
            missing, extra = sorted(set(pins) - set(entries)), sorted(set(entries) - set(pins))
            raise self._fail(
                target,
                f"GET {tree_path}",
                f"tree lists other files (missing {missing}, extra {extra}): {NO_TREE}",
            )
        for path, pin in pins.items():
            lfs = (entries[path].get("lfs") or {}).get("oid")
            if is_lfs(path) and lfs != pin["sha256"]:
                raise self._fail(target, f"GET {tree_path}", f"{path}: LFS oid {lfs!r} is not its SHA-256")
        return {
            "files": len(pins),
            "checked": [self._file(ctx, target, repo, p, pin) for p, pin in pins.items()],
        }

    def _file(
        self, ctx: Context, target: Target, repo: str, path: str, pin: dict[str, Any]
    ) -> dict[str, Any]:
        url = f"/{repo}/resolve/{self.commit}/{path}"
        head = self._get(ctx, target, "HEAD", url)
        get = self._get(ctx, target, "GET", url)
        body = get.content
        digest = hashlib.sha256(body).hexdigest()
        want_etag = pin["sha256"] if is_lfs(path) else git_blob_id(body)
        for resp, req in ((head, f"HEAD {url}"), (get, f"GET {url}")):
            if resp.status_code != 200:
                raise self._fail(target, req, f"returned {resp.status_code}, expected 200")
            if resp.headers.get("x-repo-commit") != self.commit:
                found = resp.headers.get("x-repo-commit")
                what = (
                    "no X-Repo-Commit" if found is None else f"X-Repo-Commit {found!r} is not {self.commit}"
                )
                raise self._fail(target, req, f"{what}: {NO_COMMIT}")
            etag = _unquote(resp.headers.get("x-linked-etag") or resp.headers.get("etag"))
            if etag is None:
                raise self._fail(target, req, f"no ETag: {NO_ETAG}")
            if etag != want_etag:
                kind = "SHA-256" if is_lfs(path) else "git blob id"
                raise self._fail(
                    target, req, f"ETag {etag!r} is not the file's {kind} {want_etag}: {WRONG_ETAG}"
                )
        if digest != pin["sha256"] or len(body) != pin["size"]:
            raise self._fail(
                target, f"GET {url}", f"body ({len(body)} bytes, SHA-256 {digest}) is not the pinned file"
            )
        return {"path": path, "size": len(body), "etag": want_etag}
