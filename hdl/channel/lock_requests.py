"""The channel's lock requests: the lock gate's acquire, and the releases it owes.

The engine's lock gate asks (``engine_request``) when the first beat of the BD at the
ring's gate head could move; a BD of length 0 asks from the fetch stage
(``zero_ready``), which runs it only when the engine is empty, so the two never ask
together. A BD without an acquire is granted at once. A BD that releases a lock
passes only while the channel owes fewer than ``RELEASE_QUEUE_DEPTH`` releases, so
its release will find room in the release queue.
"""

from __future__ import annotations

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ...model.bd.fields import FIELD_INDEX
from ...model.cycle.contract import RELEASE_QUEUE_DEPTH
from ..lock_unit import lock_port_signature
from .record import record_layout

__all__ = ["LockRequester"]


class LockRequester(wiring.Component):
    """Asks the acquire port for the BD at the gate; counts the releases owed.

    Parameters
    ----------
    kind : {"tile", "memtile", "shim"}

    Attributes
    ----------
    engine_request : In(1)
    engine_grant : Out(1)
        The engine's lock gate.
    gate_head : In(record_layout(kind))
        The record of the BD at the gate (when ``engine_request``).
    zero_ready : In(1)
    zero_record : In(record_layout(kind))
        A BD of length 0 may run now; its record.
    zero_done : Out(1)
        It passed: it completes this cycle.
    gate_advance : Out(1)
        The gate's BD passed: the ring's gate head moves on.
    acquire : Out(lock_port_signature(lock_ids))
        To the lock unit (``lock_id`` as the BD names it).
    released : In(1)
        One of the channel's releases was applied this cycle.
    """

    def __init__(self, kind: str) -> None:
        self.kind = kind
        layout = record_layout(kind)
        super().__init__({
            "engine_request": In(1), "engine_grant": Out(1), "gate_head": In(layout),
            "zero_ready": In(1), "zero_record": In(layout), "zero_done": Out(1),
            "gate_advance": Out(1),
            "acquire": Out(lock_port_signature(FIELD_INDEX[kind]["lock_acq_id"].maximum + 1)),
            "released": In(1),
        })

    def elaborate(self, platform: object) -> Module:
        m = Module()
        request = self.engine_request
        asking = Signal(record_layout(self.kind))   # the record of the BD that asks
        m.d.comb += asking.eq(Mux(request, self.gate_head.as_value(),
                                  self.zero_record.as_value()))
        releases = asking.rel_enable
        owed = Signal(range(RELEASE_QUEUE_DEPTH + 1))
        room = ~releases | (owed < RELEASE_QUEUE_DEPTH)
        m.d.comb += [
            self.acquire.request.eq((request | self.zero_ready) & asking.acq_enable & room),
            self.acquire.lock_id.eq(asking.acq_id),
            self.acquire.value.eq(asking.acq_value),
        ]
        granted = (~asking.acq_enable | self.acquire.grant) & room
        m.d.comb += [self.engine_grant.eq(request & granted),
                     self.gate_advance.eq(request & granted),
                     self.zero_done.eq(self.zero_ready & granted)]
        passed = ((request & granted) | self.zero_done) & releases
        m.d.sync += owed.eq(owed + passed - self.released)
        return m
