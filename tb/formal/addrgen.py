"""Formal harness for the address generator, at its ports only: the stream rules on ``o``.

The generator's internals are free to change: the harness drives ``i`` (BDs, free
each cycle, held while stalled, as the stream rule asks of the sender) and ``o.ready``
freely, and asserts that a stalled beat on ``o`` stays valid and unchanged.
"""

from __future__ import annotations

from amaranth.asserts import AnySeq
from amaranth.hdl import Assert, Assume, Cover, Module, ResetSignal, Signal
from amaranth.lib import wiring

from ...hdl.addrgen import BDAddressGenerator

__all__ = ["AddrgenFormal"]


class AddrgenFormal(wiring.Component):
    """Address generator with free BDs and ``o.ready``, and the stream-rule assertions.

    Parameters
    ----------
    kind : {"tile", "memtile", "shim"}
        The DMA kind of the generator under proof.
    """

    def __init__(self, kind: str) -> None:
        self.dut = BDAddressGenerator(kind)
        super().__init__({})

    def elaborate(self, platform: object) -> Module:
        m = Module()
        m.submodules.dut = dut = self.dut
        m.d.comb += [
            dut.i.valid.eq(AnySeq(1)),
            dut.i.payload.eq(AnySeq(len(dut.i.payload.as_value()))),
            dut.o.ready.eq(AnySeq(1)),
            Assume(~ResetSignal()),  # registers start at their init values
        ]
        past = Signal()
        in_stall = Signal()
        in_prev = Signal.like(dut.i.payload)
        out_stall = Signal()
        out_prev = Signal.like(dut.o.payload)
        m.d.sync += [
            past.eq(1),
            in_stall.eq(dut.i.valid & ~dut.i.ready),
            in_prev.eq(dut.i.payload),
            out_stall.eq(dut.o.valid & ~dut.o.ready),
            out_prev.eq(dut.o.payload),
        ]
        with m.If(past & in_stall):
            held = dut.i.payload.as_value() == in_prev.as_value()
            m.d.comb += Assume(dut.i.valid & held)
        with m.If(past & out_stall):
            m.d.comb += Assert(dut.o.valid)
            m.d.comb += Assert(dut.o.payload.as_value() == out_prev.as_value())
        m.d.comb += Cover(past & out_stall)
        m.d.comb += Cover(dut.o.valid & dut.o.ready & dut.o.payload.last)
        return m
