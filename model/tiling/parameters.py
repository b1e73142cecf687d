"""adf ``tiling_parameters`` and ``traversing_parameters``: the stream they make.

The field names, defaults and the walk are those of docs/tiling.md (AMD's graph
API). Objects are immutable and checked on construction for everything that
does not depend on where they are used; :meth:`TilingParameters.validate`
checks the rest for a tile kind, a direction and an element type.

Decisions (where AMD is silent; see docs/tiling.md):

* ``repetition`` runs the whole traversal that many times back to back.
* ``phase`` is carried, never changes the stream.
* A write whose walk leaves ``[0, boundary)`` is an error (no write padding).
* Overlapping writes keep the last value.
* A stride of 0 is legal (the same tile again); only negative strides are errors.
* ``boundary_dimension`` entries must be at least 1, like every other size.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields, replace
from math import prod
from typing import Any

import numpy as np

from ..arch.directions import WRITE, Direction, check_direction
from ..arch.dtypes import WORD_BITS, element_bits
from ..arch.kinds import DMA_KINDS, KINDS, DmaKind, check_kind
from ..errors import TilingError, field_error
from .walk import walk_axes, walk_coordinates, walk_indices

__all__ = [
    "KINDS",
    "MAX_DIMENSIONS",
    "PADDED_DIMENSIONS",
    "TilingParameters",
    "TraversingParameters",
]

MAX_DIMENSIONS = 4
"""A shared buffer has 1 to 4 dimensions."""

PADDED_DIMENSIONS = max(k.padded_dimensions for k in DMA_KINDS.values())
"""Only dimensions 0, 1 and 2 can be zero-padded (memory-tile read)."""


def _integer(name: str, value: Any) -> int:
    """``value`` as a Python int; bools, floats and strings are refused."""
    if isinstance(value, bool):
        raise field_error(TilingError, name, value, "must be an integer, not a bool")
    try:
        return operator.index(value)
    except TypeError:
        raise field_error(TilingError, name, value, "must be an integer") from None


def _vector(name: str, value: Any) -> tuple[int, ...]:
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise field_error(TilingError, name, value, "must be a list of integers")
    return tuple(_integer(f"{name}[{i}]", v) for i, v in enumerate(value))


def _at_least(name: str, values: tuple[int, ...], low: int, what: str) -> None:
    for i, v in enumerate(values):
        if v < low:
            raise field_error(TilingError, f"{name}[{i}]", v, f"{what} must be at least {low}")


@dataclass(frozen=True, kw_only=True)
class TraversingParameters:
    """One inter-tile loop of a tiling (adf ``traversing_parameters``).

    Parameters
    ----------
    dimension : int
        Buffer dimension the loop moves the tile along.
    stride : int
        Elements between consecutive tiles in ``dimension`` (>= 0).
    wrap : int
        Number of tiles in the loop (>= 1).
    """

    dimension: int
    stride: int
    wrap: int

    def __post_init__(self) -> None:
        for name in ("dimension", "stride", "wrap"):
            object.__setattr__(self, name, _integer(name, getattr(self, name)))
        if self.dimension < 0:
            raise field_error(TilingError, "dimension", self.dimension, "must be at least 0")
        if self.stride < 0:
            raise field_error(TilingError, "stride", self.stride, "strides must not be negative")
        if self.wrap < 1:
            raise field_error(TilingError, "wrap", self.wrap, "a loop needs at least 1 tile")

    @classmethod
    def coerce(cls, value: Any, where: str = "tile_traversal") -> TraversingParameters:
        """Accept a :class:`TraversingParameters`, a dict with adf names or ``(dim, stride, wrap)``.

        ``order`` is accepted as the old adf spelling of ``dimension``.
        """
        if isinstance(value, cls):
            return value
        try:
            if isinstance(value, Mapping):
                entry = dict(value)
                if "order" in entry:
                    if "dimension" in entry:
                        raise field_error(
                            TilingError, f"{where}.order", entry["order"],
                            "'order' is the old spelling of 'dimension'; give one, not both",
                        )
                    entry["dimension"] = entry.pop("order")
                unknown = sorted(set(entry) - {"dimension", "stride", "wrap"})
                if unknown:
                    raise field_error(
                        TilingError, f"{where}.{unknown[0]}", entry[unknown[0]],
                        "unknown field; a traversal has dimension, stride and wrap",
                    )
                missing = [k for k in ("dimension", "stride", "wrap") if k not in entry]
                if missing:
                    raise TilingError(f"{where}.{missing[0]} is missing: a traversal needs "
                                      "dimension, stride and wrap")
                return cls(**entry)
            if isinstance(value, (list, tuple)):
                if len(value) != 3:
                    raise field_error(
                        TilingError, where, list(value),
                        "a positional traversal is {dimension, stride, wrap}: 3 numbers",
                    )
                return cls(dimension=value[0], stride=value[1], wrap=value[2])
        except TilingError as error:
            if str(error).startswith(where):
                raise
            raise TilingError(f"{where}.{error}") from None
        raise field_error(
            TilingError, where, value,
            "must be a TraversingParameters, a dict or a (dimension, stride, wrap) triple",
        )

    def to_dict(self) -> dict[str, int]:
        """The adf spelling: ``{"dimension": ..., "stride": ..., "wrap": ...}``."""
        return {"dimension": self.dimension, "stride": self.stride, "wrap": self.wrap}


@dataclass(frozen=True, kw_only=True)
class TilingParameters:
    """One entry of an access pattern on a port (adf ``tiling_parameters``).

    Parameters
    ----------
    buffer_dimension : sequence of int
        Buffer shape, dimension 0 (contiguous) first. Empty: the buffer's own
        shape, supplied later (:meth:`resolve`, :meth:`gather`).
    tiling_dimension : sequence of int
        Tile shape. Empty: the whole buffer.
    offset : sequence of int
        Origin of the first tile, may be negative; missing entries are 0.
    tile_traversal : sequence
        Inter-tile loops, entry 0 innermost. Each a :class:`TraversingParameters`,
        a dict with adf names, or a ``(dimension, stride, wrap)`` triple.
    boundary_dimension : sequence of int, optional
        Real data lies in ``[0, boundary)``; default ``buffer_dimension``.
    repetition : int
        Times the whole traversal runs back to back (default 1).
    phase : int
        Carried into BDs; no effect on the stream (default 0).
    packet_port_id : int
        ``pktsplit`` output / ``pktmerge`` input of this entry (default -1: none).

    Examples
    --------
    >>> tp = TilingParameters(buffer_dimension=[10, 6], tiling_dimension=[3, 2],
    ...                       tile_traversal=[(0, 3, 2), (1, 2, 3)])
    >>> tp.indices()[:12].tolist()
    [0, 1, 2, 10, 11, 12, 3, 4, 5, 13, 14, 15]
    """

    buffer_dimension: tuple[int, ...] = ()
    tiling_dimension: tuple[int, ...] = ()
    offset: tuple[int, ...] = ()
    tile_traversal: tuple[TraversingParameters, ...] = ()
    boundary_dimension: tuple[int, ...] | None = None
    repetition: int = 1
    phase: int = 0
    packet_port_id: int = -1
    # The walk's loop nest, built once (objects are immutable).
    _axes: tuple = field(init=False, repr=False, compare=False, default=())

    def __post_init__(self) -> None:
        def put(name: str, value: Any) -> None:
            object.__setattr__(self, name, value)

        put("buffer_dimension", _vector("buffer_dimension", self.buffer_dimension))
        put("tiling_dimension", _vector("tiling_dimension", self.tiling_dimension))
        put("offset", _vector("offset", self.offset))
        if isinstance(self.tile_traversal, (str, bytes, Mapping)) or not isinstance(
            self.tile_traversal, Iterable
        ):
            raise field_error(
                TilingError, "tile_traversal", self.tile_traversal,
                "must be a list of traversals",
            )
        put(
            "tile_traversal",
            tuple(
                TraversingParameters.coerce(t, f"tile_traversal[{i}]")
                for i, t in enumerate(self.tile_traversal)
            ),
        )
        if self.boundary_dimension is not None:
            bound = _vector("boundary_dimension", self.boundary_dimension)
            put("boundary_dimension", bound or None)
        for name in ("repetition", "phase", "packet_port_id"):
            put(name, _integer(name, getattr(self, name)))
        self._check_structure()

    # -- construction-time rules ------------------------------------------

    def _check_structure(self) -> None:
        buffer, tile, bound = self.buffer_dimension, self.tiling_dimension, self.boundary_dimension
        _at_least("buffer_dimension", buffer, 1, "buffer sizes")
        _at_least("tiling_dimension", tile, 1, "tile sizes")
        if bound is not None:
            _at_least("boundary_dimension", bound, 1, "boundary sizes")
        if self.repetition < 1:
            raise field_error(TilingError, "repetition", self.repetition, "must be at least 1")
        if self.phase < 0:
            raise field_error(TilingError, "phase", self.phase, "must be at least 0")
        if self.packet_port_id < -1:
            raise field_error(
                TilingError, "packet_port_id", self.packet_port_id,
                "must be -1 (no packet port) or a port number >= 0",
            )
        if len(buffer) > MAX_DIMENSIONS:
            raise field_error(
                TilingError, "buffer_dimension", buffer,
                f"a buffer has at most {MAX_DIMENSIONS} dimensions, this one has {len(buffer)}",
            )
        # Without buffer_dimension the number of dimensions comes from the
        # tile or the boundary; all given vectors must agree on it.
        given = [(n, v) for n, v in (("buffer_dimension", buffer), ("tiling_dimension", tile),
                                     ("boundary_dimension", bound)) if v]
        if given:
            ref_name, ref = given[0]
            for name, vector in given[1:]:
                if len(vector) != len(ref):
                    raise field_error(
                        TilingError, name, vector,
                        f"has {len(vector)} entries but {ref_name}={_fmt(ref)} has {len(ref)}",
                    )
            ndim = len(ref)
            if len(self.offset) > ndim:
                if any(self.offset[ndim:]):
                    raise field_error(
                        TilingError, "offset", self.offset,
                        f"has {len(self.offset)} entries but the buffer has {ndim} dimensions "
                        "(entries past them may only be 0)",
                    )
                # zeros past the buffer's dimensions move nothing: AMD's tools accept them
                object.__setattr__(self, "offset", self.offset[:ndim])
        else:
            ndim = MAX_DIMENSIONS
        for i, t in enumerate(self.tile_traversal):
            if t.dimension >= ndim:
                raise field_error(
                    TilingError, f"tile_traversal[{i}].dimension", t.dimension,
                    f"names a dimension the buffer does not have (dimensions 0..{ndim - 1})",
                )
        if buffer and bound:
            for d, (b, n) in enumerate(zip(bound, buffer, strict=True)):
                if b > n:
                    raise field_error(
                        TilingError, f"boundary_dimension[{d}]", b,
                        f"must not exceed buffer_dimension[{d}]={n}",
                    )
        if buffer:
            object.__setattr__(self, "_axes", tuple(walk_axes(
                tile or buffer,
                tuple((t.dimension, t.stride, t.wrap) for t in self.tile_traversal),
                self.repetition,
            )))

    # -- the walk -----------------------------------------------------------

    @property
    def ndim(self) -> int:
        """Number of buffer dimensions (0 while ``buffer_dimension`` is left to the buffer)."""
        return len(self.buffer_dimension)

    def resolve(self, buffer_dimension: Iterable[int]) -> TilingParameters:
        """This entry with an empty ``buffer_dimension`` filled in from the buffer's shape.

        An entry that names its own ``buffer_dimension`` is returned unchanged.
        """
        if self.buffer_dimension:
            return self
        return replace(self, buffer_dimension=tuple(buffer_dimension))

    def _resolved(self) -> TilingParameters:
        if not self.buffer_dimension:
            raise field_error(
                TilingError, "buffer_dimension", (),
                "the walk needs the buffer's shape: give buffer_dimension, call "
                "resolve(shape), or use gather/scatter with a buffer",
            )
        return self

    def shape(self) -> dict[str, tuple[int, ...]]:
        """Resolved vectors: buffer, tile, offset (full length) and boundary."""
        tp = self._resolved()
        buffer = tp.buffer_dimension
        return {
            "buffer": buffer,
            "tile": tp.tiling_dimension or buffer,
            "offset": tp.offset + (0,) * (len(buffer) - len(tp.offset)),
            "boundary": tp.boundary_dimension or buffer,
        }

    def stream_length(self) -> int:
        """Elements in the stream: ``repetition * prod(tile) * prod(wraps)``, zeros included."""
        return prod(a.length for a in self._resolved()._axes)

    def indices(self) -> np.ndarray:
        """The stream as linear element indices.

        Returns
        -------
        numpy.ndarray
            int64, one per stream element in order; ``lin(p) = p0 + B0*(p1 + B1*(...))``
            for data, -1 for a zero-padding element. Includes ``repetition``.
        """
        s = self.shape()
        return walk_indices(s["buffer"], s["offset"], s["boundary"], list(self._axes))

    def coordinates(self) -> np.ndarray:
        """Where each stream element sits: ``(elements, ndim)`` positions, padding included."""
        return walk_coordinates(self.shape()["offset"], list(self._axes))

    def tile_size(self) -> int:
        """Elements per tile (stream elements ``k * tile_size ..`` belong to tile ``k``)."""
        return prod(self.shape()["tile"])

    def extents(self) -> list[tuple[int, int]]:
        """Lowest and highest position the walk reaches in each dimension.

        Strides are never negative, so the lowest is the offset and the highest
        is offset + sum((wrap - 1) * stride) + tile - 1.
        """
        s = self.shape()
        reach = list(s["offset"])
        for t in self.tile_traversal:
            reach[t.dimension] += (t.wrap - 1) * t.stride
        return [(lo, hi + size - 1) for lo, hi, size in zip(s["offset"], reach, s["tile"],
                                                            strict=True)]

    def padded_dimensions(self) -> list[int]:
        """Dimensions in which the walk leaves ``[0, boundary)`` (those make zeros)."""
        bound = self.shape()["boundary"]
        return [d for d, (lo, hi) in enumerate(self.extents()) if lo < 0 or hi >= bound[d]]

    # -- reading and writing a buffer ------------------------------------------

    def gather(self, buffer: np.ndarray) -> np.ndarray:
        """The read (MM2S) stream: buffer values in walk order, 0 where padded.

        Parameters
        ----------
        buffer : numpy.ndarray
            The buffer, C order, so a NumPy shape ``(6, 10)`` holds a ``{10, 6}``
            buffer; any shape with ``prod(buffer_dimension)`` elements is accepted
            (adf may re-shape a buffer). With an empty ``buffer_dimension`` the
            array's own shape is used.
        """
        buffer = np.asarray(buffer)
        tp = self._for_buffer(buffer)
        # One zero appended at the end: index -1 then reads it.
        return np.append(buffer.reshape(-1), buffer.dtype.type(0))[tp.indices()]

    def scatter(self, stream: np.ndarray, buffer: np.ndarray) -> np.ndarray:
        """Store a write (S2MM) stream into ``buffer`` in walk order; returns ``buffer``.

        Overlapping positions keep the last value. The walk must stay inside
        ``[0, boundary)``: writes have no padding. Nothing is written unless
        every check passes.
        """
        index = self.write_indices(buffer)
        store_stream(buffer, index, stream_of_length(stream, index.size, "tiling"))
        return buffer

    def write_indices(self, buffer: np.ndarray) -> np.ndarray:
        """Where each stream element lands in ``buffer`` (checked: no zero positions)."""
        tp = self._for_buffer(buffer)
        index = tp.indices()
        if index.size and index.min() < 0:
            tp.validate(kind="memtile", direction="write")  # raises, naming the dimension
        return index

    def _for_buffer(self, buffer: np.ndarray) -> TilingParameters:
        shape = tuple(reversed(np.shape(buffer)))
        tp = self.resolve(shape)
        size = prod(tp.buffer_dimension)
        if np.size(buffer) != size:
            raise field_error(
                TilingError, "buffer size", np.size(buffer),
                f"buffer_dimension={_fmt(tp.buffer_dimension)} holds {size} elements",
            )
        return tp

    # -- context rules -------------------------------------------------------

    def validate(
        self,
        kind: str = "memtile",
        direction: str = "read",
        dtype: str = "int32",
    ) -> TilingParameters:
        """Check the rules that depend on where the entry runs; returns ``self``.

        Parameters
        ----------
        kind : {"tile", "memtile", "shim"}
            The DMA that runs it: core tile, memory tile or shim.
        direction : {"read", "write"}
            ``read`` is MM2S (memory to stream), ``write`` is S2MM.
        dtype : str
            adf element type; sub-word types must keep dimension 0 word-aligned.

        Raises
        ------
        TilingError
            Naming the field, the value and the rule.
        """
        dma = DMA_KINDS[check_kind(kind, TilingError)]
        way = check_direction(direction, "access", TilingError)
        bits = element_bits(dtype)
        s = self.shape()
        for d in self.padded_dimensions():
            self._refuse_padding(d, dma, way, s)
        if bits < WORD_BITS:
            self._check_word_alignment(dtype, WORD_BITS // bits, s)
        return self

    def _refuse_padding(self, d: int, dma: DmaKind, way: Direction, s: dict) -> None:
        lo, hi = self.extents()[d]
        loops = [f"stride {t.stride} wrap {t.wrap}"
                 for t in self.tile_traversal if t.dimension == d]
        fields_ = f"offset[{d}]={s['offset'][d]}, tiling_dimension[{d}]={s['tile'][d]}"
        if loops:
            fields_ += f", tile_traversal on dimension {d}: " + "; ".join(loops)
        where = (
            f"{fields_}: the walk reaches positions {lo}..{hi} of dimension {d}, "
            f"outside the boundary [0, {s['boundary'][d]})"
        )
        if way is WRITE:
            raise TilingError(f"{where}; a write cannot leave the boundary (the hardware has no "
                              f"write padding)")
        if not dma.pads(way):
            raise TilingError(f"{where}; zero padding exists only on a memory-tile read, "
                              f"not on a {dma.adjective} read")
        if d >= dma.padded_dimensions:
            raise TilingError(f"{where}; only dimensions 0, 1 and 2 can be zero-padded")

    def _check_word_alignment(self, dtype: str, per_word: int, s: dict) -> None:
        rule = (f"with {dtype} ({per_word} per 32-bit word) dimension-0 sizes, offsets and "
                f"strides must be multiples of {per_word}")
        checks = [
            ("buffer_dimension[0]", s["buffer"][0]),
            ("tiling_dimension[0]", s["tile"][0]),
            ("offset[0]", s["offset"][0]),
            ("boundary_dimension[0]", s["boundary"][0]),
        ]
        checks += [(f"tile_traversal[{i}].stride", t.stride)
                   for i, t in enumerate(self.tile_traversal) if t.dimension == 0]
        for name, value in checks:
            if value % per_word:
                raise field_error(TilingError, name, value, rule)

    # -- dictionaries ----------------------------------------------------------

    _FIELDS = ("buffer_dimension", "tiling_dimension", "offset", "tile_traversal",
               "boundary_dimension", "repetition", "phase", "packet_port_id")

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> TilingParameters:
        """Build from a dict with adf field names (as in a JSON file).

        Unknown fields are errors; missing ones take the adf defaults.
        """
        if not isinstance(d, Mapping):
            raise field_error(TilingError, "tiling", d, "must be a dict of adf field names")
        unknown = sorted(set(d) - set(cls._FIELDS))
        if unknown:
            raise field_error(
                TilingError, unknown[0], d[unknown[0]],
                "unknown field; tiling_parameters has " + ", ".join(cls._FIELDS),
            )
        return cls(**d)

    def to_dict(self) -> dict[str, Any]:
        """The adf spelling, JSON-ready; ``from_dict(tp.to_dict()) == tp``.

        ``boundary_dimension`` is left out when it defaults to the buffer.
        """
        out: dict[str, Any] = {}
        for f in fields(self):
            if not f.init:
                continue
            value = getattr(self, f.name)
            if f.name == "tile_traversal":
                value = [t.to_dict() for t in value]
            elif f.name == "boundary_dimension":
                if value is None:
                    continue
                value = list(value)
            elif isinstance(value, tuple):
                value = list(value)
            out[f.name] = value
        return out


def stream_of_length(stream: np.ndarray, size: int, writer: str) -> np.ndarray:
    stream = np.asarray(stream).reshape(-1)
    if stream.size != size:
        raise field_error(
            TilingError, "stream length", stream.size, f"the {writer} writes {size} elements"
        )
    return stream


def store_stream(buffer: np.ndarray, index: np.ndarray, stream: np.ndarray) -> None:
    """``buffer.flat[index[k]] = stream[k]`` in order, so a repeated index keeps the last value.

    NumPy does not promise an order for repeated indices in one assignment,
    hence the explicit last-occurrence selection.
    """
    positions, first = np.unique(index[::-1], return_index=True)
    np.put(buffer, positions, stream[::-1][first])


def _fmt(vector: tuple[int, ...]) -> str:
    return "[" + ", ".join(str(v) for v in vector) + "]"
