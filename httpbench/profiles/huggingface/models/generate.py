"""Make the tiny model repositories, deterministically (run by a client line's Python, not httpbench's:
``LINE_PYTHON generate.py OUT``). Writes ``OUT/tiny-bert`` (a BERT for Transformers) and
``OUT/tiny-sd`` (a Stable Diffusion pipeline for Diffusers) and prints, as one JSON line, every
file's SHA-256 and size and the versions that made them. Fixed seeds and sizes: the same versions
give the same bytes (the fixture refuses any other bytes than its pinned ones).

Nothing here is downloaded: the vocabularies are written here, the weights are random at a fixed seed.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import sys
from pathlib import Path

LETTERS = "abcdefghijklmnopqrstuvwxyz"
BERT_WORDS = ["hello", "world", "tiny", "model", "fixture", "proxy", "cache", "hub", "the", "a", "of"]
SEED = 20261203


def _bert(out: Path) -> None:
    import torch  # here, not at the top: httpbench imports this module without the clients' extras
    from transformers import BertConfig, BertModel, BertTokenizerFast

    out.mkdir(parents=True)
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *BERT_WORDS, *LETTERS]
    vocab += [f"##{c}" for c in LETTERS] + [str(d) for d in range(10)] + [".", ",", "!", "?"]
    (out / "vocab.txt").write_text("".join(f"{t}\n" for t in vocab))
    torch.manual_seed(SEED)
    config = BertConfig(
        vocab_size=len(vocab),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=37,
        max_position_embeddings=64,
    )
    BertModel(config).eval().save_pretrained(out, safe_serialization=True)
    tokenizer = BertTokenizerFast(vocab_file=str(out / "vocab.txt"), do_lower_case=True, model_max_length=64)
    tokenizer.save_pretrained(out)


def _clip_vocab(folder: Path) -> tuple[Path, Path]:
    """A byte-level BPE vocabulary for the CLIP tokenizer: letters, word-final letters, a few merges."""
    tokens = ["<|startoftext|>", "<|endoftext|>", *LETTERS, *(f"{c}</w>" for c in LETTERS)]
    merges = [("c", "a"), ("ca", "t</w>"), ("d", "o"), ("do", "g</w>"), ("a", "n"), ("an", "d</w>")]
    tokens += ["".join(m) for m in merges] + ["!</w>", ".</w>", ",</w>"]
    vocab = {t: i for i, t in enumerate(tokens)}
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "vocab.json").write_text(json.dumps(vocab, indent=2, sort_keys=True) + "\n")
    (folder / "merges.txt").write_text("#version: 0.2\n" + "".join(f"{a} {b}\n" for a, b in merges))
    return folder / "vocab.json", folder / "merges.txt"


def _stable_diffusion(out: Path, scratch: Path) -> None:
    import torch
    from diffusers import AutoencoderKL, DDIMScheduler, StableDiffusionPipeline, UNet2DConditionModel
    from transformers import CLIPTextConfig, CLIPTextModel, CLIPTokenizer

    vocab_file, merges_file = _clip_vocab(scratch)
    # from the folder: transformers 5 reads vocab.json/merges.txt there, not as constructor files
    tokenizer = CLIPTokenizer.from_pretrained(str(vocab_file.parent), model_max_length=16)
    torch.manual_seed(SEED)
    unet = UNet2DConditionModel(
        block_out_channels=(8, 16),
        layers_per_block=1,
        sample_size=16,
        in_channels=4,
        out_channels=4,
        down_block_types=("DownBlock2D", "CrossAttnDownBlock2D"),
        up_block_types=("CrossAttnUpBlock2D", "UpBlock2D"),
        cross_attention_dim=16,
        attention_head_dim=2,
        norm_num_groups=4,
    )
    torch.manual_seed(SEED)
    vae = AutoencoderKL(
        block_out_channels=(8, 16),
        in_channels=3,
        out_channels=3,
        down_block_types=("DownEncoderBlock2D", "DownEncoderBlock2D"),
        up_block_types=("UpDecoderBlock2D", "UpDecoderBlock2D"),
        latent_channels=4,
        norm_num_groups=4,
        sample_size=32,
    )
    torch.manual_seed(SEED)
    text_encoder = CLIPTextModel(
        CLIPTextConfig(
            bos_token_id=0,
            eos_token_id=1,
            pad_token_id=1,
            hidden_size=16,
            intermediate_size=37,
            num_attention_heads=2,
            num_hidden_layers=2,
            vocab_size=len(tokenizer),
            max_position_embeddings=16,
        )
    )
    scheduler = DDIMScheduler(
        beta_start=0.00085,
        beta_end=0.012,
        beta_schedule="scaled_linear",
        clip_sample=False,
        set_alpha_to_one=False,
        steps_offset=1,
    )
    pipe = StableDiffusionPipeline(
        unet=unet,
        vae=vae,
        text_encoder=text_encoder,
        tokenizer=tokenizer,
        scheduler=scheduler,
        safety_checker=None,
        feature_extractor=None,
        requires_safety_checker=False,
    )
    pipe.save_pretrained(out, safe_serialization=True)
    for src in (vocab_file, merges_file):  # newer tokenizers save only tokenizer.json: diffusers needs both
        target = out / "tokenizer" / src.name
        if not target.exists():
            target.write_bytes(src.read_bytes())


def manifest(root: Path) -> dict:
    repos = {}
    for repo in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith("_")):
        files = {}
        for path in sorted(repo.rglob("*")):
            if path.is_file():
                data = path.read_bytes()
                files[path.relative_to(repo).as_posix()] = {
                    "sha256": hashlib.sha256(data).hexdigest(),
                    "size": len(data),
                }
        repos[repo.name] = files
    names = ("torch", "transformers", "diffusers", "tokenizers", "safetensors", "huggingface_hub")
    return {"versions": {n: importlib.metadata.version(n) for n in names}, "repos": repos}


def main(out: Path) -> None:
    import torch

    if out.exists() and any(out.iterdir()):
        sys.exit(f"{out} is not empty")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    torch.use_deterministic_algorithms(True)
    _bert(out / "tiny-bert")
    _stable_diffusion(out / "tiny-sd", out / "_vocab")
    for leftover in (out / "_vocab").iterdir():
        leftover.unlink()
    (out / "_vocab").rmdir()
    print(json.dumps(manifest(out), sort_keys=True))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
