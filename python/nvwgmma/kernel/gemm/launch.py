"""`matmul`: a GEMM on torch or cupy tensors, checked before any launch,
with the kernel compiled on first use (or loaded from precompiled PTX) and
cached by configuration.

    from nvwgmma.kernel.gemm import matmul
    c = matmul(a, b)                                   # a @ b
    c = matmul(x, w.T, bias=b, activation="gelu")      # a fused Linear + GELU
    c = matmul(a, b, residual=r, beta=0.5, alpha=2.0)  # 2 a @ b + 0.5 r

a: (M, K) or (batch, M, K); b: (K, N) or (batch, K, N); each either
row-major or column-major in its last two dimensions (a column-major b,
e.g. `w.T`, is K-major: wgmma's native layout; fp8 inputs need a row-major
a and a column-major b). Output: (M, N) or (batch, M, N), row-major,
`out_dtype` (default: the input type; bf16 for fp8 inputs).

The configuration: `select_config`'s rule on the problem's shape and the
GPU's SM count; with NVWGMMA_AUTOTUNE=1, the fastest verified candidate
measured on the first call of each shape class (nvwgmma.kernel.gemm.autotune).

Kernels: PTX from `$NVWGMMA_PTX_DIR` (written by `python -m
nvwgmma.kernel.gemm --precompile DIR`) or the cache `$NVWGMMA_CACHE_DIR`
(default ~/.cache/nvwgmma), else compiled (needs the nvwgmma build) and
written to the cache.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...layouts import ELEMENT_BITS
from .. import _calls, cache
from . import autotune
from .config import GemmConfig
from .fusion import ACTIVATIONS, Activation, Alpha, Bias, Residual, Scale

__all__ = [
    "Problem",
    "kernel_key",
    "load_kernel",
    "matmul",
    "plan",
    "precompile",
    "prepare",
    "problem_config",
]

_ELEMENT_BYTES = {t: ELEMENT_BITS[t] // 8 for t in ("bf16", "f16", "f32", "e4m3", "e5m2")}
# torch's name for each dtype matmul takes or gives
_TORCH_NAMES = {
    "bf16": "bfloat16",
    "f16": "float16",
    "f32": "float32",
    "e4m3": "float8_e4m3fn",
    "e5m2": "float8_e5m2",
}


def torch_dtype(name: str):
    """The torch dtype of a dtype name ("bf16", "e4m3", ...)."""
    import torch

    return getattr(torch, _TORCH_NAMES[name])


# ---------------------------------------------------------------------------- tensors
class _Tensor:
    """What matmul needs of a torch tensor or a __cuda_array_interface__
    array: address, shape, strides (elements), dtype name, device."""

    def __init__(self, value, what: str):
        self.value, self.what = value, what
        module = type(value).__module__.split(".")[0]
        if module == "torch":
            torch_name = str(value.dtype).replace("torch.", "")
            self.library = "torch"
            self.device = value.device.index if value.device.type == "cuda" else None
            self.device_name = str(value.device)
            self.dtype = next((k for k, v in _TORCH_NAMES.items() if v == torch_name), torch_name)
            self.shape, self.strides = tuple(value.shape), tuple(value.stride())
            self.address = value.data_ptr()
            return
        interface = getattr(value, "__cuda_array_interface__", None)
        if interface is None:
            raise TypeError(
                f"{what} must be a torch tensor or an array with __cuda_array_interface__ "
                f"(cupy), but got {type(value).__name__}"
            )
        names = {"<f2": "f16", "<f4": "f32"}
        self.library = module
        self.device = getattr(getattr(value, "device", None), "id", 0)
        self.device_name = f"cuda:{self.device}"
        self.dtype = names.get(interface["typestr"], interface["typestr"])
        self.shape = tuple(interface["shape"])
        itemsize = int(interface["typestr"][2:])
        strides = interface.get("strides")
        if strides is None:  # C-contiguous
            strides, step = [], 1
            for size in reversed(self.shape):
                strides.insert(0, step)
                step *= size
            self.strides = tuple(strides)
        else:
            self.strides = tuple(s // itemsize for s in strides)
        self.address = interface["data"][0]

    def empty(self, shape, dtype: str):
        return self.allocator(shape, dtype)()

    def allocator(self, shape, dtype: str):
        """A callable returning a new uninitialised tensor of `shape` and
        `dtype` on this tensor's device and library; it holds no reference
        to this tensor (launch caches keep it)."""
        if self.library == "torch":
            import torch

            device, torch_type = self.value.device, torch_dtype(dtype)
            return lambda: torch.empty(shape, dtype=torch_type, device=device)

        device = self.device

        def new():
            import cupy

            types = {"f16": cupy.float16, "f32": cupy.float32}
            if dtype not in types:
                raise ValueError(f"out_dtype must be f16 or f32 for cupy arrays, but got {dtype!r}")
            with cupy.cuda.Device(device):
                return cupy.empty(shape, dtype=types[dtype])

        return new


def _matrix(t: _Tensor):
    """(batch, rows, cols, row-major?, leading stride, batch stride) of a 2-D
    or 3-D operand; raises on layouts TMA cannot read."""
    if len(t.shape) not in (2, 3):
        raise ValueError(f"{t.what} must be 2-D or 3-D (batched), but got shape {t.shape}")
    batch = t.shape[0] if len(t.shape) == 3 else 1
    rows, cols = t.shape[-2:]
    s_rows, s_cols = t.strides[-2:]
    # A dimension of extent 1 may carry any stride.
    if s_cols == 1 or cols == 1 and s_rows != 1:
        row_major, lead = True, s_rows
    elif s_rows == 1 or rows == 1:
        row_major, lead = False, s_cols
    else:
        raise ValueError(
            f"{t.what} must be row-major or column-major in its last two dimensions (one of "
            f"them with stride 1), but got strides {t.strides}"
        )
    if (rows if row_major else cols) == 1:  # one line: its stride is never used
        unit = 16 // _ELEMENT_BYTES.get(t.dtype, 1)
        lead = -(-(cols if row_major else rows) // unit) * unit
    batch_stride = t.strides[0] if len(t.shape) == 3 else 0
    return batch, rows, cols, row_major, lead, batch_stride


@dataclass(frozen=True)
class Problem:
    """A matmul call, reduced to what picks and launches a kernel."""

    m: int
    n: int
    k: int
    batch: int
    dtype: str
    out_dtype: str
    a_major: str  # "K" (row-major a) or "M"
    b_major: str  # "K" (column-major b) or "N"
    c_aligned: bool  # C's row stride is a multiple of 16 bytes (the TMA store)
    fusion: tuple = ()

    @classmethod
    def of(cls, m, n, k, batch, dtype, out_dtype, a_major, b_major, fusion=()) -> Problem:
        """The Problem of a contiguous row-major C: c_aligned follows from N."""
        aligned = (n * _ELEMENT_BYTES[out_dtype]) % 16 == 0
        return cls(m, n, k, batch, dtype, out_dtype, a_major, b_major, aligned, tuple(fusion))


def swapped(p: Problem) -> Problem:
    """The problem's transpose, C^T = B^T A^T (N x M x K): what a
    `store_transposed` configuration computes -- its A is the call's b,
    its B the call's a, a bias along C's columns runs along its rows."""
    from .config import transposed_majors
    from .fusion import transposed_chain

    return Problem(p.n, p.m, p.k, p.batch, p.dtype, p.out_dtype,
                   *transposed_majors(p.a_major, p.b_major), p.c_aligned,
                   transposed_chain(p.fusion))  # fmt: skip


def problem_config(p: Problem, sms: int = 132) -> GemmConfig:
    """The kernel configuration `matmul` uses for problem `p` on a GPU with
    `sms` SMs: `select_config`'s (tile, stages, schedule, scheduler), the
    problem's layouts and epilogue chain; the TMA epilogue when C's rows
    are 16-byte aligned and its type is 16-bit or f32 (C in two chunks for
    f32), else masked stores from registers."""
    from .selector import select_config

    return select_config(p.m, p.n, p.k, dtype=p.dtype, out_dtype=p.out_dtype, a_major=p.a_major,
                         b_major=p.b_major, batch=p.batch, fusion=p.fusion,
                         c_aligned=p.c_aligned, sms=sms)  # fmt: skip


def fusion_chain(*, bias=None, activation=None, residual=None, beta=False, alpha=False,
                 scale=False) -> tuple:  # fmt: skip
    """matmul's epilogue chain, in its order (alpha, bias, activation,
    residual, scale): `bias` and `residual` are the dtypes of those
    operands (None: absent); `beta`, `alpha`, `scale` whether given."""
    chain = [Alpha()] if alpha else []
    if bias is not None:
        chain.append(Bias(axis="col", dtype=bias))
    if activation is not None:
        chain.append(Activation(activation))
    if residual is not None:
        chain.append(Residual(dtype=residual, beta=beta))
    if scale:
        chain.append(Scale())
    return tuple(chain)


# ---------------------------------------------------------------------------- kernels
def _signature():
    from .kernel import KERNEL_SIGNATURE

    return KERNEL_SIGNATURE


def _build(config: GemmConfig):
    from .kernel import build_gemm

    return build_gemm(config)


# The PTX cache's view of the kernel: `kernel_key(config)` is the file stem of
# its PTX (its name and a digest of every field, the kernel's parameter list
# and the generator's code).
_FAMILY = cache.KernelFamily(_build, _signature, "python -m nvwgmma.kernel.gemm --precompile DIR")
kernel_key = _FAMILY.key


def write_kernel(directory: str, config: GemmConfig) -> str:
    """Compile `config` and write its PTX and metadata to `directory`."""
    return _FAMILY.write(directory, config)


def load_kernel(config: GemmConfig):
    """(runtime.Kernel, meta) for `config`, loaded once per process."""
    return _FAMILY.load(config)


def precompile(directory: str, problems) -> list[str]:
    """Write the PTX every Problem in `problems` needs to `directory`."""
    configs = {kernel_key(problem_config(p)): problem_config(p) for p in problems}
    return [write_kernel(directory, config) for config in configs.values()]


# ---------------------------------------------------------------------------- matmul
def _fail(message: str):
    raise ValueError(message)


def _check_aligned(what: str, address: int, lead: int, dtype: str, contiguous_extent: int):
    row_bytes = lead * _ELEMENT_BYTES[dtype]
    if address % 16:
        _fail(f"{what} must start at a 16-byte aligned address for TMA, but got {address:#x}")
    if row_bytes % 16:
        unit = 16 // _ELEMENT_BYTES[dtype]
        _fail(
            f"{what}'s leading stride must be a multiple of 16 bytes for TMA, but got "
            f"{lead} {dtype} elements ({row_bytes} bytes; its contiguous dimension has "
            f"{contiguous_extent}: pad it to a multiple of {unit})"
        )


def plan(a, b, *, bias=None, activation=None, residual=None, out=None, out_dtype=None,
         alpha=None, beta=None, scale=None):  # fmt: skip
    """Check a matmul call and reduce it to a Problem plus the launch
    operands; raises ValueError/TypeError on anything a launch would get
    wrong."""
    ta, tb = _Tensor(a, "a"), _Tensor(b, "b")
    for t in (ta, tb):
        if t.device is None:
            _fail(f"{t.what} must be on a CUDA device, but got {t.device_name}")
    if ta.device != tb.device:
        _fail(f"a and b must be on one device, but got {ta.device_name} and {tb.device_name}")
    inputs = ("bf16", "f16", "e4m3", "e5m2")
    if ta.dtype not in inputs:
        _fail(f"a's dtype must be one of {', '.join(inputs)}, but got {ta.dtype}")
    if tb.dtype != ta.dtype:
        _fail(f"b's dtype must be a's ({ta.dtype}), but got {tb.dtype}")
    batch_a, m, k, a_row, a_lead, a_bstride = _matrix(ta)
    batch_b, k_b, n, b_row, b_lead, b_bstride = _matrix(tb)
    if k_b != k:
        _fail(f"a's columns and b's rows must agree (K), but got a {ta.shape} and b {tb.shape}")
    if min(m, n, k, batch_a, batch_b) < 1:
        _fail(f"every dimension must be at least 1, but got a {ta.shape} and b {tb.shape}")
    if len(tb.shape) == 3 and batch_b != batch_a or len(tb.shape) == 3 and len(ta.shape) == 2:
        _fail(f"b's batch must be a's, but got a {ta.shape} and b {tb.shape}")
    batch = batch_a
    a_major, b_major = ("K" if a_row else "M"), ("N" if b_row else "K")
    if _ELEMENT_BYTES[ta.dtype] == 1 and (a_major, b_major) != ("K", "K"):
        _fail(
            f"fp8 inputs must be K-major (wgmma transposes only 16-bit operands): a row-major "
            f"and b column-major (e.g. w.T of an N x K w), but got a "
            f"{'row' if a_row else 'column'}-major and b {'row' if b_row else 'column'}-major"
        )
    if len(ta.shape) == 3 and len(tb.shape) == 2:
        # One b for every batch: fold the batch into M when a's rows run on.
        if a_row and (batch == 1 or a_bstride == m * a_lead):
            m, batch = m * batch, 1
        else:
            _fail(
                f"b must be batched like a unless a's batches are stacked rows (row-major, "
                f"batch stride M x lda), but got a with strides {ta.strides}"
            )
    _check_aligned("a", ta.address, a_lead, ta.dtype, k if a_row else m)
    _check_aligned("b", tb.address, b_lead, tb.dtype, n if b_row else k)
    for what, t, stride in (("a", ta, a_bstride), ("b", tb, b_bstride)):
        if batch > 1 and (stride * _ELEMENT_BYTES[t.dtype]) % 16:
            _fail(f"{what}'s batch stride must be a multiple of 16 bytes for TMA, but got {stride}")
    if out_dtype is None:
        fp8 = ta.dtype in ("e4m3", "e5m2")
        out_dtype = _Tensor(out, "out").dtype if out is not None else "bf16" if fp8 else ta.dtype
    outputs = ("bf16", "f16", "f32", "e4m3", "e5m2")
    if out_dtype not in outputs:
        _fail(f"out_dtype must be one of {', '.join(outputs)}, but got {out_dtype!r}")
    shape = (batch_a, ta.shape[1], n) if len(ta.shape) == 3 else (m, n)
    if activation is not None and activation not in ACTIVATIONS:
        _fail(f"activation must be one of {', '.join(ACTIVATIONS)}, but got {activation!r}")
    tbias = None if bias is None else _Tensor(bias, "bias")
    if tbias is not None:
        if tbias.device != ta.device:
            _fail(f"bias must be on a's device {ta.device_name}, but got {tbias.device_name}")
        if tbias.shape != (n,) or tbias.strides != (1,):
            _fail(f"bias must be a contiguous vector of N = {n}, but got shape {tbias.shape}")
        if tbias.dtype not in ("bf16", "f16", "f32"):
            _fail(f"bias's dtype must be bf16, f16 or f32, but got {tbias.dtype}")
    tres = None if residual is None else _Tensor(residual, "residual")
    if tres is not None:
        if tres.device != ta.device:
            _fail(f"residual must be on a's device {ta.device_name}, but got {tres.device_name}")
        if tres.shape != tuple(shape) or not _contiguous(tres):
            _fail(
                f"residual must be contiguous with the output's shape {tuple(shape)}, but got "
                f"shape {tres.shape}, strides {tres.strides}"
            )
        if tres.dtype not in ("bf16", "f16", "f32"):
            _fail(f"residual's dtype must be bf16, f16 or f32, but got {tres.dtype}")
    elif beta is not None:
        _fail("beta scales the residual, so it needs residual=, but got none")
    if scale is not None and out_dtype not in ("e4m3", "e5m2"):
        _fail(
            f"scale quantises an fp8 output, so out_dtype must be e4m3 or e5m2, but got {out_dtype}"
        )
    new_out = ta.allocator(shape, out_dtype)
    if out is None:
        out = new_out()
    tc = _Tensor(out, "out")
    if tc.dtype != out_dtype:
        _fail(f"out's dtype must be out_dtype {out_dtype}, but got {tc.dtype}")
    if tc.device != ta.device:
        _fail(f"out must be on a's device {ta.device_name}, but got {tc.device_name}")
    if tc.shape != tuple(shape):
        _fail(f"out must have shape {tuple(shape)}, but got {tc.shape}")
    if not _contiguous(tc):
        _fail(f"out must be contiguous (row-major), but got strides {tc.strides}")
    if tc.address % 16:
        _fail(f"out must start at a 16-byte aligned address, but got {tc.address:#x}")
    chain = fusion_chain(
        bias=tbias and tbias.dtype,
        activation=activation,
        residual=tres and tres.dtype,
        beta=beta is not None,
        alpha=alpha is not None,
        scale=scale is not None,
    )
    problem = Problem.of(m, n, k, batch, ta.dtype, out_dtype, a_major, b_major, chain)
    operands = dict(a=ta, b=tb, c=tc, bias=tbias, residual=tres,
                    a_lead=a_lead, b_lead=b_lead, a_bstride=a_bstride, b_bstride=b_bstride,
                    alpha=1.0 if alpha is None else float(alpha),
                    beta=0.0 if beta is None else float(beta),
                    scale=1.0 if scale is None else float(scale), new_out=new_out)  # fmt: skip
    return problem, operands, out


def _contiguous(t: _Tensor) -> bool:
    step = 1
    for size, stride in zip(reversed(t.shape), reversed(t.strides)):
        if size > 1 and stride != step:
            return False
        step *= size
    return True


def _map(address, dtype, lead, bstride, rows, cols, batch, box) -> bytes:
    """3-D tensor map (by value) of a (batch x rows x cols) row-major view
    (cols contiguous) at `address` for a 2-D `box`."""
    from .. import runtime

    size = _ELEMENT_BYTES[dtype]
    batch_bytes = bstride * size if batch > 1 else max(16, lead * rows * size)
    return runtime.encode_map(
        address,
        box["data_type"],
        sizes=(cols, rows, batch),
        strides=(lead * size, batch_bytes),
        box=(*box["box"], 1),
        swizzle=box["swizzle"],
    )


def prepare(a, b, *, bias=None, activation=None, residual=None, out=None, out_dtype=None,
            alpha=None, beta=None, scale=None, stream=None, config=None, grid=None):  # fmt: skip
    """(launch, out): everything `matmul` does for this call except the
    launch, which `launch()` repeats -- on the same tensors, unchecked -- as
    often as wanted (a loop, a benchmark, a CUDA graph capture). `grid`
    overrides the persistent grid's CTA count (a multiple of the cluster).
    The kernel is loaded for, and launches on, the operands' device,
    whichever device is current."""
    from .. import runtime

    problem, o, out = plan(a, b, bias=bias, activation=activation, residual=residual,
                           out=out, out_dtype=out_dtype, alpha=alpha, beta=beta, scale=scale)  # fmt: skip
    stream = _calls.stream_of(stream, o["a"].value)
    with runtime.on_device(o["a"].device):
        return _prepared(problem, o, out, a, b, stream, config, grid, dict(
            bias=bias, activation=activation, residual=residual, out_dtype=problem.out_dtype,
            alpha=alpha, beta=beta, scale=scale))  # fmt: skip


def _prepared(problem, o, out, a, b, stream, config, grid, kwargs):
    """prepare's work once the call is checked, in the operands' context."""
    from .. import runtime
    from .kernel import KERNEL_SIGNATURE
    from .scheduler import grid_size

    sms = runtime.device_attribute("MULTIPROCESSOR_COUNT")
    if config is None:
        config = problem_config(problem, sms)
        if autotune.enabled():
            config = _tuned(problem, config, sms, a, b, stream, kwargs)
    else:
        _check_config(config, swapped(problem) if config.store_transposed else problem)
    kernel, meta = load_kernel(config)
    p, boxes = problem, meta["boxes"]
    if config.store_transposed:  # C^T = B^T A^T: b is the kernel's A, a its B
        p = swapped(problem)
        o = dict(o, a=o["b"], b=o["a"], a_lead=o["b_lead"], b_lead=o["a_lead"],
                 a_bstride=o["b_bstride"], b_bstride=o["a_bstride"])  # fmt: skip
    if config.scheduler == "stream_k":
        bm, bn, bk = meta["tile"]
        iterations = p.batch * -(-p.m // bm) * -(-p.n // bn) * -(-p.k // bk)
        if iterations >= 1 << 31:
            _fail(f"stream_k counts tiles x K stages in 32 bits, so they must be below 2^31, "
                  f"but this problem has {iterations}: use another scheduler")  # fmt: skip
    ta, tb, tc = o["a"], o["b"], o["c"]
    # A as (batch, M, K) K-major or (batch, K, M); B as (batch, N, K) or (batch, K, N).
    a_rows, a_cols = (p.m, p.k) if p.a_major == "K" else (p.k, p.m)
    b_rows, b_cols = (p.n, p.k) if p.b_major == "K" else (p.k, p.n)
    tm_a = _map(ta.address, p.dtype, o["a_lead"], o["a_bstride"], a_rows, a_cols, p.batch,
                boxes["A"])  # fmt: skip
    tm_b = _map(tb.address, p.dtype, o["b_lead"], o["b_bstride"], b_rows, b_cols, p.batch,
                boxes["B"])  # fmt: skip

    def c_map(address):
        if config.store_transposed:  # C is the call's M x N: the kernel's N x M
            return _map(address, p.out_dtype, p.m, p.m * p.n, p.n, p.m, p.batch, boxes["C"])
        return _map(address, p.out_dtype, p.n, p.m * p.n, p.m, p.n, p.batch, boxes["C"])

    tm_c = c_map(tc.address) if config.epilogue == "tma" else tm_a  # (unread by registers)
    if grid is None:
        grid = grid_size(meta, p.m, p.n, p.k, sms, p.batch)
    scratch, flags = fixup_buffers(meta, p.m, p.n, p.k, grid, p.batch, stream)
    bias_ptr = o["bias"].address if o["bias"] is not None else tc.address
    res_ptr = o["residual"].address if o["residual"] is not None else tc.address
    args = runtime.named_args(
        meta["signature"], tmA=tm_a, tmB=tm_b, C=tc.address, tmC=tm_c, M=p.m, N=p.n, K=p.k,
        batch=p.batch, bias=bias_ptr, R=res_ptr, alpha=o["alpha"], beta=o["beta"],
        scale=o["scale"], workspace=scratch, flags=flags)  # fmt: skip
    launch = kernel.launcher(grid=(grid, 1, 1), block=tuple(meta["block"]), args=args,
                             stream=stream)  # fmt: skip
    launch.scratch = bool(scratch or flags)
    tma = config.epilogue == "tma"
    launch.outputs = _calls.Outputs(launch, KERNEL_SIGNATURE,
                                    [("out", "C", o["new_out"], "tmC" if tma else None,
                                      c_map if tma else None)])  # fmt: skip
    return launch, out


def fixup_buffers(meta: dict, m: int, n: int, k: int, grid: int, batch: int, stream):
    """(partials, flags): the device addresses a split-K or stream-K launch
    of `meta`'s kernel passes between its CTAs (0, 0 for data-parallel),
    the stream's own (runtime.workspace)."""
    from .. import runtime
    from .scheduler import flag_bytes, workspace_bytes

    shape = (meta, m, n, k, grid, batch)
    return (runtime.workspace(workspace_bytes(*shape), stream, "partials"),
            runtime.workspace(flag_bytes(*shape), stream, "flags"))  # fmt: skip


def _check_config(config: GemmConfig, p: Problem) -> None:
    """A given configuration must compute this problem: its types, layouts
    and epilogue chain are compiled in (another would read the operands
    wrongly or skip a fusion, silently)."""
    for field, wanted in (("dtype", p.dtype), ("out_dtype", p.out_dtype),
                          ("a_major", p.a_major), ("b_major", p.b_major), ("fusion", p.fusion)):  # fmt: skip
        if getattr(config, field) != wanted:
            _fail(f"config.{field} must be this call's {wanted!r}, but got "
                  f"{getattr(config, field)!r}")  # fmt: skip
    if config.epilogue == "tma" and not p.c_aligned:
        _fail("config.epilogue must be 'registers' where C's rows are not 16-byte aligned "
              "(TMA stores), but got 'tma'")  # fmt: skip


def _tuned(problem, chosen, sms, a, b, stream, kwargs):
    """NVWGMMA_AUTOTUNE: the fastest verified candidate (autotune.tune),
    each run on this call's inputs into an output of its own."""
    from .selector import candidates

    def trial(config):
        return prepare(a, b, stream=stream, config=config, **kwargs)

    launch, reference = trial(chosen)
    launch()
    found = candidates(problem.m, problem.n, problem.k, dtype=problem.dtype,
                       out_dtype=problem.out_dtype, a_major=problem.a_major,
                       b_major=problem.b_major, batch=problem.batch, fusion=problem.fusion,
                       c_aligned=problem.c_aligned, sms=sms)  # fmt: skip
    measure = autotune.measure_on(trial, reference, stream)
    from .. import runtime

    return autotune.tune(problem, chosen, found, measure, runtime.device_name())


# Launches of recent calls, keyed by everything the checks read (_calls.key):
# a repeated call skips straight to the launch (into a new C where `out` is
# None), so the host's part of a call stays under a decode-sized kernel's time.
_recent: dict = {}


def matmul(a, b, *, bias=None, activation=None, residual=None, out=None, out_dtype=None,
           alpha=None, beta=None, scale=None, stream=None, config=None):  # fmt: skip
    """C = epilogue(a @ b) on the GPU (see the module docstring); returns C.

    bias        a vector of N (bf16, f16 or f32), added to every row
    activation  "relu", "gelu" (erf), "gelu_tanh" or "silu", after the bias
    residual    a tensor shaped like C, added after the activation (times
                `beta` when given)
    alpha       scales a @ b first
    scale       multiplies the result before an fp8 out_dtype's rounding
    out         C's storage (contiguous); default: a new tensor
    stream      a CUDA stream handle (int) or an object with .cuda_stream /
                .ptr (torch's or cupy's); default: the current stream of
                the operands' device (torch's or cupy's)
    config      a GemmConfig to use instead of the default for the problem

    The kernel runs on the operands' device, whichever device is current.
    Calls can be captured into CUDA graphs (torch.cuda.graph, cupy's
    stream capture), a first call inside the capture too. Under
    torch.compile and torch.export the call becomes the custom op
    `torch.ops.nvwgmma.matmul` (nvwgmma.kernel.torch_ops).
    """
    if _calls.compiling():  # torch.compile / torch.export: the traceable torch op
        from ..torch_ops import traced_matmul

        return traced_matmul(a, b, bias=bias, activation=activation, residual=residual, out=out,
                             out_dtype=out_dtype, alpha=alpha, beta=beta, scale=scale,
                             stream=stream, config=config)  # fmt: skip
    s = _calls.stream_of(stream, a)
    key = _calls.key((a, b, bias, residual, out, activation, out_dtype, alpha, beta, scale, s,
                      config))  # fmt: skip
    hit = _calls.reusable(_recent, key, s)
    if hit is not None:
        (out,) = _calls.relaunch(hit, out)
        return out
    launch, out = prepare(a, b, bias=bias, activation=activation, residual=residual, out=out,
                          out_dtype=out_dtype, alpha=alpha, beta=beta, scale=scale, stream=stream,
                          config=config)  # fmt: skip
    launch()
    _calls.remember(_recent, key, launch, s)
    return out
