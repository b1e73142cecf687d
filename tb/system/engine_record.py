"""What a system channel's engine sees and shows on every cycle of a model run.

:class:`EngineRecorder` watches one model channel's engine
(:class:`~aiedma.model.cycle.engine.ChannelEngine`) through a run of the system model
and records, per cycle, its inputs (the BD offered, ``o_ready``, ``mem_data``,
``i_valid``, ``i_data``, the lock grant) and every port it shows
(:class:`~aiedma.model.cycle.engine.EngineCycle`), with the BD and beat it is on.
That is the stimulus and the expected trace of the RTL engine in the same place
(:mod:`.loop_replay`).

The engine is watched, not replaced: its methods are wrapped on the instance, so it
stays a ``ChannelEngine`` and the scheduler's fast path still jumps steady stretches.
A stepped cycle is recorded as one row from the engine's own calls. A jump moves the
channel's words in bulk without calling the engine; the recorder wraps the channel's
``plan`` to see the jump and fills its cycles with NumPy: a stalled channel repeats
its last cycle (but for an S2MM's write: the cycle before a jump may write the word
taken before it, a stalled S2MM writes none in the jump), a streaming one moves one
beat per cycle, its reads, writes and words taken from the memory and the stream as
the jump moves them. A jump of a kind the
recorder cannot follow stops the run with :class:`RecordingError` rather than
recording something else.
"""

from __future__ import annotations

import functools
import operator
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from ...model.bd.descriptor import BufferDescriptor
from ...model.cycle.engine import EngineCycle
from ...model.errors import AiedmaError

__all__ = ["COLUMNS", "INPUTS", "OUTPUTS", "EngineRecorder", "EngineTrace", "RecordingError"]

INPUTS: tuple[str, ...] = ("bd", "o_ready", "mem_data_in", "i_valid", "i_data", "grant")
"""Input columns: the BD offered (an index into :attr:`EngineTrace.bds`, -1 for none)
and what the channel drives; ``grant`` is the lock unit's answer."""
OUTPUTS: tuple[str, ...] = tuple(f.name for f in fields(EngineCycle))
"""Output columns: every field of :class:`EngineCycle`, as the model engine showed it."""
WHERE: tuple[str, ...] = ("run", "position", "channel_bd")
"""Where the engine was: the running BD's beats (an index into :attr:`EngineTrace.runs`,
-1 for none), the beat position in them, and the channel's BD (-1 for none)."""
COLUMNS: tuple[str, ...] = INPUTS + OUTPUTS + WHERE

_SIGNALS = operator.attrgetter(*OUTPUTS)
_MEM_ADDR, _MEM_READ, _MEM_DATA_IN = (COLUMNS.index(n) for n in ("mem_addr", "mem_read",
                                                                 "mem_data_in"))
_BD, _RUN = COLUMNS.index("bd"), COLUMNS.index("run")


class RecordingError(AiedmaError):
    """The run did something the recording cannot follow (it would record wrong cycles)."""


@dataclass
class EngineTrace:
    """A recorded engine, from cycle 0.

    Attributes
    ----------
    blocks : list of (int, dict)
        The cycles in order, in stretches ``(cycles, values)``: per column of
        :data:`COLUMNS`, an array of that many entries, or one value held over them (a
        stalled jump repeats its cycle). A replay reads these (:func:`~.loop_replay.
        engine_ports`), so nothing is spread out cycle by cycle that it does not need.
    bds : list of BufferDescriptor
        The BDs the ``bd`` column indexes.
    runs : list of tuple
        The running BDs' beats ``(addresses, zeros, bd_id, bd)`` the ``run`` column indexes.
    """

    blocks: list[tuple[int, dict[str, Any]]]
    bds: list[BufferDescriptor]
    runs: list[tuple]

    @property
    def cycles(self) -> int:
        return sum(length for length, _ in self.blocks)

    @functools.cached_property
    def columns(self) -> dict[str, np.ndarray]:
        """:data:`COLUMNS`, int64, one entry per cycle, spread out on first use; the
        trace's blocks are these columns from then on (a column changed is what a replay
        sees)."""
        total, columns = self.cycles, {}
        for name in COLUMNS:
            column, start = np.empty(total, dtype=np.int64), 0
            for length, block in self.blocks:
                column[start:start + length] = block[name]   # an array, or one value
                start += length
            columns[name] = column
        self.blocks = [(total, columns)]
        return columns

    def signals(self, cycle: int) -> EngineCycle:
        """What the model engine showed in ``cycle``."""
        kinds = {f.name: f.type for f in fields(EngineCycle)}
        return EngineCycle(**{name: (bool if kinds[name] in (bool, "bool") else int)(
            self.columns[name][cycle]) for name in OUTPUTS})


@dataclass
class _Jump:
    """A jump the scheduler planned from cycle ``start``: its length, and what moved."""

    start: int
    cycles: int
    moved: bool
    block: dict[str, np.ndarray] | None = None


class EngineRecorder:
    """Records a model channel's engine through a run (see the module text).

    Parameters
    ----------
    channel : Channel
        An idle system channel running the model engine; watched until :meth:`finish`.
    """

    def __init__(self, channel: Any) -> None:
        self.channel, self.engine = channel, channel.engine
        self.mm2s = channel.is_mm2s
        self._bds: list[BufferDescriptor] = []
        self._bd_index: dict[int, int] = {}
        self._runs: list[tuple] = []
        self._run_index: dict[int, int] = {}
        self._rows: list[tuple] = []
        self._blocks: list[tuple[int, dict[str, Any]]] = []   # (cycles, columns) in order
        self.cycles = 0                  # cycles recorded: the next one expected
        self._jump: _Jump | None = None
        self._last: tuple | None = None  # the last stepped cycle's row
        self._read = 0                   # MM2S: the word the engine sees on mem_data next
        self._inputs: list = [-1, False, 0, False, 0, False]
        self._where: tuple = (-1, 0, -1)
        self._signals: tuple = ()
        engine, originals = self.engine, {}
        for name in ("drive", "grant", "sample", "clock"):
            originals[name] = getattr(engine, name)
            setattr(engine, name, getattr(self, f"_{name}"))
        for name in ("step", "plan"):
            originals[name] = getattr(channel, name)
            setattr(channel, name, getattr(self, f"_{name}"))
        self._original = originals

    # -- the engine's calls in a stepped cycle --

    def _index(self, table: list, index: dict[int, int], item: Any) -> int:
        if item is None:
            return -1
        key = id(item)
        if key not in index:
            index[key] = len(table)
            table.append(item)
        return index[key]

    def _drive(self, bd: BufferDescriptor | None, **inputs: Any) -> None:
        # Inputs passed on as given: an input the engine gains later still reaches it.
        self._inputs = [self._index(self._bds, self._bd_index, bd), inputs.get("o_ready", False),
                        inputs.get("mem_data", 0), inputs.get("i_valid", False),
                        inputs.get("i_data", 0), False]
        self._original["drive"](bd, **inputs)

    def _grant(self, granted: bool) -> None:
        self._inputs[5] = granted
        self._original["grant"](granted)

    def _sample(self) -> EngineCycle:
        signals = self._original["sample"]()
        run, position = self.engine.gate_beat()
        bd = self.channel.bd
        self._where = (self._index(self._runs, self._run_index, run), position,
                       -1 if bd is None else bd)
        self._signals = _SIGNALS(signals)
        return signals

    def _clock(self, accepted_beats: tuple | None = None) -> None:
        self._last = (*self._inputs, *self._signals, *self._where)
        self._rows.append(self._last)
        self.cycles += 1
        self._original["clock"](accepted_beats)

    def _step(self, cycle: int) -> Any:
        if cycle != self.cycles:
            self._catch_up(cycle)
        self._jump = None
        stall = self._original["step"](cycle)
        if self.mm2s and self._last is not None:
            row = self._last
            # What the channel read this cycle is on mem_data next cycle, else it holds.
            self._read = (self.channel.dma.memory.read(row[_MEM_ADDR]) if row[_MEM_READ]
                          else row[_MEM_DATA_IN])
        return stall

    # -- jumps --

    def _plan(self, cycles: int, moved: bool) -> Any:
        plan = self._original["plan"](cycles, moved)
        if plan is None:
            return None
        jump = self._jump = _Jump(self.cycles, cycles, moved)
        if moved and self.mm2s:
            push = plan.push

            def recorded_push() -> None:
                jump.block = self._mm2s_block(cycles)
                push()

            plan.push = recorded_push
        elif moved:
            pop = plan.pop

            def recorded_pop() -> None:
                jump.block = self._s2mm_block(cycles, pop)

            plan.pop = recorded_pop
        elif not self.mm2s:
            # A stalled S2MM took no word in the cycle before the jump, so it writes none
            # in the jump (that cycle itself may have written the word taken before it).
            jump.block = {"mem_write": 0, "mem_addr": 0, "mem_data": 0}
        return plan

    def _catch_up(self, cycle: int) -> None:
        """Fill cycles ``self.cycles .. cycle - 1``, which a jump covered."""
        jump, gap = self._jump, cycle - self.cycles
        if (jump is None or jump.start != self.cycles or jump.cycles != gap
                or (jump.moved and jump.block is None) or self._last is None):
            raise RecordingError(
                f"{self.channel.name}: cycles {self.cycles}..{cycle - 1} passed without a "
                "stepped cycle or a jump this recording follows")
        # A column the jump does not change holds the last stepped cycle's value: kept
        # as that one value, spread over the jump's cycles only when the trace is built.
        block: dict[str, Any] = dict(zip(COLUMNS, self._last, strict=True))
        if jump.block is not None:
            block.update(jump.block)
        self._flush()
        self._blocks.append((gap, block))
        self.cycles = cycle
        self._jump = None

    def _flush(self) -> None:
        if self._rows:
            rows = np.asarray(self._rows, dtype=np.int64)
            self._blocks.append((len(self._rows),
                                 {name: rows[:, k] for k, name in enumerate(COLUMNS)}))
            self._rows = []

    def _beats(self, cycles: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The next ``cycles`` beats of the running BD: positions, addresses, zeros, lasts."""
        slots = self.engine.slots
        run, start = slots.run, slots.position
        positions = np.arange(start, start + cycles, dtype=np.int64)
        # A system channel's runs carry their beats as arrays too (after the ID and BD).
        arrays = run[4:6] if len(run) >= 6 else run[:2]
        addresses = np.asarray(arrays[0][start:start + cycles], dtype=np.int64)
        zeros = np.asarray(arrays[1][start:start + cycles], dtype=bool)
        return positions, addresses, zeros, positions == len(run[0]) - 1

    def _mm2s_block(self, cycles: int) -> dict[str, np.ndarray]:
        """A streaming MM2S jump: a beat read and a word out per cycle, before it moves."""
        positions, addresses, zeros, lasts = self._beats(cycles)
        read = addresses[~zeros]
        values = np.zeros(cycles, dtype=np.int64)
        for memory, mask, offsets in self.channel.dma.memory.locate(read) or ():
            chosen = np.flatnonzero(~zeros)[mask]
            values[chosen] = memory.data[offsets]
        datapath = self.engine.datapath
        # The word out in jump cycle j is j places down the datapath's queue: the buffer,
        # the word in flight (on mem_data now), then the words read in the jump.
        flight = 0 if datapath.flight[0] else self._read
        queue = np.concatenate((np.asarray([w for w, _ in datapath.buffer], dtype=np.int64),
                                [flight], values))
        # mem_data holds the last word read: before cycle j, the last read of cycles < j.
        seen = np.concatenate(([self._read], values))
        fresh = np.concatenate(([True], ~zeros))
        held = seen[np.maximum.accumulate(np.where(fresh, np.arange(cycles + 1), 0))]
        self._read = int(held[-1])
        return {"address": addresses, "zero": zeros.astype(np.int64),
                "last": lasts.astype(np.int64), "data": queue[:cycles],
                "mem_read": (~zeros).astype(np.int64), "mem_addr": np.where(zeros, 0, addresses),
                "mem_data_in": held[:cycles], "position": positions}

    def _s2mm_block(self, cycles: int, pop: Any) -> dict[str, np.ndarray]:
        """A streaming S2MM jump: a word taken per cycle, each written the cycle after."""
        positions, addresses, zeros, lasts = self._beats(cycles)
        pending = self.engine.datapath.write
        stream = self.channel.stream
        taken: list = []
        bulk_pop_words = stream.bulk_pop_words

        def watched(count: int) -> tuple:
            popped = bulk_pop_words(count)
            taken.append(popped[0])
            return popped

        stream.bulk_pop_words = watched
        try:
            pop()
        finally:
            del stream.bulk_pop_words   # the class's method again
        words = np.concatenate(taken) if taken else np.zeros(0, dtype=np.int64)
        if words.size != cycles or pending is None:
            raise RecordingError(f"{self.channel.name}: a jump of {cycles} cycles took "
                                 f"{words.size} words with a write pending: {pending}")
        # Every jump cycle writes (the pending word first), whether or not the cycle
        # before the jump did (it may have taken its first word).
        return {"address": addresses, "zero": zeros.astype(np.int64),
                "last": lasts.astype(np.int64), "i_data": words, "data": words,
                "mem_write": np.ones(cycles, dtype=np.int64),
                "mem_addr": np.concatenate(([pending[0]], addresses[:-1])),
                "mem_data": np.concatenate(([pending[1]], words[:-1])), "position": positions}

    # -- handing out --

    def take(self) -> EngineTrace | None:
        """The cycles recorded since the last call, up to :attr:`cycles` (a jump not yet
        caught up comes with a later call), as a trace of their own; None if there are
        none. A replay can so follow the run while it goes on, and the recording keeps
        them no longer (:meth:`finish` gives the cycles after them): a long run holds
        one hand-out's cycles, BDs and beats, not the whole run's. Each trace numbers
        the BDs and runs it holds from 0."""
        self._flush()
        if not self._blocks:
            return None
        taken = EngineTrace(self._blocks, self._bds, self._runs)
        self._blocks, self._bds, self._bd_index, self._runs, self._run_index = [], [], {}, [], {}
        # What the next cycles or a jump's (from _last) go on with, numbered afresh.
        def bd(k: int) -> int:
            return self._index(self._bds, self._bd_index, taken.bds[k]) if k >= 0 else k

        def run(k: int) -> int:
            return self._index(self._runs, self._run_index, taken.runs[k]) if k >= 0 else k

        if self._last is not None:   # (_inputs and _where are set in every stepped cycle)
            last = list(self._last)
            last[_BD], last[_RUN] = bd(last[_BD]), run(last[_RUN])
            self._last = tuple(last)
        return taken

    # -- the end --

    def finish(self, cycles: int) -> EngineTrace:
        """Stop watching; the trace up to ``cycles`` (the run's cycle count), a last jump
        included, from the cycle after those :meth:`take` handed out (from cycle 0 if it
        was never called)."""
        for name in ("drive", "grant", "sample", "clock"):
            delattr(self.engine, name)
        for name in ("step", "plan"):
            delattr(self.channel, name)
        if cycles > self.cycles and self._jump is not None:
            self._catch_up(cycles)
        self._flush()
        return EngineTrace(self._blocks, self._bds, self._runs)
