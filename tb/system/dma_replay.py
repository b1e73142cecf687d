"""A whole RTL DMA checked by replay of the model's run, every port event on every cycle.

The model channels of a DMA run a program; :class:`DmaRecorder` records, per cycle and
channel, what the whole RTL DMA (:class:`~aiedma.tb.system.dma_block.RtlDmaAgent`) would
be given in their place (``o.ready``, the memory word read, ``i.valid`` and the word
offered) and what it must do (the word pushed or taken, the memory read or write, the
token). :func:`replay_dma` loads the Verilated block through its register port as the
loop run does, replays the recorded cycles in one C loop
(:meth:`~aiedma.tb.system.loop_verilator.VerilatedTop.replay`), then reads its locks
back through the register port.

Why this is the closed loop (as :mod:`.loop_replay` for engines): every value the
system gives the block in a cycle answers what the block did before; while the RTL
does what the model channels did, it gets what they got, so a replay with no
difference is the loop run of :func:`~aiedma.tb.system.dma_check.check_program_channels`,
cycle for cycle, and the first difference is where the loop run would first have
moved something else. What the model cannot see is not compared: ``o.valid`` while
``o.ready`` is low, ``i.ready`` while ``i.valid`` is low.

Locks of a neighbouring tile go out on the block's neighbour ports, which the replay
does not answer: :func:`replayable` says whether a DMA's BDs stay on its own locks.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...model.arch.kinds import DMA_KINDS
from ...model.arch.registers import STATUS_FIELDS
from ...model.system.stream import Beat
from .dma_block import RtlDmaAgent
from .loop_verilator import PortRows

__all__ = ["DmaRecorder", "replay_dma", "replayable"]

_COLUMNS = ("o_ready", "i_valid", "i_payload", "mem_data_in", "moved", "payload",
            "mem_read", "mem_write", "mem_addr", "mem_data", "bd", "invalid")
_SIGNALS = operator.attrgetter("mem_read", "mem_write", "mem_addr", "mem_data")
_INVALID = STATUS_FIELDS["error_bd_invalid"][0]


def replayable(dma: Any) -> bool:
    """Whether every lock the DMA's valid BDs name is one of its own."""
    own = DMA_KINDS[dma.kind].lock_window("own")
    for bd in dma.bds.values():
        if not bd.valid_bd:
            continue
        if bd.lock_acq_enable and bd.lock_acq_id not in own:
            return False
        if bd.lock_rel_value and bd.lock_rel_id not in own:
            return False
    return True


class _ChannelRecorder:
    """One model channel's cycles as its RTL channel's ports (see the module text)."""

    def __init__(self, channel: Any) -> None:
        self.channel, self.rows = channel, []
        self._mm2s = channel.is_mm2s   # (a property: asked every cycle)
        self._moved: Beat | None = None
        self._mem_data = 0
        self._signals: tuple = (False, False, 0, 0)
        stream, engine = channel.stream, channel.engine
        self._stream_call = "push" if channel.is_mm2s else "pop"
        self._originals = {"step": channel.step, "drive": engine.drive,
                           "sample": engine.sample,
                           self._stream_call: getattr(stream, self._stream_call)}
        channel.step, engine.drive, engine.sample = self._step, self._drive, self._sample
        setattr(stream, self._stream_call, self._move)

    def _move(self, *beat: Beat) -> Any:
        moved = self._originals[self._stream_call](*beat)
        self._moved = beat[0] if beat else moved
        return moved

    def _drive(self, bd: Any, **inputs: Any) -> None:
        self._mem_data = inputs.get("mem_data", 0)
        self._originals["drive"](bd, **inputs)

    def _sample(self) -> Any:
        signals = self._originals["sample"]()
        self._signals = _SIGNALS(signals)
        return signals

    def _step(self, cycle: int) -> Any:
        channel = self.channel
        stream = channel.stream
        if self._mm2s:
            o_ready, i_valid, offered = stream.can_push(), False, 0
        else:
            o_ready, i_valid = False, stream.can_pop()
            if i_valid:
                beat = stream.peek()
                offered = (beat.data & 0xFFFF_FFFF) | int(beat.last) << 32
            else:
                offered = 0
        self._moved = None
        stall = self._originals["step"](cycle)
        moved = self._moved
        payload = 0 if moved is None else (moved.data & 0xFFFF_FFFF) | int(moved.last) << 32
        read, write, address, data = self._signals
        bd = channel.bd
        # The channel's error register (its status's error_bd_invalid in this cycle). The
        # status shows the errors of the cycle's start, and a step only adds errors: a
        # channel without the error now had none then (the status word takes a while).
        invalid = ("error_bd_invalid" in channel.errors
                   and channel.status_word() >> _INVALID & 1)
        self.rows.append((o_ready, i_valid, offered, self._mem_data, moved is not None, payload,
                          read, write, address if read or write else 0,
                          data & 0xFFFF_FFFF if write else 0, -1 if bd is None else bd,
                          invalid))
        return stall

    def finish(self) -> dict[str, np.ndarray]:
        channel, engine = self.channel, self.channel.engine
        for name in ("step",):
            delattr(channel, name)
        for name in ("drive", "sample"):
            delattr(engine, name)
        delattr(channel.stream, self._stream_call)
        rows = np.asarray(self.rows, dtype=np.int64).reshape(-1, len(_COLUMNS))
        columns = {name: rows[:, k] for k, name in enumerate(_COLUMNS)}
        tokens = np.zeros(rows.shape[0], dtype=np.int64)
        controllers = np.zeros(rows.shape[0], dtype=np.int64)
        for done in channel.done:
            if done.token and done.cycle < tokens.size:
                tokens[done.cycle] = 1
                controllers[done.cycle] = done.controller_id
        columns["token"] = tokens
        columns["token_controller"] = controllers
        return columns


class DmaRecorder:
    """Records the channels of a model DMA through a run (every cycle stepped).

    Parameters
    ----------
    channels : sequence of Channel
        The channels the RTL DMA stands for, idle, each with its stream connected.
    """

    def __init__(self, channels: Sequence[Any]) -> None:
        self.channels = [_ChannelRecorder(channel) for channel in channels]

    def finish(self) -> list[dict[str, np.ndarray]]:
        """Stop watching; per channel, its columns (one entry per cycle)."""
        return [recorder.finish() for recorder in self.channels]


def _port_names(channels: Sequence[Any]) -> tuple[list[str], list[str]]:
    """The block's ports a replay drives and compares for these channels."""
    inputs, outputs = [], []
    for channel in channels:
        path = f"{channel.direction}__{channel.index}__"
        if channel.is_mm2s:
            inputs += [f"{path}o__ready", f"{path}mem_data"]
            outputs += [f"{path}o__valid", f"{path}o__payload", f"{path}mem_en",
                        f"{path}mem_addr"]
        else:
            inputs += [f"{path}i__valid", f"{path}i__payload"]
            outputs += [f"{path}i__ready", f"{path}mem_we", f"{path}mem_addr",
                        f"{path}mem_data"]
        outputs += [f"{path}token", f"{path}token_controller"]
    return inputs, [*outputs, "error", "reg_rdata", "busy"]


def _channel_rows(channels: Sequence[Any], recorded: Sequence[dict[str, np.ndarray]],
                  inputs: PortRows, want: PortRows, care: PortRows, run: slice) -> None:
    """The channels' recorded cycles into the rows of the run: the block's inputs, its
    expected outputs and their care masks (a payload while its valid or enable is high;
    what the model cannot see is not compared, see the module text)."""
    held = slice(run.stop, None)   # after the run, the inputs hold the run's last values

    def drive(port: str, column: np.ndarray) -> None:
        inputs.put(port, column, run)
        if column.size:
            inputs.put(port, column[-1], held)

    def compare(port: str, column: np.ndarray, when: Any = 1) -> None:
        want.put(port, column, run)
        care.mask(port, when, run)

    for channel, c in zip(channels, recorded, strict=True):
        path = f"{channel.direction}__{channel.index}__"
        if channel.is_mm2s:
            drive(f"{path}o__ready", c["o_ready"])
            drive(f"{path}mem_data", c["mem_data_in"])
            compare(f"{path}o__valid", c["moved"], c["o_ready"])
            compare(f"{path}o__payload", c["payload"], c["moved"])
            compare(f"{path}mem_en", c["mem_read"])
            compare(f"{path}mem_addr", c["mem_addr"], c["mem_read"])
        else:
            drive(f"{path}i__valid", c["i_valid"])
            drive(f"{path}i__payload", c["i_payload"])
            compare(f"{path}i__ready", c["moved"], c["i_valid"])
            compare(f"{path}mem_we", c["mem_write"])
            compare(f"{path}mem_addr", c["mem_addr"], c["mem_write"])
            compare(f"{path}mem_data", c["mem_data"], c["mem_write"])
        compare(f"{path}token", c["token"])
        compare(f"{path}token_controller", c["token_controller"], c["token"])
    # The block's error output: its channels' error registers (the lock unit's error is
    # the model's LockError, which ends a run before any replay).
    invalid = np.zeros(run.stop - run.start, dtype=np.int64)
    for c in recorded:
        invalid |= c["invalid"]
    compare("error", invalid)


class _Rows:
    """Stands in for the block's ports while one of its register sequences
    (:meth:`RtlDmaAgent.load`, :meth:`RtlDmaAgent.read_locks`) runs: each cycle's
    driven values become a row, so the replay runs the same sequence."""

    def __init__(self, sequence: Any) -> None:
        self.rows: list[dict[str, int]] = []
        self.after: dict[str, int] = {}   # set after the last cycle: holds from then on
        for _ in sequence(self):
            self.rows.append(self.after)
            self.after = {}

    def set(self, path: str, value: int) -> None:
        self.after[path.replace(".", "__")] = int(value)

    def get(self, path: str) -> int:
        return 0


def _sequence(block: RtlDmaAgent, name: str) -> _Rows:
    ports, block.ports_ = block.ports_, None
    try:
        return _Rows(lambda rows: (setattr(block, "ports_", rows), getattr(block, name)())[1])
    finally:
        block.ports_ = ports


def _register_sets(block: RtlDmaAgent, cycles: int, locks: int) -> tuple[dict[str, list], int,
                                                                          int]:
    """What the register port is set to over the load, the run and the reads of the
    first ``locks`` locks: per port, ``(row, value)`` from which it holds (0 before the
    first); the load's length and the rows in all."""
    load, reads = _sequence(block, "load"), _sequence(block, "read_locks")
    # The channels' status words read after the locks are not compared: not replayed.
    reads.rows = reads.rows[:locks + 1]
    sets: dict[str, list] = {}
    after_load = len(load.rows)
    after_run = after_load + cycles
    timeline = [*enumerate(load.rows), (after_load, load.after),
                *((after_run + k, row) for k, row in enumerate(reads.rows))]
    for at, row in timeline:
        for name, value in row.items():
            sets.setdefault(name, []).append((at, value))
    return sets, after_load, after_run + len(reads.rows)


def _held(sets: list, total: int) -> np.ndarray:
    """A port's value in each of ``total`` rows, each set holding until the next."""
    starts = np.asarray([at for at, _ in sets] + [total], dtype=np.int64)
    values = np.asarray([0] + [value for _, value in sets], dtype=np.int64)
    column = np.repeat(values, np.diff(np.concatenate(([0], starts))))
    return column[:total]


@dataclass
class _Replay:
    """A recorded DMA run as the rows of its replay (:func:`_prepared`)."""

    block: RtlDmaAgent
    channels: Sequence[Any]
    recorded: Sequence[dict[str, np.ndarray]]
    inputs: PortRows
    want: PortRows
    care: PortRows
    loading: int
    label: str

    def run(self) -> None:
        """Replay the rows into the block; raise at the first difference (see
        :func:`replay_dma`)."""
        cycle, got = self.block.ports_.top.replay(self.inputs, self.want, self.care)
        if cycle is not None:
            raise AssertionError(_difference(self, cycle, got))


def _prepared(block: RtlDmaAgent, channels: Sequence[Any],
              recorded: Sequence[dict[str, np.ndarray]], locks: Sequence[int],
              label: str) -> _Replay:
    """:func:`replay_dma`'s rows (the arguments are the same)."""
    ports = block.ports_.top.ports
    cycles = recorded[0]["bd"].size if recorded else 0
    sets, loading, total = _register_sets(block, cycles, len(locks))
    input_names, output_names = _port_names(channels)
    inputs = PortRows(ports, [*input_names, *sorted(sets)], total)
    want, care = PortRows(ports, output_names, total), PortRows(ports, output_names, total)
    _channel_rows(channels, recorded, inputs, want, care, slice(loading, loading + cycles))
    for name, changes in sets.items():
        inputs.put(name, _held(changes, total))
    # The lock reads: the word asked for in one cycle is on reg_rdata in the next.
    first_read = loading + cycles
    answers = slice(first_read + 1, first_read + 1 + len(locks))
    want.put("reg_rdata", np.asarray(locks, dtype=np.int64), answers)
    care.mask("reg_rdata", 1, answers)
    care.mask("busy", 1, slice(first_read, first_read + 1))   # the loop run ends: not busy
    return _Replay(block, channels, recorded, inputs, want, care, loading, label)


def replay_dma(block: RtlDmaAgent, channels: Sequence[Any],
               recorded: Sequence[dict[str, np.ndarray]], locks: Sequence[int],
               label: str = "replay_dma") -> None:
    """Replay a recorded run into ``block`` (Verilator), loaded and read back as the
    loop run does, in one C loop; raise at the first difference.

    Parameters
    ----------
    block : RtlDmaAgent
        Made on ``"verilator"`` from the model DMA before the model ran (its register
        writes are the DMA's BDs, queued tasks and locks at the start).
    channels : sequence of Channel
        The model channels it stands for, in the order they were recorded.
    recorded : sequence of dict
        :meth:`DmaRecorder.finish` of the model's run.
    locks : sequence of int
        The model DMA's own locks after the run: the block's, read back through the
        register port, must be the same.
    label : str
        Begins a mismatch report (``"seed=7"``: what replays the run).

    Raises
    ------
    AssertionError
        At the first cycle a compared port differs (the cycle, channel, BD, port, RTL
        and model values, after ``label``), if the block is still busy after the run,
        or if a lock differs.
    """
    _prepared(block, channels, recorded, locks, label).run()


def _difference(replay: _Replay, row: int, got: dict[str, int]) -> str:
    channels, recorded = replay.channels, replay.recorded
    cycle = row - replay.loading
    cycles = recorded[0]["bd"].size if recorded else 0
    parts = []
    for name, value in got.items():
        mask = replay.care.value(name, row)
        expected = replay.want.value(name, row)
        if (value ^ expected) & mask:
            owner = next((k for k, ch in enumerate(channels)
                          if name.startswith(f"{ch.direction}__{ch.index}__")), None)
            where = ""
            if owner is not None and 0 <= cycle < cycles:
                bd = int(recorded[owner]["bd"][cycle])
                where = f" ({channels[owner].name}{'' if bd < 0 else f', BD {bd}'})"
            parts.append(f"{name.replace('__', '.')}{where} RTL {value:#x} model "
                         f"{expected & mask:#x}")
    when = (f"in cycle {cycle}" if cycle < cycles else
            f"after its {cycles} cycles, reading its locks back ({cycle - cycles} cycles on)")
    return f"{replay.label}: the RTL DMA differs from the model {when}: " + "; ".join(parts)
