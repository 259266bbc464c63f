"""bench/gemm/models.py, the public shape corpus: every model sourced,
the halves fixed and disjoint, the layers' tensor-parallel shapes, and the
samples the reports draw stable."""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).parents[2] / "bench" / "gemm"))


def test_every_model_has_a_source_and_a_half():
    import models

    assert len(models.MODELS) >= 12
    assert set(models.SOURCES) == set(models.MODELS)
    assert all("/" in repo for repo in models.SOURCES.values())
    halves = {h: {n for n, x in models.SPLIT.items() if x == h} for h in ("tuned", "held-out")}
    assert halves["tuned"] and halves["held-out"]
    assert halves["tuned"] | halves["held-out"] == set(models.MODELS)
    assert set(models.TUNED) == halves["tuned"]


def test_tensor_parallel_divides_n_of_column_layers_and_k_of_row_layers():
    """Llama-3.1-8B (32 heads, 8 key/value heads of 128): fused QKV 6144 x
    4096 at tp 1; at tp 8, 4 query heads and one key/value head each, 768;
    O's and down's K divided; lm_head's N divided."""
    import models

    one = dict((name, (n, k)) for name, n, k in models.layers("Llama-3.1-8B", 1))
    eight = dict((name, (n, k)) for name, n, k in models.layers("Llama-3.1-8B", 8))
    assert one == {"QKV": (6144, 4096), "O": (4096, 4096), "gate/up": (28672, 4096),
                   "down": (4096, 14336), "lm_head": (128256, 4096)}  # fmt: skip
    assert eight == {"QKV": (768, 4096), "O": (4096, 512), "gate/up": (3584, 4096),
                     "down": (4096, 1792), "lm_head": (16032, 4096)}  # fmt: skip


def test_samples_stay_inside_their_half():
    """A sample of the held-out half holds only held-out models' shapes,
    drawn the same way each time (the reports rerun it)."""
    import models

    held = models.sample("held-out", 10, seed=0)
    assert held == models.sample("held-out", 10, seed=0)
    held_shapes = {(m, n, k) for _name, h, _layer, _tp, m, n, k in models.corpus()
                   if h == "held-out"}  # fmt: skip
    assert all((m, n, k) in held_shapes for _label, m, n, k in held)
    assert all(label.split()[0] in models.SPLIT and models.SPLIT[label.split()[0]] == "held-out"
               for label, *_ in held)  # fmt: skip


def test_the_bench_sets_keep_to_their_halves():
    """shapes.py's sets: "corpus-small" is the tuned half in rule 4's
    region (128 x 128 tiles under half a wave) above rule 0's tokens;
    "corpus-second" is held-out shapes the first sample ("corpus") does not
    hold."""
    import shapes

    for dtype in ("bf16", "e4m3"):
        small = shapes.table(dtype, "corpus-small")
        assert small and all(label.startswith("[tuned] ") for label, *_ in small)
        assert all(m > 32 and 2 * -(-m // 128) * -(-n // 128) < 132 for _, m, n, _k in small)
        first = {row[1:] for row in shapes.table(dtype, "corpus") if "[held-out]" in row[0]}
        second = shapes.table(dtype, "corpus-second")
        assert len(second) >= 40
        assert all(label.startswith("[held-out] ") for label, *_ in second)
        assert not first & {row[1:] for row in second}


def test_the_region_sets_are_drawn_inside_it_and_apart():
    """The region sets (shapes.MID_SETS): each half's shapes where 128 x 128
    tiles fill half a wave to a wave above 64 tokens, none in an earlier
    held-out sample; heldout-narrow: the held-out rows rule 3b takes a
    narrow tile on."""
    import shapes
    from nvwgmma.kernel.gemm.selector import select_config

    for dtype in ("bf16", "e4m3"):
        earlier = {row[1:] for s in ("corpus", "corpus-second") for row in shapes.table(dtype, s)}
        sets = {name: shapes.table(dtype, name) for name in shapes.MID_SETS}
        for name, rows in sets.items():
            half = "[tuned] " if name == "corpus-mid" else "[held-out] "
            assert rows and all(label.startswith(half) for label, *_ in rows), name
            assert all(shapes._mid(m, n, k) for _, m, n, k in rows), name
            assert not earlier & {row[1:] for row in rows}, name
        drawn = {name: {row[1:] for row in rows} for name, rows in sets.items()}
        held = [drawn[name] for name in drawn if name != "corpus-mid"]
        assert all(not a & b for i, a in enumerate(held) for b in held[i + 1 :])
        # Models of both halves share some projection shapes: heldout-mid
        # and heldout-mid-second hold a few of corpus-mid's; heldout-widths none.
        assert not drawn["heldout-widths"] & drawn["corpus-mid"]
        narrow = shapes.table(dtype, "heldout-narrow")
        assert narrow and all(label.startswith("[held-out] ") for label, *_ in narrow)
        picks = [select_config(m, n, k, dtype=dtype, out_dtype="bf16") for _, m, n, k in narrow]
        assert all(c.tile_m == 128 and c.tile_n in (80, 96, 112) for c in picks)
