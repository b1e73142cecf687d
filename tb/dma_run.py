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

from collections.abc import Sequence
from typing import Any

from amaranth.hdl import Module
from amaranth.sim import Simulator

from ..hdl.dma_channel import DMAChannel
from ..model.arch.kinds import DMA_KINDS
from ..model.arch.registers import start_queue_address
from ..model.system.scheduler import Agent, Stall, SystemReport, SystemRun, run_system
from ..model.system.stream import Beat
from .loop_random import TARGET

__all__ = ["RtlChannelAgent", "check_program_channels", "register_writes", "run_rtl_channels"]


def register_writes(channel: Any) -> list[tuple[int, int]]:
    """``(address, word)`` writes that load a model channel's DMA table and task queue."""
    dma = channel.dma
    base = DMA_KINDS[dma.kind].bd_register_base
    writes = [(base + 0x20 * n + 4 * w, word) for n, bd in sorted(dma.bds.items())
              for w, word in enumerate(bd.encode())]
    queue = start_queue_address(dma.kind, channel.direction, channel.index)
    writes += [(queue, task.encode()) for task in channel.queue]
    return writes


class RtlChannelAgent:
    """A system agent running a :class:`DMAChannel` in place of a model channel.

    Parameters
    ----------
    channel : Channel
        The model channel it replaces: its DMA (table, memory, locks), stream and
        pending tasks (loaded into the RTL before the run).
    """

    def __init__(self, channel: Any) -> None:
        self.model = channel
        self.name = channel.name
        dma = channel.dma
        self.dut = DMAChannel(dma.kind, channel.direction, channel.index, dma.column, dma.row)
        self.writes = register_writes(channel)
        self.stream = channel.stream
        self.ctx: Any = None
        self.tokens: list[int] = []
        self.words = 0
        self._read = 0
        self._releases: list[tuple[int, int]] = []

    @property
    def busy(self) -> bool:
        return bool(self.ctx.get(self.dut.busy))

    def ports(self) -> tuple:
        return (self.stream,)

    def step(self, cycle: int) -> Stall | None:
        ctx, dut, stream = self.ctx, self.dut, self.stream
        dma = self.model.dma
        if dut.mm2s:
            ctx.set(dut.o.ready, stream.can_push())
            ctx.set(dut.mem_data, self._read)
        else:
            valid = stream.can_pop()
            ctx.set(dut.i.valid, valid)
            ctx.set(dut.i.payload.data, stream.peek().data if valid else 0)
        grant = False
        if ctx.get(dut.acquire.request):
            grant = dma.locks.try_acquire(ctx.get(dut.acquire.lock_id),
                                          ctx.get(dut.acquire.value), self.name)
        ctx.set(dut.acquire.grant, grant)
        moved = False
        if dut.mm2s:
            if ctx.get(dut.o.valid) and ctx.get(dut.o.ready):
                stream.push(Beat(ctx.get(dut.o.payload.data), bool(ctx.get(dut.o.payload.last))))
                moved = True
            if ctx.get(dut.mem_en):
                self._read = dma.memory.read(ctx.get(dut.mem_addr), self.name)
        else:
            if ctx.get(dut.i.valid) and ctx.get(dut.i.ready):
                stream.pop()
                moved = True
            if ctx.get(dut.mem_we):
                dma.memory.write(ctx.get(dut.mem_addr), ctx.get(dut.mem_data), self.name)
        if ctx.get(dut.release.request):
            self._releases.append((ctx.get(dut.release.lock_id), ctx.get(dut.release.value)))
        if ctx.get(dut.token):
            self.tokens.append(cycle)
        if ctx.get(dut.error):
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


def run_rtl_channels(agents: Sequence[Agent], channels: Sequence[Any],
                     max_cycles: int = 100_000) -> tuple[SystemReport, list[RtlChannelAgent]]:
    """Run ``agents`` with each of ``channels`` (model channels among them) as RTL.

    Returns
    -------
    report : SystemReport
        The run's report (the RTL agents' stalls are all ``load``: only their words
        count).
    rtl : list of RtlChannelAgent
        The RTL agents, in the order of ``channels`` (their ``tokens``).
    """
    rtl = [RtlChannelAgent(ch) for ch in channels]
    swap = {id(ch): agent for ch, agent in zip(channels, rtl, strict=True)}
    agents = [swap.get(id(a), a) for a in agents]
    top = Module()
    for k, agent in enumerate(rtl):
        top.submodules[f"channel{k}"] = agent.dut
    sim = Simulator(top)
    sim.add_clock(1e-8)
    result: dict[str, SystemReport] = {}

    async def bench(ctx: Any) -> None:
        for agent in rtl:
            agent.ctx = ctx
            ctx.set(agent.dut.pause, 1)
        longest = max((len(a.writes) for a in rtl), default=0)
        for step in range(longest):   # the program is loaded before cycle 0
            for agent in rtl:
                write = agent.writes[step] if step < len(agent.writes) else None
                ctx.set(agent.dut.reg_write, write is not None)
                if write is not None:
                    ctx.set(agent.dut.reg_addr, write[0])
                    ctx.set(agent.dut.reg_wdata, write[1])
            await ctx.tick()
        for agent in rtl:
            ctx.set(agent.dut.reg_write, 0)
            ctx.set(agent.dut.pause, 0)
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


def check_program_channels(program: Any) -> SystemReport:
    """Run a :class:`~aiedma.tb.loop_random.RandomProgram` with model channels, then with
    every channel a whole RTL channel; raise ``AssertionError`` on any difference.

    Compared: the cycles the sink takes each word in and the words, the cycle count,
    the words every agent moved, the target memory and the token cycles of each channel.
    """
    agents, channels, dma, sink = program.build()
    model_times = _timed(sink)
    report = run_system(agents)
    model_tokens = [[d.cycle for d in ch.done if d.token] for ch in channels]
    agents, channels, rtl_dma, rtl_sink = program.build()
    rtl_times = _timed(rtl_sink)
    rtl_report, rtl = run_rtl_channels(agents, channels, max_cycles=report.cycles + 200)
    seed = f"seed={program.seed}"
    if rtl_sink.data != sink.data or rtl_times != model_times:
        raise AssertionError(f"{seed}: the sink's words or their cycles differ: model "
                             f"{list(zip(model_times, sink.data, strict=False))[:8]}..., RTL "
                             f"{list(zip(rtl_times, rtl_sink.data, strict=False))[:8]}...")
    if (rtl_report.cycles, rtl_report.words) != (report.cycles, report.words):
        raise AssertionError(f"{seed}: cycles or words differ: model {report.cycles} "
                             f"{report.words}, RTL {rtl_report.cycles} {rtl_report.words}")
    if [agent.tokens for agent in rtl] != model_tokens:
        raise AssertionError(f"{seed}: token cycles differ: model {model_tokens}, RTL "
                             f"{[agent.tokens for agent in rtl]}")
    for name, region in (("model", dma), ("RTL", rtl_dma)):
        memory, offset = region.memory.resolve(TARGET)
        if name == "model":
            want = memory.dump(offset, 64)
        elif not (memory.dump(offset, 64) == want).all():
            raise AssertionError(f"{seed}: the target memory differs")
    return rtl_report
