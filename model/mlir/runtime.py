"""The runtime sequence of an mlir-aie file: host transfers, register writes and tasks.

:class:`RuntimeSequenceReader` is the half of the reader (:mod:`.reader`) that reads
``aiex.runtime_sequence`` (or an old-style ``func.func`` sequence): its arguments are
host buffers; ``aiex.npu.dma_memcpy_nd`` is a shim BD and its task, ``writebd`` a BD
from register values, ``address_patch`` a shim BD's host buffer, ``write32`` to a start
queue starts a chain, ``blockwrite`` of a whole BD's words is that BD, and the task form
(``dma_configure_task``, ``dma_start_task``, ``dma_await_task``) is read with the same
BD blocks as a DMA region. Waits (``dma_wait``, ``sync``, ``dma_await_task``) are kept
in :attr:`~.design.MlirDesign.schedule` with the starts, in order, for the run.

It is mixed into the reader and uses the reader's tables (``values``, ``allocations``,
``tasks``, ``globals``, ``design``) and its BD helpers (``make_bd``, ``bd_blocks``,
``follow``, ``assign_ids``, ``static_bd``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..arch.kinds import BD_REGISTER_STRIDE, DMA_KINDS
from ..arch.registers import (
    LOCK_VALUE_BASE,
    LOCK_VALUE_STRIDE,
    START_QUEUE_BASE,
    START_QUEUE_STRIDE,
)
from ..bd.descriptor import decode_image
from .design import Chain, DesignBD, HostBuffer, HostWrite, RuntimeStep, Tile
from .pieces import (
    NotRead,
    ParsedOp,
    attributes,
    direction_of,
    integer,
    integer_list,
    keyword_items,
    memref_type,
    packet_of,
    paren,
    ref,
)
from .syntax import Name, Paren, Ref
from .units import Access, Converted, access_fields, writebd_fields

__all__ = ["RuntimeSequenceReader", "host_written", "no_program"]


class RuntimeSequenceReader:
    """The runtime sequence's operations (mixed into the reader; see the module)."""

    def runtime_sequence(self, op: ParsedOp) -> None:
        for item in paren(op.op):
            if item and isinstance(item[0], Ref) and item[0].sigil == "%":
                try:     # an argument that cannot be read costs only itself
                    shape = memref_type(item, f"runtime argument %{item[0].name}")
                except NotRead as problem:
                    self.warn(op.statement, f"{op.name}: not read: {problem}")
                    continue
                host = HostBuffer(len(self.design.host), item[0].name, shape.element,
                                  shape.dims)
                self.design.host.append(host)
                self.values[item[0].name] = host
        body = op.statement.regions[0] if op.statement.regions else []
        ops = self.sequence_ops(body)
        self.design.runtime += [RuntimeStep(o.name, o.statement.line, o.statement.column,
                                            o.statement.text) for o in ops]
        self.reserve_transfer_ids(ops)
        self.each(ops, self.runtime_handlers())

    def sequence_ops(self, statements: list) -> list[ParsedOp]:
        """The sequence's operations, those of an ``aiex.configure`` of the device read
        in its place (one of another device is a warning: a reconfiguration is not
        run)."""
        ops: list[ParsedOp] = []
        for op in self.operations(statements):
            if op.name != "aiex.configure":
                ops.append(op)
                continue
            target = next((p.name for p in op.op.pieces if isinstance(p, Ref)
                           and p.sigil == "@"), None)
            if target is not None and target == self.device_symbol:
                ops += self.sequence_ops(op.statement.regions[0] if op.statement.regions
                                         else [])
            else:
                self.warn(op.statement, f"aiex.configure: not read: it configures device "
                                        f"@{target}, not the one run (a reconfiguration "
                                        "is not run)")
        return ops

    def reserve_transfer_ids(self, ops: list[ParsedOp]) -> None:
        """The BD numbers the sequence's transfers name (``dma_memcpy_nd``'s ``id``) are
        taken before a task's BDs without ``bd_id`` are numbered, so the two never
        share one (as mlir-aie's numbering of a sequence's BDs)."""
        for op in ops:
            if op.name != "aiex.npu.dma_memcpy_nd":
                continue
            attrs = attributes(op.op)
            symbol = next((p.name for p in attrs.get("metadata", ()) if isinstance(p, Ref)),
                          None)
            if symbol in self.allocations and len(attrs.get("id", ())) == 1 \
                    and isinstance(attrs["id"][0], int):
                self.used_ids.setdefault(self.allocations[symbol][0], set()).add(attrs["id"][0])

    def runtime_handlers(self) -> dict[str, Callable[[ParsedOp], None]]:
        return {
            "aiex.npu.dma_memcpy_nd": self.memcpy_nd,
            "aiex.npu.writebd": self.writebd,
            "aiex.npu.write32": self.write32, "aiex.npu.maskwrite32": self.write32,
            "aiex.npu.blockwrite": self.blockwrite,
            "aiex.npu.address_patch": self.address_patch,
            "aiex.dma_configure_task": self.configure_task,
            "aiex.dma_start_bd_chain": self.start_bd_chain,
            "aiex.dma_configure_task_for": self.configure_task,
            "aiex.dma_start_task": self.start_task,
            "aiex.npu.dma_wait": self.wait_for, "aiex.npu.sync": self.wait_for,
            "aiex.dma_await_task": self.wait_for, "aiex.dma_free_task": no_program,
            "memref.get_global": self.get_global,
        }

    def memcpy_nd(self, op: ParsedOp) -> None:
        """``aiex.npu.dma_memcpy_nd([x, y,] %arg[offsets][sizes][strides]) {id, metadata}``."""
        items = paren(op.op)
        transfer = next((item for item in items if item and isinstance(item[0], Ref)), None)
        if transfer is None or len(transfer) < 4:
            raise NotRead("expected %arg[offsets][sizes][strides]")
        host = self.lookup(transfer[0].name, HostBuffer, "runtime argument")
        offsets, sizes, strides = (integer_list(group, what) for group, what in zip(
            transfer[1:4], ("offsets", "sizes", "strides"), strict=True))
        if not len(offsets) == len(sizes) == len(strides) == 4:
            raise NotRead("offsets, sizes and strides have 4 entries each (outermost first)")
        # (today's mlir-aie writes packet = <pkt_id, pkt_type> among the operands)
        attrs = {**keyword_items(items), **attributes(op.op)}
        symbol = ref(attrs.get("metadata", ()), "@", "metadata")
        if symbol not in self.allocations:
            raise NotRead(f"@{symbol} has no aie.shim_dma_allocation")
        tile, direction, channel = self.allocations[symbol]
        element = sum(o * s for o, s in zip(offsets, strides, strict=True))
        length = sizes[1] * sizes[2] * sizes[3]
        access = Access(element, length, tuple(sizes), tuple(strides))
        converted = access_fields("shim", host.bits, 0, access, direction)
        converted.fields["valid_bd"] = 1
        if "packet" in attrs:
            packet = packet_of(attrs["packet"])
            converted.fields.update(enable_packet=1, packet_type=packet[0],
                                    packet_id=packet[1])
        bd_id = integer(attrs.get("id", (0,)), "id")
        bd = self.make_bd(tile, bd_id, converted, op, host)
        bd.direction, bd.buffer_word = direction, 0
        issue = bool(integer(attrs["issue_token"], "issue_token")) if "issue_token" in attrs \
            else direction == "s2mm"
        self.start(Chain(tile, direction, channel, [bd], max(sizes[0], 1), False, op.name,
                         op.statement.line, op.statement.column, issue))

    def runtime_tile(self, attrs: dict[str, tuple[Any, ...]]) -> Tile:
        column = integer(attrs.get("column", (0,)), "column")
        row = integer(attrs.get("row", (0,)), "row")
        return Tile(column, row, self.device.kind(row))

    def writebd(self, op: ParsedOp) -> None:
        attrs = {name: integer(value, name) for name, value in attributes(op.op).items()}
        tile = self.runtime_tile({k: (v,) for k, v in attrs.items()})
        converted = writebd_fields(tile.kind, attrs)
        host = None
        if "ddr_id" in attrs and tile.kind == "shim":   # the host argument it reads
            if not 0 <= attrs["ddr_id"] < len(self.design.host):
                raise NotRead(f"ddr_id={attrs['ddr_id']}: the runtime sequence has "
                              f"{len(self.design.host)} arguments")
            host = self.design.host[attrs["ddr_id"]]
        design_bd = self.make_bd(tile, attrs.get("bd_id", 0), converted, op, host)
        design_bd.buffer_word = 0

    def register(self, attrs: dict[str, tuple[Any, ...]]) -> tuple[Tile, int]:
        """A register write's tile and its tile-local address (AIE-ML: column in bits
        31:25, row in 24:20 of an array address)."""
        address = integer(attrs["address"], "address")
        if "column" in attrs or "row" in attrs:   # (bits above the tile's own: its place)
            return self.runtime_tile(attrs), address & 0xFFFFF
        column, row = address >> 25 & 0x7F, address >> 20 & 0x1F
        return Tile(column, row, self.device.kind(row)), address & 0xFFFFF

    def write32(self, op: ParsedOp) -> None:
        """``write32`` / ``maskwrite32``: a start-queue write starts the BD it names, a
        write to a lock's value or a word of data memory is made when the sequence
        reaches it; other registers are only listed."""
        attrs = attributes(op.op)
        if "buffer" in attrs:
            raise NotRead("an address inside a buffer (buffer = @...) is not read; give "
                          "the tile's address")
        tile, local = self.register(attrs)
        value = integer(attrs["value"], "value") & 0xFFFF_FFFF
        mask = integer(attrs.get("mask", (0xFFFF_FFFF,)), "mask") & 0xFFFF_FFFF
        for (kind, direction), base in START_QUEUE_BASE.items():
            channel, rest = divmod(local - base, START_QUEUE_STRIDE)
            if kind == tile.kind and rest == 0 and 0 <= channel < DMA_KINDS[kind].channels:
                if mask != 0xFFFF_FFFF:
                    raise NotRead("a masked write to a start queue is not read")
                self.start_written(op, tile, direction, channel, value)
                return
        written = host_written(tile.kind, local)
        if written is not None:
            self.design.schedule.append(("write", HostWrite(
                tile, local, value, mask, op.statement.line, op.statement.column,
                None if written == "memory" else written)))

    def start_written(self, op: ParsedOp, tile: Tile, direction: str, channel: int,
                      value: int) -> None:
        start = value & 0x3F
        repeat = (value >> 16 & 0xFF) + 1
        bds = [b for b in self.design.bds if b.tile == tile and b.bd_id == start]
        if not bds:
            raise NotRead(f"starts BD {start} of {tile}, which no BD before it writes")
        chain = self.chain_from(tile, bds[-1])
        for design_bd in chain[0]:
            design_bd.direction = direction
        self.start(Chain(tile, direction, channel, chain[0], repeat, chain[1], op.name,
                         op.statement.line, op.statement.column, bool(value >> 31)))

    def chain_from(self, tile: Tile, first: DesignBD) -> tuple[list[DesignBD], bool]:
        """The BDs a channel runs from ``first``, following ``next_bd`` (the latest write
        of each BD number)."""
        latest = {b.bd_id: b for b in self.design.bds if b.tile == tile}
        order, seen, current = [], set(), first
        while current is not None and current.bd_id not in seen:
            seen.add(current.bd_id)
            order.append(current)
            fields = current.fields
            current = latest.get(fields.get("next_bd", -1)) if fields.get("use_next_bd") \
                else None
        return order, current is not None

    def get_global(self, op: ParsedOp) -> None:
        symbol = ref([p for p in op.op.pieces if isinstance(p, Ref)], "@", "the global")
        self.define(op, ("global", symbol))

    def blockwrite(self, op: ParsedOp) -> None:
        """A block write of a whole BD's words to its registers is read as that BD."""
        data = self.values.get(ref(paren(op.op)[0], "%", "the data"))
        if not (isinstance(data, tuple) and data[1] in self.globals):
            raise NotRead("its data is not a memref.global of integers")
        words = self.globals[data[1]]
        tile, local = self.register(attributes(op.op))
        dma = DMA_KINDS[tile.kind]
        bd_id, rest = divmod(local - dma.bd_register_base, BD_REGISTER_STRIDE)
        if rest or not 0 <= bd_id < dma.bd_count or len(words) != dma.words:
            return      # not a whole BD: another register block, only listed
        image = decode_image(tile.kind, words)
        converted = Converted(dict(image.values), problems=list(image.problems))
        design_bd = self.make_bd(tile, bd_id, converted, op, None)
        design_bd.fields = dict(image.values)

    def address_patch(self, op: ParsedOp) -> None:
        """``{addr, arg_idx, arg_plus}``: the shim BD at ``addr`` reads host argument
        ``arg_idx`` from byte ``arg_plus``."""
        attrs = attributes(op.op)
        tile, local = self.register({"address": attrs["addr"]})
        dma = DMA_KINDS["shim"]
        bd_id, rest = divmod(local - dma.bd_register_base, BD_REGISTER_STRIDE)
        index = integer(attrs["arg_idx"], "arg_idx")
        plus = integer(attrs.get("arg_plus", (0,)), "arg_plus")
        if rest != 4 or tile.kind != "shim":
            raise NotRead(f"addr is not the address word of a shim BD ({tile}, "
                          f"0x{local:05X})")
        if not 0 <= index < len(self.design.host):
            raise NotRead(f"arg_idx={index}: the runtime sequence has "
                          f"{len(self.design.host)} arguments")
        matches = [b for b in self.design.bds if b.tile == tile and b.bd_id == bd_id]
        if not matches:
            raise NotRead(f"patches BD {bd_id} of {tile}, which no BD before it writes")
        target = matches[-1]
        converted = Converted({**target.fields, "base_address": plus // 4})
        if plus % 4:
            converted.problem("arg_plus", plus, "a byte offset must be a multiple of 4")
        self.design.bds.remove(target)
        patched = self.make_bd(tile, bd_id, converted, op, self.design.host[index],
                               origin=target.origin + " + address_patch")
        patched.line, patched.column = target.line, target.column
        patched.direction, patched.buffer_word = target.direction, 0

    def configure_task(self, op: ParsedOp) -> None:
        """``%t = aiex.dma_configure_task(%tile, MM2S, 0) { BDs } {repeat_count, issue_token}``
        (or ``_for @allocation``)."""
        if op.name.endswith("_for"):
            symbol = ref([p for p in op.op.pieces if isinstance(p, Ref)], "@", "the allocation")
            if symbol not in self.allocations:
                raise NotRead(f"@{symbol} has no aie.shim_dma_allocation")
            tile, direction, channel = self.allocations[symbol]
        else:
            items = paren(op.op)
            tile = self.lookup(ref(items[0], "%", "the tile"), Tile, "tile")
            direction = direction_of(items[1])
            channel = integer(items[2], "the channel")
        chain = self.task_chain(op, op.statement.regions[0] if op.statement.regions else [],
                                tile, direction, channel)
        if op.op.results:
            self.tasks[op.op.results[0]] = chain

    def start_bd_chain(self, op: ParsedOp) -> None:
        """``%t = aiex.dma_start_bd_chain @c(%a, %b) : (types) on (%tile, MM2S, 0)``: the
        ``aie.bd_chain @c(%x, %y)``'s BDs with its arguments as those buffers, a task
        configured and started."""
        symbol = ref([p for p in op.op.pieces if isinstance(p, Ref)], "@", "the chain")
        if symbol not in self.bd_chains:
            raise NotRead(f"@{symbol} is not an aie.bd_chain of this device")
        params, body = self.bd_chains[symbol]
        groups = [p for p in op.op.pieces if isinstance(p, Paren)]
        at = next((k for k, p in enumerate(op.op.pieces)
                   if isinstance(p, Name) and p.text == "on"), None)
        if at is None or at + 1 >= len(op.op.pieces) or not groups:
            raise NotRead("expected @chain(%args) : (types) on (%tile, direction, channel)")
        args = [ref(item, "%", "an argument") for item in groups[0].items]
        if len(args) != len(params):
            raise NotRead(f"@{symbol} takes {len(params)} arguments, not {len(args)}")
        target = op.op.pieces[at + 1].items
        tile = self.lookup(ref(target[0], "%", "the tile"), Tile, "tile")
        saved = {name: self.values.get(name) for name in params}
        self.values.update({name: self.values.get(arg) for name, arg in zip(params, args,
                                                                             strict=True)})
        try:
            chain = self.task_chain(op, body, tile, direction_of(target[1]),
                                    integer(target[2], "the channel"))
        finally:
            self.values.update(saved)
        if op.op.results:
            self.tasks[op.op.results[0]] = chain
        self.start(chain)

    def task_chain(self, op: ParsedOp, body: list, tile: Tile, direction: str,
                   channel: int) -> Chain:
        """The chain of a task's BD blocks (``body``), with the op's ``repeat_count`` and
        ``issue_token``."""
        attrs = attributes(op.op)
        repeat = integer(attrs.get("repeat_count", (0,)), "repeat_count") + 1
        issue = bool(integer(attrs.get("issue_token", (0,)), "issue_token"))
        blocks = self.blocks(body)
        bd_blocks = self.bd_blocks(blocks)
        start_label = next(iter(bd_blocks), "")    # the first block that holds a BD
        order = self.follow({b.label: b for b in blocks}, bd_blocks, start_label, op)
        self.assign_ids(tile, [(channel, order)])
        bds = [self.static_bd(tile, b, bd_blocks, direction, channel) for b in order]
        loops = bool(order) and order[-1].next_label in bd_blocks
        return Chain(tile, direction, channel, bds, repeat, loops, op.name,
                     op.statement.line, op.statement.column, issue)

    def start_task(self, op: ParsedOp) -> None:
        name = ref(paren(op.op)[0], "%", "the task")
        if name not in self.tasks:
            raise NotRead(f"%{name} is not a configured task")
        self.start(self.tasks[name])

    def start(self, chain: Chain) -> None:
        """A chain the runtime sequence starts, in its order."""
        self.design.chains.append(chain)
        self.design.schedule.append(("start", chain))

    def wait_for(self, op: ParsedOp) -> None:
        """``dma_wait {symbol}``, ``sync {column, row, direction, channel}`` or
        ``dma_await_task(%t)``: the sequence goes on when that channel's task is done."""
        attrs = attributes(op.op)
        if op.name == "aiex.npu.dma_wait":
            symbol = ref(attrs["symbol"], "@", "symbol")
            if symbol not in self.allocations:
                raise NotRead(f"@{symbol} has no aie.shim_dma_allocation")
            tile, direction, channel = self.allocations[symbol]
        elif op.name == "aiex.npu.sync":
            tile = self.runtime_tile(attrs)
            # mlir-aie's DMAChannelDir: S2MM is 0, MM2S is 1
            direction = ("s2mm", "mm2s")[integer(attrs["direction"], "direction") & 1]
            channel = integer(attrs["channel"], "channel")
        else:
            name = ref(paren(op.op)[0], "%", "the task")
            if name not in self.tasks:
                raise NotRead(f"%{name} is not a configured task")
            task = self.tasks[name]
            tile, direction, channel = task.tile, task.direction, task.channel
        self.design.schedule.append(("wait", (tile, direction, channel)))


def host_written(kind: str, address: int) -> int | str | None:
    """What a host write to tile-local byte ``address`` of a ``kind`` tile reaches, of
    what a run models: a lock's value register (its lock ID), a word of the tile's data
    memory (``"memory"``), or neither (None)."""
    dma = DMA_KINDS[kind]
    lock, rest = divmod(address - LOCK_VALUE_BASE[kind], LOCK_VALUE_STRIDE)
    if rest == 0 and 0 <= lock < dma.locks:
        return lock
    in_memory = dma.memory_words is not None and 0 <= address < 4 * dma.memory_words
    return "memory" if in_memory and address % 4 == 0 else None


def no_program(op: ParsedOp) -> None:
    """A runtime step the reader lists but that programs no BD (waits, frees)."""
