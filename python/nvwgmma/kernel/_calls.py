"""What matmul and attention share for calls on torch tensors or cupy
arrays: the key a repeated call is known by, CUDA stream handles, a bounded
cache of recent launches (and when one may be reused inside a CUDA graph
capture), whether torch is tracing, and pointing a prepared launch at new
outputs."""

from __future__ import annotations

import sys
import threading
from dataclasses import is_dataclass

from . import runtime

# Recent launches a cache keeps: the oldest goes first.
RECENT = 256
_lock = threading.Lock()  # calls from several threads (one stream each) share the caches


def _is_config(v) -> bool:
    """A GemmConfig, AttentionConfig, ...: frozen dataclasses, hashable."""
    return is_dataclass(v) and not isinstance(v, type)


def key(values):
    """What a launch cache keys a call by: each tensor's address, shape,
    strides, dtype and device, each other argument itself; None where an
    argument is neither (such a call is not cached)."""
    found = []
    for v in values:
        if type(v).__module__.split(".")[0] == "torch" and hasattr(v, "data_ptr"):
            found.append((v.data_ptr(), v.shape, v.stride(), v.dtype, v.device))
        elif hasattr(v, "__cuda_array_interface__"):
            i = v.__cuda_array_interface__
            found.append((i["data"][0], i["shape"], i.get("strides"), i["typestr"]))
        elif v is None or isinstance(v, (str, int, float)) or _is_config(v):
            found.append(v)
        else:
            return None
    return tuple(found)


def layout_key(values):
    """key() without the addresses: each tensor's shape, strides, dtype,
    device and whether its address is 16-byte aligned (what TMA's checks
    read), so calls on new tensors of the same layout share a launch that
    re-points itself at them (training allocates new activations every
    step); None where key() is."""
    found = []
    for v in values:
        if type(v).__module__.split(".")[0] == "torch" and hasattr(v, "data_ptr"):
            found.append((v.data_ptr() % 16 == 0, v.shape, v.stride(), v.dtype, v.device))
        elif hasattr(v, "__cuda_array_interface__"):
            i = v.__cuda_array_interface__
            # The device (cupy's): the same layout on another device is another
            # launch. An array that does not say is keyed by its address.
            device = getattr(getattr(v, "device", None), "id", None)
            at = i["data"][0] % 16 == 0 if device is not None else i["data"][0]
            found.append((at, device, i["shape"], i.get("strides"), i["typestr"]))
        elif v is None or isinstance(v, (str, int, float)) or _is_config(v):
            found.append(v)
        else:
            return None
    return tuple(found)


def default_stream(value) -> int:
    """The current stream of the tensor's device: torch's for a torch
    tensor, cupy's for a cupy array (cupy's default: the legacy stream,
    0), else the legacy default stream."""
    module = type(value).__module__.split(".")[0]
    if module == "torch":
        import torch

        return torch.cuda.current_stream(value.device).cuda_stream
    if module == "cupy":
        import cupy

        return cupy.cuda.get_current_stream(value.device.id).ptr
    return 0


def stream_of(stream, value) -> int:
    """The CUstream handle a call runs on: `stream` (see handle), else the
    current stream of `value`'s device (default_stream)."""
    return default_stream(value) if stream is None else handle(stream)


def compiling() -> bool:
    """Whether torch.compile (Dynamo) or torch.export is tracing this call:
    matmul and attention then hand it to their torch ops."""
    torch = sys.modules.get("torch")
    return torch is not None and torch.compiler.is_compiling()


def handle(stream) -> int:
    """A CUstream handle of an int or of torch's / cupy's stream objects."""
    for attribute in ("cuda_stream", "ptr"):
        if hasattr(stream, attribute):
            return int(getattr(stream, attribute))
    return int(stream)


def address(t) -> int:
    """A torch tensor's or a __cuda_array_interface__ array's address."""
    if hasattr(t, "data_ptr"):
        return t.data_ptr()
    return t.__cuda_array_interface__["data"][0]


def reusable(cache: dict, call_key, stream: int):
    """The launch `cache` holds for `call_key`, where it may run again on
    `stream`: not one with scratch memory (a workspace, a copy) that eager
    calls share, while `stream` captures a graph -- the graph would share
    it with launches that may run beside its replays."""
    hit = cache.get(call_key) if call_key is not None else None
    if hit is not None and hit.scratch and runtime.capturing(stream):
        return None
    return hit


def remember(cache: dict, call_key, launch, stream: int) -> None:
    """Keep `launch` for calls keyed `call_key` (None: not cacheable),
    dropping the oldest beyond RECENT; not a launch with scratch memory
    prepared while `stream` captures a graph (that memory is the graph's
    own)."""
    if call_key is None or (launch.scratch and runtime.capturing(stream)):
        return
    with _lock:
        if len(cache) >= RECENT:
            cache.pop(next(iter(cache)), None)
        cache[call_key] = launch


_launching = threading.Lock()


def relaunch(launch, *outs, inputs=None) -> tuple:
    """Point a cached `launch` at `inputs` (where given: see Inputs) and
    `outs` (new ones where None) and launch it, as one step: threads that
    repeat a call share its launch, whose parameter buffer holds the
    tensors' addresses until the driver copies it at the launch (another
    thread's rewrite in between would send this call's result into that
    thread's output). Returns the outputs."""
    with _launching:
        if inputs is not None:
            launch.inputs(*inputs)
        found = launch.outputs(*outs)
        launch()
    return found


class Inputs:
    """`launch.inputs(*tensors)`: point a prepared launch at tensors of the
    layout it was prepared for (a call keyed by layout_key: its inputs, or
    buffers it allocates) -- each one's address, or the tensor map encoded
    at it, is rewritten in the packed parameters; None leaves a slot as it
    is. `slots`: per tensor (its parameter name, a callable address -> map,
    or None for a pointer)."""

    def __init__(self, launch, signature, slots):
        names = [name for name, _ in signature]
        self.launch = launch
        self.slots = [(names.index(name), map_of) for name, map_of in slots]
        self.held = [None] * len(self.slots)  # the address each slot holds

    def __call__(self, *tensors):
        for i, ((slot, map_of), t) in enumerate(zip(self.slots, tensors)):
            if t is None:
                continue
            at = address(t)
            # A slot's map is rebuilt only for a new address: steady-state
            # steps reuse addresses, and rebuilding means its sizes and
            # strides again and runtime.encode_map's lookup (which keeps
            # the driver's ~19 us encode to once per address) -- host work
            # on every call of a hot path.
            if map_of is None or at != self.held[i]:
                self.launch.set(slot, at if map_of is None else map_of(at))
                self.held[i] = at


class Outputs:
    """`launch.outputs(*outs)`: point a prepared launch at other outputs of
    the same shapes (a new one where an out is None) and return them -- each
    output's address and, where it has one, its tensor map are rewritten in
    the packed parameters. `slots`: per output (what, parameter name, a
    callable returning a new one or None, its tensor map's parameter name
    and a callable address -> map address, or None)."""

    def __init__(self, launch, signature, slots):
        names = [name for name, _ in signature]
        self.launch = launch
        self.slots = [(what, names.index(name), new, map_name and names.index(map_name), map_of)
                      for what, name, new, map_name, map_of in slots]  # fmt: skip
        self.held = [None] * len(self.slots)  # the address each map encodes

    def __call__(self, *outs):
        found = []
        for i, ((what, slot, new, map_slot, map_of), out) in enumerate(zip(self.slots, outs)):
            if out is None:
                if new is None:
                    raise ValueError(f"this launch was prepared for a strided {what}, so "
                                     f"outputs() needs an {what}")  # fmt: skip
                out = new()
            at = address(out)
            self.launch.set(slot, at)
            if map_of is not None and at != self.held[i]:
                self.launch.set(map_slot, map_of(at))
                self.held[i] = at
            found.append(out)
        return tuple(found)
