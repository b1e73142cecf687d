"""The regression stimulus shared by the bulk testbench and the benchmark suite.

``regression_stimulus`` is checked for what its callers rely on: ready high means
non-empty BDs and no patterns; the stall patterns cover every beat and run side by
side; a seed names one stimulus; a bad ``ready`` is refused by name. The model's
trace of a stall stimulus also ends within its patterns' reach.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from aiedma.model.bd.fields import KINDS
from aiedma.model.cycle.contract import ADDRGEN_LATENCY
from aiedma.model.cycle.timing import addrgen_trace, bd_beats, beat_counters
from aiedma.tb.stimulus import (
    OFFER_IDLE,
    READY_MODES,
    edge_beats,
    edge_mask,
    random_bds,
    regression_stimulus,
    stall_pattern,
)


def _key(stimulus) -> tuple:
    bds, ready, offer = stimulus
    return [repr(bd) for bd in bds], ready, offer


@pytest.mark.parametrize("kind", KINDS)
def test_ready_high_is_non_empty_bds_and_no_patterns(kind):
    bds, ready, offer = regression_stimulus(kind, 200, 11, "high")
    assert ready is None and offer is None
    assert len(bds) == 200
    assert all(bd.kind == kind and bd.buffer_length >= 1 for bd in bds)
    assert bds == random_bds(kind, 200, 11)
    assert regression_stimulus(kind, 200, 11)[0] == bds  # "high" is the default


@pytest.mark.parametrize("kind", KINDS)
def test_stall_patterns_cover_every_beat(kind):
    bds, ready, offer = regression_stimulus(kind, 500, 11, "stall")
    assert len(bds) == 500 and all(bd.kind == kind for bd in bds)
    assert any(bd.buffer_length == 0 for bd in bds)  # empty BDs are in play
    words = sum(bd.buffer_length for bd in bds)
    # One ready cycle per beat after the latency, stalls in between; the offer runs
    # alongside, idle on about OFFER_IDLE of the cycles.
    assert len(offer) == len(ready)
    assert ready[:ADDRGEN_LATENCY] == [True] * ADDRGEN_LATENCY
    assert ready.count(True) == ADDRGEN_LATENCY + words
    assert ready.count(False) > 0 and ready[-1] is True
    assert 0.5 * OFFER_IDLE < offer.count(False) / len(offer) < 2 * OFFER_IDLE


def test_stall_trace_ends():
    bds, ready, offer = regression_stimulus("memtile", 40, 3, "stall")
    trace = addrgen_trace("memtile", bds, ready, offer)
    assert (trace.o_valid & trace.o_ready).sum() == sum(bd.buffer_length for bd in bds)
    assert len(trace.accepted) == len(bds)


@pytest.mark.parametrize("ready", READY_MODES)
def test_a_seed_names_one_stimulus(ready):
    first = _key(regression_stimulus("shim", 60, 5, ready))
    assert _key(regression_stimulus("shim", 60, 5, ready)) == first
    assert _key(regression_stimulus("shim", 60, 6, ready)) != first
    assert _key(regression_stimulus("tile", 60, 5, ready)) != first


@pytest.mark.parametrize("ready", ["sometimes", "", "High", None])
def test_unknown_ready_is_refused(ready):
    with pytest.raises(ValueError, match=r"ready=.*must be one of 'high', 'stall'") as error:
        regression_stimulus("tile", 10, 1, ready)
    assert repr(ready) in str(error.value)


@pytest.mark.parametrize("kind", KINDS)
def test_edge_beats_are_d0_wraps_and_padding_edges(kind):
    """The vectorised edges equal the definition, beat by beat, from beat_counters, for
    one BD and for all of them at once (no edge across two BDs)."""
    bds = random_bds(kind, 300, 5, allow_empty=True)
    every = []
    for bd in bds:
        _, zero, _ = bd_beats(kind, bd)
        want = [bool(p + 1 < zero.size and (
                    zero[p + 1] != zero[p]
                    or (beat_counters(bd, p + 1)["d0"] == 0 and "d1" in beat_counters(bd, p + 1))))
                for p in range(zero.size)]
        assert edge_beats(bd).tolist() == want, bd
        every += want
    assert edge_mask(bds, [bd_beats(kind, bd) for bd in bds]).tolist() == every


def test_stall_pattern_stalls_longer_on_edges():
    """Stall cycles before a beat are geometric: mean p / (1 - p), p by edge or not."""
    bds = random_bds("memtile", 3000, 2, allow_empty=True)
    pattern = np.array(stall_pattern(bds, random.Random(4), edge_stall=0.6, stall=0.15))
    edge = np.concatenate([edge_beats(bd) for bd in bds])
    ready = np.flatnonzero(pattern)[ADDRGEN_LATENCY:]
    assert ready.size == edge.size   # one ready cycle per beat
    stalls = np.diff(np.concatenate(([ADDRGEN_LATENCY - 1], ready))) - 1
    assert stalls[edge].mean() == pytest.approx(0.6 / 0.4, rel=0.1)
    assert stalls[~edge].mean() == pytest.approx(0.15 / 0.85, rel=0.1)
