"""No function in hdl/ runs over 80 lines: a longer ``elaborate`` holds several blocks.

The limit counts every line from ``def`` to the function's last line, docstring
and comments included, for functions and methods at any depth.
"""

import ast

import pytest
from repo import REPO

MAX_LINES = 80


def long_functions(source: str, limit: int = MAX_LINES) -> list[tuple[str, int]]:
    """``(name, lines)`` of every function in ``source`` longer than ``limit`` lines."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            lines = node.end_lineno - node.lineno + 1
            if lines > limit:
                found.append((node.name, lines))
    return found


def _function(name: str, lines: int, indent: str = "") -> str:
    body = "".join(f"{indent}    x{k} = {k}\n" for k in range(lines - 2))
    return f"{indent}def {name}():\n{body}{indent}    return 0\n"


@pytest.mark.parametrize("lines", [MAX_LINES, MAX_LINES + 1])
def test_the_check_finds_a_planted_long_method(lines):
    source = "class Block:\n" + _function("elaborate", lines, indent="    ")
    expected = [("elaborate", lines)] if lines > MAX_LINES else []
    assert long_functions(source) == expected


def test_the_check_finds_a_long_function_nested_in_another():
    source = "def outer():\n" + _function("inner", MAX_LINES + 5, indent="    ")
    assert ("inner", MAX_LINES + 5) in long_functions(source)


@pytest.mark.parametrize("path", sorted((REPO / "hdl").rglob("*.py")),
                         ids=lambda p: str(p.relative_to(REPO)))
def test_no_hdl_function_is_longer_than_80_lines(path):
    assert long_functions(path.read_text()) == [], f"{path.relative_to(REPO)}: split it"
