"""Which byte addresses of a tile are DMA registers, and what a host may do with each.

The register map is a table of :class:`RegisterBlock` rows, each one kind of register
repeated at a fixed stride (BD ``n`` word ``w``, channel ``n``'s start queue, lock
``n``'s value ...), built per DMA kind from the addresses of :mod:`.kinds` and
:mod:`.registers`. :func:`register_blocks` gives the table, :func:`register_at` says what
one address is, and :func:`access_taken` is the bus rule every host port applies (the
AXI4-Lite slave, ``hdl/axi_lite.py``, generates its decode from this table at
elaboration time, so the RTL and the model cannot disagree on what is mapped).

:data:`ROLES` lists the kinds of register, each with its access, matching what the RTL
DMA (``hdl/dma.py``) does with it; adding a kind of register is one entry there (and
its addresses in :mod:`.registers`).

Decisions:

* **decision**: a register is one aligned 32-bit word; an address with either of its two
  low bits set is no register. (A bus port drops those bits before it asks: an AXI4-Lite
  transfer is a whole bus word, its strobes say which bytes.)
* **decision**: a read of a register the DMA only takes in (start queue) and a write to
  a status register are accepted: the read gives 0; the write changes nothing but the
  ``task_queue_overflow`` bit, which a 1 clears (AM025's write-1-to-clear). Only an
  address that is no register, or a write that is not of all four bytes, is refused
  (docs/decisions.md, "Register bus").
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache

from ..errors import AiedmaError, field_error
from .directions import CHANNEL_NAMES
from .kinds import BD_REGISTER_STRIDE, DMA_KINDS, check_kind
from .registers import (
    CONTROL_BASE,
    FOT_COUNT_BASE,
    LOCK_VALUE_BASE,
    LOCK_VALUE_STRIDE,
    START_QUEUE_BASE,
    START_QUEUE_STRIDE,
    STATUS_BASE,
    STATUS_STRIDE,
    WRITE_COUNT_BASE,
)

__all__ = [
    "ALL_BYTES",
    "ROLES",
    "Access",
    "Register",
    "RegisterBlock",
    "Role",
    "access_taken",
    "register_at",
    "register_blocks",
    "register_span",
    "registers",
    "role_access",
]

WORD_BYTES = 4
"""Bytes of one register."""

ALL_BYTES = (1 << WORD_BYTES) - 1
"""The byte strobes of a whole-word write (0xF); no register takes fewer bytes."""


@dataclass(frozen=True)
class Access:
    """What a host may do with a role's registers."""

    readable: bool
    """A read gives the register's value (else it gives 0)."""
    writable: bool
    """A write changes something (else it is accepted and changes nothing)."""


@dataclass(frozen=True)
class RegisterBlock:
    """One role's registers: ``count`` entries of ``words`` consecutive words each,
    entry ``i`` word ``w`` at ``base + stride * i + 4 * w``.

    Attributes
    ----------
    role : str
        The name of one of :data:`ROLES`.
    base : int
        Byte address of entry 0, word 0.
    count : int
        Entries (BDs, channels of one direction, locks).
    stride : int
        Bytes from one entry to the next; a power of two at least ``4 * words``.
    words : int
        Words of one entry (a BD's words; 1 for the others).
    direction : str or None
        ``"mm2s"`` or ``"s2mm"`` for a channel's register, else None.
    """

    role: str
    base: int
    count: int
    stride: int
    words: int = 1
    direction: str | None = None

    def __post_init__(self) -> None:
        role_access(self.role)
        if self.stride & (self.stride - 1) or self.stride < WORD_BYTES * self.words:
            raise field_error(AiedmaError, "stride", self.stride,
                              f"must be a power of two of at least {WORD_BYTES * self.words} "
                              f"bytes ({self.words} words)")
        if self.base % WORD_BYTES:
            raise field_error(AiedmaError, "base", f"{self.base:#x}", "must be word-aligned")

    @property
    def access(self) -> Access:
        """The role's access (:func:`role_access`)."""
        return role_access(self.role)

    @property
    def end(self) -> int:
        """One past the last byte of the last entry's last word."""
        return self.base + self.stride * (self.count - 1) + WORD_BYTES * self.words

    def find(self, address: int) -> Register | None:
        """The register of this block at byte ``address``, or None."""
        offset = address - self.base
        if not 0 <= offset < self.stride * self.count or offset % WORD_BYTES:
            return None
        index, within = divmod(offset, self.stride)
        if within >= WORD_BYTES * self.words:
            return None
        return Register(self.role, index, within // WORD_BYTES, self.direction, address)

    def addresses(self) -> Iterable[int]:
        """Every register address of the block, in order."""
        for i in range(self.count):
            for w in range(self.words):
                yield self.base + self.stride * i + WORD_BYTES * w


@dataclass(frozen=True)
class Register:
    """One register: its role, entry (BD, channel or lock number), word and address."""

    role: str
    index: int
    word: int
    direction: str | None
    address: int

    @property
    def access(self) -> Access:
        """The role's access (:func:`role_access`)."""
        return role_access(self.role)

    @property
    def readable(self) -> bool:
        return self.access.readable

    @property
    def writable(self) -> bool:
        return self.access.writable

    def __str__(self) -> str:
        where = f"{self.direction}{self.index}" if self.direction else str(self.index)
        word = f" word {self.word}" if self.role == "bd" else ""
        return f"{self.role} {where}{word} at {self.address:#07x}"


def _bd_blocks(kind: str, role: str) -> list[RegisterBlock]:
    dma = DMA_KINDS[kind]
    return [RegisterBlock(role, dma.bd_register_base, dma.bd_count, BD_REGISTER_STRIDE,
                          dma.words)]


def _channel_blocks(bases: dict[tuple[str, str], int],
                    stride: int) -> Callable[[str, str], list[RegisterBlock]]:
    """Blocks of one register per channel, one block per direction."""
    def build(kind: str, role: str) -> list[RegisterBlock]:
        count = DMA_KINDS[kind].channels
        return [RegisterBlock(role, bases[kind, d], count, stride, direction=d)
                for d in CHANNEL_NAMES]
    return build


def _fot_count_blocks(kind: str, role: str) -> list[RegisterBlock]:
    """One pop register per S2MM channel, on the kinds AM025 gives one (not the shim)."""
    if kind not in FOT_COUNT_BASE:
        return []
    return [RegisterBlock(role, FOT_COUNT_BASE[kind], DMA_KINDS[kind].channels, STATUS_STRIDE,
                          direction="s2mm")]


def _write_count_blocks(kind: str, role: str) -> list[RegisterBlock]:
    """One Current_Write_Count register per S2MM channel."""
    return [RegisterBlock(role, WRITE_COUNT_BASE[kind], DMA_KINDS[kind].channels,
                          STATUS_STRIDE, direction="s2mm")]


def _lock_blocks(kind: str, role: str) -> list[RegisterBlock]:
    return [RegisterBlock(role, LOCK_VALUE_BASE[kind], DMA_KINDS[kind].locks,
                          LOCK_VALUE_STRIDE)]


@dataclass(frozen=True)
class Role:
    """One kind of register: its name, its access and where its blocks are."""

    name: str
    access: Access
    blocks: Callable[[str, str], list[RegisterBlock]]
    """``blocks(kind, name)``: the role's blocks on a DMA kind."""


ROLES: tuple[Role, ...] = (
    Role("bd", Access(readable=True, writable=True), _bd_blocks),
    Role("start_queue", Access(readable=False, writable=True),
         _channel_blocks(START_QUEUE_BASE, START_QUEUE_STRIDE)),
    Role("control", Access(readable=True, writable=True),
         _channel_blocks(CONTROL_BASE, START_QUEUE_STRIDE)),
    Role("status", Access(readable=True, writable=True),
         _channel_blocks(STATUS_BASE, STATUS_STRIDE)),
    Role("lock_value", Access(readable=True, writable=True), _lock_blocks),
    Role("fot_count", Access(readable=True, writable=False), _fot_count_blocks),
    Role("write_count", Access(readable=True, writable=False), _write_count_blocks),
)
"""Every kind of register, one entry each: what the RTL DMA does with it (BD words,
control words and lock values are written and read back, a start-queue write pushes a
task and the register reads 0, a status register is read and a 1 written to its
``task_queue_overflow`` bit clears it, a read of an S2MM channel's count FIFO pop register
pops the entry it gives, its Current_Write_Count register is read only)."""

def role_access(name: str) -> Access:
    """The access of the role called ``name`` (looked up in :data:`ROLES` when asked).

    Raises
    ------
    AiedmaError
        For a name no role has.
    """
    for role in ROLES:
        if role.name == name:
            return role.access
    raise field_error(AiedmaError, "role", name,
                      f"must be one of {', '.join(r.name for r in ROLES)}")


@cache
def register_blocks(kind: str) -> tuple[RegisterBlock, ...]:
    """The register map of a DMA kind, one block per role (and direction).

    Built once a kind (the blocks are frozen): every register access looks it up.

    Raises
    ------
    AiedmaError
        For an unknown kind.
    """
    check_kind(kind)
    return tuple(block for role in ROLES for block in role.blocks(kind, role.name))


def registers(kind: str) -> list[Register]:
    """Every register of a DMA kind, block by block."""
    return [block.find(address) for block in register_blocks(kind)
            for address in block.addresses()]


def register_span(kind: str) -> int:
    """Address bits a bus needs to reach every register of the kind."""
    return (max(block.end for block in register_blocks(kind)) - 1).bit_length()


def register_at(kind: str, address: int) -> Register | None:
    """The register at byte ``address`` of a ``kind`` DMA, or None where there is none.

    Examples
    --------
    >>> str(register_at("memtile", 0xA0024))
    'bd 1 word 1 at 0xa0024'
    >>> register_at("memtile", 0xA0022) is None     # not word-aligned
    True
    >>> register_at("tile", 0x1D018) is None        # a core-tile BD has 6 words
    True
    """
    for block in register_blocks(kind):
        found = block.find(address)
        if found is not None:
            return found
    return None


def access_taken(kind: str, address: int, *, write: bool, strobe: int = ALL_BYTES) -> bool:
    """Whether a host's access is taken (AXI OKAY) or refused (SLVERR, nothing changes).

    Parameters
    ----------
    kind : {"tile", "memtile", "shim"}
    address : int
        The byte address, its two low bits dropped (a bus word).
    write : bool
        A write (with ``strobe``) or a read.
    strobe : int
        The write's byte strobes; only :data:`ALL_BYTES` is taken.
    """
    if register_at(kind, address & ~(WORD_BYTES - 1)) is None:
        return False
    return not write or strobe == ALL_BYTES
