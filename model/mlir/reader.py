"""Read an mlir-aie file's DMA programs into the project's BDs (docs/mlir.md).

:func:`read_mlir` reads every construct on its own: one that cannot be read becomes a
:class:`~.design.MlirWarning` at its line and column and the rest still reads. The
device region is read in passes (tiles; buffers, locks and allocations; DMA regions;
BD chains; flows, :mod:`.streams`, and cores, :mod:`.branches`; the runtime sequence,
:mod:`.runtime`) so a use may come before its definition, as MLIR allows in a device's
graph region.

Decisions (mlir-aie's passes do these before lowering; a file may come before them):

* **decision**: a BD without ``bd_id`` takes the lowest free BD of its channel's half,
  in the order the chains are written (``dma_start`` order, then each chain from its
  start); explicit ``bd_id`` values are taken first, and so are the BD numbers a
  runtime sequence's ``dma_memcpy_nd`` operations name.
* **decision**: a buffer without ``address`` is laid out after the tile's highest
  given buffer, in the order written, from byte 1024 on a core tile (mlir-aie's default
  stack) and 0 on a memory tile, each aligned to 4 bytes; the BD table says so.
* **decision**: a memory tile's own memory is its window ``own`` (word 0x20000 on);
  a buffer on the west or east neighbour memory tile is in that window, and so are its
  locks (IDs 0-63 west, 64-127 own, 128-191 east), as docs/bd.md "Resources" has them.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..arch.kinds import DMA_KINDS, span_text
from ..bd.descriptor import BufferDescriptor
from ..errors import BDError, UndocumentedBehaviourWarning
from .branches import follow_branches
from .core import CoreLoop, CoreProgram, CoreStep
from .design import (
    Buffer,
    Chain,
    DesignBD,
    HostBuffer,
    Lock,
    MlirDesign,
    MlirWarning,
    Tile,
    element_bits,
)
from .devices import DEVICES, Device, device_named
from .pieces import (
    UNREADABLE,
    NotRead,
    ParsedOp,
    attribute_array,
    attributes,
    direction_of,
    integer,
    integer_list,
    is_keyword,
    keyword_items,
    layout_pairs,
    memref_type,
    packet_of,
    paren,
    reason,
    ref,
    with_constants,
    word,
)
from .runtime import RuntimeSequenceReader
from .streams import StreamReader
from .syntax import (
    Angle,
    Brace,
    Bracket,
    Name,
    Operation,
    Paren,
    Punct,
    Ref,
    Statement,
    SyntaxProblem,
    parse_operation,
    split_statements,
)
from .units import Access, Converted, access_fields, iteration_fields

__all__ = ["build_bd", "read_mlir"]

STACK_BYTES = 1024
"""mlir-aie's default core stack: its buffers are laid out after it."""

MAX_FIELD_PASSES = 64
"""Most problems collected from one BD (each pass drops the field the last one named)."""

_MEMTILE_WINDOW = {-1: "west", 0: "own", 1: "east"}

_ACQUIRE = {"AcquireGreaterEqual": -1, "Acquire": 1}


def read_mlir(text: str) -> MlirDesign:
    """Every tile, buffer, lock, BD and chain of an mlir-aie file.

    Parameters
    ----------
    text : str
        The file's text (``aie.device`` inside ``module`` or at the top).

    Returns
    -------
    MlirDesign
        With :attr:`~.design.MlirDesign.warnings` for each construct not read.
    """
    reader = _Reader()
    reader.top(split_statements(text))
    reader.design.warnings.sort(key=lambda w: (w.line, w.column))   # in file order
    return reader.design


@dataclass
class _Block:
    label: str | None
    ops: list[ParsedOp] = field(default_factory=list)


@dataclass
class _BdBlock:
    """A block holding one ``aie.dma_bd``, its locks and where it goes next."""

    block: _Block
    bd_op: ParsedOp
    acquire: tuple[ParsedOp, str, int] | None = None     # op, lock name, signed value
    release: tuple[ParsedOp, str, int] | None = None
    packet: tuple[int, int] | None = None           # type, id
    next_label: str | None = None
    bd_id: int | None = None
    table_full: str | None = None                   # why no BD number was free


class _Reader(RuntimeSequenceReader, StreamReader):
    def __init__(self) -> None:
        self.design = MlirDesign()
        self.device: Device = DEVICES["npu1"]
        self.allocations: dict[str, tuple[Tile, str, int]] = {}   # @sym: tile, dir, ch
        self.globals: dict[str, list[int]] = {}
        self.values: dict[str, Any] = {}        # SSA names: tiles, buffers, locks, host args
        self.tasks: dict[str, Chain] = {}
        self.used_ids: dict[Tile, set[int]] = {}   # BD numbers taken, per tile
        self.constants: dict[str, int] = {}     # %c = arith.constant N, read as N
        self.parsed: dict[int, ParsedOp | None] = {}   # by id(statement): read once
        self.device_line: int | None = None     # the aie.device read (one a file)
        self.device_symbol: str | None = None   # its @name, if it has one
        self.bd_chains: dict[str, tuple[list[str], list[Statement]]] = {}   # @name: params
        # aie.connect of routed switchboxes: (tile, box, bundle, channel) -> its outputs
        self.connects: dict[tuple[Tile, str, str, int], list[tuple[str, int, ParsedOp]]] = {}

    # --- warnings ---------------------------------------------------------------------------

    def warn(self, statement: Statement, message: str) -> None:
        self.design.warnings.append(MlirWarning(statement.line, statement.column, message))

    def parse(self, statement: Statement) -> ParsedOp | None:
        """The statement's operation, its ``arith.constant`` operands as numbers; read
        once (a statement read again, by another pass, gives the same op and no second
        warning)."""
        key = id(statement)
        if key not in self.parsed:
            self.parsed[key] = self._parse(statement)
        return self.parsed[key]

    def _parse(self, statement: Statement) -> ParsedOp | None:
        try:
            op = parse_operation(statement.text)
        except SyntaxProblem as problem:
            line, column = statement.position(problem.offset)
            self.design.warnings.append(MlirWarning(
                line, column, f"not read: {problem} in {statement.text[:60]!r}"))
            return None
        return ParsedOp(with_constants(op, self.constants), statement)

    def each(self, ops: Sequence[ParsedOp], names: dict[str, Callable[[ParsedOp], None]]) -> None:
        """Run the handler of each op named in ``names``; a failure is a warning."""
        for op in ops:
            handler = names.get(op.name)
            if handler is None:
                continue
            try:
                handler(op)
            except UNREADABLE as problem:
                self.warn(op.statement, f"{op.name}: not read: {reason(problem)}")

    # --- module and device --------------------------------------------------------------------

    def operations(self, statements: list[Statement]) -> Iterator[ParsedOp]:
        """The operations of a region that read (block labels skipped, others warned)."""
        for statement in statements:
            if not statement.label:
                op = self.parse(statement)
                if op is not None:
                    yield op

    def top(self, statements: list[Statement]) -> None:
        found = False
        for op in self.operations(statements):
            statement = op.statement
            if op.name in ("module", "builtin.module"):
                for region in statement.regions:
                    self.top(region)
                found = True
            elif op.name == "aie.device" and self.device_line is not None:
                self.warn(statement, f"aie.device: not read: one device a file is run, the "
                                     f"first (line {self.device_line})")
            elif op.name == "aie.device":
                self.device_line = statement.line
                self.device_symbol = next((p.name for p in op.op.pieces
                                           if isinstance(p, Ref) and p.sigil == "@"), None)
                self.device_region(op)
                found = True
        if not found and statements and not self.design.bds:
            self.warn(statements[0], "no aie.device: nothing read")

    def device_region(self, device: ParsedOp) -> None:
        try:
            name = word(paren(device.op)[0], "the device")
        except (NotRead, IndexError):
            name = "npu1"
            self.warn(device.statement, "aie.device: the device is not a name; read as npu1")
        self.design.device = name
        family = device_named(name)
        if family is None:
            self.warn(device.statement, f"aie.device({name}): not an AIE-ML device this "
                                        "project models; tiles read as npu1 (memory tiles "
                                        "in row 1)")
        self.device = family or DEVICES["npu1"]
        body = device.statement.regions[0] if device.statement.regions else []
        ops = list(self.operations(body))
        dma = {"aie.mem": self.dma_region, "aie.memtile_dma": self.dma_region,
               "aie.shim_dma": self.dma_region}
        # mlir-aie declares buffers and locks inside a DMA region too
        inner = [o for op in ops if op.name in dma and op.statement.regions
                 for o in self.operations(op.statement.regions[0])]
        self.each(ops, {"aie.tile": self.tile})
        self.each(ops + inner, {"aie.buffer": self.buffer, "aie.lock": self.lock,
                                "aie.external_buffer": self.external_buffer,
                                "aie.shim_dma_allocation": self.allocation,
                                "memref.global": self.global_constant})
        self.layout_buffers()
        self.each(ops, dma)
        self.each(ops, {"aie.bd_chain": self.bd_chain})
        self.each(ops, {"aie.flow": self.flow, "aie.packet_flow": self.packet_flow,
                        "aie.core": self.core, "aie.switchbox": self.switchbox,
                        "aie.shim_mux": self.switchbox})
        self.routed_flows()
        self.each(ops, {"aie.runtime_sequence": self.runtime_sequence,
                        "aiex.runtime_sequence": self.runtime_sequence})
        # an old-style sequence is a func.func with a body; a kernel's declaration has none
        self.each([op for op in ops if op.name == "func.func" and op.statement.regions
                   and Name("private") not in op.op.pieces],
                  {"func.func": self.runtime_sequence})
        for op in ops:
            if op.name in ("aie.objectfifo", "aie.objectFifo"):
                self.warn(op.statement, f"{op.name}: not read: lower it first (aie-opt "
                                        "--aie-objectFifo-stateful-transform)")
            elif op.name == "aie.dma":
                self.warn(op.statement, "aie.dma: not read: it belongs inside aie.mem, "
                                        "aie.memtile_dma or aie.shim_dma")

    # --- declarations ---------------------------------------------------------------------

    def define(self, op: ParsedOp, value: Any) -> None:
        if not op.op.results:
            raise NotRead("its result has no %name, so nothing can use it")
        self.values[op.op.results[0]] = value

    def lookup(self, name: str, kind: type, what: str) -> Any:
        value = self.values.get(name)
        if not isinstance(value, kind):
            raise NotRead(f"%{name} is not a{'n' if what[0] in 'aeiou' else ''} {what} "
                          "of this device")
        return value

    def tile(self, op: ParsedOp) -> None:
        items = paren(op.op)
        if len(items) != 2:
            raise NotRead("expected (column, row)")
        column, row = (integer(item, "a tile's column and row") for item in items)
        tile = Tile(column, row, self.device.kind(row))
        self.define(op, tile)
        self.design.tiles[op.op.results[0]] = tile

    def buffer(self, op: ParsedOp) -> None:
        tile = self.lookup(ref(paren(op.op)[0], "%", "the tile"), Tile, "tile")
        attrs = attributes(op.op)
        shape = memref_type(op.op.pieces, "a buffer")
        element_bits(shape.element)
        name = op.op.results[0] if op.op.results else "?"
        if "sym_name" in attrs:
            name = word(attrs["sym_name"], "sym_name")
        address = integer(attrs["address"], "address") if "address" in attrs else -1
        if tile.kind == "shim":
            raise NotRead(f"{tile} is a shim tile: it has no memory of its own")
        buffer = Buffer(name, tile, address, shape.element, shape.dims,
                        op.statement.line, op.statement.column, "address" in attrs,
                        _dense_initial(op.op.pieces, shape))
        self.define(op, buffer)
        self.design.buffers[op.op.results[0]] = buffer

    def external_buffer(self, op: ParsedOp) -> None:
        shape = memref_type(op.op.pieces, "an external buffer")
        host = HostBuffer(len(self.design.host), op.op.results[0] if op.op.results else "?",
                          shape.element, shape.dims)
        self.design.host.append(host)
        self.define(op, host)

    def layout_buffers(self) -> None:
        """Addresses for buffers written without one (see the module's decisions)."""
        ends: dict[Tile, int] = {}
        for buffer in self.design.buffers.values():
            if buffer.address_given:
                ends[buffer.tile] = max(ends.get(buffer.tile, 0), buffer.address + buffer.bytes)
        for key, buffer in list(self.design.buffers.items()):
            if buffer.address_given:
                continue
            start = ends.get(buffer.tile, STACK_BYTES if buffer.tile.kind == "tile" else 0)
            start = -(-start // 4) * 4
            placed = Buffer(buffer.name, buffer.tile, start, buffer.element, buffer.shape,
                            buffer.line, buffer.column, False, buffer.initial)
            ends[buffer.tile] = start + buffer.bytes
            self.design.buffers[key] = placed
            self.values[key] = placed

    def lock(self, op: ParsedOp) -> None:
        items = paren(op.op)
        tile = self.lookup(ref(items[0], "%", "the tile"), Tile, "tile")
        if len(items) < 2:
            raise NotRead("the lock has no ID (run aie-opt --aie-assign-lock-ids first)")
        lock_id = integer(items[1], "the lock ID")
        attrs = attributes(op.op)
        init = integer(attrs["init"], "init") if "init" in attrs else 0
        name = word(attrs["sym_name"], "sym_name") if "sym_name" in attrs else (
            op.op.results[0] if op.op.results else "?")
        lock = Lock(name, tile, lock_id, init, op.statement.line, op.statement.column)
        self.define(op, lock)
        self.design.locks[op.op.results[0]] = lock

    def allocation(self, op: ParsedOp) -> None:
        """``aie.shim_dma_allocation @s(%tile, MM2S, 0)`` or ``@s(MM2S, 0, column)``."""
        symbol = next((p.name for p in op.op.pieces if isinstance(p, Ref) and p.sigil == "@"),
                      None)
        if symbol is None:
            raise NotRead("expected @name")
        items = paren(op.op)
        if items and isinstance(items[0][0], Ref):
            tile = self.lookup(ref(items[0], "%", "the tile"), Tile, "tile")
            direction = direction_of(items[1])
            channel = integer(items[2], "the channel")
        else:
            direction = direction_of(items[0])
            channel = integer(items[1], "the channel")
            column = integer(items[2], "the column")
            tile = Tile(column, 0, "shim")
        self.allocations[symbol] = (tile, direction, channel)

    def global_constant(self, op: ParsedOp) -> None:
        """``memref.global "private" constant @x : memref<8xi32> = dense<[...]>``."""
        symbol = next((p.name for p in op.op.pieces if isinstance(p, Ref) and p.sigil == "@"),
                      None)
        for at, piece in enumerate(op.op.pieces):
            if isinstance(piece, Name) and piece.text == "dense" and at + 1 < len(op.op.pieces):
                body = op.op.pieces[at + 1]
                if isinstance(body, Angle) and body.items and isinstance(body.items[0][0],
                                                                         Bracket):
                    self.globals[symbol or "?"] = [w & 0xFFFF_FFFF for w in integer_list(
                        body.items[0][0], "dense")]
                    return
        if any(isinstance(p, Punct) and p.text == "=" for p in op.op.pieces):
            raise NotRead("expected dense<[...]> integer data")
        # no value: a symbol only (mlir-aie names each object FIFO so), nothing to read

    def bd_chain(self, op: ParsedOp) -> None:
        """``aie.bd_chain @c(%a: memref<..>, ...) { BD blocks }``: kept by name, read when
        ``dma_start_bd_chain`` names its buffers."""
        symbol = ref([p for p in op.op.pieces if isinstance(p, Ref)], "@", "the chain")
        params = [ref(item, "%", "a parameter") for item in paren(op.op)]
        self.bd_chains[symbol] = (params, op.statement.regions[0] if op.statement.regions
                                  else [])

    def core(self, op: ParsedOp) -> None:
        """``aie.core(%tile) { ... }``: its locks and copies, in constant ``scf.for`` loops."""
        tile_name = ref(paren(op.op)[0], "%", "the tile")
        self.lookup(tile_name, Tile, "tile")
        program = CoreProgram(tile_name, line=op.statement.line, column=op.statement.column)
        constants: dict[str, int] = {}
        region = op.statement.regions[0] if op.statement.regions else []
        if any(s.label for s in region):   # loops lowered to blocks and branches
            program.body = follow_branches(region, self.parse,
                                           lambda inner: self.core_op(inner, constants))
        else:
            program.body = self.core_body(region, constants)
        self.design.cores.append(program)

    def core_body(self, statements: list[Statement], constants: dict[str, int]
                  ) -> list[CoreStep | CoreLoop]:
        """The steps of a core region; an operation that cannot be read is a warning."""
        body: list[CoreStep | CoreLoop] = []
        for op in self.operations(statements):
            try:
                body += self.core_op(op, constants)
            except UNREADABLE as problem:
                self.warn(op.statement, f"{op.name}: not read: {reason(problem)}")
        return body

    def core_op(self, op: ParsedOp, constants: dict[str, int]) -> list[CoreStep | CoreLoop]:
        where = {"line": op.statement.line, "column": op.statement.column}
        if op.name == "arith.constant" and op.op.results:
            constants[op.op.results[0]] = integer(op.op.pieces[:1], "the constant")
        elif op.name in ("scf.for", "affine.for"):
            bounds = [p for p in op.op.pieces if isinstance(p, Ref | int)][1:4]
            if len(bounds) == 2:     # affine.for %i = 0 to 16 { (step 1)
                bounds.append(1)
            if len(bounds) != 3:
                raise NotRead("expected %i = low to high [step s]")
            low, high, step = (constants[b.name] if isinstance(b, Ref) else b for b in bounds)
            if step < 1:
                raise NotRead(f"step {step}: a loop steps up by at least 1")
            body = self.core_body(op.statement.regions[0] if op.statement.regions else [],
                                  constants)
            return [CoreLoop(len(range(low, high, step)), tuple(body))]
        elif op.name == "aie.use_lock":
            items = paren(op.op)
            lock = ref(items[0], "%", "the lock")
            self.lookup(lock, Lock, "lock")
            action = word(items[1], "the lock action")
            value = integer(items[2], "the lock value") if len(items) > 2 else 1
            if action == "Release":
                return [CoreStep("release", lock, value, **where)]
            if action not in _ACQUIRE:
                raise NotRead(f"lock action {action!r}")
            return [CoreStep("acquire", lock, _ACQUIRE[action] * value, **where)]
        elif op.name in ("func.call", "memref.copy"):
            operands = op.op.pieces
            if op.name == "func.call":
                operands = next((p.items for p in op.op.pieces if isinstance(p, Paren)), ())
                operands = tuple(item[0] for item in operands if item)
            names = [p.name for p in operands if isinstance(p, Ref) and p.sigil == "%"
                     and isinstance(self.values.get(p.name), Buffer)]
            if len(names) >= 2:
                return [CoreStep("copy", source=names[0], dest=names[-1], **where)]
        return []

    # --- DMA regions ---------------------------------------------------------------------------

    def dma_region(self, op: ParsedOp) -> None:
        tile = self.lookup(ref(paren(op.op)[0], "%", "the tile"), Tile, "tile")
        expected = {"aie.mem": "tile", "aie.memtile_dma": "memtile", "aie.shim_dma": "shim"}
        if tile.kind != expected[op.name]:
            raise NotRead(f"{tile} is a {tile.kind} on {self.design.device}; {op.name} "
                          f"needs a {expected[op.name]}")
        blocks = self.blocks(op.statement.regions[0] if op.statement.regions else [])
        starts = []
        for block in list(blocks):
            for inner in block.ops:
                if inner.name not in ("aie.dma_start", "aie.dma"):
                    continue
                try:
                    if inner.name == "aie.dma":
                        chain_blocks, start = self.dma_op(inner)
                        blocks += chain_blocks
                        starts.append((inner, *start))
                    else:
                        starts.append((inner, *self.dma_start(inner)))
                except UNREADABLE as problem:
                    self.warn(inner.statement, f"{inner.name}: not read: {reason(problem)}")
        by_label = {b.label: b for b in blocks}
        bd_blocks = self.bd_blocks(blocks)
        chains = []
        for start_op, direction, channel, dest, repeat in starts:
            order = self.follow(by_label, bd_blocks, dest, start_op)
            chains.append((start_op, direction, channel, order, repeat))
        self.assign_ids(tile, [(channel, order) for _, _, channel, order, _ in chains])
        built: dict[int, DesignBD] = {}
        for start_op, direction, channel, order, repeat in chains:
            bds = []
            for bd_block in order:
                key = id(bd_block)
                if key not in built:
                    built[key] = self.static_bd(tile, bd_block, bd_blocks, direction,
                                                channel)
                elif built[key].bd_id not in DMA_KINDS[tile.kind].channel_bds(channel):
                    half = DMA_KINDS[tile.kind].channel_bds(channel)
                    self.warn(start_op.statement, f"{start_op.name}: channel {channel} of "
                                                  f"{tile} runs BDs "
                                                  f"{DMA_KINDS[tile.kind].half_text(half)}; "
                                                  f"BD {built[key].bd_id}, which another "
                                                  "channel's chain shares, is not one")
                bds.append(built[key])
            loops = bool(order) and order[-1].next_label in bd_blocks
            self.design.chains.append(Chain(tile, direction, channel, bds, repeat, loops,
                                            start_op.name, start_op.statement.line,
                                            start_op.statement.column))

    def blocks(self, statements: list[Statement]) -> list[_Block]:
        blocks = [_Block(None)]
        for statement in statements:
            if statement.label:
                blocks.append(_Block(statement.label[1:]))
                continue
            op = self.parse(statement)
            if op is not None:
                blocks[-1].ops.append(op)
        return blocks

    def dma_start(self, op: ParsedOp) -> tuple[str, int, str, int]:
        items = paren(op.op)
        if len(items) < 4:
            raise NotRead("expected (direction, channel, ^bd, ^next)")
        direction = direction_of(items[0])
        channel = integer(items[1], "the channel")
        dest = ref(items[2], "^", "the first BD's block")
        repeat = integer(keyword_items(items[4:]).get("repeat_count", (0,)), "repeat_count")
        return direction, channel, dest, repeat + 1

    def dma_op(self, op: ParsedOp) -> tuple[list[_Block], tuple[str, int, str, int]]:
        """``aie.dma(MM2S, 0) [{ BD }, { BD }] {loop, repeat_count}``: each ``{ }`` a block
        of one BD and its locks, each going on to the next; the last to the first unless
        ``loop = false`` (mlir-aie's default is a loop). Returns the blocks and what
        :meth:`dma_start` returns."""
        items = paren(op.op)
        if len(items) < 2:
            raise NotRead("expected (direction, channel)")
        direction = direction_of(items[0])
        channel = integer(items[1], "the channel")
        attrs = attributes(op.op)
        if integer(attrs.get("pad_value", (0,)), "pad_value"):
            raise NotRead(f"pad_value={integer(attrs['pad_value'], 'pad_value')}: an "
                          "AIE-ML DMA pads with zeros (a pad value is a later "
                          "generation's register)")
        loop = integer(attrs.get("loop", (Name("true"),)), "loop")
        repeat = integer(attrs.get("repeat_count", (0,)), "repeat_count") + 1
        group = next((p for p in op.op.pieces if isinstance(p, Bracket)), None)
        if group is None or not all(len(i) == 1 and isinstance(i[0], Brace)
                                    for i in group.items):
            raise NotRead("expected [{ BD }, { BD }, ...] after (direction, channel)")
        name = f"{op.op.results[0] if op.op.results else 'dma'}@{op.statement.line}"
        labels = [f"{name}.{k}" for k in range(len(group.items))]
        blocks = []
        for k, item in enumerate(group.items):
            block = _Block(labels[k], [ParsedOp(inner, op.statement)
                                       for inner in _operations_in(item[0])])
            following = labels[k + 1] if k + 1 < len(labels) else (
                labels[0] if loop else None)
            if following is not None:
                block.ops.append(ParsedOp(Operation((), "aie.next_bd", (Ref("^", following),)),
                                          op.statement))
            blocks.append(block)
        return blocks, (direction, channel, labels[0] if labels else "", repeat)

    def bd_blocks(self, blocks: list[_Block]) -> dict[str, _BdBlock]:
        """Each block with an ``aie.dma_bd``, read; a block that fails is a warning."""
        found: dict[str, _BdBlock] = {}
        for block in blocks:
            bd_ops = [op for op in block.ops if op.name == "aie.dma_bd"]
            if not bd_ops:
                continue
            if len(bd_ops) > 1:
                self.warn(bd_ops[1].statement, "aie.dma_bd: not read: a block holds one BD")
            bd_block = _BdBlock(block, bd_ops[0])
            try:
                self.read_bd_block(bd_block)
            except UNREADABLE as problem:
                self.warn(bd_ops[0].statement, f"aie.dma_bd: not read: {reason(problem)}")
                continue
            found[block.label or ""] = bd_block
        return found

    def read_bd_block(self, bd_block: _BdBlock) -> None:
        for op in bd_block.block.ops:
            if op.name == "aie.use_lock":
                self.use_lock(bd_block, op)
            elif op.name == "aie.dma_bd_packet":
                items = paren(op.op)
                bd_block.packet = (integer(items[0], "packet type"),
                                   integer(items[1], "packet ID"))
            elif op.name == "aie.next_bd":
                bd_block.next_label = ref(op.op.pieces, "^", "the next BD's block")
        attrs = attributes(bd_block.bd_op.op)
        if "bd_id" in attrs:
            bd_block.bd_id = integer(attrs["bd_id"], "bd_id")

    def use_lock(self, bd_block: _BdBlock, op: ParsedOp) -> None:
        items = paren(op.op)
        lock = ref(items[0], "%", "the lock")
        action = word(items[1], "the lock action")
        value = integer(items[2], "the lock value") if len(items) > 2 else 1
        if action in _ACQUIRE:
            bd_block.acquire = (op, lock, _ACQUIRE[action] * value)
        elif action == "Release":
            bd_block.release = (op, lock, value)
        else:
            raise NotRead(f"lock action {action!r}: expected AcquireGreaterEqual, Acquire "
                          "or Release")

    def follow(self, by_label: dict[str | None, _Block], bd_blocks: dict[str, _BdBlock],
               label: str, start: ParsedOp) -> list[_BdBlock]:
        order: list[_BdBlock] = []
        seen: set[str] = set()
        numbered = {b.bd_id: name for name, b in bd_blocks.items() if b.bd_id is not None}
        while label in bd_blocks and label not in seen:
            seen.add(label)
            order.append(bd_blocks[label])
            following = self.next_bd_id(bd_blocks[label].bd_op)   # next_bd_id = n
            label = bd_blocks[label].next_label or numbered.get(following, "")
        if not order and label and label not in by_label:   # (none read: warned there)
            self.warn(start.statement, f"{start.name}: block ^{label} does not exist")
        return order

    def assign_ids(self, tile: Tile, chains: list[tuple[int, list[_BdBlock]]]) -> None:
        dma = DMA_KINDS[tile.kind]
        used = self.used_ids.setdefault(tile, set())
        used |= {b.bd_id for _, order in chains for b in order if b.bd_id is not None}
        for channel, order in chains:
            half = dma.channel_bds(channel)
            for bd_block in order:
                if bd_block.bd_id is None:
                    free = next((n for n in half if n not in used), None)
                    if free is None:   # numbered past the table, and reported
                        free = max(used | {dma.bd_count - 1}) + 1
                        shared = dma.half_text(half) if dma.bd_halves > 1 \
                            else f"{span_text(half)} (shared by every channel)"
                        bd_block.table_full = (f"channel {channel} of {tile} has no free "
                                               f"BD: it has {len(half)}, BDs {shared}")
                    bd_block.bd_id = free
                    used.add(free)

    def static_bd(self, tile: Tile, bd_block: _BdBlock, bd_blocks: dict[str, _BdBlock],
                  direction: str, channel: int) -> DesignBD:
        op = bd_block.bd_op
        buffer, converted, buffer_word = self.dma_bd(tile, op, direction)
        dma = DMA_KINDS[tile.kind]
        if bd_block.table_full:
            converted.problem("bd_id", bd_block.bd_id, bd_block.table_full)
        elif bd_block.bd_id not in dma.channel_bds(channel) and 0 <= (bd_block.bd_id or 0) \
                < dma.bd_count:
            converted.problem("bd_id", bd_block.bd_id, f"channel {channel} runs BDs "
                                                       f"{dma.half_text(dma.channel_bds(channel))}")
        fields = converted.fields
        fields["valid_bd"] = 1
        if bd_block.acquire:
            _, name, value = bd_block.acquire
            fields["lock_acq_enable"] = 1
            fields["lock_acq_id"] = self.lock_id(tile, name, converted, "lock_acq_id")
            fields["lock_acq_value"] = value
        if bd_block.release:
            _, name, value = bd_block.release
            fields["lock_rel_id"] = self.lock_id(tile, name, converted, "lock_rel_id")
            fields["lock_rel_value"] = value
        if bd_block.packet:
            fields.update(enable_packet=1, packet_type=bd_block.packet[0],
                          packet_id=bd_block.packet[1])
        next_id = self.next_bd_id(op)
        if next_id is None and bd_block.next_label in bd_blocks:
            next_id = bd_blocks[bd_block.next_label].bd_id
        if next_id is not None:
            fields.update(use_next_bd=1, next_bd=next_id)
        bd = self.make_bd(tile, bd_block.bd_id or 0, converted, op, buffer)
        bd.direction, bd.buffer_word = direction, buffer_word
        return bd

    def next_bd_id(self, op: ParsedOp) -> int | None:
        attrs = attributes(op.op)
        return integer(attrs["next_bd_id"], "next_bd_id") if "next_bd_id" in attrs else None

    def lock_id(self, tile: Tile, name: str, out: Converted, field_name: str) -> int:
        lock = self.lookup(name, Lock, "lock")
        if tile.kind != "memtile":
            if lock.tile != tile:
                out.problem(field_name, lock.id, f"lock %{name} is on {lock.tile}; a "
                                                 f"{tile.kind} DMA uses its own tile's locks")
            return lock.id
        side = lock.tile.column - tile.column
        if lock.tile.row != tile.row or side not in _MEMTILE_WINDOW:
            out.problem(field_name, lock.id, f"lock %{name} is on {lock.tile}; a memory "
                                             "tile reaches its own and its west and east "
                                             "neighbours' locks")
            return lock.id
        return DMA_KINDS["memtile"].lock_window(_MEMTILE_WINDOW[side]).start + lock.id

    def buffer_word(self, tile: Tile, buffer: Buffer, out: Converted) -> int:
        """Word address of ``buffer``'s element 0 as ``tile``'s DMA counts addresses."""
        word_address = buffer.address // 4
        if buffer.address % 4:
            out.problem("address", buffer.address, f"buffer {buffer.name} must start on a "
                                                   "32-bit word (a multiple of 4 bytes)")
        if tile.kind != "memtile":
            if buffer.tile != tile:
                out.problem("buffer", buffer.name, f"is on {buffer.tile}; a {tile.kind} DMA "
                                                   "reaches its own tile's memory")
            return word_address
        side = buffer.tile.column - tile.column
        if buffer.tile.row != tile.row or side not in _MEMTILE_WINDOW:
            out.problem("buffer", buffer.name, f"is on {buffer.tile}; a memory tile reaches "
                                               "its own and its neighbours' memory")
            return word_address
        return DMA_KINDS["memtile"].memory_window(_MEMTILE_WINDOW[side]).start + word_address

    def dma_bd(self, tile: Tile, op: ParsedOp, direction: str
               ) -> tuple[Buffer | HostBuffer, Converted, int]:
        """``aie.dma_bd(%buf : memref<..>, offset, len, [dims], [pads], pad_value = v)``,
        or its keywords in the attribute dictionary."""
        items = paren(op.op)
        name = ref(items[0], "%", "the buffer")
        shape = memref_type(items[0], "the BD's buffer")
        bits = element_bits(shape.element)
        target = self.values.get(name)
        if not isinstance(target, Buffer | HostBuffer):
            raise NotRead(f"%{name} is not a buffer of this device or a runtime argument")
        keywords = {**_printed_keywords(items[0]), **keyword_items(items[1:]),
                    **attributes(op.op)}
        positional = [item for item in items[1:] if not is_keyword(item)]
        numbers = [item for item in positional if not isinstance(item[0], Bracket)]
        groups = [item[0] for item in positional if isinstance(item[0], Bracket)]
        count = 1
        for size in shape.dims:
            count *= size
        offset = integer(numbers[0], "offset") if numbers else integer(
            keywords.get("offset", (0,)), "offset")
        length = integer(numbers[1], "len") if len(numbers) > 1 else (
            integer(keywords["len"], "len") if "len" in keywords else count)
        if "sizes" in keywords:     # the printed form: sizes = [..] strides = [..]
            sizes = integer_list(keywords["sizes"][0], "sizes")
            strides = integer_list(keywords.get("strides", (Bracket(()),))[0], "strides")
            if len(sizes) != len(strides):
                raise NotRead(f"sizes {sizes} and strides {strides} differ in length")
            dims = list(zip(sizes, strides, strict=True))
        else:
            dims = layout_pairs(groups[0] if groups else attribute_array(keywords,
                                                                         "dimensions"),
                                ("size", "stride"))
        pads = layout_pairs(groups[1] if len(groups) > 1 else attribute_array(
            keywords, "pad_dimensions" if "pad_dimensions" in keywords else "pad"),
            ("const_pad_before", "const_pad_after"))
        access = Access(offset, length, tuple(d[0] for d in dims), tuple(d[1] for d in dims),
                        tuple(pads))
        out = Converted()
        buffer_word = 0
        if isinstance(target, Buffer):
            buffer_word = self.buffer_word(tile, target, out)
        elif tile.kind != "shim":
            out.problem("buffer", name, f"a runtime argument is host memory; only a shim "
                                        f"reaches it, not a {tile.kind}")
        converted = access_fields(tile.kind, bits, buffer_word, access, direction)
        converted.problems[:0] = out.problems
        if "iteration" in keywords:
            _iteration_fields(converted, keywords["iteration"], bits)
        if "packet" in keywords:
            packet = packet_of(keywords["packet"])
            converted.fields.update(enable_packet=1, packet_type=packet[0],
                                    packet_id=packet[1])
        return target, converted, buffer_word

    def make_bd(self, tile: Tile, bd_id: int, converted: Converted, op: ParsedOp,
                buffer: Buffer | HostBuffer | None, origin: str | None = None) -> DesignBD:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", UndocumentedBehaviourWarning)
            bd, problems = build_bd(tile.kind, converted.fields)
        for warning in caught:   # shown with the design's warnings, at the BD's line
            if isinstance(warning.message, UndocumentedBehaviourWarning):
                self.warn(op.statement, f"BD {bd_id}: {warning.message}")
            else:
                warnings.warn_explicit(warning.message, warning.category, warning.filename,
                                       warning.lineno)
        problems[:0] = converted.problems
        dma = DMA_KINDS[tile.kind]
        named = any(str(p).startswith("bd_id=") for p in problems)
        if not 0 <= bd_id < dma.bd_count and not named:
            problems.append(BDError(f"bd_id={bd_id}: a {tile.kind} DMA has BDs "
                                    f"0-{dma.bd_count - 1}"))
        design_bd = DesignBD(tile, bd_id, converted.fields, bd if not converted.problems
                             else None, problems, origin or op.name, op.statement.line,
                             op.statement.column, buffer)
        self.design.bds.append(design_bd)
        return design_bd

# --- helpers --------------------------------------------------------------------------------

def _operations_in(body: Brace) -> list[Operation]:
    """The operations of an ``aie.dma`` BD's ``{ }``, which reads as one run of pieces:
    each dialect name (``aie.use_lock``, ``arith.constant``) starts the next operation,
    with the ``%name =`` before it as its result; an ``arith.constant``'s operands read
    as their numbers in the operations after it."""
    found: list[Operation] = []
    pieces = [piece for item in body.items for piece in item]
    for at, piece in enumerate(pieces):
        if isinstance(piece, Name) and "." in piece.text:
            named = (at >= 2 and isinstance(pieces[at - 1], Punct)
                     and pieces[at - 1].text == "=" and isinstance(pieces[at - 2], Ref))
            if named and found:   # the %name = went onto the operation before
                found[-1] = Operation((), found[-1].name, found[-1].pieces[:-2])
            found.append(Operation((pieces[at - 2].name,) if named else (), piece.text, ()))
        elif found:
            found[-1] = Operation(found[-1].results, found[-1].name,
                                  (*found[-1].pieces, piece))
    constants: dict[str, int] = {}
    return [with_constants(op, constants) for op in found]


def _dense_initial(pieces: Sequence[Any], shape: Any) -> tuple[int, ...]:
    """The elements of a buffer's ``= dense<[...]>`` (or splat ``dense<5>``), row-major;
    empty when it has none."""
    at = next((k for k, p in enumerate(pieces) if isinstance(p, Name) and p.text == "dense"),
              None)
    if at is None:
        return ()
    body = pieces[at + 1] if at + 1 < len(pieces) else None
    if not (isinstance(body, Angle) and len(body.items) == 1 and len(body.items[0]) == 1):
        raise NotRead("its initial value must be dense<[integers]> or dense<integer>")
    count = math.prod(shape.dims)
    value = body.items[0][0]
    if isinstance(value, int):
        return (value,) * count

    def flat(group: Any) -> list[int]:
        if isinstance(group, Bracket):
            return [v for item in group.items for v in flat(item[0] if len(item) == 1
                                                             else item)]
        return [integer((group,), "an initial element")]
    values = flat(value)
    if len(values) != count:
        raise NotRead(f"its initial value has {len(values)} elements; the buffer holds "
                      f"{count}")
    return tuple(values)


def _printed_keywords(item: tuple[Any, ...]) -> dict[str, tuple[Any, ...]]:
    """What follows a BD's buffer type in mlir-aie's printed form of ``aie.dma_bd``:
    ``offset = 0 len = 16 sizes = [4, 4] strides = [8, 1] pad [<...>]``."""
    at = next((k for k, piece in enumerate(item) if isinstance(piece, Angle)), len(item))
    rest, found, k = item[at + 1:], {}, 0
    while k < len(rest):
        name = rest[k]
        if not isinstance(name, Name):
            raise NotRead(f"expected name = value after the buffer's type, not {rest[k:]}")
        if k + 2 < len(rest) and isinstance(rest[k + 1], Punct) and rest[k + 1].text == "=":
            found[name.text], k = (rest[k + 2],), k + 3
        elif k + 1 < len(rest):
            found[name.text], k = (rest[k + 1],), k + 2
        else:
            raise NotRead(f"{name.text} has no value")
    return found


def _iteration_fields(out: Converted, value: tuple[Any, ...], bits: int) -> None:
    """``iteration = #aie.bd_iteration<size = 4, stride = 1024, current = 2>`` (elements)
    as the BD's iteration fields."""
    angle = next((p for p in value if isinstance(p, Angle)), None)
    if angle is None:
        raise NotRead("iteration must be #aie.bd_iteration<size = .., stride = .., current = ..>")
    parts = {name: integer(v, f"iteration {name}") for name, v in
             keyword_items(angle.items).items()}
    iteration_fields(out, bits, parts.get("size", 1), parts.get("stride", 0),
                     parts.get("current", 0))


def build_bd(kind: str, fields: dict[str, int]) -> tuple[BufferDescriptor | None, list[BDError]]:
    """The BD of ``fields``, or None and every rule they break.

    The constructor stops at the first broken rule; each pass drops the field it named
    and tries again, so each problem is reported once, named by its field.
    """
    problems: list[BDError] = []
    remaining = dict(fields)
    for _ in range(MAX_FIELD_PASSES):
        try:
            bd = BufferDescriptor(kind, **remaining)
        except BDError as error:
            problems.append(error)
            name = str(error).split("=", 1)[0]
            if name not in remaining:
                break
            del remaining[name]
            continue
        return (bd if not problems else None), problems
    return None, problems
