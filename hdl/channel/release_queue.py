"""The release queue: completed BDs' lock releases, applied one at a time.

A completed BD's release joins the queue; the head asks on the release port from
registers (the queue is a shift register: its head and the entry behind it are its
first two places, the port shows one of them by the grant), so the lock unit's choice
among channels waits on nothing decided in the same cycle. The lock unit applies a
release at the end of the cycle after it chooses it; its grant (a register) shows in
the cycle after that, when the head leaves the queue and the release behind it asks in
its place. The lock requester keeps the queue from overflowing (it counts the releases
owed).
"""

from __future__ import annotations

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ...model.bd.fields import FIELD_INDEX
from ...model.cycle.contract import RELEASE_QUEUE_DEPTH
from ..lock_unit import LOCK_VALUE_BITS, lock_port_signature

__all__ = ["ReleaseQueue"]

class ReleaseQueue(wiring.Component):
    """``RELEASE_QUEUE_DEPTH`` lock releases, oldest first on the release port.

    Parameters
    ----------
    kind : {"tile", "memtile", "shim"}

    Attributes
    ----------
    push : In(1)
    lock_id, value : In
        A completed BD's release (its ``lock_rel_id``, ``lock_rel_value``).
    release : Out(lock_port_signature(lock_ids))
        To the lock unit.
    applied : Out(1)
        The head's release was applied: it leaves the queue this cycle.
    pending : Out(1)
        A release is queued.
    """

    def __init__(self, kind: str) -> None:
        rel_id = FIELD_INDEX[kind]["lock_rel_id"]
        self.id_bits = rel_id.value_width
        super().__init__({
            "push": In(1), "lock_id": In(self.id_bits), "value": In(LOCK_VALUE_BITS),
            "release": Out(lock_port_signature(rel_id.maximum + 1)),
            "applied": Out(1), "pending": Out(1),
        })

    def elaborate(self, platform: object) -> Module:
        m = Module()
        granted = self.release.grant
        # Place 0 is the head; a granted head leaves and every place moves up one, and a
        # release pushed lands in the first free place after that move. Each place
        # loads from the one behind it or from the input: no read at a pointer.
        places = [_Entry(self.id_bits, name)
                  for name in ("head", "behind",
                               *(f"place{k}" for k in range(2, RELEASE_QUEUE_DEPTH)))]
        count = Signal(range(RELEASE_QUEUE_DEPTH + 1))
        kept = Signal.like(count)       # the places still full after the head leaves
        m.d.comb += kept.eq(count - granted)
        m.d.sync += count.eq(kept + self.push)
        for k, place in enumerate(places):
            after = places[k + 1] if k + 1 < len(places) else None
            with m.If(self.push & (kept == k)):
                m.d.sync += [place.lock_id.eq(self.lock_id), place.value.eq(self.value)]
            if after is not None:
                with m.Elif(granted):
                    m.d.sync += [place.lock_id.eq(after.lock_id),
                                 place.value.eq(after.value)]
            m.d.sync += place.valid.eq((kept > k) | (self.push & (kept == k)))
        head, behind = places[0], places[1]
        m.d.comb += [
            self.release.request.eq(Mux(granted, behind.valid, head.valid)),
            self.release.lock_id.eq(Mux(granted, behind.lock_id, head.lock_id)),
            self.release.value.eq(Mux(granted, behind.value, head.value)),
            self.applied.eq(granted),
            self.pending.eq(head.valid),
        ]
        return m


class _Entry:
    """One queued release as registers: whether it is there, its lock and value."""

    def __init__(self, id_bits: int, name: str) -> None:
        self.valid = Signal(name=f"{name}_valid")
        self.lock_id = Signal(id_bits, name=f"{name}_id")
        self.value = Signal(LOCK_VALUE_BITS, name=f"{name}_value")
