"""`build_attention_backward`: dQ, dK and dV of softmax attention,
FlashAttention-3's structure from the kernel layer's pieces.

A CTA owns 128 keys of one K/V head (grid: key blocks x K/V heads x
batch). Warpgroup 0 is the producer: one thread loads the CTA's K and V
once, then Q, dO, LSE and D of each query block, of each query head of
the group, into a ring. Consumer w (of 2) owns keys 64w .. 64w + 63 and
keeps their dK and dV (f32) in registers for the whole walk. Per query
block it issues

    Sᵀ  = K_w Qᵀ            dPᵀ = V_w dOᵀ          (keys on wgmma's M)
    Pᵀ  = exp2(Sᵀ scale log2 e - LSE log2 e)       dSᵀ = Pᵀ (dPᵀ - D)
    dV += Pᵀ dO              dK += dSᵀ Q           (A from registers)

writes dSᵀ to shared memory (stmatrix), and after a barrier of both
consumers computes its half of dQ = dS K (dS read as an MN-major A: the
head dims' halves at 64 queries a block, the rows' at 128), scales it by
the softmax scale, stages it in f32 and signals warp 1 of the producer
warpgroup, the store warp, which adds it into the f32 dQ buffer with TMA
reduce-adds (`epilogue.issue_tma_store(reduce=True)`) and hands the
staging back once read: no consumer waits for a store. With
`deterministic`, the store warp adds a dQ block only in its key block's
turn (a counter per dQ block). dK is scaled when stored.
"""

from __future__ import annotations

from dataclasses import asdict

from ..._ir import TENSOR_MAP_PARAM
from ..common import KernelIR, wide
from .config import KEYS_PER_CONSUMER, BackwardConfig, check_backward_config

__all__ = ["SIGNATURE", "build_attention_backward"]

SIGNATURE = (
    ("tmQ", TENSOR_MAP_PARAM),  # 4-D maps (head dim, heads, tokens, batch)
    ("tmK", TENSOR_MAP_PARAM),
    ("tmV", TENSOR_MAP_PARAM),
    ("tmdO", TENSOR_MAP_PARAM),
    ("tmLSE", TENSOR_MAP_PARAM),  # 3-D f32 maps (padded queries, query heads, batch
    # entries), LSE in log2 units
    ("tmD", TENSOR_MAP_PARAM),
    ("tmdQ", TENSOR_MAP_PARAM),  # 4-D f32 map of dQ's buffer, like Q's over padded queries
    ("dK", "!llvm.ptr<1>"),  # like K (contiguous)
    ("dV", "!llvm.ptr<1>"),
    ("cuQ", "!llvm.ptr<1>"),  # varlen: i32 cumulative offsets (batch + 1)
    ("cuK", "!llvm.ptr<1>"),
    ("Sq", "i32"),
    ("Sk", "i32"),
    ("group", "i32"),  # query heads per K/V head
    ("kv_batch", "i64"),  # dK / dV strides in elements
    ("kv_row", "i32"),
    ("kv_head", "i32"),
    ("scale_log2", "f32"),  # softmax scale x log2(e)
    ("scale", "f32"),  # softmax scale (dK's and dQ's factor)
    ("sem", "!llvm.ptr<1>"),  # deterministic: i32 per (batch, query head, query block), zeroed
    ("heads", "i32"),  # query heads
    ("q_blocks", "i32"),  # query blocks per (batch entry, head) of sem
)

CONSUMERS_BARRIER = 1  # named barrier: both consumers wrote their dSᵀ
# Named barriers between consumer w and the dQ store warp (128 + 32 threads):
# its dQ staged (DQ_FULL + w), its staging read by the TMA (DQ_EMPTY + w).
DQ_FULL, DQ_EMPTY, DQ_THREADS = 2, 4, 160


class _Kernel(KernelIR):
    def __init__(self, c: BackwardConfig):
        from ..config import tile

        self.c = c
        d, bm = c.head_dim, c.block_m
        self.kv = tile(c.dtype, KEYS_PER_CONSUMER, d, "K")  # A of Sᵀ and dPᵀ
        self.q = tile(c.dtype, bm, d, "K")  # B of Sᵀ / dPᵀ (Q, dO)
        # A consumer's head dims of Q / dO read MN-major as B of dK / dV (the
        # same bytes the TMA loaded K-major; shared_keys: half of them)
        self.q_b = tile(c.dtype, c.dkv_n, bm, "MN")
        self.ds_a = tile(c.dtype, 64, 64, "MN")  # 64 queries x 64 keys of dS (A of dQ)
        # 64 keys x 64 head dims of K (B of dQ; an n32 reads half)
        self.k_b = tile(c.dtype, 64, 64, "MN")
        assert self.q_b.tile_bytes * (d // c.dkv_n) == self.q.tile_bytes
        self.k_at = 0
        self.v_at = c.kv_tiles * c.kv_tile_bytes
        self.ring_at = 2 * c.kv_tiles * c.kv_tile_bytes
        self.do_at = self.q.tile_bytes  # within a stage
        self.lse_at = 2 * self.q.tile_bytes
        self.dd_at = self.lse_at + 4 * bm
        self.ds_at = self.ring_at + c.stages * c.stage_bytes
        self.dq_at = self.ds_at + 2 * c.consumers * c.ds_bytes
        self.barriers_at = self.dq_at + c.consumers * c.dq_bytes

    def build(self, args):
        from ....dialects import arith, nvvm, scf
        from ....ir import InsertionPoint, IntegerType
        from ... import pipeline

        c, const = self.c, self.const
        i32 = IntegerType.get_signless(32)
        self.args = args
        self.dynamic_smem()
        self.kvbar = pipeline.Barriers(self.smem(self.barriers_at), 1)
        self.ring = pipeline.Ring(self.smem(self.barriers_at + 8), c.stages, c.consumers)
        tid = nvvm.read_ptx_sreg_tid_x(i32)
        self.warpgroup = arith.divui(tid, const(128))
        self.wg_thread = arith.remui(tid, const(128))
        self.key_block = nvvm.read_ptx_sreg_ctaid_x(i32)
        self.kv_head_index = nvvm.read_ptx_sreg_ctaid_y(i32)
        self.batch = nvvm.read_ptx_sreg_ctaid_z(i32)
        self._sequence()
        self.k0 = arith.muli(self.key_block, const(c.block_n))
        self._walk()
        valid = arith.cmpi(arith.CmpIPredicate.slt, self.k0, self.sk)
        work = scf.IfOp(valid)
        with InsertionPoint(work.then_block):
            self.split_roles(tid, self._init_barriers)
            scf.YieldOp([])

    def _init_barriers(self):
        self.kvbar.init(1)
        self.ring.init()

    def _sequence(self):
        """This batch entry's query/key start and length."""
        from ..common import sequence

        (self.q_start, self.sq, self.k_start, self.sk,
         self.tb) = sequence(self.args, self.batch, self.c.varlen)  # fmt: skip

    def _walk(self):
        """The query blocks this CTA visits: per query head of the group,
        blocks `first` .. n_q - 1 (causal: from the first that sees a key of
        the block); `total` iterations in all."""
        from ....dialects import arith

        c, const = self.c, self.const
        bm = const(c.block_m)
        self.diag = arith.subi(self.sk, self.sq)
        self.n_q = arith.divui(arith.addi(self.sq, const(c.block_m - 1)), bm)
        first = const(0)
        if c.causal:  # query q sees key k when k <= q + diag
            lowest = arith.maxsi(arith.subi(self.k0, self.diag), const(0))
            first = arith.minsi(arith.divsi(lowest, bm), self.n_q)
        self.first = first
        self.count = arith.subi(self.n_q, first)
        self.total = arith.muli(self.count, self.args["group"])

    def _block(self, it):
        """(query head, first query) of iteration `it`. Each head's walk
        starts at a block rotated by the CTA's key block (key block kb of n
        at kb/n of the way): the key blocks running side by side add into
        different dQ blocks, not all into one (2-5 % at S 512-8k on an
        H100). Not causal walks (measured 5 % slower), nor deterministic
        ones (each key block's turn comes in walk order)."""
        from ....dialects import arith, nvvm
        from ....ir import IntegerType

        count = arith.maxsi(self.count, self.const(1))
        member = arith.divsi(it, count)
        step = arith.remsi(it, count)
        if not (self.c.deterministic or self.c.causal):
            n = nvvm.read_ptx_sreg_nctaid_x(IntegerType.get_signless(32))
            rotation = arith.divui(arith.muli(self.key_block, count), n)
            step = arith.remui(arith.addi(step, rotation), count)
        block = arith.addi(self.first, step)
        head = arith.addi(arith.muli(self.kv_head_index, self.args["group"]), member)
        return head, arith.muli(block, self.const(self.c.block_m))

    # ------------------------------------------------------------ producer
    def _load(self, tensor_map, geometry, at, token, head, barrier_or_ring, stage=None):
        """`geometry`'s tile from a 4-D map (head dim, heads, tokens, batch)
        at `token` into shared memory at `at` (an int or i32 Value)."""
        from ....dialects import arith
        from ..common import load_tile_boxes

        const = self.const
        load_tile_boxes(
            tensor_map, geometry,
            lambda offset: self.smem(at + offset if isinstance(at, int)
                                     else arith.addi(at, const(offset))),
            lambda inner, outer: (const(inner), head, arith.addi(token, const(outer)), self.tb),
            barrier_or_ring, stage)  # fmt: skip

    def producer(self):
        from ....dialects import arith, nvvm, scf
        from ....ir import InsertionPoint

        c, const = self.c, self.const
        nvvm.setmaxregister(c.producer_regs, nvvm.SetMaxRegisterAction.decrease)
        self._loads()
        warp = arith.divui(self.wg_thread, const(32))
        store = scf.IfOp(arith.cmpi(arith.CmpIPredicate.eq, warp, const(1)))
        with InsertionPoint(store.then_block):
            self._store_dq_warp()
            scf.YieldOp([])

    def _store_dq_warp(self):
        """Warp 1: for every block, each consumer's staged dQ added into
        dQacc by TMA (lane 0), the staging handed back once read -- the
        consumers never wait for a store."""
        from ....dialects import arith, nvvm, scf
        from ....ir import IndexType, InsertionPoint, IntegerType
        from ... import barrier, epilogue

        c, const = self.c, self.const
        index, i32 = IndexType.get(), IntegerType.get_signless(32)
        n = c.dq_n
        lane0 = arith.cmpi(arith.CmpIPredicate.eq, arith.remui(self.wg_thread, const(32)),
                           const(0))  # fmt: skip
        for w in range(c.consumers):  # every staging starts free
            barrier.arrive(DQ_EMPTY + w, DQ_THREADS)
        blocks = scf.ForOp(arith.constant(index, 0), arith.index_cast(index, self.total),
                           arith.constant(index, 1))  # fmt: skip
        with InsertionPoint(blocks.body):
            head, q0 = self._block(arith.index_cast(i32, blocks.induction_variable))
            row = arith.addi(self.q_start, q0)
            turn = self._await_turn(head, q0, lane0) if c.deterministic else None
            for w in range(c.consumers):
                barrier.sync(DQ_FULL + w, DQ_THREADS)
                issue = scf.IfOp(lane0)
                with InsertionPoint(issue.then_block):
                    rows, col = (64 * w, 0) if c.dq_rows_split else (0, w * n)
                    epilogue.issue_tma_store(self.args["tmdQ"], self.smem(self.dq_at + w * c.dq_bytes),
                                             row=arith.addi(row, const(rows)), col=col, n=n,
                                             out_type="f32", batch=self.tb, between=[head],
                                             reduce=True)  # fmt: skip
                    if turn is None:
                        nvvm.cp_async_bulk_wait_group(0, read=True)
                    scf.YieldOp([])
                if turn is None:
                    nvvm.bar_warp_sync(const(-1))
                    barrier.arrive(DQ_EMPTY + w, DQ_THREADS)
            if turn is not None:
                self._pass_turn(turn, lane0)
                for w in range(c.consumers):
                    barrier.arrive(DQ_EMPTY + w, DQ_THREADS)
            scf.YieldOp([])

    def _await_turn(self, head, q0, lane0):
        """deterministic: the counter of this (batch entry, query head, query
        block), once lane 0 has seen it reach this CTA's key block (key
        blocks add into a dQ block in their order)."""
        from ....dialects import arith, nvvm, scf
        from ....ir import InsertionPoint, IntegerType
        from ..._ir import gep, spin_while

        const, args = self.const, self.args
        i32 = IntegerType.get_signless(32)
        entry = arith.addi(arith.muli(self.batch, args["heads"]), head)
        at = arith.addi(arith.muli(entry, args["q_blocks"]),
                        arith.divui(q0, const(self.c.block_m)))  # fmt: skip
        counter = gep(args["sem"], at, i32)
        wait = scf.IfOp(lane0)
        with InsertionPoint(wait.then_block):
            spin_while(counter, lambda v: arith.cmpi(arith.CmpIPredicate.ne, v, self.key_block))
            # Ours after the earlier blocks' reduce-adds (async proxy).
            nvvm.fence_proxy(nvvm.ProxyKind.async_global)
            scf.YieldOp([])
        nvvm.bar_warp_sync(const(-1))
        return counter

    def _pass_turn(self, counter, lane0):
        """deterministic: once this block's reduce-adds have completed (not
        only read shared memory), the next key block's turn."""
        from ....dialects import llvm, nvvm, scf
        from ....ir import InsertionPoint
        from ..._ir import atomic_increment

        done = scf.IfOp(lane0)
        with InsertionPoint(done.then_block):
            nvvm.cp_async_bulk_wait_group(0)
            nvvm.fence_proxy(nvvm.ProxyKind.async_global)
            # A release fence, then a relaxed add (LLVM's NVPTX backend drops
            # a release atomicrmw's ordering).
            llvm.fence(llvm.AtomicOrdering.release, syncscope="device")
            atomic_increment(counter)
            scf.YieldOp([])
        nvvm.bar_warp_sync(self.const(-1))

    def _loads(self):
        """Warp 0, lane 0: K and V once, then Q, dO, LSE and D per block."""
        from ....dialects import arith, scf
        from ....ir import IndexType, InsertionPoint, IntegerType
        from ... import pipeline

        c, const, args = self.c, self.const, self.args
        issuer = scf.IfOp(arith.cmpi(arith.CmpIPredicate.eq, self.wg_thread, const(0)))
        with InsertionPoint(issuer.then_block):
            pipeline.expect_tx(self.kvbar.at(0), 2 * c.kv_tiles * c.kv_tile_bytes)
            for w in range(c.kv_tiles):
                token = arith.addi(arith.addi(self.k_start, self.k0), const(64 * w))
                for tm, at in ((args["tmK"], self.k_at), (args["tmV"], self.v_at)):
                    self._load(tm, self.kv, at + w * c.kv_tile_bytes, token, self.kv_head_index,
                               self.kvbar.at(0))  # fmt: skip
            index, i32 = IndexType.get(), IntegerType.get_signless(32)
            loads = scf.ForOp(arith.constant(index, 0), arith.index_cast(index, self.total),
                              arith.constant(index, 1))  # fmt: skip
            with InsertionPoint(loads.body):
                it = arith.index_cast(i32, loads.induction_variable)
                head, q0 = self._block(it)
                stage, phase = self.ring.stage_and_phase(it)
                self.ring.producer_acquire(stage, phase)
                self.ring.producer_expect(stage, 2 * self.q.tile_bytes + 8 * c.block_m)
                at = arith.addi(const(self.ring_at), arith.muli(stage, const(c.stage_bytes)))
                token = arith.addi(self.q_start, q0)
                self._load(args["tmQ"], self.q, at, token, head, self.ring, stage)
                self._load(args["tmdO"], self.q, arith.addi(at, const(self.do_at)), token, head,
                           self.ring, stage)  # fmt: skip
                # LSE and D lie per (batch entry, head), varlen too: a
                # box's innermost coordinate must start 16-byte aligned.
                for tm, offset in ((args["tmLSE"], self.lse_at), (args["tmD"], self.dd_at)):
                    self.ring.load(tm, self.smem(arith.addi(at, const(offset))),
                                   (q0, head, self.batch), stage, bytes=4 * c.block_m)  # fmt: skip
                scf.YieldOp([])
            scf.YieldOp([])

    # ------------------------------------------------------------ consumer
    def consumer(self, index):
        from ....dialects import arith, nvvm, scf
        from ....dialects import nvwgmma as wg
        from ....ir import IndexType, InsertionPoint, IntegerType
        from ... import pipeline, smem

        c, const = self.c, self.const
        nvvm.setmaxregister(c.consumer_regs, nvvm.SetMaxRegisterAction.increase)
        self.index = index
        i32, index_t = IntegerType.get_signless(32), IndexType.get()
        # shared_keys: both consumers read the one K and V tile.
        kv_off = const(0) if c.shared_keys else arith.muli(index, const(c.kv_tile_bytes))
        self.k_desc = smem.tile_descriptor(self.smem(arith.addi(const(self.k_at), kv_off)),
                                           self.kv)  # fmt: skip
        self.v_desc = smem.tile_descriptor(self.smem(arith.addi(const(self.v_at), kv_off)),
                                           self.kv)  # fmt: skip
        self.releaser = arith.cmpi(arith.CmpIPredicate.eq, self.wg_thread, const(0))
        self.key0 = (self.k0 if c.shared_keys
                     else arith.addi(self.k0, arith.muli(index, const(KEYS_PER_CONSUMER))))  # fmt: skip
        # Where this consumer's half of dQ starts: in a K row (head dims),
        # the next swizzle atom (128) or 64 bytes into the atom (64); in dS
        # (rows), the next 64-query block. (A select, not index x bytes: the
        # protocol checker bounds it.)
        second = arith.cmpi(arith.CmpIPredicate.ne, index, const(0))
        if c.dq_rows_split:
            self.dq_a_offset, self.dq_b_offset = arith.select(second, const(8192), const(0)), None
        elif c.shared_keys:  # its own dSᵀ; its half of K's head dims (two atoms on)
            self.dq_a_offset = arith.select(second, const(c.ds_bytes), const(0))
            self.dq_b_offset = arith.select(second, const(16384), const(0))
        else:
            step = c.head_dim * 64 if c.head_dim == 128 else c.head_dim
            self.dq_a_offset, self.dq_b_offset = None, arith.select(second, const(step), const(0))
        # shared_keys: its half of Q's and dO's head dims as dK's and dV's B.
        self.qb_offset = arith.select(second, const(16384), const(0)) if c.shared_keys else None
        pipeline.wait_parity(self.kvbar.at(0), 0)
        dv = wg.zero_accumulator("f32", c.dkv_n)
        dk = wg.zero_accumulator("f32", c.dkv_n)
        loop = scf.ForOp(arith.constant(index_t, 0), arith.index_cast(index_t, self.total),
                         arith.constant(index_t, 1), [dv, dk])  # fmt: skip
        with InsertionPoint(loop.body):
            it = arith.index_cast(i32, loop.induction_variable)
            scf.YieldOp(self._iteration(it, *loop.inner_iter_args))
        dv, dk = loop.results
        self._finish(dv, dk)

    def _finish(self, dv, dk):
        from ... import barrier

        self._store(dv, dk)
        # The store warp's last hand-back (it arrives once more than blocks),
        # after the stores: they run while its last reduce-add reads.
        self._each_consumer(lambda w: barrier.sync(DQ_EMPTY + w, DQ_THREADS))

    def _each_consumer(self, emit):
        """emit(i) in consumer i's branch: its barriers' ids as immediates
        (ptxas reserves all 16 for an id in a register)."""
        from ....dialects import arith, scf
        from ....ir import InsertionPoint

        for i in range(self.c.consumers):
            mine = scf.IfOp(arith.cmpi(arith.CmpIPredicate.eq, self.index, self.const(i)))
            with InsertionPoint(mine.then_block):
                emit(i)
                scf.YieldOp([])

    def _stage_base(self, stage):
        from ....dialects import arith

        return arith.addi(
            self.const(self.ring_at), arith.muli(stage, self.const(self.c.stage_bytes))
        )

    def _ds_buffer(self, it):
        """The dSᵀ buffer of iteration `it` (two, alternating)."""
        from ....dialects import arith

        c, const = self.c, self.const
        return arith.addi(const(self.ds_at),
                          arith.muli(arith.andi(it, const(1)), const(c.consumers * c.ds_bytes)))  # fmt: skip

    def _dq(self, it):
        """After both consumers staged iteration `it`'s dSᵀ (a barrier),
        issue this consumer's half of dQ = dS K (not committed): dS read as
        an MN-major A, K's rows as an MN-major B."""
        from ....dialects import arith
        from ....dialects import nvwgmma as wg
        from ... import barrier, smem

        c, const = self.c, self.const
        if not c.shared_keys:  # shared_keys: a consumer reads only its own dSᵀ
            barrier.sync(CONSUMERS_BARRIER, 128 * c.consumers)
        dq = wg.zero_accumulator("f32", c.dq_n)
        buffer = self._ds_buffer(it)
        wg.fence()
        for step in range(c.block_n // 16):
            owner, within = divmod(step, 4)  # whose dSᵀ and K rows hold these 16 keys
            a_at = arith.addi(buffer, const(owner * c.ds_bytes + within * 2048))
            b_at = const(self.k_at + owner * c.kv_tile_bytes + within * 2048)
            if self.dq_a_offset is not None:
                a_at = arith.addi(a_at, self.dq_a_offset)
            if self.dq_b_offset is not None:
                b_at = arith.addi(b_at, self.dq_b_offset)
            dq = wg.mma_async(dq, smem.tile_descriptor(self.smem(a_at), self.ds_a),
                              smem.tile_descriptor(self.smem(b_at), self.k_b),
                              shape=(64, c.dq_n, 16), a_type=c.dtype, d_type="f32",
                              transpose_a=True, transpose_b=True,
                              scale_d=step > 0)  # fmt: skip
        return dq

    def _iteration(self, it, dv, dk):
        """One query block: (dV, dK) after it."""
        from ....dialects import arith, nvvm, scf
        from ....dialects import nvwgmma as wg
        from ....ir import InsertionPoint
        from ... import epilogue, fragment, smem

        c, const = self.c, self.const
        head, q0 = self._block(it)
        stage, phase = self.ring.stage_and_phase(it)
        self.ring.consumer_wait(stage, phase)
        at = self._stage_base(stage)
        q_desc = smem.tile_descriptor(self.smem(at), self.q)
        do_desc = smem.tile_descriptor(self.smem(arith.addi(at, const(self.do_at))), self.q)
        s = wg.zero_accumulator("f32", c.block_m)
        dp = wg.zero_accumulator("f32", c.block_m)
        wg.fence()
        s = self._keys_by_queries(s, self.k_desc, q_desc)
        wg.commit_group()
        dp = self._keys_by_queries(dp, self.v_desc, do_desc)
        wg.commit_group()
        (s,) = wg.wait_group(1, s).results
        at_ = fragment.Coordinates(c.block_m, row=self.key0, col=q0, thread=self.wg_thread)
        p = self._probabilities(fragment.unpack(s), at_, at, q0)
        (dp,) = wg.wait_group(0, dp).results
        dd = self._per_query(at, self.dd_at)
        ds = [
            _mul(pv, _sub(x, dd[at_.offsets(e)[1] // 8 * 2 + e % 2]))
            for e, (pv, x) in enumerate(zip(p, fragment.unpack(dp)))
        ]
        # dSᵀ to shared memory for dQ, made visible to the async proxy.
        # (Before dV and dK: stmatrix reads the registers their A fragments
        # are, which must not change -- nor be read -- while they run.)
        epilogue.stage_accumulator(fragment.pack(ds), self.smem(arith.addi(
            self._ds_buffer(it), arith.muli(self.index, const(c.ds_bytes)))), d_type="f32",
            n=c.block_m, out_type=c.dtype, thread=self.wg_thread)  # fmt: skip
        nvvm.fence_proxy(nvvm.ProxyKind.async_shared, space=nvvm.SharedSpace.shared_cta)
        p_a = fragment.to_a_fragments(p, c.dtype)
        ds_a = fragment.to_a_fragments(ds, c.dtype)
        q_at, do_at = at, arith.addi(at, const(self.do_at))
        if self.qb_offset is not None:
            q_at, do_at = arith.addi(q_at, self.qb_offset), arith.addi(do_at, self.qb_offset)
        q_b = smem.tile_descriptor(self.smem(q_at), self.q_b)
        do_b = smem.tile_descriptor(self.smem(do_at), self.q_b)

        def dv_dk(dv, dk):
            for step, frag in enumerate(p_a):
                dv = wg.mma_async(dv, frag, smem.step_descriptor(do_b, self.q_b, k_step=step),
                                  shape=(64, c.dkv_n, 16), a_type=c.dtype, d_type="f32",
                                  transpose_b=True)  # fmt: skip
            for step, frag in enumerate(ds_a):
                dk = wg.mma_async(dk, frag, smem.step_descriptor(q_b, self.q_b, k_step=step),
                                  shape=(64, c.dkv_n, 16), a_type=c.dtype, d_type="f32",
                                  transpose_b=True)  # fmt: skip
            wg.commit_group()
            return dv, dk

        def release():
            rel = scf.IfOp(self.releaser)
            with InsertionPoint(rel.then_block):
                self.ring.consumer_release(stage)
                scf.YieldOp([])

        def send(dq):
            dq = fragment.pack(fragment.scale_rows(fragment.unpack(dq), [self.args["scale"]] * 2))
            self._reduce_dq(dq)

        if c.shared_keys:
            # dV and dK first, done, then dQ: its 64 registers and the P and
            # dS fragments would not fit beside dV and dK at once.
            wg.fence()
            dv, dk = dv_dk(dv, dk)
            dv, dk, *_ = wg.wait_group(0, dv, dk, *p_a, *ds_a).results
            release()
            dq = self._dq(it)
            wg.commit_group()
            (dq,) = wg.wait_group(0, dq).results
            send(dq)
            return [dv, dk]
        # dQ first (after both consumers' dSᵀ are written), then dV and dK:
        # dQ's scaling and staging run while dV and dK do.
        dq = self._dq(it)
        wg.commit_group()
        dv, dk = dv_dk(dv, dk)
        (dq,) = wg.wait_group(1, dq).results
        send(dq)
        # dV and dK done: Q and dO are read.
        dv, dk, *_ = wg.wait_group(0, dv, dk, *p_a, *ds_a).results
        release()
        return [dv, dk]

    def _keys_by_queries(self, acc, kv_desc, q_desc):
        """Issue acc = (this consumer's K or V rows) x (Q or dO)ᵀ, keys on
        M, the head dim reduced (not committed)."""
        from ....dialects import nvwgmma as wg
        from ... import smem

        c = self.c
        for step in range(self.kv.k_steps):
            acc = wg.mma_async(acc, smem.step_descriptor(kv_desc, self.kv, k_step=step),
                               smem.step_descriptor(q_desc, self.q, k_step=step),
                               shape=(64, c.block_m, 16), a_type=c.dtype, d_type="f32",
                               scale_d=step > 0)  # fmt: skip
        return acc

    def _per_query(self, stage_at, offset):
        """The f32 values of this thread's query columns from the stage's
        LSE or D block: [pair j's first, second] for j = 0 .. block_m/8 - 1
        (column 8j + 2q + {0, 1})."""
        from ....dialects import arith, llvm
        from ....ir import F32Type, VectorType
        from ..._ir import gep

        f32 = F32Type.get()
        pair = VectorType.get([2], f32)
        q = arith.andi(self.wg_thread, self.const(3))
        base = self.smem(arith.addi(arith.addi(stage_at, self.const(offset)),
                                    arith.muli(q, self.const(8))))  # fmt: skip
        out = []
        for j in range(self.c.block_m // 8):  # one 8-byte load per pair
            two = llvm.load(pair, gep(base, self.const(8 * j), f32), alignment=8)
            out += [llvm.extractelement(two, self.const(lane)) for lane in (0, 1)]
        return out

    def _probabilities(self, values, at, stage_at, q0):
        """Pᵀ: exp2(s scale log2 e - LSE log2 e) of the scores, masked to 0
        where a key is past the query's diagonal (causal) or past the
        sequence (keys; varlen also queries)."""
        from ....dialects import arith, llvm, scf
        from ....ir import InsertionPoint
        from ... import fastmath

        c, const, args = self.c, self.const, self.args
        lse = self._per_query(stage_at, self.lse_at)
        needs = arith.cmpi(arith.CmpIPredicate.sgt, arith.addi(self.k0, const(c.block_n)),
                           self.sk)  # fmt: skip
        if c.causal:  # the block's last key lies past its first query's diagonal
            needs = arith.ori(needs, arith.cmpi(
                arith.CmpIPredicate.sgt, arith.addi(self.k0, const(c.block_n - 1)),
                arith.addi(q0, self.diag)))  # fmt: skip
        if c.varlen:
            needs = arith.ori(needs, arith.cmpi(
                arith.CmpIPredicate.sgt, arith.addi(q0, const(c.block_m)), self.sq))  # fmt: skip
        branch = scf.IfOp(needs, [v.type for v in values], has_else=True)
        with InsertionPoint(branch.then_block):
            scf.YieldOp(self._mask(values, at))
        with InsertionPoint(branch.else_block):
            scf.YieldOp(values)
        values = list(branch.results)
        scale = args["scale_log2"]
        return [
            fastmath.exp2(fastmath.fma(v, scale, llvm.fneg(lse[at.offsets(e)[1] // 8 * 2 + e % 2])))
            for e, v in enumerate(values)
        ]

    def _mask(self, values, at):
        """-inf where key (row) > query (column) + diag (causal), key >= Sk,
        or (varlen) query >= Sq."""
        from ....dialects import llvm
        from ... import fragment
        from ..._ir import i32_constant

        c = self.c
        none = llvm.IntegerOverflowFlags.none
        key_room = llvm.sub(self.sk, at.row_base, none)  # keep: dr < key_room
        query_room = llvm.sub(self.sq, at.col_base, none)
        # causal keep: row_base + dr <= col_base + dc + diag  <=>  dr - dc <= slack
        slack = llvm.sub(llvm.add(at.col_base, self.diag, none), at.row_base, none)

        def keep(e):
            dr, dc = at.offsets(e)
            k = llvm.icmp(llvm.ICmpPredicate.sgt, key_room, i32_constant(dr))
            if c.causal:
                k = llvm.and_(k, llvm.icmp(llvm.ICmpPredicate.sge, slack, i32_constant(dr - dc)))
            if c.varlen:
                k = llvm.and_(k, llvm.icmp(llvm.ICmpPredicate.sgt, query_room, i32_constant(dc)))
            return k

        return fragment.mask(values, keep)

    def _reduce_dq(self, dq):
        """This consumer's 64 x dq_n block of dQ staged (f32, 128-byte
        swizzled) once the store warp handed the staging back, and handed
        to it (it adds the block into dQacc by TMA)."""
        from ....dialects import nvvm
        from ... import barrier, epilogue

        c = self.c

        def send(w):
            barrier.sync(DQ_EMPTY + w, DQ_THREADS)
            epilogue.stage_accumulator(dq, self.smem(self.dq_at + w * c.dq_bytes), d_type="f32",
                                       n=c.dq_n, out_type="f32",
                                       thread=self.wg_thread)  # fmt: skip
            nvvm.fence_proxy(nvvm.ProxyKind.async_shared, space=nvvm.SharedSpace.shared_cta)
            barrier.arrive(DQ_FULL + w, DQ_THREADS)

        self._each_consumer(send)

    def _store(self, dv, dk):
        """dK (times the softmax scale) and dV of this consumer's keys,
        staged in the ring (free once every consumer's last block is done)
        and copied out with 16-byte stores: scattered 4-byte stores from
        registers took 2.4 blocks' time per CTA (clock64 stamps, H100)."""
        from ....dialects import arith
        from ... import barrier, epilogue, fragment
        from ..._ir import element_type, gep

        c, args, const = self.c, self.args, self.const
        dk = fragment.pack(fragment.scale_rows(fragment.unpack(dk), [args["scale"]] * 2))
        offset = arith.addi(
            arith.addi(arith.muli(wide(self.batch), args["kv_batch"]),
                       arith.muli(wide(self.k_start), wide(args["kv_row"]))),
            wide(arith.muli(self.kv_head_index, args["kv_head"])),
        )  # fmt: skip
        # shared_keys: this consumer's half of the head dims
        col = arith.muli(self.index, const(c.dkv_n)) if c.shared_keys else 0
        tile = epilogue.staging_bytes(c.dkv_n, c.dtype)  # c.dkv_staging_bytes in all
        mine = arith.addi(const(self.ring_at), arith.muli(self.index, const(2 * tile)))
        barrier.sync(CONSUMERS_BARRIER, 128 * c.consumers)  # every read of the ring done
        staged = []
        for k, (acc, name) in enumerate(((dv, "dV"), (dk, "dK"))):
            at = self.smem(arith.addi(mine, const(k * tile)))
            epilogue.stage_accumulator(acc, at, d_type="f32", n=c.dkv_n, out_type=c.dtype,
                                       thread=self.wg_thread)  # fmt: skip
            staged.append((at, name))
        barrier.sync(CONSUMERS_BARRIER, 128 * c.consumers)
        for at, name in staged:
            base = gep(args[name], offset, element_type(c.dtype))
            epilogue.copy_staged(at, base, args["kv_row"], n=c.dkv_n, out_type=c.dtype,
                                 row=self.key0, col=col, rows=self.sk,
                                 thread=self.wg_thread)  # fmt: skip


def _mul(a, b):
    from ....dialects import llvm

    return llvm.fmul(a, b)


def _sub(a, b):
    from ....dialects import llvm

    return llvm.fsub(a, b)


def build_attention_backward(config: BackwardConfig | None = None):
    """(module, meta) for `config`: the kernel `attention_backward` with
    the parameters of SIGNATURE; meta: block, dynamic shared memory, the
    TMA boxes of Q/dO, K/V and LSE/D."""
    from ....ir import InsertionPoint, Location
    from ..._ir import kernel_shell

    c = BackwardConfig() if config is None else config
    check_backward_config(c)
    kernel = _Kernel(c)
    # The share stated (state_entry): at head dim 64 ptxas could not tell
    # it and ignored setmaxnreg (C7508), spilling under 168 registers.
    module, entry, args = kernel_shell("attention_backward", SIGNATURE, c.threads,
                                       setmaxnreg=c.consumer_regs, state_entry=True)  # fmt: skip
    with Location.unknown():
        with InsertionPoint(entry.operations[0]):
            kernel.build(args)
    module.operation.verify()
    dynamic_smem = kernel.barriers_at + c.barrier_bytes + 1024 - 16
    assert dynamic_smem == c.shared_memory_bytes, (dynamic_smem, c.shared_memory_bytes)

    def box(geometry):
        b = geometry.tma()
        return {"box": [b.box[0], 1, b.box[1], 1], "swizzle": b.swizzle, "data_type": b.data_type}

    meta = {
        "kernel": "attention_backward",
        "name": c.name,
        "config": asdict(c),
        "block": [c.threads, 1, 1],
        "grid": f"(ceil(max key length / {c.block_n}), K/V heads, batch)",
        "block_m": c.block_m,
        "block_n": c.block_n,
        "dynamic_smem": dynamic_smem,
        "boxes": {
            "Q": box(kernel.q),
            "K": box(kernel.kv),
            "row": {"box": [c.block_m, 1, 1], "swizzle": "none", "data_type": "FLOAT32"},
            "dQ": {"box": [32, 1, 64, 1], "swizzle": "128B", "data_type": "FLOAT32"},
        },
        "signature": [list(p) for p in SIGNATURE],
    }
    return module, meta
