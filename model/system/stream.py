"""AXI4-Stream FIFOs between channels and kernels, packet split / merge, sources and sinks.

A :class:`Stream` carries :class:`Beat` words (32-bit ``data`` and ``last``, the
TLAST flag) under valid/ready rules: a producer pushes only when there is room,
a consumer pops only what is there, and nothing is dropped or invented.

Packet switching (docs/bd.md "Packets"): a packet is a header word followed by data
words up to the one with TLAST. :class:`PacketSplit` routes each packet by its
header's packet ID; :class:`PacketMerge` interleaves whole packets from its
inputs and tags each with its input's packet ID. Headers are checked with
:func:`.packet.parse_packet_header` (reserved bits, parity).

Decisions (the spec leaves these open):

* **decision**: a stream's depth defaults to 2 words, a skid buffer: full rate with
  a push and a pop in the same cycle, and the smallest depth that gives it under
  two-phase cycles (see :mod:`.scheduler`).
* **decision**: ``pktsplit`` forwards the whole packet, header included; the
  *receiver* reads the header, checks it and drops it (an S2MM BD with
  ``enable_packet``, :class:`StreamSink` with ``drop_headers``, a packet kernel
  port). ``drop_header=True`` on the split models a stream-switch port that drops
  it instead.
* **decision**: ``pktmerge`` switches inputs only at packet boundaries (a packet is
  never interleaved with another) and picks the next input round-robin.
* **decision**: a stream pushed while full is a model bug (a producer that ignored
  ``ready``) and raises; no agent here does it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable, Iterable, Mapping, Sequence
from itertools import repeat
from typing import NamedTuple

import numpy as np

from ..bd.packet import packet_header, parse_packet_header
from ..errors import AiedmaError, PacketError, field_error
from .scheduler import NEVER, FastPlan, Stall

__all__ = [
    "STREAM_DEPTH",
    "Beat",
    "PacketMerge",
    "PacketSplit",
    "Stream",
    "StreamError",
    "StreamSink",
    "StreamSource",
    "data_beats",
]

STREAM_DEPTH = 2
"""Default stream FIFO depth in words."""


_PATTERN_SCAN = 4096
"""Cycles of a sink's ready pattern looked ahead for one fast-path jump."""


class StreamError(AiedmaError):
    """A stream rule is broken: a push into a full stream, a packet with no route."""


class Beat(NamedTuple):
    """One stream word: 32-bit ``data`` and ``last`` (TLAST).

    A named tuple, not a dataclass: the system model makes one per word moved, and
    a tuple is the cheapest immutable record Python builds.
    """

    data: int
    last: bool = False


def data_beats(words: Iterable[int]) -> list[Beat]:
    """Beats without TLAST carrying ``words`` (plain ints), as a fast-path jump moves them.

    ``tuple.__new__`` builds each named tuple in C: half the time of ``Beat(word)``, which
    goes through the named tuple's Python ``__new__`` (a jump moves 10**5 words).
    """
    return list(map(tuple.__new__, repeat(Beat), zip(words, repeat(False))))


class Stream:
    """A FIFO of :class:`Beat` with valid/ready rules and two-phase cycles.

    Parameters
    ----------
    name : str
        Shown in reports and errors.
    depth : int
        Capacity in words.

    Notes
    -----
    Within a cycle a consumer sees only the words committed before the cycle, and
    a producer sees only the room there was before the cycle (less what it pushed);
    :meth:`commit` ends the cycle. So the order in which agents step does not matter.

    Examples
    --------
    >>> s = Stream("s", depth=2)
    >>> s.push(Beat(7)); s.can_pop()
    False
    >>> s.commit(); s.pop()
    Beat(data=7, last=False)
    """

    def __init__(self, name: str, depth: int = STREAM_DEPTH) -> None:
        if depth < 1:
            raise field_error(StreamError, "depth", depth, f"stream {name} needs depth >= 1")
        self.name = name
        self.depth = depth
        self.pushed = 0
        self._items: deque[Beat] = deque()
        self._incoming: list[Beat] = []
        self._start = 0
        self._run: np.ndarray | None = None   # words a jump pushed after _items (bulk_push_words)
        self._run_last = False                # the run's final word has TLAST

    def __len__(self) -> int:
        return len(self._items) + len(self._incoming)

    def __repr__(self) -> str:
        return f"Stream({self.name!r}, depth={self.depth}, holding={len(self)})"

    def can_push(self) -> bool:
        """``ready``: room for one more word this cycle."""
        return self._start + len(self._incoming) < self.depth

    def push(self, beat: Beat) -> None:
        """Offer a word that the consumer may take from the next cycle on."""
        if not self.can_push():
            raise field_error(StreamError, "push", beat.data,
                              f"stream {self.name} is full (depth {self.depth}); a "
                              "producer pushes only when the stream is ready")
        self._incoming.append(beat)
        self.pushed += 1

    def can_pop(self) -> bool:
        """``valid``: a committed word is there."""
        return bool(self._items)

    def peek(self) -> Beat:
        """The oldest committed word, not taken."""
        if not self._items:
            raise field_error(StreamError, "pop", self.name, "the stream has no word (not valid)")
        return self._items[0]

    def pop(self) -> Beat:
        """Take the oldest committed word."""
        beat = self.peek()
        self._items.popleft()
        return beat

    def commit(self) -> None:
        """End of cycle: this cycle's pushes become visible, pops free their room."""
        incoming = self._incoming
        if incoming:
            self._items.extend(incoming)
            incoming.clear()
        self._start = len(self._items)

    # The fast path (:mod:`.scheduler`): over a jump a stream's producer pushes as many
    # words as its consumer pops, one each per cycle, so its fill ends where it began;
    # every push of the jump is made before every pop.

    # A jump's words may pass as one array (bulk_push_words, bulk_pop_words): a jump moves
    # up to 10**5 words, and a Beat for each costs more than the rest of the jump.

    def bulk_push(self, beats: Iterable[Beat]) -> None:
        """Append the words a producer pushes over a fast-path jump."""
        self.settle()
        before = len(self._items)
        self._items.extend(beats)
        self.pushed += len(self._items) - before

    def bulk_push_words(self, words: np.ndarray, last: bool = False) -> None:
        """Append the words a producer pushes over a fast-path jump, as one array of data
        words without TLAST (with ``last``, the final one has it), kept as they are until
        the consumer's bulk pop of the same jump takes them."""
        self.settle()
        self._run, self._run_last = words, last
        self.pushed += words.size

    def bulk_pop(self, count: int) -> list[Beat]:
        """Take the ``count`` oldest words a consumer pops over a fast-path jump."""
        self.settle()
        items = self._items
        if count > len(items):
            raise field_error(StreamError, "pop", self.name,
                              f"a jump pops {count} words and {len(items)} are there")
        if count == len(items):
            taken = list(items)
            items.clear()
            return taken
        popleft = items.popleft
        return [popleft() for _ in repeat(None, count)]

    def bulk_pop_words(self, count: int) -> tuple[np.ndarray, list[int]]:
        """Take the ``count`` oldest words a consumer pops over a fast-path jump, as their
        data (int64) and the positions among them of the words with TLAST."""
        items, run = self._items, self._run
        held = 0 if run is None else run.size
        if count > len(items) + held:
            raise field_error(StreamError, "pop", self.name,
                              f"a jump pops {count} words and {len(items) + held} are there")
        head = [items.popleft() for _ in repeat(None, min(count, len(items)))]
        lasts = [k for k, beat in enumerate(head) if beat.last]
        words = np.fromiter((beat.data for beat in head), dtype=np.int64, count=len(head))
        if run is not None:
            rest = count - len(head)
            words = np.concatenate((words, run[:rest]))
            if self._run_last and rest == held:
                lasts.append(count - 1)
            self._run = run[rest:]
            self.settle()
        return words, lasts

    def settle(self) -> None:
        """Make the words of a jump's array, if any are left, beats like the others (the
        scheduler calls it at the end of every jump)."""
        run, self._run = self._run, None
        if run is None or not run.size:
            return
        beats = data_beats(run.tolist())
        if self._run_last:
            beats[-1] = Beat(beats[-1].data, True)
        self._items.extend(beats)


def _header(beat: Beat, where: str) -> int:
    """The packet ID of a header word; a bad header raises with ``where``."""
    try:
        header = parse_packet_header(beat.data)
    except PacketError as error:
        raise PacketError(f"{error}; {where}") from None
    if beat.last:
        raise field_error(PacketError, "last", True,
                          f"a packet header cannot end a packet (no data follows); {where}")
    return header.packet_id


class StreamSource:
    """Pushes given words into a stream, one per cycle while it is ready.

    Parameters
    ----------
    name : str
    output : Stream
    words : iterable of int or Beat
        Plain ints become beats without TLAST, except the very last word.
    """

    def __init__(self, name: str, output: Stream, words: Iterable[int | Beat]) -> None:
        self.name = name
        self.output = output
        if isinstance(words, np.ndarray) and words.ndim == 1 and words.dtype.kind in "iu":
            self._words = words.astype(np.int64)   # plain ints: TLAST on the last one only
            self._lasts = np.zeros(words.size, dtype=bool)
            self._lasts[-1:] = True
        else:
            items = list(words)
            last = len(items) - 1
            beats = [w if isinstance(w, Beat) else Beat(int(w), i == last)
                     for i, w in enumerate(items)]
            self._words = np.fromiter((b.data for b in beats), dtype=np.int64,
                                      count=len(beats))
            self._lasts = np.fromiter((b.last for b in beats), dtype=bool, count=len(beats))
        self._next = 0   # the next word to push

    @property
    def busy(self) -> bool:
        """Words are left to send."""
        return self._next < self._words.size

    def step(self, cycle: int) -> Stall | None:
        """Push the next word if the stream is ready."""
        if not self.busy:
            return Stall("idle")
        if not self.output.can_push():
            return Stall("backpressure", detail=self.output.name)
        k = self._next
        self.output.push(Beat(int(self._words[k]), bool(self._lasts[k])))
        self._next = k + 1
        return None

    def commit(self) -> None:
        """Nothing is deferred."""

    def ports(self) -> tuple[Stream, ...]:
        """The output stream."""
        return (self.output,)

    # -- the fast path (:class:`.scheduler.Steady`) --

    def steady_state(self) -> Hashable:
        """Words left or not."""
        return self.busy

    def next_event(self, last: int, moved: bool) -> int:
        """A pushing source pushes one word a cycle until it has none: the cycle after
        its last word is its first idle one."""
        return last + self._words.size - self._next + 1 if moved else NEVER

    def plan(self, cycles: int, moved: bool) -> FastPlan:
        """Push ``cycles`` words (as one array unless a TLAST comes before the last)."""
        if not moved:
            return FastPlan()
        start, end = self._next, self._next + cycles

        def push() -> None:
            words, lasts = self._words[start:end], self._lasts[start:end]
            if lasts[:-1].any():
                self.output.bulk_push([Beat(int(w), bool(t)) for w, t in zip(words, lasts,
                                                                              strict=True)])
            else:
                self.output.bulk_push_words(words, last=bool(lasts[-1]))
            self._next = end

        return FastPlan(push=push)


class StreamSink:
    """Takes every word a stream offers, one per cycle, and keeps them.

    Parameters
    ----------
    name : str
    input : Stream
    expect : int, optional
        Words (headers excluded) it waits for; it is busy until it has them.
        Either way it is busy while words wait at its input.
    drop_headers : bool
        The first word of each packet (after a TLAST, and at the start) is a
        packet header: check it and drop it, recording its packet ID.
    ready : sequence of bool, optional
        Per cycle, whether it may take a word (backpressure on purpose); high
        after the pattern ends, and always high by default.

    Attributes
    ----------
    beats : list of Beat
        The words kept, in order.
    packet_ids : list of int
        The packet ID of every header dropped.
    """

    def __init__(self, name: str, input: Stream, expect: int | None = None,
                 drop_headers: bool = False, ready: Sequence[bool] | None = None) -> None:
        self.name = name
        self.ready = ready
        self.input = input
        self.expect = expect
        self.drop_headers = drop_headers
        self.packet_ids: list[int] = []
        self._at_header = drop_headers
        self._words: list[int] = []   # the kept words' data
        self._tlast: list[int] = []   # positions among them of the words with TLAST

    @property
    def beats(self) -> list[Beat]:
        """The words kept, in order."""
        tlast = set(self._tlast)
        return [Beat(word, k in tlast) for k, word in enumerate(self._words)]

    @property
    def data(self) -> list[int]:
        """The kept words' data."""
        return list(self._words)

    @property
    def busy(self) -> bool:
        """Words wait at its input, or it still expects words."""
        return len(self.input) > 0 or (self.expect is not None
                                       and len(self._words) < self.expect)

    def step(self, cycle: int) -> Stall | None:
        """Take one word if there is one (and the ready pattern allows)."""
        if self.ready is not None and cycle < len(self.ready) and not self.ready[cycle]:
            # Holding off is a choice that ends: never a deadlock.
            return Stall("idle", progress=self.busy, detail=f"{self.name} holds off")
        if not self.input.can_pop():
            waiting = self.expect is not None and len(self._words) < self.expect
            return Stall("empty" if waiting else "idle", detail=self.input.name)
        beat = self.input.pop()
        if self._at_header:
            self.packet_ids.append(_header(beat, f"received by {self.name}"))
            self._at_header = False
            return None
        if beat.last:
            self._tlast.append(len(self._words))
            self._at_header = self.drop_headers
        self._words.append(beat.data)
        return None

    def commit(self) -> None:
        """Nothing is deferred."""

    def ports(self) -> tuple[Stream, ...]:
        """The input stream."""
        return (self.input,)

    # -- the fast path (:class:`.scheduler.Steady`) --

    def steady_state(self) -> Hashable:
        """Whether the next word is a header; whether it still expects words."""
        return self._at_header, self.busy

    def _ready_at(self, cycle: int) -> bool:
        return self.ready is None or cycle >= len(self.ready) or bool(self.ready[cycle])

    def next_event(self, last: int, moved: bool) -> int:
        """Where the ready pattern changes, or after the last expected word is in.

        With headers to drop, a popped TLAST decides what the next word is, so a
        sink that drops headers does not jump while it takes words.
        """
        if moved and self.drop_headers:
            return last + 1
        event = NEVER
        if moved and self.expect is not None and len(self._words) < self.expect:
            event = last + self.expect - len(self._words)   # busy ends with the last word
        # ``last`` inside the pattern: the next cycle may be its first one after, where
        # the sink is ready again (a pattern ending low changes there).
        if self.ready is not None and last < len(self.ready):
            now, end = self._ready_at(last), min(len(self.ready), last + 1 + _PATTERN_SCAN)
            change = next((t for t in range(last + 1, end) if self._ready_at(t) != now), None)
            if change is not None:
                event = min(event, change)
            elif end < len(self.ready):
                event = min(event, end)   # looked no further: stop there and look again
            elif not now:
                event = min(event, len(self.ready))   # high again after the pattern
        return event

    def plan(self, cycles: int, moved: bool) -> FastPlan:
        """Take ``cycles`` words."""
        if not moved:
            return FastPlan()

        def pop() -> None:
            words, lasts = self.input.bulk_pop_words(cycles)
            self._tlast += [len(self._words) + k for k in lasts]
            self._words += words.tolist()

        return FastPlan(pop=pop)


class PacketSplit:
    """``pktsplit``: route each packet to the output its header's packet ID names.

    Parameters
    ----------
    name : str
    input : Stream
    outputs : mapping of int to Stream, or sequence of Stream
        Packet ID to output; a sequence maps IDs 0, 1, ... in order.
    drop_header : bool
        Drop the header here instead of forwarding it to the receiver.

    Raises
    ------
    PacketError
        (while stepping) a header with reserved bits set or bad parity.
    StreamError
        (while stepping) a packet ID with no output.
    """

    def __init__(self, name: str, input: Stream, outputs: Mapping[int, Stream] | Sequence[Stream],
                 drop_header: bool = False) -> None:
        self.name = name
        self.input = input
        self.outputs = dict(outputs) if isinstance(outputs, Mapping) else dict(enumerate(outputs))
        if not self.outputs:
            raise field_error(StreamError, "outputs", [], f"{name} needs at least one output")
        self.drop_header = drop_header
        self.packets = 0
        self._route: Stream | None = None

    @property
    def busy(self) -> bool:
        """A packet is half through, or words wait at the input."""
        return self._route is not None or self.input.can_pop()

    def step(self, cycle: int) -> Stall | None:
        """Move one word of the current packet (or read the next header)."""
        if not self.input.can_pop():
            return Stall("empty" if self._route is not None else "idle", detail=self.input.name)
        beat = self.input.peek()
        if self._route is None:
            where = f"{self.name}, packet {self.packets}"
            packet_id = _header(beat, where)
            if packet_id not in self.outputs:
                ids = ", ".join(str(i) for i in sorted(self.outputs))
                raise field_error(StreamError, "packet_id", packet_id,
                                  f"{self.name} has outputs for packet IDs {ids} only; {where}")
            route = self.outputs[packet_id]
            if not self.drop_header and not route.can_push():
                return Stall("backpressure", detail=route.name)
            self.input.pop()
            self._route = route
            self.packets += 1
            if not self.drop_header:
                route.push(beat)
            return None
        if not self._route.can_push():
            return Stall("backpressure", detail=self._route.name)
        self._route.push(self.input.pop())
        if beat.last:
            self._route = None
        return None

    def commit(self) -> None:
        """Nothing is deferred."""

    def ports(self) -> tuple[Stream, ...]:
        """Input and outputs."""
        return (self.input, *self.outputs.values())


class PacketMerge:
    """``pktmerge``: interleave whole packets from several inputs into one stream.

    Parameters
    ----------
    name : str
    inputs : sequence of Stream
    output : Stream
    packet_ids : sequence of int, optional
        The ID that tags each input: the merge sends a header with it before every
        packet (words up to TLAST) from that input. None: the inputs carry their
        own headers, which are checked and passed on.
    packet_type, source_row, source_column : int
        The other fields of inserted headers.
    tagged : sequence of bool, optional
        With ``packet_ids``: input ``k`` already carries its headers (e.g. an MM2S
        with ``enable_packet``); the merge checks each one (parity, and that its
        packet ID is ``packet_ids[k]``) and passes it on instead of inserting one.

    Raises
    ------
    PacketError
        (while stepping) a carried header with reserved bits set or bad parity.
    StreamError
        (while stepping) a carried header whose packet ID is not its input's.
    """

    def __init__(self, name: str, inputs: Sequence[Stream], output: Stream,
                 packet_ids: Sequence[int] | None = None, packet_type: int = 0,
                 source_row: int = 0, source_column: int = 0,
                 tagged: Sequence[bool] | None = None) -> None:
        self.name = name
        self.inputs = tuple(inputs)
        self.output = output
        if not self.inputs:
            raise field_error(StreamError, "inputs", [], f"{name} needs at least one input")
        self.headers: tuple[int | None, ...] | None = None
        self.packet_ids: tuple[int, ...] | None = None
        if tagged is not None and (packet_ids is None or len(tagged) != len(self.inputs)):
            raise field_error(StreamError, "tagged", list(tagged),
                              f"{name} has {len(self.inputs)} inputs; give one flag each, "
                              "with packet_ids")
        if packet_ids is not None:
            if len(packet_ids) != len(self.inputs):
                raise field_error(StreamError, "packet_ids", list(packet_ids),
                                  f"{name} has {len(self.inputs)} inputs; give one ID each")
            self.packet_ids = tuple(packet_ids)
            flags = tuple(tagged) if tagged is not None else (False,) * len(self.inputs)
            self.headers = tuple(None if flag else
                                 packet_header(i, packet_type, source_row, source_column)
                                 for i, flag in zip(packet_ids, flags, strict=True))
        self.packets = 0
        self._current: int | None = None  # input whose packet is going through
        self._header_sent = False
        self._in_packet = False
        self._next = 0

    @property
    def busy(self) -> bool:
        """A packet is half through, or some input holds words."""
        return self._current is not None or any(s.can_pop() for s in self.inputs)

    def step(self, cycle: int) -> Stall | None:
        """Move one word (an inserted header counts as one)."""
        chose = False
        if self._current is None:
            n = len(self.inputs)
            ready = [i for i in ((self._next + k) % n for k in range(n))
                     if self.inputs[i].can_pop()]
            if not ready:
                return Stall("idle")
            self._current, self._next = ready[0], (ready[0] + 1) % n
            self._header_sent = self.headers is None or self.headers[self._current] is None
            self._in_packet = False
            chose = True
        if not self.output.can_push():
            return Stall("backpressure", progress=chose, detail=self.output.name)
        if not self._header_sent:
            self.output.push(Beat(self.headers[self._current]))
            self._header_sent = True
            return None
        source = self.inputs[self._current]
        if not source.can_pop():
            return Stall("empty", progress=chose, detail=source.name)
        beat = source.pop()
        if not self._in_packet and (self.headers is None or self.headers[self._current] is None):
            where = f"{self.name}, input {self._current}"
            packet_id = _header(beat, where)
            if self.packet_ids is not None and packet_id != self.packet_ids[self._current]:
                raise field_error(StreamError, "packet_id", packet_id,
                                  f"input {self._current} of {self.name} carries packet ID "
                                  f"{self.packet_ids[self._current]} only; {where}, packet "
                                  f"{self.packets}")
        self._in_packet = True
        self.output.push(beat)
        if beat.last:
            self._current = None
            self.packets += 1
        return None

    def commit(self) -> None:
        """Nothing is deferred."""

    def ports(self) -> tuple[Stream, ...]:
        """Inputs and output."""
        return (*self.inputs, self.output)
