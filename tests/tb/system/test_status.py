"""The channel status register (AM025's DMA_{S2MM,MM2S}_Status): the model's word against the
whole RTL DMA's, read in every cycle of random task programs and of runs made to stall
on each cause."""

import numpy as np
import pytest

from aiedma.model.arch.kinds import BD_REGISTER_STRIDE, DMA_KINDS
from aiedma.model.arch.registers import (
    STATUS_FIELDS,
    control_address,
    fot_count_address,
    start_queue_address,
    status_address,
    status_text,
)
from aiedma.model.bd.descriptor import BufferDescriptor
from aiedma.model.bd.task import Task
from aiedma.model.cycle.contract import RELEASE_QUEUE_DEPTH
from aiedma.model.system.scheduler import DeadlockError, SystemRun
from aiedma.model.system.stream import Beat, Stream, StreamSink
from aiedma.tb.system.dma_check import check_program_status, run_dma
from aiedma.tb.system.random_programs import program_dma, random_program

KINDS = ["tile", "memtile", "shim"]


def bit(word, name):
    lsb, width = STATUS_FIELDS[name]
    return word >> lsb & ((1 << width) - 1)


def bd_writes(kind, table):
    base = DMA_KINDS[kind].bd_register_base
    return [(base + BD_REGISTER_STRIDE * n + 4 * w, word)
            for n, bd in table.items() for w, word in enumerate(bd.encode())]


@pytest.mark.parametrize("kind", ["tile", pytest.param("memtile", marks=pytest.mark.long),
                                  "shim"])
def test_random_programs_read_the_same_status_as_the_rtl_in_every_cycle(kind):
    """Each cycle one channel's status register is read (in turn); across the programs
    the lock and stream stall bits are seen on both directions."""
    seen = set()
    for seed in range(4):
        program = random_program(seed, kind)
        dma = program.build()[2]
        s2mm = status_address(kind, "s2mm", 1)
        for _, address, word in check_program_status(program, reuse=True):
            for name in ("stalled_lock_acq", "stalled_stream", "channel_running"):
                if bit(word, name):
                    seen.add((name, "s2mm" if address == s2mm else "mm2s"))
        assert dma.kind == kind
    assert {("stalled_lock_acq", "mm2s"), ("stalled_stream", "mm2s"),
            ("stalled_stream", "s2mm"), ("channel_running", "s2mm")} <= seen


def one_word_releasing_chain(kind, count, lock):
    """BDs 0.. of one word each, chained, each releasing ``lock`` by 1."""
    return {k: BufferDescriptor(kind, base_address=4 * k, buffer_length=1, lock_rel_id=lock,
                                lock_rel_value=1, valid_bd=1,
                                **({"use_next_bd": 1, "next_bd": k + 1} if k + 1 < count
                                   else {}))
            for k in range(count)}


def test_a_channel_owing_every_release_it_may_shows_the_release_stall(monkeypatch):
    """With the tile's release port never free, MM2S 0 owes RELEASE_QUEUE_DEPTH releases
    after three BDs and its fourth waits at the gate: bit 3, not bit 2. (In a running
    DMA one fetch a cycle keeps releases from falling that far behind: the random
    programs never show it; the RTL's side is the lock requester's test in
    tests/hdl/test_channel_parts.py.)"""
    kind = "tile"
    dma = program_dma(kind, 2)
    for n, bd in one_word_releasing_chain(kind, 5, 0).items():
        dma.write_bd(n, bd)
    monkeypatch.setattr(type(dma.locks), "take_release_port", lambda *args: False)
    channel = dma.mm2s[0].connect(Stream("out"))
    channel.push(Task(0, 1))
    sink = StreamSink("sink", channel.stream)
    run, words = SystemRun([channel, sink]), []
    with pytest.raises(DeadlockError, match="owes 3 lock releases"):
        while True:
            run.cycle()
            words.append(channel.status_word())
    rel = [c for c, w in enumerate(words) if bit(w, "stalled_lock_rel")]
    assert rel and all(not bit(words[c], "stalled_lock_acq") for c in rel)
    assert len(sink.data) == RELEASE_QUEUE_DEPTH


@pytest.mark.parametrize("kind", ["tile", "memtile"])
def test_a_full_count_fifo_shows_the_tct_stall_until_a_pop(kind):
    """Finish on TLAST, mode 3: four one-word packets fill the count FIFO; the fifth
    word waits, and S2MM 0's status shows bit 5, until the pop register is read; once
    the task is done a full FIFO stalls nothing."""
    own = DMA_KINDS[kind].memory_window("own").start
    table = {0: BufferDescriptor(kind, base_address=own, buffer_length=3, valid_bd=1)}
    writes = [*bd_writes(kind, table), (control_address(kind, "s2mm", 0), 3 << 16),
              (start_queue_address(kind, "s2mm", 0), Task(0, 6).encode())]
    words = [Beat(k + 1, True) for k in range(6)]
    pop, status = fot_count_address(kind, 0), status_address(kind, "s2mm", 0)
    timed = [(cycle, pop if cycle >= 40 and cycle % 5 == 0 else status, None)
             for cycle in range(60)]
    result = run_dma(kind, writes, memory=np.zeros(8, dtype=np.int64),
                     inputs={"s2mm0": words}, simulator="amaranth", timed_writes=timed,
                     reuse=True)
    full = [cycle for cycle, address, word in result.reads
            if address == status and bit(word, "stalled_tct")]
    taken = result.word_cycles["s2mm0"]
    assert full and taken[3] < min(full) and 39 in full and taken[4] > 40
    assert not any(bit(word, "stalled_tct") for cycle, address, word in result.reads
                   if cycle > taken[-1] + 1 and address == status)   # idle: no stall


def test_an_idle_channel_reads_zero_and_a_queued_task_shows_running():
    kind = "tile"
    dma = program_dma(kind, 2)
    channel = dma.mm2s[0]
    assert channel.status_word() == 0
    channel.push(Task(3, 1))
    channel.step(0)
    word = channel.status_word()
    assert (bit(word, "status"), bit(word, "channel_running"),
            bit(word, "task_queue_size")) == (2, 1, 1)


def test_a_status_word_reads_as_its_flags_queue_and_bd():
    word = (1 << STATUS_FIELDS["channel_running"][0] | 2
            | 1 << STATUS_FIELDS["stalled_stream"][0] | 1 << STATUS_FIELDS["task_queue_overflow"][0]
            | 3 << STATUS_FIELDS["task_queue_size"][0] | 47 << STATUS_FIELDS["cur_bd"][0])
    assert status_text(word) == (f"{word:#010x}: running, stalled_stream, "
                                 "task_queue_overflow, queue 3, cur_bd 47")
    assert status_text(0) == "0x00000000: idle, queue 0, cur_bd 0"
