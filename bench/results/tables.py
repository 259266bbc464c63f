"""The tables of docs/performance.md, printed from the results files they
cite (test_docs checks that the doc holds exactly these).

    python bench/results/tables.py
"""

from __future__ import annotations

import json
import math
import pathlib

HERE = pathlib.Path(__file__).resolve().parent
GEMM_STEADY = "h100/2026-11-24-0647-gemm-power-table-final.json"
GEMM_SHORT = "h100/2026-11-24-0647-gemm-shapes-final.json"
ATTENTION = "h100/2026-11-24-0205-attention-grid.json"
# Head dim 128 and GQA, backward and forward + backward; head dims 64 and
# 256 (backward) from a run of the same kernels the same evening.
ATTENTION_BACKWARD = "h100/2026-11-27-2150-attention-backward-d128.json"
ATTENTION_BACKWARD_OTHERS = "h100/2026-11-27-2131-attention-backward.json"
# Decode: (GPU, set, file); "tuned" is the half rule 0 was set on.
DECODE = [
    ("H100", "tuned: Llama-3-8B", "h100/2026-11-27-0051-gemm-decode.json"),
    ("H100", "held out: Llama-3-70B, Qwen2.5-7B", "h100/2026-11-27-0052-gemm-decode-heldout.json"),
    ("H100", "held out, a second run", "h100/2026-11-27-0049-gemm-decode-heldout.json"),
    ("H200", "tuned: Llama-3-8B", "h200/2026-11-27-0054-gemm-decode.json"),
    ("H200", "held out: Llama-3-70B, Qwen2.5-7B", "h200/2026-11-27-0055-gemm-decode-heldout.json"),
    (
        "H200",
        "held out, programmatic launches, 64-row split",
        "h200/2026-11-28-2030-gemm-decode-heldout-pdl.json",
    ),
]

# grouped_mm's rule on each half, a file per half (the held-out half run
# after the tuned half's).
GROUPED = ("h200/2026-11-29-0720-grouped-mm-vote-tuned.json",
           "h200/2026-11-29-0720-grouped-mm-vote-held-out.json")  # fmt: skip
# The public shape corpus (bench/gemm/models.py), one file per half.
CORPUS = [("held out, a second sample, rule 0's 64 rows for the last wave (H200)", "h200/2026-11-28-2302-gemm-corpus-heldout-second-waves.json"),
          ("held out, a second sample, rule 3d's 256-row transposed tile (H200)", "h200/2026-11-28-2241-gemm-corpus-heldout-second-3d.json"),
          ("held out, a second sample, rule 0's late release up to 16 tokens (H200)", "h200/2026-11-28-2048-gemm-corpus-heldout-second-release.json"),
          ("held out, a second sample, programmatic launches and rule 0's 64-row split (H200)", "h200/2026-11-28-2022-gemm-corpus-heldout-second-pdl.json"),
          ("held out, a second sample, rule 3c and the transposed TMA store (H200)", "h200/2026-11-28-1738-gemm-corpus-heldout-second-3c.json"),
          ("held out, a second sample, rule 0's third case, 64 x 80 (H200)", "h200/2026-11-28-1514-gemm-corpus-heldout-second-m65.json"),
          ("held out, a second sample, rule 0's 128 x 16 and 128 x 64 (H200)", "h200/2026-11-28-1253-gemm-corpus-heldout-second-m64.json"),
          ("held out, a second sample, rule 0's 128 x 16 (H200)", "h200/2026-11-28-1236-gemm-corpus-heldout-second-decode.json"),
          ("held out, a second sample, rule 3b's widths (H200)", "h200/2026-11-28-1000-gemm-corpus-heldout-second-widths.json"),
          ("held out, a second sample, rule 3b", "h100/2026-11-28-0641-gemm-corpus-heldout-second-narrow.json"),
          ("held out, a second sample", "h100/2026-11-28-0355-gemm-corpus-heldout-second.json"),
          ("held out", "h100/2026-11-28-0329-gemm-corpus-heldout-rule4.json"),
          ("held out, before rule 4's 64 x 64 tiles", "h100/2026-11-28-0040-gemm-corpus-heldout-fp8-model.json"),
          ("tuned, rules before the cost model", "h100/2026-11-27-0645-gemm-corpus-tuned.json")]  # fmt: skip
BANDS = [("M <= 16", 1, 16), ("M 17-64", 17, 64), ("M 65-512", 65, 512), ("M > 512", 513, 1 << 30)]
GROUPED_HALVES = [("tuned", "tuned: Mixtral-8x7B, DeepSeek-V3, OLMoE-1B-7B, DeepSeek-V2-Lite"),
                  ("held-out", "held out: Mixtral-8x22B, Qwen3-30B-A3B, Qwen3-235B-A22B, "
                               "Qwen2-57B-A14B, DBRX, gpt-oss-120b")]  # fmt: skip


def _load(name):
    return json.loads((HERE / name).read_text())


def _geomean(values):
    values = list(values)
    return math.exp(sum(math.log(v) for v in values) / len(values))


def gemm_bf16() -> str:
    rows = _load(GEMM_STEADY)["rows"]
    short = {r["label"]: r for r in _load(GEMM_SHORT)["rows"] if r["dtype"] == "bf16"}
    lines = ["| shape | M x N x K | ours TFLOP/s | cuBLAS TFLOP/s | steady state | short windows |",
             "|---|---|---|---|---|---|"]  # fmt: skip
    for r in rows:
        ours, theirs = r["results"]["chosen"], r["results"]["torch.matmul"]
        lines.append(f"| {r['label']} | {r['m']} x {r['n']} x {r['k']} | {ours['tflops']:.0f} | "
                     f"{theirs['tflops']:.0f} | {ours['ratio']:.3f} | "
                     f"{short[r['label']]['ratio']['chosen']:.3f} |")  # fmt: skip
    steady = [r["results"]["chosen"]["ratio"] for r in rows]
    windows = [short[r["label"]]["ratio"]["chosen"] for r in rows]
    lines.append(f"| **geomean (worst)** | | | | **{_geomean(steady):.3f}** ({min(steady):.3f}) | "
                 f"**{_geomean(windows):.3f}** ({min(windows):.3f}) |")  # fmt: skip
    return "\n".join(lines)


def gemm_fp8() -> str:
    rows = [r for r in _load(GEMM_SHORT)["rows"] if r["dtype"] == "e4m3"]
    lines = ["| shape | M x N x K | ours TFLOP/s | torch._scaled_mm TFLOP/s | ratio |",
             "|---|---|---|---|---|"]  # fmt: skip
    for r in rows:
        base = r["baseline"]
        lines.append(f"| {r['label']} | {r['m']} x {r['n']} x {r['k']} | "
                     f"{r['tflops']['chosen']:.0f} | {r['tflops'][base]:.0f} | "
                     f"{r['ratio']['chosen']:.3f} |")  # fmt: skip
    ratios = [r["ratio"]["chosen"] for r in rows]
    lines.append(f"| **geomean (worst)** | | | | **{_geomean(ratios):.3f}** ({min(ratios):.3f}) |")
    return "\n".join(lines)


def attention(name=None, data=None) -> str:
    data = data or _load(name or ATTENTION)
    lines = ["| head dim, S | batch x heads | ours TFLOP/s | cuDNN TFLOP/s | vs cuDNN | vs flash |",
             "|---|---|---|---|---|---|"]  # fmt: skip
    for r in data["rows"]:
        lines.append(f"| {r['label']} | {r['batch']} x {r['heads']} | "
                     f"{r['tflops']['ours']:.0f} | {r['tflops']['cudnn']:.0f} | "
                     f"{r['vs_cudnn']:.3f} | {r['vs_flash']:.3f} |")  # fmt: skip
    for name, s in data["summary"].items():
        lines.append(f"| **{name}: geomean (worst)** | | | | | **{s['geomean']:.3f}** ({s['min']:.3f}) |"
                     if "flash" in name else
                     f"| **{name}: geomean (worst)** | | | | **{s['geomean']:.3f}** ({s['min']:.3f}) | |")  # fmt: skip
    return "\n".join(lines)


def gemm_decode() -> str:
    """Per GPU and set: geomean (worst) of the ratio to cuBLAS per token
    count, and the decode path's rows (M <= 32) together."""
    tokens = (1, 8, 16, 32, 64)
    lines = ["| GPU | shapes | " + " | ".join(f"M = {m}" for m in tokens) + " | M <= 32 |",
             "|---|---|" + "---|" * (len(tokens) + 1)]  # fmt: skip
    for gpu, label, name in DECODE:
        rows = _load(name)["rows"]
        cells = []
        for group in [[r for r in rows if r["m"] == m] for m in tokens] + [
            [r for r in rows if r["m"] <= 32]
        ]:
            ratios = [r["ratio"]["chosen"] for r in group]
            cells.append(f"{_geomean(ratios):.2f} ({min(ratios):.2f})")
        lines.append(f"| {gpu} | {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def grouped() -> str:
    """Per half: geomean (worst) of the ratio to torch._grouped_mm of the
    configuration the rule picks, per token count and overall."""
    tokens = (64, 512, 4096)
    lines = ["| half | " + " | ".join(f"T = {t}" for t in tokens) + " | all |",
             "|---|" + "---|" * (len(tokens) + 1)]  # fmt: skip
    rows = [row for name in GROUPED for row in _load(name)["rows"]]
    for half, label in GROUPED_HALVES:
        mine = [r for r in rows if r["half"] == half]
        cells = []
        for group in [[r for r in mine if r["tokens"] == t] for t in tokens] + [mine]:
            ratios = [r["rule_ratio"] for r in group]
            cells.append(f"{_geomean(ratios):.2f} ({min(ratios):.2f})")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def gemm_corpus() -> str:
    """Per half, type and M band: geomean, 10th percentile and minimum of
    the ratio to torch.matmul (bf16) / torch._scaled_mm (fp8)."""
    lines = ["| half | type | band | shapes | geomean | 10th percentile | min |",
             "|---|---|---|---|---|---|---|"]  # fmt: skip
    for half, name in CORPUS:
        rows = _load(name)["rows"]
        for dtype in ("bf16", "e4m3"):
            for band, lo, hi in [*BANDS, ("all", 1, 1 << 30)]:
                v = sorted(r["ratio"]["chosen"] for r in rows
                           if r["dtype"] == dtype and lo <= r["m"] <= hi)  # fmt: skip
                lines.append(f"| {half} | {dtype} | {band} | {len(v)} | {_geomean(v):.2f} | "
                             f"{v[len(v) // 10]:.2f} | {v[0]:.2f} |")  # fmt: skip
    return "\n".join(lines)


def gemm_corpus_worst() -> str:
    """The 20 worst bf16 shapes of CORPUS's first run, with the configuration."""
    data = _load(CORPUS[0][1])
    rows = sorted((r for r in data["rows"] if r["dtype"] == "bf16"),
                  key=lambda r: r["ratio"]["chosen"])[:20]  # fmt: skip
    lines = ["| shape | M x N x K | ratio | configuration |", "|---|---|---|---|"]
    for r in rows:
        label = r["label"].replace("[held-out] ", "")
        lines.append(f"| {label} | {r['m']} x {r['n']} x {r['k']} | {r['ratio']['chosen']:.2f} | "
                     f"{data['names'][r['chosen']]} |")  # fmt: skip
    return "\n".join(lines)


def attention_backward() -> str:
    main, others = _load(ATTENTION_BACKWARD)["rows"], _load(ATTENTION_BACKWARD_OTHERS)["rows"]
    rows = ([r for r in others if r["d"] == 64] + main
            + [r for r in others if r["d"] == 256])  # fmt: skip
    summary = {}
    for name in ("cudnn", "flash"):
        for d in (64, 128, 256):
            v = [r[f"vs_{name}"] for r in rows if r["d"] == d and r["label"].startswith("d")]
            summary[f"d{d} vs {name}"] = {"geomean": _geomean(v), "min": min(v)}
    return attention(data={"rows": rows, "summary": summary})


def attention_step() -> str:
    """Forward + backward (a training step's attention) per row: ms and
    the ratio to SDPA's cuDNN and flash backends."""
    rows = _load(ATTENTION_BACKWARD)["rows"]
    lines = ["| head dim, S | ours ms | cuDNN ms | vs cuDNN | vs flash |", "|---|---|---|---|---|"]
    for r in rows:
        ms = r["forward_backward_ms"]
        lines.append(f"| {r['label']} | {ms['ours']:.3f} | {ms['cudnn']:.3f} | "
                     f"{r['forward_backward_vs_cudnn']:.3f} | {r['forward_backward_vs_flash']:.3f} |")  # fmt: skip
    for d in sorted({r["d"] for r in rows}):
        mine = [r for r in rows if r["d"] == d and r["label"].startswith("d")]
        for name in ("cudnn", "flash"):
            v = [r[f"forward_backward_vs_{name}"] for r in mine]
            cell = f"**{_geomean(v):.3f}** ({min(v):.3f})"
            cells = f"{cell} | |" if name == "cudnn" else f"| {cell} |"
            lines.append(f"| **d{d} vs {name}: geomean (worst)** | | | {cells}")
    return "\n".join(lines)


TABLES = {"gemm-bf16": gemm_bf16, "gemm-fp8": gemm_fp8, "gemm-decode": gemm_decode,
          "attention": attention, "attention-backward": attention_backward,
          "attention-step": attention_step, "grouped": grouped, "gemm-corpus": gemm_corpus,
          "gemm-corpus-worst": gemm_corpus_worst}  # fmt: skip

if __name__ == "__main__":
    for name, table in TABLES.items():
        print(f"<!-- table:{name} -->\n{table()}\n<!-- table:end -->\n")
