"""The Python API contract: bad arguments raise a clear Python exception up
front, never an abort and never invalid IR found later. Starts with the five
calls reported by a new user."""

import pytest


@pytest.fixture
def env(body):
    from nvwgmma import ir
    from nvwgmma.dialects import arith
    from nvwgmma.dialects import nvwgmma as wg

    module, (desc_a, desc_b, pred) = body
    f32 = arith.constant(ir.F32Type.get(), 1.0)
    i32 = arith.constant(ir.IntegerType.get_signless(32), 1)
    return module, wg, desc_a, desc_b, pred, f32, i32


def test_huge_n_is_a_value_error_not_bad_alloc(env):
    _, wg, *_ = env
    with pytest.raises(
        ValueError, match=r"n must be a multiple of 8 in \[8, 256\], but got 2147483648"
    ):
        wg.zero_accumulator("f32", 2**31)


@pytest.mark.parametrize("n", [7, -8, 0, 264, 12])
def test_n_of_no_wgmma_shape_is_refused(env, n):
    _, wg, *_ = env
    with pytest.raises(ValueError, match=rf"n must be a multiple of 8 in \[8, 256\], but got {n}"):
        wg.zero_accumulator("f32", n)
    with pytest.raises(ValueError, match="n must be a multiple of 8"):
        wg.accumulator_type("f16", n)


def test_descriptor_of_an_f32_value_is_a_type_error(env):
    module, wg, _, _, _, f32, _ = env
    with pytest.raises(
        TypeError, match=r"address must be an !llvm.ptr .* but got a Value of type f32"
    ):
        wg.descriptor(f32, leading_byte_offset=16, stride_byte_offset=1024)
    module.operation.verify()


def test_advance_descriptor_of_a_non_i64_is_a_type_error(env):
    module, wg, _, _, _, _, i32 = env
    with pytest.raises(TypeError, match=r"desc must be an i64 Value, but got a Value of type i32"):
        wg.advance_descriptor(i32, 32)
    with pytest.raises(TypeError, match="byte_offset must be an int"):
        wg.advance_descriptor(env[2], "32")
    module.operation.verify()


def test_mma_async_with_none_says_what_it_expected(env):
    _, wg, desc_a, desc_b, *_ = env
    with pytest.raises(TypeError, match="acc must be an MLIR Value, but got None"):
        wg.mma_async(None, desc_a, desc_b, shape=(64, 8, 16), a_type="f16", d_type="f32")
    acc = wg.zero_accumulator("f32", 8)
    with pytest.raises(TypeError, match="a must be an MLIR Value, but got int 3"):
        wg.mma_async(acc, 3, desc_b, shape=(64, 8, 16), a_type="f16", d_type="f32")


def test_compile_to_ptx_tool_crash_is_one_clean_paragraph(ctx, monkeypatch, tmp_path):
    """An LLVM tool that aborts with a stack dump becomes a CompileError that
    names the stage and keeps the message, without the dump."""
    from nvwgmma import compile as c

    fake = tmp_path / "llc"
    fake.write_text(
        "#!/bin/sh\ncat >/dev/null\n"
        "echo 'LLVM ERROR: Cannot select: intrinsic %llvm.nvvm.cp.async.bulk.tensor.g2s.cta.tile.2d' >&2\n"
        "echo 'PLEASE submit a bug report to https://example.invalid and include the crash backtrace.' >&2\n"
        "echo 'Stack dump:' >&2\n"
        "echo '0.\tProgram arguments: llc -march=nvptx64' >&2\n"
        "echo ' #0 0x00007f0000001234 llvm::sys::PrintStackTrace(llvm::raw_ostream&, int)' >&2\n"
        "kill -6 $$\n"
    )
    fake.chmod(0o755)
    monkeypatch.setenv("NVWGMMA_LLC", str(fake))
    from nvwgmma import ir

    module = ir.Module.parse("llvm.func @k() attributes {nvvm.kernel} { llvm.return }")
    with pytest.raises(c.CompileError) as info:
        c.compile_to_ptx(module)
    text = str(info.value)
    assert text.startswith("llc crashed (signal 6) while compiling the module:")
    assert "Cannot select: intrinsic" in text
    assert "Stack dump" not in text and "#0 0x" not in text and "PLEASE" not in text


@pytest.mark.parametrize(
    "call,error,message",
    [
        (lambda wg, e: wg.wait_group("1"), TypeError, "n must be an int"),
        (lambda wg, e: wg.shape_attr("64x8x16"), TypeError, "shape must be"),
        (lambda wg, e: wg.shape_attr((64, 8)), TypeError, "shape must be"),
        (lambda wg, e: wg.a_fragment_type("i32"), TypeError, "member must be an MLIR Type"),
        (lambda wg, e: wg.ptx(None), TypeError, "op must be an op"),
        (lambda wg, e: wg.ptx(e[2]), TypeError, "op must be an op"),
        (
            lambda wg, e: wg.mma_async(
                wg.zero_accumulator("f32", 8),
                e[2],
                e[3],
                shape=(64, 8, 16),
                a_type="f16",
                d_type="f32",
                satfinite="no",
            ),
            TypeError,
            "satfinite must be a bool",
        ),
        (
            lambda wg, e: wg.mma_async(
                wg.zero_accumulator("f32", 8), e[2], e[3], shape=(64, 8, 16), a_type="f16"
            ),
            TypeError,
            "expected the keywords d_type",
        ),
        (
            lambda wg, e: wg.mma_async_sp(
                wg.zero_accumulator("f32", 8),
                e[2],
                e[3],
                e[6],
                selector=2**64,
                shape=(64, 8, 32),
                a_type="f16",
                d_type="f32",
            ),
            ValueError,
            "selector must be in",
        ),
    ],
)
def test_bad_arguments_raise_before_building(env, call, error, message):
    module, wg, *_ = env
    before = str(module)
    with pytest.raises(error, match=message):
        call(wg, env)
    # Nothing half-built is left behind, except the accumulators the
    # lambdas made before the failing call.
    module.operation.verify()
    assert "nvwgmma" not in str(module).replace(before, "")


def test_rule_breaks_carry_their_label_as_data(env):
    _, wg, desc_a, desc_b, _, _, i32 = env
    acc = wg.zero_accumulator("f32", 8)
    with pytest.raises(wg.WgmmaRuleError) as info:
        wg.mma_async_sp(acc, desc_a, desc_b, desc_a, shape=(64, 8, 32), a_type="f16", d_type="f32")
    assert info.value.label == "mma_async_sp_c4"
    with pytest.raises(wg.WgmmaRuleError) as info:
        wg.mma_async(
            acc, desc_a, desc_b, shape=(64, 8, 16), a_type="f16", d_type="f32", scale_d=i32
        )
    assert info.value.label == "mma_async_c16"


def test_contexts_left_entered_do_not_abort_at_exit(tmp_path):
    """A script that enters a Context, Location and InsertionPoint and never
    leaves them exits cleanly (MLIR's bindings alone abort in finalization)."""
    import subprocess
    import sys

    script = tmp_path / "leave.py"
    script.write_text(
        "from nvwgmma import ir\n"
        "ctx = ir.Context(); ctx.__enter__()\n"
        "ir.Location.unknown().__enter__()\n"
        "m = ir.Module.parse('func.func @f() { return }')\n"
        "ir.InsertionPoint(m.body).__enter__()\n"
        "print('built')\n"
    )
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stdout == "built\n", proc.stderr[-2000:]


def test_ops_outside_a_function_break_placement_c1(ctx):
    """Built at module level an nvwgmma op has nothing to lower into
    (found by the IR fuzzer: it verified, then crashed mlir-translate);
    a detached op is judged once placed."""
    from nvwgmma import ir
    from nvwgmma.dialects import nvwgmma as wg

    module = ir.Module.create()
    with ir.InsertionPoint(module.body):
        with pytest.raises(wg.WgmmaRuleError) as info:
            wg.wait_group(0)
    assert info.value.label == "placement_c1"
    assert "must be inside a function body, but got this one in 'builtin.module'" in str(info.value)
    detached = wg.wait_group(1)  # no insertion point: not placed yet
    assert detached.operation.verify()


def test_compile_refuses_function_names_ptx_cannot_take(ctx):
    """Found by the IR fuzzer: a kernel named "nvwgmma.mma_async" verified
    and lowered, and ptxas failed on the name with a syntax error."""
    from nvwgmma import ir
    from nvwgmma.compile import CompileError, compile_to_ptx

    module = ir.Module.parse('llvm.func @"my.kernel"() attributes {nvvm.kernel} { llvm.return }')
    with pytest.raises(
        CompileError, match="function names must be PTX identifiers .* but got 'my.kernel'"
    ):
        compile_to_ptx(module)
