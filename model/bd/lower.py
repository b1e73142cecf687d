"""The lowering: a port program of tiling entries -> BDs and a task with the same stream.

Equivalence is the law: running the task over the BDs (:func:`.task.run_task`)
and reading whole words as elements (:func:`word_stream_to_elements`) gives
exactly :meth:`.PortProgram.indices`, zeros included.

How (all in 32-bit words; sub-word dimension 0 is packed first):

1. **Tiles to shapes.** Every tile of the walk is a box; per dimension the part
   inside ``[0, boundary)`` is data and the rest is zero padding before/after.
   That is exactly one BD pattern: a *level* per tile dimension (wrap = data
   count, step = the dimension's stride in words, before/after = padding in
   that level's own unit). Trivial levels go and contiguous ones merge.
2. **Fold.** Tiles that differ only by a constant address step become one more
   level of the same BD: first along whole traversal loops (all tiles of the
   loop alike), then along runs of consecutive alike tiles.
3. **Task.** With one entry on the port, the outermost loops become the task:
   a loop that re-reads the same addresses is the repeat count, the next one,
   if its tiles are alike, the iteration offset (wrap <= 64).
4. **Zeros.** Tiles wholly outside the boundary are zero runs; a run is
   absorbed into the padding of the BD before it (cut by ``buffer_length``) or
   after it (when it divides evenly), else it gets a BD of its own.
5. **Limits.** A shape that breaks a register limit (dimensions, step, wrap,
   padding, length) is unrolled along its outermost level until it fits; the
   reason is kept, and if the result exceeds the BD budget the error says which
   limit forced it, by how much, and how many BDs the program would need.

Decisions (docs/bd.md / AMD silent):

* **decision**: on MM2S, ``tlast_suppress`` is set on every BD but the chain's
  last, so TLAST marks the end of each pass of the port program; a packet BD
  (``enable_packet``) keeps its TLAST, so every packet ends with one.
* **decision**: an entry with ``packet_port_id >= 0`` read by MM2S gets
  ``enable_packet = 1`` and ``packet_id = packet_port_id`` on its BDs.
* **decision**: ``phase`` has no BD field; it is kept in :attr:`LoweredBD.phase`.
* **decision**: a task that uses iteration runs a whole number of iteration
  wraps, so every BD's ``iteration_current`` is back at 0 when the task ends and
  the same task can run again (next graph iteration).
* The result is greedy, not proven minimal: it folds the innermost loops first.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from fractions import Fraction

import numpy as np

from ..arch.dtypes import WORD_BITS, element_bits
from ..arch.kinds import DMA_KINDS
from ..errors import AiedmaError, field_error
from ..tiling.parameters import TilingParameters
from ..tiling.port import PortProgram
from .descriptor import BufferDescriptor
from .fields import ADDRESS_DIMENSIONS, BD_COUNT, FIELD_INDEX, HAS_PADDING
from .task import REPEAT_COUNT_MAX, Task, run_task, task_stream

__all__ = [
    "Level",
    "LoweredBD",
    "LoweredProgram",
    "LoweringError",
    "lower",
    "tiling_in_words",
    "word_stream_to_elements",
]

_MAX_TILES = 1 << 22  # beyond this the walk cannot fit any BD budget anyway


class LoweringError(AiedmaError):
    """A port program cannot be expressed in the kind's BDs (names the limit and the count).

    Attributes
    ----------
    needed, available : int or None
        BDs the program needs and BDs the channel had, when the budget was short.
    """

    def __init__(self, message: str, needed: int | None = None,
                 available: int | None = None) -> None:
        super().__init__(message)
        self.needed, self.available = needed, available


# -- building blocks ----------------------------------------------------------------


@dataclass(frozen=True)
class Level:
    """One dimension of a BD pattern: ``wrap`` data units ``step`` words apart, padded.

    ``before`` / ``after`` count zero units of this level (words at D0, padded
    rows at D1, padded blocks at D2), as in docs/bd.md "Zero padding".
    """

    wrap: int
    step: int
    before: int = 0
    after: int = 0

    @property
    def size(self) -> int:
        """Units per step of the level above, padding included."""
        return self.before + self.wrap + self.after

    @property
    def padded(self) -> bool:
        return bool(self.before or self.after)


@dataclass(frozen=True)
class _Shape:
    """A BD's pattern without its base: levels (D0 first) and ``buffer_length``.

    No levels means a run of ``length`` zero words.
    """

    levels: tuple[Level, ...]
    length: int

    @property
    def full(self) -> int:
        """Words in one whole pattern (``length`` may cut it shorter)."""
        return math.prod(level.size for level in self.levels)

    @property
    def is_zero(self) -> bool:
        return not self.levels


@dataclass(frozen=True)
class _Item:
    """A shape placed at a base word (relative to the buffer), from one entry."""

    shape: _Shape
    base: int
    entry: int


@dataclass(frozen=True)
class _Limits:
    """What one BD of a kind can hold (from the field table)."""

    kind: str
    dims: int
    step: int
    wrap: int
    length: int
    pad: tuple[int, ...]
    iteration_wrap: int
    iteration_step: int
    budget: int

    @classmethod
    def of(cls, kind: str) -> _Limits:
        f = FIELD_INDEX[kind]
        pad = tuple(f[f"d{k}_zero_before"].maximum
                    for k in range(DMA_KINDS[kind].padded_dimensions))
        budget = len(DMA_KINDS[kind].channel_bds(0))  # a channel runs its half of the table
        return cls(kind, ADDRESS_DIMENSIONS[kind], f["d0_stepsize"].maximum, f["d0_wrap"].maximum,
                   f["buffer_length"].maximum, pad, f["iteration_wrap"].maximum,
                   f["iteration_stepsize"].maximum, budget)

    def misfit(self, shape: _Shape) -> str | None:
        """Why ``shape`` does not fit one BD, or None if it does."""
        if shape.length > self.length:
            return (f"buffer_length {shape.length} exceeds {self.length} "
                    f"({shape.length - self.length} over)")
        levels = shape.levels
        if len(levels) > self.dims:
            return f"{len(levels)} address dimensions exceed the {self.kind}'s {self.dims}"
        for i, level in enumerate(levels):
            top = i == len(levels) - 1
            if level.wrap > 1 and level.step > self.step:
                over = level.step - self.step
                return f"d{i}_stepsize {level.step} exceeds {self.step} ({over} over)"
            for side in ("before", "after"):
                value = getattr(level, side)
                limit = self.pad[i] if i < len(self.pad) else 0
                if value > limit:
                    what = (f"d{i}_zero_{side} {value} exceeds {limit} ({value - limit} over)"
                            if i < len(self.pad) else f"zero padding in D{i} (only D0-D2 pad)")
                    return what
            # The top level may run unbounded (wrap 0 = never wraps) unless it has
            # padding after it; the last BD dimension has no wrap at all.
            if i < self.dims - 1 and level.wrap > self.wrap and not (top and not level.after):
                return f"d{i}_wrap {level.wrap} exceeds {self.wrap} ({level.wrap - self.wrap} over)"
        return None


def _normalise(levels: Iterable[Level]) -> tuple[Level, ...]:
    """Drop levels that only ever sit at 0; merge a level into the one below when contiguous."""
    out: list[Level] = []
    for level in levels:
        if level.wrap == 1 and not level.padded:
            continue
        below = out[-1] if out else None
        if (below is not None and not below.padded and not level.padded
                and level.step == below.wrap * below.step):
            out[-1] = Level(below.wrap * level.wrap, below.step)
        else:
            out.append(level)
    return tuple(out) or (Level(1, 1),)


def _fold(shape: _Shape, count: int, step: int) -> _Shape:
    """``count`` copies of a whole ``shape``, each ``step`` words after the last."""
    if shape.is_zero:
        return _Shape((), shape.length * count)
    levels = _normalise((*shape.levels, Level(count, step)))
    return _Shape(levels, shape.full * count)


# -- units ------------------------------------------------------------------------------


def _words_per_element(dtype: str) -> Fraction:
    return Fraction(element_bits(dtype), WORD_BITS)


def tiling_in_words(tp: TilingParameters, dtype: str) -> TilingParameters:
    """The same walk in 32-bit words: dimension-0 sizes, offset and strides rescaled.

    16/8/4-bit elements pack 2/4/8 to a word, 64-bit elements take two words;
    :meth:`TilingParameters.validate` has checked that dimension 0 stays aligned.
    """
    scale = _words_per_element(dtype)
    if scale == 1:
        return tp
    s = tp.shape()

    def dim0(vector: tuple[int, ...]) -> list[int]:
        return [int(vector[0] * scale), *vector[1:]]

    traversal = [t.to_dict() | ({"stride": int(t.stride * scale)} if t.dimension == 0 else {})
                 for t in tp.tile_traversal]
    return replace(tp, buffer_dimension=tuple(dim0(s["buffer"])),
                   tiling_dimension=tuple(dim0(s["tile"])), offset=tuple(dim0(s["offset"])),
                   boundary_dimension=tuple(dim0(s["boundary"])), tile_traversal=traversal)


def word_stream_to_elements(words: np.ndarray, base_address: int, dtype: str) -> np.ndarray:
    """Element indices (relative to the buffer, -1 = zero) carried by a word stream.

    Parameters
    ----------
    words : numpy.ndarray
        Word addresses, -1 for zero words (as :meth:`BufferDescriptor.stream`).
    base_address : int
        Word address of the buffer's element 0.
    dtype : str
        adf element type; sub-word elements are little-endian within a word.
    """
    words = np.asarray(words, dtype=np.int64)
    zero = words < 0
    relative = np.where(zero, -1, words - base_address)
    scale = _words_per_element(dtype)
    if scale == 1:
        return relative
    if scale < 1:
        per_word = int(1 / scale)
        elements = relative[:, None] * per_word + np.arange(per_word)
        elements[zero] = -1
        return elements.ravel()
    pairs = relative.reshape(-1, 2)  # a 64-bit element is two consecutive words
    if not np.all((pairs[:, 1] == pairs[:, 0] + 1) | ((pairs[:, 0] < 0) & (pairs[:, 1] < 0))):
        raise LoweringError("a 64-bit element needs two consecutive words; the stream "
                            "has a pair that is not")
    return np.where(pairs[:, 0] < 0, -1, pairs[:, 0] // 2)


# -- one entry ---------------------------------------------------------------------------


@dataclass
class _EntryPlan:
    items: list[_Item]
    repeat: int = 1
    iteration: tuple[int, int] | None = None  # (wrap, step)
    reasons: list[str] = field(default_factory=list)


def _tile_tensor(tp: TilingParameters) -> tuple[list[tuple[int, int]], np.ndarray, np.ndarray,
                                                 dict[int, _Shape]]:
    """Per tile of the walk: a shape id and a base, as tensors over the outer loops.

    Returns the outer loops ``(length, word step)`` outermost first, the shape-id
    tensor, the base tensor and the shapes by id.
    """
    s = tp.shape()
    buffer, tile, offset, bound = s["buffer"], s["tile"], s["offset"], s["boundary"]
    multiplier = np.cumprod((1, *buffer[:-1]))
    loops = [(tp.repetition, None, 0)]
    loops += [(t.wrap, t.dimension, t.stride) for t in reversed(tp.tile_traversal)]
    loops = [loop for loop in loops if loop[0] > 1]
    # Adjacent loops that re-read the same addresses are one loop.
    merged: list[tuple[int, int | None, int]] = []
    for length, dim, stride in loops:
        if merged and stride == 0 and merged[-1][2] == 0:
            merged[-1] = (merged[-1][0] * length, None, 0)
        else:
            merged.append((length, dim, stride))
    lengths = tuple(loop[0] for loop in merged)
    if math.prod(lengths) > _MAX_TILES:
        raise LoweringError(f"the walk has {math.prod(lengths)} tiles; lowering handles at "
                            f"most {_MAX_TILES}")
    index = np.indices(lengths, dtype=np.int64) if lengths else np.zeros((0,), dtype=np.int64)
    origin = [np.full(lengths, o, dtype=np.int64) for o in offset]
    for axis, (_, dim, stride) in enumerate(merged):
        if dim is not None:
            origin[dim] = origin[dim] + index[axis] * stride
    lo = [np.clip(-o, 0, t) for o, t in zip(origin, tile, strict=True)]
    hi = [np.clip(b - o, 0, t) for o, b, t in zip(origin, bound, tile, strict=True)]
    empty = np.zeros(lengths, dtype=bool)
    for low, high in zip(lo, hi, strict=True):
        empty |= high <= low
    base = sum((o + low) * int(m) for o, low, m in zip(origin, lo, multiplier, strict=True))
    base = np.where(empty, 0, base)
    rows = np.stack([empty.ravel(), *(a.ravel() for a in lo), *(a.ravel() for a in hi)], axis=1)
    keys, ids = np.unique(rows, axis=0, return_inverse=True)
    shapes: dict[int, _Shape] = {}
    for key_id, row in enumerate(keys):
        if row[0]:
            shapes[key_id] = _Shape((), math.prod(tile))
            continue
        n = len(tile)
        levels = [Level(int(row[1 + n + d] - row[1 + d]), int(multiplier[d]),
                        int(row[1 + d]), int(tile[d] - row[1 + n + d])) for d in range(n)]
        shapes[key_id] = _Shape(_normalise(levels), math.prod(tile))
    steps = [(length, stride * (int(multiplier[dim]) if dim is not None else 0))
             for length, dim, stride in merged]
    return steps, ids.reshape(lengths), np.asarray(base).reshape(lengths), shapes


def _plan_entry(tp: TilingParameters, entry: int, limits: _Limits, own_task: bool) -> _EntryPlan:
    loops, ids, base, shapes = _tile_tensor(tp)
    plan = _EntryPlan(items=[])

    def fold_axis(axis: int) -> bool:
        """Fold loop ``axis`` into every shape if all its tiles are alike and it fits."""
        nonlocal ids, base
        length, step = loops[axis]
        taken = np.take(ids, [0], axis=axis)
        if step == 0 and not all(shapes[int(k)].is_zero for k in np.unique(taken)):
            return False
        if not np.all(ids == taken):
            return False
        folded = {int(k): _fold(shapes[int(k)], length, step) for k in np.unique(taken)}
        if any(limits.misfit(shape) for shape in folded.values()):
            return False
        shapes.update(folded)
        ids, base = np.take(ids, 0, axis=axis), np.take(base, 0, axis=axis)
        del loops[axis]
        return True

    while loops and fold_axis(len(loops) - 1):
        pass
    if own_task and loops and loops[0][1] == 0 and loops[0][0] <= REPEAT_COUNT_MAX:
        plan.repeat = loops[0][0]
        ids, base = ids[0], base[0]
        del loops[0]
    if own_task and loops:
        length, step = loops[0]
        if (1 <= step <= limits.iteration_step and length <= limits.iteration_wrap
                and length * plan.repeat <= REPEAT_COUNT_MAX and np.all(ids == ids[:1])):
            plan.iteration = (length, step)
            ids, base = ids[0], base[0]
            del loops[0]
    plan.items = [_Item(shapes[int(k)], int(b), entry)
                  for k, b in zip(np.ravel(ids), np.ravel(base), strict=True)]
    return plan


# -- sequences of shapes -------------------------------------------------------------------


MAX_PIECES = 1 << 16
"""Most pieces a tiling may be unrolled into on the way to BDs (then folded back).

A chain has at most 48 BDs of at most 1023 repeats per level, so more pieces than
this cannot fold back into one; the limit stops a huge buffer (10^11 elements) from
unrolling for hours before the BD count says no.
"""


def _split(item: _Item, limits: _Limits, reasons: list[str]) -> list[_Item]:
    """``item`` unrolled along its outermost level until every piece fits a BD."""
    shape = item.shape
    why = limits.misfit(shape) if not shape.is_zero else None
    if why is None:
        return [item]
    reasons.append(f"entry {item.entry}: {why}")
    *below, top = shape.levels
    chunk = limits.length if top.step <= limits.step else 1
    if (top.wrap if below else -(-top.wrap // chunk)) > MAX_PIECES:
        raise LoweringError(
            f"entry {item.entry}: unrolls to more than {MAX_PIECES} pieces that each fit "
            f"a BD ({why}); no chain of BDs can hold it")
    if below:
        unit = math.prod(level.size for level in below)
        inner = _Shape(_normalise(below), unit)
        pieces = [_Item(inner, item.base + i * top.step, item.entry) for i in range(top.wrap)]
    else:  # one level: runs of words, as long as one BD may be (single words if the step
        # itself is too large), its padding becoming zero runs beside them
        unit = 1
        pieces = []
        for start in range(0, top.wrap, chunk):
            words = min(chunk, top.wrap - start)
            pieces.append(_Item(_Shape((Level(words, top.step),), words),
                                item.base + start * top.step, item.entry))
    zeros_before = [_Item(_Shape((), top.before * unit), 0, item.entry)] if top.before else []
    zeros_after = [_Item(_Shape((), top.after * unit), 0, item.entry)] if top.after else []
    out = []
    for piece in [*zeros_before, *pieces, *zeros_after]:
        out.extend(_split(piece, limits, reasons))
        if len(out) > MAX_PIECES:
            raise LoweringError(
                f"entry {item.entry}: unrolls to more than {MAX_PIECES} pieces that each fit "
                f"a BD ({why}); no chain of BDs can hold it")
    return _cut(out, shape.length)


def _cut(items: list[_Item], length: int) -> list[_Item]:
    """The items' stream cut to ``length`` words (a BD's buffer_length can stop mid-pattern)."""
    out, left = [], length
    for item in items:
        if left <= 0:
            break
        if item.shape.length > left:
            item = replace(item, shape=replace(item.shape, length=left))
        out.append(item)
        left -= item.shape.length
    return out


def _fold_runs(items: list[_Item], limits: _Limits) -> list[_Item]:
    """Runs of alike shapes at a constant address step become one shape with one more level."""
    out: list[_Item] = []
    i = 0
    while i < len(items):
        item, j = items[i], i + 1
        whole = not item.shape.is_zero and item.shape.length == item.shape.full
        if whole and j < len(items):
            step = items[j].base - item.base
            while (j < len(items) and items[j].shape == item.shape
                   and items[j].entry == item.entry and items[j].base - items[j - 1].base == step):
                j += 1
            if j - i > 1 and step >= 1:
                folded = _fold(item.shape, j - i, step)
                if limits.misfit(folded) is None:
                    out.append(_Item(folded, item.base, item.entry))
                    i = j
                    continue
        out.append(item)
        i += 1
    return out


def _merge_zero_runs(items: list[_Item]) -> list[_Item]:
    out: list[_Item] = []
    for item in items:
        if out and item.shape.is_zero and out[-1].shape.is_zero and out[-1].entry == item.entry:
            out[-1] = replace(out[-1], shape=_Shape((), out[-1].shape.length + item.shape.length))
        else:
            out.append(item)
    return out


def _with_padding(shape: _Shape, zeros: int, side: str, limits: _Limits) -> _Shape | None:
    """``shape`` with ``zeros`` more zero words before or after it, if one BD can say so."""
    levels, full = shape.levels, shape.full
    candidates = []
    top = levels[-1]
    unit = full // top.size
    if side == "after":
        if shape.length == full:
            extra = -(-zeros // unit)
            candidates.append((*levels[:-1], replace(top, after=top.after + extra)))
            candidates.append((*levels, Level(1, 1, 0, -(-zeros // full))))
        length = shape.length + zeros
    else:
        if zeros % unit == 0:
            candidates.append((*levels[:-1], replace(top, before=top.before + zeros // unit)))
        if zeros % full == 0:
            candidates.append((*levels, Level(1, 1, zeros // full, 0)))
        length = shape.length + zeros
    for levels_ in candidates:
        candidate = _Shape(levels_, length)
        if limits.misfit(candidate) is None:
            return candidate
    return None


def _absorb_zero_runs(items: list[_Item], limits: _Limits, prefer: str) -> list[_Item]:
    """Fold each zero run into the padding of a neighbour from the same entry, if one has room.

    ``prefer`` ("after" or "before") says whether a run first tries to become the
    padding after the BD before it or before the BD after it.
    """
    items, out = list(items), []
    for i, item in enumerate(items):
        if not item.shape.is_zero:
            out.append(item)
            continue
        previous = out[-1] if out and not out[-1].shape.is_zero else None
        following = items[i + 1] if i + 1 < len(items) and not items[i + 1].shape.is_zero else None
        options = [("after", previous), ("before", following)]
        if prefer == "before":
            options.reverse()
        for side, neighbour in options:
            if neighbour is None or neighbour.entry != item.entry:
                continue
            grown = _with_padding(neighbour.shape, item.shape.length, side, limits)
            if grown is not None:
                if side == "after":
                    out[-1] = replace(neighbour, shape=grown)
                else:
                    items[i + 1] = replace(neighbour, shape=grown)
                break
        else:
            out.append(item)
    return out


def _compress(items: list[_Item], limits: _Limits) -> list[_Item]:
    """Fold runs and absorb zero runs until neither finds anything more.

    Each can enable the other: absorbing a pad can make neighbours alike, and
    folding can leave a zero run next to a shape with room for it. Whether a
    zero run is best the pad after one BD or before the next depends on the
    walk, so both are tried and the shorter chain is kept.
    """
    if not HAS_PADDING[limits.kind]:
        return _fold_runs(items, limits)
    best = None
    for prefer in ("after", "before"):
        result = items
        while True:
            size = len(result)
            result = _fold_runs(result, limits)
            result = _absorb_zero_runs(_merge_zero_runs(result), limits, prefer)
            if len(result) == size:
                break
        if best is None or len(result) < len(best):
            best = result
    return _split_zero_runs(best, limits)


# -- zero BDs and BD fields ------------------------------------------------------------------


def _zero_levels(length: int, limits: _Limits) -> tuple[Level, ...] | None:
    """Levels whose stream starts with at least ``length`` zero words (one data word later)."""
    if length <= limits.pad[0]:
        return (Level(1, 1, length, 0),)
    row = limits.pad[0] * 2 + 1
    d1 = -(-(length - limits.pad[0]) // row)
    if d1 <= limits.pad[1]:
        return (Level(1, 1, limits.pad[0], limits.pad[0]), Level(1, 1, d1, 0))
    block = (limits.pad[1] * 2 + 1) * row
    d2 = -(-(length - limits.pad[1] * row - limits.pad[0]) // block)
    if d2 <= limits.pad[2]:
        return (Level(1, 1, limits.pad[0], limits.pad[0]),
                Level(1, 1, limits.pad[1], limits.pad[1]), Level(1, 1, d2, 0))
    return None


def _zero_capacity(limits: _Limits) -> int:
    row = limits.pad[0] * 2 + 1
    block = (limits.pad[1] * 2 + 1) * row
    return limits.pad[2] * block + limits.pad[1] * row + limits.pad[0]


def _split_zero_runs(items: list[_Item], limits: _Limits) -> list[_Item]:
    capacity = _zero_capacity(limits)
    out = []
    for item in items:
        if item.shape.is_zero and item.shape.length > capacity:
            left = item.shape.length
            while left:
                out.append(replace(item, shape=_Shape((), min(left, capacity))))
                left -= min(left, capacity)
        else:
            out.append(item)
    return out


def _bd_fields(shape: _Shape, limits: _Limits) -> dict[str, int]:
    levels = shape.levels or _zero_levels(shape.length, limits)
    fields = {"buffer_length": shape.length, "valid_bd": 1}
    for i, level in enumerate(levels):
        top = i == len(levels) - 1
        fields[f"d{i}_stepsize"] = max(level.step, 1)
        if i < limits.dims - 1:
            unbounded = top and not level.after and level.wrap > limits.wrap
            fields[f"d{i}_wrap"] = 0 if unbounded else level.wrap
        if level.before:
            fields[f"d{i}_zero_before"] = level.before
        if level.after:
            fields[f"d{i}_zero_after"] = level.after
    return fields


# -- the result ------------------------------------------------------------------------------


@dataclass(frozen=True)
class LoweredBD:
    """One BD of a lowering, with where it came from.

    Attributes
    ----------
    bd_id : int
        The BD's number in the DMA's BD table.
    bd : BufferDescriptor
    entry : int
        Index of the port-program entry it serves.
    phase : int
        That entry's ``phase`` (carried; no BD field holds it).
    """

    bd_id: int
    bd: BufferDescriptor
    entry: int
    phase: int


@dataclass(frozen=True)
class LoweredProgram:
    """BDs and the task that reproduce a port program's stream on one channel."""

    kind: str
    direction: str
    dtype: str
    base_address: int
    bds: tuple[LoweredBD, ...]
    task: Task

    def table(self) -> dict[int, BufferDescriptor]:
        """The BDs by number, ready for :func:`.task.run_task`."""
        return {b.bd_id: b.bd for b in self.bds}

    def word_stream(self) -> np.ndarray:
        """Word addresses the task produces (-1 = zero word)."""
        return run_task(self.kind, self.table(), self.task)[0]

    def element_stream(self) -> np.ndarray:
        """Element indices relative to the buffer (-1 = zero): equals the program's indices."""
        if _words_per_element(self.dtype) == 1:
            # One word per element: the task's stream shifted to the buffer is the answer
            # (word_stream_to_elements would subtract the base in a second pass).
            return task_stream(self.kind, self.table(), self.task,
                               shift=-self.base_address)[0]
        return word_stream_to_elements(self.word_stream(), self.base_address, self.dtype)


def _available_bds(kind: str, first_bd: int, budget: int) -> int:
    """BDs a chain from ``first_bd`` may use: the budget, within the half it starts in."""
    if not 0 <= first_bd < BD_COUNT[kind]:
        raise field_error(LoweringError, "first_bd", first_bd,
                          f"must be in 0..{BD_COUNT[kind] - 1} for a {kind}")
    return min(budget, DMA_KINDS[kind].bd_half(first_bd).stop - first_bd)


def lower(program: PortProgram | TilingParameters | Iterable, kind: str, direction: str,
          dtype: str = "int32", base_address: int = 0, first_bd: int = 0,
          max_bds: int | None = None) -> LoweredProgram:
    """BDs (chained) and a task that produce the port program's stream.

    Parameters
    ----------
    program : PortProgram, TilingParameters or list of them / dicts
        The entries of one port, run in order.
    kind : {"tile", "memtile", "shim"}
    direction : {"read", "write"}
        ``read`` is MM2S, ``write`` is S2MM.
    dtype : str
        adf element type of the buffer.
    base_address : int
        Word address of the buffer's element 0 in the DMA's address space.
    first_bd : int
        Number of the first BD to use; BDs are numbered consecutively from it.
    max_bds : int, optional
        BD budget (default: a memory-tile channel's half, 24, or the kind's 16).

    Raises
    ------
    TilingError
        If the program is not legal for the kind, direction and type.
    LoweringError
        If it needs more BDs than the budget: the message gives the count and
        the register limits that forced the BDs apart.
    """
    if not isinstance(program, PortProgram):
        program = PortProgram(program)
    program.validate(kind, direction, dtype)
    limits = _Limits.of(kind)
    budget = _available_bds(kind, first_bd, limits.budget if max_bds is None else max_bds)
    own_task = len(program) == 1
    plans = [_plan_entry(tiling_in_words(tp, dtype), i, limits, own_task)
             for i, tp in enumerate(program)]
    reasons = [r for plan in plans for r in plan.reasons]
    items = [piece for plan in plans for item in plan.items
             for piece in _split(item, limits, reasons)]
    items = _compress(items, limits)
    if len(items) > budget:
        why = "; ".join(dict.fromkeys(reasons)) or "its tiles differ in padding or address steps"
        raise LoweringError(
            f"the port program needs {len(items)} BDs but {budget} are available to a {kind} "
            f"channel from BD {first_bd} ({len(items) - budget} over): {why}",
            needed=len(items), available=budget)
    repeat, iteration = plans[0].repeat, plans[0].iteration
    task_fields = {}
    if iteration is not None:
        task_fields = {"iteration_wrap": iteration[0], "iteration_stepsize": iteration[1]}
        repeat *= iteration[0]
    bds = []
    for n, item in enumerate(items):
        bd_id = first_bd + n
        fields = _bd_fields(item.shape, limits) | task_fields
        fields["base_address"] = base_address + item.base
        entry = program.entries[item.entry]
        packet = direction == "read" and entry.packet_port_id >= 0
        if n + 1 < len(items):
            fields |= {"use_next_bd": 1, "next_bd": bd_id + 1}
            if direction == "read" and not packet:
                fields["tlast_suppress"] = 1
        if packet:
            fields |= {"enable_packet": 1, "packet_id": entry.packet_port_id}
        try:
            bd = BufferDescriptor(kind, **fields)
        except AiedmaError as error:
            raise LoweringError(f"BD {bd_id} (entry {item.entry}): {error}") from None
        bds.append(LoweredBD(bd_id, bd, item.entry, entry.phase))
    return LoweredProgram(kind, direction, dtype, base_address, tuple(bds),
                          Task(first_bd, repeat))
