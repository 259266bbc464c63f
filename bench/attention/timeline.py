"""Where a backward CTA's time goes: the head dim 128 backward kernel
built with clock64 stamps (nvwgmma.kernel.profile) at its phases -- CTA
start, K and V arrived (the first block begins), the second block begins,
the last block done, dK and dV stored, the store warp's last dQ -- written
to the kernel's `sem` buffer (unused without `deterministic`), then per
length: the median prologue, block, tail and the gap between CTAs on an
SM, in cycles.

    # here (nvwgmma built): the instrumented PTX, under the production
    # kernels' cache keys, beside every other kernel attention needs
    python bench/attention/timeline.py generate .device/timeline
    # on the GPU
    python bench/attention/timeline.py run .device/timeline [--out DIR]

A measuring build: its kernels are for this script only (the stamps cost
a few cycles each; the figures are the phases' shares, not the speed).
"""

from __future__ import annotations

import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "gemm"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "examples"))

# Records per CTA (u64): what each holds.
RECORDS = ("sm", "start", "kv", "second", "loop_end", "stored", "stored_other", "dq_end", "blocks")
SLOTS = len(RECORDS)
LENGTHS = [(512, False), (1024, False), (2048, False), (8192, False), (1024, True), (8192, True)]


def instrument():
    """Patch the backward builder to stamp RECORDS (the patched builder
    keeps every production cache key: write the PTX to a directory of its
    own)."""
    from nvwgmma.dialects import arith, nvvm
    from nvwgmma.ir import IntegerType
    from nvwgmma.kernel import profile
    from nvwgmma.kernel.attention.backward import kernel as K

    at = {name: i for i, name in enumerate(RECORDS)}

    def put(self, name, when, value="clock64"):
        profile.stamp(self.args["sem"], at[name], slots=SLOTS, when=when, value=value)

    def eq(a, b):
        return arith.cmpi(arith.CmpIPredicate.eq, a, b)

    sequence, iteration, finish, store_dq = (K._Kernel._sequence, K._Kernel._iteration,
                                             K._Kernel._finish, K._Kernel._store_dq_warp)  # fmt: skip

    def _sequence(self):
        first = eq(nvvm.read_ptx_sreg_tid_x(IntegerType.get_signless(32)), self.const(0))
        put(self, "start", first)
        put(self, "sm", first, "smid")
        sequence(self)

    def _iteration(self, it, dv, dk):
        me = arith.andi(eq(self.index, self.const(0)), eq(self.wg_thread, self.const(0)))
        put(self, "kv", arith.andi(me, eq(it, self.const(0))))
        put(self, "second", arith.andi(me, eq(it, self.const(1))))
        return iteration(self, it, dv, dk)

    def _finish(self, dv, dk):
        thread0 = eq(self.wg_thread, self.const(0))
        me = arith.andi(eq(self.index, self.const(0)), thread0)
        put(self, "loop_end", me)
        put(self, "blocks", me, arith.extsi(IntegerType.get_signless(64), self.total))
        finish(self, dv, dk)
        put(self, "stored", me)
        put(self, "stored_other", arith.andi(eq(self.index, self.const(1)), thread0))

    def _store_dq_warp(self):
        store_dq(self)
        put(self, "dq_end", eq(self.wg_thread, self.const(32)))

    K._Kernel._sequence, K._Kernel._iteration = _sequence, _iteration
    K._Kernel._finish, K._Kernel._store_dq_warp = _finish, _store_dq_warp


def generate(out_dir: str) -> None:
    from nvwgmma.kernel.attention.backward.config import default_backward_config
    from nvwgmma.kernel.attention.backward.launch import write_backward
    from nvwgmma.kernel.attention.launch import precompile

    precompile(out_dir)  # the forward and the preparation pass, as shipped
    instrument()
    for causal in (False, True):
        print(write_backward(out_dir, default_backward_config(128, causal=causal)))


def phases(records):
    """Median cycles of each phase over CTAs, from rows of RECORDS."""
    from nvwgmma.kernel.profile import per_sm_gaps

    r = {name: [row[i] for row in records] for i, name in enumerate(RECORDS)}
    ends = [max(a, b, c) for a, b, c in zip(r["stored"], r["stored_other"], r["dq_end"])]

    def med(values):
        return statistics.median(values)

    return {
        "prologue": med(b - a for a, b in zip(r["start"], r["kv"])),
        "block": med(
            (e - s) / max(n - 1, 1) for s, e, n in zip(r["second"], r["loop_end"], r["blocks"])
        ),  # fmt: skip
        "tail": med(e - s for s, e in zip(r["loop_end"], ends)),
        "gap": med(per_sm_gaps(r["sm"], r["start"], ends) or [0]),
        "cta": med(e - s for s, e in zip(r["start"], ends)),
        "blocks": med(r["blocks"]),
    }


def run(ptx_dir: str, out_dir: str) -> int:
    sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
    os.environ["NVWGMMA_PTX_DIR"] = ptx_dir
    import torch
    from nvwgmma.kernel.attention import attention
    from nvwgmma.kernel.attention.backward import launch
    from nvwgmma.kernel.attention.backward.kernel import SIGNATURE
    from run import _gpu_info, write_results

    info, rows = _gpu_info(), []
    print(info, flush=True)
    for s, causal in LENGTHS:
        b, h, d = 16384 // s, 16, 128
        q, k, v, do = (torch.randn(b, s, h, d, device="cuda", dtype=torch.bfloat16)
                       for _ in range(4))  # fmt: skip
        o, lse = attention(q, k, v, causal=causal, return_lse=True)
        bwd = launch.prepare(do, q, k, v, o, lse, causal=causal)
        bwd.outputs((do, q, k, v, o, lse, None, None))
        ctas = (s // 128) * h * b
        stamps = torch.zeros(ctas * SLOTS, dtype=torch.int64, device="cuda")
        bwd.main.set([name for name, _ in SIGNATURE].index("sem"), stamps.data_ptr())
        for _ in range(3):
            bwd()
        torch.cuda.synchronize()
        records = stamps.view(ctas, SLOTS).tolist()
        row = {"S": s, "causal": causal, "ctas": ctas, **phases(records)}
        rows.append(row)
        print(json.dumps(row), flush=True)
    write_results(
        out_dir,
        "attention-backward-timeline.json",
        {"info": info, "records": list(RECORDS), "rows": rows},
    )
    return 0


def main(argv=None) -> int:
    from two_step import main as two_step

    return two_step(__doc__, generate, run, argv)


if __name__ == "__main__":
    sys.exit(main())
