"""Random graphs for RTL-in-the-loop regressions: the model alone and with RTL must agree.

:func:`random_graph` draws, from a seed, a graph a user could write: a 1-D or 2-D
shared buffer (one or two buffers, ping-pong), written from a graph input with a
random tiling that covers it, read by one or two ports with random tiles, traversal
orders, offsets and zero padding (tiles running past the buffer), over 1 to 3
iterations, with random backpressure on every graph output. Draws that the
tiling or lowering rules refuse are drawn again. :func:`check_graph` runs one
with the model alone and with every memory-tile channel as RTL, and compares the
outputs and every report column.

``python -m aiedma.tb.loop_random [--graphs N] [--seed S] [--sim amaranth verilator]``
runs a regression and prints one line per simulator.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..model.errors import AiedmaError
from ..model.system.graph import Graph, GraphResult
from .loop import SIMULATORS

__all__ = ["RandomGraph", "check_graph", "random_graph"]


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
        return self.graph.run(self.iterations, self.inputs, rtl=rtl,
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
    aiedma.tb.loop.LoopMismatch
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m aiedma.tb.loop_random",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--graphs", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--sim", nargs="+", choices=SIMULATORS, default=list(SIMULATORS))
    args = parser.parse_args(argv)
    failed = 0
    for simulator in args.sim:
        start, cycles, words, mismatches = time.perf_counter(), 0, 0, 0
        for seed in range(args.seed, args.seed + args.graphs):
            drawn = random_graph(seed)
            try:
                result: Any = check_graph(drawn, simulator)
            except AssertionError as error:
                mismatches += 1
                print(f"FAIL {simulator} seed={seed}: {error}\n  {drawn.description}")
                continue
            cycles += result.report.cycles
            words += sum(result.report.system.words.values())
        failed += mismatches
        print(f"random graphs on {simulator}: {args.graphs} graphs (seeds {args.seed}.."
              f"{args.seed + args.graphs - 1}), {cycles} cycles compared, {words} words, "
              f"{mismatches} mismatches, {time.perf_counter() - start:.1f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
