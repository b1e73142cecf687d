"""The S2MM datapath: stream words and address beats in, memory writes out.

A word and its address beat are taken together (a join) and written one cycle later
from registers, so the write port never sees the input streams' combinational
paths. The cycle contract and the decisions (zero beats, ``last``) are in
:mod:`aiedma.model.cycle.contract`.
"""

from __future__ import annotations

from amaranth.hdl import Module, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In

from .layouts import beat_layout, check_kind, data_beat_layout
from .memory_port import write_port_signature

__all__ = ["S2MMDatapath"]


class S2MMDatapath(wiring.Component):
    """Writes each stream word at the address of its beat, one word per cycle.

    Parameters
    ----------
    kind : {"tile", "memtile", "shim"}
        The DMA kind; it fixes the address width.

    Attributes
    ----------
    i : In(stream.Signature(data_beat_layout()))
        Stream words; ``last`` is not used here (the engine's address generator ends
        the BD on it, finish on TLAST).
    beats : In(stream.Signature(beat_layout(kind)))
        Address beats from :class:`~aiedma.hdl.addrgen.BDAddressGenerator`; a zero beat
        takes its word and writes nothing.
    mem_addr, mem_data, mem_we : Out
        Write port: the word ``mem_data`` is stored at ``mem_addr`` at the end of a
        cycle with ``mem_we`` high.
    """

    def __init__(self, kind: str) -> None:
        self.kind = check_kind(kind)
        super().__init__({
            "i": In(stream.Signature(data_beat_layout())),
            "beats": In(stream.Signature(beat_layout(kind))),
            **write_port_signature(kind).members,
        })

    def elaborate(self, platform: object) -> Module:
        m = Module()
        join = Signal()
        m.d.comb += [
            # Ready follows the other side's valid (never the own valid): a join.
            self.i.ready.eq(self.beats.valid),
            self.beats.ready.eq(self.i.valid),
            join.eq(self.i.valid & self.beats.valid),
        ]
        m.d.sync += [
            self.mem_we.eq(join & ~self.beats.payload.zero),
            self.mem_addr.eq(self.beats.payload.address),
            self.mem_data.eq(self.i.payload.data),
        ]
        return m
