"""The GEMM's collective epilogue: the fusion chain on the accumulator,
then C out of the consumer warpgroup, through stmatrix + TMA store (16-bit
and f32 outputs; a transposed C, 16-bit, through stmatrix.trans) or masked
stores from registers (any output, any N); a
tile a schedule bounds (a group's last rows) takes the TMA path where its
block lies inside the bounds and the masked one where it does not.

    ep = Epilogue(config)
    ep.staging_bytes                       # shared memory per consumer
    ep.store(acc, row=, col=, batch=, ...) # one warpgroup's 64 rows
    ep.finish(...)                         # before the kernel exits
"""

from __future__ import annotations

from dataclasses import replace

from .. import epilogue
from ..geometry import tile_geometry
from . import fusion

__all__ = ["Epilogue"]


def staging(config) -> tuple[int, int]:
    """(swizzle, bytes) of one consumer's C staging under the TMA epilogue:
    128-byte swizzled rows, or 64 where a chunk is no multiple of 128 bytes
    (a 224-column tile: seven 32-column boxes); (128, 0) without it."""
    if config.epilogue != "tma":
        return 128, 0
    if config.store_transposed:  # a row of 64 16-bit elements per column
        return 128, epilogue.transposed_staging_bytes(config.tile_n)
    chunk = config.tile_n // config.epilogue_chunks
    swizzle = epilogue.staging_swizzle(chunk, config.out_dtype)
    return swizzle, epilogue.staging_bytes(chunk, config.out_dtype, swizzle)


class Epilogue:
    def __init__(self, config):
        c = self.config = config
        self.tma = c.epilogue == "tma"
        self.chunk = c.tile_n // c.epilogue_chunks
        self.swizzle, self.staging_bytes = staging(c)
        # C's TMA box: 64 rows of one swizzled row each.
        swizzle = f"{self.swizzle}B"
        if c.store_transposed and self.tma:  # C's tile_n rows (the kernel's columns), 64 wide
            self.box = tile_geometry(c.out_dtype, rows=c.tile_n, k=64, major="K",
                                     swizzle=swizzle).tma()  # fmt: skip
        elif c.out_dtype == "f32":  # the tf32 geometry, stored as plain FLOAT32
            columns = epilogue._block_columns("f32", self.swizzle)
            self.box = replace(
                tile_geometry("tf32", rows=64, k=columns, major="K", swizzle=swizzle).tma(),
                data_type="FLOAT32",
            )
        elif c.out_dtype in ("bf16", "f16"):
            columns = epilogue._block_columns(c.out_dtype, self.swizzle)
            self.box = tile_geometry(c.out_dtype, rows=64, k=columns, major="K",
                                     swizzle=swizzle).tma()  # fmt: skip
        else:  # fp8 C leaves from registers; its map is not read
            self.box = tile_geometry(c.out_dtype, rows=64, k=128, major="K").tma()

    def store(self, acc, *, row, col, batch, thread, staging, barrier, tm_c, c_ptr, operands,
              block=0, limits=(None, None), group=None):  # fmt: skip
        """Store a consumer warpgroup's m64 x tile_n accumulator `acc` (its
        64-row `block`), whose first element is C[batch, row, col] (i32
        Values), clipped to the operands' m x n and to `limits` (rows, cols:
        i32 Values or None, Work.rows / Work.cols). Under the TMA epilogue a
        64-row block the limits cut leaves from registers. `group` (i32, a
        grouped GEMM's Work.b_batch) indexes the grouped epilogue vectors."""
        from ...dialects import arith, scf
        from ...ir import InsertionPoint

        c = self.config
        m, n = operands.m, operands.n
        limited = any(limit is not None for limit in limits)
        if limited:
            rows, cols = limits
            bound_m = m if rows is None else arith.minui(m, rows)
            bound_n = n if cols is None else arith.minui(n, cols)
        else:
            bound_m, bound_n = m, n
        residual = next((op for op in c.fusion if isinstance(op, fusion.Residual)), None)
        offset = None
        if residual is not None or not self.tma or limited:
            # batch * m * n elements, in 64 bits
            offset = _batch_offset(batch, m, n)
        if residual is not None:
            operands = replace(
                operands, residual=_offset(operands.residual, offset, residual.dtype)
            )
        if group is not None:
            operands = replace(operands, group=group)
        acc = fusion.apply(c.fusion, acc, row=row, col=col, thread=thread, operands=operands)
        tile_n, out_col, out_n, out_bound = c.tile_n, col, n, bound_n
        if c.gate is not None:
            # C holds one column per gate/up pair: half of B's.
            acc = fusion.gate_pairs(acc, c.gate, row=row, col=col, thread=thread,
                                    operands=operands)  # fmt: skip
            two = arith.constant(col.type, 2)
            tile_n, out_col = c.tile_n // 2, arith.divui(col, two)
            out_n, out_bound = arith.divui(n, two), arith.divui(bound_n, two)
            if offset is not None:
                offset = _batch_offset(batch, m, out_n)

        def from_registers():
            epilogue.store_accumulator(
                acc,
                _offset(c_ptr, offset, c.out_dtype),
                m if c.store_transposed else out_n,
                d_type="f32",
                n=tile_n,
                out_type=c.out_dtype,
                row=row,
                col=out_col,
                thread=thread,
                bounds=(bound_m, out_bound),
                transposed=c.store_transposed,
            )

        if not self.tma:
            from_registers()
            return
        if c.store_transposed:
            if limited:
                raise ValueError("a transposed TMA store clips only at C's edges: a schedule "
                                 "that bounds its tiles needs the registers epilogue")  # fmt: skip
            self._transposed(acc, row, col, batch, thread, staging, barrier, tm_c, block)
            return
        if not limited:
            self._through_staging(acc, row, col, batch, thread, staging, barrier, tm_c, block)
            return
        # A bounded tile (a group's rows end inside it): TMA clips only at
        # the tensor's edges, so the 64-row blocks inside the bounds leave
        # through the staging and TMA, the one the bound cuts from
        # registers, masked. The branch is the warpgroup's: row is uniform.
        whole = arith.cmpi(arith.CmpIPredicate.ule, arith.addi(row, arith.constant(row.type, 64)),
                           bound_m)  # fmt: skip
        if cols is not None:
            whole = arith.andi(whole, arith.cmpi(
                arith.CmpIPredicate.ule, arith.addi(col, arith.constant(col.type, c.tile_n)),
                bound_n))  # fmt: skip
        branch = scf.IfOp(whole, has_else=True)
        with InsertionPoint(branch.then_block):
            self._through_staging(acc, row, col, batch, thread, staging, barrier, tm_c, block)
            scf.YieldOp([])
        with InsertionPoint(branch.else_block):
            from_registers()
            scf.YieldOp([])

    def _through_staging(self, acc, row, col, batch, thread, staging, barrier, tm_c, block):
        """stmatrix into the staging, then a TMA store per chunk."""
        from ...dialects import arith

        c = self.config
        for h in range(c.epilogue_chunks):
            if c.defer_store_wait or h or block:
                # The previous store (of this tile's last chunk or block, or
                # the last tile's) has read it.
                epilogue.wait_store_read(barrier_id=barrier, thread=thread)
            epilogue.stage_accumulator(
                acc,
                staging,
                d_type="f32",
                n=c.tile_n,
                out_type=c.out_dtype,
                thread=thread,
                columns=(h * self.chunk, self.chunk),
                swizzle=self.swizzle,
            )
            epilogue.tma_store(
                tm_c,
                staging,
                row=row,
                col=arith.addi(col, arith.constant(col.type, h * self.chunk)),
                n=self.chunk,
                barrier_id=barrier,
                thread=thread,
                wait_read=not c.defer_store_wait and h == c.epilogue_chunks - 1,
                out_type=c.out_dtype,
                batch=batch,
                swizzle=self.swizzle,
            )

    def _transposed(self, acc, row, col, batch, thread, staging, barrier, tm_c, block):
        """stmatrix.trans into the staging, then one TMA box of C's tile_n
        rows from `col` by 64 columns from `row`."""
        c = self.config
        if c.defer_store_wait or block:
            epilogue.wait_store_read(barrier_id=barrier, thread=thread)
        epilogue.stage_transposed(acc, staging, d_type="f32", n=c.tile_n, out_type=c.out_dtype,
                                  thread=thread)  # fmt: skip
        # C's coordinates are (column, row): the kernel's row, then its column.
        epilogue.tma_store(tm_c, staging, row=col, col=row, n=64, barrier_id=barrier,
                           thread=thread, wait_read=not c.defer_store_wait,
                           out_type=c.out_dtype, batch=batch)  # fmt: skip

    def finish(self, *, barrier, thread):
        """Shared memory must outlive the last TMA store's read."""
        if self.tma and self.config.defer_store_wait:
            epilogue.wait_store_read(barrier_id=barrier, thread=thread)


def _batch_offset(batch, m, n):
    from ...dialects import arith
    from ...ir import IntegerType

    i64 = IntegerType.get_signless(64)
    return arith.muli(arith.extui(i64, batch), arith.muli(arith.extui(i64, m), arith.extui(i64, n)))


def _offset(ptr, elements, dtype: str):
    """`ptr` advanced by `elements` (an i64 Value) of `dtype`."""
    from .._ir import element_type, gep

    return gep(ptr, elements, element_type(dtype))
