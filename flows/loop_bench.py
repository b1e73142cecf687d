"""Simulated cycles per second of a graph run: the model alone, and with RTL channels.

``python -m aiedma.flows.loop_bench [--iterations N]`` runs the tiling tutorial's graph
(two buffers, ``N`` iterations) four ways in one process, one after the other: the
system model alone stepping every cycle (the baseline, as the RTL runs step), the
model on the scheduler's fast path, every memory-tile channel as RTL on Amaranth's
simulator, and on Verilator (built before the clock starts: a build is not a run).
It prints one row per way: cycles, wall seconds, simulated cycles per second and the
ratio to the model stepping every cycle. The runs must report the same cycles (they are checked on
every cycle); the figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import sys
import time

from ..tb.common.simulators import IN_PROCESS
from ..tb.common.tools import ToolMissing
from ..tb.system.loop import rtl_runner
from .graph_examples import run_tutorial

__all__ = ["loop_rates", "main"]


def loop_rates(iterations: int = 12, num_buffers: int = 2) -> list[dict]:
    """One row per way of running the tutorial graph.

    The baseline (first row) is the model alone stepping every cycle, as the RTL runs
    do; the model on the scheduler's fast path follows.
    """
    rows = []
    ways = [("model", None, True), ("model-fast", None, False),
            *((sim, rtl_runner(sim), True) for sim in IN_PROCESS)]
    for way, rtl, exact in ways:
        try:
            if way == "verilator":
                run_tutorial(num_buffers, 1, rtl=rtl)   # build the library outside the clock
            start = time.perf_counter()
            result = run_tutorial(num_buffers, iterations, rtl=rtl, exact=exact)
            seconds = time.perf_counter() - start
        except ToolMissing as missing:
            rows.append({"way": way, "skipped": str(missing)})
            continue
        cycles = result.report.cycles
        rows.append({"way": way, "cycles": cycles, "seconds": seconds,
                     "cycles_per_s": cycles / seconds})
    base = rows[0]["cycles_per_s"]
    for row in rows:
        if "cycles_per_s" in row:
            row["ratio"] = row["cycles_per_s"] / base
    return rows


def describe(rows: list[dict]) -> list[str]:
    """The rows as text lines."""
    lines = [f"{'graph run':<22}{'cycles':>8}{'seconds':>10}{'cycles/s':>12}{'ratio':>9}"]
    for row in rows:
        name = {"model": "model, every cycle", "model-fast": "model, fast path"}.get(
            row["way"], f"RTL on {row['way']}")
        if "skipped" in row:
            lines.append(f"{name:<22}skipped: {row['skipped']}")
            continue
        lines.append(f"{name:<22}{row['cycles']:>8}{row['seconds']:>10.2f}"
                     f"{row['cycles_per_s']:>12,.0f}{row['ratio']:>9.3f}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m aiedma.flows.loop_bench",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=12)
    args = parser.parse_args(argv)
    print(f"tiling tutorial graph, 2 buffers, {args.iterations} iterations:")
    print("\n".join(describe(loop_rates(args.iterations))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
