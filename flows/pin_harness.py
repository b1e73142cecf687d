"""A two-pin wrapper that lets any top be placed and routed on a small-package FPGA.

The address generators take BDs of 113 to 199 bits: more than the I/O pins of the
packages ``make fpga`` targets. Measuring a block's area and register-to-register
Fmax needs every one of its ports alive (a port tied to a constant would let
synthesis delete the logic behind it) but no port on a pin. :class:`PinHarness`
does that with two pins:

* every input bit of the block is one flip-flop of a shift chain fed from ``sin``,
  so each input comes from a register whose value synthesis cannot predict;
* every output bit is folded into a signature register ``sig[i] <= sig[i - 1] ^ out[i]``
  (a rotating XOR chain) whose last bit drives ``sout``, so every output is observed
  through one 2-input XOR and one flip-flop.

Both wrappers add one logic level at most between a flip-flop and the block, so the
block's own paths stay the critical ones, and the block's I/O paths become
register-to-register paths, as they are inside a real system. The wrapper's
flip-flops count in the FF column (one per port bit); the reports say so.

A block with its own clock input (``aclk``, as the AXI tops have: they define their
clock domain from it) gets the harness's clock on it, not a bit of the chain.
"""

from __future__ import annotations

from amaranth.hdl import Cat, ClockSignal, Module, Signal, Value
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

__all__ = ["CLOCK_PORT", "PinHarness", "port_bits"]

CLOCK_PORT = "aclk"
"""A block's clock input, if it has one: driven by the harness's clock."""


def port_bits(component: wiring.Component) -> tuple[int, int]:
    """The number of input and output bits of ``component`` (``clk`` and ``rst`` aside)."""
    ins, outs = _ports(component)
    return sum(len(v) for v in ins), sum(len(v) for v in outs)


def _ports(component: wiring.Component) -> tuple[list[Value], list[Value]]:
    """The block's input and output values, its clock input (:data:`CLOCK_PORT`) aside."""
    ins: list[Value] = []
    outs: list[Value] = []
    for path, member, value in component.signature.flatten(component):
        if path != (CLOCK_PORT,):
            (ins if member.flow is In else outs).append(Value.cast(value))
    return ins, outs


class PinHarness(wiring.Component):
    """Wraps ``block`` so that all its ports hang off two pins through registers.

    Parameters
    ----------
    block : wiring.Component
        The top to measure (any signature of ports and sub-signatures).

    Attributes
    ----------
    sin : In(1)
        Serial input of the shift chain that drives every input bit of ``block``.
    sout : Out(1)
        The last bit of the XOR signature of every output bit of ``block``.
    """

    def __init__(self, block: wiring.Component) -> None:
        if not port_bits(block)[1]:
            # Synthesis would delete a block nobody can observe: nothing to measure.
            raise ValueError(f"{type(block).__name__} has no output ports to observe")
        super().__init__({"sin": In(1), "sout": Out(1)})
        self.block = block

    def elaborate(self, platform: object) -> Module:
        m = Module()
        m.submodules.block = self.block
        ins, outs = _ports(self.block)
        if CLOCK_PORT in self.block.signature.members:
            m.d.comb += getattr(self.block, CLOCK_PORT).eq(ClockSignal("sync"))

        chain = Signal(max(1, sum(len(v) for v in ins)))
        m.d.sync += chain.eq(Cat(self.sin, chain[:-1]))
        offset = 0
        for value in ins:
            m.d.comb += value.eq(chain[offset:offset + len(value)])
            offset += len(value)

        observed = Cat(*outs)
        signature = Signal(len(observed))
        # Rotate by one and XOR: each bit depends on one output bit and one register.
        m.d.sync += signature.eq(Cat(signature[-1], signature[:-1]) ^ observed)
        m.d.comb += self.sout.eq(signature[-1])
        return m
