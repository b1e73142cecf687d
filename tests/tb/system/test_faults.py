"""Hardware faults on the whole RTL DMA against the model run through its registers: a push
onto a full task queue (task_queue_overflow, the push lost) and a task that loads a BD that
is not valid (error_bd_invalid, the channel stopped until a channel reset). The status
register is read in every cycle no other register access takes, and every read, word,
memory word, token, lock and the cycles of the DMA's error output are compared."""

import numpy as np
import pytest

from aiedma.model.arch.kinds import BD_REGISTER_STRIDE, DMA_KINDS
from aiedma.model.arch.register_map import register_at
from aiedma.model.arch.registers import (
    CONTROL_FIELDS,
    STATUS_FIELDS,
    control_address,
    lock_value_address,
    start_queue_address,
    status_address,
)
from aiedma.model.bd.descriptor import BufferDescriptor
from aiedma.model.bd.task import Task
from aiedma.model.cycle.contract import BD_FETCH_LATENCY
from aiedma.model.system.scheduler import DeadlockError
from aiedma.tb.system.dma_check import run_dma
from aiedma.tb.system.random_faults import FAULT_BITS, FAULT_KINDS, random_fault_program


def bit(word, name):
    lsb, width = STATUS_FIELDS[name]
    return word >> lsb & ((1 << width) - 1)


def own(kind):
    """Word address 0 of the tile's own memory (a shim's external memory)."""
    return 0 if kind == "shim" else DMA_KINDS[kind].memory_window("own").start


def bd_writes(kind, table):
    base = DMA_KINDS[kind].bd_register_base
    return [(base + BD_REGISTER_STRIDE * n + 4 * w, word)
            for n, bd in table.items() for w, word in enumerate(bd.encode())]


def with_status_reads(kind, direction, writes, cycles):
    """``writes`` ({cycle: (address, value)}) and a read of the channel's status register
    in every other cycle up to ``cycles``."""
    status = status_address(kind, direction, 0)
    return [(c, *writes[c]) if c in writes else (c, status, None) for c in range(cycles)]


def reset_then_push(kind, direction, cycle, task):
    """A channel reset (the bit written 1, then 0) from ``cycle``, then ``task`` pushed."""
    control = control_address(kind, direction, 0)
    reset = 1 << CONTROL_FIELDS[kind, direction]["reset"][0]
    return {cycle: (control, reset), cycle + 1: (control, 0),
            cycle + 2: (start_queue_address(kind, direction, 0), task.encode())}


def status_reads(result, kind, direction):
    status = status_address(kind, direction, 0)
    return [(c, w) for c, a, w in result.reads if a == status]


@pytest.mark.parametrize("kind", ["tile", "memtile", "shim"])
def test_a_fifth_push_sets_the_overflow_bit_in_the_rtls_cycle_and_a_one_written_clears_it(kind):
    """MM2S 0 runs tasks of 6 words; a host pushes one a cycle in two bursts and writes a
    1 to task_queue_overflow after each. While the queue is full a task leaves it in a
    cycle a push lands (the RTL counts the queue full then: a model that did not would
    differ in the queue size). Only the stored tasks run."""
    table = {0: BufferDescriptor(kind, base_address=own(kind), buffer_length=6, valid_bd=1)}
    queue = start_queue_address(kind, "mm2s", 0)
    status = status_address(kind, "mm2s", 0)
    overflow = 1 << STATUS_FIELDS["task_queue_overflow"][0]
    token = Task(0, 1, True).encode()
    bursts = [*range(1, 9), *range(15, 29)]
    writes = {c: (queue, token) for c in bursts} | {11: (status, overflow),
                                                     30: (status, overflow)}
    timed = with_status_reads(kind, "mm2s", writes, 120)
    result = run_dma(kind, [*bd_writes(kind, table), (queue, token)],
                     memory=np.arange(1, 7), timed_writes=timed, simulator="amaranth",
                     reuse=True)
    flag = {c: bit(w, "task_queue_overflow") for c, w in status_reads(result, kind, "mm2s")}
    assert (flag[9], flag[12], flag[29], flag[31]) == (1, 0, 1, 0)
    ran = len(result.tokens["mm2s0"])
    assert ran < 1 + len(bursts) and len(result.outputs["mm2s0"]) == 6 * ran


@pytest.mark.parametrize(("kind", "direction", "table", "task", "before"), [
    # the start BD has valid_bd = 0
    ("tile", "mm2s", {2: dict(buffer_length=4, valid=0)}, Task(2), 0),
    # a chained BD has valid_bd = 0, reached after a BD that runs (3 words); the task
    # repeats
    ("tile", "s2mm", {0: dict(buffer_length=3, use_next_bd=1, next_bd=3),
                      3: dict(buffer_length=2, valid=0)}, Task(0, 2, True), 3),
    # a start BD never written (all zeros)
    ("memtile", "mm2s", {}, Task(5), 0),
    # an S2MM BD with zero padding is not valid either
    ("memtile", "s2mm", {1: dict(buffer_length=4, d0_wrap=4, d0_zero_before=1)}, Task(1), 0),
])
def test_a_bd_that_is_not_valid_stops_the_channel_as_in_the_rtl_until_a_reset(kind, direction,
                                                                           table, task, before):
    """error_bd_invalid from the RTL's cycle on, the BDs before it complete, the next
    queued task does not run; a channel reset clears the bit and a task pushed after it
    runs."""
    bds = {n: BufferDescriptor(kind, base_address=own(kind) + 16 * n,
                               valid_bd=fields.pop("valid", 1), **fields)
           for n, fields in ((n, dict(f)) for n, f in table.items())}
    good = 7
    bds[good] = BufferDescriptor(kind, base_address=own(kind) + 200, buffer_length=3,
                                 valid_bd=1)
    queue = start_queue_address(kind, direction, 0)
    writes = [*bd_writes(kind, bds), (queue, task.encode()), (queue, Task(good, 1, True).encode())]
    timed = with_status_reads(kind, direction, reset_then_push(
        kind, direction, 50, Task(good, 1, True)), 80)
    words = list(range(1, before + 4))   # S2MM: the BDs before it, then the task after
    result = run_dma(kind, writes, memory=np.arange(100, 400), inputs={f"{direction}0": words},
                     timed_writes=timed, simulator="amaranth", reuse=True)
    reads = status_reads(result, kind, direction)
    invalid = [c for c, w in reads if bit(w, "error_bd_invalid")]
    assert invalid and max(invalid) < 52            # cleared by the reset
    assert all(bit(w, "channel_running") for c, w in reads if invalid[0] <= c < 50)
    assert len(result.tokens[f"{direction}0"]) == 1   # only the task pushed after the reset


def run_stopped_then_reset(kind, direction, writes, name, memory=None, inputs=(),
                           allowed=None):
    """Run ``writes`` (BDs and start-queue pushes of channel 0; BD 7 is a good BD of 3
    words) with a status read every cycle, a task of BD 7 pushed at cycle 30, a channel
    reset at cycle 50 and a task of BD 7 pushed after it (S2MM: ``inputs``, then 3 words).
    Check that ``name`` is set from the cycle it is first read set to the reset, that the
    channel reads no other BD error meanwhile, and that only the task pushed after the
    reset runs. Returns the run and the first cycle of the flag."""
    good = {7: BufferDescriptor(kind, base_address=own(kind) + 200, buffer_length=3,
                                valid_bd=1)}
    queue = start_queue_address(kind, direction, 0)
    timed = with_status_reads(kind, direction, reset_then_push(
        kind, direction, 50, Task(7, 1, True)) | {30: (queue, Task(7, 1, True).encode())}, 80)
    result = run_dma(kind, [*bd_writes(kind, good), *writes],
                     memory=np.arange(100, 400) if memory is None else memory,
                     inputs={f"{direction}0": [*inputs, 1, 2, 3]}, timed_writes=timed,
                     simulator="amaranth", reuse=True, allowed=allowed)
    reads = status_reads(result, kind, direction)
    on = [c for c, w in reads if bit(w, name)]
    assert on and on[0] < 20 and on[-1] < 52                  # until the reset clears it
    assert on == [c for c, _ in reads if on[0] <= c < 52]
    others = {"error_bd_invalid", "error_bd_unavailable", "error_lock_access_to_unavailable",
              "error_dm_access_to_unavailable"} - {name}
    assert not any(bit(w, other) for _, w in reads for other in others)
    assert all(bit(w, "channel_running") for c, w in reads if 31 <= c < 50)  # 30's task waits
    assert len(result.tokens[f"{direction}0"]) == 1   # only the task pushed after the reset
    return result, on[0]


def memtile_bd_words(n, bd, **raw):
    """BD ``n``'s register writes with ``raw`` fields (one slice each) put into its words
    as the hardware stores them (past the BD constructor's limit)."""
    base = DMA_KINDS["memtile"].bd_register(n)
    return [(base + 4 * w, word) for w, word in enumerate(bd.stored_with(**raw).encode())]


@pytest.mark.parametrize(("direction", "raw"), [
    ("mm2s", dict(lock_acq_id=200)),
    ("s2mm", dict(lock_rel_id=255)),
    ("mm2s", dict(lock_rel_id=10)),     # the west neighbour's lock 10: the tile has none
])
def test_a_bd_naming_a_lock_past_the_memory_tiles_stops_the_channel_until_a_reset(direction,
                                                                                   raw):
    """A memory-tile BD whose acquire (or release) names lock 192-255, which no tile has,
    or a lock of a neighbour the tile has not (run_dma's memory tile has no neighbours):
    error_lock_access_to_unavailable (aie-rt bit 8) from the RTL's cycle, no lock touched
    (the own locks stay as set), no word moved, a task pushed meanwhile not run; a
    channel reset clears the bit and a task pushed after it runs."""
    kind = "memtile"
    bd = BufferDescriptor(kind, base_address=own(kind), buffer_length=4, valid_bd=1,
                          lock_acq_enable=1, lock_acq_id=64, lock_acq_value=-1,
                          lock_rel_id=65, lock_rel_value=1)
    queue = start_queue_address(kind, direction, 0)
    locks = [(lock_value_address(kind, 0), 1), (lock_value_address(kind, 1), 0)]
    writes = [*memtile_bd_words(2, bd, **raw), *locks, (queue, Task(2).encode()),
              (queue, Task(7, 1, True).encode())]
    result, _ = run_stopped_then_reset(kind, direction, writes,
                                       "error_lock_access_to_unavailable")
    assert result.locks[:2] == [1, 0]
    if direction == "mm2s":
        assert len(result.outputs["mm2s0"]) == 3      # BD 7's words only


@pytest.mark.parametrize(("direction", "start"), [("mm2s", 30), ("s2mm", 24), ("mm2s", 50)])
def test_a_task_whose_start_bd_is_not_the_channels_stops_the_memory_tile_channel(direction,
                                                                                 start):
    """Memory-tile channel 0 runs BDs 0-23: a start-queue word naming BD 24-47 (the other
    half, here a valid BD) or 48-63 (no BD) leaves the queue where it would start, with no
    fetch, and sets error_bd_unavailable (bit 10, both directions on the memory tile) from
    the next cycle; nothing of BD 30 moves; a reset clears it and a task pushed after
    runs."""
    kind = "memtile"
    other = {30: BufferDescriptor(kind, base_address=own(kind), buffer_length=4, valid_bd=1)}
    queue = start_queue_address(kind, direction, 0)
    writes = [*bd_writes(kind, other), (queue, Task(start).encode()),
              (queue, Task(7, 1, True).encode())]
    result, first = run_stopped_then_reset(kind, direction, writes, "error_bd_unavailable")
    assert first == 1                          # the task leaves the queue in cycle 0
    if direction == "mm2s":
        assert len(result.outputs["mm2s0"]) == 3


@pytest.mark.parametrize(("direction", "next_bd"), [("s2mm", 30), ("mm2s", 50)])
def test_a_chain_to_a_bd_that_is_not_the_channels_stops_the_memory_tile_channel(direction,
                                                                                next_bd):
    """Memory-tile channel 0 runs BDs 0-23: its BD 0 chaining to BD 24-47 (the other half,
    here BD 30, valid) or 48-63 (no BD; only a register write can name one) runs, ends no
    task (no token), and where the next BD would be fetched the walk ends with no fetch:
    error_bd_unavailable from the RTL's cycle, nothing of BD 30 moves;
    a reset clears it and a task pushed after runs."""
    kind = "memtile"
    head = BufferDescriptor(kind, base_address=own(kind) + 8, buffer_length=4, valid_bd=1,
                            use_next_bd=1)
    other = {30: BufferDescriptor(kind, base_address=own(kind), buffer_length=4, valid_bd=1,
                                  iteration_wrap=3)}
    queue = start_queue_address(kind, direction, 0)
    writes = [*bd_writes(kind, other), *memtile_bd_words(0, head, next_bd=next_bd),
              (queue, Task(0).encode()), (queue, Task(7, 1, True).encode())]
    result, first = run_stopped_then_reset(kind, direction, writes, "error_bd_unavailable",
                                           inputs=[9, 8, 7, 6])
    assert first == 1 + BD_FETCH_LATENCY      # where the chain's next fetch would be
    if direction == "mm2s":
        words = [data for data, _ in result.outputs["mm2s0"]]
        assert words == [108, 109, 110, 111, 300, 301, 302]
    else:
        assert list(result.memory[8:12]) == [9, 8, 7, 6]
        assert list(result.memory[:4]) == [100, 101, 102, 103]     # BD 30 wrote nothing


@pytest.mark.parametrize(("kind", "header"), [("tile", 0x0), ("memtile", 0x801)])
def test_a_received_header_with_bad_parity_stops_the_channel_as_in_the_rtl(kind, header):
    """An S2MM packet BD that receives a header with an even number of ones (here with
    reserved bit 11 set too, which the hardware does not look at): error_bd_invalid from the
    cycle after the header, as the RTL's channel; the BD still takes its words, the task
    pushed meanwhile does not run, a reset clears the bit and a task pushed after runs."""
    bd = {2: BufferDescriptor(kind, base_address=own(kind) + 8, buffer_length=4,
                              valid_bd=1, enable_packet=1)}
    writes = [*bd_writes(kind, bd), (start_queue_address(kind, "s2mm", 0), Task(2).encode())]
    result, _ = run_stopped_then_reset(kind, "s2mm", writes, "error_bd_invalid",
                                       inputs=[header, 9, 8, 7, 6])
    assert list(result.memory[8:12]) == [9, 8, 7, 6]


WINDOW = DMA_KINDS["memtile"].memory_words


@pytest.mark.parametrize(("direction", "base", "reached"), [
    # own window's last two words, then the east window: the tile has no east neighbour
    ("mm2s", 2 * WINDOW - 2, 2),
    ("s2mm", 2 * WINDOW - 2, 2),
    # past the east window (384K-512K words), then wrapped to 0, the west window
    ("s2mm", (1 << 19) - 2, 0),
])
def test_an_access_the_memory_tile_does_not_reach_is_not_made_and_stops_the_channel(
        direction, base, reached):
    """A memory-tile BD whose words run out of the windows its DMA has: the words it
    reaches move, the others do not (MM2S sends 0 in their place, S2MM writes nothing),
    error_dm_access_to_unavailable (aie-rt bit 9) is set from the cycle after the first
    such access, and no task starts after it until a reset (the task pushed at cycle 30
    does not run; the one pushed after the reset does)."""
    kind = "memtile"
    bd = {2: BufferDescriptor(kind, base_address=base, buffer_length=4, valid_bd=1)}
    writes = [*bd_writes(kind, bd), (start_queue_address(kind, direction, 0), Task(2).encode())]
    memory = np.arange(WINDOW)
    result, _ = run_stopped_then_reset(kind, direction, writes,
                                       "error_dm_access_to_unavailable", memory=memory,
                                       inputs=[9, 8, 7, 6])
    if direction == "mm2s":
        words = [data for data, _ in result.outputs["mm2s0"]]
        assert words == [*memory[-2:][:reached], *[0] * (4 - reached), 200, 201, 202]
    else:
        assert list(result.memory[-2:]) == [9, 8][:reached] + list(memory[-2:])[reached:]
        assert list(result.memory[:2]) == [0, 1]        # nothing wrapped into memory


# The memory tile with a window is a block of its own to elaborate (about 11 s a worker).
@pytest.mark.parametrize("kind", ["tile", pytest.param("memtile", marks=pytest.mark.long)])
@pytest.mark.parametrize("direction", ["mm2s", "s2mm"])
def test_an_access_outside_the_allowed_window_is_not_made_and_stops_the_channel(kind,
                                                                                 direction):
    """A DMA built with window protection (``allowed``: 256 words from the tile's own
    memory's start) and a BD whose last two words run past the window's end: the two
    inside move, the two outside do not (MM2S sends 0 for them, S2MM writes nothing),
    error_dm_access_to_unavailable is set, and no task starts after it until a reset;
    model and RTL alike."""
    bd = {2: BufferDescriptor(kind, base_address=own(kind) + 254, buffer_length=4, valid_bd=1)}
    writes = [*bd_writes(kind, bd), (start_queue_address(kind, direction, 0), Task(2).encode())]
    memory = np.arange(100, 400)
    result, _ = run_stopped_then_reset(kind, direction, writes, "error_dm_access_to_unavailable",
                                       memory=memory, inputs=[9, 8, 7, 6],
                                       allowed=(own(kind), 256))
    if direction == "mm2s":
        assert [data for data, _ in result.outputs["mm2s0"]] == [354, 355, 0, 0, 300, 301, 302]
    else:
        assert list(result.memory[254:258]) == [9, 8, 356, 357]


@pytest.mark.parametrize("direction", ["mm2s", "s2mm"])
def test_a_shim_access_outside_the_allowed_window_is_not_made(direction):
    """The same on a shim (its channels have no reset bit): the words inside the window
    move, the two outside do not, and the status reads error_dm_access_to_unavailable
    from the cycle after the first access outside, in the model and the RTL."""
    kind = "shim"
    bd = {2: BufferDescriptor(kind, base_address=254, buffer_length=4, valid_bd=1)}
    writes = [*bd_writes(kind, bd), (start_queue_address(kind, direction, 0), Task(2).encode())]
    result = run_dma(kind, writes, memory=np.arange(100, 400),
                     inputs={"s2mm0": [9, 8, 7, 6]},
                     timed_writes=with_status_reads(kind, direction, {}, 30),
                     simulator="amaranth", reuse=True, allowed=(0, 256))
    reads = status_reads(result, kind, direction)
    on = [c for c, w in reads if bit(w, "error_dm_access_to_unavailable")]
    assert on and on == [c for c, _ in reads if c >= on[0]]
    if direction == "mm2s":
        assert [data for data, _ in result.outputs["mm2s0"]] == [354, 355, 0, 0]
    else:
        assert list(result.memory[254:258]) == [9, 8, 356, 357]


def test_a_core_tile_address_past_its_memory_wraps_as_the_rtls_counter():
    """A core tile's 14-bit word address covers its whole memory (no status bit for an
    access outside it: aie-rt gives bits 8/9 to the memory tile only): on the register
    path a BD running past word 16383 wraps to 0 in the model as in the RTL."""
    kind = "tile"
    bds = {2: BufferDescriptor(kind, base_address=16384 - 2, buffer_length=4, valid_bd=1)}
    writes = [*bd_writes(kind, bds), (start_queue_address(kind, "mm2s", 0), Task(2).encode())]
    result = run_dma(kind, writes, memory=np.arange(16384) + 5, simulator="amaranth",
                     reuse=True)
    assert [data for data, _ in result.outputs["mm2s0"]] == [16387, 16388, 5, 6]


@pytest.mark.parametrize("kind", ["tile", "shim"])
def test_a_start_queue_word_keeps_the_4_bit_start_bd_of_a_core_tile_or_shim(kind):
    """The Start_BD_ID field is bits 3:0 on a core tile and a shim (aie-rt's mask 0xF):
    a word with bit 4 set starts the BD of its low 4 bits, in the model and the RTL."""
    table = {3: BufferDescriptor(kind, base_address=own(kind), buffer_length=5, valid_bd=1)}
    word = Task(16 + 3, 1, True).encode()
    result = run_dma(kind, [*bd_writes(kind, table), (start_queue_address(kind, "mm2s", 0), word)],
                     memory=np.arange(1, 6), simulator="amaranth", reuse=True)
    assert [data for data, _ in result.outputs["mm2s0"]] == [1, 2, 3, 4, 5]


def test_the_python_api_keeps_raising_and_a_channel_run_as_hardware_stops_instead():
    """Channel.push with a BD that is not valid raises at its load (the programmer's API,
    tests/model/system); the same program written through the registers stops the channel
    with error_bd_invalid, which a run without a reset reports as a deadlock naming it."""
    kind = "tile"
    bds = {0: BufferDescriptor(kind, buffer_length=2)}
    writes = [*bd_writes(kind, bds), (start_queue_address(kind, "mm2s", 0), Task(0).encode())]
    with pytest.raises(DeadlockError, match=r"mm2s0: BD 0: .*stopped by error_bd_invalid "
                                            r"until a reset"):
        run_dma(kind, writes, simulator=None)


@pytest.mark.parametrize("kind", FAULT_KINDS)
@pytest.mark.parametrize("seed", [0, *(pytest.param(s, marks=pytest.mark.long) for s in (1, 2))])
def test_random_fault_programs_rtl_against_the_model(kind, seed):
    program = random_fault_program(seed, kind)
    run_dma(kind, program.writes, memory=program.memory, inputs=program.inputs,
            timed_writes=program.timed, simulator="amaranth", reuse=True)


def status_bits_read(kind, seeds, names):
    """The ``names`` of status bits read set across the random fault programs of ``seeds``
    (model only: the RTL side is test_random_fault_programs_rtl_against_the_model and the
    regression); each program pushes more tasks than a queue holds."""
    seen = set()
    for seed in seeds:
        program = random_fault_program(seed, kind)
        result = run_dma(kind, program.writes, memory=program.memory,
                         inputs=program.inputs, timed_writes=program.timed, simulator=None)
        seen |= {name for _, address, word in result.reads
                 if register_at(kind, address).role == "status"
                 for name in names if bit(word, name)}
        assert program.faults["pushes"] > 3
    return seen


def test_random_fault_programs_draw_both_faults_and_every_run_ends():
    names = {"task_queue_overflow", "error_bd_invalid"}
    assert status_bits_read("tile", range(6), names) == names


def test_random_memory_tile_fault_programs_draw_the_memory_tile_faults():
    assert status_bits_read("memtile", range(8), FAULT_BITS) == set(FAULT_BITS)
