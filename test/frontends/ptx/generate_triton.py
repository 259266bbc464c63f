"""Triton's PTX (sm_90a, no GPU needed) of the front-end corpus's Triton and
Gluon kernels (test/frontends/triton/generate.py), for the PTX checker's
corpus. Run with a Python that has Triton, not in CI:
    python test/frontends/ptx/generate_triton.py test/frontends/ptx/triton-3.9
"""

from __future__ import annotations

import gzip
import os
import pathlib
import re
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "triton"))

import generate  # noqa: E402  (the kernels and their signatures)
import triton  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402


def main(out: pathlib.Path) -> None:
    os.environ["TRITON_ALWAYS_COMPILE"] = "1"
    (out / "kernels").mkdir(parents=True, exist_ok=True)
    triton.set_allocator(lambda size, alignment, stream: None)
    for name, source, options in generate.sources():
        try:
            compiled = triton.compile(
                source, target=GPUTarget("cuda", 90, 32), options=options or {}
            )
        except Exception as e:  # a release without the feature
            print(f"skipped {name}: {type(e).__name__}: {str(e).splitlines()[0][:120]}")
            continue
        # .file names the build machine's paths: keep the base name only
        ptx = re.sub(r'(\.file\s+\d+\s+")[^"]*/([^"/]+")', r"\1\2", compiled.asm["ptx"])
        header = f"// Triton {triton.__version__}: {name} for sm_90a; generate_triton.py.\n"
        data = (header + ptx).encode()
        (out / "kernels" / f"{name}.ptx.gz").write_bytes(gzip.compress(data, mtime=0))
        print(name, len(ptx))


if __name__ == "__main__":
    main(pathlib.Path(sys.argv[1]))
