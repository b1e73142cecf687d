"""The fetch stage: it walks the running task and holds the BD the engine takes next.

It starts a task from the task queue, fetches each of its loads (chain, repeat) from
the BD table, and holds the fetched BD (``bd``, with its in-flight ``record``) from the
cycle after its fetch until the channel takes it (``consumed``). Which BD comes next is
decided then, from the BD's own ``use_next_bd``/``next_bd`` and the pass count.

For speed, the address goes to the table before the channel says whether it takes
the held BD (only one BD can follow it), the pass count's compare is kept in a
register, and the table registers the words it reads, so no RAM output and no late
decision share a cycle's path to the next address.
"""

from __future__ import annotations

from amaranth.hdl import Cat, Module, Mux, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from ...model.bd.fields import BD_COUNT, FIELD_INDEX
from ..bd_table import bd_full_layout, fetch_signature
from ..task_queue import task_layout
from .record import record_layout

__all__ = ["FetchStage"]

_PADDING = ("d0_zero_before", "d0_zero_after", "d1_zero_before", "d1_zero_after",
            "d2_zero_before", "d2_zero_after")


class FetchStage(wiring.Component):
    """The fetch stage of one channel.

    Parameters
    ----------
    kind : {"tile", "memtile", "shim"}
    refuses_padding : bool
        A BD with zero padding is ``bad`` (S2MM: a stream cannot be padded into memory).

    Attributes
    ----------
    task : In(stream.Signature(task_layout()))
        The task queue's oldest task; taken when the stage starts it.
    fetch : Out(fetch_signature(kind))
        The BD table's fetch port; ``grant`` says the fetch is served this cycle (tied
        high when the channel owns its table).
    pause : In(1)
        While high no new BD is fetched.
    stop : In(1)
        The channel has an error: no new task starts.
    consumed : In(1)
        The held BD moves on this cycle (the engine takes it, or it completes at length 0).
    valid : Out(1)
        A BD is held.
    bd : Out(bd_full_layout(kind))
    record : Out(record_layout(kind))
        The held BD, and its record for the BDs in flight.
    bad : Out(1)
        The held BD is not valid (``valid_bd`` 0, or padding where refused).
    waiting : Out(1)
        The next load of the running task waits for the fetch port.
    current_bd : Out(range(BD_COUNT[kind]))
        The BD fetched last.
    """

    def __init__(self, kind: str, *, refuses_padding: bool) -> None:
        self.kind, self.refuses_padding = kind, refuses_padding
        super().__init__({
            "task": In(stream.Signature(task_layout())),
            "fetch": Out(fetch_signature(kind)),
            "pause": In(1), "stop": In(1), "consumed": In(1),
            "valid": Out(1), "bd": Out(bd_full_layout(kind)), "record": Out(record_layout(kind)),
            "bad": Out(1), "waiting": Out(1), "current_bd": Out(range(BD_COUNT[kind])),
        })

    def elaborate(self, platform: object) -> Module:
        m = Module()
        bd, task = self.bd, self.task
        held = Signal(bd_full_layout(self.kind))   # the fetched BD, from the cycle after
        just = Signal()              # the BD was fetched last cycle: it is on fetch.bd
        m.d.comb += bd.eq(Mux(just, self.fetch.bd, held))
        with m.If(just):
            m.d.sync += held.eq(self.fetch.bd)
        start_bd = Signal(6)
        repeat = Signal(8)           # stored minus one, as the queue holds it
        passes = Signal(8)
        token = Signal()
        more = Signal()              # the held BD is not its task's last load
        passes_left = Signal()       # passes < repeat, kept in a register: no compare late
        m.d.comb += more.eq(bd.use_next_bd | passes_left)
        self._check(m)
        self._record(m, more, token)

        # The next load of the running task is decided when the held BD moves on; it
        # waits in ``walk`` while the table's fetch port serves other channels.
        count = BD_COUNT[self.kind]
        walk, walk_id = self.waiting, Signal(range(count))
        walking, walking_id = Signal(), Signal(range(count))
        next_load = Signal(range(count))   # the held BD's next load, if more
        m.d.comb += next_load.eq(Mux(bd.use_next_bd, bd.next_bd, start_bd))
        with m.If(self.consumed & more):
            m.d.comb += [walking.eq(1), walking_id.eq(next_load)]
            with m.If(~bd.use_next_bd):
                m.d.sync += [passes.eq(passes + 1), passes_left.eq(passes + 1 < repeat)]
        with m.Else():
            m.d.comb += [walking.eq(walk), walking_id.eq(walk_id)]
        request, from_queue = Signal(), Signal()
        with m.If((~self.valid | self.consumed) & ~self.pause):
            with m.If(walking):
                m.d.comb += request.eq(1)
            with m.Elif(task.valid & ~self.stop):
                m.d.comb += [request.eq(1), from_queue.eq(1)]
        fetch, free = Signal(), self.fetch.grant
        m.d.comb += [fetch.eq(request & free), task.ready.eq(from_queue & free)]
        with m.If(from_queue & free):
            m.d.sync += [start_bd.eq(task.payload.start_bd), repeat.eq(task.payload.repeat),
                         token.eq(task.payload.token), passes.eq(0),
                         passes_left.eq(task.payload.repeat != 0)]
        m.d.sync += [walk.eq(walking & ~fetch), walk_id.eq(walking_id)]
        with m.If(self.consumed | fetch):
            m.d.sync += self.valid.eq(fetch)
        # The fetch address does not wait for ``consumed``, the channel's answer, late in
        # the cycle: with a BD held, the only fetch that can follow it is of its next
        # load, or of the next task when it is its task's last (``walk`` is low then);
        # without, of the waiting load or of the queue's task. Where no fetch happens
        # the address is read and not used.
        address = Signal(range(count))
        m.d.comb += address.eq(Mux(self.valid, Mux(more, next_load, task.payload.start_bd),
                                   Mux(walk, walk_id, task.payload.start_bd)))
        m.d.comb += [self.fetch.en.eq(request), self.fetch.id.eq(address)]
        with m.If(fetch):
            m.d.sync += self.current_bd.eq(address)
        m.d.sync += just.eq(fetch)
        return m

    def _check(self, m: Module) -> None:
        """``bad``: the held BD is not valid, or padded where padding is refused."""
        bd = self.bd
        refused = 0
        if self.refuses_padding:
            padded = Cat(*(getattr(bd, p) != 0 for p in _PADDING if p in FIELD_INDEX[self.kind]))
            refused = padded.any()
        m.d.comb += self.bad.eq(self.valid & (~bd.valid_bd | refused))

    def _record(self, m: Module, more: Signal, token: Signal) -> None:
        """The held BD's record; ``rel_enable`` is decided here, once, so the lock
        requester reads one bit, not a value compared late in the cycle."""
        bd, record = self.bd, self.record
        m.d.comb += [
            record.acq_enable.eq(bd.lock_acq_enable), record.acq_id.eq(bd.lock_acq_id),
            record.acq_value.eq(bd.lock_acq_value), record.rel_id.eq(bd.lock_rel_id),
            record.rel_enable.eq(bd.lock_rel_value != 0),
            record.rel_value.eq(bd.lock_rel_value), record.packet.eq(bd.enable_packet),
            record.packet_id.eq(bd.packet_id), record.packet_type.eq(bd.packet_type),
            record.tlast_suppress.eq(bd.tlast_suppress),
            record.length.eq(bd.buffer_length), record.ends_task.eq(~more),
            record.token.eq(token),
        ]
