"""The golden model: pure Python + NumPy (never Amaranth or cocotb).

Layers, bottom up: the tiling walk (:mod:`.tiling`, :mod:`.port`), buffer
descriptors, the lowering from one to the other, and the system model.
"""

from .bd import BufferDescriptor, check_chain
from .dtypes import ELEMENT_BITS, element_bits, elements_per_word
from .errors import AiedmaError, BDError, PacketError, TilingError
from .packet import PacketHeader, odd_parity, packet_header, parse_packet_header
from .port import PortProgram, load_port_program
from .runs import format_runs
from .tiling import TilingParameters, TraversingParameters
from .walk import ZERO

__all__ = [
    "ELEMENT_BITS",
    "ZERO",
    "AiedmaError",
    "BDError",
    "BufferDescriptor",
    "PacketError",
    "PacketHeader",
    "PortProgram",
    "TilingError",
    "TilingParameters",
    "TraversingParameters",
    "check_chain",
    "element_bits",
    "elements_per_word",
    "format_runs",
    "load_port_program",
    "odd_parity",
    "packet_header",
    "parse_packet_header",
]
