"""Register-write programs of lowered ports: written out, read back, replayed."""

import numpy as np
import pytest

from aiedma.model.arch.kinds import BD_REGISTER_STRIDE, DMA_KINDS
from aiedma.model.arch.registers import start_queue_address
from aiedma.model.bd.lower import lower
from aiedma.model.system.dma import DMA
from aiedma.model.system.registers import (
    RegisterError,
    apply_writes,
    channel_words,
    lowered_writes,
    read_writes_document,
    writes_document,
)
from aiedma.model.tiling.parameters import TilingParameters

PADDED = TilingParameters.from_dict(
    {"buffer_dimension": [13], "tiling_dimension": [16], "offset": [-2]})
TILES = TilingParameters.from_dict(
    {"buffer_dimension": [8, 4], "tiling_dimension": [4, 2],
     "tile_traversal": [{"dimension": 1, "stride": 2, "wrap": 2},
                        {"dimension": 0, "stride": 4, "wrap": 2}]})


@pytest.mark.parametrize("kind, direction, tiling, channel, first_bd", [
    ("memtile", "read", PADDED, 3, 26),
    ("tile", "write", TILES, 1, 2),
    ("memtile", "write", TILES, 4, 2),
])
def test_lowered_writes_load_the_bds_and_push_the_task(kind, direction, tiling, channel,
                                                        first_bd):
    lowered = lower(tiling, kind, direction, base_address=64, first_bd=first_bd)
    writes = lowered_writes(lowered, channel)
    base = DMA_KINDS[kind].bd_register_base
    assert writes[0][0] == base + first_bd * BD_REGISTER_STRIDE
    queue = start_queue_address(kind, "mm2s" if direction == "read" else "s2mm", channel)
    assert writes[-1] == (queue, lowered.task.encode())
    dma = DMA(kind, 0, 1)
    apply_writes(dma, writes)
    assert {n: dma.bds[n] for n in lowered.table()} == lowered.table()
    name = f"{'mm2s' if direction == 'read' else 's2mm'}{channel}"
    assert list(dma.channel(name[:4], channel).queue) == [lowered.task]
    assert channel_words(kind, writes) == {name: lowered.word_stream().size}


def test_the_document_round_trips():
    lowered = lower(TILES, "tile", "read", base_address=8)
    writes = lowered_writes(lowered)
    document = writes_document("tile", writes)
    assert document["writes"][0] == [f"0x{writes[0][0]:05X}", f"0x{writes[0][1]:08X}"]
    assert read_writes_document(document) == ("tile", writes)
    # Integers are taken as well as hex strings.
    assert read_writes_document({"kind": "tile", "writes": [list(w) for w in writes]}) == (
        "tile", writes)


@pytest.mark.parametrize("document, message", [
    ([], "document='list': must be an object"),
    ({"kind": "core", "writes": []}, "kind='core': must be one of tile, memtile, shim"),
    ({"kind": "tile"}, "writes='NoneType': must be a list of [address, value] pairs"),
    ({"kind": "tile", "writes": [[1, 2, 3]]}, "writes[0]=[1, 2, 3]: must be a pair"),
    ({"kind": "tile", "writes": [["0x1D000", "x"]]},
     "writes[0] value='x': must be an integer or a hex string (0x...)"),
    ({"kind": "tile", "writes": [[True, 0]]},
     "writes[0] address=True: must be an integer or a hex string"),
])
def test_a_bad_document_names_the_entry(document, message):
    with pytest.raises(RegisterError) as error:
        read_writes_document(document)
    assert message in str(error.value)


def test_a_channel_outside_the_first_bds_half_is_refused():
    with pytest.raises(Exception) as error:
        lowered_writes(lower(PADDED, "memtile", "read"), channel=1)
    assert str(error.value) == ("start_bd=0: MM2S channel 1 runs BDs 24-47 (shared by "
                                "channels 1/3/5 of both directions)")


def test_shim_writes_use_its_own_register_map():
    lowered = lower(TILES, "shim", "read")
    writes = lowered_writes(lowered, channel=1)
    bd_words = [address for address, _ in writes[:-1]]
    assert bd_words[0] == 0x1D000 and len(bd_words) == 8 * len(lowered.bds)
    assert writes[-1] == (0x1D21C, lowered.task.encode())   # MM2S 1's task queue
    assert channel_words("shim", writes) == {"mm2s1": lowered.word_stream().size}


def test_channel_words_follow_repeats_and_every_channel():
    lowered = lower(PADDED, "memtile", "read")
    writes = lowered_writes(lowered, 0) + lowered_writes(lowered, 2)
    writes.append(writes[-1])  # the same task pushed twice onto channel 2
    counts = channel_words("memtile", writes)
    assert counts == {"mm2s0": 16, "mm2s2": 32}
    assert np.array_equal(lowered.word_stream()[[0, 1, -1]], [-1, -1, -1])
