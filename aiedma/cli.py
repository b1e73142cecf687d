"""The ``aiedma`` command line.

Every subcommand reads JSON with adf field names. Bad input ends in one line on
standard error and exit status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from . import graph_run, mlir_commands
from .flows.verilog_options import add_options as add_verilog_options
from .model import AiedmaError, PortProgram, format_runs
from .model.adf import parse_port_program, read_header_file
from .model.adf.files import CPP_SUFFIXES, read_source_text
from .model.adf.ports import KIND_WORDS
from .model.arch.directions import ACCESS_NAMES
from .model.arch.dtypes import ELEMENT_BITS
from .model.arch.kinds import DMA_KINDS
from .model.bd.compiler_count import PHASES, compiler_bd_count
from .model.bd.descriptor import decode_image
from .model.bd.fields import FIELDS, WORDS
from .model.bd.lower import LoweredProgram, lower
from .model.errors import AiedmaWarning
from .model.system.registers import (
    channel_words,
    lowered_writes,
    read_writes_document,
    writes_document,
)
from .model.tiling.parameters import KINDS

__all__ = ["main"]

EXIT_MISMATCH = 1
EXIT_USAGE = 2
EXIT_BROKEN_PIPE = 141
"""The reader of the output closed the pipe (128 + SIGPIPE, as a shell reports it)."""
EXIT_BROKEN_RULES = 1
"""``aiedma decode`` of an image that breaks a rule: every field shown, then status 1."""

WALK_EXAMPLE = """\
example:
  echo '{"buffer_dimension": [256], "tiling_dimension": [128], "offset": [-16],
         "tile_traversal": [{"dimension": 0, "stride": 144, "wrap": 2}],
         "boundary_dimension": [96]}' > port.json
  aiedma walk port.json
      port.json: 256 elements, 160 zero
        Z x16, 0..95, Z x144

FILE holds one tiling dict, a list of them (a port program), or
{"examples": [{"name": ..., "tiling": ..., "indices": [...]}, ...]};
with --check, each example's stream is compared with its "indices".

C++ works too: a graph header (every read_access / write_access of its
shared buffers, or one with --port mtx.out[0]) or a bare tiling({...}):
  aiedma walk graph.h --port mtx.out[1] -D NCOLS=6
"""


BD_EXAMPLE = """\
example:
  echo '{"buffer_dimension": [13], "tiling_dimension": [16], "offset": [-2]}' > pad.json
  aiedma bd --kind memtile pad.json
      pad.json: memtile read int32, 1 BD; task: start BD 0, repeat 1 (word 0x00000000)
      aiecompiler (tutorial's rule): 1 BD per phase, 2 for 2 phases; a memory-tile channel has 24
      field               BD 0
      buffer_length         16
      d0_zero_before         2
      d0_wrap               13
      d0_zero_after          1
      valid_bd               1
      BD 0 words: 0x00000010 0x08000000 0x001A0000 0x00000000 0x00000000 0x00020000
                  0x00000000 0x80000000
  aiedma bd examples/graph.h --port mtx.out[1] --format tap
      [
        {"offset": 4, "sizes": [2, 6, 3], "strides": [3, 10, 1]}
      ]
"""

DECODE_EXAMPLE = """\
example (the core-tile BD of D0 wrap 2, D1 wrap 3 step 8, D2 step 100, length 14):
  aiedma decode --kind tile 0x0000000E 0 0x0000E000 0x00604063 0 0x02000000
      prints every field of the 6 core-tile words (8 for memtile and shim), with its
      register bits; words are hex (0x...) or decimal.
"""


DRAW_EXAMPLE = """\
example:
  echo '{"buffer_dimension": [10, 6], "tiling_dimension": [3, 2],
         "tile_traversal": [[0, 3, 2], [1, 2, 3]]}' > k1.json
  aiedma draw k1.json -o k1.png
      k1.json: 36 elements, 6 tiles -> k1.png

The output's suffix picks the format: .png, .svg, or .gif (animated, tile by tile;
--animate element for element by element). A file of several ports (a graph header)
gives one picture per port, named from -o and the port (or choose one with --port):
  aiedma draw examples/graph.h -o g.png
      tutorial::mtx.in[0]: 36 elements, 6 tiles -> g_tutorial_mtx.in_0.png
      ... (one line per port)
"""


SIM_EXAMPLE = """\
example:
  aiedma sim --bds 50 --kinds memtile
      runs 50 random memory-tile BDs back to back, the same under backpressure, the
      lowered worked examples and the MM2S channel on Amaranth's simulator, checks
      every cycle against the golden model, and prints a summary and the coverage
      (exit status 1 on a mismatch). --sim verilator or icarus runs cocotb instead.
  aiedma sim --graph tutorial --buffers 2 --rtl verilator
      runs the tiling tutorial's graph (ping-pong buffers) in the system model and
      prints its report, then again with every memory-tile channel as RTL on
      Verilator, compared with the model on every cycle: cycles of both runs,
      words, mismatches (exit status 1 on a mismatch).
  aiedma sim examples/graph.h --sim verilator
      lowers every port of a graph header (or a JSON tiling) to BDs for its DMA and
      runs the task's BDs through that kind's address generator RTL, every cycle
      checked against the model: one line per port (exit status 1 on a mismatch).
"""

REPLAY_EXAMPLE = """\
example:
  aiedma bd --kind memtile --base-address 0x20000 --format writes pad.json > pad.writes
  aiedma replay pad.writes --rtl verilator
      pad.writes: memtile DMA, 9 writes, 25 cycles (RTL on verilator, ...)
      mm2s0: 16 words, 1 with TLAST: 0, 0, 131072..131084, 0
      the words memory-tile MM2S channel 0 sends (every memory word holds its own
      address; padding is 0), its completion tokens and the locks after the run.
      A memory tile's own memory is words 0x20000.. (0.. is its west neighbour's).
"""

RUN_EXAMPLE = """\
example:
  aiedma run examples/mlir/loopback.mlir
      loopback.mlir: npu1_1col, system model, 143 cycles: every task done
      out (64 x i32, output): 0, 8, 16, 24, 32, 40, 48, 56, 1, 9, ...
  aiedma run examples/mlir/hang.mlir
      names every waiting channel, its BD, the lock, its value and what it wants
  aiedma run examples/tutorial_graph.h --kernel k3=mykernels:add_one
      tutorial_graph.h: graph tutorial_graph, 1 iteration, system model, 159 cycles: done
      out3 (24 elements an iteration, output): ...
      a Vitis graph header: kernels, shared buffers and their tilings, PLIO / GMIO,
      connect<>; each kernel copies its inputs to its outputs unless --kernel names a
      Python function f(*inputs) -> output (or a tuple), NumPy arrays of elements.
      --rtl amaranth|verilator runs the memory-tile channels as RTL as well.
"""

VERILOG_EXAMPLE = """\
example:
  aiedma verilog --out build/verilog
      writes one Verilog file per exported top (address generator, MM2S and S2MM
      datapaths and channels, per kind) and lints each with verilator -Wall.
  aiedma verilog --axi tile --allowed 0 4096 --out build/ip
      writes the core tile's AXI top alone, its memory ports limited to word
      addresses 0-4095 (a block RAM of 4,096 words), and lints it.
"""


class _Usage(Exception):
    """A command-line input problem: reported in one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (and exit status 2), like every other error."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see --help)\n")


@dataclass(frozen=True)
class _Source:
    """One port program read from a file, with what the file says about it."""

    name: str
    program: PortProgram
    expected: list[int] | None = None
    dtype: str | None = None      # a C++ shared buffer's element type
    direction: str | None = None  # read for mtx.out[j], write for mtx.in[i]
    kind: str | None = None       # a C++ port's DMA: memtile, tile (kernel) or shim

    def context(self) -> str:
        """`` (memory tile read, int16)`` for a C++ port, else nothing."""
        if self.kind is None:
            return ""
        return f" ({KIND_WORDS[self.kind]} {self.direction}, {self.dtype or 'int32'})"


MAX_WALK_ELEMENTS = 1 << 27
"""Most elements ``walk`` computes for one port (1 GiB of int64 indices)."""


def _load(args: argparse.Namespace) -> list[_Source]:
    """The port programs of ``args.file`` (JSON or C++), narrowed to ``--port``."""
    path = Path(args.file)
    text = read_source_text(path)
    skipped: list[str] = []
    if path.suffix.lower() in CPP_SUFFIXES:
        sources = _from_cpp(path, text, dict(args.define or []), skipped)
    else:
        try:
            sources = _from_json(path, json.loads(text))
        except json.JSONDecodeError as error:
            if text.lstrip()[:1] in "{[":
                raise _Usage(f"{path}: not JSON ({error})") from None
            sources = _from_cpp(path, text, dict(args.define or []), skipped)
    port = getattr(args, "port", None)
    if port:
        chosen = [src for src in sources if src.name == port]
        if not chosen:  # TestCase1::mtx.in[0] may be picked as mtx.in[0] when unique
            chosen = [src for src in sources if src.name.rpartition("::")[2] == port]
        bare = port.rpartition("::")[2]
        unread_port = [problem for problem in skipped if f"({bare})" in problem.split(": ")[0]]
        if not chosen and len(unread_port) == 1:
            raise _Usage(f"--port={port!r}: {path.name} has it but it was not read: "
                         f"{unread_port[0]}")
        if len(chosen) != 1:
            names = ", ".join(src.name for src in (chosen or sources))
            why = "no such port" if not chosen else "several ports have that name"
            unread = f"; {len(skipped)} not read: {skipped[0]} ..." if skipped else ""
            raise _Usage(f"--port={port!r}: {why} in {path.name} (it has {names}{unread})")
        return chosen
    for problem in skipped:  # every port that could be read is; the others say why
        print(f"aiedma {args.command}: warning: {path.name}: not read: {problem}",
              file=sys.stderr)
    return sources


def _from_json(path: Path, data: Any) -> list[_Source]:
    if isinstance(data, dict) and "examples" in data:
        out = []
        for i, example in enumerate(data["examples"]):
            if not isinstance(example, dict) or "tiling" not in example:
                raise _Usage(f"{path}: examples[{i}] needs a 'tiling' entry")
            name = str(example.get("name", f"example {i}"))
            out.append(_Source(name, PortProgram.from_json(example["tiling"]),
                               example.get("indices")))
        return out
    return [_Source(path.name, PortProgram.from_json(data))]


def _from_cpp(path: Path, text: str, defines: dict[str, str],
              skipped: list[str]) -> list[_Source]:
    """A graph header's ports (``Class::mtx.in[i]``, ``k1.out[0]``, ...), or one bare port
    program; ``skipped`` receives what could not be read, one line each."""
    header = read_header_file(path, defines, text)
    if not header.ports and not header.skipped:
        if header.buffers:
            raise _Usage(f"{path}: its shared buffers have no read_access or write_access")
        return [_Source(path.name, parse_port_program(text, defines))]
    skipped.extend(str(s) for s in header.skipped)
    if not header.ports:
        more = f" (and {len(skipped) - 1} more)" if len(skipped) > 1 else ""
        raise _Usage(f"{path.name}: no port could be read: {skipped[0]}{more}")
    return [_Source(p.name, p.program, dtype=p.dtype, direction=p.direction, kind=p.kind)
            for p in header.ports]


def _one(args: argparse.Namespace, sources: list[_Source]) -> _Source:
    if len(sources) > 1:
        names = ", ".join(src.name for src in sources)
        raise _Usage(f"{args.file} holds {len(sources)} port programs ({names}); "
                     f"aiedma {args.command} takes one: choose with --port")
    return sources[0]


def _define(text: str) -> tuple[str, str]:
    """``-D NAME=VALUE`` (VALUE may be an expression; ``-D NAME`` means 1)."""
    name, _, value = text.partition("=")
    if not name.isidentifier():
        raise ValueError(text)
    return name, value or "1"


_define.__name__ = "NAME=VALUE"  # argparse quotes it in "invalid NAME=VALUE value"


def _walk(args: argparse.Namespace) -> int:
    if mlir_commands.is_mlir(args.file):
        return mlir_commands.walk(args, read_source_text(Path(args.file)))
    pattern = mlir_commands.access_pattern(read_source_text(Path(args.file)))
    if pattern is not None:
        return mlir_commands.walk_pattern(args, pattern)
    if (args.format == "npy") != (args.output is not None):
        raise _Usage("--format npy and --output FILE.npy go together")
    sources = _load(args)
    programs = []
    for src in sources:   # every port checked before anything is printed
        program = src.program
        if args.buffer_dimension:
            program = program.resolve(args.buffer_dimension)
        if args.kind or args.direction or args.dtype or src.kind:
            try:
                program.validate(args.kind or src.kind or "memtile",
                                 args.direction or src.direction or "read",
                                 args.dtype or src.dtype or "int32")
            except AiedmaError as error:
                raise _Usage(f"{src.name}{src.context()}: {error}") from None
        if program.stream_length() > MAX_WALK_ELEMENTS:
            raise _Usage(f"{src.name}: stream of {program.stream_length()} elements; walk "
                         f"computes at most {MAX_WALK_ELEMENTS} per port (bd lowers any size)")
        programs.append((src, program))
    mismatches = 0
    arrays: dict[str, np.ndarray] = {}
    if args.format == "json" and len(programs) > 1:
        sys.stdout.write("[")
    for k, (src, program) in enumerate(programs):
        name, expected = src.name, src.expected
        stream = program.indices()
        verdict = None
        if args.check and expected is not None:
            verdict = bool(np.array_equal(stream, np.asarray(expected, dtype=np.int64)))
            mismatches += not verdict
        if args.format == "json":
            extra = {} if src.kind is None else {"kind": src.kind, "direction": src.direction,
                                                 "dtype": src.dtype}
            if verdict is not None:
                extra["matches"] = verdict
            _write_json_port(name, stream, extra, first=k == 0)
            continue
        if args.format == "npy":
            arrays[name] = stream
            continue
        zeros = int(np.count_nonzero(stream < 0))
        print(f"{name}{src.context()}: {stream.size} elements, {zeros} zero")
        print(f"  {format_runs(stream)}")
        if verdict is not None:
            print("  matches the expected stream" if verdict
                  else "  DIFFERS from the expected stream")
    if args.format == "json":
        print("]" if len(programs) > 1 else "")
    elif args.format == "npy":
        _save_npy(args.output, arrays)
    elif args.check:
        checked = sum(src.expected is not None for src in sources)
        print(f"{checked - mismatches} passed, {mismatches} failed")
    return EXIT_MISMATCH if mismatches else 0


def _write_json_port(name: str, stream: np.ndarray, extra: dict[str, Any], first: bool) -> None:
    """One port's ``{"name", "indices", ...}`` on stdout, the indices in chunks (a stream
    of 10^8 elements never becomes one Python list)."""
    out = sys.stdout
    out.write(("" if first else ", ") + '{"name": ' + json.dumps(name) + ', "indices": [')
    for start in range(0, stream.size, 1 << 16):
        chunk = stream[start:start + (1 << 16)].tolist()
        out.write(("" if start == 0 else ", ") + ", ".join(map(str, chunk)))
    out.write("]" + "".join(f", {json.dumps(k)}: {json.dumps(v)}" for k, v in extra.items())
              + "}")


def _save_npy(path: str, arrays: dict[str, np.ndarray]) -> None:
    """One program: a .npy of its indices; several: a .npz keyed by program name."""
    try:
        if len(arrays) == 1:
            np.save(path, next(iter(arrays.values())))
        else:
            np.savez(path, **arrays)
    except OSError as error:
        raise _Usage(f"{path}: {error.strerror or error}") from None
    print(f"{len(arrays)} stream{'s' * (len(arrays) > 1)} -> {path}")


def _bd_table(lowered: LoweredProgram) -> list[str]:
    """Fields as rows (those that differ from the default in some BD), BDs as columns."""
    bds = [b.bd for b in lowered.bds]
    names = [f.name for f in FIELDS[lowered.kind]
             if any(name_value != f.default for name_value in (getattr(bd, f.name) for bd in bds))]
    width = max(len(n) for n in [*names, "field"]) + 2
    lines = ["field".ljust(width) + "".join(f"{'BD ' + str(b.bd_id):>8}" for b in lowered.bds)]
    lines += [name.ljust(width) + "".join(f"{getattr(bd, name):>8}" for bd in bds)
              for name in names]
    for b in lowered.bds:
        words = [f"0x{w:08X}" for w in b.bd.encode()]
        head = f"BD {b.bd_id} words: "
        lines.append(head + " ".join(words[:6]))
        if words[6:]:
            lines.append(" " * len(head) + " ".join(words[6:]))
    return lines


def _bd(args: argparse.Namespace) -> int:
    if mlir_commands.is_mlir(args.file):
        return mlir_commands.bd(args, read_source_text(Path(args.file)))
    pattern = mlir_commands.access_pattern(read_source_text(Path(args.file)))
    if pattern is not None:
        return mlir_commands.bd_pattern(args, pattern)
    src = _one(args, _load(args))
    name = src.name
    kind = args.kind or src.kind
    if kind is None:
        raise _Usage("the following arguments are required: --kind (a C++ port brings its "
                     "own: memtile, tile or shim)")
    direction = args.direction or src.direction or "read"
    dtype = args.dtype or src.dtype or "int32"
    lowered = lower(src.program, kind, direction, dtype, args.base_address,
                    first_bd=args.first_bd)
    compiler = compiler_bd_count(src.program, kind)
    if args.format == "writes":
        try:
            writes = lowered_writes(lowered, args.channel)
        except AiedmaError as error:
            raise _Usage(f"--format writes: {error}") from None
        document = writes_document(lowered.kind, writes)
        pairs = ",\n".join(f"  {json.dumps(pair)}" for pair in document.pop("writes"))
        print(json.dumps(document)[:-1] + f', "writes": [\n{pairs}\n]}}')
        return 0
    if args.format == "mlir":
        print(mlir_commands.lowered_text(lowered, name, args.channel), end="")
        return 0
    if args.format == "tap":
        print(mlir_commands.lowered_taps_text(lowered, name), end="")
        return 0
    if args.format == "json":
        json.dump({"kind": lowered.kind, "task": {"start_bd": lowered.task.start_bd,
                                                  "repeat_count": lowered.task.repeat_count,
                                                  "word": lowered.task.encode()},
                   "aiecompiler": {"per_phase": compiler.per_phase, "total": compiler.total,
                                   "phases": PHASES, "available": compiler.available},
                   "bds": [{"bd_id": b.bd_id, "entry": b.entry, "fields": b.bd.fields(),
                            "words": b.bd.encode()} for b in lowered.bds]}, sys.stdout)
        print()
        return 0
    count = len(lowered.bds)
    print(f"{name}: {kind} {direction} {dtype}, {count} BD{'s' * (count > 1)}; "
          f"task: start BD {lowered.task.start_bd}, repeat {lowered.task.repeat_count} "
          f"(word 0x{lowered.task.encode():08X})")
    print(f"aiecompiler (tutorial's rule): {compiler.per_phase} "
          f"BD{'s' * (compiler.per_phase > 1)} per phase, {compiler.total} for {PHASES} "
          f"phases; a {DMA_KINDS[kind].adjective} channel has {compiler.available}")
    print("\n".join(_bd_table(lowered)))
    warning = compiler.warning()
    if warning:
        print(f"warning: {warning}", file=sys.stderr)
    return 0


def _draw(args: argparse.Namespace) -> int:
    """One picture, or with several ports and no --port one picture per port."""
    from .draw import draw, port_paths  # Pillow is imported only when drawing

    sources = _load(args)
    paths = ([Path(args.output)] if len(sources) == 1
             else port_paths(args.output, [src.name for src in sources]))
    for src, path in zip(sources, paths, strict=True):
        program = src.program
        if args.buffer_dimension:
            program = program.resolve(args.buffer_dimension)
        try:
            written = draw(program, path, animate=args.animate)
        except OSError as error:
            raise _Usage(f"{path}: {error.strerror or error}") from None
        except AiedmaError as error:
            if len(sources) == 1:
                raise
            raise _Usage(f"{src.name}: {error}") from None
        tiles = sum(entry.stream_length() // entry.tile_size() for entry in program)
        print(f"{src.name}: {program.stream_length()} elements, {tiles} tiles -> {written}")
    return 0


def _sim(args: argparse.Namespace) -> int:
    if args.file and args.graph:
        raise _Usage(f"{args.file} and --graph={args.graph}: give a file or a graph, not both")
    if args.file:
        return _sim_file(args)
    if args.graph:
        return _sim_graph(args)
    if args.rtl:
        raise _Usage(f"--rtl={args.rtl}: runs a graph's memory-tile channels as RTL; "
                     "give the graph with --graph")
    if args.exact:
        raise _Usage("--exact: steps every cycle of a graph's system model; give the graph "
                     "with --graph")
    from .tb.regress import blocks  # Amaranth and the simulators load only when asked for

    argv = ["--sim", args.sim, "--bds", str(args.bds), "--seed", str(args.seed),
            "--kinds", *args.kinds] + (["--waves"] if args.waves else [])
    return blocks.main(argv)


def _sim_file(args: argparse.Namespace) -> int:
    """Every port of a file lowered and its BDs run through the address generator RTL."""
    from .model.bd.task import TaskWalk
    from .tb.block.harness import (
        check_addrgen,  # Amaranth and the simulators load only when asked for
    )

    if len(args.kinds) != 1 and any(src.kind is None for src in _load(args)):
        raise _Usage("--kinds: a JSON tiling has no DMA of its own; give exactly one kind")
    failed = 0
    for src in _load(args):
        kind = src.kind or args.kinds[0]
        direction, dtype = src.direction or "read", src.dtype or "int32"
        lowered = lower(src.program, kind, direction, dtype)
        walk = TaskWalk(kind, dict(lowered.table()), lowered.task)
        loads = []
        while not walk.done:
            loads.append(walk.next()[1])
        result = check_addrgen(kind, loads, simulator=args.sim)   # raises at a mismatch
        # The RTL's beats are the port's stream too (the lowering, checked end to end).
        words = np.array([-1 if zero else address for address, zero, _ in result.beats])
        same = np.array_equal(words, lowered.word_stream())
        failed += not same
        print(f"{src.name}{src.context()}: {len(lowered.bds)} BDs, {len(loads)} loads, "
              f"{result.summary.words} words, {result.summary.cycles} cycles on {args.sim}, "
              f"0 mismatches, " + ("the port's stream" if same
                                   else "DIFFERS from the port's stream"))
    return EXIT_MISMATCH if failed else 0


def _sim_graph(args: argparse.Namespace) -> int:
    from .flows import graph_examples  # loads the RTL runner only with --rtl

    for option in ("buffers", "iterations"):
        if getattr(args, option) < 1:
            raise _Usage(f"--{option}={getattr(args, option)}: must be at least 1")
    if args.buffers > 2:
        raise _Usage(f"--buffers={args.buffers}: a shared buffer has 1 or 2 (ping-pong)")
    model = graph_examples.run_tutorial(args.buffers, args.iterations, exact=args.exact)
    print(f"tiling tutorial graph, num_buffers={args.buffers}, {args.iterations} iterations"
          f"{', every cycle stepped' if args.exact else ''}: "
          "k3 and k4 received exactly the elements their tilings walk")
    print(model.report.text())
    if not args.rtl:
        return 0
    line, same = graph_examples.compare_tutorial(args.buffers, args.iterations, args.rtl, model)
    print(line)
    return 0 if same else 1


def _replay(args: argparse.Namespace) -> int:
    path = Path(args.file)
    try:
        document = json.loads(read_source_text(path))
    except OSError as error:
        raise _Usage(f"{path}: {error.strerror}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise _Usage(f"{path}: not JSON ({error})") from None
    kind, writes = read_writes_document(document)
    if args.kind and args.kind != kind:
        raise _Usage(f"--kind={args.kind}: {path} programs a {kind} DMA")
    from .tb.system.dma_check import run_dma  # Amaranth loads only when asked for
    from .tb.system.random_programs import SHIM_MEMORY_WORDS

    # The memory the DMA's BDs address: a shim's external memory starts at word 0.
    own = (range(SHIM_MEMORY_WORDS) if kind == "shim"
           else DMA_KINDS[kind].memory_window("own"))
    before = np.arange(own.start, own.stop)  # each word holds its own address
    inputs = {name: np.arange(count) for name, count in channel_words(kind, writes).items()
              if name.startswith("s2mm")}
    result = run_dma(kind, writes, before, inputs, simulator=args.rtl)
    if args.format == "json":
        json.dump({"kind": kind, "cycles": result.cycles,
                   "outputs": {name: [[data, int(last)] for data, last in words]
                               for name, words in result.outputs.items()},
                   "changed": (own.start + np.flatnonzero(result.memory != before)).tolist(),
                   "tokens": result.tokens, "locks": result.locks}, sys.stdout)
        print()
        return 0
    where = f"RTL on {args.rtl}, every cycle compared with the model" if args.rtl else "model"
    print(f"{path.name}: {kind} DMA, {len(writes)} writes, {result.cycles} cycles ({where})")
    for name, words in result.outputs.items():
        data = np.array([data for data, _ in words], dtype=np.int64)
        lasts = sum(last for _, last in words)
        print(f"{name}: {len(words)} words, {lasts} with TLAST: {format_runs(data)}")
    changed = own.start + np.flatnonzero(result.memory != before)
    for name, count in ((name, len(words)) for name, words in inputs.items()):
        print(f"{name}: received {count} words; memory words changed: "
              f"{format_runs(changed) if changed.size else 'none'}")
    for name, cycles in result.tokens.items():
        if cycles:
            print(f"{name}: completion tokens at cycles {', '.join(map(str, cycles))}")
    held = {lock: value for lock, value in enumerate(result.locks) if value}
    print("locks after the run: " + (", ".join(f"{k}={v}" for k, v in held.items())
                                     or "all 0"))
    return 0


def _run(args: argparse.Namespace) -> int:
    suffix = Path(args.file).suffix.lower()
    if suffix in CPP_SUFFIXES:
        return graph_run.run(args, read_source_text(Path(args.file)))
    if not mlir_commands.is_mlir(args.file):
        raise _Usage(f"{args.file}: aiedma run takes an mlir-aie file (.mlir) or a graph "
                     f"header ({', '.join(sorted(CPP_SUFFIXES))})")
    for option, default in (("kernel", None), ("rtl", None), ("iterations", 1),
                            ("define", None)):
        if getattr(args, option) != default:
            raise _Usage(f"--{option}: for a graph header, not an .mlir file")
    return mlir_commands.run(args, read_source_text(Path(args.file)))


def _verilog(args: argparse.Namespace) -> int:
    from .flows import verilog as verilog_export

    return verilog_export.run(args, args.parser)


def _word(text: str) -> int:
    """A register word: hex (0x...) or decimal; argparse turns a ValueError into a usage error."""
    return int(text, 0)


_word.__name__ = "word (hex 0x... or decimal)"  # argparse quotes it: "invalid word ... value"


def _decode(args: argparse.Namespace) -> int:
    if len(args.words) != WORDS[args.kind]:
        raise _Usage(f"a {args.kind} BD has {WORDS[args.kind]} register words (6 for a core "
                     f"tile, 8 for a memory tile or shim), got {len(args.words)}")
    image = decode_image(args.kind, args.words)
    width = max(len(f.name) for f in FIELDS[args.kind]) + 2
    for problem in image.problems:   # reserved bits belong to a word, not a field
        if str(problem).startswith("words["):
            print(f"! {problem}")
    for f in FIELDS[args.kind]:
        value = image.values[f.name]
        where = " ".join(str(sl) for sl in f.slices)
        mark = "" if value == f.default else "  *"
        print(f"{f.name.ljust(width)}{value:>12}   {where}{mark}")
        for problem in image.problems_of(f.name):
            print(f"{'':{width}}! {str(problem).split(': ', 1)[1]}")
    print("(* differs from the default)")
    for note in image.notes:
        print(f"~ {note}")
    if image.problems:
        print(f"! {len(image.problems)} broken rule(s): not a BD the hardware would run")
        return EXIT_BROKEN_RULES
    return 0


def _int_list(text: str) -> list[int]:
    """``"10,6"`` -> ``[10, 6]`` (argparse reports a ValueError as a usage error)."""
    return [int(part) for part in text.split(",")]


def _input_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--port", metavar="BUF.out[J]",
                        help="the port of a C++ graph header to use, e.g. mtx.out[0] or "
                             "TestCase1::mtxin.out[0] (without the listing, every port "
                             "is read)")
    parser.add_argument("-D", "--define", type=_define, action="append", metavar="NAME=VALUE",
                        help="a name for the C++ text, as the compiler's -D (repeatable)")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="aiedma",
        description="Golden model and co-simulation of the AMD AIE-ML DMA.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, summary: str, description: str, example: str,
                run) -> argparse.ArgumentParser:
        """A subcommand whose --help ends with a worked example."""
        parser = sub.add_parser(name, help=summary, description=description, epilog=example,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
        parser.set_defaults(run=run)
        return parser

    walk = command(
        "walk", "print the stream a tiling (or port program) produces",
        "Print the element stream of tiling_parameters, as run-length text "
        "(Z = zero padding) or JSON.", WALK_EXAMPLE, _walk,
    )
    walk.add_argument("file", help="JSON or C++ file (see below)")
    _input_options(walk)
    walk.add_argument("--format", choices=("runs", "json", "npy"), default="runs",
                      help="run-length text, JSON, or NumPy (with --output; several "
                           "programs go into one .npz)")
    walk.add_argument("-o", "--output", metavar="FILE.npy", help="where --format npy writes")
    walk.add_argument("--check", action="store_true",
                      help="compare examples with their expected indices; exit 1 on a difference")
    walk.add_argument("--buffer-dimension", type=_int_list, metavar="N,N,...",
                      help="buffer shape for entries that leave buffer_dimension empty")
    walk.add_argument("--kind", choices=KINDS, help="validate for this DMA kind")
    walk.add_argument("--direction", choices=ACCESS_NAMES, help="validate for this direction")
    walk.add_argument("--dtype", help="validate for this adf element type (e.g. int16)")

    bd = command(
        "bd", "lower a port program to BDs and print them",
        "Lower tiling_parameters (one port program) to buffer descriptors and a "
        "task, and print the BDs as a field table and as register words.", BD_EXAMPLE, _bd,
    )
    bd.add_argument("file", help="JSON (a tiling dict or a list) or C++ (a graph header "
                                 "or a tiling)")
    _input_options(bd)
    bd.add_argument("--kind", choices=KINDS,
                    help="the DMA (default: a C++ port's: memtile for a shared buffer, tile "
                         "for a kernel, shim for an external buffer)")
    bd.add_argument("--direction", choices=ACCESS_NAMES,
                    help="default: the C++ port's (out: read, in: write), else read")
    bd.add_argument("--dtype", choices=sorted(ELEMENT_BITS),
                    help="default: the C++ shared buffer's type, else int32")
    bd.add_argument("--base-address", type=_word, default=0,
                    help="word address of the buffer's element 0 (default 0)")
    bd.add_argument("--first-bd", type=int, default=0, help="number of the first BD (default 0)")
    bd.add_argument("--format", choices=("table", "json", "writes", "mlir", "tap"),
                    default="table",
                    help="writes: the register writes that run it (JSON, for aiedma replay); "
                         "mlir: the BDs as mlir-aie aie.dma_bd ops in a DMA region; tap: "
                         "IRON / taplib access patterns in elements, one per BD (JSON, "
                         "aiedma walk reads it back; no zero padding)")
    bd.add_argument("--channel", type=int, default=0,
                    help="with --format writes: the channel whose start queue takes the "
                         "task (default 0)")

    decode = command(
        "decode", "print the fields of a BD's register words",
        "Decode 6 (core tile) or 8 (memory tile, shim) BD register words. Every field is "
        "shown, even in an image that breaks a rule (a dump from a hung device); each "
        "broken rule is marked with '!' under its field, and the exit status is then 1.",
        DECODE_EXAMPLE,
        _decode,
    )
    decode.add_argument("--kind", choices=KINDS, required=True)
    decode.add_argument("words", type=_word, nargs="+", metavar="WORD")

    draw = command(
        "draw", "draw a port program's walk (PNG, SVG, animated GIF)",
        "Draw the buffer grid as AMD's tiling tutorial does: tiles framed and numbered in "
        "traversal order, the stream order as colour (and numbers on small buffers), zero "
        "padding grey, the boundary dashed red; 3-D and 4-D buffers as planes.",
        DRAW_EXAMPLE, _draw,
    )
    draw.add_argument("file", help="JSON (a tiling dict or a list) or C++ (a graph header "
                                   "or a tiling)")
    _input_options(draw)
    draw.add_argument("-o", "--output", required=True,
                      help="picture file (.png, .svg, .gif); with several ports, one "
                           "file per port named OUTSTEM_PORT.SUFFIX")
    draw.add_argument("--animate", choices=("tile", "element"),
                      help="frames tile by tile or element by element (.gif)")
    draw.add_argument("--buffer-dimension", type=_int_list, metavar="N,N,...",
                      help="buffer shape for entries that leave buffer_dimension empty")

    sim = command(
        "sim", "co-simulate the RTL against the golden model (what make sim runs)",
        "Run the co-simulation regression: random legal BDs, backpressure, the lowered "
        "worked examples and the MM2S channel, every cycle checked against the model.",
        SIM_EXAMPLE, _sim,
    )
    sim.add_argument("file", nargs="?",
                     help="a C++ graph header or JSON tiling: co-simulate its ports' BDs")
    _input_options(sim)
    sim.add_argument("--sim", choices=("amaranth", "verilator", "icarus"), default="amaranth")
    sim.add_argument("--bds", type=int, default=1000, help="random BDs per kind (default 1000)")
    sim.add_argument("--seed", type=int, default=1)
    sim.add_argument("--kinds", nargs="+", choices=KINDS, default=list(KINDS))
    sim.add_argument("--waves", action="store_true", help="write waveforms into build/")
    sim.add_argument("--graph", choices=("tutorial",),
                     help="run this example graph in the system model instead")
    sim.add_argument("--buffers", type=int, default=1,
                     help="the graph's num_buffers: 1, or 2 for ping-pong (default 1)")
    sim.add_argument("--iterations", type=int, default=3, help="graph iterations (default 3)")
    sim.add_argument("--rtl", choices=("amaranth", "verilator"),
                     help="with --graph: run every memory-tile channel as RTL on this "
                          "simulator too, compared with the model on every cycle")
    sim.add_argument("--exact", action="store_true",
                     help="with --graph: step the system model every cycle (no fast path; "
                          "same outputs and report)")

    replay = command(
        "replay", "run a DMA's register writes (BD words, task pushes, lock values)",
        "Program a tile or memory-tile DMA with the register writes of a JSON file (what "
        "aiedma bd --format writes prints) and run it: the model alone, or its channels "
        "as RTL compared with the model on every cycle. Before the run every word of the "
        "tile's memory holds its own address; an S2MM channel with tasks receives 0, 1, "
        "2, ...",
        REPLAY_EXAMPLE, _replay,
    )
    replay.add_argument("file", help="JSON: {\"kind\": ..., \"writes\": [[address, value], ...]}")
    replay.add_argument("--kind", choices=KINDS, help="check the file programs this kind")
    replay.add_argument("--rtl", choices=("amaranth", "verilator"),
                        help="run the channels as RTL on this simulator, checked every cycle")
    replay.add_argument("--format", choices=("text", "json"), default="text")

    run = command(
        "run", "run an mlir-aie design or a graph header on the system model",
        "Run every DMA chain, task and runtime transfer of an mlir-aie file on the system "
        "model: locks at their init values, the host buffers the shim reads filled with a "
        "ramp (or --input). Prints the host buffers and the report; on a hang, every "
        "waiting channel with its BD, the lock, its value and what it wants (status 1).",
        RUN_EXAMPLE, _run,
    )
    run.add_argument("file", help="an mlir-aie file (.mlir) or a graph header (.h, .cpp)")
    run.add_argument("--input", action="append", metavar="NAME=FILE.npy",
                     help="a host buffer's or graph input's data (repeatable; default: a "
                          "ramp)")
    run.add_argument("--kernel", action="append", metavar="NAME=MODULE:FUNCTION",
                     help="a graph header's kernel as a Python function (repeatable; "
                          "default: a copy)")
    run.add_argument("--iterations", type=int, default=1,
                     help="graph iterations of a header (default 1)")
    run.add_argument("--rtl", choices=("amaranth", "verilator"),
                     help="a header's memory-tile channels as RTL too, compared every cycle")
    run.add_argument("-D", "--define", type=_define, action="append", metavar="NAME=VALUE",
                     help="a name for the C++ text, as the compiler's -D (repeatable)")
    run.add_argument("--max-cycles", type=int, default=10_000_000)

    verilog = command(
        "verilog", "export the RTL to Verilog and lint it (what make verilog runs)",
        "Write every exported top into a folder and lint it with Verilator.",
        VERILOG_EXAMPLE, _verilog,
    )
    add_verilog_options(verilog)
    verilog.set_defaults(parser=verilog)
    return parser


@contextlib.contextmanager
def _model_warnings(command: str) -> Iterator[None]:
    """Print each distinct model warning (input the model runs but cannot vouch for) once,
    as ``aiedma COMMAND: warning: ...`` on stderr, when the command ends."""
    caught: list[warnings.WarningMessage] = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", AiedmaWarning)
            yield
    finally:
        seen = set()
        for warning in caught:
            if not issubclass(warning.category, AiedmaWarning):
                warnings.warn_explicit(warning.message, warning.category,
                                       warning.filename, warning.lineno)
            elif str(warning.message) not in seen:
                seen.add(str(warning.message))
                print(f"aiedma {command}: warning: {warning.message}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``aiedma`` command; returns the exit status."""
    args = _parser().parse_args(argv)
    try:
        with _model_warnings(args.command):
            return args.run(args)
    except (AiedmaError, _Usage) as error:
        print(f"aiedma {args.command}: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        # The reader went away (`aiedma walk ... | head`): stop quietly. Python flushes
        # stdout again at exit, so point it at devnull first (as the signal docs advise).
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    except MemoryError:
        print(f"aiedma {args.command}: error: out of memory (the input asks for more than "
              "this machine has)", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
