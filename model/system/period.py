"""Whether a run's whole state repeats: the check a periodic jump stands on.

A run whose agents change often (a pipeline of 16-word buffers) steps many cycles
of every period even on the fast path (:mod:`.scheduler`), but what it does repeats:
with two buffers, every two iterations the same BDs run at the same addresses. If
the whole state of every agent at cycle ``t + P`` equals that at ``t`` *relative to
the period* (every cycle stamp ``P`` later, every counter a fixed delta on, the data
aside), the run from ``t + P`` repeats the run from ``t`` until a counter reaches a
threshold, and a scheduler may jump whole periods at once.

"Whole state" is the risk: a field missed in a hand-written key makes such a jump
wrong wherever it differs. So the state is not listed by hand: :func:`image` walks
every object the agents reach (their attributes, containers, arrays), and
:func:`periodicity` accepts two images as a period only when *every* integer that
differs is one :data:`ROLES` names as a stamp or a counter. A field nobody declared
that differs makes it refuse, naming the field: a missed field stops a jump, it
does not make one wrong.

Roles, by the field's owner class and attribute (``"Class.attr"``; ``"Class.attr/1"``
for the item 1 of a tuple it holds):

* ``stamp``: an absolute cycle (when a BD was offered, a lock written); it must
  differ by exactly the period, since the code compares it only with other cycles;
* ``counter``: a count that advances by a fixed delta a period (runs done, words
  pushed, the source's position); the delta is reported, the threshold it meets is
  the jump's to bound;
* ``data``: word values (memory, words in streams and registers, kernel buffers);
  the control does not depend on them in the agents this covers, and a jump moves
  them by other means; their number still counts (a stream's fill is structure);
* ``input``: the words a source has still to send, data as well;
* ``value``: compared by content alone, whatever objects hold it (a BD's beat
  lists, which a cache shares between BDs);
* ``record``: what grows or shrinks by whole entries a period (the sink's words,
  a kernel's received buffers, a channel's finished tasks, the host's queue), not
  walked; a jump extends them;
* ``cache``: something derived and remade when needed (the host's stall text), not
  walked;
* ``code``: a kernel's function, the same all run, not walked.

Objects are numbered by the order the walk meets them, not by ``id``, so a BD
fetched anew each period is the same as last period's when it sits in the same
place.
"""

from __future__ import annotations

import enum
import itertools
import types
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

__all__ = ["ROLES", "NotPeriodic", "Periodicity", "StateImage", "image", "periodicity"]

ROLES: dict[str, str] = {
    # absolute cycles, compared only with other cycles
    "Channel._cycle": "stamp",
    "Channel._ask_shown": "stamp",
    "Channel._head_since": "stamp",
    "Channel._left_queue": "stamp",
    "_InFlight.offered": "stamp",
    "_InFlight.accepted": "stamp",
    "LockTable._written": "stamp",
    "LockTable._acquired_in": "stamp",
    "LockTable._released_in": "stamp",
    # counts that advance a fixed amount a period
    "KernelAgent.done": "counter",
    "Stream.pushed": "counter",
    "StreamSource._next": "counter",
    "Channel.words": "counter",
    # word values
    "Memory.data": "data",
    "Stream._items": "data",
    "Stream._incoming": "data",
    "Stream._run": "data",
    "StreamSource._words": "input",
    "Channel._mem_data": "data",
    "ChannelEngine._mem_data": "data",
    "ChannelEngine._i_data": "data",
    "S2MMDatapath.write/1": "data",
    "KernelAgent._buffers": "data",
    "KernelAgent._results": "data",
    # compared by content, not identity (a BD's beats, shared through a cache)
    "_InFlight.beats": "value",
    # whole entries added or taken a period
    "StreamSink._words": "record",
    "StreamSink._tlast": "record",
    "KernelAgent.received": "record",
    "Channel.done": "record",
    "_Slot.tasks": "record",
    # derived, remade when needed
    "_Controller._waits": "cache",
    # the kernel's function: the same all run (a traced copy records through another)
    "KernelAgent.function": "code",
}
"""The role of each field that may differ between two images a period apart (see the
module text); every other integer must be equal."""

_OPAQUE_COUNT = itertools.count()
_DATA = ("data", "input")
# Data in one item of a tuple field (``"Class.attr/i"``): field key -> item indices.
_ITEM_ROLES: dict[str, tuple[int, ...]] = {}
for _role_key, _role in ROLES.items():
    if "/" in _role_key and _role in _DATA:
        _field, _item = _role_key.split("/")
        _ITEM_ROLES[_field] = (*_ITEM_ROLES.get(_field, ()), int(_item))
_SKIPPED = ("record", "cache", "code")
_LEAVES = (type(None), bool, str, float, bytes, complex)
_OPAQUE = (types.FunctionType, types.MethodType, types.BuiltinFunctionType, type,
           types.ModuleType, types.LambdaType)


class NotPeriodic(Exception):
    """Two images are not a period apart; ``str`` says where they differ."""


@dataclass(frozen=True)
class StateImage:
    """Everything the agents reach, at the end of one cycle (:func:`image`).

    Attributes
    ----------
    cycle : int
        The cycles run when it was taken.
    shape : tuple
        The structure (classes, attribute names, container lengths, object numbers)
        and every leaf that is not an integer.
    paths : tuple of tuple
        Where each integer leaf sits: owner ``"Class.attr"`` keys and indices.
    roles : tuple of str
        Each integer leaf's role (``""`` for none: it must not differ).
    values : tuple of int
        The integer leaves.
    arrays : tuple of (tuple, numpy.ndarray)
        Every array outside a ``data`` field, by path, copied: compared by content.
    places : tuple
        Where each integer leaf can be set: ``(container, key)`` (an object and its
        attribute, a list or dict and its key), or None inside a tuple. Not compared.
    slots : tuple of (object, str, int or None)
        Every ``data`` field met: its owner, attribute and, for a
        ``"Class.attr/i"`` role, the tuple item. Not compared.
    records : tuple of (object, str)
        Every ``record`` field met, by owner and attribute. Not compared.
    frozen : tuple
        Every frozen dataclass instance met (immutable: a copy of the run may share
        them, and must where the code compares them by identity). Not compared.
    """

    cycle: int
    shape: tuple
    paths: tuple
    roles: tuple
    values: tuple
    arrays: tuple
    places: tuple = field(default=(), compare=False, repr=False)
    slots: tuple = field(default=(), compare=False, repr=False)
    records: tuple = field(default=(), compare=False, repr=False)
    frozen: tuple = field(default=(), compare=False, repr=False)


@dataclass(frozen=True)
class Periodicity:
    """Two images a period apart.

    Attributes
    ----------
    period : int
        Cycles between them.
    counters : dict of str to int
        Each counter that advanced (path text), and by how much.
    """

    period: int
    counters: dict[str, int]


class _Walker:
    """One walk of an object graph into the parts of a :class:`StateImage`."""

    def __init__(self) -> None:
        self.numbers: dict[int, int] = {}
        self.shape: list = []
        self.paths: list[tuple] = []
        self.roles: list[str] = []
        self.values: list[int] = []
        self.arrays: list[tuple] = []
        self.places: list = []
        self.slots: list[tuple] = []
        self.records: list[tuple] = []
        self.frozen: list = []

    def walk(self, x: object, path: tuple, role: str, key: str, place: tuple | None) -> None:
        """Append ``x``; ``key`` is the field it sits under (for ``"Class.attr/i"`` roles),
        ``place`` where it can be set (an integer's)."""
        if isinstance(x, _LEAVES):
            self.shape.append(x)
        elif isinstance(x, np.bool_ | np.floating):
            self.shape.append(x.item())
        elif isinstance(x, bytearray):
            self.shape.append(bytes(x))
        elif isinstance(x, enum.Enum):
            self.shape.append((type(x).__qualname__, x.name))
        elif isinstance(x, int | np.integer):
            self._integer(int(x), path, role, place)
        elif isinstance(x, _OPAQUE):
            self.shape.append(("callable", getattr(x, "__qualname__", type(x).__name__)))
        elif isinstance(x, np.ndarray):
            self._array(x, path, role)
        elif role == "value":
            self._compound(x, path, role, key)   # by content: its identity means nothing
        elif id(x) in self.numbers:
            self.shape.append(("seen", self.numbers[id(x)]))
        else:
            self.numbers[id(x)] = len(self.numbers)
            self._compound(x, path, role, key)

    def _integer(self, value: int, path: tuple, role: str, place: tuple | None) -> None:
        if role in _DATA:
            self.shape.append("data")
            return
        self.shape.append("int")
        self.paths.append(path)
        self.roles.append(role)
        self.values.append(value)
        self.places.append(place)

    def _array(self, x: np.ndarray, path: tuple, role: str) -> None:
        self.shape.append(("array", x.shape, x.dtype.str))
        if role not in _DATA:
            self.arrays.append((path, x.copy()))

    def _compound(self, x: object, path: tuple, role: str, key: str) -> None:
        if role in ("", "value") and isinstance(x, list) and _plain_ints(x):
            self.shape.append(("ints", tuple(x)))   # one item: a beat list has thousands
        elif isinstance(x, list | tuple | deque):
            self.shape.append((type(x).__name__, len(x)))
            settable = not isinstance(x, tuple)
            for k, item in enumerate(x):
                self.walk(item, (*path, k), ROLES.get(f"{key}/{k}", role), f"{key}/{k}",
                          (x, k) if settable else None)
        elif isinstance(x, dict):
            self._mapping(x, path, role, key)
        elif isinstance(x, set | frozenset):
            self.shape.append((type(x).__name__, len(x)))
            for item in sorted(x, key=repr):
                self.walk(item, (*path, "{}"), role, key, None)
        else:
            self._object(x, path, role)

    def _mapping(self, x: dict, path: tuple, role: str, key: str) -> None:
        self.shape.append(("dict", len(x)))
        items = list(x.items())
        try:
            items.sort(key=lambda item: item[0])   # insertion order is history, not state
        except TypeError:
            pass
        for k, value in items:
            if isinstance(k, (*_LEAVES, int, enum.Enum)):
                self.shape.append(("key", k))
            else:
                self.walk(k, (*path, "key"), role, key, None)   # an object: by its number
            self.walk(value, (*path, repr(k)), role, key, (x, k))

    def _object(self, x: object, path: tuple, role: str) -> None:
        cls = type(x)
        if not hasattr(x, "__dict__") and not any("__slots__" in vars(k) for k in cls.__mro__
                                                  if k is not object):
            # An iterator, a generator: state the walk cannot see, so it never repeats.
            self.shape.append(("opaque", cls.__qualname__, next(_OPAQUE_COUNT)))
            return
        self.shape.append(("object", cls.__qualname__))
        params = getattr(cls, "__dataclass_params__", None)
        if params is not None and params.frozen:
            self.frozen.append(x)
        fields = dict(getattr(x, "__dict__", {}))
        for klass in cls.__mro__:
            for name in getattr(klass, "__slots__", ()):
                if hasattr(x, name):
                    fields.setdefault(name, getattr(x, name))
        for name, value in fields.items():
            key = f"{cls.__name__}.{name}"
            own = ROLES.get(key, role)
            self.shape.append(name)
            if own in _SKIPPED:
                if own == "record":
                    self.records.append((x, name))
                continue
            if own == "data" and own != role:
                self.slots.append((x, name, None))
            for item in _ITEM_ROLES.get(key, ()):
                self.slots.append((x, name, item))
            self.walk(value, (*path, key), own, key, (x, name))


def _plain_ints(x: list) -> bool:
    return bool(x) and set(map(type, x)) == {int}


def image(roots: Iterable[object], cycle: int) -> StateImage:
    """Walk everything ``roots`` reach (a run's agents and streams) into an image.

    Parameters
    ----------
    roots : iterable
        Walked in this order (it numbers the objects).
    cycle : int
        The cycles run so far (kept in the image).

    Returns
    -------
    StateImage
    """
    walker = _Walker()
    walker.walk(list(roots), (), "", "", None)
    return StateImage(cycle, tuple(walker.shape), tuple(walker.paths), tuple(walker.roles),
                      tuple(walker.values), tuple(walker.arrays), tuple(walker.places),
                      tuple(walker.slots), tuple(walker.records), tuple(walker.frozen))


def periodicity(before: StateImage, after: StateImage) -> Periodicity:
    """Whether ``after`` repeats ``before`` relative to the cycles between them.

    Raises
    ------
    NotPeriodic
        Naming the first place they differ in a way :data:`ROLES` does not allow:
        the structure, an array, a stamp not moved by the period, an integer with
        no role.
    """
    period = after.cycle - before.cycle
    if period <= 0:
        raise NotPeriodic(f"the second image ({after.cycle}) is not after the first "
                          f"({before.cycle})")
    if before.shape != after.shape:
        raise NotPeriodic(f"the structure differs{_first_difference(before.shape, after.shape)}")
    for (path, a), (_, b) in zip(before.arrays, after.arrays, strict=True):
        if not np.array_equal(a, b):
            raise NotPeriodic(f"the array at {_text(path)} differs")
    counters: dict[str, int] = {}
    for path, role, a, b in zip(before.paths, before.roles, before.values, after.values,
                                strict=True):
        if a == b:
            continue
        if role == "stamp" and b - a == period:
            continue
        if role == "counter":
            counters[_text(path)] = b - a
            continue
        why = (f"a stamp moved by {b - a}, not the period {period}" if role == "stamp"
               else "no role lets it differ")
        raise NotPeriodic(f"{_text(path)} is {a}, then {b}: {why}")
    return Periodicity(period, counters)


def _first_difference(a: tuple, b: tuple) -> str:
    for k, (x, y) in enumerate(zip(a, b, strict=False)):   # the shorter one ends it
        if x != y:
            return f" at item {k}: {x!r}, then {y!r}"
    return f": {len(a)} items, then {len(b)}"


def _text(path: tuple) -> str:
    return "/".join(str(p) for p in path)
