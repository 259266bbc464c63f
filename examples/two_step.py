"""The command line of a script that runs in two places: `generate DIR`
where nvwgmma is built (the PTX its kernels need), `run DIR [--out OUT]` on
the GPU machine (the pure-Python runtime and that PTX)."""

from __future__ import annotations

import argparse
import os


def main(doc: str, generate, run, argv=None, flags=()) -> int:
    """Parse `argv` and call generate(DIR) or run(DIR, OUT); the exit status.
    `flags`: (name, help) of on/off options for run, passed to it by
    keyword (--rule-only: rule_only=True)."""
    parser = argparse.ArgumentParser(description=doc.split("\n")[0])
    parser.add_argument("mode", choices=["generate", "run"])
    parser.add_argument("dir")
    parser.add_argument("--out", default=os.environ.get("OUT", "."))
    for name, text in flags:
        parser.add_argument(f"--{name}", action="store_true", help=text)
    args = parser.parse_args(argv)
    if args.mode == "generate":
        generate(args.dir)
        return 0
    options = {name.replace("-", "_"): getattr(args, name.replace("-", "_")) for name, _ in flags}
    return run(args.dir, args.out, **options)
