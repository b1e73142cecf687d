"""Memories and address spaces: sizes, memory-tile windows, bounds errors with context."""

import re

import numpy as np
import pytest

from aiedma.model import BufferDescriptor, Task
from aiedma.model.system.dma import DMA
from aiedma.model.system.memory import (
    CORE_TILE_WORDS,
    MEMORY_TILE_WINDOWS,
    MEMORY_TILE_WORDS,
    AddressSpace,
    Memory,
    MemoryAccessError,
    Window,
    core_tile_space,
    memory_tile_space,
    shim_space,
)
from aiedma.model.system.scheduler import run_system
from aiedma.model.system.stream import Stream, StreamSink, StreamSource


def test_sizes_follow_bd_md():
    assert CORE_TILE_WORDS == 16 * 1024  # 64 KB, 14-bit word address
    assert MEMORY_TILE_WORDS == 128 * 1024  # 512 KB
    # docs/bd.md gives the windows in bytes: 0x00000, 0x80000, 0x100000.
    assert {k: v * 4 for k, v in MEMORY_TILE_WINDOWS.items()} == {
        "west": 0x00000, "own": 0x80000, "east": 0x100000}


def test_words_round_trip_and_signed_values_are_twos_complement():
    m = Memory("m", 4)
    m.write(0, 0xFFFF_FFFF)
    m.write(1, -2)
    assert m.read(0) == 0xFFFF_FFFF
    assert m.read(1) == 0xFFFF_FFFE
    m.load(2, [5, -1])
    assert m.dump(0, 4).tolist() == [0xFFFF_FFFF, 0xFFFF_FFFE, 5, 0xFFFF_FFFF]


@pytest.mark.parametrize("value", [1 << 32, -(1 << 31) - 1])
def test_a_value_wider_than_a_word_is_an_error(value):
    with pytest.raises(MemoryAccessError, match=rf"^value={value}: a 32-bit word is"):
        Memory("m", 4).write(0, value)
    with pytest.raises(MemoryAccessError, match=rf"^value={value}: a 32-bit word is"):
        Memory("m", 4).load(0, [0, value])


@pytest.mark.parametrize("offset", [-1, 4])
def test_access_outside_a_memory_names_the_address_and_context(offset):
    m = Memory("scratch", 4)
    where = "channel tile(0,2).mm2s1, BD 7"
    message = rf"^address={offset}: outside scratch \(words 0..3\); {re.escape(where)}$"
    for access in (lambda: m.read(offset, where), lambda: m.write(offset, 1, where),
                   lambda: m.load(offset, [1], where), lambda: m.dump(offset, 1, where)):
        with pytest.raises(MemoryAccessError, match=message):
            access()


def test_bulk_access_checks_its_last_word():
    with pytest.raises(MemoryAccessError, match=r"^address=4: outside m"):
        Memory("m", 4).load(2, [1, 2, 3])
    with pytest.raises(MemoryAccessError, match=r"^address=4: outside m"):
        Memory("m", 4).dump(3, 2)


def test_memory_size_must_be_positive():
    with pytest.raises(MemoryAccessError, match=r"^words=0: the size of m must be a positive"):
        Memory("m", 0)


def test_core_tile_space_is_its_data_memory():
    space = core_tile_space("tile(0,2)")
    space.write(CORE_TILE_WORDS - 1, 9)
    assert space.read(CORE_TILE_WORDS - 1) == 9
    with pytest.raises(MemoryAccessError, match=r"^address=16384: outside every window of "
                                                r"tile\(0,2\) \(own 0..16383\)"):
        space.read(CORE_TILE_WORDS)
    with pytest.raises(MemoryAccessError, match=r"^words=8: a core-tile data memory has 16384"):
        core_tile_space("t", Memory("small", 8))


def test_memory_tile_windows_route_to_the_neighbours():
    west, own, east = (Memory(n, MEMORY_TILE_WORDS) for n in ("west", "own", "east"))
    space = memory_tile_space("memtile(1,1)", own, west, east)
    cases = {0: (west, 0), 0x1FFFF: (west, 0x1FFFF), 0x20000: (own, 0), 0x20005: (own, 5),
             0x3FFFF: (own, 0x1FFFF), 0x40000: (east, 0), 0x5FFFF: (east, 0x1FFFF)}
    for address, (memory, offset) in cases.items():
        got, got_offset = space.resolve(address)
        assert got is memory and got_offset == offset
    # Past the east window the 19-bit address reaches nothing.
    with pytest.raises(MemoryAccessError, match=r"^address=393216: outside every window of "
                                                r"memtile\(1,1\) \(west 0..131071, own "):
        space.read(0x60000, "channel memtile(1,1).mm2s0, BD 2")


def test_neighbours_share_memory_objects():
    a, b = Memory("a", MEMORY_TILE_WORDS), Memory("b", MEMORY_TILE_WORDS)
    space_a = memory_tile_space("memtile(0,1)", a, east=b)
    space_b = memory_tile_space("memtile(1,1)", b, west=a)
    space_a.write(MEMORY_TILE_WINDOWS["east"] + 3, 42)  # a writes into b
    assert space_b.read(MEMORY_TILE_WINDOWS["own"] + 3) == 42
    assert b.read(3) == 42


def test_a_missing_neighbour_is_unmapped():
    space = memory_tile_space("memtile(0,1)")
    with pytest.raises(MemoryAccessError, match=r"^address=5: the west window of memtile\(0,1\) "
                                                r"\(0..131071\) has no memory; channel x, BD 1"):
        space.read(5, "channel x, BD 1")


def test_shim_external_memory_at_a_base():
    ddr = Memory("ddr", 100)
    space = shim_space("shim(0,0)", ddr, base_address=1000)
    space.write(1099, 7)
    assert ddr.read(99) == 7
    for address in (999, 1100):
        with pytest.raises(MemoryAccessError, match=rf"^address={address}: outside every window"):
            space.read(address)
    with pytest.raises(MemoryAccessError, match=r"^base_address=-1: external memory starts"):
        shim_space("s", ddr, -1)


def test_overlapping_windows_are_refused():
    m = Memory("m", 8)
    with pytest.raises(MemoryAccessError, match=r"^windows=\['a', 'b'\]: windows of x overlap"):
        AddressSpace("x", [Window("a", 0, 8, m), Window("b", 4, 8, m)])


def test_a_channel_reading_past_its_memory_names_channel_bd_and_address():
    dma = DMA("tile", 0, 2)
    dma.write_bd(3, BufferDescriptor("tile", base_address=CORE_TILE_WORDS - 2, buffer_length=4,
                                     valid_bd=1))
    stream = Stream("out")
    dma.mm2s[1].connect(stream).push(Task(3))
    with pytest.raises(MemoryAccessError,
                       match=r"^address=16385: past the 14-bit address space of a tile DMA .*; "
                             r"channel tile\(0,2\)\.mm2s1, BD 3$"):
        run_system([dma.mm2s[1], StreamSink("sink", stream)])


def test_a_shim_channel_writing_outside_external_memory_is_an_error():
    ddr = Memory("ddr", 16)
    dma = DMA("shim", 0, 0, memory=shim_space("shim(0,0)", ddr))
    dma.write_bd(0, BufferDescriptor("shim", base_address=14, buffer_length=4, valid_bd=1))
    stream = Stream("in")
    dma.s2mm[0].connect(stream).push(Task(0))
    with pytest.raises(MemoryAccessError, match=r"^address=16: .*; channel shim\(0,0\)\.s2mm0, "
                                                r"BD 0$"):
        run_system([StreamSource("src", stream, range(4)), dma.s2mm[0]])
    assert ddr.dump(14, 2).tolist() == [0, 1], "the words inside were written"
    assert np.all(ddr.data[:14] == 0)


def test_a_neighbour_must_be_a_memory_tile():
    with pytest.raises(MemoryAccessError, match=r"^words=8: the east memory tile has 131072 "
                                                r"words \(small\)"):
        memory_tile_space("memtile(0,1)", east=Memory("small", 8))
