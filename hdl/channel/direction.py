"""What differs between an MM2S and an S2MM channel, chosen in one place.

:data:`DIRECTION_PARTS` gives each direction its engine, its packet stage, its outside
ports (the stream and memory port a :class:`~.channel.Channel` and a
:class:`~aiedma.hdl.dma.DMA` show), whether it refuses padded BDs, and how its stream
runs through the packet stage. Every other part of a channel is the same for both.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from amaranth.hdl import Module
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from ..engine import MM2SEngine, S2MMEngine
from ..layouts import data_beat_layout
from ..memory_port import bus_attributes_signature, read_port_signature, write_port_signature
from .packet_stage import MM2SPacketStage, S2MMPacketStage

__all__ = ["DIRECTION_PARTS", "DirectionParts", "connect_outside", "mm2s_signature",
           "s2mm_signature"]


def mm2s_signature(kind: str, handshake: bool = False) -> wiring.Signature:
    """An MM2S channel's outside: its stream, its memory read port (the handshake port
    with ``handshake``, and on the shim its BD's bus attributes) and its token."""
    return wiring.Signature({
        "o": Out(stream.Signature(data_beat_layout())),
        **read_port_signature(kind, handshake).members, **_attributes(kind, handshake),
        "token": Out(1),
    })


def s2mm_signature(kind: str, handshake: bool = False) -> wiring.Signature:
    """An S2MM channel's outside: its stream, its memory write port (the handshake port
    with ``handshake``, and on the shim its BD's bus attributes) and its token."""
    return wiring.Signature({
        "i": In(stream.Signature(data_beat_layout())),
        **write_port_signature(kind, handshake).members, **_attributes(kind, handshake),
        "token": Out(1),
    })


def _attributes(kind: str, handshake: bool) -> dict:
    """A handshake port's bus attributes, for a kind whose BD has them."""
    signature = bus_attributes_signature(kind) if handshake else None
    return {} if signature is None else dict(signature.members)


def _mm2s_stream(m: Module, channel: wiring.Component, engine: wiring.Component,
                 stage: wiring.Component) -> None:
    wiring.connect(m, engine.o, stage.i)
    wiring.connect(m, stage.o, wiring.flipped(channel.o))


def _s2mm_stream(m: Module, channel: wiring.Component, engine: wiring.Component,
                 stage: wiring.Component) -> None:
    wiring.connect(m, wiring.flipped(channel.i), stage.i)
    wiring.connect(m, stage.o, engine.i)


@dataclass(frozen=True)
class DirectionParts:
    """The direction-specific parts of a channel.

    Attributes
    ----------
    engine : callable
        ``engine(kind, outstanding)``: :class:`~aiedma.hdl.engine.MM2SEngine` or
        ``S2MMEngine``.
    packet_stage : callable
        ``packet_stage(kind, column, row)``: the packet stage.
    outside : callable
        ``outside(kind, handshake)``: the signature of the stream, memory port and token.
    memory : callable
        ``memory(kind, handshake)``: the memory port's signature
        (:mod:`aiedma.hdl.memory_port`).
    refuses_padding : bool
        A padded BD is an error (S2MM).
    join_stream : callable
        ``join_stream(m, channel, engine, stage)``: the stream through the stage.
    """

    engine: Callable[[str], wiring.Component]
    packet_stage: Callable[[str, int, int], wiring.Component]
    outside: Callable[[str], wiring.Signature]
    memory: Callable[[str], wiring.Signature]
    refuses_padding: bool
    join_stream: Callable[..., None]


DIRECTION_PARTS: dict[str, DirectionParts] = {
    "mm2s": DirectionParts(MM2SEngine, MM2SPacketStage, mm2s_signature, read_port_signature,
                           False, _mm2s_stream),
    "s2mm": DirectionParts(S2MMEngine, S2MMPacketStage, s2mm_signature, write_port_signature,
                           True, _s2mm_stream),
}
"""Channel name (``"mm2s"``, ``"s2mm"``) -> its parts."""


def connect_outside(m: Module, inner: wiring.Component, outer: object,
                    signature: wiring.Signature) -> None:
    """Join ``signature``'s members of ``inner`` (a block inside) to ``outer`` (the same
    members on the enclosing block): streams with :func:`wiring.connect`, the rest by
    their flow."""
    for name, member in signature.members.items():
        a, b = getattr(inner, name), getattr(outer, name)
        if member.is_signature:
            if member.flow is Out:
                wiring.connect(m, a, wiring.flipped(b))
            else:
                wiring.connect(m, wiring.flipped(b), a)
        elif member.flow is Out:
            m.d.comb += b.eq(a)
        else:
            m.d.comb += a.eq(b)
