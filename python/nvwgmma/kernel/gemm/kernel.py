"""`build_gemm`: a GEMM kernel composed from the pieces of this package --
the mainloop (TMA ring + wgmma steps), the epilogue (fusion chain + store),
the tile scheduler and the kernel schedule -- as an MLIR module and the
metadata a launcher needs."""

from __future__ import annotations

from dataclasses import asdict

from .._ir import TENSOR_MAP_PARAM
from .config import PERSISTENT_MAX_K, SHARED_MEMORY_LIMIT, GemmConfig, check_config

__all__ = ["KERNEL_SIGNATURE", "build_gemm", "default_scheduler"]

# The kernel's parameters, in order (what nvwgmma.kernel.gemm.launch passes).
KERNEL_SIGNATURE = (
    ("tmA", TENSOR_MAP_PARAM),  # A's 3-D tensor map (K or M innermost, then the other, then batch)
    ("tmB", TENSOR_MAP_PARAM),  # B's 3-D tensor map
    ("C", "!llvm.ptr<1>"),  # C: batch x M x N row-major (the registers epilogue)
    ("tmC", TENSOR_MAP_PARAM),  # C's 3-D tensor map (the tma epilogue)
    ("M", "i32"),
    ("N", "i32"),
    ("K", "i32"),
    ("batch", "i32"),
    ("bias", "!llvm.ptr<1>"),  # Bias: M or N elements
    ("R", "!llvm.ptr<1>"),  # Residual: batch x M x N row-major
    ("alpha", "f32"),
    ("beta", "f32"),
    ("scale", "f32"),
    # split-K / stream-K partials (scheduler.workspace_bytes): scratch
    ("workspace", "!llvm.ptr<1>"),
    # their flags (scheduler.flag_bytes): zero before and after every launch. A
    # buffer of their own: partials of another shape or kernel on the same
    # stream would land where these flags are and leave them non-zero.
    ("flags", "!llvm.ptr<1>"),
)


def default_scheduler(config, args, rank):
    """build_gemm's scheduler: the one `config.scheduler` names, over the
    kernel's M, N, K and batch parameters."""
    from .scheduler import make_scheduler

    return make_scheduler(config, args["M"], args["N"], args["K"], args["batch"], rank=rank)


def build_gemm(config: GemmConfig | None = None, *, scheduler=None, mainloop=None, epilogue=None,
               extra_params=()):  # fmt: skip
    """(module, meta) for `config`: the kernel `gemm` with the parameters of
    KERNEL_SIGNATURE, then `extra_params`. meta: kernel name, block, dynamic
    shared memory, tile, cluster, the TMA boxes of A, B and C (for
    tensormap.encode_tiled), the parameter list.

    Extension points (docs/kernels.md, "Extending the GEMM"), each a
    callable replacing the library's piece:
      scheduler(config, args, rank)  the tile scheduler (scheduler.Persistent's
                     interface); `args` maps every parameter's name to its Value,
                     and with config.group_table "group_table" to the shared
                     memory reserved for the groups (default: default_scheduler)
      mainloop(config)  the TMA ring and wgmma steps (mainloop.Mainloop's)
      epilogue(config)  the fusion chain and store (store.Epilogue's)
      extra_params   (name, MLIR type) pairs the kernel takes after
                     KERNEL_SIGNATURE (a pointer to group offsets, say)"""
    from ...dialects import llvm, nvvm, scf
    from ...ir import InsertionPoint, Location
    from .. import pipeline, smem
    from .._ir import gep, kernel_shell
    from .dependent import wait_for_previous
    from .fixup import Workspace
    from .group_table import table_bytes
    from .mainloop import Mainloop
    from .schedule import cooperative, pingpong
    from .store import Epilogue

    c = GemmConfig() if config is None else config
    check_config(c)
    for what, piece in (("scheduler", scheduler), ("mainloop", mainloop), ("epilogue", epilogue)):
        if piece is not None and not callable(piece):
            raise TypeError(f"{what} must be a callable (or None: the library's), but got "
                            f"{type(piece).__name__}")  # fmt: skip
    signature = KERNEL_SIGNATURE + _extra(extra_params)
    if c.block_scales and not all(p in signature for p in BLOCK_SCALE_PARAMS):
        signature += _extra(BLOCK_SCALE_PARAMS, taken={name for name, _ in signature})
    mainloop, ep = (mainloop or Mainloop)(c), (epilogue or Epilogue)(c)
    ring_at = c.stages * mainloop.stage_bytes
    align = mainloop.alignment
    c_at = -(-(ring_at + 2 * 8 * c.stages) // align) * align
    table_at = c_at + c.consumers * ep.staging_bytes
    dynamic_smem = table_at + table_bytes(c.group_table) + (align - 16)
    assert dynamic_smem == c.shared_memory_bytes, (dynamic_smem, c.shared_memory_bytes)
    if dynamic_smem > SHARED_MEMORY_LIMIT:
        raise ValueError(
            f"the stages must fit 227 KiB of shared memory, but {c.stages} stages of "
            f"{mainloop.stage_bytes} bytes need {dynamic_smem}"
        )
    threads = 128 * (1 + c.consumers)
    # Narrow tiles stay under the share, where ptxas cannot place setmaxnreg
    # (C7508) unless the entry count is stated (two consumers of 80 and 96
    # columns still did); a wide tile's registers epilogue would spill under it.
    module, entry, args = kernel_shell("gemm", signature, threads, c.cluster_m,
                                       setmaxnreg=c.consumer_regs, state_entry=c.tile_n <= 96)  # fmt: skip
    with Location.unknown():
        with InsertionPoint(entry.operations[0]):
            base = smem.aligned_base(llvm.mlir_addressof(llvm.PointerType.get(3), "dsmem"), align)
            # Every CTA of a cluster releases each stage in every CTA of it.
            # Every consumer reading a stage releases it (ping-pong: one).
            readers = c.consumers if c.schedule == "cooperative" else 1
            ring = pipeline.Ring(gep(base, ring_at), c.stages, readers * c.cluster_m)
            v = _values(c, args, base, c_at)
            init = scf.IfOp(v.first)
            with InsertionPoint(init.then_block):
                ring.init()
                if v.rank is not None:  # the peer arrives on and multicasts into them
                    nvvm.fence_mbarrier_init()
                scf.YieldOp([])
            if v.rank is not None:
                nvvm.cluster_arrive()
                nvvm.cluster_wait()
            else:
                nvvm.barrier0()
            # Nothing above touches global memory. Every piece a caller can
            # replace (scheduler, mainloop, epilogue) emits after the wait:
            # any of them may read memory the previous kernel writes.
            wait_for_previous()
            mainloop.bind(base)
            if c.group_table:
                args = {**args, "group_table": gep(base, table_at)}
            tiles = (scheduler or default_scheduler)(c, args, v.rank)
            workspace = None
            if tiles.fixup:
                workspace = Workspace(c, args["workspace"], args["flags"])
            schedule = cooperative if c.schedule == "cooperative" else pingpong
            schedule(c, v, ring, mainloop, ep, tiles, workspace)
            if v.rank is not None:
                # No CTA leaves while its peer may still arrive on its barriers.
                nvvm.cluster_arrive()
                nvvm.cluster_wait()
    module.operation.verify()
    boxes = {**mainloop.boxes, "C": ep.box}
    meta = {
        "kernel": "gemm",
        "config": asdict(c),
        "name": c.name,
        "block": [threads, 1, 1],
        # Same kernel for any grid: it loops over tiles ctaid, ctaid + nctaid, ...
        "grid": "persistent, balanced: the fewest CTAs finishing in the same waves (grid_size)",
        "persistent_max_k": PERSISTENT_MAX_K,
        "scheduler": c.scheduler,
        "splits": c.splits,
        "dynamic_smem": dynamic_smem,
        "tile": [c.tile_m, c.tile_n, c.k_tile],
        "cluster": [c.cluster_m, 1, 1],
        "boxes": {name: asdict(box) for name, box in boxes.items()},
        "signature": [list(p) for p in signature],
        # It waits on the previous kernel before touching memory: launch it
        # as a programmatic dependent launch (dependent.py).
        "programmatic": True,
    }
    return module, meta


_BASE_NAMES = frozenset(name for name, _ in KERNEL_SIGNATURE)


# A block-scaled kernel's scales (GemmConfig.block_scales), after the others.
BLOCK_SCALE_PARAMS = (("scale_a", "!llvm.ptr<1>"), ("scale_b", "!llvm.ptr<1>"))


def _extra(params, taken=None) -> tuple:
    """`extra_params` checked: (name, type) string pairs, new names."""
    taken = set(taken or {name for name, _ in KERNEL_SIGNATURE})
    found = []
    for pair in params:
        if not (
            isinstance(pair, tuple) and len(pair) == 2 and all(isinstance(x, str) for x in pair)
        ):
            raise TypeError(
                f"extra_params must be (name, MLIR type) string pairs, but got {pair!r}"
            )
        name, kind = pair
        if not name.isidentifier() or name in taken:
            raise ValueError(
                f"an extra parameter's name must be a new identifier (not one of "
                f"{', '.join(sorted(taken))}), but got {name!r}"
            )
        taken.add(name)
        found.append((name, kind))
    return tuple(found)


def _values(c, args, base, staging_at):
    """The thread's roles and the kernel's operands as a KernelValues."""
    from ...dialects import arith, nvvm
    from ...ir import IntegerType
    from .._ir import warpgroup_index
    from .fusion import Operands
    from .schedule import KernelValues

    i32 = IntegerType.get_signless(32)

    def const(value):
        return arith.constant(i32, value)

    tid = nvvm.read_ptx_sreg_tid_x(i32)
    rank = nvvm.read_ptx_sreg_cluster_ctarank(i32) if c.cluster_m > 1 else None
    return KernelValues(
        tm_a=args["tmA"],
        tm_b=args["tmB"],
        tm_c=args["tmC"],
        c_ptr=args["C"],
        warpgroup=warpgroup_index(tid),
        wg_thread=arith.remui(tid, const(128)),
        first=arith.cmpi(arith.CmpIPredicate.eq, tid, const(0)),
        rank=rank,
        peers=() if rank is None else (arith.xori(rank, const(1)),),
        base=base,
        staging_at=staging_at,
        operands=Operands(
            m=args["M"],
            n=args["N"],
            bias=args["bias"],
            residual=args["R"],
            alpha=args["alpha"],
            beta=args["beta"],
            scale=args["scale"],
            transposed=c.store_transposed,
            extra={name: value for name, value in args.items() if name not in _BASE_NAMES},
        ),
    )
