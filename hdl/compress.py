"""Compression on the stream side of a channel: a compressor for MM2S, a decompressor for S2MM.

The format is ``model/bd/compression.py``'s (a mask word per block of 8 words, then the
block's non-zero bytes packed little-endian, padded to a word); the cycles are
``model/cycle/compression.py``'s, which the tests compare with these blocks on every cycle.
Both move one word a cycle at most on each side, and pass a word without compression
straight through (no register) while they hold no block, so a channel with compression
off has the cycles it has without them. Only core-tile and memory-tile channels have
them (AM020: the shim DMA does not compress).

Why built this way:

* The compressor packs a word's non-zero bytes into the open block as the word comes
  (a 4-byte compaction and one shift into the block's 32 bytes), instead of compacting
  32 bytes at once at the block's end: a 32-to-32 byte network would be eight times the
  multiplexers.
* A closed block is copied into the drain in one cycle, so the next block fills while
  the mask and packed words leave: the compressor keeps one word a cycle on its input
  while blocks compress to 8 words or fewer.
* The decompressor gives a word as soon as the packed words holding its bytes have come,
  so a block's zero words leave while its packed words still arrive.
"""

from __future__ import annotations

from amaranth.hdl import Cat, Const, Module, Mux, Signal, Value
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from ..model.bd.compression import BLOCK_BYTES, BLOCK_WORDS
from ..model.cycle.contract import DATA_BITS
from .layouts import data_beat_layout

__all__ = ["Compressor", "Decompressor", "compressor_in_layout"]


def compressor_in_layout() -> data.StructLayout:
    """A word into the compressor: ``data``, ``last`` (TLAST), ``end`` (its BD's last
    word) and ``header`` (a packet header: it passes as it is)."""
    return data.StructLayout({"data": DATA_BITS, "last": 1, "end": 1, "header": 1})


def _nonzero_bytes(word: Value) -> list[Value]:
    return [word[8 * k:8 * k + 8] != 0 for k in range(4)]


class Compressor(wiring.Component):
    """MM2S: a block in fill, one in drain (mask, then packed words).

    Attributes
    ----------
    i : In(stream.Signature(compressor_in_layout()))
        Words from the packet stage.
    compress : In(1)
        The BD of the word on ``i`` has compression in effect (its ``enable_compression``
        and the channel's ``compression_enable``); read when a block's first word comes.
    o : Out(stream.Signature(data_beat_layout()))
        The stream.
    busy : Out(1)
        A block is inside (the channel is busy while it is).
    """

    def __init__(self) -> None:
        super().__init__({"i": In(stream.Signature(compressor_in_layout())),
                          "compress": In(1), "o": Out(stream.Signature(data_beat_layout())),
                          "busy": Out(1)})

    def elaborate(self, platform: object) -> Module:
        m = Module()
        i, o = self.i, self.o
        self.fill_bytes = Signal(8 * BLOCK_BYTES)
        self.fill_mask, self.fill_n = Signal(BLOCK_BYTES), Signal(range(BLOCK_BYTES + 1))
        self.count, self.closed, self.tlast = Signal(range(BLOCK_WORDS + 1)), Signal(), Signal()
        self.drain_bytes, self.drain_mask = Signal(8 * BLOCK_BYTES), Signal(BLOCK_BYTES)
        self.left = Signal(range(BLOCK_WORDS + 2))       # drain words still to leave
        self.pos = Signal(range(BLOCK_WORDS + 1))        # the next: 0 the mask
        self.drain_last = Signal()
        empty = (self.count == 0) & (self.left == 0)
        joins = ~i.payload.header & ((self.count != 0) | self.compress)
        m.d.comb += self.busy.eq(~empty)
        m.d.comb += i.ready.eq(Mux(joins, ~self.closed, empty & o.ready))
        with m.If(self.left != 0):
            word = self.drain_bytes.word_select((self.pos - 1)[:3], DATA_BITS)
            m.d.comb += [o.valid.eq(1),
                         o.payload.data.eq(Mux(self.pos == 0, self.drain_mask, word)),
                         o.payload.last.eq(self.drain_last & (self.left == 1))]
        with m.Elif(empty & ~joins):
            m.d.comb += [o.valid.eq(i.valid), o.payload.data.eq(i.payload.data),
                         o.payload.last.eq(i.payload.last)]
        sent = o.valid & o.ready
        with m.If(sent & (self.left != 0)):
            m.d.sync += [self.pos.eq(self.pos + 1), self.left.eq(self.left - 1)]
        self._fill(m, i.valid & i.ready & joins, (self.left == 0) | (sent & (self.left == 1)))
        return m

    def _fill(self, m: Module, take: Value, drain_free: Value) -> None:
        """The fill block with this cycle's word (when ``take``), and its move into the
        drain (when it is closed and ``drain_free``)."""
        word = self.i.payload.data
        nonzero = _nonzero_bytes(word)
        packed = Signal(DATA_BITS)      # the word's non-zero bytes, from byte 0
        for slot in range(4):
            choice = Const(0, 8)
            for k in reversed(range(4)):   # byte k is slot `rank` when it is not zero
                rank = sum(nonzero[j] for j in range(k)) if k else Const(0)
                choice = Mux(nonzero[k] & (rank == slot), word[8 * k:8 * k + 8], choice)
            m.d.comb += packed[8 * slot:8 * slot + 8].eq(choice)
        added = sum(nonzero)
        bytes_ = Signal.like(self.fill_bytes)
        mask, n = Signal.like(self.fill_mask), Signal.like(self.fill_n)
        count, closed, tlast = Signal.like(self.count), Signal(), Signal()
        m.d.comb += [bytes_.eq(self.fill_bytes), mask.eq(self.fill_mask), n.eq(self.fill_n),
                     count.eq(self.count), closed.eq(self.closed), tlast.eq(self.tlast)]
        with m.If(take):
            m.d.comb += [
                bytes_.eq(self.fill_bytes | (packed << (self.fill_n * 8))[:8 * BLOCK_BYTES]),
                mask.eq(self.fill_mask | (Cat(*nonzero) << (self.count * 4))[:BLOCK_BYTES]),
                n.eq(self.fill_n + added), count.eq(self.count + 1),
                closed.eq(self.i.payload.end | (self.count == BLOCK_WORDS - 1)),
                tlast.eq(self.tlast | self.i.payload.last),
            ]
        with m.If(closed & drain_free):
            m.d.sync += [self.drain_bytes.eq(bytes_), self.drain_mask.eq(mask),
                         self.left.eq(1 + ((n + 3) >> 2)), self.pos.eq(0),
                         self.drain_last.eq(tlast),
                         self.fill_bytes.eq(0), self.fill_mask.eq(0), self.fill_n.eq(0),
                         self.count.eq(0), self.closed.eq(0), self.tlast.eq(0)]
        with m.Else():
            m.d.sync += [self.fill_bytes.eq(bytes_), self.fill_mask.eq(mask),
                         self.fill_n.eq(n), self.count.eq(count), self.closed.eq(closed),
                         self.tlast.eq(tlast)]


class Decompressor(wiring.Component):
    """S2MM: the block held (its mask, size, packed words so far) and the next word out.

    Parameters
    ----------
    length_bits : int
        Width of ``remaining`` (the kind's ``buffer_length``).

    Attributes
    ----------
    i : In(stream.Signature(data_beat_layout()))
        The stream.
    raw : In(1)
        The word on ``i`` is a packet header (it passes as it is).
    compress : In(1)
        The stage head's BD has decompression in effect; read when a mask is taken.
    remaining : In(length_bits)
        The stage head's words still to write: a mask taken now makes a block of
        ``min(8, remaining)`` words.
    o : Out(stream.Signature(data_beat_layout()))
        Words to the packet stage; ``last`` is TLAST (a block's last word carries it when
        any of its stream words did).
    busy : Out(1)
        A block is held.
    """

    def __init__(self, length_bits: int) -> None:
        super().__init__({"i": In(stream.Signature(data_beat_layout())), "raw": In(1),
                          "compress": In(1), "remaining": In(length_bits),
                          "o": Out(stream.Signature(data_beat_layout())), "busy": Out(1)})

    def elaborate(self, platform: object) -> Module:
        m = Module()
        i, o = self.i, self.o
        held, mask, tlast = Signal(), Signal(BLOCK_BYTES), Signal()
        size, need = Signal(range(BLOCK_WORDS + 1)), Signal(range(BLOCK_WORDS + 1))
        got, pos = Signal(range(BLOCK_WORDS + 1)), Signal(range(BLOCK_WORDS))
        packed = Signal(8 * BLOCK_BYTES)
        # Packed bytes before each word of the block: a sum over the mask's nibbles.
        before = [Signal(6, name=f"before_{p}") for p in range(BLOCK_WORDS + 1)]
        for p in range(BLOCK_WORDS):
            m.d.comb += before[p + 1].eq(before[p] + sum(mask[4 * p + k] for k in range(4)))
        start, end = Signal(6), Signal(6)
        m.d.comb += [start.eq(Cat(*before).word_select(pos, 6)),
                     end.eq(Cat(*before[1:]).word_select(pos, 6))]
        ready_word = end <= (got << 2)
        nibble = mask.word_select(pos, 4)
        word = Signal(DATA_BITS)
        for k in range(4):
            index = start + sum(nibble[j] for j in range(k)) if k else start
            m.d.comb += word[8 * k:8 * k + 8].eq(
                Mux(nibble[k], packed.word_select(index[:5], 8), 0))
        bypass = ~held & (self.raw | ~self.compress)
        m.d.comb += self.busy.eq(held)
        m.d.comb += [
            i.ready.eq(Mux(held, need != 0, (self.compress & ~self.raw) | o.ready)),
            o.valid.eq(Mux(held, ready_word, i.valid & bypass)),
            o.payload.data.eq(Mux(held, word, Mux(bypass, i.payload.data, 0))),
            o.payload.last.eq(Mux(held, tlast & (pos == size - 1),
                                  bypass & i.valid & i.payload.last)),
        ]
        with m.If(held & o.valid & o.ready):
            m.d.sync += pos.eq(pos + 1)
            with m.If(pos == size - 1):
                m.d.sync += held.eq(0)
        take = i.valid & i.ready
        with m.If(take & held & (need != 0)):
            # Written in place (a word-enable), not shifted in: a shift across the block
            # would be a multiplexer per bit for every position.
            with m.Switch(got):
                for k in range(BLOCK_WORDS):
                    with m.Case(k):
                        m.d.sync += packed.word_select(k, DATA_BITS).eq(i.payload.data)
            m.d.sync += [got.eq(got + 1), need.eq(need - 1), tlast.eq(tlast | i.payload.last)]
        with m.If(take & ~held & self.compress & ~self.raw):
            self._take_mask(m, (held, mask, tlast, size, need, got, pos))
        return m

    def _take_mask(self, m: Module, state: tuple) -> None:
        """A mask taken: the block's size from ``remaining``, its bits past the block's
        bytes dropped, the packed words it needs."""
        held, mask, tlast, size, need, got, pos = state
        remaining = self.remaining
        block = Signal.like(size)
        m.d.comb += block.eq(Mux(remaining >= BLOCK_WORDS, BLOCK_WORDS,
                                 Mux(remaining == 0, 1, remaining)))
        kept = Signal(BLOCK_BYTES)
        m.d.comb += kept.eq(Cat(*(self.i.payload.data[4 * p:4 * p + 4]
                                  & Mux(block > p, 0xF, 0) for p in range(BLOCK_WORDS))))
        bits = sum(kept[b] for b in range(BLOCK_BYTES))
        m.d.sync += [held.eq(1), mask.eq(kept), size.eq(block), need.eq((bits + 3) >> 2),
                     got.eq(0), pos.eq(0), tlast.eq(self.i.payload.last)]
