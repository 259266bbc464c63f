"""The fp8 kernel's Vᵀ from V as models store it: a byte transpose of
(batch, keys, heads, d) -- d contiguous -- into (batch, heads, d, keys),
keys contiguous and padded with zeros to a multiple of 32, optionally in
fragment.fp8_key_order inside every 32 keys (AttentionConfig.v_permuted).

One CTA of 128 threads moves 64 keys of one (batch, head): 16-byte loads of
the 64 rows of d bytes into shared memory (rows padded by 4 bytes, so the
column reads below hit 32 different banks), then 16-byte stores of 16 keys
of one d each, gathered a byte at a time. One pass over V at memory speed,
where torch's gather and transposing copy took three (bench/attention/fp8.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from .common import kernel_family

__all__ = ["CONFIGS", "VCopyConfig", "build_vcopy", "load", "write"]

# (name, type): what the launcher passes, in order.
SIGNATURE = (
    ("src", "!llvm.ptr<1>"),  # V: (batch, keys, heads, d) bytes, d contiguous
    ("dst", "!llvm.ptr<1>"),  # Vᵀ: (batch, heads, d, padded) bytes, contiguous
    ("S", "i32"),  # keys
    ("H", "i32"),  # heads
    ("sb", "i64"),  # V's strides in bytes: batch, key, head
    ("ss", "i32"),
    ("sh", "i32"),
    ("padded", "i32"),  # keys rounded up to 32 (varlen: the longest sequence's)
    ("cu", "!llvm.ptr<1>"),  # varlen: i32 cumulative key offsets (batch + 1), else 0
)
KEYS = 64  # per CTA
THREADS = 128


@dataclass(frozen=True)
class VCopyConfig:
    """head_dim; permuted: fragment.fp8_key_order inside every 32 keys;
    varlen: V packed (tokens, heads, d), sequence b at cu[b] .. cu[b + 1],
    copied to batch entry b of a dense Vᵀ (its keys from 0, each sequence's
    boxes aligned)."""

    head_dim: int = 128
    permuted: bool = True
    varlen: bool = False

    @property
    def name(self) -> str:
        return (f"vcopy_d{self.head_dim}{'_permuted' if self.permuted else ''}"
                f"{'_varlen' if self.varlen else ''}")  # fmt: skip

    @property
    def row_bytes(self) -> int:
        return self.head_dim + 4

    @property
    def shared_memory_bytes(self) -> int:
        return KEYS * self.row_bytes


def _run_order(permuted: bool) -> list[int]:
    """Which of 16 keys each position of a 16-aligned run holds: every run
    of fragment.fp8_key_order repeats its first (test_attention checks)."""
    from ..fragment import fp8_key_order

    return fp8_key_order(32)[:16] if permuted else list(range(16))


def build_vcopy(config: VCopyConfig):
    """(module, meta): the kernel `vcopy` with SIGNATURE's parameters, grid
    (padded / 64, heads, batch) of 128 threads."""
    from ...dialects import arith, llvm, nvvm, scf
    from ...ir import InsertionPoint, IntegerType, Location, VectorType
    from .._ir import gep, i32_constant, kernel_shell

    d, permuted = config.head_dim, config.permuted
    if d not in (64, 128, 256):
        raise ValueError(f"head_dim must be 64, 128 or 256, but got {d}")
    module, entry, a = kernel_shell("vcopy", SIGNATURE, THREADS)
    with Location.unknown(), InsertionPoint(entry.operations[0]):
        i8, i32, i64 = (IntegerType.get_signless(w) for w in (8, 32, 64))
        v4 = VectorType.get([4], i32)
        none = llvm.IntegerOverflowFlags.none

        def c(v):
            return i32_constant(v)

        def wide(v):
            return arith.extsi(i64, v)

        tid = nvvm.read_ptx_sreg_tid_x(i32)
        k0 = arith.muli(nvvm.read_ptx_sreg_ctaid_x(i32), c(KEYS))
        h, b = nvvm.read_ptx_sreg_ctaid_y(i32), nvvm.read_ptx_sreg_ctaid_z(i32)
        smem = llvm.mlir_addressof(llvm.PointerType.get(3), "dsmem")
        # Rows read: start + key, clamped into V (S rows: all tokens when
        # varlen), so a key past the sequence -- zeroed below -- reads a valid row.
        if config.varlen:  # sequence b: keys cu[b] .. cu[b + 1] of the packed V
            start = llvm.load(i32, gep(a["cu"], b, i32))
            keys = arith.subi(llvm.load(i32, gep(a["cu"], arith.addi(b, c(1)), i32)), start)
            src = gep(a["src"], wide(arith.muli(h, a["sh"])))
        else:
            start, keys = c(0), a["S"]
            src = gep(
                a["src"], arith.addi(arith.muli(wide(b), a["sb"]), wide(arith.muli(h, a["sh"])))
            )
        last = arith.subi(a["S"], c(1))
        chunks = d // 16  # 16-byte vectors per key row
        zero = llvm.mlir_zero(v4)
        for r in range(KEYS * chunks // THREADS):
            i = arith.addi(tid, c(THREADS * r))
            key, chunk = arith.divui(i, c(chunks)), arith.remui(i, c(chunks))
            k = arith.addi(k0, key)
            inside = arith.cmpi(arith.CmpIPredicate.slt, k, keys)
            row = arith.minsi(arith.addi(start, k), last)
            at = arith.addi(arith.muli(wide(row), wide(a["ss"])), wide(arith.muli(chunk, c(16))))
            loaded = llvm.select(inside, llvm.load(v4, gep(src, at), alignment=16), zero)
            put = arith.addi(arith.muli(key, c(config.row_bytes)), arith.muli(chunk, c(16)))
            for w in range(4):
                word = llvm.extractelement(loaded, c(w))
                llvm.store(word, gep(smem, arith.addi(put, c(4 * w))), alignment=4)
        nvvm.barrier0()
        # Vᵀ row (b, h, dd) starts at ((b H + h) d + dd) padded.
        plane = arith.muli(wide(arith.addi(arith.muli(b, a["H"]), h)), wide(c(d)))
        for r in range(d * (KEYS // 16) // THREADS):
            j = arith.addi(tid, c(THREADS * r))
            dd, part = arith.shrui(j, c(2)), arith.andi(j, c(3))
            first = arith.addi(k0, arith.muli(part, c(16)))
            words = [c(0)] * 4
            for m, run_key in enumerate(_run_order(permuted)):
                key = arith.addi(arith.muli(part, c(16)), c(run_key))
                byte = llvm.load(
                    i8, gep(smem, arith.addi(arith.muli(key, c(config.row_bytes)), dd))
                )
                shifted = llvm.shl(llvm.zext(i32, byte), c(8 * (m % 4)), none)
                words[m // 4] = llvm.or_(words[m // 4], shifted)
            vector = zero
            for w in range(4):
                vector = llvm.insertelement(vector, words[w], c(w))
            store = scf.IfOp(arith.cmpi(arith.CmpIPredicate.slt, first, a["padded"]))
            with InsertionPoint(store.then_block):
                at = arith.addi(arith.muli(arith.addi(plane, wide(dd)), wide(a["padded"])),
                                wide(first))  # fmt: skip
                llvm.store(vector, gep(a["dst"], at), alignment=16)
                scf.YieldOp([])
    module.operation.verify()
    meta = {
        "kernel": "vcopy",
        "name": config.name,
        "block": [THREADS, 1, 1],
        "keys_per_cta": KEYS,
        "dynamic_smem": config.shared_memory_bytes,
        "signature": [list(p) for p in SIGNATURE],
    }
    return module, meta


CONFIGS = tuple(VCopyConfig(d, p, v) for d in (64, 128, 256) for p in (False, True)
                for v in (False, True))  # fmt: skip


# The PTX cache's view of the kernel: FAMILY.key / write / load.
FAMILY = kernel_family(build_vcopy, SIGNATURE)
write, load = FAMILY.write, FAMILY.load
