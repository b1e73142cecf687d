"""The compiler's BD count (model/bd/compiler_count.py) on the figures AMD's tiling
tutorial counts by hand, the rule's parts one at a time, and ``aiedma bd`` printing it."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

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


@pytest.mark.parametrize("tp, per_phase, total, fits", [
    # "The last wrap value translate into 32 BDs ... above the 23 available"
    (layers(16), 32, 64, False),
    # "limits the number of layer to 12 which leads to 24 BD used"
    (layers(12), 24, 48, True),
    # "3 (vertical BDs) x 8 (to process all columns) x 2 (phases) = 48 BDs"
    (halo(8), 24, 48, True),
    # "Changing the Tile size to 16x4 will reduce to 24 BDs which is just OK"
    (halo(16), 12, 24, True),
])
def test_the_tutorials_counts(tp, per_phase, total, fits):
    count = compiler_bd_count(tp, "memtile")
    assert (count.per_phase, count.total, count.available) == (per_phase, total, 24)
    assert (count.per_phase <= count.available) == fits
    # ours stays minimal: one BD each
    assert len(lower(tp, "memtile", "read", "int32").bds) == 1


def test_contiguous_levels_merge_and_the_rest_unroll():
    # tile rows of 8 stepping by 8 continue the tile's own rows: one level, one BD
    rows = TilingParameters(buffer_dimension=[8, 64], tiling_dimension=[8, 4],
                            tile_traversal=[(1, 4, 16)])
    assert [lv.wrap for lv in compiler_bd_count(rows, "memtile").levels[0]] == [512]
    assert compiler_bd_count(rows, "memtile").per_phase == 1
    # 4x4 blocks of 16x16: four levels; a memory-tile BD wraps 3, so the fourth
    # becomes a BD per iteration; a core-tile BD wraps 2: the third and fourth unroll
    blocks = TilingParameters(buffer_dimension=[16, 16], tiling_dimension=[4, 4],
                              tile_traversal=[(0, 4, 4), (1, 4, 4)])
    assert compiler_bd_count(blocks, "memtile").per_phase == 4
    assert compiler_bd_count(blocks, "tile").per_phase == 4 * 4
    assert compiler_bd_count(blocks, "tile").available == 16


def test_padding_alike_on_every_tile_costs_nothing():
    # zeros around every tile (one tile per row strip, the whole row padded the same)
    around = TilingParameters(buffer_dimension=[8, 4], tiling_dimension=[12, 1],
                              offset=[-2, 0], tile_traversal=[(1, 1, 4)])
    assert compiler_bd_count(around, "memtile").per_phase == 1
    # padded on the first and last tile of a traversal only: one BD per run of alike tiles
    edges = TilingParameters(buffer_dimension=[8, 8], tiling_dimension=[6, 6],
                             offset=[-1, -1], tile_traversal=[(0, 4, 2), (1, 4, 2)])
    levels = compiler_bd_count(edges, "memtile").levels[0]
    assert [lv.runs for lv in levels] == [1, 1, 2, 2]
    assert compiler_bd_count(edges, "memtile").per_phase == 2 * 2


def test_entries_add_up():
    count = compiler_bd_count([layers(12), layers(12)], "memtile")
    assert count.per_phase == 48 and count.total == 48 * PHASES


def test_warnings_by_tier():
    assert "expect 'insufficient number" in compiler_bd_count(layers(16), "memtile").warning()
    assert f"with the {PHASES} phases" in compiler_bd_count(halo(8), "memtile").warning()
    assert compiler_bd_count(halo(16), "memtile").warning() is None


def run(*args):
    return subprocess.run([sys.executable, "-m", "aiedma", *map(str, args)],
                          capture_output=True, text=True)


def test_bd_prints_both_counts_and_warns():
    out = run("bd", "--port", "Layers::mtxin.out[0]", EXAMPLES / "bd_budget.h")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("Layers::mtxin.out[0]: memtile read int32, 1 BD;")
    assert lines[1] == ("aiecompiler (tutorial's rule): 32 BDs per phase, 64 for 2 phases; a "
                        "memory-tile channel has 24")
    assert out.stderr.startswith("warning: aiecompiler needs 32 BDs")
    fits = run("bd", "--port", "Halo::mtxin.out[0]", "-D", "TILE0=16", EXAMPLES / "bd_budget.h")
    assert fits.returncode == 0 and fits.stderr == "", fits.stderr
    assert "12 BDs per phase, 24 for 2 phases" in fits.stdout
    data = json.loads(run("bd", "--format", "json", "--port", "Halo::mtxin.out[0]",
                          EXAMPLES / "bd_budget.h").stdout)
    assert data["aiecompiler"] == {"per_phase": 24, "total": 48, "phases": 2, "available": 24}
    assert len(data["bds"]) == 1
