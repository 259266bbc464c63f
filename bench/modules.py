"""Generate equivalent benchmark modules in nvwgmma and in upstream nvvm form.

A module holds kernels of `chain` mma_async ops whose accumulators feed each
other, between nvwgmma.fence and commit_group / wait_group, cycling through
the families and N values upstream nvvm.wgmma.mma_async can express (A from
a descriptor, constant scale-d, no b1): f16 -> f16/f32, bf16, tf32, the four
fp8 pairs, s8/u8 with and without satfinite.
"""

from __future__ import annotations

VARIANTS = [
    # (typeA, typeB, typeD, n values, satfinite); K comes from the lattice.
    ("f16", "f16", "f32", [64, 128, 256], False),
    ("f16", "f16", "f16", [64, 128], False),
    ("bf16", "bf16", "f32", [128, 256], False),
    ("tf32", "tf32", "f32", [64, 128], False),
    ("e4m3", "e4m3", "f32", [128, 256], False),
    ("e4m3", "e5m2", "f16", [64], False),
    ("e5m2", "e4m3", "f32", [96], False),
    ("s8", "s8", "s32", [64, 128], True),
    ("u8", "u8", "s32", [256], False),
]


def _acc(d: str, n: int) -> str:
    from nvwgmma.lattice import accumulator_member, accumulator_register_count

    members = [accumulator_member(d)] * accumulator_register_count(d, n)
    return f"!llvm.struct<({', '.join(members)})>"


def _ops(total: int, chain: int):
    """(kernel index, position in chain, variant, n) for `total` mma ops."""
    cases = [(v, n) for v in VARIANTS for n in v[3]]
    for i in range(total):
        yield i // chain, i % chain, cases[(i // chain) % len(cases)]


def generate(total: int, dialect: str, chain: int = 8) -> str:
    """Module text with `total` mma ops; dialect is "nvwgmma" or "nvvm"."""
    out = []
    emit = out.append
    kernels = -(-total // chain)
    from nvwgmma.lattice import instruction_k

    for kernel, pos, ((a, b, d, _, sat), n) in _ops(total, chain):
        acc_t = _acc(d, n)
        k = instruction_k(a, b)
        if pos == 0:
            emit(f"llvm.func @k{kernel}(%a: i64, %b: i64, %acc: {acc_t}) -> {acc_t} {{")
            emit("  nvwgmma.fence" if dialect == "nvwgmma" else "  nvvm.wgmma.fence.aligned")
            prev = "%acc"
        res = f"%r{pos}"
        sat_txt = ", satfinite" if sat else ""
        if dialect == "nvwgmma":
            emit(
                f"  {res} = nvwgmma.mma_async %a, %b, {prev}, #nvwgmma.shape<m = 64, n = {n}, k = {k}>, "
                f"D [{d}, one{sat_txt}], A [{a}, one, row], B [{b}, one, col] : i64, {acc_t} -> {acc_t}"
            )
        else:
            sat_attr = ", <satfinite>" if sat else ""
            emit(
                f"  {res} = nvvm.wgmma.mma_async %a, %b, {prev}, #nvvm.shape<m = 64, n = {n}, k = {k}>, "
                f"D [<{d}>, <one>{sat_attr}], A [<{a}>, <one>, <row>], B [<{b}>, <one>, <col>] "
                f": {acc_t} -> {acc_t}"
            )
        prev = res
        last = kernel == kernels - 1 and pos == (total - 1) % chain
        if pos == chain - 1 or last:
            if dialect == "nvwgmma":
                emit("  nvwgmma.commit_group")
                emit("  nvwgmma.wait_group 0")
            else:
                emit("  nvvm.wgmma.commit.group.sync.aligned")
                emit("  nvvm.wgmma.wait.group.sync.aligned 0")
            emit(f"  llvm.return {prev} : {acc_t}")
            emit("}")
    return "\n".join(out) + "\n"
