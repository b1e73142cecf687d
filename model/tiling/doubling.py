"""An affine loop nest's index stream, built by doubling: the one fast way to fill one.

Both index streams of the model are affine in the digits of a mixed-radix counter
before their zeros are written: the tiling walk (:mod:`.walk`, one digit per loop)
and a BD's address stream (:func:`aiedma.model.bd.descriptor.stream_addresses`, one
digit per padded dimension). Both fill their array here.

Digit ``d`` of digit ``k`` is digit 0 plus ``d * steps[k]``, so the first unit of
digit ``k`` is built from the unit below by doubling: words ``n .. 2n`` are words
``0 .. n`` plus a constant. Every NumPy call is one contiguous add (a broadcast add
of rows and offsets runs at less than half that rate), about ``log2`` of each radix
of them, and nothing is built past the array's end.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["fill_affine", "repeat_units"]


def fill_affine(out: np.ndarray, first: int, steps: Sequence[int],
                radices: Sequence[int]) -> np.ndarray:
    """Fill ``out`` with ``first + sum(digit_k * steps[k])`` of each position's digits.

    Parameters
    ----------
    out : numpy.ndarray
        Contiguous int64 array; its size is the stream's length.
    first : int
        The value at position 0 (every digit 0).
    steps : sequence of int
        Added per unit of each digit, innermost digit first.
    radices : sequence of int
        The radix of each digit but the last of ``steps``, innermost first: the last
        digit is open (it takes the rest of the positions). At least 1 each.

    Returns
    -------
    numpy.ndarray
        ``out``.

    Examples
    --------
    >>> fill_affine(np.empty(7, dtype=np.int64), 100, [1, 10], [3]).tolist()
    [100, 101, 102, 110, 111, 112, 120]
    """
    if out.size:
        out[0] = first
        repeat_units(out, 1, steps, radices)
    return out


def repeat_units(out: np.ndarray, unit: int, steps: Sequence[int],
                 radices: Sequence[int]) -> np.ndarray:
    """Fill ``out`` from its first ``unit`` entries: :func:`fill_affine` of whole units.

    Position ``p * unit + i`` gets entry ``i`` plus ``sum(digit_k * steps[k])`` of the
    digits of ``p`` (a BD chain's passes, each the first moved by an iteration step).

    Parameters
    ----------
    out : numpy.ndarray
        Contiguous int64 array whose first ``unit`` entries are set.
    unit : int
        Entries per unit (at least 1).
    steps, radices : sequence of int
        As :func:`fill_affine`, per unit.

    Returns
    -------
    numpy.ndarray
        ``out``.
    """
    length = out.size
    built = min(unit, length)   # entries 0 .. built - 1 hold their value
    for k, step in enumerate(steps):
        goal = length if k >= len(radices) else min(length, built * radices[k])
        below = built
        while built < goal:
            count = min(built, goal - built)
            np.add(out[:count], (built // below) * step, out=out[built : built + count])
            built += count
        if built >= length:
            break
    return out
