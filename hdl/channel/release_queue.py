"""The release queue: completed BDs' lock releases, applied one at a time.

A completed BD's release joins the queue; the head asks on the release port from
registers, so the lock unit's choice among channels waits on nothing decided in the
same cycle. The lock unit applies a release at the end of the cycle it grants it.
The lock requester keeps the queue from overflowing (it counts the releases owed).
"""

from __future__ import annotations

from amaranth.hdl import Cat, Module
from amaranth.lib import wiring
from amaranth.lib.fifo import SyncFIFO
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
        The head's release is granted this cycle.
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
        id_bits = self.id_bits
        m.submodules.fifo = fifo = SyncFIFO(width=id_bits + LOCK_VALUE_BITS,
                                            depth=RELEASE_QUEUE_DEPTH)
        head = fifo.r_data
        m.d.comb += [
            fifo.w_en.eq(self.push),
            fifo.w_data.eq(Cat(self.lock_id, self.value)),
            self.release.request.eq(fifo.r_rdy),
            self.release.lock_id.eq(head[:id_bits]),
            self.release.value.eq(head[id_bits:]),
            fifo.r_en.eq(self.release.grant),
            self.applied.eq(self.release.request & self.release.grant),
            self.pending.eq(fifo.r_rdy),
        ]
        return m
