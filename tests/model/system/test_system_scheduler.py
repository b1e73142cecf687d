"""The cycle-level scheduler: a lock-guarded memory-tile pipeline, ping-pong, deadlocks, reports."""


import numpy as np
import pytest

from aiedma.model import AiedmaError, BufferDescriptor, Task
from aiedma.model.cycle.contract import CHANNEL_LATENCY
from aiedma.model.system.dma import DMA
from aiedma.model.system.memory import MEMORY_TILE_WINDOWS, Memory, shim_space
from aiedma.model.system.scheduler import (
    STALL_CAUSES,
    DeadlockError,
    Stall,
    SystemRun,
    run_system,
)
from aiedma.model.system.stream import Stream, StreamSink, StreamSource

OWN = MEMORY_TILE_WINDOWS["own"]
EMPTY, FULL = 64, 65  # memory-tile BD lock IDs of its own locks 0 and 1


def pipeline(words, iterations, buffers):
    """DDR -> shim MM2S -> memory-tile S2MM -> buffer(s) -> memory-tile MM2S -> shim S2MM -> DDR.

    The buffer is guarded by two locks: EMPTY counts free copies (starts at ``buffers``),
    FULL counts written ones. One BD per side walks the copies with its iteration
    offset (wrap ``buffers``), so ping-pong needs no second BD.
    """
    total = words * iterations
    ddr = Memory("ddr", 2 * total)
    ddr.load(0, np.arange(1, total + 1))
    shim = DMA("shim", 0, 0, memory=shim_space("shim(0,0)", ddr))
    shim.write_bd(0, BufferDescriptor("shim", base_address=0, buffer_length=total, valid_bd=1))
    shim.write_bd(1, BufferDescriptor("shim", base_address=total, buffer_length=total,
                                      valid_bd=1))
    mem = DMA("memtile", 0, 1)
    locks, _ = mem.locks.route(EMPTY)
    locks.set(0, buffers)
    copies = {"iteration_wrap": buffers, "iteration_stepsize": words}
    mem.write_bd(0, BufferDescriptor(
        "memtile", base_address=OWN, buffer_length=words, valid_bd=1, **copies,
        lock_acq_enable=1, lock_acq_id=EMPTY, lock_acq_value=-1,
        lock_rel_id=FULL, lock_rel_value=1))
    mem.write_bd(2, BufferDescriptor(
        "memtile", base_address=OWN, buffer_length=words, valid_bd=1, **copies,
        lock_acq_enable=1, lock_acq_id=FULL, lock_acq_value=-1,
        lock_rel_id=EMPTY, lock_rel_value=1))
    inbound, outbound = Stream("to memtile"), Stream("from memtile")
    shim.mm2s[0].connect(inbound).push(Task(0))
    mem.s2mm[0].connect(inbound).push(Task(0, repeat_count=iterations))
    mem.mm2s[0].connect(outbound).push(Task(2, repeat_count=iterations))
    shim.s2mm[0].connect(outbound).push(Task(1))
    agents = [shim.mm2s[0], mem.s2mm[0], mem.mm2s[0], shim.s2mm[0]]
    return agents, ddr, locks


@pytest.mark.parametrize("buffers", [1, 2])
def test_a_lock_guarded_buffer_moves_every_word_exactly_once(buffers):
    words, iterations = 32, 12
    agents, ddr, locks = pipeline(words, iterations, buffers)
    report = run_system(agents)
    total = words * iterations
    np.testing.assert_array_equal(ddr.dump(total, total), np.arange(1, total + 1))
    assert report.words == dict.fromkeys((a.name for a in agents), total)
    for name, words_moved in report.words.items():
        assert words_moved + sum(report.stalls[name].values()) == report.cycles
    assert report.stranded == {}
    assert (locks[0], locks[1]) == (buffers, 0), "every acquire was matched by a release"
    assert report.stalls["memtile(0,1).mm2s0"]["lock"] > 0, "the reader waited for the writer"


def test_ping_pong_overlaps_the_two_sides():
    words, iterations = 32, 12
    single = run_system(pipeline(words, iterations, 1)[0])
    double = run_system(pipeline(words, iterations, 2)[0])
    total = words * iterations
    # One copy: fill, then drain, one after the other. Two: they overlap (well under the
    # one copy's two passes, whatever the channels' latencies).
    assert single.cycles >= 2 * total
    assert double.cycles < total + total // 2
    assert double.stall_totals["lock"] < single.stall_totals["lock"]


def test_a_wait_on_a_lock_nobody_releases_is_a_deadlock():
    mem = DMA("memtile", 0, 1)
    mem.write_bd(0, BufferDescriptor("memtile", base_address=OWN, buffer_length=4, valid_bd=1,
                                     lock_acq_enable=1, lock_acq_id=FULL, lock_acq_value=-1))
    inbound = Stream("in")
    mem.s2mm[0].connect(inbound).push(Task(0))
    source = StreamSource("source", inbound, range(4))
    with pytest.raises(DeadlockError) as caught:
        run_system([source, mem.s2mm[0]])
    error = caught.value
    # The first beat shows in CHANNEL_LATENCY and, held at the gate, goes into the skid
    # there (a change): nothing moves from the cycle after.
    assert str(error).startswith(f"deadlock at cycle {CHANNEL_LATENCY['s2mm'] + 1}: nothing "
                                 "can move and 2 agent(s) wait:")
    assert ("memtile(0,1).s2mm0: BD 0: waits on lock 65 (memtile(0,1) locks lock 1) = 0, "
            "wants >= 1") in str(error)
    assert "source: waits for output space (in)" in str(error)
    wait = error.waits["memtile(0,1).s2mm0"]
    assert (wait.bd, wait.lock.lock_id, wait.lock.value, wait.lock.wanted) == (0, 65, 0, ">= 1")
    assert error.report.words == {"source": 2, "memtile(0,1).s2mm0": 0}


def test_a_circular_wait_lists_every_waiting_channel():
    """Each side waits for the other: both locks start at 0 (a mistake on purpose)."""
    agents, _, locks = pipeline(8, 2, 1)
    locks.set(0, 0)
    with pytest.raises(DeadlockError) as caught:
        run_system(agents)
    waits = caught.value.waits
    assert set(waits) == {a.name for a in agents}
    assert str(waits["memtile(0,1).s2mm0"].lock).endswith("lock 0) = 0, wants >= 1")
    assert waits["memtile(0,1).mm2s0"].lock.lock_id == FULL
    assert waits["shim(0,0).mm2s0"].cause == "backpressure"
    assert waits["shim(0,0).s2mm0"].cause == "empty"
    message = str(caught.value)
    for name in waits:
        assert name in message


def test_an_acquire_equal_that_never_holds_deadlocks():
    dma = DMA("tile", 0, 2)
    dma.write_bd(1, BufferDescriptor("tile", buffer_length=1, valid_bd=1, lock_acq_enable=1,
                                     lock_acq_id=3, lock_acq_value=5))
    dma.mm2s[0].connect(Stream("out")).push(Task(1))
    with pytest.raises(DeadlockError, match=r"tile\(0,2\)\.mm2s0: BD 1: waits on lock 3 "
                                            r"\(tile\(0,2\) locks lock 3\) = 0, wants == 5"):
        run_system([dma.mm2s[0]])


def test_stranded_words_are_reported():
    s = Stream("s", depth=4)
    dma = DMA("tile", 0, 2)
    dma.write_bd(0, BufferDescriptor("tile", buffer_length=2, valid_bd=1))
    dma.s2mm[0].connect(s).push(Task(0))
    report = run_system([StreamSource("source", s, range(3)), dma.s2mm[0]])
    assert report.stranded == {"s": 1}
    assert "stranded: 1 word(s) left in s" in report.text()


def test_report_text_and_totals():
    s = Stream("s")
    report = run_system([StreamSource("source", s, range(3)), StreamSink("sink", s)])
    lines = report.text().splitlines()
    assert lines[0] == "4 cycles"
    assert lines[1].split() == ["agent", "words", *STALL_CAUSES]
    assert lines[2].split() == ["source", "3", "0", "0", "0", "0", "1"]
    assert report.stall_totals == {"lock": 0, "empty": 0, "backpressure": 0, "load": 0,
                                   "idle": 2}


def test_scheduler_guards():
    s = Stream("s")
    with pytest.raises(AiedmaError, match=r"^agents=\['x'\]: agent names must be unique"):
        run_system([StreamSource("x", s, [1]), StreamSink("x", s)])
    with pytest.raises(AiedmaError, match=r"^max_cycles=2: the run did not finish"):
        run_system([StreamSource("a", s, range(5)), StreamSink("b", s)], max_cycles=2)
    with pytest.raises(AiedmaError, match=r"^cause='late': must be one of lock, empty"):
        Stall("late")


def test_an_empty_system_takes_no_cycles():
    assert run_system([]).cycles == 0



def test_a_channel_stepped_outside_a_cycle_finds_its_progress_itself():
    """The run tells its agents when a cycle has made progress (a channel then skips
    comparing its state); between cycles the flag is clear, so a channel stepped by
    hand says whether it changed, as one outside any run does."""
    mem = DMA("memtile", 0, 1)
    mem.write_bd(0, BufferDescriptor("memtile", base_address=OWN, buffer_length=4, valid_bd=1,
                                     lock_acq_enable=1, lock_acq_id=FULL, lock_acq_value=-1))
    inbound = Stream("in")
    channel = mem.s2mm[0].connect(inbound)
    channel.push(Task(0))
    run = SystemRun([StreamSource("source", inbound, range(4)), channel])
    for _ in range(CHANNEL_LATENCY["s2mm"] + 1):
        run.cycle()   # cycles with progress (the skid's among them), up to the deadlocked one
    stall = channel.step(run.cycles)
    assert stall.cause == "lock" and not stall.progress
