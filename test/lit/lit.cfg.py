# lit configuration for nvwgmma. Works from a CMake build tree (`ninja
# check-nvwgmma`, through the lit.site.cfg.py CMake writes, which names the
# tool directories) and from a source checkout against the installed package
# (`lit test/lit`: tools next to the running Python, or `--param
# nvwgmma_tools_dir=<dir>`).
import os
import shutil
import sys
import tempfile

import lit.formats

config.name = "nvwgmma"
# PyPI lit rejects execute_external=True; the internal shell is portable.
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".ptx"]
config.excludes = ["lit.cfg.py", "Inputs"]
config.test_source_root = os.path.dirname(__file__)
# Temporary files (%t) go to the build tree or outside the source tree.
config.test_exec_root = getattr(config, "nvwgmma_obj_root", None) or os.path.join(
    tempfile.gettempdir(), "nvwgmma-lit-%d" % os.getuid()
)
config.environment["FILECHECK_OPTS"] = "-enable-var-scope"


def wheel_bin(package, tool):
    """A tool shipped in the MLIR/LLVM wheels (site-packages/<pkg>/bin)."""
    for entry in sys.path:
        candidate = os.path.join(entry, package, "bin", tool)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def find_tool(name, package=None, required=True):
    tools_dir = lit_config.params.get("nvwgmma_tools_dir")
    search = [os.path.abspath(tools_dir)] if tools_dir else []
    # Written by CMake into lit.site.cfg.py for a build tree.
    for attr in ("nvwgmma_tools_dir", "llvm_tools_dir", "mlir_tools_dir"):
        if getattr(config, attr, None):
            search.append(getattr(config, attr))
    search.append(os.path.dirname(sys.executable))
    for directory in search:
        candidate = os.path.join(directory, name)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    found = (wheel_bin(package, name) if package else None) or shutil.which(name)
    if not found and required:
        lit_config.fatal(
            f"cannot find '{name}': install the package (see README.md) or pass "
            "--param nvwgmma_tools_dir=<build>/bin"
        )
    return found


tools = {
    "nvwgmma-opt": find_tool("nvwgmma-opt"),
    "nvwgmma-ptx-check": find_tool("nvwgmma-ptx-check"),
    "mlir-opt": find_tool("mlir-opt", "mlir"),
    "mlir-translate": find_tool("mlir-translate", "mlir"),
    "llc": find_tool("llc", "llvm"),
    "opt": find_tool("opt", "llvm"),
    "FileCheck": find_tool("FileCheck", "llvm"),
    "not": find_tool("not", "llvm", required=False),
}
for name, path in tools.items():
    if path:
        # Not inside a path, an option (--implicit-check-not) or a longer
        # tool name (nvwgmma-opt for opt).
        pattern = r"(?<![\w/.-])%s\b" % name.replace("-", r"\-")
        config.substitutions.append((pattern, path))
lit_config.note("nvwgmma-opt: " + tools["nvwgmma-opt"])


def find_plugin():
    """libNVWGMMAPlugin.so: <tools>/../lib in a build tree or an install
    prefix, site-packages/nvwgmma/lib for the installed wheel."""
    name = "libNVWGMMAPlugin.so"
    tools_dir = os.path.dirname(tools["nvwgmma-opt"])
    candidates = [os.path.join(tools_dir, os.pardir, "lib", name)]
    candidates += [os.path.join(entry, "nvwgmma", "lib", name) for entry in sys.path if entry]
    for candidate in candidates:
        if os.path.isfile(candidate):
            return os.path.abspath(candidate)
    lit_config.fatal(f"cannot find {name} beside {tools_dir} or in the nvwgmma package")


# `mlir-opt %{load_plugin}`: upstream's mlir-opt with nvwgmma loaded.
plugin = find_plugin()
config.substitutions.append(
    ("%{load_plugin}", f"--load-dialect-plugin={plugin} --load-pass-plugin={plugin}")
)
lit_config.note("plugin: " + plugin)

ptxas = shutil.which("ptxas")
if ptxas:
    config.available_features.add("ptxas")
    config.substitutions.append((r"\bptxas\b", ptxas))
