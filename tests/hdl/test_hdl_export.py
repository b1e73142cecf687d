# amaranth: UnusedElaboratable=no
# (a component whose __init__ refuses its kind still exists for a moment; Amaranth
# would warn that it was never elaborated)
"""The tops' table and the options of their blocks. That every top converts to Verilog
with the ports its docs name is checked by ``make verilog``'s test
(tests/flows/test_verilog.py), which exports and lints each once."""

from __future__ import annotations

import pytest

from aiedma.hdl.axi_dma import AXIDMA
from aiedma.hdl.dma import DMA
from aiedma.hdl.export import TOPS, export_verilog
from aiedma.model.bd.fields import KINDS


def test_every_block_and_kind_is_a_top():
    blocks = ("addrgen", "mm2s", "s2mm", "mm2s_channel", "s2mm_channel", "axi_lite")
    whole = {f"aiedma_{d}_dma_channel_{kind}" for d in ("mm2s", "s2mm") for kind in KINDS}
    dmas = {f"aiedma_{dma}_{kind}" for dma in ("dma", "axi_dma") for kind in KINDS}
    lite = {f"{top}_nocompress" for top in whole | dmas
            if top.endswith(("_tile", "_memtile")) and "axi_dma" not in top}
    inside = {"aiedma_axi_dma_tile_mem", "aiedma_axi_dma_memtile_mem"}
    assert set(TOPS) == ({f"aiedma_{block}_{kind}" for block in blocks for kind in KINDS}
                         | whole | dmas | lite | inside)


@pytest.mark.parametrize("direction", ["mm2s", "s2mm"])
def test_a_channel_without_compressors_has_none_and_no_enable_port(direction):
    name = f"aiedma_{direction}_dma_channel_tile"
    block = {"mm2s": "compressor", "s2mm": "decompressor"}[direction]
    full, lite = TOPS[name](), TOPS[f"{name}_nocompress"]()
    assert "compression" in full.signature.members
    assert "compression" not in lite.signature.members
    assert f".{block}" in export_verilog(name, full)
    assert f".{block}" not in export_verilog(name, lite)


@pytest.mark.parametrize("block", ["addrgen", "mm2s", "s2mm", "mm2s_channel", "s2mm_channel"])
def test_every_block_names_a_bad_kind(block):
    make = TOPS[f"aiedma_{block}_tile"].__defaults__[0]  # the block's class
    with pytest.raises(ValueError, match=r"^kind='core': must be one of tile, memtile, shim$"):
        make("core")


def test_the_axi_dma_passes_the_option_to_its_dma():
    from amaranth.hdl import Fragment

    from aiedma.hdl.axi_dma import AXIDMA
    from aiedma.hdl.dma import DMA
    for compression in (True, False):
        # Elaborated whole (so no part is left unused), then its DMA looked up.
        top = Fragment.get(AXIDMA("tile", compression=compression), None)
        (inner,) = [o for sub, name, _ in top.subfragments if name == "dma"
                    for o in sub.origins if isinstance(o, DMA)]
        assert inner.compression is compression


@pytest.mark.parametrize("top", ["DMA", "AXIDMA"])
def test_a_window_that_is_not_an_aligned_power_of_two_is_refused(top):
    build = {"DMA": DMA, "AXIDMA": AXIDMA}[top]
    with pytest.raises(ValueError, match=r"^allowed=\[4096, 3000\]: words must be a power of two$"):
        build("tile", allowed=(4096, 3000))


@pytest.mark.parametrize("top", ["DMA", "AXIDMA"])
def test_a_place_its_packet_headers_cannot_carry_is_refused(top):
    build = {"DMA": DMA, "AXIDMA": AXIDMA}[top]
    with pytest.raises(ValueError, match=r"^row=32: must be in 0..31$"):
        build("tile", row=32)
    with pytest.raises(ValueError, match=r"^column=128: must be in 0..127$"):
        build("tile", column=128)


def test_the_memory_inside_is_the_window_it_may_reach():
    tile, memtile = AXIDMA("tile", memory=True), AXIDMA("memtile", memory=True)
    assert (tile.allowed.start, tile.allowed.words, tile.memory_banks) == (0, 16384, 8)
    assert (memtile.allowed.start, memtile.allowed.words, memtile.memory_banks) == (
        131072, 16384, 16)
    assert "s_axil_mem_awaddr" in tile.signature.members
    assert "mm2s0_mem_addr" not in tile.signature.members
    small = AXIDMA("tile", memory=True, allowed=(4096, 4096), memory_banks=2)
    assert len(small.s_axil_mem_awaddr) == 14 and small.memory_banks == 2


def test_a_memory_inside_is_refused_for_the_shim_and_for_a_bad_bank_count():
    from aiedma.model.errors import AiedmaError
    with pytest.raises(AiedmaError, match=r"^memory=True: the shim reaches its memory"):
        AXIDMA("shim", memory=True)
    with pytest.raises(AiedmaError, match=r"^memory_banks=3: must be a power of two"):
        AXIDMA("tile", memory=True, memory_banks=3)
