"""DMA tasks: a start BD and a repeat count, and the word stream a task produces.

This is the untimed behaviour of docs/bd.md "Channels, tasks, chaining" and
"Iteration": a task runs its chain (``use_next_bd`` / ``next_bd``) once per
pass, ``repeat_count`` passes; every load of a BD uses its ``iteration_current``
and writes it back advanced. :class:`TaskWalk` is that walk, written once: the
cycle-level channel (queues, locks, timing) takes its loads one at a time.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, MutableMapping
from dataclasses import dataclass

import numpy as np

from ..errors import AiedmaError, BDError, field_error
from .descriptor import BufferDescriptor, check_chain

__all__ = ["REPEAT_COUNT_MAX", "Task", "TaskWalk", "run_task", "task_stream"]

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
    """

    def __init__(self, kind: str, table: MutableMapping[int, BufferDescriptor], task: Task, *,
                 error: type[AiedmaError] = BDError,
                 where: Callable[[int], str] = lambda bd_id: "") -> None:
        self.kind, self.table, self.task = kind, table, task
        self._error, self._where = error, where
        self._pass, self._next, self._seen = 0, task.start_bd, set()

    @property
    def done(self) -> bool:
        """Every load of the task has been taken."""
        return self._next is None

    def next(self) -> tuple[int, BufferDescriptor]:
        """Load the next BD: check it, write its iteration back, return ``(bd_id, bd)``.

        Raises
        ------
        BDError (or ``error``)
            A missing BD, a BD with ``valid_bd = 0``, a chain that leaves its half
            of the memory tile, or a chain that loops back on itself in one pass.
        """
        bd_id = self._next
        if bd_id is None:
            raise AssertionError("TaskWalk.next after the task's last load")
        where = self._where(bd_id)
        if bd_id in self._seen:
            raise field_error(self._error, "next_bd", bd_id,
                              "the chain loops back to a BD it already ran in this pass; it "
                              f"would never end{where}")
        self._seen.add(bd_id)
        bd = self.table.get(bd_id)
        if bd is None:
            raise field_error(self._error, "bd_id", bd_id, f"no such BD in the table{where}")
        try:
            check_chain(self.kind, bd_id, bd)
        except AiedmaError as error:
            raise self._error(f"{error}{where}") from None
        if not bd.valid_bd:
            raise field_error(self._error, "valid_bd", 0,
                              f"a BD loaded by a task must have valid_bd = 1{where}")
        self.table[bd_id] = bd.next_iteration()
        if bd.use_next_bd:
            self._next = bd.next_bd
        else:
            self._pass += 1
            self._next, self._seen = (self.task.start_bd, set()) if (
                self._pass < self.task.repeat_count) else (None, self._seen)
        return bd_id, bd


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
    # Pass r's iteration indices repeat with the period lcm(iteration_wrap).
    period = min(math.lcm(*(bd.iteration_wrap for bd in loads)), task.repeat_count)
    for r in range(period):
        position = 0
        for bd in loads:
            current = (bd.iteration_current + r) % bd.iteration_wrap
            bd.stream(current, shift=shift,
                      out=passes[r, position : position + bd.buffer_length])
            position += bd.buffer_length
    for r in range(period, task.repeat_count, period):
        done = min(period, task.repeat_count - r)
        passes[r : r + done] = passes[:done]
    for bd_id, bd in zip(chain, loads, strict=True):
        current = (bd.iteration_current + task.repeat_count) % bd.iteration_wrap
        table[bd_id] = bd if current == bd.iteration_current else bd.replace(
            iteration_current=current)
    return words, table
