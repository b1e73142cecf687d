"""The BD address generator RTL against the golden model and the cycle contract.

Every run goes through :func:`aiedma.tb.block.harness.check_addrgen`, whose scoreboard
compares the RTL with the timing model of ``model/cycle/contract.py`` on every cycle (input
ready, output valid, and the beat while valid), so beats, their timing and the
handshake are all checked at once. ``tests/test_timing.py`` checks that the model
has the properties the contract promises (latency, no bubble, length-0 costs).
"""

from __future__ import annotations

import pytest
from amaranth.hdl import unsigned
from amaranth.sim import Simulator
from hdl_strategies import chains, corners
from hypothesis import given, settings
from hypothesis import strategies as st
from vectors import load

from aiedma.hdl.addrgen import BDAddressGenerator
from aiedma.hdl.layouts import bd_layout, bd_to_payload, beat_layout
from aiedma.model.bd.descriptor import BufferDescriptor
from aiedma.model.bd.fields import FIELDS, HAS_PADDING, KINDS
from aiedma.model.cycle.contract import ADDRESS_BITS, ADDRGEN_LATENCY, address_generation_fields
from aiedma.tb.block.harness import check_addrgen
from aiedma.tb.common.stimulus import ready_and_offer
from aiedma.tb.common.streams import stream_get, stream_put

HARDWARE = load("hardware.json")


def assert_one_word_per_cycle(result) -> None:
    """Ready held high, BDs back to back, lengths >= 1: the first beat after the
    latency, then one beat every cycle."""
    assert result.summary.bubbles == 0
    assert result.summary.cycles == result.summary.words + ADDRGEN_LATENCY


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
    """The plainest use: put one BD, get its beats one by one (docs/bd.md's tile example)."""
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
    """docs/bd.md's hardware-checked streams, one beat per cycle."""
    bd = BufferDescriptor.from_dict(case["bd"])
    result = check_addrgen(bd.kind, [bd])
    assert [-1 if zero else address for address, zero, _ in result.beats] == case["stream"]
    assert_one_word_per_cycle(result)


@pytest.mark.parametrize("kind", KINDS)
def test_corners(kind):
    """Maximal steps, wraps, padding and iteration, address wrap-around, wraps of 1."""
    bds = corners(kind)
    held = check_addrgen(kind, bds)
    ready, offer = ready_and_offer(1, 4 * held.summary.cycles, stall=0.5)
    assert check_addrgen(kind, bds, ready, offer=offer, seed=1).beats == held.beats


@pytest.mark.parametrize("kind", KINDS)
def test_back_to_back_length_one(kind):
    """The hardest case for the BD boundary: a new BD every cycle."""
    bds = [BufferDescriptor(kind, buffer_length=1, base_address=a) for a in range(6)]
    result = check_addrgen(kind, bds)
    assert [address for address, _, _ in result.beats] == list(range(6))
    assert_one_word_per_cycle(result)


@pytest.mark.parametrize(("a", "k"), [(1, 0), (1, 1), (1, 3), (2, 1), (2, 2), (3, 1), (4, 2)])
def test_length_zero_bds(a, k):
    """A BD of a beats, k empty BDs, then a BD: the RTL follows the model every cycle."""
    bds = [BufferDescriptor("tile", buffer_length=a),
           *[BufferDescriptor("tile", buffer_length=0)] * k,
           BufferDescriptor("tile", buffer_length=2, base_address=100)]
    result = check_addrgen("tile", bds)
    assert result.summary.words == a + 2
    assert result.summary.bubbles == max(0, k + 1 - a)


@pytest.mark.parametrize("k", [1, 2])
def test_leading_length_zero_from_idle(k):
    bds = [*[BufferDescriptor("memtile", buffer_length=0)] * k,
           BufferDescriptor("memtile", buffer_length=3)]
    result = check_addrgen("memtile", bds)
    assert result.summary.cycles == ADDRGEN_LATENCY + k + 3


# --- random BDs ---------------------------------------------------------------------------


# make test keeps the example counts small (each example is an Amaranth simulation);
# make sim's regression runs thousands of random BDs per kind through the same checks.
@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=12)
@given(data=st.data())
def test_back_to_back_chains_have_no_bubble(kind, data):
    """Ready held high, BDs (length >= 1) offered back to back: beats == model, no bubble."""
    bds = data.draw(chains(kind, min_length=1), label="bds")
    assert_one_word_per_cycle(check_addrgen(kind, bds))


@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=8)
@given(data=st.data())
def test_backpressure_keeps_beats_and_handshake(kind, data):
    """Random backpressure and an idle producer (seeded): checked every cycle, and the
    beats are the ones the same BDs give with ready held high."""
    bds = data.draw(chains(kind), label="bds")
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    stall = data.draw(st.sampled_from([0.2, 0.5, 0.8]), label="stall")
    held = check_addrgen(kind, bds)
    ready, offer = ready_and_offer(seed, 8 * held.summary.cycles + 8, stall=stall)
    assert check_addrgen(kind, bds, ready, offer=offer, seed=seed).beats == held.beats
