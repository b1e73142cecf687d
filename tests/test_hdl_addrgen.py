"""The BD address generator RTL against the golden model and the cycle contract.

Beats must equal the model's stream (addresses modulo the address width, zero flags
where the model has -1, ``last`` on each BD's final beat), one per cycle with no
bubble under ready held high, and every cycle of the handshake must follow the
rules written in ``model/cycle.py`` (checked against a literal transcription of them).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

import pytest
from amaranth.hdl import unsigned
from amaranth.sim import Simulator
from hdl_strategies import chains, corners
from hypothesis import given, settings
from hypothesis import strategies as st
from vectors import load

from aiedma.hdl.addrgen import BDAddressGenerator
from aiedma.hdl.layouts import bd_layout, bd_to_payload, beat_layout
from aiedma.model.bd import BufferDescriptor
from aiedma.model.bd_fields import FIELDS, HAS_PADDING, KINDS
from aiedma.model.cycle import ADDRESS_BITS, ADDRGEN_LATENCY, address_generation_fields
from aiedma.tb.beats import expected_beats
from aiedma.tb.streams import coin, record, stream_get, stream_put, stream_receive, stream_send

HARDWARE = load("hardware.json")


# --- the contract of model/cycle.py, transcribed literally -------------------------------


class HandshakeReference:
    """The address generator's ready/valid rules of ``model/cycle.py``, one cycle per call."""

    def __init__(self) -> None:
        self.p: int | None = None  # buffer_length of the BD in the holding slot
        self.r_n = 0               # beats left in the running slot (0: empty)

    def cycle(self, i_valid: int, i_length: int, o_ready: int) -> tuple[bool, bool]:
        o_valid = self.r_n > 0
        take = o_valid and bool(o_ready)
        free = not o_valid or (take and self.r_n == 1)
        leave = self.p is not None and (self.p == 0 or free)
        i_ready = self.p is None or leave
        if leave and self.p:
            self.r_n = self.p
        elif take:
            self.r_n -= 1
        if i_valid and i_ready:
            self.p = i_length
        elif leave:
            self.p = None
        return i_ready, o_valid


# --- running the RTL ----------------------------------------------------------------------


@dataclass
class Run:
    taken: list[int]                  # cycle in which each BD was accepted
    got: list[tuple[int, Any]]        # (cycle, beat) of each transfer on o
    log: list[list[int]]              # per cycle: i.valid, i.ready, length, o.valid, o.ready
    expected: list[dict[str, int]]    # the model's beats


def run_addrgen(kind: str, bds: list[BufferDescriptor], *, seed: int | None = None,
                stall: float = 0.5, idle: float = 0.3) -> Run:
    """Runs ``bds`` through the RTL; with ``seed``, random backpressure and idle input."""
    dut = BDAddressGenerator(kind)
    expected = expected_beats(bds)
    ready = pause = None
    if seed is not None:
        rng = random.Random(seed)
        ready, pause = coin(rng, 1 - stall), coin(rng, idle)
    out: dict[str, Any] = {}
    log: list[list[int]] = []

    async def producer(ctx):
        out["taken"] = await stream_send(ctx, dut.i, [bd_to_payload(bd) for bd in bds],
                                         pause=pause)

    async def consumer(ctx):
        out["got"] = await stream_receive(ctx, dut.o, len(expected), ready=ready)

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(producer)
    sim.add_testbench(consumer)
    sim.add_testbench(record(log, dut.i.valid, dut.i.ready, dut.i.payload.buffer_length,
                             dut.o.valid, dut.o.ready), background=True)
    sim.run()
    return Run(out["taken"], out["got"], log, expected)


def check_beats(run: Run) -> None:
    got = [beat for _, beat in run.got]
    for j, (g, e) in enumerate(zip(got, run.expected, strict=True)):
        assert g == e, f"beat {j}: RTL {g}, model {e}"


def check_handshake(run: Run) -> None:
    ref = HandshakeReference()
    for t, (i_valid, i_ready, length, o_valid, o_ready) in enumerate(run.log):
        want = ref.cycle(i_valid, length, o_ready)
        assert (bool(i_ready), bool(o_valid)) == want, \
            f"cycle {t}: (i.ready, o.valid) = {(i_ready, o_valid)}, cycle contract {want}"


def check_no_bubble(run: Run) -> None:
    """Ready held high, BDs back to back, all lengths >= 1: one beat per cycle."""
    cycles = [c for c, _ in run.got]
    assert cycles[0] == run.taken[0] + ADDRGEN_LATENCY
    assert cycles == list(range(cycles[0], cycles[0] + len(cycles))), "bubble between beats"


# --- layouts ----------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_bd_layout_is_built_from_the_field_table(kind):
    fields = address_generation_fields(kind)
    names = [f.name for f in fields]
    assert names == [f.name for f in FIELDS[kind] if f.name in names]  # table order
    assert any("_zero_" in name for name in names) == HAS_PADDING[kind]
    layout = bd_layout(kind)
    assert [(name, member.shape) for name, member in layout] == \
        [(f.name, unsigned(f.value_width)) for f in fields]
    assert beat_layout(kind).size == ADDRESS_BITS[kind] + 2


def test_field_widths_hold_actual_values():
    """A 13-bit minus-one step is 1..8192: 14 bits; 17-bit: 18; 20-bit: 21."""
    assert bd_layout("tile")["d0_stepsize"].shape == unsigned(14)
    assert bd_layout("memtile")["d3_stepsize"].shape == unsigned(18)
    assert bd_layout("shim")["iteration_stepsize"].shape == unsigned(21)
    assert bd_layout("memtile")["iteration_wrap"].shape == unsigned(7)
    assert bd_layout("shim")["base_address"].shape == unsigned(46)


def test_bd_to_payload_holds_actual_values():
    bd = BufferDescriptor("tile", buffer_length=4, d0_stepsize=8192, iteration_wrap=64)
    payload = bd_to_payload(bd)
    assert payload["d0_stepsize"] == 8192 and payload["iteration_wrap"] == 64
    assert set(payload) == {f.name for f in address_generation_fields("tile")}


# --- directed cases -----------------------------------------------------------------------


def test_one_bd_with_put_and_get():
    """The plainest use: put one BD, get its beats one by one (bd.md's tile example)."""
    bd = BufferDescriptor("tile", buffer_length=14, d0_wrap=2, d1_stepsize=8, d1_wrap=3,
                          d2_stepsize=100)
    dut = BDAddressGenerator("tile")
    beats = []

    async def bench(ctx):
        await stream_put(ctx, dut.i, bd_to_payload(bd))
        for _ in range(bd.buffer_length):
            beats.append(await stream_get(ctx, dut.o))

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    assert [b["address"] for b in beats] == [0, 1, 8, 9, 16, 17, 100, 101, 108, 109, 116, 117,
                                             200, 201]
    assert [b["last"] for b in beats] == [0] * 13 + [1]
    assert not any(b["zero"] for b in beats)


def _hardware_cases():
    for group in ("memtile_padding", "tile_addresses"):
        for case in HARDWARE[group]:
            yield pytest.param(case, id=case["name"][:40])


@pytest.mark.parametrize("case", list(_hardware_cases()))
def test_hardware_vectors(case):
    """bd.md's hardware-checked streams, one beat per cycle."""
    bd = BufferDescriptor.from_dict(case["bd"])
    run = run_addrgen(bd.kind, [bd])
    assert [-1 if b["zero"] else b["address"] for _, b in run.got] == case["stream"]
    check_beats(run)
    check_no_bubble(run)
    check_handshake(run)


@pytest.mark.parametrize("kind", KINDS)
def test_corners(kind):
    """Maximal steps, wraps, padding and iteration, address wrap-around, wraps of 1."""
    bds = corners(kind)
    run = run_addrgen(kind, bds)
    check_beats(run)
    check_handshake(run)
    stalled = run_addrgen(kind, bds, seed=1)
    check_beats(stalled)
    check_handshake(stalled)


@pytest.mark.parametrize("kind", KINDS)
def test_back_to_back_length_one(kind):
    """The hardest case for the BD boundary: a new BD every cycle."""
    bds = [BufferDescriptor(kind, buffer_length=1, base_address=a) for a in range(6)]
    run = run_addrgen(kind, bds)
    check_beats(run)
    check_no_bubble(run)
    check_handshake(run)
    assert run.taken == list(range(6))


@pytest.mark.parametrize(("a", "k"), [(1, 0), (1, 1), (1, 3), (2, 1), (2, 2), (3, 1), (4, 2)])
def test_length_zero_costs_one_holding_cycle(a, k):
    """A BD of a beats, k empty BDs, then a BD: max(0, k + 1 - a) empty cycles between."""
    bds = [BufferDescriptor("tile", buffer_length=a),
           *[BufferDescriptor("tile", buffer_length=0)] * k,
           BufferDescriptor("tile", buffer_length=2, base_address=100)]
    run = run_addrgen("tile", bds)
    check_beats(run)
    check_handshake(run)
    cycles = [c for c, _ in run.got]
    assert cycles[a] - cycles[a - 1] - 1 == max(0, k + 1 - a)


@pytest.mark.parametrize("k", [1, 2])
def test_leading_length_zero_from_idle(k):
    bds = [*[BufferDescriptor("memtile", buffer_length=0)] * k,
           BufferDescriptor("memtile", buffer_length=3)]
    run = run_addrgen("memtile", bds)
    check_beats(run)
    check_handshake(run)
    assert run.got[0][0] == ADDRGEN_LATENCY + k


# --- random BDs ---------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=40)
@given(data=st.data())
def test_back_to_back_chains_have_no_bubble(kind, data):
    """Ready held high, BDs (length >= 1) offered back to back: beats == model, no bubble."""
    bds = data.draw(chains(kind, min_length=1), label="bds")
    run = run_addrgen(kind, bds)
    check_beats(run)
    check_no_bubble(run)
    check_handshake(run)


@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=40)
@given(data=st.data())
def test_backpressure_keeps_beats_and_handshake(kind, data):
    """Random backpressure and idle input (seeded): same beats, payload held while
    stalled (checked by stream_receive), and the handshake of the cycle contract."""
    bds = data.draw(chains(kind), label="bds")
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    stall = data.draw(st.sampled_from([0.2, 0.5, 0.8]), label="stall")
    run = run_addrgen(kind, bds, seed=seed, stall=stall)
    check_beats(run)
    check_handshake(run)
