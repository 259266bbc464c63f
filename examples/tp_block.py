"""A tensor-parallel transformer block (Llama-3-8B's shapes) over NCCL, one
process per GPU, on nvwgmma's kernels and on torch's: both against a
single-GPU float32 reference, then timed in paired rounds.

    # where nvwgmma is built: the PTX of the kernels each rank launches
    python examples/tp_block.py generate .device/tp
    # on the GPUs (torch with NCCL; nvwgmma's pure-Python runtime is enough)
    torchrun --nproc_per_node=2 examples/tp_block.py run .device/tp [--out DIR]

Each rank holds its share of the heads and of the MLP's columns (QKV, gate
and up split by output rows; O and down by input columns, each followed by
an all-reduce). Rank 0 prints and writes tp-results.json.
"""

from __future__ import annotations

import datetime
import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from block import Block, Shape, problems, weights  # noqa: E402

SHAPE = Shape(width=4096, heads=32, kv_heads=8, head_dim=128, ffn=14336)
CASES = [(1, 2048), (4, 512), (8, 128)]  # (batch, seq)
PARTS = 2


def generate(out_dir: str, parts: int = PARTS) -> None:
    from nvwgmma.kernel.attention.config import default_config
    from nvwgmma.kernel.attention.launch import write_kernel as write_attention
    from nvwgmma.kernel.gemm.launch import Problem, fusion_chain, problem_config, write_kernel

    configs = {}
    for batch, seq in CASES:
        for m, n, k, activation in problems(SHAPE, batch * seq, parts):
            chain = fusion_chain(activation=activation)
            config = problem_config(Problem.of(m, n, k, 1, "bf16", "bf16", "K", "K", chain))
            configs[config] = write_kernel
        configs[default_config(SHAPE.head_dim, causal=True, seq=seq)] = write_attention
    for config, write in configs.items():
        print(write(out_dir, config))


def _rel(x, ref) -> float:
    import torch

    return float(torch.linalg.norm(x.double() - ref.double()) / torch.linalg.norm(ref.double()))


def _timed_rounds(blocks: dict, x, rounds=7, calls=5):
    """Median ms per call of each block, rounds alternating the blocks,
    every rank in step (a barrier before each window)."""
    import torch
    import torch.distributed as dist

    times = {name: [] for name in blocks}
    for _ in range(rounds):
        for name, block in blocks.items():
            block(x)
            dist.barrier()
            torch.cuda.synchronize()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(calls):
                block(x)
            end.record()
            end.synchronize()
            times[name].append(start.elapsed_time(end) / calls)
    return {name: statistics.median(t) for name, t in times.items()}


def run(ptx_dir: str, out_dir: str) -> int:
    sys.path.insert(0, os.path.join(HERE, "..", "python"))
    os.environ.setdefault("NVWGMMA_PTX_DIR", ptx_dir)
    import torch
    import torch.distributed as dist

    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", device_id=torch.device(f"cuda:{rank}"))
    device = f"cuda:{rank}"
    rows, failed = [], 0
    with torch.no_grad():
        for batch, seq in CASES:
            g = torch.Generator(device="cpu").manual_seed(batch * 100003 + seq)
            x = torch.randn(batch, seq, SHAPE.width, generator=g).to(torch.bfloat16).to(device)
            local = weights(SHAPE, device, rank=rank, parts=world)
            blocks = {kernels: Block(SHAPE, local, kernels=kernels, group=dist.group.WORLD,
                                     parts=world) for kernels in ("nvwgmma", "torch")}  # fmt: skip
            outputs = {name: block(x) for name, block in blocks.items()}
            times = _timed_rounds(blocks, x)
            if rank == 0:
                whole = [w.float() for w in weights(SHAPE, device)]
                reference = Block(SHAPE, whole, kernels="torch")(x.float())
                errors = {name: _rel(y.float(), reference) for name, y in outputs.items()}
                ok = errors["nvwgmma"] < 2e-2 and errors["nvwgmma"] <= 1.5 * errors["torch"]
                failed += not ok
                row = {"batch": batch, "seq": seq, "gpus": world, "rel_err": errors,
                       "ms": times, "torch_over_nvwgmma": times["torch"] / times["nvwgmma"],
                       "ok": ok}  # fmt: skip
                rows.append(row)
                print(f"{'ok ' if ok else 'BAD'} {row}", flush=True)
    if rank == 0:
        info = {"gpus": [torch.cuda.get_device_name(i) for i in range(world)],
                "torch": torch.__version__, "nccl": ".".join(map(str, torch.cuda.nccl.version())),
                "shape": SHAPE.__dict__,
                "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}  # fmt: skip
        os.makedirs(out_dir, exist_ok=True)
        with open(os.path.join(out_dir, "tp-results.json"), "w") as f:
            json.dump({"info": info, "rows": rows}, f, indent=1)
        print(f"{len(rows) - failed} passed, {failed} failed")
    dist.destroy_process_group()
    return 1 if failed else 0


def main(argv=None) -> int:
    from two_step import main as two_step

    return two_step(__doc__, generate, run, argv)


if __name__ == "__main__":
    sys.exit(main())
