"""Run-length text of a stream, as docs/tiling.md writes it: ``Z x16, 0..95, Z x16``."""

from __future__ import annotations

import numpy as np

__all__ = ["format_runs"]


def format_runs(indices: np.ndarray, zero: str = "Z") -> str:
    """Compress a stream of indices (-1 = zero) into runs.

    A run is a stretch of zeros (``Z x32``), a stretch of consecutive indices
    (``0..223``), or a single index (``7``).

    Examples
    --------
    >>> format_runs(np.array([-1, -1, 0, 1, 2, 7, -1]))
    'Z x2, 0..2, 7, Z x1'
    """
    a = np.asarray(indices, dtype=np.int64).reshape(-1)
    if a.size == 0:
        return ""
    is_zero = a < 0
    # A run breaks wherever zero-ness changes or data stops counting up by one.
    breaks = np.flatnonzero(
        (is_zero[1:] != is_zero[:-1]) | (~is_zero[1:] & (a[1:] != a[:-1] + 1))
    ) + 1
    starts = np.concatenate(([0], breaks))
    ends = np.concatenate((breaks, [a.size]))
    parts = []
    for s, e in zip(starts.tolist(), ends.tolist(), strict=True):
        if is_zero[s]:
            parts.append(f"{zero} x{e - s}")
        elif e - s == 1:
            parts.append(str(a[s]))
        else:
            parts.append(f"{a[s]}..{a[e - 1]}")
    return ", ".join(parts)
