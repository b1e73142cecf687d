"""The benchmark suite behind ``make bench``: model, system model, co-simulation, FPGA.

``python -m aiedma.flows.bench [--quick] [--out DIR] [--repeat N] [--only NAME[,NAME]]
[--seed S] [--bds N] [--fpga-json PATH]``

Runs every benchmark, prints the figures and saves them as ``DIR/bench.json`` and
the Markdown table ``DIR/bench.md`` (``DIR`` is ``build/`` by default). Figures are
printed and saved, never asserted: a rate depends on the machine and its load, so
each figure with a natural baseline shows its ratio to a baseline measured in the
same run. The benchmarks (``--only`` takes these names, or the groups ``model`` and
``cosim``):

``walk``, ``stream``, ``elements``, ``shapes``, ``system``
    The golden model (:mod:`aiedma.flows.model_bench`): the 4-D halo walk and BD
    address streams against ``np.arange``, the walk and lowered task stream of five
    more shapes against ``np.arange`` (the smallest ratio named), and the system
    model's simulated cycles per second on the pipeline and copy graphs, fast path
    against stepping every cycle (``exact=True``).
``amaranth``, ``verilator``, ``icarus``, ``bulk-verilator``, ``bulk-icarus``, ``bulk-large``
    One regression on every simulator: the same kind, seed, random BDs and ready
    patterns (ready high, and the stall pattern), built by
    :func:`aiedma.tb.common.stimulus.regression_stimulus` as
    :func:`aiedma.tb.regress.verilog_bulk.run_bulk` builds them, run through
    :func:`aiedma.tb.block.harness.check_addrgen` (Amaranth, cocotb + Verilator, cocotb +
    Icarus) and through the bulk testbench; ``bulk-large`` is the bulk Verilator
    run on many more BDs, where its rate shows. A missing simulator is skipped.
``wpc``
    RTL words per cycle with ready high, per kind, after the
    :data:`~aiedma.model.cycle.contract.ADDRGEN_LATENCY` cycles of latency.
``dma-wpc``
    RTL words per cycle of every channel of the whole memory-tile DMA, all 12 streaming
    at once (chained BDs with free locks), on Verilator, compared with the model.
``fpga``
    The rows of ``build/fpga/fpga.json`` when ``make fpga`` has written it.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

from ..model.arch.kinds import DMA_KINDS
from ..model.bd.descriptor import BufferDescriptor
from ..model.bd.fields import KINDS
from ..model.bd.task import Task
from ..model.cycle.contract import ADDRGEN_LATENCY
from ..model.system.dma import DMA
from ..model.system.registers import program_writes
from ..tb.block.harness import check_addrgen
from ..tb.common.scoreboard import Mismatch
from ..tb.common.stimulus import READY_MODES, random_bds, regression_stimulus
from ..tb.common.tools import ToolMissing
from ..tb.regress.verilog_bulk import run_bulk
from ..tb.system.dma_check import run_dma
from . import model_bench
from .machine import machine

__all__ = [
    "BENCHMARKS",
    "GROUPS",
    "Settings",
    "all_channels_program",
    "main",
    "read_fpga",
    "run_suite",
    "to_markdown",
]

SCHEMA = "aiedma-bench/1"
BENCHMARKS = ("walk", "stream", "elements", "shapes", "system", "amaranth", "verilator", "icarus",
              "bulk-verilator", "bulk-icarus", "bulk-large", "wpc", "dma-wpc", "fpga")
"""Every benchmark, in the order the suite runs them."""
GROUPS = {"model": ("walk", "stream", "elements", "shapes", "system"),
          "cosim": ("amaranth", "verilator", "icarus", "bulk-verilator", "bulk-icarus",
                    "bulk-large")}
"""Names ``--only`` also takes, for several benchmarks at once."""
FPGA_COLUMNS = ("top", "part", "lut", "ff", "carry", "bram", "fmax_mhz")
DEFAULT_FPGA_JSON = Path("build") / "fpga" / "fpga.json"
_CELL_WIDTH = 60  # longest list shown in a Markdown cell; the JSON keeps it whole

_LABELS = {"amaranth": "Amaranth (in process)", "verilator": "cocotb + Verilator",
           "icarus": "cocotb + Icarus", "bulk-verilator": "bulk Verilator",
           "bulk-icarus": "bulk Icarus", "bulk-large": "bulk Verilator (large)"}

# What the time columns of a co-simulation row hold, per runner: printed under the
# table, because "simulation time" means a different span for each.
_TIME_NOTES = {
    "amaranth": "sim s: Amaranth's `sim.run()` (drive loop and checks); overhead s: the rest "
                "of the `check_addrgen` call (model trace, elaboration); first call s: a "
                "1-BD warm-up call (no build step exists).",
    "cocotb": "sim s: the cocotb drive loop inside the simulator (checks included); overhead "
              "s: the rest of the `check_addrgen` call (model trace, Verilog export and build "
              "check, simulator and cocotb start-up, result file); first call s: a 1-BD "
              "warm-up call, which includes the compile when the cached build was stale "
              "(column `compiled`).",
    "bulk": "sim s: the simulator process (start-up and reading its files included: raw "
            "files through DPI under Verilator, `$readmemh` of hex files under Icarus); "
            "overhead s: the model writing stimulus, expected trace and files; build s: "
            "export and compile, or the cache check when `compiled` is no.",
}


@dataclass(frozen=True)
class Settings:
    """Sizes and places of one suite run.

    Attributes
    ----------
    out : Path
        Where ``bench.json`` and ``bench.md`` go (and the bulk builds, below ``bench/``).
    repeat : int
        Timings per in-process model figure, the best kept. Co-simulation runs once:
        each run lasts seconds and its rate is already a mean over thousands of cycles.
    quick : bool
        Small sizes, for tests and smoke runs.
    seed : int
        Base seed; kind ``k`` of :data:`KINDS` uses ``seed * 1000 + k``, as
        ``make sim`` does.
    kind : str
        The DMA kind of the co-simulation regression.
    bds : int
        Random BDs per ready pattern in the co-simulation regression.
    large_bds : int
        Random BDs of the ``bulk-large`` run.
    wpc_bds : int
        Random BDs per kind of the words-per-cycle run.
    fpga_json : Path
        Where ``make fpga`` leaves its table.
    """

    out: Path = Path("build")
    repeat: int = 5
    quick: bool = False
    seed: int = 1
    kind: str = "memtile"
    bds: int = 1000
    large_bds: int = 20_000
    wpc_bds: int = 300
    fpga_json: Path = DEFAULT_FPGA_JSON

    @classmethod
    def quick_sizes(cls, **changes) -> Settings:
        """Settings with the small sizes of ``--quick`` (``changes`` override them)."""
        return cls(**({"quick": True, "bds": 20, "large_bds": 200, "wpc_bds": 20} | changes))

    def kind_seed(self, kind: str) -> int:
        """The seed of ``kind``'s runs (as ``tb/regress/blocks.py`` and
        ``tb/regress/verilog_bulk.py`` derive it)."""
        return self.seed * 1000 + KINDS.index(kind)


def _say(text: str) -> None:
    print(text, flush=True)


# --- the golden model -------------------------------------------------------------------


def bench_walk(s: Settings) -> dict:
    """Walk rate of :data:`~aiedma.flows.model_bench.HALO_WALK` against ``np.arange``."""
    r = model_bench.walk_rate(model_bench.HALO_WALK, s.repeat)
    _say("\n".join(model_bench.describe_walk(r)))
    return r


def bench_stream(s: Settings) -> list[dict]:
    """``BufferDescriptor.stream()`` rate of the padded memory-tile BD and the long shim BD."""
    rows = []
    for name, bd in model_bench.stream_bds(s.quick).items():
        r = {"name": name} | model_bench.stream_rate(bd, s.repeat)
        _say("\n".join(model_bench.describe_stream(r)))
        rows.append(r)
    return rows


def bench_elements(s: Settings) -> dict:
    """``element_stream()`` rate of :func:`~aiedma.flows.model_bench.chained_program`."""
    r = model_bench.element_rate(model_bench.chained_program(s.quick), s.repeat)
    _say("\n".join(model_bench.describe_elements(r)))
    return r


def bench_shapes(s: Settings) -> list[dict]:
    """Walk and lowered stream of :data:`~aiedma.flows.model_bench.WALK_SHAPES`."""
    rows = model_bench.shape_rates(s.repeat)
    _say("\n".join(model_bench.describe_shapes(rows)))
    return rows


def bench_system(s: Settings) -> list[dict]:
    """System-model cycles/s of each graph, fast path against every cycle stepped."""
    rows = []
    for r in model_bench.system_rates(s.repeat, s.quick):
        _say("\n".join(model_bench.describe_system(r)))
        rows.append(r)
    return rows


# --- co-simulation ----------------------------------------------------------------------


def _mtime(path: Path) -> int | None:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return None


def _cocotb_stamp(simulator: str, top: str) -> Path:
    # Where tb/block/cocotb_runner.py (default build_root) stamps a finished build; a new
    # stamp after a call means that call compiled.
    return Path("build") / "cocotb" / simulator / top / "build.sha256"


def _words_per_cycle(words: int, cycles: int) -> float | None:
    """Words per cycle after the fixed latency, as ``tb/regress/blocks.py`` computes it."""
    span = cycles - ADDRGEN_LATENCY
    return words / span if span > 0 else None


def _row(bench: str, ready: str, s: Settings, count: int) -> dict:
    return {"bench": bench, "simulator": _LABELS[bench], "kind": s.kind,
            "seed": s.kind_seed(s.kind), "ready": ready, "bds": count, "status": "ok"}


def _failed(row: dict, error: BaseException) -> dict:
    """Mark a row skipped (tool missing), mismatching or failed, with the reason."""
    if isinstance(error, ToolMissing | ImportError):
        status = "skipped"
    elif isinstance(error, Mismatch):
        status = "mismatch"
    else:
        status = "error"
    reason = str(error).splitlines()[0] if str(error) else type(error).__name__
    _say(f"  {row['simulator']} {row['ready']}: {status}: {reason}")
    return row | {"status": status, "reason": reason}


def _runner_errors() -> tuple[type[BaseException], ...]:
    """Errors a runner may raise that end one row, not the suite."""
    errors: tuple[type[BaseException], ...] = (ToolMissing, ImportError, Mismatch)
    try:
        from ..tb.block.cocotb_runner import CocotbError  # imports cocotb: only when installed
    except ImportError:
        return errors
    return (*errors, CocotbError)


def _checked_run(simulator: str, s: Settings, ready: str, stimulus: tuple) -> dict:
    """One timed ``check_addrgen`` call; its row without the warm-up figures."""
    bds, pattern, offer = stimulus
    row = _row(simulator, ready, s, len(bds))
    start = time.perf_counter()
    result = check_addrgen(s.kind, bds, pattern, simulator, offer=offer, seed=row["seed"])
    call = time.perf_counter() - start
    cycles, words = result.summary.cycles, result.summary.words
    rate = result.cycles_per_second
    # The runners time the drive loop over the model's cycles plus 2 tail cycles; the
    # loop time is taken from their rate over the compared cycles (off by 2 in 10**4).
    sim = cycles / rate
    row |= {"cycles": cycles, "words": words, "bubbles": result.summary.bubbles,
            "sim_s": sim, "cycles_per_s": rate, "overhead_s": call - sim, "call_s": call}
    if ready == "high":
        row["words_per_cycle"] = _words_per_cycle(words, cycles)
    return row


def bench_checked(simulator: str, s: Settings, stimuli: dict) -> list[dict]:
    """Both ready patterns through ``check_addrgen`` on one simulator, after a warm-up.

    The warm-up is one BD: it pays what the first call pays once (imports, the
    compile of a stale build), so the timed calls show the steady state.
    """
    top = f"aiedma_addrgen_{s.kind}"
    stamp = _cocotb_stamp(simulator, top)
    before = _mtime(stamp)
    errors = _runner_errors()
    try:
        start = time.perf_counter()
        check_addrgen(s.kind, stimuli["high"][0][:1], None, simulator)
        first = time.perf_counter() - start
    except errors as error:
        return [_failed(_row(simulator, ready, s, len(stimuli[ready][0])), error)
                for ready in READY_MODES]
    compiled = None if simulator == "amaranth" else _mtime(stamp) != before
    rows = []
    for ready in READY_MODES:
        try:
            row = _checked_run(simulator, s, ready, stimuli[ready])
        except errors as error:
            row = _failed(_row(simulator, ready, s, len(stimuli[ready][0])), error)
        rows.append(row)
        _say_row(row)
    rows[0] |= {"first_call_s": first, "compiled": compiled}
    return rows


def _bulk_run(bench: str, simulator: str, ready: str, count: int, s: Settings) -> dict:
    # One root: a kind's runs share its build (tb/regress/verilog_bulk.py keeps one per
    # memory depth).
    root = s.out / "bench" / "bulk"
    stamps = (root / simulator / s.kind).glob("build-*/build.stamp")
    row = _row(bench, ready, s, count)
    before = {p: _mtime(p) for p in stamps}
    try:
        r = run_bulk(s.kind, count, row["seed"], simulator, ready, root=root)
    except (ToolMissing, RuntimeError) as error:
        return _failed(row, error)
    words = r["words"]
    row |= {"cycles": r["compared"], "model_cycles": r["cycles"], "words": words,
            "sim_s": r["run_s"], "cycles_per_s": r["cycles_per_s"], "overhead_s": r["model_s"],
            "build_s": r["build_s"], "total_s": r["total_s"],
            "end_to_end_cycles_per_s": r["end_to_end_cycles_per_s"],
            "compiled": {p: _mtime(p) for p in (root / simulator / s.kind).glob(
                "build-*/build.stamp")} != before}
    if ready == "high":
        row["words_per_cycle"] = _words_per_cycle(words, r["compared"])
    if r["mismatch"] is not None or r["compared"] != r["cycles"]:
        row |= {"status": "mismatch", "reason": f"compared {r['compared']} of {r['cycles']} "
                f"cycles; mismatch {r['mismatch']}"}
    return row


def bench_bulk(bench: str, s: Settings) -> list[dict]:
    """The bulk testbench on both ready patterns (``bulk-large``: many more BDs)."""
    simulator = "icarus" if bench == "bulk-icarus" else "verilator"
    count = s.large_bds if bench == "bulk-large" else s.bds
    rows = []
    for ready in READY_MODES:
        row = _bulk_run(bench, simulator, ready, count, s)
        _say_row(row)
        rows.append(row)
    return rows


def _say_row(row: dict) -> None:
    if row["status"] in ("ok", "mismatch"):
        _say(f"  {row['simulator']:24} {row['ready']:5} {row['bds']:6} BDs "
             f"{row['cycles']:9,} cycles  sim {row['sim_s']:7.3f} s  "
             f"{row['cycles_per_s']:12,.0f} cycles/s  overhead {row['overhead_s']:6.2f} s"
             + (f"  end to end {row['end_to_end_cycles_per_s']:12,.0f} compared cycles/s"
                if "end_to_end_cycles_per_s" in row else "")
             + ("" if row["status"] == "ok" else f"  MISMATCH: {row['reason']}"))


def add_ratios(rows: list[dict]) -> None:
    """Each row's cycles/s over the Amaranth row of the same ready pattern (``x_amaranth``).

    None where either row did not run cleanly (no baseline, no ratio).
    """
    base = {r["ready"]: r["cycles_per_s"] for r in rows
            if r["bench"] == "amaranth" and r["status"] == "ok"}
    for r in rows:
        ok = r["status"] == "ok" and r["ready"] in base
        r["x_amaranth"] = r["cycles_per_s"] / base[r["ready"]] if ok else None


def cycles_agree(rows: list[dict]) -> bool | None:
    """Whether every row of a ready pattern and BD count ran the same number of cycles.

    The check that the runners ran one regression. None when no two rows compare.
    """
    seen: dict[tuple, set[int]] = {}
    for r in rows:
        if r["status"] == "ok":
            seen.setdefault((r["ready"], r["bds"]), set()).add(r["cycles"])
    if not any(len(group) for group in seen.values()):
        return None
    return all(len(group) == 1 for group in seen.values())


# --- RTL words per cycle ----------------------------------------------------------------


def bench_wpc(s: Settings) -> list[dict]:
    """Words per cycle of the address generator RTL, ready high, per kind (Amaranth)."""
    rows = []
    for kind in KINDS:
        seed = s.kind_seed(kind)
        bds = random_bds(kind, s.wpc_bds, seed)
        summary = check_addrgen(kind, bds, None, "amaranth", seed=seed).summary
        rows.append({"kind": kind, "seed": seed, "bds": len(bds), "words": summary.words,
                     "cycles": summary.cycles, "bubbles": summary.bubbles,
                     "latency": ADDRGEN_LATENCY,
                     "words_per_cycle": _words_per_cycle(summary.words, summary.cycles)})
        _say(f"  {kind}: {summary.words} words in {summary.cycles} cycles: "
             f"{rows[-1]['words_per_cycle']:.3f} words/cycle after the "
             f"{ADDRGEN_LATENCY}-cycle latency")
    return rows


DMA_WPC_BDS = 4
"""Chained BDs a channel of the whole-DMA figure runs, each with its own lock."""


def all_channels_program(words: int) -> tuple[list[tuple[int, int]], dict[str, list[int]]]:
    """Every memory-tile channel busy at once: each runs a task of ``DMA_WPC_BDS`` chained
    BDs of ``words`` words, each BD acquiring a free lock and releasing another; MM2S
    channels read their own region, S2MM channels write theirs. The register writes and
    the S2MM channels' input words."""
    dma = DMA("memtile", 0, 1)
    kind = DMA_KINDS["memtile"]
    base, lock_base = kind.memory_window("own").start, kind.lock_window("own").start
    span = DMA_WPC_BDS * words
    inputs = {}
    for n, channel in enumerate(dma.channels):
        # Six channels share a half of the BD table: three MM2S, three S2MM.
        slot = channel.index // 2 + 3 * (channel.direction == "s2mm")
        first = kind.channel_bds(channel.index).start + slot * DMA_WPC_BDS
        for k in range(DMA_WPC_BDS):
            lock = (n * DMA_WPC_BDS + k) % 32
            dma.write_bd(first + k, BufferDescriptor(
                "memtile", base_address=base + n * span + k * words, buffer_length=words,
                lock_acq_enable=1, lock_acq_id=lock_base + lock, lock_acq_value=-1,
                lock_rel_id=lock_base + 32 + lock, lock_rel_value=1,
                use_next_bd=int(k + 1 < DMA_WPC_BDS),
                next_bd=(first + k + 1) * (k + 1 < DMA_WPC_BDS), valid_bd=1))
        channel.push(Task(first))
        if channel.direction == "s2mm":
            inputs[f"s2mm{channel.index}"] = list(range(span))
    for lock in range(32):
        dma.locks.route(lock_base + lock)[0].set(lock, 63)
    return program_writes(dma), inputs


def bench_dma_wpc(s: Settings) -> list[dict]:
    """Words per cycle of each channel of the whole memory-tile RTL DMA, all 12 streaming
    at once (Verilator, every port compared with the model every cycle)."""
    words = 64 if s.quick else 1024
    writes, inputs = all_channels_program(words)
    run = run_dma("memtile", writes, inputs=inputs, simulator="verilator")
    rows = []
    for name, cycles in sorted(run.word_cycles.items()):
        span = cycles[-1] - cycles[0] + 1 if cycles else 0
        rows.append({"channel": name, "words": len(cycles), "first": cycles[0] if cycles else None,
                     "last": cycles[-1] if cycles else None,
                     "words_per_cycle": len(cycles) / span if span else None})
    worst = min(r["words_per_cycle"] or 0 for r in rows)
    _say(f"  whole memory-tile DMA, {len(rows)} channels at once, {DMA_WPC_BDS} chained "
         f"BDs of {words} words each: lowest {worst:.3f} words/cycle from a channel's "
         f"first word to its last ({run.cycles} cycles in all)")
    return rows


# --- FPGA -------------------------------------------------------------------------------


def read_fpga(path: Path) -> dict | None:
    """The table of ``make fpga``, or None when there is none (or it cannot be read).

    Rows that are not JSON objects are dropped; a row may lack any column, and
    columns beyond :data:`FPGA_COLUMNS` are kept, after those.

    Returns
    -------
    dict or None
        ``path``, ``columns`` (in display order), ``rows`` and ``meta`` (the
        file's other top-level keys).
    """
    try:
        data = json.loads(Path(path).read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as error:
        _say(f"FPGA: cannot read {path}: {error}")
        return None
    if not isinstance(data, dict) or not isinstance(data.get("rows"), list):
        _say(f"FPGA: {path} has no list of rows")
        return None
    rows = [row for row in data["rows"] if isinstance(row, dict)]
    columns = [c for c in FPGA_COLUMNS if any(c in row for row in rows)]
    for row in rows:
        columns += [key for key in row if key not in columns]
    return {"path": str(path), "columns": columns, "rows": rows,
            "meta": {k: v for k, v in data.items() if k != "rows"}}


# --- the report -------------------------------------------------------------------------


def _cell(value: object) -> str:
    """A Markdown table cell: '-' for nothing, floats to about 3 digits, pipes escaped."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        size = abs(value)
        if size >= 100:
            return f"{value:,.0f}"
        return f"{value:.1f}" if size >= 10 else f"{value:.2f}" if size >= 1 else f"{value:.3g}"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, list):  # e.g. a critical path, as its nets in order
        text = " -> ".join(str(v) for v in value)
        text = text if len(text) <= _CELL_WIDTH else text[: _CELL_WIDTH - 3] + "..."
    else:
        text = value if isinstance(value, str) else json.dumps(value)
    return text.replace("|", "\\|")


def _exact(value: float | None) -> str | None:
    """Words per cycle to 4 decimals: the figure is 1 exactly, or it is a finding."""
    return None if value is None else f"{value:.4f}"


def _table(head: Sequence[str], rows: Sequence[Sequence[object]]) -> list[str]:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in rows]
    return [*lines, ""]


def _model_md(results: dict) -> list[str]:
    rows = []
    if "walk" in results:
        w = results["walk"]
        rows.append([f"4-D halo walk `indices()` ({w['zero_fraction']:.1%} zero)",
                     f"{w['elements']:,} indices", w["walk_s"] * 1e3, w["rate"] / 1e6,
                     w["arange_rate"] / 1e6, w["ratio"]])
    for r in results.get("stream", []):
        rows.append([f"{r['name']} BD `stream()` ({r['zero_fraction']:.1%} zero)",
                     f"{r['words']:,} words", r["stream_s"] * 1e3, r["rate"] / 1e6,
                     r["arange_rate"] / 1e6, r["ratio"]])
    if "elements" in results:
        r = results["elements"]
        rows.append([f"`element_stream()` of {r['bds']} chained memtile BDs "
                     f"({r['zero_fraction']:.1%} zero)", f"{r['elements']:,} elements",
                     r["element_s"] * 1e3, r["rate"] / 1e6, r["arange_rate"] / 1e6,
                     r["ratio"]])
    rows += _shape_rows(results.get("shapes", []))
    if not rows:
        return []
    return ["## Golden model", "",
            "Best of the repeats; the baseline is `np.arange` of the same length, timed "
            "in the same run.", "",
            *_table(["figure", "size", "ms", "M/s", "np.arange M/s", "ratio to np.arange"],
                    rows)]


def _shape_rows(shapes: list[dict]) -> list[list]:
    """Two rows a shape of :func:`~aiedma.flows.model_bench.shape_rates`: walk, stream."""
    rows = []
    for r in shapes:
        for figure, call in (("walk", "indices()"), ("stream", "element_stream()")):
            f = r[figure]
            rows.append([f"{r['name']} `{call}` ({r['zero_fraction']:.0%} zero, {r['bds']} "
                         f"BDs x {r['passes']} passes)", f"{r['elements']:,} elements",
                         f[f"{figure}_s"] * 1e3, f["rate"] / 1e6, f["arange_rate"] / 1e6,
                         f["ratio"]])
    return rows


def _system_md(rows: list[dict]) -> list[str]:
    if not rows:
        return []
    return ["## System model", "",
            "`pipeline_graph(num_buffers, 64)` and `copy_graph((256, 64), num_buffers)` "
            "(graph build, compile and run timed together, best of the repeats); the "
            "baseline is the same run with `exact=True` (every cycle stepped).", "",
            *_table(["graph", "buffers", "iterations", "simulated cycles", "exact s",
                     "exact cycles/s", "fast s", "fast cycles/s", "ratio fast/exact"],
                    [[r["graph"], r["num_buffers"], r["iterations"], r["cycles"], r["exact_s"],
                      r["exact_cycles_per_s"], r["fast_s"], r["fast_cycles_per_s"],
                      r["speedup"]] for r in rows])]


def _cosim_md(cosim: dict) -> list[str]:
    rows = cosim["rows"]
    if not rows:
        return []
    table = []
    for r in rows:
        if r["status"] == "skipped" or "cycles" not in r:
            table.append([r["simulator"], r["ready"], r["bds"], *[None] * 9,
                          f"{r['status']}: {r.get('reason', '')}"])
            continue
        table.append([r["simulator"], r["ready"], r["bds"], r["cycles"], r["sim_s"],
                      r["cycles_per_s"], r["x_amaranth"], r["overhead_s"],
                      r.get("first_call_s"), r.get("build_s"), r.get("compiled"),
                      _exact(r.get("words_per_cycle")), r["status"]])
    agree = {True: "yes", False: "NO", None: "-"}[cosim["cycles_agree"]]
    return ["## Co-simulation", "",
            f"One regression on every runner: {cosim['kind']}, seed {cosim['seed']}, random "
            "legal BDs (`random_bds`); `high`: ready and offer held high; `stall`: empty BDs "
            "allowed, ready from `stall_pattern`, offer idle 5 % of cycles "
            "(`regression_stimulus`, as `run_bulk` runs it). Same cycle count on every runner "
            f"of a size: {agree}. Every cycle compared with the model; each run once. The "
            "ratio is cycles/s over the Amaranth row of the same ready pattern (the large "
            "bulk run's too: a rate per cycle).", "",
            *_table(["simulator", "ready", "BDs", "cycles compared", "sim s", "cycles/s",
                     "ratio to Amaranth", "overhead s", "first call s", "build s", "compiled",
                     "words/cycle", "status"], table),
            *[f"* {name}: {note}" for name, note in _TIME_NOTES.items()], ""]


def _bulk_md(cosim: dict) -> list[str]:
    rows = [r for r in cosim["rows"] if "end_to_end_cycles_per_s" in r]
    if not rows:
        return []
    return ["## Bulk regression end to end", "",
            "What a user waits for: random BDs, patterns, expected trace and files, the build "
            "(reused when cached) and the simulation, all timed together, as compared cycles "
            "per second. The baseline is the simulator process alone in the same run.", "",
            *_table(["simulator", "ready", "BDs", "cycles compared", "total s",
                     "end-to-end cycles/s", "simulation cycles/s", "ratio to simulation"],
                    [[r["simulator"], r["ready"], r["bds"], r["cycles"], r["total_s"],
                      r["end_to_end_cycles_per_s"], r["cycles_per_s"],
                      r["end_to_end_cycles_per_s"] / r["cycles_per_s"]
                      if r["cycles_per_s"] else None] for r in rows])]


def _wpc_md(rows: list[dict]) -> list[str]:
    if not rows:
        return []
    return ["## RTL words per cycle", "",
            f"Address generator on Amaranth, random BDs back to back with ready high: words "
            f"/ (cycles - {ADDRGEN_LATENCY}), the latency being `ADDRGEN_LATENCY`.", "",
            *_table(["kind", "BDs", "words", "cycles", "bubbles", "words/cycle"],
                    [[r["kind"], r["bds"], r["words"], r["cycles"], r["bubbles"],
                      _exact(r["words_per_cycle"])] for r in rows])]


def _dma_wpc_md(rows: list[dict]) -> list[str]:
    if not rows:
        return []
    return ["## Whole memory-tile DMA, every channel at once", "",
            f"{DMA_WPC_BDS} chained BDs a channel, each with a free lock; words / (last word "
            f"cycle - first word cycle + 1), per channel (Verilator, compared with the model).",
            "", *_table(["channel", "words", "first", "last", "words/cycle"],
                        [[r["channel"], r["words"], r["first"], r["last"],
                          _exact(r["words_per_cycle"])] for r in rows])]


def _fpga_md(fpga: dict | None) -> list[str]:
    if not fpga:
        return []
    columns = fpga["columns"]
    return ["## FPGA", "", f"From `{fpga['path']}` (`make fpga`).", "",
            *_table(columns, [[row.get(c) for c in columns] for row in fpga["rows"]])]


def to_markdown(report: dict) -> str:
    """The report as Markdown: machine, then one table per group of figures."""
    m, results = report["machine"], report["results"]
    lines = ["# aiedma benchmarks", "",
             f"{report['generated']}, `{' '.join(report['command'])}`, "
             f"{report['total_s']:.0f} s in all. Figures are measured, never asserted.", "",
             *_table(["machine", ""], [[k, v] for k, v in m.items()])]
    lines += _model_md(results)
    lines += _system_md(results.get("system", []))
    if "cosim" in results:
        lines += _cosim_md(results["cosim"])
        lines += _bulk_md(results["cosim"])
    lines += _wpc_md(results.get("words_per_cycle", []))
    lines += _dma_wpc_md(results.get("dma_words_per_cycle", []))
    lines += _fpga_md(results.get("fpga"))
    return "\n".join(lines)


# --- the suite --------------------------------------------------------------------------


def _cosim(selected: Sequence[str], s: Settings) -> dict:
    """Every selected co-simulation benchmark, on one shared set of stimuli."""
    seed = s.kind_seed(s.kind)
    stimuli = {ready: regression_stimulus(s.kind, s.bds, seed, ready) for ready in READY_MODES}
    rows: list[dict] = []
    for bench in GROUPS["cosim"]:
        if bench not in selected:
            continue
        _say(f"co-simulation: {_LABELS[bench]}")
        if bench.startswith("bulk"):
            rows += bench_bulk(bench, s)
        else:
            rows += bench_checked(bench, s, stimuli)
    add_ratios(rows)
    agree = cycles_agree(rows)
    if agree is False:
        _say("WARNING: the runners did not run the same number of cycles")
    return {"kind": s.kind, "seed": seed, "bds": s.bds, "large_bds": s.large_bds,
            "cycles_agree": agree, "rows": rows}


_STEPS: dict[str, tuple[str, Callable[[Settings], object]]] = {
    "walk": ("walk", bench_walk),
    "stream": ("stream", bench_stream),
    "elements": ("elements", bench_elements),
    "shapes": ("shapes", bench_shapes),
    "system": ("system", bench_system),
    "wpc": ("words_per_cycle", bench_wpc),
    "dma-wpc": ("dma_words_per_cycle", bench_dma_wpc),
}


def run_suite(selected: Sequence[str], s: Settings,
              command: Sequence[str] = ("python", "-m", "aiedma.flows.bench")) -> dict:
    """Run the selected benchmarks; the report as the JSON saves it.

    Parameters
    ----------
    selected : sequence of str
        Names from :data:`BENCHMARKS` (groups already expanded).
    s : Settings
    command : sequence of str
        The command line, recorded in the report.

    Returns
    -------
    dict
        ``schema``, ``generated``, ``command``, ``settings``, ``machine``,
        ``results`` (per benchmark group) and ``total_s``.
    """
    began = time.perf_counter()
    report = {"schema": SCHEMA,
              "generated": datetime.now(UTC).isoformat(timespec="seconds"),
              "command": list(command),
              "settings": {k: str(v) if isinstance(v, Path) else v
                           for k, v in asdict(s).items()},
              "selected": list(selected), "machine": machine(), "results": {}}
    _say("machine: " + ", ".join(f"{k} {v}" for k, v in report["machine"].items()))
    results = report["results"]
    for name in BENCHMARKS:
        if name not in selected:
            continue
        if name in _STEPS:
            key, step = _STEPS[name]
            _say(f"{name}:")
            results[key] = step(s)
        elif name in GROUPS["cosim"] and "cosim" not in results:
            results["cosim"] = _cosim(selected, s)
        elif name == "fpga":
            fpga = read_fpga(s.fpga_json)
            if fpga is None:
                _say("FPGA: run `make fpga` first")
            else:
                results["fpga"] = fpga
    report["total_s"] = time.perf_counter() - began
    return report


def _selection(text: str | None) -> list[str]:
    if text is None:
        return list(BENCHMARKS)
    names: list[str] = []
    for name in (n.strip() for n in text.split(",") if n.strip()):
        if name not in BENCHMARKS and name not in GROUPS:
            raise argparse.ArgumentTypeError(
                f"unknown benchmark {name!r}: choose from {', '.join(BENCHMARKS + tuple(GROUPS))}")
        names += GROUPS.get(name, (name,))
    return [n for n in BENCHMARKS if n in names]


def _failures(report: dict) -> int:
    rows = report["results"].get("cosim", {}).get("rows", [])
    return sum(r["status"] in ("mismatch", "error") for r in rows)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the suite, print the report, save ``bench.json`` and ``bench.md``.

    Returns 1 when a co-simulation run mismatched or failed (its figures mean
    nothing then), else 0; a skipped simulator is not a failure.
    """
    parser = argparse.ArgumentParser(prog="python -m aiedma.flows.bench",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, for tests")
    parser.add_argument("--out", type=Path, default=Path("build"),
                        help="folder of bench.json and bench.md (default build/)")
    parser.add_argument("--repeat", type=int, default=None,
                        help="timings per model figure, best kept (default 5, quick 1)")
    parser.add_argument("--only", type=_selection, default=None, metavar="NAME[,NAME]",
                        help=f"run these: {', '.join(BENCHMARKS)} or {', '.join(GROUPS)}")
    parser.add_argument("--seed", type=int, default=1, help="base seed (default 1)")
    parser.add_argument("--bds", type=int, default=None,
                        help="random BDs of the co-simulation regression (default 1000)")
    parser.add_argument("--fpga-json", type=Path, default=DEFAULT_FPGA_JSON,
                        help=f"table of `make fpga` (default {DEFAULT_FPGA_JSON})")
    args = parser.parse_args(argv)
    changes = {"out": args.out, "seed": args.seed, "fpga_json": args.fpga_json,
               "repeat": args.repeat if args.repeat is not None else 1 if args.quick else 5}
    if args.bds is not None:
        changes["bds"] = args.bds
    settings = Settings.quick_sizes(**changes) if args.quick else Settings(**changes)
    selected = args.only if args.only is not None else list(BENCHMARKS)

    given = list(sys.argv[1:] if argv is None else argv)
    report = run_suite(selected, settings, ["python", "-m", "aiedma.flows.bench", *given])
    markdown = to_markdown(report)
    settings.out.mkdir(parents=True, exist_ok=True)
    (settings.out / "bench.json").write_text(json.dumps(report, indent=1) + "\n")
    (settings.out / "bench.md").write_text(markdown + "\n")
    print()
    print(markdown)
    print(f"wrote {settings.out / 'bench.json'} and {settings.out / 'bench.md'} "
          f"({report['total_s']:.0f} s)")
    return 1 if _failures(report) else 0


if __name__ == "__main__":
    sys.exit(main())
