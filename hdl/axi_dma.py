"""A tile's DMA behind an AXI4-Lite slave, its channel streams named as AXI4-Stream.

:class:`AXIDMA` is the :class:`~.dma.DMA` of one kind with the host's register port
replaced by :class:`~.axi_lite.AXILiteSlave` (``s_axil_*``), and each channel's stream
under AXI4-Stream names: MM2S channel ``n`` is ``m_axis_mm2s<n>_tdata``, ``_tvalid``,
``_tready``, ``_tlast``, S2MM channel ``n`` is ``s_axis_s2mm<n>_...``. It is exported as
``aiedma_axi_dma_<kind>``.

What stays as the DMA's own ports, for now: each channel's memory port
(``mm2s<n>_mem_addr``, ``mm2s<n>_mem_en``, ``mm2s<n>_mem_data``; ``s2mm<n>_mem_addr``,
``s2mm<n>_mem_data``, ``s2mm<n>_mem_we``, :mod:`.memory_port`) and completion token
(``mm2s<n>_token``, with the controller ID it carries on ``mm2s<n>_token_controller``),
``pause``, ``busy`` and ``error``, and the memory tile's
neighbour lock ports. The memories inside the block (core and memory tile) and the
shim's AXI4 master towards external memory are later work (docs/axi.md). Clock and
reset are AXI's ``aclk`` and ``aresetn`` (synchronous, active low), the names Vivado's IP
integrator takes for an interface's clock and reset: the block's ``aclk`` domain is
defined here and driven by them, so the Verilog has no other clock or reset port.
"""

from __future__ import annotations

from amaranth.hdl import ClockDomain, DomainRenamer, Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ..model.arch.kinds import DEFAULT_ROW, DMA_KINDS, check_allowed
from ..model.arch.register_map import register_span
from ..model.arch.registers import CONTROL_FIELDS
from ..model.bd.fields import FIELD_INDEX
from ..model.bd.packet import check_place
from ..model.cycle.contract import ADDRESS_BITS, DATA_BITS
from .axi_lite import AXILiteSlave, axi_lite_signature
from .dma import DMA
from .layouts import check_kind
from .lock_unit import lock_port_signature

__all__ = ["AXIDMA"]


def _controller_bits(kind: str, direction: str) -> int:
    """Width of the controller ID a channel's completion tokens carry."""
    return CONTROL_FIELDS[kind, direction]["controller_id"][1]


def _stream_ports(prefix: str, flow: type) -> dict[str, wiring.Member]:
    """AXI4-Stream ports named ``<prefix>_t*``; ``flow`` is the data's direction."""
    back = In if flow is Out else Out
    return {f"{prefix}_tdata": flow(DATA_BITS), f"{prefix}_tvalid": flow(1),
            f"{prefix}_tlast": flow(1), f"{prefix}_tready": back(1)}


class AXIDMA(wiring.Component):
    """One tile's DMA with an AXI4-Lite register slave and AXI4-Stream channel names.

    Parameters
    ----------
    kind : {"tile", "memtile", "shim"}
    address_bits : int, optional
        Width of the AXI4-Lite addresses; default: what the kind's registers need.
    column, row : int, optional
        Where the tile sits in the array, which its packet headers carry (default:
        column 0 and the first row of the kind, ``DEFAULT_ROW``).
    compression : bool
        False: the DMA built without its (de)compressors (:class:`~.dma.DMA`'s option).
    allowed : (int, int), optional
        Window protection, :class:`~.dma.DMA`'s ``allowed``: ``(start, words)``, the only
        word addresses the channels' memory ports may reach (docs/axi.md).

    Attributes
    ----------
    aclk, aresetn : In(1)
        The clock and the synchronous, active-low reset of every register inside.
    s_axil_* : the AXI4-Lite slave (:func:`~.axi_lite.axi_lite_signature`).
    m_axis_mm2s<n>_*, s_axis_s2mm<n>_* : each channel's stream.
    mm2s<n>_*, s2mm<n>_* : each channel's memory port and token (see the module).
    pause, busy, error : as :class:`~.dma.DMA`'s.
    neighbour_acquire, neighbour_release : memory tile only, as :class:`~.dma.DMA`'s.
    """

    def __init__(self, kind: str, address_bits: int | None = None, *, column: int = 0,
                 row: int | None = None, compression: bool = True,
                 allowed: tuple[int, int] | None = None) -> None:
        self.kind = check_kind(kind)
        self.compression = compression
        self.allowed = check_allowed(kind, allowed)
        self.column, self.row = column, DEFAULT_ROW[kind] if row is None else row
        check_place(self.column, self.row, ValueError)
        self.address_bits = address_bits or register_span(kind)
        dma = DMA_KINDS[kind]
        width = ADDRESS_BITS[kind]
        ports = {"aclk": In(1), "aresetn": In(1),
                 **axi_lite_signature(self.address_bits).members}
        for n in range(dma.channels):
            ports |= _stream_ports(f"m_axis_mm2s{n}", Out)
            ports |= {f"mm2s{n}_mem_addr": Out(width), f"mm2s{n}_mem_en": Out(1),
                      f"mm2s{n}_mem_data": In(DATA_BITS), f"mm2s{n}_token": Out(1),
                      f"mm2s{n}_token_controller": Out(_controller_bits(kind, "mm2s"))}
        for n in range(dma.channels):
            ports |= _stream_ports(f"s_axis_s2mm{n}", In)
            ports |= {f"s2mm{n}_mem_addr": Out(width), f"s2mm{n}_mem_data": Out(DATA_BITS),
                      f"s2mm{n}_mem_we": Out(1), f"s2mm{n}_token": Out(1),
                      f"s2mm{n}_token_controller": Out(_controller_bits(kind, "s2mm"))}
        ports |= {"pause": In(1), "busy": Out(1), "error": Out(1)}
        if len(dma.windows) > 1:
            lock_ids = 2 * dma.channels
            signature = lock_port_signature(FIELD_INDEX[kind]["lock_acq_id"].maximum + 1)
            ports |= {"neighbour_acquire": Out(signature).array(lock_ids),
                      "neighbour_release": Out(signature).array(lock_ids)}
        super().__init__(ports)

    def elaborate(self, platform: object) -> Module:
        m = Module()
        # The parts' ``sync`` is this block's own domain, local and named apart, so it
        # neither becomes nor meets the ``sync`` of whatever instantiates the block (a
        # design's own, a harness's).
        m.domains.aclk = domain = ClockDomain("aclk", local=True)
        m.d.comb += [domain.clk.eq(self.aclk), domain.rst.eq(~self.aresetn)]
        slave = AXILiteSlave(self.kind, self.address_bits)
        dma = DMA(self.kind, self.column, self.row, compression=self.compression,
                  allowed=self.allowed)
        m.submodules.registers = DomainRenamer("aclk")(slave)
        m.submodules.dma = DomainRenamer("aclk")(dma)
        for name, member in slave.signature.members.items():
            ours = getattr(self, name) if name.startswith("s_axil_") else getattr(dma, name)
            if member.flow is In:
                m.d.comb += getattr(slave, name).eq(ours)
            else:
                m.d.comb += ours.eq(getattr(slave, name))
        for n, channel in enumerate(dma.mm2s):
            prefix = f"m_axis_mm2s{n}"
            m.d.comb += [
                getattr(self, f"{prefix}_tdata").eq(channel.o.payload.data),
                getattr(self, f"{prefix}_tlast").eq(channel.o.payload.last),
                getattr(self, f"{prefix}_tvalid").eq(channel.o.valid),
                channel.o.ready.eq(getattr(self, f"{prefix}_tready")),
                getattr(self, f"mm2s{n}_mem_addr").eq(channel.mem_addr),
                getattr(self, f"mm2s{n}_mem_en").eq(channel.mem_en),
                channel.mem_data.eq(getattr(self, f"mm2s{n}_mem_data")),
                getattr(self, f"mm2s{n}_token").eq(channel.token),
                getattr(self, f"mm2s{n}_token_controller").eq(channel.token_controller),
            ]
        for n, channel in enumerate(dma.s2mm):
            prefix = f"s_axis_s2mm{n}"
            m.d.comb += [
                channel.i.payload.data.eq(getattr(self, f"{prefix}_tdata")),
                channel.i.payload.last.eq(getattr(self, f"{prefix}_tlast")),
                channel.i.valid.eq(getattr(self, f"{prefix}_tvalid")),
                getattr(self, f"{prefix}_tready").eq(channel.i.ready),
                getattr(self, f"s2mm{n}_mem_addr").eq(channel.mem_addr),
                getattr(self, f"s2mm{n}_mem_data").eq(channel.mem_data),
                getattr(self, f"s2mm{n}_mem_we").eq(channel.mem_we),
                getattr(self, f"s2mm{n}_token").eq(channel.token),
                getattr(self, f"s2mm{n}_token_controller").eq(channel.token_controller),
            ]
        m.d.comb += [dma.pause.eq(self.pause), self.busy.eq(dma.busy),
                     self.error.eq(dma.error)]
        if hasattr(dma, "neighbour_acquire"):
            for ours, theirs in ((self.neighbour_acquire, dma.neighbour_acquire),
                                 (self.neighbour_release, dma.neighbour_release)):
                for outer, inner in zip(ours, theirs, strict=True):
                    wiring.connect(m, wiring.flipped(outer), inner)
        return m
