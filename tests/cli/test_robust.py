"""The command line never crashes: bad files, huge sizes, closed pipes, broken register images.

Each case runs ``aiedma.cli.main`` in process (or the installed command where the
operating system is part of the case: a closed pipe) and checks the exit status and
that an error is one line on standard error.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aiedma import cli
from aiedma.draw import MAX_CELLS
from aiedma.model.adf.files import MAX_INPUT_BYTES
from aiedma.model.bd.descriptor import BufferDescriptor, decode_image
from aiedma.model.bd.lower import MAX_PIECES, LoweringError, lower
from aiedma.model.errors import BDError
from aiedma.model.tiling.port import PortProgram

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
HUGE = {"buffer_dimension": [100000, 100000, 10], "tiling_dimension": [100000, 100000, 10]}
SMALL = {"buffer_dimension": [16], "tiling_dimension": [8], "offset": [-2]}


def main(capsys, *args) -> tuple[int, str, str]:
    status = cli.main([str(a) for a in args])
    out, err = capsys.readouterr()
    return status, out, err


def one_line_error(status: int, err: str) -> None:
    assert status == 2, err
    assert err.count("\n") == 1 and "Traceback" not in err, err


# -- files that are not what the command reads --

def test_a_binary_file_is_one_line(tmp_path, capsys):
    path = tmp_path / "x.json"
    path.write_bytes(b"\x95\x00\xff" * 100)
    for command in ("walk", "draw", "bd"):
        extra = {"draw": ["-o", tmp_path / "x.png"], "bd": ["--kind", "memtile"]}
        status, _, err = main(capsys, command, path, *extra.get(command, []))
        one_line_error(status, err)
        assert "a binary file (byte 0 at offset 1)" in err


def test_text_that_is_not_utf8_is_one_line(tmp_path, capsys):
    path = tmp_path / "x.h"
    path.write_bytes(b"int x = 1; // caf\xe9\n")
    status, _, err = main(capsys, "walk", path)
    one_line_error(status, err)
    assert "not UTF-8 text (byte 0xE9 at offset 17)" in err


def test_a_byte_order_mark_before_json_is_dropped(tmp_path, capsys):
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(SMALL).encode())
    status, out, _ = main(capsys, "walk", path)
    assert status == 0
    assert out.splitlines()[1].strip() == "Z x2, 0..5"


def test_an_input_file_larger_than_the_limit_is_refused_unread(tmp_path, capsys):
    path = tmp_path / "big.h"
    with path.open("wb") as f:
        f.truncate(MAX_INPUT_BYTES + 1)   # sparse: nothing is written
    status, _, err = main(capsys, "walk", path)
    one_line_error(status, err)
    assert f"{MAX_INPUT_BYTES + 1} bytes; an input file holds at most" in err


# -- sizes checked before anything is allocated --

def test_walk_of_a_huge_buffer_names_the_size_and_the_limit(tmp_path, capsys):
    path = tmp_path / "huge.json"
    path.write_text(json.dumps(HUGE))
    for form in ("runs", "json"):
        status, out, err = main(capsys, "walk", path, "--format", form)
        one_line_error(status, err)
        assert out == ""
        assert (f"stream of 100000000000 elements; walk computes at most "
                f"{cli.MAX_WALK_ELEMENTS} per port") in err


def test_draw_of_a_huge_buffer_names_the_size_and_the_limit(tmp_path, capsys):
    path = tmp_path / "huge.json"
    path.write_text(json.dumps(HUGE))
    status, _, err = main(capsys, "draw", path, "-o", tmp_path / "h.png")
    one_line_error(status, err)
    assert f"buffer cells=100000000000: a picture holds at most {MAX_CELLS} cells" in err
    assert not (tmp_path / "h.png").exists()


@pytest.mark.parametrize("kind", ["memtile", "tile"])
def test_lowering_a_huge_buffer_stops_early(kind):
    with pytest.raises(LoweringError, match=f"unrolls to more than {MAX_PIECES} pieces"):
        lower(PortProgram.from_json(HUGE), kind, "read", "int32", 0)


def test_draw_into_a_missing_folder_is_an_error_not_a_mkdir(tmp_path, capsys):
    path = tmp_path / "port.json"
    path.write_text(json.dumps(SMALL))
    target = tmp_path / "missing" / "x.svg"
    status, _, err = main(capsys, "draw", path, "-o", target)
    one_line_error(status, err)
    assert f"the folder {target.parent} does not exist (it is not created)" in err
    assert not target.parent.exists()


def test_a_large_buffer_is_drawn_as_pixels(tmp_path, capsys):
    # 1000 x 1000 cells: past the one-rectangle-per-cell size, painted as a raster.
    path = tmp_path / "big.json"
    path.write_text(json.dumps({
        "buffer_dimension": [1000, 1000], "tiling_dimension": [100, 100],
        "tile_traversal": [{"dimension": 0, "stride": 100, "wrap": 10},
                           {"dimension": 1, "stride": 100, "wrap": 10}]}))
    for suffix in (".png", ".svg"):
        status, out, _ = main(capsys, "draw", path, "-o", tmp_path / f"big{suffix}")
        assert status == 0
        assert "1000000 elements, 100 tiles" in out
    assert '<image x="28" y="28" width="1000" height="1000"' in (tmp_path / "big.svg").read_text()


# -- a closed pipe --

def test_output_into_a_closed_pipe_is_quiet(tmp_path):
    path = tmp_path / "long.json"
    path.write_text(json.dumps({"buffer_dimension": [1 << 21], "tiling_dimension": [1 << 21]}))
    reader = subprocess.Popen([sys.executable, "-m", "aiedma", "walk", str(path), "--format",
                               "json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    reader.stdout.read(10)
    reader.stdout.close()   # as `| head -c 10` does
    err = reader.stderr.read().decode()
    assert reader.wait() == cli.EXIT_BROKEN_PIPE
    assert err == ""


# -- register images that break rules: every field shown, each rule marked --

def broken_memtile_words() -> list[int]:
    words = BufferDescriptor("memtile", buffer_length=8, d0_wrap=2, iteration_wrap=2).encode()
    words[6] |= 5 << 23   # iteration_current 5, above its wrap of 2: a note, not a problem
    words[5] |= 1 << 31   # d2_zero_after on dimensions that never wrap
    return words


def test_decode_image_collects_every_broken_rule():
    image = decode_image("memtile", broken_memtile_words())
    assert image.values["iteration_current"] == 5
    assert [str(p).split(":")[0] for p in image.problems] == [
        "d2_zero_after=8", "d2_zero_after=8"]
    assert [n.split(":")[0] for n in image.notes] == ["iteration_current=5"]
    with pytest.raises(BDError, match=r"^d2_zero_after=8: must be 0 when d1_wrap is 0"):
        BufferDescriptor.decode("memtile", broken_memtile_words())


def test_decode_image_marks_a_set_reserved_bit():
    words = BufferDescriptor("shim", buffer_length=4).encode()
    words[2] |= 1 << 31                      # a reserved bit of a shim BD's word 2
    image = decode_image("shim", words)
    assert [str(p).split(";")[0] for p in image.problems] == [
        f"words[2]=0x{words[2]:08X}: reserved bit(s) 31 of word 2 are set"]
    assert image.values["buffer_length"] == 4


def test_decode_command_shows_every_field_and_marks_each_broken_rule(capsys):
    words = [f"0x{w:08X}" for w in broken_memtile_words()]
    status, out, err = main(capsys, "decode", "--kind", "memtile", *words)
    assert status == cli.EXIT_BROKEN_RULES and err == ""
    lines = out.splitlines()
    assert len([line for line in lines if not line.lstrip().startswith(("!", "(", "~"))]) == 32
    below = lines[lines.index(next(line for line in lines
                                   if line.startswith("d2_zero_after"))) + 1]
    assert below.strip() == "! must be 0 when d1_wrap is 0 (padding around a dimension that " \
                            "never wraps is illegal)"
    assert lines[-2].startswith("~ iteration_current=5: not below iteration_wrap=2; ")
    assert lines[-1] == "! 2 broken rule(s): not a BD the hardware would run"


def test_decode_command_of_a_legal_image_exits_0(capsys):
    words = BufferDescriptor("tile", buffer_length=4).encode()
    status, out, _ = main(capsys, "decode", "--kind", "tile", *map(str, words))
    assert status == 0 and "!" not in out


# -- fuzz: random bytes and truncated inputs to every file command --

def _inputs() -> list[bytes]:
    texts = [path.read_bytes() for path in sorted(EXAMPLES.rglob("*")) if path.is_file()]
    return [*texts, json.dumps(SMALL).encode(), json.dumps(HUGE).encode()]


COMMANDS = (["walk"], ["walk", "--format", "json"], ["bd", "--kind", "memtile"],
            ["bd", "--format", "writes"], ["draw", "-o", "OUT.svg"],
            ["replay", "--kind", "memtile"], ["run", "--max-cycles", "20000"])


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_fuzz_every_file_command_exits_0_1_or_2_with_one_line(tmp_path, capsys, data):
    source = data.draw(st.sampled_from(_inputs()))
    how = data.draw(st.sampled_from(["truncate", "bytes", "flip"]))
    if how == "truncate":
        text = source[:data.draw(st.integers(0, len(source)))]
    elif how == "bytes":
        text = data.draw(st.binary(max_size=200))
    else:
        at = data.draw(st.integers(0, max(len(source) - 1, 0)))
        text = source[:at] + bytes([data.draw(st.integers(0, 255))]) + source[at + 1:]
    suffix = data.draw(st.sampled_from([".h", ".json", ".txt", ".mlir"]))
    path = tmp_path / f"input{suffix}"
    path.write_bytes(text)
    command = data.draw(st.sampled_from(COMMANDS))
    command = [a.replace("OUT", str(tmp_path / "out")) for a in command]
    status = cli.main([command[0], str(path), *command[1:]])   # an exception fails the test
    _, err = capsys.readouterr()
    assert status in (0, 1, 2)
    if status == 2:
        lines = err.split("\n")[:-1]
        assert all(": warning: " in line for line in lines[:-1]) and ": error: " in lines[-1], err
