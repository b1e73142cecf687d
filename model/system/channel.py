"""DMA channels at cycle level: MM2S and S2MM channels of a tile's DMA (:mod:`.dma`).

A :class:`Channel` runs tasks from its queue (depth 4) exactly as
:func:`.task.run_task` does (chains, repeat count, iteration write-back at every
load), moving at most one word per cycle:

* loading a BD: ``valid_bd = 0``, a missing BD, a chain that loops, or (S2MM) a BD
  with zero padding is an error naming the channel and the BD, for tasks queued with
  :meth:`Channel.push`; a channel whose tasks come through its start-queue register
  (:meth:`Channel.write_start_queue`) runs as the RTL does instead (decisions below);
* the BD's lock is acquired before its first word, and released after its last;
* MM2S reads memory (a padding address, -1, sends 0), puts one packet header
  before the BD's data when ``enable_packet`` is set (with the BD's
  ``out_of_order_bd_id``), and sets TLAST on the BD's last word unless
  ``tlast_suppress``;
* S2MM writes memory; with ``enable_packet`` the first word it receives for the
  BD is a packet header, which it checks and drops;
* a task with ``enable_token_issue`` records a completion token when it ends.

Decisions (docs/bd.md is silent on timing and on these points):

* **decision**: BDs are fetched ahead and each BD asks for its lock ahead, from the
  channel's request register, while the BD before it ends (``LOCK_ASK_AHEAD``); the
  lock unit tests a request in the cycle it shows, grants it from the next unless its
  lock was written in between, and its grant is a register (``LOCK_GRANT_LATENCY``).
  So chained BDs, repeats and queued tasks follow with no bubble when their locks are
  free (the architecture's "one word per cycle, no bubble at a BD boundary"), BDs of
  fewer than ``LOCK_GRANT_LATENCY`` beats before one with an acquire excepted. A BD of
  ``buffer_length`` 0 completes in the cycle it holds its lock (stall cause ``load``),
  as in the RTL contract.
* **decision**: the DMA's BD table has one fetch port: channels asking for a BD in
  the same cycle are served one a cycle, in round robin over the channel order
  (:meth:`.dma.DMA.fetch_granted`; docs/cycle.md "Channel").
* **decision**: a tile's locks grant one acquire and apply one release a cycle. A BD's
  release joins its channel's release queue when the BD completes; the queue's head is
  chosen in a cycle its channel gets the tile's release port (the first asking, in the
  order the scheduler steps channels: a DMA's in channel order) and applied at the end
  of the next, so another channel sees it the cycle after that, and leaves the queue at
  the end of the next cycle (the port's grant register). A BD that releases asks for
  its lock only while its channel will owe fewer than ``RELEASE_QUEUE_DEPTH`` releases
  (docs/cycle.md "Channel", Locks).
* **decision**: the task queue holds tasks not yet started; the running task has
  left it. :meth:`Channel.push` (the Python API) raises on a fifth pending task; a
  start-queue register write (:meth:`Channel.write_start_queue`) onto a full queue is
  lost and sets ``task_queue_overflow`` (status bit 18, write 1 to clear), as the RTL.
* **decision**: a channel run through its registers (its first start-queue write makes it
  one) loads a BD that is not valid (``valid_bd = 0``, a slot never written, an S2MM BD
  with padding) as the RTL does: fetched as any BD, it waits at the head of the fetch
  stage and sets ``error_bd_invalid`` (status bit 11) at the end of the cycle it is
  offered; from then no BD is taken and no queued task starts (BDs already taken complete)
  until a channel reset. The fetch stage goes on until it is full, as the RTL's.
  docs/decisions.md gives the reasons; tasks queued with :meth:`Channel.push` raise at
  that load instead. A BD that acquires or releases a lock past the kind's lock IDs (the
  memory tile's 192-255: only a BD written through the registers can name one,
  :meth:`BufferDescriptor.decode_stored`) stops the channel the same way with
  ``error_lock_access_to_unavailable`` (bit 8; a BD that is not valid is that error
  whatever it names); no lock is asked. An access such a channel makes to an address its
  DMA does not reach (outside the DMA's ``allowed`` window; on a memory tile past the east
  window, or a neighbour's window its address space has not) is not made (a read gives 0)
  and sets ``error_dm_access_to_unavailable`` (bit 9) at the end of its cycle; the BD and
  its task run on, no queued task starts after it. Its addresses wrap modulo the kind's
  ``ADDRESS_BITS`` as the RTL's counters. A packet header such a channel receives with bad
  parity sets ``error_bd_invalid`` at the end of its cycle; the BD takes its words, and no
  queued task starts (out of order: no header is taken) after it (the Python API raises
  ``PacketError``). Each BD error is a sticky bit of its own (:attr:`Channel.errors`;
  :attr:`Channel.error` names the first) until a channel reset.
* **decision**: with the control register's ``fot_mode`` 0, S2MM ignores TLAST
  (``buffer_length`` alone ends a BD); ``tlast_suppress`` only matters on MM2S.
* **decision**: finish on TLAST (S2MM, ``fot_mode`` 1-3, read every cycle; AM025's
  DMA_S2MM_Ctrl FoT_Mode and DMA_S2MM_Status): a data word with TLAST is the last
  word of its BD, which completes there (lock release, write-back); the task goes on
  with its next BD (chain, then repeat) on the words after it. A BD that takes
  ``buffer_length`` words, the last without TLAST, sets ``fot_length_exceeded``
  (status bit 12) and ends there. Mode 2 gives each BD that ends a :class:`FotCount`,
  carried by its task's :class:`TaskDone`; a task's entry past ``FOT_COUNT_DEPTH`` is
  dropped and sets ``fot_bds_per_task`` (bit 13). Mode 3 queues the entries in the
  count FIFO, popped by :meth:`Channel.pop_fot_count` (the pop register); while it is
  full the channel takes no data word. The flags stay set until a channel reset.
  Channels in FoT mode step every cycle (no fast path). docs/decisions.md gives
  the reasons.
* **decision**: on the memory tile a task's start BD must lie in the channel's half
  (0-23 for channels 0/2/4, 24-47 for 1/3/5), checked when the task is pushed
  (:meth:`Channel.push` raises). Through the start-queue register the word is queued
  (its Start_BD_ID bits as ``START_BD_MASK`` keeps them: 4 on a core tile or shim, so
  these always name one of their BDs) and, where the fetch stage would start it, a task
  whose start BD is not the channel's leaves the queue with no fetch and sets
  ``error_bd_unavailable`` (bit 10) at the end of that cycle, stopping the channel as a
  BD error does. A chain (``next_bd``) out of the half is refused by the Python API
  and, on a channel run through its registers, ends the task's walk the same way where
  that BD would be fetched: the BD that names it runs and ends no task.
* **decision**: the control register (``model/arch/registers.py``) is stored as
  written, reserved bits dropped (:meth:`Channel.write_control`). Its ``reset`` bit
  holds the channel in reset from the end of the cycle after the write (the RTL's
  reset is a register) for as long as it reads 1: at the end of each such cycle the
  task queue is emptied, the running task, the BDs fetched or in flight and their
  words inside the channel are dropped, the lock requests and queued releases with
  them; the locks themselves are not touched (they belong to the tile's lock unit: a
  lock a dropped BD acquired stays acquired, a release not yet applied is never
  applied), nor are the BD table (iterations already written back stay) or the words
  already on the stream. A task pushed once the bit reads 0 again runs from the empty
  channel. (AM025 and aie-rt say only that the bit resets the channel; aie-rt's
  ``XAie_DmaChannelReset`` writes 1 then 0 and refuses a shim, whose control register
  has no reset bit.) ``controller_id`` is stored and carried by the completion tokens
  (:class:`TaskDone`). The shim's pause bits are stored and read back only: a task that
  starts with one set gives a :class:`~aiedma.model.errors.NotModelledWarning` and runs as
  if it were clear.
* **decision**: out-of-order (S2MM, ``enable_out_of_order`` as the task starts, every
  kind): the task runs one BD per packet, the BD its header names, as
  :mod:`.out_of_order` says; a named BD that is not the channel's sets
  ``error_bd_unavailable`` (:meth:`Channel.status_fields`) and stops the channel until
  a reset; one that is not valid stops it as an in-order load on a channel run through
  its registers does, whichever way the task was pushed. With the bit clear every cycle
  is as without it.
* **decision**: (de)compression (AM020 "Sparsity"; core tile and memory tile, never the
  shim) is in effect for a block of a BD whose ``enable_compression`` is set while the
  control register's ``compression_enable`` (MM2S) or ``decompression_enable`` (S2MM)
  reads 1 when the block's first word (MM2S) or mask (S2MM) is taken. MM2S pushes
  through a compressor after its packet stage (headers pass as they are), S2MM pops
  through a decompressor before its (:mod:`.compression`; format and decisions in
  :mod:`aiedma.model.bd.compression`); ``buffer_length`` counts the words read or
  written, never the compressed ones. Channels with the bit set step every cycle. On
  a DMA built without the (de)compressors (``DMA(compression=False)``) the bit is not
  implemented: it reads 0, so no block is ever (de)compressed.
"""

from __future__ import annotations

import functools
import operator
import warnings
from collections import deque
from collections.abc import Hashable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..arch.directions import READ, check_direction
from ..arch.kinds import DMA_KINDS
from ..arch.registers import (
    COMPRESSION_FIELDS,
    CONTROL_FIELDS,
    FOT_COUNT_DEPTH,
    START_BD_MASK,
    STATUS_FIELDS,
    WRITE_COUNT_BITS,
    control_mask,
    fot_count_word,
)
from ..bd.descriptor import BufferDescriptor
from ..bd.fields import BD_COUNT
from ..bd.packet import PacketHeader, bad_parity, packet_header, parse_packet_header
from ..bd.task import Task, TaskWalk
from ..cycle.compression import Compressor, Decompressor
from ..cycle.contract import (
    ADDRESS_BITS,
    BD_OFFER_LATENCY,
    COMPLETION_LATENCY,
    FETCH_DEPTH,
    FETCH_INTERVAL,
    LOCK_ASK_AHEAD,
    RELEASE_QUEUE_DEPTH,
)
from ..cycle.engine import ChannelEngine, EngineCycle, bd_beat_arrays
from ..errors import AiedmaError, NotModelledWarning, PacketError, field_error
from .compression import CompressingPort, DecompressingPort
from .memory import WORD_MAX, WORD_MIN, MemoryAccessError
from .out_of_order import OutOfOrderWalk
from .scheduler import NEVER, FastPlan, Stall
from .stream import Beat, Stream

if TYPE_CHECKING:  # a channel belongs to a DMA, which builds it (.dma imports this module)
    from .dma import DMA

__all__ = [
    "TASK_QUEUE_DEPTH",
    "Channel",
    "ChannelError",
    "FotCount",
    "TaskDone",
]

TASK_QUEUE_DEPTH = 4
"""Pending tasks a channel's queue holds."""

_PADDING_FIELDS = tuple(f"d{k}_zero_{side}" for k in range(DMA_KINDS["memtile"].padded_dimensions)
                        for side in ("before", "after"))


_IDLE = Stall("idle")
"""The stall of a cycle in which a channel has nothing to do and nothing changes."""


_HEADER = operator.attrgetter("header")
"""Whether a staged BD's packet header is still to go (read of every staged BD in the
channel's state, without a comprehension's frame)."""


_SHORT_BD = 256
"""BDs up to this many words have their beats kept (:func:`_bd_beats`)."""


def _bd_beats(kind: str, bd: BufferDescriptor) -> tuple:
    """A BD's highest address and its beats (:func:`~.cycle.engine.bd_beat_arrays`, as
    arrays and as lists). Short BDs' are kept by value: task programs fetch the same
    few-word BDs over and over, and computing a stream costs more than their cycles.
    Nothing changes them once made."""
    if bd.buffer_length > _SHORT_BD:
        return _beats_of(kind, bd)
    return _short_beats(kind, bd)


def _beats_of(kind: str, bd: BufferDescriptor) -> tuple:
    stream = bd.stream()
    addresses, zeros = bd_beat_arrays(kind, bd, stream)
    addresses.flags.writeable = zeros.flags.writeable = False   # shared by every fetch
    return int(stream.max()), addresses, zeros, addresses.tolist(), zeros.tolist()


_short_beats = functools.lru_cache(maxsize=1024)(_beats_of)


_BD_ERRORS = ("error_bd_invalid", "error_bd_unavailable", "error_lock_access_to_unavailable",
              "error_dm_access_to_unavailable")
"""The status bits of the BD errors, each a sticky register of the RTL's channel; any of
them stops the channel until a reset. When several are set in one cycle ``Channel.error``
names the first of this order."""


class ChannelError(AiedmaError):
    """A channel cannot do what it was asked: queue overflow, a bad BD at load, ..."""


@dataclass(frozen=True)
class FotCount:
    """One entry of an S2MM channel's finish-on-TLAST count FIFO: a BD that ended.

    Attributes
    ----------
    bd_id : int
    words : int
        Data words the BD wrote (to its TLAST, or ``buffer_length`` without one).
    last_in_task : bool
        The BD was its task's last.
    """

    bd_id: int
    words: int
    last_in_task: bool

    def word(self) -> int:
        """The entry as the count FIFO's pop register reads it (``FOT_COUNT_FIELDS``)."""
        return fot_count_word(self.bd_id, self.words, self.last_in_task)


@dataclass(frozen=True)
class TaskDone:
    """A finished task: when, which, and whether it issued a completion token."""

    cycle: int
    task: Task
    controller_id: int = 0     # the channel's control register at the token (the ID it carries)
    counts: tuple[FotCount, ...] = ()   # FoT counts with task tokens: its BDs' word counts

    @property
    def token(self) -> bool:
        """True if the task issued a completion token."""
        return self.task.enable_token_issue


@dataclass(eq=False)
class _InFlight:
    """A BD between its fetch and its completion, with what the stream stages need."""

    bd_id: int
    bd: BufferDescriptor
    task: Task
    ends_task: bool            # the task's last load
    header: bool               # a packet header is still to send / receive
    words_left: int            # S2MM: data words still to pass to the engine
    offered: int = 0           # the first cycle the fetch stage offers it
    counts: tuple = ()         # FoT mode 2, the task's last BD: the task's count entries
    beats: tuple | None = None  # a BD with words: beat lists, its ID and BD, beat arrays
    accepted: int = 0          # the cycle the engine took it (it may ask from the next)
    bad: str | None = None     # the BD error (a STATUS_FIELDS name) it stops the channel with


_STALL_FIELDS = ("stalled_lock_acq", "stalled_lock_rel", "stalled_stream", "stalled_tct")


def _status_bits(fields: dict[str, int]) -> int:
    """A status word with ``fields`` (``STATUS_FIELDS`` names) set, the others 0."""
    word = 0
    for name, value in fields.items():
        word |= value << STATUS_FIELDS[name][0]
    return word


class Channel:
    """One MM2S or S2MM channel of a :class:`DMA`; an agent of :mod:`.scheduler`.

    Create channels through :class:`DMA` (``dma.mm2s[0]``, ``dma.channel("s2mm", 1)``),
    connect a stream with :meth:`connect`, queue tasks with :meth:`push`. The timing
    is the channel contract (docs/cycle.md "Channel"): a BD *fetch* stage walks the
    running task (:class:`~aiedma.model.bd.task.TaskWalk`) and offers each BD to the
    engine (:class:`~aiedma.model.cycle.engine.ChannelEngine`: address generator, lock
    gate, datapath) ``BD_OFFER_LATENCY`` cycles after its fetch, holding up to
    ``FETCH_DEPTH`` BDs; the next BD at the engine's lock gate asks for its lock from
    the channel's request register while the BD ahead ends, and passes once it holds
    it; stream stages put a packet header in front of a BD's words (MM2S) or take one
    off (S2MM).

    Parameters
    ----------
    dma : DMA
    direction : {"mm2s", "s2mm"}
    index : int
    engine : object, optional
        What runs the engine's cycles: a
        :class:`~aiedma.model.cycle.engine.ChannelEngine` (the default) or anything with
        its protocol (``drive``, ``lock_request``, ``grant``, ``sample``, ``clock``,
        ``empty``, ``state``), e.g. an RTL engine checked against the model
        (:mod:`aiedma.tb.system.loop`).

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
        self.words = 0
        self.done: list[TaskDone] = []
        self.control = 0            # the control register, reserved bits dropped
        self._compression_bit = False   # its (de)compression enable
        # Fields read in every step, kept as values (set with the register):
        # control_field decodes a field from the table each time it is asked.
        self._fot_mode = 0
        self._out_of_order = False
        self._reset_held = False    # its reset bit as the channel sees it (a register)
        self.hardware_faults = False   # run through its registers: faults set status bits
        self._cycle_progress: list[bool] | None = None   # see share_progress
        self._clear()
        self.engine = ChannelEngine(dma.kind, self._way is READ)

    def _clear(self) -> None:
        """Everything a channel reset empties (the queue, the task, the BDs and words
        inside, the lock registers and queued releases); its engine is a fresh one."""
        self.queue: deque[Task] = deque()
        self._walk: TaskWalk | None = None
        self._fetched: deque[_InFlight] = deque()  # the fetch stage's BDs, oldest first
        self._gate: deque[_InFlight] = deque()     # accepted, first beat not yet granted
        self._running: deque[_InFlight] = deque()  # granted, last beat not yet taken
        self._stage: deque[_InFlight] = deque()    # the stream stage's BDs, in order
        self._head_since = 0    # the first cycle the stage head was what it is
        self._completions: deque[tuple[int, _InFlight]] = deque()  # (cycle, BD) due
        self._releases: deque[_InFlight] = deque()  # completed, release not yet applied
        self._owed = 0              # BDs past the gate whose release is not applied
        self._releasing = False     # the release port chose the queue's head this cycle
        self._applying = False      # the lock unit applies the head at this cycle's end
        self._released = False     # the lock unit's release grant register: pop the head
        self._ask: _InFlight | None = None  # the acquire request register: the BD asking
        self._ask_shown = 0         # the first cycle the request register shows _ask
        self._settling = False      # the unit tests _ask this cycle, to decide in the next
        self._answer = False        # the lock unit's grant register: _ask's lock is taken
        self._granted = False       # the lock unit grants _ask in this cycle (seen next)
        self._held: _InFlight | None = None  # its lock held, its first beat not yet passed
        self._left = 0              # beats the BD ahead at the gate has still to pass
        self._refused: Stall | None = None  # why the lock unit refused _ask this cycle
        self._mem_data = 0          # the read port's word, read in the previous cycle
        self._written_bd = -1       # the BD of the word the datapath writes this cycle
        self._wants_fetch = False   # asked for the DMA's fetch port this cycle
        self._fetch_wait = 0        # cycles before it may fetch again (FETCH_INTERVAL)
        self._cycle = getattr(self, "_cycle", 0)
        # Finish on TLAST: the status flags, the count FIFO and this task's entries.
        self.fot_length_exceeded = False
        self.fot_bds_per_task = False
        self.fot_counts: deque[FotCount] = deque()
        self._task_counts: list[FotCount] = []
        self._fresh = 0             # count FIFO entries made in this cycle (a read sees none)
        # The status register: the BD fetched last, and this cycle's raw fields
        # (status_word builds the word only when it is read).
        self._current_bd = 0
        self._status_start = (False, 0, 0, False, False, frozenset(), False)
        self._stalls = (False, False, False, False)
        # The BD errors a load, an access or (out of order) a header set (status bits, each
        # sticky): any stops the channel; error names the first.
        self.error: str | None = None
        self.errors: frozenset[str] = frozenset()
        self._invalid: frozenset[str] = frozenset()   # the errors set at this edge
        # S2MM: Current_Write_Count (the words of the BD written last) and whether the
        # next word starts a BD; the count as the cycle began (what a read shows).
        self._write_count, self._count_restarts, self._count_start = 0, True, 0
        self.task_queue_overflow = False   # a start-queue write found the queue full
        self._left_queue = -1       # the cycle a task last left the queue
        self._packer = Compressor() if self._way is READ else Decompressor()

    # -- the control register (model/arch/registers.py) --

    def control_field(self, name: str) -> int:
        """Field ``name`` of the control register (0 for a field this channel's kind and
        direction does not have)."""
        fields = CONTROL_FIELDS[self.dma.kind, self.direction]
        if name not in fields:
            return 0
        lsb, width = fields[name]
        return self.control >> lsb & ((1 << width) - 1)

    def _check_word(self, register: str, value: int) -> None:
        """A value written to ``register`` must be a 32-bit word."""
        if not 0 <= value <= 0xFFFF_FFFF:
            raise field_error(ChannelError, register, value,
                              f"a register word is 0..2^32-1; channel {self.name}")

    def write_control(self, value: int) -> None:
        """Write the control register (the end of a cycle: the channel's reset register
        shows the bit from the next cycle, which it ends in reset; see the module's
        decision). Reserved bits are dropped.

        Raises
        ------
        ChannelError
            For a value that is not a 32-bit word.
        """
        self._check_word("control", value)
        self.control = value & control_mask(self.dma.kind, self.direction,
                                            compression=self.dma.compression)
        self._reset_held = bool(self.control_field("reset"))
        # Read in every step: kept as a flag (0 on a shim, which has no such field).
        self._compression_bit = bool(self.control_field(COMPRESSION_FIELDS[self.direction]))
        self._fot_mode = 0 if self._way is READ else self.control_field("fot_mode")
        self._out_of_order = bool(self.control_field("enable_out_of_order"))

    def reset(self) -> None:
        """Reset the channel now (see the module's decision): empty, locks untouched.

        Raises
        ------
        ChannelError
            On an engine other than the model's (an RTL engine in the loop is reset by
            its own block, not here).
        """
        if type(self.engine) is not ChannelEngine:
            raise field_error(ChannelError, "engine", type(self.engine).__name__,
                              f"a reset of channel {self.name} with an engine in the loop "
                              "is not modelled")
        if self._wants_fetch:
            self.dma.fetch_granted(self)   # withdraw this cycle's request
        self._clear()
        self.engine = ChannelEngine(self.dma.kind, self._way is READ)

    def _warn_not_modelled(self, task: Task) -> None:
        """A task starts with a control bit whose behaviour the model does not have."""
        fields = ("pause_mem", "pause_stream")
        set_ = [f"{name}={self.control_field(name)}" for name in fields
                if self.control_field(name)]
        if set_:
            warnings.warn(NotModelledWarning(
                f"channel {self.name}: a task (start BD {task.start_bd}) runs with control "
                f"{', '.join(set_)}: not modelled, run as if clear"), stacklevel=4)

    def _compress(self, head: _InFlight | None) -> bool | None:
        """Whether the stage head's BD has (de)compression in effect; None while none can
        be (the control bit clear, no block inside, or a shim: AM020 has none there)."""
        if not self._compression_bit and self._packer.empty:
            return None
        return bool(self._compression_bit and head is not None and head.bd.enable_compression)

    def __repr__(self) -> str:
        return f"Channel({self.name!r})"

    @property
    def is_mm2s(self) -> bool:
        """True for MM2S (memory to stream)."""
        return self._way is READ

    @property
    def fot_mode(self) -> int:
        """The control register's finish-on-TLAST mode (``FOT_MODES`` in
        ``model/arch/registers.py``); 0 on MM2S."""
        return self._fot_mode

    def _count_fifo_full(self) -> bool:
        """FoT counts from the register: the FIFO is full and the channel takes no word."""
        return self._fot_mode == 3 and len(self.fot_counts) >= FOT_COUNT_DEPTH

    def pop_fot_count(self) -> int:
        """Read (and so pop) the count FIFO's pop register: the oldest entry's word, or 0
        (``valid`` clear) when it is empty or the channel is not in mode 3. A read at the
        end of a cycle sees the FIFO as the cycle began (the RTL's FIFO shows an entry
        from the cycle after it is written)."""
        if self.fot_mode != 3 or len(self.fot_counts) <= self._fresh:
            return 0
        return self.fot_counts.popleft().word()

    def status_word(self) -> int:
        """The status register (``STATUS_FIELDS``) as the RTL's register port reads it in
        the cycle last stepped: the state at the start of the cycle (running, queue size,
        the BD fetched last, the sticky flags) and the cycle's stall bits (module text).
        """
        (busy, queued, current, length_exceeded, bds_per_task, errors,
         overflow) = self._status_start
        fields = {"status": 2 if busy else 0, "channel_running": int(busy),
                  "task_queue_size": queued, "cur_bd": current,
                  "task_queue_overflow": int(overflow),
                  "error_fot_length_exceeded": int(length_exceeded),
                  "error_fot_bds_per_task": int(bds_per_task)}
        for error in errors:        # _BD_ERRORS
            fields[error] = 1
        for name, stalled in zip(_STALL_FIELDS, self._stalls, strict=True):
            fields[name] = int(stalled)
        return _status_bits(fields)

    def _stall_flags(self, lock_wait: _InFlight | None, owed: int, full: bool,
                     signals: EngineCycle, header_due: bool, open_: bool) -> tuple:
        """This cycle's stall bits (``_STALL_FIELDS``): the BD at the lock gate waits for
        its acquire, or, owing ``RELEASE_QUEUE_DEPTH`` releases (``owed`` at the start of
        the cycle), for room to release; the stream refuses a word (MM2S) or has none the
        channel would take (S2MM; ``open_``: the stream could take or give a word at the
        start of the cycle); the count FIFO is full while the channel is busy (``full``:
        S2MM, finish on TLAST, mode 3, at the start of the cycle)."""
        owes = (lock_wait is not None and bool(lock_wait.bd.lock_rel_value)
                and owed >= RELEASE_QUEUE_DEPTH)
        acquire = lock_wait is not None and not owes
        if self.is_mm2s:
            return acquire, owes, (signals.stream_valid or header_due) and not open_, False
        # (a beat shown: the first beat of a BD asks for its lock only once a word is
        # there, so a BD waiting for its first word waits on the stream, not the lock)
        wants = header_due or (signals.beat_valid and not full)
        return acquire, owes, wants and not open_, full and self._status_start[0]

    def _count_word(self, ends_bd: bool) -> None:
        """S2MM: a data word joins its beat (it is written a cycle later): the count of
        the BD it belongs to goes on, or restarts at 1 with the BD's first word."""
        self._write_count = 1 if self._count_restarts else self._write_count + 1
        self._count_restarts = ends_bd

    def write_count_word(self) -> int:
        """The Current_Write_Count register (S2MM; ``WRITE_COUNT_BASE`` in
        ``model/arch/registers.py``) as the RTL's register port reads it in the cycle
        last stepped: the data words of the BD whose word joined its beat last, counted
        from its first word (so after the BD ends it shows how many words it took, with
        finish on TLAST too, until the next BD's first word), in the field's
        ``WRITE_COUNT_BITS``; 0 after a reset and on MM2S."""
        return self._count_start & ((1 << WRITE_COUNT_BITS[self.dma.kind]) - 1)

    def status_fields(self) -> dict[str, int]:
        """The channel's finish-on-TLAST error flags, by their ``STATUS_FIELDS`` names
        (set when the rule is broken, clear again only by a channel reset), and, once
        it is in out-of-order mode or has had a BD error, the two BD errors
        (``error_bd_unavailable``, ``error_bd_invalid``) and the one it had."""
        fields = {"error_fot_length_exceeded": int(self.fot_length_exceeded),
                  "error_fot_bds_per_task": int(self.fot_bds_per_task)}
        if self._out_of_order or self.error:
            for name in ("error_bd_unavailable", "error_bd_invalid"):
                fields[name] = int(name in self.errors)
        for error in self.errors:
            fields[error] = 1
        return fields

    def _out_of_order_start(self) -> bool:
        """An out-of-order task starts at the end of this cycle: the next queued task, the
        channel idle of tasks and its fetch port's interval over, the control bit set
        (read as the task starts, so a task runs in one mode throughout)."""
        return (self._walk is None and bool(self.queue) and not self._fetch_wait
                and not self.error
                and self._out_of_order)

    def _fetch_asks(self) -> bool:
        """The walk has a load to fetch (an out-of-order one once its header's BD ID is
        in the stage's register), or an in-order task may start."""
        walk = self._walk
        if type(walk) is OutOfOrderWalk:
            return walk.ready(self._cycle)
        return walk is not None or (bool(self.queue) and not self.error
                                    and not self._out_of_order)

    @property
    def tokens(self) -> list[int]:
        """Cycles at which completion tokens were issued."""
        return [d.cycle for d in self.done if d.token]

    def connect(self, stream: Stream) -> Channel:
        """Attach the stream it writes (MM2S) or reads (S2MM); returns ``self``."""
        self.stream = stream
        return self

    def use_engine(self, engine: object) -> Channel:
        """Run the engine's cycles on ``engine`` (see the class text); returns ``self``."""
        if self._walk is not None or self._fetched or not self._drained() or (
                self._stage or not self.engine.empty):
            raise field_error(ChannelError, "engine", type(engine).__name__,
                              f"channel {self.name} is running a task; swap engines before")
        self.engine = engine
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

    def _start_fault(self) -> bool:
        """A channel run through its registers (memory tile): the next queued task's start
        BD is not one of the channel's (its half of the table, or past BD 47). Where the
        fetch stage would start it, the task leaves the queue with no fetch and sets
        ``error_bd_unavailable`` at the end of the cycle (module text), and nothing more
        starts in that cycle; the RTL's fetch stage does the same. True if so."""
        start = self.queue[0].start_bd
        if start in DMA_KINDS[self.dma.kind].channel_bds(self.index):
            return False
        self.queue.popleft()
        self._left_queue = self._cycle
        self._invalid |= {"error_bd_unavailable"}
        return True

    def _chain_fault(self) -> bool:
        """A channel run through its registers (memory tile): the running task's chain
        names a next BD that is not one of the channel's (the other half of the table, or
        48-63, which only a register write can give). Where the fetch stage would fetch it,
        the walk ends with no fetch and sets ``error_bd_unavailable`` at the end of the
        cycle, as :meth:`_start_fault`; the BD that named it ends no task (no token), and
        the channel stops. The RTL's fetch stage does the same. True if so."""
        walk = self._walk
        if type(walk) is OutOfOrderWalk or walk.next_bd_id in (
                DMA_KINDS[self.dma.kind].channel_bds(self.index)):
            return False
        self._walk = None
        self._invalid |= {"error_bd_unavailable"}
        return True

    def write_start_queue(self, word: int) -> None:
        """A write of the start-queue register (the end of a cycle), as the RTL's task
        queue takes it: the task ``Task.encode()`` gives ``word`` is queued, or, the
        queue full at the start of the cycle (a task that left it in this cycle still
        counted), lost with the status's ``task_queue_overflow`` set (write 1 to clear:
        :meth:`write_status`); a channel held in reset loses it. From the first such
        write the channel runs as hardware: a BD error (not valid, a lock or memory out of
        reach, a start BD not the channel's) sets its status bit and stops the channel
        (module text) rather than raising.

        Raises
        ------
        ChannelError
            For a value that is not a 32-bit word.
        """
        self._check_word("start_queue", word)
        self.hardware_faults = True
        task = Task(word & START_BD_MASK[self.dma.kind], (word >> 16 & 0xFF) + 1,
                    bool(word >> 31))
        if self._reset_held:
            return
        held = len(self.queue) + (self._left_queue == self._cycle)
        if held >= TASK_QUEUE_DEPTH:
            self.task_queue_overflow = True
            return
        self.queue.append(task)   # a start BD not the channel's faults where it starts

    def write_status(self, word: int) -> None:
        """A write of the status register: a 1 in ``task_queue_overflow`` clears that flag
        (AM025's write 1 to clear); every other bit is read-only.

        Raises
        ------
        ChannelError
            For a value that is not a 32-bit word.
        """
        self._check_word("status", word)
        if word >> STATUS_FIELDS["task_queue_overflow"][0] & 1:
            self.task_queue_overflow = False

    @property
    def busy(self) -> bool:
        """A task is queued, or a BD or word is still inside the channel."""
        return bool(self.queue or self._walk is not None or self._fetched
                    or self._gate or self._running or self._stage or self._completions
                    or self._releases or not self.engine.empty or not self._packer.empty)

    @property
    def bd(self) -> int | None:
        """The BD whose words move now (the oldest BD inside), or None."""
        for queue in (self._running, self._gate):
            if queue:
                return queue[0].bd_id
        return self._fetched[0].bd_id if self._fetched else None

    def ports(self) -> tuple[Stream, ...]:
        """The connected stream."""
        return (self.stream,) if self.stream is not None else ()

    def share_progress(self, flag: list[bool]) -> None:
        """Read ``flag[0]`` at the start of each step: true, the cycle has made progress
        already (:class:`~.scheduler.SystemRun`), so a stall's ``progress`` is set
        without comparing the channel's state before and after the cycle."""
        self._cycle_progress = flag

    def _where(self, bd_id: int) -> str:
        return f"channel {self.name}, BD {bd_id}"

    # -- the fetch stage --

    def _fetch(self) -> bool:
        """Fetch the next BD of the running (or next queued) task; True if one came."""
        if self._walk is None:
            if not self.queue:
                return False
            task = self.queue.popleft()
            self._left_queue = self._cycle
            self._warn_not_modelled(task)
            self._walk = TaskWalk(self.dma.kind, self.dma.bds, task,
                                  error=ChannelError, where=lambda b: f"; {self._where(b)}",
                                  hardware=self.hardware_faults)
        walk = self._walk
        bd_id, bd = walk.next()
        where = self._where(bd_id)
        ordered = type(walk) is not OutOfOrderWalk
        # Out of order, and on a channel run through its registers, a BD that is not valid
        # is loaded as the RTL loads it (it stops the channel at the stage's head).
        lenient = not ordered or self.hardware_faults
        bad = None if bd.valid_bd else "error_bd_invalid"
        if not DMA_KINDS[self.dma.kind].pads(self._way):
            values = bd.fields()
            padded = [f for f in _PADDING_FIELDS if values.get(f)]
            if padded and not lenient:
                raise field_error(ChannelError, padded[0], getattr(bd, padded[0]),
                                  f"S2MM cannot pad (zero padding is memory-tile MM2S only); "
                                  f"{where}")
            if padded:
                bad = "error_bd_invalid"
        bad = bad or self._lock_fault(bd)
        if self.stream is None:
            raise field_error(ChannelError, "stream", None,
                              f"channel {self.name} has no stream connected; {where}")
        # Out of order, the packet's header was taken before its BD was known.
        fetched = _InFlight(bd_id, bd, walk.task, walk.done, ordered and bool(bd.enable_packet),
                            bd.buffer_length, offered=self._cycle + BD_OFFER_LATENCY, bad=bad)
        if bd.buffer_length and not bad:
            top, addresses, zeros, address_list, zero_list = _bd_beats(self.dma.kind, bd)
            bits = ADDRESS_BITS[self.dma.kind]
            if self.hardware_faults and top >> bits:
                # The RTL's address counters wrap (decisions); what they reach is checked
                # at each access (_reaches).
                addresses = addresses & ((1 << bits) - 1)
                address_list = addresses.tolist()
            else:
                self._check_address_width(top, where)
            # The engine indexes the lists every cycle; a jump slices the arrays.
            fetched.beats = (address_list, zero_list, bd_id, bd, addresses, zeros)
        self._fetched.append(fetched)
        self._current_bd = bd_id
        self._fetch_wait = FETCH_INTERVAL
        if walk.done:
            self._walk = None
        return True

    def _reaches(self, address: int) -> bool:
        """A memory access at ``address`` is made: always, but on a channel run through
        its registers at an address its DMA does not reach (outside the DMA's ``allowed``
        window; on a memory tile past the east window, or in the window of a neighbour
        its address space has not), where the access is not made (a read gives 0) and
        ``error_dm_access_to_unavailable`` is set at the end of the cycle (module text)."""
        if not self.hardware_faults or self._reachable(address):
            return True
        if "error_dm_access_to_unavailable" not in self.errors:
            self._invalid |= {"error_dm_access_to_unavailable"}
        return False

    def _reachable(self, address: int) -> bool:
        allowed = self.dma.allowed
        if allowed is not None and not allowed.holds(address):
            return False
        if len(DMA_KINDS[self.dma.kind].windows) == 1:
            return True
        for window in self.dma.memory.windows:
            if window.start <= address < window.start + window.size:
                return window.memory is not None
        return False

    def _lock_fault(self, bd: BufferDescriptor) -> str | None:
        """``error_lock_access_to_unavailable`` if ``bd``, on a memory-tile channel run
        through its registers, names a lock its DMA does not reach: an acquire
        (``lock_acq_enable``) or a release (``lock_rel_value`` not 0) whose ID is past
        the east neighbour's (192-255, which the 8-bit fields hold) or in the range of a
        neighbour its lock space has not."""
        if not self.hardware_faults or len(DMA_KINDS[self.dma.kind].windows) == 1:
            return None
        for used, lock_id in ((bd.lock_acq_enable, bd.lock_acq_id),
                              (bd.lock_rel_value, bd.lock_rel_id)):
            if used and not any(r.first <= lock_id < r.first + r.count and r.table is not None
                                for r in self.dma.locks.ranges):
                return "error_lock_access_to_unavailable"
        return None

    def _check_address_width(self, address: int, where: str) -> None:
        """A BD whose highest address runs past the kind's address width is refused at
        fetch."""
        bits = ADDRESS_BITS[self.dma.kind]
        if address >= 1 << bits:
            raise field_error(MemoryAccessError, "address", address,
                              f"past the {bits}-bit address space of a {self.dma.kind} DMA (the "
                              f"address generator would wrap it); {where}")

    def _decide_lock(self) -> None:
        """The lock unit's decision on the request register, from the lock values at the
        start of the cycle (one acquire a cycle per tile: channels step in channel
        order); the channel sees a grant in the next cycle. The unit tests a request in
        the cycle before it may grant it: not in the first cycle the request shows, nor
        while its lock was written at the end of the cycle before."""
        self._granted, self._refused, self._settling = False, None, False
        ask = self._ask
        if ask is None or self._answer:
            return          # no request, or its grant shows now (the unit ignores it)
        if self._cycle <= self._ask_shown:
            self._settling = True   # the unit tests it in this cycle
            return
        bd, locks = ask.bd, self.dma.locks
        if locks.try_acquire(bd.lock_acq_id, bd.lock_acq_value, self._where(ask.bd_id),
                             self._cycle, settled=True):
            self._granted = True
        else:
            self._settling = locks.written_before(bd.lock_acq_id, self._cycle)
            self._refused = Stall("lock", ask.bd_id,
                                  locks.wait(bd.lock_acq_id, bd.lock_acq_value))

    def _owed_after(self) -> int:
        """Releases owed at the end of the cycle (a release whose grant shows now is
        popped then)."""
        return self._owed - self._released

    def _next_lock(self, holder: _InFlight | None, used: bool,
                   zero: _InFlight | None) -> None:
        """The edge: the hold, request and grant registers for the next cycle.

        ``holder`` held its lock in this cycle and ``used`` it (passed the gate or, a BD
        of length 0, completed). With nothing held or asked after the edge, the next BD
        at the gate (taken by the engine before this cycle), else ``zero``, asks, once
        the BD ahead has at most ``LOCK_ASK_AHEAD`` beats left and its release has room.
        """
        answered = self._answer
        if answered:
            self._ask = None
        self._answer = self._granted
        self._held = None if used else holder
        if self._held is not None or self._ask is not None:
            return
        gate = self._gate
        candidate = gate[0] if gate and gate[0].accepted < self._cycle else zero
        if candidate is None or self._left > LOCK_ASK_AHEAD:
            return
        if candidate.bd.lock_rel_value and self._owed_after() >= RELEASE_QUEUE_DEPTH:
            return
        if candidate.bd.lock_acq_enable:
            self._ask, self._ask_shown = candidate, self._cycle + 1
        else:
            self._held = candidate

    def _lock_stall(self, bd: _InFlight) -> Stall:
        """Why ``bd`` waits for its lock in this cycle."""
        if self._refused is not None and self._ask is bd:
            return self._refused
        if self._held is None and self._ask is None and bd.bd.lock_rel_value:
            return Stall("lock", bd.bd_id,
                         detail=f"its channel owes {self._owed} lock releases")
        return Stall("lock", bd.bd_id, detail="its lock grant is on its way")

    def _bd_ends(self, bd: _InFlight, by_tlast: bool) -> None:
        """S2MM: the last word of ``bd`` is taken (by its TLAST, or its ``buffer_length``-th):
        the finish-on-TLAST flags and count entries (module text, decisions)."""
        mode = self.fot_mode
        if not mode:
            return
        if not by_tlast:
            self.fot_length_exceeded = True
        if mode == 1:
            return
        entry = FotCount(bd.bd_id, bd.bd.buffer_length - bd.words_left, bd.ends_task)
        if mode == 3:
            self.fot_counts.append(entry)   # never past full: a full FIFO takes no word
            self._fresh += 1
            return
        if len(self._task_counts) < FOT_COUNT_DEPTH:
            self._task_counts.append(entry)
        else:
            self.fot_bds_per_task = True
        if bd.ends_task:
            bd.counts, self._task_counts = tuple(self._task_counts), []

    # -- one cycle --

    def step(self, cycle: int) -> Stall | None:
        """One cycle of the channel; None if a word moved on its stream, else a Stall.

        Raises
        ------
        ChannelError, BDError, LockError, MemoryAccessError, PacketError
            A bad BD at fetch, a lock rule broken, an address outside memory, a bad
            header received; each names the channel and the BD.
        """
        self._cycle = cycle
        self._fresh = 0
        busy = self.busy
        self._status_start = (busy, len(self.queue), self._current_bd,
                              self.fot_length_exceeded, self.fot_bds_per_task,
                              self.errors, self.task_queue_overflow)
        self._count_start = self._write_count
        if self._quiet(busy):
            self._stalls = (False, False, False, False)
            return self._quiet_step()
        owed_before, fifo_full = self._owed, self._count_fifo_full()
        self._fetch_wait = max(0, self._fetch_wait - 1)
        # Whether it changed state matters only to tell a deadlock, which a cycle that
        # has made progress already is not.
        known = self._cycle_progress is not None and self._cycle_progress[0]
        before = None if known else self._state()
        # The release queue's head asks for its tile's release port (applied at the end
        # of the next cycle); in the cycle the grant of the last one shows, the one
        # behind it asks.
        self._decide_lock()
        if not self._applying and len(self._releases) > self._released:
            head = self._releases[self._released]
            self._releasing = self.dma.locks.take_release_port(
                head.bd.lock_rel_id, cycle, self._where(head.bd_id))
        engine, stream = self.engine, self.stream
        # The fetch stage asks from what it holds at the start of the cycle.
        room = len(self._fetched) < FETCH_DEPTH
        fetched = self._fetched[0] if self._fetched and self._fetched[0].offered <= cycle else None
        if fetched is not None and fetched.bad:
            # A BD that is not valid never leaves the stage's head: the channel's error
            # register is set at the end of the cycle it is offered (commit), and from the
            # next no BD is taken and no queued task starts until a channel reset.
            if fetched.bad not in self.errors:    # (set again, a register keeps its value)
                self._invalid |= {fetched.bad}
            fetched = None
        offer = fetched if fetched is not None and fetched.bd.buffer_length else None
        moved = False
        header_word = False
        stall: Stall | None = None
        lock_wait: _InFlight | None = None   # waits at the gate for its lock
        # The stream stage decides what the engine's stream side sees.
        head = self._stage[0] if self._stage else None
        i_end = False
        # With (de)compression possible, the stream stage talks to the stream through it.
        compress = self._compress(head)   # None: no compression possible, the stream itself
        port = stream
        if self.is_mm2s:
            if compress is not None:
                port = CompressingPort(self._packer, stream, compress)
            # The header goes out once the BD's lock is granted, before its first word.
            header_due = (head is not None and head.header
                          and not (self._gate and self._gate[0] is head))
            open_ = stream is not None and port.can_push()      # it takes a word now
            o_ready = open_ and not header_due
            engine.drive(offer and offer.bd, o_ready=o_ready, mem_data=self._mem_data)
            if header_due and (port.can_push(header=True) if compress is not None
                               else stream.can_push()):
                header = Beat(packet_header(head.bd.packet_id, head.bd.packet_type,
                                            self.dma.row, self.dma.column,
                                            head.bd.out_of_order_bd_id))
                if compress is None:
                    stream.push(header)
                else:
                    port.push(header, header=True)
                head.header, moved, header_word = False, True, True
        else:
            # Out of order, a packet's header is taken once the BD before it has all its
            # words (nothing in the fetch or stream stage).
            walk = self._walk
            ooo = (walk if type(walk) is OutOfOrderWalk and walk.wants_header
                   and head is None and not self._fetched and not self.error else None)
            header_due = (head is not None and head.header) or ooo is not None
            if compress is not None:
                settled = head is not None and self._head_since < cycle
                port = DecompressingPort(self._packer, stream, header_due, compress, settled)
            open_ = stream is not None and port.can_pop()       # it has a word now
            if header_due and port.can_pop():
                beat = port.pop()
                header = self._take_header(beat.data, head)
                if ooo is not None:
                    ooo.take_header(header.out_of_order_bd_id, cycle)
                    if ooo.error:
                        self.error, self._walk = ooo.error, None
                        self.errors |= {ooo.error}
                else:
                    head.header = False
                moved, header_word = True, True
            i_valid = (stream is not None and not header_due and port.can_pop()
                       and not self._count_fifo_full())
            i_end = i_valid and self._fot_mode != 0 and port.peek().last
            engine.drive(offer and offer.bd, i_valid=i_valid,
                         i_data=port.peek().data if i_valid else 0, i_end=i_end)
        # The lock gate: the first beat of the BD at the gate passes once its lock is held.
        holder = self._ask if self._answer else self._held
        waiting = engine.lock_request()
        if waiting:
            engine.grant(holder is not None and holder is self._gate[0])
        signals = engine.sample()
        used = signals.lock_grant
        if used:
            passed = self._gate.popleft()
            self._running.append(passed)
            self._owed += bool(passed.bd.lock_rel_value)
            self._left = len(passed.beats[0])
        elif waiting:
            lock_wait = self._gate[0]
        moved_beat = signals.beat_valid and signals.beat_ready
        cut = False   # S2MM, finish on TLAST: this word ends its BD early
        if moved_beat:
            self._left -= 1
            if i_end:
                cut, self._left = True, 0
            if not self.is_mm2s:
                self._count_word(signals.last or cut)
        # A BD of length 0 never enters the engine: it asks for its lock once everything
        # before it is done, and completes in the cycle it holds it.
        consumed = signals.bd_valid and signals.bd_ready
        zero = None
        if fetched is not None and not fetched.bd.buffer_length and self._drained():
            if holder is fetched:
                self._completions.append((cycle, fetched))
                self._owed += bool(fetched.bd.lock_rel_value)
                consumed = used = True
                stall = Stall("load", fetched.bd_id, progress=True)
            else:
                zero = lock_wait = fetched
        if signals.bd_valid and signals.bd_ready:
            fetched.accepted = cycle
            self._gate.append(fetched)
            if not self._stage:
                self._head_since = cycle + 1
            self._stage.append(fetched)
        # The datapath's memory port and stream side.
        if self.is_mm2s:
            if signals.mem_read and self._reaches(signals.mem_addr):
                self._mem_data = self.dma.memory.read(signals.mem_addr,
                                                      self._where(self._running[0].bd_id))
            elif signals.mem_read:
                self._mem_data = 0
            if signals.stream_valid and signals.stream_ready:
                head = self._stage[0]
                beat = Beat(signals.data, signals.stream_last and not head.bd.tlast_suppress)
                if compress is None:
                    stream.push(beat)
                else:
                    port.push(beat, end=signals.stream_last)
                moved = True
                if signals.stream_last:
                    self._stage.popleft()
                    self._head_since = cycle + 1
        else:
            if signals.mem_write and self._reaches(signals.mem_addr):
                self.dma.memory.write(signals.mem_addr, signals.mem_data,
                                      self._where(self._written_bd))
            remaining = self._stage[0].words_left if self._stage else 0
            if signals.stream_valid and signals.stream_ready:
                port.pop()
                moved = True
                head = self._stage[0]
                head.words_left -= 1
                self._written_bd = head.bd_id
                if cut or not head.words_left:
                    self._bd_ends(head, cut)
                    head.words_left = 0
                    self._stage.popleft()
                    self._head_since = cycle + 1
            if compress is not None:
                port.finish(remaining)
        if self.is_mm2s and compress is not None:
            moved = port.finish()   # a word is on the stream (headers included)
        # A BD is complete when its last memory access is done (MM2S: its last read is
        # issued; S2MM: its last write): it completes at the end of that cycle, its lock
        # release joining the release queue.
        if moved_beat and (signals.last or cut):
            done = self._running.popleft()
            self._completions.append((cycle + COMPLETION_LATENCY[self.direction],
                                      done))
        self._stalls = self._stall_flags(lock_wait, owed_before, fifo_full, signals,
                                         header_due and not header_word, open_)
        engine.clock(offer.beats if consumed and offer is not None else None)
        if consumed:
            self._fetched.popleft()
        self._next_lock(holder, used, zero)
        if lock_wait is not None:
            stall = self._lock_stall(lock_wait)
        # The fetch stage asks for the DMA's fetch port while it had room at the start
        # of the cycle and its last fetch's BD has shown what comes next (granted once
        # every channel has stepped: commit).
        if self._out_of_order_start():
            self._walk = OutOfOrderWalk(self.dma.kind, self.dma.bds, self.queue.popleft(),
                                        self.index)
            self._left_queue = self._cycle
        dropped = self.hardware_faults and room and not self._fetch_wait and (
            self._chain_fault() if self._walk is not None else (
                bool(self.queue) and not self.error and not self._out_of_order
                and self._start_fault()))
        self._wants_fetch = (room and not self._fetch_wait and not dropped
                             and self._fetch_asks())
        if self._wants_fetch:
            self.dma.request_fetch(self)
        if moved:
            self.words += 1
            return None
        # A cycle with fetch requests fetches a BD (the DMA grants one of them), a BD on
        # its way from the table arrives and a granted release leaves its queue whatever
        # else happens.
        progress = (known or self._state() != before or self._wants_fetch or self._released
                    or self._applying or self._settling
                    or any(f.offered > cycle for f in self._fetched))
        if stall is not None and stall.cause in ("lock", "load"):
            return Stall(stall.cause, stall.bd, stall.lock, progress=progress or stall.progress,
                         detail=stall.detail)
        return self._stall_cause(signals, header_due and not header_word, progress)

    def _take_header(self, word: int, head: _InFlight | None) -> PacketHeader:
        """A received packet header's fields. Through the Python API a reserved bit or bad
        parity raises; on a channel run through its registers the fields are read as the
        RTL reads them and bad parity sets ``error_bd_invalid`` at the end of the cycle
        (the RTL's ``error``): the BD goes on with its words, no queued task starts and,
        out of order, no header is taken after it (module text)."""
        if self.hardware_faults:
            if bad_parity(word):
                self._invalid |= {"error_bd_invalid"}
            return parse_packet_header(word, check=False)
        try:
            return parse_packet_header(word)
        except PacketError as error:
            raise PacketError(f"{error}; received by "
                              f"{self._where(head.bd_id) if head else self.name}") from None

    def _quiet(self, busy: bool) -> bool:
        """Nothing inside, queued or due (``busy``: :attr:`busy` now; no fetch wait, no
        lock register set), on the model's engine: a cycle of it changes nothing and
        moves nothing."""
        return (not busy and not self._fetch_wait and self._ask is None and self._held is None
                and not self._answer and type(self.engine) is ChannelEngine)

    def _quiet_step(self) -> Stall:
        """:meth:`step` of a :meth:`_quiet` channel (a quarter of the cycles of short task
        programs): its empty engine still runs its cycle, which a recorder of its ports
        sees, and nothing else can change."""
        engine, stream = self.engine, self.stream
        if self.is_mm2s:
            engine.drive(None, o_ready=stream is not None and stream.can_push(),
                         mem_data=self._mem_data)
        else:
            i_valid = stream is not None and stream.can_pop()
            engine.drive(None, i_valid=i_valid, i_data=stream.peek().data if i_valid else 0)
        engine.sample()
        engine.clock(None)
        return _IDLE

    def _stall_cause(self, signals: EngineCycle, header_due: bool, progress: bool) -> Stall:
        stream = self.stream
        if self.is_mm2s:
            if ((signals.stream_valid or header_due or not self._packer.empty)
                    and not stream.can_push()):
                bd = self._stage[0].bd_id if self._stage else self.bd   # words compressed
                return Stall("backpressure", bd, progress=progress,
                             detail=stream.name)
        elif header_due or signals.beat_valid:
            if not (stream is not None and stream.can_pop()):
                bd = self._stage[0].bd_id if self._stage else self.bd
                return Stall("empty", bd, progress=progress, detail=stream.name)
        if self.error and self.busy:
            return Stall("load", self.bd, progress=progress,
                         detail=f"stopped by {self.error} until a reset")
        if self.busy:
            return Stall("load", self.bd, progress=progress)
        return Stall("idle", progress=progress)

    def _fetch_state(self) -> tuple:
        """The fetch stage's BDs, each with whether it is still on its way from the table,
        and the cycles before it may fetch again."""
        after = self._cycle + 1
        fetched = self._fetched
        return (tuple([(id(f), f.offered > after) for f in fetched]) if fetched else (),
                self._fetch_wait)

    def _drained(self) -> bool:
        """Every BD before the fetched one is complete (a BD of length 0 may run)."""
        return not (self._gate or self._running or self._completions)

    def _state(self) -> tuple:
        # _fetch_state and _lock_state inline, one flat tuple: asked twice in most
        # stepped cycles.
        after = self._cycle + 1
        fetched = self._fetched
        return (self.engine.state(),
                tuple([(id(f), f.offered > after) for f in fetched]) if fetched else (),
                self._fetch_wait, self.error, self._invalid, len(self.queue), len(self._gate),
                len(self._running), len(self._stage), len(self._completions),
                len(self._releases), self._owed, self._releasing, self._applying,
                id(self._ask), self._cycle < self._ask_shown, self._answer, self._granted,
                id(self._held), self._released, tuple(map(_HEADER, self._stage)),
                self._packer.state())

    def _lock_state(self) -> tuple:
        """The lock registers: request (and whether the unit has tested it), grants, hold,
        release grant."""
        return (id(self._ask), self._cycle < self._ask_shown, self._answer, self._granted,
                id(self._held), self._released, self._applying)

    # -- the fast path (:class:`.scheduler.Steady`) --

    def steady_state(self) -> Hashable | None:
        """The channel's state without its beat position and data; None on an RTL engine
        (an RTL engine steps every cycle, as it must)."""
        if (type(self.engine) is not ChannelEngine or self._fot_mode or self._out_of_order
                or self._compress(None) is not None or self.error):
            # FoT: a TLAST may end a BD on any word; out of order: a header may start
            # a task or name a BD in any cycle; (de)compression: blocks vary in size; a
            # BD error: a run that nothing else moves ends as a deadlock naming it, not
            # as a jump to max_cycles. Each cycle is stepped.
            return None
        return (self.engine.steady_state(), self._fetch_state(), id(self._walk), len(self.queue),
                len(self._gate), len(self._running), len(self._stage), len(self._completions),
                len(self._releases), self._owed, self._lock_state(),
                tuple(map(_HEADER, self._stage)), self._written_bd)

    def next_event(self, last: int, moved: bool) -> int:
        """The cycle a lock release is due (the release queue's head asks for the port
        in the very next) or, streaming, the cycle of the BD's last beat, or the cycle
        the BD behind it asks for its lock (``LOCK_ASK_AHEAD`` beats before)."""
        if self._releases:
            return last + 1   # the queue's head is applied as soon as the port is free
        event = NEVER
        if self._completions:
            event = min(due for due, _ in self._completions)
        if not moved:
            return event
        engine = self.engine
        run = engine.slots.run
        if run is None or engine.first or engine.skid is not None or engine.dropping:
            return last + 1   # (S2MM's skid is empty while it streams steadily)
        # The BD's last beat completes it (lock release, stage, TLAST): stop before it,
        # and, with a BD waiting behind it, before that BD asks for its lock
        # (LOCK_ASK_AHEAD beats earlier).
        ahead = LOCK_ASK_AHEAD if self._gate else 0
        event = min(event, last + len(run[0]) - engine.slots.position - ahead)
        if self.is_mm2s:
            datapath = engine.datapath
            if (datapath.flight is None or datapath.flight[1]
                    or any(last_word for _, last_word in datapath.buffer)):
                return last + 1
        elif engine.datapath.write is None or not self._stage:
            return last + 1
        else:
            event = min(event, last + self._stage[0].words_left)
        return event

    def plan(self, cycles: int, moved: bool) -> FastPlan | None:
        """The jump: MM2S reads and pushes ``cycles`` words, S2MM pops and writes them."""
        if not moved:
            return FastPlan()
        slots = self.engine.slots
        start = slots.position
        addresses = slots.run[4][start:start + cycles]
        zeros = slots.run[5][start:start + cycles]
        allowed = self.dma.allowed
        if self.hardware_faults and allowed is not None and not allowed.holds(
                addresses[~zeros]).all():
            return None   # stepping makes the fault at its beat
        if self.is_mm2s:
            return self._plan_mm2s(cycles, addresses, zeros)
        return self._plan_s2mm(cycles, addresses, zeros)

    def _plan_mm2s(self, cycles: int, addresses: np.ndarray, zeros: np.ndarray) -> FastPlan | None:
        read = addresses[~zeros]
        placed = self.dma.memory.locate(read)
        if placed is None:
            return None   # stepping raises the error at its beat
        engine = self.engine
        datapath = engine.datapath

        def push() -> None:
            # In cycle j the beat at position + j is read; the word leaving is the one
            # B + 1 places ahead of it (B words in the buffer, one in flight).
            values = np.zeros(read.size, dtype=np.int64)
            for memory, mask, offsets in placed:
                values[mask] = memory.data[offsets]
            data = np.zeros(cycles, dtype=np.int64)
            data[~zeros] = values
            held = len(datapath.buffer)
            ahead = [word for word, _ in datapath.buffer]
            ahead.append(0 if datapath.flight[0] else self._mem_data)
            words = np.concatenate((np.asarray(ahead, dtype=np.int64), data))
            self.stream.bulk_push_words(words[:cycles])
            datapath.buffer = deque((word, False)
                                    for word in words[cycles:cycles + held].tolist())
            datapath.flight = (bool(zeros[-1]), False)
            if values.size:
                self._mem_data = int(values[-1])
            engine.slots.position += cycles
            self._left -= cycles
            self.words += cycles
            self._cycle += cycles
            self._fetch_wait = max(0, self._fetch_wait - cycles)

        return FastPlan(push=push, reads=[(memory, offsets) for memory, _, offsets in placed])

    def _plan_s2mm(self, cycles: int, addresses: np.ndarray, zeros: np.ndarray) -> FastPlan | None:
        if zeros.any():
            return None
        engine = self.engine
        pending = engine.datapath.write   # joined in the last cycle, written in the first
        written = np.concatenate(([pending[0]], addresses[:-1]))
        placed = self.dma.memory.locate(written)
        if placed is None:
            return None

        def pop() -> None:
            words, _ = self.stream.bulk_pop_words(cycles)   # FoT off: TLAST is data
            values = np.concatenate((np.asarray([pending[1]], dtype=np.int64), words[:-1]))
            bad = np.flatnonzero((values < WORD_MIN) | (values > WORD_MAX))
            if bad.size:   # the error stepping gives at that word
                self.dma.memory.write(int(written[bad[0]]), int(values[bad[0]]),
                                      self._where(self._written_bd))
            for memory, mask, offsets in placed:
                memory.data[offsets] = (values[mask] & 0xFFFF_FFFF).astype(np.uint32)
            engine.datapath.write = (int(addresses[-1]), int(words[-1]))
            self._stage[0].words_left -= cycles
            self._write_count += cycles   # a jump holds no BD's first or last word
            engine.slots.position += cycles
            self._left -= cycles
            self.words += cycles
            self._cycle += cycles
            self._fetch_wait = max(0, self._fetch_wait - cycles)

        return FastPlan(pop=pop, writes=[(memory, offsets) for memory, _, offsets in placed])

    def commit(self) -> None:
        """End of cycle: fetch if the fetch port is this channel's; apply the release
        queue's head if the release port is; queue the releases of BDs complete this
        cycle and end their tasks."""
        if self._wants_fetch:
            self._wants_fetch = False
            if self.dma.fetch_granted(self):
                self._fetch()
        if self._released:     # the grant shows: the head leaves the queue
            self._released = False
            self._releases.popleft()
            self._owed -= 1
        if self._applying:     # the lock unit applies the head at this edge
            self._applying, self._released = False, True
            head = self._releases[0]
            self.dma.locks.release(head.bd.lock_rel_id, head.bd.lock_rel_value,
                                   self._where(head.bd_id), self._cycle)
        if self._releasing:    # chosen: applied at the end of the next cycle
            self._releasing, self._applying = False, True
        while self._completions and self._completions[0][0] <= self._cycle:
            cycle, done = self._completions.popleft()
            if done.bd.lock_rel_value:
                self._releases.append(done)
            if done.ends_task:
                self.done.append(TaskDone(cycle, done.task, self.control_field("controller_id"),
                                          done.counts))
        if self._invalid:
            self.errors |= self._invalid
            self.error = self.error or next(e for e in _BD_ERRORS if e in self._invalid)
            self._invalid = frozenset()
        if self._reset_held:   # the reset register reads 1 in this cycle: it ends in reset
            self.reset()
