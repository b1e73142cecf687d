"""The host's register port, as every block that decodes register writes takes it.

One port reaches a tile's DMA (:class:`~.dma.DMA`) and goes on, unchanged, to its BD
table (:class:`~.bd_table.BDTable`) and its channels (:class:`~.channel.Channel`),
which each decode the addresses they own. Its members are flat (``reg_addr``, ...)
so a block's Verilog ports keep those names.
"""

from __future__ import annotations

from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

__all__ = ["REGISTER_ADDRESS_BITS", "drive_register_port", "register_port_signature"]

REGISTER_ADDRESS_BITS = 20
"""Width of a tile-local register byte address (the memory tile's BDs start at 0xA0000)."""


def register_port_signature(*, readable: bool = True, strobes: bool = False
                            ) -> wiring.Signature:
    """The register port, seen from the block that serves it.

    Parameters
    ----------
    readable : bool
        With the read half: ``reg_read`` in, ``reg_rdata`` out (the word the previous
        cycle read). A block that is only written (a channel) leaves it out.
    strobes : bool
        With ``reg_wstrb`` in, which bytes a write stores (a memory's port,
        :mod:`.tile_memory`; registers take whole words only).

    Returns
    -------
    wiring.Signature
        ``reg_addr`` (byte address), ``reg_write``, ``reg_wdata`` (a write takes effect
        at the end of its cycle), and with ``readable`` ``reg_read`` / ``reg_rdata``.
        Components merge its members into their own (``**sig.members``).
    """
    members = {"reg_addr": In(REGISTER_ADDRESS_BITS), "reg_write": In(1), "reg_wdata": In(32)}
    if readable:
        members |= {"reg_read": In(1), "reg_rdata": Out(32)}
    if strobes:
        members |= {"reg_wstrb": In(4)}
    return wiring.Signature(members)


def drive_register_port(m: Module, source: wiring.Component, sink: wiring.Component) -> None:
    """Drive ``sink``'s register-port inputs from ``source``'s.

    An input ``source`` lacks (``reg_read`` of a block that is only written) stays at its
    reset value, 0; ``reg_rdata`` is left to the caller, who may merge several words.
    """
    for name, member in sink.signature.members.items():
        if name.startswith("reg_") and member.flow is In and name in source.signature.members:
            m.d.comb += getattr(sink, name).eq(getattr(source, name))
