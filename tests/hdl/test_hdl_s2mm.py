"""The S2MM datapath RTL: memory after the transfer equals the model's expectation,
under idle inputs on both streams, with the join and write timing of model/cycle/contract.py;
and the address generator feeding it."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest
from amaranth.hdl import Elaboratable, Module
from amaranth.lib import wiring
from amaranth.sim import Simulator
from hdl_strategies import chains, corners
from hypothesis import given, settings
from hypothesis import strategies as st

from aiedma.hdl.addrgen import BDAddressGenerator
from aiedma.hdl.layouts import bd_to_payload
from aiedma.hdl.s2mm import S2MMDatapath
from aiedma.model.bd.descriptor import BufferDescriptor
from aiedma.model.bd.fields import KINDS
from aiedma.model.cycle.contract import S2MM_WRITE_LATENCY
from aiedma.tb.beats import expected_beats, s2mm_memory
from aiedma.tb.memory import bram_write_port
from aiedma.tb.streams import coin, record, stream_send

MEMORY_WORDS = 256


def without_padding(bd: BufferDescriptor) -> BufferDescriptor:
    """The BD as an S2MM channel runs it: padding exists on MM2S only."""
    return bd.replace(**{name: 0 for name in bd.fields() if "_zero_" in name})


def words_for(count: int, seed: int) -> list[dict[str, int]]:
    rng = random.Random(seed)
    return [{"data": rng.getrandbits(32), "last": 0} for _ in range(count)]


def run_s2mm(kind: str, beats: list[dict[str, int]], words: list[dict[str, int]],
             memory: np.ndarray, *, seed: int = 0, idle: float = 0.3):
    dut = S2MMDatapath(kind)
    rng = random.Random(seed)
    pause = coin(rng, idle) if idle else None
    writes: list[tuple[int, int, int]] = []
    log: list[list[int]] = []

    async def beat_producer(ctx):
        await stream_send(ctx, dut.beats, beats, pause=pause)

    async def word_producer(ctx):
        await stream_send(ctx, dut.i, words, pause=pause)
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
@settings(max_examples=20)
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
    writes, log = run_s2mm(kind, beats, words, memory, seed=seed)
    assert np.array_equal(memory, want)
    check_timing(writes, log)


@pytest.mark.parametrize("kind", KINDS)
def test_one_word_per_cycle(kind):
    beats = expected_beats([BufferDescriptor(kind, buffer_length=40, d0_wrap=3, d1_wrap=2)])
    words = words_for(len(beats), 1)
    memory = np.zeros(MEMORY_WORDS, dtype=np.uint64)
    writes, log = run_s2mm(kind, beats, words, memory, idle=0)
    assert [edge for edge, _, _ in writes] == [t + S2MM_WRITE_LATENCY for t in range(40)]
    check_timing(writes, log)


# --- the address generator feeding S2MM ----------------------------------------------------


class WriteChannel(Elaboratable):
    """Address generator -> S2MM datapath, the core of an S2MM channel."""

    def __init__(self, kind: str) -> None:
        self.addrgen = BDAddressGenerator(kind)
        self.s2mm = S2MMDatapath(kind)

    def elaborate(self, platform):
        m = Module()
        m.submodules.addrgen = self.addrgen
        m.submodules.s2mm = self.s2mm
        wiring.connect(m, self.addrgen.o, self.s2mm.beats)
        return m


def run_channel(bds: list[BufferDescriptor], words: list[dict[str, int]], memory: np.ndarray,
                *, seed: int = 0, idle: float = 0.3) -> None:
    top = WriteChannel(bds[0].kind)
    rng = random.Random(seed)
    pause = coin(rng, idle) if idle else None
    out: dict[str, Any] = {}

    async def bd_producer(ctx):
        await stream_send(ctx, top.addrgen.i, [bd_to_payload(b) for b in bds])

    async def word_producer(ctx):
        out["taken"] = await stream_send(ctx, top.s2mm.i, words, pause=pause)
        await ctx.tick().repeat(S2MM_WRITE_LATENCY + 1)

    sim = Simulator(top)
    sim.add_clock(1e-6)
    sim.add_process(bram_write_port(top.s2mm, memory))
    sim.add_testbench(bd_producer)
    sim.add_testbench(word_producer)
    sim.run()
    return out["taken"]


@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=15)
@given(data=st.data())
def test_channel_chains(kind, data):
    bds = [without_padding(bd) for bd in data.draw(chains(kind, max_size=3), label="bds")]
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    beats = expected_beats(bds)
    words = words_for(len(beats), seed)
    memory = np.zeros(MEMORY_WORDS, dtype=np.uint64)
    want = s2mm_memory(beats, [w["data"] for w in words], memory)
    run_channel(bds, words, memory, seed=seed)
    assert np.array_equal(memory, want)


@pytest.mark.parametrize("kind", KINDS)
def test_channel_corners_back_to_back(kind):
    """Corner BDs (padding stripped) with words always valid: one word per cycle."""
    bds = [without_padding(bd) for bd in corners(kind)]
    beats = expected_beats(bds)
    words = words_for(len(beats), 2)
    memory = np.zeros(MEMORY_WORDS, dtype=np.uint64)
    want = s2mm_memory(beats, [w["data"] for w in words], memory)
    taken = run_channel(bds, words, memory, idle=0)
    assert np.array_equal(memory, want)
    assert taken == list(range(taken[0], taken[0] + len(words)))
