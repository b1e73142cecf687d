"""The compiler's BD count (model/bd/compiler_count.py) on the outcomes of AMD's tiling
tutorial (which configurations compile, the BDs it counts by hand), the rule's parts one
at a time, and ``aiedma bd`` printing it."""

import json
from pathlib import Path

import pytest
from aiedma_command import run

from aiedma.model import TilingParameters
from aiedma.model.bd.compiler_count import PHASES, compiler_bd_count
from aiedma.model.bd.lower import lower

EXAMPLES = Path(__file__).parents[3] / "examples"


def layers(count):
    """Test case 1's read: 4x4 quarters of 8x8 layers, ``count`` layers."""
    return TilingParameters(buffer_dimension=[8, 8, count], tiling_dimension=[4, 4, 1],
                            tile_traversal=[(0, 4, 2), (1, 4, 2), (2, 1, count)])


def halo(tile0):
    """Test case 4's read: 64 x 512, tiles of tile0 x 4, 4 rows of zeros above and below."""
    return TilingParameters(buffer_dimension=[64, 512], tiling_dimension=[tile0, 4],
                            offset=[0, -4], tile_traversal=[(1, 4, 130), (0, tile0, 64 // tile0)])


def layers_as_rows(count):
    """Test case 2's read: the same quarters, the layers stacked as rows of an 8 x 8n."""
    return TilingParameters(buffer_dimension=[8, 8 * count], tiling_dimension=[4, 4],
                            tile_traversal=[(0, 4, 2), (1, 4, 2 * count)])


def padded_quarters():
    """Test case 3's second read: 6x6 quarters of an 8x8 layer, a zero border."""
    return TilingParameters(buffer_dimension=[8, 8], tiling_dimension=[6, 6],
                            offset=[-1, -1], tile_traversal=[(0, 4, 2), (1, 4, 2)])


@pytest.mark.parametrize("tp, per_phase, total, fits, ours", [
    # test case 1: "32 BDs which is above the 23 (24 - 1 for the write access) BDs
    # available"; it does not compile
    (layers(16), 16, 32, False, 1),
    # "limits the number of layer to 12 which leads to 24 BD used which is the maximum"
    (layers(12), 12, 24, True, 1),
    # test case 2: the same words read from an 8x128 buffer, 4 levels; it compiles and
    # simulates (the tutorial's output)
    (layers_as_rows(16), 1, 2, True, 1),
    # test case 3's padded quarters (one BD per run of alike-padded tiles); it compiles
    (padded_quarters(), 4, 8, True, 4),
    # test case 4: "3 (vertical BDs) x 8 (to process all columns) x 2 (phases) = 48 BDs"
    (halo(8), 24, 48, False, 1),
    # "Changing the Tile size to 16x4 will reduce to 24 BDs which is just OK"
    (halo(16), 12, 24, True, 1),
])
def test_the_tutorials_outcomes(tp, per_phase, total, fits, ours):
    count = compiler_bd_count(tp, "memtile")
    assert (count.per_phase, count.total, count.available) == (per_phase, total, 24)
    assert (count.warning() is None) == fits
    # ours stays minimal (a BD a quarter where each quarter is padded otherwise)
    assert len(lower(tp, "memtile", "read", "int32").bds) == ours


def test_levels_are_not_merged_and_those_past_a_bds_dimensions_unroll():
    # test cases 1 and 2 read the same words: the nest of 1 has a fifth level, which a
    # memory-tile BD (4 levels) cannot hold: a BD a layer
    assert [len(n) for n in compiler_bd_count(layers(16), "memtile").levels] == [5]
    assert [len(n) for n in compiler_bd_count(layers_as_rows(16), "memtile").levels] == [4]
    assert (list(layers(16).indices()) == list(layers_as_rows(16).indices()))
    # 4x4 blocks of 16x16: four levels; a memory-tile BD holds them, a core-tile BD holds
    # 3 and the fourth becomes a BD per iteration
    blocks = TilingParameters(buffer_dimension=[16, 16], tiling_dimension=[4, 4],
                              tile_traversal=[(0, 4, 4), (1, 4, 4)])
    assert compiler_bd_count(blocks, "memtile").per_phase == 1
    assert compiler_bd_count(blocks, "tile").per_phase == 4
    assert compiler_bd_count(blocks, "tile").available == 16


def test_padding_alike_on_every_tile_costs_nothing():
    # zeros around every tile (one tile per row strip, the whole row padded the same)
    around = TilingParameters(buffer_dimension=[8, 4], tiling_dimension=[12, 1],
                              offset=[-2, 0], tile_traversal=[(1, 1, 4)])
    assert compiler_bd_count(around, "memtile").per_phase == 1
    # padded on the first and last tile of a traversal only: one BD per run of alike tiles
    levels = compiler_bd_count(padded_quarters(), "memtile").levels[0]
    assert [lv.runs for lv in levels] == [1, 1, 2, 2]
    assert compiler_bd_count(padded_quarters(), "memtile").per_phase == 2 * 2


def test_entries_add_up():
    count = compiler_bd_count([layers(12), layers(12)], "memtile")
    assert count.per_phase == 24 and count.total == 24 * PHASES


def test_the_warning_names_both_counts_and_the_channels():
    assert compiler_bd_count(layers(16), "memtile").warning() == (
        "aiecompiler needs 32 BDs for this port (16 a phase, 2 phases), more than the 24 a "
        "memory-tile channel has: expect 'insufficient number of available buffer "
        "descriptors'")
    assert compiler_bd_count(layers(12), "memtile").warning() is None   # 24: just fits


def test_bd_prints_both_counts_and_warns():
    out = run("bd", "--port", "Layers::mtxin.out[0]", EXAMPLES / "bd_budget.h")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("Layers::mtxin.out[0]: memtile read int32, 1 BD;")
    assert lines[1] == ("aiecompiler (tutorial's rule): 16 BDs per phase, 32 for 2 phases; a "
                        "memory-tile channel has 24")
    assert out.stderr.startswith("warning: aiecompiler needs 32 BDs")
    fits = run("bd", "--port", "Halo::mtxin.out[0]", "-D", "TILE0=16", EXAMPLES / "bd_budget.h")
    assert fits.returncode == 0 and fits.stderr == "", fits.stderr
    assert "12 BDs per phase, 24 for 2 phases" in fits.stdout
    data = json.loads(run("bd", "--format", "json", "--port", "Halo::mtxin.out[0]",
                          EXAMPLES / "bd_budget.h").stdout)
    assert data["aiecompiler"] == {"per_phase": 24, "total": 48, "phases": 2, "available": 24}
    assert len(data["bds"]) == 1
