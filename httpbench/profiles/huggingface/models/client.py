"""One real-client sample (run by a client line's Python, not httpbench's, with ``HF_ENDPOINT`` = the
target and a fresh ``HF_HOME``): ``LINE_PYTHON client.py transformers|diffusers REPO REVISION``.

Or many, one after the other, from one process that imports once (``LINE_PYTHON client.py serve
transformers|diffusers``): each request line on stdin (JSON: ``repo``, ``rev``, ``out``, ``err``) is
one sample in a child forked after the imports, with ``HF_HOME`` put back as it was right after
them (a fresh cache, as a new process has) and its stdout and stderr in the files ``out`` and
``err``; the reply is one line, ``{"exit": CODE}``. The first line is ``{"ready": …}`` once the
imports are done. Importing torch and a client library costs 2.4-4.9 CPU-seconds, several times
the sample itself; a forked child starts with them made and with nothing else done. With
``serve KIND PRIME_DIR`` (a local copy of the pinned model), the process also loads that copy once
and runs it before ``ready``: the model classes a client imports on first use (Transformers 5:
about 2 CPU-seconds) are then imported, and a sample times the client's calls to the target and
the model's own work. The copy is read from disk only, after ``HF_HOME`` was saved, so each
sample's cache is still as the imports left it.

* transformers: ``AutoConfig``, ``AutoTokenizer``, ``AutoModel.from_pretrained`` and one forward pass;
* diffusers: ``StableDiffusionPipeline.from_pretrained`` and one 32x32 inference step.

Prints one JSON line: the time of each step and of all of them (imports excluded), what the model
computed (its output's shape), every downloaded file's SHA-256 (for the caller to check against the
pins) and the versions of the line.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import sys
import time


def _timed(steps: dict[str, float], name: str, call):
    start = time.perf_counter()
    out = call()
    steps[name] = (time.perf_counter() - start) * 1000.0
    return out


def transformers_sample(repo: str, rev: str, steps: dict[str, float]) -> list[int]:
    import torch
    from transformers import AutoConfig, AutoModel, AutoTokenizer

    _timed(steps, "config", lambda: AutoConfig.from_pretrained(repo, revision=rev))
    tokenizer = _timed(steps, "tokenizer", lambda: AutoTokenizer.from_pretrained(repo, revision=rev))
    model = _timed(steps, "model", lambda: AutoModel.from_pretrained(repo, revision=rev))
    inputs = tokenizer("hello tiny world", return_tensors="pt")
    with torch.no_grad():
        out = _timed(steps, "forward", lambda: model(**inputs))
    return list(out.last_hidden_state.shape)


def diffusers_sample(repo: str, rev: str, steps: dict[str, float]) -> list[int]:
    import torch
    from diffusers import StableDiffusionPipeline

    pipe = _timed(steps, "pipeline", lambda: StableDiffusionPipeline.from_pretrained(repo, revision=rev))
    pipe.set_progress_bar_config(disable=True)
    generator = torch.Generator().manual_seed(0)
    image = _timed(
        steps,
        "step",
        lambda: (
            pipe(
                "a cat", num_inference_steps=1, height=32, width=32, output_type="np", generator=generator
            ).images
        ),
    )
    return list(image.shape)


def downloaded(repo: str) -> dict[str, str]:
    """Every file of the repository's snapshot in HF_HOME: path -> SHA-256."""
    root = os.path.join(os.environ["HF_HOME"], "hub", "models--" + repo.replace("/", "--"), "snapshots")
    out = {}
    for snapshot in sorted(os.listdir(root)):
        base = os.path.join(root, snapshot)
        for folder, _, names in os.walk(base):
            for name in names:
                path = os.path.join(folder, name)
                with open(path, "rb") as fh:
                    out[os.path.relpath(path, base).replace(os.sep, "/")] = hashlib.sha256(
                        fh.read()
                    ).hexdigest()
    return out


def _imports(kind: str) -> None:
    import torch  # the imports before the clock: a sample times the clients, not the interpreter

    if kind == "transformers":
        from transformers import AutoConfig, AutoModel, AutoTokenizer  # noqa: F401
    else:
        from diffusers import StableDiffusionPipeline  # noqa: F401
    torch.set_num_threads(1)  # one core for the client: the other serves


def main(kind: str, repo: str, rev: str) -> None:
    _imports(kind)
    _sample(kind, repo, rev)


def _sample(kind: str, repo: str, rev: str) -> None:
    steps: dict[str, float] = {}
    start = time.perf_counter()
    shape = (transformers_sample if kind == "transformers" else diffusers_sample)(repo, rev, steps)
    total = (time.perf_counter() - start) * 1000.0
    names = ("torch", "transformers", "diffusers", "huggingface_hub")
    print(
        json.dumps(
            {
                "ms": total,
                "steps_ms": steps,
                "output_shape": shape,
                "files": downloaded(repo),
                "versions": {n: importlib.metadata.version(n) for n in names},
            }
        )
    )


def serve(kind: str, prime: str | None = None) -> None:
    import shutil

    replies = os.fdopen(os.dup(1), "w")  # the protocol's own stream; what else writes to
    os.dup2(2, 1)  # stdout (a library while it imports) goes to stderr
    start = time.perf_counter()
    _imports(kind)
    home = os.environ["HF_HOME"]
    pristine = home + ".after-imports"  # what the imports left in HF_HOME (usually nothing)
    shutil.rmtree(pristine, ignore_errors=True)
    if os.path.exists(home):
        shutil.copytree(home, pristine, symlinks=True)
    imports_ms = (time.perf_counter() - start) * 1000.0
    primed_ms = None
    if prime:  # a local directory: no request, nothing kept in HF_HOME (each sample restores it)
        start = time.perf_counter()
        try:
            (transformers_sample if kind == "transformers" else diffusers_sample)(prime, "main", {})
            primed_ms = (time.perf_counter() - start) * 1000.0
        except Exception:  # the samples run as they would unprimed; why is on stderr
            import traceback

            traceback.print_exc()
    reply = {"ready": True, "imports_ms": imports_ms, "primed_ms": primed_ms}
    print(json.dumps(reply), file=replies, flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the sample: its own stdout and stderr, a fresh cache, then exit
            code = 1
            try:
                replies.close()
                for fd, path in ((1, request["out"]), (2, request["err"])):
                    os.dup2(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), fd)
                shutil.rmtree(home, ignore_errors=True)
                if os.path.exists(pristine):
                    shutil.copytree(pristine, home, symlinks=True)
                _sample(kind, request["repo"], request["rev"])
                code = 0
            except BaseException:  # what a process would print of an uncaught exception
                import traceback

                traceback.print_exc()
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        print(json.dumps({"exit": os.waitstatus_to_exitcode(status)}), file=replies, flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "serve":
        serve(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None)
    else:
        main(*sys.argv[1:4])
