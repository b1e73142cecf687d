"""Whole RTL DMAs inside the system model, compared with the model channels.

:func:`check_program_channels` runs a random task program (:mod:`.random_programs`)
with the model's channels, then with the whole RTL DMA (:mod:`.dma_block`: shared BD
table, lock unit, every channel) in their place, and compares the words and the cycles they
move in, the cycle count, the memory, the tokens and the locks. :func:`run_dma` is the
same check for a program given as register writes. The regression over random programs
is :mod:`aiedma.tb.regress.dma_programs`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...model.arch.kinds import DEFAULT_ROW, DMA_KINDS
from ...model.arch.registers import STATUS_FIELDS, status_address
from ...model.errors import AiedmaError, field_error
from ...model.system.registers import (
    RegisterWriter,
    apply_writes,
    program_writes,
    read_register,
)
from ...model.system.scheduler import DeadlockError, Stall, SystemReport, run_system
from ...model.system.stream import Stream, StreamSink, StreamSource
from ..common.simulators import check_simulator
from .dma_block import RtlDmaAgent, run_rtl_dma
from .dma_replay import DmaRecorder, replay_dma, replayable
from .loop import RUNS_ON
from .random_programs import program_dma

__all__ = ["DmaRun", "check_program_channels", "check_program_status", "register_writes",
           "registers_after", "run_dma", "words_taken"]


def register_writes(channel: Any) -> list[tuple[int, int]]:
    """``(address, word)`` writes that load a model channel's DMA: its BD table, the queued
    tasks and the locks (``program_writes``); a channel takes the BD words and its own
    start-queue writes and leaves the rest."""
    return program_writes(channel.dma)


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


def _invalid_cycles(channels: Sequence[Any]) -> list[int]:
    """Record the cycles in which one of ``channels`` shows ``error_bd_invalid`` in its
    status (wraps their ``step``): the cycles the RTL DMA's ``error`` output, its
    channels' error registers, must be high."""
    cycles: set[int] = set()
    lsb = STATUS_FIELDS["error_bd_invalid"][0]
    for channel in channels:
        def stepped(cycle: int, step: Any = channel.step, channel: Any = channel) -> Any:
            stall = step(cycle)
            if channel.error == "error_bd_invalid" and channel.status_word() >> lsb & 1:
                cycles.add(cycle)
            return stall
        channel.step = stepped
    return cycles   # a set, filled as the run goes (sorted when compared)


def check_program_channels(program: Any, simulator: str = "amaranth", *,
                           reuse: bool = False, lockstep: bool = False) -> SystemReport:
    """Run a :class:`~aiedma.tb.system.random_programs.RandomProgram` with model channels, then with
    the whole RTL DMA (:mod:`.dma_block`: shared BD table, lock unit, every channel) in
    their place; raise ``AssertionError`` on any difference.

    Compared: the cycles each sink takes each word in and the words, the cycle count,
    the words moved, the target memory, the tokens of each channel (their cycles and the
    controller IDs they carry) and the locks.
    ``reuse`` keeps the block's Amaranth simulator between programs (:func:`run_rtl_dma`).

    On Verilator the model's run is recorded and replayed into the block
    (:mod:`.dma_replay`: every word, memory access and token compared in its cycle,
    the locks read back at the end), unless ``lockstep`` asks for the loop run, or a
    BD names a neighbour's lock (the replay does not answer the neighbour ports).
    """
    if simulator == "verilator" and not lockstep:
        agents, channels, dma, sinks = program.build()
        if replayable(dma):
            return _check_replayed(program.seed, agents, channels, dma)
    agents, channels, dma, sinks = program.build()
    model_times = [_timed(sink) for sink in sinks]
    model_errors = _invalid_cycles(channels)
    report = run_system(agents, exact=True)   # every cycle stepped: _timed sees each word
    model_tokens = [[(d.cycle, d.controller_id) for d in ch.done if d.token]
                    for ch in channels]
    agents, channels, rtl_dma, rtl_sinks = program.build()
    rtl_times = [_timed(sink) for sink in rtl_sinks]
    rtl_report, block = run_rtl_dma(agents, rtl_dma, channels, report.cycles + 200, simulator,
                                    reuse=reuse)
    rtl_tokens = [list(zip(block.tokens[name], block.token_controllers[name], strict=True))
                  for name in (f"{c.direction}{c.index}" for c in channels)]
    seed = f"seed={program.seed}"
    for sink, times, rtl_sink, rtl_time in zip(sinks, model_times, rtl_sinks, rtl_times,
                                               strict=True):
        if rtl_sink.data != sink.data or rtl_time != times:
            raise AssertionError(
                f"{seed}: {sink.name}'s words or their cycles differ: model "
                f"{list(zip(times, sink.data, strict=False))[:8]}..., RTL "
                f"{list(zip(rtl_time, rtl_sink.data, strict=False))[:8]}...")
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
        raise AssertionError(f"{seed}: tokens (cycle, controller ID) differ: model "
                             f"{model_tokens}, RTL {rtl_tokens}")
    if block.error_cycles != sorted(model_errors):
        raise AssertionError(f"{seed}: the cycles of a BD error differ: model "
                             f"{sorted(model_errors)[:8]}, RTL {block.error_cycles[:8]}")
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


def check_program_status(program: Any, simulator: str = "amaranth", *,
                         reuse: bool = False) -> list[tuple[int, int, int]]:
    """Run a random task program with a host reading its channels' status registers, one
    channel a cycle in turn, every cycle of the run, on the model and on the whole RTL
    DMA; raise ``AssertionError`` at the first word that differs.

    The status word (``STATUS_FIELDS``: running, queue size, the BD fetched last, the
    stall bits, the sticky flags) is read at the end of each cycle as the RTL's register
    port reads it in that cycle (the model's ``Channel.status_word``). ``reuse`` keeps
    the block's Amaranth simulator between programs. Returns the model's reads,
    ``(cycle, address, word)`` each (the RTL's are equal).
    """
    agents, channels, dma, _ = program.build()
    cycles = run_system(agents, exact=True).cycles
    addresses = [status_address(dma.kind, c.direction, c.index) for c in channels]
    timed = [(cycle, addresses[cycle % len(addresses)], None) for cycle in range(cycles)]
    agents, channels, dma, _ = program.build()
    writer = RegisterWriter(dma, timed)
    run_system([*agents, writer], exact=True)
    agents, channels, rtl_dma, _ = program.build()
    _, block = run_rtl_dma(agents, rtl_dma, channels, cycles + 200, simulator,
                           reuse=reuse, timed_writes=timed)
    for want, got in zip(writer.reads, block.reads, strict=True):
        if want != got:
            cycle, address, word = want
            fields = {name: (word >> lsb & (1 << width) - 1, got[2] >> lsb & (1 << width) - 1)
                      for name, (lsb, width) in STATUS_FIELDS.items()
                      if (word ^ got[2]) >> lsb & (1 << width) - 1}
            raise AssertionError(f"seed={program.seed}: the status register {address:#x} "
                                 f"read in cycle {cycle} differs (model, RTL): {fields}")
    return writer.reads


def _own_locks(dma: Any) -> list[int]:
    own = DMA_KINDS[dma.kind].lock_window("own").start
    return [dma.locks.route(own + k)[0][k] for k in range(DMA_KINDS[dma.kind].locks)]


def _check_replayed(seed: Any, agents: list, channels: list, dma: Any) -> SystemReport:
    """:func:`check_program_channels` by replay of the model's run (:mod:`.dma_replay`)."""
    block = RtlDmaAgent(dma, channels, "verilator")   # its register writes: the start state
    recorder = DmaRecorder(channels)
    try:
        report = run_system(agents, exact=True)
    finally:
        recorded = recorder.finish()
    replay_dma(block, channels, recorded, _own_locks(dma), f"seed={seed}")
    return report


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
    token_controllers : dict of str to list of int
        The controller ID each of those tokens carried.
    locks : list of int
        The tile's own locks after the run.
    cycles : int
    word_cycles : dict of str to list of int
        Per channel with tasks: the cycles it moved a word on its stream (the model's,
        which the RTL's equal: its outputs' cycles are compared, and on Verilator every
        port of every cycle).
    reads : list of (int, int, int)
        ``(cycle, address, word)`` of each timed read (``timed_writes`` with value None).
    flags : dict of str to dict of str to int
        Per S2MM channel with tasks: its finish-on-TLAST error flags after the run (the
        model's ``Channel.status_fields``; the RTL's read from its status register).
    """

    outputs: dict[str, list[tuple[int, bool]]]
    memory: np.ndarray
    tokens: dict[str, list[int]]
    locks: list[int]
    cycles: int
    word_cycles: dict[str, list[int]] = field(default_factory=dict)
    flags: dict[str, dict[str, int]] = field(default_factory=dict)
    reads: list[tuple[int, int, int]] = field(default_factory=list)
    token_controllers: dict[str, list[int]] = field(default_factory=dict)


def _dma_system(kind: str, writes: Sequence[Sequence[int]], memory: np.ndarray,
                inputs: dict, ready: dict, timed: Sequence[Sequence[int]] = (),
                compression: bool = True, allowed: tuple[int, int] | None = None) -> tuple:
    dma = program_dma(kind, DEFAULT_ROW[kind], compression=compression, allowed=allowed)
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
    if timed:   # stepped last: its writes land after the channels' cycle
        agents.append(RegisterWriter(dma, timed))
    return dma, store, offset, agents, channels, sinks, times


def words_taken(kind: str, writes: Sequence[Sequence[int]], memory: Any = None,
                timed_writes: Sequence[Sequence[int]] = (), spare: int = 4096) -> dict[str, int]:
    """Per S2MM channel with tasks: the words it takes in the model's run of a program
    (:func:`run_dma`'s arguments) offered ``spare`` words, a run that ends when nothing
    moves with words left on its stream. Given exactly that many words, the program's
    run is the same and ends."""
    memory = np.zeros(0, dtype=np.int64) if memory is None else np.asarray(memory)
    names = [f"s2mm{k}" for k in range(DMA_KINDS[kind].channels)]
    inputs = dict.fromkeys(names, np.arange(spare))
    _, _, _, agents, channels, _, _ = _dma_system(kind, writes, memory, inputs, {},
                                                  timed_writes)
    try:
        run_system(agents, exact=True)
    except DeadlockError:
        pass
    return {f"s2mm{c.index}": c.words for c in channels if not c.is_mm2s}


def registers_after(kind: str, writes: Sequence[Sequence[int]], memory: Any,
                    inputs: dict, addresses: Sequence[int],
                    timed_writes: Sequence[Sequence[int]] = ()) -> list[int]:
    """The word the model's DMA reads at each of ``addresses`` after its run of a program
    (:func:`run_dma`'s arguments, no backpressure): BD words with their iteration
    write-back, controls, status words in the run's last cycle, lock values, write
    counts. A program whose outcome does not depend on timing ends with the same words
    under any backpressure."""
    dma, _, _, agents, _, _, _ = _dma_system(kind, writes, np.asarray(memory), dict(inputs), {},
                                             timed_writes)
    run_system(agents, exact=True)
    return [read_register(dma, address) for address in addresses]


def run_dma(kind: str, writes: Sequence[Sequence[int]], memory: Any = None,
            inputs: dict | None = None, ready: dict | None = None,
            simulator: str | None = "amaranth",
            timed_writes: Sequence[Sequence[int]] = (), *, reuse: bool = False,
            compression: bool = True, allowed: tuple[int, int] | None = None) -> DmaRun:
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
        Where the whole RTL DMA runs; None runs the model alone. On Verilator the
        model's run is replayed into the block (:mod:`.dma_replay`) unless a BD names
        a neighbour's lock or there are ``timed_writes``.
    timed_writes : sequence of (cycle, address, value)
        Register writes during the run (a value of None: a read, whose words are
        compared and returned in ``reads``), each at the end of its cycle (the model's
        :class:`~aiedma.model.system.registers.RegisterWriter`, the RTL's register
        port; one a cycle), e.g. a channel reset and a task pushed after it. Only
        channels with a task before the run take part.
    reuse : bool
        Keep the Amaranth simulator of the block between runs (:func:`run_rtl_dma`).
    compression : bool
        False: the model DMA and the RTL block built without the (de)compressors.
    allowed : (int, int), optional
        The model DMA and the RTL block built with this window protection
        (``DMA(allowed=...)``).

    Returns
    -------
    DmaRun

    Raises
    ------
    RegisterError
        For a write the DMA has no register for (before anything runs).
    AssertionError
        If the RTL DMA differs from the model channels: the words or their cycles
        at an output, the cycle count, the memory, the locks or the token cycles.
    """
    if simulator is not None:
        check_simulator(simulator, RUNS_ON, "run_dma (None runs the model alone)")
    memory = np.zeros(0, dtype=np.int64) if memory is None else np.asarray(memory)
    inputs, ready = dict(inputs or {}), dict(ready or {})
    dma, store, offset, agents, channels, sinks, times = _dma_system(
        kind, writes, memory, inputs, ready, timed_writes, compression, allowed)
    replayed = (simulator == "verilator" and bool(channels) and replayable(dma)
                and not timed_writes)
    if replayed:   # the block's register writes are the DMA's state before the run
        block, recorder = RtlDmaAgent(dma, channels, "verilator"), DmaRecorder(channels)
    word_cycles = {f"{c.direction}{c.index}": _timed(c) for c in channels}
    model_errors = _invalid_cycles(channels)
    report = run_system(agents, exact=True)   # every cycle stepped: the word times are recorded
    model = _dma_result(dma, store, offset, memory.size, channels, sinks, report.cycles)
    model.word_cycles = word_cycles
    model.flags = {f"s2mm{c.index}": c.status_fields() for c in channels if not c.is_mm2s}
    writer = agents[-1] if timed_writes else None
    model.reads = list(writer.reads) if writer is not None else []
    model_tokens = {f"{c.direction}{c.index}": [d.cycle for d in c.done if d.token]
                    for c in channels}
    model_controllers = {f"{c.direction}{c.index}": [d.controller_id for d in c.done
                                                     if d.token] for c in channels}
    if replayed:
        replay_dma(block, channels, recorder.finish(), model.locks, "run_dma")
    model.token_controllers = model_controllers
    if simulator is None or replayed:
        model.tokens = model_tokens
        return model
    dma, store, offset, agents, channels, sinks, rtl_times = _dma_system(
        kind, writes, memory, inputs, ready, compression=compression, allowed=allowed)
    rtl_report, block = run_rtl_dma(agents, dma, channels, report.cycles + 200, simulator,
                                    timed_writes=timed_writes, reuse=reuse)
    result = _dma_result(dma, store, offset, memory.size, channels, sinks, rtl_report.cycles)
    result.tokens = {f"{c.direction}{c.index}": block.tokens[f"{c.direction}{c.index}"]
                     for c in channels}
    result.token_controllers = {name: block.token_controllers[name]
                                for name in model_controllers}
    result.locks = block.locks
    result.word_cycles = word_cycles
    result.flags = {name: {f: block.status[name] >> STATUS_FIELDS[f][0] & 1 for f in flags}
                    for name, flags in model.flags.items()}
    result.reads = block.reads
    for what, want, got in (("outputs", model.outputs, result.outputs),
                            ("FoT flags", model.flags, result.flags),
                            ("register reads", model.reads, result.reads),
                            ("BD error cycles", sorted(model_errors), block.error_cycles),
                            ("output cycles", times, rtl_times),
                            ("cycles", model.cycles, result.cycles),
                            ("locks", model.locks, result.locks),
                            ("tokens", model_tokens, result.tokens),
                            ("tokens' controller IDs", model_controllers,
                             result.token_controllers)):
        if want != got:
            first = _first_read_difference(want, got) if what == "register reads" else ""
            raise AssertionError(f"run_dma: the RTL's {what} differ from the model's: "
                                 f"{first}model {want}, RTL {got}")
    if not np.array_equal(model.memory, result.memory):
        raise AssertionError("run_dma: the memory after the RTL run differs from the model's")
    return result


def _first_read_difference(want: list, got: list) -> str:
    """The first read whose word differs, as the status fields that differ (a status
    register) or the two words; the text ends with a space."""
    for (cycle, address, word), (_, _, other) in zip(want, got, strict=False):
        if word != other:
            fields = {name: (word >> lsb & (1 << width) - 1, other >> lsb & (1 << width) - 1)
                      for name, (lsb, width) in STATUS_FIELDS.items()
                      if (word ^ other) >> lsb & (1 << width) - 1}
            return (f"first in cycle {cycle} at {address:#x}: {word:#010x} against "
                    f"{other:#010x} (as status fields, model and RTL: {fields}); ")
    return f"{len(want)} reads against {len(got)}; "


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

