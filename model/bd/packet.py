"""Packet headers of packet-switched AIE-ML streams (docs/bd.md "Packets").

Header layout (32 bits): ``4:0`` packet ID, ``10:5`` out-of-order BD ID, ``14:12``
packet type, ``20:16`` source row, ``27:21`` source column, ``31`` odd parity; every
other bit is 0. Bit 31 makes the number of ones in the word odd.

Decisions (docs/bd.md is silent):

* **decision**: a row or column of ``-1`` (the programmable-logic convention) is
  accepted on input and means all ones in the field; parsing returns the field as
  it is (31 for the row, 127 for the column), because the header cannot tell "-1"
  from a real tile at that position.
* **decision**: :func:`odd_parity` takes the low 31 bits only; a set bit 31 on input
  is an error rather than silently replaced.
* **decision**: the out-of-order BD ID (AM025's BD field ``Out_Of_Order_BD_ID``, 6 bits,
  "inserted ... in packet header", MM2S only) sits in bits ``10:5``. AMD publishes the
  BD field and that an out-of-order S2MM picks its BD from the header, but not where in
  the header; UG1603 shows bits ``11:5`` as zero, the only free run wide enough (the
  others are bit 15 and bits ``30:28``). A guess, stated as one (docs/decisions.md).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import Hex, PacketError, field_error

__all__ = ["HEADER_FIELDS", "PARITY_BIT", "PacketHeader", "bad_parity", "check_place",
           "odd_parity", "packet_header", "parse_packet_header"]

# (name, lsb, bits) of each header field.
_LAYOUT: tuple[tuple[str, int, int], ...] = (
    ("packet_id", 0, 5),
    ("out_of_order_bd_id", 5, 6),
    ("packet_type", 12, 3),
    ("source_row", 16, 5),
    ("source_column", 21, 7),
)
_PARITY_BIT = 31

HEADER_FIELDS = _LAYOUT
"""``(name, lsb, bits)`` of each header field (the RTL builds its header word from it)."""

PARITY_BIT = _PARITY_BIT
"""The header's odd-parity bit."""
_USED = (1 << _PARITY_BIT) | sum(((1 << bits) - 1) << lsb for _, lsb, bits in _LAYOUT)
_RESERVED = ~_USED & 0xFFFF_FFFF
_ALL_ONES_OK = ("source_row", "source_column")


def check_place(column: int, row: int, error: type[Exception] = PacketError) -> None:
    """A tile's ``column`` and ``row`` as its packet headers carry them
    (``source_column``, ``source_row``), else an error naming the field and the range.

    Examples
    --------
    >>> check_place(40, 31)
    >>> check_place(3, 32)
    Traceback (most recent call last):
    ...
    aiedma.model.errors.PacketError: row=32: must be in 0..31
    """
    for name, value in (("column", column), ("row", row)):
        bits = next(b for field, _, b in _LAYOUT if field == f"source_{name}")
        if not 0 <= value < 1 << bits:
            raise field_error(error, name, value, f"must be in 0..{(1 << bits) - 1}")


def _field_value(name: str, value: object, bits: int) -> int:
    """Check one header field; ``-1`` for row/column becomes all ones."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | np.integer):
        raise field_error(PacketError, name, value, "must be an integer")
    value = int(value)
    top = (1 << bits) - 1
    if value == -1 and name in _ALL_ONES_OK:
        return top
    if not 0 <= value <= top:
        extra = " (or -1 for all ones)" if name in _ALL_ONES_OK else ""
        raise field_error(PacketError, name, value, f"must be in 0..{top}{extra}")
    return value


def odd_parity(low31: int) -> int:
    """The 32-bit word of ``low31`` with bit 31 set so that its number of ones is odd.

    Examples
    --------
    >>> hex(odd_parity(0x3)), hex(odd_parity(0x1))
    ('0x80000003', '0x1')
    """
    if isinstance(low31, bool | np.bool_) or not isinstance(low31, int | np.integer):
        raise field_error(PacketError, "low31", low31, "must be an integer")
    low31 = int(low31)
    if not 0 <= low31 < 1 << _PARITY_BIT:
        raise field_error(PacketError, "low31", low31, "must be in 0..2^31-1 (bit 31 is parity)")
    even = low31.bit_count() % 2 == 0
    return low31 | (int(even) << _PARITY_BIT)


def bad_parity(word: int) -> bool:
    """A 32-bit header word with an even number of ones (headers carry odd parity)."""
    return int(word).bit_count() % 2 == 0


@dataclass(frozen=True)
class PacketHeader:
    """The fields of a packet header.

    Attributes
    ----------
    packet_id : int
        0..31, the ID ``pktsplit`` routes by.
    packet_type : int
        0..7.
    source_row, source_column : int
        0..31 and 0..127; ``-1`` on input means all ones (programmable logic).
    out_of_order_bd_id : int
        0..63, the BD an out-of-order S2MM writes the packet with (the sending BD's
        ``out_of_order_bd_id``).
    """

    packet_id: int
    packet_type: int = 0
    source_row: int = 0
    source_column: int = 0
    out_of_order_bd_id: int = 0

    def __post_init__(self) -> None:
        for name, _, bits in _LAYOUT:
            # Frozen: normalise -1 to all ones through object.__setattr__.
            object.__setattr__(self, name, _field_value(name, getattr(self, name), bits))

    @property
    def word(self) -> int:
        """The 32-bit header word, parity included."""
        low = 0
        for name, lsb, _ in _LAYOUT:
            low |= getattr(self, name) << lsb
        return odd_parity(low)


def packet_header(packet_id: int, packet_type: int, source_row: int, source_column: int,
                  out_of_order_bd_id: int = 0) -> int:
    """The 32-bit packet header word (docs/bd.md "Packets").

    Parameters
    ----------
    packet_id : int
        0..31.
    packet_type : int
        0..7.
    source_row : int
        0..31, or -1 for all ones.
    source_column : int
        0..127, or -1 for all ones.
    out_of_order_bd_id : int, optional
        0..63.

    Raises
    ------
    PacketError
        If a field is not an integer or out of range.

    Examples
    --------
    >>> hex(packet_header(1, 1, 1, 1))
    '0x80211001'
    >>> hex(packet_header(1, 1, 1, 1, out_of_order_bd_id=5))
    '0x802110a1'
    """
    return PacketHeader(packet_id, packet_type, source_row, source_column,
                        out_of_order_bd_id).word


def parse_packet_header(word: int, *, check: bool = True) -> PacketHeader:
    """The fields of a header word.

    Parameters
    ----------
    word : int
    check : bool, optional
        Refuse a reserved bit set or bad parity (default). Without it the fields are
        read as a receiving channel's hardware reads them, whatever the other bits
        hold (:func:`bad_parity` tells the caller).

    Raises
    ------
    PacketError
        If ``word`` is not a 32-bit unsigned integer or, with ``check``, has a reserved
        bit set or an even number of ones (bad parity).
    """
    if isinstance(word, bool | np.bool_) or not isinstance(word, int | np.integer):
        raise field_error(PacketError, "word", word, "must be an integer")
    word = int(word)
    if not 0 <= word <= 0xFFFF_FFFF:
        raise field_error(PacketError, "word", word, "must be a 32-bit unsigned integer")
    bad = word & _RESERVED if check else 0
    if bad:
        bits = ", ".join(str(b) for b in range(31, -1, -1) if bad >> b & 1)
        raise field_error(PacketError, "word", Hex(word),
                          f"reserved bit(s) {bits} of a packet header must be 0")
    if check and bad_parity(word):
        raise field_error(PacketError, "word", Hex(word),
                          "bad parity: a header must have an odd number of ones")
    values = {name: word >> lsb & ((1 << bits) - 1) for name, lsb, bits in _LAYOUT}
    return PacketHeader(**values)
