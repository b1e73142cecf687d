"""The whole shim DMA on handshake memory ports (hdl/handshake.py) against the model: random
stream programs on a memory that refuses requests and answers late, under stream
backpressure; every word, the memory, the tokens and the registers after the run are the
model's. A bus error and a window stop the channel with error_dm_access_to_unavailable."""

import numpy as np
import pytest

from aiedma.model.arch.registers import STATUS_FIELDS, start_queue_address, status_address
from aiedma.model.bd.descriptor import BufferDescriptor
from aiedma.model.bd.task import Task
from aiedma.model.system.stream import Beat
from aiedma.tb.regress.axi_dma_runner import compare_run, expected_run, outcome_registers
from aiedma.tb.system.dma_check import run_dma
from aiedma.tb.system.random_programs import WritesProgram, bd_table_writes
from aiedma.tb.system.stream_programs import random_stream_program
from aiedma.tb.system.waiting_memory import run_on_waiting_memory


@pytest.mark.parametrize(("seed", "latency", "refuse", "jitter", "stall"), [
    (1, 1, 0.0, 0, 0.0), (3, 20, 0.2, 8, 0.2),
    *(pytest.param(*case, marks=pytest.mark.long)
      for case in ((2, 5, 0.3, 3, 0.3), (4, 12, 0.5, 2, 0.5)))])
def test_shim_programs_on_a_waiting_memory_end_as_the_model(seed, latency, refuse, jitter,
                                                             stall):
    program = random_stream_program(seed, "shim")
    registers = outcome_registers("shim", program.writes)
    got = run_on_waiting_memory(program, registers, latency=latency, refuse=refuse,
                                jitter=jitter, stall=stall, seed=seed)
    assert not got["hang"], program.description
    assert compare_run(expected_run(program), got, timed=False) == [], program.description


def test_short_bds_far_from_their_memory_keep_their_records():
    """Many short BDs in flight at once through 20 cycles of latency and 32 reads in flight:
    each keeps its record (its TLAST) in the channel's ring until its words have passed."""
    program = random_stream_program(4, "shim")
    got = run_on_waiting_memory(program, outcome_registers("shim", program.writes),
                                outstanding=32, latency=20, seed=4)
    assert compare_run(expected_run(program), got, timed=False) == [], program.description


def test_a_bus_error_on_a_read_sets_the_channels_status_bit_and_nothing_hangs():
    program = random_stream_program(2, "shim")      # MM2S 1 reads 32 words
    status = status_address("shim", "mm2s", 1)
    lsb, _ = STATUS_FIELDS["error_dm_access_to_unavailable"]
    for errors, bit in (({}, 0), ({1: {3}}, 1)):
        got = run_on_waiting_memory(program, [status], latency=3, read_errors=errors, seed=2)
        assert not got["hang"]
        assert got["registers"][0][2] >> lsb & 1 == bit


def test_a_window_on_a_waiting_memory_drops_what_the_model_drops():
    """Window protection on the handshake port: the S2MM regions from word 2048 are outside
    a 2048-word window, so their writes are left out and bit 9 set, as in the model's run
    (run_dma with allowed), whatever the memory's latency."""
    program = random_stream_program(3, "shim")
    window = (0, 2048)
    model = run_dma("shim", program.writes, program.memory, program.inputs, simulator=None,
                    allowed=window)
    statuses = [status_address("shim", d, n) for d in ("mm2s", "s2mm") for n in range(2)]
    got = run_on_waiting_memory(program, statuses, latency=7, refuse=0.3, seed=3,
                                allowed=window)
    assert not got["hang"]
    assert np.array_equal(got["memory"], model.memory)
    assert {name: [[d, int(t)] for d, t in words] for name, words in model.outputs.items()} \
        == got["outputs"]
    lsb, _ = STATUS_FIELDS["error_dm_access_to_unavailable"]
    flagged = [word >> lsb & 1 for _, _, word in got["registers"]]
    assert flagged == [0, 0, 1, 1]        # both S2MM channels write outside it


@pytest.mark.parametrize("direction", ["mm2s", "s2mm"])
def test_each_request_carries_its_bds_bus_attributes(direction):
    """Two chained shim BDs with different burst_length, axcache, axqos, secure_access and
    smid: every request of each carries its own BD's (AxPROT bit 1: non-secure); on S2MM the
    request leaves a cycle after its word, the last word of the first BD included."""
    first = BufferDescriptor("shim", buffer_length=40, base_address=100, burst_length=64,
                             axcache=0b0011, axqos=5, secure_access=0, smid=3, use_next_bd=1,
                             next_bd=1, valid_bd=1)
    second = BufferDescriptor("shim", buffer_length=30, base_address=300, burst_length=256,
                              axcache=0b1111, axqos=12, secure_access=1, smid=9, valid_bd=1)
    writes = [*bd_table_writes("shim", {0: first, 1: second}),
              (start_queue_address("shim", direction, 0), Task(0, 1, False).encode())]
    inputs = {"s2mm0": [Beat(k, False) for k in range(70)]} if direction == "s2mm" else {}
    program = WritesProgram(0, "shim", writes, np.arange(1024), inputs, "two BDs")
    got = run_on_waiting_memory(program, [], latency=6, refuse=0.3, stall=0.3, seed=4)
    requests = got["requests"][f"{direction}0"]
    assert [r[0] for r in requests] == [*range(100, 140), *range(300, 330)]
    assert {r[1:] for r in requests[:40]} == {(16, 0b0011, 0b010, 5, 3)}
    assert {r[1:] for r in requests[40:]} == {(64, 0b1111, 0b000, 12, 9)}
