"""The MM2S datapath RTL: words equal memory[address] (0 for padding), under backpressure,
with the ready rule and latency of model/cycle/contract.py; and the address generator feeding it."""

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
from aiedma.hdl.mm2s import MM2SDatapath
from aiedma.model.bd.descriptor import BufferDescriptor
from aiedma.model.bd.fields import KINDS
from aiedma.model.cycle.contract import ADDRGEN_LATENCY, MM2S_BUFFER_DEPTH, MM2S_LATENCY
from aiedma.tb.beats import expected_beats, mm2s_words
from aiedma.tb.memory import bram_read_port
from aiedma.tb.streams import coin, record, stream_receive, stream_send

MEMORY_WORDS = 512


def memory_image(seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.integers(1, 2**32, MEMORY_WORDS, dtype=np.uint64)  # no 0: padding shows


class MM2SReference:
    """The MM2S ready/valid rules of ``model/cycle/contract.py``, one cycle per call."""

    def __init__(self) -> None:
        self.count = 0        # words buffered
        self.flight = 0       # a word returns from memory in this cycle

    def cycle(self, beats_valid: int, o_ready: int) -> tuple[bool, bool]:
        ready = self.count + self.flight <= 1
        o_valid = self.count > 0 or self.flight == 1
        take = o_valid and bool(o_ready)
        self.count += self.flight - take
        assert self.count <= MM2S_BUFFER_DEPTH
        self.flight = int(bool(beats_valid) and ready)
        return ready, o_valid


def _rng_pair(seed: int | None, stall: float, idle: float):
    if seed is None:
        return None, None
    rng = random.Random(seed)
    return coin(rng, 1 - stall), coin(rng, idle)


def run_mm2s(kind: str, beats: list[dict[str, int]], memory: np.ndarray, *,
             seed: int | None = None, stall: float = 0.5, idle: float = 0.3):
    dut = MM2SDatapath(kind)
    ready, pause = _rng_pair(seed, stall, idle)
    out: dict[str, Any] = {}
    log: list[list[int]] = []

    async def producer(ctx):
        out["taken"] = await stream_send(ctx, dut.beats, beats, pause=pause)

    async def consumer(ctx):
        out["got"] = await stream_receive(ctx, dut.o, len(beats), ready=ready)

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_process(bram_read_port(dut, memory, seed=seed or 0))
    sim.add_testbench(producer)
    sim.add_testbench(consumer)
    sim.add_testbench(record(log, dut.beats.valid, dut.beats.ready, dut.beats.payload.zero,
                             dut.mem_en, dut.o.valid, dut.o.ready), background=True)
    sim.run()
    return out["taken"], out["got"], log


def check_mm2s(beats, memory, got, log) -> None:
    want = mm2s_words(beats, memory)
    assert [w for _, w in got] == want
    ref = MM2SReference()
    for t, (b_valid, b_ready, zero, mem_en, o_valid, o_ready) in enumerate(log):
        assert (bool(b_ready), bool(o_valid)) == ref.cycle(b_valid, o_ready), f"cycle {t}"
        assert mem_en == (b_valid and b_ready and not zero), f"cycle {t}: mem_en"


def random_beats(kind: str, seed: int, count: int) -> list[dict[str, int]]:
    rng = random.Random(seed)
    return [{"address": rng.randrange(MEMORY_WORDS), "zero": int(rng.random() < 0.3),
             "last": int(rng.random() < 0.2)} for _ in range(count)]


@pytest.mark.parametrize("kind", KINDS)
def test_one_word_per_cycle_with_ready_high(kind):
    memory = memory_image(1)
    beats = random_beats(kind, 1, 60)
    taken, got, log = run_mm2s(kind, beats, memory)
    check_mm2s(beats, memory, got, log)
    assert taken == list(range(len(beats)))
    assert [c for c, _ in got] == [t + MM2S_LATENCY for t in taken]


@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=20)
@given(seed=st.integers(0, 2**32 - 1), stall=st.sampled_from([0.2, 0.5, 0.8]),
       idle=st.sampled_from([0.0, 0.3]))
def test_backpressure(kind, seed, stall, idle):
    memory = memory_image(seed)
    beats = random_beats(kind, seed, 80)
    _, got, log = run_mm2s(kind, beats, memory, seed=seed, stall=stall, idle=idle)
    check_mm2s(beats, memory, got, log)


# --- the address generator feeding MM2S ---------------------------------------------------


class ReadChannel(Elaboratable):
    """Address generator -> MM2S datapath, the core of an MM2S channel."""

    def __init__(self, kind: str) -> None:
        self.addrgen = BDAddressGenerator(kind)
        self.mm2s = MM2SDatapath(kind)

    def elaborate(self, platform):
        m = Module()
        m.submodules.addrgen = self.addrgen
        m.submodules.mm2s = self.mm2s
        wiring.connect(m, self.addrgen.o, self.mm2s.beats)
        return m


def run_channel(bds: list[BufferDescriptor], memory: np.ndarray, *, seed: int | None = None,
                stall: float = 0.5):
    top = ReadChannel(bds[0].kind)
    count = len(expected_beats(bds))
    ready, pause = _rng_pair(seed, stall, 0.3)
    out: dict[str, Any] = {}

    async def producer(ctx):
        out["taken"] = await stream_send(ctx, top.addrgen.i, [bd_to_payload(b) for b in bds],
                                         pause=pause)

    async def consumer(ctx):
        out["got"] = await stream_receive(ctx, top.mm2s.o, count, ready=ready)

    sim = Simulator(top)
    sim.add_clock(1e-6)
    sim.add_process(bram_read_port(top.mm2s, memory, seed=seed or 0))
    sim.add_testbench(producer)
    sim.add_testbench(consumer)
    sim.run()
    return out["taken"], out["got"]


def test_bd_md_padding_example():
    """docs/bd.md: 32-bit, D0 wrap 13 step 1, pad 2/1, length 16 over memory 1..13."""
    bd = BufferDescriptor("memtile", buffer_length=16, d0_wrap=13, d0_zero_before=2,
                          d0_zero_after=1, valid_bd=1)
    memory = np.zeros(MEMORY_WORDS, dtype=np.uint64)
    memory[:13] = np.arange(1, 14)
    taken, got = run_channel([bd], memory)
    assert [w["data"] for _, w in got] == [0, 0, *range(1, 14), 0]
    assert [w["last"] for _, w in got] == [0] * 15 + [1]
    first = taken[0] + ADDRGEN_LATENCY + MM2S_LATENCY
    assert [c for c, _ in got] == list(range(first, first + 16))


@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=20)
@given(data=st.data())
def test_channel_chains(kind, data):
    """Random BD chains through generator and datapath: ready held high (no bubble
    after the first word, for BDs of length >= 1), then under backpressure."""
    memory = memory_image(7)
    bds = data.draw(chains(kind, min_length=1, max_size=3), label="bds")
    want = mm2s_words(expected_beats(bds), memory)
    taken, got = run_channel(bds, memory)
    assert [w for _, w in got] == want
    first = taken[0] + ADDRGEN_LATENCY + MM2S_LATENCY
    assert [c for c, _ in got] == list(range(first, first + len(want)))
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    _, got = run_channel(bds, memory, seed=seed)
    assert [w for _, w in got] == want


def test_channel_corners():
    memory = memory_image(3)
    bds = corners("memtile")
    want = mm2s_words(expected_beats(bds), memory)
    _, got = run_channel(bds, memory, seed=5)
    assert [w for _, w in got] == want
