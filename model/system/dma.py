"""A tile's DMA at cycle level: its BD table, its channels, and what they reach.

A :class:`DMA` is one tile's DMA engine: a BD table shared by its channels, the
address space and lock IDs it reaches (:mod:`.memory`, :mod:`.locks`), and the
kind's channels (``CHANNELS``: 2 + 2 on a core tile or shim, 6 + 6 on a memory
tile), each a :class:`~.channel.Channel`.

* **decision**: the BD table has one fetch port: channels asking for a BD in the same
  cycle are served one a cycle, in round robin over the channel order
  (:meth:`DMA.fetch_granted`; docs/cycle.md "Channel").
* **decision**: ``compression=False`` is the DMA built without its compressors and
  decompressors (an optional feature of the RTL, ``hdl/dma.py``): each channel's
  (de)compression enable is not implemented (reads 0, a write is dropped:
  :func:`~aiedma.model.arch.registers.control_mask`), so a BD's ``enable_compression``
  moves its words as they are, in the cycles of a BD without it.
* **decision**: ``allowed`` is window protection for a DMA put in an FPGA design: an
  aligned block of word addresses (:class:`~aiedma.model.arch.kinds.AllowedWindow`). A
  channel run through its registers makes no access outside it: the access is not made
  (a read gives 0) and ``error_dm_access_to_unavailable`` is set, as a memory-tile
  access past its windows (:class:`~.channel.Channel`, docs/axi.md "Window protection").
"""

from __future__ import annotations

from ..arch.directions import READ, WRITE, check_direction
from ..arch.kinds import DMA_KINDS, check_allowed, check_kind
from ..bd.descriptor import BufferDescriptor, check_chain
from ..bd.packet import check_place
from ..errors import field_error
from .channel import Channel, ChannelError
from .locks import LOCKS_PER_TILE, LockSpace, LockTable, lock_space
from .memory import AddressSpace, core_tile_space, memory_tile_space

__all__ = ["CHANNELS", "DMA"]

CHANNELS: dict[str, int] = {name: k.channels for name, k in DMA_KINDS.items()}
"""Channels of each direction (MM2S and S2MM) per DMA kind (from :mod:`..arch.kinds`)."""


class DMA:
    """One tile's DMA: the BD table, the channels, and what they reach.

    Parameters
    ----------
    kind : {"tile", "memtile", "shim"}
    column, row : int
        The tile's position; its packet headers carry it (0..127, 0..31).
    memory : AddressSpace, optional
        What its BDs address. Default: a fresh core-tile data memory or memory-tile
        memory (no neighbours); a shim needs one (external memory, :func:`.memory.shim_space`).
    locks : LockSpace, optional
        The lock IDs its BDs name. Default: a fresh table of the kind's locks.
    name : str, optional
        Default ``"<kind>(<column>,<row>)"``.
    compression : bool
        False: built without the (de)compressors (the module's decision). A shim has
        none either way.
    allowed : (int, int), optional
        ``(start, words)``: the only word addresses its channels may touch when run
        through their registers (the module's decision); ``words`` a power of two,
        ``start`` a multiple of it. Default: no window of its own.

    Attributes
    ----------
    bds : dict of int to BufferDescriptor
        The BD table; :meth:`write_bd` checks a BD in its slot. Loads write the
        advanced ``iteration_current`` back here.
    mm2s, s2mm : tuple of Channel
        The channels, by index.
    """

    def __init__(self, kind: str, column: int = 0, row: int = 0, *,
                 memory: AddressSpace | None = None, locks: LockSpace | None = None,
                 name: str | None = None, compression: bool = True,
                 allowed: tuple[int, int] | None = None) -> None:
        check_kind(kind, ChannelError)
        self.compression = bool(compression)
        self.allowed = check_allowed(kind, allowed, ChannelError)
        check_place(column, row, ChannelError)
        self.kind, self.column, self.row = kind, column, row
        self.name = name or f"{kind}({column},{row})"
        if memory is None:
            if kind == "shim":
                raise field_error(ChannelError, "memory", None,
                                  "a shim DMA needs its external memory (shim_space)")
            memory = (core_tile_space if kind == "tile" else memory_tile_space)(self.name)
        if locks is None:
            locks = lock_space(kind, self.name, LockTable(f"{self.name} locks",
                                                          LOCKS_PER_TILE[kind]))
        self.memory, self.locks = memory, locks
        self.bds: dict[int, BufferDescriptor] = {}
        self.mm2s = tuple(Channel(self, READ.channel, i) for i in range(CHANNELS[kind]))
        self.s2mm = tuple(Channel(self, WRITE.channel, i) for i in range(CHANNELS[kind]))
        self._rank = {c: n for n, c in enumerate(self.channels)}   # channels hash by identity
        self._fetch_requests: list[Channel] = []     # this cycle's, until each commits
        self._fetch_winner: Channel | None = None    # the one of them served
        self._fetch_last = len(self.channels) - 1    # rank of the channel served last

    def __repr__(self) -> str:
        return f"DMA({self.name!r})"

    @property
    def channels(self) -> tuple[Channel, ...]:
        """Every channel, MM2S first."""
        return self.mm2s + self.s2mm

    def channel(self, direction: str, index: int) -> Channel:
        """The channel ``direction`` (``"mm2s"`` / ``"s2mm"``) number ``index``.

        Raises
        ------
        ChannelError
            For an unknown direction or an index past the kind's channel count.
        """
        check_direction(direction, "channel", ChannelError)
        if not 0 <= index < CHANNELS[self.kind]:
            raise field_error(ChannelError, "channel", index,
                              f"a {self.kind} DMA has {direction.upper()} channels "
                              f"0..{CHANNELS[self.kind] - 1} ({self.name})")
        return getattr(self, direction)[index]

    def write_bd(self, bd_id: int, bd: BufferDescriptor, *, as_written: bool = False) -> None:
        """Put ``bd`` in slot ``bd_id``.

        Checked with :func:`.bd.check_chain` unless ``as_written``: the register port
        stores whatever words are written, and a chain out of its half of the memory
        tile's table is a fault of the channel that would follow it (``Channel``'s
        ``error_bd_unavailable``), not of the write.
        """
        if not as_written:
            check_chain(self.kind, bd_id, bd)
        self.bds[bd_id] = bd

    # -- the BD table's one fetch port (docs/cycle.md "Channel", Fetch) --

    def request_fetch(self, channel: Channel) -> None:
        """``channel`` would fetch a BD this cycle (called while the channels step)."""
        self._fetch_requests.append(channel)
        if self._fetch_winner is None or self._turn(channel) < self._turn(self._fetch_winner):
            self._fetch_winner = channel

    def fetch_granted(self, channel: Channel) -> bool:
        """``channel``'s request of this cycle is served (called once per request, at the
        end of the cycle). Round robin in channel order (MM2S 0.., then S2MM 0..): of
        the channels that asked, the first after the one served last, whatever order
        the scheduler steps them in."""
        self._fetch_requests.remove(channel)
        granted = self._fetch_winner is channel
        if granted:
            self._fetch_last = self._rank[channel]
        if not self._fetch_requests:
            self._fetch_winner = None
        return granted

    def _turn(self, channel: Channel) -> int:
        """How far ``channel`` is after the channel served last (1 = next)."""
        return (self._rank[channel] - self._fetch_last - 1) % len(self.channels) + 1

