"""Whole DMA channels in RTL inside the system model, compared with the model channels.

:class:`RtlChannelAgent` stands in the scheduler where a model channel
(``model/system/channel.py``) stood: the RTL :class:`~aiedma.hdl.dma_channel.DMAChannel`
gets its BD table and task queue through register writes (the BD words of the DMA's
table, the start-queue words of the channel's pending tasks) before cycle 0, then
runs on Amaranth's simulator with the system model's streams, memory and locks on
its ports: its lock requests are answered by the model's lock table in the same
cycle, its releases applied at the end of the cycle, as the model's channels do.

:func:`run_rtl_channels` runs a system whose given channels are RTL; the system
without them is the reference: a program run both ways must give the same words on
every stream in the same cycles, the same memory, locks and token cycles.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from amaranth.hdl import Module
from amaranth.sim import Simulator

from ..hdl.dma_channel import DMAChannel
from ..model.arch.kinds import DMA_KINDS
from ..model.errors import AiedmaError, field_error
from ..model.system.registers import apply_writes, program_writes
from ..model.system.scheduler import Agent, Stall, SystemReport, SystemRun, run_system
from ..model.system.stream import Beat, Stream, StreamSink, StreamSource
from .dma_block import run_rtl_dma
from .loop import SIMULATORS
from .loop_random import PROGRAM_PLACES, program_dma, random_program

__all__ = ["DmaRun", "RtlChannelAgent", "check_program_channels", "main", "register_writes",
           "run_dma", "run_rtl_channels"]


def register_writes(channel: Any) -> list[tuple[int, int]]:
    """``(address, word)`` writes that load a model channel's DMA: its BD table, the queued
    tasks and the locks (``program_writes``); a channel takes the BD words and its own
    start-queue writes and leaves the rest."""
    return program_writes(channel.dma)


class _AmaranthPorts:
    """A :class:`DMAChannel`'s ports on Amaranth's simulator (set after ``ctx`` is bound)."""

    def __init__(self, dut: DMAChannel) -> None:
        self.dut, self.ctx = dut, None

    def set(self, name: str, value: int) -> None:
        self.ctx.set(self._signal(name), value)

    def get(self, name: str) -> int:
        return self.ctx.get(self._signal(name))

    def _signal(self, name: str) -> Any:
        value = self.dut
        for part in name.split("."):
            value = getattr(value, part)
        return value


_SIGNED_PORTS = {"acquire.value": 7, "release.value": 7}   # two's complement lock values


class _VerilatorPorts:
    """A :class:`DMAChannel`'s ports on a Verilated model in this process."""

    def __init__(self, top: str, make: Any) -> None:
        from .loop_verilator import VerilatedTop
        self.top = VerilatedTop(top, make)

    def set(self, name: str, value: int) -> None:
        if name == "i.payload.data":
            name = "i.payload"
        self.top.set(name.replace(".", "__"), int(value) & ((1 << 64) - 1))

    def get(self, name: str) -> int:
        field = None
        if name in ("o.payload.data", "o.payload.last"):
            name, field = "o.payload", name.rsplit(".", 1)[1]
        value = self.top.get(name.replace(".", "__"))
        if field == "data":
            return value & 0xFFFF_FFFF
        if field == "last":
            return value >> 32
        bits = _SIGNED_PORTS.get(name)
        if bits is not None and value >> (bits - 1):
            value -= 1 << bits
        return value

    def edge(self) -> None:
        self.top.edge()


class RtlChannelAgent:
    """A system agent running a :class:`DMAChannel` in place of a model channel.

    Parameters
    ----------
    channel : Channel
        The model channel it replaces: its DMA (table, memory, locks), stream and
        pending tasks (loaded into the RTL before the run).
    simulator : {"amaranth", "verilator", None}
        Where the RTL channels run; None runs the model alone.
    """

    def __init__(self, channel: Any, simulator: str = "amaranth") -> None:
        self.model = channel
        self.name = channel.name
        dma = channel.dma
        self.mm2s = channel.is_mm2s
        if simulator == "amaranth":
            self.dut = DMAChannel(dma.kind, channel.direction, channel.index, dma.column,
                                  dma.row)
            self.ports_ = _AmaranthPorts(self.dut)
        elif simulator == "verilator":
            self.dut = None
            where = (dma.kind, channel.direction, channel.index, dma.column, dma.row)
            self.ports_ = _VerilatorPorts(
                "aiedma_dma_channel_{}_{}{}_c{}_r{}".format(*where),
                lambda: DMAChannel(*where))
        else:
            raise ValueError(f"simulator={simulator!r}: must be amaranth or verilator")
        self.writes = register_writes(channel)
        self.stream = channel.stream
        self.tokens: list[int] = []
        self.words = 0
        self._read = 0
        self._releases: list[tuple[int, int]] = []

    @property
    def busy(self) -> bool:
        return bool(self.ports_.get("busy"))

    def ports(self) -> tuple:
        return (self.stream,)

    def step(self, cycle: int) -> Stall | None:
        port, stream = self.ports_, self.stream
        dma = self.model.dma
        if self.mm2s:
            port.set("o.ready", stream.can_push())
            port.set("mem_data", self._read)
        else:
            valid = stream.can_pop()
            port.set("i.valid", valid)
            port.set("i.payload.data", stream.peek().data if valid else 0)
        grant = False
        if port.get("acquire.request"):
            grant = dma.locks.try_acquire(port.get("acquire.lock_id"),
                                          port.get("acquire.value"), self.name)
        port.set("acquire.grant", grant)
        moved = False
        if self.mm2s:
            if port.get("o.valid") and port.get("o.ready"):
                stream.push(Beat(port.get("o.payload.data"), bool(port.get("o.payload.last"))))
                moved = True
            if port.get("mem_en"):
                self._read = dma.memory.read(port.get("mem_addr"), self.name)
        else:
            if port.get("i.valid") and port.get("i.ready"):
                stream.pop()
                moved = True
            if port.get("mem_we"):
                dma.memory.write(port.get("mem_addr"), port.get("mem_data"), self.name)
        if port.get("release.request"):
            self._releases.append((port.get("release.lock_id"), port.get("release.value")))
        if port.get("token"):
            self.tokens.append(cycle)
        if port.get("error"):
            raise AssertionError(f"{self.name}: the RTL channel flagged an error in cycle {cycle}")
        if moved:
            self.words += 1
            return None
        # The RTL's inner state is not visible here: a stall always counts as progress,
        # so a run that cannot finish ends at max_cycles, not as a deadlock report.
        return Stall("load", progress=True)

    def commit(self) -> None:
        releases, self._releases = self._releases, []
        for lock_id, value in releases:
            self.model.dma.locks.release(lock_id, value, self.name)


def _load(agents: Sequence[RtlChannelAgent], tick: Any) -> Any:
    """Write every agent's program (paused), one register write per cycle; yields ticks."""
    for agent in agents:
        agent.ports_.set("pause", 1)
    longest = max((len(a.writes) for a in agents), default=0)
    for step in range(longest):   # the program is loaded before cycle 0
        for agent in agents:
            write = agent.writes[step] if step < len(agent.writes) else None
            agent.ports_.set("reg_write", write is not None)
            if write is not None:
                agent.ports_.set("reg_addr", write[0])
                agent.ports_.set("reg_wdata", write[1])
        yield
    for agent in agents:
        agent.ports_.set("reg_write", 0)
        agent.ports_.set("pause", 0)


def run_rtl_channels(agents: Sequence[Agent], channels: Sequence[Any],
                     max_cycles: int = 100_000, simulator: str = "amaranth",
                     ) -> tuple[SystemReport, list[RtlChannelAgent]]:
    """Run ``agents`` with each of ``channels`` (model channels among them) as RTL.

    Parameters
    ----------
    simulator : {"amaranth", "verilator", None}
        Where the RTL channels run; None runs the model alone.

    Returns
    -------
    report : SystemReport
        The run's report (the RTL agents' stalls are all ``load``: only their words
        count).
    rtl : list of RtlChannelAgent
        The RTL agents, in the order of ``channels`` (their ``tokens``).
    """
    rtl = [RtlChannelAgent(ch, simulator) for ch in channels]
    swap = {id(ch): agent for ch, agent in zip(channels, rtl, strict=True)}
    agents = [swap.get(id(a), a) for a in agents]
    result: dict[str, SystemReport] = {}
    if simulator == "verilator":
        for _ in _load(rtl, None):
            for agent in rtl:
                agent.ports_.edge()
        run = SystemRun(agents, max_cycles)
        while run.busy:
            run.cycle()
            for agent in rtl:
                agent.ports_.edge()
        return run.report(), rtl
    top = Module()
    for k, agent in enumerate(rtl):
        top.submodules[f"channel{k}"] = agent.dut
    sim = Simulator(top)
    sim.add_clock(1e-8)

    async def bench(ctx: Any) -> None:
        for agent in rtl:
            agent.ports_.ctx = ctx
        for _ in _load(rtl, ctx):
            await ctx.tick()
        run = SystemRun(agents, max_cycles)
        while run.busy:
            run.cycle()
            await ctx.tick()
        result["report"] = run.report()

    sim.add_testbench(bench)
    sim.run()
    return result["report"], rtl


def _timed(agent: Any) -> list[int]:
    """Record the cycles in which ``agent`` moves a word (wraps its ``step``)."""
    cycles: list[int] = []
    step = agent.step

    def timed(cycle: int) -> Stall | None:
        stall = step(cycle)
        if stall is None:
            cycles.append(cycle)
        return stall

    agent.step = timed
    return cycles


def check_program_channels(program: Any, simulator: str = "amaranth", *,
                           reuse: bool = False) -> SystemReport:
    """Run a :class:`~aiedma.tb.loop_random.RandomProgram` with model channels, then with
    the whole RTL DMA (:mod:`.dma_block`: shared BD table, lock unit, every channel) in
    their place; raise ``AssertionError`` on any difference.

    Compared: the cycles the sink takes each word in and the words, the cycle count,
    the words moved, the target memory, the token cycles of each channel and the locks.
    ``reuse`` keeps the block's Amaranth simulator between programs (:func:`run_rtl_dma`).
    """
    agents, channels, dma, sink = program.build()
    model_times = _timed(sink)
    report = run_system(agents, exact=True)   # every cycle stepped: _timed sees each word
    model_tokens = [[d.cycle for d in ch.done if d.token] for ch in channels]
    agents, channels, rtl_dma, rtl_sink = program.build()
    rtl_times = _timed(rtl_sink)
    rtl_report, block = run_rtl_dma(agents, rtl_dma, channels, report.cycles + 200, simulator,
                                    reuse=reuse)
    rtl_tokens = [block.tokens[f"{c.direction}{c.index}"] for c in channels]
    seed = f"seed={program.seed}"
    if rtl_sink.data != sink.data or rtl_times != model_times:
        raise AssertionError(f"{seed}: the sink's words or their cycles differ: model "
                             f"{list(zip(model_times, sink.data, strict=False))[:8]}..., RTL "
                             f"{list(zip(rtl_times, rtl_sink.data, strict=False))[:8]}...")
    # The block is one agent: its channels' words are compared as a sum.
    names = {c.name for c in channels}
    model_words = {k: v for k, v in report.words.items() if k not in names}
    model_words["channels"] = sum(report.words[k] for k in names)
    rtl_words = {k: v for k, v in rtl_report.words.items() if k != block.name}
    rtl_words["channels"] = block.words
    if (rtl_report.cycles, rtl_words) != (report.cycles, model_words):
        raise AssertionError(f"{seed}: cycles or words differ: model {report.cycles} "
                             f"{model_words}, RTL {rtl_report.cycles} {rtl_words}")
    if rtl_tokens != model_tokens:
        raise AssertionError(f"{seed}: token cycles differ: model {model_tokens}, RTL "
                             f"{rtl_tokens}")
    own = DMA_KINDS[dma.kind].lock_window("own").start
    model_locks = [dma.locks.route(own + k)[0][k] for k in range(DMA_KINDS[dma.kind].locks)]
    if block.locks != model_locks:
        raise AssertionError(f"{seed}: locks differ: model {model_locks}, RTL {block.locks}")
    for name, region in (("model", dma), ("RTL", rtl_dma)):
        memory, offset = region.memory.resolve(program.place.target)
        if name == "model":
            want = memory.dump(offset, 64)
        elif not (memory.dump(offset, 64) == want).all():
            raise AssertionError(f"{seed}: the target memory differs")
    return rtl_report


def main(argv: list[str] | None = None) -> int:
    """``python -m aiedma.tb.dma_run [--programs N] [--seed S] [--sim ...] [--kinds ...]``:
    the regression, ``N`` programs per kind and simulator."""
    parser = argparse.ArgumentParser(prog="python -m aiedma.tb.dma_run",
                                     description="Random task programs on whole RTL channels "
                                                 "against the model channels.")
    parser.add_argument("--programs", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--sim", nargs="+", choices=("amaranth", "verilator"),
                        default=["amaranth", "verilator"])
    parser.add_argument("--kinds", nargs="+", choices=tuple(PROGRAM_PLACES),
                        default=list(PROGRAM_PLACES))
    args = parser.parse_args(argv)
    failed = 0
    for simulator in args.sim:
        for kind in args.kinds:
            start, cycles, bad = time.perf_counter(), 0, 0
            for seed in range(args.seed, args.seed + args.programs):
                program = random_program(seed, kind)
                try:
                    cycles += check_program_channels(program, simulator, reuse=True).cycles
                except AssertionError as error:
                    bad += 1
                    print(f"FAIL {simulator} {kind} seed={seed}: {error}\n  "
                          f"{program.description}")
            failed += bad
            print(f"whole RTL channels on {simulator}, {kind}: {args.programs} random task "
                  f"programs (seeds {args.seed}..{args.seed + args.programs - 1}), {cycles} "
                  f"cycles, {bad} mismatches, {time.perf_counter() - start:.1f} s")
    return 1 if failed else 0



@dataclass
class DmaRun:
    """What :func:`run_dma` returns (identical for the model and the RTL, or it raised).

    Attributes
    ----------
    outputs : dict of str to list of (int, bool)
        Per MM2S channel with tasks (``"mm2s0"``, ...): the ``(data, last)`` words.
    memory : numpy.ndarray
        The memory image after the run (the one given, as S2MM channels left it).
    tokens : dict of str to list of int
        Per channel with tasks: the cycles its completion tokens came in.
    locks : list of int
        The tile's own locks after the run.
    cycles : int
    """

    outputs: dict[str, list[tuple[int, bool]]]
    memory: np.ndarray
    tokens: dict[str, list[int]]
    locks: list[int]
    cycles: int


def _dma_system(kind: str, writes: Sequence[Sequence[int]], memory: np.ndarray,
                inputs: dict, ready: dict) -> tuple:
    dma = program_dma(kind, {"memtile": 1, "tile": 2}.get(kind, 0))
    window = 0 if kind == "shim" else DMA_KINDS[kind].memory_window("own").start
    store, offset = dma.memory.resolve(window)
    store.load(offset, memory)
    apply_writes(dma, writes)
    agents, channels, sinks, times = [], [], {}, {}
    for channel in dma.channels:
        if not channel.queue:
            continue
        name = f"{channel.direction}{channel.index}"
        stream = Stream(name)
        channel.connect(stream)
        channels.append(channel)
        if channel.is_mm2s:
            sinks[name] = StreamSink(f"{name}.sink", stream, ready=ready.get(name))
            times[name] = _timed(sinks[name])
        else:
            if name not in inputs:
                raise field_error(AiedmaError, "inputs", sorted(inputs),
                                  f"channel {name} has tasks but no input words")
            agents.append(StreamSource(f"{name}.source", stream, inputs[name]))
    agents += channels + list(sinks.values())
    return dma, store, offset, agents, channels, sinks, times


def run_dma(kind: str, writes: Sequence[Sequence[int]], memory: Any = None,
            inputs: dict | None = None, ready: dict | None = None,
            simulator: str | None = "amaranth") -> DmaRun:
    """Program a DMA through its register map and run it, its channels as RTL, checked.

    Parameters
    ----------
    kind : {"tile", "memtile", "shim"}
    writes : sequence of (address, value)
        BD words, start-queue pushes and lock values (``model/system/registers.py``).
    memory : array-like, optional
        Words loaded at the start of the tile's own memory, or of a shim's external
        memory (``SHIM_MEMORY_WORDS`` words at address 0) (default: none).
    inputs : dict of str to sequence of int
        Per S2MM channel with tasks (``"s2mm0"``): the words it receives.
    ready : dict of str to sequence of bool
        Per MM2S channel: whether its output takes a word each cycle (backpressure).
    simulator : {"amaranth", "verilator", None}
        Where the RTL channels run; None runs the model alone.

    Returns
    -------
    DmaRun

    Raises
    ------
    RegisterError
        For a write the DMA has no register for (before anything runs).
    AssertionError
        If the RTL channels differ from the model channels: the words or their cycles
        at an output, the cycle count, the memory, the locks or the token cycles.
    """
    if simulator is not None and simulator not in SIMULATORS:
        raise field_error(AiedmaError, "simulator", simulator,
                          f"must be None (the model alone) or one of {', '.join(SIMULATORS)}")
    memory = np.zeros(0, dtype=np.int64) if memory is None else np.asarray(memory)
    inputs, ready = dict(inputs or {}), dict(ready or {})
    dma, store, offset, agents, channels, sinks, times = _dma_system(kind, writes, memory,
                                                                    inputs, ready)
    report = run_system(agents, exact=True)   # every cycle stepped: the word times are recorded
    model = _dma_result(dma, store, offset, memory.size, channels, sinks, report.cycles)
    model_tokens = {f"{c.direction}{c.index}": [d.cycle for d in c.done if d.token]
                    for c in channels}
    if simulator is None:
        model.tokens = model_tokens
        return model
    dma, store, offset, agents, channels, sinks, rtl_times = _dma_system(kind, writes, memory,
                                                                        inputs, ready)
    rtl_report, block = run_rtl_dma(agents, dma, channels, report.cycles + 200, simulator)
    result = _dma_result(dma, store, offset, memory.size, channels, sinks, rtl_report.cycles)
    result.tokens = {f"{c.direction}{c.index}": block.tokens[f"{c.direction}{c.index}"]
                     for c in channels}
    result.locks = block.locks
    for what, want, got in (("outputs", model.outputs, result.outputs),
                            ("output cycles", times, rtl_times),
                            ("cycles", model.cycles, result.cycles),
                            ("locks", model.locks, result.locks),
                            ("tokens", model_tokens, result.tokens)):
        if want != got:
            raise AssertionError(f"run_dma: the RTL's {what} differ from the model's: "
                                 f"model {want}, RTL {got}")
    if not np.array_equal(model.memory, result.memory):
        raise AssertionError("run_dma: the memory after the RTL run differs from the model's")
    return result


def _dma_result(dma: Any, store: Any, offset: int, size: int, channels: list, sinks: dict,
                cycles: int) -> DmaRun:
    own = DMA_KINDS[dma.kind].lock_window("own").start
    locks = []
    for lock in range(DMA_KINDS[dma.kind].locks):
        table, local = dma.locks.route(own + lock)
        locks.append(table[local])
    outputs = {name: [(b.data, b.last) for b in sink.beats] for name, sink in sinks.items()}
    return DmaRun(outputs, store.dump(offset, size) if size else np.zeros(0, np.int64),
                  {}, locks, cycles)


if __name__ == "__main__":
    sys.exit(main())
