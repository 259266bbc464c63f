"""matmul's checks and choices, without a GPU: every bad call raises a
clear error before anything is launched or allocated, a good one reduces to
the Problem and configuration the launcher uses, and --precompile writes
the PTX a table of problems needs. (The launches themselves run on the GPU:
bench/gemm/library.py.)"""

import json
import re

import pytest
from nvwgmma.kernel._ir import TENSOR_MAP_PARAM


class Array:
    """A device array as cupy presents it: __cuda_array_interface__ only."""

    def __init__(self, shape, typestr="<f2", strides=None, address=1 << 20, device=0):
        self.device = type("Device", (), {"id": device})()
        self.__cuda_array_interface__ = {
            "shape": tuple(shape),
            "typestr": typestr,
            "strides": strides,
            "data": (address, False),
            "version": 3,
        }


def _plan(a, b, **kwargs):
    from nvwgmma.kernel.gemm.launch import plan

    return plan(a, b, **kwargs)


def col_major(rows, cols, **kw):
    return Array((rows, cols), strides=(2, 2 * rows), **kw)


@pytest.mark.parametrize(
    "a,b,kwargs,message",
    [
        (Array((64, 64), "<f4"), Array((64, 64), "<f4"), {}, "a's dtype must be one of bf16, f16"),
        (Array((64, 64)), Array((64, 64), "<f4"), {}, r"b's dtype must be a's \(f16\), but got f32"),
        (Array((64, 64)), Array((32, 64)), {}, r"a's columns and b's rows must agree \(K\)"),
        (Array((2, 64, 64)), Array((3, 64, 64)), {}, "b's batch must be a's"),
        (Array((64, 32), strides=(128, 4)), Array((32, 64)), {}, "must be row-major or column-major"),
        (Array((64, 7)), col_major(7, 64), {}, "a's leading stride must be a multiple of 16 bytes"),
        (Array((64, 64), address=(1 << 20) + 2), Array((64, 64)), {}, "a must start at a 16-byte aligned"),
        (Array((0, 64)), Array((64, 64)), {}, "every dimension must be at least 1"),
        (Array((64, 64)), Array((64, 64)), {"activation": "tanh"}, "activation must be one of"),
        (Array((64, 64)), Array((64, 64)), {"bias": Array((63,))}, "bias must be a contiguous vector of N = 64"),
        (Array((64, 64)), Array((64, 64)), {"residual": Array((64, 32))}, "residual must be contiguous"),
        (Array((64, 64)), Array((64, 64)), {"beta": 0.5}, "beta scales the residual"),
        (Array((64, 64)), Array((64, 64)), {"scale": 2.0}, "so out_dtype must be e4m3 or e5m2"),
        (Array((64, 64)), Array((64, 64)), {"out": Array((64, 32))}, r"out must have shape \(64, 64\)"),
        (Array((64, 64)), Array((64, 64)), {"out": Array((64, 64), "<f4"), "out_dtype": "f16"}, "out's dtype must be"),
        (Array((64, 64)), Array((64, 64)), {"out_dtype": "s8"}, "out_dtype must be one of"),
    ],
)  # fmt: skip
def test_bad_calls_raise_before_launch(a, b, kwargs, message):
    with pytest.raises(ValueError, match=message):
        _plan(a, b, **kwargs)


def test_host_memory_is_refused():
    import numpy as np

    with pytest.raises(TypeError, match="a must be a torch tensor or an array with __cuda_array"):
        _plan(np.zeros((64, 64), np.float16), Array((64, 64)))


def test_fp8_needs_k_major_operands():
    from nvwgmma.kernel.gemm.launch import _Tensor

    a, b = Array((64, 64)), Array((64, 64))
    original = _Tensor.__init__

    def as_fp8(self, value, what):
        original(self, value, what)
        self.dtype = "e4m3"

    _Tensor.__init__ = as_fp8
    try:
        with pytest.raises(ValueError, match="fp8 inputs must be K-major"):
            _plan(a, b, out=Array((64, 64)), out_dtype="e4m3")
    finally:
        _Tensor.__init__ = original


@pytest.mark.parametrize(
    "a,b,expected",
    [
        # a row-major, b = w.T of an N x K row-major w: both K-major, C aligned
        (Array((1000, 4096)), col_major(4096, 4104), ("K", "K", 1000, 4104, 4096, 1, True)),
        # a column-major, b row-major K x N: both MN-major; N = 7 rows of C are 14 bytes
        (col_major(64, 128), Array((128, 8)), ("M", "N", 64, 8, 128, 1, True)),
        (Array((7, 64)), col_major(64, 7), ("K", "K", 7, 7, 64, 1, False)),
        # a batch of a against one b: the batch folds into M
        (Array((4, 100, 64)), Array((64, 32)), ("K", "N", 400, 32, 64, 1, True)),
        (Array((4, 100, 64)), Array((4, 64, 32)), ("K", "N", 100, 32, 64, 4, True)),
        # one row: its stride is never used
        (Array((1, 4096)), col_major(4096, 4096), ("K", "K", 1, 4096, 4096, 1, True)),
    ],
)
def test_calls_reduce_to_a_problem(a, b, expected):
    from nvwgmma.kernel.gemm.launch import problem_config

    m, n = expected[2], expected[3]
    batch_shape = (expected[5],) if expected[5] > 1 else ()
    out = (
        Array((*batch_shape, m, n))
        if len(a.__cuda_array_interface__["shape"]) == 2 or batch_shape
        else Array((4, 100, n))
    )
    p, _, _ = _plan(a, b, out=out)
    assert (p.a_major, p.b_major, p.m, p.n, p.k, p.batch, p.c_aligned) == expected
    config = problem_config(p)
    if config.store_transposed:  # the decode path (M <= 32): C^T, 16-bit C through TMA
        assert p.m <= 32 and config.epilogue == ("tma" if p.c_aligned else "registers")
        assert (config.a_major, config.b_major) == ("K" if p.b_major == "K" else "M", "K")
        return
    assert config.epilogue == ("tma" if p.c_aligned else "registers")
    assert (config.a_major, config.b_major) == (p.a_major, p.b_major)


def test_fused_call_builds_the_chain():
    from nvwgmma.kernel.gemm import Activation, Alpha, Bias, Residual

    p, _, _ = _plan(
        Array((64, 64)), Array((64, 64)), out=Array((64, 64)), bias=Array((64,), "<f4"),
        activation="gelu", residual=Array((64, 64)), beta=0.5, alpha=2.0,
    )  # fmt: skip
    assert p.fusion == (Alpha(), Bias(dtype="f32"), Activation("gelu"), Residual("f16", True))


def test_precompile_writes_what_a_table_needs(tmp_path):
    import subprocess
    import sys

    from nvwgmma.kernel.gemm.launch import Problem, kernel_key, problem_config

    table = tmp_path / "table.json"
    rows = [
        dict(m=1000, n=4096, k=4096, batch=1, dtype="bf16", out_dtype="bf16", a_major="K",
             b_major="K", c_aligned=True, fusion=["bias", "gelu"]),
        dict(m=7, n=7, k=64, batch=1, dtype="bf16", out_dtype="bf16", a_major="K",
             b_major="K", c_aligned=False),
    ]  # fmt: skip
    table.write_text(json.dumps(rows))
    out = tmp_path / "ptx"
    proc = subprocess.run(
        [sys.executable, "-m", "nvwgmma.kernel.gemm", "--precompile", str(out), "--table", str(table)],
        capture_output=True,
        text=True,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    from nvwgmma.kernel.gemm import Activation, Bias

    expected = [
        Problem(1000, 4096, 4096, 1, "bf16", "bf16", "K", "K", True, (Bias(), Activation("gelu"))),
        Problem(7, 7, 64, 1, "bf16", "bf16", "K", "K", False),
    ]
    for problem in expected:
        stem = out / kernel_key(problem_config(problem))
        assert ".entry gemm" in (stem.with_suffix(".ptx")).read_text()
        assert json.loads(stem.with_suffix(".json").read_text())["signature"][0] == [
            "tmA",
            TENSOR_MAP_PARAM,
        ]
    assert len(list(out.glob("*.ptx"))) == 2


def test_missing_kernel_without_compiler_says_how_to_precompile(tmp_path, monkeypatch):
    from nvwgmma.kernel import cache
    from nvwgmma.kernel.gemm import GemmConfig, launch

    monkeypatch.setenv("NVWGMMA_PTX_DIR", str(tmp_path / "none"))
    monkeypatch.setenv("NVWGMMA_CACHE_DIR", str(tmp_path / "cache"))

    def no_compiler(directory, stem, build):
        raise ImportError("No module named 'nvwgmma.ir'")

    monkeypatch.setattr(cache, "write", no_compiler)
    with pytest.raises(RuntimeError, match="python -m nvwgmma.kernel.gemm --precompile DIR"):
        launch.load_kernel(GemmConfig(tile_n=128, stages=5))


class RecordingDriver:
    """The CUDA driver calls matmul makes, recorded instead of run."""

    def __init__(self):
        self.encoded, self.launches, self.copies = [], [], 0
        self.allocated, self.zeroed, self.workspace, self.flags = [], [], None, None
        self.loaded, self.launch_contexts, self.modes, self.synchronized = [], [], [], []
        self.attributes = []  # of each cuLaunchKernelEx

    def __getattr__(self, name):  # enums: CU_* names come back as themselves
        return type(name, (), {"__getattr__": lambda self, attr: attr})()

    def cuInit(self, flags):
        return (0,)

    context = 1  # the current context; device d's primary context is d + 1
    pushed = ()
    capture = "CU_STREAM_CAPTURE_STATUS_NONE"

    def cuCtxGetCurrent(self):
        return (0, self.context)

    def cuDeviceGetCount(self):
        return (0, 2)

    def cuDeviceGet(self, device):
        return (0, device)

    def cuDevicePrimaryCtxRetain(self, device):
        return (0, device + 1)

    def cuCtxPushCurrent(self, context):
        self.pushed += (self.context,)
        self.context = context
        return (0,)

    def cuCtxPopCurrent(self):
        self.context, self.pushed = self.pushed[-1], self.pushed[:-1]
        return (0, self.context)

    def cuStreamIsCapturing(self, stream):
        return (0, self.capture)

    def cuStreamCreate(self, flags):
        return (0, "zeroing stream")

    def cuStreamSynchronize(self, stream):
        self.synchronized.append(stream)
        return (0,)

    def cuThreadExchangeStreamCaptureMode(self, mode):
        self.modes.append(mode)
        return (0, mode)

    def cuCtxGetDevice(self):
        return (0, 0)

    def cuDeviceGetAttribute(self, attribute, device):
        return (0, 132)

    def cuDeviceGetName(self, length, device):
        return 0, b"NVIDIA H100 80GB HBM3" + b"\0" * (length - 21)

    def cuModuleLoadData(self, image):
        assert image.startswith(b"//") and image.endswith(b"\0")
        return (0, f"module in context {self.context}")

    def cuModuleGetFunction(self, module, name):
        self.loaded.append(self.context)
        return (0, name.decode())

    def cuFuncSetAttribute(self, function, attribute, value):
        self.dynamic_smem = value
        return (0,)

    def CUstream(self, handle):
        return handle

    def cuuint64_t(self, value):
        return value

    cuuint32_t = cuuint64_t

    def cuMemAlloc(self, size):
        self.allocated.append(size)
        return (0, (1 << 30) * len(self.allocated))

    def cuMemsetD8Async(self, address, value, size, stream):
        self.zeroed.append((address, value, size, stream))
        return (0,)

    def cuMemcpyHtoD(self, address, blob, size):
        self.copies += 1
        return (0,)

    def cuTensorMapEncodeTiled(self, dtype, rank, address, sizes, strides, box, *rest):
        self.encoded.append((dtype, address, tuple(sizes), tuple(strides), tuple(box)))
        return (0, type("Map", (), {"opaque": [len(self.encoded)] * 16})())

    class CUlaunchConfig:
        pass

    class CUlaunchAttribute:
        def __init__(self):
            self.value = type("Value", (), {})()

    def cuLaunchKernelEx(self, config, function, params, extra):
        """Recorded as cuLaunchKernel, its attributes in `attributes`."""
        self.attributes.append([(a.id, vars(a.value)) for a in config.attrs[: config.numAttrs]])
        return self.cuLaunchKernel(
            function, config.gridDimX, config.gridDimY, config.gridDimZ, config.blockDimX,
            config.blockDimY, config.blockDimZ, config.sharedMemBytes, config.hStream, params,
            extra,
        )  # fmt: skip

    def cuLaunchKernel(self, function, gx, gy, gz, bx, by, bz, smem, stream, params, extra):
        import ctypes

        pointers = ctypes.cast(params, ctypes.POINTER(ctypes.c_void_p))
        ints = [ctypes.cast(pointers[i], ctypes.POINTER(ctypes.c_int32))[0] for i in (4, 5, 6, 7)]
        self.launches.append(((gx, gy, gz), (bx, by, bz), smem, stream, ints))
        self.launch_contexts.append(self.context)
        self.c, self.tm_c, self.workspace, self.flags = (
            ctypes.cast(pointers[i], ctypes.POINTER(ctypes.c_uint64))[0] for i in (2, 3, 13, 14)
        )
        return (0,)


def record_runtime(monkeypatch, tmp_path, driver):
    """`driver` in place of cuda-python's, fresh runtime and kernel
    caches, kernels compiled into `tmp_path`."""
    from nvwgmma.kernel import cache, runtime, tensormap

    for module in (tensormap, runtime):
        monkeypatch.setattr(module, "_driver", lambda: driver)
    for name in ("_pools", "_encoded", "_primaries", "_attributes", "_workspaces", "_zeroing"):
        monkeypatch.setattr(runtime, name, {})
    monkeypatch.setattr(cache, "_loaded", {})
    monkeypatch.setattr(cache, "_texts", {})
    monkeypatch.setenv("NVWGMMA_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("NVWGMMA_PTX_DIR", raising=False)
    return driver


def _record(monkeypatch, tmp_path):
    """A RecordingDriver (record_runtime) and an empty launch cache."""
    from nvwgmma.kernel.gemm import launch

    monkeypatch.setattr(launch, "_recent", {})
    return record_runtime(monkeypatch, tmp_path, RecordingDriver())


def test_matmul_launch_path(ctx, tmp_path, monkeypatch):
    """matmul end to end against a recording driver: 3-D tensor maps of the
    right extents, strides and boxes, the balanced grid, M, N, K and batch
    in the kernel's parameters; a repeated call reuses its launch."""
    from nvwgmma.kernel.gemm import matmul

    driver = _record(monkeypatch, tmp_path)
    a = Array((1000, 4096), address=1 << 20)
    b = col_major(4096, 4104, address=1 << 28)  # the transpose of a 4104 x 4096 weight
    out = Array((1000, 4104), address=1 << 32)
    assert matmul(a, b, out=out, stream=7) is out
    assert driver.encoded == [
        ("CU_TENSOR_MAP_DATA_TYPE_FLOAT16", 1 << 20, (4096, 1000, 1), (8192, 8192 * 1000), (64, 128, 1)),
        ("CU_TENSOR_MAP_DATA_TYPE_FLOAT16", 1 << 28, (4096, 4104, 1), (8192, 8192 * 4104), (64, 128, 1)),
        ("CU_TENSOR_MAP_DATA_TYPE_FLOAT16", 1 << 32, (4104, 1000, 1), (8208, 8208 * 1000), (64, 64, 1)),
    ]  # fmt: skip
    # The cost model's tile: 8 x 33 = 264 tiles of 128 x 128 (one warpgroup
    # each), two full waves of 132 CTAs (128 x 256 would be 136 tiles: two
    # waves, the second 3 % full).
    assert driver.launches == [
        ((132, 1, 1), (256, 1, 1), driver.dynamic_smem, 7, [1000, 4104, 4096, 1])
    ]
    matmul(a, b, out=out, stream=7)
    # The maps travel in the launch's parameters: no device memory written.
    assert len(driver.launches) == 2 and len(driver.encoded) == 3 and driver.copies == 0


def test_repeated_call_without_out_gets_a_new_c(ctx, tmp_path, monkeypatch):
    """matmul(a, b) again: checked and planned once, then each call's new C
    (allocated like the first) is written into the packed launch -- its
    address and, for the tma epilogue, its own tensor map."""
    from nvwgmma.kernel.gemm import launch, matmul

    driver = _record(monkeypatch, tmp_path)
    made = []

    def allocator(self, shape, dtype):
        def new():
            made.append(Array(shape, address=(40 + len(made)) << 24))
            return made[-1]

        return new

    monkeypatch.setattr(launch._Tensor, "allocator", allocator)
    plans = []
    plan = launch.plan
    monkeypatch.setattr(launch, "plan", lambda *a, **kw: plans.append(1) or plan(*a, **kw))
    a, b = Array((1000, 4096), address=1 << 20), col_major(4096, 4104, address=1 << 28)
    outs, maps = [], []
    for _ in range(3):
        outs.append(matmul(a, b, stream=7))
        maps.append(driver.tm_c)
        assert driver.c == outs[-1].__cuda_array_interface__["data"][0]
        assert driver.encoded[-1][1] == driver.c  # C's map is the new C's
    assert outs == made and len(plans) == 1 and len(driver.launches) == 3
    assert len(set(maps)) == 3


def test_split_k_launch_gets_scratch_and_zeroed_flags_per_stream(ctx, tmp_path, monkeypatch):
    """A split-K launch: the grid deals out tiles x splits units; the
    partials (one f32 tile per unit) and the flags (one i32 per unit and
    consumer) are two buffers, each allocated and zeroed on the launch's
    stream once, grown for a bigger problem, and the kernel's last two
    parameters; another stream gets its own. A data-parallel launch passes
    none."""
    from nvwgmma.kernel.gemm import GemmConfig, matmul

    driver = _record(monkeypatch, tmp_path)
    config = GemmConfig(
        dtype="f16", out_dtype="f16", tile_n=128, stages=6, scheduler="split_k", splits=4
    )
    a, b = Array((128, 14336), address=1 << 20), col_major(14336, 4096, address=1 << 28)
    matmul(a, b, out=Array((128, 4096), address=1 << 32), stream=7, config=config)
    units = 32 * 4  # 1 x 32 tiles of 128 x 128, 4 parts each
    partials, flags = units * 128 * 128 * 4, units * 2 * 4
    assert [(v, n, s) for _, v, n, s in driver.zeroed] == [(0, partials, 7), (0, flags, 7)]
    assert driver.launches[-1][0] == (128, 1, 1)
    assert (driver.workspace, driver.flags) == (driver.zeroed[0][0], driver.zeroed[1][0])
    first = driver.workspace, driver.flags
    # Same stream, a smaller problem: the same buffers; a bigger one: new ones.
    matmul(Array((64, 14336), address=1 << 20), b,
           out=Array((64, 4096), address=1 << 32), stream=7, config=config)  # fmt: skip
    assert len(driver.zeroed) == 2 and (driver.workspace, driver.flags) == first
    matmul(Array((256, 14336), address=1 << 20), b, out=Array((256, 4096), address=1 << 32),
           stream=7, config=config)  # fmt: skip
    assert [z[2] for z in driver.zeroed[2:]] == [2 * partials, 2 * flags]
    assert (driver.workspace, driver.flags) == (driver.zeroed[2][0], driver.zeroed[3][0])
    matmul(a, b, out=Array((128, 4096), address=1 << 32), stream=9, config=config)
    assert len(driver.zeroed) == 6 and {z[3] for z in driver.zeroed[-2:]} == {9}
    matmul(a, b, out=Array((128, 4096), address=1 << 32), stream=9,
           config=GemmConfig(dtype="f16", out_dtype="f16", tile_n=128, stages=6))  # fmt: skip
    assert driver.workspace == 0 and driver.flags == 0 and len(driver.zeroed) == 6


def test_no_launch_writes_partials_over_flags(ctx, tmp_path, monkeypatch):
    """Split-K and stream-K kernels of different tiles and shapes share a
    stream's buffers: every launch's flags lie outside every launch's
    partials (the H200 run where they did not -- flags placed after the
    partials in one buffer -- found split-K wrong and not deterministic
    after a stream-K launch of another shape)."""
    from nvwgmma.kernel.gemm import GemmConfig, matmul

    driver = _record(monkeypatch, tmp_path)
    configs = [GemmConfig(dtype="f16", out_dtype="f16", tile_n=128, stages=6, scheduler="split_k", splits=2),
               GemmConfig(dtype="f16", out_dtype="f16", scheduler="stream_k"),
               GemmConfig(dtype="f16", out_dtype="f16", tile_n=128, stages=6, scheduler="split_k", splits=4)]  # fmt: skip
    b = col_major(4096, 4096, address=1 << 28)
    spans = []
    for m in (128, 512):
        for config in configs:
            a = Array((m, 4096), address=1 << 20)
            matmul(a, b, out=Array((m, 4096), address=1 << 32), stream=7, config=config)
            spans.append((driver.workspace, driver.flags))
    sizes = {address: size for address, _, size, _ in driver.zeroed}
    scratch = {(w, w + sizes[w]) for w, _ in spans}
    for _, f in spans:
        assert all(not lo <= f < hi for lo, hi in scratch)


@pytest.mark.parametrize(
    "fields,message",
    [
        ({}, "config.dtype must be this call's 'f16', but got 'bf16'"),
        ({"dtype": "f16"}, "config.out_dtype must be this call's 'f16', but got 'bf16'"),
        ({"dtype": "f16", "out_dtype": "f16", "b_major": "N"},
         "config.b_major must be this call's 'K', but got 'N'"),
    ],
)  # fmt: skip
def test_a_config_for_another_problem_is_refused(ctx, tmp_path, monkeypatch, fields, message):
    """A given GemmConfig compiles in types and layouts: one that does not
    match the call would read the operands wrongly, so it is refused."""
    from nvwgmma.kernel.gemm import GemmConfig, matmul

    driver = _record(monkeypatch, tmp_path)
    a, b = Array((128, 4096)), col_major(4096, 4096, address=1 << 28)
    with pytest.raises(ValueError, match=re.escape(message)):
        matmul(a, b, config=GemmConfig(**fields), out=Array((128, 4096), address=1 << 32))
    assert driver.launches == []


def test_decode_call_runs_the_transpose(ctx, tmp_path, monkeypatch):
    """matmul(x, w.T) with 16 tokens: the kernel computes C^T = W X^T --
    its A map reads the weight (N x K), its B map the tokens (M x K), its
    M and N are the call's N and M -- and stores C transposed, into the
    call's row-major M x N C (its own map over that C)."""
    from nvwgmma.kernel.gemm import matmul
    from nvwgmma.kernel.gemm.launch import Problem, problem_config

    driver = _record(monkeypatch, tmp_path)
    x = Array((16, 4096), address=1 << 20)
    w_t = col_major(4096, 6144, address=1 << 28)  # the transpose of a 6144 x 4096 weight
    out = Array((16, 6144), address=1 << 32)
    matmul(x, w_t, out=out, stream=7)
    config = problem_config(Problem.of(16, 6144, 4096, 1, "f16", "f16", "K", "K"))
    # 64 weight rows: 128-row tiles would split K into 96 units, as many as 64 rows make
    assert config.store_transposed and config.tile_n == 16 and config.tile_m == 64
    (tm_a, tm_b) = driver.encoded[:2]
    assert tm_a[1] == 1 << 28 and tm_a[2] == (4096, 6144, 1) and tm_a[4] == (64, 64, 1)
    assert tm_b[1] == 1 << 20 and tm_b[2] == (4096, 16, 1) and tm_b[4] == (64, 16, 1)
    # C's map is the call's 16 x 6144 row-major C, in boxes of 16 rows
    # (the kernel's columns) by 64 columns (its rows): the transposed store.
    assert config.epilogue == "tma" and len(driver.encoded) == 3
    tm_c = driver.encoded[2]
    assert tm_c[1] == 1 << 32 and tm_c[2] == (6144, 16, 1) and tm_c[3][0] == 6144 * 2
    assert tm_c[4] == (64, 16, 1)
    assert driver.launches[-1][4] == [6144, 16, 4096, 1] and driver.c == 1 << 32


def test_the_device_name_tells_gpus_apart(tmp_path, monkeypatch):
    """runtime.device_name (autotune's key): the driver's name and the SM
    count, read once per device."""
    from nvwgmma.kernel import runtime

    _record(monkeypatch, tmp_path)
    monkeypatch.setattr(runtime, "_names", {})
    assert runtime.device_name() == "NVIDIA H100 80GB HBM3 (132 SMs)"
