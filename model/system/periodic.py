"""The periodic jump: a graph's run whose whole state repeats jumps whole periods at once.

A pipeline of small kernel buffers changes every few cycles, so the fast path
(:mod:`.scheduler`) steps a third of its cycles; but with the same BDs at the same
addresses every one or two iterations, its whole state repeats. :class:`PeriodicJump`
(what ``Graph.run`` hands :class:`~.scheduler.SystemRun` on the fast path):

1. **finds a period**: when the host pushes its first task again, an image of every
   agent (:func:`.period.image`) is compared with the images of the times before
   (:func:`.period.periodicity`): equal but for cycle stamps moved by the period and
   counters moved by a fixed delta, or no jump;
2. **bounds the jump**: ``K`` periods such that no counter reaches its threshold
   (runs, words, tasks, the cycle guard) within a period of the jump's end, and
   the records that grow a period (finished tasks, the host's queue, the sink's TLAST
   positions) repeat;
3. **traces the data of one period**: a deep copy of every agent, each data word
   (memory, streams, registers, kernel buffers) and each input word replaced by a
   *tag*, its kernels' functions by ones that record the tags they get and give new
   ones, runs one period; where each tag ended up is the period's data flow, a map
   from the words at its start, its inputs and its kernel calls' results to the words
   at its end, its kernel calls' inputs and its outputs. The copy's image after the
   period must repeat the real one's (so the tags changed no decision, and no field
   holding data was missed: it would hold a tag);
4. **jumps**: the map applied ``K`` times with NumPy (the kernel functions called on
   the real words, in the traced order), the counters and stamps moved ``K``
   deltas, the records extended, the report's counts added ``K`` periods' worth.

Only agents whose state the images see whole and whose decisions never read data
take part (:data:`PERIODIC_AGENTS` and :func:`_may_take_part`): memory-tile channels
without packets or compression, kernels of 32-bit words without packet inputs,
sources, sinks without headers or a ready pattern still running, the graph's host.
Any other agent, or a period not found, leaves the run to the fast path as before.
"""

from __future__ import annotations

import copy
import enum
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import AiedmaError
from .channel import TASK_QUEUE_DEPTH
from .kernel import GRAPH_DTYPES
from .period import NotPeriodic, Periodicity, StateImage, image, periodicity

__all__ = ["PERIODIC_AGENTS", "PeriodicJump"]

PERIODIC_AGENTS = ("Channel", "KernelAgent", "StreamSource", "StreamSink", "_Controller")
"""The agent classes whose state :func:`.period.image` sees whole (their fields are in
:data:`.period.ROLES` where they may differ a period apart)."""

TAG_BASE = 1 << 30
"""The first tag: above every word the traced copy makes itself (zero padding)."""

IMAGES_KEPT = 4
"""Images compared with a new one: the whole state may repeat only every few times the
host pushes its first task again (buffers of different periods)."""

TRIES = 8
"""Images that find no period before the run stops looking (an image costs about as
much as stepping a hundred cycles)."""

BEYOND = 1 << 29
"""Added to the tags of the input words past the traced period's: no tag of the period
reaches it, so one of these found in the period's words is an input taken too early."""

MARGIN = 1
"""Periods left to step after a jump before any counter's threshold: every replayed
period then ends, as the traced one did, with at least a period's worth of every
counter left, so none reaches its threshold inside one (the host's tasks keep a
channel's queue more, :func:`_periods`)."""


@dataclass
class _Moment:
    """An image and what the scheduler counted up to it."""

    image: StateImage
    words: dict[str, int]
    stalls: dict[str, dict[str, int]]
    lengths: tuple[int, ...]


class PeriodicJump:
    """Finds a run's period and jumps whole periods (see the module text).

    Parameters
    ----------
    host : object
        The graph's host (``_Controller``): its slots' task queues mark the period.
    """

    def __init__(self, host: object) -> None:
        self.host = host
        slots = getattr(host, "slots", ())
        self._queue = slots[0].tasks if slots else None
        self._first = self._queue[0] if self._queue else None
        self._left = len(self._queue) if self._queue is not None else 0
        self._moments: list[_Moment] = []
        self._tries = TRIES if self._first is not None else 0
        self._last_left: int | None = None   # the marking queue's tasks at the last mark
        self.jumps = 0          # periodic jumps taken
        self.jumped = 0         # cycles they covered

    def after_cycle(self, run: object) -> bool:
        """Called after every stepped cycle; True if it jumped."""
        queue = self._queue
        if self._tries <= 0 or len(queue) == self._left:
            return False
        self._left = len(queue)
        pushed = self._pushed()
        if pushed is not self._first:
            return False
        left, earlier = len(queue), self._last_left
        self._last_left = left
        if earlier is None:
            return False   # the run's start: no earlier state can repeat it
        # Tasks between two marks bound the periods a jump could take (a period is one
        # or more of these intervals): too few, and no image is worth its cost.
        used = earlier - left
        if used <= 0:
            return False
        if left // used - MARGIN < 1:
            self._tries = 0
            return False
        if not all(_may_take_part(agent, run.cycles) for agent in run.agents):
            self._tries = 0
            return False
        moment = _moment(run)
        for before in reversed(self._moments):
            try:
                per = periodicity(before.image, moment.image)
            except NotPeriodic:
                continue
            if self._jump(run, before, moment, per):
                # The jump went as far as the nearest threshold allows: no second one.
                self._moments, self._tries = [], 0
                return True
            break
        self._moments = [*self._moments[-(IMAGES_KEPT - 1):], moment]
        self._tries -= 1
        return False

    def _pushed(self) -> object:
        """The task the host pushed last onto the marking slot's channel."""
        channel_queue = self.host.slots[0].channel.queue
        return channel_queue[-1] if channel_queue else None

    def _jump(self, run: object, before: _Moment, after: _Moment, per: Periodicity) -> bool:
        records = _RecordDeltas(before, after)
        if not records.repeat(per.period) or not _settable(before.image, after.image):
            return False
        periods = _periods(run, after.image, per, records)
        if periods < 1:
            self._tries = 0
            return False
        flow = _trace(run, after, per, records)
        if flow is None:
            self._tries = 0
            return False
        flow.replay(periods)
        _advance(after.image, before.image, per.period, periods)
        records.extend(periods, per.period)
        _count(run, before, after, periods)
        run.cycles += periods * per.period
        self._left = len(self._queue)
        self.jumps += 1
        self.jumped += periods * per.period
        return True


def _may_take_part(agent: object, cycle: int) -> bool:
    """The agent's state is all in its image and no decision of it reads a data word."""
    kind = type(agent).__name__
    if kind not in PERIODIC_AGENTS:
        return False
    if kind == "Channel":
        packets = any(bd.enable_packet for bd in agent.dma.bds.values())
        return (type(agent.engine).__name__ == "ChannelEngine" and not packets
                and not agent._compression_bit)
    if kind == "KernelAgent":
        return (agent.dtype in ("int32", "uint32")
                and not any(port.packet for port in agent.inputs))
    if kind == "StreamSink":
        return not agent.drop_headers and (agent.ready is None or cycle >= len(agent.ready))
    return True


def _moment(run: object) -> _Moment:
    img = image((run.agents, run.streams), run.cycles)
    lengths = tuple(len(getattr(owner, name)) for owner, name in img.records)
    return _Moment(img, dict(run.words), {k: dict(v) for k, v in run.stalls.items()}, lengths)


class _RecordDeltas:
    """What each record gained or lost over the period, and the checks that it repeats."""

    def __init__(self, before: _Moment, after: _Moment) -> None:
        self.records = after.image.records
        self.before, self.after = before.lengths, after.lengths

    def repeat(self, period: int) -> bool:
        for (owner, name), a, b in zip(self.records, self.before, self.after, strict=True):
            key = f"{type(owner).__name__}.{name}"
            if key not in _RECORDS:
                return False
            if not _RECORDS[key][0](getattr(owner, name), a, b, period):
                return False
        return True

    def extend(self, periods: int, period: int) -> None:
        for (owner, name), a, b in zip(self.records, self.before, self.after, strict=True):
            key = f"{type(owner).__name__}.{name}"
            _RECORDS[key][1](owner, name, a, b, periods, period)


def _tasks_repeat(tasks, a: int, b: int, period: int) -> bool:
    n = a - b
    return n >= 0 and all(tasks[k] is tasks[k + n] for k in range(len(tasks) - n))


def _tasks_extend(owner, name: str, a: int, b: int, periods: int, period: int) -> None:
    tasks = getattr(owner, name)
    for _ in range((a - b) * periods):
        tasks.popleft()


def _done_repeat(done, a: int, b: int, period: int) -> bool:
    return b >= a   # the traced copy's entries are checked against these (_trace)


def _shifted(entry, cycles: int):
    """``entry`` (a frozen ``TaskDone``) ``cycles`` later: copied through its instance
    dict, since a jump makes thousands and the frozen constructor sets field by field."""
    shifted = object.__new__(type(entry))
    vars(shifted).update(vars(entry))
    vars(shifted)["cycle"] = entry.cycle + cycles
    return shifted


def _done_extend(owner, name: str, a: int, b: int, periods: int, period: int) -> None:
    done = getattr(owner, name)
    last = done[a:b]
    for k in range(1, periods + 1):
        done.extend(_shifted(entry, k * period) for entry in last)


def _by_replay(records, a: int, b: int, period: int) -> bool:
    return True   # the data replay appends these


def _no_extend(owner, name: str, a: int, b: int, periods: int, period: int) -> None:
    pass


_RECORDS: dict[str, tuple[Callable, Callable]] = {
    "_Slot.tasks": (_tasks_repeat, _tasks_extend),
    "Channel.done": (_done_repeat, _done_extend),
    "StreamSink._words": (_by_replay, _no_extend),
    "StreamSink._tlast": (_by_replay, _no_extend),
    "KernelAgent.received": (_by_replay, _no_extend),
}
"""Per record field: whether its entries of a period repeat those of the period before,
and how a jump extends it (the data records are the replay's)."""


def _periods(run: object, img: StateImage, per: Periodicity, records: _RecordDeltas) -> int:
    """Periods to jump: every counter at least :data:`MARGIN` periods from its threshold."""
    room = [(run.max_cycles - run.cycles) // per.period]
    deltas = _deltas_by_owner(img, per)
    for agent in run.agents:
        kind = type(agent).__name__
        step = deltas.get((id(agent), "done" if kind == "KernelAgent" else "_next"), 0)
        if kind == "KernelAgent" and step:
            room.append((agent.runs - agent.done) // step)
        elif kind == "StreamSource" and step:
            room.append((agent._words.size - agent._next) // step)
    for (owner, name), a, b in zip(records.records, records.before, records.after, strict=True):
        kind = type(owner).__name__
        if kind == "_Slot" and a != b:
            # the host runs ahead of the channel by a queue of tasks: keep that many more
            room.append((b - TASK_QUEUE_DEPTH) // (a - b))
        elif kind == "StreamSink" and name == "_words" and b != a and owner.expect is not None:
            room.append((owner.expect - b) // (b - a))
    return min(room) - MARGIN


def _deltas_by_owner(img: StateImage, per: Periodicity) -> dict[tuple[int, str], int]:
    """Each counter's delta by the (id of the) object and attribute holding it."""
    by_text = per.counters
    found = {}
    for path, place in zip(img.paths, img.places, strict=True):
        if place is None:
            continue
        text = "/".join(str(p) for p in path)
        if text in by_text:
            found[(id(place[0]), place[1])] = by_text[text]
    return found


def _advance(after: StateImage, before: StateImage, period: int, periods: int) -> None:
    """Move every stamp and counter that moved over the period ``periods`` more times."""
    for place, a, b in zip(after.places, before.values, after.values, strict=True):
        if a == b:
            continue
        container, key = place
        if isinstance(container, dict | list | deque):
            container[key] += periods * (b - a)
        else:
            object.__setattr__(container, key, getattr(container, key) + periods * (b - a))


def _settable(before: StateImage, after: StateImage) -> bool:
    """Every integer that moved over the period can be set (none sits in a tuple)."""
    return all(place is not None or a == b
               for place, a, b in zip(after.places, before.values, after.values, strict=True))


def _count(run: object, before: _Moment, after: _Moment, periods: int) -> None:
    for name, n in after.words.items():
        run.words[name] += periods * (n - before.words[name])
    for name, causes in after.stalls.items():
        had = before.stalls[name]
        for cause, n in causes.items():
            causes_now = run.stalls[name]
            causes_now[cause] = causes_now.get(cause, 0) + periods * (n - had.get(cause, 0))
    run._shape = None   # the fast path's next jump needs two steady cycles after this


# --- the data: one period traced on a tagged copy, replayed -------------------------------


class _Slots:
    """The data fields of an image, read as one vector of words and written back."""

    def __init__(self, slots: Sequence[tuple]) -> None:
        self.slots = list(slots)

    def read(self) -> np.ndarray:
        chunks: list = []
        for owner, name, item in self.slots:
            value = getattr(owner, name)
            if item is None or value is not None:
                _flatten(value if item is None else value[item], chunks)
        return _join(chunks)

    def write(self, words: np.ndarray) -> None:
        cursor = [words, 0]
        for owner, name, item in self.slots:
            value = getattr(owner, name)
            if item is None or value is None:
                new = _fill(value, cursor)
            else:
                new = (*value[:item], _fill(value[item], cursor), *value[item + 1:])
            if new is not value:
                object.__setattr__(owner, name, new)
        if cursor[1] != words.size:
            raise AssertionError("data slots changed shape")


def _is_beat(value: object) -> bool:
    return isinstance(value, tuple) and getattr(value, "_fields", None) == ("data", "last")


def _flatten(value: object, chunks: list) -> None:
    if value is None:
        return
    if isinstance(value, int | np.integer):
        chunks.append([int(value)])
    elif isinstance(value, np.ndarray):
        chunks.append(value.ravel())
    elif _is_beat(value):
        chunks.append([value.data])
    elif value and all(isinstance(v, int) for v in value):
        chunks.append(list(value))
    else:
        for item in value:
            _flatten(item, chunks)


def _join(chunks: list) -> np.ndarray:
    if not chunks:
        return np.zeros(0, dtype=np.int64)
    return np.concatenate([np.asarray(c, dtype=np.int64) for c in chunks])


def _fill(value: object, cursor: list) -> object:
    """``value`` with its words taken from ``cursor`` (in place where it can be)."""
    words, at = cursor
    if value is None:
        return None
    if isinstance(value, int | np.integer):
        cursor[1] = at + 1
        return int(words[at])
    if isinstance(value, np.ndarray):
        cursor[1] = at + value.size
        value[...] = words[at:at + value.size].reshape(value.shape).astype(value.dtype)
        return value
    if _is_beat(value):
        cursor[1] = at + 1
        return value._replace(data=int(words[at]))
    if isinstance(value, tuple):
        return tuple(_fill(v, cursor) for v in value)
    for k, item in enumerate(value):
        new = _fill(item, cursor)
        if new is not item:
            value[k] = new
    return value


@dataclass
class _Gather:
    """Words taken from the period's universe (index >= 0) or a constant (index -1)."""

    index: np.ndarray
    constant: np.ndarray

    @classmethod
    def of(cls, tags: np.ndarray, size: int) -> _Gather | None:
        index = tags - TAG_BASE
        tagged = (index >= 0) & (index < size)
        if ((tags >= TAG_BASE) & ~tagged).any():
            return None   # a tag from past the period's inputs
        return cls(np.where(tagged, index, -1), np.where(tagged, 0, tags))

    def remapped(self, to: np.ndarray) -> _Take:
        """The same words from a universe laid out anew: universe index ``i`` is
        ``to[i]`` there."""
        tagged = self.index >= 0
        index = np.where(tagged, to[np.maximum(self.index, 0)], 0)
        return _Take(index, None if tagged.all() else ~tagged, self.constant)


class _Take:
    """A gather applied to a row of the replay's universe, as cheaply as its shape
    allows: a slice for consecutive words, an index array, constants put after."""

    def __init__(self, index: np.ndarray, constants: np.ndarray | None,
                 constant: np.ndarray) -> None:
        self.index = index
        self.constants = constants
        self.constant = constant
        self.slice = None
        if (constants is None and index.size
                and np.array_equal(index, np.arange(index[0], index[0] + index.size))):
            self.slice = slice(int(index[0]), int(index[0]) + index.size)

    def take(self, universe: np.ndarray) -> np.ndarray:
        """The words, a new array (``universe`` one row, or rows along the last axis)."""
        if self.slice is not None:
            return universe[..., self.slice].copy()
        words = universe[..., self.index]
        if self.constants is not None:
            words[..., self.constants] = self.constant[self.constants]
        return words


class _Call:
    """One kernel call of the period: whose, what it takes and where its words go."""

    def __init__(self, agent: object, inputs: list[_Take], outputs: int,
                 input_words: np.ndarray) -> None:
        self.agent = agent
        self.inputs = inputs
        self.outputs = outputs   # first universe index of its output words
        self.dtype = np.dtype(GRAPH_DTYPES[agent.dtype])
        # Buffers made of the period's input words alone can be taken for every period
        # of a block before any call (input_words marks those words in a row).
        self.early = [take.constants is None and bool(input_words[take.index].all())
                      for take in inputs]

    def _arrays(self, take: _Take, universe: np.ndarray) -> np.ndarray:
        # 32-bit elements only (_may_take_part): a word is an element, as from_words has it
        return take.take(universe).astype(np.uint32).view(self.dtype)

    def ahead(self, universe: np.ndarray) -> list:
        """The buffers of every row of ``universe`` it can take now (None: not yet)."""
        return [self._arrays(take, universe) if early else None
                for take, early in zip(self.inputs, self.early, strict=True)]

    def run(self, row: np.ndarray, k: int, ahead: list) -> None:
        """Call the kernel on the words of ``row`` (the row ``k`` of the block whose
        :meth:`ahead` is given) and put its output words there."""
        arrays = [self._arrays(take, row) if block is None else block[k]
                  for take, block in zip(self.inputs, ahead, strict=True)]
        agent = self.agent
        agent.received.append(arrays)
        at = self.outputs
        for words in agent.call_words(arrays):
            row[at:at + words.size] = words
            at += words.size


class _Flow:
    """One period's data flow, replayed on the real words (:meth:`replay`).

    The universe of the traced period holds the data words at its start (every
    memory word among them), its input words and its kernels' output words. The
    replay keeps only the data words something reads or the period changes, so a
    period costs its kernel calls and a few NumPy operations, not a copy of the
    memory; each of :data:`CHUNK` periods is one row of a 2-D universe, so the
    inputs and the outputs move one NumPy operation for all of them.
    """

    CHUNK = 256
    """Periods in one 2-D universe (bounds its size)."""

    def __init__(self, slots: _Slots, sources: list, calls: list[tuple], size: int,
                 state: _Gather, sinks: list) -> None:
        self.slots = slots
        n = state.index.size
        self.moved = np.flatnonzero(state.index != np.arange(n))
        read = [state.index[self.moved], self.moved]
        read += [g.index for _, inputs, _ in calls for g in inputs]
        read += [g.index for _, g, _ in sinks]
        read = np.concatenate(read)
        self.kept = np.unique(read[(read >= 0) & (read < n)])   # data words in the rows
        kept = self.kept.size
        to = np.concatenate([np.full(n, -1, dtype=np.int64), np.arange(size - n) + kept])
        to[self.kept] = np.arange(kept)
        self.width = size - n + kept
        self.sources = [(source, to[first], count) for source, first, count in sources]
        input_words = np.zeros(self.width, dtype=bool)
        for _, first, count in self.sources:
            input_words[first:first + count] = True
        self.calls = [_Call(agent, [g.remapped(to) for g in inputs], int(to[first]), input_words)
                      for agent, inputs, first in calls]
        self.sinks = [(sink, g.remapped(to), tlast) for sink, g, tlast in sinks]
        # the data words the period changes, from the row of the period that changes them
        self.carry = _Gather(state.index[self.moved], state.constant[self.moved]).remapped(to)
        self.moved_kept = to[self.moved]

    def replay(self, periods: int) -> None:
        """Apply the period's data flow ``periods`` times to the real words."""
        words = self.slots.read()
        state = words[self.kept]
        starts = [source._next for source, _, _ in self.sources]
        for done in range(0, periods, self.CHUNK):
            rows = min(self.CHUNK, periods - done)
            universe = np.empty((rows, self.width), dtype=np.int64)
            for (source, first, count), start in zip(self.sources, starts, strict=True):
                at = start + done * count
                universe[:, first:first + count] = (
                    source._words[at:at + rows * count].reshape(rows, count))
            ahead = [call.ahead(universe) for call in self.calls]
            for k, row in enumerate(universe):
                row[:state.size] = state
                for call, taken in zip(self.calls, ahead, strict=True):
                    call.run(row, k, taken)
                state[self.moved_kept] = self.carry.take(row)
            for sink, take, tlast in self.sinks:
                block = take.take(universe)
                held, per = len(sink._words), block.shape[1]
                sink._tlast.extend(held + k * per + t for k in range(rows) for t in tlast)
                sink._words.extend(block.ravel().tolist())
        words[self.kept] = state
        self.slots.write(words)


def _trace(run: object, now: _Moment, per: Periodicity, records: _RecordDeltas) -> _Flow | None:
    """Run one period on a tagged copy; its data flow, or None if it does not repeat."""
    memo: dict = _constants(now.image.frozen)
    agents, streams = copy.deepcopy((run.agents, run.streams), memo)
    real = _Slots(now.image.slots)
    size = real.read().size
    mapped = _Slots([(memo[id(o)], name, item) for o, name, item in now.image.slots])
    mapped.write(TAG_BASE + np.arange(size, dtype=np.int64))
    sources, top = [], size
    for agent, twin in zip(run.agents, agents, strict=True):
        if type(agent).__name__ == "StreamSource":
            count = _delta(now.image, per, agent, "_next")
            left = twin._words.size - twin._next
            tags = TAG_BASE + top + np.arange(left)
            tags[count:] += BEYOND   # never taken in the period: found if they are
            twin._words[twin._next:] = tags
            sources.append((agent, top, count))
            top += count
    calls: list[tuple] = []
    outputs = [top]
    for agent, twin in zip(run.agents, agents, strict=True):
        if type(agent).__name__ == "KernelAgent":
            twin.function = _recorder(agent, twin, calls, outputs)
    sinks = [(agent, twin, len(twin._words), len(twin._tlast))
             for agent, twin in zip(run.agents, agents, strict=True)
             if type(agent).__name__ == "StreamSink"]
    try:
        _run_copy(run, agents, now.image.cycle + per.period)
    except AiedmaError:
        return None   # the real run steps into it, and raises it at its cycle
    end = image((agents, streams), now.image.cycle + per.period)
    try:
        again = periodicity(now.image, end)
    except NotPeriodic:
        return None
    if again != per or not _done_again(records, memo, per.period):
        return None
    universe = outputs[-1]
    state = _Gather.of(_Slots(end.slots).read(), universe)
    gathered_calls = []
    for agent, tags, first in calls:
        inputs = [_Gather.of(t, first) for t in tags]
        if any(g is None for g in inputs):
            return None
        gathered_calls.append((agent, inputs, first))
    sink_flows = []
    for agent, twin, words, tlasts in sinks:
        gather = _Gather.of(np.asarray(twin._words[words:], dtype=np.int64), universe)
        if gather is None:
            return None
        sink_flows.append((agent, gather, [t - words for t in twin._tlast[tlasts:]]))
    if state is None:
        return None
    return _Flow(real, sources, gathered_calls, universe, state, sink_flows)


def _constants(frozen: Sequence) -> dict:
    """A deep copy's memo that keeps the deeply immutable frozen objects as they are:
    the code may compare them by identity (a channel's direction), and nothing can
    change them. A frozen object holding a mutable one (a lock space's tables) is
    copied."""
    known: dict[int, bool] = {}
    return {id(x): x for x in frozen if _immutable(x, known)}


def _immutable(x: object, known: dict[int, bool]) -> bool:
    if x is None or isinstance(x, bool | int | float | str | bytes | enum.Enum):
        return True
    if isinstance(x, tuple | frozenset):
        return all(_immutable(item, known) for item in x)
    params = getattr(type(x), "__dataclass_params__", None)
    if params is None or not params.frozen:
        return False
    if id(x) not in known:
        known[id(x)] = False   # a cycle through it is not proof
        known[id(x)] = all(_immutable(value, known) for value in vars(x).values())
    return known[id(x)]


def _done_again(records: _RecordDeltas, memo: dict, period: int) -> bool:
    """Each channel's tasks finished in the traced period are those of the period
    before, a period later."""
    for (owner, name), a, b in zip(records.records, records.before, records.after, strict=True):
        if name != "done":
            continue
        real, twin = getattr(owner, name), getattr(memo[id(owner)], name)
        if twin[b:] != [_shifted(entry, period) for entry in real[a:b]]:
            return False
    return True


def _delta(img: StateImage, per: Periodicity, owner: object, name: str) -> int:
    return _deltas_by_owner(img, per).get((id(owner), name), 0)


def _recorder(agent: object, twin: object, calls: list, outputs: list) -> Callable:
    """A kernel function for the tagged copy: records the tags it gets, gives new ones."""
    sizes = [port.size for port in twin.outputs]

    def record(*arrays: np.ndarray) -> object:
        first = outputs[-1]
        calls.append((agent, [np.asarray(a, dtype=np.int64) & 0xFFFFFFFF for a in arrays],
                      first))
        results, at = [], first
        for size in sizes:
            results.append((TAG_BASE + np.arange(at, at + size)).astype(twin.dtype))
            at += size
        outputs.append(at)
        return tuple(results) if len(results) != 1 else results[0]

    return record


def _run_copy(run: object, agents: list, until: int) -> None:
    """Step the copy to ``until`` on the fast path, as the real run would."""
    twin = type(run)(agents, max_cycles=until, exact=False)
    twin.cycles = run.cycles
    while twin.cycles < until:
        twin.advance()
