"""Benchmarks of the golden model: ``python -m aiedma.flows.model_bench``.

Figures are printed, never asserted: each is the best of several runs, next to
a baseline measured in the same run on the same machine, so the ratio means
something where the absolute rate does not. The functions return the figures
as dicts, which :mod:`aiedma.flows.bench` (``make bench``) saves with the RTL's.

Five figures, all model-only (this module never imports Amaranth or cocotb):

* the walk rate of :data:`HALO_WALK` against ``np.arange`` of the same length;
* the address stream rate of :meth:`~.bd.BufferDescriptor.stream` on
  :data:`PADDED_MEMTILE_BD` and :data:`LONG_SHIM_BD`, against ``np.arange``;
* the task stream rate of :meth:`~.bd.lower.LoweredProgram.element_stream` on
  :func:`chained_program` (16 chained BDs), against ``np.arange``;
* the walk and the lowered task stream of each of :data:`WALK_SHAPES` (five shapes
  unlike the ones above), against ``np.arange``, and the smallest of those ratios;
* the system model's simulated cycles per second on the ping-pong pipeline of
  :func:`~.graph_examples.pipeline_graph` and the memory-tile copy of
  :func:`~.graph_examples.copy_graph`, with one and with two buffers, stepping every
  cycle (``exact=True``, the baseline) and on the scheduler's fast path.
"""

from __future__ import annotations

import argparse
import platform
import time
from collections.abc import Callable, Iterator

import numpy as np

from ..model.bd.descriptor import BufferDescriptor
from ..model.bd.lower import LoweredProgram, lower
from ..model.tiling.parameters import TilingParameters
from .graph_examples import copy_graph, pipeline_graph

__all__ = [
    "CHAINED_TILES",
    "HALO_WALK",
    "LONG_SHIM_BD",
    "PADDED_MEMTILE_BD",
    "QUICK_STREAM_LENGTH",
    "STREAM_BDS",
    "SYSTEM_REPEAT",
    "WALK_SHAPES",
    "best_time",
    "chained_program",
    "describe_elements",
    "describe_shapes",
    "describe_stream",
    "describe_system",
    "describe_walk",
    "element_rate",
    "main",
    "shape_rates",
    "stream_bds",
    "stream_rate",
    "system_rate",
    "system_rates",
    "walk_rate",
]

HALO_WALK = TilingParameters(
    buffer_dimension=[128, 64, 32, 16],
    tiling_dimension=[36, 18, 10, 16],
    offset=[-2, -1, -1, 0],
    tile_traversal=[
        {"dimension": 0, "stride": 32, "wrap": 4},
        {"dimension": 1, "stride": 16, "wrap": 4},
        {"dimension": 2, "stride": 8, "wrap": 4},
    ],
)
"""A 4-D memory-tile read of overlapping halo tiles (a convolution's input):
every tile reaches 2 elements past the buffer in dimension 0 and 1 row / plane
in dimensions 1 and 2, so the edge tiles carry zero padding. 6.6 M elements."""

PADDED_MEMTILE_BD = BufferDescriptor(
    "memtile", buffer_length=129_024, valid_bd=1,
    d0_zero_before=2, d0_wrap=60, d0_zero_after=2,
    d1_zero_before=1, d1_wrap=30, d1_zero_after=1, d1_stepsize=60,
    d2_zero_before=1, d2_wrap=61, d2_zero_after=1, d2_stepsize=1800,
)
"""A memory-tile read BD padded in all three dimensions (a 60x30x61 block read
as 64x32x63 words, 15 % zero words). Its 129,024 words are close to the
longest a memory-tile BD holds: ``buffer_length`` has 17 bits there."""

LONG_SHIM_BD = BufferDescriptor(
    "shim", buffer_length=1 << 22, valid_bd=1,
    d0_wrap=256, d1_wrap=128, d1_stepsize=256, d2_stepsize=32_768,
)
"""A 3-D shim BD of 4,194,304 words (256 x 128 x 128): the shim's 32-bit
``buffer_length`` is the only one that reaches millions of words in one BD
(the shim has no zero padding)."""

WALK_SHAPES: dict[str, TilingParameters] = {
    "4-D halo read": TilingParameters(
        buffer_dimension=[128, 64, 16, 4], tiling_dimension=[132, 66, 3, 4],
        offset=[-2, -1, -1, 0], tile_traversal=[{"dimension": 2, "stride": 1, "wrap": 16}]),
    "transposed tile order": TilingParameters(
        buffer_dimension=[1024, 1024], tiling_dimension=[32, 32],
        tile_traversal=[{"dimension": 1, "stride": 32, "wrap": 32},
                        {"dimension": 0, "stride": 32, "wrap": 32}]),
    "many small tiles": TilingParameters(
        buffer_dimension=[512, 512], tiling_dimension=[4, 4], repetition=4,
        tile_traversal=[{"dimension": 0, "stride": 4, "wrap": 128},
                        {"dimension": 1, "stride": 4, "wrap": 128}]),
    "wrap-heavy 3-D": TilingParameters(
        buffer_dimension=[30, 20, 40], tiling_dimension=[3, 5, 7], repetition=32,
        tile_traversal=[{"dimension": 0, "stride": 3, "wrap": 10},
                        {"dimension": 1, "stride": 5, "wrap": 4},
                        {"dimension": 2, "stride": 7, "wrap": 5}]),
    "1-element inner dimension": TilingParameters(
        buffer_dimension=[2, 512, 256], tiling_dimension=[1, 512, 8], repetition=2,
        tile_traversal=[{"dimension": 0, "stride": 1, "wrap": 2},
                        {"dimension": 2, "stride": 8, "wrap": 32}]),
}
"""Memory-tile reads unlike :data:`HALO_WALK` and :func:`chained_program`, each walked
(``indices()``) and lowered to BDs (``element_stream()``):

* *4-D halo read*: 3-plane windows of a 128x64x16x4 buffer with a 2-element and a
  1-row halo, zero-padded at the edges (10 % zeros), 16 chained BDs;
* *transposed tile order*: 32x32 tiles of a 1024x1024 buffer, a column of tiles
  before the next column (the traversal's inner loop runs along dimension 1);
* *many small tiles*: 4x4 tiles, 16 k of them, read 4 times;
* *wrap-heavy 3-D*: 3x5x7 tiles under three traversal loops (200 tiles of 105
  elements), 32 times: short loops everywhere, a task of 160 passes;
* *1-element inner dimension*: tiles one element wide in dimension 0, so every
  element steps dimension 1 (stride 2 in memory).

About a million elements each: big enough that a rate means something, small enough
that every figure is the best of several runs."""

CHAINED_TILES = 16
"""Port-program entries of :func:`chained_program`: one memory-tile BD each."""


def chained_program(quick: bool = False) -> LoweredProgram:
    """A memory-tile read of :data:`CHAINED_TILES` padded tiles, lowered to chained BDs.

    Each entry reads a 260 x 264 tile of a 256 x 272 int32 buffer from 2 elements
    before it (zero padding on three sides; odd entries start 8 rows lower), so no two
    neighbouring BDs can merge: 16 chained BDs, 1.1 M elements. ``quick``: a 64 x 32
    buffer, the same shape of chain.
    """
    width, rows = (64, 32) if quick else (256, 272)
    entries = [TilingParameters(buffer_dimension=[width, rows],
                                tiling_dimension=[width + 4, rows - 8],
                                offset=[-2, (k % 2) * 8 - 2], tile_traversal=[])
               for k in range(CHAINED_TILES)]
    return lower(entries, "memtile", "read")


STREAM_BDS = {"padded memtile read": PADDED_MEMTILE_BD, "long shim": LONG_SHIM_BD}
"""The BDs of the stream figure, by the name a report gives them."""

QUICK_STREAM_LENGTH = 1 << 14
"""The longest ``buffer_length`` of a stream BD in a quick (smoke) run."""

SYSTEM_REPEAT = 3
"""Timings of a system figure at most: an exact run of the copy graph lasts seconds."""


def best_time(fn: Callable[[], object], repeat: int) -> float:
    """Fastest of ``repeat`` wall-clock timings of ``fn()``.

    Parameters
    ----------
    fn : callable
        Called with no argument; its result is discarded.
    repeat : int
        Timed calls (at least 1).

    Returns
    -------
    float
        Seconds of the fastest call: the least disturbed by the rest of the machine.
    """
    best = float("inf")
    for _ in range(max(1, repeat)):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def _against_arange(name: str, fn: Callable[[], object], n: int, repeat: int) -> dict:
    """Best time of ``fn`` (``<name>_s``) and of ``np.arange(n)`` (``arange_s``), as rates.

    The baseline is ``np.arange`` of ``n`` int64, what any index stream costs at
    least; ``rate`` and ``arange_rate`` are ``n`` per second, ``ratio`` the first
    over the second.
    """
    seconds = best_time(fn, repeat)
    arange = best_time(lambda: np.arange(n, dtype=np.int64), repeat)
    return {f"{name}_s": seconds, "arange_s": arange, "rate": n / seconds,
            "arange_rate": n / arange, "ratio": arange / seconds}


def walk_rate(tp: TilingParameters = HALO_WALK, repeat: int = 7) -> dict:
    """Time :meth:`~.tiling.TilingParameters.indices` against ``np.arange`` of its length.

    Parameters
    ----------
    tp : TilingParameters
        Validated as a memory-tile read (the only context with zero padding).
    repeat : int
        Timings per figure; the best is kept.

    Returns
    -------
    dict
        ``elements``, ``zero_fraction``, ``repeat``, ``walk_s`` and ``arange_s``
        (best times), ``rate`` and ``arange_rate`` (indices/s) and ``ratio``
        (walk rate over ``np.arange`` rate).
    """
    tp = tp.validate(kind="memtile", direction="read")
    n = tp.stream_length()
    zeros = int(np.count_nonzero(tp.indices() < 0))
    return ({"elements": n, "zero_fraction": zeros / n, "repeat": repeat}
            | _against_arange("walk", tp.indices, n, repeat))


def stream_rate(bd: BufferDescriptor, repeat: int = 7) -> dict:
    """Time :meth:`~.bd.BufferDescriptor.stream` against ``np.arange`` of its length.

    Parameters
    ----------
    bd : BufferDescriptor
        Any BD; its ``buffer_length`` words are produced per call.
    repeat : int
        Timings per figure; the best is kept.

    Returns
    -------
    dict
        ``kind``, ``words``, ``zero_fraction``, ``repeat``, ``stream_s`` and
        ``arange_s`` (best times), ``rate`` and ``arange_rate`` (words/s) and
        ``ratio`` (stream rate over ``np.arange`` rate).
    """
    n = bd.buffer_length
    zeros = int(np.count_nonzero(bd.stream() < 0))
    return ({"kind": bd.kind, "words": n, "zero_fraction": zeros / n if n else 0.0,
             "repeat": repeat} | _against_arange("stream", bd.stream, n, repeat))


def element_rate(program: LoweredProgram, repeat: int = 7) -> dict:
    """Time :meth:`~.bd.lower.LoweredProgram.element_stream` against ``np.arange``.

    Returns
    -------
    dict
        ``bds``, ``elements``, ``zero_fraction``, ``repeat``, ``element_s`` and
        ``arange_s`` (best times), ``rate`` and ``arange_rate`` (elements/s) and
        ``ratio`` (element rate over ``np.arange`` rate).
    """
    elements = program.element_stream()
    n = elements.size
    return ({"bds": len(program.bds), "elements": n,
             "zero_fraction": float(np.count_nonzero(elements < 0)) / n if n else 0.0,
             "repeat": repeat} | _against_arange("element", program.element_stream, n, repeat))


def shape_rates(repeat: int = 7) -> list[dict]:
    """The walk and the lowered stream of every :data:`WALK_SHAPES`, against ``np.arange``.

    Each shape is validated as a memory-tile read and lowered to memory-tile BDs; the
    lowered stream must equal the walk (a wrong stream has no rate).

    Parameters
    ----------
    repeat : int
        Timings per figure; the best is kept.

    Returns
    -------
    list of dict
        Per shape: ``name``, ``elements``, ``zero_fraction``, ``bds`` and ``passes``
        (the lowered task's BDs and repeat count), ``repeat``, and ``walk`` and
        ``stream``, each an :func:`_against_arange` result (``ratio`` the rate over
        ``np.arange``'s).

    Raises
    ------
    AssertionError
        If a shape's lowered stream differs from its walk.
    """
    rows = []
    for name, tp in WALK_SHAPES.items():
        tp = tp.validate(kind="memtile", direction="read")
        program = lower(tp, "memtile", "read")
        indices = tp.indices()
        if not np.array_equal(program.element_stream(), indices):
            raise AssertionError(f"shape {name!r}: the lowered stream differs from the walk")
        n = indices.size
        rows.append({"name": name, "elements": n,
                     "zero_fraction": float(np.count_nonzero(indices < 0)) / n,
                     "bds": len(program.bds), "passes": program.task.repeat_count,
                     "repeat": repeat,
                     "walk": _against_arange("walk", tp.indices, n, repeat),
                     "stream": _against_arange("stream", program.element_stream, n, repeat)})
    return rows


def stream_bds(quick: bool = False) -> dict[str, BufferDescriptor]:
    """:data:`STREAM_BDS`; with ``quick``, cut to :data:`QUICK_STREAM_LENGTH` words.

    A BD may end mid-pattern, so a shorter ``buffer_length`` is still legal.
    """
    if not quick:
        return dict(STREAM_BDS)
    return {name: bd.replace(buffer_length=min(bd.buffer_length, QUICK_STREAM_LENGTH))
            for name, bd in STREAM_BDS.items()}


SYSTEM_GRAPHS: dict[str, dict] = {
    "pipeline": {"num_buffers": (1, 2), "iterations": 1000, "size": 64},
    "copy": {"num_buffers": (1, 2), "iterations": 4, "shape": (256, 64)},
}
"""The system figures: the ping-pong pipeline (kernels with 16- and 64-word buffers)
and the memory-tile copy of one 256x64 buffer, each with one and two buffers. The
pipeline runs 1000 iterations: long enough for the periodic jump
(``model/system/periodic.py``) to cover most of the run, as it does for a real layer's
loop, rather than its first and last periods and its search."""

QUICK_SYSTEM_GRAPHS: dict[str, dict] = {
    "pipeline": {"num_buffers": (1, 2), "iterations": 5, "size": 64},
    "copy": {"num_buffers": (1, 2), "iterations": 2, "shape": (32, 16)},
}


def _system_run(graph: str, num_buffers: int, settings: dict) -> tuple[Callable, np.ndarray]:
    """A call that builds, compiles and runs one system figure's graph, and its input."""
    if graph == "pipeline":
        words = settings["size"]
        build = lambda: pipeline_graph(num_buffers, words)  # noqa: E731
    else:
        words = int(np.prod(settings["shape"]))
        build = lambda: copy_graph(settings["shape"], num_buffers)  # noqa: E731
    data = np.arange(settings["iterations"] * words, dtype=np.int32)
    return build, data


def system_rate(graph: str, num_buffers: int, settings: dict, repeat: int = 3) -> dict:
    """Simulated cycles per second of the system model, stepping every cycle and fast.

    Runs ``graph`` (``"pipeline"``: :func:`~.graph_examples.pipeline_graph`,
    ``"copy"``: :func:`~.graph_examples.copy_graph`) for ``settings["iterations"]``,
    the graph built and compiled inside the timed call as ``Graph.run`` does it, once
    with ``exact=True`` (the baseline) and once on the fast path, in the same run.

    Returns
    -------
    dict
        ``graph``, ``num_buffers``, ``iterations``, ``words`` (into the buffer),
        ``cycles`` (simulated, the same both ways), ``repeat``; per mode ``exact`` /
        ``fast``: ``<mode>_s`` (best wall time) and ``<mode>_cycles_per_s``; and
        ``speedup`` (fast over exact).

    Raises
    ------
    AssertionError
        If an output is wrong, or the two modes' outputs or reports differ: a wrong
        run has no rate.
    """
    build, data = _system_run(graph, num_buffers, settings)
    expected = data * 3 + 1 if graph == "pipeline" else data
    row = {"graph": graph, "num_buffers": num_buffers, "iterations": settings["iterations"],
           "words": int(data.size), "repeat": repeat}
    reports = []
    for mode in ("exact", "fast"):
        results: list = []

        def run(exact: bool = mode == "exact", into: list = results) -> None:
            into.append(build().run(settings["iterations"], {"in": data}, exact=exact))

        wall = best_time(run, repeat)
        result = results[-1]
        if not np.array_equal(result.outputs["out"].ravel(), expected):
            raise AssertionError(f"{graph} with num_buffers={num_buffers} ({mode}) gave a "
                                 "wrong output")
        reports.append(result.report.text())
        row[f"{mode}_s"] = wall
        row[f"{mode}_cycles_per_s"] = result.report.cycles / wall
        row["cycles"] = result.report.cycles
    if reports[0] != reports[1]:
        raise AssertionError(f"{graph} with num_buffers={num_buffers}: the fast path's report "
                             f"differs:\n{reports[0]}\n{reports[1]}")
    row["speedup"] = row["fast_cycles_per_s"] / row["exact_cycles_per_s"]
    return row


def system_rates(repeat: int, quick: bool = False) -> Iterator[dict]:
    """:func:`system_rate` of every graph of :data:`SYSTEM_GRAPHS` (or the quick ones).

    Each figure is the best of ``repeat`` timings, at most :data:`SYSTEM_REPEAT`.
    """
    for graph, settings in (QUICK_SYSTEM_GRAPHS if quick else SYSTEM_GRAPHS).items():
        for num_buffers in settings["num_buffers"]:
            yield system_rate(graph, num_buffers, settings, repeat=min(repeat, SYSTEM_REPEAT))


def _describe_against_arange(r: dict, name: str, call: str, unit: str,
                             digits: int) -> list[str]:
    """The time, rate and ratio lines of an :func:`_against_arange` result."""
    return [f"  {call + ':':12}{r[name + '_s'] * 1e3:8.2f} ms  {r['rate'] / 1e6:8.1f} M {unit}/s",
            f"  {'np.arange:':12}{r['arange_s'] * 1e3:8.2f} ms  {r['arange_rate'] / 1e6:8.1f} "
            f"M {unit}/s",
            f"  ratio {name}/arange rate: {r['ratio']:.{digits}f}"]


def describe_walk(r: dict) -> list[str]:
    """Lines a person reads for a :func:`walk_rate` result."""
    return [f"4-D halo walk: {r['elements']:,} elements ({r['zero_fraction']:.1%} zero "
            f"padding), best of {r['repeat']}",
            *_describe_against_arange(r, "walk", "indices()", "indices", 2)]


def describe_stream(r: dict) -> list[str]:
    """Lines a person reads for a :func:`stream_rate` result."""
    return [f"{r['kind']} BD stream(): {r['words']:,} words ({r['zero_fraction']:.1%} zero), "
            f"best of {r['repeat']}",
            *_describe_against_arange(r, "stream", "stream()", "words", 3)]


def describe_elements(r: dict) -> list[str]:
    """Lines a person reads for an :func:`element_rate` result."""
    return [f"element_stream() of {r['bds']} chained memtile BDs: {r['elements']:,} elements "
            f"({r['zero_fraction']:.1%} zero), best of {r['repeat']}",
            *_describe_against_arange(r, "element", "elements()", "elements", 3)]


def describe_shapes(rows: list[dict]) -> list[str]:
    """Lines a person reads for :func:`shape_rates`: one per shape, then the smallest."""
    lines = ["walk and lowered stream of five shapes against np.arange (ratio = rate over "
             "np.arange's rate, best of each):"]
    for r in rows:
        lines.append(f"  {r['name'] + ':':28}{r['elements']:>10,} elements "
                     f"({r['zero_fraction']:4.0%} zero, {r['bds']:2} BDs x {r['passes']:3} "
                     f"passes)  walk {r['walk']['ratio']:.2f}  stream {r['stream']['ratio']:.2f}")
    for figure in ("walk", "stream"):
        low = min(rows, key=lambda r, f=figure: r[f]["ratio"])
        lines.append(f"  smallest {figure} ratio: {low[figure]['ratio']:.2f} ({low['name']})")
    return lines


def describe_system(r: dict) -> list[str]:
    """Lines a person reads for a :func:`system_rate` result."""
    return [f"system model, {r['graph']} graph num_buffers={r['num_buffers']}: "
            f"{r['iterations']} iterations, {r['words']:,} words, {r['cycles']:,} cycles "
            f"(best of {r['repeat']})",
            f"  exact (every cycle): {r['exact_s']:8.3f} s  {r['exact_cycles_per_s'] / 1e3:9.1f} "
            "k cycles/s",
            f"  fast path:           {r['fast_s']:8.3f} s  {r['fast_cycles_per_s'] / 1e3:9.1f} "
            "k cycles/s",
            f"  ratio fast/exact: {r['speedup']:.1f}"]


def main(argv: list[str] | None = None) -> None:
    """Print the model's figures: walks, BD and task streams, and the system model."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7, help="runs per figure (best is kept)")
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke run)")
    args = parser.parse_args(argv)

    print(f"machine: {platform.machine()}, {platform.python_implementation()} "
          f"{platform.python_version()}, numpy {np.__version__}")
    _print(describe_walk(walk_rate(HALO_WALK, args.repeat)))
    for bd in stream_bds(args.quick).values():
        _print(describe_stream(stream_rate(bd, args.repeat)))
    _print(describe_elements(element_rate(chained_program(args.quick), args.repeat)))
    _print(describe_shapes(shape_rates(args.repeat)))
    for r in system_rates(args.repeat, args.quick):
        _print(describe_system(r))


def _print(lines: list[str]) -> None:
    print("\n".join(lines), flush=True)

if __name__ == "__main__":
    main()
