"""Writing C++: the adf spelling of a tiling or a port program (:func:`to_cpp`)."""

from __future__ import annotations

from ..errors import TilingError, field_error
from ..tiling.parameters import TilingParameters
from ..tiling.port import PortProgram

__all__ = ["to_cpp"]


def _ints(values: tuple[int, ...]) -> str:
    return "{" + ", ".join(str(v) for v in values) + "}"


def to_cpp(value: TilingParameters | PortProgram) -> str:
    """The adf C++ spelling of a tiling or a port program (one line).

    Fields come in the struct's declaration order (C++20 designated initialisers
    require it); those at their defaults are left out, except the four the tutorial
    always writes. ``parse_port_program(to_cpp(p)) == p``.

    Examples
    --------
    >>> print(to_cpp(TilingParameters(buffer_dimension=[10, 6], tiling_dimension=[3, 2],
    ...                               tile_traversal=[(0, 3, 2)])))
    tiling({.buffer_dimension={10, 6}, .tiling_dimension={3, 2}, .offset={},
            .tile_traversal={{.dimension=0, .stride=3, .wrap=2}}})
    """
    if isinstance(value, PortProgram):
        if len(value) == 1:
            return to_cpp(value.entries[0])
        return "{" + ", ".join(to_cpp(e) for e in value) + "}"
    if not isinstance(value, TilingParameters):
        raise field_error(TilingError, "value", type(value).__name__,
                          "must be a TilingParameters or a PortProgram")
    traversal = ", ".join(f"{{.dimension={t.dimension}, .stride={t.stride}, .wrap={t.wrap}}}"
                          for t in value.tile_traversal)
    parts = [f".buffer_dimension={_ints(value.buffer_dimension)}",
             f".tiling_dimension={_ints(value.tiling_dimension)}",
             f".offset={_ints(value.offset)}",
             f".tile_traversal={{{traversal}}}"]
    if value.packet_port_id != -1:
        parts.append(f".packet_port_id={value.packet_port_id}")
    if value.repetition != 1:
        parts.append(f".repetition={value.repetition}")
    if value.phase != 0:
        parts.append(f".phase={value.phase}")
    if value.boundary_dimension is not None:
        parts.append(f".boundary_dimension={_ints(value.boundary_dimension)}")
    return "tiling({" + ", ".join(parts) + "})"
