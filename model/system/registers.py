"""Programming a model DMA through the AIE-ML register map: BD words, task pushes, lock
values, channel controls.

A program is a list of ``(register_address, value)`` writes, as a host (or a CDO
file) issues them: BD ``n`` word ``w`` at the kind's BD base + 0x20 n + 4 w, a task
word (``Task.encode()``) at a channel's start-queue register, a lock's value at its
value register, a channel's control word at its control register, a write-1-to-clear
of ``task_queue_overflow`` at its status register (``model/arch/registers.py``).
:func:`apply_writes` applies one to a :class:`~.dma.DMA` before a run;
:func:`program_writes` gives the writes that load a DMA's BD table, control words,
queued tasks and locks, so a lowered port or a whole graph can be written out and
replayed (into this model or into the RTL: ``aiedma.tb.system.dma_check``). During a
run, :class:`RegisterWriter` (a scheduler agent) writes at given cycles through
:func:`write_register`, and :func:`read_register` reads a register back as the RTL's
register port does.

**decision**: writes are applied in order before cycle 0; a BD is decoded once all
writes are in (its words as they stand then), so a program may write a BD's words in
any order, and a start-queue write may come before the words of its BDs. Control and
start-queue writes are applied in their order (a reset empties the queue pushed before
it).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ..arch.directions import check_direction
from ..arch.kinds import BD_REGISTER_STRIDE, DEFAULT_ROW, DMA_KINDS
from ..arch.register_map import register_at, registers
from ..arch.registers import (
    control_address,
    lock_value_address,
    start_queue_address,
)
from ..bd.descriptor import BufferDescriptor
from ..bd.fields import WORDS
from ..bd.lower import LoweredProgram
from ..bd.task import run_task
from ..errors import AiedmaError, field_error
from .channel import TASK_QUEUE_DEPTH
from .dma import DMA
from .memory import Memory, shim_space
from .scheduler import Stall

__all__ = [
    "RegisterError",
    "RegisterWriter",
    "apply_writes",
    "channel_words",
    "lowered_writes",
    "program_writes",
    "read_register",
    "read_writes_document",
    "write_register",
    "writes_document",
]


class RegisterError(AiedmaError):
    """A register write the DMA has no register for, or a value its register refuses."""


def _decoder(dma: DMA) -> dict[int, tuple[str, object]]:
    """Register address -> what a write there does (``bd``, ``task``, ``control``, ``lock``),
    from the register map (``model/arch/register_map.py``): every register a write
    changes."""
    table: dict[int, tuple[str, object]] = {}
    for register in registers(dma.kind):
        if register.role == "bd":
            table[register.address] = ("bd", (register.index, register.word))
        elif register.role == "start_queue":
            table[register.address] = ("task", (register.direction, register.index))
        elif register.role == "control":
            table[register.address] = ("control", (register.direction, register.index))
        elif register.role == "lock_value":
            table[register.address] = ("lock", register.index)
        elif register.role == "status":
            table[register.address] = ("status", (register.direction, register.index))
    return table


def apply_writes(dma: DMA, writes: Iterable[Sequence[int]]) -> None:
    """Program ``dma`` with register writes before a run: its BD table, its channels' control
    words and queues, its locks, its status registers' write-1-to-clear bit. A reset bit
    empties its channel at once: tasks pushed before it in the program, or while it reads
    1, are dropped (as the RTL, held in reset while it is loaded, drops them). A task
    pushed onto a full queue is lost and sets the channel's ``task_queue_overflow``, and
    a channel pushed this way runs as hardware (a BD that is not valid sets
    ``error_bd_invalid`` and stops it: :meth:`~.channel.Channel.write_start_queue`).

    Raises
    ------
    RegisterError
        For an address with no register of this kind, a value that is not a 32-bit
        word, a lock value outside 0..63, or BD words that do not decode (the BD and
        the rule named); nothing is applied then.
    """
    _apply(dma, writes, before_run=True)


def _apply(dma: DMA, writes: Iterable[Sequence[int]], *, before_run: bool) -> None:
    """``apply_writes`` (``before_run``) or one write during a run (:func:`write_register`)."""
    decoder = _decoder(dma)
    images = {n: list(bd.encode()) for n, bd in dma.bds.items()}
    # start-queue, control and status writes, in order
    tasks: list[tuple[str, str, int, int]] = []
    locks: list[tuple[int, int]] = []
    for k, write in enumerate(writes):
        address, value = int(write[0]), int(write[1])
        if not 0 <= value <= 0xFFFF_FFFF:
            raise field_error(RegisterError, "value", value,
                              f"write {k} to {address:#x}: a register word is 0..2^32-1")
        what = decoder.get(address)
        if what is None:
            raise field_error(RegisterError, "address", f"{address:#x}",
                              f"write {k}: no BD, start-queue, control, status or lock "
                              f"register of a {dma.kind} DMA is there")
        role, where = what
        if role == "bd":
            n, w = where
            images.setdefault(n, [0] * WORDS[dma.kind])[w] = value
        elif role in ("task", "control", "status"):
            tasks.append((role, *where, value))
        else:
            if value > 63:
                raise field_error(RegisterError, "value", value,
                                  f"write {k} to lock {where}: a lock holds 0..63")
            locks.append((where, value))
    bds = {}
    for n, words in images.items():
        try:
            bds[n] = BufferDescriptor.decode_stored(dma.kind, words)
        except AiedmaError as error:
            raise RegisterError(f"{error}; BD {n} as written") from None
    own = DMA_KINDS[dma.kind].lock_window("own").start
    for n, bd in bds.items():
        dma.write_bd(n, bd, as_written=True)
    for lock, value in locks:
        table, local = dma.locks.route(own + lock)
        table.set(local, value)
    for role, direction, index, value in tasks:
        channel = dma.channel(direction, index)
        if role == "task":
            channel.write_start_queue(value)   # (a channel held in reset loses it)
        elif role == "status":
            channel.write_status(value)
        else:
            channel.write_control(value)
            if before_run and channel.control_field("reset"):
                channel.reset()


def write_register(dma: DMA, address: int, value: int) -> None:
    """One register write now (during a run: at the end of the cycle, see
    :class:`RegisterWriter`): a BD word (the BD decoded with it), a task push, a lock
    value, a control word.

    Raises
    ------
    RegisterError
        As :func:`apply_writes` (a BD whose words, with this one, do not decode).
    """
    _apply(dma, [(address, value)], before_run=False)


def read_register(dma: DMA, address: int, cycle: int | None = None) -> int:
    """A register's word as the DMA's register port reads it: a BD word (0 for a BD never
    written), a lock's value, a channel's control word (reserved bits 0), its status word
    in the cycle last stepped (:meth:`~.channel.Channel.status_word`), an S2MM channel's
    count FIFO pop register (the read pops the entry,
    :meth:`~.channel.Channel.pop_fot_count`) and its Current_Write_Count register in the
    cycle last stepped (:meth:`~.channel.Channel.write_count_word`). With ``cycle`` (a
    read during a run, in that cycle), a lock reads as it stood at the start of the
    cycle, before the acquire, release or write at its end, as the RTL's register port
    reads the lock unit.

    Raises
    ------
    RegisterError
        For an address with no readable register the model keeps (start queues are
        written only).
    """
    register = register_at(dma.kind, int(address))
    if register is not None and register.role == "fot_count":
        return dma.channel("s2mm", register.index).pop_fot_count()
    if register is not None and register.role == "status":
        return dma.channel(register.direction, register.index).status_word()
    if register is not None and register.role == "write_count":
        return dma.channel("s2mm", register.index).write_count_word()
    what = _decoder(dma).get(int(address))
    if what is None or what[0] == "task":
        raise field_error(RegisterError, "address", f"{int(address):#x}",
                          f"no BD, lock or control register of a {dma.kind} DMA the model "
                          f"reads is there")
    role, where = what
    if role == "bd":
        n, w = where
        return int(dma.bds[n].encode()[w]) if n in dma.bds else 0
    if role == "control":
        return dma.channel(*where).control
    own = DMA_KINDS[dma.kind].lock_window("own").start
    table, local = dma.locks.route(own + where)
    return int(table[local] if cycle is None else table.value_at_start(local, cycle))


class RegisterWriter:
    """A host writing a DMA's registers during a run; a scheduler agent.

    Each write ``(cycle, address, value)`` takes effect at the end of its cycle, as the
    RTL's register port's does: the channels see it from the next cycle. It must come
    after the DMA's channels in the agent list (its :meth:`commit` after theirs).

    Parameters
    ----------
    dma : DMA
    writes : iterable of (int, int, int or None)
        ``(cycle, address, value)``, in any order (a cycle's writes in theirs); a value
        of None reads the register instead (:func:`read_register` in that cycle: a count
        FIFO pop register pops, a lock gives its value at the start of the cycle), the
        word kept in :attr:`reads`.

    Attributes
    ----------
    reads : list of (int, int, int)
        ``(cycle, address, word)`` of each read, in order.
    """

    def __init__(self, dma: DMA, writes: Iterable[Sequence[int]]) -> None:
        self.dma, self.name = dma, f"{dma.name}.host"
        self.writes = sorted(((int(c), int(a), None if v is None else int(v))
                              for c, a, v in writes),
                             key=lambda w: w[0])
        self._next, self._cycle = 0, 0
        self.reads: list[tuple[int, int, int]] = []

    @property
    def busy(self) -> bool:
        return self._next < len(self.writes)

    def ports(self) -> tuple:
        return ()

    def step(self, cycle: int) -> Stall:
        self._cycle = cycle
        return Stall("idle", progress=self.busy)   # waiting for a write's cycle is progress

    def commit(self) -> None:
        while self.busy and self.writes[self._next][0] <= self._cycle:
            cycle, address, value = self.writes[self._next]
            self._next += 1
            if value is None:
                self.reads.append((cycle, address, read_register(self.dma, address, cycle)))
            else:
                write_register(self.dma, address, value)


def program_writes(dma: DMA) -> list[tuple[int, int]]:
    """The writes that load ``dma``'s BD table, its own locks, its channels' control words
    and queued tasks (and one push more onto a queue whose overflow flag is set).

    Lock values and control words are written only where they are not 0 (their reset
    value); a channel's control word comes before its tasks.
    """
    kind = dma.kind
    base = DMA_KINDS[kind].bd_register_base
    writes = [(base + BD_REGISTER_STRIDE * n + 4 * w, word)
              for n, bd in sorted(dma.bds.items()) for w, word in enumerate(bd.encode())]
    own = DMA_KINDS[kind].lock_window("own").start
    for lock in range(DMA_KINDS[kind].locks):
        table, local = dma.locks.route(own + lock)
        if table[local]:
            writes.append((lock_value_address(kind, lock), table[local]))
    for channel in dma.channels:
        if channel.control:
            writes.append((control_address(kind, channel.direction, channel.index),
                           channel.control))
        queue = start_queue_address(kind, channel.direction, channel.index)
        writes += [(queue, task.encode()) for task in channel.queue]
        if channel.task_queue_overflow and len(channel.queue) == TASK_QUEUE_DEPTH:
            writes.append((queue, channel.queue[-1].encode()))   # onto the full queue: set
    return writes


def lowered_writes(lowered: LoweredProgram, channel: int = 0) -> list[tuple[int, int]]:
    """The writes that run a lowered port program: its BD words, then its task pushed.

    Parameters
    ----------
    lowered : LoweredProgram
        What :func:`~aiedma.model.bd.lower.lower` gave.
    channel : int
        The channel of the program's direction (a read runs on MM2S ``channel``, a
        write on S2MM ``channel``) whose start queue takes the task.

    Raises
    ------
    AiedmaError
        For a channel the kind does not have, or a channel whose half of the memory
        tile's BDs does not hold the program's first BD.
    """
    kind = lowered.kind
    base = DMA_KINDS[kind].bd_register_base
    writes = [(base + BD_REGISTER_STRIDE * b.bd_id + 4 * w, word)
              for b in lowered.bds for w, word in enumerate(b.bd.encode())]
    direction = check_direction(lowered.direction, "access").channel
    queue = start_queue_address(kind, direction, channel)
    dma = DMA_KINDS[kind]
    dma.check_bd_in_half(AiedmaError, "start_bd", lowered.task.start_bd,
                         dma.channel_bds(channel),
                         f"{direction.upper()} channel {channel} runs BDs")
    writes.append((queue, lowered.task.encode()))
    return writes


def channel_words(kind: str, writes: Iterable[Sequence[int]]) -> dict[str, int]:
    """Per channel with tasks (``"mm2s0"``, ``"s2mm1"``): the words its queued tasks move.

    Raises
    ------
    RegisterError
        As :func:`apply_writes`; a task's own errors (a missing or invalid BD) as
        :func:`~aiedma.model.bd.task.run_task` raises them.
    """
    # Only the BD table and the queues are read: a shim gets a one-word memory.
    memory = shim_space("external", Memory("external", 1)) if kind == "shim" else None
    dma = DMA(kind, 0, DEFAULT_ROW[kind], memory=memory)
    apply_writes(dma, writes)
    table, counts = dict(dma.bds), {}
    for channel in dma.channels:
        for task in channel.queue:
            words, table = run_task(kind, table, task)
            name = f"{channel.direction}{channel.index}"
            counts[name] = counts.get(name, 0) + words.size
    return counts


WRITES_FORMAT = "aiedma register writes"
"""The ``format`` entry of a register-write document (:func:`writes_document`)."""


def writes_document(kind: str, writes: Iterable[Sequence[int]]) -> dict[str, Any]:
    """A register-write program as JSON data: its kind and ``[address, value]`` in hex.

    ``aiedma bd --format writes`` prints it and ``aiedma replay`` reads it back
    (:func:`read_writes_document`).
    """
    return {"format": WRITES_FORMAT, "kind": kind,
            "writes": [[f"0x{int(a):05X}", f"0x{int(v):08X}"] for a, v in writes]}


def _word(value: object, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise field_error(RegisterError, field, value, "must be an integer or a hex string")
    if isinstance(value, str):
        try:
            value = int(value, 0)
        except ValueError:
            raise field_error(RegisterError, field, value,
                              "must be an integer or a hex string (0x...)") from None
    return value


def read_writes_document(document: object) -> tuple[str, list[tuple[int, int]]]:
    """The kind and the writes of a register-write document (:func:`writes_document`).

    Raises
    ------
    RegisterError
        For a document that is not an object with ``kind`` (one of the DMA kinds) and
        ``writes`` (a list of ``[address, value]`` pairs, integers or hex strings),
        naming the entry.
    """
    if not isinstance(document, dict):
        raise field_error(RegisterError, "document", type(document).__name__,
                          'must be an object {"kind": ..., "writes": [[address, value], ...]}')
    kind = document.get("kind")
    if kind not in DMA_KINDS:
        raise field_error(RegisterError, "kind", kind,
                          f"must be one of {', '.join(DMA_KINDS)}")
    writes = document.get("writes")
    if not isinstance(writes, list):
        raise field_error(RegisterError, "writes", type(writes).__name__,
                          "must be a list of [address, value] pairs")
    pairs = []
    for k, write in enumerate(writes):
        if not isinstance(write, list) or len(write) != 2:
            raise field_error(RegisterError, f"writes[{k}]", write,
                              "must be a pair [address, value]")
        pairs.append((_word(write[0], f"writes[{k}] address"),
                      _word(write[1], f"writes[{k}] value")))
    return kind, pairs
