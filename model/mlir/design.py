"""What a read mlir-aie file holds: tiles, buffers, locks, BDs, chains, runtime steps.

Every object keeps the line and column of the text it came from, so a diagnostic about
it points into the user's file. BDs are the project's own
:class:`~aiedma.model.bd.descriptor.BufferDescriptor`; a BD whose values break a
register rule keeps its fields and its problems instead (:attr:`DesignBD.bd` is None).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..arch.dtypes import WORD_BITS
from ..bd.descriptor import BufferDescriptor
from ..errors import AiedmaError, BDError
from .core import CoreProgram

__all__ = [
    "Buffer",
    "Chain",
    "DesignBD",
    "Flow",
    "HostBuffer",
    "HostWrite",
    "Lock",
    "MlirDesign",
    "MlirError",
    "MlirWarning",
    "PacketFlow",
    "RuntimeStep",
    "Tile",
    "element_bits",
]


class MlirError(AiedmaError):
    """An mlir-aie file that cannot be used at all (no device, nothing to show)."""


_INTEGER = re.compile(r"[su]?i(\d+)")
_FLOAT_BITS = {"bf16": 16, "f16": 16, "f32": 32, "f64": 64, "index": 64}


def element_bits(element: str) -> int:
    """Bits of an MLIR element type: ``i8`` 8, ``bf16`` 16, ``f32`` 32.

    Raises
    ------
    MlirError
        For a type the DMA cannot move (not 4, 8, 16, 32 or 64 bits).
    """
    match = _INTEGER.fullmatch(element)
    bits = int(match.group(1)) if match else _FLOAT_BITS.get(element)
    if bits not in (4, 8, 16, 32, 64):
        raise MlirError(f"element type {element!r}: the DMA moves 4-, 8-, 16-, 32- and "
                        "64-bit elements")
    return bits


def adf_dtype(bits: int) -> str:
    """The adf type name of an integer element of ``bits`` (how streams are shown)."""
    return f"int{bits}"


@dataclass(frozen=True)
class MlirWarning:
    """A construct that was not read, or was read with a caveat, at its line and column."""

    line: int
    column: int
    message: str

    def __str__(self) -> str:
        return f"{self.line}:{self.column}: {self.message}"


@dataclass(frozen=True)
class Tile:
    """``aie.tile(column, row)`` and its DMA kind (``"shim"``, ``"memtile"``, ``"tile"``)."""

    column: int
    row: int
    kind: str

    def __str__(self) -> str:
        return f"tile({self.column},{self.row})"


@dataclass(frozen=True)
class HostWrite:
    """A runtime sequence's ``write32`` / ``maskwrite32`` to a lock's value register or
    a word of a tile's data memory (the bits of ``mask`` change, the rest keep).

    Attributes
    ----------
    tile : Tile
    address : int
        Tile-local byte address.
    value, mask : int
    line, column : int
    lock : int or None
        The lock whose value register ``address`` is (None: a data memory word).
    """

    tile: Tile
    address: int
    value: int
    mask: int
    line: int
    column: int
    lock: int | None = None


@dataclass(frozen=True)
class Buffer:
    """``aie.buffer``: where it is and what it holds.

    Attributes
    ----------
    name : str
    tile : Tile
    address : int
        Byte address in its tile's memory (given, or laid out by the reader).
    element : str
        MLIR element type (``i32``).
    shape : tuple of int
    line, column : int
    address_given : bool
        False when the reader laid it out (no ``address`` attribute).
    initial : tuple of int
        The elements of its ``= dense<...>`` initial value (empty: none given).
    """

    name: str
    tile: Tile
    address: int
    element: str
    shape: tuple[int, ...]
    line: int
    column: int
    address_given: bool = True
    initial: tuple[int, ...] = ()

    @property
    def bits(self) -> int:
        return element_bits(self.element)

    @property
    def elements(self) -> int:
        count = 1
        for size in self.shape:
            count *= size
        return count

    @property
    def bytes(self) -> int:
        return self.elements * self.bits // 8


@dataclass(frozen=True)
class HostBuffer:
    """An argument of the runtime sequence: a buffer in the host's memory."""

    index: int
    name: str
    element: str
    shape: tuple[int, ...]

    @property
    def bits(self) -> int:
        return element_bits(self.element)


@dataclass(frozen=True)
class Lock:
    """``aie.lock(tile, id) {init = v}``."""

    name: str
    tile: Tile
    id: int
    init: int
    line: int
    column: int


@dataclass
class DesignBD:
    """One BD of the design, as written and as the hardware would hold it.

    Attributes
    ----------
    tile : Tile
    bd_id : int
    fields : dict of str to int
        The actual values the notation gives (what :attr:`bd` was built from).
    bd : BufferDescriptor or None
        None when the fields break a register rule (see :attr:`problems`).
    problems : list of BDError
        Every broken rule, each naming its field.
    origin : str
        The operation it came from (``aie.dma_bd``, ``aiex.npu.writebd``, ...).
    line, column : int
    buffer : Buffer, HostBuffer or None
        What ``base_address`` points into (None: unknown, e.g. a register write).
    direction : str or None
        ``"mm2s"`` or ``"s2mm"`` when a channel runs it.
    buffer_word : int or None
        Word address (as the BD counts) of the buffer's element 0.
    """

    tile: Tile
    bd_id: int
    fields: dict[str, int]
    bd: BufferDescriptor | None
    problems: list[BDError]
    origin: str
    line: int
    column: int
    buffer: Buffer | HostBuffer | None = None
    direction: str | None = None
    buffer_word: int | None = None

    def where(self) -> str:
        return f"{self.line}:{self.column}"

    def title(self) -> str:
        """``tile(0,1) memtile BD 3 (aie.dma_bd at 12:7)``."""
        return (f"{self.tile} {self.tile.kind} BD {self.bd_id} ({self.origin} at "
                f"{self.where()})")

    @property
    def element_bits(self) -> int:
        return self.buffer.bits if self.buffer is not None else WORD_BITS


@dataclass
class Chain:
    """A channel's program: a ``dma_start`` chain, a task, or a runtime transfer.

    Attributes
    ----------
    tile : Tile
    direction : str
        ``"mm2s"`` or ``"s2mm"``.
    channel : int
    bds : list of DesignBD
        In the order the channel runs them (each once, from the start BD).
    repeat : int
        Times the chain runs (actual count).
    loops : bool
        True if the last BD continues with an earlier one: the chain never ends.
    origin : str
    line, column : int
    issue_token : bool
    """

    tile: Tile
    direction: str
    channel: int
    bds: list[DesignBD]
    repeat: int
    loops: bool
    origin: str
    line: int
    column: int
    issue_token: bool = False

    def title(self) -> str:
        return (f"{self.tile} {self.tile.kind} {self.direction.upper()} {self.channel} "
                f"({self.origin} at {self.line}:{self.column})")


@dataclass(frozen=True)
class Flow:
    """``aie.flow(%a, DMA : 0, %b, DMA : 1)``: a DMA channel's stream to another's."""

    source: Tile
    source_channel: int
    dest: Tile
    dest_channel: int
    line: int
    column: int


@dataclass(frozen=True)
class PacketFlow:
    """``aie.packet_flow(id) { aie.packet_source<..> aie.packet_dest<..> }``: the packets
    with header ID ``packet_id`` from DMA channels' streams to a DMA channel's (ends of
    other bundles are not kept).

    Attributes
    ----------
    packet_id : int
    sources, dests : tuple of (Tile, int)
        The MM2S and S2MM channels by tile and number.
    keep_header : bool
        ``keep_pkt_header``: the header reaches the receiving channel (else the
        stream switch drops it).
    line, column : int
    """

    packet_id: int
    sources: tuple[tuple[Tile, int], ...]
    dests: tuple[tuple[Tile, int], ...]
    keep_header: bool
    line: int
    column: int


@dataclass(frozen=True)
class RuntimeStep:
    """One operation of the runtime sequence, as the reader understood it."""

    op: str
    line: int
    column: int
    text: str


@dataclass
class MlirDesign:
    """Everything read from one mlir-aie file.

    Attributes
    ----------
    device : str or None
        ``npu1_1col``, ``xcve2802``, ...
    tiles : dict of str to Tile
        By SSA name.
    buffers : dict of str to Buffer
    locks : dict of str to Lock
    host : list of HostBuffer
        The runtime sequence's arguments.
    bds : list of DesignBD
    chains : list of Chain
    runtime : list of RuntimeStep
    schedule : list of (str, object)
        The runtime sequence in order: ``("start", Chain)``, ``("wait", (tile,
        direction, channel))`` and ``("write", HostWrite)``.
    flows : list of Flow
        The DMA-to-DMA streams (flows to or from a core's stream ports are not kept).
    packet_flows : list of PacketFlow
        The DMA-to-DMA packet flows.
    cores : list of CoreProgram
        Each ``aie.core``'s locks and copies (:mod:`.core`).
    warnings : list of MlirWarning
        Each construct that was not read, with why.
    """

    device: str | None = None
    tiles: dict[str, Tile] = field(default_factory=dict)
    buffers: dict[str, Buffer] = field(default_factory=dict)
    locks: dict[str, Lock] = field(default_factory=dict)
    host: list[HostBuffer] = field(default_factory=list)
    bds: list[DesignBD] = field(default_factory=list)
    chains: list[Chain] = field(default_factory=list)
    runtime: list[RuntimeStep] = field(default_factory=list)
    flows: list[Flow] = field(default_factory=list)
    packet_flows: list[PacketFlow] = field(default_factory=list)
    schedule: list[tuple[str, Any]] = field(default_factory=list)
    cores: list[CoreProgram] = field(default_factory=list)
    warnings: list[MlirWarning] = field(default_factory=list)
