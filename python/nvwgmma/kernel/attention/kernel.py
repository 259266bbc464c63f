"""`build_attention`: a FlashAttention-3-style forward kernel from the
kernel layer's pieces -- TMA rings (`pipeline`), wide K-major / MN-major
tiles (`geometry`, `smem`), the accumulator as P's A fragments and the
online softmax (`fragment`, `fastmath`), ping-pong turns (`barrier`), the
register epilogue (`epilogue`).

A CTA owns 64 x `consumers` (128 or 192) query rows of one head (grid:
query blocks x heads x batch; persistent: one CTA per SM walks them,
`tiles`). Warpgroup 0 is the producer: one thread loads Q once (a
one-shot barrier), then K and V block by block into two rings. The other
warpgroups are consumers of 64 rows each. With `overlap`, a consumer issues
S_j = Q K_jᵀ and O += P_{j-1} V_{j-1} back to back, waits for S_j only
(wait_group 1), runs the softmax of block j while P·V runs, then waits
for P·V and rescales O: the tensor cores never wait for the softmax.
"""

from __future__ import annotations

from dataclasses import asdict

from .._ir import TENSOR_MAP_PARAM
from . import tiles
from .common import KernelIR, wide
from .config import AttentionConfig, check_config

__all__ = ["SIGNATURE", "build_attention"]

# The kernel's parameters, in order (what attention.launch passes).
SIGNATURE = (
    ("tmQ", TENSOR_MAP_PARAM),  # 4-D tensor maps (head dim, heads, tokens, batch)
    ("tmK", TENSOR_MAP_PARAM),
    ("tmV", TENSOR_MAP_PARAM),
    ("tmO", TENSOR_MAP_PARAM),  # tma_store: O's map, like Q's (else unread)
    ("O", "!llvm.ptr<1>"),  # output, strided like Q
    ("LSE", "!llvm.ptr<1>"),  # f32 log-sum-exp per (batch, head, query)
    ("cuQ", "!llvm.ptr<1>"),  # varlen: i32 cumulative query offsets (batch + 1)
    ("cuK", "!llvm.ptr<1>"),  # varlen: i32 cumulative key offsets
    ("Sq", "i32"),  # query / key length (dense)
    ("Sk", "i32"),
    ("group", "i32"),  # query heads per K/V head (GQA / MQA)
    ("o_batch", "i64"),  # O strides in elements
    ("o_row", "i32"),
    ("o_head", "i32"),
    ("lse_batch", "i64"),  # LSE strides in elements (its tokens are contiguous)
    ("lse_head", "i32"),
    ("scale_log2", "f32"),  # softmax scale x log2(e)
    ("heads", "i32"),  # query heads and batch entries (the persistent tile count)
    ("batches", "i32"),
    ("section", "i32"),  # causal persistent walks: (head, batch) pairs per L2 section
    ("sched", "!llvm.ptr<1>"),  # dynamic tile walk: two i32 counters, zero between launches
    ("o_scale", "f32"),  # O's factor (fp8: V's descale; 1 otherwise)
)

_LN2 = 0.6931471805599453
# lazy_rescale: the stale row maximum may trail the true one by 8 (log2
# units), FlashAttention-4's threshold: P <= 2^8, far inside bf16/f16.
LAZY_RESCALE_LOG2 = 8.0
# speculative: each consumer's vote on redoing a block (named barriers 7, 8, 9).
VOTE_BARRIER = 7


class _Correction(list):
    """The two rows' O corrections and `needed`, an i1: either row's
    maximum moved (lazy_rescale)."""

    def __init__(self, factors, needed):
        super().__init__(factors)
        self.needed = needed


class _Kernel(KernelIR):
    """The IR of one kernel: the shared-memory plan and each role."""

    def __init__(self, c: AttentionConfig):
        from .config import tile

        self.c = c
        d, bn = c.head_dim, c.block_n
        self.q = tile(c.dtype, 64, d, "K")  # one consumer's rows
        self.k = tile(c.dtype, bn, d, "K")  # B of S = Q Kᵀ (keys x d)
        # B of O = P V (d x keys): d contiguous (V as stored) for 16-bit,
        # keys contiguous (Vᵀ) for fp8.
        self.v = tile(c.dtype, d, bn, c.v_major)
        self.o = tile(c.out_dtype, 64, d, "K")  # one consumer's rows of O
        self.q_at = 0
        self.k_at = c.consumers * self.q.tile_bytes
        self.v_at = self.k_at + c.stages * self.k.tile_bytes
        self.staging_at = self.v_at + c.stages * self.v.tile_bytes  # tma_store: O per consumer
        self.barriers_at = self.staging_at + c.consumers * c.staging_bytes

    # ------------------------------------------------------------------ IR
    def build(self, args):
        from ...dialects import arith, nvvm, scf
        from ...ir import InsertionPoint, IntegerType
        from .. import pipeline

        c, const = self.c, self.const
        i32 = IntegerType.get_signless(32)
        self.args = args
        self.dynamic_smem()
        ring_base = self.smem(self.barriers_at)
        self.kring = pipeline.Ring(ring_base, c.stages, c.consumers)
        self.vring = pipeline.Ring(self.smem(self.barriers_at + self.kring.bytes), c.stages,
                                   c.consumers)  # fmt: skip
        self.qbar = pipeline.Barriers(self.smem(self.barriers_at + 2 * self.kring.bytes), 1)
        # Persistent: the consumers release Q (one arrival each) before the
        # producer loads the next tile's.
        after_q = self.barriers_at + 2 * self.kring.bytes + 8
        self.qfree = pipeline.Barriers(self.smem(after_q), 1) if c.persistent else None
        self.slots_at = after_q + 8  # the dynamic walk's tile numbers (tiles.SLOT_BYTES)
        tid = nvvm.read_ptx_sreg_tid_x(i32)
        self.warpgroup = arith.divui(tid, const(128))
        self.wg_thread = arith.remui(tid, const(128))
        if c.persistent:
            self.sq, self.sk = args["Sq"], args["Sk"]
            valid = arith.cmpi(arith.CmpIPredicate.sgt, self.sk, const(0))
        else:
            block = nvvm.read_ptx_sreg_ctaid_x(i32)
            if c.causal:  # the longest query blocks first: the tail is short blocks
                block = arith.subi(arith.subi(nvvm.read_ptx_sreg_nctaid_x(i32), block), const(1))
            self._tile(block, nvvm.read_ptx_sreg_ctaid_y(i32), nvvm.read_ptx_sreg_ctaid_z(i32))
            valid = arith.andi(
                arith.cmpi(arith.CmpIPredicate.slt, self.m0, self.sq),
                arith.cmpi(arith.CmpIPredicate.sgt, self.sk, const(0)),
            )
        work = scf.IfOp(valid)
        with InsertionPoint(work.then_block):
            self.split_roles(tid, self._init_barriers)
            scf.YieldOp([])

    def _init_barriers(self):
        self.kring.init()
        self.vring.init()
        self.qbar.init(1)
        if self.qfree is not None:
            self.qfree.init(self.c.consumers)

    def _tile(self, block, head, batch):
        """This tile's query block, head and batch entry (i32 Values), and
        what follows from them."""
        from ...dialects import arith

        self.m0 = arith.muli(block, self.const(self.c.block_m))
        self.head, self.batch = head, batch
        self.kv_head = arith.divui(self.head, self.args["group"])
        self._sequence()
        self._blocks()

    def _sequence(self):
        """This batch entry's query/key start and length; the batch
        coordinate of the tensor maps."""
        from .common import sequence

        (self.q_start, self.sq, self.k_start, self.sk,
         self.tb) = sequence(self.args, self.batch, self.c.varlen)  # fmt: skip

    def _blocks(self):
        """n: key blocks this CTA visits (causal: up to its last row's
        diagonal, at least one); diag = Sk - Sq (bottom-right alignment)."""
        from ...dialects import arith

        c, const = self.c, self.const
        bn = const(c.block_n)
        self.diag = arith.subi(self.sk, self.sq)
        n = arith.divui(arith.addi(self.sk, const(c.block_n - 1)), bn)
        if c.causal:
            reach = arith.addi(arith.addi(self.m0, const(c.block_m + c.block_n - 1)), self.diag)
            n = arith.minsi(n, arith.maxsi(arith.divsi(reach, bn), const(1)))
        self.n = n

    # ------------------------------------------------------------ producer
    def _load(self, tensor_map, geometry, at, token, head, barrier_or_ring, stage=None):
        """`geometry`'s tile from the 4-D map (head dim, heads, tokens,
        batch) at `token`; a K-major Vᵀ tile (fp8) from the map (tokens,
        head dim, heads, batch), its contiguous run along the keys."""
        from ...dialects import arith
        from .common import load_tile_boxes

        def plus(v, offset):
            return arith.addi(v, self.const(offset)) if offset else v

        transposed = geometry is self.v and self.c.v_major == "K"

        def coordinates(inner, outer):
            if transposed:  # varlen: Vᵀ is dense, one batch entry per sequence
                batch = self.batch if self.c.varlen else self.tb
                return (plus(token, inner), self.const(outer), head, batch)
            return (self.const(inner), head, plus(token, outer), self.tb)

        load_tile_boxes(
            tensor_map, geometry,
            lambda offset: self.smem(at + offset if isinstance(at, int)
                                     else arith.addi(at, self.const(offset))),
            coordinates, barrier_or_ring, stage)  # fmt: skip

    def producer(self):
        from ...dialects import arith, nvvm, scf
        from ...ir import InsertionPoint

        c, const = self.c, self.const
        nvvm.setmaxregister(c.producer_regs, nvvm.SetMaxRegisterAction.decrease)
        issuer = scf.IfOp(arith.cmpi(arith.CmpIPredicate.eq, self.wg_thread, const(0)))
        with InsertionPoint(issuer.then_block):
            if c.persistent:
                tiles.walk_producer(self, self._produce)
            else:
                self._produce(None)
            scf.YieldOp([])

    def _produce(self, it):
        """One tile's loads: Q, then K and V block by block; `it`: the
        rings' running index at its first block (persistent: the walk has
        waited for the last tile's Q to be released), else None."""
        from ...dialects import arith, scf
        from ...ir import IndexType, InsertionPoint, IntegerType
        from .. import pipeline

        c, const, args = self.c, self.const, self.args
        pipeline.expect_tx(self.qbar.at(0), c.consumers * self.q.tile_bytes)
        for consumer in range(c.consumers):
            token = arith.addi(arith.addi(self.q_start, self.m0), const(64 * consumer))
            self._load(args["tmQ"], self.q, self.q_at + consumer * self.q.tile_bytes,
                       token, self.head, self.qbar.at(0))  # fmt: skip
        index, i32 = IndexType.get(), IntegerType.get_signless(32)
        carried = [] if it is None else [it]
        loads = scf.ForOp(arith.constant(index, 0), arith.index_cast(index, self.n),
                          arith.constant(index, 1), carried)  # fmt: skip
        with InsertionPoint(loads.body):
            j = arith.index_cast(i32, loads.induction_variable)
            r = j if it is None else loads.inner_iter_args[0]
            k_token = arith.addi(self.k_start, arith.muli(j, const(c.block_n)))
            # fp8 varlen: the sequence's Vᵀ starts at key 0 of its own batch entry.
            v_token = arith.muli(j, const(c.block_n)) if c.fp8 and c.varlen else k_token
            for ring, tm, geometry, at, token in (
                (self.kring, args["tmK"], self.k, self.k_at, k_token),
                (self.vring, args["tmV"], self.v, self.v_at, v_token),
            ):
                stage, phase = ring.stage_and_phase(r)
                ring.producer_acquire(stage, phase)
                ring.producer_expect(stage, geometry.tile_bytes)
                stage_at = arith.addi(const(at), arith.muli(stage, const(geometry.tile_bytes)))
                self._load(tm, geometry, stage_at, token, self.kv_head, ring, stage)
            scf.YieldOp([] if it is None else [arith.addi(r, const(1))])

    # ------------------------------------------------------------ consumer
    def consumer(self, index):
        from ...dialects import arith, nvvm
        from .. import smem
        from ..barrier import PingPong

        c, const = self.c, self.const
        nvvm.setmaxregister(c.consumer_regs, nvvm.SetMaxRegisterAction.increase)
        self.index = index
        q_at = arith.addi(const(self.q_at), arith.muli(index, const(self.q.tile_bytes)))
        self.q_desc = smem.tile_descriptor(self.smem(q_at), self.q)
        self.k_desc = smem.tile_descriptor(self.smem(self.k_at), self.k)
        self.v_desc = smem.tile_descriptor(self.smem(self.v_at), self.v)
        self.releaser = arith.cmpi(arith.CmpIPredicate.eq, self.wg_thread, const(0))
        self.turns = PingPong(index) if c.pingpong else None
        if c.persistent:
            tiles.walk_consumer(self, self._consume)
            if c.tma_store:  # the last tile's O store has read the staging
                self._each_consumer(self._wait_store_read)
        else:
            self._consume(None)

    def _consume(self, it):
        """One tile: wait for Q (the walk does, persistent), the blocks, the
        epilogue; `it` as in _produce."""
        from ...dialects import arith
        from .. import pipeline

        const = self.const
        self.row0 = arith.addi(self.m0, arith.muli(self.index, const(64)))
        if it is None:
            pipeline.wait_parity(self.qbar.at(0), 0)
        if self.c.overlap:
            self._overlapped(it)
        else:
            self._serial()

    def _true(self):
        from ...dialects import arith
        from ...ir import IntegerType

        return arith.constant(IntegerType.get_signless(1), 1)

    def _false(self):
        from ...dialects import arith
        from ...ir import IntegerType

        return arith.constant(IntegerType.get_signless(1), 0)

    def _wait_turn(self, first):
        """Ping-pong: wait for this consumer's turn (`first`: i1)."""
        if self.turns is not None:
            self.turns.wait(first=first)

    def _pass_turn(self, last):
        """Ping-pong: hand the tensor cores on (`last`: i1)."""
        if self.turns is not None:
            self.turns.pass_on(last=last)

    def _release_q(self):
        from ...dialects import nvvm, scf
        from ...ir import InsertionPoint, IntegerType

        rel = scf.IfOp(self.releaser)
        with InsertionPoint(rel.then_block):
            nvvm.mbarrier_arrive(IntegerType.get_signless(64), self.qfree.at(0))
            scf.YieldOp([])

    def _release(self, ring, stage):
        from ...dialects import scf
        from ...ir import InsertionPoint

        rel = scf.IfOp(self.releaser)
        with InsertionPoint(rel.then_block):
            ring.consumer_release(stage)
            scf.YieldOp([])

    def _qk(self, j, wait=True):
        """Wait for K_j (unless waited for already), fence, issue S = Q K_jᵀ
        (not committed)."""
        from ...dialects import nvwgmma as wg
        from .. import smem

        s = wg.zero_accumulator("f32", self.c.block_n)
        # The fence follows every register write the wgmmas read, the zero included.
        return self._stage_mma(self.kring, self.k, self.k_desc, j, s, self.q.k_steps,
                               lambda k: smem.step_descriptor(self.q_desc, self.q, k_step=k),
                               self.c.block_n, first_scale=False, wait=wait)  # fmt: skip

    def _pv(self, o, p, j, accumulate):
        """Wait for V_j, fence, issue O (+)= P V_j (not committed). P and O
        arrive through loop-carried registers: copies the compiler places
        after an earlier fence would need one of ptxas's own."""
        return self._stage_mma(self.vring, self.v, self.v_desc, j, o, len(p), p.__getitem__,
                               self.c.head_dim, first_scale=accumulate,
                               transpose_b=self.c.v_major == "MN")  # fmt: skip

    def _stage_mma(self, ring, tile, desc, j, acc, steps, a_at, n, *, first_scale,
                   transpose_b=False, wait=True):  # fmt: skip
        """Wait for ring stage j, fence, and issue `steps` m64 x `n` x k
        (16, fp8 32) wgmmas with B from `tile` in that stage and A from `a_at(step)` (a
        descriptor or register fragment), D scaled by `first_scale` at the
        first step only; (accumulator, stage)."""
        from ...dialects import nvwgmma as wg
        from .. import smem

        stage, phase = ring.stage_and_phase(j)
        if wait:
            ring.consumer_wait(stage, phase)
        wg.fence()
        for step in range(steps):
            a = a_at(step)
            b = smem.step_descriptor(desc, tile, k_step=step, stage=stage,
                                     stage_bytes=tile.tile_bytes)  # fmt: skip
            acc = wg.mma_async(acc, a, b, shape=(64, n, self.c.k_instr), a_type=self.c.dtype,
                               d_type="f32",
                               transpose_b=transpose_b,
                               scale_d=first_scale if step == 0 else True)  # fmt: skip
        return acc, stage

    def _masked(self, values, j):
        """The scores of key block j, masked where the block needs it (the
        ragged key tail; causal: past the diagonal), branch-free elsewhere."""
        from ...dialects import arith, scf
        from ...ir import InsertionPoint
        from .. import fragment

        c, const = self.c, self.const
        first_key = arith.muli(j, const(c.block_n))
        end_key = arith.addi(first_key, const(c.block_n))
        needs = arith.cmpi(arith.CmpIPredicate.sgt, end_key, self.sk)
        if c.causal:  # the block's last key lies past the CTA's first row's diagonal
            past = arith.cmpi(arith.CmpIPredicate.sgt, end_key,
                              arith.addi(arith.addi(self.m0, self.diag), const(1)))  # fmt: skip
            needs = arith.ori(needs, past)
        branch = scf.IfOp(needs, [v.type for v in values], has_else=True)
        with InsertionPoint(branch.then_block):
            at = fragment.Coordinates(c.block_n, row=self.row0, col=first_key,
                                      thread=self.wg_thread)  # fmt: skip
            masked = fragment.mask_columns(values, at, self.sk)
            if c.causal:
                masked = fragment.mask_causal(masked, at, diagonal=self.diag)
            scf.YieldOp(masked)
        with InsertionPoint(branch.else_block):
            scf.YieldOp(values)
        return list(branch.results)

    def _softmax(self, s, j, m_old, den_old):
        """(P fragments, row maxima m (log2 units), partial sums den,
        correction of the old O) of scores s after block j."""
        from ...dialects import llvm
        from ...ir import F32Type, FloatAttr
        from .. import fastmath, fragment

        scale = self.args["scale_log2"]
        values = self._masked(fragment.unpack(s), j)
        f32 = F32Type.get()
        ninf = llvm.mlir_constant(FloatAttr.get(f32, float("-inf")))
        zero = llvm.mlir_constant(FloatAttr.get(f32, 0.0))
        m = [llvm.fmul(x, scale) for x in fragment.row_max(values)]
        grown = None
        if m_old is not None:
            m = [llvm.intr_maxnum(a, b) for a, b in zip(m, m_old)]
            if self.c.lazy_rescale:
                # Keep the old maximum unless the new one exceeds it by more
                # than 2^8: P stays <= 256, and O needs no rescaling.
                # (-inf - -inf is NaN: a row with no key yet keeps -inf.)
                limit = llvm.mlir_constant(FloatAttr.get(f32, LAZY_RESCALE_LOG2))
                grown = [llvm.fcmp(llvm.FCmpPredicate.ogt, llvm.fsub(a, b), limit)
                         for a, b in zip(m, m_old)]  # fmt: skip
                m = [llvm.select(g, a, b) for g, a, b in zip(grown, m, m_old)]
        # A row with no key yet (all -inf) subtracts 0, not -inf: no NaN.
        safe = [llvm.select(llvm.fcmp(llvm.FCmpPredicate.oeq, x, ninf), zero, x) for x in m]
        p = self._exp2(values, [llvm.fneg(x) for x in safe])
        sums = fragment.row_sum(p, quad=False)
        if m_old is None:
            corr, den_new = None, sums
        else:
            corr = [fastmath.exp2(llvm.fsub(a, b)) for a, b in zip(m_old, safe)]
            den_new = [fastmath.fma(a, b, x) for a, b, x in zip(den_old, corr, sums)]
        if grown is not None:
            corr = _Correction(corr, llvm.or_(*grown))
        p = fragment.to_a_fragments(p, self.c.dtype, permuted=self.c.v_permuted)
        return p, m, den_new, corr

    def _exp2(self, values, neg):
        """2^(v * scale - m) of every score v, m its row's maximum (`neg`:
        the thread's two rows' -m, log2 units)."""
        from ...dialects import llvm
        from ...ir import F32Type, FloatAttr
        from .. import fastmath

        scale = self.args["scale_log2"]
        x = [fastmath.fma(v, scale, neg[(e // 2) % 2]) for e, v in enumerate(values)]
        if self.c.fast_exp2:
            # fma_exp2 of every 8 on the FMA pipe, the rest on the SFU.
            degree = 4 if self.c.dtype == "f16" else 3
            return [fastmath.exp2_fma(v, degree=degree) if e % 8 < self.c.fma_exp2
                    else fastmath.exp2(v) for e, v in enumerate(x)]  # fmt: skip
        # 2^x as e^(x ln 2), as a kernel without the trick computes it
        from ...dialects import math

        ln2 = llvm.mlir_constant(FloatAttr.get(F32Type.get(), _LN2))
        return [math.exp(llvm.fmul(v, ln2)) for v in x]

    def _speculate(self, s, j, m_old, den_old):
        """Block j's softmax against the running maxima m_old as they stand
        (no row maximum, no shuffles, no rescale of O): (P fragments,
        partial sums den, redo). `redo` (i1): this thread cannot keep
        them -- a row sum above 2^8 (some P may exceed it), not a number
        (an overflow, or NaN in the scores), or a row with no key yet."""
        from ...dialects import llvm
        from ...ir import F32Type, FloatAttr
        from .. import fragment

        f32 = F32Type.get()
        values = self._masked(fragment.unpack(s), j)
        p = self._exp2(values, [llvm.fneg(x) for x in m_old])
        sums = fragment.row_sum(p, quad=False)
        limit = llvm.mlir_constant(FloatAttr.get(f32, 2.0**LAZY_RESCALE_LOG2))
        ninf = llvm.mlir_constant(FloatAttr.get(f32, float("-inf")))
        # ugt: greater, or unordered (NaN).
        redo = [llvm.or_(llvm.fcmp(llvm.FCmpPredicate.ugt, x, limit),
                         llvm.fcmp(llvm.FCmpPredicate.oeq, m, ninf))
                for x, m in zip(sums, m_old)]  # fmt: skip
        den = [llvm.fadd(a, b) for a, b in zip(den_old, sums)]
        p = fragment.to_a_fragments(p, self.c.dtype, permuted=self.c.v_permuted)
        return p, den, llvm.or_(*redo)

    def _rescale(self, o, corr):
        """O times each row's correction; with lazy_rescale only in a thread
        whose rows' maximum moved (corr.needed)."""
        from ...dialects import scf
        from ...ir import InsertionPoint
        from .. import fragment

        if not isinstance(corr, _Correction):
            return fragment.pack(fragment.scale_rows(fragment.unpack(o), corr))
        branch = scf.IfOp(corr.needed, [o.type], has_else=True)
        with InsertionPoint(branch.then_block):
            scf.YieldOp([fragment.pack(fragment.scale_rows(fragment.unpack(o), list(corr)))])
        with InsertionPoint(branch.else_block):
            scf.YieldOp([o])
        return branch.results[0]

    def _overlapped(self, it=None):
        """`it`: the rings' running index at block 0 (persistent), else the
        block index is the ring index."""
        from ...dialects import arith, scf
        from ...dialects import nvwgmma as wg
        from ...ir import IndexType, InsertionPoint, IntegerType

        c, const = self.c, self.const
        i32, index = IntegerType.get_signless(32), IndexType.get()
        # Block 0: S only.
        self._wait_turn(self._true())
        s, k_stage = self._qk(const(0) if it is None else it)
        wg.commit_group()
        self._pass_turn(self._false())
        (s,) = wg.wait_group(0, s).results
        self._release(self.kring, k_stage)
        p, m, den, _ = self._softmax(s, const(0), None, None)
        o = wg.zero_accumulator("f32", c.head_dim)
        carried = [o, *p, *m, *den] + ([] if it is None else [arith.addi(it, const(1))])
        n_p = len(p)

        def state(values):
            """(O, P, m, den, the rings' index or None) from the carried values."""
            r = values[5 + n_p] if it is not None else None
            return (
                values[0],
                values[1 : 1 + n_p],
                values[1 + n_p : 3 + n_p],
                values[3 + n_p : 5 + n_p],
                r,
            )

        loop = scf.ForOp(arith.constant(index, 1), arith.index_cast(index, self.n),
                         arith.constant(index, 1), carried)  # fmt: skip
        with InsertionPoint(loop.body):
            o, p, m, den, r = state(list(loop.inner_iter_args))
            j = arith.index_cast(i32, loop.induction_variable)
            prev = arith.subi(j, const(1))
            r = j if r is None else r  # the rings' index of block j
            self._wait_turn(self._false())
            s, k_stage = self._qk(r)
            wg.commit_group()
            o, v_stage = self._pv(o, p, arith.subi(r, const(1)),
                                  arith.cmpi(arith.CmpIPredicate.sgt, prev, const(0)))  # fmt: skip
            wg.commit_group()
            self._pass_turn(self._false())
            (s,) = wg.wait_group(1, s).results  # S_j is done; P·V of block j-1 may still run
            if c.speculative:
                o, p_next, m_next, den_next = self._speculative(s, j, r, k_stage, v_stage, o,
                                                                m, den)  # fmt: skip
            else:
                self._release(self.kring, k_stage)
                p_next, m_next, den_next, corr = self._softmax(s, j, m, den)
                (o,) = wg.wait_group(0, o).results
                self._release(self.vring, v_stage)
                o = self._rescale(o, corr)
            more = [] if it is None else [arith.addi(r, const(1))]
            scf.YieldOp([o, *p_next, *m_next, *den_next, *more])
        o, p, m, den, r_end = state(list(loop.results))
        if it is not None:
            # Every S of this tile has completed: Q may be refilled.
            self._release_q()
        last = arith.subi(self.n, const(1))
        last_r = last if r_end is None else arith.subi(r_end, const(1))
        self._wait_turn(self._false())
        o, v_stage = self._pv(o, p, last_r, arith.cmpi(arith.CmpIPredicate.sgt, last, const(0)))
        wg.commit_group()
        self._pass_turn(self._true())
        (o,) = wg.wait_group(0, o).results
        self._release(self.vring, v_stage)
        self._finish(o, m, den)

    def _speculative(self, s, j, r, k_stage, v_stage, o, m, den):
        """Block j's softmax by _speculate, kept unless a thread of the
        warpgroup votes to redo it: then S_j again (K_j is released only
        after the vote), the exact softmax, O rescaled. (O, P, m, den)."""
        from ...dialects import nvwgmma as wg
        from ...dialects import scf
        from ...ir import InsertionPoint
        from .. import barrier

        p, den_fast, redo = self._speculate(s, j, m, den)
        (o,) = wg.wait_group(0, o).results
        self._release(self.vring, v_stage)
        ids = tuple(VOTE_BARRIER + i for i in range(self.c.consumers))
        redo = barrier.any_of(self.index, ids, 128, redo)
        types = [o.type] + [x.type for x in p] + [x.type for x in m] + [x.type for x in den]
        branch = scf.IfOp(redo, types, has_else=True)
        with InsertionPoint(branch.then_block):
            s, _ = self._qk(r, wait=False)  # K_j is held until after the vote
            wg.commit_group()
            (s,) = wg.wait_group(0, s).results
            p_exact, m_exact, den_exact, corr = self._softmax(s, j, m, den)
            scf.YieldOp([self._rescale(o, corr), *p_exact, *m_exact, *den_exact])
        with InsertionPoint(branch.else_block):
            scf.YieldOp([o, *p, *m, *den_fast])
        self._release(self.kring, k_stage)
        out = list(branch.results)
        n = len(p)
        return out[0], out[1 : 1 + n], out[1 + n : 1 + n + len(m)], out[1 + n + len(m) :]

    def _serial(self):
        """One block at a time: S, softmax, rescale, P·V, each waited for
        (the ablation of `overlap`)."""
        from ...dialects import arith, llvm, scf
        from ...dialects import nvwgmma as wg
        from ...ir import F32Type, FloatAttr, IndexType, InsertionPoint, IntegerType

        c, const = self.c, self.const
        i32, index = IntegerType.get_signless(32), IndexType.get()
        f32 = F32Type.get()
        o = wg.zero_accumulator("f32", c.head_dim)
        m = [llvm.mlir_constant(FloatAttr.get(f32, float("-inf")))] * 2
        den = [llvm.mlir_constant(FloatAttr.get(f32, 0.0))] * 2
        loop = scf.ForOp(arith.constant(index, 0), arith.index_cast(index, self.n),
                         arith.constant(index, 1), [o, *m, *den])  # fmt: skip
        with InsertionPoint(loop.body):
            o, m0, m1, den0, den1 = loop.inner_iter_args
            j = arith.index_cast(i32, loop.induction_variable)
            first = arith.cmpi(arith.CmpIPredicate.eq, j, const(0))
            self._wait_turn(first)
            s, k_stage = self._qk(j)
            wg.commit_group()
            (s,) = wg.wait_group(0, s).results
            self._release(self.kring, k_stage)
            p, m, den, corr = self._softmax(s, j, [m0, m1], [den0, den1])
            o = self._rescale(o, corr)
            o, v_stage = self._pv(o, p, j, arith.cmpi(arith.CmpIPredicate.sgt, j, const(0)))
            wg.commit_group()
            last = arith.cmpi(arith.CmpIPredicate.eq, j, arith.subi(self.n, const(1)))
            self._pass_turn(last)
            (o,) = wg.wait_group(0, o).results
            self._release(self.vring, v_stage)
            scf.YieldOp([o, *m, *den])
        o, m0, m1, den0, den1 = loop.results
        self._finish(o, [m0, m1], [den0, den1])

    def _finish(self, o, m, den):
        """O / den stored to this consumer's rows; LSE = (m + log2 den) ln 2."""
        from ...dialects import arith, llvm, scf
        from ...ir import F32Type, FloatAttr, InsertionPoint
        from .. import fastmath, fragment
        from .._ir import gep

        c, const, args = self.c, self.const, self.args
        f32 = F32Type.get()
        zero = llvm.mlir_constant(FloatAttr.get(f32, 0.0))
        one = llvm.mlir_constant(FloatAttr.get(f32, 1.0))
        total = [fragment.quad_reduce(x, "sum") for x in den]
        inverse = [
            llvm.select(llvm.fcmp(llvm.FCmpPredicate.oeq, t, zero), zero, llvm.fdiv(one, t))
            for t in total
        ]
        if c.fp8:  # V's descale
            inverse = [llvm.fmul(x, args["o_scale"]) for x in inverse]
        o = fragment.pack(fragment.scale_rows(fragment.unpack(o), inverse))
        if c.tma_store:
            self._store_o_tma(o)
        else:
            self._store_o_registers(o)

        # One thread of each quad writes its two rows' LSE.
        lse_offset = arith.addi(
            arith.addi(
                arith.muli(wide(self.batch), args["lse_batch"]),
                wide(arith.muli(self.head, args["lse_head"])),
            ),  # fmt: skip
            wide(self.q_start),
        )
        lse = gep(args["LSE"], lse_offset, f32)
        at = fragment.Coordinates(8, row=self.row0, thread=self.wg_thread)
        lead = arith.cmpi(arith.CmpIPredicate.eq, arith.andi(self.wg_thread, const(3)), const(0))
        ln2 = llvm.mlir_constant(FloatAttr.get(f32, _LN2))
        for row, mx, t in zip(at.rows(), m, total):
            inside = arith.andi(lead, arith.cmpi(arith.CmpIPredicate.slt, row, self.sq))
            put = scf.IfOp(inside)
            with InsertionPoint(put.then_block):
                value = llvm.fmul(llvm.fadd(mx, fastmath.log2(t)), ln2)
                llvm.store(value, gep(lse, row, f32))
                scf.YieldOp([])

    # ------------------------------------------------------ O through TMA
    def _each_consumer(self, emit):
        """emit(barrier id) in this consumer's branch: named barriers 1, 2
        (and 3) as immediates (ptxas reserves all 16 for a register id)."""
        from ...dialects import arith, scf
        from ...ir import InsertionPoint

        for i in range(self.c.consumers):
            mine = scf.IfOp(arith.cmpi(arith.CmpIPredicate.eq, self.index, self.const(i)))
            with InsertionPoint(mine.then_block):
                emit(1 + i)
                scf.YieldOp([])

    def _wait_store_read(self, barrier_id):
        from .. import epilogue

        epilogue.wait_store_read(barrier_id=barrier_id, thread=self.wg_thread)

    def _store_o_registers(self, o):
        """O (normalised, f32) from registers to this consumer's rows of
        its (batch, head), masked at Sq."""
        from ...dialects import arith
        from .. import epilogue
        from .._ir import element_type, gep

        c, args = self.c, self.args
        offset = arith.addi(
            arith.addi(
                arith.muli(wide(self.batch), args["o_batch"]),
                arith.muli(wide(self.q_start), wide(args["o_row"])),
            ),  # fmt: skip
            wide(arith.muli(self.head, args["o_head"])),
        )
        base = gep(args["O"], offset, element_type(c.out_dtype))
        epilogue.store_accumulator(o, base, args["o_row"], d_type="f32", n=c.head_dim,
                                   out_type=c.out_dtype, row=self.row0, col=0,
                                   thread=self.wg_thread,
                                   bounds=(self.sq, self.const(c.head_dim)))  # fmt: skip

    def _store_o_tma(self, o):
        """O (normalised, f32) into this consumer's staging and out by TMA
        boxes of Q's shape; rows past Sq fall outside the map and are not
        written. Persistent: the store's read overlaps the next tile, and
        the staging is written again only once it has been read."""
        from ...dialects import arith
        from .. import epilogue

        c, const = self.c, self.const
        staging = self.smem(
            arith.addi(const(self.staging_at), arith.muli(self.index, const(c.staging_bytes)))
        )
        if c.persistent:
            self._each_consumer(self._wait_store_read)
        epilogue.stage_accumulator(o, staging, d_type="f32", n=c.head_dim,
                                   out_type=c.out_dtype, thread=self.wg_thread)  # fmt: skip
        row = arith.addi(self.q_start, self.row0)
        self._each_consumer(
            lambda barrier_id: epilogue.tma_store(
                self.args["tmO"], staging, row=row, col=const(0), n=c.head_dim,
                barrier_id=barrier_id, thread=self.wg_thread, wait_read=not c.persistent,
                out_type=c.out_dtype, batch=self.tb, between=[self.head],
            )
        )  # fmt: skip


def build_attention(config: AttentionConfig | None = None):
    """(module, meta) for `config`: the kernel `attention` with the
    parameters of SIGNATURE; meta: block, grid rule, dynamic shared memory,
    the TMA boxes of Q, K and V (4-D: head dim, heads, tokens, batch)."""
    from ...ir import InsertionPoint, Location
    from .._ir import kernel_shell

    c = AttentionConfig() if config is None else config
    check_config(c)
    kernel = _Kernel(c)
    module, entry, args = kernel_shell("attention", SIGNATURE, c.threads,
                                       setmaxnreg=c.consumer_regs)  # fmt: skip
    with Location.unknown():
        with InsertionPoint(entry.operations[0]):
            kernel.build(args)
    module.operation.verify()
    dynamic_smem = kernel.barriers_at + c.barrier_bytes + 1024 - 16
    assert dynamic_smem == c.shared_memory_bytes, (dynamic_smem, c.shared_memory_bytes)

    def box(geometry, transposed=False):
        """The 4-D box: (head dim, 1 head, tokens, 1 batch entry); a
        transposed V's (keys, head dim, 1, 1)."""
        b = geometry.tma()
        dims = [b.box[0], b.box[1], 1, 1] if transposed else [b.box[0], 1, b.box[1], 1]
        return {"box": dims, "swizzle": b.swizzle, "data_type": b.data_type}

    meta = {
        "kernel": "attention",
        "name": c.name,
        "config": asdict(c),
        "block": [c.threads, 1, 1],
        "grid": f"(ceil(max query length / {c.block_m}), query heads, batch)",
        "block_m": c.block_m,
        "dynamic_smem": dynamic_smem,
        "boxes": {
            "Q": box(kernel.q),
            "K": box(kernel.k),
            "V": box(kernel.v, c.v_major == "K"),
            "O": box(kernel.o),
        },
        "signature": [list(p) for p in SIGNATURE],
    }
    return module, meta
