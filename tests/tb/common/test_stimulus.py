"""The regression stimulus shared by the bulk testbench and the benchmark suite.

``regression_stimulus`` is checked for what its callers rely on: ready high means
non-empty BDs and no patterns; the stall patterns cover every beat and run side by
side; a seed names one stimulus; a bad ``ready`` is refused by name. The model's
trace of a stall stimulus also ends within its patterns' reach.

The BDs are drawn for all BDs at once (``random_bd_batch``): every one is legal by
the model's own decoder, the draw covers the corners a regression is for (lengths 0
and 1, wraps 0, 1 and maximum, padding on every side up to its maximum, iteration
offsets), and the batch's edges and beats equal the per-BD definitions.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from aiedma.model.bd.descriptor import BufferDescriptor
from aiedma.model.bd.fields import ADDRESS_DIMENSIONS, FIELD_INDEX, HAS_PADDING, KINDS
from aiedma.model.cycle.contract import ADDRGEN_LATENCY
from aiedma.model.cycle.timing import (
    addrgen_trace,
    addrgen_trace_fast,
    batch_beats,
    bd_beats,
    beat_counters,
)
from aiedma.tb.common.stimulus import (
    OFFER_IDLE,
    READY_MODES,
    batch_edges,
    edge_beats,
    random_bd,
    random_bd_batch,
    random_bds,
    regression_batch,
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
    """The vectorised edges equal the definition, beat by beat, from beat_counters."""
    for bd in random_bds(kind, 300, 5, allow_empty=True):
        _, zero, _ = bd_beats(kind, bd)
        want = [bool(p + 1 < zero.size and (
                    zero[p + 1] != zero[p]
                    or (beat_counters(bd, p + 1)["d0"] == 0 and "d1" in beat_counters(bd, p + 1))))
                for p in range(zero.size)]
        assert edge_beats(bd).tolist() == want, bd


@pytest.mark.filterwarnings("ignore::aiedma.model.errors.UndocumentedBehaviourWarning")
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


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.filterwarnings("ignore::aiedma.model.errors.UndocumentedBehaviourWarning")
def test_random_bds_are_legal_by_the_decoder(kind):
    """Each BD's register words, from the batch, decode to the same BD (and the
    checked objects equal ones built through the constructor)."""
    batch = random_bd_batch(kind, 3000, 17, allow_empty=True)
    listed = batch.bds()
    words = batch.encode().tolist()
    for i in range(0, len(batch), 7):   # a sample: the decoder is slow
        assert BufferDescriptor.decode(kind, words[i]) == listed[i] == batch.bd(i)
    assert listed == random_bds(kind, 3000, 17, allow_empty=True)
    assert all(bd.valid_bd == 1 for bd in listed)


@pytest.mark.parametrize("kind", KINDS)
def test_random_bds_cover_the_corners(kind):
    batch = random_bd_batch(kind, 5000, 3, allow_empty=True)
    fields = FIELD_INDEX[kind]
    lengths = batch.lengths
    assert {0, 1, 48} <= set(lengths.tolist()) and lengths.max() == 48
    assert (random_bd_batch(kind, 2000, 3).lengths >= 1).all()
    assert (batch["base_address"] == 0).any() and (batch["base_address"] > 1 << 12).any()
    n = ADDRESS_DIMENSIONS[kind]
    for k in range(n):
        steps = batch[f"d{k}_stepsize"]
        assert {1, 2, fields[f"d{k}_stepsize"].maximum} <= set(steps.tolist())
    for k in range(n - 1):
        wraps = batch[f"d{k}_wrap"]
        assert {0, 1, 2, fields[f"d{k}_wrap"].maximum} <= set(wraps.tolist())
        if HAS_PADDING[kind]:
            for side in ("before", "after"):
                pad = batch[f"d{k}_zero_{side}"]
                assert {0, 1, fields[f"d{k}_zero_{side}"].maximum} <= set(pad.tolist()), \
                    (k, side)
    iterating = batch["iteration_wrap"] > 1
    assert 0.2 < iterating.mean() < 0.4
    assert (batch["iteration_current"][iterating] > 0).any()
    assert (batch["iteration_current"] == batch["iteration_wrap"] - 1)[iterating].any()
    stream, _ = batch.streams()
    if HAS_PADDING[kind]:
        assert 0.05 < (stream < 0).mean() < 0.8   # zero words, but mostly data
    edge = batch_edges(batch)
    assert 0.05 < edge.mean() < 0.8


@pytest.mark.parametrize("kind", KINDS)
def test_batch_edges_and_beats_equal_each_bd(kind):
    batch = random_bd_batch(kind, 400, 5, allow_empty=True)
    listed = batch.bds()
    assert batch_edges(batch).tolist() == np.concatenate(
        [edge_beats(bd) for bd in listed]).tolist()
    got = batch_beats(kind, batch)
    for i, want in enumerate(zip(*(bd_beats(kind, bd) for bd in listed), strict=True)):
        np.testing.assert_array_equal(got[i], np.concatenate(want))


def test_a_seed_names_one_batch_and_random_bd_draws_from_its_rng():
    first = random_bd_batch("memtile", 50, 9)
    assert first.bds() == random_bd_batch("memtile", 50, 9).bds()
    assert first.bds() != random_bd_batch("memtile", 50, 10).bds()
    assert random_bd("shim", random.Random(4)) == random_bd("shim", random.Random(4))
    assert random_bd("shim", random.Random(4)) != random_bd("shim", random.Random(5))


@pytest.mark.parametrize("ready", READY_MODES)
@pytest.mark.parametrize("kind", KINDS)
def test_regression_batch_is_the_regression_stimulus(kind, ready):
    """The bulk testbench's arrays are the stimulus every other bench runs, and their
    fast trace (from the batch, no object per BD) equals the per-cycle model's."""
    batch, pattern, offer = regression_batch(kind, 150, 21, ready)
    bds, ready_list, offer_list = regression_stimulus(kind, 150, 21, ready)
    assert batch.bds() == bds
    if ready == "high":
        assert pattern is None and offer is None and ready_list is None
    else:
        assert pattern.tolist() == ready_list and offer.tolist() == offer_list
    want = addrgen_trace(kind, bds, ready_list, offer_list)
    got = addrgen_trace_fast(kind, batch, pattern, offer)
    for name in ("i_valid", "i_ready", "o_valid", "o_ready", "address", "zero", "last",
                 "accepted"):
        np.testing.assert_array_equal(np.asarray(getattr(got, name)),
                                      np.asarray(getattr(want, name)), err_msg=name)
