"""RTL channel engines inside the system model at bulk speed: the model's run, replayed.

The model is the reference on every cycle, so in a run where the RTL agrees, the
inputs an RTL engine sees on each cycle are the ones the model engine saw: the BD
its channel offers, the stream side, the memory word and the lock grant, all
answers of the system to what the engine showed before. :func:`run_replayed` runs
the system with the model engines only (on the scheduler's fast path), recording
each memory-tile engine's inputs and ports on every cycle (:mod:`.engine_record`),
and each recorded engine is replayed into its Verilated top in C loops
(:meth:`~aiedma.tb.system.loop_verilator.VerilatedTop.replay`), every port compared
on every cycle: stretch by stretch while the run goes on, on threads beside it.

Why this is the closed loop: if the RTL shows the model's ports up to cycle ``t``,
the system would have answered it at ``t + 1`` exactly as it answered the model, so
the recorded inputs of ``t + 1`` are the ones the RTL would get; a replay with no
difference is the lockstep run (:mod:`.loop`), cycle for cycle. At the first
difference the lockstep run would have stopped too, in the same cycle, and the
replay reports it as lockstep does (:class:`~.loop_mismatch.LoopMismatch`: cycle,
channel, BD, beat, counters, seed). If the model run itself stops (a deadlock, a
bad BD), what was recorded up to there is replayed first: an RTL difference before
it is reported in its place, as lockstep would have.

The replay is generic over the engine's ports: what the model drives goes onto the
top's input ports by name, what the RTL drives is compared by name under a care
mask (a payload only while its valid or enable is high, as the model states it).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import numpy as np

from ...hdl.layouts import bd_layout, bd_to_payload
from ...model.bd.descriptor import BufferDescriptor
from ...model.system.scheduler import Agent, SystemReport, SystemRun
from .engine_record import EngineRecorder, EngineTrace
from .loop_mismatch import LoopMismatch, loop_mismatch
from .loop_verilator import PortRows, VerilatedTop, engine_cycle, engine_top

__all__ = ["SIMULATOR", "engine_ports", "replay_trace", "run_replayed"]

SIMULATOR = "Verilator replay"
"""How a replayed engine is named in a mismatch report."""

# Outputs compared on every cycle, and payloads compared while their valid is high:
# (port, column, column that must be set for the port to be compared, or None).
_COMMON = (("bd__ready", "bd_ready", None), ("beat_valid", "beat_valid", None),
           ("beat_ready", "beat_ready", None), ("lock_request", "lock_request", None),
           ("beat_address", "address", "beat_valid"), ("beat_zero", "zero", "beat_valid"),
           ("beat_last", "last", "beat_valid"))
_MM2S = (("o__valid", "stream_valid", None), ("o__payload", "payload", "stream_valid"),
         ("mem_en", "mem_read", None), ("mem_addr", "mem_addr", "mem_read"))
_S2MM = (("i__ready", "stream_ready", None), ("mem_we", "mem_write", None),
         ("mem_addr", "mem_addr", "mem_write"), ("mem_data", "mem_data", "mem_write"))


def _payload_table(kind: str, bds: Sequence[BufferDescriptor], words: int,
                   known: dict[BufferDescriptor, np.ndarray]) -> np.ndarray:
    """Each recorded BD's ``bd__payload`` as ``words`` 32-bit words, a row per BD, and
    a last row of zeros for cycles with no BD offered (index -1). ``known`` holds the
    rows of BDs met before and gains the new ones (a replay in stretches encodes each BD
    value once)."""
    layout = bd_layout(kind)
    for bd in bds:
        if bd not in known:
            value = layout.const(bd_to_payload(bd)).as_value().value
            known[bd] = np.asarray([(value >> (32 * w)) & 0xFFFF_FFFF for w in range(words)],
                                   dtype=np.uint32)
    return np.vstack([*(known[bd] for bd in bds), np.zeros(words, dtype=np.uint32)])


def engine_ports(trace: EngineTrace, kind: str, mm2s: bool, ports: dict[str, tuple[int, int]],
                 payloads: dict[BufferDescriptor, np.ndarray] | None = None
                 ) -> tuple[PortRows, PortRows, PortRows]:
    """A recorded engine as the rows :meth:`VerilatedTop.replay` takes.

    Parameters
    ----------
    trace : EngineTrace
    kind : {"tile", "memtile", "shim"}
    mm2s : bool
    ports : dict of str to (int, int)
        The top's ports: index and width by name (:attr:`VerilatedTop.ports`).
    payloads : dict of BufferDescriptor to numpy.ndarray, optional
        BDs' payload words encoded before (for an earlier stretch of the same recording);
        gains this trace's new BDs.

    Returns
    -------
    inputs, want, care : PortRows
        Per cycle, the inputs the model engine saw, the outputs it showed, and which
        output bits to compare.
    """
    compared = _COMMON + (_MM2S if mm2s else _S2MM)
    driven = ("bd__valid", "bd__payload", "lock_grant",
              *(("o__ready", "mem_data") if mm2s else ("i__valid", "i__payload")))
    inputs = PortRows(ports, driven, trace.cycles)
    want = PortRows(ports, [port for port, _, _ in compared], trace.cycles)
    care = PortRows(ports, want.names, trace.cycles)
    k = inputs.names.index("bd__payload")
    at, words = int(inputs.at[k]), int(inputs.words[k])
    table = _payload_table(kind, trace.bds, words, {} if payloads is None else payloads)
    start = 0
    # Stretch by stretch: a value held over a stretch is written once for all of it.
    for length, c in trace.blocks:
        rows = slice(start, start + length)
        start += length
        inputs.put("bd__valid", np.asarray(c["bd"]) >= 0, rows)
        inputs.rows[rows, at:at + words] = table[c["bd"]]
        inputs.put("lock_grant", c["grant"], rows)
        if mm2s:
            inputs.put("o__ready", c["o_ready"], rows)
            inputs.put("mem_data", np.asarray(c["mem_data_in"]) & 0xFFFF_FFFF, rows)
        else:
            inputs.put("i__valid", c["i_valid"], rows)
            inputs.put("i__payload", np.asarray(c["i_data"]) & 0xFFFF_FFFF, rows)
        payload = ((np.asarray(c["data"]) & 0xFFFF_FFFF)
                   | (np.asarray(c["stream_last"], dtype=np.int64) << 32))
        for port, column, valid in compared:
            want.put(port, payload if column == "payload" else c[column], rows)
            care.mask(port, 1 if valid is None else c[valid], rows)
    return inputs, want, care


def replay_trace(top: VerilatedTop, trace: EngineTrace, kind: str, mm2s: bool,
                 payloads: dict[BufferDescriptor, np.ndarray] | None = None
                 ) -> tuple[int, dict[str, tuple]] | None:
    """Replay a recorded engine into ``top``; the first difference.

    ``top`` is fresh from reset, or where the replay of the recording's cycles before
    ``trace``'s left it (``trace`` the next stretch of it, ``payloads`` as
    :func:`engine_ports` takes them).

    Returns
    -------
    tuple or None
        ``(cycle, differences)`` with ``differences`` per signal ``(RTL, model)`` as
        :class:`~aiedma.model.cycle.engine.EngineCycle` names them, or None when every
        cycle agrees.
    """
    inputs, want, care = engine_ports(trace, kind, mm2s, top.ports, payloads)
    cycle, got = top.replay(inputs, want, care)
    if cycle is None:
        return None
    shown = {**{name: inputs.value(name, cycle) for name in inputs.names}, **got}
    differences = engine_cycle(shown.__getitem__, mm2s).differences(trace.signals(cycle))
    if not differences:   # a port the model states no signal for: name the port itself
        expected = {name: want.value(name, cycle) for name in want.names}
        differences = {port: (got[port], expected[port]) for port in got
                       if got[port] != expected[port]}
    return cycle, differences


def _default_top(kind: str, mm2s: bool) -> VerilatedTop:
    return VerilatedTop(engine_top(kind, mm2s))


HAND_OUT = 4096
"""Cycles of the model's run between hand-outs of what it recorded to the replays."""


class _Replays:
    """Every checked engine's replay, fed the recorded cycles while the model runs on.

    Tops of different libraries replay on threads of their own (a replay is one C call,
    which lets the model and the other replays run), those of one library in turn on
    one thread (they share its Verilator runtime); each engine's stretches in order, from
    where its last replay left the top. An engine that differed is replayed no further.
    """

    def __init__(self, channels: Sequence[Any], recorders: Sequence[EngineRecorder],
                 top: Callable[[str, bool], VerilatedTop] | None) -> None:
        self.channels, self.recorders = channels, recorders
        self.tops = [(top or _default_top)(ch.dma.kind, ch.is_mm2s) for ch in channels]
        threads: dict[int, ThreadPoolExecutor] = {}
        for t in self.tops:
            if id(t.library) not in threads:
                threads[id(t.library)] = ThreadPoolExecutor(max_workers=1)
        self._thread = [threads[id(t.library)] for t in self.tops]
        self._threads = list(threads.values())
        self._pending: list[Future] = []
        self.replayed = [0] * len(channels)   # cycles replayed, per engine
        self._payloads: list[dict[BufferDescriptor, np.ndarray]] = [{} for _ in channels]
        # per engine: (cycle of the run, differences, the stretch's trace, its cycle)
        self.found: list[tuple | None] = [None] * len(channels)

    def feed(self) -> None:
        """Hand every engine's newly recorded cycles to its replay."""
        for k, recorder in enumerate(self.recorders):
            trace = recorder.take()
            if trace is not None:
                self._pending.append(self._thread[k].submit(self._replay, k, trace))

    def _replay(self, k: int, trace: EngineTrace) -> None:
        if self.found[k] is not None:
            return
        channel = self.channels[k]
        found = replay_trace(self.tops[k], trace, channel.dma.kind, channel.is_mm2s,
                             self._payloads[k])
        if found is not None:
            self.found[k] = (self.replayed[k] + found[0], found[1], trace, found[0])
        self.replayed[k] += trace.cycles

    def wait(self) -> None:
        """Every replay handed out done (an error in one raised here)."""
        try:
            for done in self._pending:
                done.result()
        finally:
            for thread in self._threads:
                thread.shutdown()


def run_replayed(agents: Sequence[Agent], channels: Sequence[Any], max_cycles: int = 10_000_000,
                 seed: int | None = None, top: Callable[[str, bool], VerilatedTop] | None = None,
                 timing: dict | None = None) -> SystemReport:
    """Run the system on the model, every channel's engine replayed on Verilator.

    The replays follow the run: every :data:`HAND_OUT` cycles the recorded cycles go to
    them, and the run stops once a replay has found a difference.

    Parameters
    ----------
    agents : sequence of Agent
        Every agent of the system (the channels among them), in stepping order.
    channels : sequence of Channel
        The channels whose engine is checked as RTL (they must be idle).
    max_cycles : int
    seed : int, optional
        Named in a mismatch report.
    top : callable, optional
        ``(kind, mm2s) -> VerilatedTop`` (default: the exported engine top; the tests
        hand in deliberately wrong RTL).
    timing : dict, optional
        Filled with ``model_s`` (the run and its recording, the replays beside it),
        ``replay_s`` (the replays' time left after the run) and ``compared`` (engine
        cycles compared).

    Returns
    -------
    SystemReport
        The model's report (the RTL's too: every cycle of it agreed).

    Raises
    ------
    LoopMismatch
        At the first cycle an RTL port differs from the model engine's (the earliest
        over all channels; in a tie, the channel stepped first).
    DeadlockError, AiedmaError
        As :func:`~aiedma.model.system.scheduler.run_system`, when the RTL agreed up to
        there.
    """
    recorders = [EngineRecorder(channel) for channel in channels]
    replays = _Replays(channels, recorders, top)
    began = time.perf_counter()
    run = SystemRun(agents, max_cycles, exact=False)
    failure: BaseException | None = None
    try:
        hand_out = HAND_OUT
        while run.busy and not any(replays.found):
            run.advance()
            if run.cycles >= hand_out:
                replays.feed()
                hand_out = run.cycles + HAND_OUT
    except Exception as error:   # replayed first: an RTL difference before it comes first
        failure = error
    try:
        for recorder in recorders:
            recorder.finish(run.cycles)
        replays.feed()
    finally:   # the replays' threads end whatever happened
        recorded = time.perf_counter()
        replays.wait()
    first: LoopMismatch | None = None
    for channel, found in zip(channels, replays.found, strict=True):
        if found is not None and (first is None or found[0] < first.cycle):
            cycle, differences, trace, at = found
            run_index, position, bd = (int(trace.columns[n][at])
                                       for n in ("run", "position", "channel_bd"))
            first = loop_mismatch(channel.name, SIMULATOR, cycle, differences,
                                  trace.runs[run_index] if run_index >= 0 else None, position,
                                  None if bd < 0 else bd, seed)
    if timing is not None:
        timing.update(model_s=recorded - began, replay_s=time.perf_counter() - recorded,
                      compared=sum(r.cycles for r in recorders))
    if first is not None:
        raise first from failure
    if failure is not None:
        raise failure
    return run.report()
