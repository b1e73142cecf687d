"""What a picture of a port program shows, as data: the access map.

The drawing code (``aiedma.draw``) only paints this; tests check the data. The
map covers the buffer and every position the walk reaches (padding lies outside
the buffer or the boundary), with, per cell, when the stream first visits it,
how often, and from which tile.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import TilingError, field_error
from .port import PortProgram

__all__ = ["AccessMap", "access_map"]


@dataclass(frozen=True)
class AccessMap:
    """A port program's walk over its buffer, cell by cell.

    Arrays are indexed ``[d0, d1, ...]`` (dimension 0 first) over the box
    ``origin .. origin + shape``, which holds the buffer and everything the walk
    reaches.

    Attributes
    ----------
    origin : tuple of int
        Coordinates of cell ``[0, 0, ...]`` (negative when the walk starts before
        the buffer).
    buffer, boundary : tuple of int
        The buffer's and the boundary's sizes (both start at coordinate 0).
    first : numpy.ndarray
        Stream position of the first visit, -1 where never visited.
    count : numpy.ndarray
        Number of visits (more than 1 where tiles overlap or repeat).
    tile : numpy.ndarray
        Number of the tile (in stream order, over all entries) of the first visit.
    zero : numpy.ndarray
        True where the visit sends a zero (outside the boundary or the buffer).
    tiles : list of (int, int, tuple, tuple)
        Each tile's number, the stream position of its first element, and the
        lowest and highest coordinates it covers.
    length : int
        Stream elements, zeros included.
    """

    origin: tuple[int, ...]
    buffer: tuple[int, ...]
    boundary: tuple[int, ...]
    first: np.ndarray
    count: np.ndarray
    tile: np.ndarray
    zero: np.ndarray
    tiles: list[tuple[int, int, tuple[int, ...], tuple[int, ...]]]
    length: int

    @property
    def shape(self) -> tuple[int, ...]:
        return self.first.shape


def access_map(program: PortProgram) -> AccessMap:
    """The access map of a port program (its entries must share one buffer shape).

    Parameters
    ----------
    program : PortProgram
        With ``buffer_dimension`` given (use :meth:`PortProgram.resolve` otherwise).
    """
    entries = list(program)
    buffer = entries[0].shape()["buffer"]
    for i, entry in enumerate(entries[1:], start=1):
        if entry.shape()["buffer"] != buffer:
            raise field_error(TilingError, f"entries[{i}].buffer_dimension",
                              entry.shape()["buffer"],
                              f"a picture needs one buffer shape for every entry "
                              f"(entries[0] has {list(buffer)})")
    boundary = entries[0].shape()["boundary"]
    coordinates, zeros, tiles = [], [], []
    for entry in entries:
        position = entry.coordinates()
        bound = np.asarray(entry.shape()["boundary"])
        coordinates.append(position)
        zeros.append(~np.all((position >= 0) & (position < bound), axis=1))
        tiles.append(np.repeat(np.arange(len(position) // entry.tile_size()),
                               entry.tile_size()))
    offsets = np.cumsum([0] + [t[-1] + 1 if t.size else 0 for t in tiles[:-1]])
    position = np.concatenate(coordinates)
    zero = np.concatenate(zeros)
    tile = np.concatenate([t + o for t, o in zip(tiles, offsets, strict=True)])
    low = np.minimum(position.min(axis=0), 0)
    high = np.maximum(position.max(axis=0) + 1, buffer)
    shape = tuple(int(h - lo) for lo, h in zip(low, high, strict=True))
    cells = np.ravel_multi_index(tuple((position - low).T), shape)
    count = np.bincount(cells, minlength=int(np.prod(shape)))
    # The first visit of a cell is its smallest stream position: np.unique gives the
    # index of each cell's first occurrence in stream order.
    first = np.full(int(np.prod(shape)), -1, dtype=np.int64)
    seen, at = np.unique(cells, return_index=True)
    first[seen] = at
    visited = first >= 0
    first_tile = np.full(first.size, -1, dtype=np.int64)
    first_tile[visited] = tile[first[visited]]
    first_zero = np.zeros(first.size, dtype=bool)
    first_zero[visited] = zero[first[visited]]
    # Tiles are numbered in stream order, each one contiguous run of positions.
    boxes = []
    if tile.size:
        starts = np.flatnonzero(np.r_[True, tile[1:] != tile[:-1]])
        lows = np.minimum.reduceat(position, starts, axis=0)
        highs = np.maximum.reduceat(position, starts, axis=0)
        for number, start, lo, hi in zip(tile[starts].tolist(), starts.tolist(), lows.tolist(),
                                         highs.tolist(), strict=True):
            boxes.append((number, start, tuple(lo), tuple(hi)))
    return AccessMap(tuple(int(v) for v in low), tuple(buffer), tuple(boundary),
                     first.reshape(shape), count.reshape(shape), first_tile.reshape(shape),
                     first_zero.reshape(shape), boxes, len(position))
