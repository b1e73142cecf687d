"""The channel engine, cycle by cycle: address generator, lock gate and datapath of one channel.

This is the model of what ``hdl.engine.MM2SEngine`` / ``S2MMEngine`` do, written
from the contract (:mod:`.contract`, docs/cycle.md "Channel"), as registers stepped
once per cycle. The system model's channels (:mod:`aiedma.model.system.channel`) run
it, and when a channel runs as RTL the same engine runs beside the RTL as its
reference (:mod:`aiedma.tb.system.loop`): both get the same inputs every cycle and every
signal of :class:`EngineCycle` must agree.

The engine's surroundings (the channel's BD fetch, lock unit, stream stages and
memory) drive it through one protocol per cycle::

    engine.drive(bd, o_ready=..., i_valid=..., i_data=..., mem_data=...)
    if engine.lock_request():              # a BD's first beat waits at the gate
        engine.grant(its lock held?)
    signals = engine.sample()              # every port of this cycle
    engine.clock()                         # the rising edge

Everything :meth:`sample` returns is settled for the cycle; :meth:`clock` applies the
updates of the edge. The lock gate sits between the address generator's ``o`` and
the datapath's ``beats``: a BD's first beat passes in a cycle the datapath can take it
and the channel holds the BD's lock (the channel asks for the lock ahead, from
registers: docs/cycle.md "Channel"); ``lock_request`` says the beat could move now.
On S2MM a one-beat skid stands before the gate (docs/cycle.md "S2MM skid"): the
generator's ``o.ready`` is the skid's emptiness, and the beat at the gate the skid's
when it holds one.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, fields

import numpy as np

from ..bd.descriptor import BufferDescriptor
from .contract import ADDRGEN_PREPARE_SLOTS, MM2S_BUFFER_DEPTH, wrap_addresses

__all__ = [
    "AddrgenSlots",
    "ChannelEngine",
    "EngineCycle",
    "MM2SDatapath",
    "S2MMDatapath",
    "bd_beat_arrays",
    "bd_beat_lists",
]


def bd_beat_arrays(kind: str, bd: BufferDescriptor,
                   stream: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """One BD's beats as the RTL gives them: addresses (0 on zero beats) and zero flags.

    ``stream`` is ``bd.stream()`` when the caller has it already.
    """
    stream = wrap_addresses(kind, bd.stream() if stream is None else stream)
    zero = stream < 0
    return np.where(zero, 0, stream), zero


def bd_beat_lists(kind: str, bd: BufferDescriptor,
                  stream: np.ndarray | None = None) -> tuple[list[int], list[bool]]:
    """:func:`bd_beat_arrays` as lists (what the engine indexes every cycle)."""
    addresses, zero = bd_beat_arrays(kind, bd, stream)
    return addresses.tolist(), zero.tolist()


class AddrgenSlots:
    """The address generator's BD slots, stepped by the rules of :mod:`.contract`.

    ``P[0] .. P[S-1]`` pass BDs on, ``R`` gives one beat per cycle while ``o.ready``.
    A slot holds a BD's beats ``(addresses, zeros)``.

    Parameters
    ----------
    prepare_slots : int
        ``S`` (the RTL's :data:`~.contract.ADDRGEN_PREPARE_SLOTS` by default).
    """

    def __init__(self, prepare_slots: int = ADDRGEN_PREPARE_SLOTS) -> None:
        if prepare_slots < 1:
            raise ValueError(f"prepare_slots={prepare_slots}: must be at least 1")
        self.prepare: list[tuple[list[int], list[bool]] | None] = [None] * prepare_slots
        self.run: tuple[list[int], list[bool]] | None = None
        self.position = 0

    @property
    def empty(self) -> bool:
        """No BD is held."""
        return self.run is None and self.prepare.count(None) == len(self.prepare)

    def state(self) -> tuple:
        """Everything that changes, for telling a cycle that changed nothing."""
        return (*map(id, self.prepare), id(self.run), self.position)

    def outputs(self) -> tuple[bool, int, bool, bool]:
        """``o.valid`` and the beat shown: ``(valid, address, zero, last)``."""
        if self.run is None:
            return False, 0, False, False
        addresses, zeros = self.run[0], self.run[1]
        p = self.position
        return True, addresses[p], zeros[p], p == len(addresses) - 1

    def readiness(self, o_ready: bool, cut: bool = False) -> tuple[list[bool], bool, bool]:
        """In a cycle whose ``o.ready`` is given: each slot's ready, whether the last one's
        BD leaves, whether ``R`` gives a beat (what :meth:`clock` applies). ``cut``: a
        beat taken now is its BD's last whatever its position (finish on TLAST)."""
        slots, last = self.prepare, len(self.prepare) - 1
        remaining = 0 if self.run is None else len(self.run[0]) - self.position
        take = self.run is not None and o_ready
        free = self.run is None or (take and (remaining == 1 or cut))
        end = slots[last]
        leave = end is not None and (not end[0] or free)
        if end is None or leave:
            return [True] * len(slots), leave, take   # room at the end: every slot ready
        ready = [False] * len(slots)
        for s in range(last - 1, -1, -1):
            ready[s] = slots[s] is None or ready[s + 1]
        return ready, leave, take

    def i_ready(self, o_ready: bool) -> bool:
        """``i.ready`` in a cycle whose ``o.ready`` is given (combinational)."""
        return self.readiness(o_ready)[0][0]

    def clock(self, accepted: tuple[list[int], list[bool]] | None, o_ready: bool,
              readiness: tuple | None = None, cut: bool = False) -> None:
        """The edge: ``accepted`` is the BD taken on ``i`` this cycle, if any;
        ``readiness`` is this cycle's :meth:`readiness`, when the caller has it; ``cut``
        as there."""
        slots, last = self.prepare, len(self.prepare) - 1
        ready, leave, take = readiness or self.readiness(o_ready, cut)
        remaining = 0 if self.run is None else len(self.run[0]) - self.position
        if leave and slots[last][0]:
            self.run, self.position = slots[last], 0
        elif take and (remaining == 1 or cut):
            self.run = None
        elif take:
            self.position += 1
        if accepted is None and not leave and slots.count(None) == last + 1:
            return   # no BD in the slots or coming: they stay empty
        updated = list(slots)
        for s in range(len(slots)):
            come = accepted is not None if s == 0 else slots[s - 1] is not None and ready[s]
            go = (slots[s] is not None and ready[s + 1]) if s < last else leave
            if come:
                updated[s] = accepted if s == 0 else slots[s - 1]
            elif go:
                updated[s] = None
        self.prepare = updated


class MM2SDatapath:
    """The MM2S datapath of :mod:`.contract`: a word in flight ``F`` and a 2-word buffer ``B``.

    The read port's data (``mem_data``) is an input: the engine's surroundings read
    memory in the cycle ``mem_en`` is high and drive the word in the next cycle.
    """

    def __init__(self) -> None:
        self.flight: tuple[bool, bool] | None = None  # (zero, last) of the word on mem_data
        self.buffer: deque[tuple[int, bool]] = deque()

    def state(self) -> tuple:
        return self.flight, tuple(self.buffer)

    def steady_state(self) -> tuple:
        """:meth:`state` without the data (words and zero flags) passing through."""
        return (None if self.flight is None else self.flight[1],
                tuple(last for _, last in self.buffer))

    @property
    def empty(self) -> bool:
        return self.flight is None and not self.buffer

    def beats_ready(self) -> bool:
        """Registers only: room for the word of a beat accepted now."""
        return len(self.buffer) + (self.flight is not None) <= MM2S_BUFFER_DEPTH - 1

    def outputs(self, mem_data: int) -> tuple[bool, int, bool]:
        """``o``: ``(valid, data, last)``."""
        if self.buffer:
            return True, *self.buffer[0]
        if self.flight is not None:
            zero, last = self.flight
            return True, 0 if zero else mem_data, last
        return False, 0, False

    def clock(self, accepted: tuple[bool, bool] | None, o_ready: bool, mem_data: int) -> None:
        """The edge: ``accepted`` is the beat's ``(zero, last)`` taken this cycle, if any."""
        valid = self.flight is not None or bool(self.buffer)
        taken = valid and o_ready
        fresh = None
        if self.flight is not None:
            zero, last = self.flight
            fresh = (0 if zero else mem_data, last)
        if self.buffer:
            if taken:
                self.buffer.popleft()
            if fresh is not None:
                self.buffer.append(fresh)
        elif fresh is not None and not taken:
            self.buffer.append(fresh)
        self.flight = accepted


class S2MMDatapath:
    """The S2MM datapath of :mod:`.contract`: a word joins its beat and is written a cycle later."""

    def __init__(self) -> None:
        self.write: tuple[int, int] | None = None   # (address, data) written this cycle

    def state(self) -> tuple:
        return (self.write,)

    def steady_state(self) -> tuple:
        """:meth:`state` without the write: the word taken in one cycle is written in
        the next whatever happens there, so a pending write only says a word was taken
        in the cycle before (after a cycle without one, none is pending)."""
        return ()

    @property
    def empty(self) -> bool:
        return self.write is None

    def clock(self, joined: tuple[int, bool, int] | None) -> None:
        """The edge: ``joined`` is ``(address, zero, data)`` of this cycle's join, if any."""
        self.write = None
        if joined is not None and not joined[1]:
            self.write = (joined[0], joined[2])


@dataclass(slots=True)
class EngineCycle:
    """Every port of a channel engine in one cycle; what RTL and model must agree on.

    Payloads are 0 (and flags False) in cycles their ``valid`` (or enable) is low, so
    two engines compare field by field. Not frozen: the model makes one per channel per
    stepped cycle, and a frozen dataclass sets each field through ``object.__setattr__``
    (2.5 times the cost); nothing changes one after it is made.

    Attributes
    ----------
    bd_valid, bd_ready : bool
        The BD input handshake.
    beat_valid, beat_ready : bool
        The address generator's ``o`` handshake (``beat_ready`` after the lock gate).
    address : int
    zero, last : bool
        The beat shown.
    lock_request, lock_grant : bool
        A BD's first beat could pass the gate now; its lock is held, so it passes.
    stream_valid, stream_ready : bool
        The data stream: ``o`` on MM2S, ``i`` on S2MM.
    data : int
    stream_last : bool
        The word on ``o`` (MM2S; ``last`` is the BD's final word); S2MM: the word on ``i``.
    mem_read, mem_write : bool
        ``mem_en`` (MM2S) and ``mem_we`` (S2MM).
    mem_addr, mem_data : int
        The read or write address; the written word (S2MM).
    """

    bd_valid: bool = False
    bd_ready: bool = False
    beat_valid: bool = False
    beat_ready: bool = False
    address: int = 0
    zero: bool = False
    last: bool = False
    lock_request: bool = False
    lock_grant: bool = False
    stream_valid: bool = False
    stream_ready: bool = False
    data: int = 0
    stream_last: bool = False
    mem_read: bool = False
    mem_write: bool = False
    mem_addr: int = 0
    mem_data: int = 0

    def differences(self, other: EngineCycle) -> dict[str, tuple]:
        """The fields whose values differ: ``{name: (self's, other's)}``."""
        return {f.name: (getattr(self, f.name), getattr(other, f.name)) for f in fields(self)
                if getattr(self, f.name) != getattr(other, f.name)}


class ChannelEngine:
    """A channel's engine, model side: address generator, lock gate, MM2S or S2MM datapath.

    Parameters
    ----------
    kind : {"tile", "memtile", "shim"}
    mm2s : bool
        MM2S (memory to stream) or S2MM.
    prepare_slots : int, optional
        The address generator's ``S``.
    """

    def __init__(self, kind: str, mm2s: bool, prepare_slots: int = ADDRGEN_PREPARE_SLOTS) -> None:
        self.kind, self.mm2s = kind, mm2s
        self.slots = AddrgenSlots(prepare_slots)
        self.datapath = MM2SDatapath() if mm2s else S2MMDatapath()
        self.first = True   # the next beat is a BD's first: it waits for its lock
        # S2MM only: the skid register between the generator and the gate (the beat it
        # holds, ``(address, zero, last)``), and whether the running BD's beats are dropped
        # in this cycle (a word with TLAST ended the BD in the cycle before).
        self.skid: tuple[int, bool, bool] | None = None
        self.dropping = False
        self._skid_from: tuple | None = None   # the skid beat's (run, position), for reports
        self._bd: BufferDescriptor | None = None
        self._o_ready = self._i_valid = self._i_end = False
        self._i_data = self._mem_data = 0
        self._grant = False
        self._settled: tuple | None = None   # this cycle's _settle, until the edge

    @property
    def empty(self) -> bool:
        """No BD and no word is left inside."""
        return self.slots.empty and self.datapath.empty and self.skid is None

    def state(self) -> tuple:
        """Everything that changes, for telling a cycle that changed nothing."""
        # AddrgenSlots.state inline: the channel asks twice in most stepped cycles.
        slots = self.slots
        return (*map(id, slots.prepare), id(slots.run), slots.position,
                *self.datapath.state(), self.first, self.skid, self.dropping)

    def steady_state(self) -> tuple:
        """:meth:`state` without what advances at a steady rate: the beat position
        and the words passing through (the system model's fast path)."""
        slots = self.slots
        return (*map(id, slots.prepare), id(slots.run), *self.datapath.steady_state(),
                self.first, self.skid, self.dropping)

    def drive(self, bd: BufferDescriptor | None, *, o_ready: bool = False, i_valid: bool = False,
              i_data: int = 0, mem_data: int = 0, i_end: bool = False) -> None:
        """This cycle's inputs: the BD offered (None: ``bd.valid`` low) and the stream side.
        ``i_end`` (S2MM): the word on ``i`` ends its BD if it is taken, whatever the BD's
        length (the channel drives it with the word's TLAST in finish-on-TLAST mode)."""
        self._bd, self._o_ready, self._i_valid = bd, o_ready, i_valid
        self._i_end = i_end and i_valid and not self.mm2s
        self._i_data, self._mem_data, self._grant = i_data, mem_data, False
        self._settled = None

    def _datapath_ready(self) -> bool:
        return self.datapath.beats_ready() if self.mm2s else self._i_valid

    def _shown(self) -> tuple[bool, int, bool, bool]:
        """The beat at the gate, ``(valid, address, zero, last)``: MM2S, the generator's;
        S2MM, the skid's, else the generator's unless its BD is being dropped."""
        if self.mm2s:
            return self.slots.outputs()
        if self.skid is not None:
            return (True, *self.skid)
        if self.dropping:
            return False, 0, False, False
        return self.slots.outputs()

    def gate_beat(self) -> tuple[tuple | None, int]:
        """The BD (the slot's run) and beat position of the beat at the gate, for
        reports: on S2MM the skid's when it holds one, else the running slot's."""
        if self._skid_from is not None:
            return self._skid_from
        return self.slots.run, self.slots.position

    def lock_request(self) -> bool:
        """A BD's first beat is shown and the datapath could take it this cycle."""
        return self.first and self._shown()[0] and self._datapath_ready()

    def grant(self, granted: bool) -> None:
        """Whether the BD at the gate holds its lock in this cycle (its first beat passes)."""
        self._grant = granted
        self._settled = None

    def _settle(self) -> tuple:
        """This cycle's combinational values, worked out once for :meth:`sample` and
        :meth:`clock` (the inputs are all in after :meth:`drive` and :meth:`grant`): the
        beat shown at the gate, whether the gate lets it pass, the gate's ``ready``, and
        the slots' :meth:`~AddrgenSlots.readiness`. MM2S: the gate's ``ready`` is the
        generator's ``o.ready``. S2MM: the generator's ``o.ready`` is the skid's
        emptiness and its ``cut`` the ``dropping`` register, both registers."""
        if self._settled is None:
            passes = not self.first or self._grant
            a_ready = self._datapath_ready() and passes
            if self.mm2s:
                readiness = self.slots.readiness(a_ready)
            else:
                readiness = self.slots.readiness(self.skid is None, self.dropping)
            self._settled = (self._shown(), passes, a_ready, readiness)
        return self._settled

    def sample(self) -> EngineCycle:
        """Every port of this cycle (after :meth:`drive` and :meth:`grant`)."""
        (beat_valid, address, zero, last), passes, a_ready, readiness = self._settle()
        request = beat_valid and self.first and self._datapath_ready()
        bd_valid = self._bd is not None
        bd_ready = readiness[0][0]
        moved = beat_valid and a_ready
        grant = request and self._grant
        # Positional, in EngineCycle's field order: binding 17 keywords costs twice as much.
        if self.mm2s:
            o_valid, data, o_last = self.datapath.outputs(self._mem_data)
            read = moved and not zero
            return EngineCycle(bd_valid, bd_ready, beat_valid, a_ready, address, zero, last,
                               request, grant, o_valid, self._o_ready, data if o_valid else 0,
                               o_last and o_valid, read, False, address if read else 0, 0)
        write = self.datapath.write
        i_valid = self._i_valid
        return EngineCycle(bd_valid, bd_ready, beat_valid, a_ready, address, zero, last,
                           request, grant, i_valid, beat_valid and passes,
                           self._i_data if i_valid else 0, False, False, write is not None,
                           write[0] if write else 0, write[1] if write else 0)

    def clock(self, accepted_beats: tuple[list[int], list[bool]] | None = None) -> None:
        """The rising edge.

        Parameters
        ----------
        accepted_beats : tuple, optional
            The beats of the BD offered this cycle (:func:`bd_beat_lists`), computed
            once by the caller; taken if the BD was accepted.
        """
        (beat_valid, address, zero, last), _, a_ready, readiness = self._settle()
        self._settled = None
        moved = beat_valid and a_ready
        accepted = None
        if self._bd is not None and readiness[0][0]:
            accepted = (accepted_beats if accepted_beats is not None
                        else bd_beat_lists(self.kind, self._bd))
        if self.mm2s:
            self.datapath.clock((zero, last) if moved else None, self._o_ready, self._mem_data)
            self.slots.clock(accepted, a_ready, readiness)
        else:
            self.datapath.clock((address, zero, self._i_data) if moved else None)
            generator_ready, dropping = self.skid is None, self.dropping
            self._clock_skid(moved)
            self.slots.clock(accepted, generator_ready, readiness, dropping)
            # A word with TLAST ends its BD: the beats it has left are dropped next cycle.
            self.dropping = moved and self._i_end and not last
        if moved:
            self.first = last or self._i_end

    def _clock_skid(self, moved: bool) -> None:
        """S2MM's skid at the edge, before the slots move: a held beat leaves when it
        moves; an empty skid takes the generator's beat when it shows one that does
        not move (the generator gives a beat whenever the skid is empty)."""
        if self.skid is not None:
            if moved:
                self.skid = self._skid_from = None
        elif not moved and not self.dropping:
            valid, address, zero, last = self.slots.outputs()
            if valid:
                self.skid = (address, zero, last)
                self._skid_from = (self.slots.run, self.slots.position)
