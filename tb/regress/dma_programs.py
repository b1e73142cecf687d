"""Random task programs on the whole RTL DMA inside the system model, against the model.

``python -m aiedma.tb dma-programs [--programs N] [--seed S] [--sim amaranth verilator]
[--kinds ...] [--lockstep] [--jobs J]``: ``N`` random task programs
(:func:`~aiedma.tb.system.random_programs.random_program`) per kind and simulator, each
run with the model's channels and then with the whole RTL DMA in their place
(:func:`~aiedma.tb.system.dma_check.check_program_channels`), compared on every cycle;
one line per kind and simulator, exit 1 on any mismatch. On Verilator the model's run
is replayed into the block; ``--lockstep`` runs the loop. The task programs run on
``J`` processes forked from this one (default: every core;
:func:`~aiedma.tb.common.shards.run_forked`), the others in this one.
The core and memory tiles also run ``N`` random finish-on-TLAST programs per simulator
(:func:`~aiedma.tb.system.random_programs.random_fot_program`, through
:func:`~aiedma.tb.system.dma_check.run_dma`: words, memory, tokens, locks, the FoT
status flags and the count FIFO reads compared; on Verilator a program without register
reads is replayed, one with them runs in lockstep), one more line each, ``N`` random
out-of-order programs (:func:`~aiedma.tb.system.random_out_of_order.
random_out_of_order_program`, through ``run_dma``) and ``N`` random (de)compression
programs (:func:`~aiedma.tb.system.compression_programs.random_compression_program`,
through ``run_dma`` as well), one more line each, and a quarter as many random fault
programs (:func:`~aiedma.tb.system.random_faults.random_fault_program`: pushes onto full
task queues, tasks that load BDs that are not valid, channel resets, a status register
read in every free cycle; through ``run_dma``, in lockstep on Verilator too). Every kind
then runs a quarter as many random task programs with a host reading a channel's status
register every cycle (:func:`~aiedma.tb.system.dma_check.check_program_status`, in
lockstep), the words compared.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable

from ...model.arch.register_map import register_at
from ...model.arch.registers import STATUS_FIELDS
from ..common.shards import run_forked
from ..system.compression_programs import random_compression_program
from ..system.dma_check import check_program_status, run_dma
from ..system.loop import RUNS_ON
from ..system.random_faults import FAULT_BITS, FAULT_KINDS, random_fault_program
from ..system.random_out_of_order import OUT_OF_ORDER_KINDS, random_out_of_order_program
from ..system.random_programs import (
    PROGRAM_PLACES,
    WritesProgram,
    random_fot_program,
    random_program,
)
from .dma_sweep import dma_shard, program_calls

__all__ = ["RUNS_ON", "main"]


def main(argv: list[str] | None = None) -> int:
    """Run the regression; print one line per kind and simulator; 1 on any mismatch."""
    parser = argparse.ArgumentParser(prog="python -m aiedma.tb dma-programs",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--programs", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--sim", nargs="+", choices=RUNS_ON, default=list(RUNS_ON))
    parser.add_argument("--kinds", nargs="+", choices=tuple(PROGRAM_PLACES),
                        default=list(PROGRAM_PLACES))
    parser.add_argument("--lockstep", action="store_true",
                        help="on Verilator, run the block in the loop with the model rather "
                             "than replay the model's recorded run into it")
    parser.add_argument("--jobs", type=int, default=None,
                        help="processes the random task programs run on (default: every "
                             "core); the other programs run in this one")
    args = parser.parse_args(argv)
    if args.programs < 1:
        parser.error(f"--programs={args.programs}: must be at least 1")
    if args.jobs is not None and args.jobs < 1:
        parser.error(f"--jobs={args.jobs}: must be at least 1 (left out: every core)")
    failed = 0
    for simulator in args.sim:
        for kind in args.kinds:
            failed += _task_programs(kind, args.seed, args.programs, simulator,
                                     args.lockstep, args.jobs)
            if kind in ("tile", "memtile"):
                failed += _fot_programs(kind, args.seed, args.programs, simulator)
                failed += _writes_programs(kind, args.seed, args.programs, simulator,
                                           "compression", random_compression_program)
            if kind in OUT_OF_ORDER_KINDS:
                failed += _writes_programs(kind, args.seed, args.programs, simulator,
                                           "out-of-order", random_out_of_order_program)
            if kind in FAULT_KINDS:
                failed += _fault_programs(kind, args.seed, max(1, args.programs // 4),
                                          simulator)
            failed += _status_programs(kind, args.seed, max(1, args.programs // 4), simulator)
    return 1 if failed else 0


def _task_programs(kind: str, first: int, count: int, simulator: str, lockstep: bool,
                   jobs: int | None) -> int:
    """Random task programs on ``jobs`` forked processes; prints one line (and one per
    failed program), returns the mismatches."""
    start = time.perf_counter()
    calls = [(*call, lockstep) for call in program_calls(
        [kind], count, first, jobs or os.cpu_count() or 1, simulator)]
    results = run_forked(dma_shard, calls, jobs)
    cycles = bad = 0
    for result in results:
        if result.failed:
            bad += 1
            print(f"FAIL {simulator} {kind} programs from seed {result.seed}: {result.error}")
            continue
        cycles += result.value["cycles"]
        bad += result.value["mismatches"]
        for seed, reason in result.value["failed"]:
            print(f"FAIL {simulator} {kind} seed={seed}: {reason}\n  "
                  f"{random_program(seed, kind).description}")
    print(f"whole RTL DMA on {simulator}, {kind}: {count} random task programs (seeds "
          f"{first}..{first + count - 1}, {len(results)} processes), {cycles} cycles, {bad} "
          f"mismatches, {time.perf_counter() - start:.1f} s")
    return bad


def _status_programs(kind: str, first: int, count: int, simulator: str) -> int:
    """Random programs with every cycle's status read; prints one line, returns the
    mismatches."""
    start, reads, bad = time.perf_counter(), 0, 0
    for seed in range(first, first + count):
        try:
            reads += len(check_program_status(random_program(seed, kind), simulator,
                                              reuse=True))
        except AssertionError as error:
            bad += 1
            print(f"FAIL {simulator} {kind} status seed={seed}: {error}")
    print(f"whole RTL DMA on {simulator}, {kind}: {count} random task programs with a status "
          f"read every cycle, {reads} reads, {bad} mismatches, "
          f"{time.perf_counter() - start:.1f} s")
    return bad


def _fault_programs(kind: str, first: int, count: int, simulator: str) -> int:
    """Random fault programs on ``simulator``; prints one line, returns the mismatches."""
    start, cycles, bad, drawn = time.perf_counter(), 0, 0, {"pushes": 0, "invalid": 0}
    flagged = dict.fromkeys(FAULT_BITS, 0)
    for seed in range(first, first + count):
        program = random_fault_program(seed, kind)
        for name in drawn:
            drawn[name] += program.faults[name]
        try:
            result = run_dma(kind, program.writes, memory=program.memory,
                             inputs=program.inputs, simulator=simulator,
                             timed_writes=program.timed, reuse=True)
        except AssertionError as error:
            bad += 1
            print(f"FAIL {simulator} {kind} faults seed={seed}: {error}\n  "
                  f"{program.description}")
            continue
        cycles += result.cycles
        statuses = [word for _, address, word in result.reads
                    if register_at(kind, address).role == "status"]
        for name in flagged:
            lsb, _ = STATUS_FIELDS[name]
            flagged[name] += any(word >> lsb & 1 for word in statuses)
    read = ", ".join(f"{name} {n}" for name, n in flagged.items() if n or name in
                     ("task_queue_overflow", "error_bd_invalid"))
    print(f"whole RTL DMA on {simulator}, {kind}: {count} random fault programs "
          f"({drawn['pushes']} pushes, {drawn['invalid']} to a faulty load; programs "
          f"that read {read}), {cycles} cycles, {bad} mismatches, "
          f"{time.perf_counter() - start:.1f} s")
    return bad


def _fot_programs(kind: str, first: int, count: int, simulator: str) -> int:
    """Random FoT programs on ``simulator``; prints one line, returns the mismatches."""
    start, cycles, bad, modes = time.perf_counter(), 0, 0, [0, 0, 0, 0]
    for seed in range(first, first + count):
        program = random_fot_program(seed, kind)
        modes[program.mode] += 1
        try:
            cycles += run_dma(kind, program.writes, inputs=program.inputs,
                              simulator=simulator, timed_writes=program.timed,
                              reuse=True).cycles
        except AssertionError as error:
            bad += 1
            print(f"FAIL {simulator} {kind} FoT seed={seed}: {error}\n  {program.description}")
    print(f"whole RTL DMA on {simulator}, {kind}: {count} random FoT programs (modes 0-3: "
          f"{modes}), {cycles} cycles, {bad} mismatches, {time.perf_counter() - start:.1f} s")
    return bad


def _writes_programs(kind: str, first: int, count: int, simulator: str, what: str,
                     draw: Callable[[int, str], WritesProgram]) -> int:
    """Random programs of one feature (``what``: out-of-order, compression) drawn by
    ``draw``, each through ``run_dma`` on ``simulator``; prints one line, returns the
    mismatches."""
    start, cycles, bad = time.perf_counter(), 0, 0
    for seed in range(first, first + count):
        program = draw(seed, kind)
        try:
            cycles += run_dma(kind, program.writes, memory=program.memory,
                              inputs=program.inputs, simulator=simulator, reuse=True).cycles
        except AssertionError as error:
            bad += 1
            print(f"FAIL {simulator} {kind} {what} seed={seed}: {error}\n  "
                  f"{program.description}")
    print(f"whole RTL DMA on {simulator}, {kind}: {count} random {what} programs, "
          f"{cycles} cycles, {bad} mismatches, {time.perf_counter() - start:.1f} s")
    return bad
