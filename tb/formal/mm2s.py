"""Formal harness for the MM2S datapath: stream rules and zero beats (properties beside the block).

The properties live here, in a wrapper around :class:`~aiedma.hdl.mm2s.MM2SDatapath`,
so the synthesised block carries none of them. The environment is assumed to keep
the AXI-stream rule on ``beats`` (a stalled beat holds) and the memory answers with
any word; the harness asserts that ``o`` keeps the same rule, that a zero beat never
enables the read, and that a zero beat comes out as the word 0.
"""

from __future__ import annotations

from amaranth.asserts import AnySeq
from amaranth.hdl import Assert, Assume, Cover, Module, ResetSignal, Signal
from amaranth.lib import wiring

from ...hdl.mm2s import MM2SDatapath

__all__ = ["MM2SFormal"]


class MM2SFormal(wiring.Component):
    """MM2S datapath with free inputs, stream assumptions and the asserted properties.

    Parameters
    ----------
    kind : {"tile", "memtile", "shim"}
        The DMA kind of the datapath under proof.
    dut : wiring.Component, optional
        The block to prove (a mutant in the tests); a fresh ``MM2SDatapath(kind)`` if omitted.
    """

    def __init__(self, kind: str, dut: wiring.Component | None = None) -> None:
        self.dut = dut if dut is not None else MM2SDatapath(kind)
        super().__init__({})

    def elaborate(self, platform: object) -> Module:
        m = Module()
        m.submodules.dut = dut = self.dut
        # Every input is free each cycle (an undriven signal would be a constant).
        m.d.comb += [
            dut.beats.valid.eq(AnySeq(1)),
            dut.beats.payload.eq(AnySeq(len(dut.beats.payload.as_value()))),
            dut.o.ready.eq(AnySeq(1)),
            dut.mem_data.eq(AnySeq(len(dut.mem_data))),
        ]
        past_valid = Signal()  # a previous cycle exists (no property looks before reset)
        m.d.sync += past_valid.eq(1)
        # Registers start at their init values (the solver honours them); no reset after.
        m.d.comb += Assume(~ResetSignal())

        # Registered copies of last cycle's handshake, for the "stalled payload holds" rules.
        in_stall = Signal()
        in_prev = Signal.like(dut.beats.payload)
        out_stall = Signal()
        out_prev = Signal.like(dut.o.payload)
        zero_flight = Signal()
        m.d.sync += [
            in_stall.eq(dut.beats.valid & ~dut.beats.ready),
            in_prev.eq(dut.beats.payload),
            out_stall.eq(dut.o.valid & ~dut.o.ready),
            out_prev.eq(dut.o.payload),
            zero_flight.eq(dut.beats.valid & dut.beats.ready & dut.beats.payload.zero),
        ]
        with m.If(past_valid & in_stall):
            held = dut.beats.payload.as_value() == in_prev.as_value()
            m.d.comb += Assume(dut.beats.valid & held)

        # 1. Stream rules on o: a stalled word stays valid and unchanged.
        with m.If(past_valid & out_stall):
            m.d.comb += Assert(dut.o.valid)
            m.d.comb += Assert(dut.o.payload.as_value() == out_prev.as_value())
        # 3. A zero beat never enables the read.
        with m.If(dut.mem_en):
            m.d.comb += Assert(~dut.beats.payload.zero & dut.beats.valid & dut.beats.ready)
        # 5. Covers: a stall on o, and a zero beat taken.
        m.d.comb += Cover(past_valid & out_stall & dut.o.valid)
        m.d.comb += Cover(zero_flight)
        return m
