"""The three DMA kinds and what each one has, written once (docs/bd.md "Resources").

A :class:`DmaKind` is one row of the resource table: BDs and how the channels
share them, channels, address dimensions, zero padding, address width, locks,
memory and where the BD registers sit. :data:`DMA_KINDS` holds the three kinds by
the name every API takes (``"tile"``, ``"memtile"``, ``"shim"``), and
:func:`check_kind` is the one check of such a name.

The BD field table (:mod:`aiedma.model.bd.fields`) reads its resources from here
and checks at import that its ``base_address`` fields are exactly
:attr:`DmaKind.address_bits` wide, so the two cannot drift apart.

Decisions (docs/bd.md gives the facts, not these names):

* **decision**: the memory tile's BD table has two *halves*: BDs 0-23 serve
  channels 0/2/4 and BDs 24-47 channels 1/3/5, of both directions. A kind
  without halves (core tile, shim) is described as having one half, its whole
  table, so every layer asks the same question (:meth:`DmaKind.channel_bds`,
  :meth:`DmaKind.bd_half`) and only the memory tile ever answers with a part.
* **decision**: the tiles a DMA reaches (:attr:`DmaKind.windows`) order both its
  word addresses and its lock IDs: the memory tile sees west, own, east, each
  window one tile's memory (128K words) and one tile's locks (64).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import AiedmaError, field_error
from .directions import READ, Direction

__all__ = [
    "BD_REGISTER_STRIDE",
    "DEFAULT_ROW",
    "DMA_KINDS",
    "KINDS",
    "AllowedWindow",
    "DmaKind",
    "check_allowed",
    "check_kind",
    "dma_kind",
    "span_text",
]

BD_REGISTER_STRIDE = 0x20
"""Bytes between the registers of BD ``n`` and BD ``n + 1``, on every kind."""

DEFAULT_ROW = {"shim": 0, "memtile": 1, "tile": 2}
"""The row a DMA of each kind stands on when a run names none: the lowest of its kind
on an array with one memory-tile row (the NPU's: shim row 0, memory tiles row 1, core
tiles from row 2). The row goes into a packet header's source row."""


def span_text(numbers: range) -> str:
    """A range of numbers as people write it: ``range(24, 48)`` is ``"24-47"``."""
    return f"{numbers.start}-{numbers.stop - 1}"


@dataclass(frozen=True)
class DmaKind:
    """One DMA kind and its resources.

    Parameters
    ----------
    name : str
        The name every API takes: ``"tile"``, ``"memtile"`` or ``"shim"``.
    title : str
        The name people read: ``"Core tile"``, ``"Memory tile"``, ``"Shim"``.
    bd_count : int
        Buffer descriptors in the DMA's table.
    bd_halves : int
        Parts of the BD table the channels share out: 2 on the memory tile (channel
        ``c`` uses half ``c % 2``), 1 elsewhere (every channel, every BD).
    channels : int
        Channels of each direction (as many MM2S as S2MM).
    address_dimensions : int
        Address dimensions D0.. of a BD, the iteration dimension not counted.
    padded_dimensions : int
        Dimensions D0.. that can be zero-padded (0: no padding fields).
    padding_directions : tuple of Direction
        The directions that pad (the memory tile pads on MM2S only).
    address_bits : int
        Width of a word address: of the ``base_address`` field and of every address
        the DMA generates.
    locks : int
        Locks of one tile.
    windows : tuple of str
        The tiles the DMA reaches, in order of word address and lock ID, each
        window one tile's memory and one tile's locks.
    memory_words : int or None
        32-bit words of one tile's memory; None for the shim, whose memory is
        external (the user gives its size and place).
    bd_register_base : int
        Register address of BD 0; BD ``n`` is :data:`BD_REGISTER_STRIDE` ``* n`` on.
    words : int
        32-bit register words of one BD.
    """

    name: str
    title: str
    bd_count: int
    bd_halves: int
    channels: int
    address_dimensions: int
    padded_dimensions: int
    padding_directions: tuple[Direction, ...]
    address_bits: int
    locks: int
    windows: tuple[str, ...]
    memory_words: int | None
    bd_register_base: int
    words: int

    def __str__(self) -> str:
        return self.name

    @property
    def adjective(self) -> str:
        """The title as a modifier: ``"memory-tile"`` (a memory-tile read)."""
        return self.title.lower().replace(" ", "-")

    # --- zero padding ---------------------------------------------------------------

    @property
    def has_padding(self) -> bool:
        """True if the kind's BDs have zero-padding fields."""
        return self.padded_dimensions > 0

    def pads(self, direction: Direction) -> bool:
        """True if a transfer in ``direction`` can be zero-padded on this kind."""
        return direction in self.padding_directions

    # --- the BD table and its halves --------------------------------------------------

    def bd_half(self, bd_id: int) -> range:
        """The half of the BD table that BD ``bd_id`` is in (the whole table if one half).

        ``bd_id`` must be a BD of the kind (``0 .. bd_count - 1``).
        """
        size = self.bd_count // self.bd_halves
        first = bd_id // size * size
        return range(first, first + size)

    def channel_bds(self, channel: int) -> range:
        """The BDs channel ``channel`` (of either direction) may run: its half."""
        return self.bd_half(channel % self.bd_halves * (self.bd_count // self.bd_halves))

    def half_channels(self, half: range) -> tuple[int, ...]:
        """The channels (numbers, of each direction) that share the BDs of ``half``."""
        return tuple(c for c in range(self.channels) if self.channel_bds(c) == half)

    def half_text(self, half: range) -> str:
        """``half`` and who shares it, for messages.

        Examples
        --------
        >>> DMA_KINDS["memtile"].half_text(range(24, 48))
        '24-47 (shared by channels 1/3/5 of both directions)'
        """
        channels = "/".join(str(c) for c in self.half_channels(half))
        return f"{span_text(half)} (shared by channels {channels} of both directions)"

    def check_bd_in_half(self, error: type[AiedmaError], field: str, bd_id: int,
                         half: range, rule: str) -> None:
        """The BD-half rule: raise unless BD ``bd_id`` lies in ``half``.

        Parameters
        ----------
        error : type of AiedmaError
            The caller's error class.
        field : str
            The field that holds ``bd_id`` (``"next_bd"``, ``"start_bd"``).
        bd_id : int
            The BD number given.
        half : range
            The BDs allowed: :meth:`channel_bds` of a channel or :meth:`bd_half` of a BD.
        rule : str
            The rule up to the BD numbers, e.g. ``"channel memtile(0,1).mm2s0 runs BDs"``;
            the message goes on with :meth:`half_text`.

        Raises
        ------
        AiedmaError
            Of class ``error``: ``start_bd=24: channel ... runs BDs 0-23 (shared by
            channels 0/2/4 of both directions)``.
        """
        if bd_id not in half:
            raise field_error(error, field, bd_id, f"{rule} {self.half_text(half)}")

    def bd_register(self, bd_id: int) -> int:
        """Register address of BD ``bd_id``'s first word."""
        return self.bd_register_base + BD_REGISTER_STRIDE * bd_id

    # --- memory and locks ------------------------------------------------------------

    @property
    def lock_ids(self) -> range:
        """The lock IDs a BD may name: one tile's locks per window."""
        return range(self.locks * len(self.windows))

    def lock_window(self, window: str) -> range:
        """The lock IDs of one window, e.g. ``lock_window("own")`` is 64-127 on the memory tile."""
        first = self.windows.index(window) * self.locks
        return range(first, first + self.locks)

    def memory_window(self, window: str) -> range:
        """The word addresses of one window (not for the shim: its memory is external)."""
        if self.memory_words is None:
            raise ValueError(f"a {self.name} DMA addresses external memory, not windows")
        first = self.windows.index(window) * self.memory_words
        return range(first, first + self.memory_words)

    def lock_ids_text(self) -> str:
        """``"lock IDs 0-15"``, or per window ``"lock IDs 0-63 west, 64-127 own, ..."``."""
        if len(self.windows) == 1:
            return f"lock IDs {span_text(self.lock_ids)}"
        parts = [f"{span_text(self.lock_window(w))} {w}" for w in self.windows]
        return "lock IDs " + ", ".join(parts)


DMA_KINDS: dict[str, DmaKind] = {kind.name: kind for kind in (
    DmaKind(
        name="tile", title="Core tile",
        bd_count=16, bd_halves=1, channels=2,
        address_dimensions=3, padded_dimensions=0, padding_directions=(),
        address_bits=14,  # 64 KB data memory: 16K words
        locks=16, windows=("own",), memory_words=64 * 1024 // 4,
        bd_register_base=0x1D000, words=6,
    ),
    DmaKind(
        name="memtile", title="Memory tile",
        bd_count=48, bd_halves=2, channels=6,
        address_dimensions=4, padded_dimensions=3, padding_directions=(READ,),
        address_bits=19,  # west, own and east windows of 128K words
        locks=64, windows=("west", "own", "east"), memory_words=512 * 1024 // 4,
        bd_register_base=0xA0000, words=8,
    ),
    DmaKind(
        name="shim", title="Shim",
        bd_count=16, bd_halves=1, channels=2,
        address_dimensions=3, padded_dimensions=0, padding_directions=(),
        address_bits=46,  # a 48-bit byte address, 4-byte aligned
        locks=16, windows=("own",), memory_words=None,
        bd_register_base=0x1D000, words=8,
    ),
)}
"""The DMA kinds by name: core tile, memory tile, shim (in that order everywhere)."""

KINDS: tuple[str, ...] = tuple(DMA_KINDS)
"""``("tile", "memtile", "shim")``: the kind names, in the one order every layer uses."""


def check_kind(kind: object, error: type[AiedmaError] = AiedmaError,
               field: str = "kind") -> str:
    """``kind`` if it names a DMA kind, else an error naming the field, the value and the kinds.

    Parameters
    ----------
    kind : object
        The name given.
    error : type of AiedmaError
        The caller's error class (``BDError``, ``TilingError``, ``ChannelError``, ...).
    field : str
        The field name shown in the message.

    Examples
    --------
    >>> check_kind("memtile")
    'memtile'
    >>> check_kind("core")
    Traceback (most recent call last):
    ...
    aiedma.model.errors.AiedmaError: kind='core': must be one of tile, memtile, shim
    """
    if not isinstance(kind, str) or kind not in DMA_KINDS:
        raise field_error(error, field, kind, f"must be one of {', '.join(KINDS)}")
    return kind


def dma_kind(kind: object, error: type[AiedmaError] = AiedmaError) -> DmaKind:
    """The :class:`DmaKind` named ``kind``, checked by :func:`check_kind`."""
    return DMA_KINDS[check_kind(kind, error)]


@dataclass(frozen=True)
class AllowedWindow:
    """The word addresses a DMA built for an FPGA design may touch: ``words`` (a power of
    two) from ``start`` (a multiple of ``words``), an aligned block as an AXI address
    editor assigns them, so the RTL's test is an equality of the address's top bits.

    Examples
    --------
    >>> window = AllowedWindow(4096, 4096)
    >>> window.holds(4096), window.holds(8191), window.holds(8192)
    (True, True, False)
    """

    start: int
    words: int

    def holds(self, address: Any) -> Any:
        """Whether the word address ``address`` (an int, or an array: element-wise) lies
        in the window."""
        return (self.start <= address) & (address < self.start + self.words)

    @property
    def size_bits(self) -> int:
        """Low address bits inside the window (``log2(words)``)."""
        return self.words.bit_length() - 1


def check_allowed(kind: str, allowed: object,
                  error: type[AiedmaError] = AiedmaError) -> AllowedWindow | None:
    """``allowed`` (``None`` or ``(start, words)`` word addresses) as a window a ``kind``
    DMA can be built with, else an error naming the field, the value and the rule.

    Examples
    --------
    >>> check_allowed("tile", (0, 4096))
    AllowedWindow(start=0, words=4096)
    >>> check_allowed("tile", (1024, 4096))
    Traceback (most recent call last):
    ...
    aiedma.model.errors.AiedmaError: allowed=[1024, 4096]: start must be a multiple of words
    """
    if allowed is None:
        return None
    if isinstance(allowed, AllowedWindow):
        allowed = (allowed.start, allowed.words)
    bits = dma_kind(kind, error).address_bits
    if (not isinstance(allowed, (tuple, list)) or len(allowed) != 2
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in allowed)):
        raise field_error(error, "allowed", allowed,
                          "must be None or (start, words), word addresses as integers")
    start, words = allowed
    if words < 1 or words & (words - 1):
        raise field_error(error, "allowed", tuple(allowed), "words must be a power of two")
    if start < 0 or start % words:
        raise field_error(error, "allowed", tuple(allowed), "start must be a multiple of words")
    if start + words > 1 << bits:
        raise field_error(error, "allowed", tuple(allowed),
                          f"must end within the {kind} DMA's {bits}-bit word addresses")
    return AllowedWindow(start, words)
