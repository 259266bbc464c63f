"""Compiled kernels on disk: PTX and its launch metadata, written once per
configuration and loaded once per process, from a precompiled directory
($NVWGMMA_PTX_DIR) where no compiler exists (a GPU machine with only the
pure-Python runtime), else from the user cache ($NVWGMMA_CACHE_DIR,
default ~/.cache/nvwgmma), compiling on a miss."""

from __future__ import annotations

import hashlib
import json
import os
import pathlib
import threading

__all__ = ["KernelFamily", "cache_dir", "config_key", "generator_digest", "key", "load", "write"]

_PACKAGE = pathlib.Path(__file__).resolve().parents[1]
# The sources a kernel's PTX is generated from: the kernel layer and what it
# builds with (present in a checkout and in an installed package alike).
_GENERATOR = ("kernel/**/*.py", "compile.py", "layouts.py", "descriptors.py", "lattice.py",
              "dialects/nvwgmma.py", "dialects/_nvwgmma_builders.py")  # fmt: skip
_digests: dict = {}


def generator_digest(*sources) -> str:
    """A digest of the text of the package's kernel generator and of
    `sources` (paths or modules: a custom builder passes its own), so PTX
    cached by other code is never served for this code."""
    names = tuple(str(getattr(s, "__file__", s)) for s in sources)
    if names not in _digests:
        files = sorted({p for pattern in _GENERATOR for p in _PACKAGE.glob(pattern)})
        digest = hashlib.sha1()
        for path in [*files, *map(pathlib.Path, names)]:
            digest.update(path.read_bytes())
        _digests[names] = digest.hexdigest()[:12]
    return _digests[names]


def key(name: str, fields, sources=()) -> str:
    """A file stem: `name` and a digest of `fields` (every configuration
    field and the kernel's parameter list, so a cached PTX of another
    signature is never launched) and of the generator's code
    (generator_digest: a kernel cached by an older nvwgmma, or by an
    earlier version of a custom builder named in `sources`, is never
    launched)."""
    text = repr((fields, generator_digest(*sources)))
    return f"{name}-{hashlib.sha1(text.encode()).hexdigest()[:10]}"


def config_key(config, signature, sources=()) -> str:
    """key() of a kernel built from a dataclass configuration with a `name`
    and the kernel's parameter list."""
    from dataclasses import asdict

    return key(config.name, (asdict(config), signature), sources)


class KernelFamily:
    """One kernel's place in the cache, from its builder (config ->
    (module, meta)) and parameter list: `key(config)` (config_key, computed
    once per configuration), `write(directory, config)` (PTX for
    precompiling) and `load(config)` -> (runtime.Kernel, meta), precompiled
    or built where nvwgmma can compile; `precompile_hint` names the command
    that precompiles it. `signature` may be a callable returning it (a
    kernel module imported on first use)."""

    def __init__(self, build, signature, precompile_hint: str):
        from functools import lru_cache

        self._build, self._signature, self._hint = build, signature, precompile_hint
        self.key = lru_cache(maxsize=1024)(self._key)

    def _key(self, config) -> str:
        """The file stem of `config`'s PTX: its name and a digest of every
        field, the kernel's parameter list and the generator's code."""
        signature = self._signature() if callable(self._signature) else self._signature
        return config_key(config, signature)

    def write(self, directory: str, config) -> str:
        return write(directory, self.key(config), lambda: self._build(config))

    def load(self, config):
        return load(self.key(config), lambda: self._build(config), self._hint)


def cache_dir() -> str:
    return os.environ.get("NVWGMMA_CACHE_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "nvwgmma"
    )


def write(directory: str, stem: str, build) -> str:
    """Compile (`build()` -> (module, meta) in a Context) and write
    `stem`.ptx and `stem`.json to `directory`. Each file appears whole or
    not at all (written aside, then renamed), the PTX last: processes that
    compile the same kernel at once (torchrun's ranks, test workers) never
    read half a file."""
    from ..compile import compile_to_ptx
    from ..ir import Context

    with Context():
        module, meta = build()
        ptx = compile_to_ptx(module)
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, stem)
    _replace(path + ".json", json.dumps(meta, indent=1))
    _replace(path + ".ptx", ptx)  # last: its presence marks the pair complete
    return path + ".ptx"


def _replace(path: str, text: str) -> None:
    aside = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
    with open(aside, "w") as f:
        f.write(text)
    os.replace(aside, path)


_loaded: dict = {}  # (stem, context) -> (runtime.Kernel, meta)
_texts: dict = {}  # stem -> (PTX, meta): read once, loaded into each context that asks


def load(stem: str, build, precompile_hint: str):
    """(runtime.Kernel, meta) of `stem`, read once per process and loaded
    once per context (the current one: runtime.on_device picks it);
    compiled with `build` on a miss, where a compiler exists."""
    from . import runtime

    if stem not in _texts:
        _texts[stem] = _read(stem, build, precompile_hint)
    ptx, meta = _texts[stem]
    runtime.ensure_context()
    loaded = (stem, runtime.current_context())
    if loaded not in _loaded:
        kernel = runtime.Kernel(ptx, meta["kernel"], dynamic_smem=meta["dynamic_smem"],
                                programmatic=meta.get("programmatic", False))  # fmt: skip
        _loaded[loaded] = kernel, meta
    return _loaded[loaded]


def _read(stem: str, build, precompile_hint: str):
    """(PTX, meta) of `stem` from $NVWGMMA_PTX_DIR or the cache, compiled
    into the cache on a miss."""
    directories = [d for d in (os.environ.get("NVWGMMA_PTX_DIR"), cache_dir()) if d]
    for directory in directories:
        path = os.path.join(directory, stem)
        if os.path.exists(path + ".ptx"):
            break
    else:
        try:
            write(cache_dir(), stem, build)
        except ImportError as error:
            raise RuntimeError(
                f"the kernel {stem} must be precompiled or compilable, but it is not in "
                f"{' or '.join(directories)} and this nvwgmma has no compiler ({error}); run "
                f"`{precompile_hint}` where nvwgmma is built and set NVWGMMA_PTX_DIR=DIR"
            ) from None
        path = os.path.join(cache_dir(), stem)
    with open(path + ".json") as f:
        meta = json.load(f)
    with open(path + ".ptx") as f:
        return f.read(), meta
