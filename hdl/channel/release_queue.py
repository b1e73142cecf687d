"""The release queue: completed BDs' lock releases, applied one at a time.

A completed BD's release joins the queue; the head asks on the release port from
registers (the head and the entry behind it are kept in registers, the port shows one
of them by the grant), so the lock unit's choice among channels waits on nothing
decided in the same cycle. The lock unit applies a release at the end of the cycle
after it chooses it; its grant (a register) shows in the cycle after that, when the
head leaves the queue and the release behind it asks in its place. The lock requester
keeps the queue from overflowing (it counts the releases owed).
"""

from __future__ import annotations

from amaranth.hdl import Array, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ...model.bd.fields import FIELD_INDEX
from ...model.cycle.contract import RELEASE_QUEUE_DEPTH
from ..lock_unit import LOCK_VALUE_BITS, lock_port_signature

__all__ = ["ReleaseQueue"]

_SLOTS = 1 << RELEASE_QUEUE_DEPTH.bit_length()
"""Entries of the ring: a power of two above the depth, so the pointers wrap by
themselves and ``wr - rd`` is the count."""


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
        bits = _SLOTS.bit_length() - 1
        ids = Array(Signal(self.id_bits, name=f"id{k}") for k in range(_SLOTS))
        values = Array(Signal(LOCK_VALUE_BITS, name=f"value{k}") for k in range(_SLOTS))
        wr, rd = Signal(bits), Signal(bits)
        granted = self.release.grant
        wr_next, rd_next = Signal(bits), Signal(bits)
        m.d.comb += [wr_next.eq(wr + self.push), rd_next.eq(rd + granted)]
        with m.If(self.push):
            m.d.sync += [ids[wr].eq(self.lock_id), values[wr].eq(self.value)]
        m.d.sync += [wr.eq(wr_next), rd.eq(rd_next)]
        # The head and the entry behind it, as registers: the port shows the head, or
        # the entry behind once the head's grant shows, through one multiplexer.
        head, behind = _Entry(self.id_bits, "head"), _Entry(self.id_bits, "behind")
        ahead = (rd_next + 1)[:bits]
        for entry, pointer, valid in ((head, rd_next, rd_next != wr_next),
                                      (behind, ahead, (rd_next != wr_next) & (ahead != wr_next))):
            arriving = self.push & (pointer == wr)
            m.d.sync += [
                entry.valid.eq(valid),
                entry.lock_id.eq(Mux(arriving, self.lock_id, ids[pointer])),
                entry.value.eq(Mux(arriving, self.value, values[pointer])),
            ]
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
