"""Packet headers and odd parity (docs/bd.md "Packets")."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from vectors import load

from aiedma.model.bd.packet import PacketHeader, odd_parity, packet_header, parse_packet_header
from aiedma.model.errors import PacketError

HARDWARE = load("hardware.json")


@pytest.mark.parametrize("case", HARDWARE["packet_header"], ids=lambda c: c["word"])
def test_header_vectors(case: dict) -> None:
    fields = (case["packet_id"], case["packet_type"], case["source_row"], case["source_column"])
    word = int(case["word"], 16)
    assert packet_header(*fields) == word
    parsed = parse_packet_header(word)
    assert (parsed.packet_id, parsed.packet_type, parsed.source_row,
            parsed.source_column) == fields


@pytest.mark.parametrize("case", HARDWARE["odd_parity"], ids=lambda c: c["low31"])
def test_odd_parity_vectors(case: dict) -> None:
    assert odd_parity(int(case["low31"], 16)) == int(case["word"], 16)


def test_field_positions_by_hand() -> None:
    # 4:0 id, 14:12 type, 20:16 row, 27:21 column; parity added where the count is even.
    assert packet_header(31, 0, 0, 0) == 0x0000_001F          # five ones: odd
    assert packet_header(0, 7, 0, 0) == 0x0000_7000           # three ones: odd
    assert packet_header(0, 0, 31, 0) == 0x001F_0000          # five ones
    assert packet_header(0, 0, 0, 127) == 0x0FE0_0000         # seven ones
    assert packet_header(3, 0, 0, 0) == 0x8000_0003           # two ones: parity set
    assert packet_header(0, 0, 0, 3) == 0x8060_0000


def test_out_of_order_bd_id_in_bits_10_to_5() -> None:
    assert packet_header(0, 0, 0, 0, out_of_order_bd_id=1) == 0x0000_0020
    assert packet_header(0, 0, 0, 0, out_of_order_bd_id=63) == 0x8000_07E0   # six ones
    word = packet_header(7, 2, 3, 4, out_of_order_bd_id=42)
    assert word & 0x7FF == 42 << 5 | 7
    assert parse_packet_header(word) == PacketHeader(7, 2, 3, 4, out_of_order_bd_id=42)
    # the ID leaves every other field as it was
    assert word & ~0x7E0 & 0x7FFF_FFFF == packet_header(7, 2, 3, 4) & 0x7FFF_FFFF


@settings(max_examples=200, deadline=None)
@given(pid=st.integers(0, 31), ooo=st.integers(0, 63), col=st.integers(0, 127))
def test_round_trip_with_out_of_order_bd_id(pid: int, ooo: int, col: int) -> None:
    word = packet_header(pid, 1, 2, col, out_of_order_bd_id=ooo)
    assert bin(word).count("1") % 2 == 1
    assert parse_packet_header(word).out_of_order_bd_id == ooo


@pytest.mark.parametrize("value", [64, -1, True])
def test_out_of_order_bd_id_errors(value: object) -> None:
    with pytest.raises(PacketError, match=rf"^out_of_order_bd_id={value}: must be "):
        packet_header(0, 0, 0, 0, out_of_order_bd_id=value)  # type: ignore[arg-type]


def test_minus_one_means_all_ones() -> None:
    word = packet_header(0, 0, -1, -1)
    assert word == packet_header(0, 0, 31, 127)
    # 5 + 7 = 12 ones in the fields: even, so the parity bit is set.
    assert word == 0x8FFF_0000
    assert bin(word).count("1") % 2 == 1
    header = parse_packet_header(word)
    assert (header.source_row, header.source_column) == (31, 127)


@settings(max_examples=300, deadline=None)
@given(pid=st.integers(0, 31), ptype=st.integers(0, 7), row=st.integers(-1, 31),
       col=st.integers(-1, 127))
def test_round_trip_and_parity(pid: int, ptype: int, row: int, col: int) -> None:
    word = packet_header(pid, ptype, row, col)
    assert 0 <= word < 1 << 32
    assert bin(word).count("1") % 2 == 1
    assert parse_packet_header(word) == PacketHeader(pid, ptype, row % 32, col % 128)


@settings(max_examples=200, deadline=None)
@given(low=st.integers(0, (1 << 31) - 1))
def test_odd_parity_property(low: int) -> None:
    word = odd_parity(low)
    assert word & 0x7FFF_FFFF == low
    assert bin(word).count("1") % 2 == 1


@pytest.mark.parametrize(("args", "match"), [
    ((32, 0, 0, 0), r"^packet_id=32: must be in 0\.\.31$"),
    ((-1, 0, 0, 0), r"^packet_id=-1: must be in 0\.\.31$"),
    ((0, 8, 0, 0), r"^packet_type=8: must be in 0\.\.7$"),
    ((0, 0, 32, 0), r"^source_row=32: must be in 0\.\.31 \(or -1 for all ones\)$"),
    ((0, 0, -2, 0), r"^source_row=-2: must be in 0\.\.31"),
    ((0, 0, 0, 128), r"^source_column=128: must be in 0\.\.127"),
    ((True, 0, 0, 0), r"^packet_id=True: must be an integer$"),
    ((0, 1.0, 0, 0), r"^packet_type=1\.0: must be an integer$"),
])
def test_header_field_errors(args: tuple, match: str) -> None:
    with pytest.raises(PacketError, match=match):
        packet_header(*args)


def test_odd_parity_errors() -> None:
    with pytest.raises(PacketError, match=r"^low31=2147483648: must be in 0\.\.2\^31-1"):
        odd_parity(1 << 31)
    with pytest.raises(PacketError, match=r"^low31=-1: must be in"):
        odd_parity(-1)
    with pytest.raises(PacketError, match=r"^low31=1\.0: must be an integer"):
        odd_parity(1.0)


@pytest.mark.parametrize("word", [0x8000_0001, 0x0000_0000, 0x8021_1000])
def test_parse_bad_parity(word: int) -> None:
    with pytest.raises(PacketError, match=rf"^word=0x{word:08X}: bad parity"):
        parse_packet_header(word)


@pytest.mark.parametrize(("word", "bits"), [
    (0x0000_0800, "11"),         # 11 reserved (10:5 is the out-of-order BD ID)
    (0x0000_8000, "15"),         # 15 reserved
    (0x1000_0000, "28"),         # 30:28 reserved
    (0x4000_0000, "30"),         # odd count (parity fine), bit 30 reserved
])
def test_parse_reserved_bits(word: int, bits: str) -> None:
    with pytest.raises(PacketError, match=rf"^word=0x{word:08X}: reserved bit\(s\) {bits} "):
        parse_packet_header(word)


@pytest.mark.parametrize("word", [-1, 1 << 32, 1.0, True])
def test_parse_not_a_word(word: object) -> None:
    with pytest.raises(PacketError, match=r"^word="):
        parse_packet_header(word)  # type: ignore[arg-type]

