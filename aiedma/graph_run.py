"""``aiedma run graph.h``: a Vitis graph header on the system model.

The header is read by :func:`aiedma.model.adf.read_header_file` (shared buffers and
their tilings) and :func:`aiedma.model.adf.graph.read_graph_text` (kernels, PLIO /
GMIO, ``connect``), joined by :func:`aiedma.model.system.header_graph.header_graph`
and run by :meth:`~aiedma.model.system.graph.Graph.run`. What it prints, and a hang,
are printed as for an .mlir design (:func:`.mlir_commands.print_hang`).

A GMIO with a tiling walks a DDR buffer: an input GMIO's data (``--input``, or the
ramp) is that buffer, an iteration after another, and the graph gets what the tiling
reads of it; an output GMIO's words are written into a buffer of zeros as its tiling
says, and that buffer is the output shown.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable
from math import prod
from pathlib import Path

import numpy as np

from .mlir_commands import EXIT_HANG, load_input, print_hang
from .model import format_runs
from .model.adf import GraphHeader, HeaderPort, read_header_file
from .model.adf.graph import read_graph_text
from .model.arch.dtypes import GRAPH_DTYPES
from .model.errors import field_error
from .model.system.graph import GraphError
from .model.system.header_graph import HeaderGraph, header_graph
from .model.system.scheduler import DeadlockError

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


def _gmio_ports(header: GraphHeader) -> dict[str, HeaderPort]:
    """The GMIO ports with a tiling, by the graph port's name (its object's bare name)."""
    return {port.name.rpartition("::")[2].partition(".")[0]: port for port in header.ports
            if port.is_gmio}


def _ddr_elements(port: HeaderPort) -> int:
    """Elements of the DDR buffer a GMIO's tiling walks (its ``buffer_dimension``; a port
    program's entries all address one buffer)."""
    return prod(next(iter(port.program)).buffer_dimension)


def _inputs(items: list[str], built: HeaderGraph, gmios: dict[str, HeaderPort],
            iterations: int) -> dict:
    """Each input's stream: from ``--input``, else a ramp wrapped into its element type (an
    int8 input counts 0..127, -128..127, ...). A GMIO with a read tiling is given its DDR
    buffer, an iteration after another, and sends what its tiling reads of each."""
    volumes, dtypes = built.input_volumes, built.input_dtypes
    ddr = {name: _ddr_elements(port) for name, port in gmios.items()
           if name in volumes and port.direction == "read"}
    data = {name: np.arange(ddr.get(name, volume) * iterations).astype(
                GRAPH_DTYPES.get(dtypes.get(name, "int32"), np.int64))
            for name, volume in volumes.items()}
    data.update(load_input(item, list(volumes), GraphError, "the graph has no input")
                for item in items)
    for name, size in ddr.items():
        port, buffer = gmios[name], np.asarray(data[name]).ravel()
        port.program.validate("shim", "read", dtypes.get(name, "int32"))
        if buffer.size != iterations * size:
            raise field_error(GraphError, f"len(inputs[{name!r}])", buffer.size,
                              f"the GMIO reads a DDR buffer of {size} elements an iteration: "
                              f"{iterations} iterations need {iterations * size}")
        stream = np.concatenate([port.program.gather(part)
                                 for part in buffer.reshape(iterations, size)])
        if stream.size != iterations * volumes[name]:
            raise GraphError(f"{port.name}: its tiling reads {stream.size // iterations} "
                             f"elements an iteration, and the graph takes {volumes[name]}")
        data[name] = stream
    return data


def _ddr_outputs(outputs: dict, gmios: dict[str, HeaderPort]) -> dict:
    """The outputs, each GMIO with a write tiling as the DDR buffer its tiling fills in
    each iteration (elements it does not write 0)."""
    shown = dict(outputs)
    for name, port in gmios.items():
        if name in outputs and port.direction == "write":
            words = np.asarray(outputs[name])
            ddr = np.zeros((words.shape[0], _ddr_elements(port)), dtype=words.dtype)
            for row, buffer in zip(words, ddr, strict=True):
                port.program.scatter(row, buffer)
            shown[name] = ddr
    return shown


def run(args: argparse.Namespace, text: str) -> int:
    """Run the header's graph; print outputs and report, or the hang (status 1)."""
    path = Path(args.file)
    header = read_header_file(path, dict(args.define or []), text)
    found = read_graph_text(text)
    if not found.connections:
        raise GraphError(f"{path.name}: no connect<>(...) could be read: not a graph to run")
    functions = dict(kernel_function(item) for item in args.kernel or [])
    built = header_graph(header, found, functions, path.stem)
    gmios = _gmio_ports(header)
    inputs = _inputs(args.input or [], built, gmios, args.iterations)
    for problem in header.skipped:   # after the errors, which are one line each
        print(f"aiedma run: warning: {path.name}:{problem}", file=sys.stderr)
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
    for name, values in _ddr_outputs(result.outputs, gmios).items():
        print(f"{name} ({values.shape[1]} elements an iteration"
              f"{', the DDR buffer its GMIO tiling wrote' if name in gmios else ''}, output): "
              f"{format_runs(np.asarray(values).ravel())}")
    print(result.report.text())
    return 0


