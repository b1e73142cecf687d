"""Random legal BDs per kind, and the handshake patterns every bench drives them with.

Seeded NumPy draws (replayable) rather than hypothesis, so that a seed names a run;
the BDs of a regression are drawn for all BDs at once as a
:class:`~aiedma.model.bd.batch.BDBatch` (:func:`random_bd_batch`), because the bulk
regression draws 10^5 and more of them and a Python loop per BD would bound its rate.

A *pattern* is a sequence of bools indexed by cycle, held high after it ends
(:func:`aiedma.model.cycle.timing.held_high`): a ``ready`` pattern says when a
consumer takes, an ``offer`` pattern when a producer offers. The model's traces,
the scoreboard runners, the stream helpers of :mod:`.streams` and the cocotb
benches all read patterns in this one form; :func:`random_pattern`,
:func:`ready_and_offer` and :func:`stall_pattern` make them.
"""

from __future__ import annotations

import random
import warnings
from collections.abc import Sequence

import numpy as np

from ...model.arch.register_map import WORD_BYTES, register_at, register_span, registers
from ...model.bd.batch import BDBatch
from ...model.bd.descriptor import BufferDescriptor, padded_radices
from ...model.bd.fields import ADDRESS_DIMENSIONS, FIELD_INDEX, HAS_PADDING
from ...model.cycle.contract import ADDRGEN_LATENCY
from ...model.cycle.timing import bd_beats
from ...model.errors import UndocumentedBehaviourWarning

__all__ = ["EDGE_STALL", "OFFER_IDLE", "READY_MODES", "STALL", "batch_edges", "edge_beats",
           "random_bd", "random_bd_batch", "random_bds", "random_pattern", "ready_and_offer",
           "regression_batch", "regression_stimulus", "stall_pattern"]

READY_MODES = ("high", "stall")
"""The ready patterns of :func:`regression_stimulus`."""
OFFER_IDLE = 0.05
"""Fraction of cycles the producer idles (offers no BD) in a ``"stall"`` regression."""
EDGE_STALL = 0.6
"""Probability of each further stall cycle before an edge beat (:func:`stall_pattern`)."""
STALL = 0.15
"""Probability of each further stall cycle before any other beat."""


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


def _picks(draw: np.random.Generator, count: int, maximum: int, low: int = 1) -> np.ndarray:
    """Corner values (low, low + 1, the maximum) often, anything in between otherwise.

    Per value: ``low`` with probability 0.15, ``low + 1`` 0.15, ``maximum`` 0.1, a
    small value (``low .. 12``) 0.45, anything up to ``maximum`` 0.15.
    """
    roll = draw.random(count)
    small = draw.integers(low, min(maximum, max(low, 12)), size=count, endpoint=True)
    anything = draw.integers(low, maximum, size=count, endpoint=True)
    return np.select([roll < 0.15, roll < 0.3, roll < 0.4, roll < 0.85],
                     [low, min(low + 1, maximum), maximum, small], anything).astype(np.int64)


def random_bd_batch(kind: str, count: int, seed: int | np.random.Generator, *,
                    max_length: int = 48, allow_empty: bool = False) -> BDBatch:
    """``count`` random legal BDs of ``kind``, drawn for all BDs at once.

    Every address-generation field is in play: wraps are 0 (never wraps) with
    probability 0.1, else 1, 2, small or the field maximum (:func:`_picks`); steps 1,
    2, small or the maximum; on the memory tile each padding field is set half the
    time (0, 1, small or its maximum) where the padding rules allow it (not around a
    dimension at or above one that never wraps; "after" only where the dimension
    wraps); iteration is on for 30 % of BDs (a wrap, a current index below it, a
    step); ``base_address`` is 0 half the time, else anything; ``buffer_length`` is
    ``1 .. max_length`` (``0 .. max_length`` with ``allow_empty``) so runs stay
    short. Every other field keeps its default; ``valid_bd`` is 1.

    Parameters
    ----------
    kind : {"tile", "memtile", "shim"}
    count : int
    seed : int or numpy.random.Generator
        An int names the batch (``numpy.random.default_rng(seed)``); a generator is
        drawn from, so that a caller can draw more from it afterwards.
    max_length : int
    allow_empty : bool

    Returns
    -------
    BDBatch
        Checked with the constructor's rules (:meth:`~aiedma.model.bd.batch.BDBatch.check`).
    """
    draw = np.random.default_rng(seed)
    fields = FIELD_INDEX[kind]
    n = ADDRESS_DIMENSIONS[kind]
    c: dict[str, np.ndarray] = {"valid_bd": np.ones(count, dtype=np.int64)}
    c["buffer_length"] = draw.integers(0 if allow_empty else 1, max_length, size=count,
                                       endpoint=True)
    c["base_address"] = np.where(draw.random(count) < 0.5, 0, draw.integers(
        0, fields["base_address"].maximum, size=count, endpoint=True))
    for k in range(n):
        c[f"d{k}_stepsize"] = _picks(draw, count, fields[f"d{k}_stepsize"].maximum)
    wraps_so_far = np.ones(count, dtype=bool)   # no lower dimension never wraps
    for k in range(n - 1):
        wrap = np.where(draw.random(count) < 0.1, 0,
                        _picks(draw, count, fields[f"d{k}_wrap"].maximum))
        c[f"d{k}_wrap"] = wrap
        if HAS_PADDING[kind]:
            limit = fields[f"d{k}_zero_before"].maximum
            before = wraps_so_far & (draw.random(count) < 0.5)
            after = wraps_so_far & (wrap > 0) & (draw.random(count) < 0.5)
            c[f"d{k}_zero_before"] = np.where(before, _picks(draw, count, limit, 0), 0)
            c[f"d{k}_zero_after"] = np.where(after, _picks(draw, count, limit, 0), 0)
        wraps_so_far &= wrap > 0
    iterate = draw.random(count) < 0.3
    wrap = _picks(draw, count, fields["iteration_wrap"].maximum)
    c["iteration_wrap"] = np.where(iterate, wrap, 1)
    c["iteration_current"] = np.where(iterate, (draw.random(count) * wrap).astype(np.int64), 0)
    c["iteration_stepsize"] = np.where(
        iterate, _picks(draw, count, fields["iteration_stepsize"].maximum), 1)
    # Drawn last (the draws above stay a seed's): some BDs start at or past their
    # iteration wrap, which the hardware takes (the model's choice: docs/decisions.md).
    past = draw.random(count) < 0.05
    top = fields["iteration_current"].maximum
    c["iteration_current"] = np.where(
        past, draw.integers(np.minimum(c["iteration_wrap"], top), top, endpoint=True),
        c["iteration_current"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndocumentedBehaviourWarning)
        return BDBatch(kind, c, count=count)


def random_bd(kind: str, rng: random.Random, *, max_length: int = 48,
              allow_empty: bool = False) -> BufferDescriptor:
    """One random legal BD of ``kind`` (see :func:`random_bd_batch`), drawn from ``rng``."""
    draw = np.random.default_rng(rng.getrandbits(64))
    return random_bd_batch(kind, 1, draw, max_length=max_length,
                           allow_empty=allow_empty).bds()[0]


def random_bds(kind: str, count: int, seed: int, **options) -> list[BufferDescriptor]:
    """``count`` random legal BDs of ``kind`` from ``seed``: :func:`random_bd_batch` as objects."""
    return random_bd_batch(kind, count, seed, **options).bds()


def edge_beats(bd: BufferDescriptor) -> np.ndarray:
    """Per beat of ``bd``: True where D0 wraps after it or padding starts or ends.

    D0 wraps after beat ``p`` when beat ``p + 1``'s D0 counter is 0 and a D1 exists
    (:func:`~aiedma.model.cycle.timing.beat_counters`): the counter is the beat's
    position modulo D0's padded range, the first radix of ``padded_radices``.
    (One BD; :func:`batch_edges` is the same over a batch.)
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


def batch_edges(batch: BDBatch) -> np.ndarray:
    """:func:`edge_beats` of every BD of ``batch``, concatenated in BD order."""
    stream, offsets = batch.streams()
    lengths = batch.lengths
    owner = np.repeat(np.arange(len(batch)), lengths)
    position = np.arange(stream.size) - offsets[:-1][owner]
    radix = batch.first_radices()[owner]
    zero = stream < 0
    edge = np.zeros(stream.size, dtype=bool)
    # Beat p is an edge when beat p + 1 belongs to the same BD and starts a D0 row
    # (its position a multiple of D0's padded range) or changes zero to data or back.
    same = position[1:] > 0
    edge[:-1] = same & ((zero[1:] != zero[:-1])
                        | ((radix[1:] > 0) & (position[1:] % np.maximum(radix[1:], 1) == 0)))
    return edge


def _stalls(edge: np.ndarray, draw: np.random.Generator, edge_stall: float,
            stall: float) -> np.ndarray:
    """The ready pattern of :func:`stall_pattern` from the beats' edges, as an array."""
    # Stall cycles before a beat: k with probability p^k (1 - p), a geometric count.
    stalls = draw.geometric(1 - np.where(edge, edge_stall, stall)) - 1
    pattern = np.zeros(ADDRGEN_LATENCY + int(stalls.sum()) + edge.size, dtype=bool)
    pattern[:ADDRGEN_LATENCY] = True
    pattern[ADDRGEN_LATENCY + np.cumsum(stalls + 1) - 1] = True
    return pattern


def stall_pattern(bds: Sequence[BufferDescriptor] | BDBatch, rng: random.Random, *,
                  edge_stall: float = EDGE_STALL, stall: float = STALL) -> list[bool]:
    """A ``ready`` pattern that stalls mostly on wrap and padding edges.

    Beat by beat: before each beat, a few stall cycles (each further one with
    probability ``edge_stall`` on an edge beat, ``stall`` elsewhere: a geometric
    count), then one ready cycle. With BDs back to back the output is valid on every
    cycle after the latency, so beat ``j`` meets the ``j``-th ready cycle and the
    stalls land on the beats they were meant for. The counts are drawn with NumPy
    from one draw of ``rng`` (a regression of 10^5 BDs has millions of beats).
    """
    if not isinstance(bds, BDBatch):
        bds = BDBatch.from_bds(bds[0].kind if bds else "tile", bds)
    draw = np.random.default_rng(rng.getrandbits(64))
    return _stalls(batch_edges(bds), draw, edge_stall, stall).tolist()


def regression_batch(kind: str, count: int, seed: int, ready: str = "high"
                     ) -> tuple[BDBatch, np.ndarray | None, np.ndarray | None]:
    """:func:`regression_stimulus` as a batch and arrays, without an object per BD.

    The bulk testbench's form (:func:`~aiedma.tb.regress.verilog_bulk.run_bulk`); the BDs are
    :func:`random_bd_batch` of ``seed``, then the stalls and the offer are drawn from
    the same generator.
    """
    if ready not in READY_MODES:
        raise ValueError(f"ready={ready!r}: the ready pattern must be one of "
                         f"{', '.join(map(repr, READY_MODES))}")
    draw = np.random.default_rng(seed)
    if ready == "high":
        return random_bd_batch(kind, count, draw), None, None
    batch = random_bd_batch(kind, count, draw, allow_empty=True)
    pattern = _stalls(batch_edges(batch), draw, EDGE_STALL, STALL)
    offer = draw.random(pattern.size) >= OFFER_IDLE
    return batch, pattern, offer


def regression_stimulus(kind: str, count: int, seed: int, ready: str = "high"
                        ) -> tuple[list[BufferDescriptor], list[bool] | None, list[bool] | None]:
    """The BDs, ``o.ready`` pattern and offer pattern of one random regression.

    The one stimulus of the bulk testbench (:func:`~aiedma.tb.regress.verilog_bulk.run_bulk`, which
    takes it as :func:`regression_batch`) and of the co-simulation benchmarks
    (:mod:`aiedma.flows.bench`), so that every simulator runs the same regression
    for the same arguments.

    Parameters
    ----------
    kind : {"tile", "memtile", "shim"}
        The DMA kind of the BDs.
    count : int
        Random BDs (:func:`random_bd_batch`; for ``"high"`` the same as
        :func:`random_bds` of ``seed``).
    seed : int
        Seeds the BDs, the ready pattern and the offer: the same arguments give
        the same stimulus.
    ready : {"high", "stall"}
        ``"high"``: BDs of length >= 1, ``o.ready`` and the offer held high.
        ``"stall"``: empty BDs allowed, the stalls of :func:`stall_pattern` on
        ``o.ready`` and an offer that idles on about :data:`OFFER_IDLE` of the cycles.

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
    batch, pattern, offer = regression_batch(kind, count, seed, ready)
    if pattern is None:
        return batch.bds(), None, None
    return batch.bds(), pattern.tolist(), offer.tolist()


def unmapped_address(rng: random.Random, kind: str) -> int:
    """A random aligned byte address of a ``kind`` DMA's register span with no register:
    anywhere in it, or just beside a register (an AXI4-Lite slave must answer SLVERR)."""
    while True:
        if rng.random() < 0.5:
            address = rng.randrange(1 << register_span(kind)) & ~(WORD_BYTES - 1)
        else:
            address = rng.choice(registers(kind)).address + rng.choice((-8, -4, 4, 8, 0x100))
        if 0 <= address < 1 << register_span(kind) and register_at(kind, address) is None:
            return address
