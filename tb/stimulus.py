"""Random legal BDs per kind, and the handshake patterns every bench drives them with.

Plain ``random.Random`` (seeded, replayable) rather than hypothesis, so that a
regression of thousands of BDs is cheap to generate and a seed names a run.

A *pattern* is a sequence of bools indexed by cycle, held high after it ends
(:func:`aiedma.model.cycle.timing.held_high`): a ``ready`` pattern says when a
consumer takes, an ``offer`` pattern when a producer offers. The model's traces,
the scoreboard runners, the stream helpers of :mod:`.streams` and the cocotb
benches all read patterns in this one form; :func:`random_pattern`,
:func:`ready_and_offer` and :func:`stall_pattern` make them.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import numpy as np

from ..model.bd.descriptor import BufferDescriptor, padded_radices
from ..model.bd.fields import ADDRESS_DIMENSIONS, FIELD_INDEX, HAS_PADDING
from ..model.cycle.contract import ADDRGEN_LATENCY
from ..model.cycle.timing import bd_beats

__all__ = ["OFFER_IDLE", "READY_MODES", "edge_beats", "edge_mask", "random_bd", "random_bds",
           "random_pattern", "ready_and_offer", "regression_stimulus",
           "regression_stimulus_beats", "stall_pattern"]

READY_MODES = ("high", "stall")
"""The ready patterns of :func:`regression_stimulus`."""
OFFER_IDLE = 0.05
"""Fraction of cycles the producer idles (offers no BD) in a ``"stall"`` regression."""


def random_pattern(rng: random.Random | np.random.Generator, cycles: int,
                   low: float) -> list[bool]:
    """A pattern of ``cycles`` cycles, each low with probability ``low``.

    Parameters
    ----------
    rng : random.Random or numpy.random.Generator
        Seeded by the caller; the pattern is a function of its state.
    cycles : int
        Length of the pattern (it is held high afterwards).
    low : float
        Probability that a cycle stalls (``ready``) or idles (``offer``).
    """
    if isinstance(rng, np.random.Generator):
        return (rng.random(cycles) >= low).tolist()
    return [rng.random() >= low for _ in range(cycles)]


def ready_and_offer(seed: int, cycles: int, *, stall: float = 0.4,
                    idle: float = 0.3) -> tuple[list[bool], list[bool]]:
    """Seeded backpressure (``ready``) and an idle producer (``offer``), per cycle.

    The ready pattern is drawn first, from ``random.Random(seed)``, then the offer.
    """
    rng = random.Random(seed)
    return random_pattern(rng, cycles, stall), random_pattern(rng, cycles, idle)


def _pick(rng: random.Random, maximum: int, low: int = 1) -> int:
    """Corner values (low, low + 1, the maximum) often, anything in between otherwise."""
    roll = rng.random()
    if roll < 0.15:
        return low
    if roll < 0.3:
        return min(low + 1, maximum)
    if roll < 0.4:
        return maximum
    return rng.randint(low, min(maximum, max(low, 12)) if roll < 0.85 else maximum)


def random_bd(kind: str, rng: random.Random, *, max_length: int = 48,
              allow_empty: bool = False) -> BufferDescriptor:
    """One random legal BD of ``kind``, with every address-generation field in play.

    Wraps are 0 (never wraps), 1, 2, small or the field maximum; steps 1, 2, small
    or the maximum; memory-tile padding 0, 1, small or the maximum where the
    legality rules allow it; iteration on or off; ``buffer_length`` at most
    ``max_length`` (0 only with ``allow_empty``) so runs stay short.
    """
    fields = FIELD_INDEX[kind]
    n = ADDRESS_DIMENSIONS[kind]
    values: dict[str, int] = {"valid_bd": 1}
    values["buffer_length"] = rng.randint(0 if allow_empty else 1, max_length)
    values["base_address"] = rng.choice([0, rng.randint(0, fields["base_address"].maximum)])
    for k in range(n):
        values[f"d{k}_stepsize"] = _pick(rng, fields[f"d{k}_stepsize"].maximum)
    never = False  # after a wrap-0 dimension, higher wraps never matter
    for k in range(n - 1):
        wrap = 0 if rng.random() < 0.1 else _pick(rng, fields[f"d{k}_wrap"].maximum)
        values[f"d{k}_wrap"] = wrap
        if HAS_PADDING[kind] and not never:
            limit = fields[f"d{k}_zero_before"].maximum
            values[f"d{k}_zero_before"] = _pick(rng, limit, 0) if rng.random() < 0.5 else 0
            if wrap:
                values[f"d{k}_zero_after"] = _pick(rng, limit, 0) if rng.random() < 0.5 else 0
        never = never or wrap == 0
    if rng.random() < 0.3:
        wrap = _pick(rng, fields["iteration_wrap"].maximum)
        values |= {"iteration_wrap": wrap, "iteration_current": rng.randrange(wrap),
                   "iteration_stepsize": _pick(rng, fields["iteration_stepsize"].maximum)}
    return BufferDescriptor(kind, **values)


def _picks(draw: np.random.Generator, count: int, maximum: int, low: int = 1) -> np.ndarray:
    """:func:`_pick` ``count`` times at once: the same distribution, drawn with NumPy."""
    roll = draw.random(count)
    small = draw.integers(low, min(maximum, max(low, 12)) + 1, count)
    anything = draw.integers(low, maximum + 1, count)
    return np.select([roll < 0.15, roll < 0.3, roll < 0.4, roll < 0.85],
                     [low, min(low + 1, maximum), maximum, small], anything)


def random_bds(kind: str, count: int, seed: int, *, max_length: int = 48,
               allow_empty: bool = False) -> list[BufferDescriptor]:
    """``count`` random legal BDs of ``kind`` from ``seed``, as :func:`random_bd` draws
    them (the same distribution of every field), each field drawn for all BDs at once:
    a bulk regression makes 10^5 of them."""
    fields = FIELD_INDEX[kind]
    n = ADDRESS_DIMENSIONS[kind]
    draw = np.random.default_rng(seed)
    columns: dict[str, np.ndarray] = {
        "valid_bd": np.ones(count, dtype=np.int64),
        "buffer_length": draw.integers(0 if allow_empty else 1, max_length + 1, count),
        "base_address": np.where(draw.random(count) < 0.5, 0,
                                 draw.integers(0, fields["base_address"].maximum + 1, count)),
    }
    for k in range(n):
        columns[f"d{k}_stepsize"] = _picks(draw, count, fields[f"d{k}_stepsize"].maximum)
    never = np.zeros(count, dtype=bool)   # after a wrap-0 dimension, higher wraps never matter
    for k in range(n - 1):
        wrap = np.where(draw.random(count) < 0.1, 0,
                        _picks(draw, count, fields[f"d{k}_wrap"].maximum))
        columns[f"d{k}_wrap"] = wrap
        if HAS_PADDING[kind]:
            limit = fields[f"d{k}_zero_before"].maximum
            before = np.where(draw.random(count) < 0.5, _picks(draw, count, limit, 0), 0)
            after = np.where(draw.random(count) < 0.5, _picks(draw, count, limit, 0), 0)
            columns[f"d{k}_zero_before"] = np.where(never, 0, before)
            columns[f"d{k}_zero_after"] = np.where(never | (wrap == 0), 0, after)
        never |= wrap == 0
    iterating = draw.random(count) < 0.3
    wrap = _picks(draw, count, fields["iteration_wrap"].maximum)
    columns["iteration_wrap"] = np.where(iterating, wrap, 1)
    columns["iteration_current"] = np.where(iterating, (draw.random(count) * wrap).astype(
        np.int64), 0)
    columns["iteration_stepsize"] = np.where(
        iterating, _picks(draw, count, fields["iteration_stepsize"].maximum), 1)
    names = list(columns)
    rows = zip(*(columns[name].tolist() for name in names), strict=True)
    return [BufferDescriptor(kind, **dict(zip(names, row, strict=True))) for row in rows]


def edge_beats(bd: BufferDescriptor) -> np.ndarray:
    """Per beat of ``bd``: True where D0 wraps after it or padding starts or ends.

    D0 wraps after beat ``p`` when beat ``p + 1``'s D0 counter is 0 and a D1 exists
    (:func:`~aiedma.model.cycle.timing.beat_counters`): the counter is the beat's
    position modulo D0's padded range, the first radix of ``padded_radices``.
    """
    return edge_mask([bd], [bd_beats(bd.kind, bd)])


def edge_mask(bds: Sequence[BufferDescriptor],
              beats: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]]) -> np.ndarray:
    """:func:`edge_beats` of every BD, concatenated, from their beats (``bd_beats``),
    in whole-array operations: a regression of 10^5 BDs runs this once."""
    lengths = np.array([bd.buffer_length for bd in bds], dtype=np.int64)
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=bool)
    ends = np.cumsum(lengths)
    starts = ends - lengths
    edge = np.zeros(total, dtype=bool)
    zero = np.concatenate([b[1] for b in beats])
    inside = np.ones(total - 1, dtype=bool)     # beat i and i + 1 are of one BD
    inside[ends[lengths > 0][:-1] - 1] = False
    edge[:-1] = (zero[1:] != zero[:-1]) & inside
    first_radix = []
    for bd in bds:
        pattern = bd.pattern()
        radices = padded_radices(pattern["wraps"], pattern["before"], pattern["after"])
        first_radix.append(radices[0] if radices else 0)
    radix = np.repeat(np.array(first_radix, dtype=np.int64), lengths)
    position = np.arange(total) - np.repeat(starts, lengths) + 1   # of the next beat
    wraps = (radix > 0) & (position < np.repeat(lengths, lengths))
    edge[wraps] |= position[wraps] % radix[wraps] == 0
    return edge


def stall_pattern(bds: list[BufferDescriptor], rng: random.Random, *, edge_stall: float = 0.6,
                  stall: float = 0.15,
                  beats: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]] | None = None,
                  ) -> list[bool]:
    """A ``ready`` pattern that stalls mostly on wrap and padding edges.

    Beat by beat: before each beat, a few stall cycles (each further one with
    probability ``edge_stall`` on an edge beat, ``stall`` elsewhere: a geometric
    count), then one ready cycle. With BDs back to back the output is valid on every
    cycle after the latency, so beat ``j`` meets the ``j``-th ready cycle and the
    stalls land on the beats they were meant for. The counts are drawn with NumPy
    from one draw of ``rng`` (a regression of 10^5 BDs has millions of beats).
    ``beats`` may pass the BDs' ``bd_beats``, computed once by the caller.
    """
    if beats is None:
        beats = [bd_beats(bd.kind, bd) for bd in bds]
    edge = edge_mask(bds, beats)
    draw = np.random.default_rng(rng.getrandbits(64))
    # Stall cycles before a beat: k with probability p^k (1 - p), a geometric count.
    stalls = draw.geometric(1 - np.where(edge, edge_stall, stall)) - 1
    pattern = np.zeros(ADDRGEN_LATENCY + int(stalls.sum()) + edge.size, dtype=bool)
    pattern[:ADDRGEN_LATENCY] = True
    pattern[ADDRGEN_LATENCY + np.cumsum(stalls + 1) - 1] = True
    return pattern.tolist()


def regression_stimulus(kind: str, count: int, seed: int, ready: str = "high"
                        ) -> tuple[list[BufferDescriptor], list[bool] | None, list[bool] | None]:
    """The BDs, ``o.ready`` pattern and offer pattern of one random regression.

    The one stimulus of the bulk testbench (:func:`~aiedma.tb.bulk.run_bulk`) and
    of the co-simulation benchmarks (:mod:`aiedma.flows.bench`), so that every
    simulator runs the same regression for the same arguments.

    Parameters
    ----------
    kind : {"tile", "memtile", "shim"}
        The DMA kind of the BDs.
    count : int
        Random BDs (:func:`random_bds`).
    seed : int
        Seeds the BDs, the ready pattern and the offer: the same arguments give
        the same stimulus.
    ready : {"high", "stall"}
        ``"high"``: BDs of length >= 1, ``o.ready`` and the offer held high.
        ``"stall"``: empty BDs allowed, :func:`stall_pattern` on ``o.ready`` and
        an offer that idles on about :data:`OFFER_IDLE` of the cycles.

    Returns
    -------
    bds : list of BufferDescriptor
        ``count`` legal BDs of ``kind``.
    ready_pattern : list of bool or None
        ``o.ready`` per cycle (held high past its end); None for ``"high"``.
    offer : list of bool or None
        Whether the producer offers a BD, per cycle, as long as ``ready_pattern``;
        None for ``"high"``.

    Raises
    ------
    ValueError
        If ``ready`` is not one of :data:`READY_MODES`.
    """
    bds, pattern, offer, _ = regression_stimulus_beats(kind, count, seed, ready)
    return bds, pattern, offer


def regression_stimulus_beats(kind: str, count: int, seed: int, ready: str = "high") -> tuple[
        list[BufferDescriptor], list[bool] | None, list[bool] | None,
        list[tuple[np.ndarray, np.ndarray, np.ndarray]]]:
    """:func:`regression_stimulus` and each BD's ``bd_beats``, computed once for the
    stall pattern and the expected trace (a bulk run's largest model cost)."""
    if ready not in READY_MODES:
        raise ValueError(f"ready={ready!r}: the ready pattern must be one of "
                         f"{', '.join(map(repr, READY_MODES))}")
    bds = random_bds(kind, count, seed, allow_empty=ready != "high")
    beats = [bd_beats(kind, bd) for bd in bds]
    if ready == "high":
        return bds, None, None, beats
    pattern = stall_pattern(bds, random.Random(seed), beats=beats)
    offer = random_pattern(np.random.default_rng(seed), len(pattern), OFFER_IDLE)
    return bds, pattern, offer, beats
