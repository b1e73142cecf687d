"""The graph of an adf header: kernels, PLIO / GMIO ports and ``connect`` statements.

:func:`read_graph_text` reads what :mod:`.header` leaves aside, token by token
(:mod:`.lexer`): ``k = kernel::create(f)``, ``x = input_plio::create(...)`` (and
``output_plio``, ``input_gmio``, ``output_gmio``, or their declarations),
``connect<>(a.out[i], b.in[j])``, ``dimensions(k.in[0]) = {n}`` and
``repetition_count(k) = n`` of a kernel. Settings the system model does not model
(``source``, ``runtime<ratio>``, ``location``, ``headers``, ``stack_size``, ...) are
warnings with their ``line:column``, and so is a statement of the graph that cannot be
read: nothing here raises for what the text holds. The shared buffers and their
tilings come from :func:`.header.read_graph_header`; :mod:`aiedma.model.system.header_graph`
joins both into a :class:`~aiedma.model.system.graph.Graph`.

Grammar (tokens; ``[ ]`` optional)::

    kernel     = NAME "=" [ "adf" "::" ] "kernel" "::" "create" "(" NAME ... ")" ;
    io         = NAME "=" [ "adf" "::" ] IO "::" "create" "(" ... ")"
               | [ "adf" "::" ] IO NAME { "," NAME } ;
    connect    = [ "adf" "::" ] "connect" [ "<" ... ">" ] "(" end "," end ")" ;
    end        = NAME { ( "." | "->" ) NAME } [ ( "." | "->" ) ( "in" | "out" ) "[" INT "]" ] ;
    dimensions = [ "adf" "::" ] "dimensions" "(" NAME "." ( "in" | "out" ) "[" INT "]" ")"
                 "=" "{" INT { "," INT } "}" ;
    repetition = [ "adf" "::" ] "repetition_count" "(" NAME ")" "=" INT ;

``IO`` is ``input_plio``, ``output_plio``, ``input_gmio`` or ``output_gmio``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .lexer import END, NAME, Lexer, Token

__all__ = ["IO_KINDS", "UNMODELLED", "Endpoint", "GraphConnection", "GraphText",
           "read_graph_text"]

IO_KINDS = {"input_plio": "input", "output_plio": "output", "input_gmio": "input",
            "output_gmio": "output"}
"""The graph's own ports and the direction their data goes (into or out of the graph)."""

UNMODELLED = frozenset({"source", "runtime", "location", "headers", "stack_size",
                        "heap_size", "fabric", "initialization_function", "single_buffer",
                        "not_equal", "bank", "address", "tile", "parameter"})
"""adf settings of a kernel or buffer the system model does not model (a warning each)."""

_ACCESS_LABELS = frozenset({"public", "protected", "private"})


@dataclass(frozen=True)
class Endpoint:
    """One end of a ``connect``: an object (kernel, buffer, PLIO), a side and an index.

    ``side`` is None for a PLIO / GMIO written bare (``connect(in1, k1.in[0])``).
    """

    name: str
    side: str | None = None
    index: int = 0

    def __str__(self) -> str:
        return self.name if self.side is None else f"{self.name}.{self.side}[{self.index}]"


@dataclass(frozen=True)
class GraphConnection:
    """``connect<>(source, destination)`` at ``line:column``."""

    source: Endpoint
    destination: Endpoint
    line: int
    column: int


@dataclass
class GraphText:
    """What :func:`read_graph_text` found.

    Attributes
    ----------
    kernels : dict of str to str
        Kernel name to the function ``kernel::create`` names, as written (``scale<int>``;
        ``""`` if only declared).
    ios : dict of str to str
        PLIO / GMIO name to ``"input"`` or ``"output"``.
    connections : list of GraphConnection
    dimensions : dict of (str, str, int) to tuple of int
        ``dimensions(k.in[0]) = {n}``: kernel, side, index to the buffer's shape.
    repetitions : dict of str to int
        ``repetition_count(k) = n`` of a kernel: runs per graph iteration.
    warnings : list of str
        ``line:column: what: why`` for each setting not modelled or statement not read.
    """

    kernels: dict[str, str] = field(default_factory=dict)
    ios: dict[str, str] = field(default_factory=dict)
    connections: list[GraphConnection] = field(default_factory=list)
    dimensions: dict[tuple[str, str, int], tuple[int, ...]] = field(default_factory=dict)
    repetitions: dict[str, int] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def _statements(tokens: list[Token]) -> list[list[Token]]:
    """Tokens cut at ``;`` and at the braces of classes and function bodies."""
    out: list[list[Token]] = []
    current: list[Token] = []
    parens = inits = 0
    for t in tokens:
        if t.kind == END:
            break
        if t.text in ("(", "["):
            parens += 1
        elif t.text in (")", "]"):
            parens = max(parens - 1, 0)
        elif t.text == "{" and (parens or inits or (current and current[-1].text in "=,")):
            inits += 1
        elif t.text == "}" and inits:
            inits -= 1
        elif t.text in ("{", "}", ";") and not parens:
            if current:
                out.append(current)
            current = []
            continue
        current.append(t)
    if current:
        out.append(current)
    return out


def _unlabelled(statement: list[Token]) -> list[Token]:
    """The statement without a leading ``public:`` (it ends no statement, so the
    declaration after it would otherwise start with it)."""
    while len(statement) > 2 and statement[0].text in _ACCESS_LABELS \
            and statement[1].text == ":":
        statement = statement[2:]
    return statement


def _unprefixed(statement: list[Token]) -> list[Token]:
    """The statement without ``adf::`` anywhere (``adf::kernel::create`` -> ``kernel::create``)."""
    out = []
    for k, t in enumerate(statement):
        adf = t.text == "adf" and k + 1 < len(statement) and statement[k + 1].text == "::"
        after_adf = t.text == "::" and k and statement[k - 1].text == "adf"
        if not (adf or after_adf):
            out.append(t)
    return out


def _endpoint(tokens: list[Token]) -> Endpoint | None:
    """``k1.in[0]``, ``this->mtx.out[1]``, ``in1``; None for anything else."""
    texts = [t.text for t in tokens]
    if texts[:2] == ["this", "->"]:
        texts = texts[2:]
    if len(texts) >= 6 and texts[-5] in (".", "->") and texts[-4] in ("in", "out") \
            and texts[-3] == "[" and texts[-1] == "]" and texts[-2].isdigit():
        names = texts[:-5]
        side, index = texts[-4], int(texts[-2])
    else:
        names, side, index = texts, None, 0
    if not names or not all(w.isidentifier() or w in (".", "->") for w in names):
        return None
    return Endpoint(names[-1], side, index)


def _split_arguments(tokens: list[Token]) -> list[list[Token]]:
    """The comma-separated arguments inside the first ``( ... )``."""
    start = next((k for k, t in enumerate(tokens) if t.text == "("), None)
    if start is None:
        return []
    parts: list[list[Token]] = [[]]
    depth = 0
    for t in tokens[start + 1:]:
        if t.text in ("(", "[", "{"):
            depth += 1
        elif t.text in (")", "]", "}"):
            if depth == 0:
                return parts
            depth -= 1
        elif t.text == "," and depth == 0:
            parts.append([])
            continue
        parts[-1].append(t)
    return []


def read_graph_text(text: str) -> GraphText:
    """The kernels, graph ports and connections of an adf graph header (see the module).

    Parameters
    ----------
    text : str
        The header's text.

    Returns
    -------
    GraphText
        With a ``line:column`` warning for each statement not read or setting not modelled.
    """
    found = GraphText()
    unmodelled: dict[str, list[str]] = {}    # one warning per setting, at its first place
    for statement in map(_unlabelled, _statements(Lexer(text, errors=[]).tokens())):
        s = _unprefixed(statement)
        if s and s[0].text in UNMODELLED and any(t.text == "(" for t in s[:6]):
            close = next((k for k, t in enumerate(s) if t.text == ")"), len(s) - 1)
            where = f"{statement[0].line}:{statement[0].column}"
            unmodelled.setdefault(s[0].text, [where]).append(
                "".join(t.text for t in s[:close + 1]))
            continue
        _statement(found, s, statement[0])
    for setting, (where, *uses) in unmodelled.items():
        found.warnings.append(f"{where}: {', '.join(uses)}: {setting} is not modelled (the "
                              "system model runs kernels as Python callables on streams)")
    return found


def _warn(found: GraphText, at: Token, what: str, why: str) -> None:
    found.warnings.append(f"{at.line}:{at.column}: {what}: {why}")


def _statement(found: GraphText, s: list[Token], first: Token) -> None:
    texts = [t.text for t in s]
    head = texts[0] if texts else ""
    shown = " ".join(texts[:texts.index(")") + 1] if ")" in texts else texts[:6])
    if head in ("connect", "dimensions", "repetition_count") or head in UNMODELLED:
        if head == "connect":
            _connect(found, s, first, shown)
        elif head == "dimensions":
            _dimensions(found, s, first, shown)
        elif head == "repetition_count":
            _repetition(found, s)
        elif "(" in texts[:4] or "<" in texts[1:2]:
            _warn(found, first, shown, "not modelled (the system model runs kernels as "
                  "Python callables on streams; their cores are not modelled)")
        return
    if head in IO_KINDS:                      # adf::input_plio in1, in2;
        for t in s[1:]:
            if t.kind == NAME:
                found.ios[t.text] = IO_KINDS[head]
        return
    if head == "kernel" and all(t.kind == NAME or t.text == "," for t in s[1:]):
        for t in s[1:]:
            if t.kind == NAME:
                found.kernels.setdefault(t.text, "")
        return
    if "=" in texts and texts.index("=") >= 1:
        _create(found, s, texts.index("="))


def _create(found: GraphText, s: list[Token], equals: int) -> None:
    rest = [t.text for t in s[equals + 1:]]
    if rest[1:3] != ["::", "create"] or rest[0] not in ("kernel", *IO_KINDS):
        return
    name = s[equals - 1].text
    if rest[0] in IO_KINDS:
        found.ios[name] = IO_KINDS[rest[0]]
        return
    arguments = _split_arguments(s[equals + 1:])
    function = "".join(t.text for t in arguments[0]) if arguments else ""
    found.kernels[name] = function


def _connect(found: GraphText, s: list[Token], first: Token, shown: str) -> None:
    body = s[1:]
    if body and body[0].text == "<":             # connect<stream>, connect<>
        close = next((k for k, t in enumerate(body) if t.text == ">"), None)
        body = body[close + 1:] if close is not None else []
    arguments = _split_arguments(body)
    ends = [_endpoint(a) for a in arguments]
    if len(ends) != 2 or None in ends:
        _warn(found, first, shown, "not read: expected connect<>(a.out[i], b.in[j])")
        return
    found.connections.append(GraphConnection(ends[0], ends[1], first.line, first.column))


def _dimensions(found: GraphText, s: list[Token], first: Token, shown: str) -> None:
    texts = [t.text for t in s]
    close = texts.index(")") if ")" in texts else len(texts)
    end = _endpoint(s[2:close])
    values = texts[close + 1:]
    numbers = values[2:-1:2] if values[:2] == ["=", "{"] and values[-1:] == ["}"] else []
    if end is None or end.side is None or not numbers or not all(n.isdigit() for n in numbers):
        _warn(found, first, shown, "not read: expected dimensions(k.in[0]) = {n, ...} with "
              "integer literals (the kernel's buffer size then comes from its connection)")
        return
    found.dimensions[(end.name, end.side, end.index)] = tuple(int(n) for n in numbers)


def _repetition(found: GraphText, s: list[Token]) -> None:
    """A literal count; a shared buffer's (any expression) is :mod:`.header`'s to read."""
    texts = [t.text for t in s]
    if len(texts) == 6 and texts[1] == "(" and texts[3] == ")" and texts[4] == "=" \
            and texts[5].isdigit():
        found.repetitions[texts[2]] = int(texts[5])
