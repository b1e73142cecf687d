"""aiedma bd --format writes, aiedma replay: a lowered port as register writes, run."""

import json

import numpy as np
import pytest

from aiedma import cli
from aiedma.model.arch.registers import start_queue_address
from aiedma.model.bd.descriptor import BufferDescriptor
from aiedma.model.bd.lower import lower
from aiedma.model.bd.task import Task
from aiedma.model.errors import UndocumentedBehaviourWarning
from aiedma.model.system.registers import writes_document
from aiedma.model.tiling.parameters import TilingParameters

PADDED = {"buffer_dimension": [13], "tiling_dimension": [16], "offset": [-2]}
TILES = {"buffer_dimension": [8, 4], "tiling_dimension": [4, 2],
         "tile_traversal": [{"dimension": 1, "stride": 2, "wrap": 2}]}
OWN_MEMTILE = 0x20000  # the memory tile's own words (0.. is its west neighbour's)


def writes_file(tmp_path, capsys, tiling, *options):
    port = tmp_path / "port.json"
    port.write_text(json.dumps(tiling))
    assert cli.main(["bd", *options, "--format", "writes", str(port)]) == 0
    path = tmp_path / "port.writes"
    path.write_text(capsys.readouterr().out)
    return path


def replay(path, capsys, *options):
    assert cli.main(["replay", "--format", "json", str(path), *options]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("rtl", [None, "amaranth"])
def test_a_read_replays_to_its_word_stream(tmp_path, capsys, rtl):
    path = writes_file(tmp_path, capsys, PADDED, "--kind", "memtile", "--base-address",
                       str(OWN_MEMTILE))
    result = replay(path, capsys, *(["--rtl", rtl] if rtl else []))
    stream = lower(TilingParameters.from_dict(PADDED), "memtile", "read",
                   base_address=OWN_MEMTILE).word_stream()
    # Every memory word holds its own address and padding is 0.
    assert [data for data, _ in result["outputs"]["mm2s0"]] == np.where(
        stream < 0, 0, stream).tolist()
    assert [last for _, last in result["outputs"]["mm2s0"]] == [0] * 15 + [1]
    assert result["cycles"] > stream.size


def test_a_write_replays_into_memory_on_the_rtl(tmp_path, capsys):
    path = writes_file(tmp_path, capsys, TILES, "--kind", "tile", "--direction", "write",
                       "--base-address", "100", "--channel", "1")
    model, rtl = replay(path, capsys), replay(path, capsys, "--rtl", "amaranth")
    assert model == rtl
    stream = lower(TilingParameters.from_dict(TILES), "tile", "write",
                   base_address=100).word_stream()
    # The S2MM receives 0, 1, 2, ...: word k lands at address stream[k], which held its
    # own address (never k here), so the changed words are the written ones.
    assert all(stream[k] != k for k in range(stream.size))
    assert model["changed"] == sorted(set(stream.tolist()))


def test_the_text_report(tmp_path, capsys):
    path = writes_file(tmp_path, capsys, PADDED, "--kind", "memtile", "--base-address",
                       str(OWN_MEMTILE))
    assert cli.main(["replay", str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("port.writes: memtile DMA, 9 writes, ")
    assert lines[0].endswith(" cycles (model)")
    assert lines[1] == "mm2s0: 16 words, 1 with TLAST: 0, 0, 131072..131084, 0"
    assert lines[2] == "locks after the run: all 0"


@pytest.mark.parametrize("rtl", [None, "amaranth"])
def test_a_bd_with_iteration_current_past_its_wrap_replays_with_a_warning(tmp_path, capsys,
                                                                          rtl):
    # mlir-aie writes iteration_current 42 with a wrap of 29: run, never refused
    with pytest.warns(UndocumentedBehaviourWarning):
        bd = BufferDescriptor("tile", base_address=1024, buffer_length=2, iteration_wrap=29,
                              iteration_current=42, iteration_stepsize=3, valid_bd=1)
    writes = [(0x1D000 + 4 * w, word) for w, word in enumerate(bd.encode())]
    writes.append((start_queue_address("tile", "mm2s", 0), Task(0, 2).encode()))
    path = tmp_path / "past.writes"
    path.write_text(json.dumps(writes_document("tile", writes)))
    assert cli.main(["replay", "--format", "json", str(path),
                     *(["--rtl", rtl] if rtl else [])]) == 0
    out, err = capsys.readouterr()
    assert [d for d, _ in json.loads(out)["outputs"]["mm2s0"]] == [1150, 1151, 1024, 1025]
    assert err.count("aiedma replay: warning: iteration_current=42: not below "
                     "iteration_wrap=29") == 1


@pytest.mark.parametrize("text, options, message", [
    ("{", [], "not JSON"),
    ('{"kind": "memtile", "writes": [["0xA0000", "zz"]]}', [],
     "writes[0] value='zz': must be an integer or a hex string (0x...)"),
    ('{"kind": "memtile", "writes": [["0x5", 1]]}', [],
     "address='0x5': write 0: no BD, start-queue, control, status or lock register of a "
     "memtile DMA is there"),
    ('{"kind": "tile", "writes": []}', ["--kind", "memtile"],
     "bad.json programs a tile DMA"),
])
def test_bad_replay_input_is_one_line(tmp_path, capsys, text, options, message):
    path = tmp_path / "bad.json"
    path.write_text(text)
    assert cli.main(["replay", str(path), *options]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err


def test_writes_for_a_channel_of_the_other_half_are_refused(tmp_path, capsys):
    port = tmp_path / "port.json"
    port.write_text(json.dumps(PADDED))
    assert cli.main(["bd", "--kind", "memtile", "--format", "writes", "--channel", "1",
                     str(port)]) == 2
    assert capsys.readouterr().err.strip() == (
        "aiedma bd: error: --format writes: start_bd=0: MM2S channel 1 runs BDs 24-47 "
        "(shared by channels 1/3/5 of both directions)")


@pytest.mark.long   # the shim's whole DMA Verilated: about 30 s on a fresh checkout
def test_a_shim_read_replays_from_external_memory_on_the_rtl(tmp_path, capsys):
    path = writes_file(tmp_path, capsys, TILES, "--kind", "shim", "--base-address", "64",
                       "--channel", "1")
    model, rtl = replay(path, capsys), replay(path, capsys, "--rtl", "verilator")
    assert model == rtl
    stream = lower(TilingParameters.from_dict(TILES), "shim", "read",
                   base_address=64).word_stream()
    assert [data for data, _ in model["outputs"]["mm2s1"]] == stream.tolist()
