"""Where a GEMM CTA's time goes: the kernels `matmul` picks at decode
sizes, and rule 3's 128 x 128 tile data-parallel, split in 2 and
stream-K (FIXUP_SHAPES: what a split's fix-up costs), built with stamps
(nvwgmma.kernel.profile) by consumer 0 -- its start, its first unit's
mainloop begun and done (the K stages streamed), that unit stored (a
split unit's fix-up included), its last unit done, globaltimer beside
clock64 at the start and end -- with the SM, the first unit's K stages
and the CTA's units; written to the kernel's `R` (residual) pointer,
unused without a residual. Per case: the output's error, the call's time,
the bandwidth against the HBM peak, and medians over CTAs of the set-up,
the first unit's mainloop and its bytes per cycle, the store, the whole
CTA against the kernel, and the SM clock under that load (cycles over
nanoseconds).

    # here (nvwgmma built): the instrumented PTX (production cache keys)
    python bench/gemm/timeline.py generate .device/gemm-timeline
    # on the GPU
    python bench/gemm/timeline.py run .device/gemm-timeline [--out DIR]

A measuring build: its kernels are for this script only.
"""

from __future__ import annotations

import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "examples"))

RECORDS = ("sm", "start", "unit_start", "unit_loaded", "unit_stored", "end", "k_steps", "units",
           "start_ns", "end_ns")  # fmt: skip
SLOTS = len(RECORDS)
MAX_CTAS = 1024  # the persistent grids are at most a few waves
# (M, N, K), bf16: decode token counts on Llama-3 projections
SHAPES = [(m, n, k) for m in (1, 16, 64)
          for n, k in ((4096, 4096), (14336, 4096), (4096, 14336), (28672, 8192), (8192, 8192))]  # fmt: skip
# Where a split's fix-up goes: 128 x 128 tiles of one warpgroup (rule 3's)
# data-parallel, K split in 2, and stream-K, on shapes of about a wave of
# tiles (where a split buys no parallelism, so what it adds is its cost)
# and of 80 tiles (where it should buy some).
FIXUP_SHAPES = [(1024, 2048, 1024), (1024, 2048, 8192), (256, 5120, 14336), (1024, 1280, 8192)]
FIXUP_SCHEDULES = (dict(), dict(scheduler="split_k", splits=2), dict(scheduler="stream_k"))


def instrument():
    """Patch the GEMM schedule to stamp RECORDS (cache keys unchanged:
    write the PTX to a directory of its own)."""
    from nvwgmma.dialects import arith
    from nvwgmma.ir import IndexType, IntegerType
    from nvwgmma.kernel import profile
    from nvwgmma.kernel.gemm import schedule

    at = {name: i for i, name in enumerate(RECORDS)}
    R = schedule._Roles
    consumer, mainloop, finish_tile, done = R.consumer, R.mainloop, R.finish_tile, R.done

    def put(self, name, when, value="clock64"):
        profile.stamp(self.v.operands.residual, at[name], slots=SLOTS, when=when, value=value)

    def me(self):
        return arith.andi(arith.cmpi(arith.CmpIPredicate.eq, self.consumer_index, self.const(0)),
                          arith.cmpi(arith.CmpIPredicate.eq, self.v.wg_thread, self.const(0)))  # fmt: skip

    def _consumer(self, index, a_start):
        consumer(self, index, a_start)
        put(self, "start", me(self))
        put(self, "start_ns", me(self), "globaltimer")
        put(self, "sm", me(self), "smid")

    def _mainloop(self, work, start):
        # The first unit starts at ring position 0.
        self.first_unit = arith.andi(
            me(self), arith.cmpi(arith.CmpIPredicate.eq, start, self.const(0)))  # fmt: skip
        put(self, "unit_start", self.first_unit)
        i64 = IntegerType.get_signless(64)
        steps = arith.index_cast(i64, arith.subi(work.k_end, work.k_first))
        put(self, "k_steps", self.first_unit, steps)
        accs, end = mainloop(self, work, start)
        put(self, "unit_loaded", self.first_unit)
        return accs, end

    def _finish_tile(self, work, accs, row):
        finish_tile(self, work, accs, row)
        put(self, "unit_stored", self.first_unit)

    def _done(self):
        done(self)
        put(self, "end", me(self))
        put(self, "end_ns", me(self), "globaltimer")
        lower, upper, step = self.scheduler.units()
        i64, index = IntegerType.get_signless(64), IndexType.get()
        one, zero = arith.constant(index, 1), arith.constant(index, 0)
        span = arith.maxsi(arith.subi(upper, lower), zero)  # none: a CTA past the units
        count = arith.divui(arith.addi(span, arith.subi(step, one)), step)
        put(self, "units", me(self), arith.index_cast(i64, count))

    R.consumer, R.mainloop, R.finish_tile, R.done = _consumer, _mainloop, _finish_tile, _done


def _config(m, n, k, sms=132):
    """The configuration matmul picks on `sms` SMs (without autotuning)."""
    from nvwgmma.kernel.gemm.launch import Problem, problem_config

    return problem_config(Problem.of(m, n, k, 1, "bf16", "bf16", "K", "K"), sms)


def _fixup_configs():
    from nvwgmma.kernel.gemm.selector import ONE_WARPGROUP_TILE, _base, with_tile

    base = _base("bf16", "bf16", "K", "K", (), True)
    return [with_tile(base, 128, **ONE_WARPGROUP_TILE, **s) for s in FIXUP_SCHEDULES]


def generate(out_dir: str) -> None:
    from dataclasses import asdict

    from nvwgmma.kernel.gemm.launch import write_kernel

    configs = list(dict.fromkeys([*(_config(*s) for s in SHAPES), *_fixup_configs()]))
    instrument()
    for config in configs:
        print(write_kernel(out_dir, config))
    cases = [{"m": m, "n": n, "k": k, "config": asdict(_config(m, n, k))} for m, n, k in SHAPES]
    cases += [{"m": m, "n": n, "k": k, "config": asdict(c)}
              for m, n, k in FIXUP_SHAPES for c in _fixup_configs()]  # fmt: skip
    with open(os.path.join(out_dir, "cases.json"), "w") as f:
        json.dump(cases, f, indent=1)


def phases(records, stage_bytes):
    """Medians over CTAs (cycles; bytes per cycle) from rows of RECORDS;
    `stage_bytes(row)`: bytes one K stage of the row's unit loads."""
    from nvwgmma.kernel.profile import per_sm_gaps

    rows = [dict(zip(RECORDS, r)) for r in records if r[RECORDS.index("start")]]
    med = statistics.median
    return {
        "ctas": len(rows),
        "setup": med(r["unit_start"] - r["start"] for r in rows),
        "mainloop": med(r["unit_loaded"] - r["unit_start"] for r in rows),
        "bytes_per_cycle": med(
            r["k_steps"] * stage_bytes(r) / max(r["unit_loaded"] - r["unit_start"], 1) for r in rows
        ),  # fmt: skip
        "store": med(r["unit_stored"] - r["unit_loaded"] for r in rows),
        "cta": med(r["end"] - r["start"] for r in rows),
        "units": med(r["units"] for r in rows),
        "gap": med(
            per_sm_gaps(
                [r["sm"] for r in rows], [r["start"] for r in rows], [r["end"] for r in rows]
            )
            or [0]
        ),  # fmt: skip
        # The SM clock under this load (GHz): cycles over nanoseconds.
        "ghz": med((r["end"] - r["start"]) / max(r["end_ns"] - r["start_ns"], 1) for r in rows),
        "cta_us": med((r["end_ns"] - r["start_ns"]) / 1e3 for r in rows),
        "span_us": (max(r["end_ns"] for r in rows) - min(r["start_ns"] for r in rows)) / 1e3,
    }


def run(ptx_dir: str, out_dir: str) -> int:
    sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
    os.environ["NVWGMMA_PTX_DIR"] = ptx_dir
    import torch
    from nvwgmma.kernel.gemm.kernel import KERNEL_SIGNATURE
    from nvwgmma.kernel.gemm.launch import prepare
    from run import _gpu_info, _time, write_results

    info, rows = _gpu_info(), []
    print(info, flush=True)
    slot = [name for name, _ in KERNEL_SIGNATURE].index("R")
    clock_hz = torch.cuda.get_device_properties(0).clock_rate * 1e3  # kHz
    from nvwgmma.kernel.gemm import GemmConfig

    for case in json.load(open(os.path.join(ptx_dir, "cases.json"))):
        m, n, k = case["m"], case["n"], case["k"]
        config = GemmConfig(**{**case["config"], "fusion": ()})
        x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
        launch, out = prepare(x, w.T, config=config)
        # The stamps go to their own buffer before the first launch (R's
        # default placeholder is C: they would overwrite the output).
        stamps = torch.zeros(MAX_CTAS * SLOTS, dtype=torch.int64, device="cuda")
        launch.set(slot, stamps.data_ptr())
        launch()
        ref = x.float() @ w.float().T
        error = float((out.float() - ref).norm() / ref.norm())
        ms = _time(launch)
        stamps.zero_()
        launch()
        torch.cuda.synchronize()
        rows_a, rows_b = (config.tile_m, config.tile_n)

        def stage_bytes(_row, a=rows_a, b=rows_b, kt=config.k_tile):
            return (a + b) * kt * 2

        raw = stamps.view(MAX_CTAS, SLOTS).tolist()
        row = {"m": m, "n": n, "k": k, "config": config.name, "ms": ms, "rel_err": error,
               "ctas_raw": [r for r in raw if r[RECORDS.index("start")]],
               "hbm_gb_s": (n * k + m * k + m * n) * 2 / ms / 1e6,
               **phases(raw, stage_bytes),
               "kernel_cycles": ms * 1e-3 * clock_hz}  # fmt: skip
        rows.append(row)
        print(json.dumps({k: v for k, v in row.items() if k != "ctas_raw"}), flush=True)
    write_results(
        out_dir, "gemm-timeline.json", {"info": info, "records": list(RECORDS), "rows": rows}
    )
    return 0


def main(argv=None) -> int:
    from two_step import main as two_step

    return two_step(__doc__, generate, run, argv)


if __name__ == "__main__":
    sys.exit(main())
