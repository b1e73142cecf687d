"""The BDs a channel has in flight: one record each, in a ring with three heads.

A BD gets a record when the engine takes it and keeps it until the stream stage is
done with it. Three parts read the ring, each at its own head, because each is at a
different BD at a time:

* the lock requester, at the BD whose first beat waits at the lock gate (``gate``);
* the completion, at the BD whose last beat is next (``run``);
* the packet stage, at the BD whose words pass the stream now (``stage``).

A head moves on when its part is done with the BD; the record is written at ``wr``.
Each head shows only the fields its part reads (:data:`HEAD_FIELDS`), from a memory of
those fields with an asynchronous read: LUT RAM where the part has it, so a channel's
records take a few dozen LUT RAM cells instead of hundreds of flip-flops and four
eight-way multiplexers of every field.
The ring holds at most ``RECORDS - 1`` records (with all ``RECORDS`` held, ``wr``
would meet the heads and the ring would read as empty); ``RECORDS`` is chosen so a
channel never has that many BDs in flight.
"""

from __future__ import annotations

from amaranth.hdl import Cat, Module, Mux, Signal, Value
from amaranth.lib import data, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from ...model.bd.fields import BD_COUNT, FIELD_INDEX
from ..lock_unit import LOCK_VALUE_BITS

__all__ = ["FEW_BEATS", "HEAD_FIELDS", "RECORDS", "InFlightRing", "head_layout", "head_of",
           "record_layout"]

RECORDS = 8
"""BDs a channel tracks between the engine taking them and their last word: more than
the address generator's slots and the datapath's words can hold at once."""


def record_layout(kind: str) -> data.StructLayout:
    """What the parts after the engine need of a BD: its locks, packet, TLAST, length
    and whether it ends its task (and that task's token)."""
    f = FIELD_INDEX[kind]
    # (De)compression: core tile and memory tile only, so a shim's records have no bit.
    compress = {"compress": 1} if "enable_compression" in f else {}
    return data.StructLayout({**compress,
        "acq_enable": 1, "acq_id": f["lock_acq_id"].value_width, "rel_enable": 1,
        "acq_value": LOCK_VALUE_BITS, "rel_id": f["lock_rel_id"].value_width,
        "rel_value": LOCK_VALUE_BITS, "packet": 1, "packet_id": 5, "packet_type": 3,
        "out_of_order_bd_id": f["out_of_order_bd_id"].value_width,
        "tlast_suppress": 1, "length": f["buffer_length"].value_width,
        # ``length == 1``, decided as the BD arrives (the ring's ``stage_single``)
        "single": 1, "ends_task": 1, "token": 1, "bd_id": range(BD_COUNT[kind]),
    })


FEW_BEATS = 7
"""The ``few_beats`` the gate head shows: a BD's length, saturated at this (3 bits)."""

HEAD_FIELDS: dict[str, tuple[str, ...]] = {
    "gate": ("acq_enable", "acq_id", "acq_value", "rel_enable", "length"),
    "run": ("rel_enable", "rel_id", "rel_value", "ends_task", "token", "bd_id"),
    "stage": ("packet", "packet_id", "packet_type", "out_of_order_bd_id", "tlast_suppress",
              "length", "compress"),
}
"""The fields of a record each head shows: the lock requester's (``gate``), the
completion's (``run``) and the packet stage's (``stage``). The gate head also shows
``few_beats``, the length saturated at :data:`FEW_BEATS`, worked out when the record is
written: the lock requester's "few beats left" test is then a compare of three bits
read from the ring, not a subtract and compare of the whole length."""


def head_layout(kind: str, head: str) -> data.StructLayout:
    """The part of :func:`record_layout` that ``head`` shows (:data:`HEAD_FIELDS`)."""
    members = record_layout(kind).members
    few = {"few_beats": range(FEW_BEATS + 1)} if head == "gate" else {}
    return data.StructLayout({**{name: members[name] for name in HEAD_FIELDS[head]
                                 if name in members}, **few})


def head_of(head: str, record: data.View) -> Value:
    """The fields of a whole ``record`` that ``head`` shows, packed as its layout."""
    members = record.shape().members
    few = ([Mux(record.length < FEW_BEATS, record.length, FEW_BEATS)[:FEW_BEATS.bit_length()]]
           if head == "gate" else [])
    return Cat(*(getattr(record, name) for name in HEAD_FIELDS[head] if name in members), *few)


class InFlightRing(wiring.Component):
    """``records`` (``RECORDS``, a power of two) records of the BDs in flight, with a write
    pointer and three heads.

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
    gate_head, run_head, stage_head : Out(head_layout(kind, ...))
        The record at each head, the fields that head's part reads.
    gate_valid : Out(1)
        The gate head holds a BD.
    gate_next : Out(head_layout(kind, "gate"))
    next_valid : Out(1)
        The record behind the gate head, and whether it holds a BD.
    stage_valid : Out(1)
        The stage head holds a BD (a register: it feeds the stream side's choices).
    stage_packet : Out(1)
        The stage head holds a BD with ``packet`` set, from a register (it decides
        whether the next stream word is a header, which must not start at the ring's
        pointers and memories).
    stage_granted : Out(1)
        The stage head's BD is past the lock gate (a register: it decides, with
        ``stage_packet``, whether the next stream word is a header).
    stage_single : Out(1)
        The stage head holds a BD of length 1, from a register (the S2MM packet stage's
        "this word is the BD's last" for a BD's first word).
    stage_compress : Out(1)
        Core tile and memory tile: the stage head holds a BD with ``compress`` set, from
        a register (it feeds the (de)compressor's choice to pass a word through, which
        must not start at the ring's pointers and memories).
    engine_empty : Out(1)
        No BD waits at the gate or runs in the engine (a register).
    busy : Out(1)
        A BD still runs or still streams.
    """

    def __init__(self, kind: str, records: int = RECORDS) -> None:
        self.kind = kind
        self.records = records      # a power of two: the pointers wrap by their bits
        super().__init__({
            "push": In(1), "record": In(record_layout(kind)),
            "gate_advance": In(1), "run_advance": In(1), "stage_advance": In(1),
            **{f"{head}_head": Out(head_layout(kind, head)) for head in HEAD_FIELDS},
            "gate_valid": Out(1), "gate_next": Out(head_layout(kind, "gate")),
            "next_valid": Out(1),
            "stage_valid": Out(1), "stage_packet": Out(1), "stage_granted": Out(1),
            "stage_single": Out(1),
            "engine_empty": Out(1, init=1),
            "busy": Out(1),
            **({"stage_compress": Out(1)} if "compress" in record_layout(kind).members
               else {}),
        })

    def elaborate(self, platform: object) -> Module:
        m = Module()
        bits = (self.records - 1).bit_length()
        wr, gate_p, run_p, stage_p = (Signal(bits, name=n) for n in
                                      ("wr", "gate_p", "run_p", "stage_p"))
        behind = (gate_p + 1)[:bits]
        with m.If(self.push):
            m.d.sync += wr.eq(wr + 1)
        reads = {"gate": ((gate_p, self.gate_head), (behind, self.gate_next)),
                 "run": ((run_p, self.run_head),), "stage": ((stage_p, self.stage_head),)}
        for part, heads in reads.items():
            memory = Memory(shape=head_layout(self.kind, part), depth=self.records, init=[])
            m.submodules[f"{part}_records"] = memory
            write = memory.write_port()
            m.d.comb += [write.addr.eq(wr), write.data.eq(head_of(part, self.record)),
                         write.en.eq(self.push)]
            for pointer, head in heads:
                read = memory.read_port(domain="comb")
                m.d.comb += [read.addr.eq(pointer), head.eq(read.data)]
        for advance, pointer in ((self.gate_advance, gate_p), (self.run_advance, run_p),
                                 (self.stage_advance, stage_p)):
            with m.If(advance):
                m.d.sync += pointer.eq(pointer + 1)
        m.d.comb += [
            self.gate_valid.eq(gate_p != wr),
            self.next_valid.eq((gate_p != wr) & (behind != wr)),
            self.busy.eq((wr != stage_p) | (wr != run_p)),
        ]
        # The pointers after this cycle's push and advances: the flags below are registers
        # worked out from them.
        next_wr, next_gate, next_run, next_stage = (
            (pointer + step)[:bits] for pointer, step in
            ((wr, self.push), (gate_p, self.gate_advance), (run_p, self.run_advance),
             (stage_p, self.stage_advance)))
        # (a register: it lets a BD of length 0 run, which reaches the lock requester,
        # the completion and the release queue in the same cycle)
        m.d.sync += self.engine_empty.eq((next_gate == next_wr) & (next_run == next_wr))
        self._stage_flags(m, wr, next_wr, next_gate, next_stage)
        return m

    def _stage_flags(self, m: Module, wr: Signal, next_wr: Value, next_gate: Value,
                     next_stage: Value) -> None:
        """``stage_valid``, ``stage_granted``, ``stage_packet``, ``stage_single`` and
        ``stage_compress`` as registers: each record's bits in flip-flops, and the next
        cycle's stage head (after this cycle's push and advances) read from them."""
        held = next_stage != next_wr
        m.d.sync += [self.stage_valid.eq(held), self.stage_granted.eq(next_stage != next_gate)]
        flags = {"packet": (self.stage_packet, self.record.packet),
                 "single": (self.stage_single, self.record.single)}
        if hasattr(self, "stage_compress"):
            flags["compress"] = (self.stage_compress, self.record.compress)
        for name, (flag, value) in flags.items():
            bits = Signal(self.records, name=f"{name}_bits")
            next_bits = Signal(self.records, name=f"{name}_next")
            m.d.comb += next_bits.eq(bits)
            with m.If(self.push):
                m.d.comb += next_bits.bit_select(wr, 1).eq(value)
            m.d.sync += [bits.eq(next_bits), flag.eq(held & next_bits.bit_select(next_stage, 1))]
