"""A whole DMA channel in RTL: task queue, BD table, fetch, engine, locks, packets, tokens.

The channel contract's three parts (``model/cycle/contract.py`` "Channel", the model
``model/system/channel.py``) in gateware:

* **Fetch.** The task queue (:mod:`.task_queue`) takes start-queue register writes;
  the fetch stage walks the running task (chain, repeat) and fetches each BD from the
  BD table (:mod:`.bd_table`), which writes ``iteration_current`` back; a BD fetched
  in cycle ``t`` is offered to the engine from ``t + 1``. Which BD comes next is
  decided when the fetched one moves on, from its own ``use_next_bd``/``next_bd`` and
  the pass count. For speed, the address goes to the table before the engine says
  whether it takes the held BD (only one BD can follow it), the pass count's compare
  is kept in a register, and the table registers the words it reads, so no RAM output
  and no late decision share a cycle's path to the next address.
* **Engine.** ``MM2SChannel`` / ``S2MMChannel`` (:mod:`.channel`): the address
  generator, the lock gate and the datapath. The gate's request goes to the acquire
  port when the BD acquires (else it is granted at once); a BD that releases passes
  only while the channel owes fewer than ``RELEASE_QUEUE_DEPTH`` releases.
* **In flight.** Each BD the engine takes gets a record (its lock, release, packet,
  TLAST and task-end fields) in a ring of ``RECORDS`` entries with three heads:
  the gate's (next grant), the running BDs' (next last beat: completion) and the
  stream stage's (headers, TLAST, S2MM word counts).
* **Completion.** MM2S in the cycle its last beat passes the gate, S2MM one cycle
  later (its last write): the lock release joins the channel's release queue and, at
  a task's end, ``token`` pulses if the task asked for one. The queue's head asks on
  the release port from the next cycle; the lock unit applies it at the end of the
  cycle it grants it.
* **Stream stage.** MM2S: a packet BD's header word (parity, packet ID and type from
  the BD, the tile's row and column) before its first word, once its lock is granted;
  TLAST is the BD's last word unless ``tlast_suppress``. S2MM: a packet BD's first
  word is its header, taken and checked (bad parity sets ``error``).
* **BDs of length 0** never enter the engine: when every BD before has completed,
  the fetch stage acquires its lock and completes it in the same cycle (its release
  queued as any other).

A BD with ``valid_bd = 0``, or an S2MM BD with padding, stops the channel and sets
``error`` (the model raises there).
"""

from __future__ import annotations

from amaranth.hdl import Array, Cat, Const, Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.fifo import SyncFIFO
from amaranth.lib.wiring import In, Out

from ..model.arch.registers import start_queue_address
from ..model.bd.fields import BD_COUNT, FIELD_INDEX
from ..model.bd.packet import HEADER_FIELDS, PARITY_BIT
from ..model.cycle.contract import (
    ADDRESS_BITS,
    DATA_BITS,
    RELEASE_QUEUE_DEPTH,
    address_generation_fields,
)
from .bd_table import REGISTER_ADDRESS_BITS, BDTable, bd_full_layout, fetch_signature
from .channel import MM2SChannel, S2MMChannel
from .layouts import check_kind, data_beat_layout
from .lock_unit import LOCK_VALUE_BITS, acquire_signature, release_signature
from .task_queue import TaskQueue

__all__ = ["RECORDS", "DMAChannel"]

RECORDS = 8
"""BDs a channel tracks between the engine taking them and their last word: more than
the address generator's slots and the datapath's words can hold at once."""

_PADDING = ("d0_zero_before", "d0_zero_after", "d1_zero_before", "d1_zero_after",
            "d2_zero_before", "d2_zero_after")


def _record_layout(kind: str) -> data.StructLayout:
    f = FIELD_INDEX[kind]
    return data.StructLayout({
        "acq_enable": 1, "acq_id": f["lock_acq_id"].value_width, "rel_enable": 1,
        "acq_value": LOCK_VALUE_BITS, "rel_id": f["lock_rel_id"].value_width,
        "rel_value": LOCK_VALUE_BITS, "packet": 1, "packet_id": 5, "packet_type": 3,
        "tlast_suppress": 1, "length": f["buffer_length"].value_width,
        "ends_task": 1, "token": 1,
    })


class DMAChannel(wiring.Component):
    """One MM2S or S2MM channel of a DMA, with its own BD table and lock ports.

    Parameters
    ----------
    kind : {"tile", "memtile"}
    direction : {"mm2s", "s2mm"}
    index : int
        The channel number (its start-queue address).
    column, row : int
        The tile's position, for MM2S packet headers.
    shared_table : bool
        Fetch BDs through the ``fetch`` port from the DMA's
        :class:`~.bd_table.SharedBDTable` (:class:`~.dma.DMA`) instead of owning a table.

    Attributes
    ----------
    reg_addr, reg_write, reg_wdata : In
        Register writes: BD words (:class:`~.bd_table.BDTable`; not with
        ``shared_table``) and this channel's start-queue register.
    fetch : Out(fetch_signature(kind))
        With ``shared_table`` only: the BD fetch port.
    acquire : Out(acquire_signature)
    release : Out(release_signature)
        To a :class:`~.lock_unit.LockUnit` port pair (``lock_id`` as the BD names it).
    o : Out(stream) (MM2S), i : In(stream) (S2MM)
        The data stream (``data``, ``last``).
    mem_addr, mem_en, mem_data / mem_addr, mem_data, mem_we :
        The memory port, as :class:`~.channel.MM2SChannel` / ``S2MMChannel``.
    pause : In(1)
        While high, the fetch stage takes no new BD (a program is loaded with it high).
    token : Out(1)
        A task that asked for a completion token ended this cycle.
    busy, error, queue_size, queue_overflow, current_bd : Out
        Channel status (``current_bd``: the BD fetched last).
    """

    def __init__(self, kind: str, direction: str, index: int, column: int = 0,
                 row: int = 0, *, shared_table: bool = False) -> None:
        self.kind = check_kind(kind)
        self.shared_table = shared_table
        self.direction, self.index, self.column, self.row = direction, index, column, row
        self.mm2s = direction == "mm2s"
        self.start_queue = start_queue_address(kind, direction, index)
        lock_ids = FIELD_INDEX[kind]["lock_acq_id"].maximum + 1
        self.lock_ids = lock_ids
        ports = {
            "reg_addr": In(REGISTER_ADDRESS_BITS), "reg_write": In(1), "reg_wdata": In(32),
            "acquire": Out(acquire_signature(lock_ids)),
            "release": Out(release_signature(lock_ids)),
            "pause": In(1), "token": Out(1), "busy": Out(1), "error": Out(1),
            "queue_size": Out(3), "queue_overflow": Out(1),
            "current_bd": Out(range(BD_COUNT[kind])),
            "mem_addr": Out(ADDRESS_BITS[kind]),
        }
        if shared_table:
            ports["fetch"] = Out(fetch_signature(kind))
        if self.mm2s:
            ports |= {"o": Out(stream.Signature(data_beat_layout())),
                      "mem_en": Out(1), "mem_data": In(DATA_BITS)}
        else:
            ports |= {"i": In(stream.Signature(data_beat_layout())),
                      "mem_we": Out(1), "mem_data": Out(DATA_BITS)}
        super().__init__(ports)

    def elaborate(self, platform: object) -> Module:
        m = Module()
        kind = self.kind
        m.submodules.queue = queue = TaskQueue()
        m.submodules.engine = engine = MM2SChannel(kind) if self.mm2s else S2MMChannel(kind)
        if self.shared_table:
            fetch_en, fetch_to, fetched_bd = self.fetch.en, self.fetch.id, self.fetch.bd
            port_free = self.fetch.grant
        else:
            m.submodules.table = table = BDTable(kind)
            m.d.comb += [table.reg_addr.eq(self.reg_addr), table.reg_write.eq(self.reg_write),
                         table.reg_wdata.eq(self.reg_wdata)]
            fetch_en, fetch_to, fetched_bd = table.fetch_en, table.fetch_id, table.bd
            port_free = Const(1)
        m.d.comb += [
            queue.push.eq(self.reg_write & (self.reg_addr == self.start_queue)),
            queue.word.eq(self.reg_wdata),
            self.queue_size.eq(queue.size), self.queue_overflow.eq(queue.overflow),
        ]
        error = Signal()
        m.d.comb += self.error.eq(error)

        # --- fetch stage ---
        full = bd_full_layout(kind)
        held = Signal(full)          # the fetched BD, from the cycle after its fetch
        just = Signal()              # the BD was fetched last cycle: it is on table.bd
        f_valid = Signal()
        bd = Signal(full)
        m.d.comb += bd.eq(Mux(just, fetched_bd, held))
        with m.If(just):
            m.d.sync += held.eq(fetched_bd)
        start_bd = Signal(6)
        repeat = Signal(8)           # stored minus one, as the queue holds it
        passes = Signal(8)
        token = Signal()
        more = Signal()              # the fetched BD is not its task's last load
        passes_left = Signal()       # passes < repeat, kept in a register: no compare late
        m.d.comb += more.eq(bd.use_next_bd | passes_left)
        bad = Signal()
        padded = Cat(*(getattr(bd, p) != 0 for p in _PADDING if p in FIELD_INDEX[kind]))
        m.d.comb += bad.eq(f_valid & (~bd.valid_bd | (0 if self.mm2s else padded.any())))
        with m.If(bad):
            m.d.sync += error.eq(1)

        # --- records of the BDs in flight ---
        layout = _record_layout(kind)
        ring = Array(Signal(layout, name=f"record{k}") for k in range(RECORDS))
        bits = (RECORDS - 1).bit_length()
        wr, gate_p, run_p, stage_p = (Signal(bits, name=n) for n in
                                      ("wr", "gate_p", "run_p", "stage_p"))
        gate_head, run_head, stage_head = ring[gate_p], ring[run_p], ring[stage_p]
        pending = Signal()           # S2MM: a BD's last write is this cycle: complete it
        pending_record = Signal(layout)
        drained = (gate_p == wr) & (run_p == wr) & ~pending

        # The engine takes the fetched BD.
        length = bd.buffer_length
        names = [f.name for f in address_generation_fields(kind)]
        m.d.comb += [
            engine.bd.valid.eq(f_valid & (length != 0) & ~error & ~bad),
            *(getattr(engine.bd.payload, n).eq(getattr(bd, n)) for n in names),
        ]
        accepted = engine.bd.valid & engine.bd.ready
        record = Signal(layout)
        bd_releases = Signal()       # the held BD releases a lock (its record keeps this)
        m.d.comb += bd_releases.eq(bd.lock_rel_value != 0)
        m.d.comb += [
            record.acq_enable.eq(bd.lock_acq_enable), record.acq_id.eq(bd.lock_acq_id),
            record.acq_value.eq(bd.lock_acq_value), record.rel_id.eq(bd.lock_rel_id),
            record.rel_enable.eq(bd_releases),
            record.rel_value.eq(bd.lock_rel_value), record.packet.eq(bd.enable_packet),
            record.packet_id.eq(bd.packet_id), record.packet_type.eq(bd.packet_type),
            record.tlast_suppress.eq(bd.tlast_suppress if self.mm2s else 0),
            record.length.eq(length), record.ends_task.eq(~more), record.token.eq(token),
        ]
        with m.If(accepted):
            m.d.sync += [ring[wr].eq(record), wr.eq(wr + 1)]

        # The lock gate asks; a BD without an acquire is granted at once. A BD that
        # releases waits (and does not ask) while the channel owes the most releases.
        request = engine.lock_request
        zero_ready = f_valid & (length == 0) & drained & ~error & ~bad
        acq_enable = Mux(request, gate_head.acq_enable, bd.lock_acq_enable)
        # (``rel_enable`` is decided when the record is written: one bit read here, as
        # ``acq_enable``, not a value compared late in the cycle.)
        releases = Mux(request, gate_head.rel_enable, bd_releases)
        owed = Signal(range(RELEASE_QUEUE_DEPTH + 1))
        room = ~releases | (owed < RELEASE_QUEUE_DEPTH)
        m.d.comb += [
            self.acquire.request.eq((request | zero_ready) & acq_enable & room),
            self.acquire.lock_id.eq(Mux(request, gate_head.acq_id, bd.lock_acq_id)),
            self.acquire.value.eq(Mux(request, gate_head.acq_value, bd.lock_acq_value)),
        ]
        granted = (~acq_enable | self.acquire.grant) & room
        m.d.comb += engine.lock_grant.eq(request & granted)
        with m.If(request & granted):
            m.d.sync += gate_p.eq(gate_p + 1)
        zero_done = zero_ready & granted

        # Completion: MM2S with its last beat, S2MM a cycle later (its last write).
        last_beat = engine.beat_valid & engine.beat_ready & engine.beat_last
        done = Signal()
        done_record = Signal(layout)
        with m.If(last_beat):
            m.d.sync += run_p.eq(run_p + 1)
        if self.mm2s:
            m.d.comb += [done.eq(last_beat), done_record.eq(run_head)]
        else:
            m.d.sync += [pending.eq(last_beat), pending_record.eq(run_head)]
            m.d.comb += [done.eq(pending), done_record.eq(pending_record)]
        # At most one completion a cycle: a length-0 BD runs only when nothing is pending.
        with m.If(zero_done):
            m.d.comb += [done_record.eq(record), done.eq(1)]
        # The release queue: a completed BD's release in, the head out on the release
        # port (from registers: the lock unit's choice waits on nothing of this cycle).
        id_bits = len(done_record.rel_id)
        m.submodules.releases = releases_queue = SyncFIFO(
            width=id_bits + LOCK_VALUE_BITS, depth=RELEASE_QUEUE_DEPTH)
        head = releases_queue.r_data
        m.d.comb += [
            releases_queue.w_en.eq(done & done_record.rel_enable),
            releases_queue.w_data.eq(Cat(done_record.rel_id, done_record.rel_value)),
            self.release.request.eq(releases_queue.r_rdy),
            self.release.lock_id.eq(head[:id_bits]),
            self.release.value.eq(head[id_bits:]),
            releases_queue.r_en.eq(self.release.grant),
            self.token.eq(done & done_record.ends_task & done_record.token),
        ]
        passed = ((request & granted) | zero_done) & releases
        m.d.sync += owed.eq(owed + passed - (self.release.request & self.release.grant))

        # The fetch stage moves on when its BD is taken (or completes, length 0). The next
        # load of the running task is decided then; it waits in ``walk`` while the
        # table's fetch port serves other channels (``port_free`` low).
        consumed = accepted | zero_done
        walk, walk_id = Signal(), Signal(range(BD_COUNT[kind]))
        walking, walking_id = Signal(), Signal(range(BD_COUNT[kind]))
        next_load = Signal(range(BD_COUNT[kind]))   # the held BD's next load, if more
        m.d.comb += next_load.eq(Mux(bd.use_next_bd, bd.next_bd, start_bd))
        with m.If(consumed & more):
            m.d.comb += [walking.eq(1), walking_id.eq(next_load)]
            with m.If(~bd.use_next_bd):
                m.d.sync += [passes.eq(passes + 1), passes_left.eq(passes + 1 < repeat)]
        with m.Else():
            m.d.comb += [walking.eq(walk), walking_id.eq(walk_id)]
        fetch_request = Signal()
        from_queue = Signal()
        with m.If((~f_valid | consumed) & ~self.pause):
            with m.If(walking):
                m.d.comb += fetch_request.eq(1)
            with m.Elif(queue.o.valid & ~error):
                m.d.comb += [fetch_request.eq(1), from_queue.eq(1)]
        fetch = Signal()
        m.d.comb += [fetch.eq(fetch_request & port_free), queue.o.ready.eq(from_queue & port_free)]
        with m.If(from_queue & port_free):
            m.d.sync += [start_bd.eq(queue.o.payload.start_bd),
                         repeat.eq(queue.o.payload.repeat),
                         token.eq(queue.o.payload.token), passes.eq(0),
                         passes_left.eq(queue.o.payload.repeat != 0)]
        m.d.sync += [walk.eq(walking & ~fetch), walk_id.eq(walking_id)]
        with m.If(consumed | fetch):
            m.d.sync += f_valid.eq(fetch)
        # The fetch address (``walking_id`` when walking, else the queue's task) does not
        # wait for ``consumed``, the engine's answer, late in the cycle: with a BD held,
        # the only fetch that can follow it is of its next load, or of the next task when
        # it is its task's last (``walk`` is low then); without, of the waiting load or of
        # the queue's task. Where no fetch happens the address is read and not used.
        address = Signal(range(BD_COUNT[kind]))
        m.d.comb += address.eq(Mux(f_valid, Mux(more, next_load, queue.o.payload.start_bd),
                                   Mux(walk, walk_id, queue.o.payload.start_bd)))
        m.d.comb += [fetch_en.eq(fetch_request), fetch_to.eq(address)]
        with m.If(fetch):
            m.d.sync += self.current_bd.eq(address)
        m.d.sync += just.eq(fetch)

        # --- stream stage ---
        stage_valid = stage_p != wr
        header_done = Signal()
        advance = Signal()
        with m.If(advance):
            m.d.sync += [stage_p.eq(stage_p + 1), header_done.eq(0)]
        if self.mm2s:
            granted_head = gate_p != stage_p
            header_due = stage_valid & stage_head.packet & ~header_done & granted_head
            header = Signal(32)
            fields = {"packet_id": stage_head.packet_id, "packet_type": stage_head.packet_type,
                      "source_row": Const(self.row, 5), "source_column": Const(self.column, 7)}
            words = [fields[name].as_unsigned() << lsb for name, lsb, _ in HEADER_FIELDS]
            low = words[0]
            for w in words[1:]:
                low = low | w
            low31 = Signal(PARITY_BIT)
            m.d.comb += [low31.eq(low), header.eq(Cat(low31, ~low31.xor()))]
            with m.If(header_due):
                m.d.comb += [self.o.valid.eq(1), self.o.payload.data.eq(header),
                             engine.o.ready.eq(0)]
                with m.If(self.o.ready):
                    m.d.sync += header_done.eq(1)
            with m.Else():
                m.d.comb += [
                    self.o.valid.eq(engine.o.valid),
                    self.o.payload.data.eq(engine.o.payload.data),
                    self.o.payload.last.eq(engine.o.payload.last & ~stage_head.tlast_suppress),
                    engine.o.ready.eq(self.o.ready),
                ]
                m.d.comb += advance.eq(engine.o.valid & self.o.ready & engine.o.payload.last)
            m.d.comb += [self.mem_addr.eq(engine.mem_addr), self.mem_en.eq(engine.mem_en),
                         engine.mem_data.eq(self.mem_data)]
        else:
            header_due = stage_valid & stage_head.packet & ~header_done
            count = Signal(FIELD_INDEX[kind]["buffer_length"].value_width)
            with m.If(header_due):
                m.d.comb += [self.i.ready.eq(1), engine.i.valid.eq(0)]
                with m.If(self.i.valid):
                    m.d.sync += header_done.eq(1)
                    with m.If(~self.i.payload.data.xor()):   # odd parity, or an error
                        m.d.sync += error.eq(1)
            with m.Else():
                m.d.comb += [engine.i.valid.eq(self.i.valid),
                             engine.i.payload.eq(self.i.payload),
                             self.i.ready.eq(engine.i.ready)]
                with m.If(self.i.valid & engine.i.ready):
                    with m.If(count + 1 == stage_head.length):
                        m.d.comb += advance.eq(1)
                        m.d.sync += count.eq(0)
                    with m.Else():
                        m.d.sync += count.eq(count + 1)
            m.d.comb += [self.mem_addr.eq(engine.mem_addr), self.mem_we.eq(engine.mem_we),
                         self.mem_data.eq(engine.mem_data)]
        m.d.comb += self.busy.eq(f_valid | walk | queue.o.valid | (wr != stage_p) | (wr != run_p)
                                 | pending | releases_queue.r_rdy)
        return m
