"""A channel's memory port, as every block on the path from datapath to DMA shows it.

The datapath (:mod:`.mm2s`, :mod:`.s2mm`, :mod:`.handshake`) drives it; the engine
(:mod:`.engine`), the channel (:mod:`.channel`) and the DMA (:mod:`.dma`) pass it out
unchanged. Its members are flat (``mem_addr``, ...) so each block's Verilog ports keep
those names.

Two kinds of port. The *fixed* port is a block RAM's: a read's word comes in the next
cycle and a write lands at the end of its cycle, always; the cycle contract is stated
for it. The *handshake* port (``handshake=True``) is for a memory that may wait: a bus
master (:class:`~.axi_master.AXI4Master`), a banked memory with arbitration. A request
is taken in a cycle its enable and ``mem_ready`` are both high; reads are answered in
request order, one ``mem_valid`` each, and cannot be refused (the datapath keeps room
for every read it asked); writes are acknowledged later, ``mem_acked`` of them in a
cycle, in request order; ``mem_error`` says a response carried a bus error.
"""

from __future__ import annotations

from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ..model.bd.fields import FIELD_INDEX
from ..model.cycle.contract import ADDRESS_BITS, DATA_BITS

__all__ = ["ACKED_BITS", "BURST_WORDS_MAX", "bus_attributes_signature", "read_port_signature",
           "write_port_signature"]

BURST_WORDS_MAX = 64
"""The longest burst a shim BD names (``burst_length`` 256 bytes), in words."""

ACKED_BITS = 9
"""Width of a handshake write port's ``mem_acked``: up to 256 writes acknowledged in a
cycle (an AXI4 burst's longest)."""


def read_port_signature(kind: str, handshake: bool = False) -> wiring.Signature:
    """An MM2S read port: ``mem_addr``, ``mem_en`` out; ``mem_data`` in, the word
    addressed in the previous cycle (BRAM-style, one cycle of read latency).

    With ``handshake``: ``mem_en`` offers a request, taken when ``mem_ready`` (in) is
    high too; ``mem_valid`` (in) marks a cycle whose ``mem_data`` answers the oldest
    request not answered yet, ``mem_error`` (in) with it a bus error."""
    members = {"mem_addr": Out(ADDRESS_BITS[kind]), "mem_en": Out(1),
               "mem_data": In(DATA_BITS)}
    if handshake:
        members |= {"mem_ready": In(1), "mem_valid": In(1), "mem_error": In(1)}
    return wiring.Signature(members)


def write_port_signature(kind: str, handshake: bool = False) -> wiring.Signature:
    """An S2MM write port: ``mem_data`` is stored at ``mem_addr`` at the end of a cycle
    with ``mem_we`` high.

    With ``handshake``: ``mem_we`` offers a write, taken when ``mem_ready`` (in) is high
    too; ``mem_acked`` (in) writes are acknowledged in a cycle, oldest first,
    ``mem_error`` (in) with them a bus error."""
    members = {"mem_addr": Out(ADDRESS_BITS[kind]), "mem_data": Out(DATA_BITS),
               "mem_we": Out(1)}
    if handshake:
        members |= {"mem_ready": In(1), "mem_acked": In(ACKED_BITS), "mem_error": In(1)}
    return wiring.Signature(members)


def bus_attributes_signature(kind: str) -> wiring.Signature | None:
    """What a kind's BD says of its bus accesses, beside a handshake port: ``mem_burst``
    (the BD's ``burst_length`` in words, the longest burst its accesses may form),
    ``mem_cache``, ``mem_prot``, ``mem_qos`` and ``mem_smid`` (AxCACHE; AxPROT,
    non-secure unless the BD's ``secure_access``; AxQOS; the BD's ``smid``, on AxUSER),
    all of the BD the request offered now belongs to.
    None for a kind whose BD has no such fields (only the shim's has)."""
    if "burst_length" not in FIELD_INDEX[kind]:
        return None
    smid = FIELD_INDEX[kind]["smid"].slices[0].width
    return wiring.Signature({"mem_burst": Out(range(BURST_WORDS_MAX + 1)), "mem_cache": Out(4),
                             "mem_prot": Out(3), "mem_qos": Out(4), "mem_smid": Out(smid)})
