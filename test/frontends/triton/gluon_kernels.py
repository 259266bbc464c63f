"""Gluon kernels for the checker's front-end corpus (Triton's lower-level
language: explicit shared memory, mbarriers, TMA and warpgroup MMA), after
the structure of Triton's Gluon tutorials: a software-pipelined 4-stage ring
in one partition, and a warp-specialised ready/empty ring (a one-warp TMA
loader, the default partition running the MMAs). Written for nvwgmma's
corpus (Apache-2.0 WITH LLVM-exception); needs a Triton with Gluon's
warp_specialize([(fn, args), ...], ...) form. Imported by generate.py.
"""

from __future__ import annotations

from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import (
    mbarrier,
    tma,
    warpgroup_mma,
    warpgroup_mma_wait,
)


@gluon.jit
def _store_tile(acc, c_ptr, N, off_m, off_n, BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr,
                num_warps: gl.constexpr):  # fmt: skip
    """The fp16 tile to C through registers (no TMA store: the corpus is
    about the loads' ring)."""
    out_layout: gl.constexpr = gl.BlockedLayout([1, 4], [8, 4], [num_warps, 1], [1, 0])
    rm = off_m + gl.arange(0, BLOCK_M, layout=gl.SliceLayout(1, out_layout))
    rn = off_n + gl.arange(0, BLOCK_N, layout=gl.SliceLayout(0, out_layout))
    c = gl.convert_layout(acc.to(gl.float16), out_layout)
    gl.store(c_ptr + rm[:, None] * N + rn[None, :], c)


@gluon.jit
def gluon_pipelined_matmul(
    a_desc, b_desc, c_ptr, M, N, K, STAGES: gl.constexpr, num_warps: gl.constexpr
):
    BLOCK_M: gl.constexpr = a_desc.block_type.shape[0]
    BLOCK_K: gl.constexpr = a_desc.block_type.shape[1]
    BLOCK_N: gl.constexpr = b_desc.block_type.shape[0]
    a_bufs = gl.allocate_shared_memory(
        a_desc.dtype, [STAGES] + a_desc.block_type.shape, a_desc.layout
    )
    b_bufs = gl.allocate_shared_memory(
        b_desc.dtype, [STAGES] + b_desc.block_type.shape, b_desc.layout
    )
    bars = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    for i in gl.static_range(STAGES):
        mbarrier.init(bars.index(i), count=1)
    off_m = gl.program_id(0) * BLOCK_M
    off_n = gl.program_id(1) * BLOCK_N
    layout: gl.constexpr = gl.NVMMADistributedLayout(
        version=[3, 0], warps_per_cta=[num_warps, 1], instr_shape=[16, BLOCK_N, 16]
    )
    acc = gl.zeros((BLOCK_M, BLOCK_N), dtype=gl.float32, layout=layout)
    k_tiles = gl.cdiv(K, BLOCK_K)
    for i in gl.static_range(STAGES - 1):
        mbarrier.expect(bars.index(i), a_desc.block_type.nbytes + b_desc.block_type.nbytes)
        tma.async_load(a_desc, [off_m, i * BLOCK_K], bars.index(i), a_bufs.index(i))
        tma.async_load(b_desc, [off_n, i * BLOCK_K], bars.index(i), b_bufs.index(i))
    for k in range(k_tiles):
        s = k % STAGES
        mbarrier.wait(bars.index(s), (k // STAGES) & 1)
        acc = warpgroup_mma(a_bufs.index(s), b_bufs.index(s).permute((1, 0)), acc, is_async=True)
        acc = warpgroup_mma_wait(num_outstanding=1, deps=(acc,))
        nk = k + STAGES - 1
        if nk < k_tiles:
            ns = nk % STAGES
            mbarrier.expect(bars.index(ns), a_desc.block_type.nbytes + b_desc.block_type.nbytes)
            tma.async_load(a_desc, [off_m, nk * BLOCK_K], bars.index(ns), a_bufs.index(ns))
            tma.async_load(b_desc, [off_n, nk * BLOCK_K], bars.index(ns), b_bufs.index(ns))
    acc = warpgroup_mma_wait(num_outstanding=0, deps=(acc,))
    _store_tile(acc, c_ptr, N, off_m, off_n, BLOCK_M, BLOCK_N, num_warps)


@gluon.jit
def _ws_loader(
    a_desc, b_desc, a_bufs, b_bufs, ready, empty, off_m, off_n, k_tiles, STAGES: gl.constexpr
):
    BLOCK_K: gl.constexpr = a_desc.block_type.shape[1]
    for k in range(k_tiles):
        s = k % STAGES
        # The ring starts empty: the first round waits on the complement.
        mbarrier.wait(empty.index(s), ((k // STAGES) & 1) ^ 1)
        mbarrier.expect(ready.index(s), a_desc.block_type.nbytes + b_desc.block_type.nbytes)
        tma.async_load(a_desc, [off_m, k * BLOCK_K], ready.index(s), a_bufs.index(s))
        tma.async_load(b_desc, [off_n, k * BLOCK_K], ready.index(s), b_bufs.index(s))


@gluon.jit
def _ws_mma(
    a_bufs,
    b_bufs,
    ready,
    empty,
    c_ptr,
    N,
    off_m,
    off_n,
    k_tiles,
    BLOCK_M: gl.constexpr,
    BLOCK_N: gl.constexpr,
    STAGES: gl.constexpr,
    num_warps: gl.constexpr,
):
    layout: gl.constexpr = gl.NVMMADistributedLayout(
        version=[3, 0], warps_per_cta=[num_warps, 1], instr_shape=[16, BLOCK_N, 16]
    )
    acc = gl.zeros((BLOCK_M, BLOCK_N), dtype=gl.float32, layout=layout)
    for k in range(k_tiles):
        s = k % STAGES
        mbarrier.wait(ready.index(s), (k // STAGES) & 1)
        acc = warpgroup_mma(a_bufs.index(s), b_bufs.index(s).permute((1, 0)), acc, is_async=True)
        acc = warpgroup_mma_wait(num_outstanding=1, deps=(acc,))
        # Group k - 1 is complete: its stage goes back to the loader.
        if k > 0:
            mbarrier.arrive(empty.index((k - 1) % STAGES), count=1)
    acc = warpgroup_mma_wait(num_outstanding=0, deps=(acc,))
    _store_tile(acc, c_ptr, N, off_m, off_n, BLOCK_M, BLOCK_N, num_warps)


@gluon.jit
def gluon_warp_specialized_matmul(
    a_desc, b_desc, c_ptr, M, N, K, STAGES: gl.constexpr, num_warps: gl.constexpr
):
    BLOCK_M: gl.constexpr = a_desc.block_type.shape[0]
    BLOCK_K: gl.constexpr = a_desc.block_type.shape[1]
    BLOCK_N: gl.constexpr = b_desc.block_type.shape[0]
    a_bufs = gl.allocate_shared_memory(
        a_desc.dtype, [STAGES] + a_desc.block_type.shape, a_desc.layout
    )
    b_bufs = gl.allocate_shared_memory(
        b_desc.dtype, [STAGES] + b_desc.block_type.shape, b_desc.layout
    )
    ready = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    empty = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    for i in gl.static_range(STAGES):
        mbarrier.init(ready.index(i), count=1)
        mbarrier.init(empty.index(i), count=1)
    off_m = gl.program_id(0) * BLOCK_M
    off_n = gl.program_id(1) * BLOCK_N
    k_tiles = gl.cdiv(K, BLOCK_K)
    gl.warp_specialize(
        [
            (
                _ws_mma,
                (
                    a_bufs,
                    b_bufs,
                    ready,
                    empty,
                    c_ptr,
                    N,
                    off_m,
                    off_n,
                    k_tiles,
                    BLOCK_M,
                    BLOCK_N,
                    STAGES,
                    num_warps,
                ),
            ),
            (
                _ws_loader,
                (a_desc, b_desc, a_bufs, b_bufs, ready, empty, off_m, off_n, k_tiles, STAGES),
            ),
        ],
        [1],
        [40],
    )


@gluon.jit
def _wsp_loader(
    a_desc, b_desc, a_bufs, b_bufs, ready, empty, tiles_n, num_tiles, k_tiles,
    STAGES: gl.constexpr,
):  # fmt: skip
    BLOCK_M: gl.constexpr = a_desc.block_type.shape[0]
    BLOCK_K: gl.constexpr = a_desc.block_type.shape[1]
    BLOCK_N: gl.constexpr = b_desc.block_type.shape[0]
    it = 0
    for tile in range(gl.program_id(0), num_tiles, gl.num_programs(0)):
        off_m = (tile // tiles_n) * BLOCK_M
        off_n = (tile % tiles_n) * BLOCK_N
        for k in range(k_tiles):
            s = it % STAGES
            mbarrier.wait(empty.index(s), ((it // STAGES) & 1) ^ 1)
            mbarrier.expect(ready.index(s), a_desc.block_type.nbytes + b_desc.block_type.nbytes)
            tma.async_load(a_desc, [off_m, k * BLOCK_K], ready.index(s), a_bufs.index(s))
            tma.async_load(b_desc, [off_n, k * BLOCK_K], ready.index(s), b_bufs.index(s))
            it += 1


@gluon.jit
def _wsp_mma(
    a_bufs, b_bufs, ready, empty, c_ptr, N, tiles_n, num_tiles, k_tiles,
    BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr, STAGES: gl.constexpr,
    num_warps: gl.constexpr,
):  # fmt: skip
    layout: gl.constexpr = gl.NVMMADistributedLayout(
        version=[3, 0], warps_per_cta=[num_warps, 1], instr_shape=[16, BLOCK_N, 16]
    )
    it = 0
    for tile in range(gl.program_id(0), num_tiles, gl.num_programs(0)):
        off_m = (tile // tiles_n) * BLOCK_M
        off_n = (tile % tiles_n) * BLOCK_N
        acc = gl.zeros((BLOCK_M, BLOCK_N), dtype=gl.float32, layout=layout)
        for k in range(k_tiles):  # noqa: B007 (the IR names it k)
            s = it % STAGES
            mbarrier.wait(ready.index(s), (it // STAGES) & 1)
            acc = warpgroup_mma(
                a_bufs.index(s), b_bufs.index(s).permute((1, 0)), acc, is_async=True
            )
            # Every group complete: this round's stage goes back at once.
            acc = warpgroup_mma_wait(num_outstanding=0, deps=(acc,))
            mbarrier.arrive(empty.index(s), count=1)
            it += 1
        _store_tile(acc, c_ptr, N, off_m, off_n, BLOCK_M, BLOCK_N, num_warps)


@gluon.jit
def gluon_ws_persistent_matmul(
    a_desc, b_desc, c_ptr, M, N, K, STAGES: gl.constexpr, num_warps: gl.constexpr
):
    """Persistent and warp-specialised: both partitions walk the CTA's
    tiles with one ring position carried across them."""
    BLOCK_M: gl.constexpr = a_desc.block_type.shape[0]
    BLOCK_K: gl.constexpr = a_desc.block_type.shape[1]
    BLOCK_N: gl.constexpr = b_desc.block_type.shape[0]
    a_bufs = gl.allocate_shared_memory(
        a_desc.dtype, [STAGES] + a_desc.block_type.shape, a_desc.layout
    )
    b_bufs = gl.allocate_shared_memory(
        b_desc.dtype, [STAGES] + b_desc.block_type.shape, b_desc.layout
    )
    ready = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    empty = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    for i in gl.static_range(STAGES):
        mbarrier.init(ready.index(i), count=1)
        mbarrier.init(empty.index(i), count=1)
    tiles_n = gl.cdiv(N, BLOCK_N)
    num_tiles = gl.cdiv(M, BLOCK_M) * tiles_n
    k_tiles = gl.cdiv(K, BLOCK_K)
    gl.warp_specialize(
        [
            (
                _wsp_mma,
                (
                    a_bufs,
                    b_bufs,
                    ready,
                    empty,
                    c_ptr,
                    N,
                    tiles_n,
                    num_tiles,
                    k_tiles,
                    BLOCK_M,
                    BLOCK_N,
                    STAGES,
                    num_warps,
                ),
            ),  # fmt: skip
            (
                _wsp_loader,
                (a_desc, b_desc, a_bufs, b_bufs, ready, empty, tiles_n, num_tiles, k_tiles, STAGES),
            ),  # fmt: skip
        ],
        [1],
        [40],
    )


def kernels():
    """(name, GluonASTSource) of each kernel, 128 x 128 x 64 fp16 tiles unless
    said."""
    from triton.experimental.gluon._runtime import GluonASTSource

    layout = gl.NVMMASharedLayout.get_default_for([128, 64], gl.float16)
    desc = f"tensordesc<fp16[128,64],{layout!r}>"
    sig = {"a_desc": desc, "b_desc": desc, "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32"}
    constexprs = {"STAGES": 4, "num_warps": 4}
    a_layout = gl.NVMMASharedLayout.get_default_for([64, 64], gl.float16)
    a3 = f"tensordesc<fp16[64,64],{a_layout!r}>"
    sig3 = {**sig, "a_desc": a3}
    return [
        ("gluon_pipelined_matmul", GluonASTSource(gluon_pipelined_matmul, sig, constexprs)),
        (
            "gluon_warp_specialized_matmul",
            GluonASTSource(gluon_warp_specialized_matmul, sig, constexprs),
        ),
        ("gluon_ws_persistent_matmul", GluonASTSource(gluon_ws_persistent_matmul, sig, constexprs)),
        # The warp-specialised ring at other sizes (3 stages, 64 x 128 x 64
        # tiles): tuned on, the 4-stage kernel above stays held out.
        (
            "gluon_ws_matmul_3stage",
            GluonASTSource(gluon_warp_specialized_matmul, sig3, {"STAGES": 3, "num_warps": 4}),
        ),
    ]
