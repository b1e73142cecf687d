"""What a graph header declares: its DMA ports, its shared buffers, what was skipped.

The results of :func:`.header.read_graph_header` and :func:`.header.parse_graph_header`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import AiedmaError
from ..tiling.port import PortProgram

__all__ = ["GMIO_OWNERS", "KIND_WORDS", "MAX_PORTS", "GraphHeader", "HeaderPort",
           "SharedBufferSpec", "Skipped"]

KIND_WORDS = {"memtile": "memory tile", "tile": "core tile", "shim": "shim"}
"""How a DMA kind is called in messages and listings."""

GMIO_OWNERS = ("input_gmio", "output_gmio")
"""The :attr:`HeaderPort.owner` of a GMIO's port."""

MAX_PORTS = 14
"""A memory tile has 6 channels each way and may borrow 4 from each neighbour."""

@dataclass(frozen=True)
class SharedBufferSpec:
    """A ``shared_buffer`` of a graph header with the port programs written for it.

    Attributes
    ----------
    name : str
        The C++ name the buffer was assigned to (``mtx``).
    dtype : str
        adf element type name (``int32``; C spellings such as ``int`` are mapped).
    shape : tuple of int
        ``create``'s shape, dimension 0 first, as written.
    n_in, n_out : int
        Input (write, S2MM) and output (read, MM2S) ports.
    repetition_count : int
        ``repetition_count(buf) = n`` (default 1).
    num_buffers : int
        ``num_buffers(buf) = 2`` for ping-pong (default 1).
    write_access : dict of int to PortProgram
        ``write_access(buf.in[i])`` by port ``i``; ports never assigned are absent.
    read_access : dict of int to PortProgram
        ``read_access(buf.out[j])`` by port ``j``.
    """

    name: str
    dtype: str
    shape: tuple[int, ...]
    n_in: int
    n_out: int
    repetition_count: int = 1
    num_buffers: int = 1
    write_access: dict[int, PortProgram] = field(default_factory=dict, hash=False)
    read_access: dict[int, PortProgram] = field(default_factory=dict, hash=False)


@dataclass(frozen=True)
class HeaderPort:
    """One DMA port of a graph header with its port program and its context.

    Attributes
    ----------
    name : str
        ``buffer.in[i]`` / ``buffer.out[j]``; the buffer's name is qualified by its class
        (``TestCase1::mtxin.out[0]``) and may be an array element (``mtx[1].in[0]``).
    kind : str
        The DMA: ``memtile`` (shared buffer), ``tile`` (kernel), ``shim`` (external buffer,
        GMIO).
    direction : str
        ``read`` (``read_access``: MM2S) or ``write`` (``write_access``: S2MM).
    program : PortProgram
        Resolved to ``shape`` when the object has one.
    dtype : str or None
        The buffer's element type (a GMIO's: that of the buffer it is connected to); None
        for a kernel port, a GMIO connected to one, or an undeclared object.
    shape : tuple of int or None
        ``create``'s shape or ``dimensions(...)``; None when only the tilings give it.
    owner : str
        What the object is: ``shared_buffer``, ``external_buffer``, ``kernel``,
        ``input_gmio``, ``output_gmio`` or ``undeclared`` (a pasted statement).
    line, column : int
        Where the access is written.
    """

    name: str
    kind: str
    direction: str
    program: PortProgram = field(hash=False)
    dtype: str | None
    shape: tuple[int, ...] | None
    owner: str
    line: int
    column: int

    @property
    def is_gmio(self) -> bool:
        """The port is a GMIO's: its tiling walks a DDR buffer through the shim."""
        return self.owner in GMIO_OWNERS

    @property
    def context(self) -> str:
        """``memory tile read`` and the like."""
        return f"{KIND_WORDS[self.kind]} {self.direction}"


@dataclass(frozen=True)
class Skipped:
    """Something the reader tried and could not read: where, what, and the error."""

    line: int
    column: int
    what: str
    error: AiedmaError

    def __str__(self) -> str:
        return f"{self.what}: {self.error}"


@dataclass(frozen=True)
class GraphHeader:
    """What :func:`.header.read_graph_header` found.

    Attributes
    ----------
    ports : tuple of HeaderPort
        Every port with a program that could be read, in text order.
    buffers : tuple of SharedBufferSpec
        The shared buffers with their settings and programs (as ``parse_graph_header``).
    skipped : tuple of Skipped
        Every statement or port that could not be read, in text order, each with its
        ``line, column`` error.
    """

    ports: tuple[HeaderPort, ...]
    buffers: tuple[SharedBufferSpec, ...]
    skipped: tuple[Skipped, ...]
