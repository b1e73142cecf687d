"""The vectorised tiling walk: loop nest in, linear element indices out.

This module knows nothing about adf names or validation; :mod:`.tiling` hands
it resolved, checked numbers. The walk of docs/tiling.md is a loop nest

    repetition > traversal loops (outermost first) > tile dimensions (N-1 .. 0)

whose every level is an *axis* with a length, the buffer dimension it moves
along (none for the repetition) and a step in elements along that dimension.

Two passes make the stream, both NumPy, neither a Python loop per element or
per tile:

1. The linear index ``lin(p)`` is a sum of one term per axis, so the whole
   stream is an outer sum of small per-axis vectors. The innermost axes are
   summed into a block first so that the only full-size operation is one
   broadcast add of (outer block) x (inner block).
2. A position is zero iff some dimension's coordinate leaves ``[0, bound)``.
   A coordinate depends only on the axes of its own dimension, so for each
   dimension the few bad combinations of *its* axes are found on a small grid
   and expanded over the other axes into flat stream positions, which are set
   to -1. This costs in proportion to the zeros, not to the stream.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

import numpy as np

__all__ = ["ZERO", "Axis", "walk_axes", "walk_coordinates", "walk_indices"]

ZERO = -1
"""Stream entry of a zero-padding element."""

# Below this many elements, the inner block is grown by one more axis: the
# final broadcast then touches each output element exactly once while the
# per-row work stays a small fraction of it.
_INNER_BLOCK_MIN = 256


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

    out = _outer_sum_split([ramp(i, lin_scale(a)) for i, a in enumerate(axes)], base)

    flat_stride = _flat_strides([a.length for a in axes])
    for dim, bound in enumerate(boundary):
        mine = [i for i, a in enumerate(axes) if a.dimension == dim]
        others = [i for i, a in enumerate(axes) if a.dimension != dim]
        coordinate = offset[dim] + _outer_sum([ramp(i, axes[i].step) for i in mine])
        bad = (coordinate < 0) | (coordinate >= bound)
        if bad.any():
            first = _outer_sum([ramp(i, flat_stride[i]) for i in mine])[bad]
            rest = _outer_sum([ramp(i, flat_stride[i]) for i in others])
            out[np.add.outer(first, rest).ravel()] = ZERO
    return out


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


def _outer_sum_split(terms: list[np.ndarray], base: int) -> np.ndarray:
    """:func:`_outer_sum` plus ``base``, with a single full-size broadcast add."""
    split = len(terms)
    while split > 0 and prod(len(t) for t in terms[split:]) < _INNER_BLOCK_MIN:
        split -= 1
    outer = _outer_sum(terms[:split]) + base
    inner = _outer_sum(terms[split:])
    return np.add.outer(outer, inner).ravel()


def _flat_strides(lengths: list[int]) -> list[int]:
    """C-order strides, in elements, of an array with these axis lengths."""
    strides = [1] * len(lengths)
    for i in range(len(lengths) - 2, -1, -1):
        strides[i] = strides[i + 1] * lengths[i + 1]
    return strides
