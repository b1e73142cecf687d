"""The two transfer directions, under both of their names.

The tiling layer (and adf's ``read_access`` / ``write_access``) says *read* and
*write*; the DMA says *MM2S* and *S2MM*. They are the same two things: a read moves
memory to a stream (MM2S), a write moves a stream into memory (S2MM). This module
is the one place that says so; every layer takes its names from here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..errors import AiedmaError, field_error

__all__ = [
    "ACCESS_NAMES",
    "CHANNEL_NAMES",
    "DIRECTIONS",
    "READ",
    "WRITE",
    "Direction",
    "check_direction",
]


@dataclass(frozen=True)
class Direction:
    """One transfer direction.

    Parameters
    ----------
    access : str
        The tiling layer's name, ``"read"`` or ``"write"`` (adf ``read_access`` /
        ``write_access``).
    channel : str
        The DMA channel's name, ``"mm2s"`` or ``"s2mm"``.
    moves : str
        What it moves where, in words: ``"memory to stream"``.
    """

    access: str
    channel: str
    moves: str

    @property
    def title(self) -> str:
        """The channel name as the documents write it: ``"MM2S"`` or ``"S2MM"``."""
        return self.channel.upper()

    def __str__(self) -> str:
        return f"{self.access} = {self.title} ({self.moves})"


READ = Direction("read", "mm2s", "memory to stream")
"""A read: memory to stream, an MM2S channel."""

WRITE = Direction("write", "s2mm", "stream to memory")
"""A write: stream to memory, an S2MM channel."""

DIRECTIONS: tuple[Direction, ...] = (READ, WRITE)
"""Both directions, read (MM2S) first."""

ACCESS_NAMES: tuple[str, ...] = tuple(d.access for d in DIRECTIONS)
"""``("read", "write")``: the names the tiling layer and the lowering take."""

CHANNEL_NAMES: tuple[str, ...] = tuple(d.channel for d in DIRECTIONS)
"""``("mm2s", "s2mm")``: the names DMA channels take."""


def check_direction(value: object, vocabulary: Literal["access", "channel"],
                    error: type[AiedmaError] = AiedmaError,
                    field: str = "direction") -> Direction:
    """The :class:`Direction` called ``value`` in one vocabulary.

    Parameters
    ----------
    value : object
        The name given, e.g. ``"read"`` or ``"s2mm"``.
    vocabulary : {"access", "channel"}
        Which names the caller takes: ``"read"``/``"write"`` or ``"mm2s"``/``"s2mm"``.
        A layer keeps to one vocabulary, so a name from the other is an error
        whose text shows how the two map.
    error : type of AiedmaError
        The error class the caller raises (``TilingError``, ``ChannelError``, ...).
    field : str
        The field name shown in the message.

    Raises
    ------
    AiedmaError
        Of class ``error``: ``direction='in': must be one of mm2s, s2mm (read = MM2S
        ..., write = S2MM ...)``.

    Examples
    --------
    >>> check_direction("s2mm", "channel") is WRITE
    True
    >>> check_direction("mm2s", "access")
    Traceback (most recent call last):
    ...
    aiedma.model.errors.AiedmaError: direction='mm2s': must be one of read, write \
(read = MM2S (memory to stream); write = S2MM (stream to memory))
    """
    names = ACCESS_NAMES if vocabulary == "access" else CHANNEL_NAMES
    if isinstance(value, str) and value in names:
        return DIRECTIONS[names.index(value)]
    mapping = "; ".join(str(d) for d in DIRECTIONS)
    raise field_error(error, field, value, f"must be one of {', '.join(names)} ({mapping})")
