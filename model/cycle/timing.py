"""Cycle timing model: what the RTL must show on every cycle.

Written from the rules of :mod:`.cycle` (the contract), never from the RTL: each
function steps the contract's registers once per cycle and records the signals
a testbench sees. The address stream itself comes from the BD layer
(:meth:`~.bd.BufferDescriptor.stream`), so a scoreboard comparing the RTL with
these traces checks both *what* the RTL produces and *when*.

Patterns
--------
``ready`` (the consumer's ``ready``) and ``offer`` (whether the producer offers
the next BD) are per-cycle sequences of booleans, or None for "always high";
**decision**: after a pattern ends it is held high, so every run finishes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..bd.batch import BDBatch
from ..bd.descriptor import BufferDescriptor, padded_radices
from .contract import ADDRGEN_PREPARE_SLOTS, wrap_addresses
from .engine import AddrgenSlots, ChannelEngine

__all__ = [
    "AddrgenTrace",
    "MM2STrace",
    "S2MMTrace",
    "addrgen_trace",
    "addrgen_trace_fast",
    "batch_beats",
    "bd_beats",
    "beat_counters",
    "held_high",
    "held_high_array",
    "mm2s_trace",
    "s2mm_trace",
]


def bd_beats(kind: str, bd: BufferDescriptor) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One BD's output beats as the RTL shows them: ``(address, zero, last)`` arrays.

    Addresses are modulo the kind's address width and 0 on zero beats; ``last``
    is set on the final beat only.
    """
    stream = wrap_addresses(kind, bd.stream())
    zero = stream < 0
    last = np.zeros(stream.size, dtype=bool)
    if stream.size:
        last[-1] = True
    return np.where(zero, 0, stream), zero, last


def batch_beats(kind: str, batch: BDBatch) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`bd_beats` of every BD of ``batch``, concatenated in BD order.

    BD ``i``'s beats are entries ``offsets[i] .. offsets[i + 1] - 1`` of each array,
    ``offsets`` from :meth:`~aiedma.model.bd.batch.BDBatch.streams`.
    """
    stream, offsets = batch.streams()
    stream = wrap_addresses(kind, stream)
    zero = stream < 0
    last = np.zeros(stream.size, dtype=bool)
    ends = offsets[1:][batch.lengths > 0] - 1
    last[ends] = True
    return np.where(zero, 0, stream), zero, last


def beat_counters(bd: BufferDescriptor, position: int) -> dict[str, int]:
    """The dimension counters of beat ``position`` of a BD, for mismatch reports.

    Counters run over each dimension's padded range (``before + wrap + after``);
    a counter below ``before`` or past ``before + wrap`` is in padding. The first
    dimension that never wraps (or the outermost) takes the rest of the count.
    """
    # One position: the radices of padded_digits (the one rule), in plain integers,
    # as a stall pattern asks this for every beat of thousands of BDs.
    pattern = bd.pattern()
    counters, rest = {}, position
    for k, radix in enumerate(padded_radices(pattern["wraps"], pattern["before"],
                                             pattern["after"])):
        rest, counters[f"d{k}"] = divmod(rest, radix)
    counters[f"d{len(counters)}"] = rest
    return counters


def held_high(pattern: Sequence[bool] | None, cycle: int) -> bool:
    """A pattern's value in ``cycle``: None is always high, and so is any cycle past its end."""
    return pattern is None or cycle >= len(pattern) or bool(pattern[cycle])


@dataclass(frozen=True)
class AddrgenTrace:
    """Per cycle, the address generator's ports (one array entry per cycle).

    Attributes
    ----------
    i_valid, i_ready : numpy.ndarray of bool
        The BD input handshake.
    o_valid, o_ready : numpy.ndarray of bool
        The beat output handshake.
    address : numpy.ndarray of int64
        The beat's address where ``o_valid`` (0 on zero beats), else 0.
    zero, last : numpy.ndarray of bool
        The beat's flags where ``o_valid``, else False.
    accepted : tuple of int
        The cycle each BD was accepted in.
    """

    i_valid: np.ndarray
    i_ready: np.ndarray
    o_valid: np.ndarray
    o_ready: np.ndarray
    address: np.ndarray
    zero: np.ndarray
    last: np.ndarray
    accepted: tuple[int, ...]

    @property
    def cycles(self) -> int:
        return self.o_valid.size

    def transfers(self) -> np.ndarray:
        """Cycles in which a beat was transferred (``o_valid and o_ready``)."""
        return np.flatnonzero(self.o_valid & self.o_ready)


def addrgen_trace(kind: str, bds: Sequence[BufferDescriptor],
                  ready: Sequence[bool] | None = None,
                  offer: Sequence[bool] | None = None, *,
                  prepare_slots: int = ADDRGEN_PREPARE_SLOTS) -> AddrgenTrace:
    """The address generator's ports, cycle by cycle, until every BD is done.

    Parameters
    ----------
    kind : {"tile", "memtile", "shim"}
    bds : sequence of BufferDescriptor
        Offered in order on the input.
    ready : sequence of bool, optional
        ``o.ready`` per cycle (default: always high; high after it ends).
    offer : sequence of bool, optional
        Whether the next BD is offered (``i.valid``) in each cycle.
    prepare_slots : int, optional
        The contract's ``S`` (default: the RTL's
        :data:`~.cycle.ADDRGEN_PREPARE_SLOTS`); other values let the tests check the
        contract's consequences for any depth without the RTL.

    Returns
    -------
    AddrgenTrace
        Cycles 0 .. the cycle in which the last BD finished (its last beat
        taken, or a length-0 BD dropped), inclusive.
    """
    slots = AddrgenSlots(prepare_slots)
    beats = [_beat_lists(kind, bd) for bd in bds]
    rows: list[tuple] = []
    accepted: list[int] = []
    cycle = taken = 0
    while taken < len(beats) or not slots.empty:
        o_valid, address, zero, last = slots.outputs()
        o_ready = held_high(ready, cycle)
        i_valid = taken < len(beats) and held_high(offer, cycle)
        i_ready = slots.i_ready(o_ready)
        if i_valid and i_ready:
            accepted.append(cycle)
        slots.clock(beats[taken] if i_valid and i_ready else None, o_ready)
        taken += i_valid and i_ready
        rows.append((i_valid, i_ready, o_valid, o_ready, address, zero, last))
        cycle += 1
    columns = list(zip(*rows, strict=True)) if rows else [()] * 7
    flags = [np.array(c, dtype=bool) for c in columns]
    return AddrgenTrace(flags[0], flags[1], flags[2], flags[3],
                        np.array(columns[4], dtype=np.int64), flags[5], flags[6],
                        tuple(accepted))


def _beat_lists(kind: str, bd: BufferDescriptor) -> tuple[list[int], list[bool]]:
    address, zero, _ = bd_beats(kind, bd)
    return address.tolist(), zero.tolist()


@dataclass(frozen=True)
class MM2STrace:
    """Per cycle, the MM2S output stream (address generator feeding the datapath).

    Attributes
    ----------
    o_valid, o_ready : numpy.ndarray of bool
    data : numpy.ndarray of int64
        The word shown where ``o_valid``, else 0.
    last : numpy.ndarray of bool
    """

    o_valid: np.ndarray
    o_ready: np.ndarray
    data: np.ndarray
    last: np.ndarray

    @property
    def cycles(self) -> int:
        return self.o_valid.size


def mm2s_trace(kind: str, bds: Sequence[BufferDescriptor], memory: np.ndarray,
               ready: Sequence[bool] | None = None,
               offer: Sequence[bool] | None = None, *,
               prepare_slots: int = ADDRGEN_PREPARE_SLOTS) -> MM2STrace:
    """The MM2S output stream cycle by cycle: address generator -> datapath -> ``o``.

    The datapath's ``beats.ready`` (registers only) is the address generator's
    ``o.ready``; its read port returns ``memory[address]`` one cycle after the
    beat is accepted, and a zero beat gives 0 without a read.

    Parameters
    ----------
    memory : numpy.ndarray
        Word-addressed memory image, indexed modulo its size (a small image
        stands in for a large address space, as the testbenches' BRAM does).
    prepare_slots : int, optional
        The address generator's ``S``, as for :func:`addrgen_trace`.
    """
    memory = np.asarray(memory)
    engine = ChannelEngine(kind, True, prepare_slots)
    read: list[int] = [0]   # the word the read port returns this cycle

    def inputs(cycle: int) -> dict:
        return {"o_ready": held_high(ready, cycle), "mem_data": read[0]}

    rows = []
    beats = [_beat_lists(kind, bd) for bd in bds]
    taken = 0
    while taken < len(bds) or not engine.empty:
        cycle = len(rows)
        offered = taken < len(bds) and held_high(offer, cycle)
        engine.drive(bds[taken] if offered else None, **inputs(cycle))
        engine.grant(True)   # lock_grant tied high: the engine alone, no locks
        signals = engine.sample()
        done = signals.bd_valid and signals.bd_ready
        engine.clock(beats[taken] if done else None)
        taken += done
        if signals.mem_read:
            read[0] = int(memory[signals.mem_addr % memory.size])
        rows.append((signals.stream_valid, signals.stream_ready, signals.data,
                     signals.stream_last))
    columns = list(zip(*rows, strict=True)) if rows else [()] * 4
    return MM2STrace(np.array(columns[0], dtype=bool), np.array(columns[1], dtype=bool),
                     np.array(columns[2], dtype=np.int64), np.array(columns[3], dtype=bool))


@dataclass(frozen=True)
class S2MMTrace:
    """Per cycle, an S2MM channel's ports (address generator feeding the datapath).

    Attributes
    ----------
    bd_valid, bd_ready : numpy.ndarray of bool
        The BD input handshake (the address generator's ``i``).
    i_valid, i_ready : numpy.ndarray of bool
        The data stream handshake; ``i.ready`` is the address generator's ``o.valid``.
    we : numpy.ndarray of bool
        The write port's ``mem_we``.
    address, data : numpy.ndarray of int64
        ``mem_addr`` and ``mem_data`` where ``we``, else 0.
    joins : tuple of int
        Per data word taken, the cycle it joined its beat (its write, unless the beat
        is a zero beat, comes ``S2MM_WRITE_LATENCY`` cycles later).
    """

    bd_valid: np.ndarray
    bd_ready: np.ndarray
    i_valid: np.ndarray
    i_ready: np.ndarray
    we: np.ndarray
    address: np.ndarray
    data: np.ndarray
    joins: tuple[int, ...]

    @property
    def cycles(self) -> int:
        return self.we.size


def s2mm_trace(kind: str, bds: Sequence[BufferDescriptor], words: Sequence[int],
               valid: Sequence[bool] | None = None,
               offer: Sequence[bool] | None = None, *,
               prepare_slots: int = ADDRGEN_PREPARE_SLOTS) -> S2MMTrace:
    """An S2MM channel cycle by cycle: BDs and data words in, memory writes out.

    The datapath pairs a word with a beat (``i.ready = beats.valid``,
    ``beats.ready = i.valid``) and writes ``S2MM_WRITE_LATENCY`` cycles after the
    join; a zero beat takes its word and writes nothing (:mod:`.contract`).

    Parameters
    ----------
    words : sequence of int
        The data words, one per beat of ``bds`` (zero beats included).
    valid : sequence of bool, optional
        Whether the producer offers the next word (``i.valid``) in each cycle.
    offer : sequence of bool, optional
        Whether the next BD is offered in each cycle.
    prepare_slots : int, optional
        The address generator's ``S``, as for :func:`addrgen_trace`.

    Raises
    ------
    ValueError
        If ``words`` does not hold one word per beat (the channel would hang or
        leave words behind).
    """
    beats = sum(bd.buffer_length for bd in bds)
    if len(words) != beats:
        raise ValueError(f"len(words)={len(words)}: the BDs take {beats} words, one per beat")
    engine = ChannelEngine(kind, False, prepare_slots)
    joins: list[int] = []

    def inputs(cycle: int) -> dict:
        i_valid = len(joins) < len(words) and held_high(valid, cycle)
        return {"i_valid": i_valid, "i_data": int(words[len(joins)]) if i_valid else 0}

    rows = []
    for signals, _ in _engine_cycles_s2mm(engine, kind, bds, offer, inputs, joins):
        rows.append((signals.bd_valid, signals.bd_ready, signals.stream_valid,
                     signals.stream_ready, signals.mem_write, signals.mem_addr,
                     signals.mem_data))
    columns = list(zip(*rows, strict=True)) if rows else [()] * 7
    flags = [np.array(c, dtype=bool) for c in columns[:5]]
    return S2MMTrace(*flags, np.array(columns[5], dtype=np.int64),
                     np.array(columns[6], dtype=np.int64), tuple(joins))


def _engine_cycles_s2mm(engine: ChannelEngine, kind: str, bds: Sequence[BufferDescriptor],
                        offer: Sequence[bool] | None, inputs, joins: list[int]):
    """Run the S2MM engine over ``bds`` until it is empty, yielding each cycle's ports;
    ``inputs(cycle)`` gives the stream side, ``joins`` records every join's cycle."""
    beats = [_beat_lists(kind, bd) for bd in bds]
    taken = cycle = 0
    while taken < len(bds) or not engine.empty:
        offered = taken < len(bds) and held_high(offer, cycle)
        given = inputs(cycle)
        engine.drive(bds[taken] if offered else None, **given)
        engine.grant(True)   # lock_grant tied high: the engine alone, no locks
        signals = engine.sample()
        if signals.stream_valid and signals.stream_ready:
            joins.append(cycle)
        done = signals.bd_valid and signals.bd_ready
        engine.clock(beats[taken] if done else None)
        taken += done
        cycle += 1
        yield signals, given


def held_high_array(pattern: Sequence[bool] | None, length: int) -> np.ndarray:
    """A pattern as ``length`` booleans, held high past its end (:func:`held_high`)."""
    out = np.ones(length, dtype=bool)
    if pattern is not None:
        given = np.asarray(pattern, dtype=bool)[:length]
        out[: given.size] = given
    return out


def addrgen_trace_fast(kind: str, bds: Sequence[BufferDescriptor] | BDBatch,
                       ready: Sequence[bool] | np.ndarray | None = None,
                       offer: Sequence[bool] | np.ndarray | None = None,
                       beats: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]] | None = None,
                       *, prepare_slots: int = ADDRGEN_PREPARE_SLOTS) -> AddrgenTrace:
    """:func:`addrgen_trace`, one Python step per BD and slot, not per cycle.

    Same contract (:mod:`aiedma.model.cycle.contract`, ``S = prepare_slots`` prepare slots),
    stepped by events. BD ``k`` holds slot ``s`` over cycles ``in_s(k) .. out_s(k)`` and
    enters slot ``s + 1`` in ``out_s(k) + 1``:

    * it is accepted in ``a(k)``, the first offered cycle at or after ``out_0(k - 1)``
      (at or after 0 for ``k = 0``), and ``in_0(k) = a(k) + 1``;
    * for ``s < S - 1``, ``out_s(k) = max(in_s(k), out_{s+1}(k - 1))``: a slot holding
      BD ``k`` is ready once BD ``k - 1`` moves on from the next one;
    * in the last slot, ``c = out_{S-1}(k)`` is ``in_{S-1}(k)`` for length 0 (dropped)
      and ``max(in_{S-1}(k), e)`` otherwise, ``e`` the cycle the running BD's last beat
      is taken; the BD then runs from ``c + 1`` until its ``n``-th ready cycle.

    ``i.ready`` is low in cycles ``in_0(k) .. out_0(k) - 1``. The per-cycle arrays are
    then filled with NumPy. ``bds`` may be a :class:`~aiedma.model.bd.batch.BDBatch`
    (its beats from :func:`batch_beats`, no object per BD); ``beats`` may pass
    precomputed :func:`~aiedma.model.cycle.timing.bd_beats` of a sequence.
    """
    if prepare_slots < 1:
        raise ValueError(f"prepare_slots={prepare_slots}: must be at least 1")
    if isinstance(bds, BDBatch):
        lengths = bds.lengths
        address, zero, last = batch_beats(kind, bds)
    else:
        if beats is None:
            beats = [bd_beats(kind, bd) for bd in bds]
        lengths = np.array([b[0].size for b in beats], dtype=np.int64)
        if beats:
            address, zero, last = (np.concatenate([b[i] for b in beats]) for i in range(3))
        else:
            address, zero, last = np.zeros(0, np.int64), np.zeros(0, bool), np.zeros(0, bool)
    return _trace_of_beats(lengths, address.astype(np.int64), zero, last, ready, offer,
                           prepare_slots)


def _trace_of_beats(lengths: np.ndarray, addresses: np.ndarray, zeros: np.ndarray,
                    lasts: np.ndarray, ready: Sequence[bool] | np.ndarray | None,
                    offer: Sequence[bool] | np.ndarray | None,
                    prepare_slots: int) -> AddrgenTrace:
    """:func:`addrgen_trace_fast` of BDs given as their lengths and concatenated beats."""
    count = lengths.size
    given = max(len(ready) if ready is not None else 0, len(offer) if offer is not None else 0)
    # Past the patterns every cycle has an event (a beat, or a BD accepted, moved or
    # dropped: S + 1 per BD), so the trace ends before this bound.
    bound = given + int(lengths.sum()) + (prepare_slots + 1) * count + 4
    ready_arr, offer_arr = held_high_array(ready, bound), held_high_array(offer, bound)
    ready_count = np.concatenate(([0], np.cumsum(ready_arr)))   # ready cycles before t
    ready_at = np.flatnonzero(ready_arr)
    offered = np.where(offer_arr, np.arange(bound), bound)
    next_offer = np.minimum.accumulate(offered[::-1])[::-1]   # first offer at or after t
    # Looked up a few times per BD: .item() gives plain ints without turning the whole
    # arrays (as long as the trace) into lists first.
    rc, ra, no = ready_count.item, ready_at.item, next_offer.item
    accept = [0] * count
    hand_on = [0] * count   # out_0(k): i.ready is low from a(k) + 1 until then
    start = [0] * count
    end = [-1] * count
    # out[s] is out_s of the BD stepped last; 0 before the first BD, which neither
    # delays BD 0 (in_s(0) >= 1) nor its acceptance (the first offer at or after 0).
    out = [0] * prepare_slots
    last = prepare_slots - 1
    run_end = -1
    for k, length in enumerate(lengths.tolist()):
        a = no(out[0])
        accept[k] = a
        enter = a + 1
        for s in range(last):   # out[s + 1] still holds BD k - 1's value
            out[s] = max(enter, out[s + 1])
            enter = out[s] + 1
        if length == 0:
            c = enter
        else:
            c = max(enter, run_end)
            start[k], end[k] = c + 1, ra(rc(c + 1) + length - 1)
            run_end = end[k]
        out[last] = c
        hand_on[k] = out[0]
    cycles = max(out[last] + 1, run_end + 1) if count else 0
    if cycles > bound:
        raise AssertionError("trace bound exceeded")
    accept_a, hand_on_a = np.array(accept, np.int64), np.array(hand_on, np.int64)
    time_axis = np.arange(cycles)
    i_valid = offer_arr[:cycles] & (time_axis <= (accept_a[-1] if count else -1))
    # i.ready is low while P[0] holds a BD that does not move on: cycles a+1 .. out_0-1.
    waits = np.zeros(cycles + 1, dtype=np.int64)
    np.add.at(waits, accept_a + 1, 1)
    np.add.at(waits, hand_on_a, -1)
    i_ready = np.cumsum(waits[:cycles]) == 0
    running = lengths > 0
    first = np.array(start, np.int64)[running]
    sizes = np.array(end, np.int64)[running] - first + 1
    offsets = (np.cumsum(lengths) - lengths)[running]
    shown = np.repeat(first, sizes)
    shown += np.arange(sizes.sum()) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    beat = np.repeat(offsets - ready_count[first], sizes) + ready_count[shown]
    o_valid = np.zeros(cycles, dtype=bool)
    o_valid[shown] = True
    address = np.zeros(cycles, dtype=np.int64)
    zero = np.zeros(cycles, dtype=bool)
    last = np.zeros(cycles, dtype=bool)
    if count:
        address[shown] = addresses[beat]
        zero[shown] = zeros[beat]
        last[shown] = lasts[beat]
    return AddrgenTrace(i_valid, i_ready, o_valid, ready_arr[:cycles].copy(), address, zero,
                        last, tuple(accept))
