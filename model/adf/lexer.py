"""Characters to tokens: the C++ lexer every reader of graph code starts from.

Tokens are identifiers, integer literals (with their value), other numbers (with why
they are not integers), string and character literals, punctuation (``::`` and ``->``
as one token) and one token per ``#define`` / ``#undef`` line. ``//`` and ``/* */``
comments and whitespace may appear between any two tokens. Line and column numbers
in messages count from 1; a tab is one column.

``INTEGER`` is a C++ integer literal: decimal, ``0x`` hex, ``0b`` binary or
``0``-prefixed octal, with ``'`` digit separators and ``u``/``l``/``ll`` suffixes.

Decisions (each with its reason in docs/decisions.md):

* **decision**: ``#define`` and ``#undef`` become tokens that act in text order
  (:mod:`.scopes`); every other directive (``#include``, ``#if``/``#ifdef``/``#else``/
  ``#endif``, ``#pragma``) is skipped, so both branches of an ``#if`` are read and the
  later definition wins.
* **decision**: a literal that does not fit in 64 bits is not an integer; the
  expressions check every value after every operation (:mod:`.expressions`).
"""

from __future__ import annotations

import string
from bisect import bisect_right
from dataclasses import dataclass
from typing import Any

from ..errors import AiedmaError

__all__ = [
    "DEFINE",
    "DIRECTIVES",
    "END",
    "IDENT_CHARS",
    "IDENT_START",
    "INT",
    "NAME",
    "NUMBER",
    "PUNCT",
    "STRING",
    "UNDEF",
    "VALUE_LIMIT",
    "CppSyntaxError",
    "Lexer",
    "Token",
    "position",
    "syntax_error",
]
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


# --- tokens -------------------------------------------------------------------------------

NAME, INT, NUMBER, STRING, PUNCT, DEFINE, UNDEF, END = (
    "name", "int", "number", "string", "punct", "define", "undef", "end")
DIRECTIVES = (DEFINE, UNDEF)

IDENT_START = frozenset(string.ascii_letters + "_")
IDENT_CHARS = IDENT_START | frozenset(string.digits)
_DIGITS = {16: frozenset(string.hexdigits), 10: frozenset(string.digits),
           8: frozenset("01234567"), 2: frozenset("01")}
_INT_SUFFIXES = frozenset({"", "u", "l", "ul", "lu", "ll", "ull", "llu"})
VALUE_LIMIT = 1 << 64
"""Every value must be above ``-VALUE_LIMIT`` and below ``VALUE_LIMIT`` (64 bits)."""


@dataclass(frozen=True, slots=True)
class Token:
    """One token: its kind (``NAME``, ``INT``, ...), its text and where it starts."""

    kind: str
    text: str
    line: int
    column: int
    # INT: its value; NUMBER: why it is not an integer; DEFINE: the body tokens
    # (None for a function-like macro); END: how to call the end in messages.
    value: Any = None
    pos: int = 0  # offset of the first character in the text

    def shown(self) -> str:
        """The token as a message quotes it (``'N'``; the end as its name)."""
        if self.kind == END:
            return self.value
        text = self.text if len(self.text) <= 40 else self.text[:37] + "..."
        return repr(text)


def syntax_error(token: Token, detail: str) -> CppSyntaxError:
    """A :class:`CppSyntaxError` placed at ``token``."""
    return CppSyntaxError(detail, token.line, token.column)


def position(token: Token) -> str:
    """``line L, column C`` of ``token``, for messages."""
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
    return value if value < VALUE_LIMIT else "does not fit in 64 bits"


class Lexer:
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

    def _make(self, kind: str, start: int, value: Any = None, text: str | None = None) -> Token:
        line, column = self._place(start)
        return Token(kind, self.text[start:self.pos] if text is None else text,
                     line, column, value, start)

    def _found(self) -> str:
        if self.pos >= len(self.text):
            return "the end of the text"
        c = self.text[self.pos]
        return "the end of the line" if c == "\n" else repr(c)

    def tokens(self) -> list[Token]:
        """Every token of the text, then one ``END`` token."""
        out: list[Token] = []
        line_start = True
        while True:
            line_start |= self._skip_blank(directive=False)
            if self.pos >= len(self.text):
                out.append(self._make(END, self.pos, value=self.end_name, text=""))
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
        while self.pos < len(self.text) and self.text[self.pos] in IDENT_CHARS:
            self.pos += 1
        return self.text[start:self.pos]

    def _directive(self, out: list[Token]) -> None:
        self.pos += 1  # '#'
        self._skip_blank(directive=True)
        kind = self._identifier()
        if kind not in ("define", "undef"):
            self._skip_line()
            return
        self._skip_blank(directive=True)
        start = self.pos
        if self.pos >= len(self.text) or self.text[self.pos] not in IDENT_START:
            self._tolerate(self._error(self.pos, f"expected a macro name after #{kind}, "
                                                 f"found {self._found()}"))
            self._skip_line()
            return
        name = self._identifier()
        if kind == "undef":
            out.append(self._make(UNDEF, start, text=name))
            self._skip_line()
        elif self.text.startswith("(", self.pos):  # function-like macro
            out.append(self._make(DEFINE, start, value=None, text=name))
            self._skip_line()
        else:
            body: list[Token] = []
            while True:
                self._skip_blank(directive=True)
                if self.pos >= len(self.text) or self.text[self.pos] == "\n":
                    break
                body.append(self._next())
            out.append(self._make(DEFINE, start, value=tuple(body), text=name))

    def _next(self) -> Token:
        text, start = self.text, self.pos
        c = text[start]
        if c in IDENT_START:
            self._identifier()
            return self._make(NAME, start)
        if c in _DIGITS[10] or (c == "." and text[start + 1:start + 2] in _DIGITS[10]):
            return self._number()
        if c in "\"'":
            return self._literal(c)
        self.pos += 2 if text.startswith(("::", "->"), start) else 1
        return self._make(PUNCT, start)

    def _number(self) -> Token:
        """A preprocessing number (C++ [lex.ppnumber]); only integer literals have a value."""
        text, n, start = self.text, len(self.text), self.pos
        self.pos += 1
        while self.pos < n:
            c = text[self.pos]
            if c in "eEpP" and text[self.pos + 1:self.pos + 2] in ("+", "-"):
                self.pos += 2
            elif c in IDENT_CHARS or c == ".":
                self.pos += 1
            elif c == "'" and text[self.pos + 1:self.pos + 2] in IDENT_CHARS:
                self.pos += 2  # digit separator
            else:
                break
        value = _integer_literal(text[start:self.pos])
        return self._make(INT if isinstance(value, int) else NUMBER, start, value)

    def _literal(self, quote: str) -> Token:
        text, n, start = self.text, len(self.text), self.pos
        self.pos += 1
        while self.pos < n and text[self.pos] != "\n":
            c = text[self.pos]
            self.pos += 2 if c == "\\" else 1
            if c == quote:
                return self._make(STRING, start)
        self.pos = min(self.pos, n)
        what = "string" if quote == '"' else "character"
        self._tolerate(self._error(start, f"expected a closing {quote} for this {what} "
                                          f"literal, found {self._found()}"))
        return self._make(STRING, start)  # up to the end of the line


# --- names ------------------------------------------------------------------------------
