"""The layout holds: cited documents ship with the code, imports point one way.

docs/architecture.md draws the layers; this file is the check that keeps the tree
and the drawing equal.
"""

import ast
import re
import subprocess

import pytest
from repo import REPO

# Documents a module may name without the repository holding them: the README is
# the repository's own front page, and bench.md / fpga.md are written into build/
# by `make bench` and `make fpga` (generated output, never committed).
NOT_SHIPPED = {"README.md", "bench.md", "fpga.md"}

# Package of each top-level folder (the face, aiedma/, is the package root itself).
FOLDERS = {"model": "aiedma.model", "hdl": "aiedma.hdl", "tb": "aiedma.tb",
           "flows": "aiedma.flows", "aiedma": "aiedma"}

# Inside the model, each layer may import itself and the layers listed below it.
MODEL_LAYERS = ("errors", "arch", "tiling", "bd", "cycle", "system")

EXTERNAL_FORBIDDEN = {"aiedma.model": ("amaranth", "cocotb")}


def _tracked(pattern: str) -> list[str]:
    out = subprocess.run(["git", "ls-files", pattern], cwd=REPO, capture_output=True,
                         text=True, check=True).stdout
    return out.split()


def _module_name(path: str) -> tuple[str, bool]:
    """Dotted module of a tracked file, and whether it is a package ``__init__``."""
    top, *rest = path[:-3].split("/")
    is_package = rest[-1] == "__init__"
    parts = rest[:-1] if is_package else rest
    return ".".join([FOLDERS[top], *parts]), is_package


def imports_of(source: str, module: str, is_package: bool) -> set[str]:
    """Every module ``source`` imports (anywhere, functions included), absolute."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                base = node.module or ""
            else:
                parts = module.split(".") if is_package else module.split(".")[:-1]
                parts = parts[:len(parts) - (node.level - 1)]
                base = ".".join(parts + ([node.module] if node.module else []))
            found.add(base)
            # `from . import x` imports a module x; a name import is harmless to add.
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def _layer(module: str) -> str | None:
    """The model layer of an ``aiedma.model.*`` module, None for the package face."""
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[:2] == ["aiedma", "model"] else None


def violation(importer: str, imported: str) -> str | None:
    """Why ``importer`` may not import ``imported``, or None when it may."""
    top = {"aiedma.model": 0, "aiedma.hdl": 1, "aiedma.tb": 2, "aiedma.flows": 3}

    def package(name: str) -> str | None:
        for prefix in top:
            if name == prefix or name.startswith(prefix + "."):
                return prefix
        return "aiedma" if name == "aiedma" or name.startswith("aiedma.") else None

    mine, theirs = package(importer), package(imported)
    for external in EXTERNAL_FORBIDDEN.get(mine, ()):
        if imported == external or imported.startswith(external + "."):
            return f"{mine} never imports {external}"
    if theirs is None or mine == "aiedma":
        return None  # outside the project, or the command line (it may read anything)
    if theirs == "aiedma":
        return f"{mine} may not import the package face or the command line ({imported})"
    if top[theirs] > top[mine]:
        return f"{mine} sits below {theirs} and may not import it"
    if mine == "aiedma.hdl" and theirs == "aiedma.model":
        return None
    if mine == theirs == "aiedma.model":
        here, there = _layer(importer), _layer(imported)
        if here is None or there is None or here not in MODEL_LAYERS \
                or there not in MODEL_LAYERS:
            return None  # the package face re-exports every layer
        if MODEL_LAYERS.index(there) > MODEL_LAYERS.index(here):
            return f"model layer {here} sits below {there} and may not import it"
    return None


def test_every_cited_document_ships_in_the_repository():
    shipped = {path.rsplit("/", 1)[-1] for path in _tracked("*.md")}
    cited: dict[str, str] = {}
    for path in _tracked("*.py"):
        for name in re.findall(r"\b[\w-]+\.md\b", (REPO / path).read_text()):
            cited.setdefault(name, path)
    assert cited, "no module cites a document: the pattern is broken"
    missing = {name: path for name, path in cited.items()
               if name not in shipped and name not in NOT_SHIPPED}
    assert not missing, f"cited but not in the repository: {missing}"


def test_cited_paths_under_docs_exist():
    paths = set()
    for path in _tracked("*.py"):
        paths.update(re.findall(r"\bdocs/[\w/-]+\.md\b", (REPO / path).read_text()))
    assert "docs/bd.md" in paths
    assert not [p for p in paths if not (REPO / p).is_file()]


def test_imports_point_one_way():
    checked, problems = 0, []
    for path in _tracked("*.py"):
        if path.split("/")[0] not in FOLDERS:
            continue
        module, is_package = _module_name(path)
        for imported in imports_of((REPO / path).read_text(), module, is_package):
            checked += 1
            why = violation(module, imported)
            if why:
                problems.append(f"{path}: imports {imported}: {why}")
    assert checked > 200
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(("importer", "imported"), [
    ("aiedma.model.bd.lower", "aiedma.model.system.graph"),   # a layer above
    ("aiedma.model.tiling.walk", "aiedma.model.bd.fields"),
    ("aiedma.model.bd.fields", "amaranth.hdl"),                # the model stays NumPy
    ("aiedma.hdl.addrgen", "aiedma.tb.block.harness"),         # RTL below testbenches
    ("aiedma.tb.regress.verilog_bulk", "aiedma.flows.verilog"),  # tb below flows
    ("aiedma.flows.bench", "aiedma.cli"),                      # nothing imports the cli
])
def test_the_checker_refuses_a_wrong_edge(importer, imported):
    assert violation(importer, imported)


@pytest.mark.parametrize(("importer", "imported"), [
    ("aiedma.model.system.graph", "aiedma.model.bd.lower"),
    ("aiedma.model.bd.lower", "aiedma.model.errors"),
    ("aiedma.hdl.layouts", "aiedma.model.bd.fields"),
    ("aiedma.flows.bench", "aiedma.tb.regress.verilog_bulk"),
    ("aiedma.cli", "aiedma.flows.verilog"),
])
def test_the_checker_allows_a_right_edge(importer, imported):
    assert violation(importer, imported) is None


def test_relative_imports_resolve():
    source = ("from ..bd.fields import KINDS\nfrom . import walk\n"
              "def f():\n    from .. import errors\n")
    found = imports_of(source, "aiedma.model.tiling.parameters", False)
    assert {"aiedma.model.bd.fields", "aiedma.model.tiling.walk",
            "aiedma.model.errors"} <= found
