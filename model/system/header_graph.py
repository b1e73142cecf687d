"""A :class:`~.graph.Graph` from an adf graph header (``aiedma run graph.h``).

The header's shared buffers, their tilings, ``repetition_count`` and ``num_buffers``
come from :func:`aiedma.model.adf.read_graph_header`; its kernels, PLIO / GMIO ports,
``connect`` statements and kernel ``dimensions`` from
:func:`aiedma.model.adf.graph.read_graph_text`. :func:`header_graph` joins them.

Decisions:

* **decision**: a kernel's buffer size is its ``dimensions(k.in[i])`` (the product),
  else the stream length of the shared-buffer port it is connected to, else the size
  of the kernel's other buffers when they all have one (a copy); otherwise the port is
  named in an error.
* **decision**: a kernel without a callable (``--kernel``) copies: its inputs, joined
  in port order, are cut into its outputs in port order (the sizes must add up).
* **decision**: a kernel in no ``connect`` (declared, or created and left unused) is
  left out of the graph and named in :attr:`HeaderGraph.unconnected`: it can neither
  get nor give data.
* **decision**: PLIO and GMIO ports are the graph's inputs and outputs by their C++
  names (``in1``); a graph input's volume per iteration is the buffer it feeds
  (times the kernel's ``repetition_count``, or the shared buffer's).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

import numpy as np

from ..adf.graph import Endpoint, GraphText
from ..adf.ports import GraphHeader, SharedBufferSpec
from ..errors import field_error
from .graph import Graph, GraphError, Port, SharedBuffer

__all__ = ["HeaderGraph", "copy_kernel", "header_graph"]


def copy_kernel(outputs: tuple[int, ...]) -> Callable:
    """The default kernel: inputs joined in port order, cut into ``outputs`` sizes."""
    def copy(*inputs: np.ndarray):
        data = np.concatenate([np.ravel(x) for x in inputs]) if inputs else np.zeros(0)
        if data.size != sum(outputs):
            raise field_error(GraphError, "copy kernel inputs", data.size,
                              f"a copy sends its inputs to its outputs, which hold "
                              f"{sum(outputs)} elements; give the kernel with --kernel")
        parts = np.split(data, np.cumsum(outputs)[:-1])
        return parts[0] if len(parts) == 1 else tuple(parts)
    return copy


class HeaderGraph:
    """A header's graph and the volume each graph input sends per iteration.

    Attributes
    ----------
    graph : Graph
    input_volumes : dict of str to int
        Elements each graph input (PLIO / GMIO) sends per iteration.
    input_dtypes : dict of str to str
        The element type each graph input sends (that of the buffer its data goes to).
    kernels : tuple of str
        The kernels' names.
    unconnected : tuple of str
        Kernels of the header in no connection, left out of the graph.
    """

    def __init__(self, graph: Graph, input_volumes: dict[str, int],
                 input_dtypes: dict[str, str], kernels: tuple[str, ...],
                 unconnected: tuple[str, ...] = ()) -> None:
        self.graph, self.input_volumes, self.input_dtypes = graph, input_volumes, input_dtypes
        self.kernels, self.unconnected = kernels, unconnected


def _short(name: str) -> str:
    return name.rpartition("::")[2]


def _buffer(g: Graph, spec: SharedBufferSpec) -> SharedBuffer:
    buf = g.shared_buffer(spec.shape, spec.n_in, spec.n_out, spec.dtype, _short(spec.name))
    buf.repetition_count = spec.repetition_count
    buf.num_buffers = spec.num_buffers
    for index, program in spec.write_access.items():
        buf.write_access(index, program)
    for index, program in spec.read_access.items():
        buf.read_access(index, program)
    return buf


def _kernel_sizes(text: GraphText, buffers: Mapping[str, SharedBuffer]) -> dict:
    """``{kernel: {"in": [sizes], "out": [sizes]}}`` (see the module's decisions)."""
    sizes: dict[str, dict[str, dict[int, int | None]]] = {
        k: {"in": {}, "out": {}} for k in text.kernels}
    for c in text.connections:
        for end, peer in ((c.source, c.destination), (c.destination, c.source)):
            if end.name not in sizes or end.side is None:
                continue
            size = None
            if (end.name, end.side, end.index) in text.dimensions:
                size = math.prod(text.dimensions[(end.name, end.side, end.index)])
            elif peer.name in buffers and peer.side is not None:
                buf = buffers[peer.name]
                ports = buf.inputs if peer.side == "in" else buf.outputs
                if peer.index < len(ports) and ports[peer.index] in buf.programs:
                    size = buf.programs[ports[peer.index]].stream_length()
            sizes[end.name][end.side][end.index] = size
    out = {}
    for name, sides in sizes.items():
        known = {s for side in sides.values() for s in side.values() if s is not None}
        for side, ports in sides.items():
            for index, size in ports.items():
                if size is None and len(known) != 1:
                    raise field_error(GraphError, f"{name}.{side}[{index}]", "no size",
                                      "a kernel buffer needs dimensions(...) = {n} or a "
                                      "connection to a shared buffer port")
                ports[index] = size if size is not None else next(iter(known))
        out[name] = {side: [ports[i] for i in range(max(ports, default=-1) + 1)]
                     for side, ports in sides.items()}
    return out


def header_graph(header: GraphHeader, text: GraphText,
                 functions: Mapping[str, Callable] | None = None,
                 name: str = "graph") -> HeaderGraph:
    """The :class:`Graph` of a read header.

    Parameters
    ----------
    header : GraphHeader
        From :func:`aiedma.model.adf.read_graph_header` (buffers and their tilings).
    text : GraphText
        From :func:`aiedma.model.adf.graph.read_graph_text` (kernels, ports, connections).
    functions : mapping of str to callable, optional
        Kernel name to its function, ``function(*inputs) -> output or tuple of
        outputs`` (NumPy arrays of elements, one per port, as :class:`.graph.Kernel`
        takes); a kernel not given copies (:func:`copy_kernel`).
    name : str

    Raises
    ------
    GraphError
        For a connection whose end is no kernel, buffer or PLIO of the header, a
        kernel buffer of unknown size, or a kernel function given for no kernel.
    """
    functions = dict(functions or {})
    for kernel in functions:
        if kernel not in text.kernels:
            raise field_error(GraphError, "--kernel", kernel,
                              f"no such kernel in the header (it has "
                              f"{', '.join(text.kernels) or 'none'})")
    g = Graph(name)
    buffers = {_short(spec.name): _buffer(g, spec) for spec in header.buffers}
    kernels = {}
    connected = {end.name for c in text.connections for end in (c.source, c.destination)}
    for kernel, sides in _kernel_sizes(text, buffers).items():
        if kernel not in connected:
            continue
        runs = text.repetitions.get(kernel)
        function = functions.get(kernel) or copy_kernel(tuple(sides["out"]))
        kernels[kernel] = g.kernel(kernel, function, sides["in"], sides["out"], runs)
    volumes: dict[str, int] = {}
    for c in text.connections:
        source = _port(g, c.source, "out", buffers, kernels, text, c)
        destination = _port(g, c.destination, "in", buffers, kernels, text, c)
        g.connect(source, destination)
        if c.source.name in text.ios:
            volumes[c.source.name] = _volume(c.destination, buffers, kernels, text)
    unconnected = tuple(k for k in text.kernels if k not in connected)
    dtypes = {name: g.input_dtype(name) for name in volumes}
    return HeaderGraph(g, volumes, dtypes, tuple(kernels), unconnected)


def _port(g: Graph, end: Endpoint, way: str, buffers, kernels, text: GraphText,
          c) -> Port:
    where = f"connect at {c.line}:{c.column}"
    if end.name in text.ios:
        if text.ios[end.name] == ("input" if way == "out" else "output"):
            return g.input(end.name) if way == "out" else g.output(end.name)
        raise field_error(GraphError, where, str(end),
                          f"an {text.ios[end.name]} PLIO/GMIO cannot be a connection's "
                          f"{'source' if way == 'out' else 'destination'}")
    node = buffers.get(end.name) or kernels.get(end.name)
    if node is None or end.side != way:
        raise field_error(GraphError, where, str(end),
                          f"expected {'an output' if way == 'out' else 'an input'} port "
                          f"(.{way}[i]) of a kernel, shared buffer or PLIO of the header")
    ports = node.outputs if way == "out" else node.inputs
    if end.index >= len(ports):
        raise field_error(GraphError, where, str(end),
                          f"{end.name} has {len(ports)} {way} port(s)")
    return ports[end.index]


def _volume(end: Endpoint, buffers, kernels, text: GraphText) -> int:
    """Elements a graph input sends per iteration into ``end``."""
    if end.name in kernels:
        kernel = kernels[end.name]
        return kernel.sizes["in"][end.index] * (text.repetitions.get(end.name) or 1)
    buf = buffers[end.name]
    program = buf.programs.get(buf.inputs[end.index])
    return 0 if program is None else program.stream_length() * buf.repetition_count
