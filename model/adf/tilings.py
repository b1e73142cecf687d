"""Tilings and port programs written in C++: ``tiling({...})``, ``{ tiling(...), ... }``.

:class:`TilingParser` adds the adf initialisers to :class:`.ExpressionParser` and
builds the model's own objects (:class:`.TilingParameters`, :class:`.PortProgram`);
:func:`parse_tiling` and :func:`parse_port_program` read one of them from a text.

Grammar (EBNF-ish; ``[ ]`` optional, ``{ }`` repeated, ``NAME`` an identifier,
``expr`` and ``constant`` as in :mod:`.expressions`)::

    text       = { constant } ( tiling | program ) [ ";" ] ;
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

Decisions (each with its reason in docs/decisions.md):

* **decision**: designated fields may come in any order (C++20 wants declaration
  order; we are lenient), each at most once. A traversal field left out takes the
  C++ default member initialiser of ``traversing_parameters`` (0), so a missing
  ``.wrap`` fails with the model's "a loop needs at least 1 tile". ``.order`` is
  the old spelling of ``.dimension`` (docs/tiling.md).
* **decision**: ``{}`` assigned to a port is an empty list (an error: a port program
  needs an entry), not an all-default tiling.
* **decision**: a model error (:class:`.TilingError`) is prefixed with the
  ``line, column`` of the field its message names.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any

from ..errors import TilingError
from ..tiling.parameters import TilingParameters
from ..tiling.port import PortProgram
from .expressions import ExpressionParser
from .lexer import NAME, Token, position, syntax_error
from .scopes import Definition

__all__ = ["TilingParser", "parse_port_program", "parse_tiling"]

_TILING_FIELDS = ("buffer_dimension", "tiling_dimension", "offset", "tile_traversal",
                  "packet_port_id", "repetition", "phase", "boundary_dimension")
_VECTOR_FIELDS = frozenset({"buffer_dimension", "tiling_dimension", "offset",
                            "boundary_dimension"})
_TRAVERSAL_FIELDS = ("dimension", "stride", "wrap")

def _located(error: TilingError, paths: Mapping[str, Token], fallback: Token) -> TilingError:
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
    return TilingError(f"{position(token)}: {message}")


# --- the parser ---------------------------------------------------------------------------


class TilingParser(ExpressionParser):
    """An :class:`.ExpressionParser` that also reads tilings and port programs."""

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

    def tiling(self) -> tuple[TilingParameters, dict[str, Token], Token]:
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
        if self.peek().kind == NAME and self._tiling_variable(self.peek()) is not None:
            return self.variable_tiling(self.advance())
        if self.at("tiling"):
            self.advance()
            opener = self.expect("(", "'(' after tiling")
            values, paths = self.tiling_fields()
            self.expect(")", f"')' to close the '(' at {position(opener)}")
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

    def _tiling_variable(self, t: Token) -> Definition | None:
        entry = self.scope.names.get(t.text) if t.kind == NAME else None
        return entry if entry is not None and entry.tiling is not None else None

    def variable_tiling(self, t: Token) -> tuple[TilingParameters, dict[str, Token], Token]:
        """The tiling a ``tiling_parameters`` variable was initialised with (graph headers)."""
        entry = self._tiling_variable(t)
        assert entry is not None
        if t.text in self.expanding:
            raise syntax_error(t, f"{t.text} is defined in terms of itself")
        sub = self.nested(entry.tiling, t, f"the end of the initialiser of {t.text}",
                          entry.scope or self.scope, self.expanding | {t.text})
        tiling = sub.tiling()
        sub.expect_end()
        return tiling

    def _designated(self, names: tuple[str, ...], seen: dict[str, Token], what: str,
                    hint: str) -> Token:
        """``"." NAME "="``: the name's token, checked against ``names`` and ``seen``."""
        self.expect(".", f"'.' and {what} (a designated initialiser .name = value)")
        t = self.peek()
        if t.kind != NAME or t.text not in names:
            close = difflib.get_close_matches(t.text, names, n=1) if t.kind == NAME else []
            suggestion = f" (did you mean {close[0]}?)" if close else ""
            raise syntax_error(t, f"expected {what} ({hint}), found {t.shown()}{suggestion}")
        self.advance()
        if t.text in seen:
            raise syntax_error(t, f"expected each field once, found .{t.text} again "
                                  f"(first at {position(seen[t.text])})")
        seen[t.text] = t
        self.expect("=", f"'=' after .{t.text}")
        return t

    def tiling_fields(self) -> tuple[dict[str, Any], dict[str, Token]]:
        """``fields``: the values by field name, and each field path's token."""
        values: dict[str, Any] = {}
        paths: dict[str, Token] = {}
        seen: dict[str, Token] = {}

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

    def integers(self, what: str, paths: dict[str, Token] | None = None,
                 name: str = "") -> list[int]:
        """``ints``; ``paths`` receives ``name[i]``'s token for messages."""
        items: list[int] = []

        def element() -> int:
            if paths is not None:
                paths[f"{name}[{len(items)}]"] = self.peek()
            items.append(self.expression())
            return items[-1]

        self.braced(element, what)
        return items

    def traversals(self, paths: dict[str, Token]) -> list[dict[str, int]]:
        """``traversals``: the ``tile_traversal`` list."""
        entries: list[dict[str, int]] = []

        def entry() -> dict[str, int]:
            prefix = f"tile_traversal[{len(entries)}]"
            paths[prefix] = self.peek()
            entries.append(self.traversal(prefix, paths))
            return entries[-1]

        self.braced(entry, "'{' (.tile_traversal is a list of {dimension, stride, wrap})")
        return entries

    def traversal(self, prefix: str, paths: dict[str, Token]) -> dict[str, int]:
        """``traversal``: positional or designated, missing fields 0."""
        opener = self.expect("{", "'{' and a traversal {dimension, stride, wrap} "
                                  "or {.dimension = ..., .stride = ..., .wrap = ...}")
        if self.at("."):
            values: dict[str, int] = {}
            seen: dict[str, Token] = {}

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
                self.expect("}", f"{closing} (to close the traversal at {position(opener)})")
                break
        numbers += [0] * (len(_TRAVERSAL_FIELDS) - len(numbers))  # C++ defaults
        return dict(zip(_TRAVERSAL_FIELDS, numbers, strict=True))



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
    parser = TilingParser.for_text(text, defines)
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
    parser = TilingParser.for_text(text, defines)
    parser.preamble()
    program = parser.program()
    parser.accept(";")
    parser.expect_end()
    return program


