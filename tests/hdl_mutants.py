"""RTL made wrong on purpose, to show that the checks catch it."""

from amaranth.hdl import Module, Signal
from amaranth.lib import wiring

from aiedma.hdl.addrgen import BDAddressGenerator
from aiedma.hdl.lock_gate import LockGate
from aiedma.hdl.skid import SkidBuffer


class BubblyGate(LockGate):
    """Wrong on purpose: one empty cycle after every BD's last beat (a bubble at the chain)."""

    def elaborate(self, platform):
        m = super().elaborate(platform)
        after_last = Signal()
        m.d.sync += after_last.eq(self.i.valid & self.i.ready & self.i.payload.last)
        with m.If(after_last):
            m.d.comb += [self.o.valid.eq(0), self.i.ready.eq(0), self.lock_request.eq(0)]
        return m


class RegisteredSkid(SkidBuffer):
    """Wrong on purpose: every payload waits a cycle in the register (no pass-through when
    empty), so a beat reaches the gate a cycle late and the stream moves every other one."""

    def elaborate(self, platform):
        m = Module()
        full = Signal()
        held = Signal.like(self.i.payload)
        m.d.comb += [self.i.ready.eq(~full), self.o.valid.eq(full), self.o.payload.eq(held)]
        with m.If(self.i.valid & self.i.ready):
            m.d.sync += [full.eq(1), held.eq(self.i.payload)]
        with m.Elif(self.o.ready):
            m.d.sync += full.eq(0)
        return m


class _AddrgenWrapper(wiring.Component):
    """A :class:`BDAddressGenerator` behind its own ports, for a mutant to break one thing."""

    def __init__(self, kind: str) -> None:
        self.inner = BDAddressGenerator(kind)
        super().__init__(self.inner.signature)

    def elaborate(self, platform):
        m = Module()
        m.submodules.inner = inner = self.inner
        wiring.connect(m, wiring.flipped(self.i), inner.i)
        wiring.connect(m, inner.o, wiring.flipped(self.o))
        return m


class ShortWrap(_AddrgenWrapper):
    """Wrong on purpose: dimension 0 wraps one early (``d0_wrap - 1``) when it wraps at 3+."""

    def elaborate(self, platform):
        m = super().elaborate(platform)
        wrap = self.i.payload.d0_wrap
        with m.If(wrap >= 3):
            m.d.comb += self.inner.i.payload.d0_wrap.eq(wrap - 1)
        return m


class SkipsZero(_AddrgenWrapper):
    """Wrong on purpose: every second zero beat is consumed but never shown."""

    def elaborate(self, platform):
        m = super().elaborate(platform)
        odd = Signal()
        inner = self.inner
        with m.If(inner.o.valid & inner.o.payload.zero & inner.o.ready):
            m.d.sync += odd.eq(~odd)
        with m.If(inner.o.payload.zero & odd):
            m.d.comb += [self.o.valid.eq(0), inner.o.ready.eq(1)]
        return m


class BubbleAfterBD(_AddrgenWrapper):
    """Wrong on purpose: one empty cycle after every BD's last beat."""

    def elaborate(self, platform):
        m = super().elaborate(platform)
        inner = self.inner
        after_last = Signal()
        m.d.sync += after_last.eq(inner.o.valid & inner.o.ready & inner.o.payload.last)
        with m.If(after_last):
            m.d.comb += [self.o.valid.eq(0), inner.o.ready.eq(0)]
        return m
