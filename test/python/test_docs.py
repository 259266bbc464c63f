"""Every rule label of docs/Constraints.md and docs/Protocol.md has a
negative lit test named after it and appears in the code that enforces it."""

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]


def labels(doc):
    return sorted(set(re.findall(r"^\| (\w+_c\d+) \|", (ROOT / "docs" / doc).read_text(), re.M)))


def lit_text():
    return "\n".join(p.read_text() for p in (ROOT / "test" / "lit").rglob("*.mlir"))


def code_text():
    return "\n".join(p.read_text() for p in (ROOT / "lib").rglob("*.cpp"))


def test_constraint_labels_have_tests_and_code():
    found = labels("Constraints.md")
    assert len(found) >= 24
    lit, code = lit_text(), code_text()
    for label in found:
        assert re.search(rf"@{label}_\w+", lit), f"no negative test named @{label}_..."
        ods_only = label in ("mma_async_c17", "mma_async_sp_c4")  # ODS type constraints
        assert ods_only or f'"{label}"' in code or f"({label})" in code, label


def test_protocol_labels_have_tests():
    found = labels("Protocol.md")
    assert found == [f"protocol_c{i}" for i in range(1, 6)]
    lit = lit_text()
    for label in found:
        assert re.search(rf"@{label}_\w+", lit), label
