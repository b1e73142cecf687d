"""MM2S and S2MM datapaths for a memory that may wait: the handshake memory port.

The datapaths of :mod:`.mm2s` and :mod:`.s2mm` drive a block RAM's fixed port (a read
answered in the next cycle, a write landed in its cycle), which is what the cycle
contract is stated for. An external memory behind a bus answers when it can: these two
drive the handshake port of :mod:`.memory_port` instead, with up to ``outstanding``
accesses asked and not answered, so a channel still moves one word per cycle through a
memory of that many cycles' latency.

Why a BD's end waits: a channel completes a BD (releases its lock, ends its task) when
its last access is done. On the fixed port that is a set number of cycles after the last
beat (``COMPLETION_LATENCY``); here it is when the memory has answered every access of
the BD, which :attr:`done` reports, once a BD and in BD order. The next BDs' beats move
on meanwhile: at a BD's last beat the datapath notes how many accesses it has asked in
all (a *mark*), and the BD is done when that many are answered. Up to
:data:`PENDING_BDS` BDs may wait so; with that many waiting the datapath takes no beat.

An access a channel must not make (outside its window: ``blocked``, from the channel) is
not asked: a read gives 0 in its place in the word order, a write is dropped, and
``dropped`` tells the channel. A response with ``mem_error`` (a bus error) gives 0 for a
read and ``fault`` for either; the words still move, the channel stops after the BD.
"""

from __future__ import annotations

from amaranth.hdl import Cat, Module, Mux, Signal, Value
from amaranth.lib import stream, wiring
from amaranth.lib.fifo import SyncFIFO, SyncFIFOBuffered
from amaranth.lib.wiring import In, Out

from ..model.cycle.contract import DATA_BITS
from ..model.errors import AiedmaError, field_error
from .layouts import beat_layout, check_kind, data_beat_layout
from .memory_port import read_port_signature, write_port_signature

__all__ = ["ENDS_HELD", "HANDSHAKE_RECORDS", "PENDING_BDS", "MM2SHandshakeDatapath",
           "S2MMHandshakeDatapath", "check_outstanding"]

PENDING_BDS = 4
"""BDs whose last beat has passed and whose accesses are not all answered, at most (the
channel's completion keeps their records as long)."""

ENDS_HELD = 6
"""MM2S: BDs whose last beat the datapath has taken and whose last word has not left,
at most. Each of them, and the one after, keeps its record in the channel's ring of BDs
in flight until its words have passed the stream."""

HANDSHAKE_RECORDS = 16
"""The ring's records on a handshake port (:class:`~.channel.record.InFlightRing`): the
address generator's ``ADDRGEN_BD_SLOTS`` (5), the datapath's ``ENDS_HELD + 1`` and one
in the packet stage, 13, fit in the 15 it holds."""


def check_outstanding(outstanding: int) -> int:
    """``outstanding`` if it is a whole number of accesses from 1 to 4096, else a clear
    error naming it."""
    if isinstance(outstanding, bool) or not isinstance(outstanding, int) \
            or not 1 <= outstanding <= 4096:
        raise field_error(AiedmaError, "outstanding", outstanding,
                          "must be a whole number of accesses from 1 to 4096")
    return outstanding


def _status_ports() -> dict[str, wiring.Member]:
    return {"blocked": In(1), "dropped": Out(1), "fault": Out(1), "done": Out(1)}


def _marks(m: Module, outstanding: int, asked: Value, answered: Value, last: Value,
           done: Value) -> Value:
    """BD ends by the count of accesses: at a BD's ``last`` beat, the number of accesses
    asked in all (this cycle's ``asked`` included) is queued; ``done`` is driven high in
    the cycle the ``answered`` count (this cycle's included) reaches the oldest. The
    counts wrap; they never lie more than ``outstanding`` apart, so the difference's top
    bit says which is ahead. Returns whether a BD end can be queued (the queue's room)."""
    width = outstanding.bit_length() + 2
    m.submodules.marks = marks = SyncFIFO(width=width, depth=PENDING_BDS)
    issued = Signal(width)          # accesses asked in all, modulo 2**width
    replied = Signal(width)         # accesses answered in all
    issued_now = Signal(width)
    replied_now = Signal(width)
    behind = Signal(width)
    m.d.comb += [
        issued_now.eq(issued + asked), replied_now.eq(replied + answered),
        marks.w_en.eq(last), marks.w_data.eq(issued_now),
        behind.eq(replied_now - marks.r_data),
        done.eq(marks.r_rdy & ~behind[width - 1]),
        marks.r_en.eq(done),
    ]
    m.d.sync += [issued.eq(issued_now), replied.eq(replied_now)]
    return marks.w_rdy


class MM2SHandshakeDatapath(wiring.Component):
    """Reads the words of address beats through a handshake port, in beat order.

    Parameters
    ----------
    kind : {"tile", "memtile", "shim"}
    outstanding : int
        Beats taken whose words have not left on ``o`` yet, at most: the reads a
        memory of that latency needs in flight for one word per cycle.

    Attributes
    ----------
    beats : In(stream.Signature(beat_layout(kind)))
    o : Out(stream.Signature(data_beat_layout()))
        As :class:`~.mm2s.MM2SDatapath`'s.
    mem_addr, mem_en, mem_ready, mem_data, mem_valid, mem_error
        The handshake read port (:func:`~.memory_port.read_port_signature`).
    blocked : In(1)
        The beat offered now must not be read (outside the channel's window); it gives 0.
    dropped : Out(1)
        A data beat was taken without its read (``blocked``).
    fault : Out(1)
        A response carried a bus error (its word gives 0).
    done : Out(1)
        Every read up to a BD's last beat has been answered: the oldest BD whose last
        beat has passed completes now (one a cycle, in BD order).
    """

    def __init__(self, kind: str, outstanding: int) -> None:
        self.kind = check_kind(kind)
        self.outstanding = check_outstanding(outstanding)
        super().__init__({
            "beats": In(stream.Signature(beat_layout(kind))),
            "o": Out(stream.Signature(data_beat_layout())),
            **read_port_signature(kind, handshake=True).members,
            **_status_ports(),
        })

    def elaborate(self, platform: object) -> Module:
        m = Module()
        n = self.outstanding
        # Each taken beat's (zero, last) in order, and the words the memory answered.
        m.submodules.tags = tags = SyncFIFOBuffered(width=2, depth=n)
        m.submodules.words = words = SyncFIFOBuffered(width=DATA_BITS, depth=n)
        held = Signal(range(n + 1))     # beats taken whose words have not left
        ends = Signal(range(ENDS_HELD + 1))   # of them, BDs' last beats
        take = Signal()
        asks = Signal()
        beat = self.beats.payload
        may_end = _marks(m, n, asks, self.mem_valid, take & beat.last, self.done)
        room = (held != n) & (ends != ENDS_HELD) & may_end    # registers only
        skip = beat.zero | self.blocked  # no read for this beat
        m.d.comb += [
            self.mem_addr.eq(beat.address),
            self.mem_en.eq(self.beats.valid & room & ~skip),
            self.beats.ready.eq(room & (skip | self.mem_ready)),
            take.eq(self.beats.valid & self.beats.ready),
            asks.eq(self.mem_en & self.mem_ready),
            self.dropped.eq(take & ~beat.zero & self.blocked),
            tags.w_en.eq(take), tags.w_data.eq(Cat(skip, beat.last)),
            words.w_en.eq(self.mem_valid),
            words.w_data.eq(Mux(self.mem_error, 0, self.mem_data)),
            self.fault.eq(self.mem_valid & self.mem_error),
        ]

        head_zero, head_last = tags.r_data[0], tags.r_data[1]
        give = Signal()
        m.d.comb += [
            self.o.valid.eq(tags.r_rdy & (head_zero | words.r_rdy)),
            self.o.payload.data.eq(Mux(head_zero, 0, words.r_data)),
            self.o.payload.last.eq(head_last),
            give.eq(self.o.valid & self.o.ready),
            tags.r_en.eq(give), words.r_en.eq(give & ~head_zero),
        ]
        m.d.sync += [held.eq(held + take - give),
                     ends.eq(ends + (take & beat.last) - (give & head_last))]
        return m


class S2MMHandshakeDatapath(wiring.Component):
    """Writes each stream word at its beat's address through a handshake port.

    Parameters
    ----------
    kind : {"tile", "memtile", "shim"}
    outstanding : int
        Writes asked and not acknowledged, at most.

    Attributes
    ----------
    i : In(stream.Signature(data_beat_layout()))
        Stream words; ``last`` ends the BD at that word (finish on TLAST).
    beats : In(stream.Signature(beat_layout(kind)))
    mem_addr, mem_data, mem_we, mem_ready, mem_acked, mem_error
        The handshake write port (:func:`~.memory_port.write_port_signature`); the
        request is a register, so the port sees no path from the input streams.
    blocked, dropped, fault, done
        As :class:`MM2SHandshakeDatapath`'s (a blocked write is not made).
    """

    def __init__(self, kind: str, outstanding: int) -> None:
        self.kind = check_kind(kind)
        self.outstanding = check_outstanding(outstanding)
        super().__init__({
            "i": In(stream.Signature(data_beat_layout())),
            "beats": In(stream.Signature(beat_layout(kind))),
            **write_port_signature(kind, handshake=True).members,
            **_status_ports(),
        })

    def elaborate(self, platform: object) -> Module:
        m = Module()
        n = self.outstanding
        asked = Signal(range(n + 1))    # writes taken by the memory, not acknowledged
        join = Signal()
        beat = self.beats.payload
        writes = join & ~beat.zero & ~self.blocked
        may_end = _marks(m, n, writes, self.mem_acked, join & (beat.last | self.i.payload.last),
                         self.done)

        sent = self.mem_we & self.mem_ready
        # A word joins when the request register is empty or sends now, and the writes
        # asked after it (the register's included) stay within ``outstanding``.
        free = may_end & Mux(self.mem_we, self.mem_ready & (asked + 2 <= n), asked + 1 <= n)
        m.d.comb += [
            self.i.ready.eq(self.beats.valid & free),
            self.beats.ready.eq(self.i.valid & free),
            join.eq(self.i.valid & self.beats.valid & free),
            self.dropped.eq(join & ~beat.zero & self.blocked),
            self.fault.eq((self.mem_acked != 0) & self.mem_error),
        ]
        with m.If(writes):
            m.d.sync += [self.mem_we.eq(1), self.mem_addr.eq(beat.address),
                         self.mem_data.eq(self.i.payload.data)]
        with m.Elif(sent):
            m.d.sync += self.mem_we.eq(0)
        m.d.sync += asked.eq(asked + sent - self.mem_acked)
        return m
