"""The MM2S datapath RTL: words equal memory[address] (0 for padding), under backpressure,
with the ready rule and latency of model/cycle/contract.py; and the address generator feeding it."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest
from amaranth.sim import Simulator
from hdl_strategies import chains, corners
from hypothesis import given, settings
from hypothesis import strategies as st

from aiedma.hdl.mm2s import MM2SDatapath
from aiedma.model.bd.descriptor import BufferDescriptor
from aiedma.model.bd.fields import KINDS
from aiedma.model.cycle.contract import ADDRGEN_LATENCY, MM2S_BUFFER_DEPTH, MM2S_LATENCY
from aiedma.tb.block.harness import check_mm2s
from aiedma.tb.common.beats import expected_beats, mm2s_words
from aiedma.tb.common.memory import bram_read_port
from aiedma.tb.common.stimulus import ready_and_offer
from aiedma.tb.common.streams import record, stream_receive, stream_send

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


def drive_datapath(kind: str, beats: list[dict[str, int]], memory: np.ndarray, *,
                   seed: int | None = None, stall: float = 0.5, idle: float = 0.3):
    """The datapath alone, fed random beats (not a BD's): its own ready/latency rules.

    BDs through the whole channel go through the public harness, :func:`check_mm2s`.
    """
    dut = MM2SDatapath(kind)
    ready, offer = (None, None) if seed is None else ready_and_offer(
        seed, 4 * len(beats) + 20, stall=stall, idle=idle)
    out: dict[str, Any] = {}
    log: list[list[int]] = []

    async def producer(ctx):
        out["taken"] = await stream_send(ctx, dut.beats, beats, offer=offer)

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


def check_datapath(beats, memory, got, log) -> None:
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
    taken, got, log = drive_datapath(kind, beats, memory)
    check_datapath(beats, memory, got, log)
    assert taken == list(range(len(beats)))
    assert [c for c, _ in got] == [t + MM2S_LATENCY for t in taken]


@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=10)
@given(seed=st.integers(0, 2**32 - 1), stall=st.sampled_from([0.2, 0.5, 0.8]),
       idle=st.sampled_from([0.0, 0.3]))
def test_backpressure(kind, seed, stall, idle):
    memory = memory_image(seed)
    beats = random_beats(kind, seed, 80)
    _, got, log = drive_datapath(kind, beats, memory, seed=seed, stall=stall, idle=idle)
    check_datapath(beats, memory, got, log)


# --- the channel: the address generator feeding MM2S, through the public harness ---------


def test_bd_md_padding_example():
    """docs/bd.md: 32-bit, D0 wrap 13 step 1, pad 2/1, length 16 over memory 1..13."""
    bd = BufferDescriptor("memtile", buffer_length=16, d0_wrap=13, d0_zero_before=2,
                          d0_zero_after=1, valid_bd=1)
    memory = np.zeros(MEMORY_WORDS, dtype=np.uint64)
    memory[:13] = np.arange(1, 14)
    result = check_mm2s("memtile", [bd], memory)
    assert result.beats == [(w, i == 15) for i, w in enumerate([0, 0, *range(1, 14), 0])]
    assert result.summary.cycles == ADDRGEN_LATENCY + MM2S_LATENCY + 16
    assert result.summary.bubbles == 0


@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=10)
@given(data=st.data())
def test_channel_chains(kind, data):
    """Random BD chains through generator and datapath, every cycle checked against the
    model: ready held high (no bubble after the first word, for BDs of length >= 1),
    then under backpressure and an idle BD producer."""
    memory = memory_image(7)
    bds = data.draw(chains(kind, min_length=1, max_size=3), label="bds")
    want = [(w["data"], bool(w["last"])) for w in mm2s_words(expected_beats(bds), memory)]
    held = check_mm2s(kind, bds, memory)
    assert held.beats == want
    assert held.summary.bubbles == 0
    assert held.summary.cycles == ADDRGEN_LATENCY + MM2S_LATENCY + len(want)
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    ready, offer = ready_and_offer(seed, 3 * len(want) + 20)
    assert check_mm2s(kind, bds, memory, ready, offer=offer, seed=seed).beats == want


def test_channel_corners():
    memory = memory_image(3)
    bds = corners("memtile")
    want = [(w["data"], bool(w["last"])) for w in mm2s_words(expected_beats(bds), memory)]
    ready, offer = ready_and_offer(5, 3 * len(want))
    assert check_mm2s("memtile", bds, memory, ready, offer=offer, seed=5).beats == want
