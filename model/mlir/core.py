"""A core tile's ``aie.core`` program, followed as a lock-and-copy agent.

What the DMA sees of a core is its locks: it acquires the buffers the DMA filled,
computes, and releases them. :class:`CoreProgram` keeps exactly that of an ``aie.core``
region: its ``aie.use_lock`` operations, its buffer copies (``func.call`` with buffer
operands copies the first into the last; ``memref.copy`` copies its source), nested in
``scf.for`` loops with constant bounds. :class:`CoreAgent` runs it on the system
scheduler (:mod:`aiedma.model.system.scheduler`), one operation a cycle.

Decisions:

* **decision**: a kernel call is a copy of its first buffer operand into its last (the
  shorter of the two decides how many words); what the kernel computes is the user's
  business, the order of its locks is the design's.
* **decision**: one operation a cycle: an acquire that must wait stalls on the lock
  (named in a hang), a release takes the tile's release port for the cycle, a copy moves
  the whole buffer at once and counts as one "word" in the report.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..system.locks import LockTable
from ..system.memory import Memory
from ..system.scheduler import Stall

__all__ = ["CoreAgent", "CoreLoop", "CoreProgram", "CoreStep"]


@dataclass(frozen=True)
class CoreStep:
    """One operation: ``acquire`` / ``release`` a lock, or ``copy`` buffers.

    Attributes
    ----------
    action : {"acquire", "release", "copy"}
    lock : str
        The lock's SSA name (``acquire``, ``release``).
    value : int
        The acquire value as a BD holds it (negative: greater or equal), or the release.
    source, dest : str
        Buffer SSA names (``copy``).
    line, column : int
    """

    action: str
    lock: str = ""
    value: int = 0
    source: str = ""
    dest: str = ""
    line: int = 0
    column: int = 0


@dataclass(frozen=True)
class CoreLoop:
    """``scf.for`` with constant bounds: its body ``count`` times."""

    count: int
    body: tuple[CoreStep | CoreLoop, ...]


@dataclass
class CoreProgram:
    """An ``aie.core`` region as steps and loops, with its tile's SSA name."""

    tile: str
    body: list[CoreStep | CoreLoop] = field(default_factory=list)
    line: int = 0
    column: int = 0


def _steps(body: Sequence[CoreStep | CoreLoop]) -> Iterator[CoreStep]:
    for item in body:
        if isinstance(item, CoreLoop):
            for _ in range(item.count):
                yield from _steps(item.body)
        else:
            yield item


class CoreAgent:
    """A core tile following its program's locks and copies on the system scheduler.

    Parameters
    ----------
    name : str
    program : CoreProgram
    locks : LockTable
        The tile's lock table (the one its DMA uses).
    lock_ids : dict of str to int
        Each lock's SSA name to its ID in ``locks``.
    memory : Memory
        The tile's data memory.
    buffers : dict of str to (int, int)
        Each buffer's SSA name to its first word and its words.
    """

    def __init__(self, name: str, program: CoreProgram, locks: LockTable,
                 lock_ids: dict[str, int], memory: Memory,
                 buffers: dict[str, tuple[int, int]]) -> None:
        self.name = name
        self.locks, self.lock_ids, self.memory, self.buffers = locks, lock_ids, memory, buffers
        self._steps = _steps(program.body)
        self._current = next(self._steps, None)
        self._release: tuple[int, int] | None = None
        self.copies = 0

    @property
    def busy(self) -> bool:
        return self._current is not None or self._release is not None

    def ports(self) -> Sequence:
        return ()

    def _advance(self) -> None:
        self._current = next(self._steps, None)

    def step(self, cycle: int) -> Stall | None:
        step = self._current
        if step is None:
            return Stall("idle")
        where = f"; {self.name} at {step.line}:{step.column}"
        if step.action == "acquire":
            lock = self.lock_ids[step.lock]
            if not self.locks.try_acquire(lock, step.value, where, cycle):
                return Stall("lock", lock=self.locks.wait(lock, step.value),
                             detail=f"aie.use_lock at {step.line}:{step.column}")
            self._advance()
            return Stall("idle", progress=True)
        if step.action == "release":
            if not self.locks.take_release_port(cycle):
                return Stall("lock", detail="the tile's release port is taken this cycle")
            self._release = (self.lock_ids[step.lock], step.value)
            self._advance()
            return Stall("idle", progress=True)
        source, words = self.buffers[step.source]
        dest, room = self.buffers[step.dest]
        count = min(words, room)
        data = self.memory.data
        data[dest:dest + count] = np.array(data[source:source + count])
        self.copies += 1
        self._advance()
        return None

    def commit(self) -> None:
        if self._release is not None:
            lock, value = self._release
            self._release = None
            self.locks.release(lock, value, f"; {self.name}")
