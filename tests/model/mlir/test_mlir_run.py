"""mlir-aie designs run on the system model: outputs worked out by hand, and a hang named."""

from pathlib import Path

import numpy as np
import pytest

from aiedma.model.mlir import MlirError, read_mlir
from aiedma.model.mlir.run import host_ramp, run_design

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "mlir"


def run(name: str, **inputs):
    design = read_mlir((EXAMPLES / name).read_text())
    assert design.warnings == []
    return run_design(design, inputs)


def transposed(values) -> list[int]:
    """Column by column of an 8x8 row-major block."""
    return [values[8 * row + column] for column in range(8) for row in range(8)]


def test_loopback_returns_the_block_transposed():
    result = run("loopback.mlir")
    assert result.hang is None and result.unfinished == []
    assert result.written == ["out"]
    assert result.host["in"].tolist() == list(range(64))          # the default ramp
    assert result.host["out"].tolist() == transposed(list(range(64)))
    assert result.report.words["shim(0,0).s2mm0"] == 64


def test_loopback_takes_the_callers_input():
    data = (np.arange(64, dtype=np.uint32) * 3 + 7)
    result = run("loopback.mlir", **{"in": data})
    assert result.host["out"].tolist() == transposed(data.tolist())


def test_a_lock_never_released_hangs_and_names_every_waiting_channel():
    result = run("hang.mlir")
    assert result.hang is not None
    assert result.unfinished == ["shim(0,0).s2mm0"]
    waits = result.hang.waits
    assert sorted(waits) == ["memtile(0,1).mm2s0", "memtile(0,1).s2mm0", "shim(0,0).s2mm0"]
    lock = waits["memtile(0,1).mm2s0"].lock
    # the memory tile's lock `full` (own lock 1 is ID 65) is 0 and the BD wants >= 1
    assert (lock.lock_id, lock.local_id, lock.value, lock.wanted) == (65, 1, 0, ">= 1")
    assert waits["memtile(0,1).mm2s0"].bd == 1
    assert waits["shim(0,0).s2mm0"].cause == "empty"
    assert result.host["out"].tolist() == [0] * 64


def test_the_chain_through_a_core_tiles_ping_pong_ends_when_the_host_is_done():
    result = run("passthrough.mlir")
    assert result.hang is None
    # 64 words from the host: the memory tile takes them all, the core tile's two
    # buffers (in_prod starts at 2) take 32 each
    assert result.report.words["tile(0,2).s2mm0"] == 64
    assert result.report.words["memtile(0,1).mm2s0"] == 64


def test_a_bd_that_breaks_a_rule_is_not_run():
    text = (EXAMPLES / "loopback.mlir").read_text().replace(
        "<size = 8, stride = 1>, <size = 8, stride = 8>",
        "<size = 8, stride = 1>, <size = 2000, stride = 8>")
    with pytest.raises(MlirError, match=r"d0_wrap=2000: must be in 0\.\.1023"):
        run_design(read_mlir(text))


def test_the_ramp_packs_narrow_elements_little_endian():
    design = read_mlir("aie.device(npu1) {\n aiex.runtime_sequence(%a: memref<6xi8>) {\n }\n}\n")
    (host,) = design.host
    assert host_ramp(host).tolist() == [0x03020100, 0x00000504]


def test_a_core_follows_its_locks_and_copies_each_block_to_its_output():
    design = read_mlir((EXAMPLES / "core.mlir").read_text())
    (program,) = design.cores
    assert program.tile == "tile_0_2"
    result = run_design(design)
    assert result.hang is None
    assert result.copies == {"core(0,2)": 4}             # 2 passes over ping and pong
    assert result.host["out"].tolist() == list(range(64))  # each block copied through


def test_a_core_that_stops_early_leaves_the_host_waiting_and_names_the_lock():
    text = (EXAMPLES / "core.mlir").read_text().replace(
        "%c4 = arith.constant 4 : index", "%c4 = arith.constant 2 : index")
    result = run_design(read_mlir(text))
    assert result.copies == {"core(0,2)": 2}
    assert result.unfinished == ["shim(0,0).s2mm0"]
    assert result.host["out"].tolist() == [*range(32), *[0] * 32]
    out = result.hang.waits["tile(0,2).mm2s0"].lock
    # out_cons (lock 3) stays 0: nobody computes a third block
    assert (out.lock_id, out.value, out.wanted) == (3, 0, ">= 1")
    assert "core(0,2)" not in result.hang.waits            # it finished its loop


def test_core_loops_take_their_bounds_from_constants():
    design = read_mlir((EXAMPLES / "core.mlir").read_text())
    (loop,) = design.cores[0].body
    assert loop.count == 2 and len(loop.body) == 10
    assert [s.action for s in loop.body[:5]] == ["acquire", "acquire", "copy", "release",
                                                 "release"]
    assert (loop.body[2].source, loop.body[2].dest) == ("in_ping", "out_buff")


def test_the_runtime_sequence_reuses_bd_numbers_after_a_wait():
    # Two rounds through loopback.mlir's memory tile with the same BD numbers: the
    # second round's BDs are written only when the sequence reaches them.
    text = (EXAMPLES / "loopback.mlir").read_text()
    text = text.replace("memref<64xi32>, %out: memref<64xi32>",
                        "memref<128xi32>, %out: memref<128xi32>")
    first = text[text.index("      aiex.npu.dma_memcpy_nd(%in"):
                 text.index("      aiex.npu.dma_wait")]
    rounds = [first.replace("[0, 0, 0, 0]", f"[0, 0, 0, {k * 64}]") for k in range(2)]
    wait = "      aiex.npu.dma_wait {symbol = @out0}\n"
    text = text.replace(first + wait, rounds[0] + wait + rounds[1] + wait)
    text = text.replace(": memref<64xi32>\n", ": memref<128xi32>\n")
    design = read_mlir(text)
    assert design.warnings == []
    assert [e for e, _ in design.schedule] == ["start", "start", "wait"] * 2
    result = run_design(design)
    assert result.hang is None
    assert result.host["out"].tolist() == [*transposed(list(range(64))),
                                           *transposed(list(range(64, 128)))]
