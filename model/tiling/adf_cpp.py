"""Read the adf graph API's C++ spelling of tilings and shared buffers.

People who program the AIE-ML write graph headers in C++; this module reads the
parts of such a header the DMA model needs and builds the model's own objects
(:class:`.TilingParameters`, :class:`.PortProgram`, :class:`SharedBufferSpec`).
It is a small hand-written tokenizer and recursive-descent parser, not a C++
compiler. Whole headers (classes, templates, locals, kernels, external buffers,
partial results) are read by :mod:`.adf_header`, which finds their structure with
tree-sitter and reads each statement with this parser; ``parse_graph_header`` is
that reader's strict form (it raises the first problem).

Grammar (EBNF-ish; ``[ ]`` optional, ``{ }`` repeated, ``NAME`` an identifier).
``header`` is how :mod:`.adf_header` reads a statement; the rest is this module's::

    header     = { directive | constant | create | access | setting | other } ;
    directive  = "#define" NAME [ tokens ] | "#undef" NAME | "#" anything ;   (one line)
    constant   = { NAME | "::" } NAME ( "=" expr | "{" expr "}" )
                 { "," NAME ( "=" expr | "{" expr "}" ) } ";" ;
                 (the leading words include "const", "constexpr" or "constinit")
    create     = target "=" [ "adf" "::" ] ( "shared_buffer" | "external_buffer" )
                 "<" type ">" "::" "create" "(" ints "," expr "," expr ")" ";" ;
                 (target ends in the buffer's NAME; type is an adf element type
                 or a C spelling of one: int, unsigned, short, int16_t, ...)
    access     = [ "adf" "::" ] ( "write_access" | "read_access" )
                 "(" object ( "." | "->" ) ( "in" | "out" ) "[" expr "]" ")" "=" program ";" ;
    object     = [ "this" "->" ] NAME [ "[" expr "]" ] { ( "." | "->" ) NAME [ "[" expr "]" ] } ;
    setting    = [ "adf" "::" ] ( "repetition_count" | "num_buffers" )
                 "(" NAME { ( "." | "->" ) NAME } ")" "=" expr ";" ;
                 (any other argument, e.g. a kernel port, makes it an "other")
    program    = tiling | "{" [ tiling { "," tiling } [ "," ] ] "}" ;
    tiling     = [ "adf" "::" ] "tiling" "(" fields ")"
               | [ "adf" "::" ] "tiling_parameters" fields | fields
               | [ [ "adf" "::" ] "tiling" "(" ] VARIABLE [ ")" ] ;   (a tiling_parameters
                 variable the graph reader has seen; its initialiser is read as a tiling)
    fields     = "{" [ field { "," field } [ "," ] ] "}" ;
    field      = "." NAME "=" ( ints | traversals | expr ) ;      (by the field's type)
    ints       = "{" [ expr { "," expr } [ "," ] ] "}" ;
    traversals = "{" [ traversal { "," traversal } [ "," ] ] "}" ;
    traversal  = "{" [ expr [ "," expr [ "," expr ] ] [ "," ] ] "}"          (positional)
               | "{" "." NAME "=" expr { "," "." NAME "=" expr } [ "," ] "}" ;
    expr       = term { ( "+" | "-" ) term } ;
    term       = unary { ( "*" | "/" | "%" ) unary } ;
    unary      = { "+" | "-" } primary ;
    primary    = INTEGER | { NAME "::" } NAME | "(" expr ")" ;

``INTEGER`` is a C++ integer literal: decimal, ``0x`` hex, ``0b`` binary or
``0``-prefixed octal, with ``'`` digit separators and ``u``/``l``/``ll``
suffixes. ``//`` and ``/* */`` comments and whitespace may appear between any
two tokens. Line and column numbers in messages count from 1; a tab is one
column.

Decisions (a header is more than this grammar; what we do with the rest):

* **decision**: a statement the reader does not recognise (``connect<>``,
  ``source()``, PLIO, ...) is skipped silently; C++ structure (classes, functions,
  templates, declarations) is tree-sitter's job (:mod:`.adf_header`). A recognised
  statement, on the other hand, is parsed strictly and any mistake in it is an
  error for that statement: a silently dropped tiling would make a wrong model
  without a word.
* **decision**: ``#define`` and ``#undef`` are honoured in text order; every other
  directive (``#include``, ``#if``/``#ifdef``/``#else``/``#endif``, ``#pragma``) is
  ignored, so both branches of an ``#if`` are read and the later definition wins.
* **decision**: names given by the caller (``defines=``, as ``-D NAME=VALUE``) take
  precedence over definitions in the text. With the usual
  ``#ifndef N`` / ``#define N 10`` idiom this is what the compiler does, and it lets
  a command line change a size without editing the header.
* **decision**: a ``#define`` body is evaluated where the name is used (as the
  preprocessor does); a ``constexpr``/``const`` initialiser where it is defined, with
  the names known at that point. A constant that is not an integer expression
  (a float, a string, ``sizeof``, a function-like macro) is remembered as such and is
  an error only where a tiling uses it.
* **decision**: arithmetic is C++'s: ``/`` and ``%`` truncate towards zero, a
  ``0``-prefixed literal is octal. Every value must fit in 64 bits, and expressions
  and macro expansions nest at most 100 deep (deeper input is refused with a
  message rather than overflowing Python's stack).
  ``ns::NAME`` and ``Class::NAME`` look up ``NAME`` in the scopes around the use
  (:mod:`.adf_header`: block, class, namespaces).
* **decision**: designated fields may come in any order (C++20 wants declaration
  order; we are lenient), each at most once. A traversal field left out takes the
  C++ default member initialiser of ``traversing_parameters`` (0), so a missing
  ``.wrap`` fails with the model's "a loop needs at least 1 tile". ``.order`` is
  the old spelling of ``.dimension`` (docs/tiling.md).
* **decision**: ``{}`` assigned to a port is an empty list (an error: a port program
  needs an entry), not an all-default tiling.
* **decision**: accesses are resolved when the whole text is read, so their order
  relative to ``create`` does not matter. An access names a buffer, external buffer
  or kernel of the text, with a port index below ``n_in``/``n_out`` (or, pasted on
  its own, gives ``buffer_dimension``). Assigning a port twice keeps the later
  program, as the C++ assignment does. Creating the same name twice is an error.
  ``repetition_count``/``num_buffers`` of a name that is not a shared buffer of the
  text (a kernel) is not ours and is ignored. Loops, tiling variables, class scopes
  and the rest of a real header: see :mod:`.adf_header`.
"""

from __future__ import annotations

import difflib
import itertools
import operator
import string
from bisect import bisect_right
from collections.abc import Callable, Iterator, Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import AiedmaError, TilingError, field_error
from .parameters import TilingParameters
from .port import PortProgram

__all__ = [
    "CppSyntaxError",
    "SharedBufferSpec",
    "parse_graph_header",
    "parse_port_program",
    "parse_tiling",
    "to_cpp",
]

MAX_PORTS = 14
"""A memory tile has 6 channels each way and may borrow 4 from each neighbour."""


class CppSyntaxError(AiedmaError):
    """C++ text the parser cannot read: ``"line L, column C: expected X, found Y"``.

    Attributes
    ----------
    line, column : int or None
        Where the problem is (1-based), None for errors not tied to the text
        (a bad ``defines`` argument).
    detail : str
        The message without its location.
    """

    def __init__(self, detail: str, line: int | None = None, column: int | None = None) -> None:
        self.line, self.column, self.detail = line, column, detail
        super().__init__(detail if line is None else f"line {line}, column {column}: {detail}")


# --- tokens -----------------------------------------------------------------------------

_NAME, _INT, _NUMBER, _STRING, _PUNCT, _DEFINE, _UNDEF, _END = (
    "name", "int", "number", "string", "punct", "define", "undef", "end")
_DIRECTIVES = (_DEFINE, _UNDEF)

_IDENT_START = frozenset(string.ascii_letters + "_")
_IDENT_CHARS = _IDENT_START | frozenset(string.digits)
_DIGITS = {16: frozenset(string.hexdigits), 10: frozenset(string.digits),
           8: frozenset("01234567"), 2: frozenset("01")}
_INT_SUFFIXES = frozenset({"", "u", "l", "ul", "lu", "ll", "ull", "llu"})
_LIMIT = 1 << 64
_MAX_DEPTH = 100  # expression and macro nesting; deeper is refused, not a RecursionError


@dataclass(frozen=True, slots=True)
class _Token:
    kind: str
    text: str
    line: int
    column: int
    # INT: its value; NUMBER: why it is not an integer; DEFINE: the body tokens
    # (None for a function-like macro); END: how to call the end in messages.
    value: Any = None
    pos: int = 0  # offset of the first character in the text

    def shown(self) -> str:
        if self.kind == _END:
            return self.value
        text = self.text if len(self.text) <= 40 else self.text[:37] + "..."
        return repr(text)


def _syntax(token: _Token, detail: str) -> CppSyntaxError:
    return CppSyntaxError(detail, token.line, token.column)


def _where(token: _Token) -> str:
    return f"line {token.line}, column {token.column}"


def _integer_literal(literal: str) -> int | str:
    """The value of a C++ integer literal, or why it is not one."""
    s = literal.replace("'", "")
    body = s.rstrip("uUlL")
    if s[len(body):].lower() not in _INT_SUFFIXES:
        return "not an integer literal"
    low = body.lower()
    if low.startswith(("0x", "0b")):
        digits, base = body[2:], 16 if low[1] == "x" else 2
    elif body.startswith("0"):
        digits, base = body, 8
    else:
        digits, base = body, 10
    if not digits or any(c not in _DIGITS[base] for c in digits):
        return "a floating-point or malformed literal"
    if len(digits) > 70:  # also keeps int() clear of its digit limit
        return "does not fit in 64 bits"
    value = int(digits, base)
    return value if value < _LIMIT else "does not fit in 64 bits"


class _Lexer:
    """Characters to tokens; ``#define``/``#undef`` lines become one token each."""

    def __init__(self, text: str, end_name: str = "the end of the text",
                 errors: list[CppSyntaxError] | None = None) -> None:
        self.text, self.pos, self.end_name = text, 0, end_name
        # With a list, a lexical error is recorded there and lexing goes on after it
        # (the graph reader's partial results); without one it is raised.
        self.errors = errors
        self._line_starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]

    def _place(self, pos: int) -> tuple[int, int]:
        line = bisect_right(self._line_starts, pos)
        return line, pos - self._line_starts[line - 1] + 1

    def _error(self, pos: int, detail: str) -> CppSyntaxError:
        return CppSyntaxError(detail, *self._place(pos))

    def _tolerate(self, error: CppSyntaxError) -> None:
        """Record ``error`` when lexing tolerantly, else raise it."""
        if self.errors is None:
            raise error
        self.errors.append(error)

    def _make(self, kind: str, start: int, value: Any = None, text: str | None = None) -> _Token:
        line, column = self._place(start)
        return _Token(kind, self.text[start:self.pos] if text is None else text,
                      line, column, value, start)

    def _found(self) -> str:
        if self.pos >= len(self.text):
            return "the end of the text"
        c = self.text[self.pos]
        return "the end of the line" if c == "\n" else repr(c)

    def tokens(self) -> list[_Token]:
        out: list[_Token] = []
        line_start = True
        while True:
            line_start |= self._skip_blank(directive=False)
            if self.pos >= len(self.text):
                out.append(self._make(_END, self.pos, value=self.end_name, text=""))
                return out
            if line_start and self.text[self.pos] == "#":
                self._directive(out)
            else:
                out.append(self._next())
            line_start = False

    def _skip_blank(self, directive: bool) -> bool:
        """Skip whitespace and comments; True if a newline was crossed.

        Inside a directive, stop before a newline that is not escaped.
        """
        text, n = self.text, len(self.text)
        newline = False
        while self.pos < n:
            c = text[self.pos]
            if c == "\n":
                if directive:
                    break
                newline = True
                self.pos += 1
            elif c in " \t\r\f\v\ufeff":  # a byte-order mark is blank too
                self.pos += 1
            elif c == "\\" and text.startswith(("\n", "\r\n"), self.pos + 1):
                self.pos = text.index("\n", self.pos) + 1  # line continuation
            elif text.startswith("//", self.pos):
                end = text.find("\n", self.pos)
                self.pos = n if end < 0 else end
            elif text.startswith("/*", self.pos):
                end = text.find("*/", self.pos + 2)
                if end < 0:
                    self._tolerate(self._error(self.pos, "expected '*/' to close this comment, "
                                                         "found the end of the text"))
                    self.pos = n  # the rest of the text is the comment
                    break
                newline |= "\n" in text[self.pos:end]
                self.pos = end + 2
            else:
                break
        return newline

    def _skip_line(self) -> None:
        """Skip the rest of a directive line (continuations and comments included)."""
        text, n = self.text, len(self.text)
        while self.pos < n and text[self.pos] != "\n":
            if text[self.pos] == "\\" and text.startswith(("\n", "\r\n"), self.pos + 1):
                self.pos = text.index("\n", self.pos) + 1
            elif text.startswith(("/*", "//"), self.pos):
                self._skip_blank(directive=True)
            else:
                self.pos += 1

    def _identifier(self) -> str:
        start = self.pos
        while self.pos < len(self.text) and self.text[self.pos] in _IDENT_CHARS:
            self.pos += 1
        return self.text[start:self.pos]

    def _directive(self, out: list[_Token]) -> None:
        self.pos += 1  # '#'
        self._skip_blank(directive=True)
        kind = self._identifier()
        if kind not in ("define", "undef"):
            self._skip_line()
            return
        self._skip_blank(directive=True)
        start = self.pos
        if self.pos >= len(self.text) or self.text[self.pos] not in _IDENT_START:
            self._tolerate(self._error(self.pos, f"expected a macro name after #{kind}, "
                                                 f"found {self._found()}"))
            self._skip_line()
            return
        name = self._identifier()
        if kind == "undef":
            out.append(self._make(_UNDEF, start, text=name))
            self._skip_line()
        elif self.text.startswith("(", self.pos):  # function-like macro
            out.append(self._make(_DEFINE, start, value=None, text=name))
            self._skip_line()
        else:
            body: list[_Token] = []
            while True:
                self._skip_blank(directive=True)
                if self.pos >= len(self.text) or self.text[self.pos] == "\n":
                    break
                body.append(self._next())
            out.append(self._make(_DEFINE, start, value=tuple(body), text=name))

    def _next(self) -> _Token:
        text, start = self.text, self.pos
        c = text[start]
        if c in _IDENT_START:
            self._identifier()
            return self._make(_NAME, start)
        if c in _DIGITS[10] or (c == "." and text[start + 1:start + 2] in _DIGITS[10]):
            return self._number()
        if c in "\"'":
            return self._literal(c)
        self.pos += 2 if text.startswith(("::", "->"), start) else 1
        return self._make(_PUNCT, start)

    def _number(self) -> _Token:
        """A preprocessing number (C++ [lex.ppnumber]); only integer literals have a value."""
        text, n, start = self.text, len(self.text), self.pos
        self.pos += 1
        while self.pos < n:
            c = text[self.pos]
            if c in "eEpP" and text[self.pos + 1:self.pos + 2] in ("+", "-"):
                self.pos += 2
            elif c in _IDENT_CHARS or c == ".":
                self.pos += 1
            elif c == "'" and text[self.pos + 1:self.pos + 2] in _IDENT_CHARS:
                self.pos += 2  # digit separator
            else:
                break
        value = _integer_literal(text[start:self.pos])
        return self._make(_INT if isinstance(value, int) else _NUMBER, start, value)

    def _literal(self, quote: str) -> _Token:
        text, n, start = self.text, len(self.text), self.pos
        self.pos += 1
        while self.pos < n and text[self.pos] != "\n":
            c = text[self.pos]
            self.pos += 2 if c == "\\" else 1
            if c == quote:
                return self._make(_STRING, start)
        self.pos = min(self.pos, n)
        what = "string" if quote == '"' else "character"
        self._tolerate(self._error(start, f"expected a closing {quote} for this {what} "
                                          f"literal, found {self._found()}"))
        return self._make(_STRING, start)  # up to the end of the line


# --- names ------------------------------------------------------------------------------

@dataclass
class _Name:
    """What a name stands for: a value, a body to evaluate at each use, or why neither.

    The graph reader also keeps C++ variables here: ``scope`` is where a variable's
    initialiser (``body``) is evaluated, ``type`` the type a ``typedef``/``using`` or
    template parameter names, ``tiling`` the tokens of a ``tiling_parameters`` variable's
    initialiser (such names also carry a ``why``: they are not integers).
    """

    value: int | None = None
    body: tuple[_Token, ...] | None = None
    why: str | None = None
    cache: tuple[int, int, int] | None = None  # (scope serial, version, value) of the last use
    scope: _Scope | None = None
    type: str | None = None
    tiling: tuple[_Token, ...] | None = None


_SERIALS = itertools.count()


@dataclass
class _Scope:
    names: MutableMapping[str, _Name] = field(default_factory=dict)
    fixed: frozenset[str] = frozenset()  # given by the caller: the text cannot replace them
    # Bumped by every definition: a cached #define value is good while it is unchanged
    # (without the cache, `#define B (A + A)` chains cost 2**depth evaluations).
    version: int = 0
    serial: int = field(default_factory=lambda: next(_SERIALS))  # tells scopes' caches apart

    def define(self, name: str, entry: _Name) -> None:
        if name not in self.fixed:
            self.names[name] = entry
            self.version += 1

    def undefine(self, name: str) -> None:
        if name not in self.fixed:
            self.names.pop(name, None)
            self.version += 1


def _scope(defines: Mapping[str, int | str] | None) -> _Scope:
    """The caller's ``-D NAME=VALUE`` definitions (ints, or expression text)."""
    if defines is None:
        return _Scope()
    if not isinstance(defines, Mapping):
        raise field_error(CppSyntaxError, "defines", type(defines).__name__,
                          "must be a dict of NAME: integer or expression text")
    scope = _Scope(fixed=frozenset())
    for name, value in defines.items():
        if not isinstance(name, str) or not name or name[0] not in _IDENT_START \
                or any(c not in _IDENT_CHARS for c in name):
            raise field_error(CppSyntaxError, "defines", name, "names must be C++ identifiers")
        where = f"defines[{name!r}]"
        if isinstance(value, str):
            try:
                tokens = _Lexer(value, f"the end of {where}").tokens()
            except CppSyntaxError as error:
                raise CppSyntaxError(f"{where}: {error}") from None
            if any(t.kind in _DIRECTIVES for t in tokens):
                raise field_error(CppSyntaxError, where, value, "must be an expression")
            scope.names[name] = _Name(body=tuple(tokens[:-1]))
        elif isinstance(value, bool):
            raise field_error(CppSyntaxError, where, value, "must be an integer, not a bool")
        else:
            try:
                scope.names[name] = _Name(value=operator.index(value))
            except TypeError:
                raise field_error(CppSyntaxError, where, value,
                                  "must be an integer or the text of an expression") from None
    scope.fixed = frozenset(scope.names)
    return scope


# --- what a header declares ---------------------------------------------------------------

@dataclass(frozen=True)
class SharedBufferSpec:
    """A ``shared_buffer`` of a graph header with the port programs written for it.

    Attributes
    ----------
    name : str
        The C++ name the buffer was assigned to (``mtx``).
    dtype : str
        adf element type name (``int32``; C spellings such as ``int`` are mapped).
    shape : tuple of int
        ``create``'s shape, dimension 0 first, as written.
    n_in, n_out : int
        Input (write, S2MM) and output (read, MM2S) ports.
    repetition_count : int
        ``repetition_count(buf) = n`` (default 1).
    num_buffers : int
        ``num_buffers(buf) = 2`` for ping-pong (default 1).
    write_access : dict of int to PortProgram
        ``write_access(buf.in[i])`` by port ``i``; ports never assigned are absent.
    read_access : dict of int to PortProgram
        ``read_access(buf.out[j])`` by port ``j``.
    """

    name: str
    dtype: str
    shape: tuple[int, ...]
    n_in: int
    n_out: int
    repetition_count: int = 1
    num_buffers: int = 1
    write_access: dict[int, PortProgram] = field(default_factory=dict, hash=False)
    read_access: dict[int, PortProgram] = field(default_factory=dict, hash=False)


_TILING_FIELDS = ("buffer_dimension", "tiling_dimension", "offset", "tile_traversal",
                  "packet_port_id", "repetition", "phase", "boundary_dimension")
_VECTOR_FIELDS = frozenset({"buffer_dimension", "tiling_dimension", "offset",
                            "boundary_dimension"})
_TRAVERSAL_FIELDS = ("dimension", "stride", "wrap")
_CONST_WORDS = frozenset({"const", "constexpr", "constinit"})
_SPECIFIERS = _CONST_WORDS | {"static", "inline", "extern", "volatile", "thread_local"}
_NOT_INTEGER_TYPES = frozenset({"float", "double", "bool"})
_BOUNDARIES = (";", "{", "}", ":")
_BUFFER_KINDS = ("shared_buffer", "external_buffer")
_C_TYPES = {
    "int": "int32", "signed": "int32", "signed int": "int32", "unsigned": "uint32",
    "unsigned int": "uint32", "short": "int16", "short int": "int16",
    "unsigned short": "uint16", "char": "int8", "signed char": "int8",
    "unsigned char": "uint8", "long long": "int64", "unsigned long long": "uint64",
    **{f"{u}int{b}_t": f"{u}int{b}" for u in ("", "u") for b in (8, 16, 32, 64)},
}


def _fits(value: int, token: _Token) -> int:
    """``value`` if it fits in 64 bits (checked after every operation, so numbers stay small)."""
    if not -_LIMIT < value < _LIMIT:
        raise _syntax(token, f"expected a value that fits in 64 bits, found one of "
                             f"{value.bit_length()} bits")
    return value


def _c_divide(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _located(error: TilingError, paths: Mapping[str, _Token], fallback: _Token) -> TilingError:
    """``error`` prefixed with where the field its message starts with was written.

    Model messages start with a field path (``tile_traversal[0].wrap=0: ...``); the
    longest recorded prefix of that path gives the place, else ``fallback``.
    """
    message = str(error)
    path = message
    for stop in ("=", " ", ":"):
        cut = path.find(stop)
        if cut >= 0:
            path = path[:cut]
    token = fallback
    while path:
        if path in paths:
            token = paths[path]
            break
        cut = max(path.rfind("."), path.rfind("["))
        if cut <= 0:
            break
        path = path[:cut]
    return TilingError(f"{_where(token)}: {message}")


# --- the parser ---------------------------------------------------------------------------

class _Parser:
    """Recursive descent over a token list; one method per grammar rule."""

    def __init__(self, tokens: list[_Token], scope: _Scope, depth: int = 0,
                 expanding: frozenset[str] = frozenset()) -> None:
        self.tokens, self.i = tokens, 0
        self.scope, self.depth, self.expanding = scope, depth, expanding
        self._settle()

    @classmethod
    def for_text(cls, text: str, defines: Mapping[str, int | str] | None) -> _Parser:
        if not isinstance(text, str):
            raise field_error(CppSyntaxError, "text", type(text).__name__, "must be a str")
        scope = _scope(defines)
        return cls(_Lexer(text).tokens(), scope)

    # -- token navigation --------------------------------------------------------------

    def _settle(self) -> None:
        """Apply the ``#define``/``#undef`` lines at the cursor; they act in text order."""
        while self.tokens[self.i].kind in _DIRECTIVES:
            t = self.tokens[self.i]
            if t.kind == _UNDEF:
                self.scope.undefine(t.text)
            elif t.value is None:
                self.scope.define(t.text, _Name(why=f"a function-like macro ({_where(t)})"))
            else:
                self.scope.define(t.text, _Name(body=t.value))
            self.i += 1

    def _ahead(self) -> Iterator[_Token]:
        """The tokens from the cursor on, directives left out (for lookahead only)."""
        for k in range(self.i, len(self.tokens)):
            if self.tokens[k].kind not in _DIRECTIVES:
                yield self.tokens[k]

    def peek(self, ahead: int = 0) -> _Token:
        for k, t in enumerate(self._ahead()):
            if k == ahead:
                return t
        return self.tokens[-1]

    def advance(self) -> _Token:
        t = self.tokens[self.i]
        if t.kind != _END:
            self.i += 1
            self._settle()
        return t

    def at(self, text: str, ahead: int = 0) -> bool:
        t = self.peek(ahead)
        return t.kind in (_PUNCT, _NAME) and t.text == text

    def accept(self, text: str) -> _Token | None:
        return self.advance() if self.at(text) else None

    def expected(self, what: str, token: _Token | None = None) -> CppSyntaxError:
        t = self.peek() if token is None else token
        return _syntax(t, f"expected {what}, found {t.shown()}")

    def expect(self, text: str, what: str | None = None) -> _Token:
        if self.at(text):
            return self.advance()
        raise self.expected(what or repr(text))

    def name(self, what: str) -> _Token:
        if self.peek().kind != _NAME:
            raise self.expected(what)
        return self.advance()

    def expect_end(self) -> None:
        if self.peek().kind != _END:
            raise self.expected("the end of the text")

    def adf_prefix(self) -> None:
        if self.at("adf") and self.at("::", 1):
            self.advance()
            self.advance()

    def braced(self, item: Callable[[], Any], what: str, opener: _Token | None = None) -> list:
        """``"{" [item {"," item} [","]] "}"``; ``what`` describes the expected ``{``."""
        opener = opener or self.expect("{", what)
        items: list = []
        while not self.accept("}"):
            items.append(item())
            if not self.accept(","):
                self.expect("}", f"',' or '}}' (to close the '{{' at {_where(opener)})")
                break
        return items

    # -- expressions -----------------------------------------------------------------------

    def expression(self) -> int:
        first = self.peek()
        self.depth += 1
        if self.depth > _MAX_DEPTH:
            raise _syntax(first, f"expressions nest at most {_MAX_DEPTH} deep")
        try:
            value = self._term()
            while self.at("+") or self.at("-"):
                op = self.advance()
                rhs = self._term()
                value = _fits(value + rhs if op.text == "+" else value - rhs, first)
        finally:
            self.depth -= 1
        return value

    def _term(self) -> int:
        value = self._unary()
        while self.at("*") or self.at("/") or self.at("%"):
            op = self.advance()
            operand = self.peek()
            rhs = self._unary()
            if op.text == "*":
                value = _fits(value * rhs, operand)
                continue
            if rhs == 0:
                which = "" if operand.kind == _INT else " (which is 0)"
                raise _syntax(operand, f"expected a divisor other than 0, found "
                                       f"{operand.shown()}{which}")
            quotient = _c_divide(value, rhs)
            value = quotient if op.text == "/" else value - rhs * quotient
        return value

    def _unary(self) -> int:
        sign = 1
        while self.at("-") or self.at("+"):
            if self.advance().text == "-":
                sign = -sign
        return sign * self._primary()

    def _primary(self) -> int:
        t = self.peek()
        if t.kind == _INT:
            self.advance()
            return t.value
        if t.kind == _NUMBER:
            raise _syntax(t, f"expected an integer, found {t.shown()} ({t.value})")
        if t.kind == _NAME:
            self.advance()
            while self.at("::") and self.peek(1).kind == _NAME:
                self.advance()
                t = self.advance()
            return self.lookup(t)
        if self.at("("):
            opener = self.advance()
            value = self.expression()
            self.expect(")", f"')' to close the '(' at {_where(opener)}")
            return value
        raise self.expected("an integer expression")

    def lookup(self, t: _Token) -> int:
        entry = self.scope.names.get(t.text)
        if entry is None:
            raise _syntax(t, f"unknown name {t.text} (not #defined or constexpr before "
                             "this point, nor given in defines)")
        if entry.why is not None:
            raise _syntax(t, f"{t.text} is not an integer constant: {entry.why}")
        if entry.body is None:
            return entry.value
        scope = entry.scope or self.scope
        if entry.cache is not None and entry.cache[:2] == (scope.serial, scope.version):
            return entry.cache[2]
        if t.text in self.expanding:
            raise _syntax(t, f"{t.text} is defined in terms of itself")
        body = list(entry.body)
        last = body[-1] if body else t
        end = _Token(_END, "", last.line, last.column + len(last.text),
                     f"the end of the definition of {t.text}")
        sub = _Parser([*body, end], scope, self.depth + 1, self.expanding | {t.text})
        try:
            value = sub.expression()
            sub.expect_end()
        except CppSyntaxError as error:
            detail = error.detail if t.text in self.scope.fixed else str(error)
            origin = " (given in defines)" if t.text in self.scope.fixed else ""
            raise _syntax(t, f"{t.text}{origin} is not an integer constant: {detail}") from None
        entry.cache = (scope.serial, scope.version, value)
        return value

    # -- constants -------------------------------------------------------------------------

    def constant_ahead(self) -> bool:
        """``const int N = ...``, ``static constexpr uint32_t N{...}``, ``int const N = ...``."""
        const, last = False, None
        for t in self._ahead():
            if t.kind == _NAME:
                const |= t.text in _CONST_WORDS
                last = t
            elif not (t.kind == _PUNCT and t.text == "::"):
                return (const and last is not None and last.text not in _SPECIFIERS
                        and t.kind == _PUNCT and t.text in ("=", "{"))
        return False

    def constant_statement(self) -> None:
        words = []
        while self.peek().kind == _NAME or self.at("::"):
            t = self.advance()
            if t.kind == _NAME:
                words.append(t)
        name, type_words = words[-1], {w.text for w in words[:-1]}
        while True:
            self._define_constant(name, self._initializer(), type_words)
            if not self.accept(",") or self.peek().kind != _NAME:
                break
            name = self.advance()
            if not (self.at("=") or self.at("{")):
                break
        if not self.accept(";"):
            self.skip_statement()

    def _initializer(self) -> list[_Token]:
        """The tokens of ``= expr`` up to ``,``/``;``, or of ``{ expr }`` (braces dropped)."""
        opener = self.advance()
        depth = 1 if opener.text == "{" else 0
        tokens: list[_Token] = []
        while self.peek().kind != _END:
            t = self.peek()
            if t.kind == _PUNCT:
                if t.text in ("(", "[", "{"):
                    depth += 1
                elif t.text in (")", "]", "}"):
                    if depth == 0:
                        break
                    depth -= 1
                    if depth == 0 and opener.text == "{":
                        self.advance()
                        break
                elif depth == 0 and t.text in (",", ";"):
                    break
            tokens.append(self.advance())
        if len(tokens) >= 2 and tokens[0].text == "{" and tokens[-1].text == "}":
            tokens = tokens[1:-1]  # constexpr int N = {4};
        return tokens

    def _define_constant(self, name: _Token, tokens: list[_Token], type_words: set[str]) -> None:
        bad_type = type_words & _NOT_INTEGER_TYPES
        if bad_type:
            self.scope.define(name.text, _Name(why=f"declared {min(bad_type)} at {_where(name)}"))
            return
        last = tokens[-1] if tokens else name
        end = _Token(_END, "", last.line, last.column + len(last.text),
                     f"the end of the initialiser of {name.text}")
        sub = _Parser([*tokens, end], self.scope, self.depth + 1)
        try:
            value = sub.expression()
            sub.expect_end()
        except CppSyntaxError as error:
            self.scope.define(name.text, _Name(why=str(error)))
            return
        self.scope.define(name.text, _Name(value=value))

    # -- statements of a header --------------------------------------------------------------

    def skip_statement(self) -> None:
        """Skip what we do not model (see the module's decisions)."""
        depth = 0
        while self.peek().kind != _END:
            t = self.advance()
            if t.kind != _PUNCT:
                continue
            if t.text in ("(", "["):
                depth += 1
            elif t.text in (")", "]"):
                depth = max(depth - 1, 0)
                if depth == 0 and t.text == ")":
                    return
            elif depth == 0 and t.text in _BOUNDARIES:
                return

    # -- tilings ---------------------------------------------------------------------------

    def preamble(self) -> None:
        """Constants before a lone tiling or port program."""
        while self.constant_ahead():
            self.constant_statement()

    def program(self) -> PortProgram:
        """One tiling, or a braced list of them."""
        start = self.peek()
        if self.at("{") and not self.at(".", 1):  # a list ({} included: see decisions)
            entries = self.braced(self.tiling, "'{'", self.advance())
        else:
            entries = [self.tiling()]
        try:
            return PortProgram([tp for tp, _, _ in entries])
        except TilingError as error:
            paths = {"entries": start}
            for i, (_, fields_, where) in enumerate(entries):
                paths[f"entries[{i}]"] = where
                paths.update({f"entries[{i}].{k}": v for k, v in fields_.items()})
            raise _located(error, paths, start) from None

    def tiling(self) -> tuple[TilingParameters, dict[str, _Token], _Token]:
        """A tiling, its field paths' tokens (for messages) and its first token."""
        start = self.peek()
        if (self.at("adf") and self.at("::", 1)
                and self.peek(2).text in ("tiling", "tiling_parameters")):
            self.adf_prefix()
        if self.at("tiling") and self.at("(", 1) and self.at(")", 3) \
                and self._tiling_variable(self.peek(2)) is not None:
            self.advance()
            self.advance()
            tiling = self.variable_tiling(self.advance())
            self.advance()
            return tiling
        if self.peek().kind == _NAME and self._tiling_variable(self.peek()) is not None:
            return self.variable_tiling(self.advance())
        if self.at("tiling"):
            self.advance()
            opener = self.expect("(", "'(' after tiling")
            values, paths = self.tiling_fields()
            self.expect(")", f"')' to close the '(' at {_where(opener)}")
        elif self.at("tiling_parameters"):
            self.advance()
            values, paths = self.tiling_fields()
        elif self.at("{"):
            values, paths = self.tiling_fields()
        else:
            raise self.expected("a tiling: tiling({.field = value, ...}) or {.field = value}")
        try:
            return TilingParameters.from_dict(values), paths, start
        except TilingError as error:
            raise _located(error, paths, start) from None

    def _tiling_variable(self, t: _Token) -> _Name | None:
        entry = self.scope.names.get(t.text) if t.kind == _NAME else None
        return entry if entry is not None and entry.tiling is not None else None

    def variable_tiling(self, t: _Token) -> tuple[TilingParameters, dict[str, _Token], _Token]:
        """The tiling a ``tiling_parameters`` variable was initialised with (graph headers)."""
        entry = self._tiling_variable(t)
        assert entry is not None
        if t.text in self.expanding:
            raise _syntax(t, f"{t.text} is defined in terms of itself")
        body = list(entry.tiling)
        last = body[-1] if body else t
        end = _Token(_END, "", last.line, last.column + len(last.text),
                     f"the end of the initialiser of {t.text}")
        sub = _Parser([*body, end], entry.scope or self.scope, self.depth + 1,
                      self.expanding | {t.text})
        tiling = sub.tiling()
        sub.expect_end()
        return tiling

    def _designated(self, names: tuple[str, ...], seen: dict[str, _Token], what: str,
                    hint: str) -> _Token:
        """``"." NAME "="``: the name's token, checked against ``names`` and ``seen``."""
        self.expect(".", f"'.' and {what} (a designated initialiser .name = value)")
        t = self.peek()
        if t.kind != _NAME or t.text not in names:
            close = difflib.get_close_matches(t.text, names, n=1) if t.kind == _NAME else []
            suggestion = f" (did you mean {close[0]}?)" if close else ""
            raise _syntax(t, f"expected {what} ({hint}), found {t.shown()}{suggestion}")
        self.advance()
        if t.text in seen:
            raise _syntax(t, f"expected each field once, found .{t.text} again "
                             f"(first at {_where(seen[t.text])})")
        seen[t.text] = t
        self.expect("=", f"'=' after .{t.text}")
        return t

    def tiling_fields(self) -> tuple[dict[str, Any], dict[str, _Token]]:
        values: dict[str, Any] = {}
        paths: dict[str, _Token] = {}
        seen: dict[str, _Token] = {}

        def one_field() -> None:
            name = self._designated(_TILING_FIELDS, seen, "a tiling_parameters field",
                                    ", ".join(_TILING_FIELDS)).text
            paths[name] = self.peek()
            if name == "tile_traversal":
                values[name] = self.traversals(paths)
            elif name in _VECTOR_FIELDS:
                values[name] = self.integers(f"'{{' (.{name} is a list of integers)",
                                             paths, name)
            else:
                values[name] = self.expression()

        self.braced(one_field, "'{' and the tiling's fields, like {.buffer_dimension = ...}")
        return values, paths

    def integers(self, what: str, paths: dict[str, _Token] | None = None,
                 name: str = "") -> list[int]:
        items: list[int] = []

        def element() -> int:
            if paths is not None:
                paths[f"{name}[{len(items)}]"] = self.peek()
            items.append(self.expression())
            return items[-1]

        self.braced(element, what)
        return items

    def traversals(self, paths: dict[str, _Token]) -> list[dict[str, int]]:
        entries: list[dict[str, int]] = []

        def entry() -> dict[str, int]:
            prefix = f"tile_traversal[{len(entries)}]"
            paths[prefix] = self.peek()
            entries.append(self.traversal(prefix, paths))
            return entries[-1]

        self.braced(entry, "'{' (.tile_traversal is a list of {dimension, stride, wrap})")
        return entries

    def traversal(self, prefix: str, paths: dict[str, _Token]) -> dict[str, int]:
        opener = self.expect("{", "'{' and a traversal {dimension, stride, wrap} "
                                  "or {.dimension = ..., .stride = ..., .wrap = ...}")
        if self.at("."):
            values: dict[str, int] = {}
            seen: dict[str, _Token] = {}

            def one_field() -> None:
                name = self._designated((*_TRAVERSAL_FIELDS, "order"), seen,
                                        "a traversing_parameters field",
                                        "dimension (old spelling: order), stride, wrap").text
                paths[f"{prefix}.{name}"] = self.peek()
                if name == "order":
                    paths[f"{prefix}.dimension"] = self.peek()
                values[name] = self.expression()

            self.braced(one_field, "'{'", opener)
            defaults = {"stride": 0, "wrap": 0}  # C++ default member initialisers
            if "order" not in values:
                defaults["dimension"] = 0
            return {**defaults, **values}
        numbers: list[int] = []
        while not self.accept("}"):
            if len(numbers) == len(_TRAVERSAL_FIELDS):
                raise self.expected("'}' (a traversal has 3 numbers: dimension, stride, wrap)")
            paths[f"{prefix}.{_TRAVERSAL_FIELDS[len(numbers)]}"] = self.peek()
            numbers.append(self.expression())
            if not self.accept(","):
                closing = "'}'" if len(numbers) == 3 else "',' or '}'"
                self.expect("}", f"{closing} (to close the traversal at {_where(opener)})")
                break
        numbers += [0] * (len(_TRAVERSAL_FIELDS) - len(numbers))  # C++ defaults
        return dict(zip(_TRAVERSAL_FIELDS, numbers, strict=True))


# --- public API -------------------------------------------------------------------------

def parse_tiling(text: str, defines: Mapping[str, int | str] | None = None) -> TilingParameters:
    """One ``tiling({...})`` (or ``{.field = ...}``) written in C++.

    Parameters
    ----------
    text : str
        Optional ``#define``/``constexpr`` lines, then one tiling, then an optional ``;``.
    defines : dict, optional
        ``NAME: value`` as ``-D NAME=VALUE`` would give; a value is an int or the
        text of an integer expression. They take precedence over the text's own.

    Raises
    ------
    CppSyntaxError
        ``line L, column C: expected X, found Y``, or an unknown name.
    TilingError
        The model's rule, prefixed with where the offending value was written.

    Examples
    --------
    >>> tp = parse_tiling("tiling({.buffer_dimension={N, 2}, .tiling_dimension={2, 2},"
    ...                   " .tile_traversal={{0, 2, 2}}})", defines={"N": 4})
    >>> tp.indices().tolist()
    [0, 1, 4, 5, 2, 3, 6, 7]
    """
    parser = _Parser.for_text(text, defines)
    parser.preamble()
    tp, _, _ = parser.tiling()
    parser.accept(";")
    parser.expect_end()
    return tp


def parse_port_program(text: str, defines: Mapping[str, int | str] | None = None) -> PortProgram:
    """A port program in C++: one tiling or ``{ tiling(...), tiling(...) }``.

    ``text`` and ``defines`` are as for :func:`parse_tiling`.

    Examples
    --------
    >>> p = parse_port_program('''
    ...     constexpr int N = 4;  // elements
    ...     { tiling({.buffer_dimension = {N}, .tiling_dimension = {N / 2}}),
    ...       tiling({.buffer_dimension = {N}, .tiling_dimension = {N / 2},
    ...               .offset = {N / 2}}), }''')
    >>> p.indices().tolist()
    [0, 1, 2, 3]
    """
    parser = _Parser.for_text(text, defines)
    parser.preamble()
    program = parser.program()
    parser.accept(";")
    parser.expect_end()
    return program


def parse_graph_header(text: str,
                       defines: Mapping[str, int | str] | None = None) -> list[SharedBufferSpec]:
    """Every ``shared_buffer`` of a graph header, with its port programs (strict).

    The header is read by :func:`.adf_header.read_graph_header` (classes, templates,
    locals, tiling variables, ...); a buffer made inside class ``C`` is named ``C::x``.
    Kernel and external-buffer ports are not in this list (``read_graph_header`` has
    them, with every port's context).

    Returns
    -------
    list of SharedBufferSpec
        In the order the buffers were created.

    Raises
    ------
    CppSyntaxError, TilingError
        The first problem in the text (``read_graph_header`` lists them all instead).

    Examples
    --------
    >>> [spec] = parse_graph_header('''
    ...     mtx = shared_buffer<int16>::create({8}, 1, 1);
    ...     connect<>(k1.out[0], mtx.in[0]);
    ...     read_access(mtx.out[0]) = tiling({.buffer_dimension = {8},
    ...                                       .tiling_dimension = {4}, .offset = {2}});''')
    >>> spec.name, spec.dtype, spec.shape, sorted(spec.read_access), spec.write_access
    ('mtx', 'int16', (8,), [0], {})
    >>> spec.read_access[0].indices().tolist()
    [2, 3, 4, 5]
    """
    from .adf_header import read_graph_header  # lazy: adf_header imports this module

    header = read_graph_header(text, defines)
    if header.skipped:
        raise header.skipped[0].error
    return list(header.buffers)


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
