"""The cycle timing model against the consequences the contract states (model/cycle/contract.py).

The address generator's contract is checked for several depths of its prepare-slot
chain (``prepare_slots``, the contract's ``S``), the RTL's among them, so the
consequences are known to hold before the RTL changes its depth.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aiedma.model import BufferDescriptor
from aiedma.model.arch.kinds import DMA_KINDS
from aiedma.model.cycle.contract import (
    ADDRGEN_BD_SLOTS,
    ADDRGEN_LATENCY,
    ADDRGEN_PREPARE_SLOTS,
    FETCH_INTERVAL,
    MM2S_LATENCY,
    load_word_offsets,
)
from aiedma.model.cycle.engine import ChannelEngine, bd_beat_lists
from aiedma.model.cycle.timing import addrgen_trace, bd_beats, mm2s_trace, s2mm_trace
from aiedma.tb.common.beats import expected_beats

SLOTS = sorted({1, 2, 3, ADDRGEN_PREPARE_SLOTS})
"""Prepare-slot depths the contract is checked for: today's, the planned, and the RTL's."""


def latency(slots):
    """The contract's ``ADDRGEN_LATENCY`` for ``slots`` prepare slots: one cycle per
    slot, one to load the running slot."""
    return slots + 1


def linear(length, base=0, kind="tile"):
    return BufferDescriptor(kind, base_address=base, buffer_length=length, valid_bd=1)


def test_the_constants_follow_the_prepare_slots():
    assert ADDRGEN_LATENCY == latency(ADDRGEN_PREPARE_SLOTS)
    assert ADDRGEN_BD_SLOTS == ADDRGEN_PREPARE_SLOTS + 1


@pytest.mark.parametrize("call", [addrgen_trace, lambda *a, **k: mm2s_trace(*a, [0], **k)])
def test_at_least_one_prepare_slot(call):
    with pytest.raises(ValueError, match="prepare_slots=0: must be at least 1"):
        call("tile", [linear(1)], prepare_slots=0)


@pytest.mark.parametrize("slots", SLOTS)
def test_first_beat_after_the_named_latency(slots):
    trace = addrgen_trace("tile", [linear(3)], offer=[False] * 5, prepare_slots=slots)
    assert trace.accepted == (5,)
    assert np.flatnonzero(trace.o_valid)[0] == 5 + latency(slots)


@pytest.mark.parametrize("slots", SLOTS)
def test_a_stalled_generator_holds_one_bd_per_slot(slots):
    """``o.ready`` low: the running slot and every prepare slot fill, then ``i.ready``
    stays low (``ADDRGEN_BD_SLOTS`` BDs held, for the RTL's depth)."""
    stall = 40
    bds = [linear(2, base=10 * i) for i in range(slots + 4)]
    trace = addrgen_trace("tile", bds, ready=[False] * stall, prepare_slots=slots)
    held = [c for c in trace.accepted if c < stall]
    assert held == list(range(slots + 1))
    assert not trace.i_ready[held[-1] + 1: stall].any()
    if slots == ADDRGEN_PREPARE_SLOTS:
        assert len(held) == ADDRGEN_BD_SLOTS


@pytest.mark.parametrize("slots", SLOTS)
@pytest.mark.parametrize("lengths", [[1] * 8, [1, 5, 1, 2, 7], [3, 1, 1, 1, 4]])
def test_back_to_back_bds_leave_no_bubble(lengths, slots):
    bds = [linear(n, base=100 * i) for i, n in enumerate(lengths)]
    trace = addrgen_trace("tile", bds, prepare_slots=slots)
    beats = np.flatnonzero(trace.o_valid)
    assert beats[0] == latency(slots)
    assert np.array_equal(beats, np.arange(beats[0], beats[0] + sum(lengths)))
    assert trace.last[beats].sum() == len(lengths)
    expected = np.concatenate([bd_beats("tile", bd)[0] for bd in bds])
    assert np.array_equal(trace.address[beats], expected)


@pytest.mark.parametrize("slots", SLOTS)
@pytest.mark.parametrize("before", [0, 9])
@pytest.mark.parametrize(("a", "k"), [(1, 0), (1, 1), (1, 3), (2, 1), (2, 2), (3, 4), (4, 2),
                                      (5, 5), (2, 6)])
def test_length_zero_bds_cost_what_the_contract_says(a, k, before, slots):
    """A BD of a beats, then k BDs of length 0, then one more: max(0, k + 1 - a) gaps,
    whatever the depth; from idle, and behind a long BD (the next BDs already queued
    in the chain when the a-beat BD is loaded)."""
    bds = [linear(a), *[linear(0)] * k, linear(2, base=50)]
    if before:
        bds.insert(0, linear(before, base=200))
    beats = np.flatnonzero(addrgen_trace("tile", bds, prepare_slots=slots).o_valid)
    gap = beats[before + a] - beats[before + a - 1] - 1
    assert gap == max(0, k + 1 - a)


@pytest.mark.parametrize("slots", SLOTS)
@pytest.mark.parametrize("k", [1, 3, 5])
def test_leading_length_zero_bds_delay_by_one_cycle_each(k, slots):
    trace = addrgen_trace("tile", [linear(0)] * k + [linear(1)], prepare_slots=slots)
    assert np.flatnonzero(trace.o_valid)[0] == latency(slots) + k


@pytest.mark.parametrize("slots", SLOTS)
@settings(max_examples=50)
@given(lengths=st.lists(st.integers(0, 6), min_size=1, max_size=6),
       ready=st.lists(st.booleans(), max_size=60), offer=st.lists(st.booleans(), max_size=30))
def test_backpressure_holds_the_payload_and_keeps_the_order(slots, lengths, ready, offer):
    bds = [linear(n, base=10 * i) for i, n in enumerate(lengths)]
    trace = addrgen_trace("tile", bds, ready=ready, offer=offer, prepare_slots=slots)
    for t in range(1, trace.cycles):
        if trace.o_valid[t - 1] and not trace.o_ready[t - 1]:
            assert trace.o_valid[t]
            assert (trace.address[t], trace.last[t]) == (trace.address[t - 1], trace.last[t - 1])
    taken = trace.transfers()
    expected = [a for bd in bds for a in bd_beats("tile", bd)[0]]
    assert trace.address[taken].tolist() == expected
    handshakes = np.flatnonzero(trace.i_valid & trace.i_ready)
    assert tuple(handshakes) == trace.accepted and len(handshakes) == len(bds)
    assert not trace.i_valid[[t for t, o in enumerate(offer[: trace.cycles]) if not o]].any()


@pytest.mark.parametrize("slots", SLOTS)
def test_mm2s_reads_memory_one_cycle_after_the_beat_and_zeros_padding(slots):
    memory = np.arange(1000, 1016)
    bd = BufferDescriptor("memtile", buffer_length=16, d0_wrap=13, d0_zero_before=2,
                          d0_zero_after=1, valid_bd=1)
    trace = mm2s_trace("memtile", [bd], memory, prepare_slots=slots)
    words = np.flatnonzero(trace.o_valid & trace.o_ready)
    assert words[0] == latency(slots) + MM2S_LATENCY
    assert np.array_equal(words, np.arange(words[0], words[0] + 16))
    assert trace.data[words].tolist() == [0, 0, *range(1000, 1013), 0]
    assert trace.last[words].tolist() == [False] * 15 + [True]


@pytest.mark.parametrize("slots", SLOTS)
@settings(max_examples=50)
@given(ready=st.lists(st.booleans(), max_size=80))
def test_mm2s_under_backpressure_loses_nothing(slots, ready):
    memory = np.arange(500, 600)
    bds = [linear(7, base=3, kind="memtile"), linear(1, base=90, kind="memtile"),
           linear(5, base=40, kind="memtile")]
    trace = mm2s_trace("memtile", bds, memory, ready=ready, prepare_slots=slots)
    words = np.flatnonzero(trace.o_valid & trace.o_ready)
    assert trace.data[words].tolist() == [*range(503, 510), 590, *range(540, 545)]


# --- a BD's beats: one implementation, bd_beats; tb.beats.expected_beats shows it as dicts ---


@pytest.mark.parametrize(("kind", "fields"), [
    ("tile", {"base_address": (1 << 14) - 2, "buffer_length": 5}),  # wraps past 14 bits
    ("memtile", {"base_address": 7, "buffer_length": 12, "d0_wrap": 3, "d0_zero_before": 1,
                 "d0_zero_after": 1, "d1_stepsize": 10}),
    ("shim", {"buffer_length": 0}),
])
def test_bd_beats_against_a_per_word_reference(kind, fields):
    """A per-word reference, kept here on purpose: it states the beat rule (address
    modulo the kind's width, 0 on zero words, last on the final word) one word at a
    time, independently of the vectorised bd_beats it checks."""
    bd = BufferDescriptor(kind, valid_bd=1, **fields)
    words = bd.stream().tolist()
    mask = (1 << DMA_KINDS[kind].address_bits) - 1
    want = [{"address": a & mask if a >= 0 else 0, "zero": int(a < 0),
             "last": int(j == len(words) - 1)} for j, a in enumerate(words)]
    address, zero, last = bd_beats(kind, bd)
    got = [{"address": int(a), "zero": int(z), "last": int(t)}
           for a, z, t in zip(address, zero, last, strict=True)]
    assert got == want
    assert expected_beats([bd, bd]) == want + want


LENGTHS = sorted({1, FETCH_INTERVAL - 1, FETCH_INTERVAL, FETCH_INTERVAL + 2})


@pytest.mark.parametrize("length", LENGTHS)
def test_a_load_takes_its_beats_or_the_fetch_interval_whichever_is_longer(length):
    offsets = load_word_offsets([length, length])
    assert offsets[:length] == list(range(length))
    assert offsets[length] == max(length, FETCH_INTERVAL)      # the second load's first word


def test_a_long_load_gives_the_next_loads_a_head_start():
    # fetched FETCH_INTERVAL apart while the long load streams: no bubble after it
    offsets = load_word_offsets([4 * FETCH_INTERVAL, 1, 1])
    assert offsets == list(range(4 * FETCH_INTERVAL + 2))


def test_a_load_without_beats_is_refused():
    with pytest.raises(ValueError, match=r"lengths\[1\]=0: a load has at least one beat"):
        load_word_offsets([2, 0])


# --- the S2MM skid (contract: "Lock gate") ------------------------------------------------


def test_an_s2mm_stall_at_a_bds_last_beat_takes_the_next_bd_at_its_start():
    """One prepare slot, BDs of two beats offered back to back, one word in cycle 4 and
    none in 5-10. BD 0's first beat shows in 2 (``ADDRGEN_LATENCY``), waits in the skid
    and joins in 4; its last beat shows in 5 and, not taken, goes into the skid at edge
    5, freeing ``R`` there: BD 1 loads from the prepare slot and BD 2 is accepted in 5,
    the stall's first cycle (without the skid, in 11, when that beat joins)."""
    bds = [linear(2) for _ in range(4)]
    valid = [False] * 4 + [True] + [False] * 6
    trace = s2mm_trace("tile", bds, list(range(8)), valid=valid, prepare_slots=1)
    assert list(np.flatnonzero(trace.bd_valid & trace.bd_ready)) == [0, 1, 5, 13]
    # The gate still sees every beat in its cycle: no word waits on the skid.
    assert trace.joins == (4, *range(11, 18))


def _fot_joins(cut_at):
    """Joins of an S2MM engine running BDs of 4 and 2 beats with words always valid,
    the word of join ``cut_at`` carrying TLAST (finish on TLAST)."""
    engine = ChannelEngine("tile", False)
    bds = [linear(4), linear(2)]
    joins, taken, cycle = [], 0, 0
    while taken < len(bds) or not engine.empty:
        end = len(joins) == cut_at
        engine.drive(bds[taken] if taken < len(bds) else None, i_valid=True, i_end=end)
        engine.grant(True)
        signals = engine.sample()
        if signals.stream_valid and signals.stream_ready:
            joins.append(cycle)
        accepted = signals.bd_valid and signals.bd_ready
        engine.clock(bd_beat_lists("tile", bds[taken]) if accepted else None)
        taken += accepted
        cycle += 1
    return joins


def test_a_tlast_mid_bd_drops_its_beats_in_the_next_cycle_a_bubble_before_the_next_bd():
    """A word with TLAST on BD 0's second beat (join ``c + 1``) ends BD 0; the generator
    drops its other two beats in ``c + 2`` (the ``dropping`` register) and BD 1's first
    beat joins in ``c + 3``: one cycle later than after a BD ending by its length."""
    whole = _fot_joins(cut_at=None)
    c = whole[0]
    assert whole == list(range(c, c + 6))
    assert _fot_joins(cut_at=1) == [c, c + 1, c + 3, c + 4]
    # TLAST on the BD's own last beat drops nothing: no bubble.
    assert _fot_joins(cut_at=3) == whole


def test_reports_name_the_beat_at_the_gate_the_skids_when_it_holds_one():
    """No word comes: BD 0's first beat goes into the skid and the generator shows its
    second; a mismatch report must name beat 0, the one at the gate."""
    engine = ChannelEngine("tile", False)
    bd = linear(4)
    engine.drive(bd)
    engine.grant(True)
    engine.sample()
    engine.clock(bd_beat_lists("tile", bd))
    positions = []
    for _ in range(ADDRGEN_LATENCY + 2):
        engine.drive(None)
        engine.grant(True)
        engine.sample()
        positions.append((engine.skid is not None, engine.gate_beat()[1],
                          engine.slots.position))
        engine.clock()
    # Beat 0 shows in cycle ADDRGEN_LATENCY (the loop's entry ADDRGEN_LATENCY - 1), goes
    # into the skid at its edge, and the generator moves on to beat 1.
    assert positions[-3:] == [(False, 0, 0), (True, 0, 1), (True, 0, 1)]
