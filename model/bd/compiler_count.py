"""How many BDs AMD's aiecompiler needs for a tiling: a rule fitted to its tutorial's outcomes.

:func:`~.lower.lower` finds few BDs (it folds padding into the BD's zero counters and
tiles into its dimensions wherever the registers allow). AMD's compiler allocates
more, and refuses a port when they do not fit ("Failed to allocate buffer descriptors
... insufficient number of available buffer descriptors"). Its rule is not
published; AMD's memory-tile tiling tutorial compiles five configurations and counts
BDs by hand for some, and this module is the one rule found that gives every one of its
outcomes (docs/decisions.md "The compiler's BD count" has the cases and what stays
unknown):

1. **Loop nest.** The tiling is a nest of levels, innermost first, each a stride in
   elements and a wrap: the tile's dimensions (a size-1 dimension is no level), then
   the traversal loops (a wrap-1 loop is none). Levels are not merged, even where the
   inner one's stride x wrap is the outer one's stride: the tutorial's test case 1
   (5 levels, its last two contiguous) fails to compile and its test case 2, the same
   addresses as 4 levels, compiles.
2. **Split level.** A traversal loop whose tiles are not all padded alike (the first
   tile padded before, the middle ones not, the last padded after) takes one BD per
   run of alike tiles; the innermost such loop is the split level. Padding that is the
   same on every tile (zeros around each tile) costs nothing: the BD's zero counters do
   it.
3. **Unrolled.** A BD holds ``dimensions`` levels (4 on a memory tile, 3 on a core tile
   and a shim: "1 BD handles 4 stride values and 3 wraps", the outermost level's count
   being the buffer length). Every level past those, and every level outside the split
   level (the split's BDs run one after the other inside each of its iterations),
   becomes one BD per iteration.
4. **Phases.** A dataflow graph always has 2 phases (ping and pong) and the count
   doubles (AMD's BD guide); the total is what must fit the channel.
   Both figures are given (:attr:`CompilerCount.per_phase`, :attr:`CompilerCount.total`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from itertools import groupby
from math import prod

from ..arch.kinds import DMA_KINDS, check_kind
from ..tiling.parameters import TilingParameters
from ..tiling.port import PortProgram

__all__ = ["PHASES", "CompilerCount", "CountLevel", "compiler_bd_count"]

PHASES = 2
"""Phases of a dataflow graph's buffer (ping and pong), each with its own BDs."""


@dataclass(frozen=True)
class CountLevel:
    """One loop of the nest: a stride in elements, a wrap, where it came from.

    Attributes
    ----------
    runs : int
        Runs of alike-padded tiles along the level (1 unless it is a split level).
    """

    stride: int
    wrap: int
    source: str
    runs: int = 1


@dataclass(frozen=True)
class CompilerCount:
    """The compiler's BD count for one port program.

    Attributes
    ----------
    per_phase : int
        BDs for one pass of the port program.
    total : int
        ``per_phase * PHASES``: both buffers of a dataflow graph.
    available : int
        BDs one channel of the kind can use (a memory-tile channel: its half of 48).
    levels : tuple of tuple of CountLevel
        Per entry, the nest (what the count is the product over).
    """

    kind: str
    per_phase: int
    total: int
    available: int
    levels: tuple[tuple[CountLevel, ...], ...]

    def warning(self) -> str | None:
        """A sentence when the compiler's count does not fit the channel, else None."""
        if self.total <= self.available:
            return None
        return (f"aiecompiler needs {self.total} BDs for this port ({self.per_phase} a phase, "
                f"{PHASES} phases), more than the {self.available} a "
                f"{DMA_KINDS[self.kind].adjective} channel has: expect 'insufficient number "
                f"of available buffer descriptors'")


def _nest(tp: TilingParameters) -> list[CountLevel]:
    """The tiling's levels, innermost first, each split level with its runs."""
    s = tp.shape()
    buffer, tile, offset, boundary = s["buffer"], s["tile"], s["offset"], s["boundary"]
    unit = [prod(buffer[:d]) for d in range(len(buffer))]
    levels = [CountLevel(unit[d], size, f"tile dimension {d}")
              for d, size in enumerate(tile) if size > 1]
    for k, t in enumerate(tp.tile_traversal):
        if t.wrap == 1:
            continue
        d = t.dimension

        def padding(i: int, d: int = d, stride: int = t.stride) -> tuple[int, int]:
            start = offset[d] + i * stride
            return (min(tile[d], max(0, -start)),
                    min(tile[d], max(0, start + tile[d] - boundary[d])))

        runs = sum(1 for _ in groupby(range(t.wrap), key=padding))
        levels.append(CountLevel(t.stride * unit[d], t.wrap,
                                 f"tile_traversal[{k}] (dimension {d})", runs))
    return levels


def _entry_count(levels: list[CountLevel], held: int) -> int:
    """BDs for one entry's nest, of which a BD holds ``held`` levels (rules 2 and 3)."""
    split = next((i for i, level in enumerate(levels) if level.runs > 1), None)
    count = 1
    for i, level in enumerate(levels):
        if i >= held or (split is not None and i > split):
            count *= level.wrap           # unrolled: a BD per iteration
        elif i == split:
            count *= level.runs           # a BD per run of alike tiles
    return count


def compiler_bd_count(program: PortProgram | TilingParameters | Iterable,
                      kind: str) -> CompilerCount:
    """The BDs aiecompiler needs for ``program`` on a ``kind`` DMA channel (module rule).

    Parameters
    ----------
    program : PortProgram, TilingParameters or iterable of them
        Resolved (buffer dimensions known).
    kind : {"tile", "memtile", "shim"}

    Returns
    -------
    CompilerCount

    Examples
    --------
    AMD's memory-tile test case 1: 4x4 quarters of 8x8 layers, 16 layers (it does not
    compile: 32 BDs against 24).

    >>> tp = TilingParameters(buffer_dimension=[8, 8, 16], tiling_dimension=[4, 4, 1],
    ...                       tile_traversal=[(0, 4, 2), (1, 4, 2), (2, 1, 16)])
    >>> count = compiler_bd_count(tp, "memtile")
    >>> count.per_phase, count.total, count.available
    (16, 32, 24)
    """
    dma = DMA_KINDS[check_kind(kind)]
    program = program if isinstance(program, PortProgram) else PortProgram(program)
    nests = tuple(tuple(_nest(tp)) for tp in program)
    per_phase = sum(_entry_count(list(n), dma.address_dimensions) for n in nests)
    available = len(dma.channel_bds(0))
    return CompilerCount(dma.name, per_phase, per_phase * PHASES, available, nests)
