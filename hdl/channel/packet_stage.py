"""The packet stage: packet headers and TLAST between the engine and the stream.

Both directions sit on the stream side of the engine, at the ring's ``stage`` head:

* :class:`MM2SPacketStage` sends a packet BD's header word (parity, packet ID and type
  from the BD, the tile's row and column) before its first word, once its lock is
  granted; TLAST is the BD's last word unless ``tlast_suppress``.
* :class:`S2MMPacketStage` takes a packet BD's first word as its header and checks it
  (bad parity: ``error``), and counts the BD's words, since S2MM ignores TLAST. Out of
  order, while ``ooo_want`` is high (no BD in the stage) it takes the next word as a
  packet's header and shows its out-of-order BD ID (``ooo_header``, ``ooo_bd``).

Both have the same ports: the stream in (``i``), the stream out (``o``), the stage
head's record, whether it holds a packet BD (``head_packet``, the ring's register), and
``advance`` when the head's BD is done.
"""

from __future__ import annotations

from amaranth.hdl import Cat, Const, Module, Mux, Signal, Value
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from ...model.bd.fields import FIELD_INDEX
from ...model.bd.packet import HEADER_FIELDS, PARITY_BIT
from ..layouts import data_beat_layout
from .record import head_layout

__all__ = ["MM2SPacketStage", "S2MMPacketStage", "header_flag", "header_word",
           "packet_stage_signature"]

_OOO_LSB, _OOO_BITS = next((lsb, bits) for name, lsb, bits in HEADER_FIELDS
                           if name == "out_of_order_bd_id")
"""Where the header carries the out-of-order BD ID."""


def packet_stage_signature(kind: str) -> wiring.Signature:
    """A packet stage's ports (see the module text)."""
    return wiring.Signature({
        "i": In(stream.Signature(data_beat_layout())),
        "o": Out(stream.Signature(data_beat_layout())),
        "head": In(head_layout(kind, "stage")), "head_packet": In(1), "head_granted": In(1),
        "head_single": In(1),
        "advance": Out(1), "error": Out(1), "fot": In(1), "hold": In(1),
        "words": Out(FIELD_INDEX[kind]["buffer_length"].value_width),
        "ooo_want": In(1), "ooo_header": Out(1), "ooo_bd": Out(_OOO_BITS),
        # For a (de)compressor beside the stage (hdl/compress.py): the word on ``o`` is
        # a header (MM2S) / the stage head's header is due on ``i`` (S2MM; an
        # out-of-order header passes a decompressor anyway); the word on ``o`` is its
        # BD's last (MM2S); the head's words still to pass (S2MM).
        "header": Out(1), "end": Out(1),
        "remaining": Out(FIELD_INDEX[kind]["buffer_length"].value_width),
    })



def header_flag(m: Module, advance: Value) -> Signal:
    """``header_done``: the stage head's header has passed; cleared when the head moves
    on (``advance``)."""
    header_done = Signal()
    with m.If(advance):
        m.d.sync += header_done.eq(0)
    return header_done


def header_word(m: Module, packet_id: Value, packet_type: Value, row: int,
                column: int, out_of_order_bd_id: Value) -> Value:
    """The 32-bit packet header (``model/bd/packet.py``'s fields), odd parity on top."""
    fields = {"packet_id": packet_id, "packet_type": packet_type,
              "out_of_order_bd_id": out_of_order_bd_id,
              "source_row": Const(row, 5), "source_column": Const(column, 7)}
    low = Const(0)
    for name, lsb, _ in HEADER_FIELDS:
        low = low | (fields[name].as_unsigned() << lsb)
    low31 = Signal(PARITY_BIT)
    m.d.comb += low31.eq(low)
    return Cat(low31, ~low31.xor())


class MM2SPacketStage(wiring.Component):
    """Engine words in (``i``), the stream out (``o``): headers in front, TLAST set.

    Parameters
    ----------
    kind : {"tile", "memtile", "shim"}
    column, row : int
        The tile's position, for packet headers.
    """

    def __init__(self, kind: str, column: int = 0, row: int = 0) -> None:
        self.column, self.row = column, row
        super().__init__(packet_stage_signature(kind))

    def elaborate(self, platform: object) -> Module:
        m = Module()
        head, i, o = self.head, self.i, self.o
        header_done = header_flag(m, self.advance)
        header_due = self.head_packet & ~header_done & self.head_granted
        with m.If(header_due):
            m.d.comb += [o.valid.eq(1), i.ready.eq(0), self.header.eq(1),
                         o.payload.data.eq(header_word(m, head.packet_id, head.packet_type,
                                                       self.row, self.column,
                                                       head.out_of_order_bd_id))]
            with m.If(o.ready):
                m.d.sync += header_done.eq(1)
        with m.Else():
            m.d.comb += [
                o.valid.eq(i.valid), o.payload.data.eq(i.payload.data),
                o.payload.last.eq(i.payload.last & ~head.tlast_suppress),
                i.ready.eq(o.ready),
                self.advance.eq(i.valid & o.ready & i.payload.last),
                self.end.eq(i.payload.last),
            ]
        return m


class S2MMPacketStage(wiring.Component):
    """The stream in (``i``), engine words out (``o``): headers taken off and checked.

    Parameters
    ----------
    kind : {"tile", "memtile", "shim"}
    column, row : int
        Unused (the same constructor as :class:`MM2SPacketStage`).
    """

    def __init__(self, kind: str, column: int = 0, row: int = 0) -> None:
        self.length_bits = FIELD_INDEX[kind]["buffer_length"].value_width
        super().__init__(packet_stage_signature(kind))

    def elaborate(self, platform: object) -> Module:
        m = Module()
        i, o = self.i, self.o
        header_done = header_flag(m, self.advance)
        header_due = self.head_packet & ~header_done
        count = Signal(self.length_bits)
        # Out of order the header comes before its BD is known: nothing is in the stage
        # then (``ooo_want`` needs the ring's stage empty), so no BD is in the engine
        # and no compressed block in the decompressor. So ``header`` (for the
        # decompressor, which passes every word without a stage BD) and ``o.valid``
        # (no beat can take the word) leave ``ooo_want`` out: it is made from the fetch
        # stage's out-of-order state, and on the engine's valid it reached the address
        # generator, the lock requester and the decompressor's block counts.
        m.d.comb += self.header.eq(header_due)
        m.d.comb += self.ooo_bd.eq(i.payload.data[_OOO_LSB:_OOO_LSB + _OOO_BITS])
        # Finish on TLAST: a word with TLAST is its BD's last (the engine's ``last``, which
        # counts only with ``o.valid``): driven outside the header choice, so that the
        # engine's cut does not wait for the stage head's header flags. ``hold`` (a full
        # count FIFO) lets no data word pass.
        ends = self.fot & i.payload.last
        m.d.comb += [o.payload.data.eq(i.payload.data), o.payload.last.eq(ends),
                     o.valid.eq(i.valid & ~self.hold & ~header_due)]
        data_word = Signal()         # a data word passes
        last_word = self._count_down(m, count, data_word)
        with m.If(header_due | self.ooo_want):
            m.d.comb += i.ready.eq(1)
            with m.If(i.valid):
                m.d.sync += header_done.eq(header_due)
                m.d.comb += [self.error.eq(~i.payload.data.xor()),   # odd parity, or an error
                             self.ooo_header.eq(self.ooo_want)]
        with m.Else():
            m.d.comb += [i.ready.eq(o.ready & ~self.hold), self.words.eq(count + 1),
                         data_word.eq(i.valid & o.ready & ~self.hold)]
            with m.If(data_word):
                with m.If(last_word | ends):
                    m.d.comb += self.advance.eq(1)
                    m.d.sync += count.eq(0)
                with m.Else():
                    m.d.sync += count.eq(count + 1)
        return m

    def _count_down(self, m: Module, count: Signal, data_word: Signal) -> Value:
        """Whether the next data word is the stage head's last by its length, and its
        words still to pass (``remaining``), from registers: the ring's ``head_single``
        and the head's length for its first word, else worked out as the word before
        passed (``count + 2 == length``; the words left less one), so neither waits on
        a subtract or a compare of the count with the length read from the ring."""
        first, last_next = Signal(init=1), Signal()
        left = Signal(self.length_bits)
        m.d.comb += self.remaining.eq(Mux(first, self.head.length, left))
        with m.If(self.advance):
            m.d.sync += first.eq(1)
        with m.Elif(data_word):
            m.d.sync += [first.eq(0), last_next.eq(count + 2 == self.head.length),
                         left.eq(self.remaining - 1)]
        return Mux(first, self.head_single, last_next)
