"""The vectorised tiling walk: loop nest in, linear element indices out.

This module knows nothing about adf names or validation; :mod:`.tiling` hands
it resolved, checked numbers. The walk of docs/tiling.md is a loop nest

    repetition > traversal loops (outermost first) > tile dimensions (N-1 .. 0)

whose every level is an *axis* with a length, the buffer dimension it moves
along (none for the repetition) and a step in elements along that dimension.

Two passes make the stream, both NumPy, neither a Python loop per element or
per tile:

1. The linear index ``lin(p)`` is a sum of one term per axis: affine in the
   digits of the loop counters, so the stream is built by doubling
   (:func:`.doubling.fill_affine`), one contiguous add per NumPy call.
2. A position is zero iff some dimension's coordinate leaves ``[0, bound)``.
   A coordinate depends only on the axes of its own dimension, so for each
   dimension the few bad combinations of *its* axes are found on a small grid.
   Seen as an array with one axis per loop, the stream's zeros of one bad
   combination are one strided slice (runs along the dimension's innermost
   axis share a slice): a strided write each, which costs in proportion to the
   zeros, not to the stream. Many scattered combinations are expanded into flat
   positions instead, and written in one indexed write.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

import numpy as np

from .doubling import fill_affine

__all__ = ["ZERO", "Axis", "walk_axes", "walk_coordinates", "walk_indices"]

ZERO = -1
"""Stream entry of a zero-padding element."""

# Above this many strided slice writes for one dimension's zeros, one indexed write
# of their flat positions is cheaper (a slice write costs about a microsecond).
_ZERO_SLICES_MAX = 256


@dataclass(frozen=True)
class Axis:
    """One loop of the walk.

    Attributes
    ----------
    length : int
        Iterations of the loop (>= 1).
    dimension : int or None
        Buffer dimension the loop moves along; None for the repetition loop.
    step : int
        Elements moved along ``dimension`` per iteration.
    """

    length: int
    dimension: int | None
    step: int


def walk_axes(
    tiling_dimension: tuple[int, ...],
    traversal: tuple[tuple[int, int, int], ...],
    repetition: int,
) -> list[Axis]:
    """The loop nest of one tiling entry, outermost axis first.

    Parameters
    ----------
    tiling_dimension : tuple of int
        Tile shape, dimension 0 first.
    traversal : tuple of (dimension, stride, wrap)
        Inter-tile loops, entry 0 innermost (adf order).
    repetition : int
        Times the whole traversal runs.
    """
    axes = [Axis(repetition, None, 0)]
    axes += [Axis(wrap, dim, stride) for dim, stride, wrap in reversed(traversal)]
    axes += [Axis(size, dim, 1) for dim, size in reversed(list(enumerate(tiling_dimension)))]
    return axes


def walk_indices(
    buffer_dimension: tuple[int, ...],
    offset: tuple[int, ...],
    boundary: tuple[int, ...],
    axes: list[Axis],
) -> np.ndarray:
    """Linear element index of every stream element, :data:`ZERO` where padded.

    Parameters
    ----------
    buffer_dimension : tuple of int
        Buffer shape ``B``, dimension 0 first; ``lin(p) = p0 + B0*(p1 + B1*(...))``.
    offset : tuple of int
        Origin of the first tile, one entry per dimension.
    boundary : tuple of int
        Real data lies in ``[0, boundary[d])`` in every dimension ``d``.
    axes : list of Axis
        The loop nest, outermost first (see :func:`walk_axes`).

    Returns
    -------
    numpy.ndarray
        int64, one entry per stream element, in stream order.
    """
    axes = [a for a in axes if a.length > 1]  # a 1-long loop only ever sits at 0
    multiplier = np.cumprod((1, *buffer_dimension[:-1]))
    base = int(np.dot(offset, multiplier))

    def ramp(i: int, scale: int) -> np.ndarray:
        return np.arange(axes[i].length, dtype=np.int64) * scale

    def lin_scale(axis: Axis) -> int:
        return 0 if axis.dimension is None else axis.step * int(multiplier[axis.dimension])

    lengths = [a.length for a in axes]
    out = np.empty(prod(lengths), dtype=np.int64)
    inner_first = axes[::-1]   # fill_affine's digits run innermost first
    fill_affine(out, base, [lin_scale(a) for a in inner_first],
                [a.length for a in inner_first[:-1]])

    for dim, bound in enumerate(boundary):
        mine = [i for i, a in enumerate(axes) if a.dimension == dim]
        coordinate = offset[dim] + _outer_sum([ramp(i, axes[i].step) for i in mine])
        bad = (coordinate < 0) | (coordinate >= bound)
        if bad.any():
            _write_zeros(out, lengths, mine, bad.reshape([lengths[i] for i in mine]))
    return out


def _write_zeros(out: np.ndarray, lengths: list[int], mine: list[int], bad: np.ndarray) -> None:
    """Set :data:`ZERO` where the counters of the axes ``mine`` form a ``bad`` combination.

    ``bad`` has one axis per axis in ``mine`` (outermost first); the stream is seen as
    an array of shape ``lengths``. Each run of bad values along the last of ``mine``
    is one strided slice of that array.
    """
    if not mine:   # no loop moves along the dimension: every element is outside
        out[:] = ZERO
        return
    view = out.reshape(lengths)
    runs = _bad_runs(bad)
    if len(runs) > _ZERO_SLICES_MAX:
        flat_stride = _flat_strides(lengths)
        others = [i for i in range(len(lengths)) if i not in mine]
        first = _outer_sum([np.arange(lengths[i], dtype=np.int64) * flat_stride[i]
                            for i in mine])[bad.ravel()]
        rest = _outer_sum([np.arange(lengths[i], dtype=np.int64) * flat_stride[i]
                           for i in others])
        out[np.add.outer(first, rest).ravel()] = ZERO
        return
    index: list = [slice(None)] * len(lengths)
    for outer, start, stop in runs:
        for axis, counter in zip(mine[:-1], outer, strict=True):
            index[axis] = counter
        index[mine[-1]] = slice(start, stop)
        view[tuple(index)] = ZERO


def _bad_runs(bad: np.ndarray) -> list[tuple[tuple[int, ...], int, int]]:
    """Runs of True along the last axis of ``bad``: (counters of the others, start, stop).

    A plain loop: the grid has one entry per combination of one dimension's loop
    counters (tens to thousands), where NumPy's per-call cost would dominate.
    """
    width = bad.shape[-1]
    outer_shape = bad.shape[:-1]
    runs = []
    for row, values in enumerate(bad.reshape(-1, width).tolist()):
        if not any(values):
            continue
        outer = tuple(int(c) for c in np.unravel_index(row, outer_shape)) if outer_shape else ()
        start = None
        for j, value in enumerate([*values, False]):
            if value and start is None:
                start = j
            elif not value and start is not None:
                runs.append((outer, start, j))
                start = None
    return runs


def walk_coordinates(offset: tuple[int, ...], axes: list[Axis]) -> np.ndarray:
    """Position of every stream element, padding included: an ``(elements, N)`` array.

    Column ``d`` is the element's coordinate in dimension ``d`` (it may lie outside
    the buffer where the element is a zero). Used for pictures, not for speed.
    """
    axes = [a for a in axes if a.length > 1]
    columns = []
    for dim, origin in enumerate(offset):
        terms = [np.arange(a.length, dtype=np.int64) * (a.step if a.dimension == dim else 0)
                 for a in axes]
        columns.append(origin + _outer_sum(terms))
    return np.stack(columns, axis=1)


def _outer_sum(terms: list[np.ndarray]) -> np.ndarray:
    """Flattened outer sum: ``r[i0, i1, ...] = terms[0][i0] + terms[1][i1] + ...``."""
    total = np.zeros(1, dtype=np.int64)
    for term in terms:
        total = np.add.outer(total, term).ravel()
    return total


def _flat_strides(lengths: list[int]) -> list[int]:
    """C-order strides, in elements, of an array with these axis lengths."""
    strides = [1] * len(lengths)
    for i in range(len(lengths) - 2, -1, -1):
        strides[i] = strides[i + 1] * lengths[i + 1]
    return strides
