"""Benchmarks of the golden model: ``python -m aiedma.model.bench`` (or ``make bench``).

Figures are printed, never asserted: each is the best of several runs, next to
a baseline measured in the same run on the same machine, so the ratio means
something where the absolute rate does not.
"""

from __future__ import annotations

import argparse
import platform
import time
from collections.abc import Callable

import numpy as np

from .tiling import TilingParameters

__all__ = ["HALO_WALK", "best_time", "main"]

HALO_WALK = TilingParameters(
    buffer_dimension=[128, 64, 32, 16],
    tiling_dimension=[36, 18, 10, 16],
    offset=[-2, -1, -1, 0],
    tile_traversal=[
        {"dimension": 0, "stride": 32, "wrap": 4},
        {"dimension": 1, "stride": 16, "wrap": 4},
        {"dimension": 2, "stride": 8, "wrap": 4},
    ],
)
"""A 4-D memory-tile read of overlapping halo tiles (a convolution's input):
every tile reaches 2 elements past the buffer in dimension 0 and 1 row / plane
in dimensions 1 and 2, so the edge tiles carry zero padding. 6.6 M elements."""


def best_time(fn: Callable[[], object], repeat: int) -> float:
    """Fastest of ``repeat`` wall-clock timings of ``fn()``, in seconds."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main(argv: list[str] | None = None) -> None:
    """Print the walk rate of :data:`HALO_WALK` and its ratio to ``np.arange``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7, help="runs per figure (best is kept)")
    args = parser.parse_args(argv)

    tp = HALO_WALK.validate(kind="memtile", direction="read")
    n = tp.stream_length()
    zeros = int(np.count_nonzero(tp.indices() < 0))
    walk = best_time(tp.indices, args.repeat)
    arange = best_time(lambda: np.arange(n, dtype=np.int64), args.repeat)
    print(f"machine: {platform.machine()}, {platform.python_implementation()} "
          f"{platform.python_version()}, numpy {np.__version__}")
    print(f"4-D halo walk: {n:,} elements ({zeros / n:.1%} zero padding), "
          f"best of {args.repeat}")
    print(f"  indices():  {walk * 1e3:8.2f} ms  {n / walk / 1e6:8.1f} M indices/s")
    print(f"  np.arange:  {arange * 1e3:8.2f} ms  {n / arange / 1e6:8.1f} M indices/s")
    print(f"  ratio walk/arange rate: {arange / walk:.2f} (goal >= 0.5)")


if __name__ == "__main__":
    main()
