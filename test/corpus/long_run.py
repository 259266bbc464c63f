"""Random line-level mutants of every corpus kernel at every depth (and of
Triton's output) through the checker, normal and strict: counts crashes (a
signal or an exit code other than 0 and 1). Mutants that no longer parse
or verify are counted apart (the parser rejects them before the checker).

    python test/corpus/long_run.py [count-per-file] [seed]

test_corpus.py runs a small seeded smoke of it in CI.
"""

from __future__ import annotations

import random
import sys

import corpus


def mutants(text: str, count: int, rng: random.Random):
    lines = text.split("\n")
    body = [
        i
        for i, line in enumerate(lines)
        if line.startswith("    ")
        and any(k in line for k in ("nvvm.", "nvgpu.", "inline_asm", "="))
    ]
    for _ in range(count):
        out = list(lines)
        i = rng.choice(body)
        action = rng.choice(["delete", "duplicate", "swap"])
        if action == "delete":
            del out[i]
        elif action == "duplicate":
            out.insert(i, out[i])
        else:
            j = min(i + 1, len(out) - 1)
            out[i], out[j] = out[j], out[i]
        yield "\n".join(out)


def run(count: int, seed: int) -> dict:
    rng = random.Random(seed)
    totals = {"mutants": 0, "checked": 0, "crashes": 0}
    texts = []
    for path in corpus.KERNELS:
        for depth in corpus.DEPTHS:
            texts.append(corpus.lower(path.read_text(), depth))
    texts += [p.read_text() for p in corpus.TRITON]
    for text in texts:
        for mutant in mutants(text, count, rng):
            totals["mutants"] += 1
            for strict in (False, True):
                result = corpus.check(mutant, strict)
                if result["crashed"]:
                    totals["crashes"] += 1
                    print(result["stderr"][-2000:], file=sys.stderr)
                elif result["returncode"] == 0 or "protocol_" in result["stderr"]:
                    totals["checked"] += 1
    return totals


if __name__ == "__main__":
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 50
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    print(run(count, seed))
