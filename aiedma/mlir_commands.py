"""``aiedma walk`` and ``aiedma bd`` of an mlir-aie file (``*.mlir``).

The command line (:mod:`aiedma.cli`) reads the file's text and hands it here when its
name ends in ``.mlir``. ``walk`` prints every chain's stream in words and, per BD, in
elements of its buffer; ``bd`` prints every BD as a field table with its register
words, and under it each hardware rule a BD breaks, naming the field (exit status 1
then, as ``aiedma decode`` does). Constructs that cannot be read are warnings on
standard error with their ``line:column``; the rest is still shown.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from .model import AiedmaError, Task, format_runs
from .model.arch.dtypes import element_bits
from .model.arch.registers import status_text
from .model.bd.fields import FIELDS
from .model.bd.lower import LoweredProgram, word_stream_to_elements
from .model.bd.task import task_stream
from .model.mlir import (
    Access,
    Chain,
    DesignBD,
    MlirDesign,
    MlirError,
    Tile,
    access_fields,
    read_mlir,
)
from .model.mlir.design import HostBuffer, adf_dtype
from .model.mlir.reader import build_bd
from .model.mlir.run import MlirRun, run_design
from .model.mlir.write import lowered_taps, lowered_to_mlir

__all__ = ["MAX_SHOWN_WORDS", "access_pattern", "bd", "bd_pattern", "is_mlir", "load",
           "load_input", "lowered_taps_text", "lowered_text", "pattern_access",
           "pattern_indices", "print_hang", "refuse_options", "run", "walk", "walk_pattern"]

MAX_SHOWN_WORDS = 1 << 22
"""Most words of one chain ``walk`` computes (a larger one is named, not walked)."""

EXIT_BROKEN_RULES = 1
"""A BD breaks a hardware rule: everything is shown, then status 1."""

EXIT_HANG = 1
"""``aiedma run`` of a design that hangs: every waiting channel is shown, then status 1."""


def is_mlir(path: str) -> bool:
    """True for a file the mlir-aie reader takes (``*.mlir``)."""
    return Path(path).suffix.lower() == ".mlir"


def load(command: str, path: str, text: str) -> MlirDesign:
    """The design in ``text``; each construct not read is a warning on standard error.

    Raises
    ------
    MlirError
        If nothing the commands show could be read.
    """
    design = read_mlir(text)
    name = Path(path).name
    for warning in design.warnings:
        print(f"aiedma {command}: warning: {name}:{warning}", file=sys.stderr)
    if not design.bds:
        skipped = sum("not read" in str(warning) for warning in design.warnings)
        why = f" ({skipped} construct(s) not read)" if skipped else ""
        raise MlirError(f"{name}: no BD could be read{why}; give an mlir-aie file with "
                        "aie.dma_bd, dma_memcpy_nd or writebd operations")
    return design


WALK_OPTIONS = {"format": "runs", "output": None, "check": False, "buffer_dimension": None,
                "kind": None, "direction": None, "dtype": None, "port": None, "define": None}
"""walk's options and their defaults: an .mlir file brings its own kinds and shapes."""

BD_OPTIONS = {"format": "table", "kind": None, "direction": None, "dtype": None,
              "base_address": 0, "first_bd": 0, "port": None, "define": None, "channel": 0}
"""bd's options and their defaults: an .mlir file's BDs are placed and numbered by it."""


def refuse_options(args: argparse.Namespace, defaults: dict[str, object]) -> None:
    """An option that means nothing for an .mlir file is an error, not ignored."""
    for name, default in defaults.items():
        value = getattr(args, name, default)
        if value != default:
            option = "--" + name.replace("_", "-")
            raise MlirError(f"{option}={value}: not for an .mlir file (its BDs, tiles, "
                            "buffers and numbers come from the file)")


def _summary(path: str, design: MlirDesign) -> str:
    return (f"{Path(path).name}: {design.device or 'no device'}, {len(design.bds)} "
            f"BD{'s' * (len(design.bds) != 1)}, {len(design.chains)} "
            f"chain{'s' * (len(design.chains) != 1)}")


# --- walk ------------------------------------------------------------------------------

def walk(args: argparse.Namespace, text: str) -> int:
    """Every chain's word stream, and each BD's elements (see the module)."""
    refuse_options(args, WALK_OPTIONS)
    design = load("walk", args.file, text)
    print(_summary(args.file, design))
    shown: set[int] = set()
    for chain in design.chains:
        print(f"{chain.title()}: BD{'s' * (len(chain.bds) > 1)} "
              f"{', '.join(str(b.bd_id) for b in chain.bds)}"
              + (f", repeat {chain.repeat}" if chain.repeat > 1 else "")
              + ("; then again from the first, forever" if chain.loops else ""))
        for line in _chain_stream(chain):
            print(f"  {line}")
        for design_bd in chain.bds:
            shown.add(id(design_bd))
            for line in _bd_stream(design_bd):
                print(f"  {line}")
    loose = [b for b in design.bds if id(b) not in shown]
    if loose:
        print("BDs no chain starts:")
    for design_bd in loose:
        for line in _bd_stream(design_bd):
            print(f"  {line}")
    return 0


def _chain_stream(chain: Chain) -> list[str]:
    """The words of a whole chain run (each BD once if the chain loops)."""
    if any(b.bd is None for b in chain.bds) or not chain.bds:
        return ["words: not walked (a BD breaks a rule; see aiedma bd)"]
    total = sum(b.bd.buffer_length for b in chain.bds) * (1 if chain.loops else chain.repeat)
    if total > MAX_SHOWN_WORDS:
        return [f"words: {total}, more than walk shows ({MAX_SHOWN_WORDS})"]
    try:
        if chain.loops:
            words = np.concatenate([b.bd.stream() for b in chain.bds])
        else:
            table = {b.bd_id: b.bd for b in chain.bds}
            words = task_stream(chain.tile.kind, table,
                                Task(chain.bds[0].bd_id, chain.repeat))[0]
    except AiedmaError as error:
        return [f"words: not walked: {error}"]
    zeros = int(np.count_nonzero(words < 0))
    return [f"words: {words.size}, {zeros} zero: {format_runs(words)}"]


def _bd_stream(design_bd: DesignBD) -> list[str]:
    """One execution of a BD in elements of its buffer."""
    buffer = design_bd.buffer
    head = f"BD {design_bd.bd_id} ({design_bd.origin} at {design_bd.where()})"
    if design_bd.bd is None:
        return [f"{head}: breaks {len(design_bd.problems)} rule(s); see aiedma bd"]
    if design_bd.bd.buffer_length > MAX_SHOWN_WORDS:
        return [f"{head}: {design_bd.bd.buffer_length} words, more than walk shows"]
    if buffer is None or design_bd.buffer_word is None:
        return [f"{head}: words {format_runs(design_bd.bd.stream())}"]
    bits = buffer.bits
    try:
        elements = word_stream_to_elements(design_bd.bd.stream(), design_bd.buffer_word,
                                           adf_dtype(bits))
    except AiedmaError as error:
        return [f"{head}: {error}"]
    zeros = int(np.count_nonzero(elements < 0))
    return [f"{head} {buffer.name} ({bits}-bit): {elements.size} elements, {zeros} zero",
            f"  {format_runs(elements)}"]


# --- bd ----------------------------------------------------------------------------------

def bd(args: argparse.Namespace, text: str) -> int:
    """Every BD as fields and register words, with the rules each breaks."""
    refuse_options(args, BD_OPTIONS)
    design = load("bd", args.file, text)
    print(_summary(args.file, design))
    broken = 0
    tiles = list(dict.fromkeys(b.tile for b in design.bds))
    for tile in tiles:
        bds = [b for b in design.bds if b.tile == tile]
        print(f"{tile} {tile.kind}")
        print("\n".join(f"  {line}" for line in _field_table(tile.kind, bds)))
        for design_bd in bds:
            for problem in design_bd.problems:
                print(f"  ! BD {design_bd.bd_id} ({design_bd.origin} at "
                      f"{design_bd.where()}): {problem}")
                broken += 1
    for chain in design.chains:
        print(f"{chain.title()}: starts BD {chain.bds[0].bd_id if chain.bds else '-'}, "
              f"repeat {chain.repeat}" + (", token" if chain.issue_token else ""))
    if broken:
        print(f"! {broken} broken rule(s): not BDs the hardware would run as written")
        return EXIT_BROKEN_RULES
    return 0


def _field_table(kind: str, bds: list[DesignBD]) -> list[str]:
    """Fields as rows (those not at their default in some BD), BDs as columns, then words."""
    values = [b.bd.fields() if b.bd is not None else b.fields for b in bds]
    names = [f.name for f in FIELDS[kind]
             if any(v.get(f.name, f.default) != f.default for v in values)]
    extra = sorted({n for v in values for n in v} - {f.name for f in FIELDS[kind]})
    width = max(len(n) for n in [*names, *extra, "field"]) + 2
    lines = ["field".ljust(width) + "".join(f"{'BD ' + str(b.bd_id):>9}" for b in bds)]
    for name in [*names, *extra]:
        lines.append(name.ljust(width) + "".join(_cell(v.get(name)) for v in values))
    for design_bd in bds:
        head = f"BD {design_bd.bd_id} words: "
        if design_bd.bd is None:
            lines.append(head + "none (a field breaks a rule, see below)")
            continue
        words = [f"0x{w:08X}" for w in design_bd.bd.encode()]
        lines += _wrapped(head, words)
    return lines


def _cell(value: int | None) -> str:
    return f"{'-' if value is None else value:>9}"


def _wrapped(head: str, words: Iterable[str]) -> list[str]:
    words = list(words)
    lines = [head + " ".join(words[:6])]
    if words[6:]:
        lines.append(" " * len(head) + " ".join(words[6:]))
    return lines


# --- run ----------------------------------------------------------------------------------

def run(args: argparse.Namespace, text: str) -> int:
    """Run the design's DMA program on the system model; a hang names every waiting channel."""
    design = load("run", args.file, text)
    inputs = dict(_input(design, item) for item in args.input or [])
    result = run_design(design, inputs, args.max_cycles)
    name = Path(args.file).name
    cycles = result.report.cycles
    if result.hang is None:
        print(f"{name}: {design.device}, system model, {cycles} cycles: every task done")
        if not any(result.report.words.values()):
            print("note: no word moved: the run ends when every task that ends is done, "
                  "and none was started (the device's chains that loop for ever only wait)")
    else:
        print_hang(f"{name}: {design.device}", result.hang, result.unfinished,
                   lambda stall: _lock_name(design, stall))
        for note in _taskless_ends(design, result.hang.waits):
            print(f"  note: {note}")
    for host in design.host:
        role = "output" if host.name in result.written else "input"
        print(f"{host.name} ({'x'.join(map(str, host.shape))} x {host.element}, {role}): "
              f"{_host_text(host, result)}")
    print(result.report.text())
    return EXIT_HANG if result.hang is not None else 0


def _channel_name(tile, direction: str, channel: int) -> str:
    return f"{tile.kind}({tile.column},{tile.row}).{direction}{channel}"


def _taskless_ends(design: MlirDesign, waits: dict) -> list[str]:
    """For each channel waiting on its stream, the channel at the stream's other end
    when nothing in the design gives it a task (a program the reader left out, or one
    never written)."""
    programmed = {_channel_name(c.tile, c.direction, c.channel) for c in design.chains}
    notes = []
    for flow in design.flows:
        source = _channel_name(flow.source, "mm2s", flow.source_channel)
        dest = _channel_name(flow.dest, "s2mm", flow.dest_channel)
        for waiting, cause, other in ((source, "backpressure", dest),
                                      (dest, "empty", source)):
            stall = waits.get(waiting)
            if stall is not None and stall.cause == cause and other not in programmed:
                notes.append(f"{other}, the other end of {waiting}'s stream, has no task "
                             "in the design")
    return notes


def print_hang(head: str, hang, unfinished: list[str],
               lock_name=lambda stall: "") -> None:
    """The hang lines ``aiedma run`` prints for an .mlir design and a graph header alike:
    the cycle, what was not done, then every waiting agent with its stall and, for a DMA
    channel, what its status register reads (AM025's DMA_*_Status, as on hardware)."""
    print(f"{head}, system model: HANGS at cycle {hang.cycle}; "
          f"not done: {', '.join(unfinished)}; every waiting channel:")
    for agent, stall in hang.waits.items():
        print(f"  {agent}: {stall}{lock_name(stall)}")
        if agent in hang.status:
            print(f"    status register {status_text(hang.status[agent])}")


def load_input(item: str, names: list[str], error: type[Exception],
               lacks: str) -> tuple[str, np.ndarray]:
    """``--input NAME=FILE.npy``: the name and the array, for ``aiedma run`` of a design
    or of a graph header.

    Raises
    ------
    error
        Naming the option: a NAME not among ``names`` (``lacks`` says whose, as "the
        graph has no input"), or a file that is not a NumPy ``.npy`` file.
    """
    name, _, path = item.partition("=")
    if name not in names:
        raise error(f"--input={item}: {lacks} {name!r} (it has {', '.join(names) or 'none'})")
    try:
        return name, np.load(path, allow_pickle=False)
    except (OSError, ValueError) as problem:
        raise error(f"--input={item}: not a NumPy .npy file ({problem})") from None


def _input(design: MlirDesign, item: str) -> tuple[str, np.ndarray]:
    """``--input NAME=FILE.npy``: the words of host buffer NAME."""
    name, data = load_input(item, [h.name for h in design.host], MlirError,
                            "the runtime sequence has no argument")
    host = next(h for h in design.host if h.name == name)
    if data.dtype.kind not in "iu" or data.dtype.itemsize * 8 != host.bits:
        raise MlirError(f"--input={item}: {data.dtype} data; {name} holds {host.element}")
    raw = np.ascontiguousarray(data).ravel()
    raw = np.concatenate([raw, np.zeros(-raw.size % max(32 // host.bits, 1), raw.dtype)])
    return name, raw.view(np.uint32)     # little-endian words, as the DMA packs them


def _host_text(host: HostBuffer, result: MlirRun) -> str:
    words = result.host[host.name]
    if host.bits in (8, 16, 32, 64):
        values = words.view(f"uint{host.bits}").astype(np.int64)
    else:
        values = words.astype(np.int64)
    return format_runs(values)


def _lock_name(design: MlirDesign, stall) -> str:
    """`` [%full]``: the design's name of the lock a channel waits on."""
    wait = stall.lock
    if wait is None:
        return ""
    for name, lock in design.locks.items():
        table = f"{lock.tile.kind}({lock.tile.column},{lock.tile.row}) locks"
        if table == wait.table and lock.id == wait.local_id:
            return f" [%{name}, init {lock.init}]"
    return ""


# --- bd --format mlir ---------------------------------------------------------------------

def lowered_text(lowered: LoweredProgram, name: str, channel: int) -> str:
    """A lowered port program as mlir-aie text (``aiedma bd --format mlir``)."""
    elements = lowered.element_stream()
    buffer_elements = int(elements.max()) + 1 if elements.size and elements.max() >= 0 else 1
    return lowered_to_mlir(lowered, name, buffer_elements, channel)


# --- bd --format tap -----------------------------------------------------------------------

def lowered_taps_text(lowered: LoweredProgram, name: str) -> str:
    """A lowered port program as a JSON list of access patterns, one a line.

    Raises
    ------
    MlirError
        Naming the port and every padding field set: a tap has no zero padding.
    """
    try:
        taps = lowered_taps(lowered)
    except MlirError as error:
        raise MlirError(f"{name}: --format tap: {error}") from None
    lines = [json.dumps({"offset": tap.offset, "sizes": list(tap.sizes),
                         "strides": list(tap.strides)}) for tap in taps]
    return "[\n" + ",\n".join(f"  {line}" for line in lines) + "\n]\n"


# --- IRON / taplib access patterns -----------------------------------------------------------

PATTERN_KEYS = {"offset", "sizes", "strides", "tensor_dims"}
"""The keys of an IRON / taplib access pattern in JSON (sizes and strides required)."""


PATTERN_LIMIT = 1 << 40
"""Largest offset, size or stride of an access pattern (far past any DMA's reach)."""


def access_pattern(text: str) -> dict | list[dict] | None:
    """The pattern of a JSON ``{offset, sizes, strides}`` text, or the list of patterns
    of a JSON list of them (what ``aiedma bd --format tap`` prints), else None."""
    try:
        data = json.loads(text)
    except ValueError:
        return None
    items = data if isinstance(data, list) and data else [data]
    if all(isinstance(item, dict) and {"sizes", "strides"} <= set(item) <= PATTERN_KEYS
           for item in items):
        return data
    return None


def pattern_access(data: dict) -> Access:
    """An access pattern's JSON object as an :class:`Access` in elements, checked.

    Raises
    ------
    MlirError
        Naming the entry that is not an integer, a size below 1, or sizes and strides
        of different lengths.
    """
    sizes, strides = data["sizes"], data["strides"]
    offset = data.get("offset", 0)
    numbers = [offset, *sizes, *strides] if isinstance(sizes, list) and isinstance(
        strides, list) else None
    if numbers is None or not all(isinstance(n, int) and not isinstance(n, bool)
                                  for n in numbers):
        raise MlirError("an access pattern's offset is an integer and its sizes and "
                        "strides lists of integers")
    if any(abs(n) >= PATTERN_LIMIT for n in numbers):
        raise MlirError(f"an access pattern's numbers stay below {PATTERN_LIMIT} (2**40) "
                        "elements")
    if len(sizes) != len(strides) or not sizes:
        raise MlirError(f"sizes={sizes}, strides={strides}: one stride per size, at least one")
    if any(s < 1 for s in sizes):
        raise MlirError(f"sizes={sizes}: sizes must be at least 1")
    count = int(np.prod(sizes, dtype=object))
    return Access(offset, count, tuple(sizes), tuple(strides))


def pattern_indices(access: Access) -> np.ndarray:
    """Element indices of an access, outermost dimension slowest (taplib's order)."""
    if access.length > MAX_SHOWN_WORDS:
        raise MlirError(f"the pattern has {access.length} elements; walk shows at most "
                        f"{MAX_SHOWN_WORDS}")
    indices = np.full((), access.offset, dtype=np.int64)
    for size, stride in zip(access.sizes, access.strides, strict=True):
        indices = indices[..., None] + np.arange(size, dtype=np.int64) * stride
    return indices.ravel()


def walk_pattern(args: argparse.Namespace, data: dict | list[dict]) -> int:
    """``aiedma walk tap.json``: the elements an access pattern (or a list) visits."""
    refuse_options(args, {**WALK_OPTIONS, "dtype": None})
    patterns = data if isinstance(data, list) else [data]
    parts = [pattern_indices(pattern_access(pattern)) for pattern in patterns]
    indices = np.concatenate(parts)
    what = "access pattern" if len(parts) == 1 else f"{len(parts)} access patterns"
    print(f"{Path(args.file).name}: {what}, {indices.size} elements")
    print(f"  {format_runs(indices)}")
    return 0


def bd_pattern(args: argparse.Namespace, data: dict | list[dict]) -> int:
    """``aiedma bd --kind K tap.json``: the pattern as one BD of a DMA, or why it is not."""
    refuse_options(args, {k: v for k, v in BD_OPTIONS.items()
                          if k not in ("kind", "dtype", "direction", "base_address")})
    if args.kind is None:
        raise MlirError("--kind: an access pattern has no DMA of its own; give tile, "
                        "memtile or shim")
    if isinstance(data, list):
        if len(data) > 1:
            raise MlirError(f"{Path(args.file).name} holds {len(data)} access patterns; "
                            "aiedma bd converts one (aiedma walk shows them all)")
        data = data[0]
    dtype = args.dtype or "int32"
    direction = "s2mm" if args.direction == "write" else "mm2s"
    converted = access_fields(args.kind, element_bits(dtype), args.base_address,
                              pattern_access(data), direction)
    converted.fields["valid_bd"] = 1
    bd_object, problems = build_bd(args.kind, converted.fields)
    problems[:0] = converted.problems
    print(f"{Path(args.file).name}: access pattern as a {args.kind} {direction.upper()} BD "
          f"of {dtype}" + (f", task repeat {converted.repeat}" if converted.repeat > 1 else ""))
    design_bd = DesignBD(Tile(0, 0, args.kind), 0, converted.fields,
                         bd_object if not problems else None, problems, "access pattern", 0, 0)
    print("\n".join(_field_table(args.kind, [design_bd])))
    for problem in problems:
        print(f"! {problem}")
    return EXIT_BROKEN_RULES if problems else 0
