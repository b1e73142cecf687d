"""``aiedma run graph.h``: a Vitis graph header on the system model.

The header is read by :func:`aiedma.model.adf.read_header_file` (shared buffers and
their tilings) and :func:`aiedma.model.adf.graph.read_graph_text` (kernels, PLIO /
GMIO, ``connect``), joined by :func:`aiedma.model.system.header_graph.header_graph`
and run by :meth:`~aiedma.model.system.graph.Graph.run`. What it prints, and a hang,
are printed as for an .mlir design (:func:`.mlir_commands.print_hang`).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

from .mlir_commands import EXIT_HANG, load_input, print_hang
from .model import format_runs
from .model.adf import read_header_file
from .model.adf.graph import read_graph_text
from .model.arch.dtypes import GRAPH_DTYPES
from .model.system.graph import GraphError
from .model.system.header_graph import HeaderGraph, header_graph
from .model.system.scheduler import DeadlockError
from .model.tiling.port import PortProgram

__all__ = ["kernel_function", "run"]


def kernel_function(item: str) -> tuple[str, Callable]:
    """``--kernel NAME=module:function``: the kernel's name and its callable.

    The module is imported from the current folder or ``sys.path``; the callable takes
    one NumPy array per input buffer and returns the output (a tuple for several).

    Raises
    ------
    GraphError
        Naming the option, the value and what is wrong with it.
    """
    name, equals, target = item.partition("=")
    module, colon, function = target.partition(":")
    if not (equals and colon and name and module and function):
        raise GraphError(f"--kernel={item!r}: expected NAME=module:function "
                         "(e.g. k1=mykernels:add_one)")
    sys.path.insert(0, os.getcwd())
    try:
        loaded = importlib.import_module(module)
    except Exception as error:   # a user's module: any error in it is theirs to see
        raise GraphError(f"--kernel={item}: cannot import {module!r} "
                         f"({type(error).__name__}: {error})") from None
    finally:
        sys.path.pop(0)
    found = getattr(loaded, function, None)
    if not callable(found):
        raise GraphError(f"--kernel={item}: {module} has no function {function!r}")
    return name, found


def _inputs(items: list[str], built: HeaderGraph, iterations: int) -> dict:
    """Each input's data: from ``--input``, else a ramp wrapped into its element type (an
    int8 input counts 0..127, -128..127, ...)."""
    volumes, dtypes = built.input_volumes, built.input_dtypes
    data = {name: np.arange(volume * iterations).astype(
                GRAPH_DTYPES.get(dtypes.get(name, "int32"), np.int64))
            for name, volume in volumes.items()}
    data.update(load_input(item, list(volumes), GraphError, "the graph has no input")
                for item in items)
    return data


def _in_order(program: PortProgram) -> bool:
    """The program walks its buffer from its first element to its last, each once."""
    indices = program.indices()
    return bool(np.array_equal(indices, np.arange(indices.size)))


def run(args: argparse.Namespace, text: str) -> int:
    """Run the header's graph; print outputs and report, or the hang (status 1)."""
    path = Path(args.file)
    header = read_header_file(path, dict(args.define or []), text)
    found = read_graph_text(text)
    if not found.connections:
        raise GraphError(f"{path.name}: no connect<>(...) could be read: not a graph to run")
    functions = dict(kernel_function(item) for item in args.kernel or [])
    built = header_graph(header, found, functions, path.stem)
    inputs = _inputs(args.input or [], built, args.iterations)
    for problem in header.skipped:   # after the errors, which are one line each
        print(f"aiedma run: warning: {path.name}:{problem}", file=sys.stderr)
    for port in header.ports:
        if port.owner in ("input_gmio", "output_gmio") and not _in_order(port.program):
            what = ("input sends its data in the order given" if port.direction == "read"
                    else "output is its words in the order they arrive")
            print(f"aiedma run: warning: {path.name}:{port.line}:{port.column}: {port.name}: "
                  f"the GMIO's tiling is not applied: the graph {what}", file=sys.stderr)
    for warning in found.warnings:
        print(f"aiedma run: warning: {path.name}:{warning}", file=sys.stderr)
    if built.unconnected:
        print(f"aiedma run: warning: {path.name}: kernel(s) {', '.join(built.unconnected)} "
              "in no connect<>(...): left out of the graph", file=sys.stderr)
    rtl = None
    if args.rtl:
        from .tb import rtl_runner  # Amaranth and the simulators load only when asked for
        rtl = rtl_runner(args.rtl)
    try:
        result = built.graph.run(args.iterations, inputs, args.max_cycles, rtl=rtl)
    except DeadlockError as hang:
        print_hang(path.name, hang, list(hang.waits))
        print(hang.report.text())
        return EXIT_HANG
    where = f"RTL on {args.rtl}, every cycle compared with the model" if args.rtl \
        else "system model"
    print(f"{path.name}: graph {path.stem}, {args.iterations} iteration"
          f"{'s' * (args.iterations > 1)}, {where}, {result.report.cycles} cycles: done")
    for name, values in result.outputs.items():
        print(f"{name} ({values.shape[1]} elements an iteration, output): "
              f"{format_runs(np.asarray(values).ravel())}")
    print(result.report.text())
    return 0


