"""Word-addressed memories and the address spaces DMAs see them through (docs/bd.md "Resources").

A :class:`Memory` is an array of 32-bit words with bounds-checked access. An
:class:`AddressSpace` is what one DMA addresses: windows that route a word
address to ``(memory, offset)``.

* Core tile: 64 KB data memory, 16K words at 0 (:func:`core_tile_space`).
* Memory tile: 512 KB (128K words) of its own; the 19-bit word address reaches the
  west neighbour at words 0x00000-0x1FFFF, itself at 0x20000-0x3FFFF and the east
  neighbour at 0x40000-0x5FFFF (docs/bd.md gives the windows in bytes: 0x00000-0x7FFFF,
  0x80000-0xFFFFF, 0x100000-0x17FFFF). Neighbours are separate :class:`Memory`
  objects, shared by reference with the neighbours' own spaces
  (:func:`memory_tile_space`).
* Shim: external memory, a word array of the size the user gives, at a word
  address the user gives (:func:`shim_space`).

Decisions (docs/bd.md is silent):

* **decision**: words are stored as ``uint32``. A write takes ``-2**31 .. 2**32 - 1``
  (signed values are stored in two's complement, as an ``int32`` buffer holds them);
  anything wider is an error, never truncated.
* **decision**: the memory layer does not know channels; every access takes a
  ``where`` text from the caller (``"channel memtile(0,1).mm2s0, BD 3"``) and an
  out-of-range access names it, the address and the memory's extent.
* **decision**: a memory-tile window with no neighbour (the edge of the array) is
  unmapped: an access there is an error, like an address past the east window.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..arch.kinds import DMA_KINDS
from ..errors import AiedmaError, field_error

__all__ = [
    "CORE_TILE_WORDS",
    "MEMORY_TILE_WINDOWS",
    "MEMORY_TILE_WORDS",
    "WORD_MAX",
    "WORD_MIN",
    "AddressSpace",
    "Memory",
    "MemoryAccessError",
    "Window",
    "core_tile_space",
    "memory_tile_space",
    "shim_space",
]

_CORE_TILE, _MEMORY_TILE = DMA_KINDS["tile"], DMA_KINDS["memtile"]

CORE_TILE_WORDS: int = _CORE_TILE.memory_words
"""Core-tile data memory: 64 KB, 16K words (a 14-bit word address); from :mod:`..arch.kinds`."""

MEMORY_TILE_WORDS: int = _MEMORY_TILE.memory_words
"""Memory-tile memory: 512 KB, 128K words; from :mod:`..arch.kinds`."""

MEMORY_TILE_WINDOWS: dict[str, int] = {
    label: _MEMORY_TILE.memory_window(label).start for label in _MEMORY_TILE.windows
}
"""First word address of each window a memory-tile DMA sees (each 128K words)."""

WORD_MIN, WORD_MAX = -(1 << 31), (1 << 32) - 1
"""What a 32-bit memory word takes: signed or unsigned values (stored mod 2^32)."""


class MemoryAccessError(AiedmaError):
    """An access outside a memory or outside every window of an address space."""


def _where(where: str) -> str:
    return f"; {where}" if where else ""


class Memory:
    """An array of 32-bit words with bounds-checked access.

    Parameters
    ----------
    name : str
        Shown in errors and reports, e.g. ``"memtile(0,1) memory"``.
    words : int
        Size in 32-bit words.

    Attributes
    ----------
    data : numpy.ndarray
        The ``uint32`` words (bulk host access may use it directly).

    Examples
    --------
    >>> m = Memory("scratch", 4)
    >>> m.write(1, -1); m.read(1)
    4294967295
    >>> m.read(4, where="channel c, BD 3")
    Traceback (most recent call last):
    ...
    aiedma.model.system.memory.MemoryAccessError: address=4: outside scratch (words 0..3); ...
    """

    def __init__(self, name: str, words: int) -> None:
        if isinstance(words, bool) or not isinstance(words, int | np.integer) or words < 1:
            raise field_error(MemoryAccessError, "words", words,
                              f"the size of {name} must be a positive number of words")
        self.name = name
        self.size = int(words)
        self.data = np.zeros(self.size, dtype=np.uint32)

    def __repr__(self) -> str:
        return f"Memory({self.name!r}, {self.size})"

    def _check(self, offset: int, where: str) -> None:
        if not 0 <= offset < self.size:
            raise field_error(MemoryAccessError, "address", offset,
                              f"outside {self.name} (words 0..{self.size - 1}){_where(where)}")

    def read(self, offset: int, where: str = "") -> int:
        """The word at ``offset`` (0 .. size - 1) as an unsigned int."""
        self._check(offset, where)
        return int(self.data[offset])

    def write(self, offset: int, value: int, where: str = "") -> None:
        """Store ``value`` (``-2**31 .. 2**32 - 1``; negative as two's complement)."""
        self._check(offset, where)
        if not WORD_MIN <= value <= WORD_MAX:
            raise field_error(MemoryAccessError, "value", value,
                              f"a 32-bit word is -2^31..2^32-1{_where(where)}")
        self.data[offset] = value & 0xFFFF_FFFF

    def load(self, offset: int, values: Sequence[int] | np.ndarray, where: str = "") -> None:
        """Host write of many words from ``offset`` (checked like :meth:`write`)."""
        values = np.asarray(values, dtype=np.int64)
        self._check(offset, where)
        if values.size:
            self._check(offset + values.size - 1, where)
            if values.min() < WORD_MIN or values.max() > WORD_MAX:
                bad = values[(values < WORD_MIN) | (values > WORD_MAX)][0]
                raise field_error(MemoryAccessError, "value", int(bad),
                                  f"a 32-bit word is -2^31..2^32-1{_where(where)}")
        self.data[offset:offset + values.size] = (values & 0xFFFF_FFFF).astype(np.uint32)

    def dump(self, offset: int, count: int, where: str = "") -> np.ndarray:
        """Host read of ``count`` words from ``offset`` (a copy, ``uint32``)."""
        self._check(offset, where)
        if count:
            self._check(offset + count - 1, where)
        return self.data[offset:offset + count].copy()


@dataclass(frozen=True)
class Window:
    """Word addresses ``start .. start + memory.size - 1`` map to ``memory`` from offset 0.

    ``memory`` None is an unmapped window (a missing neighbour), named ``label``.
    """

    label: str
    start: int
    size: int
    memory: Memory | None


class AddressSpace:
    """The word addresses one DMA reaches: windows routed to memories.

    Parameters
    ----------
    name : str
        The DMA's name, used in errors.
    windows : sequence of Window
        Non-overlapping windows.

    Examples
    --------
    >>> west, own = Memory("w", 8), Memory("o", 8)
    >>> space = AddressSpace("dma", [Window("west", 0, 8, west), Window("own", 8, 8, own)])
    >>> memory, offset = space.resolve(10); memory.name, offset
    ('o', 2)
    """

    def __init__(self, name: str, windows: Sequence[Window]) -> None:
        self.name = name
        self.windows = tuple(sorted(windows, key=lambda w: w.start))
        for a, b in zip(self.windows, self.windows[1:], strict=False):
            if a.start + a.size > b.start:
                raise field_error(MemoryAccessError, "windows", [a.label, b.label],
                                  f"windows of {name} overlap")

    def resolve(self, address: int, where: str = "") -> tuple[Memory, int]:
        """The memory and word offset that ``address`` reaches.

        Raises
        ------
        MemoryAccessError
            If no window holds ``address``, or its window has no memory; the
            message names the address, the windows and ``where``.
        """
        for w in self.windows:
            if w.start <= address < w.start + w.size:
                if w.memory is None:
                    raise field_error(
                        MemoryAccessError, "address", address,
                        f"the {w.label} window of {self.name} "
                        f"({w.start}..{w.start + w.size - 1}) has no memory{_where(where)}")
                return w.memory, address - w.start
        extent = ", ".join(f"{w.label} {w.start}..{w.start + w.size - 1}" for w in self.windows)
        raise field_error(MemoryAccessError, "address", address,
                          f"outside every window of {self.name} ({extent}){_where(where)}")

    def read(self, address: int, where: str = "") -> int:
        """The word at ``address``."""
        memory, offset = self.resolve(address, where)
        return memory.read(offset, where)

    def write(self, address: int, value: int, where: str = "") -> None:
        """Store ``value`` at ``address``."""
        memory, offset = self.resolve(address, where)
        memory.write(offset, value, where)

    def locate(self, addresses: np.ndarray) -> list[tuple[Memory, np.ndarray, np.ndarray]] | None:
        """Where many addresses land: ``(memory, mask, offsets)`` per window reached.

        ``mask`` selects the addresses in that window (``slice(None)`` when every address
        is in it), ``offsets`` are their word offsets in ``memory``. None if any address
        is in no window or in one with no memory (:meth:`resolve` says which, with the
        full error).
        """
        if addresses.size:
            # Most jumps stay in one window: told from the extremes, without a mask.
            low, high = int(addresses.min()), int(addresses.max())
            for w in self.windows:
                if w.start <= low and high < w.start + w.size:
                    if w.memory is None:
                        return None
                    return [(w.memory, slice(None), addresses - w.start)]
        placed, found = [], 0
        for w in self.windows:
            mask = (addresses >= w.start) & (addresses < w.start + w.size)
            count = int(np.count_nonzero(mask))
            if not count:
                continue
            if w.memory is None:
                return None
            placed.append((w.memory, mask, addresses[mask] - w.start))
            found += count
        return placed if found == addresses.size else None


def core_tile_space(name: str, memory: Memory | None = None) -> AddressSpace:
    """A core-tile DMA's space: its 16K-word data memory at 0 (created if not given)."""
    memory = memory or Memory(f"{name} data memory", CORE_TILE_WORDS)
    _check_size(memory, CORE_TILE_WORDS, "a core-tile data memory")
    return AddressSpace(name, [Window("own", 0, CORE_TILE_WORDS, memory)])


def memory_tile_space(name: str, own: Memory | None = None, west: Memory | None = None,
                      east: Memory | None = None) -> AddressSpace:
    """A memory-tile DMA's space: west, own and east windows of 128K words each.

    Parameters
    ----------
    name : str
        The DMA's name.
    own : Memory, optional
        This tile's memory (created if not given).
    west, east : Memory, optional
        The neighbours' memories; None leaves the window unmapped.
    """
    own = own or Memory(f"{name} memory", MEMORY_TILE_WORDS)
    windows = []
    for label, memory in (("west", west), ("own", own), ("east", east)):
        if memory is not None:
            _check_size(memory, MEMORY_TILE_WORDS, f"the {label} memory tile")
        windows.append(Window(label, MEMORY_TILE_WINDOWS[label], MEMORY_TILE_WORDS, memory))
    return AddressSpace(name, windows)


def shim_space(name: str, memory: Memory, base_address: int = 0) -> AddressSpace:
    """A shim DMA's space: external ``memory`` at word address ``base_address``."""
    if base_address < 0:
        raise field_error(MemoryAccessError, "base_address", base_address,
                          "external memory starts at a word address >= 0")
    return AddressSpace(name, [Window("external", base_address, memory.size, memory)])


def _check_size(memory: Memory, words: int, what: str) -> None:
    if memory.size != words:
        raise field_error(MemoryAccessError, "words", memory.size,
                          f"{what} has {words} words ({memory.name})")
