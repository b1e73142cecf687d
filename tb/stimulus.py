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

import numpy as np

from ..model.bd.descriptor import BufferDescriptor, padded_radices
from ..model.bd.fields import ADDRESS_DIMENSIONS, FIELD_INDEX, HAS_PADDING
from ..model.cycle.contract import ADDRGEN_LATENCY
from ..model.cycle.timing import bd_beats

__all__ = ["OFFER_IDLE", "READY_MODES", "edge_beats", "random_bd", "random_bds",
           "random_pattern", "ready_and_offer", "regression_stimulus", "stall_pattern"]

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


def random_bds(kind: str, count: int, seed: int, **options) -> list[BufferDescriptor]:
    """``count`` random legal BDs of ``kind`` from ``seed`` (see :func:`random_bd`)."""
    rng = random.Random(seed)
    return [random_bd(kind, rng, **options) for _ in range(count)]


def edge_beats(bd: BufferDescriptor) -> np.ndarray:
    """Per beat of ``bd``: True where D0 wraps after it or padding starts or ends.

    D0 wraps after beat ``p`` when beat ``p + 1``'s D0 counter is 0 and a D1 exists
    (:func:`~aiedma.model.cycle.timing.beat_counters`): the counter is the beat's
    position modulo D0's padded range, the first radix of ``padded_radices``.
    """
    pattern = bd.pattern()
    edge = np.zeros(bd.buffer_length, dtype=bool)
    if any(pattern["before"]) or any(pattern["after"]):   # else no beat is a zero
        _, zero, _ = bd_beats(bd.kind, bd)
        edge[:-1] |= zero[1:] != zero[:-1]
    radices = padded_radices(pattern["wraps"], pattern["before"], pattern["after"])
    if radices and edge.size > 1:
        edge[:-1] |= np.arange(1, edge.size) % radices[0] == 0
    return edge


def stall_pattern(bds: list[BufferDescriptor], rng: random.Random, *, edge_stall: float = 0.6,
                  stall: float = 0.15) -> list[bool]:
    """A ``ready`` pattern that stalls mostly on wrap and padding edges.

    Beat by beat: before each beat, a few stall cycles (each further one with
    probability ``edge_stall`` on an edge beat, ``stall`` elsewhere: a geometric
    count), then one ready cycle. With BDs back to back the output is valid on every
    cycle after the latency, so beat ``j`` meets the ``j``-th ready cycle and the
    stalls land on the beats they were meant for. The counts are drawn with NumPy
    from one draw of ``rng`` (a regression of 10^5 BDs has millions of beats).
    """
    edges = [edge_beats(bd) for bd in bds]
    edge = np.concatenate(edges) if edges else np.zeros(0, dtype=bool)
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
    if ready not in READY_MODES:
        raise ValueError(f"ready={ready!r}: the ready pattern must be one of "
                         f"{', '.join(map(repr, READY_MODES))}")
    if ready == "high":
        return random_bds(kind, count, seed), None, None
    bds = random_bds(kind, count, seed, allow_empty=True)
    pattern = stall_pattern(bds, random.Random(seed))
    offer = random_pattern(np.random.default_rng(seed), len(pattern), OFFER_IDLE)
    return bds, pattern, offer
