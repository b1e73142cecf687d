"""Icarus Verilog replays closed-loop RTL runs: every port of every cycle compared.

A whole DMA runs in the loop with the system model only where Python can answer it
every cycle, in this process: on Amaranth's simulator or on Verilator
(:class:`~aiedma.tb.system.loop_verilator.VerilatedTop`). Icarus runs in its own process, so it
takes part through a trace instead. :func:`recording` captures, at every clock edge of
every Verilated top, the value of each of its inputs and outputs; :func:`replay_icarus`
drives the same top, exported again, with the recorded inputs on Icarus and compares
every output on every cycle with the recorded one.

Why this checks Icarus in the loop: the recorded inputs are the environment's answers
(lock grants, ``ready``, memory data, register writes) to the recorded outputs. If
Icarus gives the same outputs for the same inputs up to cycle ``t``, the environment
would have given it the same inputs at ``t + 1``; so a replay with no mismatch is the
closed-loop run on Icarus, cycle for cycle, and the loop run itself was compared with
the model (``tb/system/dma_check.py``).

Each recorded top instance is one *segment* (it starts with its own reset); every
segment runs in a fresh ``vvp`` process, so memories start empty as a fresh Verilated
model's do. The testbench is compiled once per top (``build/replay/<top>-<hash>/``).
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..common.tools import ToolMissing
from ..system.dma_check import check_program_channels
from ..system.loop_verilator import VerilatedTop, top_verilog, verilog_ports
from ..system.random_programs import PROGRAM_PLACES, random_program

__all__ = ["BUILD", "Recording", "ReplayResult", "Segment", "recording", "replay_icarus"]

BUILD = Path("build/replay")
"""Where the Icarus testbenches and the traces go (never inside the package)."""

_CLOCK = "clk"
_RESET = "rst"


@dataclass
class Segment:
    """One recorded top instance: its top name and a row of port values per clock edge."""

    top: str
    rows: list[tuple[int, ...]] = field(default_factory=list)


@dataclass
class Recording:
    """What :func:`recording` captured: every top instance's segment, in creation order."""

    segments: list[Segment] = field(default_factory=list)

    def by_top(self) -> dict[str, list[Segment]]:
        """The segments grouped by top name."""
        tops: dict[str, list[Segment]] = {}
        for segment in self.segments:
            tops.setdefault(segment.top, []).append(segment)
        return tops


@contextlib.contextmanager
def recording() -> Iterator[Recording]:
    """Record every :class:`VerilatedTop` made inside the block: at each clock edge, the
    settled value of each port (inputs as driven, outputs as computed), clock excluded."""
    record = Recording()
    original_init, original_edge = VerilatedTop.__init__, VerilatedTop.edge

    def init(self: VerilatedTop, top: str, make: object = None) -> None:
        self.segment = Segment(top)           # before the reset edge __init__ gives
        record.segments.append(self.segment)
        original_init(self, top, make)

    def edge(self: VerilatedTop) -> None:
        self.segment.rows.append(tuple(self.get(name) for name in self.ports
                                       if name != _CLOCK))
        original_edge(self)

    VerilatedTop.__init__, VerilatedTop.edge = init, edge
    try:
        yield record
    finally:
        VerilatedTop.__init__, VerilatedTop.edge = original_init, original_edge


@dataclass
class ReplayResult:
    """One top's replay: segments and cycles compared, and the first mismatch if any."""

    top: str
    segments: int
    cycles: int
    mismatch: str | None

    @property
    def passed(self) -> bool:
        return self.mismatch is None


def _testbench(top: str, ports: list[tuple[str, str, int]]) -> str:
    """A replay testbench: inputs from ``stim.hex``, outputs compared with ``expect.hex``.

    Inputs change with the clock low; outputs are compared 1 time unit later, then the
    clock rises. Rows with ``rst`` high are not compared (the reset cycle)."""
    inputs = [(n, w) for d, n, w in ports if d == "input" and n != _CLOCK]
    outputs = [(n, w) for d, n, w in ports if d == "output"]
    in_bits, out_bits = sum(w for _, w in inputs), sum(w for _, w in outputs)
    lines = ["`timescale 1ns/1ns", "module replay_tb;",
             f"  reg [{in_bits - 1}:0] stim [0:`REPLAY_DEPTH-1];",
             f"  reg [{out_bits - 1}:0] want [0:`REPLAY_DEPTH-1];",
             f"  reg [{in_bits - 1}:0] now;", "  reg clk = 0;",
             "  integer c, cycles;", "  reg [1023:0] stim_file, expect_file;"]
    connections, lsb = [f"    .{_CLOCK}(clk)"], 0
    for name, width in inputs:
        connections.append(f"    .{name}(now[{lsb + width - 1}:{lsb}])")
        lsb += width
    got = []
    for name, width in outputs:
        lines.append(f"  wire [{width - 1}:0] o_{name};")
        connections.append(f"    .{name}(o_{name})")
        got.append(f"o_{name}")
    reset = next(i for i, (n, _) in enumerate(inputs) if n == _RESET)
    reset_bit = sum(w for _, w in inputs[:reset])
    lines += [f"  wire [{out_bits - 1}:0] got = {{{', '.join(reversed(got))}}};",
              f"  {top} dut (", ",\n".join(connections), "  );",
              "  initial begin",
              '    if (!$value$plusargs("stim=%s", stim_file)) $finish;',
              '    if (!$value$plusargs("expect=%s", expect_file)) $finish;',
              '    if (!$value$plusargs("cycles=%d", cycles)) $finish;',
              "    $readmemh(stim_file, stim);", "    $readmemh(expect_file, want);",
              "    for (c = 0; c < cycles; c = c + 1) begin",
              "      now = stim[c];", "      #1;",
              f"      if (!now[{reset_bit}] && got !== want[c]) begin",
              '        $display("REPLAY MISMATCH cycle %0d expected %h got %h", c, want[c], '
              "got);",
              "        $finish;", "      end",
              "      clk = 1; #1; clk = 0; #1;", "    end",
              '    $display("REPLAY PASS compared %0d cycles", cycles);', "    $finish;",
              "  end", "endmodule", ""]
    return "\n".join(lines)


def _hex(values: Sequence[int], bits: int) -> str:
    digits = (bits + 3) // 4
    return "".join(f"{v:0{digits}x}\n" for v in values)


def _pack(row: Sequence[int], slots: list[tuple[int, int, int]]) -> int:
    """Port values of a row (in the recorded order) packed LSB first: ``(index, lsb, width)``."""
    value = 0
    for index, lsb, width in slots:
        value |= (row[index] & ((1 << width) - 1)) << lsb
    return value


def _slots(names: list[str], chosen: list[tuple[str, int]]) -> list[tuple[int, int, int]]:
    slots, lsb = [], 0
    for name, width in chosen:
        slots.append((names.index(name), lsb, width))
        lsb += width
    return slots


def _differences(expected: int, got: str, outputs: list[tuple[str, int]]) -> str:
    """Which outputs a mismatch line's two hex words differ in (x/z bits named as such)."""
    unknown, value = 0, 0
    for digit in got:
        known = digit.lower() in "0123456789abcdef"
        unknown, value = unknown << 4 | (0 if known else 0xF), value << 4 | int(
            digit if known else "0", 16)
    parts, lsb = [], 0
    for name, width in outputs:
        mask = (1 << width) - 1
        want, have = (expected >> lsb) & mask, (value >> lsb) & mask
        if (unknown >> lsb) & mask:
            parts.append(f"{name} expected {want:#x} got x/z bits")
        elif want != have:
            parts.append(f"{name} expected {want:#x} got {have:#x}")
        lsb += width
    return ", ".join(parts)


def replay_icarus(segments: Sequence[Segment], folder: Path | None = None) -> ReplayResult:
    """Replay recorded segments of one top on Icarus; stop at the first mismatch.

    Parameters
    ----------
    segments : sequence of Segment
        Recorded by :func:`recording`, all of the same top.
    folder : Path, optional
        Where the testbench is built (default ``build/replay/<top>-<hash>``).

    Raises
    ------
    ToolMissing
        Without ``iverilog``/``vvp`` (``make setup`` installs them).
    """
    missing = [t for t in ("iverilog", "vvp") if shutil.which(t) is None]
    if missing:
        raise ToolMissing(f"Icarus Verilog is missing ({', '.join(missing)}): make setup "
                          "installs it (apt-get install --no-install-recommends iverilog)")
    (top,) = {s.top for s in segments}
    verilog = top_verilog(top)
    ports = verilog_ports(verilog, top)
    names = [n for _, n, _ in ports if n != _CLOCK]
    inputs = [(n, w) for d, n, w in ports if d == "input" and n != _CLOCK]
    outputs = [(n, w) for d, n, w in ports if d == "output"]
    tb = _testbench(top, ports)
    depth = max(len(s.rows) for s in segments)
    digest = hashlib.sha256(f"{verilog}\0{tb}\0{depth}".encode()).hexdigest()[:16]
    folder = folder or BUILD / f"{top}-{digest}"
    binary = folder / "replay_tb.vvp"
    folder.mkdir(parents=True, exist_ok=True)
    # Replays of one top may run at once (test workers, shards): one builds while the
    # others wait, and the binary appears whole (renamed into place) or not at all.
    with (folder / "build.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not binary.exists():
            (folder / f"{top}.v").write_text(verilog)
            (folder / "replay_tb.sv").write_text(tb)
            done = subprocess.run(["iverilog", "-g2005", "-s", "replay_tb",
                                   f"-DREPLAY_DEPTH={depth}", "-o", "replay_tb.vvp.part",
                                   "replay_tb.sv", f"{top}.v"],
                                  cwd=folder, capture_output=True, text=True, check=False)
            if done.returncode:
                raise RuntimeError(f"iverilog failed in {folder}:\n"
                                   + "\n".join((done.stdout + done.stderr).splitlines()[-20:]))
            os.replace(folder / "replay_tb.vvp.part", binary)
    in_slots, out_slots = _slots(names, inputs), _slots(names, outputs)
    in_bits = sum(w for _, w in inputs)
    out_bits = sum(w for _, w in outputs)
    cycles = 0
    for k, segment in enumerate(segments):
        expected = [_pack(row, out_slots) for row in segment.rows]
        with tempfile.TemporaryDirectory(dir=folder) as run:   # this replay's own files
            (Path(run) / "stim.hex").write_text(
                _hex([_pack(r, in_slots) for r in segment.rows], in_bits))
            (Path(run) / "expect.hex").write_text(_hex(expected, out_bits))
            done = subprocess.run(["vvp", "-n", str(binary.resolve()), "+stim=stim.hex",
                                   "+expect=expect.hex", f"+cycles={len(segment.rows)}"],
                                  cwd=run, capture_output=True, text=True, check=False)
        mismatch = re.search(r"REPLAY MISMATCH cycle (\d+) expected (\S+) got (\S+)",
                             done.stdout)
        if mismatch:
            cycle = int(mismatch[1])
            why = _differences(expected[cycle], mismatch[3], outputs)
            return ReplayResult(top, k + 1, cycles + cycle,
                                f"segment {k}, cycle {cycle}: {why}")
        if f"REPLAY PASS compared {len(segment.rows)} cycles" not in done.stdout:
            raise RuntimeError(f"vvp gave no verdict in {folder}:\n{done.stdout[-2000:]}"
                               f"{done.stderr[-2000:]}")
        cycles += len(segment.rows)
    return ReplayResult(top, len(segments), cycles, None)


def main(argv: list[str] | None = None) -> int:
    """``python -m aiedma.tb trace-replay [--programs N] [--seed S] [--kinds ...]``: random
    task programs on the whole RTL DMA in the loop on Verilator (compared with the model),
    its trace then replayed on Icarus."""
    parser = argparse.ArgumentParser(prog="python -m aiedma.tb trace-replay",
                                     description=main.__doc__)
    parser.add_argument("--programs", type=int, default=50)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--kinds", nargs="+", choices=tuple(PROGRAM_PLACES),
                        default=list(PROGRAM_PLACES))
    args = parser.parse_args(argv)
    failed = 0
    for kind in args.kinds:
        start = time.perf_counter()
        with recording() as record:
            for seed in range(args.seed, args.seed + args.programs):
                check_program_channels(random_program(seed, kind), "verilator", lockstep=True)
        looped = time.perf_counter() - start
        for top, segments in record.by_top().items():
            result = replay_icarus(segments)
            failed += not result.passed
            verdict = "0 mismatches" if result.passed else f"MISMATCH {result.mismatch}"
            print(f"icarus replay {kind} {top}: {result.segments} runs, {result.cycles} "
                  f"cycles, every port compared: {verdict}")
        print(f"{kind}: {args.programs} programs (seeds {args.seed}.."
              f"{args.seed + args.programs - 1}), loop on Verilator {looped:.1f} s, "
              f"replays {time.perf_counter() - start - looped:.1f} s")
    return 1 if failed else 0

