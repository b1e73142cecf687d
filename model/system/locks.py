"""AIE-ML semaphore locks and the lock IDs a DMA's BDs name (docs/bd.md "Locks").

A :class:`LockTable` is one tile's locks, each holding 0..63. The rules:

* acquire with ``V < 0``: wait until ``lock >= -V``, then ``lock += V``;
* acquire with ``V >= 0``: wait until ``lock == V``; the value does not change;
* release with ``R != 0``: ``lock += R``; ``R = 0`` releases nothing;
* a result outside 0..63 is an error (overflow or underflow), never a wrap;
* **one acquire and one release a cycle per tile**: an acquire made with its cycle
  number is refused (it waits) when one of the table's locks was already acquired in
  that cycle; the release port (:meth:`LockTable.take_release_port`) is given to the
  first asking in a cycle. The scheduler steps a DMA's channels in channel order, so of
  the acquires that hold at the start of the cycle, and of the channels with a release
  queued, the first in that order wins; the RTL lock unit (``hdl/lock_unit.py``)
  decides its ports in parallel by the same rule;
* a table remembers the cycle each lock was last written (an acquire granted, a
  release applied or a register write made with its cycle number), so a DMA's channel
  can ask for an acquire that waits while its lock was written at the end of the cycle
  before (``settled``: the lock unit grants from a test made in that cycle).

A :class:`LockSpace` routes the lock ID of a BD to a table: core tile and shim
IDs 0-15 are their own; memory-tile IDs 0-63 are the west neighbour's, 64-127
its own and 128-191 the east neighbour's (:func:`lock_space`).

Decisions (docs/bd.md is silent):

* **decision**: an acquire with ``V = -64`` waits for a value of 64, which a lock
  can never hold; it is an error at once rather than a silent deadlock.
* **decision**: :meth:`LockTable.try_acquire` is the scheduler's per-cycle poll: it
  returns False while the lock must wait and changes nothing then.
* **decision**: a missing neighbour (edge of the array) leaves its ID range
  unmapped; naming an ID there is an error.
* **decision**: one acquire and one release a cycle per tile (above). Two acquires of
  one lock in one cycle, each seeing what the other took, would chain every
  requester's decision in one cycle, and a lock written by every channel in one cycle
  is a register file with a write port per channel: a 12-channel DMA in gateware
  could neither be clocked nor routed (docs/decisions.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..arch.kinds import DMA_KINDS, check_kind
from ..errors import AiedmaError, field_error

__all__ = [
    "LOCKS_PER_TILE",
    "LOCK_VALUE_MAX",
    "LockError",
    "LockSpace",
    "LockTable",
    "LockWait",
    "lock_space",
    "wanted_text",
]

LOCK_VALUE_MAX = 63
"""Lock state is 6-bit unsigned: 0..63."""

LOCKS_PER_TILE: dict[str, int] = {name: k.locks for name, k in DMA_KINDS.items()}
"""Locks of one tile of each kind (from :mod:`..arch.kinds`)."""

_BD_VALUE_MIN, _BD_VALUE_MAX = -64, 63  # 7-bit two's complement in the BD


class LockError(AiedmaError):
    """A lock rule is broken: overflow, underflow, an unknown ID, an impossible wait."""


def _where(where: str) -> str:
    return f"; {where}" if where else ""


def wanted_text(value: int) -> str:
    """What an acquire of ``value`` waits for, e.g. ``">= 1"`` or ``"== 0"``."""
    return f">= {-value}" if value < 0 else f"== {value}"


@dataclass(frozen=True)
class LockWait:
    """A lock an acquire is waiting on, for stall and deadlock reports.

    Attributes
    ----------
    lock_id : int
        The ID as the BD names it.
    table : str
        The table it routes to.
    local_id : int
        The lock's number in that table.
    value : int
        Its value now.
    acquire : int
        The acquire value; the wait is for ``lock >= -acquire`` or ``lock == acquire``.
    """

    lock_id: int
    table: str
    local_id: int
    value: int
    acquire: int

    @property
    def wanted(self) -> str:
        """The condition the acquire waits for, e.g. ``">= 1"``."""
        return wanted_text(self.acquire)

    def __str__(self) -> str:
        return (f"lock {self.lock_id} ({self.table} lock {self.local_id}) = {self.value}, "
                f"wants {self.wanted}")


class LockTable:
    """The semaphore locks of one tile.

    Parameters
    ----------
    name : str
        Shown in errors, e.g. ``"memtile(0,1) locks"``.
    count : int
        Number of locks (16 core tile / shim, 64 memory tile).
    initial : mapping of int to int, optional
        Initial values (default all 0).

    Examples
    --------
    >>> locks = LockTable("t", 16, {0: 2})
    >>> locks.try_acquire(0, -1), locks[0]
    (True, 1)
    >>> locks.try_acquire(0, -2), locks[0]
    (False, 1)
    >>> locks.release(0, 63)
    Traceback (most recent call last):
    ...
    aiedma.model.system.locks.LockError: lock_rel_value=63: lock 0 of t is 1; ...
    """

    def __init__(self, name: str, count: int, initial: Mapping[int, int] | None = None) -> None:
        self.name = name
        self.values = [0] * count
        self._written: dict[int, int] = {}       # lock -> the cycle at whose end it was written
        self._before: dict[int, int] = {}        # lock -> its value before that cycle's writes
        self._acquired_in: int | None = None     # the cycle of the last acquire
        self._released_in: int | None = None     # the cycle the release port was last given
        for lock_id, value in (initial or {}).items():
            self.set(lock_id, value)

    def __len__(self) -> int:
        return len(self.values)

    def __getitem__(self, lock_id: int) -> int:
        self._check_id(lock_id, "")
        return self.values[lock_id]

    def __repr__(self) -> str:
        return f"LockTable({self.name!r}, {len(self)})"

    def _check_id(self, lock_id: int, where: str) -> None:
        if not 0 <= lock_id < len(self.values):
            raise field_error(LockError, "lock_id", lock_id,
                              f"{self.name} has locks 0..{len(self.values) - 1}{_where(where)}")

    def set(self, lock_id: int, value: int, cycle: int | None = None) -> None:
        """Initialise a lock (host write): ``value`` in 0..63; with ``cycle``, the lock is
        written at the end of that cycle."""
        self._check_id(lock_id, "")
        if not 0 <= value <= LOCK_VALUE_MAX:
            raise field_error(LockError, "value", value,
                              f"a lock holds 0..{LOCK_VALUE_MAX} (lock {lock_id} of {self.name})")
        if cycle is not None:
            self._stamp(lock_id, cycle)
        self.values[lock_id] = value

    def _stamp(self, lock_id: int, cycle: int) -> None:
        """``lock_id`` is written at the end of ``cycle``: keep what it held before the
        cycle's first write (:meth:`value_at_start`)."""
        if self._written.get(lock_id) != cycle:
            self._before[lock_id] = self.values[lock_id]
            self._written[lock_id] = cycle

    def value_at_start(self, lock_id: int, cycle: int) -> int:
        """The lock's value at the start of ``cycle``, before the writes at its end (what
        a register read in that cycle gives, as the RTL's lock unit reads it)."""
        self._check_id(lock_id, "")
        if self._written.get(lock_id) == cycle:
            return self._before[lock_id]
        return self.values[lock_id]

    def can_acquire(self, lock_id: int, value: int, where: str = "") -> bool:
        """True if an acquire of ``value`` would succeed now (nothing changes).

        Raises
        ------
        LockError
            For an unknown lock, a value outside the BD's -64..63, or ``-64``
            (it waits for 64, which a lock never holds).
        """
        self._check_id(lock_id, where)
        if not _BD_VALUE_MIN <= value <= _BD_VALUE_MAX:
            raise field_error(LockError, "lock_acq_value", value,
                              f"must be in {_BD_VALUE_MIN}..{_BD_VALUE_MAX}{_where(where)}")
        if -value > LOCK_VALUE_MAX:
            raise field_error(LockError, "lock_acq_value", value,
                              f"waits for lock {lock_id} of {self.name} >= {-value}, which a "
                              f"lock (0..{LOCK_VALUE_MAX}) never reaches{_where(where)}")
        current = self.values[lock_id]
        return current >= -value if value < 0 else current == value

    def try_acquire(self, lock_id: int, value: int, where: str = "",
                    cycle: int | None = None, settled: bool = False) -> bool:
        """Acquire if the rule allows it now; False (and no change) while it must wait.

        Parameters
        ----------
        cycle : int, optional
            The cycle of the attempt: a table that granted an acquire in this cycle
            refuses it (one acquire a cycle per tile). Without it (an untimed caller)
            only the value decides. A granted acquire writes its lock (see
            :meth:`written_before`).
        settled : bool
            With ``cycle``: also refuse while the lock was written at the end of the
            cycle before (a DMA's lock unit tests a request a cycle before it grants
            it, docs/cycle.md "Lock requests").
        """
        if not self.can_acquire(lock_id, value, where):
            return False
        if cycle is not None:
            if self._acquired_in == cycle or (settled and self.written_before(lock_id, cycle)):
                return False
            self._acquired_in = cycle
            self._stamp(lock_id, cycle)
        if value < 0:
            self.values[lock_id] += value
        return True

    def take_release_port(self, cycle: int) -> bool:
        """True for the first caller in ``cycle``: it may apply one release at the end of
        the cycle (one release a cycle per tile); False for the others, which wait."""
        if self._released_in == cycle:
            return False
        self._released_in = cycle
        return True

    def written_before(self, lock_id: int, cycle: int) -> bool:
        """True if ``lock_id`` was written at the end of the cycle before ``cycle`` (an
        acquire granted, a release applied, a :meth:`set` with its cycle)."""
        return self._written.get(lock_id) == cycle - 1

    def release(self, lock_id: int, value: int, where: str = "",
                cycle: int | None = None) -> None:
        """Add ``value`` (``R = 0``: nothing); with ``cycle``, the lock is written at the
        end of that cycle.

        Raises
        ------
        LockError
            If the result leaves 0..63 (overflow or underflow); the lock keeps
            its value.
        """
        self._check_id(lock_id, where)
        if not _BD_VALUE_MIN <= value <= _BD_VALUE_MAX:
            raise field_error(LockError, "lock_rel_value", value,
                              f"must be in {_BD_VALUE_MIN}..{_BD_VALUE_MAX}{_where(where)}")
        current = self.values[lock_id]
        result = current + value
        if not 0 <= result <= LOCK_VALUE_MAX:
            what = "overflows" if result > LOCK_VALUE_MAX else "underflows"
            raise field_error(LockError, "lock_rel_value", value,
                              f"lock {lock_id} of {self.name} is {current}; {current} "
                              f"{'+' if value >= 0 else '-'} {abs(value)} = {result} {what} "
                              f"0..{LOCK_VALUE_MAX}{_where(where)}")
        if cycle is not None:
            self._stamp(lock_id, cycle)
        self.values[lock_id] = result

    def wait(self, lock_id: int, value: int, bd_lock_id: int | None = None) -> LockWait:
        """A :class:`LockWait` describing an acquire of ``value`` on ``lock_id``."""
        self._check_id(lock_id, "")
        return LockWait(lock_id if bd_lock_id is None else bd_lock_id, self.name, lock_id,
                        self.values[lock_id], value)


@dataclass(frozen=True)
class _Range:
    label: str
    first: int
    count: int
    table: LockTable | None


class LockSpace:
    """The lock IDs a DMA's BDs may name, routed to lock tables.

    Parameters
    ----------
    name : str
        The DMA's name, used in errors.
    ranges : sequence of (label, first_id, count, table or None)
        Consecutive ID ranges; a None table leaves its range unmapped.

    Examples
    --------
    >>> own, east = LockTable("own", 64), LockTable("east", 64)
    >>> space = lock_space("memtile", "dma", own, east=east)
    >>> table, local = space.route(130); table.name, local
    ('east', 2)
    """

    def __init__(self, name: str, ranges: Sequence[tuple[str, int, int, LockTable | None]]) -> None:
        self.name = name
        self.ranges = tuple(_Range(*r) for r in ranges)

    def route(self, lock_id: int, where: str = "") -> tuple[LockTable, int]:
        """The table and local ID that ``lock_id`` names.

        Raises
        ------
        LockError
            If ``lock_id`` is outside every range or its range has no table.
        """
        for r in self.ranges:
            if r.first <= lock_id < r.first + r.count:
                if r.table is None:
                    raise field_error(
                        LockError, "lock_id", lock_id,
                        f"IDs {r.first}-{r.first + r.count - 1} of {self.name} are the "
                        f"{r.label} neighbour's locks, and there is none{_where(where)}")
                return r.table, lock_id - r.first
        extent = ", ".join(f"{r.first}-{r.first + r.count - 1} {r.label}" for r in self.ranges)
        raise field_error(LockError, "lock_id", lock_id,
                          f"{self.name} has lock IDs {extent}{_where(where)}")

    def try_acquire(self, lock_id: int, value: int, where: str = "",
                    cycle: int | None = None, settled: bool = False) -> bool:
        """:meth:`LockTable.try_acquire` on the lock ``lock_id`` names."""
        table, local = self.route(lock_id, where)
        return table.try_acquire(local, value, where, cycle, settled)

    def written_before(self, lock_id: int, cycle: int) -> bool:
        """:meth:`LockTable.written_before` on the lock ``lock_id`` names."""
        table, local = self.route(lock_id)
        return table.written_before(local, cycle)

    def take_release_port(self, lock_id: int, cycle: int, where: str = "") -> bool:
        """:meth:`LockTable.take_release_port` of the table ``lock_id`` names."""
        table, _ = self.route(lock_id, where)
        return table.take_release_port(cycle)

    def release(self, lock_id: int, value: int, where: str = "",
                cycle: int | None = None) -> None:
        """:meth:`LockTable.release` on the lock ``lock_id`` names."""
        table, local = self.route(lock_id, where)
        table.release(local, value, where, cycle)

    def wait(self, lock_id: int, value: int) -> LockWait:
        """The :class:`LockWait` of an acquire of ``value`` on ``lock_id``."""
        table, local = self.route(lock_id)
        return table.wait(local, value, bd_lock_id=lock_id)


def lock_space(kind: str, name: str, own: LockTable, west: LockTable | None = None,
               east: LockTable | None = None) -> LockSpace:
    """The lock IDs of a DMA of ``kind``: 0..15 own, or on the memory tile 0-63 west,
    64-127 own and 128-191 east.

    Raises
    ------
    LockError
        If a table has the wrong number of locks for the kind, or a core tile or
        shim is given neighbours.
    """
    dma = DMA_KINDS[check_kind(kind, LockError)]
    count = dma.locks
    tables = {"own": own, "west": west, "east": east}
    for label, table in tables.items():
        if table is not None and len(table) != count:
            raise field_error(LockError, "locks", len(table),
                              f"the {label} table {table.name} of a {kind} has {count} locks")
    for label, table in tables.items():
        if table is not None and label not in dma.windows:
            raise field_error(LockError, "kind", kind,
                              "only a memory-tile DMA reaches its neighbours' locks")
    return LockSpace(name, [(label, dma.lock_window(label).start, count, tables[label])
                            for label in dma.windows])
