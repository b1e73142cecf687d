"""Completion: a BD is done when its last memory access is, and its task may end.

``COMPLETION_LATENCY`` (``model/cycle/contract.py``) says when: MM2S in the cycle its
last beat passes the gate (0), S2MM a cycle later, with its last write (1). On a
handshake memory port (latency None) the engine says when: in the cycle its datapath's
``done`` reports every access of the BD answered (:mod:`aiedma.hdl.handshake`), up to
``PENDING_BDS`` BDs waiting for it in order. A BD of
length 0 completes in the cycle it passes the lock requester; it runs only when no
BD is pending, so there is at most one completion a cycle.
"""

from __future__ import annotations

from amaranth.hdl import Module, Signal
from amaranth.lib import wiring
from amaranth.lib.fifo import SyncFIFO
from amaranth.lib.wiring import In, Out

from ...model.errors import AiedmaError, field_error
from ..handshake import PENDING_BDS
from .record import head_layout, head_of, record_layout

__all__ = ["Completion"]


class Completion(wiring.Component):
    """The BD that completes this cycle, with its record; the task's token.

    Parameters
    ----------
    kind : {"tile", "memtile", "shim"}
    latency : {0, 1, None}
        Cycles from a BD's last beat to its completion; None: at ``settled``.

    Attributes
    ----------
    last_beat : In(1)
    run_head : In(head_layout(kind, "run"))
        The engine's last beat of a BD passes the gate; the ring's record of that BD.
    zero_done : In(1)
    zero_record : In(record_layout(kind))
        A BD of length 0 completes now; its record.
    settled : In(1)
        Latency None only: the engine's ``done``, the oldest pending BD's accesses are
        answered.
    done : Out(1)
    record : Out(head_layout(kind, "run"))
        A BD completes at the end of this cycle; its record (the fields completing reads).
    pending : Out(1)
        A last beat has passed and its BD is still to complete.
    token : Out(1)
        A task that asked for a completion token ends this cycle.
    """

    def __init__(self, kind: str, latency: int) -> None:
        if latency not in (0, 1, None):
            raise field_error(AiedmaError, "latency", latency,
                              "must be 0 or 1 (cycles) or None (at settled)")
        self.latency = latency
        self.layout = layout = head_layout(kind, "run")
        super().__init__({
            "last_beat": In(1), "run_head": In(layout),
            "zero_done": In(1), "zero_record": In(record_layout(kind)),
            "done": Out(1), "record": Out(layout), "pending": Out(1), "token": Out(1),
            **({"settled": In(1)} if latency is None else {}),
        })

    def elaborate(self, platform: object) -> Module:
        m = Module()
        if self.latency is None:
            # Up to PENDING_BDS BDs wait for ``settled``, one a cycle in BD order (the
            # datapath takes no beat with that many waiting).
            m.submodules.waiting = waiting = SyncFIFO(width=self.layout.size,
                                                      depth=PENDING_BDS)
            m.d.comb += [
                waiting.w_en.eq(self.last_beat), waiting.w_data.eq(self.run_head),
                self.pending.eq(waiting.r_rdy),
                self.done.eq(waiting.r_rdy & self.settled), waiting.r_en.eq(self.done),
                self.record.eq(waiting.r_data),
            ]
        elif self.latency:
            last_record = Signal(self.layout)
            m.d.sync += [self.pending.eq(self.last_beat), last_record.eq(self.run_head)]
            m.d.comb += [self.done.eq(self.pending), self.record.eq(last_record)]
        else:
            m.d.comb += [self.done.eq(self.last_beat), self.record.eq(self.run_head)]
        with m.If(self.zero_done):
            m.d.comb += [self.done.eq(1), self.record.eq(head_of("run", self.zero_record))]
        m.d.comb += self.token.eq(self.done & self.record.ends_task & self.record.token)
        return m
