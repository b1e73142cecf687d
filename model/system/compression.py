"""A channel's stream seen through its compressor (MM2S) or decompressor (S2MM), per cycle.

:class:`~aiedma.model.system.channel.Channel` runs these while (de)compression can be in
effect (its control bit is set, or a block is still inside); otherwise its stream stage
talks to the stream itself, so a channel without compression has the cycles it has
without this module. The blocks' timing is :mod:`aiedma.model.cycle.compression`, the
format :mod:`aiedma.model.bd.compression`.

Each port is made at the start of a cycle and :meth:`finish` ends the cycle: it moves
what the block gives onto the stream (MM2S) or takes the word the block took off it
(S2MM), and clocks the block.
"""

from __future__ import annotations

from ..cycle.compression import Compressor, Decompressor
from .stream import Beat, Stream

__all__ = ["CompressingPort", "DecompressingPort"]


class CompressingPort:
    """The MM2S stream as the packet stage pushes to it: through a :class:`Compressor`.

    Parameters
    ----------
    compressor : Compressor
    stream : Stream
    compress : bool
        The stage head's BD has compression in effect (its ``enable_compression`` and
        the channel's ``compression_enable``).
    """

    def __init__(self, compressor: Compressor, stream: Stream | None, compress: bool) -> None:
        self.compressor, self.stream, self.compress = compressor, stream, compress
        self.room = stream is not None and stream.can_push()
        self.taken: tuple[int, bool, bool] | None = None
        self.header = False

    def can_push(self, header: bool = False) -> bool:
        """A word (``header``: a packet header) pushed now is taken."""
        return self.compressor.i_ready(header, self.compress, self.room)

    def push(self, beat: Beat, end: bool = False, header: bool = False) -> None:
        """Offer ``beat`` (taken: :meth:`can_push` said so); ``end``: its BD's last word."""
        self.taken, self.header = (beat.data, beat.last, end), header

    def finish(self) -> bool:
        """The cycle's end: the compressor's word onto the stream; True if one moved."""
        taken, compressor = self.taken, self.compressor
        valid, data, last = compressor.outputs(taken is not None, taken[0] if taken else 0,
                                               bool(taken and taken[1]), self.header,
                                               self.compress)
        sent = valid and self.room
        if sent:
            self.stream.push(Beat(data, last))
        compressor.clock(taken, self.header, self.compress, sent)
        return sent


class DecompressingPort:
    """The S2MM stream as the packet stage pops from it: through a :class:`Decompressor`.

    Parameters
    ----------
    decompressor : Decompressor
    stream : Stream
    raw : bool
        The next word is the stage head's packet header (it passes as it is).
    compress : bool
        The stage head's BD has decompression in effect.
    settled : bool
        The stage head held the same BD in the cycle before (a mask waits for it).
    """

    def __init__(self, decompressor: Decompressor, stream: Stream | None, raw: bool,
                 compress: bool, settled: bool) -> None:
        self.decompressor, self.stream = decompressor, stream
        self.raw, self.compress, self.settled = raw, compress, settled
        self.name = stream.name if stream is not None else "-"
        self.word_in = stream is not None and stream.can_pop()
        self.beat = stream.peek() if self.word_in else Beat(0)
        valid, data, last = decompressor.outputs(self.word_in, self.beat.data, self.beat.last,
                                                 raw, compress)
        self.valid, self.out, self.sent = valid, Beat(data, last), False

    def can_pop(self) -> bool:
        return self.valid

    def peek(self) -> Beat:
        return self.out

    def pop(self) -> Beat:
        self.sent = True
        return self.out

    def finish(self, remaining: int) -> None:
        """The cycle's end: the stream word the decompressor took is popped; ``remaining``
        is the stage head's words still to write (a mask taken now sizes its block)."""
        decompressor = self.decompressor
        took = decompressor.took(self.word_in, self.raw, self.compress, self.sent,
                                 self.settled)
        if took:
            self.stream.pop()
        decompressor.clock((self.beat.data, self.beat.last) if took else None, self.raw,
                           self.compress, remaining, self.sent)
