"""Launching generated kernels: the CUDA driver API through cuda-python,
with no nvwgmma build needed (this module is pure Python, so it runs where
only precompiled PTX exists).

    from nvwgmma.kernel import runtime
    with runtime.on_device(1):                     # device 1's primary context
        kernel = runtime.Kernel(ptx_text, "gemm", dynamic_smem=215024)
        tmap = runtime.encode_map(address, "BFLOAT16", sizes=(K, M, 1),
                                  strides=(K * 2, M * K * 2), box=(64, 128, 1), swizzle="128B")
    kernel.launch(grid=(128, 1, 1), block=(384, 1, 1),
                  args=[("map", tmap), ("i32", 4096), ("f32", 1.0)], stream=handle)

Every kernel, workspace and device-memory tensor map belongs to the
context it was made in (`on_device` picks it: the device's primary
context, the one torch and cupy use); a launch makes its kernel's context
current for the call, whatever is current, so a kernel always runs on the
device it was loaded for. Tensor maps travel by value ("map": 128 bytes, a
kernel parameter declared `_ir.TENSOR_MAP_PARAM`), so a launch needs no
device memory for them and a CUDA graph captures them with the launch.
Kernels with compile-time cluster dimensions (`.reqnctapercluster`) launch
as clusters through the plain launch; the grid must be a multiple of the
cluster.

A kernel made `programmatic` (one that executes griddepcontrol.wait
before its first global memory access, as every generated GEMM does)
launches as a programmatic dependent launch: it may start while the
stream's previous kernel drains, and waits for it on the GPU. Set
NVWGMMA_PDL=0 to launch every kernel plainly.

Under stream capture (CUDA graphs) the driver calls that are not stream
work -- loading a module, allocating memory -- run in the relaxed capture
mode, as torch's allocator does, so a first call inside a capture works;
a workspace asked for while its stream captures is the launch's own
(`workspace`), never one that eager launches share.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import threading

from .. import _checks
from .tensormap import TENSOR_MAP_BYTES, _check, _driver, encode

__all__ = [
    "Kernel",
    "Launch",
    "capturing",
    "current_context",
    "device_attribute",
    "elapsed_ms",
    "encode_map",
    "ensure_context",
    "named_args",
    "on_device",
    "programmatic_launches",
    "relaxed_capture",
    "tensor_map",
    "workspace",
]

_lock = threading.Lock()
_C_TYPES = {
    "u64": ctypes.c_uint64,
    "i64": ctypes.c_int64,
    "i32": ctypes.c_int32,
    "f32": ctypes.c_float,
}


def ensure_context() -> None:
    """Make a CUDA context current: the one already current (torch's or
    cupy's), else device 0's primary context."""
    driver = _driver()
    _check(driver.cuInit(0), "cuInit")
    if current_context() == 0:
        _check(driver.cuCtxSetCurrent(_primary(0)), "cuCtxSetCurrent")


def current_context() -> int:
    """The current CUDA context's handle (0: none)."""
    return int(_check(_driver().cuCtxGetCurrent(), "cuCtxGetCurrent"))


_primaries: dict = {}


def _primary(device: int):
    """Device `device`'s primary context (retained once per process)."""
    found = _primaries.get(device)
    if found is None:
        driver = _driver()
        _check(driver.cuInit(0), "cuInit")
        count = int(_check(driver.cuDeviceGetCount(), "cuDeviceGetCount"))
        if not 0 <= device < count:
            raise ValueError(f"device must be one of 0..{count - 1}, but got {device}")
        handle = _check(driver.cuDeviceGet(device), "cuDeviceGet")
        found = _check(driver.cuDevicePrimaryCtxRetain(handle), "cuDevicePrimaryCtxRetain")
        _primaries[device] = found
    return found


@contextlib.contextmanager
def on_device(device: int | None):
    """Within the block, device `device`'s primary context is current (the
    context torch and cupy use for it); after it, the one that was. None:
    the current context (device 0's where none is)."""
    if device is None:
        ensure_context()
        yield
        return
    context = _primary(int(device))
    with _made_current(context, int(context)):
        yield


@contextlib.contextmanager
def _made_current(context, handle: int):
    switched = _enter(context, handle)
    try:
        yield
    finally:
        _leave(switched)


def _enter(context, handle: int) -> bool:
    """Push `context` unless it is current; whether it was pushed."""
    if current_context() == handle:
        return False
    _check(_driver().cuCtxPushCurrent(context), "cuCtxPushCurrent")
    return True


def _leave(switched: bool) -> None:
    if switched:
        _check(_driver().cuCtxPopCurrent(), "cuCtxPopCurrent")


def capturing(stream: int) -> bool:
    """Whether `stream` (a CUstream handle) is capturing a CUDA graph."""
    driver = _driver()
    error, status = driver.cuStreamIsCapturing(driver.CUstream(int(stream)))
    if int(error) != 0:  # the legacy stream while another captures: treat as capturing
        return True
    return status == driver.CUstreamCaptureStatus.CU_STREAM_CAPTURE_STATUS_ACTIVE


@contextlib.contextmanager
def relaxed_capture():
    """This thread's stream-capture mode relaxed for the block: driver calls
    that are not stream work (module loads, cuMemAlloc) may run while a
    stream captures, as torch's caching allocator does for cudaMalloc."""
    driver = _driver()
    relaxed = driver.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_RELAXED
    previous = _check(driver.cuThreadExchangeStreamCaptureMode(relaxed),
                      "cuThreadExchangeStreamCaptureMode")  # fmt: skip
    try:
        yield
    finally:
        _check(driver.cuThreadExchangeStreamCaptureMode(previous),
               "cuThreadExchangeStreamCaptureMode")  # fmt: skip


_attributes: dict = {}


def device_attribute(name: str) -> int:
    """A CUdevice_attribute of the current context's device, e.g.
    "MULTIPROCESSOR_COUNT" (read once per device)."""
    driver = _driver()
    ensure_context()
    device = _check(driver.cuCtxGetDevice(), "cuCtxGetDevice")
    key = (int(device), name)
    if key not in _attributes:
        attribute = getattr(driver.CUdevice_attribute, f"CU_DEVICE_ATTRIBUTE_{name}")
        _attributes[key] = int(_check(driver.cuDeviceGetAttribute(attribute, device), name))
    return _attributes[key]


_names: dict = {}


def device_name() -> str:
    """The name of the current context's device (e.g. "NVIDIA H100 80GB
    HBM3") and its SM count: what tells two GPUs' tuning apart."""
    driver = _driver()
    ensure_context()
    device = _check(driver.cuCtxGetDevice(), "cuCtxGetDevice")
    if int(device) not in _names:
        raw = _check(driver.cuDeviceGetName(256, device), "cuDeviceGetName")
        name = bytes(raw).split(b"\0")[0].decode(errors="replace").strip()
        _names[int(device)] = f"{name} ({device_attribute('MULTIPROCESSOR_COUNT')} SMs)"
    return _names[int(device)]


class Kernel:
    """Kernel `name` of a PTX (str) or cubin (bytes) image, loaded into the
    current context (see on_device), allowed `dynamic_smem` bytes of
    dynamic shared memory. Its launches run in that context."""

    def __init__(self, image, name: str, *, dynamic_smem: int = 0, programmatic: bool = False):
        driver = _driver()
        # Whether the kernel waits (griddepcontrol.wait) before it touches
        # global memory, so that it may launch while the stream's previous
        # kernel still runs (see Launch).
        self.programmatic = _checks.boolean(programmatic, "programmatic")
        ensure_context()
        if isinstance(image, str):
            image = image.encode() + b"\0"
        if not isinstance(image, (bytes, bytearray)):
            raise TypeError(
                f"image must be PTX text or cubin bytes, but got {type(image).__name__}"
            )
        self.dynamic_smem = _checks.integer(dynamic_smem, "dynamic_smem", 0, 227 * 1024)
        self._image = bytes(image)  # the driver reads it during the load only
        self.context = _check(driver.cuCtxGetCurrent(), "cuCtxGetCurrent")
        with relaxed_capture():
            self.module = _check(driver.cuModuleLoadData(self._image), "cuModuleLoadData")
            self.function = _check(
                driver.cuModuleGetFunction(self.module, name.encode()), "cuModuleGetFunction"
            )
            if dynamic_smem > 48 * 1024:
                _check(
                    driver.cuFuncSetAttribute(
                        self.function,
                        driver.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                        dynamic_smem,
                    ),
                    "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)",
                )
        self.name = name

    def launch(self, *, grid, block, args, stream=0) -> None:
        """Launch with `args`: (type, value) pairs, type one of u64 (pointers),
        i64, i32, f32, or map (a 128-byte CUtensorMap, by value: see
        encode_map); `stream`: a CUstream handle of this kernel's context
        (an int, 0 for the legacy default stream)."""
        self.launcher(grid=grid, block=block, args=args, stream=stream)()

    def launcher(self, *, grid, block, args, stream=0) -> Launch:
        """A Launch of this kernel with these arguments: the parameter
        buffer packed once, launched again by calling it."""
        return Launch(self, grid, block, args, stream)


def named_args(signature, **values) -> list:
    """The (type, value) list `Kernel.launcher` takes, from a kernel's
    parameter list (`meta["signature"]`: (name, MLIR type) pairs, extra
    parameters included) and its values by name: a tensor map parameter
    takes 128 bytes (encode_map), a pointer an address, i32 / i64 / f32 a
    number. Every parameter must be named once, and nothing else."""
    kinds = {"i32": "i32", "i64": "i64", "f32": "f32"}
    names = [name for name, _ in signature]
    unknown = sorted(set(values) - set(names))
    missing = [name for name in names if name not in values]
    if unknown or missing:
        raise ValueError(
            f"the arguments must name every kernel parameter ({', '.join(names)}) once, but "
            f"got {len(missing)} missing ({', '.join(missing) or '-'}) and unknown "
            f"({', '.join(unknown) or '-'})"
        )
    found = []
    for name, kind in signature:
        if "grid_constant" in kind:
            found.append(("map", values[name]))
        elif kind.startswith("!llvm.ptr"):
            found.append(("u64", values[name]))
        elif kind in kinds:
            found.append((kinds[kind], values[name]))
        else:
            raise ValueError(f"parameter {name}'s type must be a map, pointer, i32, i64 or f32, "
                             f"but got {kind!r}")  # fmt: skip
    return found


class _MapValue:
    """A tensor map parameter: 128 bytes on a 64-byte boundary, rewritten
    in place."""

    def __init__(self, blob):
        self._raw = ctypes.create_string_buffer(TENSOR_MAP_BYTES + 64)
        self.address = ctypes.addressof(self._raw) + (-ctypes.addressof(self._raw)) % 64
        self.value = blob

    @property
    def value(self) -> bytes:
        return ctypes.string_at(self.address, TENSOR_MAP_BYTES)

    @value.setter
    def value(self, blob) -> None:
        if not isinstance(blob, (bytes, bytearray)) or len(blob) != TENSOR_MAP_BYTES:
            raise ValueError(
                f"a map argument must be {TENSOR_MAP_BYTES} bytes (encode_map), but got {blob!r:.40}"
            )
        ctypes.memmove(self.address, bytes(blob), TENSOR_MAP_BYTES)


class Launch:
    """A prepared launch: calling it launches the kernel again, in the
    kernel's context. The parameters are packed once; `set(i, value)`
    rewrites parameter i in place (the driver copies the buffer at each
    launch, so a launch already queued, or captured into a graph, keeps
    the value it was given)."""

    # Whether the launch carries device memory that other calls of it
    # write (a workspace, a scratch copy): a launch prepared eagerly is
    # then not reused inside a stream capture (see matmul / attention).
    scratch = False

    def __init__(self, kernel: Kernel, grid, block, args, stream):
        driver = _driver()
        self.values = []
        pointers = []
        for kind, value in args:
            if kind == "map":
                v = _MapValue(value)
                pointers.append(v.address)
            elif kind in _C_TYPES:
                v = _C_TYPES[kind](value)
                pointers.append(ctypes.addressof(v))
            else:
                raise ValueError(
                    f"argument type must be one of {', '.join(_C_TYPES)}, map, but got {kind!r}"
                )
            self.values.append(v)
        self._pointers = (ctypes.c_void_p * max(1, len(pointers)))(*pointers)
        self._context, self._handle = kernel.context, int(kernel.context)
        self.programmatic = kernel.programmatic and programmatic_launches()
        if self.programmatic:
            self._launch_kernel = driver.cuLaunchKernelEx
            self._args = (_programmatic_config(driver, grid, block, kernel.dynamic_smem, stream),
                          kernel.function, ctypes.addressof(self._pointers), 0)  # fmt: skip
            self._what = f"cuLaunchKernelEx({kernel.name}, programmatic stream serialization)"
        else:
            self._launch_kernel = driver.cuLaunchKernel
            self._args = (kernel.function, *tuple(grid), *tuple(block), kernel.dynamic_smem,
                          driver.CUstream(int(stream)), ctypes.addressof(self._pointers), 0)  # fmt: skip
            self._what = f"cuLaunchKernel({kernel.name})"

    def set(self, index: int, value) -> None:
        self.values[index].value = value

    def __call__(self) -> None:
        # _made_current without the generator: this is the hot path
        switched = _enter(self._context, self._handle)
        try:
            _check(self._launch_kernel(*self._args), self._what)
        finally:
            _leave(switched)


def programmatic_launches() -> bool:
    """Whether programmatic kernels launch as programmatic dependent
    launches: unless NVWGMMA_PDL is "0" (read when a launch is prepared)."""
    return os.environ.get("NVWGMMA_PDL", "1") != "0"


def _programmatic_config(driver, grid, block, dynamic_smem: int, stream):
    """A CUlaunchConfig with programmatic stream serialization: the
    launch may begin once every CTA of the stream's previous kernel has
    executed griddepcontrol.launch_dependents or exited (under stream
    capture, a programmatic edge of the graph)."""
    config = driver.CUlaunchConfig()
    config.gridDimX, config.gridDimY, config.gridDimZ = (int(x) for x in grid)
    config.blockDimX, config.blockDimY, config.blockDimZ = (int(x) for x in block)
    config.sharedMemBytes = int(dynamic_smem)
    config.hStream = driver.CUstream(int(stream))
    attribute = driver.CUlaunchAttribute()
    attribute.id = driver.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION
    attribute.value.programmaticStreamSerializationAllowed = 1
    config.attrs = [attribute]
    config.numAttrs = 1
    return config


class _MapPool:
    """Device memory of one context for tensor maps: slabs of
    64-byte-aligned slots, each written once, found again by the
    parameters that encoded it."""

    SLOTS = 4096

    def __init__(self):
        self.by_params: dict[tuple, int] = {}
        self.slab, self.used = 0, self.SLOTS

    def address(self, blob: bytes) -> int:
        """A fresh slot holding `blob`."""
        driver = _driver()
        with _lock, relaxed_capture():
            if self.used == self.SLOTS:
                self.slab = int(
                    _check(driver.cuMemAlloc(self.SLOTS * TENSOR_MAP_BYTES), "cuMemAlloc")
                )
                self.used = 0
            address = self.slab + self.used * TENSOR_MAP_BYTES
            self.used += 1
            _check(driver.cuMemcpyHtoD(address, blob, len(blob)), "cuMemcpyHtoD")
            return address


_pools: dict = {}  # context handle -> _MapPool


def tensor_map(address: int, data_type: str, *, sizes, strides, box, swizzle: str) -> int:
    """The device address, in the current context, of the CUtensorMap (see
    tensormap.encode) of the tensor at `address`: for kernels that take a
    tensor-map pointer. (It writes device memory with a synchronous copy
    the first time, so not inside a stream capture: kernels that take
    their maps by value -- `encode_map`, _ir.TENSOR_MAP_PARAM -- need none.)"""
    ensure_context()
    pool = _pools.setdefault(current_context(), _MapPool())
    key = (address, data_type, tuple(sizes), tuple(strides), tuple(box), swizzle)
    found = pool.by_params.get(key)
    if found is None:
        found = pool.by_params[key] = pool.address(
            encode_map(address, data_type, sizes=sizes, strides=strides, box=box, swizzle=swizzle)
        )
    return found


_encoded: dict = {}
_ENCODED = 4096  # maps kept encoded; the oldest goes first


def encode_map(address: int, data_type: str, *, sizes, strides, box, swizzle: str) -> bytes:
    """The 128-byte CUtensorMap (tensormap.encode) of the tensor at
    `address`, for a "map" launch argument. Host work only: no context,
    device memory or stream is touched, so it is safe anywhere, inside a
    stream capture too; encoded once per set of parameters."""
    key = (address, data_type, tuple(sizes), tuple(strides), tuple(box), swizzle)
    found = _encoded.get(key)
    if found is None:
        found = encode(address, data_type, sizes=sizes, strides=strides, box=box, swizzle=swizzle)
        with _lock:
            if len(_encoded) >= _ENCODED:
                _encoded.pop(next(iter(_encoded)))
            _encoded[key] = found
    return found


_workspaces: dict = {}


def workspace(nbytes: int, stream: int = 0, purpose: str = "flags") -> int:
    """The address of at least `nbytes` of device memory in the current
    context, zeroed before the kernels on `stream` that use it run.

    Eagerly: one buffer per context, stream and `purpose`, so launches that
    may run concurrently never share one, and one purpose's contents never
    land in another's. A "flags" buffer stays zero only if every kernel that
    uses it leaves it zero (split-K and stream-K reset their flags); scratch
    ("partials") need not. It grows, never shrinks, and is never freed
    (launchers prepared earlier keep pointing into it).

    While `stream` captures a graph: a buffer of the captured launch's own,
    never shared with eager launches or other graphs, which may run beside
    the graph on other streams; zeroed now, on a stream of its own outside
    the capture (a memset node in the graph would cost every replay; the
    kernels leave their flags zero, so each replay finds them so)."""
    if nbytes <= 0:
        return 0
    driver = _driver()
    ensure_context()
    if capturing(stream):
        with relaxed_capture():
            address = int(_check(driver.cuMemAlloc(nbytes), "cuMemAlloc"))
            side = _zeroing_stream()
            _check(driver.cuMemsetD8Async(address, 0, nbytes, side), "cuMemsetD8Async")
            _check(driver.cuStreamSynchronize(side), "cuStreamSynchronize")
        return address  # never freed: the graph keeps pointing at it
    key = (current_context(), int(stream), purpose)
    with _lock:
        found = _workspaces.get(key)
        if found is None or found[1] < nbytes:
            size = max(nbytes, 2 * found[1] if found else 0)
            address = int(_check(driver.cuMemAlloc(size), "cuMemAlloc"))
            _check(
                driver.cuMemsetD8Async(address, 0, size, driver.CUstream(int(stream))),
                "cuMemsetD8Async",
            )
            found = _workspaces[key] = (address, size)
        return found[0]


_zeroing: dict = {}  # context -> a non-blocking stream that never captures


def _zeroing_stream():
    """The current context's stream for zeroing captured workspaces."""
    driver = _driver()
    context = current_context()
    if context not in _zeroing:
        flags = driver.CUstream_flags.CU_STREAM_NON_BLOCKING
        _zeroing[context] = _check(driver.cuStreamCreate(flags), "cuStreamCreate")
    return _zeroing[context]


def elapsed_ms(launch, stream: int = 0, repeat: int = 10) -> float:
    """Milliseconds per call of `launch()` (which enqueues work on
    `stream`): one warm-up call, then `repeat` calls between two events."""
    driver = _driver()
    ensure_context()
    handle = driver.CUstream(int(stream))
    start = _check(driver.cuEventCreate(0), "cuEventCreate")
    end = _check(driver.cuEventCreate(0), "cuEventCreate")
    try:
        launch()
        _check(driver.cuEventRecord(start, handle), "cuEventRecord")
        for _ in range(repeat):
            launch()
        _check(driver.cuEventRecord(end, handle), "cuEventRecord")
        _check(driver.cuEventSynchronize(end), "cuEventSynchronize")
        return float(_check(driver.cuEventElapsedTime(start, end), "cuEventElapsedTime")) / repeat
    finally:
        driver.cuEventDestroy(start)
        driver.cuEventDestroy(end)
