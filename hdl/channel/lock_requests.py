"""The channel's lock requests: each BD's acquire, asked ahead from registers, and the
releases it owes.

The rules are the contract's (``model/cycle/contract.py`` "Channel", Lock gate): one BD
at a time holds its lock or asks for it; the request leaves from registers and the
lock unit's grant comes back from its registers (``LOCK_GRANT_LATENCY``), so no path
runs from another channel or from the lock unit's decision into this channel's logic
in one cycle. The next BD at the gate asks once the BD ahead of it has at most
``LOCK_ASK_AHEAD`` beats left to pass after the cycle, so a free lock is held by the
cycle after that BD's last beat. A BD without an acquire holds at once (from the next
cycle); a BD that releases asks only while the channel owes fewer than
``RELEASE_QUEUE_DEPTH`` releases, so its release will find room in the release queue.
A BD of length 0 asks from the fetch stage (``zero_ready``) when the engine is empty
and completes in the cycle it holds its lock.
"""

from __future__ import annotations

from amaranth.hdl import Module, Mux, Signal, Value
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ...model.bd.fields import FIELD_INDEX
from ...model.cycle.contract import LOCK_ASK_AHEAD, RELEASE_QUEUE_DEPTH
from ...model.errors import AiedmaError, field_error
from ..lock_unit import lock_port_signature
from .record import FEW_BEATS, head_layout, head_of, record_layout

__all__ = ["LockRequester"]


class LockRequester(wiring.Component):
    """Asks the acquire port for the next BD at the gate; counts the releases owed.

    Parameters
    ----------
    kind : {"tile", "memtile", "shim"}
    ask_ahead : int, optional
        Beats of the BD ahead left when the next BD asks: the contract's
        ``LOCK_ASK_AHEAD`` (another value only for the proofs' mutants).

    Attributes
    ----------
    engine_request : In(1)
        The gate shows a BD's first beat and the datapath could take it.
    engine_grant : Out(1)
        The BD at the gate holds its lock: its first beat passes.
    beat_moved : In(1)
        A beat passed the gate this cycle (the first one included).
    beat_cut : In(1)
        ... and it ended its BD early (finish on TLAST): no beats are left.
    gate_head, gate_valid : In
        The record of the next BD at the gate, taken by the engine before this cycle.
    gate_next, next_valid : In
        The record of the BD behind it.
    zero_ready : In(1)
    zero_record : In(record_layout(kind))
        A BD of length 0 may run now; its record.
    zero_done : Out(1)
        It holds its lock: it completes this cycle.
    gate_advance : Out(1)
        The gate's BD passed: the ring's gate head moves on.
    acquire : Out(lock_port_signature(lock_ids))
        To the lock unit (``lock_id`` as the BD names it); ``request``, ``lock_id`` and
        ``value`` are registers, ``grant`` the unit's register.
    released : In(1)
        One of the channel's releases left its queue this cycle.
    waits_acquire, waits_release : Out(1)
        The BD at the gate (or a BD of length 0) waits for its lock this cycle: for its
        acquire, or (``waits_release``) it releases a lock and the channel owes
        ``RELEASE_QUEUE_DEPTH`` releases at the start of the cycle (the status register's
        stall bits; the model's ``Channel._stall_bits``).
    """

    def __init__(self, kind: str, ask_ahead: int = LOCK_ASK_AHEAD) -> None:
        if not 0 <= ask_ahead < FEW_BEATS - 1:
            # The ring's length saturated at FEW_BEATS tells a BD of ask_ahead + 1 beats
            # from a longer one only below that.
            raise field_error(AiedmaError, "ask_ahead", ask_ahead,
                              f"must be 0 to {FEW_BEATS - 2} (beats)")
        self.kind, self.ask_ahead = kind, ask_ahead
        gate = head_layout(kind, "gate")
        super().__init__({
            "engine_request": In(1), "engine_grant": Out(1), "beat_moved": In(1),
            "beat_cut": In(1),
            "gate_head": In(gate), "gate_valid": In(1),
            "gate_next": In(gate), "next_valid": In(1),
            "zero_ready": In(1), "zero_record": In(record_layout(kind)), "zero_done": Out(1),
            "gate_advance": Out(1),
            "acquire": Out(lock_port_signature(FIELD_INDEX[kind]["lock_acq_id"].maximum + 1)),
            "released": In(1), "waits_acquire": Out(1), "waits_release": Out(1),
        })

    def elaborate(self, platform: object) -> Module:
        m = Module()
        layout = head_layout(self.kind, "gate")
        zero = Signal(layout)             # the length-0 BD's record, as the gate's
        m.d.comb += zero.eq(head_of("gate", self.zero_record))
        held = Signal()                       # the next BD's lock is held
        have = Signal()                       # held, or its grant shows now
        m.d.comb += have.eq(held | self.acquire.grant)
        passed = self.engine_request & have   # the gate's BD passes
        m.d.comb += [self.engine_grant.eq(have), self.gate_advance.eq(passed),
                     self.zero_done.eq(self.zero_ready & have)]
        used = passed | self.zero_done
        user = Signal(layout)
        m.d.comb += user.eq(Mux(passed, self.gate_head.as_value(), zero.as_value()))

        # Beats the BD ahead at the gate has left after this cycle, and whether they are
        # at most ``ask_ahead``: kept in registers for the cycle after (as they stand,
        # and less the beat that may pass then) and, for the BD passing now, read from
        # its saturated length, so the ask waits on no subtract or compare of a length.
        left = Signal(layout.members["length"])
        left_after = Signal.like(left)
        m.d.comb += left_after.eq(Mux(self.beat_cut, 0,
                                      Mux(passed, self.gate_head.length - 1,
                                          left - self.beat_moved)))
        m.d.sync += left.eq(left_after)
        near, near_beat = Signal(init=1), Signal()   # as ``left``'s reset value (0) has
        # ``left_after <= ask_ahead`` and ``left_after - 1 <= ask_ahead`` (modulo the
        # width: 0 - 1 is never near), each compared in all three cases of
        # ``left_after`` and chosen by them, so the grant's path (through ``passed``)
        # ends at a multiplexer, not at a subtract and a compare.
        def at_most(value: Value) -> Value:      # modulo the width of ``left``
            return value[:len(left)] <= self.ask_ahead
        length, moved = self.gate_head.length, self.beat_moved
        m.d.sync += [
            near.eq(Mux(self.beat_cut, 1,
                        Mux(passed, at_most(length - 1),
                            Mux(moved, at_most(left - 1), at_most(left))))),
            near_beat.eq(Mux(self.beat_cut, 0,
                             Mux(passed, at_most(length - 2),
                                 Mux(moved, at_most(left - 2), at_most(left - 1))))),
        ]
        few = self.gate_head.few_beats
        near_after = Mux(self.beat_cut, 1,
                         Mux(passed, (few != 0) & (few <= self.ask_ahead + 1),
                             Mux(self.beat_moved, near_beat, near)))

        owed = Signal(range(RELEASE_QUEUE_DEPTH + 1))
        owed_after = Signal.like(owed)
        m.d.comb += owed_after.eq(owed + (used & user.rel_enable) - self.released)
        m.d.sync += owed.eq(owed_after)
        # Status: a BD waits at the gate, or a length-0 BD for its lock.
        waiting = (self.engine_request | self.zero_ready) & ~have
        releases = Mux(self.engine_request, self.gate_head.rel_enable, zero.rel_enable)
        owes = releases & (owed == RELEASE_QUEUE_DEPTH)
        m.d.comb += [self.waits_acquire.eq(waiting & ~owes),
                     self.waits_release.eq(waiting & owes)]

        # The next BD asks when nothing is held or asked after this edge.
        asking = self.acquire.request & ~self.acquire.grant
        candidate = Signal(layout)
        exists = Signal()
        with m.If(passed):
            m.d.comb += [candidate.eq(self.gate_next), exists.eq(self.next_valid)]
        with m.Elif(self.gate_valid):
            m.d.comb += [candidate.eq(self.gate_head), exists.eq(1)]
        with m.Else():
            m.d.comb += [candidate.eq(zero),
                         exists.eq(self.zero_ready & ~self.zero_done)]
        room = ~candidate.rel_enable | (owed_after < RELEASE_QUEUE_DEPTH)
        ask = Signal()
        m.d.comb += ask.eq(~(have & ~used) & ~asking & exists & room & near_after)
        m.d.sync += [
            held.eq((have & ~used) | (ask & ~candidate.acq_enable)),
            self.acquire.request.eq(asking | (ask & candidate.acq_enable)),
        ]
        with m.If(ask):
            m.d.sync += [self.acquire.lock_id.eq(candidate.acq_id),
                         self.acquire.value.eq(candidate.acq_value)]
        return m
