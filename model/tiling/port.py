"""A port program: the list of tiling entries that one port runs in order."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from math import prod
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import TilingError, field_error
from .parameters import TilingParameters, store_stream, stream_of_length

__all__ = ["PortProgram", "load_port_program"]


class PortProgram:
    """The entries of one ``read_access`` / ``write_access``, run one after the other.

    Parameters
    ----------
    entries : iterable
        :class:`TilingParameters` or dicts with adf field names. All entries
        address the same buffer, so their ``buffer_dimension`` (where given)
        must hold the same number of elements (adf may re-shape a buffer).

    Examples
    --------
    >>> p = PortProgram([{"buffer_dimension": [4], "tiling_dimension": [2]},
    ...                  {"buffer_dimension": [4], "tiling_dimension": [2], "offset": [2]}])
    >>> p.indices().tolist()
    [0, 1, 2, 3]
    """

    def __init__(self, entries: Iterable[TilingParameters | Mapping[str, Any]]) -> None:
        if isinstance(entries, (Mapping, TilingParameters, str, bytes)):
            entries = [entries]
        items = []
        for i, entry in enumerate(entries):
            try:
                items.append(entry if isinstance(entry, TilingParameters)
                             else TilingParameters.from_dict(entry))
            except TilingError as error:
                raise TilingError(f"entries[{i}].{error}") from None
        if not items:
            raise field_error(TilingError, "entries", [], "a port program needs at least one entry")
        self.entries: tuple[TilingParameters, ...] = tuple(items)
        sized = [(i, e) for i, e in enumerate(self.entries) if e.buffer_dimension]
        for i, entry in sized[1:]:
            first_i, first = sized[0]
            if prod(entry.buffer_dimension) != prod(first.buffer_dimension):
                raise field_error(
                    TilingError, f"entries[{i}].buffer_dimension", entry.buffer_dimension,
                    f"holds {prod(entry.buffer_dimension)} elements but entries[{first_i}] "
                    f"addresses {prod(first.buffer_dimension)}: all entries of a port "
                    "address the same buffer",
                )

    def __iter__(self) -> Iterator[TilingParameters]:
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PortProgram) and self.entries == other.entries

    def __hash__(self) -> int:
        return hash(self.entries)

    def __repr__(self) -> str:
        return f"PortProgram({list(self.entries)!r})"

    def _each(self, method: str, *args: Any) -> list:
        out = []
        for i, entry in enumerate(self.entries):
            try:
                out.append(getattr(entry, method)(*args))
            except TilingError as error:
                raise TilingError(f"entries[{i}]: {error}") from None
        return out

    def resolve(self, buffer_dimension: Iterable[int]) -> PortProgram:
        """Every entry with an empty ``buffer_dimension`` given the buffer's shape."""
        shape = tuple(buffer_dimension)
        return PortProgram([e.resolve(shape) for e in self.entries])

    def stream_length(self) -> int:
        """Elements in the whole program's stream, zeros included."""
        return sum(self._each("stream_length"))

    def indices(self) -> np.ndarray:
        """The entries' streams back to back (int64 linear indices, -1 = zero)."""
        return np.concatenate(self._each("indices"))

    def validate(self, kind: str = "memtile", direction: str = "read",
                 dtype: str = "int32") -> PortProgram:
        """:meth:`TilingParameters.validate` on every entry; returns ``self``."""
        self._each("validate", kind, direction, dtype)
        return self

    def gather(self, buffer: np.ndarray) -> np.ndarray:
        """The read stream of the whole program over ``buffer``."""
        return np.concatenate(self._each("gather", buffer))

    def scatter(self, stream: np.ndarray, buffer: np.ndarray) -> np.ndarray:
        """Store a write stream entry by entry, in order; returns ``buffer``.

        Every entry is checked before anything is written.
        """
        index = np.concatenate(self._each("write_indices", buffer))
        store_stream(buffer, index, stream_of_length(stream, index.size, "port program"))
        return buffer

    @classmethod
    def from_json(cls, data: Any) -> PortProgram:
        """From decoded JSON: one tiling dict, or a list of them."""
        if isinstance(data, Mapping):
            data = [data]
        if not isinstance(data, list):
            raise field_error(
                TilingError, "port program", type(data).__name__,
                "must be a tiling dict or a list of tiling dicts",
            )
        return cls(data)

    def to_json(self) -> list[dict[str, Any]]:
        """A JSON-ready list of tiling dicts; ``from_json(p.to_json()) == p``."""
        return [e.to_dict() for e in self.entries]


def load_port_program(path: str | Path) -> PortProgram:
    """Read a port program from a JSON file (one tiling dict or a list)."""
    text = Path(path).read_text()
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise TilingError(f"{path}: not JSON: {error}") from None
    return PortProgram.from_json(data)
