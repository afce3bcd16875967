"""One real-client sample (run by a client line's Python, not httpbench's, with ``HF_ENDPOINT`` = the
target and a fresh ``HF_HOME``): ``LINE_PYTHON client.py transformers|diffusers REPO REVISION``.

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


def main(kind: str, repo: str, rev: str) -> None:
    import torch  # the imports before the clock: a sample times the clients, not the interpreter

    if kind == "transformers":
        from transformers import AutoConfig, AutoModel, AutoTokenizer  # noqa: F401
    else:
        from diffusers import StableDiffusionPipeline  # noqa: F401
    torch.set_num_threads(1)  # one core for the client: the other serves
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


if __name__ == "__main__":
    main(*sys.argv[1:4])
