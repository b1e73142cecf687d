"""Integer constant expressions and declarations of constants, over a token list.

:class:`ExpressionParser` is the recursive-descent base the other readers build on:
token navigation (``#define``/``#undef`` applied in text order), integer
expressions, name lookup through a :class:`.Scope`, and ``const``/``constexpr``
declarations. :mod:`.tilings` adds tilings and port programs; :mod:`.header` reads
whole graph headers with it.

Grammar (EBNF-ish; ``{ }`` repeated, ``NAME`` an identifier, ``INTEGER`` as in
:mod:`.lexer`)::

    constant = { NAME | "::" } NAME ( "=" expr | "{" expr "}" )
               { "," NAME ( "=" expr | "{" expr "}" ) } ";" ;
               (the leading words include "const", "constexpr" or "constinit")
    expr     = term { ( "+" | "-" ) term } ;
    term     = unary { ( "*" | "/" | "%" ) unary } ;
    unary    = { "+" | "-" } primary ;
    primary  = INTEGER | { NAME "::" } NAME | "(" expr ")" ;

Decisions (each with its reason in docs/decisions.md):

* **decision**: arithmetic is C++'s: ``/`` and ``%`` truncate towards zero, a
  ``0``-prefixed literal is octal. Every value must fit in 64 bits, and expressions
  and macro expansions nest at most 100 deep (deeper input is refused with a
  message rather than overflowing Python's stack).
  ``ns::NAME`` and ``Class::NAME`` look up ``NAME`` in the scopes around the use
  (:mod:`.header`: block, class, namespaces).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Self

from ..errors import field_error
from .lexer import (
    DIRECTIVES,
    END,
    INT,
    NAME,
    NUMBER,
    PUNCT,
    UNDEF,
    VALUE_LIMIT,
    CppSyntaxError,
    Lexer,
    Token,
    position,
    syntax_error,
)
from .scopes import Definition, Scope, scope_of_defines

__all__ = ["C_TYPES", "MAX_DEPTH", "NOT_INTEGER_TYPES", "ExpressionParser"]

MAX_DEPTH = 100
"""Expression and macro nesting; deeper is refused, not a RecursionError."""

NOT_INTEGER_TYPES = frozenset({"float", "double", "bool"})
"""Declared types whose constants are never sizes."""

C_TYPES = {
    "int": "int32", "signed": "int32", "signed int": "int32", "unsigned": "uint32",
    "unsigned int": "uint32", "short": "int16", "short int": "int16",
    "unsigned short": "uint16", "char": "int8", "signed char": "int8",
    "unsigned char": "uint8", "long long": "int64", "unsigned long long": "uint64",
    **{f"{u}int{b}_t": f"{u}int{b}" for u in ("", "u") for b in (8, 16, 32, 64)},
}
"""The adf element type of each C spelling of an integer type (AIE-ML ``int`` is 32 bits)."""

_CONST_WORDS = frozenset({"const", "constexpr", "constinit"})
_SPECIFIERS = _CONST_WORDS | {"static", "inline", "extern", "volatile", "thread_local"}
_BOUNDARIES = (";", "{", "}", ":")


def _fits(value: int, token: Token) -> int:
    """``value`` if it fits in 64 bits (checked after every operation, so numbers stay small)."""
    if not -VALUE_LIMIT < value < VALUE_LIMIT:
        raise syntax_error(token, f"expected a value that fits in 64 bits, found one of "
                                  f"{value.bit_length()} bits")
    return value


def _c_divide(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


class ExpressionParser:
    """Recursive descent over a token list; one method per grammar rule.

    Parameters
    ----------
    tokens : list of Token
        Ending in an ``END`` token (what messages call the end).
    scope : Scope
        The names in force; ``#define``/``#undef`` tokens change it as they are passed.
    depth : int
        Nesting so far (a macro's body is read by a parser one deeper).
    expanding : frozenset of str
        The macros being expanded around this parser (a name defined in terms of
        itself is refused).
    """

    def __init__(self, tokens: list[Token], scope: Scope, depth: int = 0,
                 expanding: frozenset[str] = frozenset()) -> None:
        self.tokens, self.i = tokens, 0
        self.scope, self.depth, self.expanding = scope, depth, expanding
        self._settle()

    @classmethod
    def for_text(cls, text: str, defines: Mapping[str, int | str] | None) -> Self:
        """A parser of ``text`` with the caller's ``defines`` (as ``-D`` gives them)."""
        if not isinstance(text, str):
            raise field_error(CppSyntaxError, "text", type(text).__name__, "must be a str")
        scope = scope_of_defines(defines)
        return cls(Lexer(text).tokens(), scope)

    def nested(self, body: Sequence[Token], after: Token, end_name: str, scope: Scope,
               expanding: frozenset[str] = frozenset()) -> Self:
        """A parser one level deeper of ``body`` (a macro's or an initialiser's tokens).

        Its end token, called ``end_name`` in messages, sits just after the last token
        of ``body`` (after ``after`` when ``body`` is empty).
        """
        last = body[-1] if body else after
        end = Token(END, "", last.line, last.column + len(last.text), end_name)
        return type(self)([*body, end], scope, self.depth + 1, expanding)

    # -- token navigation --------------------------------------------------------------

    def _settle(self) -> None:
        """Apply the ``#define``/``#undef`` lines at the cursor; they act in text order."""
        while self.tokens[self.i].kind in DIRECTIVES:
            t = self.tokens[self.i]
            if t.kind == UNDEF:
                self.scope.undefine(t.text)
            elif t.value is None:
                self.scope.define(t.text, Definition(why=f"a function-like macro ({position(t)})"))
            else:
                self.scope.define(t.text, Definition(body=t.value))
            self.i += 1

    def upcoming(self) -> Iterator[Token]:
        """The tokens from the cursor on, directives left out (for lookahead only)."""
        for k in range(self.i, len(self.tokens)):
            if self.tokens[k].kind not in DIRECTIVES:
                yield self.tokens[k]

    def peek(self, ahead: int = 0) -> Token:
        """The token ``ahead`` places after the cursor (directives left out)."""
        for k, t in enumerate(self.upcoming()):
            if k == ahead:
                return t
        return self.tokens[-1]

    def advance(self) -> Token:
        """The token at the cursor; the cursor moves past it (never past the end)."""
        t = self.tokens[self.i]
        if t.kind != END:
            self.i += 1
            self._settle()
        return t

    def at(self, text: str, ahead: int = 0) -> bool:
        """Whether the name or punctuation ``text`` is ``ahead`` places on."""
        t = self.peek(ahead)
        return t.kind in (PUNCT, NAME) and t.text == text

    def accept(self, text: str) -> Token | None:
        """Take ``text`` if it is next."""
        return self.advance() if self.at(text) else None

    def expected(self, what: str, token: Token | None = None) -> CppSyntaxError:
        """``expected WHAT, found T`` at ``token`` (the next one by default)."""
        t = self.peek() if token is None else token
        return syntax_error(t, f"expected {what}, found {t.shown()}")

    def expect(self, text: str, what: str | None = None) -> Token:
        """Take ``text``, or raise ``expected WHAT``."""
        if self.at(text):
            return self.advance()
        raise self.expected(what or repr(text))

    def name(self, what: str) -> Token:
        """Take a name, or raise ``expected WHAT``."""
        if self.peek().kind != NAME:
            raise self.expected(what)
        return self.advance()

    def expect_end(self) -> None:
        """Raise unless every token was read."""
        if self.peek().kind != END:
            raise self.expected("the end of the text")

    def adf_prefix(self) -> None:
        """Skip an ``adf::`` qualifier."""
        if self.at("adf") and self.at("::", 1):
            self.advance()
            self.advance()

    def braced(self, item: Callable[[], Any], what: str, opener: Token | None = None) -> list:
        """``"{" [item {"," item} [","]] "}"``; ``what`` describes the expected ``{``."""
        opener = opener or self.expect("{", what)
        items: list = []
        while not self.accept("}"):
            items.append(item())
            if not self.accept(","):
                self.expect("}", f"',' or '}}' (to close the '{{' at {position(opener)})")
                break
        return items

    # -- expressions -----------------------------------------------------------------------

    def expression(self) -> int:
        """``expr``: an integer expression's value."""
        first = self.peek()
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise syntax_error(first, f"expressions nest at most {MAX_DEPTH} deep")
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
                which = "" if operand.kind == INT else " (which is 0)"
                raise syntax_error(operand, f"expected a divisor other than 0, found "
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
        if t.kind == INT:
            self.advance()
            return t.value
        if t.kind == NUMBER:
            raise syntax_error(t, f"expected an integer, found {t.shown()} ({t.value})")
        if t.kind == NAME:
            self.advance()
            while self.at("::") and self.peek(1).kind == NAME:
                self.advance()
                t = self.advance()
            return self.lookup(t)
        if self.at("("):
            opener = self.advance()
            value = self.expression()
            self.expect(")", f"')' to close the '(' at {position(opener)}")
            return value
        raise self.expected("an integer expression")

    def lookup(self, t: Token) -> int:
        """The integer value of the name ``t`` (a ``#define`` body is evaluated here)."""
        entry = self.scope.names.get(t.text)
        if entry is None:
            raise syntax_error(t, f"unknown name {t.text} (not #defined or constexpr before "
                                  "this point, nor given in defines)")
        if entry.why is not None:
            raise syntax_error(t, f"{t.text} is not an integer constant: {entry.why}")
        if entry.body is None:
            return entry.value
        scope = entry.scope or self.scope
        if entry.cache is not None and entry.cache[:2] == (scope.serial, scope.version):
            return entry.cache[2]
        if t.text in self.expanding:
            raise syntax_error(t, f"{t.text} is defined in terms of itself")
        sub = self.nested(entry.body, t, f"the end of the definition of {t.text}", scope,
                          self.expanding | {t.text})
        try:
            value = sub.expression()
            sub.expect_end()
        except CppSyntaxError as error:
            detail = error.detail if t.text in self.scope.fixed else str(error)
            origin = " (given in defines)" if t.text in self.scope.fixed else ""
            raise syntax_error(t, f"{t.text}{origin} is not an integer constant: "
                                  f"{detail}") from None
        entry.cache = (scope.serial, scope.version, value)
        return value

    # -- constants -------------------------------------------------------------------------

    def constant_ahead(self) -> bool:
        """``const int N = ...``, ``static constexpr uint32_t N{...}``, ``int const N = ...``."""
        const, last = False, None
        for t in self.upcoming():
            if t.kind == NAME:
                const |= t.text in _CONST_WORDS
                last = t
            elif not (t.kind == PUNCT and t.text == "::"):
                return (const and last is not None and last.text not in _SPECIFIERS
                        and t.kind == PUNCT and t.text in ("=", "{"))
        return False

    def constant_statement(self) -> None:
        """Define the constants of one declaration (see :meth:`constant_ahead`)."""
        words = []
        while self.peek().kind == NAME or self.at("::"):
            t = self.advance()
            if t.kind == NAME:
                words.append(t)
        name, type_words = words[-1], {w.text for w in words[:-1]}
        while True:
            self._define_constant(name, self._initializer(), type_words)
            if not self.accept(",") or self.peek().kind != NAME:
                break
            name = self.advance()
            if not (self.at("=") or self.at("{")):
                break
        if not self.accept(";"):
            self.skip_statement()

    def _initializer(self) -> list[Token]:
        """The tokens of ``= expr`` up to ``,``/``;``, or of ``{ expr }`` (braces dropped)."""
        opener = self.advance()
        depth = 1 if opener.text == "{" else 0
        tokens: list[Token] = []
        while self.peek().kind != END:
            t = self.peek()
            if t.kind == PUNCT:
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

    def _define_constant(self, name: Token, tokens: list[Token], type_words: set[str]) -> None:
        bad_type = type_words & NOT_INTEGER_TYPES
        if bad_type:
            why = f"declared {min(bad_type)} at {position(name)}"
            self.scope.define(name.text, Definition(why=why))
            return
        sub = self.nested(tokens, name, f"the end of the initialiser of {name.text}",
                          self.scope)
        try:
            value = sub.expression()
            sub.expect_end()
        except CppSyntaxError as error:
            self.scope.define(name.text, Definition(why=str(error)))
            return
        self.scope.define(name.text, Definition(value=value))

    # -- statements ------------------------------------------------------------------------

    def skip_statement(self) -> None:
        """Skip what we do not model (see the module's decisions)."""
        depth = 0
        while self.peek().kind != END:
            t = self.advance()
            if t.kind != PUNCT:
                continue
            if t.text in ("(", "["):
                depth += 1
            elif t.text in (")", "]"):
                depth = max(depth - 1, 0)
                if depth == 0 and t.text == ")":
                    return
            elif depth == 0 and t.text in _BOUNDARIES:
                return
