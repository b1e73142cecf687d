"""The AMD ``adf`` graph in Python: kernels, shared buffers on a memory tile, packet split/merge.

Build a :class:`Graph` of :class:`Kernel` nodes, :class:`SharedBuffer` nodes
(``SharedBuffer.create(shape, n_in, n_out)``), packet splits and merges, and graph
inputs and outputs, ``connect`` their ports, give every buffer port its ``write_access`` /
``read_access`` (one tiling or a list), then :meth:`Graph.run` compiles it to
memory-tile BDs, locks and tasks through :func:`.lower.lower`, runs the cycle-level
system (:mod:`.scheduler`) and returns the outputs and a report.

Checks, each a :class:`GraphError` that names the ports and the numbers: a port
left unconnected or without an access program; transfer volume that differs at
the two ends of a connection; more ports than the memory tile has (6 own + 4 west
+ 4 east each way); too few BDs ("insufficient number of available buffer
descriptors", with the tile, the channel and the counts); too little memory; a
tiling the memory tile cannot do. (Locks cannot run out: 2 copies of 28 ports need
at most 56 of the memory tile's 64.)

Decisions (the adf documentation does not describe the compiler's choices):

* **decision**: every shared buffer lives on one memory tile, ``memtile(1,1)``, in
  its own memory, one after another (``num_buffers`` copies each). Ports beyond its
  6 channels a direction borrow channels 0-3 of the west neighbour ``memtile(0,1)``
  (which reaches the buffer through its east window and east lock IDs), then of the
  east neighbour ``memtile(2,1)``.
* **decision**: locks. For each copy of a buffer with ``n_in`` writers and ``n_out``
  readers: writer ``i`` has a lock ``free_i`` (starts at ``n_out``), reader ``j`` a
  lock ``ready_j`` (starts at 0). Writer ``i`` acquires ``free_i`` by ``-n_out``,
  writes, then releases every ``ready_j`` by 1; reader ``j`` acquires ``ready_j`` by
  ``-n_in``, reads, then releases every ``free_i`` by 1. So no reader starts before
  every writer is done and no writer overwrites a copy before every reader is done.
* **decision**: the acquire and the releases are BDs of ``buffer_length`` 0 queued as
  tasks of their own before and after the data task: a lowered data task may run
  its chain several times (repeat count, iteration offsets), and a lock on its BDs
  would act on every pass.
* **decision**: one *round* of a buffer is one run of every port's program;
  ``iterations * repetition_count`` rounds run, round ``r`` on copy
  ``r % num_buffers``. A controller (the host) pushes each channel's tasks in order
  whenever its queue has room.
* **decision**: a read whose entries carry ``packet_port_id`` feeds a ``pktsplit``
  whose output ``k`` takes packet ID ``k``; every packet BD ends its packet with
  TLAST (``lower()`` suppresses TLAST on all but a chain's last BD, which would
  run packets together), and the receiving kernel or output drops the header.
* **decision**: a ``pktmerge`` mirrors ``pktsplit``: its input ``k`` carries packet ID
  ``k``. An input fed by a kernel gets a header with ID ``k`` before each output
  buffer (one buffer, one packet: the producer's packet header insertion); an
  input fed by a shared buffer's read port carries the MM2S's own headers, so
  every entry of that read needs ``packet_port_id = k``, and the merge checks each
  header (parity, ID) as it passes. Whole packets are merged round-robin
  (:class:`.stream.PacketMerge`); the output feeds a kernel or a graph output,
  which checks and drops every header and records its ID. Its volume per
  iteration is the sum of its inputs' (headers excluded). Writing a merged stream
  into a shared buffer (S2MM packet receipt into several write entries) is not
  modelled: a merge output into a buffer port is an error.
* **decision**: kernel runs are found from the volumes of their connections; when
  nothing more follows, the first kernel (in the order added) still open runs once
  (``runs = 1``) and the search goes on from it.
* **decision**: kernels are stream agents (:mod:`.kernel`); their core tiles are not
  modelled. Graph inputs and outputs are streams fed and drained one word a cycle
  (PLIO-like).
* **decision**: elements are 32-, 16- or 8-bit (:data:`.kernel.GRAPH_DTYPES`);
  streams and memory hold 32-bit words, sub-word elements packed little-endian
  (:mod:`.kernel`). Volumes, kernel buffer sizes, shapes and tilings count
  elements; a kernel buffer holds a whole number of words, and each copy of a
  buffer starts on a word.
"""

from __future__ import annotations

import math
import warnings
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from ..arch.directions import DIRECTIONS, READ, WRITE, Direction
from ..arch.kinds import DMA_KINDS
from ..bd.descriptor import BufferDescriptor
from ..bd.lower import LoweredProgram, LoweringError, lower
from ..bd.task import Task
from ..errors import AiedmaError, field_error
from ..tiling.port import PortProgram
from ..tiling.runs import format_runs
from .channel import TASK_QUEUE_DEPTH, Channel
from .dma import CHANNELS, DMA
from .kernel import (
    GRAPH_DTYPES,
    KernelAgent,
    KernelInput,
    KernelOutput,
    elements_per_word,
    from_words,
    to_words,
)
from .locks import LOCKS_PER_TILE, LockTable, lock_space
from .memory import MEMORY_TILE_WINDOWS, MEMORY_TILE_WORDS, memory_tile_space
from .periodic import PeriodicJump
from .scheduler import NEVER, FastPlan, Stall, SystemReport, run_system
from .stream import PacketMerge, PacketSplit, Stream, StreamSink, StreamSource

__all__ = [
    "BORROWED_CHANNELS",
    "Graph",
    "GraphError",
    "GraphReport",
    "GraphResult",
    "Kernel",
    "PktMerge",
    "PktSplit",
    "Port",
    "SharedBuffer",
    "UnwrittenReadWarning",
]

BORROWED_CHANNELS = 4
"""Channels a direction a memory tile may borrow from each neighbour."""

_MEMTILE = (1, 1)  # (column, row) of the memory tile that holds the buffers
_MEMTILE_KIND = DMA_KINDS["memtile"]


def _buffer_direction(port: Port) -> Direction:
    """A shared buffer's input port writes it (S2MM); an output port reads it (MM2S)."""
    return WRITE if port.direction == "in" else READ


class UnwrittenReadWarning(UserWarning):
    """A shared buffer's read port reads elements none of its write ports writes."""


class GraphError(AiedmaError):
    """A graph cannot be compiled or run as built; names the ports and the numbers."""


# --- nodes and ports ---------------------------------------------------------------------


class Port:
    """One input (``"in"``) or output (``"out"``) of a node, e.g. ``buf.inputs[0]``."""

    __slots__ = ("direction", "index", "node")

    def __init__(self, node: _Node, direction: str, index: int) -> None:
        self.node, self.direction, self.index = node, direction, index

    @property
    def name(self) -> str:
        """``"<node>.<in|out>[<index>]"``."""
        return f"{self.node.name}.{self.direction}[{self.index}]"

    def __repr__(self) -> str:
        return f"Port({self.name})"


class _Node:
    """Something with ports; named when added to a graph."""

    def __init__(self, name: str | None, n_in: int, n_out: int) -> None:
        self.name = name
        self.inputs = tuple(Port(self, "in", i) for i in range(n_in))
        self.outputs = tuple(Port(self, "out", i) for i in range(n_out))


class Kernel(_Node):
    """A kernel: a Python callable over input buffers, returning its output buffers.

    Parameters
    ----------
    name : str
    function : callable
        ``function(*inputs)`` gets one NumPy array per input (the buffer's elements)
        and returns one array, or a tuple of arrays for several outputs.
    inputs, outputs : sequence of int
        Buffer sizes in elements, one per port.
    runs : int, optional
        Runs per graph iteration; default: from the volumes of its connections (a
        buffer smaller than the stream runs several times), else 1.
    """

    def __init__(self, name: str, function: Callable, inputs: Sequence[int] = (),
                 outputs: Sequence[int] = (), runs: int | None = None) -> None:
        super().__init__(name, len(inputs), len(outputs))
        for what, sizes in (("inputs", inputs), ("outputs", outputs)):
            for k, size in enumerate(sizes):
                if size < 1:
                    raise field_error(GraphError, f"{name}.{what}[{k}]", size,
                                      "a kernel buffer holds at least 1 element")
        if runs is not None and runs < 1:
            raise field_error(GraphError, f"{name}.runs", runs, "must be at least 1")
        self.function = function
        self.sizes = {"in": tuple(inputs), "out": tuple(outputs)}
        self.runs = runs


class SharedBuffer(_Node):
    """``adf::shared_buffer``: a 1- to 4-dimensional buffer on the memory tile.

    Parameters
    ----------
    shape : sequence of int
        Dimension 0 first, in elements.
    n_in, n_out : int
        Write ports (S2MM) and read ports (MM2S).
    dtype : str
        Element type (:data:`.kernel.GRAPH_DTYPES`).
    name : str, optional
        Default: ``"buffer<n>"`` when added to a graph.

    Attributes
    ----------
    repetition_count : int
        Runs of every port's program per graph iteration (adf ``repetition_count``).
    num_buffers : int
        1, or 2 for ping-pong (adf ``num_buffers``).
    """

    def __init__(self, shape: Sequence[int], n_in: int, n_out: int, dtype: str = "int32",
                 name: str | None = None) -> None:
        shape = tuple(shape)
        label = name or "shared_buffer"
        if not 1 <= len(shape) <= 4 or any(s < 1 for s in shape):
            raise field_error(GraphError, f"{label} shape", list(shape),
                              "a shared buffer has 1 to 4 dimensions of at least 1 element")
        limit = CHANNELS["memtile"] + 2 * BORROWED_CHANNELS
        for what, n in (("n_in", n_in), ("n_out", n_out)):
            if not 1 <= n <= limit:
                raise field_error(GraphError, f"{label} {what}", n,
                                  f"must be in 1..{limit} ({CHANNELS['memtile']} own + "
                                  f"{BORROWED_CHANNELS} west + {BORROWED_CHANNELS} east ports)")
        if dtype not in GRAPH_DTYPES:
            raise field_error(GraphError, f"{label} dtype", dtype,
                              f"the graph model moves 32-, 16- and 8-bit elements: "
                              f"{', '.join(GRAPH_DTYPES)}")
        super().__init__(name, n_in, n_out)
        self.shape, self.dtype = shape, dtype
        self.programs: dict[Port, PortProgram] = {}
        self._repetition_count = 1
        self._num_buffers = 1

    @classmethod
    def create(cls, shape: Sequence[int], n_in: int, n_out: int, dtype: str = "int32",
               name: str | None = None) -> SharedBuffer:
        """adf ``shared_buffer<T>::create(shape, n_in, n_out)``."""
        return cls(shape, n_in, n_out, dtype, name)

    @property
    def size(self) -> int:
        """Elements in one copy."""
        return math.prod(self.shape)

    @property
    def words(self) -> int:
        """32-bit words one copy takes (sub-word elements packed, rounded up)."""
        return -(-self.size // elements_per_word(self.dtype))

    @property
    def repetition_count(self) -> int:
        """Runs of every port's program per graph iteration (adf ``repetition_count``)."""
        return self._repetition_count

    @repetition_count.setter
    def repetition_count(self, value: int) -> None:
        if value < 1:
            raise field_error(GraphError, f"repetition_count({self.name})", value,
                              "must be at least 1")
        self._repetition_count = value

    @property
    def num_buffers(self) -> int:
        """Copies of the buffer: 1, or 2 for ping-pong (adf ``num_buffers``)."""
        return self._num_buffers

    @num_buffers.setter
    def num_buffers(self, value: int) -> None:
        if value not in (1, 2):
            raise field_error(GraphError, f"num_buffers({self.name})", value,
                              "must be 1, or 2 for ping-pong")
        self._num_buffers = value

    def _access(self, ports: tuple[Port, ...], port: Port | int, tiling: Any,
                direction: str) -> None:
        if isinstance(port, int):
            if not 0 <= port < len(ports):
                raise field_error(GraphError, f"{self.name} port", port,
                                  f"has {len(ports)} {'write' if direction == 'write' else 'read'}"
                                  " port(s)")
            port = ports[port]
        if port not in ports:
            raise field_error(GraphError, "port", port.name,
                              f"{direction}_access takes a port of "
                              f"{'inputs' if direction == 'write' else 'outputs'} of {self.name}")
        program = PortProgram(tiling).resolve(self.shape)
        for k, entry in enumerate(program):
            if math.prod(entry.buffer_dimension) != self.size:
                raise field_error(GraphError, f"{port.name} entries[{k}].buffer_dimension",
                                  list(entry.buffer_dimension),
                                  f"holds {math.prod(entry.buffer_dimension)} elements but "
                                  f"the buffer holds {self.size}")
        try:
            program.validate("memtile", direction, self.dtype)
        except AiedmaError as error:
            raise GraphError(f"{port.name}: {error}") from None
        self.programs[port] = program

    def unwritten_reads(self) -> dict[Port, np.ndarray]:
        """Per read port, the elements it reads that no write port writes in a round.

        A round runs every port's program once (each ``repetition_count`` times, the same
        elements each time), so the sets are the programs' streams: what a read port
        takes outside the union of the writes is whatever the memory held before, 0 in
        a first round (the model's reset memory), stale data after.

        Returns
        -------
        dict of Port to numpy.ndarray
            Sorted element indices, only for the read ports that have any.
        """
        written = [self.programs[p].indices() for p in self.inputs if p in self.programs]
        reads = {port: self.programs[port].indices() for port in self.outputs
                 if port in self.programs}
        # A mask over the elements, not a sorted union: a graph compiles once per run.
        size = max((int(a.max(initial=-1)) for a in (*written, *reads.values())),
                   default=-1) + 1
        covered = np.zeros(size, dtype=bool)
        for indices in written:
            covered[indices[indices >= 0]] = True
        found = {}
        for port, read in reads.items():
            read = read[read >= 0]
            missing = read[~covered[read]]
            if missing.size:
                found[port] = np.unique(missing)
        return found

    def write_access(self, port: Port | int, tiling: Any) -> None:
        """adf ``write_access(buf.in[i]) = tiling``: one tiling (object or dict) or a list."""
        self._access(self.inputs, port, tiling, "write")

    def read_access(self, port: Port | int, tiling: Any) -> None:
        """adf ``read_access(buf.out[j]) = tiling``: one tiling (object or dict) or a list."""
        self._access(self.outputs, port, tiling, "read")


class PktSplit(_Node):
    """``pktsplit<n>``: one packet stream in, ``n`` out; output ``k`` takes packet ID ``k``."""

    def __init__(self, n: int, name: str | None = None) -> None:
        if not 1 <= n <= 32:
            raise field_error(GraphError, "pktsplit outputs", n, "must be in 1..32 (packet IDs)")
        super().__init__(name, 1, n)


class PktMerge(_Node):
    """``pktmerge<n>``: ``n`` packet streams in, one out; input ``k`` carries packet ID ``k``.

    Each input is fed by a kernel (the merge tags each of its output buffers with
    a header of ID ``k``) or by a shared buffer's read port whose entries all have
    ``packet_port_id = k`` (the MM2S inserts the headers). The output feeds a
    kernel or a graph output, which drops the headers and records their IDs.
    """

    def __init__(self, n: int, name: str | None = None) -> None:
        if not 1 <= n <= 32:
            raise field_error(GraphError, "pktmerge inputs", n, "must be in 1..32 (packet IDs)")
        super().__init__(name, n, 1)


class _GraphInput(_Node):
    def __init__(self, name: str) -> None:
        super().__init__(name, 0, 1)


class _GraphOutput(_Node):
    def __init__(self, name: str) -> None:
        super().__init__(name, 1, 0)


# --- results ------------------------------------------------------------------------------


@dataclass(frozen=True)
class GraphReport:
    """What a graph run did.

    Attributes
    ----------
    system : SystemReport
        Cycles, words per agent, stall cycles by cause.
    bds : dict of str to int
        BDs used per memory-tile DMA.
    locks : dict of str to int
        Locks used per memory tile.
    """

    system: SystemReport
    bds: dict[str, int]
    locks: dict[str, int]

    @property
    def cycles(self) -> int:
        """Cycles of the whole run."""
        return self.system.cycles

    def text(self) -> str:
        """The system table, then BDs and locks per tile."""
        lines = [self.system.text()]
        lines += [f"BDs used on {name}: {n}" for name, n in self.bds.items()]
        lines += [f"locks used on {name}: {n}" for name, n in self.locks.items()]
        return "\n".join(lines)


@dataclass(frozen=True)
class GraphResult:
    """Outputs of :meth:`Graph.run`.

    Attributes
    ----------
    outputs : dict of str to numpy.ndarray
        Per graph output, shape ``(iterations, elements per iteration)``.
    received : dict of str to list
        Per kernel, per run, the input arrays it was called with.
    packet_ids : dict of str to list of int
        Per receiver of a ``pktsplit`` or ``pktmerge`` output (a kernel input port
        or a graph output), the packet ID of every header it checked and dropped,
        in order of arrival.
    report : GraphReport
    """

    outputs: dict[str, np.ndarray]
    received: dict[str, list[list[np.ndarray]]]
    packet_ids: dict[str, list[int]]
    report: GraphReport


# --- the graph ----------------------------------------------------------------------------


def _dtype_near(port: Port, source: dict, sink: dict) -> str:
    """The element type of the buffer ``port``'s data comes from or goes to (else int32),
    over the connections ``source`` (input port to its source) and ``sink``."""
    seen, todo = set(), [port]
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        if isinstance(p.node, SharedBuffer):
            return p.node.dtype
        other = source.get(p) if p.direction == "in" else sink.get(p)
        if other is not None:
            todo.append(other)
        if not isinstance(p.node, SharedBuffer):
            todo += [*p.node.inputs, *p.node.outputs]
    return "int32"


class Graph:
    """An adf graph: nodes and connections; :meth:`run` compiles and simulates it.

    Examples
    --------
    >>> g = Graph()
    >>> buf = SharedBuffer.create([4], 1, 1)
    >>> g.connect(g.input("in"), buf.inputs[0])
    >>> g.connect(buf.outputs[0], g.output("out"))
    >>> buf.write_access(0, {"tiling_dimension": [4]})
    >>> buf.read_access(0, {"tiling_dimension": [2], "tile_traversal": [(0, 2, 2)]})
    >>> g.run(2, {"in": [1, 2, 3, 4, 5, 6, 7, 8]}).outputs["out"].tolist()
    [[1, 2, 3, 4], [5, 6, 7, 8]]
    """

    def __init__(self, name: str = "graph") -> None:
        self.name = name
        self.nodes: dict[str, _Node] = {}
        self.connections: list[tuple[Port, Port]] = []

    def add(self, node: _Node) -> _Node:
        """Add a node (``connect`` adds nodes too); names must be unique."""
        if any(n is node for n in self.nodes.values()):
            return node
        if node.name is None:
            base = {SharedBuffer: "buffer", PktMerge: "pktmerge"}.get(type(node), "pktsplit")
            node.name = next(f"{base}{k}" for k in range(len(self.nodes) + 1)
                             if f"{base}{k}" not in self.nodes)
        if node.name in self.nodes:
            raise field_error(GraphError, "name", node.name, "two nodes of a graph share it")
        self.nodes[node.name] = node
        return node

    def kernel(self, name: str, function: Callable, inputs: Sequence[int] = (),
               outputs: Sequence[int] = (), runs: int | None = None) -> Kernel:
        """Create and add a :class:`Kernel`."""
        return self.add(Kernel(name, function, inputs, outputs, runs))

    def shared_buffer(self, shape: Sequence[int], n_in: int, n_out: int, dtype: str = "int32",
                      name: str | None = None) -> SharedBuffer:
        """Create and add a :class:`SharedBuffer`."""
        return self.add(SharedBuffer(shape, n_in, n_out, dtype, name))

    def pktsplit(self, n: int, name: str | None = None) -> PktSplit:
        """Create and add a :class:`PktSplit` with ``n`` outputs."""
        return self.add(PktSplit(n, name))

    def pktmerge(self, n: int, name: str | None = None) -> PktMerge:
        """Create and add a :class:`PktMerge` with ``n`` inputs."""
        return self.add(PktMerge(n, name))

    def input(self, name: str) -> Port:
        """A graph input (a stream the caller feeds); returns its port to connect from."""
        return self.add(_GraphInput(name)).outputs[0]

    def output(self, name: str) -> Port:
        """A graph output (a stream the run collects); returns its port to connect to."""
        return self.add(_GraphOutput(name)).inputs[0]

    def input_dtype(self, name: str) -> str:
        """The element type graph input ``name`` sends: that of the buffer its data reaches
        (through kernels too; int32 when no buffer does), as :meth:`run` packs it."""
        node = self.nodes.get(name)
        if not isinstance(node, _GraphInput):
            raise field_error(GraphError, "input", name, "no graph input of that name")
        return _dtype_near(node.outputs[0], {dst: src for src, dst in self.connections},
                           {src: dst for src, dst in self.connections})

    def connect(self, source: Port, destination: Port) -> None:
        """Connect an output port to an input port (one connection per port)."""
        if source.direction != "out":
            raise field_error(GraphError, "source", source.name, "must be an output port")
        if destination.direction != "in":
            raise field_error(GraphError, "destination", destination.name,
                              "must be an input port")
        for port in (source, destination):
            if any(port in pair for pair in self.connections):
                raise field_error(GraphError, "port", port.name,
                                  "is already connected (a port has one connection)")
        self.add(source.node)
        self.add(destination.node)
        self.connections.append((source, destination))

    def run(self, iterations: int, inputs: Mapping[str, Any] | None = None,
            max_cycles: int = 10_000_000, rtl: RtlRunner | None = None,
            output_ready: Mapping[str, Sequence[bool]] | None = None,
            exact: bool = False) -> GraphResult:
        """Compile to memory-tile BDs, locks and tasks, and run the cycle-level system.

        Parameters
        ----------
        iterations : int
            Graph iterations.
        inputs : mapping of str to array-like
            Per graph input, every element it sends: ``iterations`` times its
            volume per iteration (flat, or one row per iteration).
        max_cycles : int
            Guard for the scheduler.
        rtl : RtlRunner, optional
            Run every memory-tile channel's engine (address generator, lock gate,
            datapath) as RTL with this runner, inside the same cycles, compared with
            the model engine on every port of every cycle: ``aiedma.tb.rtl_runner(
            "amaranth")`` or ``rtl_runner("verilator")`` makes one. The result is the
            model-only run's, or a mismatch is raised. None runs the model alone.
        output_ready : mapping of str to sequence of bool, optional
            Per graph output, whether it takes a word in each cycle (backpressure;
            high after the pattern ends).
        exact : bool
            Step every cycle. By default the scheduler jumps stretches in which every
            agent repeats its last cycle (:mod:`.scheduler`, the fast path), with the
            same outputs and report. With ``rtl`` the runner decides: a runner that steps
            the RTL beside the model steps every cycle, one that replays the model's
            recorded run into the RTL records it on the fast path.

        Raises
        ------
        GraphError
            For the graph checks (see the module text), or an ``rtl`` that is no runner.
        DeadlockError
            If the system deadlocks: every waiting channel, its BD and lock.
        AssertionError
            With ``rtl``: the first cycle an RTL channel differs from the model
            (``aiedma.tb.system.loop.LoopMismatch``).
        """
        if iterations < 1:
            raise field_error(GraphError, "iterations", iterations, "must be at least 1")
        if rtl is not None and not callable(rtl):
            example = rtl if isinstance(rtl, str) else "amaranth"
            raise field_error(GraphError, "rtl", rtl, "must be None (the model alone) or an "
                              f"RTL runner: pass rtl=aiedma.tb.rtl_runner({example!r})")
        for node in self.nodes.values():
            if isinstance(node, SharedBuffer):
                for port, missing in node.unwritten_reads().items():
                    warnings.warn(UnwrittenReadWarning(
                        f"{port.name} reads {missing.size} element(s) no write port of "
                        f"{node.name} writes in a round (it gets what the memory held: 0 "
                        f"at first): {format_runs(missing)}"), stacklevel=2)
        compiler = _Compiler(self, iterations)
        compiler.output_ready = dict(output_ready or {})
        return compiler.run(dict(inputs or {}), max_cycles, rtl, exact)


class RtlRunner(Protocol):
    """What ``Graph.run(rtl=...)`` takes: runs the system with some channels as RTL.

    **decision**: the caller hands the runner in (``aiedma.tb.rtl_runner(simulator)``
    makes one), so the model never names nor imports the testbench layer or Amaranth
    (docs/architecture.md): the layers above know both and plug in from there.
    """

    def __call__(self, agents: Sequence[Any], channels: Sequence[Channel],
                 max_cycles: int) -> SystemReport:
        """Run every agent, ``channels`` as RTL checked against the model; the report."""
        ...


# --- compilation ---------------------------------------------------------------------------


@dataclass
class _Slot:
    """A memory-tile channel a buffer port runs on, and how it sees the buffers."""

    dma: DMA
    channel: Channel
    window: int  # word address of the buffers' memory tile in this DMA's space
    lock_base: int  # lock ID of the buffers' lock 0 in this DMA's lock IDs
    tasks: deque[Task] = field(default_factory=deque)


class _Controller:
    """The host: pushes each channel's tasks in order whenever its queue has room."""

    name = "controller"

    def __init__(self, slots: Sequence[_Slot]) -> None:
        self.slots = list(slots)
        # The stall of a cycle that pushes nothing, made once until the next push: it
        # steps every cycle, and the tasks left change only when it pushes.
        self._waits: Stall | None = None

    @property
    def busy(self) -> bool:
        for s in self.slots:   # asked before every cycle (the first agent): no generator
            if s.tasks:
                return True
        return False

    def step(self, cycle: int) -> Stall:
        pushed = False
        for s in self.slots:
            tasks = s.tasks
            while tasks and len(s.channel.queue) < TASK_QUEUE_DEPTH:
                s.channel.push(tasks.popleft())
                pushed = True
        if not pushed and self._waits is not None:
            return self._waits
        left = sum(len(s.tasks) for s in self.slots)
        stall = Stall("idle", progress=pushed, detail=f"{left} task(s) wait for queue room"
                      if left else "")
        self._waits = None if pushed else stall
        return stall

    def commit(self) -> None:
        pass

    def ports(self) -> tuple:
        return ()

    # The fast path: it pushes only when a queue has room, which the channels' own
    # steady states show, so it waits as long as they stay steady.

    def steady_state(self) -> tuple:
        return tuple(len(s.tasks) for s in self.slots)

    def next_event(self, last: int, moved: bool) -> int:
        return NEVER

    def plan(self, cycles: int, moved: bool) -> FastPlan:
        return FastPlan()


class _Compiler:
    """One compilation and run of a graph."""

    def __init__(self, graph: Graph, iterations: int) -> None:
        self.graph, self.iterations = graph, iterations
        self.output_ready: dict[str, Sequence[bool]] = {}
        self.source = {dst: src for src, dst in graph.connections}
        self.sink = {src: dst for src, dst in graph.connections}
        column, row = _MEMTILE
        self.mem = DMA("memtile", column, row)
        self.memory = self.mem.memory.resolve(MEMORY_TILE_WINDOWS["own"])[0]
        self.lock_table = self.mem.locks.route(LOCKS_PER_TILE["memtile"])[0]
        self.neighbours: dict[str, DMA] = {}
        self.used = dict.fromkeys(DIRECTIONS, 0)
        self.bd_cursor: dict[tuple[str, int], int] = {}
        self.lock_cursor = 0
        self.memory_cursor = 0
        self.slots: list[_Slot] = []

    # -- checks and volumes --

    def check_connected(self) -> None:
        for node in self.graph.nodes.values():
            for port in node.inputs:
                if port not in self.source:
                    raise field_error(GraphError, "port", port.name, "is not connected")
            for port in node.outputs:
                if port not in self.sink:
                    raise field_error(GraphError, "port", port.name, "is not connected")
            if isinstance(node, SharedBuffer):
                for port in (*node.inputs, *node.outputs):
                    if port not in node.programs:
                        what = "write_access" if port.direction == "in" else "read_access"
                        raise field_error(GraphError, "port", port.name, f"has no {what}")
            if isinstance(node, PktSplit):
                upstream = self.source[node.inputs[0]]
                if not isinstance(upstream.node, SharedBuffer):
                    raise field_error(GraphError, "port", node.inputs[0].name,
                                      "a pktsplit is fed by a shared buffer's read port")
                for port in node.outputs:
                    if isinstance(self.sink[port].node, SharedBuffer | PktSplit | PktMerge):
                        raise field_error(GraphError, "port", port.name,
                                          "a pktsplit output feeds a kernel or a graph output")
            if isinstance(node, PktMerge):
                for port in node.inputs:
                    if not isinstance(self.source[port].node, Kernel | SharedBuffer):
                        raise field_error(GraphError, "port", port.name,
                                          "a pktmerge input is fed by a kernel or a shared "
                                          "buffer's read port")
                downstream = self.sink[node.outputs[0]]
                if not isinstance(downstream.node, Kernel | _GraphOutput):
                    raise field_error(GraphError, "port", node.outputs[0].name,
                                      "a pktmerge output feeds a kernel or a graph output")

    def fixed_volumes(self) -> dict[Port, tuple[int, str]]:
        """Elements per iteration at buffer and pktsplit ports, with how they were counted."""
        fixed: dict[Port, tuple[int, str]] = {}
        for node in self.graph.nodes.values():
            if isinstance(node, SharedBuffer):
                rep = node.repetition_count
                for port, program in node.programs.items():
                    what = "write_access" if port.direction == "in" else "read_access"
                    n = program.stream_length()
                    fixed[port] = (n * rep, f"{what} of {n} x repetition_count {rep}")
            elif isinstance(node, PktSplit):
                upstream = self.source[node.inputs[0]]
                buffer, program = upstream.node, upstream.node.programs[upstream]
                counts = [0] * len(node.outputs)
                for k, entry in enumerate(program):
                    if not 0 <= entry.packet_port_id < len(node.outputs):
                        raise field_error(
                            GraphError, f"{upstream.name} entries[{k}].packet_port_id",
                            entry.packet_port_id,
                            f"feeds {node.name}, which has outputs 0..{len(node.outputs) - 1}")
                    counts[entry.packet_port_id] += entry.stream_length()
                for port, n in zip(node.outputs, counts, strict=True):
                    rep = buffer.repetition_count
                    fixed[port] = (n * rep, f"its packet ID's entries: {n} x repetition_count "
                                            f"{rep}")
                fixed[node.inputs[0]] = fixed[upstream]
            elif isinstance(node, PktMerge):
                for port in node.inputs:
                    upstream = self.source[port]
                    if not isinstance(upstream.node, SharedBuffer):
                        continue
                    for k, entry in enumerate(upstream.node.programs[upstream]):
                        if entry.packet_port_id != port.index:
                            raise field_error(
                                GraphError, f"{upstream.name} entries[{k}].packet_port_id",
                                entry.packet_port_id,
                                f"feeds {port.name}, which carries packet ID {port.index}: "
                                f"every entry of the read needs packet_port_id {port.index}")
        return fixed

    def kernel_runs(self, fixed: dict[Port, tuple[int, str]]) -> dict[Kernel, int]:
        """Runs per iteration of every kernel, from the volumes its ports must carry."""
        runs: dict[Kernel, tuple[int, str]] = {}
        for node in self.graph.nodes.values():
            if isinstance(node, Kernel) and node.runs is not None:
                runs[node] = (node.runs, "its runs")
        changed = True
        while changed:
            changed = False
            for port, other in [*self.source.items(), *self.sink.items()]:
                kernel = port.node
                if not isinstance(kernel, Kernel) or kernel in runs:
                    continue
                volume = self.volume(other, fixed, runs)
                if volume is None:
                    continue
                size = kernel.sizes[port.direction][port.index]
                if volume[0] % size:
                    src, dst = (other, port) if port.direction == "in" else (port, other)
                    raise field_error(
                        GraphError, "transfer volume", volume[0],
                        f"differs at the two ends of {src.name} -> {dst.name}: "
                        f"{other.name} carries {volume[0]} elements per iteration "
                        f"({volume[1]}), not a whole number of {port.name} buffers of {size}")
                runs[kernel] = (volume[0] // size, f"set by {other.name}")
                changed = True
            if not changed:
                pending = [node for node in self.graph.nodes.values()
                           if isinstance(node, Kernel) and node not in runs]
                if pending:  # nothing more follows: the first open kernel runs once
                    runs[pending[0]] = (1, "default")
                    changed = True
        for src, dst in self.graph.connections:
            a, b = self.volume(src, fixed, runs), self.volume(dst, fixed, runs)
            if a is None and b is None:
                raise field_error(GraphError, "connection", f"{src.name} -> {dst.name}",
                                  "a graph input straight to a graph output has no volume")
            if a is not None and b is not None and a[0] != b[0]:
                raise field_error(
                    GraphError, "transfer volume", (a[0], b[0]),
                    f"differs at the two ends of {src.name} -> {dst.name}: {a[0]} elements per "
                    f"iteration leave {src.name} ({a[1]}) but {dst.name} takes {b[0]} ({b[1]})")
        return {k: r for k, (r, _) in runs.items()}

    def volume(self, port: Port, fixed: dict, runs: dict) -> tuple[int, str] | None:
        if port in fixed:
            return fixed[port]
        if isinstance(port.node, PktMerge):
            if port.direction == "in":
                return self.volume(self.source[port], fixed, runs)
            parts = [self.volume(self.source[p], fixed, runs) for p in port.node.inputs]
            if any(part is None for part in parts):
                return None
            total = sum(n for n, _ in parts)
            return total, "the sum of its inputs: " + " + ".join(str(n) for n, _ in parts)
        kernel = port.node
        if isinstance(kernel, Kernel) and kernel in runs:
            size = kernel.sizes[port.direction][port.index]
            r, why = runs[kernel]
            return size * r, f"buffer {size} x {r} run(s), {why}"
        return None

    # -- memory-tile resources --

    def neighbour(self, side: str) -> DMA:
        """The west or east memory tile, reaching the buffers' tile through a window."""
        if side not in self.neighbours:
            column = _MEMTILE[0] + (-1 if side == "west" else 1)
            name = f"memtile({column},{_MEMTILE[1]})"
            own = LockTable(f"{name} locks", LOCKS_PER_TILE["memtile"])
            # The buffers' tile is east of the west neighbour and west of the east one.
            there = "east" if side == "west" else "west"
            memory = memory_tile_space(name, **{there: self.memory})
            locks = lock_space("memtile", name, own, **{there: self.lock_table})
            self.neighbours[side] = DMA("memtile", column, _MEMTILE[1], memory=memory,
                                        locks=locks, name=name)
        return self.neighbours[side]

    def slot(self, way: Direction, port: Port) -> _Slot:
        n = self.used[way]
        own = CHANNELS["memtile"]
        limit = own + 2 * BORROWED_CHANNELS
        if n >= limit:
            total = sum(len(node.inputs if way is WRITE else node.outputs)
                        for node in self.graph.nodes.values() if isinstance(node, SharedBuffer))
            raise field_error(GraphError, f"{way.access} ({way.title}) ports", total,
                              f"more than a memory tile has: {own} own + {BORROWED_CHANNELS} "
                              f"west + {BORROWED_CHANNELS} east = {limit} (at {port.name})")
        self.used[way] += 1
        # Which DMA runs the port, and the window (addresses, lock IDs) it sees the buffers in.
        if n < own:
            dma, index, seen_as = self.mem, n, "own"
        elif n < own + BORROWED_CHANNELS:
            dma, index, seen_as = self.neighbour("west"), n - own, "east"
        else:
            dma, index, seen_as = self.neighbour("east"), n - own - BORROWED_CHANNELS, "west"
        s = _Slot(dma, dma.channel(way.channel, index), MEMORY_TILE_WINDOWS[seen_as],
                  _MEMTILE_KIND.lock_window(seen_as).start)
        self.slots.append(s)
        return s

    def bd_range(self, s: _Slot) -> tuple[int, int]:
        """(next free BD, BDs left) in the half of the slot's channel."""
        half = _MEMTILE_KIND.channel_bds(s.channel.index)
        cursor = self.bd_cursor.get((s.dma.name, half.start), half.start)
        return cursor, half.stop - cursor

    def budget_error(self, s: _Slot, count: int, left: int, what: str,
                     why: str = "") -> GraphError:
        half = _MEMTILE_KIND.channel_bds(s.channel.index)
        return GraphError(
            f"insufficient number of available buffer descriptors on {s.dma.name} "
            f"{s.channel.direction.upper()} channel {s.channel.index}: {what} needs {count} "
            f"BD(s) but {left} of BDs {_MEMTILE_KIND.half_text(half)} are left{why}")

    def take_bds(self, s: _Slot, count: int, what: str) -> int:
        first, left = self.bd_range(s)
        if count > left:
            raise self.budget_error(s, count, left, what)
        half = _MEMTILE_KIND.channel_bds(s.channel.index)
        self.bd_cursor[(s.dma.name, half.start)] = first + count
        return first

    def take_locks(self, count: int) -> int:
        # At most 2 copies x (14 + 14) ports = 56 locks: the port limits keep the buffers
        # within the memory tile's 64 locks, so running out is not a user error.
        first = self.lock_cursor
        self.lock_cursor += count
        assert self.lock_cursor <= LOCKS_PER_TILE["memtile"], "port limits bound the locks"
        return first

    def place(self, buffer: SharedBuffer) -> int:
        words = buffer.words * buffer.num_buffers
        first = self.memory_cursor
        if first + words > MEMORY_TILE_WORDS:
            raise field_error(GraphError, "memory", first + words,
                              f"the buffers need more words than the memory tile's "
                              f"{MEMORY_TILE_WORDS} (at {buffer.name}: {words})")
        self.memory_cursor += words
        return first

    # -- BDs and tasks --

    def lower_port(self, s: _Slot, buffer: SharedBuffer, port: Port, base: int,
                   copy: int) -> LoweredProgram:
        direction = _buffer_direction(port).access
        first, left = self.bd_range(s)
        what = f"{port.name} (copy {copy})"
        try:
            lowered = lower(buffer.programs[port], "memtile", direction, buffer.dtype,
                            base_address=base, first_bd=first, max_bds=left)
        except LoweringError as error:
            if error.needed is not None:  # the budget is what is short
                raise self.budget_error(s, error.needed, left, what,
                                        f"; the lowering says: {error}") from None
            raise GraphError(f"{what}: {error}") from None
        except AiedmaError as error:
            raise GraphError(f"{what}: {error}") from None
        self.take_bds(s, len(lowered.bds), what)
        for b in lowered.bds:
            s.dma.write_bd(b.bd_id, b.bd)
        return lowered

    def lock_bds(self, s: _Slot, acquire: tuple[int, int], releases: Sequence[int],
                 what: str) -> tuple[Task, Task]:
        """An acquire BD and a chain of release BDs (buffer_length 0), as two tasks."""
        first = self.take_bds(s, 1 + len(releases), f"{what} lock BDs")
        lock, value = acquire
        s.dma.write_bd(first, BufferDescriptor(
            "memtile", valid_bd=1, lock_acq_enable=1, lock_acq_id=s.lock_base + lock,
            lock_acq_value=value))
        for k, lock in enumerate(releases):
            bd_id = first + 1 + k
            more = k + 1 < len(releases)
            s.dma.write_bd(bd_id, BufferDescriptor(
                "memtile", valid_bd=1, lock_rel_id=s.lock_base + lock, lock_rel_value=1,
                use_next_bd=int(more), next_bd=bd_id + 1 if more else 0))
        return Task(first), Task(first + 1)

    def compile_buffer(self, buffer: SharedBuffer) -> None:
        n_in, n_out, copies = len(buffer.inputs), len(buffer.outputs), buffer.num_buffers
        offset = self.place(buffer)
        first_lock = self.take_locks(copies * (n_in + n_out))
        free = [[first_lock + c * (n_in + n_out) + i for i in range(n_in)] for c in range(copies)]
        ready = [[first_lock + c * (n_in + n_out) + n_in + j for j in range(n_out)]
                 for c in range(copies)]
        for c in range(copies):
            for lock in free[c]:
                self.lock_table.set(lock, n_out)
        rounds = self.iterations * buffer.repetition_count
        for port in (*buffer.inputs, *buffer.outputs):
            writer = port.direction == "in"
            s = self.slot(_buffer_direction(port), port)
            s.channel.connect(self.streams[(self.source[port], port) if writer
                                           else (port, self.sink[port])])
            per_copy = []
            for c in range(copies):
                base = s.window + offset + c * buffer.words
                data = self.lower_port(s, buffer, port, base, c).task
                if writer:
                    acquire, releases = (free[c][port.index], -n_out), ready[c]
                else:
                    acquire, releases = (ready[c][port.index], -n_in), free[c]
                before, after = self.lock_bds(s, acquire, releases, f"{port.name} (copy {c})")
                per_copy.append((before, data, after))
            for r in range(rounds):
                s.tasks.extend(per_copy[r % copies])

    # -- the run --

    def run(self, inputs: dict[str, Any], max_cycles: int, rtl: RtlRunner | None,
            exact: bool = False) -> GraphResult:
        self.check_connected()
        fixed = self.fixed_volumes()
        runs = self.kernel_runs(fixed)
        self.streams = {(src, dst): Stream(f"{src.name}->{dst.name}")
                        for src, dst in self.graph.connections}
        for node in self.graph.nodes.values():
            if isinstance(node, SharedBuffer):
                self.compile_buffer(node)
        sources, kernels, splits, sinks, merges = [], [], [], [], []
        unknown = set(inputs) - {n.name for n in self.graph.nodes.values()
                                 if isinstance(n, _GraphInput)}
        if unknown:
            raise field_error(GraphError, "inputs", sorted(unknown), "no graph input has this name")
        unknown = set(self.output_ready) - {n.name for n in self.graph.nodes.values()
                                            if isinstance(n, _GraphOutput)}
        if unknown:
            raise field_error(GraphError, "output_ready", sorted(unknown),
                              "no graph output has this name")
        fixed_runs = {k: (r, "") for k, r in runs.items()}
        for node in self.graph.nodes.values():
            if isinstance(node, _GraphInput):
                sources.append(self.graph_input(node, inputs, fixed, fixed_runs))
            elif isinstance(node, _GraphOutput):
                sinks.append(self.graph_output(node, fixed, fixed_runs))
            elif isinstance(node, Kernel):
                kernels.append(self.kernel_agent(node, runs[node]))
            elif isinstance(node, PktSplit):
                splits.append(PacketSplit(node.name, self.streams[(self.source[node.inputs[0]],
                                                                   node.inputs[0])],
                                          [self.streams[(p, self.sink[p])] for p in node.outputs]))
            elif isinstance(node, PktMerge):
                out = node.outputs[0]
                merges.append(PacketMerge(
                    node.name, [self.streams[(self.source[p], p)] for p in node.inputs],
                    self.streams[(out, self.sink[out])], packet_ids=range(len(node.inputs)),
                    tagged=[isinstance(self.source[p].node, SharedBuffer) for p in node.inputs]))
        controller = _Controller(self.slots)
        channels = [s.channel for s in self.slots]
        agents = [controller, *sources, *kernels, *channels, *splits, *merges,
                  *(sink for sink, _, _ in sinks)]
        if rtl is None:
            periodic = None if exact else PeriodicJump(controller)
            report = run_system(agents, max_cycles, exact=exact, periodic=periodic)
        else:
            report = rtl(agents, channels, max_cycles)
        outputs = {}
        for sink, node, dtype in sinks:
            outputs[node.name] = from_words(sink.data, dtype).reshape(self.iterations, -1)
        bds = {dma.name: len(dma.bds) for dma in (self.mem, *self.neighbours.values())}
        locks = {self.mem.name: self.lock_cursor}
        packet_ids = {sink.name: sink.packet_ids for sink, _, _ in sinks if sink.drop_headers}
        for agent in kernels:
            for k, port in enumerate(agent.inputs):
                if port.packet:
                    packet_ids[f"{agent.name}.in[{k}]"] = agent.packet_ids[k]
        return GraphResult(outputs, {k.name: k.received for k in kernels}, packet_ids,
                           GraphReport(report, bds, locks))

    def dtype_near(self, port: Port) -> str:
        """The element type of the buffer a port's data comes from or goes to (else int32)."""
        return _dtype_near(port, self.source, self.sink)

    def graph_input(self, node: _GraphInput, inputs: dict, fixed: dict,
                    runs: dict) -> StreamSource:
        port = node.outputs[0]
        volume = self.volume(self.sink[port], fixed, runs)[0]
        dtype = self.dtype_near(port)
        if node.name not in inputs:
            raise field_error(GraphError, "inputs", node.name,
                              f"the graph input needs {self.iterations} x {volume} elements")
        data = np.asarray(inputs[node.name]).ravel()
        if data.size != self.iterations * volume:
            raise field_error(GraphError, f"len(inputs[{node.name!r}])", data.size,
                              f"the graph input sends {volume} per iteration: "
                              f"{self.iterations} iterations need {self.iterations * volume}")
        words = to_words(data, dtype, f"inputs[{node.name!r}]")
        return StreamSource(node.name, self.streams[(port, self.sink[port])], words)

    def graph_output(self, node: _GraphOutput, fixed: dict,
                     runs: dict) -> tuple[StreamSink, _GraphOutput, str]:
        port = node.inputs[0]
        upstream = self.source[port]
        volume = self.volume(upstream, fixed, runs)[0]
        dtype = self.dtype_near(port)
        sink = StreamSink(node.name, self.streams[(upstream, port)],
                          expect=self.iterations * volume // elements_per_word(dtype),
                          drop_headers=isinstance(upstream.node, PktSplit | PktMerge),
                          ready=self.output_ready.get(node.name))
        return sink, node, dtype

    def kernel_agent(self, kernel: Kernel, runs: int) -> KernelAgent:
        dtype = self.dtype_near(kernel.inputs[0] if kernel.inputs else kernel.outputs[0])
        per = elements_per_word(dtype)
        words = {}
        for port in (*kernel.inputs, *kernel.outputs):
            size = kernel.sizes[port.direction][port.index]
            if size % per:
                what = "inputs" if port.direction == "in" else "outputs"
                raise field_error(GraphError, f"{kernel.name}.{what}[{port.index}]", size,
                                  f"{dtype} packs {per} elements to a 32-bit word: a kernel "
                                  "buffer holds a whole number of words")
            words[port] = size // per
        ins = [KernelInput(self.streams[(self.source[p], p)], words[p],
                           packet=isinstance(self.source[p].node, PktSplit | PktMerge))
               for p in kernel.inputs]
        outs = [KernelOutput(self.streams[(p, self.sink[p])], words[p]) for p in kernel.outputs]
        return KernelAgent(kernel.name, kernel.function, ins, outs, runs * self.iterations,
                           dtype)
