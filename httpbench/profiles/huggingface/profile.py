"""The ``huggingface`` profile: options, scenarios, the preflight (model info, file HEAD/GET/Range,
leak checks: :mod:`~httpbench.profiles.huggingface.preflight`) and the phases after the warm rounds
(cold fill, real clients).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
from functools import lru_cache
from pathlib import Path
from typing import Any, ClassVar

from httpbench.errors import HttpbenchError
from httpbench.measure.gates import PAIRED_MIN_SAMPLES
from httpbench.model import Gate, Scenario, Target
from httpbench.profiles import Context, Defaults, Option, Profile, Section
from httpbench.profiles.huggingface.cold import ColdFill, ColdPlan
from httpbench.profiles.huggingface.fixture.content import COMMIT, DEFAULT_REPO, MODEL_FILE, model_bytes
from httpbench.profiles.huggingface.hub_clients import ClientRounds
from httpbench.profiles.huggingface.models.clients import ModelClientRounds
from httpbench.profiles.huggingface.models.preflight import ModelsPreflight
from httpbench.profiles.huggingface.models.prepare import local_copy
from httpbench.profiles.huggingface.preflight import _HEX40, RANGE_BYTES, ModelPreflight
from httpbench.profiles.huggingface.preflight import _unquote_etag as _unquote_etag

INFO_GET, INFO_304 = "model info GET", "model info 304"
FILE_HEAD, FILE_GET, FILE_RANGE = "model file HEAD", "model file GET", "model file Range 64 KiB"
DEFAULT_COLD_REPO = "{org}/cold-{run}-{target}-{i}"
_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_PLACEHOLDERS = ("{i}", "{run}", "{repo}", "{target}", "{org}", "{name}")


@lru_cache(maxsize=1)
def _fixture_defaults() -> tuple[str, int, str]:
    """SHA-256 and size of the default fixture's model file, and the digest of its first 64 KiB."""
    data = model_bytes()
    return hashlib.sha256(data).hexdigest(), len(data), hashlib.sha256(data[:RANGE_BYTES]).hexdigest()


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
        "model_client_rounds": PAIRED_MIN_SAMPLES,
    }
    options = (
        Option("--repo", "Model repository id ORG/NAME.", default=DEFAULT_REPO, metavar="ORG/NAME"),
        Option(
            "--revision",
            "Pinned revision: the commit every target must report (a branch name is "
            "resolved on the baseline).",
            default=COMMIT,
            metavar="REV",
        ),
        Option("--file", "Model file in the repository.", default=MODEL_FILE, metavar="PATH"),
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
        Option(
            "--models",
            "Also check the tiny model repositories (httpbench/tiny-bert, httpbench/tiny-sd) file by "
            "file against their pinned SHA-256s before any timing: commit, ETags, tree, bytes.",
            kind="bool",
            default=False,
        ),
        Option(
            "--model-manifest",
            "The model repositories' pins (JSON; default: the project's pinned.json).",
            kind="path",
            metavar="FILE",
        ),
        Option(
            "--model-client",
            "Time Transformers (config, tokenizer, model, forward pass) and Diffusers (pipeline, one "
            "32x32 step) with a client line's Python (LINE=PYTHON); repeat per line. Implies --models.",
            multiple=True,
            metavar="LINE=PYTHON",
        ),
        Option(
            "--model-preflight",
            "strict: a model repository check that fails stops the run before any timing (exit 2); "
            "report: it is recorded per target and the model clients run, so each client line's rows "
            "show what it does against that target.",
            default="strict",
            metavar="strict|report",
        ),
        Option(
            "--model-client-rounds",
            "Rounds of model-client samples (alternating order).",
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
        self.model_lines = _model_lines(v["model_client"])
        self.models = bool(v["models"] or self.model_lines)
        if v["model_preflight"] not in ("strict", "report"):
            raise HttpbenchError(f"--model-preflight must be strict or report, not {v['model_preflight']!r}")
        for opt, low in (
            ("cold_samples", 0),
            ("cold_concurrency", 0),
            ("hf_client_rounds", 1),
            ("model_client_rounds", 1),
        ):
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
        from httpbench.measure.client_rounds import redact

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
        section = ModelPreflight(self).run(ctx)
        if self.models:
            strict = self.values["model_preflight"] == "strict"
            check = ModelsPreflight(
                self._manifest(), self.commit or self.revision, self.values["upstream_host"], strict
            )
            section.records["models"] = check.run(ctx, section.notes)
        return section

    def _manifest(self) -> dict[str, Any]:
        from httpbench.profiles.huggingface.models.repos import load_manifest

        given = self.values["model_manifest"]
        return load_manifest(Path(given) if given else None)

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
        if self.model_lines:
            manifest = self._manifest()
            model_clients = ModelClientRounds(
                ctx,
                self.model_lines,
                manifest["repos"],
                self.commit or self.revision,
                self._stats_urls(ctx.targets),
                gates.get("client", Gate(0.0, 1.25)),
                self.values["model_client_rounds"],
                local_copy(manifest),
            )
            section.records["model_clients"] = model_clients.run(section)
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


def _model_lines(values: tuple[str, ...]) -> dict[str, str]:
    """``--model-client LINE=PYTHON`` values: line -> an existing Python (checked before any timing)."""
    lines: dict[str, str] = {}
    for text in values:
        line, sep, python = text.partition("=")
        line, python = line.strip(), python.strip()
        if not sep or not re.fullmatch(r"[\w.-]+", line) or not python:
            raise HttpbenchError(f"--model-client expects LINE=PYTHON, not {text!r}")
        if line in lines:
            raise HttpbenchError(f"--model-client: line {line!r} is given twice")
        if not (os.path.isfile(python) and os.access(python, os.X_OK)):
            raise HttpbenchError(f"--model-client {line}: {python} is not an executable Python")
        lines[line] = python
    return lines


PROFILE = HuggingFaceProfile
