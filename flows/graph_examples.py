"""Example graphs: the tiling tutorial (docs/tiling.md), ping-pong, packet split and merge.

``python -m aiedma.flows.graph_examples`` runs the tutorial graph with one and two
buffers, checks what kernels k3 and k4 received against the walks of their
``read_access`` tilings, and prints the reports (what ``make sim`` can show).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

import numpy as np

from ..model.system.graph import Graph, GraphResult, RtlRunner
from ..model.system.scheduler import report_legend
from ..model.tiling.parameters import TilingParameters
from ..tb.common.simulators import IN_PROCESS
from ..tb.common.tools import ToolMissing
from ..tb.system.loop import LoopMismatch, rtl_runner

__all__ = [
    "TUTORIAL_READS",
    "TUTORIAL_WRITES",
    "compare_tutorial",
    "copy_graph",
    "packet_merge_graph",
    "packet_split_graph",
    "pipeline_graph",
    "run_tutorial",
    "tutorial_graph",
]

_SHAPE = [10, 6]
TUTORIAL_WRITES: tuple[dict, ...] = (
    {"buffer_dimension": _SHAPE, "tiling_dimension": [3, 2], "offset": [0, 0],
     "tile_traversal": [(0, 3, 2), (1, 2, 3)]},
    {"buffer_dimension": _SHAPE, "tiling_dimension": [2, 3], "offset": [6, 0],
     "tile_traversal": [(1, 3, 2), (0, 2, 2)]},
)
"""Worked examples 1 and 2 of docs/tiling.md: how kernels k1 and k2 write the 10x6 buffer."""

TUTORIAL_READS: tuple[dict, ...] = (
    {"buffer_dimension": _SHAPE, "tiling_dimension": [2, 6], "offset": [0, 0],
     "tile_traversal": [(0, 2, 2)]},
    {"buffer_dimension": _SHAPE, "tiling_dimension": [3, 6], "offset": [4, 0],
     "tile_traversal": [(0, 3, 2)]},
)
"""Worked examples 3 and 4 of docs/tiling.md: how kernels k3 and k4 read it."""


def _identity(x: np.ndarray) -> np.ndarray:
    return x


def tutorial_graph(num_buffers: int = 1, repetition_count: int = 1) -> Graph:
    """in1 -> k1 and in2 -> k2 write a 10x6 shared buffer; k3 and k4 read it to out3, out4.

    k1 and k2 pass 6-element buffers (so they run 6 and 4 times per iteration);
    k3 and k4 take their whole reads (24 and 36 elements).
    """
    g = Graph("tutorial")
    k1, k2 = g.kernel("k1", _identity, [6], [6]), g.kernel("k2", _identity, [6], [6])
    k3, k4 = g.kernel("k3", _identity, [24], [24]), g.kernel("k4", _identity, [36], [36])
    buf = g.shared_buffer(_SHAPE, 2, 2, name="mtx")
    buf.num_buffers = num_buffers
    buf.repetition_count = repetition_count
    for k, (writer, reader) in enumerate(((k1, k3), (k2, k4))):
        g.connect(g.input(f"in{k + 1}"), writer.inputs[0])
        g.connect(writer.outputs[0], buf.inputs[k])
        g.connect(buf.outputs[k], reader.inputs[0])
        g.connect(reader.outputs[0], g.output(f"out{k + 3}"))
        buf.write_access(buf.inputs[k], TUTORIAL_WRITES[k])
        buf.read_access(buf.outputs[k], TUTORIAL_READS[k])
    return g


def pipeline_graph(num_buffers: int = 1, size: int = 64) -> Graph:
    """in -> producer (x3, 16-element buffers) -> shared buffer of ``size`` -> consumer (+1)."""
    g = Graph("pipeline")
    producer = g.kernel("producer", lambda x: x * 3, [16], [16])
    consumer = g.kernel("consumer", lambda x: x + 1, [size], [size])
    buf = g.shared_buffer([size], 1, 1, name="buf")
    buf.num_buffers = num_buffers
    g.connect(g.input("in"), producer.inputs[0])
    g.connect(producer.outputs[0], buf.inputs[0])
    g.connect(buf.outputs[0], consumer.inputs[0])
    g.connect(consumer.outputs[0], g.output("out"))
    buf.write_access(0, {"tiling_dimension": [size]})
    buf.read_access(0, {"tiling_dimension": [size]})
    return g


def copy_graph(shape: Sequence[int] = (256, 64), num_buffers: int = 2) -> Graph:
    """in -> shared buffer of ``shape`` (``num_buffers`` copies) -> out, whole-buffer tiles.

    The memory tile alone: an S2MM channel fills a buffer while an MM2S channel
    drains the other one (ping-pong with two buffers).
    """
    g = Graph("copy")
    buf = g.shared_buffer(list(shape), 1, 1, name="buf")
    buf.num_buffers = num_buffers
    g.connect(g.input("in"), buf.inputs[0])
    g.connect(buf.outputs[0], g.output("out"))
    buf.write_access(0, {"tiling_dimension": list(shape)})
    buf.read_access(0, {"tiling_dimension": list(shape)})
    return g


def packet_split_graph() -> Graph:
    """One read of the 10x6 buffer with two entries (packet IDs 0 and 1) split to k3 and k4."""
    g = Graph("packet split")
    buf = g.shared_buffer(_SHAPE, 1, 1, name="mtx")
    split = g.pktsplit(2, "split")
    k3, k4 = g.kernel("k3", _identity, [24], [24]), g.kernel("k4", _identity, [36], [36])
    g.connect(g.input("in"), buf.inputs[0])
    g.connect(buf.outputs[0], split.inputs[0])
    for k, kernel in enumerate((k3, k4)):
        g.connect(split.outputs[k], kernel.inputs[0])
        g.connect(kernel.outputs[0], g.output(f"out{k + 3}"))
    buf.write_access(0, {"tiling_dimension": _SHAPE})
    buf.read_access(0, [read | {"packet_port_id": k} for k, read in enumerate(TUTORIAL_READS)])
    return g


def packet_merge_graph() -> Graph:
    """A kernel (packet ID 0) and a memory-tile read (ID 1) merged into one kernel's input.

    ``in_a -> ka`` (8-element buffers, 2 runs an iteration) feeds ``merge.in[0]``;
    ``in_b`` fills a 16-element shared buffer whose read has two 8-element entries
    with ``packet_port_id = 1`` (one packet each, headers from the MM2S) into
    ``merge.in[1]``; ``merge.out`` feeds ``collector`` (8-element buffer, so one
    packet a run: it runs 4 times an iteration), which passes its buffers to ``out``.
    """
    g = Graph("packet merge")
    ka = g.kernel("ka", _identity, [8], [8], runs=2)
    buf = g.shared_buffer([16], 1, 1, name="mtx")
    merge = g.pktmerge(2, "merge")
    collector = g.kernel("collector", _identity, [8], [8])
    g.connect(g.input("in_a"), ka.inputs[0])
    g.connect(ka.outputs[0], merge.inputs[0])
    g.connect(g.input("in_b"), buf.inputs[0])
    g.connect(buf.outputs[0], merge.inputs[1])
    g.connect(merge.outputs[0], collector.inputs[0])
    g.connect(collector.outputs[0], g.output("out"))
    buf.write_access(0, {"tiling_dimension": [16]})
    buf.read_access(0, [{"tiling_dimension": [8], "offset": [k], "packet_port_id": 1}
                        for k in (0, 8)])
    return g


def run_tutorial(num_buffers: int = 1, iterations: int = 3, rtl: RtlRunner | None = None,
                 exact: bool = False) -> GraphResult:
    """Run :func:`tutorial_graph`; iteration ``i`` writes element ``e`` as ``e + 1000 i``.

    ``rtl`` (``rtl_runner(simulator)``) runs every memory-tile channel as RTL, ``exact``
    steps every cycle of the model (``Graph.run``).

    Raises
    ------
    AssertionError
        If k3 or k4 did not receive exactly the elements their tilings walk.
    """
    walks = [TilingParameters.from_dict(t).indices() for t in (*TUTORIAL_WRITES, *TUTORIAL_READS)]
    stamp = 1000 * np.arange(iterations)[:, None]
    result = tutorial_graph(num_buffers).run(
        iterations, {"in1": walks[0] + stamp, "in2": walks[1] + stamp}, rtl=rtl, exact=exact)
    for name, walk in (("out3", walks[2]), ("out4", walks[3])):
        if not np.array_equal(result.outputs[name], walk + stamp):
            raise AssertionError(f"{name} got {result.outputs[name].tolist()}")
    return result


def compare_tutorial(num_buffers: int, iterations: int, simulator: str,
                     model: GraphResult | None = None) -> tuple[str, bool]:
    """Run the tutorial graph with every memory-tile channel as RTL; one line and a verdict.

    The line gives the cycles of the model-only run (``model``, run here when not
    given) and of the RTL run, the words moved and the mismatches; the verdict is
    True when the RTL run gave the model's report. A mismatch or a missing simulator
    is reported in the line (a missing simulator is not a failure).
    """
    model = model or run_tutorial(num_buffers, iterations)
    try:
        rtl = run_tutorial(num_buffers, iterations, rtl=rtl_runner(simulator))
    except ToolMissing as missing:
        return f"  RTL on {simulator}: skipped, {missing}", True
    except LoopMismatch as mismatch:
        return f"  RTL on {simulator}: 1 mismatch: {mismatch}", False
    words = sum(rtl.report.system.words.values())
    same = rtl.report.text() == model.report.text()
    return (f"  RTL on {simulator:9}: cycles model {model.report.cycles}, RTL "
            f"{rtl.report.cycles}; {words} words; 0 mismatches"
            + ("" if same else "; REPORTS DIFFER")), same


def main() -> int:
    """Run the tutorial graph with one and two buffers, then with RTL channels; print reports.

    With RTL, every memory-tile channel's engine runs on Amaranth's simulator and on
    Verilator inside the same cycles, compared with the model on every port of every
    cycle; one line per run gives the cycles of the model-only run and of the RTL run,
    the words moved and the mismatches (a mismatch stops the run and is printed).
    """
    failed = 0
    for num_buffers in (1, 2):
        result = run_tutorial(num_buffers)
        print(f"tiling tutorial graph, num_buffers={num_buffers}: k3 and k4 received "
              f"exactly the listed elements in 3 iterations")
        print(result.report.text())
        print()
        for simulator in IN_PROCESS:
            line, ok = compare_tutorial(num_buffers, 3, simulator, result)
            failed += not ok
            print(line)
        print()
    print(report_legend())
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
