"""Pictures: the access map equals the walk, files are written and read back."""

import json
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from aiedma_command import run
from hypothesis import given, settings
from PIL import Image
from repo import REPO
from tiling_strategies import tilings

from aiedma.draw import draw, port_paths
from aiedma.model import AiedmaError, PortProgram, TilingParameters
from aiedma.model.tiling.picture import access_map

DOCS = REPO / "docs" / "images"
K1 = {"buffer_dimension": [10, 6], "tiling_dimension": [3, 2],
      "tile_traversal": [[0, 3, 2], [1, 2, 3]]}
PAD_3D = {"buffer_dimension": [32, 4, 2], "tiling_dimension": [34, 6, 2], "offset": [-1, -1, 0],
          "boundary_dimension": [32, 4, 2]}
# The pictures the README shows: file name -> port program.
README_PICTURES = {"k1-write.svg": [K1], "padding-3d.svg": [PAD_3D]}


@settings(max_examples=150)
@given(tp=tilings(max_elements=200))
def test_access_map_is_the_walk(tp):
    m = access_map(PortProgram([tp]))
    coordinates = tp.coordinates()
    cells = tuple((coordinates - np.array(m.origin)).T)
    # Every stream element lands in its cell; the first visit is the smallest position.
    first = np.full(m.shape, -1)
    for k in reversed(range(len(coordinates))):
        first[tuple(c[k] for c in cells)] = k
    np.testing.assert_array_equal(m.first, first)
    counts = np.zeros(m.shape, dtype=int)
    np.add.at(counts, cells, 1)
    np.testing.assert_array_equal(m.count, counts)
    # A cell's first visit is a zero exactly where the walk sends a zero there.
    indices = tp.indices()
    visited = m.first >= 0
    np.testing.assert_array_equal(m.zero[visited], indices[m.first[visited]] < 0)
    assert [start for _, start, _, _ in m.tiles] == list(range(0, m.length, tp.tile_size()))


def test_overlapping_tiles_are_counted_twice():
    m = access_map(PortProgram([{"buffer_dimension": [12, 8], "tiling_dimension": [7, 2],
                                 "tile_traversal": [[0, 5, 2], [1, 2, 3]]}]))
    assert m.count[5:7, :6].min() == 2 and m.count[:5].max() == 1
    assert [(n, start, lo, hi) for n, start, lo, hi in m.tiles[:2]] == [
        (0, 0, (0, 0), (6, 1)), (1, 14, (5, 0), (11, 1))]


def test_entries_of_one_program_number_tiles_on():
    m = access_map(PortProgram([K1, {**K1, "offset": [0, 0]}]))
    assert [n for n, *_ in m.tiles] == list(range(12))
    assert m.count.max() == 2


@pytest.mark.parametrize("suffix", [".png", ".svg", ".gif"])
def test_files_are_written_and_read_back(tmp_path, suffix):
    path = draw(PortProgram([K1]), tmp_path / f"k1{suffix}")
    if suffix == ".svg":
        root = ET.parse(path).getroot()
        texts = [t.text for t in root.iter("{http://www.w3.org/2000/svg}text")]
        assert {str(k) for k in range(36)} <= set(texts)  # every stream position shown
        assert {str(k) for k in range(6)} <= set(texts)   # tile numbers
        return
    with Image.open(path) as image:
        assert image.size[0] > 200 and image.size[1] > 100
        frames = getattr(image, "n_frames", 1)
    assert frames == (6 if suffix == ".gif" else 1)  # one frame per tile


def test_element_animation_and_padding_pictures(tmp_path):
    path = draw(PortProgram([PAD_3D]), tmp_path / "pad.gif", animate="element")
    with Image.open(path) as image:
        assert image.n_frames == 102  # 408 elements, 4 per frame (at most 120 frames)
    root = ET.parse(draw(PortProgram([PAD_3D]), tmp_path / "pad.svg")).getroot()
    labels = [t.text for t in root.iter("{http://www.w3.org/2000/svg}text")]
    assert labels.count("d2=0") == 1 and labels.count("d2=1") == 1


@pytest.mark.parametrize(("output", "animate", "message"), [
    ("x.bmp", None, "output='x.bmp': the suffix must be one of .png, .svg, .gif"),
    ("x.png", "tile", "animate='tile': only a .gif can be animated, not a .png"),
    ("x.gif", "frame", "animate='frame': must be 'tile' or 'element'"),
])
def test_bad_picture_requests(tmp_path, output, animate, message):
    with pytest.raises(AiedmaError, match=message.replace("(", r"\(").replace(")", r"\)")
                       .replace(".", r"\.")):
        draw(PortProgram([K1]), tmp_path / output, animate=animate)
    assert not (tmp_path / output).exists()


def test_readme_pictures_are_current(tmp_path):
    """The committed pictures are what `aiedma draw` makes today."""
    for name, program in README_PICTURES.items():
        fresh = draw(PortProgram(program), tmp_path / name)
        assert fresh.read_text() == (DOCS / name).read_text(), (
            f"docs/images/{name} is stale: run `aiedma draw` on its program (tests/test_draw.py)")


def test_draw_command_and_its_help_example(tmp_path):
    port = tmp_path / "k1.json"
    port.write_text(json.dumps(K1))
    result = run("draw", "k1.json", "-o", "k1.png", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "k1.json: 36 elements, 6 tiles -> k1.png\n"
    help_text = run("draw", "--help").stdout
    assert "k1.json: 36 elements, 6 tiles -> k1.png" in help_text
    bad = run("draw", "k1.json", "-o", "k1.bmp", cwd=tmp_path)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1


def test_a_tiling_with_an_empty_buffer_dimension_needs_a_shape(tmp_path):
    program = PortProgram([TilingParameters(tiling_dimension=[2, 2])])
    with pytest.raises(AiedmaError, match="needs the buffer's shape"):
        draw(program, tmp_path / "x.png")
    assert draw(program.resolve([4, 4]), tmp_path / "x.png").exists()


def test_a_header_of_several_ports_gives_one_picture_per_port(tmp_path):
    header = REPO / "examples" / "graph.h"
    result = run("draw", header, "-o", "g.png", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    names = ["g_tutorial_mtx.in_0.png", "g_tutorial_mtx.in_1.png",
             "g_tutorial_mtx.out_0.png", "g_tutorial_mtx.out_1.png"]
    assert sorted(p.name for p in tmp_path.iterdir()) == names
    assert [line.rpartition(" -> ")[2] for line in result.stdout.splitlines()] == names
    tiles = {"in_0": 6, "in_1": 4, "out_0": 2, "out_1": 2}
    for line, (port, count) in zip(result.stdout.splitlines(), tiles.items(), strict=True):
        assert line.startswith(f"tutorial::mtx.{port.replace('_', '[')}]: ")
        assert f", {count} tiles -> " in line
    for name in names:
        with Image.open(tmp_path / name) as image:
            assert image.format == "PNG" and image.size[0] > 100
    assert not (tmp_path / "g.png").exists()


def test_port_still_chooses_one_picture_and_a_bad_one_is_one_line(tmp_path):
    header = REPO / "examples" / "graph.h"
    result = run("draw", header, "--port", "mtx.out[1]", "-o", "k4.svg", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["k4.svg"]
    assert result.stdout == "tutorial::mtx.out[1]: 36 elements, 2 tiles -> k4.svg\n"
    bad = run("draw", header, "--port", "mtx.out[9]", "-o", "x.png", cwd=tmp_path)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1
    assert "--port='mtx.out[9]': no such port" in bad.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["k4.svg"]


def test_port_file_names_are_safe_and_distinct(tmp_path):
    paths = port_paths(tmp_path / "x.svg", ["A::b.in[0]", "A::b.in_0", "a::B.in[0]", ""])
    assert [p.name for p in paths] == ["x_A_b.in_0.svg", "x_A_b.in_0_2.svg",
                                       "x_a_B.in_0_3.svg", "x_port.svg"]
    assert all(p.parent == tmp_path for p in paths)
