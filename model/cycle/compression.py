"""The compressor (MM2S) and decompressor (S2MM) of a channel, cycle by cycle.

The format is :mod:`aiedma.model.bd.compression`'s; this module is its timing, the model
of ``hdl/compress.py`` (docs/cycle.md "Compression"). Each block sits on the stream side
of its channel, one word a cycle in and one out at most:

* :class:`Compressor` (MM2S): between the packet stage (headers, TLAST) and the stream.
  A word of a BD with compression in effect is taken into the compressor's **input
  register**; in the next cycle it joins the open block (its **fill**) unless the fill
  is closed. A block closes with its 8th word or its BD's last, and moves to the
  **drain** (its mask, then its packed words, one a cycle) at the end of the cycle the
  drain empties, the cycle its last word leaves included. While the input register is
  full and the fill closed, no word is taken (the MM2S datapath stalls behind it). A
  word of a BD without compression, and every packet header, passes straight through
  (no register) when input register, fill and drain are empty, and waits while any
  holds a word: with compression off the channel's cycles are those without a
  compressor. A block's mask leaves ``COMPRESS_LATENCY`` cycles after its last word was
  taken, at the earliest.
* :class:`Decompressor` (S2MM): between the stream and the packet stage. With
  decompression in effect, no block held and the output register empty, the next
  stream word is a block's mask: it is taken and the block holds ``min(8, words left in
  the BD)`` words; the block's packed words are taken one a cycle while it still needs
  some. A mask is taken only when the stage head held the same BD in the cycle before
  (its words left, which size the block, then come from registers: not in the cycle
  after a BD ends or first reaches the stage). Each word of the block goes into the
  **output register** once the packed words
  holding its bytes have come and the register is empty or gives its word in that
  cycle; the packet stage sees the register, so a block's first word is offered
  ``DECOMPRESS_LATENCY`` cycles after its mask at the earliest. The next mask is taken
  once the block's last word has left the output register (the stage head's words left
  then size it). A word of a BD without decompression, and a packet header, passes
  straight through when no block is held and the output register is empty. TLAST on
  any word of a block is carried by the block's last word (finish on TLAST then ends
  the BD there).

Which mode a block has is read when its first word (or mask) is taken: the BD's
``enable_compression`` and the channel's control bit, both set (the channel computes it).
Payloads are 0 in cycles their valid is low.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..bd.compression import BLOCK_WORDS

__all__ = ["Compressor", "Decompressor", "StageCycle"]


@dataclass(frozen=True, slots=True)
class StageCycle:
    """One cycle of a (de)compressor's ports, for comparing RTL and model.

    Attributes
    ----------
    i_ready, o_valid : bool
    o_data : int
    o_last : bool
    """

    i_ready: bool
    o_valid: bool
    o_data: int
    o_last: bool


def _word(data: bytes | bytearray, start: int) -> int:
    return int.from_bytes(data[start:start + 4], "little")


class Compressor:
    """The input register, a block in fill (bytes packed so far, its mask, words, closed)
    and one in drain."""

    def __init__(self) -> None:
        self.incoming: tuple[int, bool, bool] | None = None   # (data, last, end) taken
        self.packed = bytearray()    # the fill block's non-zero bytes, in order
        self.mask = 0
        self.count = 0               # the fill block's words
        self.closed = False          # the fill block is whole, waiting for the drain
        self.tlast = False           # a word of the fill block had TLAST
        self.drain: list[int] = []   # mask and packed words still to leave
        self.drain_last = False      # TLAST on the drain's last word

    @property
    def empty(self) -> bool:
        """No word inside."""
        return self.incoming is None and not self.count and not self.drain

    def state(self) -> tuple:
        return (self.incoming, bytes(self.packed), self.mask, self.count, self.closed,
                self.tlast, tuple(self.drain), self.drain_last)

    @property
    def open(self) -> bool:
        """A block has words and takes more whatever the mode now (its mode was read at
        its first word): the input register's word did not end it, or, with the input
        register empty, the fill holds words and is not closed."""
        if self.incoming is not None:
            return not self.incoming[2] and (self.closed or self.count != BLOCK_WORDS - 1)
        return self.count > 0 and not self.closed

    def joins(self, header: bool, compress: bool) -> bool:
        """A word offered now goes into a block (else it is to pass through)."""
        return not header and (self.open or compress)

    def i_ready(self, header: bool, compress: bool, o_ready: bool) -> bool:
        """Whether a word offered now is taken (from registers, and ``o_ready`` for a word
        that passes through)."""
        if self.joins(header, compress):
            return self.incoming is None or not self.closed
        return self.empty and o_ready

    def outputs(self, i_valid: bool, i_data: int, i_last: bool, header: bool,
                compress: bool) -> tuple[bool, int, bool]:
        """``o``: ``(valid, data, last)``."""
        if self.drain:
            return True, self.drain[0], self.drain_last and len(self.drain) == 1
        if i_valid and self.empty and not self.joins(header, compress):
            return True, i_data, i_last
        return False, 0, False

    def sample(self, i_valid: bool, i_data: int, i_last: bool, header: bool, compress: bool,
               o_ready: bool) -> StageCycle:
        """Every port this cycle."""
        valid, data, last = self.outputs(i_valid, i_data, i_last, header, compress)
        return StageCycle(self.i_ready(header, compress, o_ready), valid, data, last)

    def clock(self, taken: tuple[int, bool, bool] | None, header: bool, compress: bool,
              sent: bool) -> None:
        """The edge. ``taken``: the word ``(data, last, end)`` taken this cycle (``end``:
        its BD's last word); ``sent``: ``o`` was taken."""
        joins = taken is not None and self.joins(header, compress)
        drained = sent and len(self.drain) <= 1
        if sent and self.drain:
            self.drain.pop(0)
        if self.incoming is not None and not self.closed:
            self._fill(*self.incoming)
            self.incoming = None
        if joins:
            self.incoming = taken
        if self.closed and (drained or not self.drain):
            padded = bytes(self.packed) + bytes(-len(self.packed) % 4)
            self.drain = [self.mask] + [_word(padded, s) for s in range(0, len(padded), 4)]
            self.drain_last = self.tlast
            self.packed, self.mask, self.count = bytearray(), 0, 0
            self.closed = self.tlast = False

    def _fill(self, data: int, last: bool, end: bool) -> None:
        """The input register's word joins the fill block."""
        for k, byte in enumerate(int(data).to_bytes(4, "little")):
            if byte:
                self.mask |= 1 << (4 * self.count + k)
                self.packed.append(byte)
        self.count += 1
        self.tlast |= bool(last)
        self.closed = end or self.count == BLOCK_WORDS


class Decompressor:
    """The block held (its mask, size, packed bytes so far, the next word to make) and the
    output register."""

    def __init__(self) -> None:
        self.held = False
        self.mask = 0
        self.size = 0                # words in the block
        self.need = 0                # packed words still to come
        self.packed = bytearray()
        self.position = 0            # the next word to make
        self.tlast = False
        self.out: tuple[int, bool] | None = None    # the output register: (data, last)

    @property
    def empty(self) -> bool:
        return not self.held and self.out is None

    def state(self) -> tuple:
        return (self.held, self.mask, self.size, self.need, bytes(self.packed),
                self.position, self.tlast, self.out)

    def _before(self, word: int) -> int:
        """Packed bytes of the block's words before ``word``."""
        return (self.mask & ((1 << 4 * word) - 1)).bit_count()

    def i_ready(self, raw: bool, compress: bool, o_ready: bool, settled: bool = True) -> bool:
        """Whether the stream word now is taken: a packed word the block needs, a mask, or
        a word passed through (``raw``: a packet header; ``compress``: the BD's mode;
        ``settled``: the stage head held the same BD in the cycle before, which a mask
        waits for)."""
        if self.held:
            return self.need > 0
        if self.out is not None:
            return False
        return settled if compress and not raw else o_ready

    def took(self, i_valid: bool, raw: bool, compress: bool, sent: bool,
             settled: bool = True) -> bool:
        """Whether the stream word offered this cycle was taken, ``sent`` saying whether
        ``o`` was (a word passing through is taken with the word it gives)."""
        if self.held or (self.out is None and compress and not raw):
            return i_valid and self.i_ready(raw, compress, False, settled)
        return i_valid and sent and self.out is None

    def outputs(self, i_valid: bool, i_data: int, i_last: bool, raw: bool,
                compress: bool) -> tuple[bool, int, bool]:
        """``o``: ``(valid, data, last)``."""
        if self.out is not None:
            return True, *self.out
        if not self.held and i_valid and (raw or not compress):
            return True, i_data, i_last
        return False, 0, False

    def sample(self, i_valid: bool, i_data: int, i_last: bool, raw: bool, compress: bool,
               o_ready: bool, settled: bool = True) -> StageCycle:
        """Every port this cycle."""
        valid, data, last = self.outputs(i_valid, i_data, i_last, raw, compress)
        return StageCycle(self.i_ready(raw, compress, o_ready, settled), valid, data, last)

    def _word(self) -> tuple[int, bool] | None:
        """The block's next word and its TLAST, once its packed bytes have come."""
        p = self.position
        if self._before(p + 1) > len(self.packed):
            return None
        start = self._before(p)
        data = bytearray(4)
        for k in range(4):
            if self.mask >> (4 * p + k) & 1:
                data[k] = self.packed[start]
                start += 1
        return _word(data, 0), self.tlast and p == self.size - 1

    def clock(self, taken: tuple[int, bool] | None, raw: bool, compress: bool,
              remaining: int, sent: bool) -> None:
        """The edge. ``taken``: the stream word ``(data, last)`` taken; ``remaining``: the
        BD's words still to write (a mask taken now sizes its block by it); ``sent``:
        ``o`` was taken."""
        held = self.held
        made = self._word() if held and (self.out is None or sent) else None
        if sent:
            self.out = None
        if made is not None:
            self.out = made
            self.position += 1
            self.held = self.position < self.size
        if taken is None:
            return
        data, last = taken
        if held:
            self.packed += int(data).to_bytes(4, "little")
            self.need -= 1
            self.tlast |= bool(last)
        elif compress and not raw:
            self.size = max(1, min(BLOCK_WORDS, remaining))
            self.mask = int(data) & ((1 << 4 * self.size) - 1)
            self.need = -(-self.mask.bit_count() // 4)
            self.packed, self.position, self.held = bytearray(), 0, True
            self.tlast = bool(last)
