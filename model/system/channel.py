"""DMA channels at cycle level: a tile's DMA, its BD table, and MM2S / S2MM channels.

A :class:`DMA` is one tile's DMA engine: a BD table shared by its channels, the
address space and lock IDs it reaches (:mod:`.memory`, :mod:`.locks`), and the
kind's channels (``CHANNELS``: 2 + 2 on a core tile or shim, 6 + 6 on a memory
tile). A :class:`Channel` runs tasks from its queue (depth 4) exactly as
:func:`.task.run_task` does (chains, repeat count, iteration write-back at every
load), moving at most one word per cycle:

* loading a BD: ``valid_bd = 0``, a missing BD, a chain that loops, or (S2MM) a BD
  with zero padding is an error naming the channel and the BD;
* the BD's lock is acquired before its first word, and released after its last;
* MM2S reads memory (a padding address, -1, sends 0), puts one packet header
  before the BD's data when ``enable_packet`` is set, and sets TLAST on the BD's
  last word unless ``tlast_suppress``;
* S2MM writes memory; with ``enable_packet`` the first word it receives for the
  BD is a packet header, which it checks and drops;
* a task with ``enable_token_issue`` records a completion token when it ends.

Decisions (docs/bd.md is silent on timing and on these points):

* **decision**: a BD load, its lock acquire and its first word (or header) share a
  cycle, so chained BDs, repeats and queued tasks follow with no bubble (the
  architecture's "one word per cycle, no bubble at a BD boundary"). A BD of
  ``buffer_length`` 0 costs one cycle (stall cause ``load``), as in the RTL contract.
* **decision**: the lock release after the last word takes effect at the end of
  that cycle (:meth:`Channel.commit`), so another channel sees it one cycle later,
  whatever order the scheduler steps channels in.
* **decision**: the task queue holds tasks not yet started; the running task has
  left it. A fifth pending task is an overflow error.
* **decision**: S2MM ignores TLAST (``buffer_length`` alone ends a BD), as the RTL
  contract says; ``tlast_suppress`` only matters on MM2S.
* **decision**: on the memory tile a task's start BD must lie in the channel's half
  (0-23 for channels 0/2/4, 24-47 for 1/3/5), checked when the task is pushed.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from ..arch.directions import CHANNEL_NAMES, READ, WRITE, check_direction
from ..arch.kinds import DMA_KINDS, check_kind
from ..bd.descriptor import BufferDescriptor, check_chain
from ..bd.fields import BD_COUNT
from ..bd.packet import packet_header, parse_packet_header
from ..bd.task import Task
from ..errors import AiedmaError, PacketError, field_error
from .locks import LOCKS_PER_TILE, LockSpace, LockTable, lock_space
from .memory import AddressSpace, core_tile_space, memory_tile_space
from .scheduler import Stall
from .stream import Beat, Stream

__all__ = [
    "CHANNELS",
    "DIRECTIONS",
    "DMA",
    "TASK_QUEUE_DEPTH",
    "Channel",
    "ChannelError",
    "TaskDone",
]

CHANNELS: dict[str, int] = {name: k.channels for name, k in DMA_KINDS.items()}
"""Channels of each direction (MM2S and S2MM) per DMA kind (from :mod:`..arch.kinds`)."""

DIRECTIONS: tuple[str, ...] = CHANNEL_NAMES
"""MM2S reads memory into a stream; S2MM writes a stream into memory
(from :mod:`..arch.directions`)."""

TASK_QUEUE_DEPTH = 4
"""Pending tasks a channel's queue holds."""

_PADDING_FIELDS = tuple(f"d{k}_zero_{side}" for k in range(DMA_KINDS["memtile"].padded_dimensions)
                        for side in ("before", "after"))
_ROWS, _COLUMNS = 32, 128  # packet header source_row / source_column widths


class ChannelError(AiedmaError):
    """A channel cannot do what it was asked: queue overflow, a bad BD at load, ..."""


@dataclass(frozen=True)
class TaskDone:
    """A finished task: when, which, and whether it issued a completion token."""

    cycle: int
    task: Task

    @property
    def token(self) -> bool:
        """True if the task issued a completion token."""
        return self.task.enable_token_issue


class DMA:
    """One tile's DMA: the BD table, the channels, and what they reach.

    Parameters
    ----------
    kind : {"tile", "memtile", "shim"}
    column, row : int
        The tile's position; its packet headers carry it (0..127, 0..31).
    memory : AddressSpace, optional
        What its BDs address. Default: a fresh core-tile data memory or memory-tile
        memory (no neighbours); a shim needs one (external memory, :func:`.memory.shim_space`).
    locks : LockSpace, optional
        The lock IDs its BDs name. Default: a fresh table of the kind's locks.
    name : str, optional
        Default ``"<kind>(<column>,<row>)"``.

    Attributes
    ----------
    bds : dict of int to BufferDescriptor
        The BD table; :meth:`write_bd` checks a BD in its slot. Loads write the
        advanced ``iteration_current`` back here.
    mm2s, s2mm : tuple of Channel
        The channels, by index.
    """

    def __init__(self, kind: str, column: int = 0, row: int = 0, *,
                 memory: AddressSpace | None = None, locks: LockSpace | None = None,
                 name: str | None = None) -> None:
        check_kind(kind, ChannelError)
        if not 0 <= column < _COLUMNS:
            raise field_error(ChannelError, "column", column, f"must be in 0..{_COLUMNS - 1}")
        if not 0 <= row < _ROWS:
            raise field_error(ChannelError, "row", row, f"must be in 0..{_ROWS - 1}")
        self.kind, self.column, self.row = kind, column, row
        self.name = name or f"{kind}({column},{row})"
        if memory is None:
            if kind == "shim":
                raise field_error(ChannelError, "memory", None,
                                  "a shim DMA needs its external memory (shim_space)")
            memory = (core_tile_space if kind == "tile" else memory_tile_space)(self.name)
        if locks is None:
            locks = lock_space(kind, self.name, LockTable(f"{self.name} locks",
                                                          LOCKS_PER_TILE[kind]))
        self.memory, self.locks = memory, locks
        self.bds: dict[int, BufferDescriptor] = {}
        self.mm2s = tuple(Channel(self, READ.channel, i) for i in range(CHANNELS[kind]))
        self.s2mm = tuple(Channel(self, WRITE.channel, i) for i in range(CHANNELS[kind]))

    def __repr__(self) -> str:
        return f"DMA({self.name!r})"

    @property
    def channels(self) -> tuple[Channel, ...]:
        """Every channel, MM2S first."""
        return self.mm2s + self.s2mm

    def channel(self, direction: str, index: int) -> Channel:
        """The channel ``direction`` (``"mm2s"`` / ``"s2mm"``) number ``index``.

        Raises
        ------
        ChannelError
            For an unknown direction or an index past the kind's channel count.
        """
        check_direction(direction, "channel", ChannelError)
        if not 0 <= index < CHANNELS[self.kind]:
            raise field_error(ChannelError, "channel", index,
                              f"a {self.kind} DMA has {direction.upper()} channels "
                              f"0..{CHANNELS[self.kind] - 1} ({self.name})")
        return getattr(self, direction)[index]

    def write_bd(self, bd_id: int, bd: BufferDescriptor) -> None:
        """Put ``bd`` in slot ``bd_id`` (checked with :func:`.bd.check_chain`)."""
        check_chain(self.kind, bd_id, bd)
        self.bds[bd_id] = bd


class Channel:
    """One MM2S or S2MM channel of a :class:`DMA`; an agent of :mod:`.scheduler`.

    Create channels through :class:`DMA` (``dma.mm2s[0]``, ``dma.channel("s2mm", 1)``),
    connect a stream with :meth:`connect`, queue tasks with :meth:`push`.

    Attributes
    ----------
    name : str
        ``"<dma>.<direction><index>"``, e.g. ``"memtile(0,1).mm2s0"``.
    words : int
        Words moved through the stream so far (headers included).
    done : list of TaskDone
        Finished tasks in order.
    """

    def __init__(self, dma: DMA, direction: str, index: int) -> None:
        self.dma, self.direction, self.index = dma, direction, index
        self._way = check_direction(direction, "channel", ChannelError)
        self.name = f"{dma.name}.{direction}{index}"
        self.stream: Stream | None = None
        self.queue: deque[Task] = deque()
        self.words = 0
        self.done: list[TaskDone] = []
        self._task: Task | None = None
        self._pass = 0
        self._bd_id = 0
        self._bd: BufferDescriptor | None = None
        self._addresses: list[int] = []
        self._position = 0
        self._acquired = False
        self._header = False  # a header word is still to send (MM2S) or receive (S2MM)
        self._seen: set[int] = set()
        self._releases: list[tuple[int, int, str]] = []

    def __repr__(self) -> str:
        return f"Channel({self.name!r})"

    @property
    def is_mm2s(self) -> bool:
        """True for MM2S (memory to stream)."""
        return self._way is READ

    @property
    def tokens(self) -> list[int]:
        """Cycles at which completion tokens were issued."""
        return [d.cycle for d in self.done if d.token]

    def connect(self, stream: Stream) -> Channel:
        """Attach the stream it writes (MM2S) or reads (S2MM); returns ``self``."""
        self.stream = stream
        return self

    def push(self, task: Task) -> None:
        """Queue a task.

        Raises
        ------
        ChannelError
            If the queue already holds 4 pending tasks (overflow, not a drop), or
            the start BD does not exist on the kind or, on the memory tile, lies in
            the other half of the BD table.
        """
        if len(self.queue) >= TASK_QUEUE_DEPTH:
            raise field_error(ChannelError, "task_queue", len(self.queue),
                              f"channel {self.name} already holds {TASK_QUEUE_DEPTH} pending "
                              f"tasks (depth {TASK_QUEUE_DEPTH}); a fifth push is an overflow")
        count = BD_COUNT[self.dma.kind]
        if task.start_bd >= count:
            raise field_error(ChannelError, "start_bd", task.start_bd,
                              f"a {self.dma.kind} DMA has BDs 0..{count - 1}; channel {self.name}")
        dma = DMA_KINDS[self.dma.kind]
        dma.check_bd_in_half(ChannelError, "start_bd", task.start_bd,
                             dma.channel_bds(self.index), f"channel {self.name} runs BDs")
        self.queue.append(task)

    @property
    def busy(self) -> bool:
        """A task is running or queued."""
        return self._task is not None or bool(self.queue)

    @property
    def bd(self) -> int | None:
        """The BD number being run, or None between BDs."""
        return self._bd_id if self._bd is not None else None

    def ports(self) -> tuple[Stream, ...]:
        """The connected stream."""
        return (self.stream,) if self.stream is not None else ()

    def _where(self, bd_id: int) -> str:
        return f"channel {self.name}, BD {bd_id}"

    def _load(self, bd_id: int) -> None:
        """Load BD ``bd_id`` as run_task does: check it, take its addresses, write back."""
        where = self._where(bd_id)
        if bd_id in self._seen:
            raise field_error(ChannelError, "next_bd", bd_id,
                              f"the chain loops back to a BD it already ran in this pass; it "
                              f"would never end; channel {self.name}")
        self._seen.add(bd_id)
        bd = self.dma.bds.get(bd_id)
        if bd is None:
            raise field_error(ChannelError, "bd_id", bd_id,
                              f"no such BD in the table of {self.dma.name}; {where}")
        try:
            check_chain(self.dma.kind, bd_id, bd)
        except AiedmaError as error:
            raise ChannelError(f"{error}; {where}") from None
        if not bd.valid_bd:
            raise field_error(ChannelError, "valid_bd", 0,
                              f"a BD loaded by a task must have valid_bd = 1; {where}")
        if not DMA_KINDS[self.dma.kind].pads(self._way):
            padded = [f for f in _PADDING_FIELDS if bd.fields().get(f)]
            if padded:
                raise field_error(ChannelError, padded[0], getattr(bd, padded[0]),
                                  f"S2MM cannot pad (zero padding is memory-tile MM2S only); "
                                  f"{where}")
        if self.stream is None:
            raise field_error(ChannelError, "stream", None,
                              f"channel {self.name} has no stream connected; {where}")
        self._addresses = bd.stream().tolist()
        self.dma.bds[bd_id] = bd.next_iteration()
        self._bd, self._bd_id = bd, bd_id
        self._position, self._acquired = 0, False
        self._header = bool(bd.enable_packet)

    def _finish_bd(self, cycle: int) -> None:
        """After the BD's last word: queue the release, then chain, repeat or end."""
        bd = self._bd
        if bd.lock_rel_value:
            self._releases.append((bd.lock_rel_id, bd.lock_rel_value, self._where(self._bd_id)))
        self._bd = None
        if bd.use_next_bd:
            self._bd_id = bd.next_bd
            return
        self._pass += 1
        if self._pass < self._task.repeat_count:
            self._bd_id, self._seen = self._task.start_bd, set()
            return
        self.done.append(TaskDone(cycle, self._task))
        self._task = None

    def step(self, cycle: int) -> Stall | None:
        """Move at most one word; None if one moved, else a :class:`.scheduler.Stall`.

        Raises
        ------
        ChannelError, BDError, LockError, MemoryAccessError, PacketError
            A bad BD at load, a lock rule broken, an address outside memory, a bad
            header received; each names the channel and the BD.
        """
        progress = False
        if self._bd is None:
            if self._task is None:
                if not self.queue:
                    return Stall("idle")
                self._task = self.queue.popleft()
                self._pass, self._bd_id, self._seen = 0, self._task.start_bd, set()
            self._load(self._bd_id)
            progress = True
        bd, bd_id = self._bd, self._bd_id
        if not self._acquired:
            if bd.lock_acq_enable:
                locks, where = self.dma.locks, self._where(bd_id)
                if not locks.try_acquire(bd.lock_acq_id, bd.lock_acq_value, where):
                    return Stall("lock", bd_id, locks.wait(bd.lock_acq_id, bd.lock_acq_value),
                                 progress=progress)
            self._acquired = progress = True
            if not self._addresses:  # buffer_length 0 (never with a header)
                self._finish_bd(cycle)
                return Stall("load", bd_id, progress=True)
        move = self._move_mm2s if self.is_mm2s else self._move_s2mm
        return move(cycle, progress)

    def _move_mm2s(self, cycle: int, progress: bool) -> Stall | None:
        bd, stream = self._bd, self.stream
        if not stream.can_push():
            return Stall("backpressure", self._bd_id, progress=progress, detail=stream.name)
        if self._header:
            stream.push(Beat(packet_header(bd.packet_id, bd.packet_type, self.dma.row,
                                           self.dma.column)))
            self._header = False
            self.words += 1
            return None
        address = self._addresses[self._position]
        data = 0 if address < 0 else self.dma.memory.read(address, self._where(self._bd_id))
        self._position += 1
        last = self._position == len(self._addresses)
        stream.push(Beat(data, last and not bd.tlast_suppress))
        self.words += 1
        if last:
            self._finish_bd(cycle)
        return None

    def _move_s2mm(self, cycle: int, progress: bool) -> Stall | None:
        stream = self.stream
        if not stream.can_pop():
            return Stall("empty", self._bd_id, progress=progress, detail=stream.name)
        beat = stream.pop()
        self.words += 1
        where = self._where(self._bd_id)
        if self._header:
            try:
                parse_packet_header(beat.data)
            except PacketError as error:
                raise PacketError(f"{error}; received by {where}") from None
            self._header = False
            return None
        self.dma.memory.write(self._addresses[self._position], beat.data, where)
        self._position += 1
        if self._position == len(self._addresses):
            self._finish_bd(cycle)
        return None

    def commit(self) -> None:
        """End of cycle: apply the lock releases of BDs that ended this cycle."""
        releases, self._releases = self._releases, []
        for lock_id, value, where in releases:
            self.dma.locks.release(lock_id, value, where)
