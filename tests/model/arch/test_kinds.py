"""model/arch: the one description of the DMA kinds, directions and element types.

Expected values are written out from docs/bd.md "Resources" and the adf type list, or
read from the BD field table (a separate statement of the same hardware), never
from the description under test.
"""

from __future__ import annotations

import doctest
import importlib

import numpy as np
import pytest

from aiedma.model.arch import dtypes, kinds
from aiedma.model.arch.directions import (
    ACCESS_NAMES,
    CHANNEL_NAMES,
    DIRECTIONS,
    READ,
    WRITE,
    check_direction,
)
from aiedma.model.arch.dtypes import (
    ELEMENT_BITS,
    ELEMENT_TYPES,
    GRAPH_DTYPES,
    element_bits,
    elements_per_word,
)
from aiedma.model.arch.kinds import DMA_KINDS, KINDS, check_kind, dma_kind
from aiedma.model.bd import fields
from aiedma.model.bd.descriptor import BufferDescriptor, check_chain
from aiedma.model.bd.task import Task
from aiedma.model.errors import AiedmaError, BDError, TilingError
from aiedma.model.system.channel import ChannelError
from aiedma.model.system.dma import DMA
from aiedma.model.system.locks import LockError

MEMTILE = DMA_KINDS["memtile"]

# --- the kinds against docs/bd.md "Resources" ----------------------------------------------


def test_kinds_in_one_order_everywhere() -> None:
    from aiedma.model.tiling import parameters

    assert KINDS == ("tile", "memtile", "shim")
    assert fields.KINDS == parameters.KINDS == KINDS


def test_resources_as_bd_md_writes_them() -> None:
    rows = {name: (k.bd_count, k.bd_halves, k.channels, k.address_dimensions,
                   k.padded_dimensions, k.padding_directions, k.locks, len(k.lock_ids),
                   k.memory_words, k.bd_register_base, k.words)
            for name, k in DMA_KINDS.items()}
    assert rows == {
        "tile": (16, 1, 2, 3, 0, (), 16, 16, 16 * 1024, 0x1D000, 6),
        "memtile": (48, 2, 6, 4, 3, (READ,), 64, 192, 128 * 1024, 0xA0000, 8),
        "shim": (16, 1, 2, 3, 0, (), 16, 16, None, 0x1D000, 8),
    }
    assert [k.bd_register(3) for k in DMA_KINDS.values()] == [0x1D060, 0xA0060, 0x1D060]


@pytest.mark.parametrize("kind", KINDS)
def test_description_agrees_with_the_field_table(kind: str) -> None:
    k, table = DMA_KINDS[kind], fields.FIELD_INDEX[kind]
    steps = [n for n in table if n.endswith("_stepsize") and n.startswith("d")]
    assert len(steps) == k.address_dimensions
    padded = {int(n[1]) for n in table if "_zero_" in n}
    assert padded == set(range(k.padded_dimensions))
    assert k.has_padding == bool(padded)
    assert table["base_address"].bits == k.address_bits
    assert table["next_bd"].maximum + 1 == k.bd_count
    assert table["lock_acq_id"].maximum + 1 == table["lock_rel_id"].maximum + 1 == len(k.lock_ids)
    assert 1 + max(s.word for f in fields.FIELDS[kind] for s in f.slices) == k.words


def test_address_bits_reach_the_memory() -> None:
    """14 bits cover the core tile's 16K words; 19 bits the memory tile's three windows."""
    tile = DMA_KINDS["tile"]
    assert 1 << tile.address_bits == tile.memory_words
    assert MEMTILE.memory_window("east").stop <= 1 << MEMTILE.address_bits
    assert MEMTILE.memory_window("east").stop > 1 << (MEMTILE.address_bits - 1)
    assert DMA_KINDS["shim"].address_bits == 48 - 2  # 48-bit byte address, word aligned


def test_windows_order_addresses_and_lock_ids() -> None:
    assert [(w, MEMTILE.memory_window(w)) for w in MEMTILE.windows] == [
        ("west", range(0x00000, 0x20000)), ("own", range(0x20000, 0x40000)),
        ("east", range(0x40000, 0x60000))]
    assert [MEMTILE.lock_window(w) for w in MEMTILE.windows] == [
        range(0, 64), range(64, 128), range(128, 192)]
    assert MEMTILE.lock_ids_text() == "lock IDs 0-63 west, 64-127 own, 128-191 east"
    assert DMA_KINDS["tile"].lock_ids_text() == "lock IDs 0-15"
    with pytest.raises(ValueError, match="external memory"):
        DMA_KINDS["shim"].memory_window("own")


def test_only_the_memory_tile_read_pads() -> None:
    assert [(k.name, d.access) for k in DMA_KINDS.values() for d in DIRECTIONS
            if k.pads(d)] == [("memtile", "read")]


# --- the BD-half rule, every channel and BD ---------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_half_rule_every_channel_and_bd(kind: str) -> None:
    k = DMA_KINDS[kind]
    for channel in range(k.channels):
        for bd_id in range(k.bd_count):
            if kind == "memtile":  # docs/bd.md: 0-23 for channels 0/2/4, 24-47 for 1/3/5
                allowed = (bd_id < 24) == (channel in (0, 2, 4))
            else:
                allowed = True
            assert (bd_id in k.channel_bds(channel)) == allowed, (channel, bd_id)


def test_the_half_a_bd_is_in_and_who_shares_it() -> None:
    for bd_id in range(48):
        assert MEMTILE.bd_half(bd_id) == (range(0, 24) if bd_id < 24 else range(24, 48))
    assert MEMTILE.half_channels(range(0, 24)) == (0, 2, 4)
    assert MEMTILE.half_channels(range(24, 48)) == (1, 3, 5)
    assert DMA_KINDS["shim"].bd_half(15) == range(16)
    assert DMA_KINDS["tile"].half_channels(range(16)) == (0, 1)


def test_half_rule_error_names_field_value_and_the_half() -> None:
    MEMTILE.check_bd_in_half(BDError, "next_bd", 23, range(0, 24), "x")  # inside: no error
    with pytest.raises(BDError, match=r"^next_bd=24: BD 3 is in 0-23 \(shared by channels "
                                      r"0/2/4 of both directions\)$"):
        MEMTILE.check_bd_in_half(BDError, "next_bd", 24, MEMTILE.bd_half(3), "BD 3 is in")


def test_chain_check_follows_the_half_rule_for_every_pair() -> None:
    """check_chain (bd layer) agrees with the rule for all 48 x 48 memory-tile pairs."""
    base = BufferDescriptor("memtile", use_next_bd=1)
    for next_bd in range(48):
        bd = base.replace(next_bd=next_bd)
        for bd_id in range(48):
            if (bd_id < 24) == (next_bd < 24):
                check_chain("memtile", bd_id, bd)
            else:
                with pytest.raises(BDError, match=r"^next_bd=\d+: a memory-tile chain stays"):
                    check_chain("memtile", bd_id, bd)


def test_channel_push_follows_the_half_rule_for_every_pair() -> None:
    """Channel.push (system layer) agrees with the rule for every channel and start BD."""
    for direction in CHANNEL_NAMES:
        for channel in range(6):
            for start in range(48):
                ch = DMA("memtile").channel(direction, channel)
                if (start < 24) == (channel % 2 == 0):
                    ch.push(Task(start))
                else:
                    with pytest.raises(ChannelError, match=rf"^start_bd={start}: channel "):
                        ch.push(Task(start))


# --- kind and direction checks -----------------------------------------------------------


@pytest.mark.parametrize("error", [AiedmaError, BDError, TilingError, ChannelError, LockError])
@pytest.mark.parametrize("bad", ["core", "", None, 3, "Tile"])
def test_check_kind_names_field_value_and_kinds(error, bad) -> None:
    with pytest.raises(error, match=r"^kind=.*: must be one of tile, memtile, shim$"):
        check_kind(bad, error)


def test_every_layer_uses_the_one_kind_check() -> None:
    from aiedma.hdl.layouts import check_kind as hdl_check_kind
    from aiedma.model.system.locks import LockTable, lock_space
    from aiedma.model.tiling.parameters import TilingParameters

    assert hdl_check_kind is check_kind
    message = r"^kind='core': must be one of tile, memtile, shim$"
    for action, error in [
        (lambda: BufferDescriptor("core"), BDError),
        (lambda: TilingParameters(buffer_dimension=[4]).validate("core"), TilingError),
        (lambda: DMA("core"), ChannelError),
        (lambda: lock_space("core", "x", LockTable("t", 16)), LockError),
        (lambda: hdl_check_kind("core"), ValueError),
    ]:
        with pytest.raises(error, match=message):
            action()
    assert dma_kind("shim") is DMA_KINDS["shim"]


def test_directions_map_both_vocabularies() -> None:
    assert (READ.access, READ.channel, READ.title) == ("read", "mm2s", "MM2S")
    assert (WRITE.access, WRITE.channel, WRITE.title) == ("write", "s2mm", "S2MM")
    assert ACCESS_NAMES == ("read", "write") and CHANNEL_NAMES == ("mm2s", "s2mm")
    for d in DIRECTIONS:
        assert check_direction(d.access, "access") is d
        assert check_direction(d.channel, "channel") is d
    with pytest.raises(TilingError, match=r"^direction='s2mm': must be one of read, write "
                                          r"\(read = MM2S .*write = S2MM"):
        check_direction("s2mm", "access", TilingError)
    with pytest.raises(ChannelError, match=r"^direction='read': must be one of mm2s, s2mm"):
        check_direction("read", "channel", ChannelError)


# --- element types --------------------------------------------------------------------


def test_element_types_as_adf_names_them() -> None:
    assert ELEMENT_BITS == {
        "int4": 4, "uint4": 4, "int8": 8, "uint8": 8, "int16": 16, "uint16": 16,
        "bfloat16": 16, "int32": 32, "uint32": 32, "float": 32, "cint16": 32,
        "int64": 64, "uint64": 64, "cint32": 64, "cfloat": 64,
    }
    assert [elements_per_word(t) for t in ("int4", "int8", "bfloat16", "cint16", "int64")] == [
        8, 4, 2, 1, 0]
    with pytest.raises(TilingError, match=r"^dtype='int12': must be one of int4, "):
        element_bits("int12")


def test_graph_types_are_the_table_rows_with_a_numpy_type() -> None:
    from aiedma.model.system import kernel

    assert list(GRAPH_DTYPES) == ["int32", "uint32", "float", "int16", "uint16", "int8", "uint8"]
    for name, np_type in GRAPH_DTYPES.items():
        assert np.dtype(np_type).itemsize * 8 == ELEMENT_TYPES[name].bits
        assert elements_per_word(name) == 4 // np.dtype(np_type).itemsize
    assert kernel.GRAPH_DTYPES is GRAPH_DTYPES
    assert kernel.elements_per_word is elements_per_word


@pytest.mark.parametrize("module", [dtypes, kinds, "aiedma.model.arch.directions"])
def test_docstring_examples(module) -> None:
    if isinstance(module, str):
        module = importlib.import_module(module)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
