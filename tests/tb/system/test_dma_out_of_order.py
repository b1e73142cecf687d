"""Out-of-order S2MM: the whole RTL DMA against the model on every cycle its outputs show
(words, memory, tokens, locks, the status flags), on random out-of-order programs and on
a header that names a BD the channel cannot run."""

import numpy as np
import pytest

from aiedma.model.arch.kinds import BD_REGISTER_STRIDE, DMA_KINDS
from aiedma.model.arch.registers import CONTROL_FIELDS, control_address, start_queue_address
from aiedma.model.bd.descriptor import BufferDescriptor
from aiedma.model.bd.packet import packet_header, parse_packet_header
from aiedma.model.bd.task import Task
from aiedma.model.system.stream import Beat
from aiedma.tb.system.dma_check import run_dma
from aiedma.tb.system.random_out_of_order import random_out_of_order_program

KINDS = ["tile", "memtile"]
OUT_OF_ORDER = 1 << 3


def own(kind):
    return DMA_KINDS[kind].memory_window("own").start


def writes_of(kind, table, tasks, control=OUT_OF_ORDER):
    base = DMA_KINDS[kind].bd_register_base
    return [*((base + BD_REGISTER_STRIDE * n + 4 * w, word)
              for n, bd in table.items() for w, word in enumerate(bd.encode())),
            (control_address(kind, "s2mm", 0), control),
            *((start_queue_address(kind, "s2mm", 0), t.encode()) for t in tasks)]


def packet(bd_id, values):
    return [Beat(packet_header(3, 0, 1, 2, out_of_order_bd_id=bd_id)),
            *(Beat(v, i == len(values) - 1) for i, v in enumerate(values))]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("seed", [0, 1, *(pytest.param(s, marks=pytest.mark.long)
                                          for s in range(2, 6))])
def test_random_out_of_order_programs_rtl_against_the_model(kind, seed):
    program = random_out_of_order_program(seed, kind)
    result = run_dma(kind, program.writes, memory=program.memory, inputs=program.inputs,
                     simulator="amaranth", reuse=True)
    assert result.flags["s2mm0"]["error_bd_unavailable"] == 0


@pytest.mark.parametrize("kind", KINDS)
def test_packets_land_by_their_header_and_the_mm2s_header_carries_its_bd_out_of_order_id(kind):
    table = {4: BufferDescriptor(kind, base_address=own(kind), buffer_length=2, valid_bd=1),
             9: BufferDescriptor(kind, base_address=own(kind) + 8, buffer_length=3, valid_bd=1),
             12: BufferDescriptor(kind, base_address=own(kind) + 40, buffer_length=2,
                                  enable_packet=1, packet_id=7, out_of_order_bd_id=33,
                                  valid_bd=1)}
    writes = [*writes_of(kind, table, [Task(0, 3, True)]),
              (start_queue_address(kind, "mm2s", 0), Task(12).encode())]
    words = packet(9, [1, 2, 3]) + packet(4, [4, 5]) + packet(9, [6, 7, 8])
    memory = np.zeros(48, dtype=np.int64)
    memory[40:42] = [70, 71]
    result = run_dma(kind, writes, memory=memory, inputs={"s2mm0": words},
                     simulator="amaranth", reuse=True)
    assert result.memory[0:2].tolist() == [4, 5]
    assert result.memory[8:11].tolist() == [6, 7, 8]       # the last packet to BD 9 wins
    assert len(result.tokens["s2mm0"]) == 1
    header = parse_packet_header(result.outputs["mm2s0"][0][0])
    assert (header.packet_id, header.out_of_order_bd_id) == (7, 33)


@pytest.mark.parametrize(("kind", "named"), [("tile", 20), ("memtile", 30), ("memtile", 50)])
def test_a_header_naming_a_bd_not_the_channels_sets_bd_unavailable_in_the_rtl_too(kind, named):
    table = {1: BufferDescriptor(kind, base_address=own(kind), buffer_length=2, valid_bd=1)}
    words = packet(1, [3, 4]) + packet(named, [8])
    result = run_dma(kind, writes_of(kind, table, [Task(0, 2)]),
                     memory=np.zeros(4, dtype=np.int64), inputs={"s2mm0": words},
                     simulator="amaranth", reuse=True)
    assert result.memory[:2].tolist() == [3, 4]
    assert result.flags["s2mm0"] == {"error_fot_length_exceeded": 0, "error_fot_bds_per_task": 0,
                                     "error_bd_unavailable": 1, "error_bd_invalid": 0}
    assert result.tokens["s2mm0"] == []


def test_a_memory_tile_odd_channel_takes_bds_24_to_47_only():
    kind = "memtile"
    table = {30: BufferDescriptor(kind, base_address=own(kind), buffer_length=2, valid_bd=1),
             3: BufferDescriptor(kind, base_address=own(kind) + 4, buffer_length=2, valid_bd=1)}
    base = DMA_KINDS[kind].bd_register_base
    writes = [*((base + BD_REGISTER_STRIDE * n + 4 * w, word)
                for n, bd in table.items() for w, word in enumerate(bd.encode())),
              (control_address(kind, "s2mm", 1), OUT_OF_ORDER),
              (start_queue_address(kind, "s2mm", 1), Task(24, 2).encode())]
    words = packet(30, [1, 2]) + packet(3, [5])
    result = run_dma(kind, writes, memory=np.zeros(8, dtype=np.int64), inputs={"s2mm1": words},
                     simulator="amaranth", reuse=True)
    assert result.memory[:6].tolist() == [1, 2, 0, 0, 0, 0]    # BD 3 is S2MM 0's half
    assert result.flags["s2mm1"]["error_bd_unavailable"] == 1


def test_a_shim_s2mm_runs_out_of_order_too():
    kind = "shim"
    table = {5: BufferDescriptor(kind, base_address=0, buffer_length=3, valid_bd=1),
             2: BufferDescriptor(kind, base_address=8, buffer_length=1, valid_bd=1)}
    words = packet(2, [9]) + packet(5, [1, 2, 3]) + packet(2, [7])
    result = run_dma(kind, writes_of(kind, table, [Task(0, 3, True)]),
                     memory=np.zeros(12, dtype=np.int64), inputs={"s2mm0": words},
                     simulator="amaranth", reuse=True)
    assert result.memory.tolist() == [1, 2, 3, 0, 0, 0, 0, 0, 7, 0, 0, 0]
    assert len(result.tokens["s2mm0"]) == 1


@pytest.mark.parametrize("kind", KINDS)
def test_the_mode_is_read_as_a_task_starts_so_clearing_it_mid_task_waits_for_its_end(kind):
    table = {2: BufferDescriptor(kind, base_address=own(kind), buffer_length=2, valid_bd=1),
             5: BufferDescriptor(kind, base_address=own(kind) + 8, buffer_length=2,
                                 enable_packet=1, valid_bd=1)}
    words = packet(2, [1, 2]) + packet(2, [3, 4]) + packet(40, [5, 6])   # last: in order
    timed = [(4, control_address(kind, "s2mm", 0), 0),
             (5, start_queue_address(kind, "s2mm", 0), Task(5).encode())]
    result = run_dma(kind, writes_of(kind, table, [Task(0, 2, True)]),
                     memory=np.zeros(12, dtype=np.int64), inputs={"s2mm0": words},
                     simulator="amaranth", timed_writes=timed, reuse=True)
    assert result.memory[:2].tolist() == [3, 4] and result.memory[8:10].tolist() == [5, 6]
    assert len(result.tokens["s2mm0"]) == 1


@pytest.mark.parametrize("kind", KINDS)
def test_after_an_unavailable_bd_a_channel_reset_lets_the_next_task_run(kind):
    table = {1: BufferDescriptor(kind, base_address=own(kind), buffer_length=2, valid_bd=1)}
    words = packet(1, [3, 4]) + packet(20 if kind == "tile" else 30, []) + packet(1, [5, 6])
    control = control_address(kind, "s2mm", 0)
    reset = 1 << CONTROL_FIELDS[kind, "s2mm"]["reset"][0]
    timed = [(40, control, OUT_OF_ORDER | reset), (41, control, OUT_OF_ORDER),
             (42, start_queue_address(kind, "s2mm", 0), Task(0, 1, True).encode())]
    result = run_dma(kind, writes_of(kind, table, [Task(0, 2, True)]),
                     memory=np.zeros(4, dtype=np.int64), inputs={"s2mm0": words},
                     simulator="amaranth", timed_writes=timed, reuse=True)
    assert result.memory[:2].tolist() == [5, 6]
    assert result.flags["s2mm0"]["error_bd_unavailable"] == 0      # cleared by the reset
    assert len(result.tokens["s2mm0"]) == 1                        # the task after it
