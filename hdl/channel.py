"""Channel datapaths: the BD address generator joined to an MM2S or S2MM datapath.

These are the tops a testbench (or an FPGA design) drives with BDs: the address
beats never leave the block, the memory port does.
"""

from __future__ import annotations

from amaranth.hdl import Module
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from ..model.cycle.contract import ADDRESS_BITS, DATA_BITS
from .addrgen import BDAddressGenerator
from .layouts import bd_layout, check_kind, data_beat_layout
from .mm2s import MM2SDatapath
from .s2mm import S2MMDatapath

__all__ = ["MM2SChannel", "S2MMChannel"]


class MM2SChannel(wiring.Component):
    """BDs in, memory words (0 for padding) out: address generator -> MM2S datapath.

    Attributes
    ----------
    bd : In(stream.Signature(bd_layout(kind)))
        BDs (actual field values).
    o : Out(stream.Signature(data_beat_layout()))
        ``data`` and ``last`` (each BD's final word).
    mem_addr, mem_en : Out
        BRAM-style read port; ``mem_data`` (In) is the word one cycle later.
    """

    def __init__(self, kind: str) -> None:
        self.kind = check_kind(kind)
        super().__init__({
            "bd": In(stream.Signature(bd_layout(kind))),
            "o": Out(stream.Signature(data_beat_layout())),
            "mem_addr": Out(ADDRESS_BITS[kind]),
            "mem_en": Out(1),
            "mem_data": In(DATA_BITS),
        })

    def elaborate(self, platform: object) -> Module:
        m = Module()
        m.submodules.addrgen = addrgen = BDAddressGenerator(self.kind)
        m.submodules.datapath = datapath = MM2SDatapath(self.kind)
        wiring.connect(m, wiring.flipped(self.bd), addrgen.i)
        wiring.connect(m, addrgen.o, datapath.beats)
        wiring.connect(m, datapath.o, wiring.flipped(self.o))
        m.d.comb += [
            self.mem_addr.eq(datapath.mem_addr),
            self.mem_en.eq(datapath.mem_en),
            datapath.mem_data.eq(self.mem_data),
        ]
        return m


class S2MMChannel(wiring.Component):
    """BDs and stream words in, memory writes out: address generator -> S2MM datapath.

    Attributes
    ----------
    bd : In(stream.Signature(bd_layout(kind)))
    i : In(stream.Signature(data_beat_layout()))
    mem_addr, mem_data, mem_we : Out
        Write port (a word is stored at the end of a cycle with ``mem_we`` high).
    """

    def __init__(self, kind: str) -> None:
        self.kind = check_kind(kind)
        super().__init__({
            "bd": In(stream.Signature(bd_layout(kind))),
            "i": In(stream.Signature(data_beat_layout())),
            "mem_addr": Out(ADDRESS_BITS[kind]),
            "mem_data": Out(DATA_BITS),
            "mem_we": Out(1),
        })

    def elaborate(self, platform: object) -> Module:
        m = Module()
        m.submodules.addrgen = addrgen = BDAddressGenerator(self.kind)
        m.submodules.datapath = datapath = S2MMDatapath(self.kind)
        wiring.connect(m, wiring.flipped(self.bd), addrgen.i)
        wiring.connect(m, addrgen.o, datapath.beats)
        wiring.connect(m, wiring.flipped(self.i), datapath.i)
        m.d.comb += [
            self.mem_addr.eq(datapath.mem_addr),
            self.mem_data.eq(datapath.mem_data),
            self.mem_we.eq(datapath.mem_we),
        ]
        return m
