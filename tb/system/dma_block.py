"""A whole RTL DMA (:class:`~aiedma.hdl.dma.DMA`) inside the system model, in place of
the model DMA's channels.

:class:`RtlDmaAgent` is one scheduler agent standing for every channel of a model DMA
that has work: the block is loaded through its register port (the DMA's BD table, its
channels' queued tasks and its locks: ``program_writes``) before cycle 0, then each
cycle its channels meet the system model's streams and memory, in the order the model
channels stood in the agent list. Its locks are its own (the RTL lock unit), so the
run checks them too: after the run they are read back through the register port.
A memory-tile BD that names a neighbour's lock goes out on the block's neighbour port
and is answered by the model's lock space.

:func:`run_rtl_dma` runs a system with the block in place of the channels; the same
system without it is the reference (``tb/system/dma_check.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from ...hdl.dma import DMA
from ...model.arch.kinds import DEFAULT_ROW, DMA_KINDS
from ...model.arch.registers import lock_value_address, status_address
from ...model.system.registers import RegisterWriter, program_writes
from ...model.system.scheduler import Agent, Stall, SystemReport, SystemRun
from ...model.system.stream import Beat
from ..common.reset_sim import ResetSimulation

__all__ = ["RtlDmaAgent", "run_rtl_dma"]

_SIGNED = {"value"}          # lock values are two's complement (7 bits)
_LOCK_VALUE_BITS = 7


class _AmaranthPorts:
    """The block's ports on Amaranth's simulator, by dotted path (``mm2s.0.o.valid``)."""

    def __init__(self, dut: DMA) -> None:
        self.dut, self.ctx = dut, None

    def _signal(self, path: str) -> Any:
        value = self.dut
        for part in path.split("."):
            value = value[int(part)] if part.isdigit() else getattr(value, part)
        return value

    def set(self, path: str, value: int) -> None:
        self.ctx.set(self._signal(path), value)

    def get(self, path: str) -> int:
        return self.ctx.get(self._signal(path))

    def set_beat(self, path: str, data: int, last: bool) -> None:
        payload = self._signal(path)
        self.ctx.set(payload.data, data)
        self.ctx.set(payload.last, last)

    def get_beat(self, path: str) -> tuple[int, bool]:
        payload = self._signal(path)
        return self.ctx.get(payload.data), bool(self.ctx.get(payload.last))


class AmaranthBlock(ResetSimulation):
    """One DMA block on Amaranth's simulator, elaborated once per placement and reset
    between runs (:class:`~..common.reset_sim.ResetSimulation`): elaborating a 12-channel
    block costs seconds, a random program runs a few dozen cycles."""

    cache: ClassVar[dict[tuple, AmaranthBlock]] = {}

    def __init__(self, kind: str, column: int, row: int, compression: bool = True,
                 allowed: Any = None) -> None:
        super().__init__(DMA(kind, column, row, compression=compression, allowed=allowed))

    @classmethod
    def of(cls, kind: str, column: int, row: int, compression: bool = True,
           allowed: Any = None, *, reuse: bool) -> AmaranthBlock:
        """The block at this placement (built with or without the (de)compressors, with
        its ``allowed`` window or none): elaborated now, or with ``reuse`` the one
        elaborated before (a test that patches the RTL must not get an older one)."""
        key = (kind, column, row, compression, allowed)
        if not reuse:
            return cls(*key)
        if key not in cls.cache:
            cls.cache[key] = cls(*key)
        return cls.cache[key]

    @classmethod
    def shared(cls, kind: str, compression: bool = True) -> AmaranthBlock:
        """The block of ``kind`` at the row runs place it on (``DEFAULT_ROW``), elaborated
        once in this process and shared by every caller that runs its own testbench on
        it (tests of the register port, the status, the control register)."""
        return cls.of(kind, 0, DEFAULT_ROW[kind], compression, reuse=True)

    def forget(self) -> None:
        for key in [k for k, v in self.cache.items() if v is self]:
            del self.cache[key]


class _VerilatorPorts:
    """The block's ports on a Verilated model in this process."""

    def __init__(self, top: str, kind: str, column: int, row: int,
                 compression: bool = True, allowed: Any = None) -> None:
        from .loop_verilator import VerilatedTop
        self.top = VerilatedTop(top, lambda: DMA(kind, column, row, compression=compression,
                                                 allowed=allowed))

    def set(self, path: str, value: int) -> None:
        self.top.set(path.replace(".", "__"), int(value) & ((1 << 64) - 1))

    def get(self, path: str) -> int:
        value = self.top.get(path.replace(".", "__"))
        if path.rsplit(".", 1)[-1] in _SIGNED and value >> (_LOCK_VALUE_BITS - 1):
            value -= 1 << _LOCK_VALUE_BITS
        return value

    def set_beat(self, path: str, data: int, last: bool) -> None:
        self.set(path, (data & 0xFFFF_FFFF) | int(last) << 32)

    def get_beat(self, path: str) -> tuple[int, bool]:
        value = self.top.get(path.replace(".", "__"))
        return value & 0xFFFF_FFFF, bool(value >> 32)

    def edge(self) -> None:
        self.top.edge()


class RtlDmaAgent:
    """A system agent running a whole RTL DMA in place of a model DMA's channels.

    Parameters
    ----------
    dma : DMA
        The model DMA whose table, queues and locks the block is loaded with, and whose
        memory and neighbour locks it uses.
    channels : sequence of Channel
        The model channels with work, in the order they stood in the agent list (their
        memory accesses within a cycle happen in this order, as theirs did).
    simulator : {"amaranth", "verilator"}
    """

    def __init__(self, dma: Any, channels: Sequence[Any], simulator: str = "amaranth",
                 reuse: bool = False, timed_writes: Sequence[Sequence[int]] = ()) -> None:
        self.model, self.channels = dma, list(channels)
        self.timed: dict[int, tuple[int, int | None]] = {}
        for cycle, address, value in timed_writes:
            if int(cycle) in self.timed:
                raise ValueError(f"timed_writes: two writes in cycle {cycle}; the register "
                                 "port takes one a cycle")
            self.timed[int(cycle)] = (int(address), None if value is None else int(value))
        self.reads: list[tuple[int, int, int]] = []   # (cycle, address, word) of timed reads
        self._read: tuple[int, int] | None = None      # a read in the last cycle
        self._last_write = max(self.timed, default=-1)
        self.name = f"{dma.name}.rtl"
        # The block is built as the model DMA is: with or without the (de)compressors,
        # with its window or none.
        where = (dma.kind, dma.column, dma.row, dma.compression, dma.allowed)
        if simulator == "amaranth":
            self.simulation = AmaranthBlock.of(*where, reuse=reuse)
            self.dut = self.simulation.dut
            self.ports_ = _AmaranthPorts(self.dut)
        elif simulator == "verilator":
            self.dut = None
            top = "aiedma_dma_{}_c{}_r{}".format(*where) + ("" if dma.compression
                                                             else "_nocompress")
            if dma.allowed is not None:
                top += f"_allow{dma.allowed.start:x}_{dma.allowed.words:x}"
            self.ports_ = _VerilatorPorts(top, *where)
        else:
            raise ValueError(f"simulator={simulator!r}: must be amaranth or verilator")
        self.writes = program_writes(dma)
        self.tokens: dict[str, list[int]] = {self._name(c): [] for c in self.channels}
        # The controller ID each token carried (the block's token_controller then).
        self.token_controllers: dict[str, list[int]] = {self._name(c): []
                                                        for c in self.channels}
        self.words = 0
        # The cycles the block's error output is high: a channel's error register (a BD
        # that is not valid; the model's status error_bd_invalid) or the lock unit's.
        self.error_cycles: list[int] = []
        self._reads = {self._name(c): 0 for c in self.channels}
        self._releases: list[tuple[int, int]] = []
        self._cycle = -1
        self._neighbours = 2 * DMA_KINDS[dma.kind].channels if len(
            DMA_KINDS[dma.kind].windows) > 1 else 0
        # The neighbours' lock units, by the contract's rules as the DMA's own unit's
        # (docs/cycle.md "Lock requests"): an acquire request is tested in one cycle
        # and may be granted in the next; a release is chosen in one cycle and applied
        # at the end of the next; each grant register shows in the cycle after.
        self._acquire_tested = [False] * self._neighbours
        self._acquire_shown = [False] * self._neighbours
        self._release_applying: list[tuple[int, int] | None] = [None] * self._neighbours
        self._release_shown = [False] * self._neighbours

    @staticmethod
    def _name(channel: Any) -> str:
        return f"{channel.direction}{channel.index}"

    @staticmethod
    def _path(channel: Any) -> str:
        return f"{channel.direction}.{channel.index}"

    @property
    def busy(self) -> bool:
        return bool(self.ports_.get("busy")) or self._cycle < self._last_write

    def ports(self) -> tuple:
        return tuple(c.stream for c in self.channels)

    def step(self, cycle: int) -> Stall | None:
        port, dma = self.ports_, self.model
        self._cycle = cycle
        self._collect_read()
        write = self.timed.get(cycle)     # lands at the end of the cycle, as the model's
        reading = write is not None and write[1] is None
        port.set("reg_write", write is not None and not reading)
        port.set("reg_read", reading)
        if write is not None:
            port.set("reg_addr", write[0])
            port.set("reg_wdata", write[1] or 0)
        if reading:
            self._read = (cycle, write[0])
        for channel in self.channels:     # inputs first: streams change only at commit
            path, stream = self._path(channel), channel.stream
            if channel.is_mm2s:
                port.set(f"{path}.o.ready", stream.can_push())
                port.set(f"{path}.mem_data", self._reads[self._name(channel)])
            else:
                valid = stream.can_pop()
                port.set(f"{path}.i.valid", valid)
                beat = stream.peek() if valid else Beat(0, False)
                port.set_beat(f"{path}.i.payload", beat.data, beat.last)
        for k in range(self._neighbours):
            shown = self._acquire_shown[k]
            port.set(f"neighbour_acquire.{k}.grant", shown)
            asking = not shown and bool(port.get(f"neighbour_acquire.{k}.request"))
            self._acquire_shown[k] = bool(
                asking and self._acquire_tested[k]
                and dma.locks.try_acquire(port.get(f"neighbour_acquire.{k}.lock_id"),
                                          port.get(f"neighbour_acquire.{k}.value"),
                                          self.name, cycle, settled=True))
            self._acquire_tested[k] = asking
        moved = 0
        for channel in self.channels:
            path, stream, name = self._path(channel), channel.stream, self._name(channel)
            if channel.is_mm2s:
                if port.get(f"{path}.o.valid") and stream.can_push():
                    stream.push(Beat(*port.get_beat(f"{path}.o.payload")))
                    moved += 1
                if port.get(f"{path}.mem_en"):
                    self._reads[name] = dma.memory.read(port.get(f"{path}.mem_addr"), name)
            else:
                if stream.can_pop() and port.get(f"{path}.i.ready"):
                    stream.pop()
                    moved += 1
                if port.get(f"{path}.mem_we"):
                    dma.memory.write(port.get(f"{path}.mem_addr"),
                                     port.get(f"{path}.mem_data"), name)
            if port.get(f"{path}.token"):
                self.tokens[name].append(cycle)
                self.token_controllers[name].append(port.get(f"{path}.token_controller"))
        for k in range(self._neighbours):
            port.set(f"neighbour_release.{k}.grant", self._release_shown[k])
            applying = self._release_applying[k]
            asking = bool(port.get(f"neighbour_release.{k}.request"))
            # Chosen last cycle: applied at this cycle's end if its port still asks.
            self._release_shown[k] = applying is not None and asking
            if self._release_shown[k]:
                self._releases.append(applying)
            self._release_applying[k] = None
            if applying is None and asking:
                lock_id = port.get(f"neighbour_release.{k}.lock_id")
                if dma.locks.take_release_port(lock_id, cycle, self.name):
                    self._release_applying[k] = (lock_id,
                                                 port.get(f"neighbour_release.{k}.value"))
        if port.get("error"):
            self.error_cycles.append(cycle)
        if moved:
            self.words += moved   # the words its channels moved, as theirs counted
            return None
        # The block's inner state is not visible here: a stall counts as progress, so a
        # run that cannot finish ends at max_cycles rather than as a deadlock report.
        return Stall("load", progress=True)

    def commit(self) -> None:
        releases, self._releases = self._releases, []
        for lock_id, value in releases:
            self.model.locks.release(lock_id, value, self.name, self._cycle)

    def load(self) -> Any:
        """The register writes, one a cycle with ``pause`` high; a generator of cycles."""
        port = self.ports_
        port.set("pause", 1)
        if self._neighbours:      # which neighbours the model's memory tile has
            memory = {w.label: w.memory for w in self.model.memory.windows}
            locks = {r.label: r.table for r in self.model.locks.ranges}
            port.set("absent_memory", (memory["west"] is None) | (memory["east"] is None) << 1)
            port.set("absent_locks", (locks["west"] is None) | (locks["east"] is None) << 1)
        for address, value in self.writes:
            port.set("reg_write", 1)
            port.set("reg_addr", address)
            port.set("reg_wdata", value)
            yield
        port.set("reg_write", 0)
        port.set("pause", 0)

    def _collect_read(self) -> None:
        """The word of a timed read in the cycle before (a read takes a cycle)."""
        if self._read is not None:
            self.reads.append((*self._read, self.ports_.get("reg_rdata")))
            self._read = None

    def read_locks(self) -> Any:
        """Read every own lock, then each of its channels' status register, through the
        register port; a generator of cycles whose results are in :attr:`locks` and
        :attr:`status` (``{"s2mm1": word, ...}``) at the end."""
        port, kind = self.ports_, self.model.kind
        self._collect_read()
        port.set("reg_write", 0)
        addresses = [lock_value_address(kind, lock) for lock in range(DMA_KINDS[kind].locks)]
        names = [self._name(c) for c in self.channels]
        addresses += [status_address(kind, c.direction, c.index) for c in self.channels]
        words: list[int] = []
        for k in range(len(addresses) + 1):
            if k:
                words.append(port.get("reg_rdata"))
            port.set("reg_read", k < len(addresses))
            port.set("reg_addr", addresses[min(k, len(addresses) - 1)])
            yield
        port.set("reg_read", 0)
        self.locks = words[:DMA_KINDS[kind].locks]
        self.status = dict(zip(names, words[DMA_KINDS[kind].locks:], strict=True))


def run_rtl_dma(agents: Sequence[Agent], dma: Any, channels: Sequence[Any],
                max_cycles: int = 100_000, simulator: str = "amaranth", *,
                reuse: bool = False,
                timed_writes: Sequence[Sequence[int]] = ()) -> tuple[SystemReport, RtlDmaAgent]:
    """Run ``agents`` with ``channels`` (the model channels of ``dma`` among them) replaced
    by one :class:`RtlDmaAgent` where the first of them stood; then read its locks.

    With ``reuse`` (regressions of many programs) the Amaranth simulator of a block at
    that placement is elaborated once per process and reset between runs.
    ``timed_writes`` (``(cycle, address, value)``) go through the block's register port
    in their cycles; a model :class:`~aiedma.model.system.registers.RegisterWriter` among
    ``agents`` (the model run's) is left out, the block taking its writes.

    Returns
    -------
    report : SystemReport
    block : RtlDmaAgent
        Its ``tokens`` per channel and ``locks`` (the lock unit's values after the run).
    """
    agents = [a for a in agents if not isinstance(a, RegisterWriter)]
    block = RtlDmaAgent(dma, [a for a in agents if any(a is c for c in channels)], simulator,
                        reuse, timed_writes)
    first = next(i for i, a in enumerate(agents) if any(a is c for c in channels))
    rest = [a for a in agents if not any(a is c for c in channels)]
    agents = [*rest[:first], block, *rest[first:]]
    result: dict[str, SystemReport] = {}
    if simulator == "verilator":
        for _ in block.load():
            block.ports_.edge()
        run = SystemRun(agents, max_cycles)
        while run.busy:
            run.cycle()
            block.ports_.edge()
        for _ in block.read_locks():
            block.ports_.edge()
        return run.report(), block
    async def bench(ctx: Any) -> None:
        block.ports_.ctx = ctx
        for _ in block.load():
            await ctx.tick()
        run = SystemRun(agents, max_cycles)
        while run.busy:
            run.cycle()
            await ctx.tick()
        result["report"] = run.report()
        for _ in block.read_locks():
            await ctx.tick()

    block.simulation.run(bench)
    return result["report"], block
