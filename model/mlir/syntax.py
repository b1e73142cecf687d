"""MLIR text as statements, each read on its own into plain values.

mlir-aie prints one operation a line, a region opening with ``{`` at the end of its
operation's line and closing with ``}`` at the start of a line. :func:`split_statements`
uses that shape to cut a file into a tree of :class:`Statement` (with the line and
column each starts at) without understanding any operation, so a statement that cannot
be read costs only itself. :func:`parse_operation` then reads one statement with a
small `lark` grammar of MLIR's generic pieces (values ``%x``, blocks ``^bb1``, symbols
``@s``, numbers, strings, types, ``( ) [ ] < > { }`` groups) into an :class:`Operation`
whose groups keep their comma-separated items. What an operation means is the reader's
business (:mod:`.reader`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from lark import Lark, Token, Transformer, v_args
from lark.exceptions import LarkError, VisitError

from ..errors import AiedmaError

__all__ = [
    "Angle",
    "Brace",
    "Bracket",
    "Name",
    "Operation",
    "Paren",
    "Shape",
    "Statement",
    "SyntaxProblem",
    "parse_operation",
    "split_statements",
]


class SyntaxProblem(AiedmaError):
    """A statement that the grammar cannot read (reported as a warning, never fatal).

    Attributes
    ----------
    offset : int or None
        The column in the statement's text where reading stopped.
    """

    def __init__(self, message: str, offset: int | None = None) -> None:
        super().__init__(message)
        self.offset = offset


# --- statements ---------------------------------------------------------------------------

@dataclass
class Statement:
    """One operation's text and position, with the regions it opens.

    Attributes
    ----------
    text : str
        The operation without its regions (text after a region's ``}`` on the same
        line, such as an attribute dictionary, is appended).
    line, column : int
        Where the statement starts (1-based).
    regions : list of list of Statement
    one_line : bool
        True if the text is all on the statement's first line (so a column in the text
        is a column of the file).
    """

    text: str
    line: int
    column: int
    regions: list[list[Statement]] = field(default_factory=list)
    one_line: bool = True

    @property
    def label(self) -> str | None:
        """``"^bb1"`` for a block label ``^bb1:``, else None."""
        match = _LABEL.fullmatch(self.text)
        return match.group(1) if match else None

    def where(self) -> str:
        return f"{self.line}:{self.column}"

    def position(self, offset: int | None) -> tuple[int, int]:
        """The file's line and column of character ``offset`` (1-based) of the text, or
        of the statement's start when that is not known."""
        if offset is None or not self.one_line:
            return self.line, self.column
        return self.line, self.column + offset - 1


_LABEL = re.compile(r"(\^[\w$.-]+)\s*(?:\([^)]*\))?\s*:")


def _rest_is_blank(text: str, at: int) -> bool:
    """True if nothing but spaces and a ``//`` comment follows ``at`` on its line."""
    end = text.find("\n", at)
    rest = text[at:end if end >= 0 else len(text)].strip()
    return rest == "" or rest.startswith("//")


def _continues(text: str, at: int) -> bool:
    """True if the line at ``at`` goes on the statement before it: it starts with an
    attribute dictionary (``{...}`` closed on that line), a ``: type`` or ``on (``."""
    rest = text[at:].lstrip(" \t")
    if rest.startswith(":") or rest.startswith("->") or _ON.match(rest):
        return True
    return rest.startswith("{") and not _rest_is_blank(rest, 1)


_ON = re.compile(r"on\s*\(")   # dma_start_bd_chain's "on (%tile, MM2S, 0)" on its own line


def split_statements(text: str) -> list[Statement]:
    """The top-level statements of ``text``, regions nested (comments dropped).

    A statement goes on past its line inside open brackets, and onto a next line that
    starts with ``:``, ``->`` or an attribute dictionary. Never fails: an unbalanced
    bracket only makes one long statement that the grammar later refuses, and a ``}``
    with no region open is kept as text.
    """
    root: list[Statement] = []
    stack: list[tuple[list[Statement], Statement | None]] = [(root, None)]
    current: list[str] = []
    start: tuple[int, int] | None = None
    owner_tail: Statement | None = None    # a region's owner gets the text after its `}`
    depth = 0                               # ( [ and attribute braces open on this statement
    line, column = 1, 1
    i, n = 0, len(text)

    def finish() -> None:
        nonlocal current, start, owner_tail
        body = "".join(current).strip()
        if owner_tail is not None:
            if body:
                owner_tail.text += " " + body
        elif body and start is not None:
            stack[-1][0].append(Statement(body, *start, one_line=start[0] == line))
        current, start, owner_tail = [], None, None

    while i < n:
        ch = text[i]
        if ch == "/" and text.startswith("//", i):           # comment to end of line
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        if ch == '"':                                        # string: copy verbatim
            end = i + 1
            while end < n and text[end] != '"' and text[end] != "\n":
                end += 2 if text[end] == "\\" else 1
            chunk = text[i:end + 1]
            if start is None:
                start = (line, column)
            current.append(chunk)
            column += len(chunk)
            i = end + 1
            continue
        if ch == "\n":
            if depth == 0 and not _continues(text, i + 1):
                finish()
            else:
                current.append(" ")
            line, column = line + 1, 1
            i += 1
            continue
        if ch == "{" and depth == 0 and _rest_is_blank(text, i + 1):
            if start is None:
                start = (line, column)
            owner = owner_tail
            body = "".join(current).strip()
            if owner is None:
                owner = Statement(body, *start)
                stack[-1][0].append(owner)
            elif body:
                owner.text += " " + body
            region: list[Statement] = []
            owner.regions.append(region)
            stack.append((region, owner))
            current, start, owner_tail = [], None, None
        elif ch == "}" and depth == 0 and len(stack) > 1 and not "".join(current).strip():
            current, start = [], None
            _, owner = stack.pop()
            owner_tail = owner
        else:
            if ch in "([{":
                depth += 1
            elif ch in ")]}" and depth > 0:
                depth -= 1
            if not ch.isspace() and start is None and owner_tail is None:
                start = (line, column)
            current.append(ch)
        column += 1
        i += 1
    finish()
    return root


# --- one operation ------------------------------------------------------------------------

@dataclass(frozen=True)
class Name:
    """A bare word: ``MM2S``, ``AcquireGreaterEqual``, ``npu1_1col``, ``memref``."""

    text: str


@dataclass(frozen=True)
class Shape:
    """A shaped type's body: ``16x8xi32`` is dimensions (16, 8) of ``i32``."""

    dims: tuple[int, ...]
    element: str


@dataclass(frozen=True)
class Ref:
    """A ``%value``, ``^block``, ``@symbol``, ``#attribute`` or ``!type`` reference."""

    sigil: str
    name: str

    def __str__(self) -> str:
        return self.sigil + self.name


@dataclass(frozen=True)
class Punct:
    """``:``, ``=``, ``->`` and the like between the pieces of an item."""

    text: str


@dataclass(frozen=True)
class _Group:
    items: tuple[tuple[Any, ...], ...]
    """Comma-separated items, each a tuple of pieces."""


class Paren(_Group):
    """``( ... )``."""


class Bracket(_Group):
    """``[ ... ]``."""


class Angle(_Group):
    """``< ... >``."""


class Brace(_Group):
    """``{ ... }`` (an attribute dictionary)."""


@dataclass(frozen=True)
class Operation:
    """One operation: ``%r = name pieces...``.

    Attributes
    ----------
    results : tuple of str
        Result names without ``%``.
    name : str
        ``aie.dma_bd``, ``aiex.npu.writebd``, ...
    pieces : tuple
        What follows the name: :class:`Paren`, :class:`Bracket`, :class:`Angle`,
        :class:`Brace`, :class:`Ref`, :class:`Name`, :class:`Shape`, :class:`Punct`,
        ``int``, ``float`` and ``str`` (a string literal).
    """

    results: tuple[str, ...]
    name: str
    pieces: tuple[Any, ...]


_GRAMMAR = r"""
start: results? OPNAME (piece | ",")*
results: VALUE ("," VALUE)* "="
?piece: paren | bracket | angle | brace | atom
paren: "(" [item ("," item)*] ")"
bracket: "[" [item ("," item)*] "]"
angle: "<" [item ("," item)*] ">"
brace: "{" [item ("," item)*] "}"
item: piece+
atom: VALUE | BLOCK | SYMBOL | HASH | BANG | NUMBER | STRING | WORD | PUNCT
OPNAME: /[A-Za-z_][\w$]*(\.[\w$]+)*/
VALUE: /%[\w$.]+(#\d+)?/
BLOCK: /\^[\w$.-]+/
SYMBOL: /@[\w$.]+/ | /@"[^"]*"/
HASH: /#[\w$.]+/
BANG: /![\w$.]+/
NUMBER: /-?\d[\w.]*/ | /\?x[\w]*/
STRING: /"(\\.|[^"\\])*"/
WORD: /[A-Za-z_][\w$.]*/
PUNCT: "->" | ":" | "=" | "*" | "+" | "?" | "|"
%ignore /\s+/
"""

_SHAPE = re.compile(r"((?:\d+x)*)([A-Za-z_]\w*)")


def _number(text: str) -> Any:
    """A ``NUMBER`` token: int (decimal or hex), float, or a shape such as ``16x8xi32``."""
    try:
        return int(text, 0)
    except ValueError:
        pass
    shape = _SHAPE.fullmatch(text)
    if shape:
        dims = tuple(int(d) for d in shape.group(1).split("x") if d)
        return Shape(dims, shape.group(2))
    try:
        return float(text)
    except ValueError:
        raise SyntaxProblem(f"{text!r} is not a number or a shape") from None


class _ToValues(Transformer):
    """Lark tree to the plain values above."""

    def start(self, children: list[Any]) -> Operation:
        results: tuple[str, ...] = ()
        if children and isinstance(children[0], tuple):
            results, children = children[0], children[1:]
        name, *pieces = children
        return Operation(results, str(name), tuple(pieces))

    def results(self, children: list[Token]) -> tuple[str, ...]:
        return tuple(str(c)[1:] for c in children)

    @staticmethod
    def _items(children: list[Any]) -> tuple[tuple[Any, ...], ...]:
        return tuple(c for c in children if c is not None)

    def paren(self, children: list[Any]) -> Paren:
        return Paren(self._items(children))

    def bracket(self, children: list[Any]) -> Bracket:
        return Bracket(self._items(children))

    def angle(self, children: list[Any]) -> Angle:
        return Angle(self._items(children))

    def brace(self, children: list[Any]) -> Brace:
        return Brace(self._items(children))

    def item(self, children: list[Any]) -> tuple[Any, ...]:
        return tuple(children)

    @v_args(inline=True)
    def atom(self, token: Token) -> Any:
        text = str(token)
        kind = token.type
        if kind in ("VALUE", "BLOCK", "SYMBOL", "HASH", "BANG"):
            name = text[1:]
            if name.startswith('"'):
                name = name[1:-1]
            return Ref(text[0], name)
        if kind == "NUMBER":
            return _number(text)
        if kind == "STRING":
            return text[1:-1].encode().decode("unicode_escape", errors="replace")
        if kind == "WORD":
            return Name(text)
        return Punct(text)


_PARSER = Lark(_GRAMMAR, parser="lalr", maybe_placeholders=True)
_TO_VALUES = _ToValues()


def parse_operation(text: str) -> Operation:
    """Read one statement.

    Raises
    ------
    SyntaxProblem
        If the text is not an operation in MLIR's generic pieces; the message names
        the column within ``text`` and what was found.
    """
    try:
        return _TO_VALUES.transform(_PARSER.parse(text))
    except VisitError as error:     # a NUMBER token that is neither number nor shape
        if isinstance(error.orig_exc, SyntaxProblem):
            raise error.orig_exc from None
        raise
    except RecursionError:
        raise SyntaxProblem("brackets nested too deeply to read") from None
    except LarkError as error:
        column = getattr(error, "column", None)
        found = getattr(error, "token", None) or getattr(error, "char", None)
        what = f" {str(found)!r}" if found not in (None, "") else ""
        offset = column if isinstance(column, int) and column > 0 else None
        raise SyntaxProblem(f"cannot read{what}", offset) from None
