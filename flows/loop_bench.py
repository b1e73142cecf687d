"""Simulated cycles per second of graph runs and whole DMAs with RTL checked every cycle.

``python -m aiedma.flows.loop_bench [--iterations N] [--copy-iterations N] [--copy-repeat N]
[--programs N] [--lockstep-programs N] [--jobs J] [--only tutorial,copy,dma]`` prints
three tables, each way measured one after the other in one process, every build made
(and every top exported) before the clock starts: a build is not a run.

* ``tutorial``: the tiling tutorial's graph (two buffers, ``N`` iterations): the model
  alone stepping every cycle (the baseline), on the fast path, every memory-tile
  channel's engine as RTL on Amaranth (lockstep), on Verilator in lockstep, and on
  Verilator by replay of the model's run (:mod:`aiedma.tb.system.loop_replay`).
* ``copy``: the ping-pong copy graph (``copy_graph((256, 64), 2)``, 4 iterations,
  81,989 cycles): the model alone on the fast path and the replay (the model's run and
  recording, the replays running beside it, and the replays left after it, timed
  apart), each the best of ``--copy-repeat`` runs, and the lockstep run on Verilator, the
  baseline. Rates are compared cycles (system cycles, every RTL channel compared in
  each) over the wall time of ``Graph.run`` end to end, graph building included.
* ``dma``: random task programs on each kind's whole RTL DMA on Verilator
  (``python -m aiedma.tb dma-programs``): by replay (``--programs``, the model's run and
  the replays timed apart), the same replays on ``--jobs`` processes forked from the
  bench's (default: every core; ``python -m aiedma.tb dma-programs --jobs``), and in
  lockstep (``--lockstep-programs``, fewer: it is slow; the ratio is per program).

Every run is checked on every cycle; a mismatch stops the bench. The figures are
printed, never asserted.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable

import numpy as np

from ..tb.common.shards import run_forked
from ..tb.common.simulators import IN_PROCESS
from ..tb.common.tools import ToolMissing
from ..tb.regress.dma_sweep import dma_shard, program_calls
from ..tb.system import dma_check
from ..tb.system.loop import rtl_runner
from ..tb.system.loop_replay import run_replayed
from ..tb.system.random_programs import PROGRAM_PLACES, random_program
from .graph_examples import copy_graph, run_tutorial

__all__ = ["copy_rates", "dma_rates", "loop_rates", "main"]

COPY_SHAPE = (256, 64)
COPY_ITERATIONS = 4
COPY_REPEAT = 5
"""Runs of the copy graph's short ways (model alone, replay): the best is reported."""


def loop_rates(iterations: int = 12, num_buffers: int = 2) -> list[dict]:
    """One row per way of running the tutorial graph.

    The baseline (first row) is the model alone stepping every cycle, as the lockstep
    RTL runs do; the model on the scheduler's fast path follows.
    """
    rows = []
    ways = [("model", None, True), ("model-fast", None, False),
            *((sim, rtl_runner(sim, lockstep=True), True) for sim in IN_PROCESS),
            ("verilator-replay", rtl_runner("verilator"), False)]
    for way, rtl, exact in ways:
        try:
            if rtl is not None:
                run_tutorial(num_buffers, 1, rtl=rtl)   # build and export outside the clock
            start = time.perf_counter()
            result = run_tutorial(num_buffers, iterations, rtl=rtl, exact=exact)
            seconds = time.perf_counter() - start
        except ToolMissing as missing:
            rows.append({"way": way, "skipped": str(missing)})
            continue
        cycles = result.report.cycles
        rows.append({"way": way, "cycles": cycles, "seconds": seconds,
                     "cycles_per_s": cycles / seconds})
    _ratios(rows, rows[0])
    return rows


def _ratios(rows: list[dict], base: dict) -> None:
    for row in rows:
        if "cycles_per_s" in row:
            row["ratio"] = row["cycles_per_s"] / base["cycles_per_s"]


def _timed_copy(rtl: Callable | None, iterations: int) -> tuple[int, float]:
    data = np.arange(iterations * int(np.prod(COPY_SHAPE)), dtype=np.int32)
    start = time.perf_counter()
    result = copy_graph(COPY_SHAPE, 2).run(iterations, {"in": data}, rtl=rtl)
    return result.report.cycles, time.perf_counter() - start


def copy_rates(iterations: int = COPY_ITERATIONS, repeat: int = COPY_REPEAT) -> list[dict]:
    """The ping-pong copy graph: model alone, replay on Verilator, lockstep on Verilator.

    The baseline (ratio 1) is the lockstep run, run once (it takes seconds). The model
    alone and the replay, a tenth of a second each, are run ``repeat`` times: a row's
    ``seconds`` is the best run (the machine's noise on a run this short is a third of
    it), ``median_s`` the median. The replay row also has ``model_s`` (the model's run
    with its recording, the replays beside it) and ``replay_s`` (the replays left after
    it), of its best run.
    """
    timing: dict = {}

    def replay(agents, channels, max_cycles):
        return run_replayed(agents, channels, max_cycles, timing=timing)

    _timed_copy(replay, 1)   # builds and exports outside the clock
    rows = []
    for way, rtl, runs in (("model-fast", None, repeat), ("verilator-replay", replay, repeat),
                           ("verilator-lockstep", rtl_runner("verilator", lockstep=True), 1)):
        best: dict = {}
        times = []
        for _ in range(runs):
            timing.clear()
            cycles, seconds = _timed_copy(rtl, iterations)
            times.append(seconds)
            if seconds <= min(times):
                best = {"cycles": cycles, "seconds": seconds, **timing}
        rows.append({"way": way, **best, "cycles_per_s": best["cycles"] / best["seconds"],
                     "runs": runs, "median_s": float(np.median(times))})
    _ratios(rows, rows[-1])
    return rows


def _programs(kind: str, count: int, lockstep: bool) -> dict:
    """``count`` random programs of ``kind`` checked on the whole RTL DMA, timed; with the
    replay, the model's runs and the replays timed apart."""
    spent = {"model_s": 0.0, "replay_s": 0.0}
    run_system, replay_dma = dma_check.run_system, dma_check.replay_dma

    def timed(name: str, call: Callable) -> Callable:
        def wrapped(*args, **kwargs):
            began = time.perf_counter()
            try:
                return call(*args, **kwargs)
            finally:
                spent[name] += time.perf_counter() - began
        return wrapped

    dma_check.run_system = timed("model_s", run_system)
    dma_check.replay_dma = timed("replay_s", replay_dma)
    try:
        start, cycles = time.perf_counter(), 0
        for seed in range(1, count + 1):
            cycles += dma_check.check_program_channels(random_program(seed, kind), "verilator",
                                                       reuse=True, lockstep=lockstep).cycles
        seconds = time.perf_counter() - start
    finally:
        dma_check.run_system, dma_check.replay_dma = run_system, replay_dma
    row = {"kind": kind, "way": "lockstep" if lockstep else "replay", "programs": count,
           "cycles": cycles, "seconds": seconds, "per_program_s": seconds / count}
    return row if lockstep else {**row, **spent}


def _forked_programs(kind: str, count: int, jobs: int) -> dict:
    """``count`` random programs of ``kind`` replayed on ``jobs`` processes forked from
    this one (``python -m aiedma.tb dma-programs --jobs``), timed from the fork to the
    last result."""
    calls = program_calls([kind], count, 1, jobs, "verilator")
    start = time.perf_counter()
    results = run_forked(dma_shard, calls, jobs)
    seconds = time.perf_counter() - start
    for result in results:
        if result.failed or result.value["mismatches"]:
            raise AssertionError(f"{kind}, programs from seed {result.seed}: "
                                 f"{result.error or result.value['failed']}")
    return {"kind": kind, "way": f"replay x{len(results)}", "programs": count,
            "cycles": sum(r.value["cycles"] for r in results), "seconds": seconds,
            "per_program_s": seconds / count}


def dma_rates(programs: int = 1000, lockstep_programs: int = 100,
              jobs: int | None = None) -> list[dict]:
    """Random task programs on each kind's whole RTL DMA on Verilator: replayed in this
    process, replayed on ``jobs`` forked processes (default: every core; left out with
    one), and in lockstep.

    The replay row has ``ratio``: the lockstep run's time per program over the replay's.
    """
    jobs = jobs or os.cpu_count() or 1
    rows = []
    for kind in PROGRAM_PLACES:
        dma_check.check_program_channels(random_program(1, kind), "verilator")   # build
        replayed = _programs(kind, programs, lockstep=False)
        forked = [_forked_programs(kind, programs, jobs)] if jobs > 1 else []
        stepped = _programs(kind, lockstep_programs, lockstep=True)
        replayed["ratio"] = stepped["per_program_s"] / replayed["per_program_s"]
        rows += [replayed, *forked, stepped]
    return rows


def describe(rows: list[dict]) -> list[str]:
    """The tutorial or copy rows as text lines."""
    names = {"model": "model, every cycle", "model-fast": "model, fast path",
             "verilator-replay": "RTL on verilator, replay",
             "verilator-lockstep": "RTL on verilator, lockstep",
             "verilator": "RTL on verilator, lockstep", "amaranth": "RTL on amaranth, lockstep"}
    lines = [f"{'graph run':<28}{'cycles':>8}{'seconds':>10}{'cycles/s':>12}{'ratio':>9}"]
    for row in rows:
        name = names.get(row["way"], row["way"])
        if "skipped" in row:
            lines.append(f"{name:<28}skipped: {row['skipped']}")
            continue
        line = (f"{name:<28}{row['cycles']:>8}{row['seconds']:>10.3f}"
                f"{row['cycles_per_s']:>12,.0f}{row['ratio']:>9.3f}")
        if row.get("runs", 1) > 1:
            line += f"   (best of {row['runs']}; median {row['median_s']:.3f} s)"
        if "model_s" in row:
            line += (f"   (model run and recording, the replays beside it, "
                     f"{row['model_s']:.3f} s; replays left after it {row['replay_s']:.3f} s; "
                     f"{row['compared']:,} engine cycles)")
        lines.append(line)
    return lines


def describe_dma(rows: list[dict]) -> list[str]:
    """The whole-DMA rows as text lines."""
    lines = [f"{'kind':<9}{'way':<11}{'programs':>9}{'cycles':>9}{'seconds':>9}"
             f"{'ms/program':>11}{'model s':>9}{'replay s':>9}{'ratio':>8}"]
    for r in rows:
        extra = (f"{r['model_s']:>9.2f}{r['replay_s']:>9.2f}{r['ratio']:>8.1f}"
                 if r["way"] == "replay" else "")
        lines.append(f"{r['kind']:<9}{r['way']:<11}{r['programs']:>9}{r['cycles']:>9}"
                     f"{r['seconds']:>9.2f}{1000 * r['per_program_s']:>11.2f}{extra}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m aiedma.flows.loop_bench",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=12)
    parser.add_argument("--copy-iterations", type=int, default=COPY_ITERATIONS)
    parser.add_argument("--copy-repeat", type=int, default=COPY_REPEAT,
                        help="runs of the copy graph's model and replay; the best is shown")
    parser.add_argument("--programs", type=int, default=1000)
    parser.add_argument("--lockstep-programs", type=int, default=100)
    parser.add_argument("--jobs", type=int, default=None,
                        help="processes of the forked replay of the whole-DMA programs "
                             "(default: every core)")
    parser.add_argument("--only", default="tutorial,copy,dma")
    args = parser.parse_args(argv)
    only = {name.strip() for name in args.only.split(",")}
    if "tutorial" in only:
        print(f"tiling tutorial graph, 2 buffers, {args.iterations} iterations:")
        print("\n".join(describe(loop_rates(args.iterations))), flush=True)
    if "copy" in only:
        print(f"ping-pong copy graph {COPY_SHAPE}, 2 buffers, {args.copy_iterations} "
              "iterations, every memory-tile channel's engine as RTL (ratio to lockstep):")
        print("\n".join(describe(copy_rates(args.copy_iterations, args.copy_repeat))),
              flush=True)
    if "dma" in only:
        print("random task programs on the whole RTL DMA, Verilator (ratio: lockstep time "
              "per program over the replay's):")
        print("\n".join(describe_dma(dma_rates(args.programs, args.lockstep_programs,
                                                  args.jobs))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
