"""DMA tasks: a start BD and a repeat count, and the word stream a task produces.

This is the untimed behaviour of docs/bd.md "Channels, tasks, chaining" and
"Iteration": a task runs its chain (``use_next_bd`` / ``next_bd``) once per
pass, ``repeat_count`` passes; every load of a BD uses its ``iteration_current``
and writes it back advanced. :class:`TaskWalk` is that walk, written once: the
cycle-level channel (queues, locks, timing) takes its loads one at a time.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, MutableMapping
from dataclasses import dataclass, field

import numpy as np

from ..errors import AiedmaError, BDError, field_error
from ..tiling.doubling import fill_affine, repeat_units
from .descriptor import (
    BufferDescriptor,
    affine_layout,
    check_chain,
    iteration_after,
    padded_radices,
    write_padding,
)
from .fields import WORDS

__all__ = ["REPEAT_COUNT_MAX", "Task", "TaskWalk", "never_written", "run_task", "task_stream"]

REPEAT_COUNT_MAX = 256
"""A task's repeat count is stored minus one in 8 bits (register bits 23:16)."""

_START_BD_BITS = 6  # enough for the memory tile's 48 BDs


@dataclass(frozen=True)
class Task:
    """One entry of a channel's task queue.

    Parameters
    ----------
    start_bd : int
        First BD of the chain.
    repeat_count : int
        Passes over the chain (1..256).
    enable_token_issue : bool
        Send a completion token when the task ends.
    """

    start_bd: int
    repeat_count: int = 1
    enable_token_issue: bool = False

    def __post_init__(self) -> None:
        if not 0 <= self.start_bd < 1 << _START_BD_BITS:
            raise field_error(BDError, "start_bd", self.start_bd,
                              f"must be in 0..{(1 << _START_BD_BITS) - 1}")
        if not 1 <= self.repeat_count <= REPEAT_COUNT_MAX:
            raise field_error(BDError, "repeat_count", self.repeat_count,
                              f"must be in 1..{REPEAT_COUNT_MAX} (stored minus one in 8 bits)")

    def encode(self) -> int:
        """The task-queue register word: bit 31 token, 23:16 repeat - 1, start BD low."""
        return (int(self.enable_token_issue) << 31 | (self.repeat_count - 1) << 16
                | self.start_bd)


class TaskWalk:
    """The BD loads of one task, in order: the one walk every layer uses.

    A task runs its chain (``use_next_bd`` / ``next_bd``) once per pass,
    ``repeat_count`` passes; each load checks the BD, takes its
    ``iteration_current`` and writes it back advanced into ``table`` (docs/bd.md
    "Channels, tasks, chaining", "Iteration"). :func:`run_task` walks it to the end;
    a system channel (:mod:`aiedma.model.system.channel`) takes one load per BD fetch.

    Parameters
    ----------
    kind : {"tile", "memtile", "shim"}
    table : mutable mapping of int to BufferDescriptor
        The DMA's BD table; loads write ``iteration_current`` back into it.
    task : Task
    error : type, optional
        The error raised for a bad load (default :class:`~aiedma.model.errors.BDError`).
    where : callable, optional
        ``where(bd_id)`` gives text appended to every error (``"; channel ..., BD n"``).
    hardware : bool, optional
        Load as the RTL's fetch stage does: a BD with ``valid_bd = 0`` is loaded (its
        iteration written back) and returned, for the caller to flag; a BD missing
        from ``table`` is one never written, all zeros (``valid_bd = 0``, no chain), and
        is not written back. After such a load the chain is followed without the loop
        check (the hardware fetches on until its stage is full, whatever it loads). A
        memory-tile chain that leaves its half is not refused at the load that names it:
        the caller looks at :attr:`next_bd_id` before the next load (a channel sets
        ``error_bd_unavailable`` there instead of loading it).
    """

    def __init__(self, kind: str, table: MutableMapping[int, BufferDescriptor], task: Task, *,
                 error: type[AiedmaError] = BDError,
                 where: Callable[[int], str] = lambda bd_id: "",
                 hardware: bool = False) -> None:
        self.kind, self.table, self.task = kind, table, task
        self._error, self._where, self._hardware = error, where, hardware
        self._pass, self._next, self._seen = 0, task.start_bd, set()
        self.invalid = False      # hardware: a BD with valid_bd = 0 was loaded

    @property
    def done(self) -> bool:
        """Every load of the task has been taken."""
        return self._next is None

    @property
    def next_bd_id(self) -> int | None:
        """The BD the next load takes; None once the task's last load is taken."""
        return self._next

    def next(self) -> tuple[int, BufferDescriptor]:
        """Load the next BD: check it, write its iteration back, return ``(bd_id, bd)``.

        Raises
        ------
        BDError (or ``error``)
            A chain that loops back on itself in one pass, and (without ``hardware``) a
            chain that leaves its half of the memory tile, a missing BD or a BD with
            ``valid_bd = 0``.
        """
        bd_id = self._next
        if bd_id is None:
            raise AssertionError("TaskWalk.next after the task's last load")
        where = self._where   # called only for an error: a walk checks every load
        if bd_id in self._seen and not self.invalid:
            raise field_error(self._error, "next_bd", bd_id,
                              "the chain loops back to a BD it already ran in this pass; it "
                              f"would never end{where(bd_id)}")
        self._seen.add(bd_id)
        bd = self.table.get(bd_id)
        if bd is None and self._hardware:
            bd = never_written(self.kind)
        elif bd is None:
            raise field_error(self._error, "bd_id", bd_id,
                              f"no such BD in the table{where(bd_id)}")
        if not self._hardware:
            try:
                check_chain(self.kind, bd_id, bd)
            except AiedmaError as error:
                raise self._error(f"{error}{where(bd_id)}") from None
        if not bd.valid_bd and not self._hardware:
            raise field_error(self._error, "valid_bd", 0,
                              f"a BD loaded by a task must have valid_bd = 1{where(bd_id)}")
        self.invalid = self.invalid or not bd.valid_bd
        if bd_id in self.table:
            self.table[bd_id] = bd.next_iteration()
        if bd.use_next_bd:
            self._next = bd.next_bd
        else:
            self._pass += 1
            self._next, self._seen = (self.task.start_bd, set()) if (
                self._pass < self.task.repeat_count) else (None, self._seen)
        return bd_id, bd


@functools.cache
def never_written(kind: str) -> BufferDescriptor:
    """A BD slot never written: every word 0 (the RTL's table after reset)."""
    return BufferDescriptor.decode(kind, [0] * WORDS[kind])


def run_task(kind: str, bds: Mapping[int, BufferDescriptor],
             task: Task) -> tuple[np.ndarray, dict[int, BufferDescriptor]]:
    """The word stream of ``task`` over the BD table ``bds``, and the table afterwards.

    Parameters
    ----------
    kind : {"tile", "memtile", "shim"}
    bds : mapping of int to BufferDescriptor
        The DMA's BD table (BD number to BD).
    task : Task

    Returns
    -------
    words : numpy.ndarray
        int64 word addresses of every BD execution in order, -1 for zero words.
    table : dict
        The BD table with ``iteration_current`` written back after every load.

    Raises
    ------
    BDError
        As :meth:`TaskWalk.next`.
    """
    return task_stream(kind, bds, task)


def task_stream(kind: str, bds: Mapping[int, BufferDescriptor], task: Task,
                shift: int = 0) -> tuple[np.ndarray, dict[int, BufferDescriptor]]:
    """:func:`run_task` with ``shift`` added to every data address (not to zero words).

    The chain of one pass comes from :class:`TaskWalk` (which checks every load).
    Every pass runs that same chain (``use_next_bd`` and ``next_bd`` never change),
    and pass ``r`` loads each BD with ``iteration_current`` advanced ``r`` times, so
    each load is written in place into the task's stream
    (:meth:`~.descriptor.BufferDescriptor.stream` with ``out``) and a pass whose
    iteration indices repeat an earlier pass's is copied from it.
    """
    first_pass = TaskWalk(kind, dict(bds), Task(task.start_bd),
                          where=lambda bd_id: f"; BD {bd_id}")
    chain: list[int] = []
    while not first_pass.done:
        chain.append(first_pass.next()[0])
    table = dict(bds)
    loads = [table[bd_id] for bd_id in chain]
    pass_length = sum(bd.buffer_length for bd in loads)
    words = np.empty(task.repeat_count * pass_length, dtype=np.int64)
    passes = words.reshape(task.repeat_count, pass_length)
    # Pass r's iteration indices repeat with the period lcm(iteration_wrap), from pass 0
    # on when every index starts below its wrap (else only from pass 1: each pass is
    # written).
    period = min(math.lcm(*(bd.iteration_wrap for bd in loads)), task.repeat_count)
    if any(bd.iteration_current >= bd.iteration_wrap for bd in loads):
        period = task.repeat_count
    if _same_iteration(loads):
        _double_passes(loads, passes[:period], shift)
    else:
        for r in range(period):
            _write_pass(loads, r, passes[r], shift)
    for r in range(period, task.repeat_count, period):
        done = min(period, task.repeat_count - r)
        passes[r : r + done] = passes[:done]
    for bd_id, bd in zip(chain, loads, strict=True):
        current = iteration_after(bd.iteration_current, bd.iteration_wrap, task.repeat_count)
        table[bd_id] = bd if current == bd.iteration_current else bd.replace(
            iteration_current=current)
    return words, table


def _write_pass(loads: list[BufferDescriptor], r: int, out: np.ndarray, shift: int) -> None:
    """Pass ``r`` of the chain ``loads`` into ``out``: each load at its iteration index.

    A load's stream is an affine fill (:func:`.descriptor.affine_layout`) with its zero
    words written over it (:func:`.descriptor.write_padding`). Loads of one affine
    shape (length, radices, steps) differ only by their first address, so each shape
    is filled once a pass and every other load of it is that fill moved: runs of them
    whose first addresses step evenly (a lowered program's tiles one after another,
    the edge tiles' padding aside) by doubling
    (:func:`~aiedma.model.tiling.doubling.repeat_units`), any other by one add. The
    zeros are written last, when no later load is moved from those words. A stream
    built from nothing costs a NumPy call per doubling of every dimension: tens of
    microseconds a load.
    """
    position = 0
    built: dict[tuple, tuple[int, np.ndarray]] = {}   # an affine shape's first fill
    padding = []
    for run in _affine_runs(loads, r, shift):
        words = out[position : position + run.count * run.length]
        position += words.size
        if not run.length:
            continue
        first = words[: run.length]
        if run.key in built:
            origin, earlier = built[run.key]
            np.add(earlier, run.origin - origin, out=first)
        else:
            fill_affine(first, run.origin, run.steps, run.radices)
            built[run.key] = (run.origin, first)
        if run.count > 1:
            repeat_units(words, run.length, [run.step], [])
        padding.append((words, run))
    for words, run in padding:
        at = 0
        for pattern, count in run.patterns:
            _pad_loads(words[at : at + count * run.length], run.length, pattern)
            at += count * run.length


@dataclass
class _AffineRun:
    """Consecutive loads of one affine shape whose first addresses step evenly."""

    key: tuple          # (length, radices, steps): the affine shape
    length: int
    steps: list[int]
    radices: list[int]
    origin: int         # the first load's affine address of word 0
    count: int = 1
    step: int = 0       # between the first addresses of consecutive loads
    last: int = 0       # the last load's first address
    patterns: list = field(default_factory=list)   # (zero pattern, loads), in order


def _affine_runs(loads: list[BufferDescriptor], r: int, shift: int) -> list[_AffineRun]:
    """The loads of pass ``r`` as :class:`_AffineRun`s, in order."""
    runs: list[_AffineRun] = []
    for bd in loads:
        current = iteration_after(bd.iteration_current, bd.iteration_wrap, r)
        pattern = bd.pattern()
        start = bd.base_address + current * bd.iteration_stepsize + shift
        origin, steps, radices = affine_layout(start, **pattern)
        key = (bd.buffer_length, tuple(radices), tuple(steps))
        zeros = {k: pattern[k] for k in ("wraps", "before", "after")}
        run = runs[-1] if runs else None
        if run is not None and run.key == key and (
                run.count == 1 or origin - run.last == run.step):
            run.count, run.step, run.last = run.count + 1, origin - run.last, origin
        else:
            run = _AffineRun(key, bd.buffer_length, steps, radices, origin, last=origin)
            runs.append(run)
        if run.patterns and run.patterns[-1][0] == zeros:
            run.patterns[-1][1] += 1
        else:
            run.patterns.append([zeros, 1])
    return runs


def _pad_loads(words: np.ndarray, length: int, pattern: dict) -> None:
    """Write the zero words of loads of ``pattern`` (``length`` words each) over their
    affine fill.

    Where a load ends on a unit of its open dimension and that dimension has no
    leading zeros, the loads side by side are one longer stream of the pattern: one
    :func:`.descriptor.write_padding` for all; otherwise one per load.
    """
    wraps, before, after = pattern["wraps"], pattern["before"], pattern["after"]
    if not (any(before) or any(after)):
        return
    radices = padded_radices(wraps, before, after)
    open_dim = len(radices)
    lead = before[open_dim] if open_dim < len(wraps) else 0
    if not lead and length % math.prod(radices) == 0:
        write_padding(words, wraps, before, after)
        return
    for at in range(0, words.size, length):
        write_padding(words[at : at + length], wraps, before, after)


def _same_iteration(loads: list[BufferDescriptor]) -> bool:
    """Every load of the chain starts at iteration 0 with one wrap and one step size (a
    lowered program's chain): then pass ``r`` is pass 0 moved ``r`` steps."""
    first = loads[0]
    return all(bd.iteration_current == 0 and bd.iteration_wrap == first.iteration_wrap
               and bd.iteration_stepsize == first.iteration_stepsize for bd in loads)


def _double_passes(loads: list[BufferDescriptor], passes: np.ndarray, shift: int) -> None:
    """Passes ``0 .. len(passes) - 1`` of a chain of :func:`_same_iteration` loads.

    Pass ``r`` is pass 0 plus ``r * iteration_stepsize`` on its data words, its zero
    words where pass 0 has them, so passes ``n .. 2n`` are passes ``0 .. n`` plus
    ``n * iteration_stepsize``: a contiguous add each, as a BD's stream is built
    (:func:`~aiedma.model.tiling.doubling.repeat_units`); the zeros are written back
    after. ``len(passes)`` is at most the iteration wrap, so no pass wraps.
    """
    _write_pass(loads, 0, passes[0], shift)
    count = len(passes)
    if count == 1:
        return
    repeat_units(passes.reshape(-1), passes.shape[1], [loads[0].iteration_stepsize], [])
    zeros = _zero_positions(loads, passes.shape[1])
    if zeros.size:
        passes[1:, zeros] = -1


def _zero_positions(loads: list[BufferDescriptor], length: int) -> np.ndarray:
    """Positions of the zero words in a pass of ``loads`` (``length`` words), from
    their patterns: a shifted data word may be -1 too, so the values cannot tell."""
    padded = [bd.pattern() for bd in loads]
    if not any(any(p["before"]) or any(p["after"]) for p in padded):
        return np.zeros(0, dtype=np.int64)
    marks = np.zeros(length, dtype=np.int64)
    position = 0
    for bd, pattern in zip(loads, padded, strict=True):
        write_padding(marks[position : position + bd.buffer_length], pattern["wraps"],
                      pattern["before"], pattern["after"])
        position += bd.buffer_length
    return np.flatnonzero(marks)
