"""Formal harness for the channel's lock requests: no bubble at a BD boundary when the
lock is free.

The channel's engine (:class:`~aiedma.hdl.engine.MM2SEngine` or
:class:`~aiedma.hdl.engine.S2MMEngine`: address generator, the S2MM skid, lock gate,
datapath), its ring of in-flight records and its lock requester
(:class:`~aiedma.hdl.channel.lock_requests.LockRequester`), wired as
:class:`~aiedma.hdl.channel.channel.Channel` wires them, take BDs offered in every
cycle, of ``LENGTHS`` beats (3 to 5), each with or without an acquire (free), the
other fields 0. The lock unit is one whose locks are always free: it tests a request in the first
cycle it shows and grants it in the next, its grant a register shown in the cycle after
(the request not looked at then), as the contract says. The stream is always ready
(MM2S) or always has a word, without TLAST (S2MM). Asserted by BMC: once the first beat
has passed the gate, a beat passes in every cycle, across every BD boundary, so the
request of each BD goes out ahead and its grant is there in time (and on S2MM the skid
between the generator and the gate adds no cycle).
"""

from __future__ import annotations

from amaranth.asserts import AnySeq
from amaranth.hdl import Assert, Assume, Cover, Module, ResetSignal, Signal
from amaranth.lib import wiring

from ...hdl.channel.lock_requests import LockRequester
from ...hdl.channel.record import InFlightRing, record_layout
from ...hdl.engine import MM2SEngine, S2MMEngine
from ...model.cycle.contract import (
    LOCK_ASK_AHEAD,
    LOCK_GRANT_LATENCY,
    address_generation_fields,
)

__all__ = ["ENGINES", "LENGTHS", "ChannelLockFormal"]

ENGINES = {"mm2s": MM2SEngine, "s2mm": S2MMEngine}
"""The engine of each direction."""

LENGTHS = (LOCK_GRANT_LATENCY, LOCK_GRANT_LATENCY + 2)
"""Smallest and largest ``buffer_length`` of the BDs offered: ``LOCK_GRANT_LATENCY``
beats is the shortest BD the no-bubble rule covers (after a shorter BD with an acquire
the next comes late, docs/cycle.md)."""


class ChannelLockFormal(wiring.Component):
    """Engine, record ring and lock requester with an always-free lock unit.

    Parameters
    ----------
    kind : {"tile", "memtile", "shim"}
    ask_ahead : int, optional
        The lock requester's ``ask_ahead`` (the contract's value; a mutant in the tests).
    direction : {"mm2s", "s2mm"}, optional
        The engine's direction.
    """

    def __init__(self, kind: str, ask_ahead: int = LOCK_ASK_AHEAD,
                 direction: str = "mm2s") -> None:
        if direction not in ENGINES:
            raise ValueError(f"direction={direction!r}: must be one of {sorted(ENGINES)}")
        self.kind, self.ask_ahead, self.direction = kind, ask_ahead, direction
        super().__init__({})

    def elaborate(self, platform: object) -> Module:
        m = Module()
        kind = self.kind
        m.submodules.engine = engine = ENGINES[self.direction](kind)
        m.submodules.ring = ring = InFlightRing(kind)
        m.submodules.locks = locks = LockRequester(kind, self.ask_ahead)
        m.d.comb += Assume(~ResetSignal())
        self._offer(m, engine, ring)
        if self.direction == "mm2s":
            m.d.comb += [engine.o.ready.eq(1),
                         engine.mem_data.eq(AnySeq(len(engine.mem_data)))]
        else:
            m.d.comb += [engine.i.valid.eq(1), engine.i.payload.last.eq(0),
                         engine.i.payload.data.eq(AnySeq(len(engine.i.payload.data)))]

        accepted = engine.bd.valid & engine.bd.ready
        moved = engine.beat_valid & engine.beat_ready
        last_beat = moved & engine.beat_last
        m.d.comb += [
            ring.push.eq(accepted), ring.gate_advance.eq(locks.gate_advance),
            ring.run_advance.eq(last_beat), ring.stage_advance.eq(last_beat),
            locks.engine_request.eq(engine.lock_request), engine.lock_grant.eq(locks.engine_grant),
            locks.beat_moved.eq(moved),
            locks.gate_head.eq(ring.gate_head), locks.gate_valid.eq(ring.gate_valid),
            locks.gate_next.eq(ring.gate_next), locks.next_valid.eq(ring.next_valid),
            locks.zero_ready.eq(0), locks.released.eq(0),
        ]
        # The lock unit, every lock free: it tests each request, then grants it, from
        # registers.
        tested, grant = Signal(), Signal()
        asking = locks.acquire.request & ~grant
        m.d.sync += [tested.eq(asking), grant.eq(asking & tested)]
        m.d.comb += locks.acquire.grant.eq(grant)

        started = Signal()      # the first beat has passed the gate
        boundaries = Signal(3)  # BD boundaries crossed since
        with m.If(moved):
            m.d.sync += started.eq(1)
        with m.If(started & last_beat & (boundaries != 7)):
            m.d.sync += boundaries.eq(boundaries + 1)
        with m.If(started):
            m.d.comb += Assert(moved)
        m.d.comb += Cover(boundaries == 3)
        return m

    def _offer(self, m: Module, engine: MM2SEngine | S2MMEngine, ring: InFlightRing) -> None:
        """A BD offered every cycle: free length and acquire, every other field 0."""
        length = Signal(engine.bd.payload.buffer_length.shape())
        m.d.comb += [length.eq(AnySeq(len(length))),
                     Assume((length >= LENGTHS[0]) & (length <= LENGTHS[1]))]
        m.d.comb += engine.bd.valid.eq(1)
        for field in address_generation_fields(self.kind):
            value = length if field.name == "buffer_length" else 0
            m.d.comb += getattr(engine.bd.payload, field.name).eq(value)
        record = Signal(record_layout(self.kind))
        m.d.comb += [
            record.acq_enable.eq(AnySeq(1)), record.acq_id.eq(AnySeq(len(record.acq_id))),
            record.acq_value.eq(AnySeq(len(record.acq_value))), record.length.eq(length),
            ring.record.eq(record),
        ]
