"""A channel's task queue: start-queue register writes in, tasks out to the fetch stage.

A write of the start-queue register word (``Task.encode()`` in ``model/bd/task.py``:
bit 31 token enable, bits 23:16 repeat count minus one, the start BD in the low bits)
pushes a task; the queue holds ``TASK_QUEUE_DEPTH`` (4) pending tasks, as the model's
channel does (``model/system/channel.py``). A push into a full queue (full at the start
of the cycle) is not stored and sets the sticky ``overflow`` flag, as the model's
start-queue write (``Channel.write_start_queue``) does: never a silent drop.
The running task has left the queue: the fetch stage pops it when it starts it.
"""

from __future__ import annotations

from amaranth.hdl import Module, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.fifo import SyncFIFO
from amaranth.lib.wiring import In, Out

from ..model.bd.task import REPEAT_COUNT_MAX
from ..model.system.channel import TASK_QUEUE_DEPTH

__all__ = ["TaskQueue", "task_layout"]

_START_BD_BITS = 6
_REPEAT_BITS = (REPEAT_COUNT_MAX - 1).bit_length()


def task_layout() -> data.StructLayout:
    """A queued task: start BD, repeat count minus one (as stored), token enable."""
    return data.StructLayout({"start_bd": _START_BD_BITS, "repeat": _REPEAT_BITS, "token": 1})


class TaskQueue(wiring.Component):
    """Depth-4 task queue of one channel.

    Attributes
    ----------
    push : In(1)
    word : In(32)
        A start-queue register write (the word of ``Task.encode()``).
    o : Out(stream.Signature(task_layout()))
        The oldest pending task.
    size : Out(range(TASK_QUEUE_DEPTH + 1))
        Pending tasks (channel status).
    overflow : Out(1)
        Sticky: a push found the queue full.
    clear_overflow : In(1)
        Clear ``overflow`` at the end of the cycle (a write of 1 to the status register's
        ``task_queue_overflow`` bit: AM025's write-1-to-clear); a push onto a full queue
        in the same cycle sets it again.
    """

    def __init__(self) -> None:
        super().__init__({
            "push": In(1), "word": In(32),
            "o": Out(stream.Signature(task_layout())),
            "size": Out(range(TASK_QUEUE_DEPTH + 1)), "overflow": Out(1),
            "clear_overflow": In(1),
        })

    def elaborate(self, platform: object) -> Module:
        m = Module()
        layout = task_layout()
        m.submodules.fifo = fifo = SyncFIFO(width=layout.size, depth=TASK_QUEUE_DEPTH)
        entry = Signal(layout)
        m.d.comb += [
            entry.start_bd.eq(self.word[:_START_BD_BITS]),
            entry.repeat.eq(self.word[16:16 + _REPEAT_BITS]),
            entry.token.eq(self.word[31]),
            fifo.w_data.eq(entry),
            fifo.w_en.eq(self.push),
            self.o.valid.eq(fifo.r_rdy),
            self.o.payload.eq(fifo.r_data),
            fifo.r_en.eq(self.o.ready),
            self.size.eq(fifo.level),
        ]
        with m.If(self.push & ~fifo.w_rdy):
            m.d.sync += self.overflow.eq(1)
        with m.Elif(self.clear_overflow):
            m.d.sync += self.overflow.eq(0)
        return m
