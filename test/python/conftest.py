import os
import shutil
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))


def pytest_collection_modifyitems(config, items):
    skip_ptxas = pytest.mark.skip(reason="ptxas not found on PATH")
    have_ptxas = shutil.which("ptxas") is not None
    for item in items:
        if "ptxas" in item.keywords and not have_ptxas:
            item.add_marker(skip_ptxas)


@pytest.fixture
def ctx():
    from nvwgmma import ir

    with ir.Context() as context, ir.Location.unknown():
        yield context


@pytest.fixture
def body(ctx):
    """An insertion point inside `func.func @f(%a: i64, %b: i64, %p: i1)`."""
    from nvwgmma import ir
    from nvwgmma.dialects import func

    module = ir.Module.create()
    i64 = ir.IntegerType.get_signless(64)
    i1 = ir.IntegerType.get_signless(1)
    with ir.InsertionPoint(module.body):
        f = func.FuncOp("f", ir.FunctionType.get([i64, i64, i1], []))
        block = f.add_entry_block()
    with ir.InsertionPoint(block):
        ret = func.ReturnOp([])
    with ir.InsertionPoint(ret):
        yield module, block.arguments


@pytest.fixture
def nvwgmma_opt():
    """The nvwgmma-opt under test: NVWGMMA_TOOLS_DIR (a CMake build tree) or
    the one installed next to this Python."""
    import pathlib

    search = [os.environ.get("NVWGMMA_TOOLS_DIR", ""), str(pathlib.Path(sys.executable).parent)]
    tool = shutil.which("nvwgmma-opt", path=os.pathsep.join(p for p in search if p))
    if tool is None:
        pytest.skip("nvwgmma-opt is not installed next to this Python")
    return tool


@pytest.fixture
def fp8_bytes(monkeypatch):
    """One-byte arrays ("|u1") read as e4m3, as torch's float8 tensors are."""
    from nvwgmma.kernel.gemm.launch import _Tensor

    original = _Tensor.__init__

    def init(self, value, what):
        original(self, value, what)
        if self.dtype == "|u1":
            self.dtype = "e4m3"

    monkeypatch.setattr(_Tensor, "__init__", init)
