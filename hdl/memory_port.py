"""A channel's memory port, as every block on the path from datapath to DMA shows it.

The datapath (:mod:`.mm2s`, :mod:`.s2mm`) drives it; the engine (:mod:`.engine`), the
channel (:mod:`.channel`) and the DMA (:mod:`.dma`) pass it out unchanged. Its members
are flat (``mem_addr``, ...) so each block's Verilog ports keep those names.
"""

from __future__ import annotations

from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ..model.cycle.contract import ADDRESS_BITS, DATA_BITS

__all__ = ["read_port_signature", "write_port_signature"]


def read_port_signature(kind: str) -> wiring.Signature:
    """An MM2S read port: ``mem_addr``, ``mem_en`` out; ``mem_data`` in, the word
    addressed in the previous cycle (BRAM-style, one cycle of read latency)."""
    return wiring.Signature({"mem_addr": Out(ADDRESS_BITS[kind]), "mem_en": Out(1),
                             "mem_data": In(DATA_BITS)})


def write_port_signature(kind: str) -> wiring.Signature:
    """An S2MM write port: ``mem_data`` is stored at ``mem_addr`` at the end of a cycle
    with ``mem_we`` high."""
    return wiring.Signature({"mem_addr": Out(ADDRESS_BITS[kind]), "mem_data": Out(DATA_BITS),
                             "mem_we": Out(1)})
