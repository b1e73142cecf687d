"""Random programs that raise the hardware faults: pushes onto full task queues and tasks
that load BDs that are not valid, on the whole RTL DMA against the model run through its
registers (:func:`~.dma_check.run_dma`: every word, memory word, token, lock, status read
and cycle of the DMA's error output compared).

MM2S 0, MM2S 1 and S2MM 0 of a core or memory tile each run chains of one or two BDs (no
locks), pushed before the run (up to five: the fifth overflows) and by a host during it
(bursts of pushes, some onto full queues; a write of 1 to ``task_queue_overflow`` now and
then). In most programs a channel's tasks load a BD that is not valid now and then: a BD
written with ``valid_bd`` 0, a slot never written, or (memory-tile S2MM) a BD with zero
padding, as a task's start BD or through ``next_bd``. On the memory tile the faulty load
may instead be a BD that names lock 192-255 or a neighbour's lock (the tile has no
neighbours: ``error_lock_access_to_unavailable``), a BD whose last words run past the own
window into the absent east one (``error_dm_access_to_unavailable``), or a start BD that
is not the channel's or a chain to one (``error_bd_unavailable``). Every cycle without a
write reads a channel's status register or S2MM 0's Current_Write_Count, in turn. Late
in the run every channel is reset (mid-task or stopped by its error) and pushed one valid
task, so every program ends.

S2MM 0's words: as many as it takes in the run, counted by a model run with words to
spare (a run on fewer would end short; on more it would never end).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ...model.arch.kinds import BD_REGISTER_STRIDE, DMA_KINDS
from ...model.arch.registers import (
    CONTROL_FIELDS,
    STATUS_FIELDS,
    control_address,
    start_queue_address,
    status_address,
    write_count_address,
)
from ...model.bd.descriptor import BufferDescriptor
from ...model.bd.task import Task
from ...model.errors import AiedmaError, field_error
from .dma_check import words_taken

__all__ = ["FAULT_BITS", "FAULT_KINDS", "FaultProgram", "random_fault_program"]

FAULT_KINDS = ("tile", "memtile")
"""The kinds the programs run on (the shim has no channel reset to end a stop with)."""

FAULT_BITS = ("task_queue_overflow", "error_bd_invalid", "error_bd_unavailable",
              "error_lock_access_to_unavailable", "error_dm_access_to_unavailable")
"""The status bits the programs raise (the last three on the memory tile only)."""

_CHANNELS = (("mm2s", 0), ("mm2s", 1), ("s2mm", 0))


@dataclass
class FaultProgram:
    """A random fault program for :func:`~.dma_check.run_dma` (module text).

    Attributes
    ----------
    seed : int
    kind : str
    writes : list of (int, int)
        Register writes before the run.
    memory : numpy.ndarray
        The tile memory it starts from.
    inputs : dict of str to list of int
        S2MM 0's words.
    timed : list of (int, int, int or None)
        The host's writes and status reads during the run, one a cycle.
    faults : dict of str to int
        What it draws: ``pushes`` before and during the run, ``invalid`` tasks with a
        faulty load (a BD that is not valid, or on the memory tile one of the module
        text's memory-tile faults).
    description : str
    """

    seed: int
    kind: str
    writes: list[tuple[int, int]]
    memory: np.ndarray
    inputs: dict[str, list[int]]
    timed: list[tuple[int, int, int | None]]
    faults: dict[str, int]
    description: str


def _chains(rng: random.Random, kind: str) -> tuple[dict, dict, dict]:
    """Per channel: its BDs (ID to BD, None for a slot left unwritten) and its good and
    bad start BD (bad None when the channel has no fault)."""
    own = DMA_KINDS[kind].memory_window("own").start
    dma = DMA_KINDS[kind]
    table: dict[int, BufferDescriptor | None] = {}
    good, bad = {}, {}
    taken: set[int] = set()
    for k, (direction, index) in enumerate(_CHANNELS):
        free = [b for b in dma.channel_bds(index) if b not in taken]
        ids = rng.sample(free[:12], 4)
        taken.update(ids)
        base = own + 64 * k
        made = [BufferDescriptor(kind, base_address=base + 16 * j, buffer_length=rng.randint(1, 6),
                                 valid_bd=1) for j in range(3)]
        if rng.random() < 0.5:     # a chain of two
            made[0] = made[0].replace(use_next_bd=1, next_bd=ids[1])
        table.update({ids[j]: made[j] for j in range(3)})
        good[direction, index] = ids[0]
        if rng.random() < 0.3:
            continue
        ways = ["written", "never", "padded" if (kind, direction) == ("memtile", "s2mm")
                else "written"]
        if kind == "memtile":
            ways += ["lock", "far", "foreign"]
        way = rng.choice(ways)
        faulty = ids[3]
        if way == "foreign":       # a BD of the other half, or past BD 47
            foreign = rng.choice([*dma.bd_half(24 - dma.channel_bds(index).start),
                                  *range(dma.bd_count, 64)])
            if rng.random() < 0.5:     # as the start BD
                bad[direction, index] = foreign
            else:                      # through next_bd, after a BD that runs
                table[ids[2]] = _chained_to(kind, table[ids[2]], foreign)
                bad[direction, index] = ids[2]
            continue
        if way == "lock":
            table[faulty] = _lock_fault_bd(rng, kind, base + 48)
        elif way == "far":         # own window's last words, then the east window's
            end = own + dma.memory_words
            table[faulty] = BufferDescriptor(kind, base_address=end - rng.randint(1, 2),
                                             buffer_length=3, valid_bd=1)
        elif way == "written":
            table[faulty] = BufferDescriptor(kind, base_address=base + 48, buffer_length=2)
        elif way == "padded":
            table[faulty] = BufferDescriptor(kind, base_address=base + 48, buffer_length=3,
                                             d0_wrap=2, d0_zero_before=1, valid_bd=1)
        else:
            table[faulty] = None
        if rng.random() < 0.5:     # reached through next_bd, after a BD that runs
            table[ids[2]] = table[ids[2]].replace(use_next_bd=1, next_bd=faulty)
            bad[direction, index] = ids[2]
        else:
            bad[direction, index] = faulty
    return table, good, bad


def _chained_to(kind: str, bd: BufferDescriptor, next_bd: int) -> BufferDescriptor:
    """``bd`` chained to ``next_bd``, whatever its half (decoded as the hardware's table
    stores it: a memory tile's 6-bit field also holds 48-63, which no BD has)."""
    return bd.replace(use_next_bd=1).stored_with(next_bd=next_bd)


def _lock_fault_bd(rng: random.Random, kind: str, base: int) -> BufferDescriptor:
    """A valid memory-tile BD whose acquire or release names a lock the tile does not
    reach: 192-255 (decoded as the hardware's table stores it) or a neighbour's."""
    field = rng.choice(["lock_acq_id", "lock_rel_id"])
    bd = BufferDescriptor(kind, base_address=base, buffer_length=2, valid_bd=1,
                          lock_acq_enable=int(field == "lock_acq_id"),
                          lock_rel_value=int(field == "lock_rel_id"))
    lock = rng.choice([rng.randint(192, 255), rng.randint(0, 63), rng.randint(128, 191)])
    return bd.stored_with(**{field: lock})


def random_fault_program(seed: int, kind: str = "tile") -> FaultProgram:
    """A random :class:`FaultProgram` on ``kind`` (``"tile"`` or ``"memtile"``).

    Raises
    ------
    AiedmaError
        For another kind.
    """
    if kind not in FAULT_KINDS:
        raise field_error(AiedmaError, "kind", kind, f"fault programs run on {FAULT_KINDS}")
    rng = random.Random(seed)
    table, good, bad = _chains(rng, kind)
    base = DMA_KINDS[kind].bd_register_base
    writes = [(base + BD_REGISTER_STRIDE * n + 4 * w, word) for n, bd in table.items()
              if bd is not None for w, word in enumerate(bd.encode())]
    counts = {"pushes": 0, "invalid": 0}

    def task(channel: tuple[str, int], late: bool = False) -> int:
        counts["pushes"] += 1
        start = good[channel]
        if not late and channel in bad and rng.random() < 0.4:
            start = bad[channel]
            counts["invalid"] += 1
        return Task(start, rng.randint(1, 2), rng.random() < 0.5).encode()

    for channel in _CHANNELS:
        queue = start_queue_address(kind, *channel)
        writes += [(queue, task(channel)) for _ in range(rng.randint(1, 5))]
    reset_at = rng.randint(40, 120)
    timed = _host(rng, kind, reset_at, task)
    memory = np.arange(1, 1 + 64 * len(_CHANNELS), dtype=np.int64)
    taken = words_taken(kind, writes, memory, timed)["s2mm0"]
    inputs = {"s2mm0": [1000 + k for k in range(taken)]}
    text = (f"{kind}, {counts['pushes']} pushes, {counts['invalid']} of them to a faulty load, "
            f"reset at {reset_at}, {len(inputs['s2mm0'])} S2MM words")
    return FaultProgram(seed, kind, writes, memory, inputs, timed, counts, text)


def _host(rng: random.Random, kind: str, reset_at: int,
          task: Callable[..., int]) -> list[tuple[int, int, int | None]]:
    """The host's accesses, one a cycle: bursts of pushes and overflow clears to
    ``reset_at``, then a reset of each channel and a valid task pushed, then reads."""
    overflow = 1 << STATUS_FIELDS["task_queue_overflow"][0]
    reads = [*(status_address(kind, *c) for c in _CHANNELS), write_count_address(kind, 0)]
    timed: list[tuple[int, int, int | None]] = []
    burst = 0
    for cycle in range(reset_at):
        channel = _CHANNELS[cycle % len(_CHANNELS)]
        if burst == 0 and rng.random() < 0.08:
            burst = rng.randint(1, 6)
        if burst:
            burst -= 1
            timed.append((cycle, start_queue_address(kind, *channel), task(channel)))
        elif rng.random() < 0.04:
            timed.append((cycle, status_address(kind, *channel), overflow))
        else:
            timed.append((cycle, reads[cycle % len(reads)], None))
    cycle = reset_at
    for channel in _CHANNELS:
        control = control_address(kind, *channel)
        reset = 1 << CONTROL_FIELDS[kind, channel[0]]["reset"][0]
        timed += [(cycle, control, reset), (cycle + 1, control, 0),
                  (cycle + 2, start_queue_address(kind, *channel), task(channel, late=True))]
        cycle += 3
    timed += [(c, reads[c % len(reads)], None) for c in range(cycle, cycle + 60)]
    return timed
