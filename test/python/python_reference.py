"""The reference section of docs/python.md: every public name of every
public module, with its signature, generated from the package itself.

    python test/python/python_reference.py   # prints the section
"""

import importlib
import inspect

MODULES = [
    ("nvwgmma.dialects.nvwgmma", "nvwgmma.dialects._nvwgmma_builders"),
    ("nvwgmma.compile", None),
    ("nvwgmma.ptx_check", None),
    ("nvwgmma.lattice", None),
    ("nvwgmma.descriptors", None),
    ("nvwgmma.layouts", None),
    ("nvwgmma.sparsity", None),
    ("nvwgmma.kernel", "nvwgmma.kernel.geometry"),
    ("nvwgmma.kernel.smem", None),
    ("nvwgmma.kernel.epilogue", None),
    ("nvwgmma.kernel.pipeline", None),
    ("nvwgmma.kernel.fragment", None),
    ("nvwgmma.kernel.barrier", None),
    ("nvwgmma.kernel.fastmath", None),
    ("nvwgmma.kernel.tensormap", None),
    ("nvwgmma.kernel.runtime", None),
    ("nvwgmma.kernel.gemm", None),
    ("nvwgmma.kernel.gemm.launch", None),
    ("nvwgmma.kernel.gemm.fusion", None),
    ("nvwgmma.kernel.gemm.selector", None),
    ("nvwgmma.kernel.gemm.scheduler", None),
    ("nvwgmma.kernel.gemm.autotune", None),
    ("nvwgmma.kernel.attention", None),
    ("nvwgmma.kernel.attention.backward", None),
    ("nvwgmma.kernel.cache", None),
    ("nvwgmma.kernel.profile", None),
    ("nvwgmma.locations", None),
    ("nvwgmma.errors", None),
    ("nvwgmma.tools", None),
]


def _entry(name, obj) -> str:
    if inspect.isclass(obj):
        methods = [
            f"{m}{inspect.signature(f)}".replace("(self, ", "(").replace("(self)", "()")
            for m, f in vars(obj).items()
            if not m.startswith("_") and inspect.isfunction(f)
        ]
        doc = (inspect.getdoc(obj) or "").split("\n")[0]
        line = f"* `{name}` (class): {doc}"
        return line + "".join(f"\n  * `.{m}`" for m in methods)
    if callable(obj):
        doc = (inspect.getdoc(obj) or "").split("\n")[0]
        return f"* `{name}{inspect.signature(obj)}`: {doc}"
    return f"* `{name}`"


def reference() -> str:
    out = []
    for shown, source in MODULES:
        module = importlib.import_module(source or shown)
        out.append(f"### `{shown}`\n")
        for name in module.__all__:
            out.append(_entry(name, getattr(module, name)))
        out.append("")
    return "\n".join(out)


if __name__ == "__main__":
    print(reference())
