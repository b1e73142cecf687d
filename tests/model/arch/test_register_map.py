"""The register map (model/arch/register_map.py): one table, the addresses of registers.py."""

import pytest

from aiedma.model.arch.kinds import DMA_KINDS, KINDS
from aiedma.model.arch.register_map import (
    ALL_BYTES,
    ROLES,
    RegisterBlock,
    access_taken,
    register_at,
    register_blocks,
    register_span,
    registers,
)
from aiedma.model.arch.registers import (
    FOT_COUNT_BASE,
    control_address,
    fot_count_address,
    lock_value_address,
    start_queue_address,
    status_address,
    write_count_address,
)
from aiedma.model.errors import AiedmaError


@pytest.mark.parametrize("kind", KINDS)
def test_every_register_is_found_at_its_address_and_none_overlap(kind):
    found = registers(kind)
    assert len({r.address for r in found}) == len(found)
    for r in found:
        assert register_at(kind, r.address) == r
        assert register_at(kind, r.address + 1) is None     # registers are aligned words


@pytest.mark.parametrize("kind", KINDS)
def test_the_map_holds_the_address_functions_registers(kind):
    dma = DMA_KINDS[kind]
    expected = {dma.bd_register(n) + 4 * w: ("bd", n, w, None)
                for n in range(dma.bd_count) for w in range(dma.words)}
    for d in ("mm2s", "s2mm"):
        for c in range(dma.channels):
            expected[start_queue_address(kind, d, c)] = ("start_queue", c, 0, d)
            expected[control_address(kind, d, c)] = ("control", c, 0, d)
            expected[status_address(kind, d, c)] = ("status", c, 0, d)
    for lock in range(dma.locks):
        expected[lock_value_address(kind, lock)] = ("lock_value", lock, 0, None)
    if kind in FOT_COUNT_BASE:   # the S2MM count FIFO pop registers (none on the shim)
        for c in range(dma.channels):
            expected[fot_count_address(kind, c)] = ("fot_count", c, 0, "s2mm")
    for c in range(dma.channels):   # Current_Write_Count, every kind
        expected[write_count_address(kind, c)] = ("write_count", c, 0, "s2mm")
    assert {r.address: (r.role, r.index, r.word, r.direction)
            for r in registers(kind)} == expected


@pytest.mark.parametrize(("kind", "channel", "address"), [
    ("tile", 0, 0x1DF18), ("tile", 1, 0x1DF1C), ("memtile", 0, 0xA06B0),
    ("memtile", 5, 0xA06C4), ("shim", 1, 0x1D234),
])
def test_current_write_count_is_at_aie_rts_addresses_and_read_only(kind, channel, address):
    """aie-rt's XAIEMLGBL_{MEMORY,MEM_TILE,NOC}_MODULE_DMA_S2MM_CURRENT_WRITE_COUNT_n."""
    assert write_count_address(kind, channel) == address
    found = register_at(kind, address)
    assert (found.role, found.index, found.readable, found.writable) == (
        "write_count", channel, True, False)


@pytest.mark.parametrize("kind", KINDS)
def test_the_gaps_between_registers_are_unmapped(kind):
    mapped = {r.address for r in registers(kind)}
    top = 1 << register_span(kind)
    for address in range(0, top, 4):
        assert (register_at(kind, address) is not None) == (address in mapped)


def test_the_bus_rule():
    address = lock_value_address("tile", 3)
    assert access_taken("tile", address, write=True)
    assert access_taken("tile", address + 2, write=False)      # low bits dropped
    assert not access_taken("tile", address, write=True, strobe=0x7)
    assert access_taken("tile", address, write=False, strobe=0x1)  # a read has no strobes
    assert not access_taken("tile", address + 4, write=False)
    assert access_taken("tile", status_address("tile", "mm2s", 1), write=True, strobe=ALL_BYTES)


def test_roles_and_blocks_are_checked():
    assert {r.name for r in ROLES} == {b.role for k in KINDS for b in register_blocks(k)}
    with pytest.raises(AiedmaError, match="stride=24"):
        RegisterBlock("bd", 0x1000, 2, 24, words=6)
    with pytest.raises(AiedmaError, match="role='dma_control'"):
        RegisterBlock("dma_control", 0x1000, 2, 8)
