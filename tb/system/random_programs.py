"""Random graphs for RTL-in-the-loop regressions: the model alone and with RTL must agree.

:func:`random_graph` draws, from a seed, a graph a user could write: a 1-D or 2-D
shared buffer (one or two buffers, ping-pong), written from a graph input with a
random tiling that covers it, read by one or two ports with random tiles, traversal
orders, offsets and zero padding (tiles running past the buffer), over 1 to 3
iterations, with random backpressure on every graph output. Draws that the
tiling or lowering rules refuse are drawn again. :func:`check_graph` runs one
with the model alone and with every memory-tile channel as RTL, and compares the
outputs and every report column.

:func:`random_program` draws a task program on one tile (three channels, four on the
memory tile: chains, repeats, iteration offsets, padding, packet headers, TLAST
suppression, a lock between the writer and its readers, backpressure) and
:func:`check_program` runs it both ways.

The regression over many seeds is :mod:`aiedma.tb.regress.random_graphs`.
"""

from __future__ import annotations

import random
import warnings
from dataclasses import dataclass

import numpy as np

from ...model.arch.kinds import DEFAULT_ROW, DMA_KINDS
from ...model.arch.registers import control_address, fot_count_address, start_queue_address
from ...model.bd.descriptor import BufferDescriptor
from ...model.bd.fields import HAS_PADDING
from ...model.bd.task import Task
from ...model.errors import AiedmaError, UndocumentedBehaviourWarning, field_error
from ...model.system.dma import DMA
from ...model.system.graph import Graph, GraphResult
from ...model.system.memory import MEMORY_TILE_WINDOWS, Memory, shim_space
from ...model.system.scheduler import SystemReport, run_system
from ...model.system.stream import Beat, Stream, StreamSink
from .loop import rtl_runner

__all__ = ["PROGRAM_PLACES", "TARGET", "FotProgram", "ProgramPlace", "RandomGraph",
           "RandomProgram", "WritesProgram", "bd_table_writes", "check_graph", "check_program",
           "random_fot_program", "random_graph", "random_program", "random_read"]


@dataclass
class RandomGraph:
    """One drawn graph and how to run it."""

    seed: int
    graph: Graph
    iterations: int
    inputs: dict[str, np.ndarray]
    output_ready: dict[str, list[bool]]
    description: str

    def run(self, rtl: str | None = None) -> GraphResult:
        """The graph's run: the model alone, or every memory-tile channel as RTL on ``rtl``."""
        return self.graph.run(self.iterations, self.inputs,
                              rtl=None if rtl is None else rtl_runner(rtl),
                              output_ready=self.output_ready)


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def _traversal(rng: random.Random, tile: list[int], counts: list[int]) -> list[tuple]:
    loops = [(k, tile[k], counts[k]) for k in range(len(tile)) if counts[k] > 1]
    rng.shuffle(loops)
    return loops


def _draw(rng: random.Random, seed: int) -> RandomGraph:
    shape = [rng.choice([2, 4, 6, 8])] + ([rng.choice([2, 3, 4])] if rng.random() < 0.7 else [])
    dims = len(shape)
    write_tile = [rng.choice(_divisors(n)) for n in shape]
    write = {"buffer_dimension": shape, "tiling_dimension": write_tile, "offset": [0] * dims,
             "tile_traversal": _traversal(rng, write_tile,
                                          [n // t for n, t in zip(shape, write_tile, strict=True)])}
    readers = rng.choice([1, 1, 2])
    g = Graph(f"random {seed}")
    buf = g.shared_buffer(shape, 1, readers, name="buf")
    buf.num_buffers = rng.choice([1, 2])
    g.connect(g.input("in"), buf.inputs[0])
    buf.write_access(0, write)
    reads = []
    for r in range(readers):
        tile = [rng.randint(1, n) for n in shape]
        pad = rng.random() < 0.5
        offset = [rng.choice([0, -1]) if pad else 0 for _ in shape]
        counts = [max(1, -(-(n - o) // t)) if pad else n // t
                  for n, t, o in zip(shape, tile, offset, strict=True)]
        if not pad:
            tile = [rng.choice(_divisors(n)) for n in shape]
            counts = [n // t for n, t in zip(shape, tile, strict=True)]
        read = {"buffer_dimension": shape, "tiling_dimension": tile, "offset": offset,
                "tile_traversal": _traversal(rng, tile, counts)}
        if pad:
            read["boundary_dimension"] = shape
        buf.read_access(buf.outputs[r], read)
        g.connect(buf.outputs[r], g.output(f"out{r}"))
        reads.append(read)
    iterations = rng.randint(1, 3)
    words = int(np.prod(shape))
    inputs = {"in": np.array([rng.randrange(1 << 31) for _ in range(iterations * words)])}
    ready = {f"out{r}": [rng.random() < 0.7 for _ in range(rng.randint(0, 200))]
             for r in range(readers)}
    text = (f"shape {shape}, {buf.num_buffers} buffer(s), {iterations} iteration(s), "
            f"write {write}, reads {reads}")
    return RandomGraph(seed, g, iterations, inputs, ready, text)


def random_graph(seed: int) -> RandomGraph:
    """A random graph that compiles and runs on the model (drawn again until one does).

    Parameters
    ----------
    seed : int
        Fixes every draw: the same seed gives the same graph.
    """
    rng = random.Random(seed)
    for _ in range(200):
        drawn = _draw(rng, seed)
        try:
            drawn.run()
        except AiedmaError:   # a tiling the rules refuse, or over the BD budget
            continue
        return drawn
    raise RuntimeError(f"seed={seed}: no legal graph in 200 draws")


def check_graph(drawn: RandomGraph, simulator: str) -> GraphResult:
    """Run ``drawn`` on the model and with RTL; raise if outputs or report differ.

    Raises
    ------
    aiedma.tb.system.loop.LoopMismatch
        At the first cycle an RTL channel differs from the model.
    AssertionError
        If the outputs or report differ (they cannot when every cycle agreed).
    """
    model = drawn.run()
    rtl = drawn.run(rtl=simulator)
    for name, words in model.outputs.items():
        if not np.array_equal(words, rtl.outputs[name]):
            raise AssertionError(f"seed={drawn.seed}: output {name} differs with {simulator}")
    if model.report.text() != rtl.report.text():
        raise AssertionError(f"seed={drawn.seed}: report differs with {simulator}:\n"
                             f"{model.report.text()}\n{rtl.report.text()}")
    return rtl


@dataclass(frozen=True)
class ProgramPlace:
    """Where a random task program lives on a tile of one kind.

    ``source`` and ``target`` are the word addresses of the two regions, ``lock`` the
    BD lock ID of the tile's own lock 1, ``write_bd`` the first BD of the S2MM chain
    (on the memory tile in the other half of the table: S2MM 1 runs BDs 24-47),
    ``read_bd`` the BD of the second reader, ``row`` the tile's row, ``third_bd`` the
    BD of a third reader (MM2S 2, memory tile only; BDs 0-23) or None.
    """

    source: int
    target: int
    lock: int
    write_bd: int
    read_bd: int
    row: int
    third_bd: int | None = None

    @property
    def readers(self) -> int:
        """Channels that acquire the lock the writer releases (each BD releases this many)."""
        return 1 if self.third_bd is None else 2

    @property
    def tasks(self) -> int:
        """Tasks a program here queues: one on MM2S 0, on S2MM 1 and on each reader."""
        return 2 + self.readers


PROGRAM_PLACES: dict[str, ProgramPlace] = {
    "memtile": ProgramPlace(MEMORY_TILE_WINDOWS["own"], MEMORY_TILE_WINDOWS["own"] + 4096,
                            64 + 1, 24, 40, DEFAULT_ROW["memtile"], third_bd=20),
    "tile": ProgramPlace(0, 4096, 1, 4, 15, DEFAULT_ROW["tile"]),
    "shim": ProgramPlace(0, 4096, 1, 4, 15, DEFAULT_ROW["shim"]),
}
"""The kinds a random task program runs on (every kind ``hdl.dma`` builds)."""

SHIM_MEMORY_WORDS = 8192
"""External memory of a shim program (its regions lie in the first words)."""


def program_dma(kind: str, row: int, *, compression: bool = True,
                allowed: tuple[int, int] | None = None) -> DMA:
    """A fresh model DMA of ``kind`` for a program; a shim gets external memory.
    ``compression=False``: built without the (de)compressors; ``allowed``: with window
    protection (the RTL block follows both)."""
    if kind == "shim":
        return DMA(kind, 0, row, memory=shim_space("ddr", Memory("ddr", SHIM_MEMORY_WORDS)),
                   allowed=allowed)
    return DMA(kind, 0, row, compression=compression, allowed=allowed)

TARGET = PROGRAM_PLACES["memtile"].target
"""The memory-tile program's target region (its first word address)."""


@dataclass
class RandomProgram:
    """A random task program on one tile of a kind, built afresh for every run.

    MM2S 0 reads a random BD chain (padding on the memory tile, 2-D patterns, iteration
    offsets, packet headers, TLAST suppressed or not) from the source region, ``repeat``
    passes, into S2MM 1, whose chain has the same lengths and packet flags and writes
    the target region, releasing lock 1 after each BD; MM2S 1 acquires lock 1 before
    each of its reads of the target region and sends them to a sink with random
    backpressure. On the memory tile MM2S 2 does the same through its own sink, and
    each write releases 2: both readers then often wait on the lock as it opens for
    both, and one acquire a cycle decides which goes first.
    """

    seed: int
    reads: list[BufferDescriptor]
    writes: list[BufferDescriptor]
    repeat: int
    memory: np.ndarray
    sink_ready: list[list[bool]]
    description: str
    tokens: tuple[bool, ...] = (False, False, False)
    kind: str = "memtile"

    @property
    def place(self) -> ProgramPlace:
        """Where it lives on its kind of tile."""
        return PROGRAM_PLACES[self.kind]

    def build(self) -> tuple[list, list, DMA, list[StreamSink]]:
        """``(agents, channels, dma, sinks)`` of a fresh system (a sink per reader)."""
        place = self.place
        dma = program_dma(self.kind, place.row)
        source, offset = dma.memory.resolve(place.source)
        source.load(offset, self.memory)
        n = len(self.reads)
        for k, (read, write) in enumerate(zip(self.reads, self.writes, strict=True)):
            dma.write_bd(k, read)
            dma.write_bd(place.write_bd + k, write)
        link = Stream("link")
        reader = dma.mm2s[0].connect(link)
        writer = dma.s2mm[1].connect(link)
        channels, sinks = [reader, writer], []
        bds = [place.read_bd] if place.third_bd is None else [place.read_bd, place.third_bd]
        for r, bd in enumerate(bds):
            # MM2S 1's stream and sink are "out" and "sink" on every kind; MM2S 2's are numbered.
            out = Stream("out" if r == 0 else f"out{r}")
            dma.write_bd(bd, BufferDescriptor(
                self.kind, base_address=place.target, buffer_length=4, lock_acq_enable=1,
                lock_acq_id=place.lock, lock_acq_value=-1, valid_bd=1))
            channels.append(dma.mm2s[1 + r].connect(out))
            sinks.append(StreamSink("sink" if r == 0 else f"sink{r}", out,
                                    ready=self.sink_ready[r]))
        reader.push(Task(0, self.repeat, self.tokens[0]))
        writer.push(Task(place.write_bd, self.repeat, self.tokens[1]))
        for r, channel in enumerate(channels[2:]):
            channel.push(Task(bds[r], n * self.repeat, self.tokens[2 + r]))
        return [*channels, *sinks], channels, dma, sinks

    def run(self, rtl: str | None = None) -> tuple[SystemReport, list[list[int]], np.ndarray]:
        """``(report, words of each sink, the target region)`` of one run, the model's
        alone or with every channel as ``rtl``'s RTL (:func:`~.loop.rtl_runner`: on
        Verilator by replay of the model's run)."""
        agents, channels, dma, sinks = self.build()
        report = (run_system(agents) if rtl is None
                  else rtl_runner(rtl, self.seed)(agents, channels, 10_000_000))
        target = dma.memory.resolve(self.place.target)
        return report, [sink.data for sink in sinks], target[0].dump(target[1], 64)


def random_read(rng: random.Random, base: int, kind: str = "memtile") -> BufferDescriptor:
    """A random MM2S BD from ``base``: a 2-D or 3-D walk of up to 27 words, zero padding
    on the memory tile, an iteration offset, a packet header and TLAST suppressed, each
    in some draws (the same draws on every kind)."""
    d0_wrap, d1_wrap = rng.randint(1, 4), rng.randint(1, 3)
    fields = {"base_address": base, "d0_wrap": d0_wrap, "d0_stepsize": rng.randint(1, 3),
              "d1_wrap": d1_wrap, "d1_stepsize": rng.randint(4, 9),
              "d2_stepsize": rng.randint(20, 30)}
    # Only the memory tile pads; the draws of the other fields do not depend on the kind.
    if rng.random() < 0.5 and HAS_PADDING[kind]:
        fields["d0_zero_before"] = rng.randint(0, 2)
        fields["d0_zero_after"] = rng.randint(0, 2)
    if rng.random() < 0.4:
        fields["iteration_wrap"] = rng.randint(1, 3)
        fields["iteration_stepsize"] = rng.randint(1, 40)
    span = d0_wrap + fields.get("d0_zero_before", 0) + fields.get("d0_zero_after", 0)
    fields["buffer_length"] = rng.randint(1, span * d1_wrap + 3)
    if rng.random() < 0.4:
        fields["enable_packet"] = 1
        fields["packet_id"] = rng.randint(0, 31)
    fields["tlast_suppress"] = int(rng.random() < 0.3)
    return BufferDescriptor(kind, valid_bd=1, **fields)


def random_program(seed: int, kind: str = "memtile") -> RandomProgram:
    """A random :class:`RandomProgram` on ``kind`` (a key of :data:`PROGRAM_PLACES`);
    the same seed and kind give the same program."""
    if kind not in PROGRAM_PLACES:
        raise field_error(AiedmaError, "kind", kind, "random task programs run on "
                          f"{' or '.join(PROGRAM_PLACES)}")
    place = PROGRAM_PLACES[kind]
    rng = random.Random(seed)
    chain = rng.randint(1, 3)
    reads, writes = [], []
    for k in range(chain):
        read = random_read(rng, place.source + 8 * k, kind)
        more = {"use_next_bd": 1, "next_bd": k + 1} if k + 1 < chain else {}
        reads.append(read.replace(**more) if more else read)
        wmore = ({"use_next_bd": 1, "next_bd": place.write_bd + k + 1} if k + 1 < chain
                 else {})
        writes.append(BufferDescriptor(
            kind, base_address=place.target + 4 * k, buffer_length=read.buffer_length,
            d0_wrap=0, enable_packet=read.enable_packet, lock_rel_id=place.lock,
            lock_rel_value=place.readers, valid_bd=1, **wmore))
    repeat = rng.randint(1, 3)
    memory = np.array([rng.randrange(1 << 32) for _ in range(256)])
    ready = [rng.random() < 0.6 for _ in range(rng.randint(0, 300))]
    tokens = (rng.random() < 0.5, rng.random() < 0.5, rng.random() < 0.5)
    readies = [ready]
    if place.third_bd is not None:
        # Drawn last: the draws above are the same whether or not the place has a
        # second reader.
        tokens += (rng.random() < 0.5,)
        readies.append([rng.random() < 0.6 for _ in range(rng.randint(0, 300))])
    if rng.random() < 0.3:
        # Drawn after the rest, so a seed's other draws stay as they were: a read whose
        # iteration_current starts at or past its wrap (undocumented in hardware; the
        # model's choice, docs/decisions.md, which the RTL must follow too).
        k = rng.randrange(chain)
        current = rng.randint(reads[k].iteration_wrap, reads[k].iteration_wrap + 2)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UndocumentedBehaviourWarning)
            reads[k] = reads[k].replace(iteration_current=current)
    text = f"{kind}, repeat {repeat}, tokens {tokens}, reads {reads}"
    return RandomProgram(seed, reads, writes, repeat, memory, readies, text, tokens, kind)


def check_program(program: RandomProgram, simulator: str) -> SystemReport:
    """Run ``program`` on the model and with its three channels as RTL; raise if they differ."""
    report, words, target = program.run()
    rtl_report, rtl_words, rtl_target = program.run(simulator)
    if words != rtl_words or not np.array_equal(target, rtl_target):
        raise AssertionError(f"seed={program.seed}: outputs differ with {simulator}")
    if report.text() != rtl_report.text():
        raise AssertionError(f"seed={program.seed}: report differs with {simulator}:\n"
                             f"{report.text()}\n{rtl_report.text()}")
    return rtl_report


def bd_table_writes(kind: str, table: dict[int, BufferDescriptor]) -> list[tuple[int, int]]:
    """The register writes ``(address, word)`` that put each BD of ``table`` (by ID)
    into a ``kind`` DMA's BD table."""
    return [(DMA_KINDS[kind].bd_register(n) + 4 * w, word)
            for n, bd in table.items() for w, word in enumerate(bd.encode())]


@dataclass
class WritesProgram:
    """A random program for :func:`~.dma_check.run_dma` (out-of-order and compression
    programs draw one): its register writes, the tile memory it starts from (compared
    after the run), the words each S2MM channel receives, and a line that describes it."""

    seed: int
    kind: str
    writes: list[tuple[int, int]]
    memory: np.ndarray
    inputs: dict[str, list]
    description: str


@dataclass
class FotProgram:
    """A random finish-on-TLAST program for :func:`~.dma_check.run_dma`: S2MM 0 of one
    tile runs a task (a chain of 1 to 3 BDs, repeated) in a random FoT mode on a stream
    whose TLASTs end some BDs early, leave some at their length (an error flag in FoT
    mode) or fall anywhere (mode 0 ignores them); MM2S 0 reads a BD at the same time.
    In mode 3 a host reads the count FIFO's pop register every 1 to 4 cycles
    (``timed``, reads as ``(cycle, address, None)``), so the FIFO fills and empties."""

    seed: int
    kind: str
    mode: int
    writes: list[tuple[int, int]]
    inputs: dict[str, list]
    description: str
    timed: list[tuple[int, int, None]]


def random_fot_program(seed: int, kind: str = "tile") -> FotProgram:
    """A random :class:`FotProgram` on ``kind`` (``"tile"`` or ``"memtile"``)."""
    if kind not in ("tile", "memtile"):
        raise field_error(AiedmaError, "kind", kind, "FoT programs run on tile or memtile")
    rng = random.Random(seed)
    own = DMA_KINDS[kind].memory_window("own").start
    chain, repeat = rng.randint(1, 3), rng.randint(1, 3)
    mode = rng.choice([0, 1, 1, 2, 2, 3])
    table = {}
    for k in range(chain):
        more = {"use_next_bd": 1, "next_bd": k + 1} if k + 1 < chain else {}
        table[k] = BufferDescriptor(kind, base_address=own + 32 * k,
                                    buffer_length=rng.randint(1, 12), valid_bd=1, **more)
    table[8] = BufferDescriptor(kind, base_address=own + 200, buffer_length=rng.randint(1, 20),
                                valid_bd=1)
    words: list[Beat] = []
    for _ in range(repeat):
        for k in range(chain):
            length = table[k].buffer_length
            if mode == 0:      # TLAST is data only: random TLASTs, every BD full
                words += [Beat(rng.randrange(1 << 16), rng.random() < 0.3)
                          for _ in range(length)]
            elif rng.random() < 0.3:   # no TLAST: the BD ends at its length
                words += [Beat(rng.randrange(1 << 16), False) for _ in range(length)]
            else:
                n = rng.randint(1, length)
                words += [Beat(rng.randrange(1 << 16), i == n - 1) for i in range(n)]
    writes = bd_table_writes(kind, table)
    writes += [(control_address(kind, "s2mm", 0), mode << 16 | rng.randrange(256) << 8),
               (start_queue_address(kind, "s2mm", 0),
                Task(0, repeat, rng.random() < 0.5).encode()),
               (start_queue_address(kind, "mm2s", 0), Task(8, 1, True).encode())]
    timed: list[tuple[int, int, None]] = []
    if mode == 3:
        # Reads until long after the last word could have come in, however long the
        # FIFO held it up (a read every `gap` cycles frees a held word within `gap`).
        gap, cycle = rng.randint(1, 4), rng.randint(5, 20)
        for _ in range(len(words) + chain * repeat + 20):
            timed.append((cycle, fot_count_address(kind, 0), None))
            cycle += gap
    text = (f"{kind}, FoT mode {mode}, chain {[table[k].buffer_length for k in range(chain)]}, "
            f"repeat {repeat}, {len(words)} words, {len(timed)} reads")
    return FotProgram(seed, kind, mode, writes, {"s2mm0": words}, text, timed)
