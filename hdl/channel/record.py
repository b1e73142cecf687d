"""The BDs a channel has in flight: one record each, in a ring with three heads.

A BD gets a record when the engine takes it and keeps it until the stream stage is
done with it. Three parts read the ring, each at its own head, because each is at a
different BD at a time:

* the lock requester, at the BD whose first beat waits at the lock gate (``gate``);
* the completion, at the BD whose last beat is next (``run``);
* the packet stage, at the BD whose words pass the stream now (``stage``).

A head moves on when its part is done with the BD; the record is written at ``wr``.
The ring holds at most ``RECORDS - 1`` records (with all ``RECORDS`` held, ``wr``
would meet the heads and the ring would read as empty); ``RECORDS`` is chosen so a
channel never has that many BDs in flight.
"""

from __future__ import annotations

from amaranth.hdl import Array, Module, Signal
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from ...model.bd.fields import FIELD_INDEX
from ..lock_unit import LOCK_VALUE_BITS

__all__ = ["RECORDS", "InFlightRing", "record_layout"]

RECORDS = 8
"""BDs a channel tracks between the engine taking them and their last word: more than
the address generator's slots and the datapath's words can hold at once."""


def record_layout(kind: str) -> data.StructLayout:
    """What the parts after the engine need of a BD: its locks, packet, TLAST, length
    and whether it ends its task (and that task's token)."""
    f = FIELD_INDEX[kind]
    return data.StructLayout({
        "acq_enable": 1, "acq_id": f["lock_acq_id"].value_width, "rel_enable": 1,
        "acq_value": LOCK_VALUE_BITS, "rel_id": f["lock_rel_id"].value_width,
        "rel_value": LOCK_VALUE_BITS, "packet": 1, "packet_id": 5, "packet_type": 3,
        "tlast_suppress": 1, "length": f["buffer_length"].value_width,
        "ends_task": 1, "token": 1,
    })


class InFlightRing(wiring.Component):
    """``RECORDS`` records of the BDs in flight, with a write pointer and three heads.

    Parameters
    ----------
    kind : {"tile", "memtile", "shim"}

    Attributes
    ----------
    push : In(1)
    record : In(record_layout(kind))
        The engine takes a BD: its record is written at the end of the cycle.
    gate_advance, run_advance, stage_advance : In(1)
        A head's part is done with its BD.
    gate_head, run_head, stage_head : Out(record_layout(kind))
        The record at each head.
    gate_valid : Out(1)
        The gate head holds a BD.
    gate_next : Out(record_layout(kind))
    next_valid : Out(1)
        The record behind the gate head, and whether it holds a BD.
    stage_valid : Out(1)
        The stage head holds a BD.
    stage_granted : Out(1)
        The stage head's BD is past the lock gate.
    engine_empty : Out(1)
        No BD waits at the gate or runs in the engine.
    busy : Out(1)
        A BD still runs or still streams.
    """

    def __init__(self, kind: str) -> None:
        layout = record_layout(kind)
        super().__init__({
            "push": In(1), "record": In(layout),
            "gate_advance": In(1), "run_advance": In(1), "stage_advance": In(1),
            "gate_head": Out(layout), "run_head": Out(layout), "stage_head": Out(layout),
            "gate_valid": Out(1), "gate_next": Out(layout), "next_valid": Out(1),
            "stage_valid": Out(1), "stage_granted": Out(1), "engine_empty": Out(1),
            "busy": Out(1),
        })
        self.layout = layout

    def elaborate(self, platform: object) -> Module:
        m = Module()
        ring = Array(Signal(self.layout, name=f"record{k}") for k in range(RECORDS))
        bits = (RECORDS - 1).bit_length()
        wr, gate_p, run_p, stage_p = (Signal(bits, name=n) for n in
                                      ("wr", "gate_p", "run_p", "stage_p"))
        behind = (gate_p + 1)[:bits]
        with m.If(self.push):
            m.d.sync += [ring[wr].eq(self.record), wr.eq(wr + 1)]
        for advance, pointer in ((self.gate_advance, gate_p), (self.run_advance, run_p),
                                 (self.stage_advance, stage_p)):
            with m.If(advance):
                m.d.sync += pointer.eq(pointer + 1)
        m.d.comb += [
            self.gate_head.eq(ring[gate_p]), self.run_head.eq(ring[run_p]),
            self.stage_head.eq(ring[stage_p]),
            self.gate_valid.eq(gate_p != wr), self.gate_next.eq(ring[behind]),
            self.next_valid.eq((gate_p != wr) & (behind != wr)),
            self.stage_valid.eq(stage_p != wr), self.stage_granted.eq(gate_p != stage_p),
            self.engine_empty.eq((gate_p == wr) & (run_p == wr)),
            self.busy.eq((wr != stage_p) | (wr != run_p)),
        ]
        return m
