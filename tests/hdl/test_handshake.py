# amaranth: UnusedElaboratable=no
"""The engines on the handshake memory port (hdl/handshake.py): the model's words and
memory under a memory that refuses, waits and answers late, one word per cycle through
a 20-cycle latency, each BD done only once its accesses are answered, blocked accesses
and bus errors reported."""

from __future__ import annotations

import random

import numpy as np
import pytest
from amaranth.hdl import Elaboratable, Module
from amaranth.sim import Simulator

from aiedma.hdl.engine import MM2SEngine, S2MMEngine
from aiedma.hdl.handshake import MM2SHandshakeDatapath
from aiedma.hdl.layouts import bd_to_payload
from aiedma.model.bd.descriptor import BufferDescriptor
from aiedma.model.errors import AiedmaError
from aiedma.tb.common.beats import expected_beats, mm2s_words, s2mm_memory
from aiedma.tb.common.memory import waiting_read_port, waiting_write_port
from aiedma.tb.common.stimulus import random_bds, random_pattern
from aiedma.tb.common.streams import record, stream_receive, stream_send

WORDS = 4096
BLOCK_BIT = 6     # the blocking wrapper refuses addresses with this bit set


class _Blocking(Elaboratable):
    """An engine whose accesses to addresses with bit ``BLOCK_BIT`` set are blocked, as
    a channel blocks those outside its window."""

    def __init__(self, engine: Elaboratable) -> None:
        self.engine = engine

    def elaborate(self, platform: object) -> Module:
        m = Module()
        m.submodules.engine = self.engine
        m.d.comb += self.engine.blocked.eq(self.engine.beat_address[BLOCK_BIT])
        return m


def _image(seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(1, 2**32, WORDS, dtype=np.uint64)


def _bds(kind: str, seed: int, count: int = 12) -> list[BufferDescriptor]:
    return random_bds(kind, count, seed)


def _simulate(top, engine, bds, port, stream, latency, watched) -> list:
    """Run ``top`` with ``bds`` fed to ``engine``, the memory ``port`` process and the
    ``stream`` testbench, ``latency + 10`` cycles more for the last BD's completion;
    returns ``watched`` per cycle."""
    log = []

    async def feed(ctx):
        await stream_send(ctx, engine.bd, [bd_to_payload(bd) for bd in bds])

    async def streams(ctx):
        await stream(ctx)
        for _ in range(latency + 10):
            await ctx.tick()

    sim = Simulator(top)
    sim.add_clock(1e-6)
    sim.add_process(port)
    sim.add_testbench(feed)
    sim.add_testbench(streams)
    sim.add_testbench(record(log, *watched), background=True)
    sim.run()
    return log


def run_mm2s(kind: str, bds, memory, *, seed: int, outstanding: int = 8, latency: int = 1,
             refuse: float = 0.0, jitter: int = 0, stall: float = 0.0, errors=(),
             blocking: bool = False):
    """MM2S engine on a waiting memory; returns the words, and per cycle
    (mem_valid, done, fault, dropped, o taken)."""
    engine = MM2SEngine(kind, outstanding=outstanding)
    top = _Blocking(engine) if blocking else engine
    beats = expected_beats(bds)
    rng = random.Random(seed)
    ready = random_pattern(rng, 40 * len(beats) + 400, stall)
    out = {}

    async def take(ctx):
        out["got"] = await stream_receive(ctx, engine.o, len(beats), ready=ready,
                                          timeout=2000)

    port = waiting_read_port(engine, memory, latency=latency, seed=seed, refuse=refuse,
                             jitter=jitter, errors=errors)
    log = _simulate(top, engine, bds, port, take, latency,
                    (engine.mem_valid, engine.done, engine.fault, engine.dropped,
                     engine.o.valid & engine.o.ready))
    return [payload for _, payload in out["got"]], [cycle for cycle, _ in out["got"]], log


def _check_done_after_answers(bds, log, skipped=lambda beat: beat["zero"]) -> None:
    """Each BD with beats is done once, in order, and only once every read of it and of
    the BDs before has been answered."""
    owed = np.cumsum([sum(1 for b in expected_beats([bd]) if not skipped(b))
                      for bd in bds if bd.buffer_length])
    answered, done = 0, []
    for mem_valid, is_done, *_ in log:
        answered += mem_valid
        if is_done:
            done.append(answered)
    assert len(done) == len(owed)
    assert all(a >= o for a, o in zip(done, owed, strict=True))


@pytest.mark.parametrize(("kind", "latency", "refuse", "jitter", "stall"), [
    ("tile", 1, 0.0, 0, 0.0), ("memtile", 3, 0.4, 4, 0.3), ("shim", 20, 0.2, 10, 0.5)])
def test_mm2s_words_are_the_models_under_a_waiting_memory(kind, latency, refuse, jitter,
                                                          stall):
    bds, memory = _bds(kind, seed=latency), _image(latency)
    got, _, log = run_mm2s(kind, bds, memory, seed=latency, latency=latency, refuse=refuse,
                           jitter=jitter, stall=stall)
    assert got == mm2s_words(expected_beats(bds), memory)
    _check_done_after_answers(bds, log)


def test_mm2s_moves_a_word_a_cycle_through_twenty_cycles_of_latency():
    bd = BufferDescriptor("shim", buffer_length=600, base_address=100)
    got, cycles, _ = run_mm2s("shim", [bd], _image(1), seed=1, outstanding=32, latency=20)
    assert len(got) == 600
    assert cycles[-1] - cycles[0] == 599        # no gap between the first and last word


def test_mm2s_moves_short_bds_back_to_back_through_twenty_cycles_of_latency():
    """BDs end while their reads are in flight: 8 BDs of 10 words, no gap between them,
    each done in order once its reads are answered."""
    bds = [BufferDescriptor("shim", buffer_length=10, base_address=100 + 16 * k)
           for k in range(8)]
    got, cycles, log = run_mm2s("shim", bds, _image(2), seed=2, outstanding=32, latency=20)
    assert got == mm2s_words(expected_beats(bds), _image(2))
    assert cycles[-1] - cycles[0] == 79
    _check_done_after_answers(bds, log)


def test_mm2s_with_too_few_outstanding_reads_waits_for_the_memory():
    """The bound is real: 4 reads in flight through 20 cycles give 4 words a round trip."""
    bd = BufferDescriptor("shim", buffer_length=200, base_address=100)
    got, cycles, _ = run_mm2s("shim", [bd], _image(1), seed=1, outstanding=4, latency=20)
    assert got == mm2s_words(expected_beats([bd]), _image(1))
    assert cycles[-1] - cycles[0] > 3 * 199


def test_mm2s_bus_errors_give_zero_and_fault():
    bds, memory = _bds("shim", seed=5), _image(5)
    errors = {2, 7}
    got, _, log = run_mm2s("shim", bds, memory, seed=5, latency=4, errors=errors)
    want = mm2s_words(expected_beats(bds), memory)
    data = [k for k, b in enumerate(expected_beats(bds)) if not b["zero"]]
    for index in errors:
        want[data[index]]["data"] = 0
    assert got == want
    assert sum(row[2] for row in log) == len(errors)


def test_mm2s_blocked_reads_are_not_made_and_give_zero():
    bds = [BufferDescriptor("tile", buffer_length=40, base_address=50),
           BufferDescriptor("tile", buffer_length=20, base_address=120)]
    memory = _image(9)
    got, _, log = run_mm2s("tile", bds, memory, seed=9, latency=5, blocking=True)
    beats = expected_beats(bds)
    blocked = [b for b in beats if b["address"] >> BLOCK_BIT & 1]
    assert blocked and len(blocked) < len(beats)
    want = [{"data": 0 if b["address"] >> BLOCK_BIT & 1 else w["data"], "last": w["last"]}
            for b, w in zip(beats, mm2s_words(beats, memory), strict=True)]
    assert got == want
    assert sum(row[3] for row in log) == len(blocked)
    _check_done_after_answers(bds, log, skipped=lambda b: b["address"] >> BLOCK_BIT & 1)


def run_s2mm(kind: str, bds, memory, words, *, seed: int, outstanding: int = 8,
             latency: int = 1, refuse: float = 0.0, batch: int = 1, idle: float = 0.0,
             errors=()):
    """S2MM engine on a waiting memory; returns per cycle (mem_acked, done, fault, a word
    taken)."""
    engine = S2MMEngine(kind, outstanding=outstanding)
    rng = random.Random(seed)
    offer = random_pattern(rng, 40 * len(words) + 400, idle)

    async def words_in(ctx):
        await stream_send(ctx, engine.i, [{"data": w, "last": 0} for w in words],
                          offer=offer, timeout=2000)

    port = waiting_write_port(engine, memory, latency=latency, seed=seed, refuse=refuse,
                              batch=batch, errors=errors)
    return _simulate(engine, engine, bds, port, words_in, latency,
                     (engine.mem_acked, engine.done, engine.fault,
                      engine.i.valid & engine.i.ready))


@pytest.mark.parametrize(("kind", "latency", "refuse", "batch", "idle"), [
    ("tile", 1, 0.0, 1, 0.0), ("memtile", 6, 0.4, 3, 0.3), ("shim", 20, 0.2, 16, 0.2)])
def test_s2mm_memory_is_the_models_under_a_waiting_memory(kind, latency, refuse, batch, idle):
    bds = [bd for bd in _bds(kind, seed=latency + 40)
           if not any(b["zero"] for b in expected_beats([bd]))]     # S2MM has no padding
    beats = expected_beats(bds)
    words = [random.Random(k).getrandbits(32) for k in range(len(beats))]
    memory = np.zeros(WORDS, dtype=np.uint64)
    log = run_s2mm(kind, bds, memory, words, seed=latency, latency=latency, refuse=refuse,
                   batch=batch, idle=idle)
    assert np.array_equal(memory, s2mm_memory(beats, words, np.zeros(WORDS, np.uint64)))
    _check_done_after_answers(bds, log)


def test_s2mm_takes_short_bds_back_to_back_through_twenty_cycles_of_latency():
    bds = [BufferDescriptor("shim", buffer_length=10, base_address=100 + 16 * k)
           for k in range(8)]
    beats = expected_beats(bds)
    words = list(range(1, 81))
    memory = np.zeros(WORDS, dtype=np.uint64)
    log = run_s2mm("shim", bds, memory, words, seed=2, outstanding=32, latency=20, batch=16)
    assert np.array_equal(memory, s2mm_memory(beats, words, np.zeros(WORDS, np.uint64)))
    _check_done_after_answers(bds, log)
    sent = [k for k, row in enumerate(log) if row[3]]
    assert sent[-1] - sent[0] == 79               # a word joined every cycle


def test_s2mm_bus_error_faults_and_the_words_still_move():
    bds = [BufferDescriptor("shim", buffer_length=30, base_address=7)]
    words = list(range(1, 31))
    memory = np.zeros(WORDS, dtype=np.uint64)
    log = run_s2mm("shim", bds, memory, words, seed=3, latency=8, batch=4, errors={10})
    assert sum(row[2] for row in log) == 1
    assert list(memory[7:37]) == words


@pytest.mark.parametrize("bad", [0, -1, 4097, 2.5, True])
def test_a_bad_outstanding_is_refused(bad):
    with pytest.raises(AiedmaError, match="outstanding"):
        MM2SHandshakeDatapath("shim", bad)
    with pytest.raises(AiedmaError, match="outstanding"):
        S2MMEngine("shim", outstanding=bad)
