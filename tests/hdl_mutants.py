"""RTL made wrong on purpose, to show that the checks catch it."""

from amaranth.hdl import Signal

from aiedma.hdl.lock_gate import LockGate


class BubblyGate(LockGate):
    """Wrong on purpose: one empty cycle after every BD's last beat (a bubble at the chain)."""

    def elaborate(self, platform):
        m = super().elaborate(platform)
        after_last = Signal()
        m.d.sync += after_last.eq(self.i.valid & self.i.ready & self.i.payload.last)
        with m.If(after_last):
            m.d.comb += [self.o.valid.eq(0), self.i.ready.eq(0), self.lock_request.eq(0)]
        return m
