"""A whole DMA channel in RTL: the parts of the model's channel, each a block.

The channel contract (``model/cycle/contract.py`` "Channel", the model's
:class:`~aiedma.model.system.channel.Channel`) in gateware, one block per part:

* **Task queue** (:class:`~aiedma.hdl.task_queue.TaskQueue`): start-queue register
  writes in, tasks out.
* **Fetch** (:class:`.fetch.FetchStage`): walks the running task (chain, repeat),
  fetches each BD from the BD table (:mod:`aiedma.hdl.bd_table`; its own, or the DMA's
  shared one through ``fetch``) and holds up to ``FETCH_DEPTH`` of them; a BD fetched
  in cycle ``t`` is offered to the engine from ``t + BD_OFFER_LATENCY``, from its
  own entries.
* **Engine** (:mod:`aiedma.hdl.engine`): the address generator, the lock gate and the
  datapath.
* **In flight** (:class:`.record.InFlightRing`): each BD the engine takes gets a record
  (its lock, release, packet, TLAST and task-end fields) until its words have passed.
* **Lock requests** (:class:`.lock_requests.LockRequester`): the next BD's acquire,
  asked ahead from registers while the BD before it ends; a BD that releases asks only
  while the channel owes fewer than ``RELEASE_QUEUE_DEPTH`` releases.
* **Completion** (:class:`.completion.Completion`): MM2S in the cycle its last beat
  passes the gate, S2MM one cycle later (its last write); at a task's end ``token``
  pulses if the task asked for one.
* **Release queue** (:class:`.release_queue.ReleaseQueue`): completed BDs' releases,
  the head on the release port from the next cycle.
* **Packet stage** (:mod:`.packet_stage`): MM2S headers and TLAST, S2MM header checks.
* **(De)compression** (:mod:`aiedma.hdl.compress`, core tile and memory tile only): MM2S
  words pass a compressor after the packet stage, S2MM words a decompressor before it,
  in effect for a BD whose ``enable_compression`` is set while ``compression`` (the
  control register's bit) is high.
* **BDs of length 0** never enter the engine: when every BD before has completed, the
  lock requester asks for its lock and it completes in the cycle it holds it (its
  release queued as any other).

What differs between MM2S and S2MM is chosen once, in :data:`.direction.DIRECTION_PARTS`.
A BD with ``valid_bd = 0``, an S2MM BD with padding, or a received header with bad
parity stops the channel and sets ``error`` (the status's ``error_bd_invalid``); a BD
that names a lock past the kind's lock IDs (memory tile) stops it and sets
``lock_unavailable`` (``error_lock_access_to_unavailable``). For a bad BD the model's
channel run through its registers does the same in the same cycles
(``Channel.write_start_queue``), and on a bad header too (``Channel._take_header``).
Out of order (S2MM), a header naming a BD that is not the channel's, and on the memory
tile a task whose start BD is not the channel's or a chain to one, stop it and set
``bd_unavailable``.
"""

from __future__ import annotations

from amaranth.hdl import Cat, Const, Module, Mux, Signal, Value
from amaranth.lib import data, wiring
from amaranth.lib.fifo import SyncFIFO
from amaranth.lib.wiring import In, Out

from ...model.arch.directions import check_direction
from ...model.arch.kinds import DMA_KINDS, check_allowed
from ...model.arch.registers import (
    COMPRESSING_KINDS,
    FOT_COUNT_DEPTH,
    FOT_COUNT_FIELDS,
    STATUS_FIELDS,
    WRITE_COUNT_BITS,
    start_queue_address,
    status_address,
)
from ...model.bd.fields import BD_COUNT, FIELD_INDEX
from ...model.cycle.contract import (
    ADDRGEN_BD_SLOTS,
    COMPLETION_LATENCY,
    address_generation_fields,
)
from ..bd_table import BDTable, fetch_signature
from ..compress import Compressor, Decompressor
from ..handshake import HANDSHAKE_RECORDS, check_outstanding
from ..layouts import check_kind
from ..lock_unit import lock_port_signature
from ..memory_port import bus_attributes_signature
from ..register_port import drive_register_port, register_port_signature
from ..task_queue import TaskQueue
from .completion import Completion
from .direction import DIRECTION_PARTS, connect_outside
from .fetch import FetchStage, unreachable
from .lock_requests import LockRequester
from .record import RECORDS, InFlightRing
from .release_queue import ReleaseQueue

__all__ = ["Channel"]


class Channel(wiring.Component):
    """One MM2S or S2MM channel of a DMA, with its own BD table and lock ports.

    Parameters
    ----------
    kind : {"tile", "memtile", "shim"}
    direction : {"mm2s", "s2mm"}
    index : int
        The channel number (its start-queue address).
    column, row : int
        The tile's position, for MM2S packet headers.
    shared_table : bool
        Fetch BDs through the ``fetch`` port from the DMA's
        :class:`~aiedma.hdl.bd_table.SharedBDTable` (:class:`~aiedma.hdl.dma.DMA`)
        instead of owning a table.
    compression : bool
        False: no (de)compressor is built (nor the ``compression`` port); the stream
        joins the packet stage as a shim's does, and a BD's ``enable_compression``
        moves its words uncompressed (the model's ``DMA(compression=False)``).
    allowed : (int, int), optional
        Window protection, :class:`~aiedma.hdl.dma.DMA`'s.
    outstanding : int, optional
        None: the fixed memory port. A number: the handshake port, up to that many
        accesses in flight (:mod:`aiedma.hdl.handshake`); a BD then completes when its
        accesses are answered, and a bus error sets ``dm_unavailable``.

    Attributes
    ----------
    reg_addr, reg_write, reg_wdata : In
        Register writes (:func:`~aiedma.hdl.register_port.register_port_signature`,
        write half): BD words (to its own table; not with ``shared_table``), this
        channel's start-queue register, and its status register (a 1 in
        ``task_queue_overflow`` clears the flag; the other bits are read-only).
    fetch : Out(fetch_signature(kind))
        With ``shared_table`` only: the BD fetch port.
    acquire, release : Out(lock_port_signature(lock_ids))
        To a :class:`~aiedma.hdl.lock_unit.LockUnit` port pair (``lock_id`` as the BD
        names it).
    o, mem_addr, mem_en, mem_data, token (MM2S) / i, mem_addr, mem_we, mem_data, token (S2MM)
        The outside (:func:`.direction.mm2s_signature` / ``s2mm_signature``): the data
        stream, the memory port as the engine's, and ``token`` (a task that asked for
        a completion token ended this cycle).
    pause : In(1)
        While high, the fetch stage takes no new BD (a program is loaded with it high).
    busy, error, queue_size, queue_overflow, current_bd : Out
        Channel status (``current_bd``: the BD fetched last).
    stall_lock_acq, stall_lock_rel, stall_stream, stall_tct : Out(1)
        The status register's stall bits in this cycle (``STATUS_FIELDS``; the model's
        ``Channel._stall_bits``): the BD at the gate waits for its lock's acquire, or for
        room to release; the stream refuses a word (MM2S) or has none to take (S2MM);
        the count FIFO is full while the channel is busy (S2MM, finish on TLAST, mode 3).
    fot_mode : In(2)
        S2MM: the control register's finish-on-TLAST mode (``FOT_MODES``; 0 on MM2S).
    fot_length_exceeded, fot_bds_per_task : Out(1)
        S2MM: the finish-on-TLAST error flags (sticky until the channel's reset).
    out_of_order : In(1)
        S2MM: the control register's ``enable_out_of_order`` (0 on MM2S).
    bd_unavailable : Out(1)
        S2MM, out of order: a header named a BD that is not the channel's; memory tile: a
        task's start BD is not the channel's (sticky until the channel's reset).
    lock_unavailable : Out(1)
        Memory tile: a BD named a lock past the tile's lock IDs (sticky until the
        channel's reset).
    dm_unavailable : Out(1)
        An access the DMA cannot reach (outside ``allowed``; on a memory tile, past its
        windows) was not made (sticky until the channel's reset).
    absent_memory, absent_locks : In(2)
        Memory tile: the west (bit 0) and east (bit 1) neighbours' memories, locks, are
        absent (an access to them, a BD naming them, is a fault).
    compression : In(1)
        Core tile and memory tile, built with ``compression``: the control register's
        ``compression_enable`` (MM2S) or ``decompression_enable`` (S2MM).
    fot_pop : In(1)
    fot_count : Out(32)
        S2MM: the count FIFO's pop register (``FOT_COUNT_FIELDS``; 0 when it is empty or
        the mode is not 3), read in a cycle ``fot_pop`` is high, which pops its entry.
    write_count : Out(WRITE_COUNT_BITS[kind])
        S2MM: the Current_Write_Count register (the model's
        ``Channel.write_count_word``): the data words of the BD whose word joined its
        beat last, from its first word; 0 on MM2S.
    """

    def __init__(self, kind: str, direction: str, index: int, column: int = 0,
                 row: int = 0, *, shared_table: bool = False, compression: bool = True,
                 allowed: tuple[int, int] | None = None,
                 outstanding: int | None = None) -> None:
        self.kind = check_kind(kind)
        self.allowed = check_allowed(kind, allowed)
        self.outstanding = None if outstanding is None else check_outstanding(outstanding)
        self.handshake = outstanding is not None
        # BDs in flight (each with a record until its words pass): more on a handshake port
        self.records = HANDSHAKE_RECORDS if self.handshake else RECORDS
        check_direction(direction, "channel")
        self.shared_table = shared_table
        self.direction, self.index, self.column, self.row = direction, index, column, row
        self.parts = DIRECTION_PARTS[direction]
        self.start_queue = start_queue_address(kind, direction, index)
        self.status = status_address(kind, direction, index)
        self.lock_ids = FIELD_INDEX[kind]["lock_acq_id"].maximum + 1
        ports = {
            **register_port_signature(readable=False).members,
            "acquire": Out(lock_port_signature(self.lock_ids)),
            "release": Out(lock_port_signature(self.lock_ids)),
            "pause": In(1), "busy": Out(1), "error": Out(1),
            "queue_size": Out(3), "queue_overflow": Out(1),
            "current_bd": Out(range(BD_COUNT[kind])),
            "stall_lock_acq": Out(1), "stall_lock_rel": Out(1), "stall_stream": Out(1),
            "stall_tct": Out(1),
            "fot_mode": In(2), "fot_length_exceeded": Out(1), "fot_bds_per_task": Out(1),
            "fot_pop": In(1), "fot_count": Out(32), "write_count": Out(WRITE_COUNT_BITS[kind]),
            "out_of_order": In(1), "bd_unavailable": Out(1), "lock_unavailable": Out(1),
            "dm_unavailable": Out(1),
            **({"absent_memory": In(2), "absent_locks": In(2)}
               if len(DMA_KINDS[kind].windows) > 1 else {}),
            **self.parts.outside(kind, self.handshake).members,
        }
        if shared_table:
            ports["fetch"] = Out(fetch_signature(kind))
        self.compressible = compression and kind in COMPRESSING_KINDS
        if self.compressible:
            ports["compression"] = In(1)
        super().__init__(ports)

    def elaborate(self, platform: object) -> Module:
        m = Module()
        kind, parts = self.kind, self.parts
        queue = self._task_queue(m)
        dma = DMA_KINDS[kind]
        ooo_bds = dma.channel_bds(self.index) if self.direction == "s2mm" else None
        starts = dma.channel_bds(self.index) if dma.bd_halves > 1 else None
        m.submodules.fetch = fetch = FetchStage(kind, refuses_padding=parts.refuses_padding,
                                                out_of_order_bds=ooo_bds, channel_bds=starts)
        if len(dma.windows) > 1:
            m.d.comb += fetch.absent_locks.eq(self.absent_locks)
        m.submodules.engine = engine = parts.engine(kind, self.outstanding)
        m.submodules.ring = ring = InFlightRing(kind, self.records)
        m.submodules.locks = locks = LockRequester(kind)
        completion = self._completion(m, engine)
        m.submodules.releases = releases = ReleaseQueue(kind)
        m.submodules.packets = packets = parts.packet_stage(kind, self.column, self.row)
        self._bd_table(m, fetch)
        wiring.connect(m, queue.o, fetch.task)
        error, stopped = self._errors(m, fetch, packets)
        if self.direction == "s2mm":
            self._out_of_order(m, fetch, packets, ring, stopped)

        # The engine takes the held BD; a BD of length 0 goes to the lock requester.
        go = fetch.valid & ~error & ~fetch.bad
        empty = fetch.empty
        m.d.comb += [
            engine.bd.valid.eq(go & ~empty),
            *(getattr(engine.bd.payload, f.name).eq(getattr(fetch.bd, f.name))
              for f in address_generation_fields(kind)),
        ]
        accepted = engine.bd.valid & engine.bd.ready
        moved = engine.beat_valid & engine.beat_ready
        # S2MM, finish on TLAST: the packet stage marks a word with TLAST as its BD's last
        # (the engine's ``last`` on i), which ends the BD at that word.
        cut = moved & engine.i.payload.last if self.direction == "s2mm" else Const(0)
        last_beat = moved & (engine.beat_last | cut)
        if self.direction == "s2mm":
            self._fot(m, packets, ring, last_beat, cut)
            self._write_count(m, moved, last_beat)
        self._bus_attributes(m, fetch, accepted, last_beat, moved)
        m.d.comb += [
            ring.push.eq(accepted), ring.record.eq(fetch.record),
            ring.gate_advance.eq(locks.gate_advance), ring.run_advance.eq(last_beat),
            ring.stage_advance.eq(packets.advance),
            locks.engine_request.eq(engine.lock_request), engine.lock_grant.eq(locks.engine_grant),
            locks.beat_moved.eq(moved), locks.beat_cut.eq(cut),
            locks.gate_head.eq(ring.gate_head), locks.gate_valid.eq(ring.gate_valid),
            locks.gate_next.eq(ring.gate_next), locks.next_valid.eq(ring.next_valid),
            locks.zero_record.eq(fetch.record),
            locks.zero_ready.eq(go & empty & ring.engine_empty & ~completion.pending),
            locks.released.eq(releases.applied),
            completion.last_beat.eq(last_beat), completion.run_head.eq(ring.run_head),
            completion.zero_done.eq(locks.zero_done), completion.zero_record.eq(fetch.record),
            releases.push.eq(completion.done & completion.record.rel_enable),
            releases.lock_id.eq(completion.record.rel_id),
            releases.value.eq(completion.record.rel_value),
            fetch.consumed.eq(accepted | locks.zero_done), fetch.pause.eq(self.pause),
            fetch.stop.eq(stopped),
            packets.head.eq(ring.stage_head), packets.head_packet.eq(ring.stage_packet),
            packets.head_granted.eq(ring.stage_granted), packets.head_single.eq(ring.stage_single),
        ]
        wiring.connect(m, locks.acquire, wiring.flipped(self.acquire))
        wiring.connect(m, releases.release, wiring.flipped(self.release))
        compressing = Const(0)   # a (de)compressor holds a block
        if self.compressible:
            compressing = self._compression(m, engine, packets, ring)
        else:
            parts.join_stream(m, self, engine, packets)
        self._memory_port(m, engine)
        m.d.comb += [
            self.error.eq(error), self.token.eq(completion.token),
            self.current_bd.eq(fetch.current_bd),
            self.stall_lock_acq.eq(locks.waits_acquire),
            self.stall_lock_rel.eq(locks.waits_release),
            self.stall_stream.eq(self._stream_stall(engine, packets)),
            self.busy.eq(fetch.valid | fetch.waiting | queue.o.valid | ring.busy
                         | completion.pending | releases.pending | compressing),
        ]
        return m

    def _completion(self, m: Module, engine: wiring.Component) -> Completion:
        """Completion a fixed latency after a BD's last beat, or, on the handshake port,
        when the engine says the BD's accesses are answered."""
        latency = None if self.handshake else COMPLETION_LATENCY[self.direction]
        m.submodules.completion = completion = Completion(self.kind, latency)
        if self.handshake:
            m.d.comb += completion.settled.eq(engine.done)
        return completion

    def _errors(self, m: Module, fetch: FetchStage,
                packets: wiring.Component) -> tuple[Signal, Value]:
        """The BD error registers (sticky until the channel's reset): ``error``
        (``error_bd_invalid``: a BD not valid, a bad header), ``lock_unavailable`` and
        ``bd_unavailable``. Returns ``error`` and whether any is set: every BD error stops
        the channel (no new task starts until a channel reset)."""
        error = Signal()
        with m.If(fetch.bad & ~fetch.lock | packets.error):
            m.d.sync += error.eq(1)
        with m.If(fetch.bad & fetch.lock):
            m.d.sync += self.lock_unavailable.eq(1)
        with m.If(fetch.unavailable):
            m.d.sync += self.bd_unavailable.eq(1)
        return error, (error | self.lock_unavailable | self.bd_unavailable
                       | self.dm_unavailable)

    def _memory_port(self, m: Module, engine: wiring.Component) -> None:
        """The engine's memory port, out. An access the DMA cannot reach is not made: its
        enable is held low, a read gives 0 (the cycle after, as the port's data comes),
        and ``dm_unavailable`` is set (the model's ``Channel._reaches``)."""
        if self.handshake:
            self._handshake_port(m, engine)
            return
        dma = DMA_KINDS[self.kind]
        if len(dma.windows) == 1 and self.allowed is None:
            connect_outside(m, engine, self, self.parts.memory(self.kind))
            return
        outside = self._outside(engine.mem_addr)
        enable = "mem_en" if self.direction == "mm2s" else "mem_we"
        asks = getattr(engine, enable)
        m.d.comb += [self.mem_addr.eq(engine.mem_addr),
                     getattr(self, enable).eq(asks & ~outside)]
        with m.If(asks & outside):
            m.d.sync += self.dm_unavailable.eq(1)
        if self.direction == "s2mm":
            m.d.comb += self.mem_data.eq(engine.mem_data)
            return
        dropped = Signal()           # the read of the cycle before was not made
        m.d.sync += dropped.eq(asks & outside)
        m.d.comb += engine.mem_data.eq(Mux(dropped, 0, self.mem_data))

    def _outside(self, address: Value) -> Value:
        """Whether the DMA cannot reach word ``address``: outside ``allowed`` (the
        address's bits above the window's size differ from the window's), or, on the
        memory tile, past the east window (the 19-bit address reaches 512K words, the
        windows 384K) or in an absent neighbour's window (:func:`~.fetch.unreachable`)."""
        dma = DMA_KINDS[self.kind]
        outside = Const(0)
        if len(dma.windows) > 1:
            shift = (dma.memory_words - 1).bit_length()
            outside = unreachable(address[shift:], self.absent_memory)
        if self.allowed is not None:
            size = self.allowed.size_bits
            outside = outside | (address[size:] != self.allowed.start >> size)
        return outside

    def _bus_attributes(self, m: Module, fetch: FetchStage, accepted: Value,
                        last_beat: Value, moved: Value) -> None:
        """On a handshake port of a kind whose BD has them (the shim's), the bus
        attributes of the BD each request belongs to. The engine runs its BDs in the order
        it takes them, so a queue pushed as it takes one and popped at its last beat has
        the running BD at its head; an S2MM request leaves the datapath's register a cycle
        after its word joined, so its attributes are held from that cycle."""
        signature = bus_attributes_signature(self.kind) if self.handshake else None
        if signature is None:
            return
        bd = fetch.bd
        # ``mem_burst`` ... as the port names them, ``burst`` ... here
        attributes = data.StructLayout({name.removeprefix("mem_"): member.shape
                                        for name, member in signature.members.items()})
        m.submodules.attributes = queue = SyncFIFO(width=attributes.size,
                                                   depth=ADDRGEN_BD_SLOTS + 1)
        taken = Signal(attributes)
        m.d.comb += [
            taken.burst.eq(bd.burst_length >> 2), taken.cache.eq(bd.axcache),
            taken.prot.eq(Cat(0, ~bd.secure_access, 0)), taken.qos.eq(bd.axqos),
            taken.smid.eq(bd.smid),
            queue.w_en.eq(accepted), queue.w_data.eq(taken), queue.r_en.eq(last_beat),
        ]
        head = data.View(attributes, queue.r_data)
        if self.direction == "s2mm":
            held = Signal(attributes)
            with m.If(moved):
                m.d.sync += held.eq(head)
            head = held
        m.d.comb += [self.mem_burst.eq(head.burst), self.mem_cache.eq(head.cache),
                     self.mem_prot.eq(head.prot), self.mem_qos.eq(head.qos),
                     self.mem_smid.eq(head.smid)]

    def _handshake_port(self, m: Module, engine: wiring.Component) -> None:
        """The engine's handshake memory port, out. The datapath itself leaves out an
        access the DMA cannot reach (``blocked``, tested on the beat's address, so the
        port never sees it) and reports it (``dropped``), and a bus error (``fault``):
        either sets ``dm_unavailable``, which stops the channel as every BD error."""
        connect_outside(m, engine, self, self.parts.memory(self.kind, True))
        m.d.comb += engine.blocked.eq(self._outside(engine.beat_address))
        with m.If(engine.dropped | engine.fault):
            m.d.sync += self.dm_unavailable.eq(1)

    def _task_queue(self, m: Module) -> TaskQueue:
        """The task queue, pushed by writes of the start-queue register; a 1 written to the
        status register's ``task_queue_overflow`` clears its flag."""
        m.submodules.queue = queue = TaskQueue()
        overflow_bit = STATUS_FIELDS["task_queue_overflow"][0]
        m.d.comb += [
            queue.push.eq(self.reg_write & (self.reg_addr == self.start_queue)),
            queue.clear_overflow.eq(self.reg_write & (self.reg_addr == self.status)
                                    & self.reg_wdata[overflow_bit]),
            queue.word.eq(self.reg_wdata),
            self.queue_size.eq(queue.size), self.queue_overflow.eq(queue.overflow),
        ]
        return queue

    def _stream_stall(self, engine: wiring.Component, packets: wiring.Component) -> Value:
        """The status's stream stall: MM2S shows a word the stream does not take; S2MM has
        no word while it takes one (a header) or shows a beat the count FIFO does not
        hold back (a BD's first beat asks for its lock only once a word is there, so
        ``i.ready`` alone would hide a BD waiting for its first word)."""
        # At the packet stage's stream side: with (de)compression off the (de)compressor
        # passes the stream through; with it on, what the channel waits on is the
        # block's side, as the model's (de)compressing port.
        if self.direction == "mm2s":
            return packets.o.valid & ~packets.o.ready
        return ~packets.i.valid & (packets.i.ready | (engine.beat_valid & ~packets.hold))

    def _compression(self, m: Module, engine: wiring.Component, packets: wiring.Component,
                     ring: InFlightRing) -> Value:
        """The stream through the packet stage and a (de)compressor: MM2S engine, stage,
        compressor, stream; S2MM stream, decompressor, stage, engine. Returns its busy."""
        on = self.compression & ring.stage_compress
        if self.direction == "mm2s":
            m.submodules.compressor = block = Compressor()
            wiring.connect(m, engine.o, packets.i)
            m.d.comb += [block.i.valid.eq(packets.o.valid), packets.o.ready.eq(block.i.ready),
                         block.i.payload.data.eq(packets.o.payload.data),
                         block.i.payload.last.eq(packets.o.payload.last),
                         block.i.payload.end.eq(packets.end),
                         block.i.payload.header.eq(packets.header), block.compress.eq(on)]
            wiring.connect(m, block.o, wiring.flipped(self.o))
            return block.busy
        m.submodules.decompressor = block = Decompressor(len(packets.remaining))
        wiring.connect(m, wiring.flipped(self.i), block.i)
        wiring.connect(m, block.o, packets.i)
        wiring.connect(m, packets.o, engine.i)
        # The stage head is the BD it was in the cycle before: it was there, not ended.
        settled = Signal()
        m.d.sync += settled.eq(ring.stage_valid & ~packets.advance)
        m.d.comb += [block.raw.eq(packets.header), block.compress.eq(on),
                     block.remaining.eq(packets.remaining), block.settled.eq(settled)]
        return block.busy

    def _fot(self, m: Module, packets: wiring.Component, ring: InFlightRing,
             last_beat: Value, cut: Value) -> None:
        """Finish on TLAST (the model's :meth:`~aiedma.model.system.channel.Channel._bd_ends`):
        the packet stage ends BDs on TLAST while the mode is not 0; a BD ended by its
        ``buffer_length`` sets ``fot_length_exceeded``; in mode 2 a task's BD beyond
        ``FOT_COUNT_DEPTH`` sets ``fot_bds_per_task``."""
        on = self.fot_mode != 0
        m.d.comb += packets.fot.eq(on)
        # Mode 3: the count FIFO; while it is full no data word passes the packet stage.
        m.submodules.counts = counts = SyncFIFO(width=32, depth=FOT_COUNT_DEPTH)
        registered = self.fot_mode == 3
        entry = Signal(32)
        for name, value in (("valid", 1), ("last_in_task", ring.run_head.ends_task),
                            ("bd_id", ring.run_head.bd_id), ("write_count", packets.words)):
            lsb, width = FOT_COUNT_FIELDS[name]
            m.d.comb += entry[lsb:lsb + width].eq(value)
        m.d.comb += [
            counts.w_en.eq(last_beat & registered), counts.w_data.eq(entry),
            counts.r_en.eq(self.fot_pop & registered),
            self.fot_count.eq(Mux(registered & counts.r_rdy, counts.r_data, 0)),
            packets.hold.eq(registered & (counts.level == FOT_COUNT_DEPTH)),
            self.stall_tct.eq(packets.hold & self.busy),
        ]
        with m.If(last_beat & on & ~cut):
            m.d.sync += self.fot_length_exceeded.eq(1)
        entries = Signal(range(FOT_COUNT_DEPTH + 1))   # this task's count entries
        full = entries == FOT_COUNT_DEPTH
        with m.If(last_beat & (self.fot_mode == 2)):
            with m.If(full):
                m.d.sync += self.fot_bds_per_task.eq(1)
            m.d.sync += entries.eq(Mux(ring.run_head.ends_task, 0,
                                       Mux(full, entries, entries + 1)))

    def _write_count(self, m: Module, moved: Value, last_beat: Value) -> None:
        """Current_Write_Count: a word joining its beat counts on, or restarts the count at
        1 when it is its BD's first (the word after a BD's last); a register, so a read
        shows the words joined before its cycle."""
        restart = Signal(init=1)
        with m.If(moved):
            m.d.sync += [self.write_count.eq(Mux(restart, 1, self.write_count + 1)),
                         restart.eq(last_beat)]

    def _out_of_order(self, m: Module, fetch: FetchStage, packets: wiring.Component,
                      ring: InFlightRing, stopped: Value) -> None:
        """Out of order: the packet stage takes a header while the fetch stage wants one
        and no BD is in the stream stage (the one before has all its words) and no BD
        error has stopped the channel; a BD ID that is not the channel's stops it
        (``bd_unavailable``, set by ``elaborate``)."""
        m.d.comb += [
            fetch.out_of_order.eq(self.out_of_order),
            packets.ooo_want.eq(fetch.wants_header & ~ring.stage_valid & ~stopped),
            fetch.header.eq(packets.ooo_header), fetch.header_bd.eq(packets.ooo_bd),
        ]

    def _bd_table(self, m: Module, fetch: FetchStage) -> None:
        """The fetch port: to the DMA's shared table, or to a table of the channel's own
        (written through the register port; its port is always free)."""
        if self.shared_table:
            wiring.connect(m, fetch.fetch, wiring.flipped(self.fetch))
            return
        m.submodules.table = table = BDTable(self.kind)
        drive_register_port(m, self, table)
        m.d.comb += [table.fetch_en.eq(fetch.fetch.en), table.fetch_id.eq(fetch.fetch.id),
                     fetch.fetch.bd.eq(table.bd), fetch.fetch.chain_leaves.eq(table.chain_leaves),
                     fetch.fetch.grant.eq(Const(1))]
