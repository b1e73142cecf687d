"""The golden model: pure Python + NumPy (never Amaranth, cocotb or tree-sitter on import).

Layers, bottom up, each a sub-package that may import only those below it
(tests/test_layout.py checks): :mod:`.errors`; the AIE-ML facts (:mod:`.arch`);
the tiling walk and port programs (:mod:`.tiling`); the reader of adf C++ graph
code (:mod:`.adf`); buffer descriptors, packets, tasks and the lowering from
tilings to BDs (:mod:`.bd`); the cycle contract (:mod:`.cycle`); and the system:
memories, locks, DMA channels, streams, a cycle-level scheduler and the graph API
(:mod:`.system`). This module re-exports the names a user needs.
"""

from .adf import (
    CppSyntaxError,
    GraphHeader,
    HeaderPort,
    parse_graph_header,
    parse_port_program,
    parse_tiling,
    read_graph_header,
    to_cpp,
)
from .arch.dtypes import ELEMENT_BITS, element_bits, elements_per_word
from .bd.descriptor import BufferDescriptor, check_chain
from .bd.lower import LoweredProgram, LoweringError, lower, word_stream_to_elements
from .bd.packet import PacketHeader, odd_parity, packet_header, parse_packet_header
from .bd.task import Task, run_task
from .errors import AiedmaError, BDError, PacketError, TilingError
from .system.channel import ChannelError
from .system.dma import DMA
from .system.graph import Graph, GraphError, GraphResult, Kernel, SharedBuffer
from .system.locks import LockError, LockTable
from .system.memory import Memory, MemoryAccessError
from .system.scheduler import DeadlockError, run_system
from .system.stream import PacketMerge, PacketSplit, Stream, StreamError
from .tiling.parameters import TilingParameters, TraversingParameters
from .tiling.port import PortProgram, load_port_program
from .tiling.runs import format_runs
from .tiling.walk import ZERO

__all__ = [
    "DMA",
    "ELEMENT_BITS",
    "ZERO",
    "AiedmaError",
    "BDError",
    "BufferDescriptor",
    "ChannelError",
    "CppSyntaxError",
    "DeadlockError",
    "Graph",
    "GraphError",
    "GraphHeader",
    "GraphResult",
    "HeaderPort",
    "Kernel",
    "LockError",
    "LockTable",
    "LoweredProgram",
    "LoweringError",
    "Memory",
    "MemoryAccessError",
    "PacketError",
    "PacketHeader",
    "PacketMerge",
    "PacketSplit",
    "PortProgram",
    "SharedBuffer",
    "Stream",
    "StreamError",
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
    "parse_graph_header",
    "parse_packet_header",
    "parse_port_program",
    "parse_tiling",
    "read_graph_header",
    "run_system",
    "run_task",
    "to_cpp",
    "word_stream_to_elements",
]
