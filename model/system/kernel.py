"""A graph kernel at cycle level: fill its input buffers from streams, run, drain its outputs.

A :class:`KernelAgent` is the scheduler's view of one ``adf`` kernel with buffer
ports: it takes words from its input streams until every input buffer is full,
calls the kernel's Python function on NumPy arrays, then sends every output
buffer, and does that ``runs`` times. It moves at most one word per cycle.

Decisions (the spec describes the graph, not the core's timing):

* **decision**: the core tile that runs the kernel is not modelled (its DMA, its
  locks, its compute time); the kernel reads and writes streams directly, and its
  function takes no cycles. The memory-tile side of a graph is modelled in full.
* **decision**: a kernel takes input words from whichever input has one (round
  robin) and sends to whichever output has room, so the order in which its
  producers deliver cannot deadlock it artificially.
* **decision**: TLAST is set on the last word of every output buffer (one buffer,
  one packet); a packet input (fed by ``pktsplit`` or ``pktmerge``) reads, checks
  and drops the header at the start of every packet (the first word, and the word
  after every TLAST), whatever the buffer size: packets and runs need not align.
* **decision**: 16- and 8-bit elements pack 2 and 4 to a 32-bit stream word,
  little-endian (element ``2k`` in the low half of word ``k``), as the BD layer
  lowers them (:func:`.lower.word_stream_to_elements`); a kernel sees elements, its
  buffers hold a whole number of words.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

import numpy as np

from ..arch.dtypes import GRAPH_DTYPES, elements_per_word
from ..bd.packet import parse_packet_header
from ..errors import AiedmaError, PacketError, field_error
from .scheduler import NEVER, FastPlan, Stall
from .stream import Beat, Stream

__all__ = ["GRAPH_DTYPES", "KernelAgent", "KernelError", "KernelInput", "KernelOutput",
           "elements_per_word", "from_words", "to_words"]

# GRAPH_DTYPES and elements_per_word are the element-type table's (model/arch/dtypes.py),
# named here too because the graph layer has always imported them from this module.


class KernelError(AiedmaError):
    """A kernel function returned something that does not fit its output buffers."""


def to_words(values: np.ndarray, dtype: str, what: str) -> np.ndarray:
    """Elements of ``dtype`` as ``uint32`` words, sub-word elements packed little-endian.

    Values the type cannot hold, and a count that does not fill whole words, are
    errors naming ``what``.
    """
    np_type = np.dtype(GRAPH_DTYPES[dtype]).newbyteorder("<")
    values = np.asarray(values).ravel()
    converted = values.astype(np_type)
    # Already of the type (a kernel's usual result): every value fits, nothing to check.
    if (values.dtype != np_type and values.dtype.kind in "iub"
            and not np.array_equal(converted, values)):
        bad = values[np.flatnonzero(converted != values)[0]]
        raise field_error(KernelError, what, int(bad), f"does not fit {dtype}")
    per = elements_per_word(dtype)
    if values.size % per:
        raise field_error(KernelError, f"len({what})", values.size,
                          f"{dtype} packs {per} elements to a 32-bit word: send a whole "
                          "number of words")
    return converted.view("<u4").astype(np.uint32)


def from_words(words: Sequence[int] | np.ndarray, dtype: str) -> np.ndarray:
    """``uint32`` words as elements of ``dtype`` (sub-word elements little-endian)."""
    np_type = GRAPH_DTYPES[dtype]
    little = np.asarray(words, dtype=np.uint32).astype("<u4")
    return little.view(np.dtype(np_type).newbyteorder("<")).astype(np_type)


_WORD_TYPES = {name: np.dtype(GRAPH_DTYPES[name]) for name in ("int32", "uint32")}
"""The element types one to a 32-bit word, whose arrays are their words' bits."""


@dataclass
class KernelInput:
    """An input buffer: its stream, its size in words, whether packets arrive on it."""

    stream: Stream
    size: int
    packet: bool = False


@dataclass
class KernelOutput:
    """An output buffer: its stream and its size in words."""

    stream: Stream
    size: int


class KernelAgent:
    """One kernel as a scheduler agent.

    Parameters
    ----------
    name : str
    function : callable
        ``function(*inputs) -> output or tuple of outputs`` (only a tuple means
        several outputs); NumPy arrays of
        ``dtype``, one per port, of the ports' sizes.
    inputs : sequence of KernelInput
    outputs : sequence of KernelOutput
    runs : int
        How many times it runs in the whole simulation.
    dtype : str
        A key of :data:`GRAPH_DTYPES`.

    Attributes
    ----------
    received : list of list of numpy.ndarray
        Per run, the input buffers it was called with (for checks and reports).
    packet_ids : list of list of int
        Per input, the packet ID of every header it read and dropped.
    """

    def __init__(self, name: str, function: Callable, inputs: Sequence[KernelInput],
                 outputs: Sequence[KernelOutput], runs: int, dtype: str = "int32") -> None:
        self.name, self.function, self.dtype = name, function, dtype
        self.inputs, self.outputs = tuple(inputs), tuple(outputs)
        self.runs, self.done = runs, 0
        self.received: list[list[np.ndarray]] = []
        self.packet_ids: list[list[int]] = [[] for _ in self.inputs]
        # Packet state spans runs: a packet may fill several buffers, or a buffer
        # several packets; a header comes first and after every TLAST.
        self._at_header = [p.packet for p in self.inputs]
        # Sizes as plain lists, and the stalls it reports, made once: a kernel is
        # stepped every cycle it is not jumped, and comparing lists runs in C.
        self._in_sizes = [p.size for p in self.inputs]
        self._out_sizes = [p.size for p in self.outputs]
        self._stalls: dict[tuple, Stall] = {}
        self._start_run()

    def _start_run(self) -> None:
        self._buffers: list[list[int]] = [[] for _ in self.inputs]
        self._results: list[list[int]] | None = None
        self._sent = [0] * len(self.outputs)
        self._next_in = self._next_out = 0

    @property
    def busy(self) -> bool:
        """Runs are left."""
        return self.done < self.runs

    def ports(self) -> tuple[Stream, ...]:
        """Its input and output streams."""
        return (*(p.stream for p in self.inputs), *(p.stream for p in self.outputs))

    def commit(self) -> None:
        """Nothing is deferred."""

    def _call(self) -> None:
        arrays = [from_words(b, self.dtype) for b in self._buffers]
        self.received.append(arrays)
        self._results = self.call(arrays)

    def call(self, arrays: Sequence[np.ndarray]) -> list[list[int]]:
        """Run the function on one run's input buffers; each output buffer's words.

        Raises
        ------
        KernelError
            If it returns a number of outputs, or an output of a size, that does not
            fit the output buffers, or values its type cannot hold.
        """
        return [words.tolist() for words in self.call_words(arrays)]

    def call_words(self, arrays: Sequence[np.ndarray]) -> list[np.ndarray]:
        """:meth:`call`, each output buffer's words as a ``uint32`` array (a periodic
        jump writes them into its arrays as they are); an array may share memory with
        what the function returned.

        Raises
        ------
        KernelError
            As :meth:`call`.
        """
        result = self.function(*arrays)
        if (type(result) is np.ndarray and len(self._out_sizes) == 1
                and result.dtype == _WORD_TYPES.get(self.dtype)
                and result.size == self._out_sizes[0]):
            # One output of 32-bit elements of the type and size: nothing to check or
            # pack, its words are its bits (as to_words makes them, but shared).
            return [result.reshape(-1).view(np.uint32)]
        if not self.outputs:
            result = ()  # a sink kernel: whatever it returns goes nowhere
        elif not isinstance(result, tuple):
            result = (result,)  # only a tuple means several outputs; a list is one array
        if len(result) != len(self.outputs):
            raise field_error(KernelError, "outputs", len(result),
                              f"kernel {self.name} has {len(self.outputs)} output(s); its "
                              "function must return one array each")
        words = []
        per = elements_per_word(self.dtype)
        for k, (array, port) in enumerate(zip(result, self.outputs, strict=True)):
            n = np.asarray(array).size
            if n != port.size * per:
                raise field_error(KernelError, f"{self.name}.out[{k}]", n,
                                  f"the function returned {n} elements; the output "
                                  f"buffer holds {port.size * per}")
            words.append(to_words(array, self.dtype, f"{self.name}.out[{k}]"))
        return words

    def step(self, cycle: int) -> Stall | None:
        """Take or send one word; run the function when the inputs are full."""
        if not self.busy:
            return self._stall("idle", ())
        progress = False
        if self._results is None:
            stall = self._take()
            if stall is not False:
                return stall
            self._call()
            progress = True
        if self._all_sent():  # a kernel with no output words ends its run here
            self._end_run()
            return self._stall("idle", (), progress=True)
        return self._send(progress)

    def _all_sent(self) -> bool:
        return self._sent == self._out_sizes

    def _stall(self, cause: str, streams: tuple[str, ...], progress: bool = False) -> Stall:
        """The Stall for ``cause`` on these streams, made once (a Stall is immutable)."""
        key = (cause, streams, progress)
        stall = self._stalls.get(key)
        if stall is None:
            stall = self._stalls[key] = Stall(cause, progress=progress, detail=", ".join(streams))
        return stall

    def _end_run(self) -> None:
        self.done += 1
        self._start_run()

    def _take(self) -> Stall | bool | None:
        """Pop one input word (None), wait (a Stall), or False when every input is full."""
        n = len(self.inputs)
        waiting = [k for k, (b, size) in enumerate(zip(self._buffers, self._in_sizes,
                                                         strict=True)) if len(b) < size]
        if not waiting:
            return False
        for j in range(n):
            k = (self._next_in + j) % n
            port = self.inputs[k]
            if k not in waiting or not port.stream.can_pop():
                continue
            beat = port.stream.pop()
            self._next_in = (k + 1) % n
            if self._at_header[k]:
                try:
                    header = parse_packet_header(beat.data)
                except PacketError as error:
                    raise PacketError(f"{error}; received by {self.name}.in[{k}]") from None
                self.packet_ids[k].append(header.packet_id)
                self._at_header[k] = False
                return None
            self._buffers[k].append(beat.data)
            if port.packet and beat.last:
                self._at_header[k] = True
            return None
        return self._stall("empty", tuple(self.inputs[k].stream.name for k in waiting))

    def _send(self, progress: bool) -> Stall | None:
        n = len(self.outputs)
        for j in range(n):
            k = (self._next_out + j) % n
            port = self.outputs[k]
            if self._sent[k] == port.size or not port.stream.can_push():
                continue
            i = self._sent[k]
            port.stream.push(Beat(self._results[k][i], i == port.size - 1))
            self._sent[k] += 1
            self._next_out = (k + 1) % n
            if self._all_sent():
                self._end_run()
            return None
        full = tuple(p.stream.name for s, p in zip(self._sent, self.outputs, strict=True)
                     if s < p.size)
        return self._stall("backpressure", full, progress)

    # -- the fast path (:class:`.scheduler.Steady`) --

    def steady_state(self) -> Hashable:
        """Runs done, filling or sending, the round-robin pointers, which buffers are
        full or sent, where headers are due; not how far a buffer is."""
        return (self.done, self._results is None, self._next_in, self._next_out,
                tuple(map(int.__ge__, map(len, self._buffers), self._in_sizes)),
                tuple(map(int.__ge__, self._sent, self._out_sizes)),
                tuple(self._at_header))

    def _port(self, moved: bool) -> int:
        """The input (filling) or output (sending) it moved a word on in the last cycle:
        the round robin moved one past it, and stays there while only it moves."""
        if self._results is None:
            return (self._next_in - 1) % len(self.inputs)
        return (self._next_out - 1) % len(self.outputs)

    def next_event(self, last: int, moved: bool) -> int:
        """The cycle it takes the last word of the buffer it fills, or sends the last
        of the buffer it sends (it runs its function, or ends its run, there)."""
        if not moved:
            return NEVER
        k = self._port(moved)
        if self._results is None:
            if self.inputs[k].packet:
                return last + 1   # a TLAST decides where the next header is
            return last + self.inputs[k].size - len(self._buffers[k])
        return last + self.outputs[k].size - self._sent[k]

    def plan(self, cycles: int, moved: bool) -> FastPlan:
        """Take or send ``cycles`` words on the one port it uses."""
        if not moved:
            return FastPlan()
        k = self._port(moved)
        if self._results is None:
            buffer, stream = self._buffers[k], self.inputs[k].stream
            return FastPlan(pop=lambda: buffer.extend(stream.bulk_pop_words(cycles)[0].tolist()))
        port, start = self.outputs[k], self._sent[k]

        def push() -> None:
            words = self._results[k][start:start + cycles]
            port.stream.bulk_push_words(np.asarray(words, dtype=np.int64))
            self._sent[k] = start + cycles

        return FastPlan(push=push)
