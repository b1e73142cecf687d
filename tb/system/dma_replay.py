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
from typing import Any

import numpy as np

from ...model.arch.kinds import DMA_KINDS
from ...model.arch.registers import STATUS_FIELDS
from ...model.system.stream import Beat
from .dma_block import RtlDmaAgent

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
        stream = self.channel.stream
        if self.channel.is_mm2s:
            o_ready, i_valid, offered = stream.can_push(), False, 0
        else:
            o_ready, i_valid = False, stream.can_pop()
            beat = stream.peek() if i_valid else Beat(0, False)
            offered = (beat.data & 0xFFFF_FFFF) | int(beat.last) << 32
        self._moved = None
        stall = self._originals["step"](cycle)
        moved = self._moved
        payload = 0 if moved is None else (moved.data & 0xFFFF_FFFF) | int(moved.last) << 32
        read, write, address, data = self._signals
        bd = self.channel.bd
        # The channel's error register (its status's error_bd_invalid in this cycle).
        invalid = self.channel.status_word() >> _INVALID & 1
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


def _words(column: np.ndarray, width: int) -> np.ndarray:
    column = np.asarray(column).astype(np.uint64)
    out = np.empty((column.size, (width + 31) // 32), dtype=np.uint32)
    for k in range(out.shape[1]):
        out[:, k] = (column >> np.uint64(32 * k)) & np.uint64(0xFFFF_FFFF)
    return out


def _ports(channels: Sequence[Any], recorded: Sequence[dict[str, np.ndarray]],
           ports: dict[str, tuple[int, int]]) -> tuple[dict, dict, dict]:
    """The block's input rows, expected outputs and care masks, per port name."""
    inputs, want, care = {}, {}, {}

    def compare(port: str, value: np.ndarray, when: np.ndarray | None = None) -> None:
        width = ports[port][1]
        want[port] = _words(value, width)
        full = _words(np.full(value.size, (1 << width) - 1, dtype=np.uint64), width)
        care[port] = full if when is None else full * (np.asarray(when) != 0)[:, None].astype(
            np.uint32)

    for channel, c in zip(channels, recorded, strict=True):
        path = f"{channel.direction}__{channel.index}__"
        width = {name: w for name, (_, w) in ports.items()}
        if channel.is_mm2s:
            inputs[f"{path}o__ready"] = _words(c["o_ready"], 1)
            inputs[f"{path}mem_data"] = _words(c["mem_data_in"], width[f"{path}mem_data"])
            compare(f"{path}o__valid", c["moved"], c["o_ready"])
            compare(f"{path}o__payload", c["payload"], c["moved"])
            compare(f"{path}mem_en", c["mem_read"])
            compare(f"{path}mem_addr", c["mem_addr"], c["mem_read"])
        else:
            inputs[f"{path}i__valid"] = _words(c["i_valid"], 1)
            inputs[f"{path}i__payload"] = _words(c["i_payload"], width[f"{path}i__payload"])
            compare(f"{path}i__ready", c["moved"], c["i_valid"])
            compare(f"{path}mem_we", c["mem_write"])
            compare(f"{path}mem_addr", c["mem_addr"], c["mem_write"])
            compare(f"{path}mem_data", c["mem_data"], c["mem_write"])
        compare(f"{path}token", c["token"])
        compare(f"{path}token_controller", c["token_controller"], c["token"])
    cycles = recorded[0]["bd"].size if recorded else 0
    # The block's error output: its channels' error registers (the lock unit's error is
    # the model's LockError, which ends a run before any replay).
    invalid = np.zeros(cycles, dtype=np.int64)
    for c in recorded:
        invalid |= c["invalid"]
    compare("error", invalid)
    return inputs, want, care


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


def _register_rows(block: RtlDmaAgent, cycles: int) -> tuple[dict[str, np.ndarray], int]:
    """The register port's inputs over the load, the run and the lock reads; the load's
    length. Each port holds its value until the sequence sets it again."""
    load, reads = _sequence(block, "load"), _sequence(block, "read_locks")
    names = sorted({n for rows in (load, reads) for row in [*rows.rows, rows.after] for n in row})
    held = dict.fromkeys(names, 0)
    table = []
    for row in load.rows:
        held.update(row)
        table.append(dict(held))
    held.update(load.after)
    table += [dict(held)] * cycles
    for row in reads.rows:
        held.update(row)
        table.append(dict(held))
    return {n: np.asarray([row[n] for row in table], dtype=np.int64) for n in names}, len(
        load.rows)


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
    top = block.ports_.top
    cycles = recorded[0]["bd"].size if recorded else 0
    registers, loading = _register_rows(block, cycles)
    total = registers[next(iter(registers))].size
    run = slice(loading, loading + cycles)
    inputs, want, care = _ports(channels, recorded, top.ports)
    for group in (inputs, want, care):
        for name, rows in group.items():   # nothing during the load, the run's last after it
            full = np.zeros((total, rows.shape[1]), dtype=np.uint32)
            full[run] = rows
            if group is inputs and cycles:
                full[loading + cycles:] = rows[-1]
            group[name] = full
    for name, column in registers.items():
        inputs[name] = _words(column, top.ports[name][1])
    # The lock reads: the word asked for in one cycle is on reg_rdata in the next.
    values = np.zeros(total, dtype=np.int64)
    asked = np.zeros(total, dtype=np.int64)
    first_read = loading + cycles
    values[first_read + 1:first_read + 1 + len(locks)] = locks
    asked[first_read + 1:first_read + 1 + len(locks)] = 1
    want["reg_rdata"], care["reg_rdata"] = (_words(values & 0xFFFF_FFFF, 32),
                                            _words(asked * 0xFFFF_FFFF, 32))
    done = np.zeros(total, dtype=np.int64)
    done[first_read] = 1   # the loop run ends when the block is no longer busy
    want["busy"], care["busy"] = _words(np.zeros(total, dtype=np.int64), 1), _words(done, 1)
    cycle, got = top.replay(inputs, want, care)
    if cycle is not None:
        raise AssertionError(_difference(channels, recorded, want, care, cycle, got, label,
                                         loading))


def _difference(channels: Sequence[Any], recorded: Sequence[dict], want: dict, care: dict,
                row: int, got: dict[str, int], label: str, loading: int) -> str:
    cycle = row - loading
    cycles = recorded[0]["bd"].size if recorded else 0
    parts = []
    for name, value in got.items():
        mask = sum(int(w) << (32 * k) for k, w in enumerate(care[name][row]))
        expected = sum(int(w) << (32 * k) for k, w in enumerate(want[name][row]))
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
    return f"{label}: the RTL DMA differs from the model {when}: " + "; ".join(parts)
