"""The summary both attention benchmarks print: per backend and head dim,
the geometric mean and the minimum of the rows' paired ratios (ours over
theirs in time: above 1, ours faster), MHA rows only."""

import math


def summary(rows, backends, head_dims) -> dict:
    out = {}
    for name in backends:
        for d in head_dims:
            values = [r[f"vs_{name}"] for r in rows
                      if r["d"] == d and f"vs_{name}" in r and r["kv_heads"] == r["heads"]]  # fmt: skip
            if values:
                out[f"d{d} vs {name}"] = {
                    "geomean": math.exp(sum(map(math.log, values)) / len(values)),
                    "min": min(values),
                }
    return out
