"""Run a read mlir-aie design's DMA program on the system model (docs/mlir.md "Run").

Every tile with a chain gets a :class:`~aiedma.model.system.dma.DMA` with its
memory and its locks at their ``init`` values; every ``aie.flow`` between two DMAs is a
stream; every chain (``dma_start``, task, runtime transfer) is queued on its channel;
the runtime sequence's host buffers are one external memory, the ones the shim reads
filled with a ramp (or the caller's data). The run goes on until nothing is left or
nothing can move; if a finite task (a runtime transfer or task, a chain that does not
loop) is left then, the run *hangs* and the result names every waiting channel and core
with its BD, the lock, its value and what it wants.

Decisions:

* **decision**: a chain that loops back on itself (``aie.next_bd`` to an earlier
  block, as ``aie.mem`` programs do) runs as a task of :data:`LOOP_PASSES` passes over
  its BDs; once the finite tasks are done, such channels waiting for more data are the
  normal end, not a hang.
* **decision**: the device's own chains (``aie.mem``, ``aie.memtile_dma``,
  ``aie.shim_dma``) are queued before the first cycle; the runtime sequence then runs in
  its order: a transfer or task writes its BDs and is queued when the sequence reaches
  it (waiting while its channel's queue is full), and ``dma_wait`` / ``sync`` /
  ``dma_await_task`` wait until that channel has finished its tasks.
* **decision**: each ``aie.core`` runs as a :class:`~.core.CoreAgent` (its locks and
  buffer copies, :mod:`.core`); it is not a finite task: a core looping for ever that
  waits for data once the host's transfers are done is the normal end.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..arch.dtypes import WORD_BITS
from ..arch.kinds import DMA_KINDS
from ..bd.task import REPEAT_COUNT_MAX, Task
from ..system.channel import TASK_QUEUE_DEPTH, Channel
from ..system.dma import DMA
from ..system.locks import LOCK_VALUE_MAX, LOCKS_PER_TILE, LockTable, lock_space
from ..system.memory import Memory, memory_tile_space, shim_space
from ..system.scheduler import DeadlockError, SystemReport, SystemRun
from ..system.stream import PacketMerge, PacketSplit, Stream
from .core import CoreAgent, CoreLoop, CoreProgram, CoreStep
from .design import (
    Buffer,
    Chain,
    Flow,
    HostBuffer,
    HostWrite,
    MlirDesign,
    MlirError,
    Tile,
)

__all__ = ["LOOP_PASSES", "MlirRun", "host_ramp", "run_design"]

LOOP_PASSES = REPEAT_COUNT_MAX
"""Passes a looping chain runs (the most a task's repeat count holds)."""


@dataclass
class MlirRun:
    """What a run did.

    Attributes
    ----------
    host : dict of str to numpy.ndarray
        Every host buffer's words (uint32) after the run, by argument name.
    written : list of str
        The host buffers a shim wrote (the design's outputs).
    report : SystemReport
    hang : DeadlockError or None
        Set when a finite task could not finish; its ``waits`` name every waiting
        channel, its BD and lock.
    unfinished : list of str
        The channels whose finite tasks were left (empty unless it hangs).
    copies : dict of str to int
        Buffer copies each core made.
    """

    host: dict[str, np.ndarray]
    written: list[str]
    report: SystemReport
    hang: DeadlockError | None = None
    unfinished: list[str] = field(default_factory=list)
    copies: dict[str, int] = field(default_factory=dict)


def host_ramp(host: HostBuffer) -> np.ndarray:
    """The default input: element ``k`` holds ``k``, packed into words (little-endian)."""
    count = int(np.prod(host.shape, dtype=np.int64)) if host.shape else 1
    bits = host.bits
    if bits == 4:
        nibbles = np.arange(count, dtype=np.uint32) & 0xF
        nibbles = np.concatenate([nibbles, np.zeros(-count % 8, dtype=np.uint32)])
        return (nibbles.reshape(-1, 8) << (4 * np.arange(8, dtype=np.uint32))).sum(
            axis=1, dtype=np.uint64).astype(np.uint32)
    ramp = np.arange(count, dtype=np.uint64).astype(np.dtype(f"uint{bits}"))
    padded = np.concatenate([ramp, np.zeros(-count % max(WORD_BITS // bits, 1),
                                            dtype=ramp.dtype)])
    return padded.view(np.uint32)


def _host_words(host: HostBuffer) -> int:
    count = int(np.prod(host.shape, dtype=np.int64)) if host.shape else 1
    return -(-count * host.bits // WORD_BITS)


def run_design(design: MlirDesign, inputs: Mapping[str, np.ndarray] | None = None,
               max_cycles: int = 10_000_000) -> MlirRun:
    """Run the DMA program of ``design``.

    Parameters
    ----------
    design : MlirDesign
    inputs : mapping of str to numpy.ndarray, optional
        Words of host buffers by argument name (default: a ramp for every buffer a shim
        reads).
    max_cycles : int

    Raises
    ------
    MlirError
        If a chain's BD breaks a rule, a running channel has no flow, or a host buffer
        given does not fit.
    """
    chains = [c for c in design.chains if c.bds]
    for chain in chains:
        for design_bd in chain.bds:
            if design_bd.bd is None:
                raise MlirError(f"{design_bd.title()} breaks a rule ({design_bd.problems[0]}); "
                                "aiedma bd shows every one")
    host, bases, written = _host_memory(design, chains, inputs or {})
    dmas, tables = _dmas(design, chains, host)
    _connect(design, dmas)
    switches = _packet_switches(design, dmas)
    channels = list({id(c): c for c in (
        dmas[chain.tile].channel(chain.direction, chain.channel) for chain in chains)
    }.values())
    for channel in channels:
        if getattr(channel, "stream", None) is None:
            raise MlirError(f"channel {channel.name} has a task but no flow between DMA "
                            "channels carries its stream (aie.flow, aie.packet_flow or a "
                            "routed switchbox; a core's, trace or control port is not run)")
    started = {id(chain) for event, chain in design.schedule if event == "start"}
    finite: list[Channel] = []
    for chain in chains:                 # the device's own programs run from the start
        if id(chain) not in started:
            _start(dmas, chain, bases, finite)
    cores = [_core_agent(design, program, dmas, tables) for program in design.cores]
    run = SystemRun([*channels, *switches, *cores], max_cycles, exact=False)
    hang, unfinished = None, []
    try:
        for event, item in design.schedule:
            if event == "start" and not item.bds:
                continue     # none of its BDs could be read: a warning says why
            if event == "start":
                channel = dmas[item.tile].channel(item.direction, item.channel)
                while len(channel.queue) >= TASK_QUEUE_DEPTH or _still_to_start(
                        dmas[item.tile], item):
                    run.advance()
                _start(dmas, item, bases, finite)
            elif event == "write":
                _host_write(dmas, tables, item)
            elif item[0] in dmas:
                awaited = dmas[item[0]].channel(item[1], item[2])
                while awaited.busy:
                    run.advance()
        while run.busy:                  # until all is done, or nothing more can move
            run.advance()
    except DeadlockError as error:
        unfinished = [c.name for c in dict.fromkeys(finite) if c.busy]
        if unfinished:
            hang = error
    report = run.report()
    words = {h.name: host.data[bases[h.name]:bases[h.name] + _host_words(h)].copy()
             for h in design.host}
    return MlirRun(words, written, report, hang, unfinished,
                   {core.name: core.copies for core in cores})


def _host_write(dmas: Mapping[Tile, DMA], tables: Mapping[Tile, LockTable],
                write: HostWrite) -> None:
    """A runtime sequence's write to a lock's value (its low 6 bits, as the register
    keeps) or a data memory word, made when the sequence reaches it; a tile the run
    does not use is left alone."""
    dma = dmas.get(write.tile)
    if dma is None:
        return
    if write.lock is not None:
        table = tables[write.tile]
        table.set(write.lock, (table[write.lock] & ~write.mask | write.value & write.mask)
                  & LOCK_VALUE_MAX)
        return
    memory, offset = _own_word(dma, write.address)
    old = memory.read(offset)
    memory.write(offset, old & ~write.mask | write.value & write.mask)


def _still_to_start(dma: DMA, chain: Chain) -> bool:
    """Whether a task queued on ``dma`` still waits to start at a BD that ``chain``
    writes again (decision: the host's writes reach the tile long after a channel with
    room takes its task, so a BD number used again by the runtime sequence is written
    once the task before it has taken its first BD, as on the hardware)."""
    ids = {design_bd.bd_id for design_bd in chain.bds}
    return any(task.start_bd in ids for channel in dma.channels for task in channel.queue)


def _start(dmas: Mapping[Tile, DMA], chain: Chain, bases: Mapping[str, int],
           finite: list[Channel]) -> None:
    """Write a chain's BDs and queue its task (a looping chain: :data:`LOOP_PASSES`)."""
    channel = dmas[chain.tile].channel(chain.direction, chain.channel)
    _load_chain(dmas[chain.tile], chain, bases)
    repeat = LOOP_PASSES if chain.loops else chain.repeat
    channel.push(Task(chain.bds[0].bd_id, repeat, chain.issue_token))
    if not chain.loops:
        finite.append(channel)


def _host_memory(design: MlirDesign, chains: list[Chain], inputs: Mapping[str, np.ndarray]
                 ) -> tuple[Memory, dict[str, int], list[str]]:
    """One external memory holding every host buffer, one after the other."""
    bases, total = {}, 0
    for host in design.host:
        bases[host.name] = total
        total += _host_words(host)
    memory = Memory("host memory", max(total, 1))
    read = {b.buffer.name for c in chains if c.tile.kind == "shim" and c.direction == "mm2s"
            for b in c.bds if isinstance(b.buffer, HostBuffer)}
    written = [h.name for h in design.host if any(
        c.tile.kind == "shim" and c.direction == "s2mm" and b.buffer is h
        for c in chains for b in c.bds)]
    for host in design.host:
        data = inputs.get(host.name)
        if data is None and host.name in read:
            data = host_ramp(host)
        if data is None:
            continue
        data = np.asarray(data, dtype=np.uint32).ravel()
        if data.size > _host_words(host):
            raise MlirError(f"input {host.name}: {data.size} words; the buffer holds "
                            f"{_host_words(host)}")
        memory.load(bases[host.name], data)
    return memory, bases, written


def _dmas(design: MlirDesign, chains: list[Chain], host: Memory
          ) -> tuple[dict[Tile, DMA], dict[Tile, LockTable]]:
    dmas: dict[Tile, DMA] = {}
    tables: dict[Tile, LockTable] = {}
    tiles = list(dict.fromkeys([c.tile for c in chains]
                               + [t for f in design.flows for t in (f.source, f.dest)]
                               + [t for f in design.packet_flows
                                  for t, _ in (*f.sources, *f.dests)]
                               + [design.tiles[p.tile] for p in design.cores]))
    for tile in tiles:
        name = f"{tile.kind}({tile.column},{tile.row})"
        initial = {lock.id: lock.init for lock in design.locks.values() if lock.tile == tile}
        table = LockTable(f"{name} locks", LOCKS_PER_TILE[tile.kind], initial)
        locks = lock_space(tile.kind, name, table)
        memory = (shim_space(name, host) if tile.kind == "shim"
                  else memory_tile_space(name) if tile.kind == "memtile" else None)
        dmas[tile] = DMA(tile.kind, tile.column, tile.row, memory=memory, locks=locks,
                         name=name)
        tables[tile] = table
    for buffer in design.buffers.values():
        if buffer.initial and buffer.tile in dmas:
            _load_initial(dmas[buffer.tile], buffer)
    return dmas, tables


def _load_initial(dma: DMA, buffer: Buffer) -> None:
    """A buffer's ``dense<...>`` initial value into its tile's memory, its elements
    packed into words as the core writes them (little-endian)."""
    dtype = np.dtype(f"{'u' if buffer.element.startswith('ui') else ''}int{buffer.bits}")
    data = np.zeros(-(-buffer.bytes // 4) * 4, dtype=np.uint8)
    raw = np.asarray(buffer.initial, dtype=np.int64).astype(dtype).view(np.uint8)
    data[:raw.size] = raw
    memory, offset = _own_word(dma, buffer.address)
    memory.load(offset, data.view("<u4"))


def _own_word(dma: DMA, address: int) -> tuple[Memory, int]:
    """The memory and word of the tile's own byte ``address`` (a memory tile's own
    memory is its window ``own`` of its DMA's addresses)."""
    start = address // 4
    if dma.kind == "memtile":
        start += DMA_KINDS["memtile"].memory_window("own").start
    return dma.memory.resolve(start)


def _core_agent(design: MlirDesign, program: CoreProgram, dmas: Mapping[Tile, DMA],
                tables: Mapping[Tile, LockTable]) -> CoreAgent:
    """The agent of one ``aie.core``, on its tile's memory and locks."""
    tile = design.tiles[program.tile]
    name = f"core({tile.column},{tile.row})"
    lock_ids = {}
    for key, lock in design.locks.items():
        if lock.tile == tile:
            lock_ids[key] = lock.id
    buffers = {key: (b.address // 4, -(-b.bytes // 4)) for key, b in design.buffers.items()
               if b.tile == tile}
    for step in _all_steps(program.body):
        used = step.lock or step.source
        if used and used not in lock_ids and used not in buffers:
            raise MlirError(f"aie.core of {tile} at {step.line}:{step.column} uses %{used} "
                            "of another tile; a core is followed on its own tile's locks and "
                            "memory")
    memory = dmas[tile].memory.resolve(0)[0]
    return CoreAgent(name, program, tables[tile], lock_ids, memory, buffers)


def _all_steps(body: Sequence[CoreStep | CoreLoop]) -> Iterator[CoreStep]:
    """Every step written in a program, each once (loops not unrolled)."""
    for item in body:
        if isinstance(item, CoreLoop):
            yield from _all_steps(item.body)
        else:
            yield item


def _load_chain(dma: DMA, chain: Chain, bases: Mapping[str, int]) -> None:
    """Write the chain's BDs; a looping chain's last BD ends the pass instead."""
    for k, design_bd in enumerate(chain.bds):
        bd = design_bd.bd
        if isinstance(design_bd.buffer, HostBuffer) and chain.tile.kind == "shim":
            bd = bd.replace(base_address=bd.base_address + bases[design_bd.buffer.name])
        if chain.loops and k == len(chain.bds) - 1:
            bd = bd.replace(use_next_bd=0, next_bd=0)
        dma.write_bd(design_bd.bd_id, bd)


def _connect(design: MlirDesign, dmas: Mapping[Tile, DMA]) -> None:
    """One stream a flow.

    Raises
    ------
    MlirError
        For two flows from one MM2S channel (a broadcast is not run).
    """
    sources: dict[tuple[Tile, int], Flow] = {}
    for flow in design.flows:
        first = sources.setdefault((flow.source, flow.source_channel), flow)
        if first is not flow:
            raise MlirError(f"aie.flow at {flow.line}:{flow.column} and at {first.line}:"
                            f"{first.column}: two flows from {flow.source}'s MM2S "
                            f"{flow.source_channel} (a broadcast is not run)")
    for flow in design.flows:
        source = dmas[flow.source].channel("mm2s", flow.source_channel)
        dest = dmas[flow.dest].channel("s2mm", flow.dest_channel)
        stream = Stream(f"{source.name}->{dest.name}")
        source.connect(stream)
        dest.connect(stream)


def _packet_switches(design: MlirDesign, dmas: Mapping[Tile, DMA]) -> list:
    """The stream switches of the packet flows, as agents: each sending channel's
    packets routed by header ID (a :class:`~..system.stream.PacketSplit`), the packets
    for one receiving channel interleaved whole (a :class:`~..system.stream.PacketMerge`),
    and its header dropped there unless the flow keeps it (``keep_pkt_header``).

    Raises
    ------
    MlirError
        For a packet flow to more than one DMA channel (a multicast is not run).
    """
    routes: dict[tuple[Tile, int], dict[int, tuple[Tile, int]]] = {}
    keep: dict[tuple[Tile, int], bool] = {}
    for flow in design.packet_flows:
        if len(flow.dests) > 1:
            raise MlirError(f"aie.packet_flow({flow.packet_id}) at {flow.line}:{flow.column} "
                            f"sends to {len(flow.dests)} DMA channels: a multicast packet "
                            "flow is not run")
        for source in flow.sources:
            routes.setdefault(source, {})[flow.packet_id] = flow.dests[0]
        keep[flow.dests[0]] = keep.get(flow.dests[0], False) or flow.keep_header
    agents: list = []
    arriving: dict[tuple[Tile, int], list[tuple[int, Stream]]] = {}
    for (tile, number), by_id in routes.items():
        channel = dmas[tile].channel("mm2s", number)
        sent = Stream(f"{channel.name}->switch")
        channel.connect(sent)
        legs = {packet_id: Stream(f"{channel.name}->packet {packet_id}") for packet_id in by_id}
        agents.append(PacketSplit(f"{channel.name} packet switch", sent, legs))
        for packet_id, dest in by_id.items():
            arriving.setdefault(dest, []).append((packet_id, legs[packet_id]))
    for (tile, number), legs in arriving.items():
        channel = dmas[tile].channel("s2mm", number)
        merged = legs[0][1]
        if len(legs) > 1:
            merged = Stream(f"switch->{channel.name} merged")
            agents.append(PacketMerge(f"{channel.name} packet merge",
                                      [leg for _, leg in legs], merged))
        into = Stream(f"switch->{channel.name}")
        agents.append(PacketSplit(f"{channel.name} packet port", merged,
                                  dict.fromkeys((packet_id for packet_id, _ in legs), into),
                                  drop_header=not keep[tile, number]))
        channel.connect(into)
    return agents
