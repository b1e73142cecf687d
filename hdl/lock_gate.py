"""The lock gate: a BD's first beat waits, between the address generator and the datapath,
until the BD holds its lock.

The rules are the contract's (:mod:`aiedma.model.cycle.contract`, "Channel"): ``first``
marks a BD's first beat; ``lock_request`` says that beat could move now (the datapath
could take it), and it moves in a cycle ``lock_grant`` (the BD holds its lock) is high;
every other beat passes untouched. With ``lock_grant`` held high (its reset value) the
gate is a wire.
"""

from __future__ import annotations

from amaranth.hdl import Module, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from .layouts import beat_layout, check_kind

__all__ = ["LockGate"]


class LockGate(wiring.Component):
    """Holds each BD's first beat until ``lock_grant``.

    Parameters
    ----------
    kind : {"tile", "memtile", "shim"}

    Attributes
    ----------
    i : In(stream.Signature(beat_layout(kind)))
        Beats from the address generator.
    o : Out(stream.Signature(beat_layout(kind)))
        Beats to the datapath; ``o.valid`` follows ``o.ready`` through the grant, so
        the datapath's ``beats.ready`` must not depend on ``beats.valid``.
    lock_request : Out(1)
        A BD's first beat is shown and the datapath is ready for it.
    lock_grant : In(1, init=1)
        The BD at the gate holds its lock (the channel's lock requester, from
        registers).
    cut : In(1)
        A beat passing now ends its BD whatever its ``last`` (finish on TLAST): the
        next beat is a BD's first.
    """

    def __init__(self, kind: str) -> None:
        self.kind = check_kind(kind)
        super().__init__({
            "i": In(stream.Signature(beat_layout(kind))),
            "o": Out(stream.Signature(beat_layout(kind))),
            "lock_request": Out(1),
            "lock_grant": In(1, init=1),
            "cut": In(1),
        })

    def elaborate(self, platform: object) -> Module:
        m = Module()
        first = Signal(init=1)
        passes = Signal()
        m.d.comb += [
            passes.eq(~first | self.lock_grant),
            self.lock_request.eq(self.i.valid & first & self.o.ready),
            self.o.valid.eq(self.i.valid & passes),
            self.o.payload.eq(self.i.payload),
            self.i.ready.eq(self.o.ready & passes),
        ]
        with m.If(self.i.valid & self.i.ready):
            m.d.sync += first.eq(self.i.payload.last | self.cut)
        return m
