"""Read real adf graph headers: every DMA port with a tiling, and what could not be read.

A graph header is C++ the DMA model mostly does not need: classes, templates, kernels,
PLIO, ``connect``. This module lets `tree-sitter <https://tree-sitter.github.io>`_
(``tree-sitter-cpp``, an error-tolerant C++ grammar) find the structure (namespaces,
classes and their members, template parameters, function bodies, declarations,
statements) and evaluates only what a tiling needs with the hand-written reader of
:mod:`.tilings` (integer expressions, ``tiling({...})``, port programs), so its messages
and its ``line, column`` places stay the same.

Grammar of the statements read token by token (EBNF-ish; ``[ ]`` optional, ``{ }``
repeated, ``NAME`` an identifier; ``constant`` and ``expr`` as in :mod:`.expressions`,
``program`` and ``ints`` as in :mod:`.tilings`)::

    statement  = directive | constant | create | access | setting | other ;
    directive  = "#define" NAME [ tokens ] | "#undef" NAME | "#" anything ;   (one line)
    create     = target "=" [ "adf" "::" ] ( "shared_buffer" | "external_buffer" )
                 "<" type ">" "::" "create" "(" ints "," expr "," expr ")" ";"
               | target "=" [ "adf" "::" ] "kernel" "::" "create" "(" anything ")" ";" ;
                 (target ends in the object's NAME; type is an adf element type
                 or a C spelling of one: int, unsigned, short, int16_t, ...)
    access     = [ "adf" "::" ] ( "write_access" | "read_access" )
                 "(" object ( "." | "->" ) ( "in" | "out" ) "[" expr "]" ")" "=" program ";" ;
    object     = [ "this" "->" ] NAME [ "[" expr "]" ] { ( "." | "->" ) NAME [ "[" expr "]" ] } ;
    setting    = [ "adf" "::" ] ( "repetition_count" | "num_buffers" )
                 "(" NAME { ( "." | "->" ) NAME } ")" "=" expr ";"
               | [ "adf" "::" ] "dimensions" "(" object ( "." | "->" ) ( "in" | "out" )
                 "[" expr "]" ")" "=" ints ";" ;
                 (any other argument, e.g. a kernel port, makes it an "other")

What it reads:

* ``x = shared_buffer<T>::create(shape, n_in, n_out)`` (memory tile),
  ``external_buffer<T>::create(...)`` (shim) and ``kernel::create(...)`` / ``kernel k;``
  (core tile); targets may be members (``this->x``) or array elements (``mtx[1]``);
  ``input_gmio`` / ``output_gmio`` declarations (shim).
* ``read_access(P) = program;`` / ``write_access(P) = program;`` for a port ``P`` of any
  of them; ``repetition_count(x)``, ``num_buffers(x)`` and ``dimensions(k.in[0])`` (a
  list, or a ``std::vector`` / ``std::array`` variable initialised with one).
* Integer constants and variables (``#define``, ``constexpr``, ``static const`` members,
  plain locals such as ``uint D = Dim0 * Dim1;``, members with a default such as
  ``int Pad = 4;``, template parameters with a default), ``tiling_parameters`` variables
  (initialised, assigned, or filled field by field: ``tp.offset = {2};``), and element
  types through ``typedef``, ``using``, ``#define`` and template parameters.

Decisions (each with its reason in docs/decisions.md):

* **decision**: every class is its own namespace of buffers: a buffer created in class
  ``TestCase1`` is ``TestCase1::mtxin`` and its ports ``TestCase1::mtxin.out[0]``; a
  buffer created outside any class keeps its bare name (``mtx``). A constructor defined
  outside its class (``A::A() {...}``) belongs to class ``A``.
* **decision**: name lookup is C++'s where it matters for sizes: the innermost block
  first, then the class's members (all of them, wherever declared), then the enclosing
  namespaces; macros and ``-D`` names come before all of these (the preprocessor runs
  first). ``ns::NAME`` and ``Class::NAME`` look up ``NAME``.
* **decision**: a ``tiling_parameters`` variable is followed through the statements in
  text order: ``tp = {...};`` replaces it, ``tp.field = value;`` sets one field (again:
  replaces it); an access takes its value at that point, as the C++ copy does.
* **decision**: a variable's value is its initialiser, evaluated where the variable is
  used. A variable assigned again later (``n = n + 4;``, ``n++``) is refused where a
  tiling uses it ("assigned again at ..."): its value depends on control flow we do not
  follow.
* **decision**: ``for (int i = A; i < B; i++)`` (or ``++i``, ``i += 1``, ``<=``) with
  constant bounds and at most 64 turns is unrolled; any other loop's variable is refused
  where a tiling uses it.
* **decision**: a template parameter takes its default; ``-D NAME=VALUE`` (``defines``)
  overrides it, for a type as for an integer (``-D ITYPE=int16``). Instantiations
  (``TestCase1<cint16> g;``) are not followed.
* **decision**: the DMA of a port: a ``shared_buffer`` is on a memory tile, an
  ``external_buffer`` on a shim, a kernel's buffer on its core tile. The direction is the
  function's: ``read_access`` is a read (MM2S), ``write_access`` a write (S2MM). On a
  shared or external buffer ``read_access`` takes an ``out`` port and ``write_access`` an
  ``in`` port; a kernel port takes either (AMD's guide writes ``read_access(k2.in[0])``
  for the order a kernel reads its input). A GMIO's tiling is the shim's walk of its DDR
  buffer: ``read_access(g.out[0])`` of an ``input_gmio``, ``write_access(g.in[0])`` of an
  ``output_gmio``, each with ``buffer_dimension`` in every tiling, in the element type of
  the buffer it is connected to (``connect``; unknown when it is a kernel's).
* **decision**: an access whose object is declared nowhere in the text (a statement
  pasted on its own) is a memory-tile port, read only when every tiling of its program
  gives ``buffer_dimension`` (otherwise there is no shape).
* **decision**: one error does not stop the text: a statement that cannot be read is
  skipped with its ``line, column`` error, and so is every port whose program, object or
  index is wrong. :func:`read_graph_header` returns what was read and what was skipped;
  :func:`parse_graph_header` raises the first problem instead.
* **decision**: both branches of an ``#if`` are read (:mod:`.lexer`); a later definition wins.
* **decision**: included headers (``includes``: the command line follows ``#include "..."``
  beside the including file) give their macros, namespace-level constants and types, as
  if written before the text; a ``-D`` name still wins. Their ports are not listed.
* **decision**: a statement the reader does not recognise (``connect<>``,
  ``source()``, PLIO, ...) is skipped silently. A recognised statement, on the other
  hand, is parsed strictly and any mistake in it is an error for that statement: a
  silently dropped tiling would make a wrong model without a word.
* **decision**: accesses are resolved when the whole text is read, so their order
  relative to ``create`` does not matter. An access names a buffer, external buffer
  or kernel of the text, with a port index below ``n_in``/``n_out`` (or, pasted on
  its own, gives ``buffer_dimension``). Assigning a port twice keeps the later
  program, as the C++ assignment does. Creating the same name twice is an error.
  ``repetition_count``/``num_buffers`` of a name that is not a shared buffer of the
  text (a kernel) is not ours and is ignored.
"""

from __future__ import annotations

import functools
import itertools
import re
from bisect import bisect_left
from collections import ChainMap
from collections.abc import Iterator, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..arch.dtypes import ELEMENT_BITS
from ..errors import AiedmaError, TilingError, field_error
from ..tiling.parameters import MAX_DIMENSIONS
from ..tiling.port import PortProgram
from .expressions import C_TYPES, NOT_INTEGER_TYPES
from .graph import read_graph_text
from .lexer import (
    DIRECTIVES,
    END,
    NAME,
    PUNCT,
    UNDEF,
    CppSyntaxError,
    Lexer,
    Token,
    position,
    syntax_error,
)
from .ports import GMIO_OWNERS, MAX_PORTS, GraphHeader, HeaderPort, SharedBufferSpec, Skipped
from .scopes import Definition, Scope, scope_of_defines
from .tilings import TilingParser

if TYPE_CHECKING:
    import tree_sitter

__all__ = ["parse_graph_header", "read_graph_header"]

_MAX_UNROLL = 64
_MAX_TYPE_DEPTH = 20
_CREATE_LOOKAHEAD = 64
_MAX_NESTING = 100  # nested blocks read structurally; deeper ones token by token
_OBJECT_KINDS = {"shared_buffer": "memtile", "external_buffer": "shim", "kernel": "tile",
                 **dict.fromkeys(GMIO_OWNERS, "shim")}
# A GMIO's tiling is the shim DMA's: what its data reads from (input) or writes to (output)
# in DDR, in the element type of the buffer it is connected to.
_GMIO_ACCESS = {"input_gmio": ("read", "out"), "output_gmio": ("write", "in")}
_CREATED = ("shared_buffer", "external_buffer", "kernel")  # a create whose arguments count
_STRUCTURE = frozenset({"preproc_ifdef", "preproc_if", "preproc_else", "preproc_elif",
                        "preproc_elifdef", "declaration_list", "linkage_specification",
                        "field_declaration_list", "translation_unit"})
_BLOCKS = frozenset({"if_statement", "while_statement", "do_statement", "else_clause",
                     "switch_statement", "case_statement", "labeled_statement",
                     "condition_clause", "try_statement", "catch_clause"})
_IGNORED = frozenset({"comment", "preproc_include", "preproc_def", "preproc_function_def",
                      "preproc_call", "access_specifier", "using_declaration",
                      "namespace_alias_definition", "static_assert_declaration",
                      "return_statement", "break_statement", "continue_statement",
                      "goto_statement", "primitive_type", "type_identifier", "identifier",
                      "field_identifier", "preproc_arg", "preproc_directive",
                      "preproc_defined", "number_literal", "binary_expression",
                      "parenthesized_expression", "unary_expression", "call_expression",
                      "string_literal", "template_parameter_list", "parameter_list",
                      "type_qualifier", "storage_class_specifier", "virtual",
                      "base_class_clause", "attribute_declaration", "ms_declspec_modifier"})


def _fields(tiling: tuple[Token, ...]) -> list[tuple[Token, ...]]:
    """The comma-separated parts inside the outer braces of ``{ ... }`` tokens."""
    if len(tiling) < 2 or tiling[0].text != "{" or tiling[-1].text != "}":
        return []
    parts: list[tuple[Token, ...]] = []
    depth, start = 0, 1
    for k in range(1, len(tiling) - 1):
        t = tiling[k]
        if t.kind == PUNCT and t.text in "({[":
            depth += 1
        elif t.kind == PUNCT and t.text in ")}]":
            depth -= 1
        elif depth == 0 and t.text == ",":
            parts.append(tiling[start:k])
            start = k + 1
    parts.append(tiling[start:-1])
    return [part for part in parts if part]


def _punct(text: str, near: Token) -> Token:
    """A punctuation token the reader adds, placed at ``near`` (for messages)."""
    return Token(PUNCT, text, near.line, near.column, None, near.pos)


@functools.cache
def _cpp_language() -> tree_sitter.Language:
    """The C++ grammar, loaded on the first header read."""
    # Imported here, not at the top: tree-sitter is a compiled extension that only
    # reading a whole header needs, and `import aiedma.model` must not load it
    # (tests/test_layout.py checks).
    import tree_sitter
    import tree_sitter_cpp

    return tree_sitter.Language(tree_sitter_cpp.language())


def _syntax_tree(data: bytes) -> tree_sitter.Tree:
    """tree-sitter's (error-tolerant) syntax tree of UTF-8 C++ ``data``."""
    import tree_sitter  # loaded with the grammar above, for the same reason

    return tree_sitter.Parser(_cpp_language()).parse(data)


@dataclass
class _Object:
    """A buffer or kernel created (or declared) in the text."""

    name: str
    owner: str  # shared_buffer / external_buffer / kernel / input_gmio / output_gmio
    where: Token
    dtype: str | None = None
    shape: tuple[int, ...] | None = None
    n_in: int = 0
    n_out: int = 0
    settings: dict[str, int] = field(default_factory=dict)
    dimensions: dict[tuple[str, int], tuple[int, ...]] = field(default_factory=dict)


@dataclass
class _Access:
    direction: str
    candidates: tuple[str, ...]  # qualified names to look the object up by, best first
    shown: str  # the object as written
    side: str
    side_token: Token
    index: int
    where: Token  # the access's first token
    object_token: Token
    index_token: Token
    program: PortProgram
    what: str  # the access as written, for messages


@dataclass
class _Context:
    frames: tuple[MutableMapping[str, Definition], ...]  # innermost first
    owner: str | None  # the class whose members and buffers are in scope

    def push(self, frame: MutableMapping[str, Definition] | None = None,
             owner: str | None = None) -> _Context:
        return _Context(({} if frame is None else frame, *self.frames),
                        self.owner if owner is None else owner)


class _Reader:
    def __init__(self, text: str, defines: Mapping[str, int | str] | None) -> None:
        if not isinstance(text, str):
            raise field_error(CppSyntaxError, "text", type(text).__name__, "must be a str")
        base = scope_of_defines(defines)
        self.fixed = base.fixed
        self.macros: dict[str, Definition] = dict(base.names)
        self.text = text
        lexer_errors: list[CppSyntaxError] = []
        self.tokens = Lexer(text, errors=lexer_errors).tokens()
        self.starts = [t.pos for t in self.tokens]
        self.directive = 0  # the next #define/#undef token to apply
        self.skipped: list[Skipped] = [Skipped(e.line or 0, e.column or 0, "text", e)
                                       for e in lexer_errors]
        self.objects: dict[str, _Object] = {}
        self._connections: list | None = None   # connect<> statements, once a GMIO asks
        self.accesses: list[_Access] = []
        self.settings: list[tuple[Token, tuple[str, ...], int, Token]] = []
        self.dimension_settings: list[tuple[tuple[str, ...], str, int, tuple[int, ...]]] = []
        self.classes: dict[str, _Context] = {}
        data = text.encode("utf-8", "surrogatepass")
        self.data = data
        self.char_of: list[int] | None = None
        if len(data) != len(text):
            self.char_of = [0] * (len(data) + 1)
            b = 0
            for i, c in enumerate(text):
                width = len(c.encode("utf-8", "surrogatepass"))
                for k in range(width):
                    self.char_of[b + k] = i
                b += width
            self.char_of[len(data)] = len(text)
        self.globals: dict[str, Definition] = {}
        self.depth = 0

    # -- places ------------------------------------------------------------------------------

    def _char(self, byte: int) -> int:
        return byte if self.char_of is None else self.char_of[byte]

    def _range(self, node: tree_sitter.Node) -> tuple[int, int]:
        """The token indices [a, b) inside ``node``."""
        start, end = self._char(node.start_byte), self._char(node.end_byte)
        return bisect_left(self.starts, start), bisect_left(self.starts, end)

    def _slice(self, a: int, b: int) -> list[Token]:
        """Tokens a..b-1 and an end token that shows the token after them."""
        after = self.tokens[min(b, len(self.tokens) - 1)]
        if after.kind == END:
            end = after
        else:
            end = Token(END, "", after.line, after.column, after.shown(), after.pos)
        return [*self.tokens[a:b], end]

    def _first(self, node: tree_sitter.Node) -> Token:
        a, b = self._range(node)
        return self.tokens[a] if a < b else self._slice(a, a)[-1]

    def _scope_at(self, ctx: _Context) -> Scope:
        return Scope(ChainMap(self.macros, *ctx.frames, self.globals), self.fixed)

    def _parser(self, a: int, b: int, ctx: _Context) -> TilingParser:
        return TilingParser(self._slice(a, b), self._scope_at(ctx))

    def _directives_before(self, pos: int) -> None:
        """Apply the ``#define``/``#undef`` lines before ``pos`` (they act in text order)."""
        while self.directive < len(self.tokens) and self.tokens[self.directive].pos < pos:
            t = self.tokens[self.directive]
            self.directive += 1
            if t.kind not in DIRECTIVES or t.text in self.fixed:
                continue
            if t.kind == UNDEF:
                self.macros.pop(t.text, None)
            elif t.value is None:
                self.macros[t.text] = Definition(why=f"a function-like macro ({position(t)})")
            else:
                self.macros[t.text] = Definition(body=t.value)

    def _skip(self, what: str, error: AiedmaError, token: Token | None = None) -> None:
        line = getattr(error, "line", None)
        if line is None:
            match = re.match(r"line (\d+), column (\d+)", str(error))
            place = (int(match[1]), int(match[2])) if match else \
                ((token.line, token.column) if token else (0, 0))
        else:
            place = (line, error.column or 0)
        self.skipped.append(Skipped(*place, what, error))

    def _text(self, node: tree_sitter.Node | None) -> str:
        return "" if node is None else self.data[node.start_byte:node.end_byte].decode(
            "utf-8", "surrogatepass")

    # -- the walk --------------------------------------------------------------------------

    def read(self) -> GraphHeader:
        tree = _syntax_tree(self.data)
        self.item(tree.root_node, _Context((), None))  # the root may be an ERROR
        self._directives_before(len(self.text) + 1)
        return self.resolve()

    def items(self, node: tree_sitter.Node, ctx: _Context) -> None:
        for child in node.named_children:
            self.item(child, ctx)

    def item(self, node: tree_sitter.Node, ctx: _Context) -> None:
        self._directives_before(self._char(node.start_byte))
        self.depth += 1
        try:
            if self.depth > _MAX_NESTING:  # read deeper nesting token by token
                self.broken(node, ctx)
            else:
                self._item(node, ctx)
        finally:
            self.depth -= 1

    def _item(self, node: tree_sitter.Node, ctx: _Context) -> None:
        kind = node.type
        if kind in _STRUCTURE:
            self.items(node, ctx)
        elif kind == "namespace_definition":
            body = node.child_by_field_name("body")
            if body is not None:
                self.items(body, ctx.push())
        elif kind == "template_declaration":
            self.template(node, ctx)
        elif kind in ("class_specifier", "struct_specifier"):
            self.klass(node, ctx)
        elif kind in ("declaration", "field_declaration"):
            self.declaration(node, ctx)
        elif kind in ("type_definition", "alias_declaration"):
            self.alias(node, ctx.frames[0] if ctx.frames else self.globals)
        elif kind == "function_definition":
            self.function(node, ctx)
        elif kind == "compound_statement":
            self.items(node, ctx.push())
        elif kind == "for_statement":
            self.loop(node, ctx)
        elif kind in _BLOCKS:
            self.items(node, ctx)
        elif kind == "expression_statement":
            self.statement(node, ctx)
        elif kind in _IGNORED:
            return
        elif kind == "ERROR" or node.has_error:
            self.broken(node, ctx)

    def template(self, node: tree_sitter.Node, ctx: _Context) -> None:
        frame: dict[str, Definition] = {}
        params = node.child_by_field_name("parameters")
        for p in params.named_children if params is not None else []:
            name_node = p.child_by_field_name("name") or p.child_by_field_name("declarator")
            if name_node is None:
                for c in p.named_children:
                    if c.type in ("type_identifier", "identifier"):
                        name_node = c
                        break
            if name_node is None:
                continue
            name = self._text(name_node).lstrip("&*. ")
            if p.type == "optional_type_parameter_declaration":
                frame[name] = Definition(why=f"a type (template parameter at "
                                             f"{position(self._first(p))})",
                                         type=self._text(p.child_by_field_name("default_type")),
                                         scope=self._scope_at(ctx))
            elif p.type == "type_parameter_declaration":
                frame[name] = Definition(why=f"a template parameter without a default "
                                             f"({position(self._first(p))}); give it with "
                                             f"-D {name}=...",
                                         type="")
            elif p.type == "optional_parameter_declaration":
                a, b = self._range(p.child_by_field_name("default_value"))
                frame[name] = Definition(body=tuple(self.tokens[a:b]), scope=self._scope_at(ctx))
            else:
                frame[name] = Definition(why=f"a template parameter without a default "
                                             f"({position(self._first(p))}); give it with "
                                             f"-D {name}=...")
        inner = ctx.push(frame)
        for child in node.named_children:
            if child is not params:
                self.item(child, inner)

    def klass(self, node: tree_sitter.Node, ctx: _Context) -> None:
        body = node.child_by_field_name("body")
        if body is None:
            return
        name = self._text(node.child_by_field_name("name")).split("<")[0].strip() or "class"
        owner = name.split("::")[-1]
        members: dict[str, Definition] = {}
        inner = ctx.push(members, owner)
        self.classes[owner] = inner
        later = []
        for child in body.named_children:  # members first: all are visible in the bodies
            if child.type in ("field_declaration", "declaration"):
                self._directives_before(self._char(child.start_byte))
                self.declaration(child, inner)
            elif child.type in ("type_definition", "alias_declaration"):
                self.alias(child, members)
            else:
                later.append(child)
        for child in later:
            self.item(child, inner)

    def function(self, node: tree_sitter.Node, ctx: _Context) -> None:
        body = node.child_by_field_name("body")
        if body is None:
            return
        declarator = node.child_by_field_name("declarator")
        while declarator is not None and declarator.type != "function_declarator":
            declarator = declarator.child_by_field_name("declarator")
        if declarator is not None:
            name = declarator.child_by_field_name("declarator")
            if name is not None and name.type == "qualified_identifier":
                scope = self._text(name.child_by_field_name("scope")).split("<")[0]
                if ctx.owner is None and scope in self.classes:
                    ctx = self.classes[scope]
        self.items(body, ctx.push())

    def alias(self, node: tree_sitter.Node, frame: MutableMapping[str, Definition]) -> None:
        if node.type == "alias_declaration":
            name = self._text(node.child_by_field_name("name"))
        else:
            name = self._text(node.child_by_field_name("declarator"))
        written = self._text(node.child_by_field_name("type"))
        if name.isidentifier():
            frame[name] = Definition(why=f"a type ({position(self._first(node))})", type=written)

    def declaration(self, node: tree_sitter.Node, ctx: _Context) -> None:
        if node.has_error:
            self.broken(node, ctx)
            return
        type_node = node.child_by_field_name("type")
        if type_node is not None and type_node.type in ("class_specifier", "struct_specifier"):
            self.klass(type_node, ctx)
        written = re.sub(r"\s+", "", self._text(type_node))
        bare = written.removeprefix("adf::").removeprefix("::adf::")
        if bare in _GMIO_ACCESS:
            self._declare_gmios(node, ctx, bare)
        if "::create" in self._text(node):
            a, b = self._range(node)
            self.tokens_statements(a, b, ctx)
            return
        frame = ctx.frames[0] if ctx.frames else self.globals
        words = {w for w in re.split(r"\W+", self._text(node).split("=")[0]) if w}
        for d, value, size in self._declarators(node):
            name = self._text(d)
            if bare.startswith("kernel") and bare in ("kernel", "kernel&"):
                self._declare(ctx, name, "kernel", self._first(d), size)
            elif bare.startswith(("shared_buffer<", "external_buffer<")):
                continue  # the create gives type, shape and ports
            elif bare.endswith("tiling_parameters"):
                where = self._first(d)
                if value is None:  # fields assigned one by one later (tp.offset = {...};)
                    tiling = (_punct("{", where), _punct("}", where))
                else:
                    a, b = self._range(value)
                    tiling = tuple(self.tokens[a:b])
                frame[name] = Definition(why=f"a tiling_parameters variable ({position(where)})",
                                         tiling=tiling, scope=self._scope_at(ctx))
            elif value is None:
                continue
            elif words & {"vector", "array"}:   # std::vector<uint32> D = {n, ...};
                a, b = self._range(value)
                braced = self.tokens[a:b]
                if braced and (braced[0].text, braced[-1].text) == ("{", "}"):
                    frame[name] = Definition(why=f"a list ({position(self._first(d))})",
                                             shape=tuple(braced), scope=self._scope_at(ctx))
            else:
                a, b = self._range(value)
                body = self.tokens[a:b]
                if len(body) >= 2 and (body[0].text, body[-1].text) in (("{", "}"), ("(", ")")):
                    body = body[1:-1]  # int N{4}; int N(4);
                bad = words & NOT_INTEGER_TYPES
                if bad:
                    frame[name] = Definition(
                        why=f"declared {min(bad)} at {position(self._first(d))}")
                else:
                    frame[name] = Definition(body=tuple(body), scope=self._scope_at(ctx))

    @staticmethod
    def _declarators(node: tree_sitter.Node) -> Iterator[tuple[tree_sitter.Node,
                                                               tree_sitter.Node | None,
                                                               tree_sitter.Node | None]]:
        """Each name a declaration declares: its identifier, initial value and array size."""
        for d in node.children_by_field_name("declarator"):
            value = None
            if d.type == "init_declarator":
                value = d.child_by_field_name("value")
                d = d.child_by_field_name("declarator")
            elif node.type == "field_declaration":
                value = node.child_by_field_name("default_value")
            size = None
            if d is not None and d.type == "array_declarator":
                size = d.child_by_field_name("size")
                d = d.child_by_field_name("declarator")
            if d is not None and d.type in ("identifier", "field_identifier"):
                yield d, value, size

    def _declare_gmios(self, node: tree_sitter.Node, ctx: _Context, owner: str) -> None:
        """``adf::input_gmio g;`` (or an array of them, or one made by its ``create``)."""
        for d, _, size in self._declarators(node):
            self._declare(ctx, self._text(d), owner, self._first(d), size)

    def _declare(self, ctx: _Context, name: str, owner: str, where: Token,
                 size: tree_sitter.Node | None) -> None:
        names = [name]
        if size is not None:
            try:
                a, b = self._range(size)
                parser = self._parser(a, b, ctx)
                count = parser.expression()
                parser.expect_end()
            except AiedmaError:
                count = 0
            names = [f"{name}[{i}]" for i in range(min(count, MAX_PORTS * 16))]
        for n in names:
            key = self._qualified(ctx, n)
            self.objects.setdefault(key, _Object(key, owner, where))

    @staticmethod
    def _qualified(ctx: _Context, name: str) -> str:
        return name if ctx.owner is None else f"{ctx.owner}::{name}"

    def loop(self, node: tree_sitter.Node, ctx: _Context) -> None:
        body = node.child_by_field_name("body")
        turns = self._turns(node, ctx)
        if body is None:
            return
        if turns is None:
            init = node.child_by_field_name("initializer")
            frame: dict[str, Definition] = {}
            for d in (init.children_by_field_name("declarator") if init is not None else []):
                target = d.child_by_field_name("declarator") if d.type == "init_declarator" else d
                frame[self._text(target)] = Definition(
                    why=f"a loop variable ({position(self._first(node))}); only "
                        "for (int i = A; i < B; i++) with constant bounds is unrolled")
            self.item(body, ctx.push(frame))
            return
        name, values = turns
        for value in values:
            self.item(body, ctx.push({name: Definition(value=value)}))

    def _turns(self, node: tree_sitter.Node, ctx: _Context) -> tuple[str, range] | None:
        """``(i, range)`` of ``for (int i = A; i < B; i++)`` with constant A and B."""
        init, cond, update = (node.child_by_field_name(f)
                              for f in ("initializer", "condition", "update"))
        if init is None or cond is None or update is None or init.type != "declaration":
            return None
        [decl, *rest] = init.children_by_field_name("declarator") or [None]
        if decl is None or rest or decl.type != "init_declarator":
            return None
        name = self._text(decl.child_by_field_name("declarator"))
        step = re.sub(r"\s+", "", self._text(update))
        if step not in (f"{name}++", f"++{name}", f"{name}+=1", f"{name}={name}+1"):
            return None
        if cond.type != "binary_expression" or \
                self._text(cond.child_by_field_name("left")) != name:
            return None
        operator = self._text(cond.child_by_field_name("operator"))
        if operator not in ("<", "<="):
            return None
        try:
            bounds = []
            for part in (decl.child_by_field_name("value"), cond.child_by_field_name("right")):
                a, b = self._range(part)
                parser = self._parser(a, b, ctx)
                bounds.append(parser.expression())
                parser.expect_end()
        except AiedmaError:
            return None
        values = range(bounds[0], bounds[1] + (operator == "<="))
        return (name, values) if len(values) <= _MAX_UNROLL else None

    def statement(self, node: tree_sitter.Node, ctx: _Context) -> None:
        expression = node.named_children[0] if node.named_children else None
        if expression is not None and expression.type in ("assignment_expression",
                                                          "update_expression"):
            target = expression.child_by_field_name(
                "left" if expression.type == "assignment_expression" else "argument")
            if self._tiling_assignment(expression, target, ctx):
                return
            if target is not None and target.type == "identifier":
                name = self._text(target)
                for frame in ctx.frames:
                    if name in frame:
                        frame[name] = Definition(
                            why=f"assigned again at {position(self._first(node))} "
                                "(later assignments are not followed)")
                        break
        a, b = self._range(node)
        self.tokens_statements(a, b, ctx)

    def _tiling_assignment(self, expression: tree_sitter.Node, target: tree_sitter.Node | None,
                           ctx: _Context) -> bool:
        """``tp = {...};`` or ``tp.field = value;`` on a ``tiling_parameters`` variable:
        the variable's initialiser tokens become the new tiling, or gain the field."""
        if expression.type != "assignment_expression" or target is None or \
                self._text(expression.child_by_field_name("operator")) != "=":
            return False
        field_name = None
        if target.type == "field_expression":
            field_name = target.child_by_field_name("field")
            target = target.child_by_field_name("argument")
        if target is None or target.type != "identifier":
            return False
        name = self._text(target)
        frame = next((f for f in ctx.frames if name in f), None)
        entry = frame[name] if frame is not None else None
        if entry is None or entry.tiling is None:
            return False
        value = expression.child_by_field_name("right")
        a, b = self._range(value)
        tokens = tuple(self.tokens[a:b])
        if field_name is not None:  # '.', the field and '=' as written, then the value
            _, dot = self._range(target)
            _, f_end = self._range(field_name)
            equals = self._first(expression.child_by_field_name("operator"))
            field = self._text(field_name)
            kept = [part for part in _fields(entry.tiling)  # a field set again is replaced
                    if not (len(part) > 1 and part[0].text == "." and part[1].text == field)]
            kept.append((*self.tokens[dot:f_end], equals, *tokens))
            joined: list[Token] = [entry.tiling[0]]
            for k, part in enumerate(kept):
                joined += [*([_punct(",", part[0])] if k else []), *part]
            tokens = (*joined, _punct("}", tokens[-1] if tokens else equals))
        frame[name] = Definition(why=entry.why, tiling=tokens, scope=entry.scope)
        return True

    def broken(self, node: tree_sitter.Node, ctx: _Context) -> None:
        """Text tree-sitter could not fit into C++: read it statement by statement."""
        a, b = self._range(node)
        self.tokens_statements(a, b, ctx)

    # -- statements, token by token ----------------------------------------------------------

    def tokens_statements(self, a: int, b: int, ctx: _Context) -> None:
        parser = self._parser(a, b, ctx)
        while parser.peek().kind != END:
            start = parser.peek()
            before = parser.i
            try:
                self.one_statement(parser, ctx)
            except AiedmaError as error:
                self._skip(self._what(parser.tokens, before, ctx), error, start)
                if parser.i == before:  # else go on from where the error was found
                    parser.advance()

    @staticmethod
    def _what(tokens: list[Token], start: int, ctx: _Context) -> str:
        """How to name a statement in a message: ``write_access(mtx.in[1])`` (up to the
        first call's closing parenthesis, at most 12 tokens), else its first words."""
        words: list[str] = []
        depth = 0
        for t in tokens[start:start + 16]:
            if t.kind == END or (depth == 0 and t.text in (";", "}")):
                break
            if t.text == "{":
                words.append("...")
                break
            words.append(t.text)
            depth += {"(": 1, ")": -1}.get(t.text, 0) if t.kind != NAME else 0
            if depth == 0 and t.text == ")":
                break
        shown = " = ".join(part.replace("adf::", "") for part in "".join(words).split("="))
        shown = shown or "statement"
        return shown if ctx.owner is None else f"{shown} in class {ctx.owner}"

    def one_statement(self, p: TilingParser, ctx: _Context) -> None:
        t = p.peek()
        if t.kind != NAME and t.text in (";", "{", "}", ":"):
            p.advance()
            return
        k = 2 if p.at("adf") and p.at("::", 1) else 0
        head = p.peek(k)
        if head.kind == NAME and p.at("(", k + 1):
            if head.text in ("read_access", "write_access"):
                self.access(p, ctx)
                return
            if head.text in ("repetition_count", "num_buffers", "dimensions"):
                self.setting(p, ctx)
                return
        if self._create_ahead(p):
            self.create(p, ctx)
        elif p.constant_ahead():
            p.constant_statement()
        else:  # one token on: a statement we read may start anywhere in broken text
            p.advance()

    @staticmethod
    def _create_ahead(p: TilingParser) -> bool:
        depth = 0
        # A create's '=' comes within a few tokens (this->mtx[i] =); the bound keeps
        # reading a long broken stretch token by token linear.
        tokens = list(itertools.islice(p.upcoming(), _CREATE_LOOKAHEAD))
        for k, t in enumerate(tokens):
            if t.kind == END:
                return False
            if t.text in ("(", "["):
                depth += 1
            elif t.text in (")", "]"):
                depth -= 1
                if depth < 0 or (depth == 0 and t.text == ")"):
                    return False
            elif depth == 0 and t.text in (";", "{", "}", ":"):
                return False
            elif depth == 0 and t.text == "=":
                rest = [x.text for x in tokens[k + 1:k + 5]]
                if rest[:2] == ["adf", "::"]:
                    rest = rest[2:]
                return bool(rest) and rest[0] in _CREATED and \
                    (rest[1:2] == ["<"] or rest[1:3] == ["::", "create"])
        return False

    def _target(self, p: TilingParser) -> tuple[Token, str]:
        """``x``, ``this->x``, ``g.x``, ``x[1]`` before ``=``: the name token and the key."""
        name = None
        key = ""
        while not p.at("="):
            t = p.advance()
            if t.kind == END:
                raise p.expected("'='", t)
            if t.text == "[" and name is not None:
                index = p.expression()
                p.expect("]", "']' after the index")
                key = f"{name.text}[{index}]"
            elif t.kind == NAME and t.text != "this":
                name, key = t, t.text
        if name is None:
            raise p.expected("a buffer name before '='")
        return name, key

    def create(self, p: TilingParser, ctx: _Context) -> None:
        name, key = self._target(p)
        p.expect("=")
        p.adf_prefix()
        owner = p.advance().text
        dtype = None
        if owner != "kernel":
            p.expect("<")
            dtype = self.element_type(p, ctx)
            p.expect(">", "'>' after the element type")
        p.expect("::")
        p.expect("create", "'create'")
        opener = p.expect("(", "'(' after create")
        qualified = self._qualified(ctx, key)
        if owner == "kernel":
            depth = 1
            while depth and p.peek().kind != END:
                t = p.advance()
                depth += {"(": 1, ")": -1}.get(t.text, 0) if t.kind != NAME else 0
            p.accept(";")
            self.objects[qualified] = _Object(qualified, "kernel", name)
            return
        shape_token = p.peek()
        shape = tuple(p.integers("'{' and the buffer's shape, like {10, 6}"))
        p.expect(",", "',' and the number of input ports")
        n_in_token = p.peek()
        n_in = p.expression()
        p.expect(",", "',' and the number of output ports")
        n_out_token = p.peek()
        n_out = p.expression()
        p.expect(")", f"')' to close the '(' at {position(opener)}")
        p.expect(";")
        old = self.objects.get(qualified)
        if old is not None and old.shape is not None:
            raise syntax_error(name, f"expected a new buffer name, found {name.shown()} "
                                     f"(created already at {position(old.where)})")
        if not 1 <= len(shape) <= MAX_DIMENSIONS or min(shape) < 1:
            raise TilingError(f"{position(shape_token)}: " + str(field_error(
                TilingError, "shape", shape,
                f"a {owner.replace('_', ' ')} has 1 to {MAX_DIMENSIONS} dimensions of at "
                "least 1 element")))
        least = 1 if owner == "shared_buffer" else 0
        for what, token, count in (("n_in", n_in_token, n_in), ("n_out", n_out_token, n_out)):
            if not least <= count <= MAX_PORTS:
                raise TilingError(f"{position(token)}: " + str(field_error(
                    TilingError, what, count,
                    f"a memory tile has 1 to {MAX_PORTS} ports each way (6 of its own, "
                    "4 borrowed from each neighbour)" if least else
                    f"an external buffer has 0 to {MAX_PORTS} ports each way")))
        self.objects[qualified] = _Object(qualified, owner, name, dtype, shape, n_in, n_out)

    def element_type(self, p: TilingParser, ctx: _Context) -> str:
        first = p.peek()
        words = []
        depth = 0
        while p.peek().kind != END and (depth or not p.at(">")):
            t = p.advance()
            depth += {"<": 1, ">": -1}.get(t.text, 0)
            words.append(t.text)
        return self._resolve_type(" ".join(words), self._scope_at(ctx).names, first, 0)

    def _resolve_type(self, written: str, names: Mapping[str, Definition], where: Token,
                      depth: int) -> str:
        words = [w for w in re.split(r"\s*::\s*|\s+", written.strip())
                 if w and w not in ("adf", "std", "const", "typename", "struct", "class")]
        joined = " ".join(words)
        dtype = C_TYPES.get(joined, joined)
        if dtype in ELEMENT_BITS:
            return dtype
        entry = names.get(words[-1]) if len(words) == 1 else None
        if entry is not None and depth < _MAX_TYPE_DEPTH:
            if entry.type:
                inner = entry.scope.names if entry.scope is not None else names
                return self._resolve_type(entry.type, inner, where, depth + 1)
            if entry.body and all(t.kind == NAME or t.text == "::" for t in entry.body):
                return self._resolve_type(" ".join(t.text for t in entry.body), names, where,
                                          depth + 1)
            if entry.why:
                raise syntax_error(where, f"expected an adf element type, found {joined!r} "
                                          f"({entry.why})")
        found = repr(joined) if words else where.shown()
        raise syntax_error(where, f"expected an adf element type ({', '.join(ELEMENT_BITS)}), "
                                  f"found {found}")

    def _port(self, p: TilingParser, ctx: _Context, what: str
              ) -> tuple[tuple[str, ...], str, Token, Token, int, Token]:
        """``mtx.in[i]``, ``this->mtx[1].out[j]``, ``k1.in[0]``: the object's lookup keys,
        its spelling and token, the side, the index and the index's token."""
        parts: list[tuple[Token, int | None]] = []
        index_token = p.peek()
        while True:
            t = p.name(what if not parts else "a member name")
            if t.text == "this" and p.at("->"):
                p.advance()
                continue
            index = None
            if p.at("["):
                p.advance()
                index_token = p.peek()
                index = p.expression()
                p.expect("]")
            parts.append((t, index))
            if not (p.at(".") or p.at("->")):
                break
            p.advance()
        side_token, index = parts[-1]
        if len(parts) < 2 or side_token.text not in ("in", "out") or index is None:
            raise p.expected(f"{what}: an object, '.', 'in' or 'out' and an index",
                             side_token if len(parts) >= 2 else None)
        obj, obj_index = parts[-2]
        key = obj.text if obj_index is None else f"{obj.text}[{obj_index}]"
        candidates = (self._qualified(ctx, key), key) if ctx.owner else (key,)
        return candidates, key, obj, side_token, index, index_token

    def access(self, p: TilingParser, ctx: _Context) -> None:
        what = self._what(p.tokens, p.i, ctx)
        p.adf_prefix()
        head = p.advance()
        direction = "write" if head.text == "write_access" else "read"
        opener = p.expect("(")
        candidates, shown, obj, side, index, index_token = self._port(
            p, ctx, "a port like mtx.in[0]")
        p.expect(")", f"')' to close the '(' at {position(opener)}")
        p.expect("=", f"'=' after {head.text}(...)")
        program = p.program()
        p.expect(";", "';' after the port program")
        self.accesses.append(_Access(direction, candidates, shown, side.text, side, index, head,
                                     obj, index_token, program, what))

    @staticmethod
    def _shape(p: TilingParser) -> list[int]:
        """``{n, ...}``, or a variable initialised with one (``std::vector<uint32> D =
        {n, ...};``, as AMD's tutorials pass a kernel port's dimensions)."""
        t = p.peek()
        entry = p.scope.names.get(t.text) if t.kind == NAME else None
        if entry is None or entry.shape is None:
            return p.integers("'{' and the buffer's shape, or a std::vector / std::array "
                              "initialised with one")
        p.advance()
        sub = p.nested(entry.shape, t, f"the end of the initialiser of {t.text}",
                       entry.scope or p.scope, p.expanding | {t.text})
        shape = sub.integers(f"the initialiser of {t.text}: a list like {{10, 6}}")
        sub.expect_end()
        return shape

    def setting(self, p: TilingParser, ctx: _Context) -> None:
        p.adf_prefix()
        head = p.advance()
        opener = p.expect("(")
        if head.text == "dimensions":
            candidates, _, _, side, index, _ = self._port(p, ctx, "a kernel port")
            p.expect(")", f"')' to close the '(' at {position(opener)}")
            p.expect("=", "'=' after dimensions(...)")
            shape = tuple(self._shape(p))
            p.accept(";")
            self.dimension_settings.append((candidates, side.text, index, shape))
            return
        parts = [p.name("a shared buffer name")]
        while p.at(".") or p.at("->"):
            p.advance()
            parts.append(p.name("a member name"))
        key = parts[-1].text
        if p.at("["):
            p.advance()
            key = f"{key}[{p.expression()}]"
            p.expect("]")
        if not p.at(")"):  # e.g. a kernel port: not a buffer setting we model
            p.skip_statement()
            return
        p.expect(")", f"')' to close the '(' at {position(opener)}")
        p.expect("=", f"'=' after {head.text}(...)")
        value_token = p.peek()
        value = p.expression()
        p.expect(";", f"';' after the {head.text}")
        candidates = (self._qualified(ctx, key), key) if ctx.owner else (key,)
        self.settings.append((head, candidates, value, value_token))

    # -- after the walk ----------------------------------------------------------------------

    def _find(self, candidates: tuple[str, ...]) -> _Object | None:
        for key in candidates:
            if key in self.objects:
                return self.objects[key]
        return None

    def resolve(self) -> GraphHeader:
        for candidates, side, index, shape in self.dimension_settings:
            obj = self._find(candidates)
            if obj is not None:
                obj.dimensions[(side, index)] = shape
        for head, candidates, value, token in self.settings:
            obj = self._find(candidates)
            if obj is None or obj.owner != "shared_buffer":
                continue  # a kernel's repetition_count, an external buffer: not ours
            try:
                if head.text == "num_buffers" and value not in (1, 2):
                    raise TilingError(f"{position(token)}: " + str(field_error(
                        TilingError, "num_buffers", value, "must be 1 or 2 (ping-pong)")))
                if value < 1:
                    raise TilingError(f"{position(token)}: " + str(field_error(
                        TilingError, head.text, value, "must be at least 1")))
            except TilingError as error:
                self._skip(f"{head.text}({obj.name})", error, token)
                continue
            obj.settings[head.text] = value
        ports: dict[str, HeaderPort] = {}
        programs: dict[str, dict[str, dict[int, PortProgram]]] = {}
        for a in self.accesses:
            try:
                port = self._port_of(a)
            except AiedmaError as error:
                self._skip(a.what, error, a.where)
                continue
            ports.pop(port.name, None)  # a later assignment wins, listed where it is
            ports[port.name] = port
            obj = self._find(a.candidates)
            if obj is not None and obj.owner == "shared_buffer":
                side = programs.setdefault(obj.name, {"write": {}, "read": {}})
                side[a.direction][a.index] = a.program
        buffers = tuple(
            SharedBufferSpec(name=o.name, dtype=o.dtype or "int32", shape=o.shape,
                             n_in=o.n_in, n_out=o.n_out,
                             write_access=programs.get(o.name, {}).get("write", {}),
                             read_access=programs.get(o.name, {}).get("read", {}), **o.settings)
            for o in self.objects.values() if o.owner == "shared_buffer" and o.shape)
        unique = {}
        for s in self.skipped:
            unique.setdefault((s.line, s.column, str(s)), s)
        skipped = sorted(unique.values(), key=lambda s: (s.line, s.column))
        ordered = sorted(ports.values(), key=lambda q: (q.line, q.column))
        return GraphHeader(tuple(ordered), buffers, tuple(skipped))

    def _port_of(self, a: _Access) -> HeaderPort:
        obj = self._find(a.candidates)
        program = a.program
        if obj is not None and obj.owner in _GMIO_ACCESS:
            return self._gmio_port(a, obj)
        if obj is None or (obj.owner != "kernel" and obj.shape is None):
            if not all(e.buffer_dimension for e in program):
                known = ", ".join(o.name for o in self.objects.values() if o.shape) or "none"
                raise syntax_error(a.object_token, f"expected a shared buffer created in this text "
                                                   f"({known}), found {a.object_token.shown()} (a "
                                                   "statement on its own needs .buffer_dimension "
                                                   "in every tiling)")
            name = f"{a.candidates[0]}.{a.side}[{a.index}]"
            return HeaderPort(name, "memtile", a.direction, program, None, None, "undeclared",
                              a.where.line, a.where.column)
        if obj.owner != "kernel":
            wanted = "in" if a.direction == "write" else "out"
            if a.side != wanted:
                what = (f"'{wanted}' ({a.direction}_access programs an "
                        f"{'input' if wanted == 'in' else 'output'} port: buffer.{wanted}[i])")
                raise syntax_error(a.side_token, f"expected {what}, found '{a.side}'")
            count = obj.n_in if a.direction == "write" else obj.n_out
            if not 0 <= a.index < count:
                which = ("input", "n_in") if a.direction == "write" else ("output", "n_out")
                raise syntax_error(a.index_token, f"expected an {which[0]} port index "
                                                  f"0..{count - 1} ({a.shown} has "
                                                  f"{which[1]}={count}), found {a.index}")
            shape = obj.shape
        else:
            shape = obj.dimensions.get((a.side, a.index))
            if shape is None and not all(e.buffer_dimension for e in program):
                raise syntax_error(a.object_token, f"expected .buffer_dimension in every tiling of "
                                                   f"the kernel port {a.shown}.{a.side}[{a.index}] "
                                                   f"(or dimensions({a.shown}.{a.side}[{a.index}]) "
                                                   "= {...})")
        if shape is not None:
            program = program.resolve(shape)
        return HeaderPort(f"{obj.name}.{a.side}[{a.index}]", _OBJECT_KINDS[obj.owner],
                          a.direction, program, obj.dtype, shape, obj.owner,
                          a.where.line, a.where.column)


    def _gmio_port(self, a: _Access, obj: _Object) -> HeaderPort:
        direction, side = _GMIO_ACCESS[obj.owner]
        if (a.direction, a.side) != (direction, side):
            raise syntax_error(a.side_token, f"expected {direction}_access({a.shown}.{side}[i]) "
                                             f"(an {obj.owner} is read from or written to by "
                                             f"the shim in that direction only), found "
                                             f"{a.direction}_access on '{a.side}'")
        if not all(e.buffer_dimension for e in a.program):
            raise syntax_error(a.object_token, f"expected .buffer_dimension in every tiling of "
                                               f"the {obj.owner} {a.shown} (its DDR buffer)")
        return HeaderPort(f"{obj.name}.{a.side}[{a.index}]", "shim", a.direction, a.program,
                          self._connected_dtype(obj), None, obj.owner, a.where.line,
                          a.where.column)

    def _connected_dtype(self, gmio: _Object) -> str | None:
        """The element type of the buffer a GMIO is connected to (None if it is not known:
        a kernel's port, or no ``connect`` read)."""
        if self._connections is None:   # read once, when a GMIO first asks
            self._connections = read_graph_text(self.text).connections
        scope, _, short = gmio.name.rpartition("::")
        for c in self._connections:
            for end, other in ((c.source, c.destination), (c.destination, c.source)):
                if end.name == short:
                    peer = self._find((f"{scope}::{other.name}", other.name) if scope
                                      else (other.name,))
                    if peer is not None and peer.owner in ("shared_buffer", "external_buffer"):
                        return peer.dtype
        return None


def read_graph_header(text: str, defines: Mapping[str, int | str] | None = None,
                      includes: Sequence[str] = ()) -> GraphHeader:
    """Every DMA port of a graph header, and every statement or port that could not be read.

    Never raises for what the text holds: a problem skips its statement or port and is
    listed in ``skipped`` with its ``line, column`` error (see the module's decisions).

    Parameters
    ----------
    text : str
        A graph header (or .cpp), or statements pasted from one.
    defines : dict, optional
        ``NAME: value`` as ``-D NAME=VALUE`` gives (ints, or text: an expression or a type).
    includes : sequence of str, optional
        The texts of the headers ``text`` includes, in the order the preprocessor
        reads them (an include's own includes before it). Their macros and their
        namespace-level constants and types are defined before ``text`` is read; their
        ports are not listed (read the header that has them).

    Examples
    --------
    >>> header = read_graph_header('''
    ...     template <typename T = int16> class A : public adf::graph {
    ...         adf::shared_buffer<T> mtxin;
    ...         static constexpr int N = 4;
    ...     public:
    ...         A() {
    ...             int Pad = 2;
    ...             mtxin = adf::shared_buffer<T>::create({N * Pad}, 1, 1);
    ...             adf::tiling_parameters half = {.tiling_dimension = {N}, .offset = {Pad}};
    ...             read_access(mtxin.out[0]) = adf::tiling(half);
    ...             read_access(mtxin.out[7]) = adf::tiling(half);
    ...         }
    ...     };''')
    >>> [(p.name, p.context, p.dtype, p.program.indices().tolist()) for p in header.ports]
    [('A::mtxin.out[0]', 'memory tile read', 'int16', [2, 3, 4, 5])]
    >>> print(header.skipped[0])
    read_access(mtxin.out[7]) in class A: line 11, column 35: expected an output port ...
    """
    macros: dict[str, Definition] = {}
    names: dict[str, Definition] = {}
    for included in includes:  # each one sees what the ones before it defined
        before = _Reader(included, defines)
        before.macros.update((k, v) for k, v in macros.items() if k not in before.fixed)
        before.globals.update(names)
        before.read()
        macros, names = before.macros, before.globals
    reader = _Reader(text, defines)
    reader.macros.update((k, v) for k, v in macros.items() if k not in reader.fixed)
    reader.globals.update(names)
    return reader.read()


def parse_graph_header(text: str,
                       defines: Mapping[str, int | str] | None = None) -> list[SharedBufferSpec]:
    """Every ``shared_buffer`` of a graph header, with its port programs (strict).

    The header is read by :func:`read_graph_header` (classes, templates,
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
    header = read_graph_header(text, defines)
    if header.skipped:
        raise header.skipped[0].error
    return list(header.buffers)
