"""Where matmul and attention run, without a GPU (a recording driver):
every kernel is loaded for and launched on its operands' device whatever
context is current, and the current one is given back; tensor maps travel
in the launch parameters; inside a stream capture a launch gets scratch
memory of its own, zeroed by a captured memset, and is never shared with
eager calls. (On two GPUs: test/gpu/deploy.py.)"""

import ctypes

import pytest
from test_gemm_launch import Array, _record, col_major

CAPTURING = "CU_STREAM_CAPTURE_STATUS_ACTIVE"


def _split_k():
    from nvwgmma.kernel.gemm import GemmConfig

    return GemmConfig(
        dtype="f16", out_dtype="f16", tile_n=128, stages=6, scheduler="split_k", splits=4
    )


def _operands(device, m=128):
    a = Array((m, 14336), address=(1 << 20) + (device << 36), device=device)
    b = col_major(14336, 4096, address=(1 << 28) + (device << 36), device=device)
    return a, b, Array((m, 4096), address=(1 << 32) + (device << 36), device=device)


def test_launches_run_in_the_operands_context_whatever_is_current(ctx, tmp_path, monkeypatch):
    """Operands on device 1 while device 0's context is current: the kernel
    is loaded into device 1's primary context and launched there, and
    device 0's context is current again after the call; each device loads
    its own module and gets its own workspace."""
    from nvwgmma.kernel.gemm import matmul

    driver = _record(monkeypatch, tmp_path)
    driver.context = 1  # device 0's primary context, as torch leaves it
    a, b, c = _operands(1)
    matmul(a, b, out=c, stream=7, config=_split_k())
    assert driver.loaded == [2] and driver.launch_contexts == [2] and driver.context == 1
    first = driver.workspace
    a0, b0, c0 = _operands(0)
    matmul(a0, b0, out=c0, stream=7, config=_split_k())
    assert driver.loaded == [2, 1] and driver.launch_contexts == [2, 1]
    assert driver.workspace != first  # same stream number, another context
    matmul(a, b, out=c, stream=7, config=_split_k())  # the cached launch, still on device 1
    assert driver.launch_contexts == [2, 1, 2] and driver.context == 1 and driver.pushed == ()


def test_gemms_launch_as_programmatic_dependent_launches(ctx, tmp_path, monkeypatch):
    """A generated GEMM launches with programmatic stream serialization
    (it waits on the GPU before touching memory); NVWGMMA_PDL=0 launches
    it plainly, read when a launch is prepared."""
    from nvwgmma.kernel.gemm import launch

    driver = _record(monkeypatch, tmp_path)
    a, b, c = _operands(0)
    prepared, _ = launch.prepare(a, b, out=c, stream=7, config=_split_k())
    prepared()
    assert prepared.programmatic
    assert driver.attributes == [
        [("CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION",
          {"programmaticStreamSerializationAllowed": 1})]
    ]  # fmt: skip
    ((grid, block, smem, stream, _),) = driver.launches
    assert block == (384, 1, 1) and stream == 7 and grid[1:] == (1, 1) and smem > 48 * 1024
    monkeypatch.setenv("NVWGMMA_PDL", "0")
    plain, _ = launch.prepare(a, b, out=c, stream=7, config=_split_k())
    plain()
    assert not plain.programmatic and len(driver.attributes) == 1 and len(driver.launches) == 2
    assert driver.launches[1][:4] == driver.launches[0][:4]


def test_kernels_without_the_wait_launch_plainly(ctx, tmp_path, monkeypatch):
    """Only a kernel made programmatic (its meta says it waits) launches
    so: a plain runtime.Kernel never does, whatever NVWGMMA_PDL says."""
    from nvwgmma.kernel import runtime

    driver = _record(monkeypatch, tmp_path)
    monkeypatch.setenv("NVWGMMA_PDL", "1")
    kernel = runtime.Kernel("// ptx", "k")
    kernel.launcher(grid=(1, 1, 1), block=(32, 1, 1), args=[("i32", 0)] * 15)()
    assert driver.attributes == [] and len(driver.launches) == 1
    with pytest.raises(TypeError, match="programmatic must be a bool"):
        runtime.Kernel("// ptx", "k", programmatic="yes")


def test_tensor_maps_are_launch_parameters(ctx, tmp_path, monkeypatch):
    """A, B and C's maps are 128-byte parameters on 64-byte boundaries,
    holding what the encoder returned; nothing is copied to the device."""
    from nvwgmma.kernel.gemm import launch

    driver = _record(monkeypatch, tmp_path)
    a, b, c = _operands(0, m=4096)  # data-parallel: no workspace
    prepared, _ = launch.prepare(a, b, out=c, stream=7)
    for index, encoded in zip((0, 1, 3), range(1, 4)):
        value = prepared.values[index]
        assert value.address % 64 == 0
        words = ctypes.cast(value.address, ctypes.POINTER(ctypes.c_uint64))
        assert [words[i] for i in range(16)] == [encoded] * 16
    assert driver.copies == 0 and driver.allocated == []


def test_capture_gets_scratch_of_its_own(ctx, tmp_path, monkeypatch):
    """A split-K call while its stream captures: the workspace is allocated
    for this launch (relaxed capture mode) and zeroed at once on a stream
    of its own (no memset node for every replay), and the launch is not
    kept for eager calls; an eager call's launch is not reused inside a
    capture."""
    from nvwgmma.kernel.gemm import launch, matmul

    driver = _record(monkeypatch, tmp_path)
    a, b, c = _operands(0)
    matmul(a, b, out=c, stream=7, config=_split_k())  # eager: the stream's workspace
    eager = driver.workspace, driver.flags
    assert len(launch._recent) == 1
    driver.capture = CAPTURING
    for _ in range(2):
        matmul(a, b, out=c, stream=7, config=_split_k())
        assert driver.workspace not in eager and driver.flags not in eager
        assert driver.zeroed[-1][0] == driver.flags
        assert driver.zeroed[-1][3] == "zeroing stream" == driver.synchronized[-1]
    assert len(launch._recent) == 1 and len(driver.launches) == 3
    assert "CU_STREAM_CAPTURE_MODE_RELAXED" in driver.modes
    driver.capture = "CU_STREAM_CAPTURE_STATUS_NONE"
    matmul(a, b, out=c, stream=7, config=_split_k())
    assert (driver.workspace, driver.flags) == eager


def test_data_parallel_launch_is_reused_in_capture(ctx, tmp_path, monkeypatch):
    """A launch without scratch memory is safe to replay from a graph: the
    capture reuses it, checks and plan skipped."""
    from nvwgmma.kernel.gemm import launch, matmul

    driver = _record(monkeypatch, tmp_path)
    a, b, c = _operands(0, m=4096)
    matmul(a, b, out=c, stream=7)
    assert driver.workspace == 0
    driver.capture = CAPTURING
    plans = []
    monkeypatch.setattr(launch, "plan", lambda *a, **kw: plans.append(1))
    assert matmul(a, b, out=c, stream=7) is c
    assert plans == [] and len(driver.launches) == 2 and driver.allocated == []


def test_bad_device_is_refused(ctx, tmp_path, monkeypatch):
    from nvwgmma.kernel import runtime

    _record(monkeypatch, tmp_path)
    with pytest.raises(ValueError, match=r"device must be one of 0..1, but got 2"):
        with runtime.on_device(2):
            pass


def test_map_arguments_must_be_encoded_maps(ctx, tmp_path, monkeypatch):
    from nvwgmma.kernel import runtime

    _record(monkeypatch, tmp_path)
    kernel = runtime.Kernel("// k\n", "k")
    with pytest.raises(ValueError, match="a map argument must be 128 bytes"):
        kernel.launcher(grid=(1, 1, 1), block=(1, 1, 1), args=[("map", b"short")])
    launch = kernel.launcher(grid=(1, 1, 1), block=(1, 1, 1), args=[("map", bytes(128))])
    launch.set(0, bytes(range(128)))
    assert launch.values[0].value == bytes(range(128))


def test_cached_launches_hold_no_tensor(ctx, tmp_path, monkeypatch):
    """The launch caches keep no operand or output alive: a held tensor
    keeps its memory from the allocator, so a model's next forward gets
    new addresses and misses the cache on every call (and inductor's
    CUDA-graph trees refuse live allocations they do not track)."""
    import gc
    import weakref

    from nvwgmma.kernel.attention import launch as attention_launch
    from nvwgmma.kernel.gemm import matmul
    from test_attention import _bf16_tensor, _Driver
    from test_gemm_launch import record_runtime

    driver = record_runtime(monkeypatch, tmp_path, _Driver())
    monkeypatch.setattr(attention_launch, "_recent", {})
    monkeypatch.setattr(attention_launch, "_tensor", _bf16_tensor(attention_launch._tensor))
    d = 128
    q, k = Array((2, 300, 8, d), "<V2"), Array((2, 500, 2, d), "<V2", address=2 << 20)
    v = Array((2, 500, 2, d), "<V2", address=4 << 20)
    out = Array((2, 300, 8, d), "<V2", address=3 << 20)
    lse = Array((2, 8, 300), "<f4", address=5 << 20)
    attention_launch.attention(q, k, v, causal=True, out=out, lse=lse)
    assert len(driver.launches) == 1
    driver = _record(monkeypatch, tmp_path)  # the GEMM's parameters
    a, b, c = _operands(0, m=4096)
    matmul(a, b, out=c, stream=7)
    assert len(driver.launches) == 1
    refs = [weakref.ref(t) for t in (q, k, v, out, lse, a, b, c)]
    del q, k, v, out, lse, a, b, c
    gc.collect()
    assert [r() for r in refs] == [None] * 8


def test_cache_files_appear_whole(tmp_path):
    """A compiled kernel's files are written aside and renamed into place
    (processes compiling the same kernel at once never read half a file):
    nothing else is left, and a failed build leaves nothing."""
    import os

    from nvwgmma.kernel import _ir, cache

    def build():
        module, _, _ = _ir.kernel_shell("k", (("x", "i32"),), 32)
        return module, {"kernel": "k", "dynamic_smem": 0}

    path = cache.write(str(tmp_path), "k-0", build)
    assert sorted(os.listdir(tmp_path)) == ["k-0.json", "k-0.ptx"]
    assert ".entry k" in open(path).read()

    def broken():
        raise ValueError("no kernel")

    with pytest.raises(ValueError, match="no kernel"):
        cache.write(str(tmp_path / "other"), "k-1", broken)
    assert not (tmp_path / "other").exists()


def test_cache_keys_follow_the_generator_code(tmp_path, monkeypatch):
    """A kernel's cache key changes with the generator's code: PTX cached by
    an older nvwgmma, or by an earlier version of a custom builder, is never
    served for the current one."""
    from nvwgmma.kernel import cache
    from nvwgmma.kernel.gemm import GemmConfig
    from nvwgmma.kernel.gemm.launch import kernel_key

    builder = tmp_path / "my_builder.py"
    builder.write_text("def build(): return 1\n")
    first = cache.key("mine", ("fields",), sources=[builder])
    builder.write_text("def build(): return 2\n")
    monkeypatch.setattr(cache, "_digests", {})
    assert cache.key("mine", ("fields",), sources=[builder]) != first
    library = kernel_key(GemmConfig())
    kernel_key.cache_clear()
    monkeypatch.setattr(cache, "generator_digest", lambda *s: "another generator")
    assert kernel_key(GemmConfig()) != library
    kernel_key.cache_clear()


def test_threads_repeating_a_call_get_their_own_outputs(ctx, tmp_path, monkeypatch):
    """Threads repeating one call share its cached launch: each call's
    output address is written into the launch's parameters and launched as
    one step, so every launch writes the output its own caller gets back."""
    import sys
    import threading

    from nvwgmma.kernel.gemm import launch, matmul

    driver = _record(monkeypatch, tmp_path)
    launched = []
    record = driver.cuLaunchKernel

    def cuLaunchKernel(*args):
        result = record(*args)
        launched.append((threading.get_ident(), driver.c))
        return result

    driver.cuLaunchKernel = cuLaunchKernel
    counter = iter(range(1, 10**6))
    lock = threading.Lock()

    def allocator(self, shape, dtype):
        def new():
            with lock:
                return Array(shape, address=next(counter) << 24)

        return new

    monkeypatch.setattr(launch._Tensor, "allocator", allocator)
    a, b, _ = _operands(0, m=4096)
    matmul(a, b, stream=7)  # prepared and cached
    got = {}

    def work():
        mine = got.setdefault(threading.get_ident(), [])
        for _ in range(300):
            mine.append(matmul(a, b, stream=7).__cuda_array_interface__["data"][0])

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    for ident, outs in got.items():
        assert sorted(c for who, c in launched if who == ident) == sorted(outs)


def test_named_arguments_follow_the_signature():
    from nvwgmma.kernel import runtime
    from nvwgmma.kernel._ir import TENSOR_MAP_PARAM

    signature = [["tm", TENSOR_MAP_PARAM], ["C", "!llvm.ptr<1>"], ["M", "i32"], ["s", "f32"]]
    blob = bytes(128)
    assert runtime.named_args(signature, M=7, tm=blob, s=0.5, C=1 << 20) == [
        ("map", blob), ("u64", 1 << 20), ("i32", 7), ("f32", 0.5)]  # fmt: skip
    with pytest.raises(ValueError, match=r"1 missing \(s\) and unknown \(N\)"):
        runtime.named_args(signature, M=7, tm=blob, C=1, N=3)
    with pytest.raises(ValueError, match="parameter x's type must be a map, pointer"):
        runtime.named_args([["x", "vector<2xf32>"]], x=1)
