"""The fetch stage: it walks the running task and holds the BDs the engine takes next.

It starts a task from the task queue and fetches each of its loads (chain, repeat) from
the BD table. A fetch in cycle ``t`` shows the BD in ``t + BD_FETCH_LATENCY``, where
the walk decides the next load from its ``use_next_bd`` and ``next_bd``
(``FETCH_INTERVAL``: no fetch in between) and the BD is written into the stage's
entries; the stage holds up to ``FETCH_DEPTH`` BDs, fetched and not yet arrived
included, and offers them in order (``bd``, with its record) from its entries, the
first from ``t + BD_OFFER_LATENCY``.

For speed, whether to fetch is decided from registers alone (what the stage holds at
the start of the cycle), never from the engine's answer in the same cycle; the next
load's address comes from the table's output registers through one multiplexer; the
offered BD comes from the stage's own entries only, so no multiplexer of the whole BD
stands between the table (shared by a DMA's channels) and the engine.
"""

from __future__ import annotations

from amaranth.hdl import Cat, Module, Mux, Signal, Value
from amaranth.lib import data, stream, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from ...model.bd.fields import BD_COUNT, FIELD_INDEX
from ...model.cycle.contract import (
    BD_FETCH_LATENCY,
    BD_OFFER_LATENCY,
    FETCH_DEPTH,
    FETCH_INTERVAL,
)
from ..bd_table import bd_full_layout, fetch_signature
from ..task_queue import task_layout
from .record import record_layout

__all__ = ["FetchStage"]

if (BD_FETCH_LATENCY != 2 or FETCH_INTERVAL != BD_FETCH_LATENCY
        or BD_OFFER_LATENCY != BD_FETCH_LATENCY + 1):
    raise AssertionError("the fetch stage tracks a fetch (t + 1) and its BD (t + 2), where "
                         "the walk goes on, and offers it from its entries (t + 3)")

_PADDING = ("d0_zero_before", "d0_zero_after", "d1_zero_before", "d1_zero_after",
            "d2_zero_before", "d2_zero_after")


def _held_layout(kind: str) -> data.StructLayout:
    """A BD the stage holds, with what the walk decided of it and what the channel
    decides with (worked out as it arrives, so the engine's ``valid`` is a few gates
    from the stage's entries, not a compare of their fields)."""
    return data.StructLayout({"bd": bd_full_layout(kind), "ends_task": 1, "token": 1,
                              "bad": 1, "empty": 1, "bd_id": range(BD_COUNT[kind])})


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
        The offered BD moves on this cycle (the engine takes it, or it completes at
        length 0).
    valid : Out(1)
        A BD is offered.
    bd : Out(bd_full_layout(kind))
    record : Out(record_layout(kind))
        The offered BD, and its record for the BDs in flight.
    bad : Out(1)
        The offered BD is not valid (``valid_bd`` 0, or padding where refused).
    empty : Out(1)
        The offered BD has length 0.
    waiting : Out(1)
        A load of the running task is decided or on its way from the table.
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
            "bad": Out(1), "empty": Out(1), "waiting": Out(1),
            "current_bd": Out(range(BD_COUNT[kind])),
        })

    def elaborate(self, platform: object) -> Module:
        m = Module()
        # Fetches of the last two cycles: on their way (t + 1), then the BD (t + 2).
        flying, arriving = Signal(), Signal()
        held = Signal(range(FETCH_DEPTH + 1))     # BDs in the stage's own entries
        arrived = Signal(_held_layout(self.kind))
        # (from the port, not from arrived.bd: a signal's bits made from its own other
        # bits read as a combinational loop to Verilator)
        bd = self.fetch.bd
        m.d.comb += [arrived.bd.eq(bd), arrived.bad.eq(self._refused(bd)),
                     arrived.empty.eq(bd.buffer_length == 0),
                     # the BD fetched last (no fetch starts while one is on its way)
                     arrived.bd_id.eq(self.current_bd)]
        fetch, pending = self._walk(m, flying, arriving, arrived,
                                    room=held + flying + arriving < FETCH_DEPTH)
        m.d.sync += [flying.eq(fetch), arriving.eq(flying)]
        self._hold(m, held, arriving, arrived)
        m.d.comb += self.waiting.eq(pending | flying | arriving)
        return m

    def _walk(self, m: Module, flying: Signal, arriving: Signal, arrived: data.View,
              room: Value) -> tuple[Signal, Signal]:
        """The task's walk: which BD to fetch next, and when.

        Returns the fetch signal (a fetch this cycle) and ``pending`` (the running task's
        next load is decided and waits for room or the fetch port). ``arrived.ends_task``
        and ``arrived.token`` are set for the BD arriving now.
        """
        count = BD_COUNT[self.kind]
        task, chain = self.task, self.fetch.bd
        start_bd = Signal(range(count))
        repeat = Signal(8)           # stored minus one, as the queue holds it
        passes = Signal(8)
        token = Signal()
        passes_left = Signal()       # passes < repeat, kept in a register: no compare late
        pending = Signal()
        pending_id = Signal(range(count))
        # The arriving BD (fetched two cycles ago) decides its task's next load.
        more = Signal()
        next_id = Signal(range(count))
        m.d.comb += [more.eq(chain.use_next_bd | passes_left),
                     next_id.eq(Mux(chain.use_next_bd, chain.next_bd, start_bd))]
        m.d.comb += [arrived.ends_task.eq(~more), arrived.token.eq(token)]
        walking = Mux(arriving, more, pending)
        walking_id = Mux(arriving, next_id, pending_id)
        with m.If(arriving & more & ~chain.use_next_bd):
            m.d.sync += [passes.eq(passes + 1), passes_left.eq(passes + 1 < repeat)]
        request, from_queue = Signal(), Signal()
        # While a fetch is on its way, what follows it is not known yet.
        with m.If(room & ~self.pause & ~flying):
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
        address = Signal(range(count))
        m.d.comb += address.eq(Mux(walking, walking_id, task.payload.start_bd))
        m.d.sync += [pending.eq(walking & ~fetch), pending_id.eq(walking_id)]
        m.d.comb += [self.fetch.en.eq(request), self.fetch.id.eq(address)]
        with m.If(fetch):
            m.d.sync += self.current_bd.eq(address)
        return fetch, pending

    def _hold(self, m: Module, held: Signal, arriving: Signal, arrived: data.View) -> None:
        """The BDs the stage holds, in order; the oldest is offered (``bd``, ``record``).

        A ring of ``FETCH_DEPTH`` entries: the arriving BD is written at ``tail`` and
        offered from the next cycle, so the engine's answer (``consumed``) moves only the
        head pointer and the count. The ring is a memory with an asynchronous read, so it
        is LUT RAM where the part has it (ECP5: a few hundred bits in a tenth of the LUTs
        and none of the flip-flops a register ring takes, and its read is one LUT deep).
        """
        layout = _held_layout(self.kind)
        m.submodules.entries = entries = Memory(shape=layout, depth=FETCH_DEPTH, init=[])
        write, read = entries.write_port(), entries.read_port(domain="comb")
        head_at, tail = Signal(range(FETCH_DEPTH)), Signal(range(FETCH_DEPTH))
        head = Signal(layout)
        m.d.comb += [read.addr.eq(head_at), head.eq(read.data),
                     self.valid.eq(held != 0),
                     write.addr.eq(tail), write.data.eq(arrived), write.en.eq(arriving)]
        leaves = Signal()            # the offered BD moves on (the head moves on)
        m.d.comb += leaves.eq(self.consumed & (held != 0))
        with m.If(leaves):
            m.d.sync += head_at.eq(Mux(head_at == FETCH_DEPTH - 1, 0, head_at + 1))
        with m.If(arriving):
            m.d.sync += tail.eq(Mux(tail == FETCH_DEPTH - 1, 0, tail + 1))
        m.d.sync += held.eq(held - leaves + arriving)
        bd, record = self.bd, self.record
        m.d.comb += [
            bd.eq(head.bd), self.bad.eq(self.valid & head.bad), self.empty.eq(head.empty),
            record.acq_enable.eq(bd.lock_acq_enable), record.acq_id.eq(bd.lock_acq_id),
            record.acq_value.eq(bd.lock_acq_value), record.rel_id.eq(bd.lock_rel_id),
            record.rel_enable.eq(bd.lock_rel_value != 0),
            record.rel_value.eq(bd.lock_rel_value), record.packet.eq(bd.enable_packet),
            record.packet_id.eq(bd.packet_id), record.packet_type.eq(bd.packet_type),
            record.tlast_suppress.eq(bd.tlast_suppress),
            record.length.eq(bd.buffer_length), record.ends_task.eq(head.ends_task),
            record.token.eq(head.token), record.bd_id.eq(head.bd_id),
        ]
        if "compress" in record.shape().members:
            m.d.comb += record.compress.eq(bd.enable_compression)

    def _refused(self, bd: data.View) -> Value:
        """The BD is not valid, or padded where padding is refused."""
        refused = 0
        if self.refuses_padding:
            padded = Cat(*(getattr(bd, p) != 0 for p in _PADDING if p in FIELD_INDEX[self.kind]))
            refused = padded.any()
        return ~bd.valid_bd | refused
