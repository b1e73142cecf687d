"""Verilog export of the RTL's top-level blocks.

``TOPS`` names every exported top (one per block and kind, and the whole channels and
DMAs of the core and memory tile also built without their (de)compressors, named
``..._nocompress``) and builds it on demand;
:func:`export_verilog` converts one. Nothing here writes files: callers choose where
Verilog goes (``build/``, never the repository).
"""

from __future__ import annotations

from collections.abc import Callable

from amaranth.back import verilog
from amaranth.lib import wiring

from ..model.arch.registers import COMPRESSING_KINDS
from ..model.bd.fields import KINDS
from .addrgen import BDAddressGenerator
from .axi_dma import AXIDMA, MEMORY_WORDS
from .axi_lite import AXILiteSlave
from .channel import Channel
from .dma import DMA
from .engine import MM2SEngine, S2MMEngine
from .mm2s import MM2SDatapath
from .s2mm import S2MMDatapath

__all__ = ["TOPS", "export_verilog"]

_BLOCKS: dict[str, Callable[[str], wiring.Component]] = {
    "addrgen": BDAddressGenerator,
    "mm2s": MM2SDatapath,
    "s2mm": S2MMDatapath,
    # (the engine tops keep their exported names: tb/ and the cocotb benches use them)
    "mm2s_channel": MM2SEngine,
    "s2mm_channel": S2MMEngine,
    # the AXI4-Lite register slave alone (its area and Fmax: make fpga --tops)
    "axi_lite": AXILiteSlave,
}

TOPS: dict[str, Callable[[], wiring.Component]] = {
    f"aiedma_{block}_{kind}": (lambda make=make, kind=kind: make(kind))
    for block, make in _BLOCKS.items() for kind in KINDS
}
"""Exported top name -> a function building a fresh instance of it."""

# Whole channels (channel 0, its own BD table) and whole DMAs (every channel, one shared
# BD table, the lock unit, the register port).
TOPS |= {
    f"aiedma_{direction}_dma_channel_{kind}": (
        lambda kind=kind, direction=direction: Channel(kind, direction, 0))
    for direction in ("mm2s", "s2mm") for kind in KINDS
}
TOPS |= {f"aiedma_dma_{kind}": (lambda kind=kind: DMA(kind)) for kind in KINDS}
# The whole DMAs behind an AXI4-Lite register slave, streams under AXI4-Stream names.
TOPS |= {f"aiedma_axi_dma_{kind}": (lambda kind=kind: AXIDMA(kind)) for kind in KINDS}
# The core and memory tiles' AXI tops with their memory inside (``memory=True``).
TOPS |= {f"aiedma_axi_dma_{kind}_mem": (lambda kind=kind: AXIDMA(kind, memory=True))
         for kind in MEMORY_WORDS}

# Their whole channels and DMAs built without the (de)compressors (``compression=False``,
# an optional feature left out): the same ports, ``_nocompress`` after the name.
TOPS |= {
    f"aiedma_{direction}_dma_channel_{kind}_nocompress": (
        lambda kind=kind, direction=direction: Channel(kind, direction, 0, compression=False))
    for direction in ("mm2s", "s2mm") for kind in COMPRESSING_KINDS
}
TOPS |= {f"aiedma_dma_{kind}_nocompress": (lambda kind=kind: DMA(kind, compression=False))
         for kind in COMPRESSING_KINDS}


def export_verilog(top_name: str, component: wiring.Component) -> str:
    """The Verilog text of ``component`` as module ``top_name`` (no source locations).

    Ports are the component's signature paths joined by ``__`` (``o__payload``),
    plus ``clk`` and ``rst``.
    """
    return verilog.convert(component, name=top_name, emit_src=False)
