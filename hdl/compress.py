"""Compression on the stream side of a channel: a compressor for MM2S, a decompressor for S2MM.

The format is ``model/bd/compression.py``'s (a mask word per block of 8 words, then the
block's non-zero bytes packed little-endian, padded to a word); the cycles are
``model/cycle/compression.py``'s, which the tests compare with these blocks on every cycle.
Both move one word a cycle at most on each side, and pass a word without compression
straight through (no register) while they hold no word, so a channel with compression
off has the cycles it has without them. Only core-tile and memory-tile channels have
them (AM020: the shim DMA does not compress).

Why built this way:

* Every decision of a block starts at a register: the compressor takes a word into an
  input register and packs it the cycle after, the decompressor gives its words from an
  output register (``COMPRESS_LATENCY`` and ``DECOMPRESS_LATENCY`` are 2). Without them
  the packing and the search of a word's bytes in the block ran in the cycle the
  word crossed the channel, between the packet stage and the lock gate and address
  generator (30.6 ns on an ECP5, docs/results.md "FPGA").
* The compressor packs a word's non-zero bytes the cycle after the word comes: a 4-byte
  compaction joined to the up to 3 bytes carried from the words before (each byte one
  of 4), a whole packed word written in place into the block's buffer. Packing into
  the block's 32 bytes instead is a shift by up to 28 bytes in the word's cycle, and
  compacting 32 bytes at once at the block's end would be eight times the
  multiplexers. Two buffers take turns filling and draining, so a closed block never
  copies its 256 bits.
* A closed block is copied into the drain in one cycle, so the next block fills while
  the mask and packed words leave: the compressor keeps one word a cycle on its input
  while blocks compress to 8 words or fewer.
* The decompressor makes a word as soon as the packed words holding its bytes have come,
  so a block's zero words leave while its packed words still arrive; it counts the
  packed bytes before the word it makes (``start``) as it goes, instead of summing the
  mask's nibbles before each word in the cycle.
"""

from __future__ import annotations

from amaranth.hdl import Cat, Const, Module, Mux, Signal, Value
from amaranth.lib import data, stream, wiring
from amaranth.lib.memory import Memory
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


def _places(index: list[Signal], end: Signal, start: Value, nibble: Value) -> list:
    """Assignments of ``index`` and ``end`` for a word whose part of the mask is ``nibble``
    and whose bytes start at packed byte ``start``."""
    before = [sum(nibble[j] for j in range(k)) if k else Const(0) for k in range(5)]
    return [*(index[k].eq(start + before[k]) for k in range(4)), end.eq(start + before[4])]


class Compressor(wiring.Component):
    """MM2S: an input register, two block buffers (one fills while the other drains:
    its mask, then its packed words).

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
        A word is inside (the channel is busy while it is).
    """

    def __init__(self) -> None:
        super().__init__({"i": In(stream.Signature(compressor_in_layout())),
                          "compress": In(1), "o": Out(stream.Signature(data_beat_layout())),
                          "busy": Out(1)})

    def elaborate(self, platform: object) -> Module:
        m = Module()
        i, o = self.i, self.o
        self.incoming, self.in_valid = Signal(compressor_in_layout()), Signal()
        # Which of the input register's bytes are not zero, registered beside it: the
        # buffer's word enables and the packing decide from these, not from a compare of
        # 32 bits in the cycle that fans out to every word of the buffers.
        self.nonzero = Signal(4)
        # The fill: whole packed words written into the buffer ``fill_sel`` (``full`` of
        # them), the bytes of the next one in ``carry``.
        # Both buffers' words in one memory with an asynchronous read (LUT RAM where the
        # part has it): a word written is one write enable, not a clock enable routed to
        # 32 flip-flops of each of 16 words, and the drain's read is no 16-way mux.
        m.submodules.buffers = self.buffers = Memory(shape=DATA_BITS, depth=2 * BLOCK_WORDS,
                                                     init=[])
        self.buffer_write = self.buffers.write_port()
        buffer_read = self.buffers.read_port(domain="comb")
        self.fill_sel, self.full = Signal(), Signal(range(BLOCK_WORDS + 1))
        self.carry, self.carry_n = Signal(24), Signal(range(4))
        self.fill_mask = Signal(BLOCK_BYTES)
        self.count, self.closed, self.tlast = Signal(range(BLOCK_WORDS + 1)), Signal(), Signal()
        # The drain: the other buffer's ``drain_full`` words, then its carry word.
        self.drain_full, self.drain_carry = Signal(range(BLOCK_WORDS + 1)), Signal(24)
        self.drain_mask = Signal(BLOCK_BYTES)
        self.left = Signal(range(BLOCK_WORDS + 2))       # drain words still to leave
        self.pos = Signal(range(BLOCK_WORDS + 1))        # the next: 0 the mask
        self.drain_last = Signal()
        empty = ~self.in_valid & (self.count == 0) & (self.left == 0)
        # A block still open whatever the mode now (the model's ``Compressor.open``).
        block_open = Mux(self.in_valid,
                         ~self.incoming.end & (self.closed | (self.count != BLOCK_WORDS - 1)),
                         (self.count != 0) & ~self.closed)
        joins = ~i.payload.header & (block_open | self.compress)
        m.d.comb += self.busy.eq(~empty)
        m.d.comb += i.ready.eq(Mux(joins, ~self.in_valid | ~self.closed, empty & o.ready))
        with m.If(self.left != 0):
            k = (self.pos - 1)[:3]
            m.d.comb += buffer_read.addr.eq(Cat(k, ~self.fill_sel))
            word = Mux(k == self.drain_full, self.drain_carry, buffer_read.data)
            m.d.comb += [o.valid.eq(1),
                         o.payload.data.eq(Mux(self.pos == 0, self.drain_mask, word)),
                         o.payload.last.eq(self.drain_last & (self.left == 1))]
        with m.Elif(empty & ~joins):
            m.d.comb += [o.valid.eq(i.valid), o.payload.data.eq(i.payload.data),
                         o.payload.last.eq(i.payload.last)]
        sent = o.valid & o.ready
        with m.If(sent & (self.left != 0)):
            m.d.sync += [self.pos.eq(self.pos + 1), self.left.eq(self.left - 1)]
        move = self.in_valid & ~self.closed
        with m.If(i.valid & i.ready & joins):
            m.d.sync += [self.incoming.eq(i.payload), self.in_valid.eq(1),
                         self.nonzero.eq(Cat(*_nonzero_bytes(i.payload.data)))]
        with m.Elif(move):
            m.d.sync += self.in_valid.eq(0)
        self._fill(m, move, (self.left == 0) | (sent & (self.left == 1)))
        return m

    def _merged(self, word: Value, nonzero: list[Value]) -> Value:
        """The carry's bytes, then the word's non-zero bytes (7 bytes, zeros after)."""
        packed = []         # the word's non-zero bytes, from byte 0
        for slot in range(4):
            choice = Const(0, 8)
            for k in reversed(range(4)):   # byte k is slot `rank` when it is not zero
                rank = sum(nonzero[j] for j in range(k)) if k else Const(0)
                choice = Mux(nonzero[k] & (rank == slot), word[8 * k:8 * k + 8], choice)
            packed.append(choice)
        merged = []
        for j in range(7):
            byte = Const(0, 8)
            for shift in range(4):           # the carry holds `shift` bytes
                if 0 <= j - shift < 4:
                    byte = Mux(self.carry_n == shift, packed[j - shift], byte)
            if j < 3:
                byte = Mux(self.carry_n > j, self.carry[8 * j:8 * j + 8], byte)
            merged.append(byte)
        return Cat(*merged)

    def _fill(self, m: Module, take: Value, drain_free: Value) -> None:
        """The fill block with the input register's word (when ``take``), and its move
        into the drain (when it is closed and ``drain_free``)."""
        word = self.incoming.data
        nonzero = list(self.nonzero)
        merged, total = self._merged(word, nonzero), self.carry_n + sum(nonzero)
        full, carry, carry_n = Signal.like(self.full), Signal.like(self.carry), Signal(3)
        mask, count = Signal.like(self.fill_mask), Signal.like(self.count)
        closed, tlast = Signal(), Signal()
        m.d.comb += [full.eq(self.full), carry.eq(self.carry), carry_n.eq(self.carry_n),
                     mask.eq(self.fill_mask), count.eq(self.count), closed.eq(self.closed),
                     tlast.eq(self.tlast)]
        with m.If(take):
            whole = total >= 4
            m.d.comb += [
                full.eq(self.full + whole),
                carry.eq(Mux(whole, merged[32:56], merged[:24])),
                carry_n.eq(Mux(whole, total - 4, total)),
                mask.eq(self.fill_mask | (Cat(*nonzero) << (self.count * 4))[:BLOCK_BYTES]),
                count.eq(self.count + 1),
                closed.eq(self.incoming.end | (self.count == BLOCK_WORDS - 1)),
                tlast.eq(self.tlast | self.incoming.last),
            ]
            # Written in place: no multiplexer per bit of the buffers.
            write = self.buffer_write
            m.d.comb += [write.addr.eq(Cat(self.full[:3], self.fill_sel)),
                         write.data.eq(merged[:32]), write.en.eq(whole)]
        with m.If(closed & drain_free):
            m.d.sync += [self.drain_full.eq(full), self.drain_carry.eq(carry),
                         self.drain_mask.eq(mask),
                         self.left.eq(1 + full + (carry_n != 0)), self.pos.eq(0),
                         self.drain_last.eq(tlast), self.fill_sel.eq(~self.fill_sel),
                         self.full.eq(0), self.carry.eq(0), self.carry_n.eq(0),
                         self.fill_mask.eq(0), self.count.eq(0), self.closed.eq(0),
                         self.tlast.eq(0)]
        with m.Else():
            m.d.sync += [self.full.eq(full), self.carry.eq(carry), self.carry_n.eq(carry_n),
                         self.fill_mask.eq(mask), self.count.eq(count), self.closed.eq(closed),
                         self.tlast.eq(tlast)]


class Decompressor(wiring.Component):
    """S2MM: the block held (its mask, size, packed words so far) and an output register.

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
        ``min(8, remaining)`` words, worked out from this port's value in the cycle
        before and whether a word went to the packet stage then.
    settled : In(1)
        The stage head held the same BD in the cycle before; a mask is taken only then.
    o : Out(stream.Signature(data_beat_layout()))
        Words to the packet stage; ``last`` is TLAST (a block's last word carries it when
        any of its stream words did).
    busy : Out(1)
        A block is held or the output register is full.
    """

    def __init__(self, length_bits: int) -> None:
        super().__init__({"i": In(stream.Signature(data_beat_layout())), "raw": In(1),
                          "compress": In(1), "remaining": In(length_bits),
                          "settled": In(1),
                          "o": Out(stream.Signature(data_beat_layout())), "busy": Out(1)})

    def elaborate(self, platform: object) -> Module:
        m = Module()
        i, o = self.i, self.o
        held, mask, tlast = Signal(), Signal(BLOCK_BYTES), Signal()
        # ``need``: the block's packed bytes not yet come (a packed word brings 4), so a
        # mask taken needs no division of its byte count. A mask's count is made in two
        # halves, ``need`` and ``half``, added in the cycle after (``fresh``), when only
        # whether it is 0 matters (``some``): the stream word's byte count ends at a
        # register two adders deep instead of three and a subtract.
        size, need = Signal(range(BLOCK_WORDS + 1)), Signal(range(BLOCK_BYTES + 1))
        half, fresh, some = Signal(range(BLOCK_BYTES // 2 + 1)), Signal(), Signal()
        needs = Mux(fresh, some, need != 0)      # a packed word is due
        got, pos = Signal(range(BLOCK_WORDS + 1)), Signal(range(BLOCK_WORDS))
        # Word ``pos``'s part of the mask is ``mask[:4]`` (it shifts as words are made);
        # where each of its bytes sits in ``packed`` (``index``) and the packed bytes up
        # to its end (``end``) are registers, worked out as the word before was made.
        index = [Signal(6, name=f"index_{k}") for k in range(4)]
        end = Signal(6)
        packed = Signal(8 * BLOCK_BYTES)
        out_valid, out = Signal(), Signal(data_beat_layout())     # the output register
        nibble = mask[:4]
        ready_word = end <= (got << 2)
        word = Signal(DATA_BITS)
        for k in range(4):
            m.d.comb += word[8 * k:8 * k + 8].eq(
                Mux(nibble[k], packed.word_select(index[k][:5], 8), 0))
        bypass = ~held & (self.raw | ~self.compress)
        m.d.comb += self.busy.eq(held | out_valid)
        m.d.comb += [
            i.ready.eq(Mux(held, needs,
                           ~out_valid & Mux(self.compress & ~self.raw, self.settled,
                                            o.ready))),
            o.valid.eq(out_valid | (i.valid & bypass)),
            # The payload counts only with ``o.valid``: without the output register the
            # stream word's, not gated by ``bypass`` and ``i.valid``, so that TLAST (the
            # engine's cut, finish on TLAST) is one LUT from registers, not a chain
            # through the stage head's packet and compression flags.
            o.payload.data.eq(Mux(out_valid, out.data, i.payload.data)),
            o.payload.last.eq(Mux(out_valid, out.last, i.payload.last)),
        ]
        with m.If(o.valid & o.ready):
            m.d.sync += out_valid.eq(0)
        with m.If(held & ready_word & (~out_valid | o.ready)):
            m.d.sync += [out_valid.eq(1), out.data.eq(word),
                         out.last.eq(tlast & (pos == size - 1)), pos.eq(pos + 1),
                         mask.eq(mask >> 4), *_places(index, end, end, mask[4:8])]
            with m.If(pos == size - 1):
                m.d.sync += held.eq(0)
        cases, passed = self._kept_words(m)
        # What ``i.ready`` is in each case, spelled out: the block's writes wait only on
        # registers and ``i.valid``, not on ``o.ready`` through the choice of ``i.ready``.
        counted = Mux(fresh, need + half, need)
        m.d.sync += [fresh.eq(0), need.eq(counted)]
        with m.If(i.valid & held & needs):
            # Written in place (a word-enable), not shifted in: a shift across the block
            # would be a multiplexer per bit for every position.
            with m.Switch(got):
                for k in range(BLOCK_WORDS):
                    with m.Case(k):
                        m.d.sync += packed.word_select(k, DATA_BITS).eq(i.payload.data)
            m.d.sync += [got.eq(got + 1), need.eq(Mux(counted > 4, counted - 4, 0)),
                         tlast.eq(tlast | i.payload.last)]
        with m.If(i.valid & ~held & self.compress & ~self.raw & ~out_valid & self.settled):
            kept = self._take_mask(m, (held, mask, tlast, size, got, pos),
                                   (need, half, fresh, some), cases, passed)
            m.d.sync += _places(index, end, Const(0, 6), kept[:4])
        return m

    def _kept_words(self, m: Module) -> tuple[list, Signal]:
        """Which of a block's words a mask taken now covers, as a thermometer
        (``covered[p]``: the block has a word ``p``; the block is ``min(8, remaining)``
        words, at least 1), and their number. ``remaining`` as a mask taken now sees it
        is the port's value in the cycle before (``before``, saturated at 9: all a
        block needs) less the word the packet stage took then (``passed``); both are
        registers, and each case is a compare of ``before`` with a constant. Returns
        both cases (``(covered, words)``, no word passed first) and ``passed``, which
        chooses between them. With the stage head the same BD (``settled``) nothing
        else moved ``remaining``."""
        before, passed = Signal(range(BLOCK_WORDS + 2)), Signal()
        m.d.sync += [before.eq(Mux(self.remaining > BLOCK_WORDS, BLOCK_WORDS + 1,
                                   self.remaining)),
                     passed.eq(self.o.valid & self.o.ready & ~self.raw)]
        cases = []
        for less in (0, 1):
            remaining = Signal.like(before, name=f"remaining_less{less}")
            m.d.comb += remaining.eq(before - less)
            covered = Signal(BLOCK_WORDS, name=f"covered_less{less}")
            words = Signal(range(BLOCK_WORDS + 1), name=f"words_less{less}")
            m.d.comb += [covered.eq(Cat(*((remaining > p) | (p == 0)
                                          for p in range(BLOCK_WORDS)))),
                         words.eq(Mux(remaining >= BLOCK_WORDS, BLOCK_WORDS,
                                      Mux(remaining == 0, 1, remaining)))]
            cases.append((covered, words))
        return cases, passed

    def _take_mask(self, m: Module, state: tuple, count: tuple, cases: list,
                   passed: Signal) -> Value:
        """A mask taken: the block's words (one of ``cases``, chosen by ``passed``:
        :meth:`_kept_words`), the mask's bits past the block's bytes dropped (returned),
        the packed bytes it needs (``count``: its halves, and whether it is 0)."""
        held, mask, tlast, size, got, pos = state
        need, half, fresh, some = count
        data = self.i.payload.data
        covered = Mux(passed, cases[1][0], cases[0][0])
        kept = Signal(BLOCK_BYTES)
        m.d.comb += kept.eq(Cat(*(data[4 * p:4 * p + 4] & covered[p].replicate(4)
                                  for p in range(BLOCK_WORDS))))
        # The block's bytes: each word's count from the stream word alone, those a case
        # covers summed as a tree a half (two adders of a few bits), one tree a case, and
        # ``passed`` chooses the sums: they wait on no compare or choice of the size.
        nibbles = [sum(data[4 * p + k] for k in range(4)) for p in range(BLOCK_WORDS)]
        halves = []
        for case_covered, _ in cases:
            counts = [Mux(case_covered[p], nibbles[p], 0) for p in range(BLOCK_WORDS)]
            while len(counts) > 2:
                counts = [counts[k] + counts[k + 1] for k in range(0, len(counts), 2)]
            halves.append(counts)
        m.d.sync += [held.eq(1), mask.eq(kept), size.eq(Mux(passed, cases[1][1], cases[0][1])),
                     need.eq(Mux(passed, halves[1][0], halves[0][0])),
                     half.eq(Mux(passed, halves[1][1], halves[0][1])),
                     fresh.eq(1), some.eq(kept.any()),
                     got.eq(0), pos.eq(0), tlast.eq(self.i.payload.last)]
        return kept
