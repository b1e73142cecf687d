"""Random task programs on the whole RTL DMA, 10^5 tasks per kind, sharded by seed on Dask.

``python -m aiedma.tb dma-sweep [--tasks N] [--kinds ...] [--sim verilator|amaranth]
[--seed S] [--shards N] [--scheduler tcp://host:port]``

The :mod:`.dma_programs` check at scale. Each random task program
(:func:`~aiedma.tb.system.random_programs.random_program`: three channels of one DMA,
four on the memory tile, chains, repeats, a lock between an S2MM and MM2S channels,
packets, padding, backpressure) queues a task on each of its channels; it runs on the
model channels and then with the whole RTL DMA in their place, compared on every cycle
(:func:`~aiedma.tb.system.dma_check.check_program_channels`). A sweep of ``--tasks``
tasks per kind is split into shards of consecutive seeds
(:func:`~aiedma.tb.common.shards.shard_sizes`), run on Dask
(:func:`~aiedma.tb.common.shards.run_shards`: every local core, or the cluster of
``--scheduler``); a failing program is reported with its seed and the difference, and
the sweep goes on. ``make sim REGRESSION=dma-sweep`` runs 10^5 tasks per kind.
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import time
from collections.abc import Sequence

from ..common.shards import ShardResult, run_shards, shard_progress, shard_sizes
from ..system.dma_check import check_program_channels
from ..system.loop import RUNS_ON
from ..system.random_programs import PROGRAM_PLACES, random_program

__all__ = ["RUNS_ON", "dma_shard", "main", "program_calls", "shard_calls", "summarise"]

_KEEP_FAILURES = 5  # per shard: enough to start debugging, never a flood


def shard_calls(kinds: Sequence[str], tasks: int, seed: int, shards: int,
                simulator: str) -> list[tuple]:
    """``(first_seed, kind, programs, simulator)`` per shard: for each kind the programs
    that queue at least ``tasks`` tasks (:attr:`ProgramPlace.tasks` each), split into
    consecutive seed ranges."""
    return [call for kind in kinds
            for call in program_calls([kind], -(-tasks // PROGRAM_PLACES[kind].tasks), seed,
                                      shards, simulator)]


def program_calls(kinds: Sequence[str], programs: int, seed: int, shards: int,
                  simulator: str) -> list[tuple]:
    """``(first_seed, kind, programs, simulator)`` per shard: each kind's ``programs``
    programs from ``seed`` split into at most ``shards`` consecutive seed ranges."""
    sizes = shard_sizes(programs, shards)
    firsts = [seed + done for done in itertools.accumulate(sizes, initial=0)]
    return [(first, kind, count, simulator)
            for kind in kinds for first, count in zip(firsts, sizes, strict=False)]


def dma_shard(first_seed: int, kind: str, programs: int, simulator: str,
              lockstep: bool = False) -> dict:
    """Programs ``first_seed .. first_seed + programs - 1`` of ``kind``, each checked
    (on Verilator by replay, or in the loop with ``lockstep``).

    Returns ``kind, programs, tasks, cycles, seconds`` and ``failed``: ``[(seed, reason)]``
    of the first programs that differed (a Dask worker calls this by name).
    """
    start = time.perf_counter()
    cycles, tasks, failed, bad = 0, 0, [], 0
    for seed in range(first_seed, first_seed + programs):
        program = random_program(seed, kind)
        tasks += program.place.tasks
        try:
            cycles += check_program_channels(program, simulator, reuse=True,
                                             lockstep=lockstep).cycles
        except AssertionError as error:
            bad += 1
            if len(failed) < _KEEP_FAILURES:
                failed.append((seed, str(error).splitlines()[0]))
    return {"kind": kind, "programs": programs, "tasks": tasks, "cycles": cycles,
            "mismatches": bad, "failed": failed, "seconds": time.perf_counter() - start}


def summarise(results: Sequence) -> list[dict]:
    """Shard results (:class:`~aiedma.tb.common.shards.ShardResult`) merged per kind; a shard
    that raised counts as a failure under kind ``"?"`` with its seed."""
    rows: dict[str, dict] = {}
    for result in results:
        kind = "?" if result.failed else result.value["kind"]
        row = rows.setdefault(kind, {"kind": kind, "shards": 0, "programs": 0, "tasks": 0,
                                     "cycles": 0, "mismatches": 0, "failed": []})
        if result.failed:
            row["mismatches"] += 1
            row["failed"].append((result.seed, result.error))
            continue
        row["shards"] += 1
        for name in ("programs", "tasks", "cycles", "mismatches"):
            row[name] += result.value[name]
        row["failed"] += result.value["failed"]
    return list(rows.values())


def main(argv: Sequence[str] | None = None) -> int:
    """Run the sweep; print one line per kind and the rate; 1 on any mismatch."""
    parser = argparse.ArgumentParser(prog="python -m aiedma.tb dma-sweep",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=100_000, help="tasks per kind")
    parser.add_argument("--kinds", nargs="+", choices=tuple(PROGRAM_PLACES),
                        default=list(PROGRAM_PLACES))
    parser.add_argument("--sim", choices=RUNS_ON, default="verilator")
    parser.add_argument("--seed", type=int, default=1, help="first program seed")
    parser.add_argument("--shards", type=int, default=None,
                        help="shards per kind (default: 4 per core; 1: in this process)")
    parser.add_argument("--scheduler", default=None,
                        help="Dask scheduler address (tcp://host:port); default: every core")
    parser.add_argument("--workers", type=int, default=None)
    args = parser.parse_args(argv)
    if args.tasks < 1:
        parser.error(f"--tasks={args.tasks}: must be at least 1")
    shards = args.shards or 4 * (os.cpu_count() or 1)
    if shards < 1:
        parser.error(f"--shards={shards}: must be at least 1")
    calls = shard_calls(args.kinds, args.tasks, args.seed, shards, args.sim)
    print(f"task programs on the whole RTL DMA ({args.sim}), {args.tasks} tasks per kind, "
          f"{len(calls)} shard(s): every cycle compared with the model", flush=True)

    def describe(result: ShardResult) -> str:
        r = result.value
        return (f"shard seeds {result.seed}..{result.seed + r['programs'] - 1} {r['kind']}: "
                f"{r['tasks']} tasks, {r['cycles']} cycles, {r['mismatches']} mismatches, "
                f"{r['seconds']:.1f} s")

    report = shard_progress(describe)

    began = time.perf_counter()
    if len(calls) > 1 and (shards > 1 or args.scheduler):
        results = run_shards(dma_shard, calls, scheduler=args.scheduler,
                             workers=args.workers, on_result=report)
    else:
        results = []
        for call in calls:
            results.append(ShardResult(call[0], dma_shard(*call)))
            report(results[-1])
    wall = time.perf_counter() - began
    rows = summarise(results)
    for r in rows:
        print(f"{r['kind']}: {r['programs']} programs, {r['tasks']} tasks, {r['cycles']:,} "
              f"cycles, {r['mismatches']} mismatches")
        for seed, reason in r["failed"]:
            print(f"FAILED seed {seed} ({r['kind']}): {reason}", file=sys.stderr)
    cycles = sum(r["cycles"] for r in rows)
    print(f"end to end: {sum(r['tasks'] for r in rows):,} tasks, {cycles:,} compared cycles "
          f"in {wall:.1f} s = {cycles / wall:,.0f} cycles/s")
    failed = sum(r["mismatches"] for r in rows)
    print("all passed" if not failed else f"{failed} program(s) or shard(s) failed")
    return 1 if failed else 0

