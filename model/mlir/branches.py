"""A core written as blocks and branches (mlir-aie's form after ``--convert-scf-to-cf``),
followed as it runs: the integer arithmetic of its loop counters (``arith`` on index
and integer values), ``cf.br`` and ``cf.cond_br``; every other operation goes to the
reader's core step reader (locks, copies) in the order the core meets it.

Values the core computes from memory (``memref.load`` and what follows from it) are
not known; a branch on one is where following stops (:class:`NotFollowed`). A core
that comes back to a block with every value as it was the last time repeats from
there for ever: the steps between are one :class:`~.core.CoreLoop` of
:data:`FOREVER` passes (a core's ``while (true)``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .core import CoreLoop
from .pieces import NotRead, ParsedOp
from .syntax import Name, Paren, Ref, Statement

__all__ = ["FOREVER", "MAX_CORE_OPS", "NotFollowed", "follow_branches"]

MAX_CORE_OPS = 200_000
"""Operations followed at most before a loop shows itself (see the module)."""

FOREVER = 1 << 62
"""Passes of a loop that never ends (an endless ``scf.for`` reads as a count as large)."""

_PARAMS = re.compile(r"%([\w$.]+)\s*:")

_COMPARE: dict[str, Callable[[int, int], bool]] = {
    "eq": lambda a, b: a == b, "ne": lambda a, b: a != b,
    "slt": lambda a, b: a < b, "sle": lambda a, b: a <= b,
    "sgt": lambda a, b: a > b, "sge": lambda a, b: a >= b,
    "ult": lambda a, b: a < b, "ule": lambda a, b: a <= b,
    "ugt": lambda a, b: a > b, "uge": lambda a, b: a >= b,
}

_ARITH: dict[str, Callable[[int, int], int]] = {
    "arith.addi": lambda a, b: a + b, "arith.subi": lambda a, b: a - b,
    "arith.muli": lambda a, b: a * b, "arith.divsi": lambda a, b: int(a / b) if b else 0,
    "arith.remsi": lambda a, b: a - b * int(a / b) if b else 0,
    "arith.andi": lambda a, b: a & b, "arith.ori": lambda a, b: a | b,
}


class NotFollowed(NotRead):
    """A branch on a value the core computes from memory: following stops there."""


@dataclass
class _Block:
    params: list[str]
    ops: list[ParsedOp]


def _blocks(statements: Sequence[Statement], parse: Callable[[Statement], ParsedOp | None]
            ) -> dict[str, _Block]:
    """The region's blocks by label (the entry block is ``""``), each with its
    parameters' names."""
    blocks = {"": _Block([], [])}
    current = blocks[""]
    for statement in statements:
        if statement.label:
            inside = statement.text[statement.text.find("(") + 1:statement.text.rfind(")")] \
                if "(" in statement.text.split(":")[0] else ""
            current = blocks[statement.label[1:]] = _Block(_PARAMS.findall(inside), [])
            continue
        op = parse(statement)
        if op is not None:
            current.ops.append(op)
    return blocks


def _operands(op: ParsedOp) -> list[Any]:
    """The op's operands before its ``: type`` (values, numbers, predicate names)."""
    found = []
    for piece in op.op.pieces:
        if not isinstance(piece, Ref | int | Name) or (isinstance(piece, Ref)
                                                        and piece.sigil != "%"):
            break
        found.append(piece)
    return found


def _target(pieces: Sequence[Any], at: int) -> tuple[str, list[Any], int]:
    """The block ``^name`` at ``at`` and its arguments; the position after them."""
    name = pieces[at].name
    args: list[Any] = []
    if at + 1 < len(pieces) and isinstance(pieces[at + 1], Paren):
        args = [item[0] for item in pieces[at + 1].items if item]
        at += 1
    return name, args, at + 1


def follow_branches(statements: Sequence[Statement],
                    parse: Callable[[Statement], ParsedOp | None],
                    step: Callable[[ParsedOp], list]) -> list:
    """The core's steps (what ``step`` makes of each other operation) in the order its
    branches take them.

    Raises
    ------
    NotFollowed
        At a branch on a value not known (computed from memory).
    NotRead
        For a branch to a block that does not exist, or a core that does not end
        within :data:`MAX_CORE_OPS` operations.
    """
    blocks = _blocks(statements, parse)
    values: dict[str, int] = {}

    def value(piece: Any) -> int | None:
        if isinstance(piece, int):
            return piece
        if isinstance(piece, Ref):
            return values.get(piece.name)
        return None

    steps: list = []
    block, pc = blocks[""], 0
    entered: dict[tuple, int] = {}   # (block, every value) -> steps made before it
    for _ in range(MAX_CORE_OPS):
        if pc >= len(block.ops):
            return steps
        op = block.ops[pc]
        pc += 1
        result = op.op.results[0] if op.op.results else None
        if op.name in ("aie.end", "func.return"):
            return steps
        if op.name in ("cf.br", "cf.cond_br"):
            pieces = op.op.pieces
            at = 0
            if op.name == "cf.cond_br":
                condition = value(pieces[0])
                if condition is None:
                    raise NotFollowed(f"cf.cond_br on %{getattr(pieces[0], 'name', '?')}, a "
                                      "value the core computes from memory")
                at = 1
            name, args, at = _target(pieces, at)
            if op.name == "cf.cond_br" and not condition:
                name, args, _ = _target(pieces, at)
            if name not in blocks:
                raise NotRead(f"{op.name}: block ^{name} does not exist")
            block, pc = blocks[name], 0
            for param, arg in zip(block.params, args, strict=False):
                known = value(arg)
                if known is None:
                    values.pop(param, None)
                else:
                    values[param] = known
            state = (name, tuple(sorted(values.items())))
            if state in entered:      # all as before: it repeats from here for ever
                start = entered[state]
                return [*steps[:start], CoreLoop(FOREVER, tuple(steps[start:]))]
            entered[state] = len(steps)
            continue
        operands = _operands(op)
        if op.name in _ARITH and result is not None:
            a, b = (value(p) for p in operands[:2]) if len(operands) >= 2 else (None, None)
            if a is not None and b is not None:
                values[result] = _ARITH[op.name](a, b)
        elif op.name == "arith.cmpi" and result is not None and len(operands) >= 3:
            predicate = operands[0].text if isinstance(operands[0], Name) else ""
            a, b = value(operands[1]), value(operands[2])
            if predicate in _COMPARE and a is not None and b is not None:
                values[result] = int(_COMPARE[predicate](a, b))
        elif op.name == "arith.index_cast" and result is not None and operands:
            known = value(operands[0])
            if known is not None:
                values[result] = known
        elif op.name == "memref.copy" or not op.name.startswith(("arith.", "memref.")):
            steps += step(op)
    raise NotRead(f"the core runs more than {MAX_CORE_OPS} operations: a loop that never "
                  "ends is followed no further")
