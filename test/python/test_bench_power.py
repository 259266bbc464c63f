"""bench/gemm/power.py's host side: which nvidia-smi samples count for a
timed window, and that every kernel it measures is a valid configuration.
(The measurement itself runs on the GPU.)"""

import datetime
import json
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).parents[2] / "bench" / "gemm"))


def test_only_samples_inside_the_window_count():
    import power

    out = (
        "2026/11/24 02:28:17.900, 1980, 75.0, 40\n"  # idle, before the window
        "2026/11/24 02:28:18.120, 1455, 701.5, 61\n"
        "[N/A], 1455, 700.0, 61\n"  # unreadable: skipped
        "2026/11/24 02:28:18.140, 1440, 699.0, 61\n"
        "2026/11/24 02:28:19.500, 1980, 80.0, 58\n"  # after the window
    )
    t0 = datetime.datetime(2026, 11, 24, 2, 28, 18, 100000).timestamp()
    t1 = datetime.datetime(2026, 11, 24, 2, 28, 19, 0).timestamp()
    assert power._in_window(out, t0, t1) == [[1455.0, 701.5, 61.0], [1440.0, 699.0, 61.0]]


def test_every_measured_variant_is_a_valid_config():
    import power
    from nvwgmma.kernel.gemm.config import check_config

    labels = [label for label, config in power.variants()]
    assert len(set(labels)) == len(labels)
    for _, config in power.variants():
        check_config(config)
    assert [c.k_order for _, c in power.variants()][:2] == ["forward", "serpentine"]


def test_every_variants_experiment_is_valid_and_labelled_once():
    sys.path.insert(0, str(pathlib.Path(__file__).parents[2] / "bench" / "gemm"))
    import variants
    from nvwgmma.kernel.gemm.config import check_config

    for name, (shapes, kernels, *dtype) in variants.experiments().items():
        labels = [label for label, *_ in kernels]
        assert len(set(labels)) == len(labels), name
        assert shapes and all(len(s) == 3 for s in shapes)
        assert dtype in ([], ["e4m3"]), name
        for label, config, *options in kernels:
            # launch options: plainly (NVWGMMA_PDL=0), after a copy into A
            assert options in ([], [{"plain": True}], [{"after_copy": True}],
                               [{"plain": True, "after_copy": True}]), (name, label)  # fmt: skip
            # a configuration, or one per shape (None where it does not apply)
            made = [config(*s) for s in shapes] if callable(config) else [config]
            assert any(made), (name, label)
            for c in filter(None, made):
                assert check_config(c) is c
                assert c.shared_memory_bytes <= 227 * 1024
                assert c.dtype == (dtype or ["bf16"])[0], (name, label)


def test_results_go_to_the_results_folder(tmp_path, monkeypatch):
    """Without the device tool's $OUT a run's results land in
    bench/results/<gpu>/<date>-<time>-<what>.json; with it, in $OUT."""
    import run

    monkeypatch.delenv("OUT", raising=False)
    monkeypatch.setattr(run, "ROOT", str(tmp_path))
    results = {"info": {"gpu": "NVIDIA H100 80GB HBM3"}, "rows": [1]}
    path = pathlib.Path(run.write_results("unused", "power-results.json", results))
    assert path.parent == tmp_path / "bench" / "results" / "h100"
    assert path.name == f"{run._STAMP}-power.json" and json.loads(path.read_text()) == results
    monkeypatch.setenv("OUT", str(tmp_path))
    assert run.write_results("unused", "power-results.json", results) == str(
        tmp_path / "power-results.json"
    )
