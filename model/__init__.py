"""The golden model: pure Python + NumPy (never Amaranth or cocotb).

Layers, bottom up: the tiling walk (:mod:`.tiling`, :mod:`.port`), buffer
descriptors (:mod:`.bd_fields`, :mod:`.bd`, :mod:`.packet`), tasks
(:mod:`.task`) and the lowering from tilings to BDs (:mod:`.lower`).
"""

from .bd import BufferDescriptor, check_chain
from .dtypes import ELEMENT_BITS, element_bits, elements_per_word
from .errors import AiedmaError, BDError, PacketError, TilingError
from .lower import LoweredProgram, LoweringError, lower, word_stream_to_elements
from .packet import PacketHeader, odd_parity, packet_header, parse_packet_header
from .port import PortProgram, load_port_program
from .runs import format_runs
from .task import Task, run_task
from .tiling import TilingParameters, TraversingParameters
from .walk import ZERO

__all__ = [
    "ELEMENT_BITS",
    "ZERO",
    "AiedmaError",
    "BDError",
    "BufferDescriptor",
    "LoweredProgram",
    "LoweringError",
    "PacketError",
    "PacketHeader",
    "PortProgram",
    "Task",
    "TilingError",
    "TilingParameters",
    "TraversingParameters",
    "check_chain",
    "element_bits",
    "elements_per_word",
    "format_runs",
    "load_port_program",
    "lower",
    "odd_parity",
    "packet_header",
    "parse_packet_header",
    "run_task",
    "word_stream_to_elements",
]
