"""`grouped_mm`: the grouped GEMM of a mixture-of-experts layer, with
`torch._grouped_mm`'s 2-D x 3-D semantics -- tokens sorted by group, one
weight matrix per group, ragged groups whose row ends are on the device.

    from nvwgmma.kernel.gemm import grouped_mm
    out = grouped_mm(x, w, offs=offs)      # x (T, K), w (G, K, N), offs (G,) int32
    out = grouped_mm(x, w_nk.transpose(-2, -1), offs=offs)   # weights stored (G, N, K)
    out = grouped_mm(x3, w, counts=counts)  # x3 (G, R, K): the masked layout

Group g owns rows [offs[g-1], offs[g]) of x and of the output (offs[-1] is
0), and multiplies them by w[g]. Rows past offs[G-1] are not written. The
offsets are read by the kernel (scheduler.Grouped), so the host never waits
for them; `check_offsets=True` (the default outside CUDA graph capture)
first checks on the host that they are non-decreasing and at most T, one
small device-to-host copy per call. Inside a capture they are not checked,
and the kernel clamps them (a decreasing end is an empty group, rows past T
are neither read nor written), so no offsets make it touch memory outside
its operands.

The masked layout (`counts=`; DeepGEMM's for MoE decode under CUDA graphs):
up to R rows per group in a (G, R, K) a, each group's row count on the
device, clamped to [0, R] by the kernel (scheduler.Masked); out is
(G, R, N), its rows past the counts not written. No host check is needed.

Fused epilogues: `bias=` (G, N) adds each group's bias row to its rows
(a per-expert bias), `activation=` applies relu, gelu, gelu_tanh or silu
after it. fp8 with row-wise scales (`torch._scaled_grouped_mm`'s
semantics):

    out = scaled_grouped_mm(x8, w8, scale_x, scale_w, offs=offs)
    # x8 (T, K) e4m3, w8 (G, K, N) e4m3 K-major (a (G, N, K) weight's
    # transpose), scale_x (T,) f32 per row, scale_w (G, N) f32 per column:
    # out[r, n] = (x8[r] . w8[g][:, n]) * scale_x[r] * scale_w[g, n], bf16

The configuration: `grouped_config`'s rule on the routed tokens per group,
and on each group's rows where the offsets were read to check them
(bench/gemm/grouped.py measures its candidates). C leaves through TMA but
for each group's last 64-row block, which the group's end cuts: that one is
stored from registers, masked.
"""

from __future__ import annotations

import math
from dataclasses import asdict, replace

from .. import _calls
from .config import MAX_GROUP_TABLE, SHARED_MEMORY_LIMIT, GemmConfig
from .fusion import GATE_BLOCK
from .launch import _ELEMENT_BYTES, _check_aligned, _fail, _map, _matrix, _Tensor

__all__ = [
    "GROUP_PARAMS",
    "block_scaled_config",
    "grouped_config",
    "grouped_key",
    "grouped_mm",
    "interleave_gate_up",
    "prepare_grouped",
    "scaled_grouped_mm",
    "with_group_table",
]

# The kernel's parameters after KERNEL_SIGNATURE: the groups' row ends (or,
# masked, their token counts) and their count; masked, the rows per group.
GROUP_PARAMS = (("offs", "!llvm.ptr<1>"), ("groups", "i32"))
MASKED_PARAMS = (*GROUP_PARAMS, ("max_rows", "i32"))
# fp8 row-wise scales: A's per row, B's per group and column (f32).
SCALE_PARAMS = (("scale_a", "!llvm.ptr<1>"), ("scale_b", "!llvm.ptr<1>"))


def _params(masked: bool, scaled: bool) -> tuple:
    return (MASKED_PARAMS if masked else GROUP_PARAMS) + (SCALE_PARAMS if scaled else ())


def _scaled(config: GemmConfig) -> bool:
    """Whether the kernel takes scale_a and scale_b: row-wise (epilogue
    vectors) or per block (GemmConfig.block_scales)."""
    from .fusion import ScaleVector

    return config.block_scales or any(isinstance(op, ScaleVector) for op in config.fusion)


def grouped_chain(*, bias=None, activation=None, scaled=False) -> tuple:
    """grouped_mm's epilogue chain, in its order: the fp8 row-wise scales
    (A's rows, then B's columns per group), the per-group bias (`bias`:
    its dtype, or None), the activation."""
    from .fusion import Activation, Bias, ScaleVector

    chain = []
    if scaled:
        chain += [ScaleVector("row", "scale_a"), ScaleVector("col", "scale_b", grouped=True)]
    if bias is not None:
        chain.append(Bias("col", bias, grouped=True))
    if activation is not None:
        chain.append(Activation(activation))
    return tuple(chain)


# The prefill tiles (more than 64 rows per group): 128 rows by each width,
# its stages and its rate against 128 x 256 (bench/gemm/grouped.py's tuned
# half on an H200: with the routed rows known, a 192 rate anywhere from
# 0.90 to 0.96 and a 128 rate up to 0.92 pick alike there).
PREFILL_TILES = {256: (3, 1.0), 192: (4, 0.93), 128: (4, 0.85)}


def grouped_config(tokens: int, n: int, k: int, groups: int, *, dtype="bf16", out_dtype=None,
                   b_major="K", epilogue="tma", counts=None, sms: int = 132,
                   gated: bool = False) -> GemmConfig:  # fmt: skip
    """The configuration for `tokens` routed rows over `groups` groups of
    an N x K weight. A group's last tile row is partly empty: with few rows
    per group (decode, fine-grained experts) one warpgroup's 64-row tiles
    waste least, and their small stages allow a 6-deep ring. With more,
    two consumers' 128-row tiles, as wide as makes the fewest waves of
    tiles over `sms` SMs for the columns they cover, by PREFILL_TILES'
    rates: `counts`, each group's rows where the host knows them (it read
    the offsets to check them), else as many in each (tuned on
    bench/gemm/grouped.py's tuned half). 192 is for 16-bit inputs alone
    (measured) and not `gated` (whole gate/up pairs: a multiple of 128).
    The TMA epilogue stores a group's whole 64-row blocks with TMA and its
    last, cut one from registers; `epilogue="registers"` where C's rows are
    not 16-byte aligned."""
    per_group = tokens / max(1, groups)
    base = GemmConfig(dtype=dtype, out_dtype=out_dtype or dtype, epilogue=epilogue,
                      a_major="K", b_major=b_major)  # fmt: skip
    if per_group <= 64:
        return with_group_table(replace(base, consumers=1, tile_n=128, stages=6), groups)
    if counts is None:
        tile_rows = groups * math.ceil(per_group / 128)
    else:
        tile_rows = sum(-(-max(0, c) // 128) for c in counts)
    widths = [w for w in PREFILL_TILES
              if w != 192 or (dtype in ("bf16", "f16") and not gated)]  # fmt: skip

    def time(width):  # waves of tiles x their width / their rate
        return -(-tile_rows * -(-n // width) // sms) * width / PREFILL_TILES[width][1]

    width = min(widths, key=time)
    config = replace(base, consumers=2, tile_n=width, stages=PREFILL_TILES[width][0])
    return with_group_table(config, groups)


def with_group_table(config: GemmConfig, groups: int) -> GemmConfig:
    """`config` with a shared-memory table of its groups (the smallest power
    of two holding `groups`: GemmConfig.group_table) where one fits beside
    its stages and holds them, else with none (each unit scans the offsets).
    The table keeps the loop of the scan out of the tile loop, which cost
    every tile of a large group 4-6 %."""
    scan = replace(config, group_table=0)
    if not 1 <= groups <= MAX_GROUP_TABLE:
        return scan
    table = replace(config, group_table=1 << (groups - 1).bit_length())
    try:
        fits = table.shared_memory_bytes <= SHARED_MEMORY_LIMIT
    except ValueError:  # a config the checks refuse (build_gemm says why)
        return table
    return table if fits else scan


def block_scaled_config(config: GemmConfig) -> GemmConfig:
    """`config` for block scales (GemmConfig.block_scales): one scale block
    per 128-deep K tile, K walked forward, at most 128 columns (a running
    and a fresh accumulator), as many stages as fit, and the group table:
    where it does not fit beside them (128 x 128 tiles, more than 128
    groups), one stage fewer. (Promoting beside the next K tile, as
    blockwise_mm's pick does, spilled here: a third accumulator set beside
    the group scheduler's registers.)"""
    from .selector import with_tile

    scaled = replace(config, block_scales=True, k_order="forward", inflight=0, split_wait=False,
                     group_table=0)  # fmt: skip
    scaled = with_tile(scaled, min(config.tile_n, 128))
    tabled = with_group_table(scaled, config.group_table)
    if config.group_table and not tabled.group_table:
        # DeepSeek-V3's 256 experts at T = 4096: five stages and the table
        # ran 1.00-1.05x six stages scanning the offsets (H200).
        fewer = with_group_table(replace(scaled, stages=scaled.stages - 1), config.group_table)
        if fewer.group_table:
            return fewer
    return tabled


def grouped_key(config: GemmConfig, masked: bool = False) -> str:
    """The file stem of a grouped (or masked) kernel's PTX: the
    configuration, the parameter list and the generator's code."""
    from .. import cache
    from .kernel import KERNEL_SIGNATURE

    params = _params(masked, _scaled(config))
    return cache.key(("gemm_masked_" if masked else "gemm_grouped_") + config.name,
                     (asdict(config), KERNEL_SIGNATURE, params))  # fmt: skip


def _scheduler(config, args, rank):
    from .scheduler import Grouped

    return Grouped(config, args["M"], args["N"], args["K"], args["offs"], args["groups"],
                   rank=rank, table=args.get("group_table"))  # fmt: skip


def _masked_scheduler(config, args, rank):
    from .scheduler import Masked

    return Masked(config, args["M"], args["N"], args["K"], args["offs"], args["groups"],
                  args["max_rows"], rank=rank, table=args.get("group_table"))  # fmt: skip


def _build(config: GemmConfig, masked: bool = False):
    from .kernel import build_gemm

    params = _params(masked, _scaled(config))
    scheduler = _masked_scheduler if masked else _scheduler
    return lambda: build_gemm(config, scheduler=scheduler, extra_params=params)


def write_grouped(directory: str, config: GemmConfig, masked: bool = False) -> str:
    """Compile a grouped (or masked) kernel and write its PTX and metadata."""
    from .. import cache

    return cache.write(directory, grouped_key(config, masked), _build(config, masked))


def _load(config: GemmConfig, masked: bool):
    from .. import cache

    return cache.load(grouped_key(config, masked), _build(config, masked),
                      "python -m nvwgmma.kernel.gemm --precompile DIR")  # fmt: skip


def _capturing(value) -> bool:
    if type(value).__module__.split(".")[0] != "torch":
        return False
    import torch

    return torch.cuda.is_current_stream_capturing()


def _vector(t, name, dtypes, shape, device):
    """A contiguous epilogue operand (a bias, scales), checked."""
    v = _Tensor(t, name)
    if v.device != device:
        _fail(f"{name} must be on a's device, but got {v.device_name}")
    if v.dtype not in dtypes:
        _fail(f"{name}'s dtype must be {' or '.join(dtypes)}, but got {v.dtype}")
    contiguous = tuple(math.prod(shape[i + 1 :]) for i in range(len(shape)))
    if tuple(v.shape) != tuple(shape) or tuple(v.strides) != contiguous:
        _fail(f"{name} must be a contiguous {' x '.join(map(str, shape))} tensor, but got "
              f"shape {v.shape}, strides {v.strides}")  # fmt: skip
    return v


def _plan(a, b, offs, out, out_dtype, check_offsets, counts=None, bias=None, scale_a=None,
          scale_b=None, gate=None):  # fmt: skip
    if (offs is None) == (counts is None):
        _fail("grouped_mm needs offs= (a 2-D a: row ends) or counts= (a 3-D a: rows per "
              "group), exactly one, but got " + ("both" if offs is not None else "neither"))  # fmt: skip
    masked = counts is not None
    ta, tb = _Tensor(a, "a"), _Tensor(b, "b")
    to = _Tensor(counts, "counts") if masked else _Tensor(offs, "offs")
    for t in (ta, tb, to):
        if t.device is None:
            _fail(f"{t.what} must be on a CUDA device, but got {t.device_name}")
    for t in (tb, to):
        if t.device != ta.device:
            _fail(f"{t.what} must be on a's device {ta.device_name}, but got {t.device_name}")
    scaled = scale_a is not None or scale_b is not None
    if scaled and (scale_a is None or scale_b is None):
        _fail("fp8 row-wise scaling needs scale_a and scale_b, both, but got one")
    if scaled and ta.dtype not in ("e4m3", "e5m2"):
        _fail(f"a's dtype must be e4m3 or e5m2 with row-wise scales, but got {ta.dtype}")
    if not scaled and ta.dtype not in ("bf16", "f16"):
        _fail(f"a's dtype must be bf16 or f16 (fp8 takes scaled_grouped_mm), but got {ta.dtype}")
    if tb.dtype != ta.dtype:
        _fail(f"b's dtype must be a's ({ta.dtype}), but got {tb.dtype}")
    if len(ta.shape) != (3 if masked else 2):
        _fail(f"a must be {'3-D (groups x rows x K) with counts' if masked else '2-D (tokens x K)'}"
              f", but got shape {ta.shape}")  # fmt: skip
    if len(tb.shape) != 3:
        _fail(f"b must be 3-D (groups x K x N), but got shape {tb.shape}")
    a_groups, max_rows, k, a_row, a_lead, a_bstride = _matrix(ta)
    groups, k_b, n, b_row, b_lead, b_bstride = _matrix(tb)
    if not a_row:
        _fail(f"a must be row-major (K contiguous), but got strides {ta.strides}")
    if scaled and b_row:
        _fail("fp8 b must be K-major (wgmma transposes only 16-bit operands): a (G, N, K) "
              f"weight's .transpose(-2, -1), but got strides {tb.strides}")  # fmt: skip
    if masked and a_groups != groups:
        _fail(f"a's groups must be b's {groups}, but got a {ta.shape}")
    if masked and a_groups > 1 and a_bstride != max_rows * a_lead:
        _fail(f"a's groups must be stacked rows (group stride rows x K), but got strides "
              f"{ta.strides}")  # fmt: skip
    tokens = a_groups * max_rows if masked else max_rows
    if k_b != k:
        _fail(f"a's columns and b's rows must agree (K), but got a {ta.shape} and b {tb.shape}")
    if min(k, n, groups) < 1:
        _fail(f"K, N and the group count must be at least 1, but got a {ta.shape}, b {tb.shape}")
    if to.dtype not in ("int32", "<i4") or to.shape != (groups,) or to.strides != (1,):
        what = "token counts" if masked else "row ends"
        _fail(f"{to.what} must be a contiguous int32 vector of the {groups} groups' {what}, "
              f"but got {to.dtype} of shape {to.shape}")  # fmt: skip
    _check_aligned("a", ta.address, a_lead, ta.dtype, k)
    _check_aligned("b", tb.address, b_lead, tb.dtype, n if b_row else k)
    if (b_bstride * _ELEMENT_BYTES[tb.dtype]) % 16:
        _fail(f"b's group stride must be a multiple of 16 bytes for TMA, but got {b_bstride}")
    if check_offsets is None:
        check_offsets = not masked and not _capturing(offs)
    counts_read = None  # each group's rows, where the host reads the offsets
    if check_offsets and not masked:
        ends = [int(e) for e in (offs.tolist() if hasattr(offs, "tolist") else offs.get())]
        if any(e < 0 for e in ends) or any(y < x for x, y in zip(ends, ends[1:])):
            _fail(f"offs must be non-decreasing row ends from 0, but got {ends}")
        if ends and ends[-1] > tokens:
            _fail(f"offs must end at most at a's {tokens} rows, but got {ends[-1]}")
        counts_read = [y - x for x, y in zip([0, *ends], ends)]
    default = "bf16" if scaled else ta.dtype
    out_dtype = out_dtype or (_Tensor(out, "out").dtype if out is not None else default)
    if bias is not None:
        bias = _vector(bias, "bias", ("bf16", "f16", "f32"), (groups, n), ta.device)
    # Row-wise scales are vectors; block scales (1 x 128 for a, 128 x 128
    # for b) have a K/128 axis more.
    block = scaled and len(_Tensor(scale_a, "scale_a").shape) == (3 if masked else 2)
    if scaled:
        rows_shape = (groups, max_rows) if masked else (tokens,)
        kb, nb = -(-k // 128), -(-n // 128)
        a_shape = (*rows_shape, kb) if block else rows_shape
        scale_a = _vector(scale_a, "scale_a", ("f32",), a_shape, ta.device)
        b_shape = (groups, nb, kb) if block else (groups, n)
        scale_b = _vector(scale_b, "scale_b", ("f32",), b_shape, ta.device)
    if out_dtype not in ("bf16", "f16", "f32"):
        _fail(f"out_dtype must be bf16, f16 or f32, but got {out_dtype!r}")
    if gate is not None and n % (2 * GATE_BLOCK):
        _fail(f"a gated output needs b's N in whole gate/up pairs of {GATE_BLOCK} columns "
              f"(interleave_gate_up), a multiple of {2 * GATE_BLOCK}, but got {n}")  # fmt: skip
    n_out = n // 2 if gate is not None else n
    shape = (groups, max_rows, n_out) if masked else (tokens, n_out)
    new_out = ta.allocator(shape, out_dtype)
    if out is None:
        out = new_out()
    tc = _Tensor(out, "out")
    if tc.dtype != out_dtype or tc.shape != shape or tc.device != ta.device:
        _fail(f"out must be {out_dtype} of shape {shape} on {ta.device_name}, but got "
              f"{tc.dtype} of shape {tc.shape} on {tc.device_name}")  # fmt: skip
    if (tokens > 1 and tc.strides[-2:] != (n_out, 1)) or tc.address % 16 or (
            masked and groups > 1 and tc.strides[0] != max_rows * n_out):  # fmt: skip
        _fail(f"out must be contiguous and 16-byte aligned, but got strides {tc.strides}")
    operands = dict(a=ta, b=tb, c=tc, offs=to, a_lead=a_lead, b_lead=b_lead,
                    b_bstride=b_bstride, new_out=new_out, bias=bias, scale_a=scale_a,
                    scale_b=scale_b)  # fmt: skip
    problem = dict(tokens=tokens, n=n, k=k, groups=groups, dtype=ta.dtype, out_dtype=out_dtype,
                   b_major="N" if b_row else "K", max_rows=max_rows if masked else None,
                   bias=bias.dtype if bias is not None else None, scaled=scaled,
                   gate=gate, block=block, counts=counts_read)  # fmt: skip
    return problem, operands, out


def _arguments(p, o, tm_a, tm_b, tm_c) -> dict:
    """The kernel's arguments by name (GROUP_PARAMS or MASKED_PARAMS last)."""
    c = o["c"].address
    bias = o["bias"].address if o["bias"] is not None else c
    args = dict(tmA=tm_a, tmB=tm_b, C=c, tmC=tm_c, M=p["tokens"], N=p["n"], K=p["k"], batch=1,
                bias=bias, R=c, alpha=1.0, beta=0.0, scale=1.0, workspace=0, flags=0,
                offs=o["offs"].address, groups=p["groups"])  # fmt: skip
    if p["max_rows"] is not None:
        args["max_rows"] = p["max_rows"]
    if p["scaled"]:
        args.update(scale_a=o["scale_a"].address, scale_b=o["scale_b"].address)
    return args


def prepare_grouped(a, b, *, offs=None, counts=None, out=None, out_dtype=None, stream=None,
                    config=None, check_offsets=None, bias=None, activation=None, scale_a=None,
                    scale_b=None, gate=None):  # fmt: skip
    """(launch, out) for a grouped_mm or scaled_grouped_mm call: checked
    once, `launch()` repeats it (a benchmark, a CUDA graph capture); None
    for no rows."""
    from .. import runtime
    from .fusion import ACTIVATIONS

    if offs is None and counts is None and len(_Tensor(a, "a").shape) == 3:
        if any(x is not None for x in (bias, activation, scale_a, gate)):
            _fail("the 3-D x 3-D form is a batched matmul: bias, activation and scales "
                  "need offs= or counts=")  # fmt: skip
        # torch._grouped_mm's 3-D x 3-D form: a batched matmul.
        from .launch import prepare

        return prepare(a, b, out=out, out_dtype=out_dtype, stream=stream, config=config)
    for what, name in (("activation", activation), ("gate", gate)):
        if name is not None and name not in ACTIVATIONS:
            _fail(f"{what} must be one of {', '.join(ACTIVATIONS)}, but got {name!r}")
    p, o, out = _plan(a, b, offs, out, out_dtype, check_offsets, counts, bias, scale_a, scale_b,
                      gate)  # fmt: skip
    chain = grouped_chain(bias=p["bias"], activation=activation,
                          scaled=p["scaled"] and not p["block"])  # fmt: skip
    masked = p["max_rows"] is not None
    if p["tokens"] == 0:
        return None, out
    stream = _calls.stream_of(stream, o["a"].value)
    aligned = (p["n"] * _ELEMENT_BYTES[p["out_dtype"]]) % 16 == 0 and gate is None
    sms = None  # read for the pick, and only then before the config's checks
    if config is None:
        with runtime.on_device(o["a"].device):
            sms = runtime.device_attribute("MULTIPROCESSOR_COUNT")
        config = grouped_config(p["tokens"], p["n"], p["k"], p["groups"], dtype=p["dtype"],
                                out_dtype=p["out_dtype"], b_major=p["b_major"],
                                epilogue="tma" if aligned else "registers", counts=p["counts"],
                                sms=sms, gated=gate is not None)  # fmt: skip
        config = replace(config, fusion=chain, gate=gate)
        if p["block"]:
            config = block_scaled_config(config)
    if config.block_scales != p["block"]:
        _fail(f"config.block_scales must be {p['block']} for this call's scales, but got "
              f"{config.block_scales}")  # fmt: skip
    if config.fusion != chain or config.gate != gate:
        _fail(f"config.fusion and config.gate must be this call's epilogue {chain!r} and gate "
              f"{gate!r}, but got {config.fusion!r} and {config.gate!r}")  # fmt: skip
    for field in ("dtype", "out_dtype", "b_major"):
        if getattr(config, field) != p[field]:
            _fail(f"config.{field} must be this call's {p[field]!r}, but got "
                  f"{getattr(config, field)!r}")  # fmt: skip
    if config.a_major != "K":
        _fail(f"a grouped config must read a K-major, but got a_major {config.a_major!r}")
    if config.group_table and p["groups"] > config.group_table:
        _fail(f"config.group_table must hold this call's {p['groups']} groups (or be 0: scan "
              f"the offsets), but got {config.group_table}")  # fmt: skip
    if config.epilogue == "tma" and not aligned:
        _fail("config.epilogue must be 'registers' where out's rows are not 16-byte aligned "
              "(TMA stores), but got 'tma'")  # fmt: skip
    with runtime.on_device(o["a"].device):
        kernel, meta = _load(config, masked)
        boxes, (bm, bn, _) = meta["boxes"], meta["tile"]
        t, n, k, g = p["tokens"], p["n"], p["k"], p["groups"]
        b_rows, b_cols = (n, k) if p["b_major"] == "K" else (k, n)
        tm_a = _map(o["a"].address, p["dtype"], o["a_lead"], 0, t, k, 1, boxes["A"])
        tm_b = _map(o["b"].address, p["dtype"], o["b_lead"], o["b_bstride"], b_rows, b_cols, g,
                    boxes["B"])  # fmt: skip
        sms = sms or runtime.device_attribute("MULTIPROCESSOR_COUNT")
        c = o["c"].address
        tm_c = (_map(c, p["out_dtype"], n, t * n, t, n, 1, boxes["C"])
                if config.epilogue == "tma" else tm_a)  # fmt: skip
        args = runtime.named_args(meta["signature"], **_arguments(p, o, tm_a, tm_b, tm_c))
        cluster = meta["cluster"][0]  # CTAs per cluster, on adjacent tile rows
        grid = cluster * grouped_grid(p, bm * cluster, bn, sms // cluster)
        launch = kernel.launcher(grid=(grid, 1, 1), block=tuple(meta["block"]), args=args,
                                 stream=stream)  # fmt: skip
    return launch, out


def grouped_grid(problem: dict, rows: int, cols: int, slots: int) -> int:
    """CTAs (clusters) to launch for `problem` in units of `rows` x `cols`
    on `slots` SMs (clusters). Where the host read the offsets, the units
    are known: the fewest CTAs that finish them in the same waves, so every
    CTA gets as many (scheduler.balanced_ctas; 3072 units: 128 CTAs x 24, not
    132 with 36 doing one more -- the same waves, four SMs idle, which
    under the power cap ran faster). Otherwise (in a capture, or masked)
    one per SM up to the most units any offsets can make: ceil(T / rows)
    + G rows of units (masked: ceil(R / rows) per group)."""
    from .scheduler import balanced_ctas

    t, n, g, counts = problem["tokens"], problem["n"], problem["groups"], problem["counts"]
    per_row = -(-n // cols)
    if counts is not None:
        units = sum(-(-max(0, c) // rows) for c in counts) * per_row
        return balanced_ctas(units, slots) if units else 1
    if problem["max_rows"] is not None:
        bound = g * -(-problem["max_rows"] // rows)
    else:
        bound = -(-t // rows) + g
    return max(1, min(slots, bound * per_row))


def grouped_mm(a, b, *, offs=None, counts=None, out=None, out_dtype=None, stream=None,
               config=None, check_offsets=None, bias=None, activation=None, gate=None):  # fmt: skip
    """out[offs[g-1]:offs[g]] = a[offs[g-1]:offs[g]] @ b[g] for every group
    g (see the module docstring); returns out. With `counts` instead (the
    masked layout): out[g, :counts[g]] = a[g, :counts[g]] @ b[g]. With
    neither and a 3-D a: out[g] = a[g] @ b[g] (torch's 3-D x 3-D form, a
    batched `matmul`).

    a       (T, K) row-major, bf16 or f16: the tokens sorted by group; with
            counts, (G, R, K): up to R rows per group
    b       (G, K, N): each group's K x N weight, row-major or column-major
            (a (G, N, K) weight's .transpose(-2, -1))
    offs    (G,) int32 on a's device: the cumulative row ends
    counts  (G,) int32 on a's device: each group's rows (clamped to [0, R]
            by the kernel; rows past them are not written)
    out     (T, N) contiguous storage; default: a new tensor
    out_dtype  bf16, f16 or f32 (default: a's)
    check_offsets  check the offsets on the host first (default: yes,
            except inside a CUDA graph capture)
    bias    (G, N) bf16, f16 or f32: group g's row added to its rows
    activation  relu, gelu, gelu_tanh or silu, after the bias
    gate    relu, gelu, gelu_tanh or silu: a gated output, gate(x W_gate) *
            (x W_up) -- SwiGLU with "silu" -- from a weight whose N columns
            alternate 64 of gate and 64 of up (interleave_gate_up); out has
            N / 2 columns

    Under torch.compile and torch.export the call becomes the custom op
    `torch.ops.nvwgmma.grouped_mm` (nvwgmma.kernel.torch_ops), the fused
    epilogue and scales with it.
    """
    if _calls.compiling():
        from ..torch_ops import traced_grouped_mm

        return traced_grouped_mm(a, b, offs=offs, counts=counts, out=out, out_dtype=out_dtype,
                                 stream=stream, config=config, bias=bias, activation=activation,
                                 gate=gate)  # fmt: skip
    launch, out = prepare_grouped(a, b, offs=offs, counts=counts, out=out, out_dtype=out_dtype,
                                  stream=stream, config=config, check_offsets=check_offsets,
                                  bias=bias, activation=activation, gate=gate)  # fmt: skip
    if launch is not None:
        launch()
    return out


def interleave_gate_up(w_gate, w_up):
    """The weight a gated grouped_mm reads: (G, N, K) gate and up weights
    (torch.nn.Linear's layout) as one (G, 2N, K) weight whose rows alternate
    64 of gate and 64 of up; pass its .transpose(-2, -1). N must be a
    multiple of 64. Works on torch tensors (and any array with reshape and
    a stack of the same module)."""
    if tuple(w_gate.shape) != tuple(w_up.shape) or len(w_gate.shape) != 3:
        _fail(f"w_gate and w_up must be (G, N, K) of one shape, but got {tuple(w_gate.shape)} "
              f"and {tuple(w_up.shape)}")  # fmt: skip
    g, n, k = w_gate.shape
    if n % GATE_BLOCK:
        _fail(f"the gate/up width N must be a multiple of {GATE_BLOCK}, but got {n}")
    stack = __import__(type(w_gate).__module__.split(".")[0]).stack
    pairs = stack((w_gate.reshape(g, n // GATE_BLOCK, GATE_BLOCK, k),
                   w_up.reshape(g, n // GATE_BLOCK, GATE_BLOCK, k)), 2)  # fmt: skip
    return pairs.reshape(g, 2 * n, k)


def scaled_grouped_mm(a, b, scale_a, scale_b, *, offs=None, counts=None, out=None,
                      out_dtype="bf16", stream=None, config=None, check_offsets=None, bias=None,
                      activation=None, gate=None):  # fmt: skip
    """fp8 grouped_mm with row-wise scales, torch._scaled_grouped_mm's
    semantics: out[r, n] = (a[r] . b[g][:, n]) * scale_a[r] * scale_b[g, n]
    for the rows r of group g; returns out.

    a        (T, K) e4m3 or e5m2, row-major (masked layout: (G, R, K))
    b        (G, K, N) fp8 of a's type, K-major: a (G, N, K) weight's
             .transpose(-2, -1)
    scale_a  (T,) f32 (masked: (G, R)): one scale per row of a; or, block
             scales (DeepSeek-V3's), (T, ceil(K / 128)): per row and
             128-wide K block
    scale_b  (G, N) f32: one scale per group and column of b; or, block
             scales, (G, ceil(N / 128), ceil(K / 128)): per 128 x 128 block
    offs, counts, out, stream, config, check_offsets, bias, activation, gate:
             as grouped_mm's (after the scales)
    out_dtype  bf16 (default), f16 or f32
    """
    if _calls.compiling():
        from ..torch_ops import traced_grouped_mm

        return traced_grouped_mm(a, b, offs=offs, counts=counts, out=out, out_dtype=out_dtype,
                                 stream=stream, config=config, bias=bias, activation=activation,
                                 gate=gate, scale_a=scale_a, scale_b=scale_b)  # fmt: skip
    launch, out = prepare_grouped(a, b, offs=offs, counts=counts, out=out, out_dtype=out_dtype,
                                  stream=stream, config=config, check_offsets=check_offsets,
                                  bias=bias, activation=activation, scale_a=scale_a,
                                  scale_b=scale_b, gate=gate)  # fmt: skip
    if launch is not None:
        launch()
    return out
