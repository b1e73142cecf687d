"""The cycle timing model against the consequences the contract states (model/cycle.py)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aiedma.model import BufferDescriptor
from aiedma.model.cycle import ADDRGEN_LATENCY, MM2S_LATENCY
from aiedma.model.timing import addrgen_trace, bd_beats, mm2s_trace


def linear(length, base=0, kind="tile"):
    return BufferDescriptor(kind, base_address=base, buffer_length=length, valid_bd=1)


def test_first_beat_after_the_named_latency():
    trace = addrgen_trace("tile", [linear(3)], offer=[False] * 5)
    assert trace.accepted == (5,)
    assert np.flatnonzero(trace.o_valid)[0] == 5 + ADDRGEN_LATENCY


@pytest.mark.parametrize("lengths", [[1] * 8, [1, 5, 1, 2, 7], [3, 1, 1, 1, 4]])
def test_back_to_back_bds_leave_no_bubble(lengths):
    bds = [linear(n, base=100 * i) for i, n in enumerate(lengths)]
    trace = addrgen_trace("tile", bds)
    beats = np.flatnonzero(trace.o_valid)
    assert beats[0] == ADDRGEN_LATENCY
    assert np.array_equal(beats, np.arange(beats[0], beats[0] + sum(lengths)))
    assert trace.last[beats].sum() == len(lengths)
    expected = np.concatenate([bd_beats("tile", bd)[0] for bd in bds])
    assert np.array_equal(trace.address[beats], expected)


@pytest.mark.parametrize(("a", "k"), [(1, 1), (1, 3), (2, 1), (4, 2), (5, 5)])
def test_length_zero_bds_cost_what_the_contract_says(a, k):
    """A BD of a beats, then k BDs of length 0, then one more: max(0, k + 1 - a) gaps."""
    bds = [linear(a), *[linear(0)] * k, linear(2, base=50)]
    beats = np.flatnonzero(addrgen_trace("tile", bds).o_valid)
    gap = beats[a] - beats[a - 1] - 1
    assert gap == max(0, k + 1 - a)


def test_leading_length_zero_bds_delay_by_one_cycle_each():
    trace = addrgen_trace("tile", [linear(0)] * 3 + [linear(1)])
    assert np.flatnonzero(trace.o_valid)[0] == ADDRGEN_LATENCY + 3


@settings(max_examples=50)
@given(lengths=st.lists(st.integers(0, 6), min_size=1, max_size=6),
       ready=st.lists(st.booleans(), max_size=60), offer=st.lists(st.booleans(), max_size=30))
def test_backpressure_holds_the_payload_and_keeps_the_order(lengths, ready, offer):
    bds = [linear(n, base=10 * i) for i, n in enumerate(lengths)]
    trace = addrgen_trace("tile", bds, ready=ready, offer=offer)
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


def test_mm2s_reads_memory_one_cycle_after_the_beat_and_zeros_padding():
    memory = np.arange(1000, 1016)
    bd = BufferDescriptor("memtile", buffer_length=16, d0_wrap=13, d0_zero_before=2,
                          d0_zero_after=1, valid_bd=1)
    trace = mm2s_trace("memtile", [bd], memory)
    words = np.flatnonzero(trace.o_valid & trace.o_ready)
    assert words[0] == ADDRGEN_LATENCY + MM2S_LATENCY
    assert np.array_equal(words, np.arange(words[0], words[0] + 16))
    assert trace.data[words].tolist() == [0, 0, *range(1000, 1013), 0]
    assert trace.last[words].tolist() == [False] * 15 + [True]


@settings(max_examples=50)
@given(ready=st.lists(st.booleans(), max_size=80))
def test_mm2s_under_backpressure_loses_nothing(ready):
    memory = np.arange(500, 600)
    bds = [linear(7, base=3, kind="memtile"), linear(1, base=90, kind="memtile"),
           linear(5, base=40, kind="memtile")]
    trace = mm2s_trace("memtile", bds, memory, ready=ready)
    words = np.flatnonzero(trace.o_valid & trace.o_ready)
    assert trace.data[words].tolist() == [*range(503, 510), 590, *range(540, 545)]
