"""nvwgmma.kernel.profile without a GPU: stamps assemble strict-clean to
the special registers they name and a u64 store at the CTA's record;
bad requests are refused by name; the per-SM gaps and the attention
backward's instrumented build (bench/attention/timeline.py) and its phase
arithmetic."""

import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _load(path):
    """A bench script as a module of its own (both timelines are
    `timeline.py`)."""
    import importlib.util

    name = path.replace("/", "_").removesuffix(".py")
    spec = importlib.util.spec_from_file_location(name, os.path.join(ROOT, path))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _kernel(emit):
    from nvwgmma import ir
    from nvwgmma.kernel._ir import kernel_shell

    module, entry, args = kernel_shell("k", (("buf", "!llvm.ptr<1>"),), 128)
    with ir.InsertionPoint(entry.operations[0]):
        emit(args["buf"])
    module.operation.verify()
    return module


def test_stamps_assemble_to_their_registers(ctx):
    from nvwgmma.compile import compile_to_ptx
    from nvwgmma.dialects import arith, nvvm
    from nvwgmma.ir import IntegerType
    from nvwgmma.kernel import profile
    from nvwgmma.passmanager import PassManager

    def emit(buf):
        i32, i64 = IntegerType.get_signless(32), IntegerType.get_signless(64)
        first = arith.cmpi(arith.CmpIPredicate.eq, nvvm.read_ptx_sreg_tid_x(i32),
                           arith.constant(i32, 0))  # fmt: skip
        for slot, value in enumerate(profile.STAMPS):
            profile.stamp(buf, slot, slots=4, when=first, value=value)
        profile.stamp(buf, 3, slots=4, value=arith.constant(i64, 7))

    module = _kernel(emit)
    PassManager.parse("builtin.module(nvwgmma-check-protocol{strict=true})").run(module.operation)
    ptx = compile_to_ptx(module)
    for register in ("%clock64", "%globaltimer", "%smid", "%nctaid.x", "%ctaid.z"):
        assert register in ptx
    assert ptx.count("st.global.u64") + ptx.count("st.global.b64") == 4


def test_stamp_refuses_what_it_cannot_write(ctx):
    from nvwgmma.dialects import arith
    from nvwgmma.ir import IntegerType
    from nvwgmma.kernel import profile

    def emit(buf):
        with pytest.raises(ValueError, match="value must be one of clock64, globaltimer, smid or "
                                             "an i64 Value, but got 'clock'"):  # fmt: skip
            profile.stamp(buf, 0, slots=2, value="clock")
        with pytest.raises(TypeError, match="but got a i32 Value"):
            profile.stamp(buf, 0, slots=2, value=arith.constant(IntegerType.get_signless(32), 1))
        with pytest.raises(ValueError, match="slot must be"):
            profile.stamp(buf, 2, slots=2)

    _kernel(emit)


def test_per_sm_gaps_pair_each_cta_with_the_next_on_its_sm():
    from nvwgmma.kernel.profile import per_sm_gaps

    sm = [0, 1, 0, 1, 0]
    start = [100, 0, 0, 50, 230]
    end = [200, 40, 90, 60, 300]
    assert sorted(per_sm_gaps(sm, start, end)) == [10, 10, 30]


@pytest.fixture
def timeline(monkeypatch):
    """bench/attention/timeline.py, its patches of the backward builder
    undone after the test."""
    from nvwgmma.kernel.attention.backward import kernel

    for name in ("_sequence", "_iteration", "_finish", "_store_dq_warp"):
        monkeypatch.setattr(kernel._Kernel, name, getattr(kernel._Kernel, name))
    return _load("bench/attention/timeline.py")


def test_instrumented_backward_stamps_every_record(ctx, timeline):
    """The instrumented head dim 128 backward: strict-checker clean, and a
    store for every record (the SM, 7 clocks, the block count)."""
    from nvwgmma.compile import compile_to_ptx
    from nvwgmma.kernel.attention.backward import build_attention_backward
    from nvwgmma.kernel.attention.backward.config import default_backward_config
    from nvwgmma.passmanager import PassManager

    timeline.instrument()
    module, _ = build_attention_backward(default_backward_config(128))
    PassManager.parse("builtin.module(nvwgmma-check-protocol{strict=true})").run(module.operation)
    ptx = compile_to_ptx(module)
    assert ptx.count("%clock64") == 7 and "%smid" in ptx
    assert ptx.count("st.global.u64") + ptx.count("st.global.b64") == len(timeline.RECORDS)


def test_phases_from_records(timeline):
    """Two CTAs on SM 0, one after the other, and one on SM 1 with a
    single block (no per-block figure from it)."""
    rows = [
        # sm, start, kv, second, loop_end, stored, stored_other, dq_end, blocks
        [0, 0, 30, 70, 470, 500, 510, 505, 11],
        [0, 520, 560, 600, 1000, 1030, 1020, 1040, 11],
        [1, 0, 40, 0, 90, 120, 125, 100, 1],
    ]
    p = timeline.phases(rows)
    assert p["prologue"] == 40 and p["block"] == 40 and p["gap"] == 10
    assert p["tail"] == 40 and p["cta"] == 510 and p["blocks"] == 11


@pytest.fixture
def gemm_timeline(monkeypatch):
    """bench/gemm/timeline.py, its patches of the GEMM schedule undone
    after the test."""
    from nvwgmma.kernel.gemm import schedule

    for name in ("consumer", "mainloop", "finish_tile", "done"):
        monkeypatch.setattr(schedule._Roles, name, getattr(schedule._Roles, name))
    return _load("bench/gemm/timeline.py")


@pytest.mark.parametrize("shape", [(16, 14336, 4096), (4096, 4096, 4096)])
def test_instrumented_gemm_stamps_every_record(ctx, gemm_timeline, shape):
    """The instrumented kernel matmul picks (the decode path, a large
    tile): strict-checker clean, 5 clock reads, 2 of the global timer and a
    store per record."""
    from gemm_checks import assert_clean

    gemm_timeline.instrument()
    # Not through assert_clean's cache: it holds the production kernels
    # under the same configs (and must not keep this one).
    _meta, ptx = assert_clean.__wrapped__(gemm_timeline._config(*shape))
    assert ptx.count("%clock64") == 5 and ptx.count("%globaltimer") == 2 and "%smid" in ptx
    assert ptx.count("st.global.u64") + ptx.count("st.global.b64") == len(gemm_timeline.RECORDS)


def test_gemm_phases_from_records(gemm_timeline):
    rows = [
        # sm, start, unit_start, unit_loaded, unit_stored, end, k_steps, units,
        # start_ns, end_ns
        [0, 10, 30, 1030, 1100, 1120, 64, 1, 5000, 5740],
        [1, 20, 60, 860, 940, 960, 64, 1, 5100, 5600],
        [0, 0, 0, 0, 0, 0, 0, 0, 0, 0],  # a CTA that never ran (no start)
    ]
    p = gemm_timeline.phases(rows, lambda r: 100)
    assert p["ctas"] == 2 and p["setup"] == 30 and p["mainloop"] == 900
    assert p["bytes_per_cycle"] == pytest.approx((6.4 + 8.0) / 2)
    assert p["store"] == 75 and p["cta"] == 1025 and p["gap"] == 0
    # 1110 cycles in 740 ns and 940 in 500: 1.5 and 1.88 GHz.
    assert p["ghz"] == pytest.approx((1.5 + 1.88) / 2)
    assert p["cta_us"] == pytest.approx(0.62) and p["span_us"] == pytest.approx(0.74)


def test_instrumenting_needs_no_context(timeline, gemm_timeline):
    """`generate` patches the builders before any MLIR context exists."""
    timeline.instrument()
    gemm_timeline.instrument()
