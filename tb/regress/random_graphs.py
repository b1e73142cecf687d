"""Random graphs and task programs, each channel's engine as RTL inside the system model.

``python -m aiedma.tb random-graphs [--graphs N] [--programs N] [--seed S] [--sim ...]``:
``N`` random graphs (:func:`~aiedma.tb.system.random_programs.random_graph`) and random
task programs (:func:`~aiedma.tb.system.random_programs.random_program`) per simulator,
each run with the model alone and with every channel's engine as RTL, compared on every
port of every cycle; one line per kind of draw and simulator, exit 1 on any mismatch.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from ..system.loop import RUNS_ON
from ..system.random_programs import check_graph, check_program, random_graph, random_program

__all__ = ["RUNS_ON", "main"]


def _regression(what: str, count: int, first: int, simulator: str, draw, check) -> int:
    """Run ``count`` draws from seed ``first``; print one summary line; return the failures."""
    start, cycles, mismatches = time.perf_counter(), 0, 0
    for seed in range(first, first + count):
        drawn = draw(seed)
        try:
            report: Any = check(drawn, simulator)
        except AssertionError as error:   # a LoopMismatch is one, with its cycle and seed
            mismatches += 1
            print(f"FAIL {what} on {simulator}, seed={seed}: {error}\n  {drawn.description}")
            continue
        cycles += report.cycles
    print(f"random {what} on {simulator}: {count} (seeds {first}..{first + count - 1}), "
          f"{cycles} cycles compared, model and RTL cycles equal: {mismatches == 0}, "
          f"{mismatches} mismatches, {time.perf_counter() - start:.1f} s")
    return mismatches


def main(argv: list[str] | None = None) -> int:
    """Run the regression; print one line per kind of draw and simulator; 1 on a mismatch."""
    parser = argparse.ArgumentParser(prog="python -m aiedma.tb random-graphs",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--graphs", type=int, default=200)
    parser.add_argument("--programs", type=int, default=None,
                        help="random task programs (default: as many as --graphs)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--sim", nargs="+", choices=RUNS_ON, default=list(RUNS_ON))
    args = parser.parse_args(argv)
    programs = args.graphs if args.programs is None else args.programs
    failed = 0
    for simulator in args.sim:
        failed += _regression("graphs", args.graphs, args.seed, simulator, random_graph,
                              lambda d, sim: check_graph(d, sim).report.system)
        failed += _regression("task programs", programs, args.seed, simulator, random_program,
                              check_program)
    return 1 if failed else 0

