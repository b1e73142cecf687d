"""Finish on TLAST (S2MM): each mode's rule in the model, and the model against the whole RTL
DMA on every cycle its outputs show (words, memory, tokens, locks, the status flags)."""

import numpy as np
import pytest

from aiedma.model.arch.kinds import BD_REGISTER_STRIDE, DEFAULT_ROW, DMA_KINDS
from aiedma.model.arch.registers import (
    CONTROL_FIELDS,
    FOT_COUNT_DEPTH,
    FOT_COUNT_FIELDS,
    FOT_MODES,
    STATUS_FIELDS,
    control_address,
    fot_count_address,
    fot_count_word,
    start_queue_address,
    status_address,
)
from aiedma.model.bd.descriptor import BufferDescriptor
from aiedma.model.bd.task import Task
from aiedma.model.errors import AiedmaError
from aiedma.model.system.channel import FotCount
from aiedma.model.system.registers import RegisterWriter, apply_writes
from aiedma.model.system.scheduler import DeadlockError, Stall, run_system
from aiedma.model.system.stream import Beat, Stream, StreamSink, StreamSource
from aiedma.tb.system.dma_check import run_dma
from aiedma.tb.system.loop import run_with_rtl
from aiedma.tb.system.random_programs import program_dma, random_fot_program

KINDS = ["tile", "memtile"]


def own(kind):
    return DMA_KINDS[kind].memory_window("own").start


def bd_writes(kind, table):
    base = DMA_KINDS[kind].bd_register_base
    return [(base + BD_REGISTER_STRIDE * n + 4 * w, word)
            for n, bd in table.items() for w, word in enumerate(bd.encode())]


def chain(kind, lengths, gap=32):
    """BDs 0.. of the given lengths, chained in order, ``gap`` words apart."""
    return {k: BufferDescriptor(kind, base_address=own(kind) + gap * k, buffer_length=n,
                                valid_bd=1, **({"use_next_bd": 1, "next_bd": k + 1}
                                               if k + 1 < len(lengths) else {}))
            for k, n in enumerate(lengths)}


def program(kind, table, mode, repeat=1, token=True):
    return [*bd_writes(kind, table), (control_address(kind, "s2mm", 0), mode << 16),
            (start_queue_address(kind, "s2mm", 0), Task(0, repeat, token).encode())]


def packet(values, tlast_at=None):
    """Beats of ``values``, TLAST on the word at index ``tlast_at`` (None: on none)."""
    return [Beat(v, i == tlast_at) for i, v in enumerate(values)]


def run(kind, writes, words, simulator="amaranth", **args):
    """:func:`run_dma` (the RTL block elaborated once per kind and reused)."""
    reuse = {"reuse": True} if simulator else {}
    return run_dma(kind, writes, memory=np.zeros(100, dtype=np.int64),
                   inputs={"s2mm0": words}, simulator=simulator, **reuse, **args)


def model_channel(kind, writes, words, agents=()):
    """The model alone: S2MM 0 after the run (its count FIFO, done records, flags)."""
    dma = program_dma(kind, DEFAULT_ROW[kind])
    apply_writes(dma, writes)
    stream = Stream("in")
    channel = dma.s2mm[0].connect(stream)
    run_system([StreamSource("src", stream, words), channel, *agents], exact=True)
    return channel


@pytest.mark.parametrize("kind", KINDS)
def test_a_tlast_early_in_a_bd_ends_it_there_and_the_next_bd_takes_the_next_words(kind):
    table = chain(kind, [8, 8])
    words = packet([11, 12, 13], 2) + packet([21, 22, 23, 24, 25], 4)
    result = run(kind, program(kind, table, 1), words)     # the RTL checked against it
    assert result.memory[0:8].tolist() == [11, 12, 13, 0, 0, 0, 0, 0]
    assert result.memory[32:40].tolist() == [21, 22, 23, 24, 25, 0, 0, 0]
    assert result.flags == {"s2mm0": {"error_fot_length_exceeded": 0,
                                      "error_fot_bds_per_task": 0}}
    assert len(result.tokens["s2mm0"]) == 1
    # FoT off, the same words fill BD 0 and spill into BD 1
    words += packet([31, 32, 33, 34, 35, 36, 37, 38])
    off = run(kind, program(kind, table, 0), words, simulator=None)
    assert off.memory[0:8].tolist() == [11, 12, 13, 21, 22, 23, 24, 25]


@pytest.mark.parametrize("mode", [1, 2, 3])
def test_a_tlast_at_exactly_buffer_length_ends_the_bd_without_an_error_in_the_same_cycles(mode):
    kind = "tile"
    table = chain(kind, [4, 3])
    words = packet([1, 2, 3, 4], 3) + packet([5, 6, 7], 2)
    fot = run(kind, program(kind, table, mode), words)
    off = run(kind, program(kind, table, 0), words, simulator=None)
    assert fot.memory.tolist() == off.memory.tolist()
    assert (fot.cycles, fot.word_cycles, fot.tokens) == (off.cycles, off.word_cycles, off.tokens)
    assert fot.flags["s2mm0"]["error_fot_length_exceeded"] == 0


@pytest.mark.parametrize("kind", KINDS)
def test_a_bd_filled_without_tlast_sets_length_exceeded_and_the_channel_goes_on(kind):
    table = chain(kind, [3, 6])
    words = packet([1, 2, 3]) + packet([4, 5], 1)
    result = run(kind, program(kind, table, 1), words)
    assert result.memory[0:3].tolist() == [1, 2, 3]
    assert result.memory[32:35].tolist() == [4, 5, 0]
    assert result.flags["s2mm0"] == {"error_fot_length_exceeded": 1,
                                     "error_fot_bds_per_task": 0}
    assert len(result.tokens["s2mm0"]) == 1


def test_with_fot_disabled_tlast_is_data_and_the_cycles_are_those_without_it():
    kind = "memtile"
    table = chain(kind, [5, 4])
    values = list(range(40, 49))
    plain = run(kind, program(kind, table, 0), packet(values), simulator=None)
    marked = run(kind, program(kind, table, 0), packet(values, 2))
    assert marked.memory.tolist() == plain.memory.tolist()
    assert (marked.cycles, marked.word_cycles) == (plain.cycles, plain.word_cycles)
    assert marked.flags["s2mm0"]["error_fot_length_exceeded"] == 0


def test_counts_with_task_tokens_carry_each_bds_word_count_on_the_tasks_done_record():
    kind = "tile"
    table = chain(kind, [4, 6])
    words = (packet([1, 2], 1) + packet([3, 4, 5, 6, 7, 8])
             + packet([9, 10, 11, 12]) + packet([13], 0))
    channel = model_channel(kind, program(kind, table, 2, repeat=2), words)
    assert [d.counts for d in channel.done] == [(
        FotCount(0, 2, False), FotCount(1, 6, False), FotCount(0, 4, False),
        FotCount(1, 1, True))]
    assert channel.fot_length_exceeded       # BD 1 then BD 0 filled without a TLAST
    assert not channel.fot_counts            # mode 2 keeps no entries for the register
    run(kind, program(kind, table, 2, repeat=2), words)   # the RTL agrees (flags, cycles)


@pytest.mark.parametrize("kind", KINDS)
def test_a_task_of_more_bds_than_the_count_fifo_holds_sets_bds_per_task_in_mode_2(kind):
    table = chain(kind, [2])
    repeat = FOT_COUNT_DEPTH + 1
    words = [beat for k in range(repeat) for beat in packet([k, k + 10], 1)]
    result = run(kind, program(kind, table, 2, repeat=repeat), words)
    assert result.flags["s2mm0"] == {"error_fot_length_exceeded": 0,
                                     "error_fot_bds_per_task": 1}
    channel = model_channel(kind, program(kind, table, 2, repeat=repeat), words)
    assert len(channel.done[0].counts) == FOT_COUNT_DEPTH
    # the same task one BD shorter, or in mode 1, raises nothing
    fits = run(kind, program(kind, table, 2, repeat=repeat - 1), words[:-2])
    assert fits.flags["s2mm0"]["error_fot_bds_per_task"] == 0
    other = run(kind, program(kind, table, 1, repeat=repeat), words)
    assert other.flags["s2mm0"]["error_fot_bds_per_task"] == 0


def test_counts_from_the_register_queue_entries_that_reads_pop_in_order():
    kind = "memtile"
    table = chain(kind, [5, 2])
    words = packet([1, 2, 3], 2) + packet([4, 5]) + packet([6, 7, 8, 9, 10]) + packet([11], 0)
    channel = model_channel(kind, program(kind, table, 3, repeat=2), words)
    popped = [channel.pop_fot_count() for _ in range(FOT_COUNT_DEPTH + 1)]

    def field(word, name):
        lsb, width = FOT_COUNT_FIELDS[name]
        return word >> lsb & ((1 << width) - 1)

    assert [(field(w, "valid"), field(w, "bd_id"), field(w, "write_count"),
             field(w, "last_in_task")) for w in popped] == [
        (1, 0, 3, 0), (1, 1, 2, 0), (1, 0, 5, 0), (1, 1, 1, 1), (0, 0, 0, 0)]
    assert channel.done[0].counts == ()


class _Popper:
    """A host reading a channel's count FIFO register at the end of given cycles."""

    def __init__(self, channel, cycles):
        self.channel, self.cycles, self.name = channel, sorted(cycles), "popper"
        self.words, self._cycle = [], 0

    @property
    def busy(self):
        return bool(self.cycles)

    def ports(self):
        return ()

    def step(self, cycle):
        self._cycle = cycle
        return Stall("idle", progress=self.busy)

    def commit(self):
        while self.cycles and self.cycles[0] <= self._cycle:
            self.cycles.pop(0)
            self.words.append(self.channel.pop_fot_count())


def test_a_full_count_fifo_stalls_the_channel_until_a_read_pops_an_entry():
    kind = "tile"
    table = chain(kind, [2])
    repeat = FOT_COUNT_DEPTH + 1
    words = [beat for k in range(repeat) for beat in packet([k + 1, k + 20], 1)]
    writes = program(kind, table, 3, repeat=repeat)
    with pytest.raises(DeadlockError, match=r"s2mm0: BD 0: loads a BD"):
        model_channel(kind, writes, words)
    dma = program_dma(kind, 2)
    apply_writes(dma, writes)
    stream = Stream("in")
    channel = dma.s2mm[0].connect(stream)
    popper = _Popper(channel, [60])
    cycles = []     # the cycles the channel takes a word in
    step = channel.step

    def timed(cycle):
        stall = step(cycle)
        if stall is None:
            cycles.append(cycle)
        return stall

    channel.step = timed
    run_system([StreamSource("src", stream, words), channel, popper], exact=True)
    assert popper.words[0] == fot_count_word(0, 2, False)
    assert len(channel.fot_counts) == FOT_COUNT_DEPTH and len(channel.done) == 1
    # the last BD's words wait for the read at the end of cycle 60
    assert max(cycles[:-2]) < 60 <= min(cycles[-2:])


@pytest.mark.parametrize("kind", KINDS)
def test_a_channel_reset_clears_the_fot_flags_and_a_task_pushed_after_it_runs(kind):
    table = {**chain(kind, [2]), 4: BufferDescriptor(kind, base_address=own(kind) + 60,
                                                     buffer_length=3, valid_bd=1)}
    writes = program(kind, table, 2, repeat=FOT_COUNT_DEPTH + 1)
    words = [beat for k in range(FOT_COUNT_DEPTH + 1) for beat in packet([k, k], None)]
    control = control_address(kind, "s2mm", 0)
    reset = 1 << CONTROL_FIELDS[kind, "s2mm"]["reset"][0]
    flagged = run(kind, writes, words)
    assert flagged.flags["s2mm0"] == {"error_fot_length_exceeded": 1,
                                      "error_fot_bds_per_task": 1}
    after = flagged.cycles + 2
    timed = [(after, control, reset), (after + 1, control, 1 << 16),
             (after + 3, start_queue_address(kind, "s2mm", 0), Task(4, 1, True).encode())]
    result = run(kind, writes, [*words, *packet([7, 8], 1)], timed_writes=timed)
    assert result.flags["s2mm0"] == {"error_fot_length_exceeded": 0,
                                      "error_fot_bds_per_task": 0}
    assert result.memory[60:63].tolist() == [7, 8, 0]
    assert len(result.tokens["s2mm0"]) == 2


@pytest.mark.parametrize("kind", ["tile", pytest.param("memtile", marks=pytest.mark.long)])
def test_random_fot_programs_on_the_whole_rtl_dma_equal_the_model(kind):
    modes = set()
    for seed in (4, 5, 6, 9):      # seeds whose programs cover the four modes
        fot = random_fot_program(seed, kind)
        modes.add(fot.mode)
        run_dma(kind, fot.writes, inputs=fot.inputs, simulator="amaranth", reuse=True,
                timed_writes=fot.timed)
    assert modes == set(range(len(FOT_MODES)))


@pytest.mark.parametrize("kind", ["tile", pytest.param("memtile", marks=pytest.mark.long)])
def test_random_fot_programs_keep_every_engine_port_equal_in_the_loop(kind):
    """The channels' engines as RTL beside the model's, every port compared every cycle
    (:func:`~aiedma.tb.system.loop.run_with_rtl`): the cut beat, the lock gate's next
    first beat, the address generator's next BD."""
    for seed in range(1, 9):
        fot = random_fot_program(seed, kind)
        dma = program_dma(kind, DEFAULT_ROW[kind])
        apply_writes(dma, fot.writes)
        stream, out = Stream("in"), Stream("out")
        s2mm, mm2s = dma.s2mm[0].connect(stream), dma.mm2s[0].connect(out)
        agents = [StreamSource("src", stream, fot.inputs["s2mm0"]), s2mm, mm2s,
                  StreamSink("sink", out)]
        if fot.timed:
            agents.append(RegisterWriter(dma, fot.timed))
        run_with_rtl(agents, [s2mm, mm2s], "amaranth")   # raises LoopMismatch on a difference


@pytest.mark.parametrize("kind", KINDS)
def test_the_count_fifo_fills_stalls_and_is_read_alike_in_the_model_and_the_rtl(kind):
    """Six one-word packets into six BDs, the pop register read from cycle 40 every fifth
    cycle: four entries fill the FIFO, the fifth word waits for the first read."""
    table = chain(kind, [3])
    words = [beat for k in range(6) for beat in packet([k + 1], 0)]
    pop = fot_count_address(kind, 0)
    timed = [(40 + 5 * k, pop, None) for k in range(8)]
    result = run(kind, program(kind, table, 3, repeat=6), words, timed_writes=timed)
    assert [word for _, _, word in result.reads] == [
        fot_count_word(0, 1, k == 5) for k in range(6)] + [0, 0]
    taken = result.word_cycles["s2mm0"]
    assert max(taken[:4]) < 40 < taken[4]   # the fifth word waits for the first pop
    assert result.memory[0:3].tolist() == [6, 0, 0]


def test_the_status_and_count_fifo_registers_are_at_their_am025_places():
    assert FOT_MODES[1:] == ("no_counts", "counts_with_task_tokens", "counts_from_mm_register")
    assert (STATUS_FIELDS["error_fot_length_exceeded"],
            STATUS_FIELDS["error_fot_bds_per_task"]) == ((12, 1), (13, 1))
    assert status_address("tile", "s2mm", 1) == 0x1DF04
    assert [fot_count_address("tile", n) for n in range(2)] == [0x1DF20, 0x1DF24]
    assert fot_count_address("memtile", 5) == 0xA06DC
    assert fot_count_word(47, 0x3FFFF, True) == 1 << 31 | 1 << 30 | 47 << 24 | 0x3FFFF


def test_bad_count_fifo_words_and_addresses_are_refused_by_field_value_and_rule():
    with pytest.raises(AiedmaError, match=r"^bd_id=64: the count FIFO's field holds 0\.\.63$"):
        fot_count_word(64, 1, False)
    with pytest.raises(AiedmaError, match=r"^write_count=262144: the count FIFO's field "
                                          r"holds 0\.\.262143$"):
        fot_count_word(1, 1 << 18, False)
    with pytest.raises(AiedmaError, match=r"^kind='shim': AM025 has a count FIFO pop register "
                                          r"on the core and memory tiles only$"):
        fot_count_address("shim", 0)
    with pytest.raises(AiedmaError, match=r"^index=2: a tile DMA has S2MM channels 0\.\.1$"):
        fot_count_address("tile", 2)


def test_an_mm2s_channel_has_no_fot_mode_and_pops_nothing():
    dma = program_dma("tile", 2)
    channel = dma.mm2s[0]
    channel.write_control(0xFFFF_FFFD)     # every bit but reset
    assert channel.fot_mode == 0 and channel.pop_fot_count() == 0
    assert channel.status_fields() == {"error_fot_length_exceeded": 0,
                                       "error_fot_bds_per_task": 0}
