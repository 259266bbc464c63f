"""The order persistent attention kernels walk their tiles in
(`attention.tiles.tile_of`, the same arithmetic the kernel is built from):
every tile exactly once; causal, longest query blocks first within L2
sections of (head, batch) pairs; not causal, a pair's blocks side by
side."""

import pytest


def _walk(blocks, heads, batches, section, causal):
    from nvwgmma.kernel.attention.tiles import tile_of

    return [tile_of(t, blocks, heads, batches, section, causal)
            for t in range(blocks * heads * batches)]  # fmt: skip


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("blocks,heads,batches,section", [
    (4, 16, 32, 48), (4, 16, 32, 512), (4, 16, 32, 1), (3, 5, 7, 8), (1, 1, 1, 4), (8, 32, 2, 64)])  # fmt: skip
def test_every_tile_once(blocks, heads, batches, section, causal):
    tiles = _walk(blocks, heads, batches, section, causal)
    expected = {(b, h, n) for b in range(blocks) for h in range(heads) for n in range(batches)}
    assert sorted(tiles) == sorted(expected)


def test_causal_sections_run_longest_blocks_first():
    blocks, heads, batches, section = 4, 16, 32, 48
    tiles = _walk(blocks, heads, batches, section, True)
    pairs = heads * batches
    for start in range(0, pairs, section):
        width = min(section, pairs - start)
        part = tiles[start * blocks : (start + width) * blocks]
        # One section's pairs, each with all its blocks, longest first.
        assert {h + heads * n for _, h, n in part} == set(range(start, start + width))
        assert [b for b, _, _ in part] == sorted((b for b, _, _ in part), reverse=True)
    # 512 pairs in sections of 48: the last holds 32.
    assert len(tiles[480 * blocks :]) == 32 * blocks


def test_one_section_is_longest_first_over_the_grid():
    tiles = _walk(4, 2, 3, 6, True)
    assert [b for b, _, _ in tiles] == [3] * 6 + [2] * 6 + [1] * 6 + [0] * 6


def test_non_causal_keeps_a_pairs_blocks_together():
    tiles = _walk(4, 2, 3, 1, False)
    assert tiles[:4] == [(0, 0, 0), (1, 0, 0), (2, 0, 0), (3, 0, 0)]
    assert tiles[4] == (0, 1, 0) and tiles[8] == (0, 0, 1)


def test_l2_section_fits_half_of_l2():
    from nvwgmma.kernel.attention.tiles import l2_section

    # H100: 50 MiB of L2; S = 512, d = 128: 256 KiB of K and V per head.
    assert l2_section(50 << 20, 512, 128, 1) == 100
    assert l2_section(50 << 20, 512, 128, 4) == 400  # 4 query heads share each K/V head
    assert l2_section(50 << 20, 1 << 20, 256, 1) == 1  # one head's K/V overfills L2


@pytest.mark.parametrize(
    "blocks, heads, batches", [(8, 16, 16), (4, 16, 32), (7, 3, 2), (1, 4, 1), (32, 16, 4)]
)
def test_paired_units_cover_every_tile_once_at_equal_cost(blocks, heads, batches):
    """Causal static walk: each valid half of each unit is a distinct
    (block, head, batch); a unit's two blocks cost blocks + 1 key blocks
    (one block in the odd middle); over 132 CTAs taking units round-robin
    the busiest CTA is within one unit of the mean."""
    from nvwgmma.kernel.attention.tiles import paired_tile, paired_units

    units = paired_units(blocks, heads, batches)
    assert units == -(-blocks // 2) * heads * batches
    seen, load = [], [0] * 132
    for u in range(units):
        cost = 0
        for half in (0, 1):
            block, head, batch = paired_tile(u, half, blocks, heads, batches)
            if half and 2 * block + 1 == blocks:  # the odd middle block, named once
                assert paired_tile(u, 0, blocks, heads, batches)[0] == block
                continue
            seen.append((block, head, batch))
            cost += block + 1
        assert cost == (
            blocks + 1 if 2 * (u % -(-blocks // 2)) + 1 != blocks else (blocks + 1) // 2
        )
        load[u % 132] += cost
    assert sorted(seen) == sorted(
        (b, h, n) for b in range(blocks) for h in range(heads) for n in range(batches)
    )
    busy = [x for x in load if x]
    assert max(busy) - min(busy) <= blocks + 1
