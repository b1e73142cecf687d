"""RTL in the loop: system-model channels whose engine runs as RTL, checked every cycle.

A system channel (:class:`aiedma.model.system.channel.Channel`) runs its cycles on an
*engine*: the address generator, lock gate and datapath of the cycle contract. Here
the engine is the RTL (``hdl.engine.MM2SEngine`` / ``S2MMEngine``) on a simulator,
driven by the channel's fetch and stream stages, by the lock unit and memory of the
system model, inside the scheduler's cycles. The model engine
(:class:`~aiedma.model.cycle.engine.ChannelEngine`) runs beside it on the same inputs
as its reference: every port of every cycle (:class:`EngineCycle`: BD handshake,
beat, lock request and grant, stream side, memory port) must agree, or the run
stops with :class:`LoopMismatch` naming the cycle, the channel, the BD, its dimension
counters and every differing signal. What moves in the system (words into streams,
memory writes, lock acquires) comes from the RTL's ports.

Simulators:

* ``"amaranth"``: every RTL channel of the run in one Amaranth simulation, in this
  process; the scheduler runs inside its testbench, one ``ctx.tick()`` per cycle.
* ``"verilator"``: see :mod:`.loop_verilator` (the same engines on a Verilated model
  loaded into this process).

:func:`rtl_runner` makes what ``Graph.run(rtl=...)`` takes
(:class:`~aiedma.model.system.graph.RtlRunner`): :func:`run_with_rtl` on one simulator.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from amaranth.hdl import Module
from amaranth.sim import Simulator

from ...hdl.engine import MM2SEngine, S2MMEngine
from ...hdl.layouts import bd_layout, bd_to_payload
from ...model.bd.descriptor import BufferDescriptor
from ...model.cycle.engine import ChannelEngine, EngineCycle
from ...model.system.scheduler import Agent, SystemReport, SystemRun
from ..common.simulators import IN_PROCESS, check_simulator
from .loop_mismatch import LoopMismatch, loop_mismatch
from .loop_replay import run_replayed
from .loop_verilator import VerilatorEngine, run_verilator

__all__ = ["RUNS_ON", "AmaranthEngine", "CheckedEngine", "LoopMismatch", "LoopRunner",
           "rtl_runner", "run_with_rtl"]

RUNS_ON = IN_PROCESS
"""Simulators an RTL channel can run on inside the system model."""


class AmaranthEngine:
    """A channel engine's RTL on Amaranth's simulator, driven through a testbench context.

    Parameters
    ----------
    kind : {"tile", "memtile", "shim"}
    mm2s : bool
    """

    def __init__(self, kind: str, mm2s: bool) -> None:
        self.kind, self.mm2s = kind, mm2s
        self.dut = MM2SEngine(kind) if mm2s else S2MMEngine(kind)
        self.ctx: Any = None   # the testbench context, bound when the simulation starts
        self._layout = bd_layout(kind)
        self._payloads: dict[int, Any] = {}

    def _payload(self, bd: BufferDescriptor) -> Any:
        key = id(bd)
        if key not in self._payloads:   # a BD object is offered for several cycles
            self._payloads = {key: self._layout.const(bd_to_payload(bd))}
        return self._payloads[key]

    def drive(self, bd: BufferDescriptor | None, *, o_ready: bool = False, i_valid: bool = False,
              i_data: int = 0, mem_data: int = 0, i_end: bool = False) -> None:
        ctx, dut = self.ctx, self.dut
        ctx.set(dut.bd.valid, bd is not None)
        if bd is not None:
            ctx.set(dut.bd.payload, self._payload(bd))
        ctx.set(dut.lock_grant, 0)
        if self.mm2s:
            ctx.set(dut.o.ready, o_ready)
            ctx.set(dut.mem_data, mem_data)
        else:
            ctx.set(dut.i.valid, i_valid)
            ctx.set(dut.i.payload.data, i_data)
            ctx.set(dut.i.payload.last, i_end)   # the engine's ``last`` on i ends the BD

    def lock_request(self) -> bool:
        return bool(self.ctx.get(self.dut.lock_request))

    def grant(self, granted: bool) -> None:
        self.ctx.set(self.dut.lock_grant, granted)

    def sample(self) -> EngineCycle:
        get, dut = self.ctx.get, self.dut
        beat_valid = bool(get(dut.beat_valid))
        request = bool(get(dut.lock_request))
        common = {
            "bd_valid": bool(get(dut.bd.valid)), "bd_ready": bool(get(dut.bd.ready)),
            "beat_valid": beat_valid, "beat_ready": bool(get(dut.beat_ready)),
            "address": get(dut.beat_address) if beat_valid else 0,
            "zero": bool(get(dut.beat_zero)) and beat_valid,
            "last": bool(get(dut.beat_last)) and beat_valid,
            "lock_request": request, "lock_grant": request and bool(get(dut.lock_grant)),
        }
        if self.mm2s:
            valid, read = bool(get(dut.o.valid)), bool(get(dut.mem_en))
            return EngineCycle(**common, stream_valid=valid, stream_ready=bool(get(dut.o.ready)),
                               data=get(dut.o.payload.data) if valid else 0,
                               stream_last=bool(get(dut.o.payload.last)) and valid,
                               mem_read=read, mem_addr=get(dut.mem_addr) if read else 0)
        valid, write = bool(get(dut.i.valid)), bool(get(dut.mem_we))
        return EngineCycle(**common, stream_valid=valid, stream_ready=bool(get(dut.i.ready)),
                           data=get(dut.i.payload.data) if valid else 0, mem_write=write,
                           mem_addr=get(dut.mem_addr) if write else 0,
                           mem_data=get(dut.mem_data) if write else 0)

    def clock(self) -> None:
        """Nothing to do: the runner's testbench advances the clock for every engine."""


class CheckedEngine:
    """An RTL engine driven as a channel's engine, with the model engine as its reference.

    It has the engine protocol of :class:`~aiedma.model.cycle.engine.ChannelEngine`;
    the channel moves what the RTL shows, and any difference raises
    :class:`LoopMismatch`.

    Parameters
    ----------
    channel : Channel
        The system channel it serves (for names in a mismatch report).
    rtl : AmaranthEngine or VerilatorEngine
    seed : int, optional
        Printed in a mismatch report, to replay the run.
    """

    def __init__(self, channel: Any, rtl: Any, seed: int | None = None) -> None:
        self.channel, self.rtl, self.seed = channel, rtl, seed
        self.model = ChannelEngine(rtl.kind, rtl.mm2s)
        self.cycle = 0
        self.compared = 0

    @property
    def empty(self) -> bool:
        return self.model.empty

    def state(self) -> tuple:
        return self.model.state()

    def drive(self, bd: BufferDescriptor | None, **inputs: Any) -> None:
        self.model.drive(bd, **inputs)
        self.rtl.drive(bd, **inputs)

    def lock_request(self) -> bool:
        want, got = self.model.lock_request(), self.rtl.lock_request()
        if want != got:
            self._mismatch({"lock_request": (got, want)})
        return got

    def grant(self, granted: bool) -> None:
        self.model.grant(granted)
        self.rtl.grant(granted)

    def sample(self) -> EngineCycle:
        want, got = self.model.sample(), self.rtl.sample()
        differences = got.differences(want)
        if differences:
            self._mismatch(differences)
        self.compared += 1
        return got

    def clock(self, accepted_beats: tuple | None = None) -> None:
        self.model.clock(accepted_beats)
        self.rtl.clock()
        self.cycle += 1

    def _mismatch(self, differences: dict[str, tuple]) -> None:
        run, position = self.model.gate_beat()
        raise loop_mismatch(self.channel.name, self.rtl.__class__.__name__, self.cycle,
                            differences, run, position, self.channel.bd, self.seed)


def _engine(simulator: Any, kind: str, mm2s: bool) -> Any:
    if callable(simulator):
        return simulator(kind, mm2s)
    if simulator == "amaranth":
        return AmaranthEngine(kind, mm2s)
    return VerilatorEngine(kind, mm2s)   # run_with_rtl has checked the name


def run_with_rtl(agents: Iterable[Agent], channels: Sequence[Any], simulator: Any = "amaranth",
                 max_cycles: int = 10_000_000, seed: int | None = None) -> SystemReport:
    """Run the system with ``channels`` as RTL, checked against the model every cycle.

    Parameters
    ----------
    agents : iterable of Agent
        Every agent of the system (the channels among them), in stepping order.
    channels : sequence of Channel
        The channels whose engine runs as RTL (they must be idle).
    simulator : {"amaranth", "verilator"} or callable
        A callable ``(kind, mm2s) -> engine`` builds the RTL engines itself (the
        tests use it for deliberately wrong RTL).
    max_cycles : int
    seed : int, optional
        Named in a mismatch report.

    Returns
    -------
    SystemReport
        The same report a model-only run gives (if the RTL agrees, it is the same).

    Raises
    ------
    LoopMismatch
        At the first cycle an RTL port differs from the model engine's.
    DeadlockError, AiedmaError
        As :func:`~aiedma.model.system.scheduler.run_system`.
    """
    if not callable(simulator):
        check_simulator(simulator, RUNS_ON, "run_with_rtl")
    engines = [CheckedEngine(ch, _engine(simulator, ch.dma.kind, ch.is_mm2s), seed)
               for ch in channels]
    for channel, engine in zip(channels, engines, strict=True):
        channel.use_engine(engine)
    run = SystemRun(agents, max_cycles)
    try:
        if all(isinstance(e.rtl, AmaranthEngine) for e in engines):
            _run_amaranth(run, [e.rtl for e in engines])
        else:
            run_verilator(run, [e.rtl for e in engines])
    finally:
        for channel in channels:
            channel.engine = ChannelEngine(channel.dma.kind, channel.is_mm2s)
    return run.report()


@dataclass(frozen=True)
class LoopRunner:
    """Channels as RTL on one simulator inside the system model: a
    :class:`~aiedma.model.system.graph.RtlRunner` for ``Graph.run(rtl=...)``.

    On Verilator the model's run is recorded and replayed into the Verilated engines
    (:mod:`.loop_replay`, the same checks at bulk speed); ``lockstep`` runs the RTL
    beside the model cycle by cycle instead (:func:`run_with_rtl`), the reference
    the replay's argument rests on. Amaranth always runs in lockstep.

    Attributes
    ----------
    simulator : {"amaranth", "verilator"}
    seed : int, optional
        Named in a mismatch report.
    lockstep : bool
        Step the RTL with the model on every cycle, even on Verilator.
    """

    simulator: str
    seed: int | None = None
    lockstep: bool = False

    def __post_init__(self) -> None:
        check_simulator(self.simulator, RUNS_ON, "rtl_runner")

    @property
    def replays(self) -> bool:
        """Whether a run is recorded and replayed rather than stepped in lockstep."""
        return self.simulator == "verilator" and not self.lockstep

    def __call__(self, agents: Sequence[Agent], channels: Sequence[Any],
                 max_cycles: int) -> SystemReport:
        if self.replays:
            return run_replayed(agents, channels, max_cycles, self.seed)
        return run_with_rtl(agents, channels, self.simulator, max_cycles, self.seed)


def rtl_runner(simulator: str = "amaranth", seed: int | None = None,
               lockstep: bool = False) -> LoopRunner:
    """The runner ``Graph.run(rtl=...)`` takes: every memory-tile channel as RTL on
    ``simulator``, compared with the model on every port of every cycle.

    >>> rtl_runner("verilator")
    LoopRunner(simulator='verilator', seed=None, lockstep=False)
    >>> rtl_runner("icarus")
    Traceback (most recent call last):
    ...
    aiedma.tb.common.simulators.UnsupportedSimulator: simulator='icarus': rtl_runner runs on ...

    Parameters
    ----------
    simulator : {"amaranth", "verilator"}
    seed : int, optional
        Named in a mismatch report.
    lockstep : bool
        On Verilator, step the RTL beside the model every cycle rather than replay the
        model's recorded run (:class:`LoopRunner`).

    Raises
    ------
    UnsupportedSimulator
        For a simulator outside :data:`RUNS_ON`.
    """
    return LoopRunner(simulator, seed, lockstep)


def _run_amaranth(run: SystemRun, engines: Sequence[AmaranthEngine]) -> None:
    top = Module()
    for k, engine in enumerate(engines):
        top.submodules[f"channel{k}"] = engine.dut
    sim = Simulator(top)
    sim.add_clock(1e-8)

    async def bench(ctx: Any) -> None:
        for engine in engines:
            engine.ctx = ctx
        while run.busy:
            run.cycle()
            await ctx.tick()

    sim.add_testbench(bench)
    sim.run()
