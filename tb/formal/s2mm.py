"""Formal harness for the S2MM datapath: the join, and each write its beat's word and address.

The properties live here, in a wrapper around :class:`~aiedma.hdl.s2mm.S2MMDatapath`;
every input is free each cycle. Asserted: a word is taken exactly when its address beat
is (no word lost or written twice), the write one cycle after a data beat carries that
beat's address and word, and a zero beat never writes.
"""

from __future__ import annotations

from amaranth.asserts import AnySeq
from amaranth.hdl import Assert, Assume, Cover, Module, ResetSignal, Signal
from amaranth.lib import wiring

from ...hdl.s2mm import S2MMDatapath

__all__ = ["S2MMFormal"]


class S2MMFormal(wiring.Component):
    """S2MM datapath with free inputs and the asserted properties.

    Parameters
    ----------
    kind : {"tile", "memtile", "shim"}
        The DMA kind of the datapath under proof.
    dut : wiring.Component, optional
        The block to prove (a mutant in the tests); a fresh ``S2MMDatapath(kind)`` if omitted.
    """

    def __init__(self, kind: str, dut: wiring.Component | None = None) -> None:
        self.dut = dut if dut is not None else S2MMDatapath(kind)
        super().__init__({})

    def elaborate(self, platform: object) -> Module:
        m = Module()
        m.submodules.dut = dut = self.dut
        m.d.comb += [
            dut.i.valid.eq(AnySeq(1)),
            dut.i.payload.eq(AnySeq(len(dut.i.payload.as_value()))),
            dut.beats.valid.eq(AnySeq(1)),
            dut.beats.payload.eq(AnySeq(len(dut.beats.payload.as_value()))),
            # Registers start at their init values; no reset after.
            Assume(~ResetSignal()),
        ]
        take_word = dut.i.valid & dut.i.ready
        take_beat = dut.beats.valid & dut.beats.ready
        wrote = Signal()
        addr = Signal.like(dut.mem_addr)
        word = Signal.like(dut.mem_data)
        m.d.sync += [
            wrote.eq(take_beat & ~dut.beats.payload.zero),
            addr.eq(dut.beats.payload.address),
            word.eq(dut.i.payload.data),
        ]
        # The join: a word and its beat go together.
        m.d.comb += Assert(take_word == take_beat)
        # One write per data beat, one cycle later, with that beat's address and word;
        # none for a zero beat.
        m.d.comb += Assert(dut.mem_we == wrote)
        with m.If(wrote):
            m.d.comb += Assert((dut.mem_addr == addr) & (dut.mem_data == word))
        m.d.comb += Cover(wrote)
        m.d.comb += Cover(take_beat & dut.beats.payload.zero)
        return m
