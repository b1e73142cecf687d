"""The MM2S datapath: address beats in, memory words out, zero words without a read.

It sits between the address generator and the channel's output stream: it reads a
BRAM-style port with one cycle of read latency, sends 0 for padding beats without
enabling the read, and keeps one word per cycle under backpressure. The cycle
contract (ready rule, latency) is in :mod:`aiedma.model.cycle.contract`.

Why a two-word buffer and a ready that looks only at registers: a read issued in
cycle ``t`` returns in ``t + 1`` whatever ``o.ready`` does then, so the word in flight
and the one accepted in the same cycle as a stall both need a place. Counting them
(``buffered + in_flight <= 1`` to accept) keeps ``beats.ready`` free of any
combinational path from ``o.ready``, which keeps the ready chain of a whole channel
short, and still moves one word per cycle while ``o.ready`` is high.
"""

from __future__ import annotations

from amaranth.hdl import Module, Mux, Signal, unsigned
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from ..model.cycle.contract import MM2S_BUFFER_DEPTH
from .layouts import beat_layout, check_kind, data_beat_layout
from .memory_port import read_port_signature

__all__ = ["MM2SDatapath"]


class MM2SDatapath(wiring.Component):
    """Reads the words of address beats from a memory port (zero padding included).

    Parameters
    ----------
    kind : {"tile", "memtile", "shim"}
        The DMA kind; it fixes the address width.

    Attributes
    ----------
    beats : In(stream.Signature(beat_layout(kind)))
        Address beats from :class:`~aiedma.hdl.addrgen.BDAddressGenerator`.
    o : Out(stream.Signature(data_beat_layout()))
        Words in beat order: ``data`` (0 for a zero beat) and the beat's ``last``.
    mem_addr : Out(ADDRESS_BITS[kind])
        Read address (the beat's address).
    mem_en : Out(1)
        Read enable: high in the cycle a data beat is accepted.
    mem_data : In(32)
        Read data: the word addressed in the previous cycle, if ``mem_en`` was high.
    """

    def __init__(self, kind: str) -> None:
        self.kind = check_kind(kind)
        super().__init__({
            "beats": In(stream.Signature(beat_layout(kind))),
            "o": Out(stream.Signature(data_beat_layout())),
            **read_port_signature(kind).members,
        })

    def elaborate(self, platform: object) -> Module:
        m = Module()
        layout = data_beat_layout()

        # The beat accepted in the previous cycle: its word is on mem_data now.
        flight = Signal()
        flight_zero = Signal()
        flight_last = Signal()
        fresh = Signal(layout)
        m.d.comb += [
            fresh.data.eq(Mux(flight_zero, 0, self.mem_data)),
            fresh.last.eq(flight_last),
        ]

        # Words that came back but were not taken yet, oldest first.
        buffer = [Signal(layout, name=f"buffer{j}") for j in range(MM2S_BUFFER_DEPTH)]
        count = Signal(unsigned(MM2S_BUFFER_DEPTH.bit_length()))

        accept = Signal()
        m.d.comb += [
            self.beats.ready.eq(count + flight <= 1),
            accept.eq(self.beats.valid & self.beats.ready),
            self.mem_addr.eq(self.beats.payload.address),
            self.mem_en.eq(accept & ~self.beats.payload.zero),
        ]
        m.d.sync += [
            flight.eq(accept),
            flight_zero.eq(self.beats.payload.zero),
            flight_last.eq(self.beats.payload.last),
        ]

        take = Signal()
        m.d.comb += [
            self.o.valid.eq((count != 0) | flight),
            self.o.payload.eq(Mux(count != 0, buffer[0], fresh)),
            take.eq(self.o.valid & self.o.ready),
        ]

        # The queue [buffer..., fresh if in flight] loses its head when taken; what is
        # left (at most two words, by the ready rule) becomes the buffer.
        with m.Switch(count):
            with m.Case(0):
                with m.If(flight & ~take):
                    m.d.sync += [buffer[0].eq(fresh), count.eq(1)]
            with m.Case(1):
                with m.If(take & flight):
                    m.d.sync += buffer[0].eq(fresh)
                with m.Elif(take):
                    m.d.sync += count.eq(0)
                with m.Elif(flight):
                    m.d.sync += [buffer[1].eq(fresh), count.eq(2)]
            with m.Case(2):
                # Nothing is in flight here: the ready rule refused the beat.
                with m.If(take):
                    m.d.sync += [buffer[0].eq(buffer[1]), count.eq(1)]
        return m
