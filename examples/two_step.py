"""The command line of a script that runs in two places: `generate DIR`
where nvwgmma is built (the PTX its kernels need), `run DIR [--out OUT]` on
the GPU machine (the pure-Python runtime and that PTX)."""

from __future__ import annotations

import argparse
import os


def main(doc: str, generate, run, argv=None) -> int:
    """Parse `argv` and call generate(DIR) or run(DIR, OUT); the exit status."""
    parser = argparse.ArgumentParser(description=doc.split("\n")[0])
    parser.add_argument("mode", choices=["generate", "run"])
    parser.add_argument("dir")
    parser.add_argument("--out", default=os.environ.get("OUT", "."))
    args = parser.parse_args(argv)
    if args.mode == "generate":
        generate(args.dir)
        return 0
    return run(args.dir, args.out)
