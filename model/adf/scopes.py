"""Names and what they stand for: macros, constants, variables, types, ``-D`` defines.

A :class:`Scope` maps names to :class:`Definition` entries; the graph-header reader
chains several (block, class, namespaces) into one. Names given by the caller
(``defines=``, as ``-D NAME=VALUE``) are fixed: the text cannot replace them.

Decisions (each with its reason in docs/decisions.md):

* **decision**: names given by the caller take precedence over definitions in the
  text. With the usual ``#ifndef N`` / ``#define N 10`` idiom this is what the compiler
  does, and it lets a command line change a size without editing the header.
* **decision**: a ``#define`` body is evaluated where the name is used (as the
  preprocessor does); a ``constexpr``/``const`` initialiser where it is defined, with
  the names known at that point (:mod:`.expressions`). A constant that is not an
  integer expression (a float, a string, ``sizeof``, a function-like macro) is
  remembered as such and is an error only where a tiling uses it.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass, field

from ..errors import field_error
from .lexer import DIRECTIVES, IDENT_CHARS, IDENT_START, CppSyntaxError, Lexer, Token

__all__ = ["Definition", "Scope", "scope_of_defines"]
@dataclass
class Definition:
    """What a name stands for: a value, a body to evaluate at each use, or why neither.

    The graph reader also keeps C++ variables here: ``scope`` is where a variable's
    initialiser (``body``) is evaluated, ``type`` the type a ``typedef``/``using`` or
    template parameter names, ``tiling`` the tokens of a ``tiling_parameters`` variable's
    initialiser, ``shape`` the braced initialiser of a ``std::vector`` / ``std::array``
    of integers (such names also carry a ``why``: they are not integers).
    """

    value: int | None = None
    body: tuple[Token, ...] | None = None
    why: str | None = None
    cache: tuple[int, int, int] | None = None  # (scope serial, version, value) of the last use
    scope: Scope | None = None
    type: str | None = None
    tiling: tuple[Token, ...] | None = None
    shape: tuple[Token, ...] | None = None


_SERIALS = itertools.count()


@dataclass
class Scope:
    """Names in force at a point of the text; ``fixed`` ones came from the caller."""

    names: MutableMapping[str, Definition] = field(default_factory=dict)
    fixed: frozenset[str] = frozenset()  # given by the caller: the text cannot replace them
    # Bumped by every definition: a cached #define value is good while it is unchanged
    # (without the cache, `#define B (A + A)` chains cost 2**depth evaluations).
    version: int = 0
    serial: int = field(default_factory=lambda: next(_SERIALS))  # tells scopes' caches apart

    def define(self, name: str, entry: Definition) -> None:
        """Give ``name`` a meaning, unless the caller fixed it."""
        if name not in self.fixed:
            self.names[name] = entry
            self.version += 1

    def undefine(self, name: str) -> None:
        """``#undef name``, unless the caller fixed it."""
        if name not in self.fixed:
            self.names.pop(name, None)
            self.version += 1


def scope_of_defines(defines: Mapping[str, int | str] | None) -> Scope:
    """The caller's ``-D NAME=VALUE`` definitions (ints, or expression text), all fixed.

    Raises
    ------
    CppSyntaxError
        ``defines`` is not a dict, a name is not a C++ identifier, or a value is
        neither an integer nor the text of an expression.
    """
    if defines is None:
        return Scope()
    if not isinstance(defines, Mapping):
        raise field_error(CppSyntaxError, "defines", type(defines).__name__,
                          "must be a dict of NAME: integer or expression text")
    scope = Scope(fixed=frozenset())
    for name, value in defines.items():
        if not isinstance(name, str) or not name or name[0] not in IDENT_START \
                or any(c not in IDENT_CHARS for c in name):
            raise field_error(CppSyntaxError, "defines", name, "names must be C++ identifiers")
        where = f"defines[{name!r}]"
        if isinstance(value, str):
            try:
                tokens = Lexer(value, f"the end of {where}").tokens()
            except CppSyntaxError as error:
                raise CppSyntaxError(f"{where}: {error}") from None
            if any(t.kind in DIRECTIVES for t in tokens):
                raise field_error(CppSyntaxError, where, value, "must be an expression")
            scope.names[name] = Definition(body=tuple(tokens[:-1]))
        elif isinstance(value, bool):
            raise field_error(CppSyntaxError, where, value, "must be an integer, not a bool")
        else:
            try:
                scope.names[name] = Definition(value=operator.index(value))
            except TypeError:
                raise field_error(CppSyntaxError, where, value,
                                  "must be an integer or the text of an expression") from None
    scope.fixed = frozenset(scope.names)
    return scope
