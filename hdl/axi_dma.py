"""A tile's DMA behind an AXI4-Lite slave, its channel streams named as AXI4-Stream.

:class:`AXIDMA` is the :class:`~.dma.DMA` of one kind with the host's register port
replaced by :class:`~.axi_lite.AXILiteSlave` (``s_axil_*``), and each channel's stream
under AXI4-Stream names: MM2S channel ``n`` is ``m_axis_mm2s<n>_tdata``, ``_tvalid``,
``_tready``, ``_tlast``, S2MM channel ``n`` is ``s_axis_s2mm<n>_...``. It is exported as
``aiedma_axi_dma_<kind>``.

The shim reaches its external memory as the hardware's does, through one AXI4 master
(``m_axi_*``, :class:`~.axi_master.AXI4Master`): its DMA is built on the handshake
memory port (``outstanding`` accesses in flight a channel, :mod:`.handshake`), so its
channels wait for the bus. The core tile and the memory tile keep each channel's memory
port as the DMA's own (``mm2s<n>_mem_addr``, ``mm2s<n>_mem_en``, ``mm2s<n>_mem_data``;
``s2mm<n>_mem_addr``, ``s2mm<n>_mem_data``, ``s2mm<n>_mem_we``, :mod:`.memory_port`:
a block RAM's, the cycle contract's), or, built with ``memory=True`` (exported as
``aiedma_axi_dma_<kind>_mem``), hold their memory inside: a
:class:`~.tile_memory.TileMemory` of the window the DMA may reach, on the channels'
handshake ports, which a host loads and reads through a second AXI4-Lite slave
(``s_axil_mem_*``, byte addresses within the window). Every kind has each channel's
completion token (``mm2s<n>_token``, with the controller ID it carries on
``mm2s<n>_token_controller``), ``pause``, ``busy`` and ``error``, and the memory tile
its neighbour lock ports. Clock and
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
from ..model.errors import AiedmaError
from .axi_lite import AXILiteSlave, axi_lite_signature
from .axi_master import AXI4Master
from .dma import DMA
from .layouts import check_kind
from .lock_unit import lock_port_signature
from .tile_memory import TileMemory, check_memory

__all__ = ["AXIDMA", "MASTER_KINDS", "MASTER_OUTSTANDING", "MEMORY_BANKS", "MEMORY_OUTSTANDING",
           "MEMORY_WORDS"]

MASTER_KINDS = ("shim",)
"""Kinds whose AXI top reaches memory through an AXI4 master (the rest keep a block
RAM's memory port per channel, and the cycle contract's cycles)."""

MASTER_OUTSTANDING = 96
"""Accesses a shim channel keeps in flight on its AXI4 master: a read word waits for its
burst to fill, go out and come back, so one word a cycle needs the burst's words (up to
64, a BD's longest ``burst_length``) + the memory's latency + about 4 in flight: a
memory 28 cycles away at the longest bursts."""


MEMORY_WORDS = {"tile": 16384, "memtile": 16384}
"""Words of the memory inside a top built with ``memory=True`` and no ``allowed``: the
core tile's whole 64 KB, and 64 KB of the memory tile's own 512 KB (all of it is 256
ECP5 block RAMs, more than the largest ECP5 has); the window starts at the kind's own
memory."""

MEMORY_BANKS = {"tile": 8, "memtile": 16}
"""Banks of that memory by default: the AIE-ML's own (AM020)."""

MEMORY_OUTSTANDING = 8
"""Accesses a channel keeps in flight on the memory inside: a request is queued, served
the next cycle at the earliest and answered the cycle after, so three keep a word a
cycle; the rest ride out a few cycles of meeting other channels in a bank."""


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
    max_burst : int
        Shim only: the longest AXI4 burst in words (:class:`~.axi_master.AXI4Master`);
        each BD's ``burst_length`` (64, 128 or 256 bytes) bounds its own bursts within
        it. Default 64 (256 bytes, the longest a BD names).
    memory : bool
        Core and memory tile only: the memory inside (:class:`~.tile_memory.TileMemory`),
        the words of ``allowed`` (default: ``MEMORY_WORDS`` from the kind's own memory),
        behind a second AXI4-Lite slave ``s_axil_mem_*``.
    memory_banks : int, optional
        The memory's banks (default ``MEMORY_BANKS``).

    Attributes
    ----------
    aclk, aresetn : In(1)
        The clock and the synchronous, active-low reset of every register inside.
    s_axil_* : the AXI4-Lite slave (:func:`~.axi_lite.axi_lite_signature`).
    m_axis_mm2s<n>_*, s_axis_s2mm<n>_* : each channel's stream.
    mm2s<n>_*, s2mm<n>_* : each channel's memory port (core and memory tile, unless
        ``memory``) and token.
    m_axi_* : shim only, the AXI4 master (:class:`~.axi_master.AXI4Master`).
    s_axil_mem_* : with ``memory``, the memory's AXI4-Lite slave.
    pause, busy, error : as :class:`~.dma.DMA`'s.
    neighbour_acquire, neighbour_release : memory tile only, as :class:`~.dma.DMA`'s.
    """

    def __init__(self, kind: str, address_bits: int | None = None, *, column: int = 0,
                 row: int | None = None, compression: bool = True,
                 allowed: tuple[int, int] | None = None, max_burst: int = 64,
                 memory: bool = False, memory_banks: int | None = None) -> None:
        self.kind = check_kind(kind)
        self.compression = compression
        self.memory = memory
        if memory:
            if kind in MASTER_KINDS:
                raise AiedmaError(f"memory=True: the {kind} reaches its memory through its "
                                  f"AXI4 master; only {sorted(MEMORY_WORDS)} hold one inside")
            if allowed is None:
                allowed = (DMA_KINDS[kind].memory_window("own").start, MEMORY_WORDS[kind])
        self.allowed = check_allowed(kind, allowed)
        if memory:
            self.memory_banks = check_memory(self.allowed.words,
                                             memory_banks or MEMORY_BANKS[kind])[1]
        self.column, self.row = column, DEFAULT_ROW[kind] if row is None else row
        check_place(self.column, self.row, ValueError)
        self.address_bits = address_bits or register_span(kind)
        dma = DMA_KINDS[kind]
        width = ADDRESS_BITS[kind]
        self.master = None
        if kind in MASTER_KINDS:
            self.master = AXI4Master(dma.channels, dma.channels, max_burst=max_burst)
        ports = {"aclk": In(1), "aresetn": In(1),
                 **axi_lite_signature(self.address_bits).members}
        memory_ports = self.master is None and not memory
        if memory:
            words = self.allowed.words
            ports |= axi_lite_signature((4 * words - 1).bit_length(), "s_axil_mem").members
        for n in range(dma.channels):
            ports |= _stream_ports(f"m_axis_mm2s{n}", Out)
            if memory_ports:
                ports |= {f"mm2s{n}_mem_addr": Out(width), f"mm2s{n}_mem_en": Out(1),
                          f"mm2s{n}_mem_data": In(DATA_BITS)}
            ports |= {f"mm2s{n}_token": Out(1),
                      f"mm2s{n}_token_controller": Out(_controller_bits(kind, "mm2s"))}
        for n in range(dma.channels):
            ports |= _stream_ports(f"s_axis_s2mm{n}", In)
            if memory_ports:
                ports |= {f"s2mm{n}_mem_addr": Out(width), f"s2mm{n}_mem_data": Out(DATA_BITS),
                          f"s2mm{n}_mem_we": Out(1)}
            ports |= {f"s2mm{n}_token": Out(1),
                      f"s2mm{n}_token_controller": Out(_controller_bits(kind, "s2mm"))}
        if self.master is not None:
            ports |= {name: member for name, member in self.master.signature.members.items()
                      if name.startswith("m_axi_")}
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
        outstanding = MASTER_OUTSTANDING if self.master is not None else (
            MEMORY_OUTSTANDING if self.memory else None)
        dma = DMA(self.kind, self.column, self.row, compression=self.compression,
                  allowed=self.allowed, outstanding=outstanding)
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
                getattr(self, f"s2mm{n}_token").eq(channel.token),
                getattr(self, f"s2mm{n}_token_controller").eq(channel.token_controller),
            ]
        if self.master is not None:
            self._master(m, dma)
        elif self.memory:
            self._memory_inside(m, dma)
        else:
            self._memory_ports(m, dma)
        m.d.comb += [dma.pause.eq(self.pause), self.busy.eq(dma.busy),
                     self.error.eq(dma.error)]
        if hasattr(dma, "neighbour_acquire"):
            for ours, theirs in ((self.neighbour_acquire, dma.neighbour_acquire),
                                 (self.neighbour_release, dma.neighbour_release)):
                for outer, inner in zip(ours, theirs, strict=True):
                    wiring.connect(m, wiring.flipped(outer), inner)
        return m

    def _memory_ports(self, m: Module, dma: DMA) -> None:
        """Each channel's fixed memory port, out under its own names."""
        for direction in ("mm2s", "s2mm"):
            for n, channel in enumerate(getattr(dma, direction)):
                for name, member in channel.signature.members.items():
                    if not name.startswith("mem_"):
                        continue
                    ours = getattr(self, f"{direction}{n}_{name}")
                    theirs = getattr(channel, name)
                    m.d.comb += ours.eq(theirs) if member.flow is Out else theirs.eq(ours)

    def _memory_inside(self, m: Module, dma: DMA) -> None:
        """The memory inside: the channels' handshake ports, and the host's AXI4-Lite
        slave on its host port."""
        words = self.allowed.words
        memory = TileMemory(self.kind, words, self.memory_banks, len(dma.mm2s), len(dma.s2mm))
        host = AXILiteSlave(self.kind, (4 * words - 1).bit_length(), prefix="s_axil_mem",
                            words=words)
        m.submodules.memory = DomainRenamer("aclk")(memory)
        m.submodules.memory_slave = DomainRenamer("aclk")(host)
        for name, member in host.signature.members.items():
            outside = name.startswith("s_axil_mem_")
            theirs, ours = getattr(self if outside else memory, name), getattr(host, name)
            m.d.comb += ours.eq(theirs) if member.flow is In else theirs.eq(ours)
        for ports, channels in ((memory.read, dma.mm2s), (memory.write, dma.s2mm)):
            for port, channel in zip(ports, channels, strict=True):
                for name, member in port.signature.members.items():
                    ours, theirs = getattr(port, name), getattr(channel, name)
                    m.d.comb += ours.eq(theirs) if member.flow is In else theirs.eq(ours)

    def _master(self, m: Module, dma: DMA) -> None:
        """The shim's channels on the AXI4 master: MM2S ``n`` is read client ``n``,
        S2MM ``n`` write client ``n``."""
        master = self.master
        m.submodules.master = DomainRenamer("aclk")(master)
        for name, member in master.signature.members.items():
            if name.startswith("m_axi_"):
                ours, theirs = getattr(self, name), getattr(master, name)
                m.d.comb += ours.eq(theirs) if member.flow is Out else theirs.eq(ours)
        # A client's ``<field>`` is its channel's ``mem_<field>`` (a write's ``en`` its
        # ``mem_we``); the master's flow says which side drives it.
        for prefix, channels in (("rd", dma.mm2s), ("wr", dma.s2mm)):
            for n, channel in enumerate(channels):
                for name, member in master.signature.members.items():
                    field = name.removeprefix(f"{prefix}{n}_")
                    if field == name:
                        continue
                    port = "mem_we" if (prefix, field) == ("wr", "en") else f"mem_{field}"
                    ours, theirs = getattr(master, name), getattr(channel, port)
                    m.d.comb += ours.eq(theirs) if member.flow is In else theirs.eq(ours)
