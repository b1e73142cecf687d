"""The compressor (MM2S) and decompressor (S2MM) of a channel, cycle by cycle.

The format is :mod:`aiedma.model.bd.compression`'s; this module is its timing, the model
of ``hdl/compress.py`` (docs/cycle.md "Compression"). Each block sits on the stream side
of its channel, one word a cycle in and one out at most:

* :class:`Compressor` (MM2S): between the packet stage (headers, TLAST) and the stream.
  A word of a BD with compression in effect joins the open block (its **fill**); a block
  closes with its 8th word or its BD's last, and moves to the **drain** (its mask, then
  its packed words, one a cycle) at the end of the cycle the drain empties, the cycle
  its last word leaves included. While a block is closed and the drain still busy, no
  word is taken (the MM2S datapath stalls behind it). A word of a BD without
  compression, and every packet header, passes straight through (no register) when
  fill and drain are empty, and waits while either holds a block: with compression off
  the channel's cycles are those without a compressor. A block's mask leaves
  ``COMPRESS_LATENCY`` cycle after its last word came in, at the earliest.
* :class:`Decompressor` (S2MM): between the stream and the packet stage. With
  decompression in effect and no block held, the next stream word is a block's mask: it
  is taken and the block holds ``min(8, words left in the BD)`` words; the block's packed
  words are taken one a cycle while it still needs some; its words are given one a cycle
  from the cycle after the mask (``DECOMPRESS_LATENCY``), each once the packed words
  holding its bytes have come. The next mask is taken in the cycle after the block's last
  word left. A word of a BD without decompression, and a packet header, passes straight
  through when no block is held. TLAST on any word of a block is carried by the block's
  last word (finish on TLAST then ends the BD there).

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
    """A block in fill (bytes packed so far, its mask, words, closed) and one in drain."""

    def __init__(self) -> None:
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
        return not self.count and not self.drain

    def state(self) -> tuple:
        return (bytes(self.packed), self.mask, self.count, self.closed, self.tlast,
                tuple(self.drain), self.drain_last)

    def joins(self, header: bool, compress: bool) -> bool:
        """A word offered now goes into a block (else it is to pass through)."""
        return not header and (self.count > 0 or compress)

    def i_ready(self, header: bool, compress: bool, o_ready: bool) -> bool:
        """Whether a word offered now is taken (from registers, and ``o_ready`` for a word
        that passes through)."""
        if self.joins(header, compress):
            return not self.closed
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
        drained = sent and len(self.drain) <= 1
        if sent and self.drain:
            self.drain.pop(0)
        if taken is not None and self.joins(header, compress):
            data, last, end = taken
            for k, byte in enumerate(int(data).to_bytes(4, "little")):
                if byte:
                    self.mask |= 1 << (4 * self.count + k)
                    self.packed.append(byte)
            self.count += 1
            self.tlast |= bool(last)
            self.closed = end or self.count == BLOCK_WORDS
        if self.closed and (drained or not self.drain):
            padded = bytes(self.packed) + bytes(-len(self.packed) % 4)
            self.drain = [self.mask] + [_word(padded, s) for s in range(0, len(padded), 4)]
            self.drain_last = self.tlast
            self.packed, self.mask, self.count = bytearray(), 0, 0
            self.closed = self.tlast = False


class Decompressor:
    """The block held: its mask, its size, its packed bytes so far, the next word out."""

    def __init__(self) -> None:
        self.held = False
        self.mask = 0
        self.size = 0                # words in the block
        self.need = 0                # packed words still to come
        self.packed = bytearray()
        self.position = 0            # the next word to give
        self.tlast = False

    @property
    def empty(self) -> bool:
        return not self.held

    def state(self) -> tuple:
        return (self.held, self.mask, self.size, self.need, bytes(self.packed),
                self.position, self.tlast)

    def _before(self, word: int) -> int:
        """Packed bytes of the block's words before ``word``."""
        return (self.mask & ((1 << 4 * word) - 1)).bit_count()

    def i_ready(self, raw: bool, compress: bool, o_ready: bool) -> bool:
        """Whether the stream word now is taken: a packed word the block needs, a mask, or
        a word passed through (``raw``: a packet header; ``compress``: the BD's mode)."""
        if self.held:
            return self.need > 0
        return (compress and not raw) or o_ready

    def outputs(self, i_valid: bool, i_data: int, i_last: bool, raw: bool,
                compress: bool) -> tuple[bool, int, bool]:
        """``o``: ``(valid, data, last)``."""
        if not self.held:
            if i_valid and (raw or not compress):
                return True, i_data, i_last
            return False, 0, False
        p = self.position
        if self._before(p + 1) > len(self.packed):
            return False, 0, False
        start = self._before(p)
        data = bytearray(4)
        for k in range(4):
            if self.mask >> (4 * p + k) & 1:
                data[k] = self.packed[start]
                start += 1
        return True, _word(data, 0), self.tlast and p == self.size - 1

    def sample(self, i_valid: bool, i_data: int, i_last: bool, raw: bool, compress: bool,
               o_ready: bool) -> StageCycle:
        """Every port this cycle."""
        valid, data, last = self.outputs(i_valid, i_data, i_last, raw, compress)
        return StageCycle(self.i_ready(raw, compress, o_ready), valid, data, last)

    def clock(self, taken: tuple[int, bool] | None, raw: bool, compress: bool,
              remaining: int, sent: bool) -> None:
        """The edge. ``taken``: the stream word ``(data, last)`` taken; ``remaining``: the
        BD's words still to write (a mask taken now sizes its block by it); ``sent``:
        ``o`` was taken."""
        if self.held and sent:
            self.position += 1
            if self.position == self.size:
                self.held = False
        if taken is None:
            return
        data, last = taken
        if self.held and self.need:
            self.packed += int(data).to_bytes(4, "little")
            self.need -= 1
            self.tlast |= bool(last)
        elif not self.held and compress and not raw:
            self.size = max(1, min(BLOCK_WORDS, remaining))
            self.mask = int(data) & ((1 << 4 * self.size) - 1)
            self.need = -(-self.mask.bit_count() // 4)
            self.packed, self.position, self.held = bytearray(), 0, True
            self.tlast = bool(last)

