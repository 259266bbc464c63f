"""The public GEMM shape corpus: the linear layers of dense models from 1B
to 405B parameters, at tensor-parallel degrees 1, 2, 4 and 8, at the token
counts of decode, prefill and training -- and its split by model.

Each model's numbers are those of its published config.json (hidden size,
intermediate size, attention heads, key/value heads, head dim, vocabulary),
as released by its authors on the Hugging Face hub (`SOURCES`: each
model's repository id).
Layers: fused QKV (N = (heads + 2 x kv heads) x head dim, K = hidden), O
(N = hidden, K = heads x head dim), fused gate/up (N = 2 x intermediate,
K = hidden), down (N = hidden, K = intermediate), lm_head (N = vocabulary,
K = hidden). Tensor parallelism divides N of the column-parallel layers
(QKV, gate/up, lm_head) and K of the row-parallel ones (O, down); key/value
heads fewer than the degree are replicated, one per rank.

    python bench/gemm/models.py        # the corpus's size and its halves

`SPLIT`: models the selector's rules were set or looked at on ("tuned") and
models none of its rules has seen ("held-out"), fixed before any of them was
measured. Reports give the held-out half.
"""

from __future__ import annotations

import random

# name: (hidden, intermediate, heads, kv heads, head dim, vocabulary)
MODELS = {
    "Llama-3.2-1B": (2048, 8192, 32, 8, 64, 128256),
    "Llama-3.2-3B": (3072, 8192, 24, 8, 128, 128256),
    "Llama-3.1-8B": (4096, 14336, 32, 8, 128, 128256),
    "Llama-3.1-70B": (8192, 28672, 64, 8, 128, 128256),
    "Llama-3.1-405B": (16384, 53248, 128, 8, 128, 128256),
    "Qwen2.5-7B": (3584, 18944, 28, 4, 128, 152064),
    "Qwen2.5-14B": (5120, 13824, 40, 8, 128, 152064),
    "Qwen2.5-32B": (5120, 27648, 40, 8, 128, 152064),
    "Qwen2.5-72B": (8192, 29568, 64, 8, 128, 152064),
    "Mistral-7B-v0.3": (4096, 14336, 32, 8, 128, 32768),
    "Mistral-Nemo-12B": (5120, 14336, 32, 8, 128, 131072),
    "Gemma-2-9B": (3584, 14336, 16, 8, 256, 256000),
    "Gemma-2-27B": (4608, 36864, 32, 16, 128, 256000),
    "Phi-3-medium-14B": (5120, 17920, 40, 10, 128, 32064),
}
# Where each row above comes from: the model's repository on the Hugging
# Face hub (its config.json), by the id its authors released it under.
SOURCES = {
    "Llama-3.2-1B": "meta-llama/Llama-3.2-1B",
    "Llama-3.2-3B": "meta-llama/Llama-3.2-3B",
    "Llama-3.1-8B": "meta-llama/Llama-3.1-8B",
    "Llama-3.1-70B": "meta-llama/Llama-3.1-70B",
    "Llama-3.1-405B": "meta-llama/Llama-3.1-405B",
    "Qwen2.5-7B": "Qwen/Qwen2.5-7B",
    "Qwen2.5-14B": "Qwen/Qwen2.5-14B",
    "Qwen2.5-32B": "Qwen/Qwen2.5-32B",
    "Qwen2.5-72B": "Qwen/Qwen2.5-72B",
    "Mistral-7B-v0.3": "mistralai/Mistral-7B-v0.3",
    "Mistral-Nemo-12B": "mistralai/Mistral-Nemo-Base-2407",
    "Gemma-2-9B": "google/gemma-2-9b",
    "Gemma-2-27B": "google/gemma-2-27b",
    "Phi-3-medium-14B": "microsoft/Phi-3-medium-4k-instruct",
}
# Llama-3-8B's projections set the selector's rules; Llama-3-70B's and
# Qwen2.5-7B's were measured while its decode rule was revised.
TUNED = ("Llama-3.1-8B", "Llama-3.1-70B", "Qwen2.5-7B", "Llama-3.2-1B", "Qwen2.5-14B",
         "Gemma-2-9B", "Mistral-Nemo-12B")  # fmt: skip
SPLIT = {name: "tuned" if name in TUNED else "held-out" for name in MODELS}
TOKENS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384)
RAGGED = (77, 777, 3001)
DEGREES = (1, 2, 4, 8)


def layers(name: str, tp: int):
    """(layer, N, K) of one model's linear layers on one of `tp` ranks, for
    the layers that divide evenly."""
    hidden, inter, heads, kv, hd, vocab = MODELS[name]
    if heads % tp or (2 * inter) % tp or inter % tp:
        return []
    out = [
        ("QKV", (heads // tp + 2 * max(1, kv // tp)) * hd, hidden),
        ("O", hidden, heads // tp * hd),
        ("gate/up", 2 * inter // tp, hidden),
        ("down", hidden, inter // tp),
    ]
    if vocab % tp == 0:
        out.append(("lm_head", vocab // tp, hidden))
    return out


def corpus():
    """Every (model, half, layer, tp, M, N, K) of the corpus."""
    for name in MODELS:
        for tp in DEGREES:
            for layer, n, k in layers(name, tp):
                for m in (*TOKENS, *RAGGED):
                    yield name, SPLIT[name], layer, tp, m, n, k


def band(m: int) -> str:
    return "M <= 16" if m <= 16 else "M 17-64" if m <= 64 else "M 65-512" if m <= 512 else "M > 512"


def sample(half: str, per_band: int, seed: int = 0, max_flops: float = 4e12,
           keep=lambda m, n, k: True):  # fmt: skip
    """Unique (M, N, K) of a half that `keep` holds, `per_band` drawn at
    random from each M band (labels: the first model layer with the
    shape), problems above `max_flops` left out (one run must fit in
    minutes)."""
    unique: dict = {}
    for name, h, layer, tp, m, n, k in corpus():
        if h == half and 2 * m * n * k <= max_flops and keep(m, n, k):
            unique.setdefault((m, n, k), f"{name} {layer} tp{tp} M={m}")
    rng = random.Random(seed)
    picked = []
    for b in ("M <= 16", "M 17-64", "M 65-512", "M > 512"):
        shapes = sorted(s for s in unique if band(s[0]) == b)
        picked += rng.sample(shapes, min(per_band, len(shapes)))
    return [(unique[s], *s) for s in picked]


if __name__ == "__main__":
    rows = list(corpus())
    shapes = {(m, n, k) for *_, m, n, k in rows}
    print(f"{len(MODELS)} models, {len(rows)} layer shapes, {len(shapes)} unique (M, N, K)")
    for half in ("tuned", "held-out"):
        models = [n for n, h in SPLIT.items() if h == half]
        print(f"{half}: {', '.join(models)}")
