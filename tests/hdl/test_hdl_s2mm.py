"""The S2MM datapath RTL: memory after the transfer equals the model's expectation,
under idle inputs on both streams, with the join and write timing of model/cycle/contract.py;
and the address generator feeding it."""

from __future__ import annotations

import random

import numpy as np
import pytest
from amaranth.sim import Simulator
from hdl_strategies import chains, corners
from hypothesis import given, settings
from hypothesis import strategies as st

from aiedma.hdl.engine import S2MMEngine
from aiedma.hdl.s2mm import S2MMDatapath
from aiedma.model.bd.descriptor import BufferDescriptor
from aiedma.model.bd.fields import KINDS
from aiedma.model.cycle.contract import S2MM_WRITE_LATENCY
from aiedma.model.cycle.timing import s2mm_trace
from aiedma.model.errors import AiedmaError
from aiedma.tb.block.harness import check_s2mm, s2mm_driver, simulate
from aiedma.tb.common.beats import expected_beats, s2mm_memory
from aiedma.tb.common.memory import bram_write_port
from aiedma.tb.common.scoreboard import Mismatch, S2MMScoreboard
from aiedma.tb.common.stimulus import ready_and_offer
from aiedma.tb.common.streams import record, stream_send

MEMORY_WORDS = 256


def without_padding(bd: BufferDescriptor) -> BufferDescriptor:
    """The BD as an S2MM channel runs it: padding exists on MM2S only."""
    return bd.replace(**{name: 0 for name in bd.fields() if "_zero_" in name})


def words_for(count: int, seed: int) -> list[dict[str, int]]:
    rng = random.Random(seed)
    return [{"data": rng.getrandbits(32), "last": 0} for _ in range(count)]


def drive_datapath(kind: str, beats: list[dict[str, int]], words: list[dict[str, int]],
                   memory: np.ndarray, *, seed: int = 0, idle: float = 0.3):
    """The datapath alone, fed beats and words on two idling producers: its join rule.

    BDs through the whole channel go through the public harness, :func:`check_s2mm`.
    """
    dut = S2MMDatapath(kind)
    cycles = 4 * len(beats) + 20
    beat_offer, word_offer = ready_and_offer(seed, cycles, stall=idle, idle=idle)
    writes: list[tuple[int, int, int]] = []
    log: list[list[int]] = []

    async def beat_producer(ctx):
        await stream_send(ctx, dut.beats, beats, offer=beat_offer)

    async def word_producer(ctx):
        await stream_send(ctx, dut.i, words, offer=word_offer)
        await ctx.tick().repeat(S2MM_WRITE_LATENCY + 1)  # let the last write land

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_process(bram_write_port(dut, memory, writes))
    sim.add_testbench(beat_producer)
    sim.add_testbench(word_producer)
    sim.add_testbench(record(log, dut.i.valid, dut.i.ready, dut.i.payload.data, dut.beats.valid,
                             dut.beats.ready, dut.beats.payload.address,
                             dut.beats.payload.zero), background=True)
    sim.run()
    return writes, log


def check_timing(writes, log) -> None:
    """Ready follows the other stream's valid; a join writes S2MM_WRITE_LATENCY later."""
    joins = []
    for t, (i_valid, i_ready, word, b_valid, b_ready, address, zero) in enumerate(log):
        assert (i_ready, b_ready) == (b_valid, i_valid), f"cycle {t}"
        if i_valid and b_valid and not zero:
            joins.append((t + S2MM_WRITE_LATENCY, address, word))
    assert writes == joins


@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=10)
@given(data=st.data())
def test_writes_follow_the_beats(kind, data):
    """Beats of random BDs (padding included: a zero beat takes its word and writes
    nothing), random words, random idle cycles on both streams."""
    bds = data.draw(chains(kind), label="bds")
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    beats = expected_beats(bds)
    words = words_for(len(beats), seed)
    memory = np.zeros(MEMORY_WORDS, dtype=np.uint64)
    want = s2mm_memory(beats, [w["data"] for w in words], memory)
    writes, log = drive_datapath(kind, beats, words, memory, seed=seed)
    assert np.array_equal(memory, want)
    check_timing(writes, log)


@pytest.mark.parametrize("kind", KINDS)
def test_one_word_per_cycle(kind):
    beats = expected_beats([BufferDescriptor(kind, buffer_length=40, d0_wrap=3, d1_wrap=2)])
    words = words_for(len(beats), 1)
    memory = np.zeros(MEMORY_WORDS, dtype=np.uint64)
    writes, log = drive_datapath(kind, beats, words, memory, idle=0)
    assert [edge for edge, _, _ in writes] == [t + S2MM_WRITE_LATENCY for t in range(40)]
    check_timing(writes, log)


# --- the channel: the address generator feeding S2MM, through the public harness ---------


@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=10)
@given(data=st.data())
def test_channel_chains(kind, data):
    """Random BD chains, words offered with idle cycles, BDs offered with gaps: every
    cycle of both inputs' ready and of the write port checked against the model."""
    bds = [without_padding(bd) for bd in data.draw(chains(kind, max_size=3), label="bds")]
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    words = [w["data"] for w in words_for(sum(bd.buffer_length for bd in bds), seed)]
    memory = np.zeros(MEMORY_WORDS, dtype=np.uint64)
    want = s2mm_memory(expected_beats(bds), words, memory)
    valid, offer = ready_and_offer(seed, 3 * len(words) + 20)
    result = check_s2mm(kind, bds, words, memory, valid, offer=offer, seed=seed)
    assert np.array_equal(result.memory, want)
    assert np.array_equal(memory, np.zeros(MEMORY_WORDS))  # the caller's image is kept


@pytest.mark.parametrize("kind", KINDS)
def test_channel_corners_back_to_back(kind):
    """Corner BDs (padding stripped) with words always valid: one word per cycle."""
    bds = [without_padding(bd) for bd in corners(kind)]
    words = [w["data"] for w in words_for(sum(bd.buffer_length for bd in bds), 2)]
    memory = np.zeros(MEMORY_WORDS, dtype=np.uint64)
    result = check_s2mm(kind, bds, words, memory)
    assert np.array_equal(result.memory, s2mm_memory(expected_beats(bds), words, memory))
    assert result.summary.words == len(words) and result.summary.bubbles == 0


def test_channel_refuses_padding_and_a_wrong_word_count():
    padded = BufferDescriptor("memtile", buffer_length=4, d0_wrap=2, d0_zero_before=1,
                              valid_bd=1)
    with pytest.raises(AiedmaError, match=r"bds\[0\]\.d0_zero_before=1: zero padding exists "
                       "on MM2S only"):
        check_s2mm("memtile", [padded], [1, 2, 3, 4])
    plain = without_padding(padded)
    with pytest.raises(AiedmaError, match=r"len\(words\)=3: the BDs take 4 words"):
        check_s2mm("memtile", [plain], [1, 2, 3])
    with pytest.raises(AiedmaError, match=r"words=4294967296: a stream word is 32 bits"):
        check_s2mm("memtile", [plain], [1, 2, 3, 1 << 32])


def test_channel_mismatch_names_the_cycle_and_the_bd():
    """A model expectation that differs from what the RTL does is reported, at its cycle."""
    bd = BufferDescriptor("tile", buffer_length=6, d0_wrap=3, d1_stepsize=16, valid_bd=1)
    words = list(range(100, 106))
    trace = s2mm_trace("tile", [bd.replace(d1_stepsize=17)], words)  # a wrong model
    board = S2MMScoreboard("tile", [bd], trace, seed=9)
    dut = S2MMEngine("tile")
    memory = np.zeros(64, dtype=np.int64)
    bench = s2mm_driver(dut, [bd], words, trace.cycles, None, None, board)
    with pytest.raises(Mismatch, match=r"tile S2MM channel, cycle \d+: write \(address, data\)"
                       r" = \(16, 0x00000067\), model \(17, 0x00000067\); BD 0 .*"
                       r"beat 3 of 6.*seed=9"):
        simulate(dut, bench, None, bram_write_port(dut, memory))
