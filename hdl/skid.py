"""A one-payload skid buffer: a stream whose ``i.ready`` is a register.

Between a producer whose ``ready`` fans out widely (the address generator's prepare slots
and running slot) and a consumer whose ``ready`` is decided late in the cycle (the S2MM
lock gate, ready when a stream word arrives), it cuts the path from the one to the other:
the producer sees ``i.ready`` from one flip-flop. It adds no latency (an empty buffer
passes ``i`` straight to ``o``) and keeps one payload per cycle; when ``o`` stalls, the
payload on ``i`` in that cycle is taken and held, and ``i.ready`` drops from the next
cycle until it leaves. The rules, as the model steps them, are the contract's
(:mod:`aiedma.model.cycle.contract`, "Lock gate").
"""

from __future__ import annotations

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

__all__ = ["SkidBuffer"]


class SkidBuffer(wiring.Component):
    """Passes a stream through, holding one payload when ``o`` stalls.

    Parameters
    ----------
    layout : amaranth.lib.data.Layout
        The payload's layout.

    Attributes
    ----------
    i : In(stream.Signature(layout))
        ``i.ready`` is high exactly when nothing is held (a register).
    o : Out(stream.Signature(layout))
        The held payload first, else ``i``'s.
    """

    def __init__(self, layout: data.Layout) -> None:
        super().__init__({
            "i": In(stream.Signature(layout)),
            "o": Out(stream.Signature(layout)),
        })

    def elaborate(self, platform: object) -> Module:
        m = Module()
        full = Signal()
        held = Signal.like(self.i.payload)
        m.d.comb += [
            self.i.ready.eq(~full),
            self.o.valid.eq(full | self.i.valid),
            self.o.payload.eq(Mux(full, held, self.i.payload)),
        ]
        # Only ``full`` reads o.ready: the held payload loads whenever the buffer is
        # empty, from registers alone.
        m.d.sync += full.eq((full | self.i.valid) & ~self.o.ready)
        with m.If(~full):
            m.d.sync += held.eq(self.i.payload)
        return m
