"""python -m nvwgmma.kernel.attention --precompile DIR: write the PTX of
every shipped configuration (head dims 64/128/256, bf16/f16/e4m3, causal
or not, dense or varlen) and of fp8's Vᵀ copies, for machines without a
compiler (NVWGMMA_PTX_DIR)."""

import argparse
import sys

from .launch import precompile


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m nvwgmma.kernel.attention")
    parser.add_argument("--precompile", metavar="DIR", required=True)
    args = parser.parse_args(argv)
    for path in precompile(args.precompile):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
