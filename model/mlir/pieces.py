"""Reading the values an operation's pieces hold: integers, names, attribute dictionaries,
channel directions, ``bd_dim_layout`` / ``bd_pad_layout`` lists and packet infos.

Each getter raises :class:`NotRead` with a message naming what was expected, so the
reader (:mod:`.reader`, :mod:`.runtime`) turns it into one warning for the one operation
(:data:`UNREADABLE`, :func:`reason`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import AiedmaError
from .syntax import Angle, Brace, Bracket, Name, Operation, Paren, Punct, Ref, Shape, Statement

__all__ = [
    "DIRECTION_NAMES",
    "UNREADABLE",
    "NotRead",
    "ParsedOp",
    "attribute_array",
    "attributes",
    "constant_of",
    "direction_of",
    "integer",
    "integer_list",
    "is_keyword",
    "keyword_items",
    "layout_pairs",
    "memref_type",
    "packet_of",
    "paren",
    "reason",
    "ref",
    "split_typed",
    "with_constants",
    "word",
]


@dataclass
class ParsedOp:
    """A statement read into an operation, with the statement (its place and regions)."""

    op: Operation
    statement: Statement

    @property
    def name(self) -> str:
        return self.op.name



class NotRead(AiedmaError):
    """A piece of an operation that is not what the operation needs."""


def paren(op: Operation) -> tuple[tuple[Any, ...], ...]:
    """The items of the operation's first ``( ... )``."""
    for piece in op.pieces:
        if isinstance(piece, Paren):
            return piece.items
    raise NotRead("expected ( ... ) after the operation's name")


def attributes(op: Operation) -> dict[str, tuple[Any, ...]]:
    """The operation's attribute dictionary ``{name = value : type, ...}`` (merged if several).

    Each value is the tuple of pieces between ``=`` and its ``: type``.
    """
    found: dict[str, tuple[Any, ...]] = {}
    for piece in op.pieces:
        if isinstance(piece, Brace):
            found.update(keyword_items(piece.items))
    return found


def keyword_items(items: Sequence[tuple[Any, ...]]) -> dict[str, tuple[Any, ...]]:
    """``name = value [: type]`` items (others are skipped); a bare ``name`` is ``true``."""
    found: dict[str, tuple[Any, ...]] = {}
    for item in items:
        if not item or not isinstance(item[0], Name | str):
            continue
        key = item[0].text if isinstance(item[0], Name) else item[0]
        if len(item) == 1:
            found[key] = (Name("true"),)
        elif isinstance(item[1], Punct) and item[1].text == "=":
            found[key] = split_typed(item[2:])[0]
    return found


def split_typed(pieces: Sequence[Any]) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """``value : type`` as ``(value pieces, type pieces)``."""
    for at, piece in enumerate(pieces):
        if isinstance(piece, Punct) and piece.text == ":":
            return tuple(pieces[:at]), tuple(pieces[at + 1:])
    return tuple(pieces), ()


def integer(pieces: Sequence[Any], what: str) -> int:
    """One integer (``true``/``false`` are 1/0)."""
    if len(pieces) == 1:
        value = pieces[0]
        if isinstance(value, int):
            return value
        if isinstance(value, Name) and value.text in ("true", "false"):
            return int(value.text == "true")
    raise NotRead(f"{what} must be an integer constant, not {_show(pieces)}")


def word(pieces: Sequence[Any], what: str) -> str:
    """One bare word or string (``MM2S``, ``"Acquire"``)."""
    if len(pieces) == 1 and isinstance(pieces[0], Name | str):
        return pieces[0].text if isinstance(pieces[0], Name) else pieces[0]
    raise NotRead(f"{what} must be a name, not {_show(pieces)}")


def ref(pieces: Sequence[Any], sigil: str, what: str) -> str:
    """The name of a ``%value``, ``^block`` or ``@symbol`` (without the sigil)."""
    if pieces and isinstance(pieces[0], Ref) and pieces[0].sigil == sigil:
        return pieces[0].name
    raise NotRead(f"{what} must be a {sigil}name, not {_show(pieces)}")


def memref_type(pieces: Sequence[Any], what: str) -> Shape:
    """The shape of ``memref<16x8xi32>`` (a trailing memory space is ignored)."""
    for at, piece in enumerate(pieces):
        if isinstance(piece, Name) and piece.text == "memref" and at + 1 < len(pieces):
            body = pieces[at + 1]
            if isinstance(body, Angle) and body.items and body.items[0]:
                shape = body.items[0][0]
                if isinstance(shape, Shape):
                    return shape
                if isinstance(shape, Name):      # memref<i32>: one element
                    return Shape((), shape.text)
                spaced = _spaced_shape(body.items[0])
                if spaced is not None:
                    return spaced
                if isinstance(shape, Punct) and shape.text == "*":
                    raise NotRead(f"{what}: an unranked {_show(pieces[at:at + 2])} is not "
                                  "read: give its shape")
    raise NotRead(f"{what} must have a memref<...> type, not {_show(pieces)}")


def _spaced_shape(item: Sequence[Any]) -> Shape | None:
    """``16 x 8 x i32`` (MLIR allows spaces in a shape) as a Shape, or None."""
    if len(item) < 3 or not isinstance(item[-1], Name):
        return None
    dims = item[:-1:2]
    crosses = item[1::2]
    if not all(isinstance(d, int) for d in dims) \
            or not all(isinstance(c, Name) and c.text == "x" for c in crosses):
        return None
    return Shape(tuple(dims), item[-1].text)


def integer_list(group: Any, what: str) -> list[int]:
    """``[1, 2, 3]`` as ints."""
    if not isinstance(group, Bracket):
        raise NotRead(f"{what} must be a [ ... ] list, not {_show([group])}")
    return [integer(item, f"{what} entry") for item in group.items]


def _show(pieces: Sequence[Any]) -> str:
    text = " ".join(_piece_text(p) for p in pieces)
    return repr(text[:60]) if text else "nothing"


def _piece_text(piece: Any) -> str:
    if isinstance(piece, Name | Punct):
        return piece.text
    if isinstance(piece, Ref):
        return str(piece)
    if isinstance(piece, Shape):
        return "x".join(map(str, piece.dims)) + ("x" if piece.dims else "") + piece.element
    if isinstance(piece, Paren | Bracket | Angle | Brace):
        opening, closing = {Paren: "()", Bracket: "[]", Angle: "<>", Brace: "{}"}[type(piece)]
        inner = ", ".join(" ".join(_piece_text(p) for p in item) for item in piece.items)
        return opening + inner + closing
    return repr(piece) if isinstance(piece, str) else str(piece)


UNREADABLE = (ValueError, IndexError, KeyError, TypeError)
"""What reading one construct of a user's file may raise (``NotRead`` and every
``AiedmaError`` are ValueErrors): the construct becomes a warning, the rest reads."""

DIRECTION_NAMES = {"MM2S": "mm2s", "S2MM": "s2mm"}
"""A channel direction as mlir-aie writes it, and as the model names it."""


def reason(problem: Exception) -> str:
    """Why a construct was not read, in the user's terms."""
    if isinstance(problem, KeyError):
        return f"it has no {problem.args[0]} attribute"
    if isinstance(problem, IndexError):
        return "it has fewer operands than the operation takes"
    return str(problem)


def direction_of(item: Sequence[Any]) -> str:
    """``MM2S`` or ``S2MM`` (bare or quoted) as ``"mm2s"`` / ``"s2mm"``."""
    text = word(item, "the direction")
    if text not in DIRECTION_NAMES:
        raise NotRead(f"direction {text!r}: expected MM2S or S2MM")
    return DIRECTION_NAMES[text]


def is_keyword(item: tuple[Any, ...]) -> bool:
    """True for a ``name = value`` item."""
    return len(item) > 1 and isinstance(item[0], Name) and getattr(item[1], "text", "") == "="


def attribute_array(keywords: dict[str, tuple[Any, ...]], name: str) -> Bracket | None:
    """``#aie<bd_dim_layout_array[...]>`` (or a bare ``[...]``) of attribute ``name``."""
    value = keywords.get(name)
    if value is None:
        return None
    for piece in value:
        if isinstance(piece, Bracket):
            return piece
        if isinstance(piece, Angle) and piece.items:
            for inner in piece.items[0]:
                if isinstance(inner, Bracket):
                    return inner
    raise NotRead(f"{name} must be a [ <...>, ... ] list")


def layout_pairs(group: Bracket | None, names: tuple[str, str]) -> list[tuple[int, int]]:
    """``[<size = 4, stride = 1>, <4, 1>, ...]`` as pairs, in the order written."""
    if group is None:
        return []
    pairs = []
    for item in group.items:
        if len(item) != 1 or not isinstance(item[0], Angle):
            raise NotRead(f"each entry of a layout must be <{names[0]} = ..., "
                          f"{names[1]} = ...>")
        entry = item[0].items
        keywords = keyword_items(entry)
        if keywords:
            missing = [n for n in names if n not in keywords]
            if missing:
                raise NotRead(f"a layout entry needs {' and '.join(missing)}")
            pairs.append((integer(keywords[names[0]], names[0]),
                          integer(keywords[names[1]], names[1])))
        elif len(entry) == 2:
            pairs.append((integer(entry[0], names[0]), integer(entry[1], names[1])))
        else:
            raise NotRead(f"a layout entry is <{names[0]}, {names[1]}>")
    return pairs


def packet_of(value: tuple[Any, ...]) -> tuple[int, int]:
    """``#aie.packet_info<pkt_type = 0, pkt_id = 2>`` as (type, id)."""
    for piece in value:
        if isinstance(piece, Angle):
            keywords = keyword_items(piece.items)
            return (integer(keywords.get("pkt_type", (0,)), "pkt_type"),
                    integer(keywords.get("pkt_id", (0,)), "pkt_id"))
    raise NotRead("packet must be #aie.packet_info<pkt_type = .., pkt_id = ..>")


def constant_of(op: Operation) -> int | None:
    """The integer of ``%c = arith.constant 4 : index`` (None for any other value)."""
    value, _ = split_typed(op.pieces)
    if len(value) == 1 and isinstance(value[0], int) and not isinstance(value[0], bool):
        return value[0]
    return None


def with_constants(op: Operation, constants: dict[str, int]) -> Operation:
    """``op`` with each ``%name`` that ``constants`` holds replaced by its integer (an
    operand written as an ``arith.constant`` reads as the number it is); an integer
    ``arith.constant`` itself is added to ``constants`` for the operations after it."""
    def swap(piece: Any) -> Any:
        if isinstance(piece, Ref) and piece.sigil == "%" and piece.name in constants:
            return constants[piece.name]
        if isinstance(piece, Paren | Bracket | Angle | Brace):
            return type(piece)(tuple(tuple(swap(p) for p in item) for item in piece.items))
        return piece
    if constants:
        op = Operation(op.results, op.name, tuple(swap(piece) for piece in op.pieces))
    if op.name == "arith.constant" and op.results and constant_of(op) is not None:
        constants[op.results[0]] = constant_of(op)
    return op
