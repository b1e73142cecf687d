"""DMA tasks: a start BD and a repeat count, and the word stream a task produces.

This is the untimed behaviour of docs/bd.md "Channels, tasks, chaining" and
"Iteration": a task runs its chain (``use_next_bd`` / ``next_bd``) once per
pass, ``repeat_count`` passes; every load of a BD uses its ``iteration_current``
and writes it back advanced. The cycle-level channel (queues, locks, timing)
builds on this.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ..errors import BDError, field_error
from .descriptor import BufferDescriptor, check_chain

__all__ = ["REPEAT_COUNT_MAX", "Task", "run_task", "task_stream"]

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
        A missing BD, a BD with ``valid_bd = 0``, a chain that leaves its half of
        the memory tile, or a chain that loops back on itself (it would never end).
    """
    return task_stream(kind, bds, task)


def task_stream(kind: str, bds: Mapping[int, BufferDescriptor], task: Task,
                shift: int = 0) -> tuple[np.ndarray, dict[int, BufferDescriptor]]:
    """:func:`run_task` with ``shift`` added to every data address (not to zero words).

    Every pass runs the same chain (``use_next_bd`` and ``next_bd`` never change), so
    the chain is walked and checked once; pass ``r`` loads each BD with
    ``iteration_current`` advanced ``r`` times. Each load is written in place into the
    task's stream (:meth:`~.descriptor.BufferDescriptor.stream` with ``out``), and a
    pass whose iteration indices repeat an earlier pass's is copied from it.
    """
    table = dict(bds)
    chain = _chain(kind, table, task.start_bd)
    loads = [table[bd_id] for bd_id in chain]
    pass_length = sum(bd.buffer_length for bd in loads)
    words = np.empty(task.repeat_count * pass_length, dtype=np.int64)
    passes = words.reshape(task.repeat_count, pass_length)
    # Pass r's iteration indices repeat with the period lcm(iteration_wrap).
    period = min(math.lcm(*(bd.iteration_wrap for bd in loads)) if loads else 1,
                 task.repeat_count)
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


def _chain(kind: str, table: Mapping[int, BufferDescriptor], start_bd: int) -> list[int]:
    """The BD numbers one pass of a task loads, each checked as the hardware loads it."""
    bd_id, chain = start_bd, []
    while True:
        if bd_id in chain:
            raise field_error(BDError, "next_bd", bd_id,
                              "the chain loops back to a BD it already ran; it would "
                              "never end")
        chain.append(bd_id)
        if bd_id not in table:
            raise field_error(BDError, "bd_id", bd_id, "no such BD in the table")
        bd = table[bd_id]
        check_chain(kind, bd_id, bd)
        if not bd.valid_bd:
            raise field_error(BDError, f"BD {bd_id} valid_bd", 0,
                              "a BD loaded by a task must have valid_bd = 1")
        if not bd.use_next_bd:
            return chain
        bd_id = bd.next_bd
