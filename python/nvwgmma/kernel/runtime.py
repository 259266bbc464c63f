"""Launching generated kernels: the CUDA driver API through cuda-python,
with no nvwgmma build needed (this module is pure Python, so it runs where
only precompiled PTX exists).

    from nvwgmma.kernel import runtime
    kernel = runtime.Kernel(ptx_text, "gemm", dynamic_smem=215024)  # loaded once
    tmap = runtime.tensor_map(address, "BFLOAT16", sizes=(K, M, 1),
                              strides=(K * 2, M * K * 2), box=(64, 128, 1), swizzle="128B")
    kernel.launch(grid=(128, 1, 1), block=(384, 1, 1),
                  args=[("u64", tmap), ("i32", 4096), ("f32", 1.0)], stream=0)

Kernels with compile-time cluster dimensions (`.reqnctapercluster`) launch
as clusters through the plain launch; the grid must be a multiple of the
cluster. Tensor maps live in device memory that is written once and never
reused for another map (the TMA unit may cache a map by address), keyed by
their contents.
"""

from __future__ import annotations

import ctypes
import threading

from .. import _checks
from .tensormap import TENSOR_MAP_BYTES, _check, _driver, encode

__all__ = [
    "Kernel",
    "Launch",
    "device_attribute",
    "elapsed_ms",
    "ensure_context",
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
    if int(_check(driver.cuCtxGetCurrent(), "cuCtxGetCurrent")) == 0:
        device = _check(driver.cuDeviceGet(0), "cuDeviceGet")
        context = _check(driver.cuDevicePrimaryCtxRetain(device), "cuDevicePrimaryCtxRetain")
        _check(driver.cuCtxSetCurrent(context), "cuCtxSetCurrent")


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


class Kernel:
    """Kernel `name` of a PTX (str) or cubin (bytes) image, loaded into the
    current context, allowed `dynamic_smem` bytes of dynamic shared memory."""

    def __init__(self, image, name: str, *, dynamic_smem: int = 0):
        driver = _driver()
        ensure_context()
        if isinstance(image, str):
            image = image.encode() + b"\0"
        if not isinstance(image, (bytes, bytearray)):
            raise TypeError(
                f"image must be PTX text or cubin bytes, but got {type(image).__name__}"
            )
        self._image = bytes(image)  # the driver reads it during the load only
        self.module = _check(driver.cuModuleLoadData(self._image), "cuModuleLoadData")
        self.function = _check(
            driver.cuModuleGetFunction(self.module, name.encode()), "cuModuleGetFunction"
        )
        self.name = name
        self.dynamic_smem = _checks.integer(dynamic_smem, "dynamic_smem", 0, 227 * 1024)
        if dynamic_smem > 48 * 1024:
            _check(
                driver.cuFuncSetAttribute(
                    self.function,
                    driver.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                    dynamic_smem,
                ),
                "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)",
            )

    def launch(self, *, grid, block, args, stream=0) -> None:
        """Launch with `args`: (type, value) pairs, type one of u64 (pointers
        and tensor-map addresses), i64, i32, f32; `stream`: a CUstream handle
        (an int, 0 for the legacy default stream)."""
        self.launcher(grid=grid, block=block, args=args, stream=stream)()

    def launcher(self, *, grid, block, args, stream=0) -> Launch:
        """A Launch of this kernel with these arguments: the parameter
        buffer packed once, launched again by calling it."""
        return Launch(self, grid, block, args, stream)


class Launch:
    """A prepared launch: calling it launches the kernel again. The
    parameters are packed once; `set(i, value)` rewrites parameter i in
    place (the driver copies the buffer at each launch, so a launch already
    queued keeps the value it was given)."""

    def __init__(self, kernel: Kernel, grid, block, args, stream):
        driver = _driver()
        self.values = []
        for kind, value in args:
            if kind not in _C_TYPES:
                raise ValueError(
                    f"argument type must be one of {', '.join(_C_TYPES)}, but got {kind!r}"
                )
            self.values.append(_C_TYPES[kind](value))
        self._pointers = (ctypes.c_void_p * max(1, len(self.values)))(
            *[ctypes.cast(ctypes.pointer(v), ctypes.c_void_p) for v in self.values]
        )
        self._launch_kernel = driver.cuLaunchKernel
        self._args = (kernel.function, *tuple(grid), *tuple(block), kernel.dynamic_smem,
                      driver.CUstream(int(stream)), ctypes.addressof(self._pointers), 0)  # fmt: skip
        self._what = f"cuLaunchKernel({kernel.name})"

    def set(self, index: int, value) -> None:
        self.values[index].value = value

    def __call__(self) -> None:
        _check(self._launch_kernel(*self._args), self._what)


class _MapPool:
    """Device memory for tensor maps: slabs of 64-byte-aligned slots, each
    written once, found again by the parameters that encoded it."""

    SLOTS = 4096

    def __init__(self):
        self.by_params: dict[tuple, int] = {}
        self.slab, self.used = 0, self.SLOTS

    def address(self, blob: bytes) -> int:
        """A fresh slot holding `blob`."""
        driver = _driver()
        with _lock:
            if self.used == self.SLOTS:
                self.slab = int(
                    _check(driver.cuMemAlloc(self.SLOTS * TENSOR_MAP_BYTES), "cuMemAlloc")
                )
                self.used = 0
            address = self.slab + self.used * TENSOR_MAP_BYTES
            self.used += 1
            _check(driver.cuMemcpyHtoD(address, blob, len(blob)), "cuMemcpyHtoD")
            return address


_pool = _MapPool()


def tensor_map(address: int, data_type: str, *, sizes, strides, box, swizzle: str) -> int:
    """The device address of the CUtensorMap (see tensormap.encode) of the
    tensor at `address`: what a kernel takes as its tensor-map pointer."""
    key = (address, data_type, tuple(sizes), tuple(strides), tuple(box), swizzle)
    found = _pool.by_params.get(key)
    if found is None:
        ensure_context()
        blob = encode(address, data_type, sizes=sizes, strides=strides, box=box, swizzle=swizzle)
        found = _pool.by_params[key] = _pool.address(blob)
    return found


_workspaces: dict = {}


def workspace(nbytes: int, stream: int = 0, purpose: str = "flags") -> int:
    """The address of at least `nbytes` of device memory, zeroed when
    allocated, for the kernels on `stream`: one buffer per context, stream
    and `purpose`, so launches that may run concurrently never share one,
    and one purpose's contents never land in another's. A "flags" buffer
    stays zero only if every kernel that uses it leaves it zero (split-K
    and stream-K reset their flags); scratch ("partials") need not. It
    grows, never shrinks, and is never freed (launchers prepared earlier
    keep pointing into it)."""
    if nbytes <= 0:
        return 0
    driver = _driver()
    ensure_context()
    context = int(_check(driver.cuCtxGetCurrent(), "cuCtxGetCurrent"))
    key = (context, int(stream), purpose)
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
