"""Every rule label of docs/Constraints.md and docs/Protocol.md has a
negative lit test named after it and appears in the code that enforces it."""

import pathlib
import re
import sys

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
        assert f'"{label}"' in code, label


def test_protocol_labels_have_tests():
    found = labels("Protocol.md")
    assert found == [f"protocol_c{i}" for i in range(1, 10)]
    lit = lit_text()
    for label in found:
        assert re.search(rf"@{label}_\w+", lit), label


def test_dialect_md_is_what_tablegen_generates():
    """docs/Dialect.md is committed; the build generates it again (into the
    build tree and the package) and the two must be identical. To refresh:
    `ninja -C build nvwgmma-doc` and copy build/include/nvwgmma/IR/NVWGMMA.md."""
    import importlib.resources

    generated = importlib.resources.files("nvwgmma") / "_generated" / "Dialect.md"
    committed = (ROOT / "docs" / "Dialect.md").read_text()
    assert generated.read_text() == committed


# What the lattice looked like when Python restated it: K per type, the
# accumulator width formula, sparse K.
LATTICE_COPIES = [
    re.compile(r'"tf32":\s*(8|16)\b'),
    re.compile(r'"b1":\s*256\b'),
    re.compile(r'"e4m3":\s*(32|64)\b'),
    re.compile(r"\bn\s*//\s*4\b.*\bn\s*//\s*2\b"),
]


def test_no_python_copy_of_the_lattice():
    """K per type, accumulator widths and sparse K live only in
    lib/IR/Constraints.cpp; Python asks nvwgmma.lattice. (Tests under
    test/python keep their own expectations on purpose: an oracle that asks
    the code under test could not fail.)"""
    sources = [ROOT / "python", ROOT / "bench", ROOT / "test" / "gpu"]
    for top in sources:
        for path in top.rglob("*.py"):
            for number, line in enumerate(path.read_text().splitlines(), 1):
                for pattern in LATTICE_COPIES:
                    assert not pattern.search(line), f"{path}:{number}: {line.strip()}"


def test_python_md_reference_lists_every_public_name():
    """docs/python.md's reference section is what python_reference.py
    generates from the package: every public name with its keywords."""
    from python_reference import reference

    text = (ROOT / "docs" / "python.md").read_text()
    begin, end = "<!-- reference:begin -->\n", "<!-- reference:end -->"
    committed = text[text.index(begin) + len(begin) : text.index(end)]
    assert committed.strip() == reference().strip(), (
        "regenerate with: python test/python/python_reference.py"
    )


def _documents():
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")),
            ROOT / "bench" / "results" / "README.md"]  # fmt: skip


def _expanded(name):
    """`a{x,y}b` -> [axb, ayb]; names without braces as they are."""
    match = re.search(r"\{([^}]*)\}", name)
    if not match:
        return [name]
    return [n for alt in match.group(1).split(",")
            for n in _expanded(name[: match.start()] + alt + name[match.end() :])]  # fmt: skip


def test_every_cited_results_file_exists():
    """A figure's results file, as a document names it, is in the repository
    (a name with * must match at least one file)."""
    cited = set()
    for doc in _documents():
        for name in re.findall(r"[\w/*.{},-]*\.json", doc.read_text()):
            if doc.parent.name == "results" and not name.startswith("bench/"):
                name = "bench/results/" + name  # the index names them from its folder
            if name.startswith("bench/results/") and re.search(r"/20\d\d-", name):
                cited.add(name)
    assert len(cited) > 20
    for name in sorted(cited):
        for one in _expanded(name):
            assert list(ROOT.glob(one)), f"{one} is cited but not in the repository"


def test_performance_tables_are_the_results_files():
    """docs/performance.md's tables are what bench/results/tables.py prints
    from the results files they cite."""
    sys.path.insert(0, str(ROOT / "bench" / "results"))
    import tables

    text = (ROOT / "docs" / "performance.md").read_text()
    for name, table in tables.TABLES.items():
        begin = f"<!-- table:{name} -->\n"
        committed = text[
            text.index(begin) + len(begin) : text.index("<!-- table:end -->", text.index(begin))
        ]
        assert committed.strip() == table().strip(), (
            "regenerate with: python bench/results/tables.py"
        )


def test_documents_speak_of_the_package():
    """No word of the developers' process in what users read."""
    for doc in _documents():
        for number, line in enumerate(doc.read_text().splitlines(), 1):
            assert not re.search(r"\bsessions?\b", line, re.I), f"{doc.name}:{number}: {line}"
