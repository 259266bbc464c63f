"""Single-warpgroup wgmma test kernels, built with nvwgmma's Python API.

Kernel signature (every config):
    kernel(a_tile: ptr<1>, b_tile: ptr<1>, a_frag: ptr<1>, d: ptr<1>, meta: ptr<1>,
           first_scale: i32)

128 threads copy the A and B tiles (already in the canonical layout their
descriptors describe, made by nvwgmma.layouts.shared_tile) from global to
shared memory, make the writes visible to the async proxy
(fence.proxy.async), and then, with nvwgmma ops built by the friendly
builders, run `steps` mma_async over K (descriptors built in IR by
wg.descriptor / wg.advance_descriptor; scale-d is the runtime value
`first_scale != 0` on the first step and the constant one after), commit,
wait 0, and store each thread's accumulator registers to d[t * R + j]. The
accumulator starts from d (poisoned by the runner), so a wrong scale-d shows.
"""

from __future__ import annotations

import functools

import numpy as np
from configs import Config

SMEM_BYTES = 48 * 1024
B_OFFSET_ALIGN = 1024


def tile_shapes(cfg: Config):
    """(rows, K) of the A and B tiles for the whole K loop; a sparse A tile
    holds the compressed A (half of K)."""
    k_total = cfg.k * cfg.steps
    return (64, k_total // 2 if cfg.sparse else k_total), (cfg.n, k_total)


def layout_tiles(cfg: Config, a_bits, b_bits_t):
    """The SharedTiles of A (64 x K) and B^T (N x K) for a config."""
    from nvwgmma.layouts import shared_tile

    a_tile = shared_tile(a_bits, cfg.a_type, cfg.a_major, cfg.swizzle)
    b_tile = shared_tile(b_bits_t, cfg.b_type, cfg.b_major, cfg.swizzle)
    return a_tile, b_tile


def tile_geometry(cfg: Config):
    """Sizes and LBO/SBO/k-step of both tiles, from a zero tile of the shape."""
    (ar, ak), (br, bk) = tile_shapes(cfg)
    a, b = layout_tiles(cfg, np.zeros((ar, ak), np.uint64), np.zeros((br, bk), np.uint64))
    b_offset = -(-a.data.size // B_OFFSET_ALIGN) * B_OFFSET_ALIGN
    if b_offset + b.data.size > SMEM_BYTES:
        raise ValueError(f"{cfg.name}: tiles need {b_offset + b.data.size} bytes of shared memory")
    return a, b, b_offset


def _acc_member(cfg: Config) -> str:
    from nvwgmma.lattice import accumulator_member

    return accumulator_member(cfg.d_type)


def _acc_count(cfg: Config) -> int:
    from nvwgmma.lattice import accumulator_register_count

    return accumulator_register_count(cfg.d_type, cfg.n)


def kernel_text(cfg: Config) -> str:
    """The scaffolding (copies, fences, accumulator load/store) as MLIR text;
    the wgmma part is inserted by build_module at the placeholder."""
    a, b, b_offset = tile_geometry(cfg)
    member = _acc_member(cfg)
    count = _acc_count(cfg)
    acc_t = f"!llvm.struct<({', '.join([member] * count)})>"
    lines = []
    emit = lines.append
    emit(
        f"llvm.mlir.global internal @smem() {{addr_space = 3 : i32, alignment = 1024 : i64}} "
        f": !llvm.array<{SMEM_BYTES} x i8>"
    )
    emit(
        "llvm.func @kernel(%a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %frag: !llvm.ptr<1>, "
        "%d: !llvm.ptr<1>, %meta: !llvm.ptr<1>, %first_scale: i32) attributes {nvvm.kernel} {"
    )
    emit("  %tid = nvvm.read.ptx.sreg.tid.x : i32")
    emit("  %tidx = arith.index_cast %tid : i32 to index")
    emit("  %c128 = arith.constant 128 : index")
    emit('  %smem = llvm.mlir.addressof @smem {hw.tag = "smem"} : !llvm.ptr<3>')
    emit(f"  %smem_b = llvm.getelementptr %smem[{b_offset}] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8")
    for src, dst, size in (("%a", "%smem", a.data.size), ("%b", "%smem_b", b.data.size)):
        emit(f"  %n{src[1:]} = arith.constant {size // 16} : index")
        emit(f"  scf.for %i = %tidx to %n{src[1:]} step %c128 {{")
        emit("    %i64 = arith.index_cast %i : index to i64")
        emit(
            f"    %s = llvm.getelementptr {src}[%i64] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, vector<4xi32>"
        )
        emit("    %v = llvm.load %s {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xi32>")
        emit(
            f"    %t = llvm.getelementptr {dst}[%i64] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, vector<4xi32>"
        )
        emit("    llvm.store %v, %t {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr<3>")
        emit("  }")
    emit(
        "  nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}"
    )
    emit("  nvvm.barrier0")
    # Per-thread pointers into d (accumulator) and frag (A registers).
    emit("  %tid64 = llvm.zext %tid : i32 to i64")
    emit(f"  %dcount = llvm.mlir.constant({count} : i64) : i64")
    emit("  %doff = llvm.mul %tid64, %dcount : i64")
    emit(f"  %dbase = llvm.getelementptr %d[%doff] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, {member}")
    emit(f"  %acc0 = llvm.mlir.undef : {acc_t}")
    for j in range(count):
        emit(
            f"  %dp{j} = llvm.getelementptr %dbase[{j}] : (!llvm.ptr<1>) -> !llvm.ptr<1>, {member}"
        )
        emit(f"  %dv{j} = llvm.load %dp{j} : !llvm.ptr<1> -> {member}")
        tag = ' {hw.tag = "acc"}' if j == count - 1 else ""
        emit(f"  %acc{j + 1} = llvm.insertvalue %dv{j}, %acc{j}[{j}]{tag} : {acc_t}")
    if cfg.a_source == "regs":
        frag_t = "!llvm.struct<(i32, i32, i32, i32)>"
        for s in range(cfg.steps):
            emit(f"  %fo{s} = llvm.mlir.constant({s * 128} : i64) : i64")
            emit(f"  %fr{s} = llvm.add %tid64, %fo{s} : i64")
            emit(
                f"  %fb{s} = llvm.getelementptr %frag[%fr{s}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, vector<4xi32>"
            )
            emit(f"  %f{s}_0 = llvm.mlir.undef : {frag_t}")
            for j in range(4):
                emit(
                    f"  %fp{s}_{j} = llvm.getelementptr %fb{s}[{j}] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i32"
                )
                emit(f"  %fv{s}_{j} = llvm.load %fp{s}_{j} : !llvm.ptr<1> -> i32")
                tag = f' {{hw.tag = "frag{s}"}}' if j == 3 else ""
                emit(
                    f"  %f{s}_{j + 1} = llvm.insertvalue %fv{s}_{j}, %f{s}_{j}[{j}]{tag} : {frag_t}"
                )
    if cfg.sparse:
        for s in range(cfg.steps):
            emit(f"  %mo{s} = llvm.mlir.constant({s * 128} : i64) : i64")
            emit(f"  %mr{s} = llvm.add %tid64, %mo{s} : i64")
            emit(
                f"  %mp{s} = llvm.getelementptr %meta[%mr{s}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i32"
            )
            emit(f'  %mv{s} = llvm.load %mp{s} {{hw.tag = "meta{s}"}} : !llvm.ptr<1> -> i32')
    emit("  %zero = llvm.mlir.constant(0 : i32) : i32")
    emit('  %first = llvm.icmp "ne" %first_scale, %zero {hw.tag = "first"} : i32')
    emit(f'  %result = llvm.mlir.poison {{hw.tag = "result"}} : {acc_t}')
    for j in range(count):
        emit(f"  %rv{j} = llvm.extractvalue %result[{j}] : {acc_t}")
        emit(f"  llvm.store %rv{j}, %dp{j} : {member}, !llvm.ptr<1>")
    emit("  llvm.return")
    emit("}")
    return "\n".join(lines)


def build_module(cfg: Config):
    """The kernel module of a config (an nvwgmma.ir.Module)."""
    from nvwgmma import ir
    from nvwgmma.dialects import nvwgmma as wg

    a, b, b_offset = tile_geometry(cfg)
    module = ir.Module.parse(kernel_text(cfg))
    kernel = module.body.operations[1]
    tagged = {}
    for op in kernel.regions[0].blocks[0].operations:
        if "hw.tag" in op.attributes:
            tagged[ir.StringAttr(op.attributes["hw.tag"]).value] = op
            del op.attributes["hw.tag"]
    smem = tagged["smem"].result
    placeholder = tagged["result"]
    with ir.InsertionPoint(placeholder):
        desc_a = wg.descriptor(
            smem,
            leading_byte_offset=a.leading_byte_offset,
            stride_byte_offset=a.stride_byte_offset,
            swizzle=cfg.swizzle,
        )
        desc_b = wg.advance_descriptor(
            wg.descriptor(
                smem,
                leading_byte_offset=b.leading_byte_offset,
                stride_byte_offset=b.stride_byte_offset,
                swizzle=cfg.swizzle,
            ),
            b_offset,
        )
        acc = tagged["acc"].result
        wg.fence()
        for s in range(cfg.steps):
            a_operand = (
                tagged[f"frag{s}"].result
                if cfg.a_source == "regs"
                else wg.advance_descriptor(desc_a, s * a.k_step_bytes)
                if s
                else desc_a
            )
            # B advances by the instruction's K: 32 bytes per row dense,
            # 64 sparse (k_step_bytes is per 32 bytes).
            b_step = b.k_step_bytes * (2 if cfg.sparse else 1)
            b_operand = wg.advance_descriptor(desc_b, s * b_step) if s else desc_b
            build = wg.mma_async
            if cfg.sparse:
                build = functools.partial(
                    wg.mma_async_sp, metadata=tagged[f"meta{s}"].result, selector=cfg.selector
                )
            acc = build(
                acc,
                a_operand,
                b_operand,
                shape=(64, cfg.n, cfg.k),
                a_type=cfg.a_type,
                b_type=cfg.b_type,
                d_type=cfg.d_type,
                scale_d=tagged["first"].result if s == 0 else True,
                negate_a=cfg.negate_a,
                negate_b=cfg.negate_b,
                transpose_a=cfg.a_major == "MN",
                transpose_b=cfg.b_major == "MN",
                satfinite=cfg.satfinite,
            )
        wg.commit_group()
        wg.wait_group(0)
    placeholder.result.replace_all_uses_with(acc)
    placeholder.erase()
    return module


def compile_config(cfg: Config) -> str:
    from nvwgmma.compile import compile_to_ptx

    return compile_to_ptx(build_module(cfg))
