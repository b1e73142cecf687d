"""The golden model: pure Python + NumPy (never Amaranth or cocotb).

Layers, bottom up: the tiling walk (:mod:`.tiling`, :mod:`.port`), buffer
descriptors, the lowering from one to the other, and the system model.
"""

from .dtypes import ELEMENT_BITS, element_bits, elements_per_word
from .errors import AiedmaError, BDError, PacketError, TilingError
from .port import PortProgram, load_port_program
from .runs import format_runs
from .tiling import TilingParameters, TraversingParameters
from .walk import ZERO

__all__ = [
    "ELEMENT_BITS",
    "ZERO",
    "AiedmaError",
    "BDError",
    "PacketError",
    "PortProgram",
    "TilingError",
    "TilingParameters",
    "TraversingParameters",
    "element_bits",
    "elements_per_word",
    "format_runs",
    "load_port_program",
]
