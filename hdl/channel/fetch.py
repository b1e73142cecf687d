"""The fetch stage: it walks the running task and holds the BDs the engine takes next.

It starts a task from the task queue and fetches each of its loads (chain, repeat) from
the BD table. A fetch in cycle ``t`` shows the BD in ``t + BD_FETCH_LATENCY``, where
the walk decides the next load from its ``use_next_bd`` and ``next_bd``
(``FETCH_INTERVAL``: no fetch in between) and the BD is written into the stage's
entries; the stage holds up to ``FETCH_DEPTH`` BDs, fetched and not yet arrived
included, and offers them in order (``bd``, with its record) from its entries, the
first from ``t + BD_OFFER_LATENCY``.

Out of order (``out_of_order`` high as an S2MM task starts), the task's repeat count is
its number of packets and no BD is fetched at its start: each packet's header, taken off
the stream by the packet stage while ``wants_header`` (and the stream stage is empty),
names the BD to fetch (``header``, ``header_bd``), written into a register and fetched
from the next cycle (``OUT_OF_ORDER_FETCH_LATENCY``); a BD ID that is not the channel's
pulses ``unavailable``. The chain is not followed; the task ends with its last packet's BD.

A BD error holds the BD at the stage's head (``bad``, never offered to the engine): a BD
that is not valid, or (``lock``) one that names a lock the DMA cannot reach (memory
tile: IDs 192-255, or a neighbour's window while ``absent_locks`` says that neighbour is
absent: :func:`unreachable`). On the memory tile a queued task whose start BD is not the
channel's (``channel_bds``) leaves the queue where the stage would start it, with no
fetch, and pulses ``unavailable`` (the model's ``Channel._start_fault``); a chain to a
BD that is not the channel's ends the walk the same way where that BD would be fetched
(``Channel._chain_fault``).

For speed, whether to fetch is decided from registers alone (what the stage holds at
the start of the cycle), never from the engine's answer in the same cycle; the next
load's address comes from the table's output registers through one multiplexer; the
offered BD comes from the stage's own entries only, so no multiplexer of the whole BD
stands between the table (shared by a DMA's channels) and the engine.
"""

from __future__ import annotations

from amaranth.hdl import Cat, Const, Module, Mux, Signal, Value
from amaranth.lib import data, stream, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from ...model.arch.kinds import DMA_KINDS
from ...model.bd.fields import BD_COUNT, FIELD_INDEX
from ...model.cycle.contract import (
    BD_FETCH_LATENCY,
    BD_OFFER_LATENCY,
    FETCH_DEPTH,
    FETCH_INTERVAL,
    OUT_OF_ORDER_FETCH_LATENCY,
)
from ..bd_table import bd_full_layout, fetch_signature, names_one_of
from ..task_queue import task_layout
from .record import record_layout

__all__ = ["FetchStage", "unreachable"]

if (BD_FETCH_LATENCY < 2 or FETCH_INTERVAL != BD_FETCH_LATENCY
        or BD_OFFER_LATENCY != BD_FETCH_LATENCY + 1 or OUT_OF_ORDER_FETCH_LATENCY != 1):
    raise AssertionError("the fetch stage tracks one fetch at a time from t + 1 to its BD "
                         "(t + BD_FETCH_LATENCY), where the walk goes on, and offers it from "
                         "its entries a cycle later")

_PADDING = ("d0_zero_before", "d0_zero_after", "d1_zero_before", "d1_zero_after",
            "d2_zero_before", "d2_zero_after")


def unreachable(window: Value, absent: Value) -> Value:
    """A memory tile's window number (``0`` west, ``1`` own, ``2`` east, ``3`` past the
    east window: the top two bits of a lock ID or a word address) names nothing the DMA
    reaches: past the east window, or a neighbour ``absent`` flags (bit 0 west, bit 1
    east)."""
    return (window == 3) | (window == 0) & absent[0] | (window == 2) & absent[1]


def _held_layout(kind: str) -> data.StructLayout:
    """A BD the stage holds, with what the walk decided of it and what the channel
    decides with (worked out as it arrives, so the engine's ``valid`` is a few gates
    from registers, not a compare of its fields)."""
    return data.StructLayout({"bd": bd_full_layout(kind), "ends_task": 1, "token": 1,
                              "bad": 1, "lock": 1, "empty": 1, "bd_id": range(BD_COUNT[kind]),
                              "ooo": 1})


def _marks_layout(kind: str) -> data.StructLayout:
    """The offered BD's bits that decide at once (whether the engine takes it, the ring's
    stage flags): its flags and the record's ``packet``, ``single`` and ``compress``."""
    compress = {"compress": 1} if "compress" in record_layout(kind).members else {}
    return data.StructLayout({"bad": 1, "lock": 1, "empty": 1, "packet": 1, "single": 1,
                              **compress})


def _after(pointer: Signal) -> Value:
    """The entry after ``pointer`` in the stage's ring of ``FETCH_DEPTH``."""
    return Mux(pointer == FETCH_DEPTH - 1, 0, pointer + 1)


class _OutOfOrder:
    """The out-of-order walk's state the in-order walk reads (:meth:`FetchStage._out_of_order`
    drives it; without an out-of-order walk it stays 0)."""

    def __init__(self, kind: str) -> None:
        self.running = Signal()      # an out-of-order task runs
        self.pending = Signal()      # a header's BD ID waits to be fetched
        self.pending_id = Signal(range(BD_COUNT[kind]))
        self.fetched = Signal()      # the fetch last made was out of order (read as it arrives)
        self.last = Signal()         # ... and its task's last packet
        self.start = Signal()        # an out-of-order task starts this cycle
        self.walking, self.flying = Signal(), Signal()   # the in-order walk's, read here


class FetchStage(wiring.Component):
    """The fetch stage of one channel.

    Parameters
    ----------
    kind : {"tile", "memtile", "shim"}
    refuses_padding : bool
        A BD with zero padding is ``bad`` (S2MM: a stream cannot be padded into memory).
    out_of_order_bds : range, optional
        S2MM: the BDs an out-of-order task may name (the channel's); None builds no
        out-of-order walk.
    channel_bds : range, optional
        The BDs a task may start at (the channel's half of a memory tile's table); None:
        every BD the start BD field can name.

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
        The offered BD has a BD error: it is not valid (``valid_bd`` 0, or padding where
        refused), or it names a lock the DMA has not.
    lock : Out(1)
        ``bad`` is a lock error (a BD that is not valid is that error, whatever it names).
    absent_locks : In(2)
        Memory tile: the west (bit 0) and east (bit 1) neighbours' locks are absent.
    empty : Out(1)
        The offered BD has length 0.
    waiting : Out(1)
        A load of the running task is decided or on its way from the table.
    current_bd : Out(range(BD_COUNT[kind]))
        The BD fetched last.
    out_of_order : In(1)
        The control register's ``enable_out_of_order``, read as a task starts.
    wants_header, header, header_bd, unavailable
        Out of order (module text): the next packet's header may be taken (Out); it is
        taken this cycle (In), with its BD ID (In); that BD is not the channel's (Out),
        or a task's start BD is not (``channel_bds``).
    """

    def __init__(self, kind: str, *, refuses_padding: bool,
                 out_of_order_bds: range | None = None,
                 channel_bds: range | None = None) -> None:
        self.kind, self.refuses_padding = kind, refuses_padding
        self.out_of_order_bds, self.channel_bds = out_of_order_bds, channel_bds
        ports = {} if len(DMA_KINDS[kind].windows) == 1 else {"absent_locks": In(2)}
        super().__init__({
            **ports,
            "task": In(stream.Signature(task_layout())),
            "fetch": Out(fetch_signature(kind)),
            "pause": In(1), "stop": In(1), "consumed": In(1),
            "valid": Out(1), "bd": Out(bd_full_layout(kind)), "record": Out(record_layout(kind)),
            "bad": Out(1), "lock": Out(1), "empty": Out(1), "waiting": Out(1),
            "current_bd": Out(range(BD_COUNT[kind])),
            "out_of_order": In(1), "wants_header": Out(1), "header": In(1),
            "header_bd": In(FIELD_INDEX[kind]["out_of_order_bd_id"].value_width),
            "unavailable": Out(1),
        })

    def elaborate(self, platform: object) -> Module:
        m = Module()
        # A fetch on its way (t + 1 ...), then its BD arriving (t + BD_FETCH_LATENCY); one
        # at a time (FETCH_INTERVAL), so ``flying`` is a bit.
        flying, arriving = Signal(), Signal()
        on_way = [Signal(name=f"on_way{n + 1}") for n in range(BD_FETCH_LATENCY - 1)]
        held = Signal(range(FETCH_DEPTH + 1))     # BDs in the stage's own entries
        arrived = Signal(_held_layout(self.kind))
        # (from the port, not from arrived.bd: a signal's bits made from its own other
        # bits read as a combinational loop to Verilator)
        bd = self.fetch.bd
        refused, lock = self._refused(bd), self._lock_fault(bd)
        m.d.comb += [arrived.bd.eq(bd), arrived.bad.eq(refused | lock),
                     arrived.lock.eq(~refused & lock),
                     arrived.empty.eq(bd.buffer_length == 0),
                     # the BD fetched last (no fetch starts while one is on its way)
                     arrived.bd_id.eq(self.current_bd)]
        ooo = _OutOfOrder(self.kind)
        fetch, pending = self._walk(m, flying, arriving, arrived, ooo,
                                    room=held + flying + arriving < FETCH_DEPTH)
        if self.out_of_order_bds is not None:
            self._out_of_order(m, ooo, fetch, idle=(held == 0) & ~flying & ~arriving)
        m.d.sync += [a.eq(b) for a, b in zip([*on_way, arriving], [fetch, *on_way], strict=True)]
        m.d.comb += flying.eq(Cat(*on_way).any())
        self._hold(m, held, arriving, arrived)
        m.d.comb += self.waiting.eq(pending | flying | arriving | ooo.running)
        return m

    def _out_of_order(self, m: Module, ooo: _OutOfOrder, fetch: Value, idle: Value) -> None:
        """The out-of-order walk's registers (module text): a task starts with no fetch,
        each header's BD ID is fetched from the next cycle, the last packet's fetch ends
        the task. ``idle``: the stage holds nothing and has no fetch on its way."""
        bds = self.out_of_order_bds
        task = self.task
        left = Signal(9)             # headers still to come
        # ``left != 0`` kept as a register beside it: ``wants_header`` reaches the stream
        # side's choices (the packet stage, the engine's ready), so no compare there.
        left_some = Signal()
        m.d.comb += [
            ooo.start.eq(task.valid & self.out_of_order & ~self.stop & ~self.pause
                         & ~ooo.running & ~ooo.walking & ~ooo.flying),
            self.wants_header.eq(ooo.running & ~ooo.pending & left_some & idle),
        ]
        with m.If(ooo.start):
            m.d.sync += [ooo.running.eq(1), left.eq(task.payload.repeat + 1), left_some.eq(1)]
        with m.If(self.header):
            m.d.sync += [left.eq(left - 1), left_some.eq(left != 1)]
            with m.If(names_one_of(self.header_bd, bds)):
                m.d.sync += [ooo.pending.eq(1), ooo.pending_id.eq(self.header_bd)]
            with m.Else():
                m.d.comb += self.unavailable.eq(1)
        with m.If(fetch):
            m.d.sync += [ooo.fetched.eq(ooo.pending), ooo.last.eq(left == 0)]
            with m.If(ooo.pending):
                m.d.sync += ooo.pending.eq(0)
                with m.If(left == 0):
                    m.d.sync += ooo.running.eq(0)
        # An error ends the task (the channel waits for a reset), from the header's cycle.
        with m.If(self.stop | self.unavailable):
            m.d.sync += ooo.running.eq(0)

    def _walk(self, m: Module, flying: Signal, arriving: Signal, arrived: data.View,
              ooo: _OutOfOrder, room: Value) -> tuple[Signal, Signal]:
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
        # The arriving BD (fetched BD_FETCH_LATENCY cycles ago) decides its task's next load.
        more = Signal()
        next_id = Signal(range(count))
        m.d.comb += [more.eq(chain.use_next_bd | passes_left),
                     next_id.eq(Mux(chain.use_next_bd, chain.next_bd, start_bd))]
        m.d.comb += [arrived.ends_task.eq(Mux(ooo.fetched, ooo.last, ~more)),
                     arrived.token.eq(token), arrived.ooo.eq(ooo.fetched)]
        in_order = arriving & ~ooo.fetched     # out of order, the chain is not followed
        walking = Mux(in_order, more, pending)
        walking_id = Mux(in_order, next_id, pending_id)
        m.d.comb += [ooo.walking.eq(walking), ooo.flying.eq(flying)]
        with m.If(in_order & more & ~chain.use_next_bd):
            m.d.sync += [passes.eq(passes + 1), passes_left.eq(passes + 1 < repeat)]
        request, from_queue, drop, cut = Signal(), Signal(), Signal(), Signal()
        foreign = Const(0)           # the queued task's start BD is not the channel's
        leaves = self._leaves(m, chain, in_order, pending)
        if self.channel_bds is not None:
            foreign = ~names_one_of(task.payload.start_bd, self.channel_bds)
        # While a fetch is on its way, what follows it is not known yet.
        with m.If(room & ~self.pause & ~flying):
            with m.If(walking | ooo.pending):
                m.d.comb += [request.eq(~leaves), cut.eq(leaves)]
            with m.Elif(task.valid & ~self.stop & ~self.out_of_order & ~ooo.running):
                with m.If(foreign):
                    m.d.comb += drop.eq(1)
                with m.Else():
                    m.d.comb += [request.eq(1), from_queue.eq(1)]
        fetch, free = Signal(), self.fetch.grant
        m.d.comb += [fetch.eq(request & free),
                     task.ready.eq(from_queue & free | ooo.start | drop)]
        with m.If(drop | cut):
            m.d.comb += self.unavailable.eq(1)
        with m.If(from_queue & free):
            m.d.sync += [start_bd.eq(task.payload.start_bd), repeat.eq(task.payload.repeat),
                         passes.eq(0), passes_left.eq(task.payload.repeat != 0)]
        with m.If(from_queue & free | ooo.start):
            m.d.sync += token.eq(task.payload.token)
        address = Signal(range(count))
        m.d.comb += address.eq(Mux(ooo.pending, ooo.pending_id,
                                   Mux(walking, walking_id, task.payload.start_bd)))
        m.d.sync += [pending.eq(walking & ~fetch & ~cut), pending_id.eq(walking_id)]
        m.d.comb += [self.fetch.en.eq(request), self.fetch.id.eq(address)]
        with m.If(fetch):
            m.d.sync += self.current_bd.eq(address)
        return fetch, pending

    def _leaves(self, m: Module, chain: data.View, in_order: Value, pending: Signal) -> Value:
        """The walk's next load is a BD that is not the channel's: the arriving BD chains
        out of its half (the table's registered ``chain_leaves``), or the load that waits
        for room was such a one. Where it would be fetched the walk ends there with no
        fetch (``cut``) and pulses ``unavailable``, as a foreign start BD does; the BD
        that named it ends no task. Always 0 where the channel may run every BD."""
        if self.channel_bds is None:
            return Const(0)
        leaves, pending_leaves = Signal(), Signal()
        m.d.comb += leaves.eq(Mux(in_order, chain.use_next_bd & self.fetch.chain_leaves,
                                  pending & pending_leaves))
        m.d.sync += pending_leaves.eq(leaves)
        return leaves

    def _hold(self, m: Module, held: Signal, arriving: Signal, arrived: data.View) -> None:
        """The BDs the stage holds, in order; the oldest is offered (``bd``, ``record``).

        A ring of ``FETCH_DEPTH`` entries: the arriving BD is written at ``tail`` and
        offered from the next cycle, so the engine's answer (``consumed``) moves only the
        head pointer and the count. The ring is a memory with an asynchronous read, so it
        is LUT RAM where the part has it (ECP5: a few hundred bits in a tenth of the LUTs
        and none of the flip-flops a register ring takes, and its read is one LUT deep).
        The offered BD's words and most of its record come from that read; the few bits
        that decide at once (:func:`_marks_layout`) are a register of their own
        (:meth:`_head_marks`), so no path runs from the ring's pointer through the LUT
        RAM into the engine's take or the in-flight ring's stage flags.
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
            m.d.sync += head_at.eq(_after(head_at))
        with m.If(arriving):
            m.d.sync += tail.eq(_after(tail))
        m.d.sync += held.eq(held - leaves + arriving)
        marks = self._head_marks(m, held, arriving, arrived, leaves, tail)
        bd, record = self.bd, self.record
        m.d.comb += [
            bd.eq(head.bd), self.bad.eq(self.valid & marks.bad), self.lock.eq(marks.lock),
            self.empty.eq(marks.empty),
            record.acq_enable.eq(bd.lock_acq_enable), record.acq_id.eq(bd.lock_acq_id),
            record.acq_value.eq(bd.lock_acq_value), record.rel_id.eq(bd.lock_rel_id),
            record.rel_enable.eq(bd.lock_rel_value != 0),
            record.rel_value.eq(bd.lock_rel_value),
            record.packet.eq(marks.packet), record.single.eq(marks.single),
            record.packet_id.eq(bd.packet_id), record.packet_type.eq(bd.packet_type),
            record.out_of_order_bd_id.eq(bd.out_of_order_bd_id),
            record.tlast_suppress.eq(bd.tlast_suppress),
            record.length.eq(bd.buffer_length), record.ends_task.eq(head.ends_task),
            record.token.eq(head.token), record.bd_id.eq(head.bd_id),
        ]
        if "compress" in record.shape().members:
            m.d.comb += record.compress.eq(marks.compress)

    def _head_marks(self, m: Module, held: Signal, arriving: Signal, arrived: data.View,
                    leaves: Signal, tail: Signal) -> data.View:
        """The offered BD's marks (:func:`_marks_layout`) as a register: the arriving
        BD's when the stage is (or becomes) empty of others, else the entry after the
        head, read from a small memory of marks at a pointer of its own (``after_at``,
        one ahead of the head) when the head moves on."""
        layout = _marks_layout(self.kind)
        bd = arrived.bd
        arriving_marks = Signal(layout)
        m.d.comb += [arriving_marks.bad.eq(arrived.bad), arriving_marks.lock.eq(arrived.lock),
                     arriving_marks.empty.eq(arrived.empty),
                     # out of order, the packet's header was taken before its BD was fetched
                     arriving_marks.packet.eq(bd.enable_packet & ~arrived.ooo),
                     arriving_marks.single.eq(bd.buffer_length == 1)]
        if "compress" in layout.members:
            m.d.comb += arriving_marks.compress.eq(bd.enable_compression)
        m.submodules.marks = memory = Memory(shape=layout, depth=FETCH_DEPTH, init=[])
        write, read = memory.write_port(), memory.read_port(domain="comb")
        after_at = Signal(range(FETCH_DEPTH), init=1 % FETCH_DEPTH)
        m.d.comb += [read.addr.eq(after_at), write.addr.eq(tail),
                     write.data.eq(arriving_marks), write.en.eq(arriving)]
        with m.If(leaves):
            m.d.sync += after_at.eq(_after(after_at))
        marks = Signal(layout)
        # The next head: the arriving BD when no other is held after this cycle's move,
        # the entry after the head when the head moves on to one already held.
        with m.If(arriving & ((held == 0) | leaves & (held == 1))):
            m.d.sync += marks.eq(arriving_marks)
        with m.Elif(leaves):
            m.d.sync += marks.eq(read.data)
        return marks

    def _refused(self, bd: data.View) -> Value:
        """The BD is not valid, or padded where padding is refused."""
        refused = 0
        if self.refuses_padding:
            padded = Cat(*(getattr(bd, p) != 0 for p in _PADDING if p in FIELD_INDEX[self.kind]))
            refused = padded.any()
        return ~bd.valid_bd | refused

    def _lock_fault(self, bd: data.View) -> Value:
        """The BD acquires (``lock_acq_enable``) or releases (``lock_rel_value`` not 0) a
        lock the DMA cannot reach (:func:`unreachable`); only on the memory tile, whose
        8-bit IDs name 64 locks a window."""
        dma = DMA_KINDS[self.kind]
        if len(dma.windows) == 1:
            return Const(0)       # 16 locks, 4-bit IDs: every ID is a lock
        shift = (dma.locks - 1).bit_length()
        return ((bd.lock_acq_enable & unreachable(bd.lock_acq_id[shift:], self.absent_locks))
                | ((bd.lock_rel_value != 0)
                   & unreachable(bd.lock_rel_id[shift:], self.absent_locks)))
