"""CUDA C++ kernels in the style of the C++ wgmma libraries (inline-asm
wgmma, mbarrier try-wait loops, TMA, warp specialisation, setmaxnreg),
written for the PTX checker's corpus, and their PTX from nvcc:
    python test/frontends/ptx/generate_cuda.py test/frontends/ptx/cuda
writes cuda/kernels/*.ptx.gz (nvcc -arch=sm_90a -ptx; `--sources DIR` also
keeps the .cu files).
Apache-2.0 WITH LLVM-exception, as the project. The kernels are meant to
compile and to keep the protocol, not to be fast; the wgmma helpers spell
their operand lists out, as those libraries do.
"""

from __future__ import annotations

import gzip
import pathlib
import subprocess
import sys
import tempfile

COMMON = r"""
#include <cuda.h>
#include <cstdint>

__device__ inline uint32_t smem_u32(const void *p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ inline void mbar_init(uint64_t *bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_u32(bar)), "r"(count));
}
__device__ inline void mbar_wait(uint64_t *bar, uint32_t phase) {
  asm volatile(
      "{\n"
      ".reg .pred P1;\n"
      "LAB_WAIT:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 P1, [%0], %1;\n"
      "@P1 bra DONE;\n"
      "bra LAB_WAIT;\n"
      "DONE:\n"
      "}\n" ::"r"(smem_u32(bar)), "r"(phase) : "memory");
}
__device__ inline void mbar_expect_tx(uint64_t *bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
               ::"r"(smem_u32(bar)), "r"(bytes) : "memory");
}
__device__ inline void mbar_arrive(uint64_t *bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_u32(bar)) : "memory");
}
__device__ inline void tma_load(void *dst, const CUtensorMap *map, uint64_t *bar, int x, int y) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%3, %4}], [%2];"
      ::"r"(smem_u32(dst)), "l"(map), "r"(smem_u32(bar)), "r"(x), "r"(y) : "memory");
}
__device__ inline void tma_store(const CUtensorMap *map, void *src, int x, int y) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];"
               ::"l"(map), "r"(smem_u32(src)), "r"(x), "r"(y) : "memory");
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
  asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
}
__device__ inline uint64_t desc(const void *p) {
  uint64_t a = smem_u32(p);
  return ((a & 0x3FFFF) >> 4) | (1ull << 16) | (64ull << 32) | (1ull << 62);
}
__device__ inline void wg_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ inline void wg_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
template <int N> __device__ inline void wg_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}
__device__ inline void proxy_fence() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }
"""


def wgmma_helper(name: str, a_regs: bool) -> str:
    """An m64n64k16 f32 += bf16 helper with its 32 accumulators spelled out."""
    d = ", ".join(f"%{i}" for i in range(32))
    outs = ", ".join(f'"+f"(d[{i}])' for i in range(32))
    if a_regs:
        a = "{%32, %33, %34, %35}"
        ins = '"r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b)'
        b, imms, sig = "%36", "p, 1, 1, 1", "uint32_t (&a)[4], uint64_t b"
        scale = "%37"
    else:
        a, b, imms, sig = "%32", "%33", "p, 1, 1, 0, 0", "uint64_t a, uint64_t b"
        ins = '"l"(a), "l"(b)'
        scale = "%34"
    return f"""
__device__ inline void {name}(float (&d)[32], {sig}, int scale_d) {{
  asm volatile(
      "{{\\n.reg .pred p;\\nsetp.ne.b32 p, {scale}, 0;\\n"
      "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {{{d}}}, {a}, {b}, {imms};\\n}}\\n"
      : {outs}
      : {ins}, "r"(scale_d));
}}
"""


WS_GEMM = r"""
#define STAGES 4
// A stage: 128 x 64 bf16 of A (two consumer warpgroups' 64 rows each), then
// 64 x 64 bf16 of B. A producer warpgroup (one elected thread) fills the
// ring; each consumer waits on full, keeps one group in flight and releases
// the stage the previous group read.
extern "C" __global__ void __launch_bounds__(384, 1)
ws_gemm(const __grid_constant__ CUtensorMap a_map, const __grid_constant__ CUtensorMap b_map,
        float *c, int k_tiles, int ldc) {
  extern __shared__ __align__(1024) uint8_t smem[];
  constexpr int A_BYTES = 128 * 64 * 2, STAGE = A_BYTES + 64 * 64 * 2;
  uint64_t *full = reinterpret_cast<uint64_t *>(smem + STAGES * STAGE);
  uint64_t *empty = full + STAGES;
  int wg = threadIdx.x / 128;
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      mbar_init(&full[s], 1);
      mbar_init(&empty[s], 2);
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  if (wg == 0) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
    if (threadIdx.x == 0)
      for (int k = 0; k < k_tiles; ++k) {
        int s = k % STAGES;
        if (k >= STAGES)
          mbar_wait(&empty[s], ((k / STAGES) - 1) & 1);
        mbar_expect_tx(&full[s], STAGE);
        tma_load(smem + s * STAGE, &a_map, &full[s], k * 64, blockIdx.x * 128);
        tma_load(smem + s * STAGE + A_BYTES, &b_map, &full[s], k * 64, blockIdx.y * 64);
      }
  } else {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
    float d[32];
    for (int i = 0; i < 32; ++i)
      d[i] = 0.f;
    for (int k = 0; k < k_tiles; ++k) {
      int s = k % STAGES;
      mbar_wait(&full[s], (k / STAGES) & 1);
      wg_fence();
      uint8_t *a = smem + s * STAGE + (wg - 1) * 64 * 128;
      uint8_t *b = smem + s * STAGE + A_BYTES;
      for (int kk = 0; kk < 4; ++kk)
        wgmma_desc(d, desc(a + kk * 32), desc(b + kk * 32), 1);
      wg_commit();
      wg_wait<1>();
      if (k > 0 && threadIdx.x % 128 == 0)
        mbar_arrive(&empty[(k - 1) % STAGES]);
    }
    wg_wait<0>();
    int row = blockIdx.x * 128 + (wg - 1) * 64 + (threadIdx.x % 128) / 4;
    for (int i = 0; i < 32; ++i)
      c[row * ldc + blockIdx.y * 64 + i] = d[i];
  }
}
"""

ATTENTION = r"""
// One consumer warpgroup: S = Q K^T from shared memory, an online softmax in
// registers, P packed into bf16 A fragments, O += P V with A from registers.
// Q is one TMA fill; K and V share one 2-stage ring.
extern "C" __global__ void __launch_bounds__(128, 1)
attention_fwd(const __grid_constant__ CUtensorMap q_map, const __grid_constant__ CUtensorMap k_map,
              const __grid_constant__ CUtensorMap v_map, float *o, int kv_tiles, float scale) {
  extern __shared__ __align__(1024) uint8_t smem[];
  constexpr int TILE = 64 * 64 * 2;
  uint8_t *q = smem, *kv = smem + TILE;  // kv: stage s holds K then V
  uint64_t *bars = reinterpret_cast<uint64_t *>(smem + 5 * TILE);  // q, full[2]
  if (threadIdx.x == 0) {
    for (int i = 0; i < 3; ++i)
      mbar_init(&bars[i], 1);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    mbar_expect_tx(&bars[0], TILE);
    tma_load(q, &q_map, &bars[0], 0, blockIdx.x * 64);
    mbar_expect_tx(&bars[1], 2 * TILE);
    tma_load(kv, &k_map, &bars[1], 0, 0);
    tma_load(kv + TILE, &v_map, &bars[1], 0, 0);
  }
  __syncthreads();
  float acc[32], m = -1e30f, l = 0.f;
  for (int i = 0; i < 32; ++i)
    acc[i] = 0.f;
  mbar_wait(&bars[0], 0);
  for (int j = 0; j < kv_tiles; ++j) {
    int s = j % 2;
    if (threadIdx.x == 0 && j + 1 < kv_tiles) {
      mbar_expect_tx(&bars[1 + (j + 1) % 2], 2 * TILE);
      tma_load(kv + ((j + 1) % 2) * 2 * TILE, &k_map, &bars[1 + (j + 1) % 2], 0, (j + 1) * 64);
      tma_load(kv + ((j + 1) % 2) * 2 * TILE + TILE, &v_map, &bars[1 + (j + 1) % 2], 0,
               (j + 1) * 64);
    }
    mbar_wait(&bars[1 + s], (j / 2) & 1);
    float sc[32];
    wg_fence();
    for (int kk = 0; kk < 4; ++kk)
      wgmma_desc(sc, desc(q + kk * 32), desc(kv + s * 2 * TILE + kk * 32), kk > 0);
    wg_commit();
    wg_wait<0>();
    float mx = m;
    for (int i = 0; i < 32; ++i)
      mx = fmaxf(mx, sc[i] * scale);
    float corr = exp2f(m - mx);
    m = mx;
    l *= corr;
    uint32_t p[4][4];
    for (int i = 0; i < 32; i += 2) {
      float e0 = exp2f(sc[i] * scale - m), e1 = exp2f(sc[i + 1] * scale - m);
      l += e0 + e1;
      asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(p[i / 8][(i % 8) / 2]) : "f"(e1), "f"(e0));
    }
    for (int i = 0; i < 32; ++i)
      acc[i] *= corr;
    wg_fence();
    for (int kk = 0; kk < 4; ++kk)
      wgmma_regs(acc, p[kk], desc(kv + s * 2 * TILE + TILE + kk * 64 * 32), 1);
    wg_commit();
    wg_wait<0>();
  }
  int row = blockIdx.x * 64 + threadIdx.x / 4;
  for (int i = 0; i < 32; ++i)
    o[row * 64 + i] = acc[i] / l;
}
"""

STORE_EPILOGUE = r"""
// Ampere-style operand loads (cp.async, the generic proxy) feeding wgmma,
// and the tile stored through shared memory by a TMA store: both need
// fence.proxy.async between the generic writes and the async-proxy reads.
extern "C" __global__ void __launch_bounds__(128, 1)
cp_async_gemm(const __nv_bfloat16_raw *a, const __nv_bfloat16_raw *b,
              const __grid_constant__ CUtensorMap c_map, int k_tiles, int lda) {
  extern __shared__ __align__(1024) uint8_t smem[];
  uint8_t *sa = smem, *sb = smem + 64 * 64 * 2;
  float d[32];
  for (int i = 0; i < 32; ++i)
    d[i] = 0.f;
  for (int k = 0; k < k_tiles; ++k) {
    for (int i = threadIdx.x; i < 64 * 64 / 8; i += 128) {
      const void *ga = a + (blockIdx.x * 64 + i / 8) * lda + k * 64 + (i % 8) * 8;
      const void *gb = b + (blockIdx.y * 64 + i / 8) * lda + k * 64 + (i % 8) * 8;
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(smem_u32(sa + i * 16)), "l"(ga));
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(smem_u32(sb + i * 16)), "l"(gb));
    }
    asm volatile("cp.async.wait_all;" ::: "memory");
    proxy_fence();
    __syncthreads();
    wg_fence();
    for (int kk = 0; kk < 4; ++kk)
      wgmma_desc(d, desc(sa + kk * 32), desc(sb + kk * 32), 1);
    wg_commit();
    wg_wait<0>();
    __syncthreads();
  }
  float *tile = reinterpret_cast<float *>(smem);
  for (int i = 0; i < 32; ++i)
    tile[(threadIdx.x / 4) * 64 + (threadIdx.x % 4) * 2 + i * 8 % 64] = d[i];
  proxy_fence();
  __syncthreads();
  if (threadIdx.x == 0)
    tma_store(&c_map, tile, blockIdx.y * 64, blockIdx.x * 64);
}
"""

KERNELS = {
    "ws_gemm": WS_GEMM,
    "attention_fwd": ATTENTION,
    "cp_async_gemm": "#include <cuda_bf16.h>\n" + STORE_EPILOGUE,
}


def source(body: str) -> str:
    helpers = wgmma_helper("wgmma_desc", False) + wgmma_helper("wgmma_regs", True)
    return COMMON + helpers + body


def main(out: pathlib.Path, sources: pathlib.Path | None = None) -> None:
    (out / "kernels").mkdir(parents=True, exist_ok=True)
    for name, body in KERNELS.items():
        with tempfile.TemporaryDirectory() as tmp:
            cu = (sources or pathlib.Path(tmp)) / f"{name}.cu"
            cu.parent.mkdir(parents=True, exist_ok=True)
            cu.write_text(source(body))
            ptx = pathlib.Path(tmp) / f"{name}.ptx"
            subprocess.run(
                ["nvcc", "-arch=sm_90a", "-O3", "-ptx", str(cu), "-o", str(ptx)], check=True
            )
            header = f"// nvcc: {name} ({cu.name}) for sm_90a; generate_cuda.py.\n"
            data = (header + ptx.read_text()).encode()
        (out / "kernels" / f"{name}.ptx.gz").write_bytes(gzip.compress(data, mtime=0))
        print(name, len(data))


if __name__ == "__main__":
    args = sys.argv[1:]
    keep = pathlib.Path(args[args.index("--sources") + 1]) if "--sources" in args else None
    main(pathlib.Path(args[0]), keep)
