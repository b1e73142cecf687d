"""aiedma walk and bd of mlir-aie files: what they print, and bad input in one line."""

import json
from pathlib import Path

import numpy as np
import pytest

from aiedma import cli

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "mlir"


def main(capsys, *args) -> tuple[int, str, str]:
    status = cli.main([str(a) for a in args])
    out, err = capsys.readouterr()
    return status, out, err


def test_walk_prints_each_chain_in_words_and_each_bd_in_elements(capsys):
    status, out, err = main(capsys, "walk", EXAMPLES / "padding.mlir")
    assert (status, err) == (0, "")
    lines = out.splitlines()
    assert lines[0] == "padding.mlir: npu1_1col, 2 BDs, 2 chains"
    assert "tile(0,1) memtile MM2S 1 (aie.dma_start at 16:7): BD 24" in lines
    # 13 words of the 32-bit row, two zero words before, one after, at word 0x20000 + 1024
    assert "  words: 16, 3 zero: Z x2, 132096..132108, Z x1" in lines
    assert "    Z x2, 0..12, Z x1" in lines


def test_walk_shows_the_repeat_of_dma_memcpy_nd(capsys):
    status, out, _ = main(capsys, "walk", EXAMPLES / "passthrough.mlir")
    assert status == 0
    at = out.splitlines().index("tile(0,0) shim MM2S 0 (aiex.npu.dma_memcpy_nd at 54:7): "
                                "BD 1, repeat 2")
    assert out.splitlines()[at + 1] == "  words: 64, 0 zero: 0..63"


def test_bd_prints_fields_and_register_words(capsys):
    status, out, _ = main(capsys, "bd", EXAMPLES / "padding.mlir")
    assert status == 0
    assert "  BD 24 words: 0x00000010 0x08020400 0x001A0000 0x00000000 0x00000000 " \
           "0x00020000" in out.splitlines()


BROKEN = """module {
  aie.device(npu1_1col) {
    %t = aie.tile(0, 2)
    %b = aie.buffer(%t) {address = 0 : i32} : memref<64xi8>
    %m = aie.mem(%t) {
      %0 = aie.dma_start(MM2S, 0, ^bb1, ^bb2)
    ^bb1:
      aie.dma_bd(%b : memref<64xi8>, 0, 32, [<size = 4, stride = 16>, <size = 8, stride = 2>])
      aie.next_bd ^bb3
    ^bb3:
      aie.dma_bd(%b : memref<64xi8>, 0, 64) {bd_id = 5 : i32} ) extra
      aie.end
    ^bb2:
      aie.end
    }
  }
}
"""


def test_bd_marks_each_broken_rule_warns_at_line_column_and_exits_1(tmp_path, capsys):
    path = tmp_path / "broken.mlir"
    path.write_text(BROKEN)
    status, out, err = main(capsys, "bd", path)
    assert status == 1
    assert err.splitlines() == [
        "aiedma bd: warning: broken.mlir:11:63: not read: cannot read ')' in "
        "'aie.dma_bd(%b : memref<64xi8>, 0, 64) {bd_id = 5 : i32} ) ex'"]
    assert ("  ! BD 0 (aie.dma_bd at 8:7): strides[1]=2: the innermost stride of 8-bit "
            "elements must be 1: the DMA moves whole 32-bit words, so it cannot skip parts "
            "of a word") in out.splitlines()
    assert out.splitlines()[-1] == ("! 1 broken rule(s): not BDs the hardware would run as "
                                    "written")


@pytest.mark.parametrize("text", [b"", b"\x00\x01", b"module {\n", b"}}}}", b"((((" * 3000,
                                  b"aie.device(npu1) {\n %t = aie.tile(0)\n}\n"])
def test_bad_mlir_is_one_line_and_exit_2(tmp_path, capsys, text):
    path = tmp_path / "bad.mlir"
    path.write_bytes(text)
    for command in ("walk", "bd"):
        status, out, err = main(capsys, command, path)
        lines = err.splitlines()
        assert status == 2 and out == "", err
        assert all(": warning: " in line for line in lines[:-1]), err
        assert ": error: " in lines[-1] and "Traceback" not in err


def test_an_option_an_mlir_file_does_not_take_is_refused(capsys):
    status, _, err = main(capsys, "walk", "--format", "json", EXAMPLES / "padding.mlir")
    assert status == 2
    assert err == ("aiedma walk: error: --format=json: not for an .mlir file (its BDs, "
                   "tiles, buffers and numbers come from the file)\n")


def test_run_prints_the_outputs_and_the_report(capsys):
    status, out, err = main(capsys, "run", EXAMPLES / "loopback.mlir")
    assert (status, err) == (0, "")
    lines = out.splitlines()
    assert lines[0].startswith("loopback.mlir: npu1_1col, system model, ") and \
        lines[0].endswith(" cycles: every task done")
    assert lines[1] == "in (64 x i32, input): 0..63"
    assert lines[2].startswith("out (64 x i32, output): 0, 8, 16, 24, 32, 40, 48, 56, 1, 9,")


def test_run_of_a_hang_names_each_waiting_channel_and_its_lock_and_exits_1(capsys):
    status, out, _ = main(capsys, "run", EXAMPLES / "hang.mlir")
    assert status == 1
    lines = out.splitlines()
    assert lines[0].startswith("hang.mlir: npu1_1col, system model: HANGS at cycle ")
    assert lines[0].endswith("not done: shim(0,0).s2mm0; every waiting channel:")
    assert ("  memtile(0,1).mm2s0: BD 1: waits on lock 65 (memtile(0,1) locks lock 1) = 0, "
            "wants >= 1 [%full, init 0]") in lines


def test_run_of_a_hang_names_a_streams_end_that_has_no_task(tmp_path, capsys):
    """The memory tile's S2MM program left out of loopback.mlir: the shim waits for
    output space, and the note says the channel at the other end has no task."""
    text = (EXAMPLES / "loopback.mlir").read_text()
    path = tmp_path / "taskless.mlir"
    path.write_text(text.replace("aie.dma_start(S2MM, 0, ^bb1", "aie.dma_start(S2MM, 3, ^bb9"))
    status, out, _ = main(capsys, "run", path)
    assert status == 1
    assert ("  note: memtile(0,1).s2mm0, the other end of shim(0,0).mm2s0's stream, has no "
            "task in the design") in out.splitlines()


def test_a_file_of_object_fifos_alone_counts_them_as_not_read(tmp_path, capsys):
    path = tmp_path / "fifo.mlir"
    path.write_text("aie.device(xcvc1902) {\n  %t = aie.tile(1, 2)\n  aie.objectfifo @of "
                    "(%t, {%t}, 2 : i32) : !aie.objectfifo<memref<8xi32>>\n}\n")
    status, _, err = main(capsys, "run", path)
    assert status == 2
    assert "fifo.mlir:3:3: aie.objectfifo: not read: lower it first (aie-opt " in err
    assert ("error: fifo.mlir: no BD could be read (1 construct(s) not read); give an "
            "mlir-aie file") in err


def test_run_of_a_design_that_starts_nothing_says_no_word_moved(tmp_path, capsys):
    text = (EXAMPLES / "loopback.mlir").read_text()
    start = text.index("aiex.runtime_sequence")
    path = tmp_path / "idle.mlir"
    path.write_text(text[:start] + "aiex.runtime_sequence(%in: memref<64xi32>) {\n    }\n"
                    + text[text.index("\n  }\n}", start):])
    status, out, _ = main(capsys, "run", path)
    assert status == 0
    assert out.splitlines()[1].startswith("note: no word moved: the run ends when every "
                                          "task that ends is done, and none was started")


def test_run_takes_a_host_buffer_from_npy(tmp_path, capsys):
    path = tmp_path / "in.npy"
    np.save(path, np.arange(100, 164, dtype=np.int32))
    status, out, _ = main(capsys, "run", EXAMPLES / "loopback.mlir", "--input", f"in={path}")
    assert status == 0
    assert out.splitlines()[2].startswith("out (64 x i32, output): 100, 108, 116,")


@pytest.mark.parametrize(("args", "message"), [
    (["--input", "nope=x.npy"], "--input=nope=x.npy: the runtime sequence has no argument "
                                "'nope' (it has in, out)"),
    (["--input", "in=missing.npy"], "--input=in=missing.npy: not a NumPy .npy file"),
])
def test_run_input_errors_are_one_line(capsys, args, message):
    status, _, err = main(capsys, "run", EXAMPLES / "loopback.mlir", *args)
    assert status == 2 and err.count("\n") == 1 and message in err


def test_run_of_a_file_that_is_not_mlir_is_one_line(tmp_path, capsys):
    path = tmp_path / "x.json"
    path.write_text("{}")
    status, _, err = main(capsys, "run", path)
    assert status == 2 and "aiedma run takes an mlir-aie file (.mlir)" in err


def test_run_of_a_truncated_design_is_one_line(tmp_path, capsys):
    path = tmp_path / "cut.mlir"
    path.write_text((EXAMPLES / "loopback.mlir").read_text()[:400])
    status, _, err = main(capsys, "run", path)
    lines = err.splitlines()
    assert status == 2 and ": error: " in lines[-1] and "Traceback" not in err


def test_bd_format_mlir_writes_a_port_that_walks_back_to_its_stream(tmp_path, capsys):
    port = tmp_path / "pad.json"
    port.write_text('{"buffer_dimension": [13], "tiling_dimension": [16], "offset": [-2]}')
    status, text, _ = main(capsys, "bd", "--kind", "memtile", "--format", "mlir", port)
    assert status == 0
    assert ("      aie.dma_bd(%buf : memref<13xi32>, 0, 16, [<size = 13, stride = 1>], "
            "[<const_pad_before = 2, const_pad_after = 1>]) {bd_id = 0 : i32}"
            ) in text.splitlines()
    written = tmp_path / "pad.mlir"
    written.write_text(text)
    status, out, err = main(capsys, "walk", written)
    assert (status, err) == (0, "")
    assert "    Z x2, 0..12, Z x1" in out.splitlines()


def test_walk_of_an_access_pattern_lists_its_elements_outermost_slowest(tmp_path, capsys):
    path = tmp_path / "tap.json"
    path.write_text('{"offset": 4, "sizes": [2, 3, 4], "strides": [64, 16, 1]}')
    status, out, _ = main(capsys, "walk", path)
    assert status == 0
    assert out.splitlines() == ["tap.json: access pattern, 24 elements",
                                "  4..7, 20..23, 36..39, 68..71, 84..87, 100..103"]


def test_bd_of_an_access_pattern_converts_elements_to_words(tmp_path, capsys):
    path = tmp_path / "tap.json"
    path.write_text('{"offset": 4, "sizes": [2, 3, 4], "strides": [64, 16, 1]}')
    status, out, _ = main(capsys, "bd", "--kind", "tile", "--dtype", "int8", path)
    assert status == 0
    rows = dict(line.split() for line in out.splitlines()[2:8])
    # 8-bit: 4 elements are 1 word; offset 4 is word 1; strides 16 and 64 are 4 and 16 words
    assert rows == {"base_address": "1", "buffer_length": "6", "d1_stepsize": "4",
                    "d1_wrap": "3", "d0_wrap": "1", "d2_stepsize": "16"}


def test_an_access_pattern_the_dma_cannot_do_is_named(tmp_path, capsys):
    path = tmp_path / "tap.json"
    path.write_text('{"sizes": [4, 8], "strides": [16, 2]}')
    status, out, _ = main(capsys, "bd", "--kind", "shim", "--dtype", "int16", path)
    assert status == 1
    assert out.splitlines()[-1].startswith("! strides[1]=2: the innermost stride of 16-bit "
                                           "elements must be 1")


@pytest.mark.parametrize("text", ['{"sizes": [2], "strides": [1, 2]}',
                                  '{"sizes": [true], "strides": [1]}',
                                  '{"offset": 99999999999999999999, "sizes": [1], "strides": [1]}'])
def test_a_broken_access_pattern_is_one_line(tmp_path, capsys, text):
    path = tmp_path / "tap.json"
    path.write_text(text)
    status, _, err = main(capsys, "walk", path)
    assert status == 2 and err.count("\n") == 1 and "Traceback" not in err


def test_bd_format_tap_writes_what_walk_reads_back(tmp_path, capsys):
    header = Path(__file__).resolve().parents[2] / "examples" / "graph.h"
    status, out, err = main(capsys, "bd", header, "--port", "mtx.out[1]", "--format", "tap")
    assert (status, err) == (0, "")
    assert json.loads(out) == [{"offset": 4, "sizes": [2, 6, 3], "strides": [3, 10, 1]}]
    taps = tmp_path / "taps.json"
    taps.write_text(out)
    _, walked, _ = main(capsys, "walk", taps)
    _, port, _ = main(capsys, "walk", header, "--port", "mtx.out[1]")
    assert walked.splitlines()[1] == port.splitlines()[1]   # the same element stream
    status, _, err = main(capsys, "bd", "--kind", "tile", taps)
    assert status == 0, err


def test_bd_format_tap_of_a_padded_port_names_the_port_and_its_padding(tmp_path, capsys):
    path = tmp_path / "pad.json"
    path.write_text('{"buffer_dimension": [13], "tiling_dimension": [16], "offset": [-2]}')
    status, out, err = main(capsys, "bd", "--kind", "memtile", "--format", "tap", path)
    assert (status, out) == (2, "") and err.count("\n") == 1
    assert err == ("aiedma bd: error: pad.json: --format tap: BD 0 d0_zero_before=2, BD 0 "
                   "d0_zero_after=1: an access pattern (IRON tap) has no zero padding; write "
                   "this port as --format mlir, json or table\n")


def test_bd_of_several_access_patterns_is_one_line(tmp_path, capsys):
    path = tmp_path / "taps.json"
    path.write_text('[{"sizes": [4], "strides": [1]}, {"offset": 8, "sizes": [4], '
                    '"strides": [1]}]')
    status, out, _ = main(capsys, "walk", path)
    assert status == 0 and out.splitlines() == ["taps.json: 2 access patterns, 8 elements",
                                                "  0..3, 8..11"]
    status, _, err = main(capsys, "bd", "--kind", "tile", path)
    assert status == 2 and err.count("\n") == 1 and "holds 2 access patterns" in err
