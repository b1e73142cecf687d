"""The layout holds: cited documents ship with the code, imports point one way.

docs/architecture.md draws the layers; this file is the check that keeps the tree
and the drawing equal.
"""

import ast
import re
import subprocess
import sys
from pathlib import Path

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
MODEL_LAYERS = ("errors", "arch", "tiling", "adf", "bd", "cycle", "system")

EXTERNAL_FORBIDDEN = {"aiedma.model": ("amaranth", "cocotb")}

# Packages `import aiedma.model` must not load: the model is Python + NumPy.
HEAVY = ("amaranth", "cocotb", "tree_sitter")

# Third-party packages the model may import inside the one function that needs them
# (compiled extensions only reading a whole C++ header uses): a function-level import
# for that reason is allowed, one to dodge a cycle between aiedma modules is not.
LAZY_ALLOWED = ("tree_sitter", "tree_sitter_cpp", "lark")


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


def _plant(folder: Path, source: str) -> str:
    """A fake module written to ``folder`` and read back, as the checkers read the tree."""
    planted = folder / "planted.py"
    planted.write_text(source)
    return planted.read_text()


# --- no private names across modules -------------------------------------------------------

def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _resolve(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    if node.level == 0:
        return node.module or ""
    parts = module.split(".") if is_package else module.split(".")[:-1]
    parts = parts[:len(parts) - (node.level - 1)]
    return ".".join(parts + ([node.module] if node.module else []))


def private_imports(source: str, module: str, is_package: bool = False,
                    own: frozenset[str] = frozenset()) -> list[str]:
    """Each ``_name`` ``source`` takes from another module, as ``line: module._name``.

    Counted: ``from X import _name`` (a private module ``from . import _mod`` too) and
    ``X._name`` on a module bound by ``import X`` / ``import X as m`` /
    ``from P import X``. ``own`` lists the modules whose privates are allowed (a test's
    module under test); dunder names are not private.
    """
    tree = ast.parse(source)
    allowed = {module, *own}

    def allowed_from(name: str) -> bool:  # the module itself or a name defined in it
        return any(name == m or name.startswith(m + ".") for m in allowed)

    found: list[str] = []
    modules: dict[str, str] = {}  # local name bound to an imported module
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    modules[alias.asname] = alias.name
                else:
                    modules[alias.name.split(".")[0]] = alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(node, module, is_package)
            for alias in node.names:
                if _is_private(alias.name) and base not in allowed:
                    found.append(f"{node.lineno}: {base}.{alias.name}")
                elif not _is_private(alias.name):
                    modules[alias.asname or alias.name] = f"{base}.{alias.name}"
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _is_private(node.attr) \
                and isinstance(node.value, ast.Name) and node.value.id in modules:
            target = modules[node.value.id]
            if not allowed_from(target):
                found.append(f"{node.lineno}: {target}.{node.attr}")
    return found


def _tested_modules(path: str) -> frozenset[str]:
    """The modules a test file tests: those whose last name is a word run of its name.

    ``tests/model/adf/test_adf_header.py`` tests every module called ``header`` or
    ``adf_header`` (and ``adf``); a test named after no module may use no privates.
    """
    stem = Path(path).stem.removeprefix("test_")
    words = stem.split("_")
    runs = {"_".join(words[i:j]) for i in range(len(words))
            for j in range(i + 1, len(words) + 1)}
    names = set()
    for other in _tracked("*.py"):
        top = other.split("/")[0]
        if top in FOLDERS:
            name, _ = _module_name(other)
            if name.rsplit(".", 1)[-1] in runs:
                names.add(name)
    return frozenset(names)


# The testbench and RTL folders and their tests are checked by a test of their own,
# so that what it reports there stays apart from the rest of the tree.
TB_AND_HDL = ("tb/", "hdl/", "tests/tb/", "tests/hdl/")


def _private_problems(paths: list[str]) -> list[str]:
    problems = []
    for path in paths:
        top = path.split("/")[0]
        if top in FOLDERS:
            module, is_package = _module_name(path)
            own: frozenset[str] = frozenset()
        else:
            module, is_package, own = Path(path).stem, False, _tested_modules(path)
        problems += [f"{path}:{hit}" for hit in
                     private_imports((REPO / path).read_text(), module, is_package, own)]
    return problems


def test_no_module_imports_a_private_name_of_another():
    paths = [p for p in _tracked("*.py") if not p.startswith(TB_AND_HDL)]
    assert len(paths) > 100
    problems = _private_problems(paths)
    assert not problems, "\n".join(problems)


def test_tb_and_hdl_import_no_private_name_of_another():
    paths = [p for p in _tracked("*.py") if p.startswith(TB_AND_HDL)]
    problems = _private_problems(paths)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("source", [
    "from aiedma.model.adf.lexer import _Token\n",
    "from .lexer import Token, _where\n",
    "from . import _helpers\n",
    "import aiedma.model.adf.lexer as lexer\nlexer._DIGITS\n",
    "from aiedma.model.adf import lexer\nx = lexer._DIGITS\n",
])
def test_a_planted_private_import_fails(tmp_path, source):
    assert private_imports(_plant(tmp_path, source), "aiedma.model.adf.header")


def test_privates_of_the_module_itself_or_under_test_pass():
    assert not private_imports("from .header import _Reader\n__all__ = []\n",
                               "aiedma.model.adf.header")
    assert not private_imports("from aiedma.model.adf.header import _Reader\n", "test_x",
                               own=frozenset({"aiedma.model.adf.header"}))
    assert "aiedma.model.adf.header" in _tested_modules("tests/model/adf/test_adf_header.py")
    assert "aiedma.model.adf.lexer" not in _tested_modules("tests/model/adf/test_adf_header.py")


# --- no function-level imports in the model -----------------------------------------------

def function_imports(source: str, module: str, is_package: bool = False) -> list[str]:
    """Each import inside a function or method, as ``line: module``.

    Only the heavy third-party packages in :data:`LAZY_ALLOWED` may be imported there
    (with a comment saying why); an aiedma module imported there dodges a cycle or a
    layer, and any other package costs nothing at the top.
    """
    found = []
    for func in ast.walk(ast.parse(source)):
        if not isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for node in ast.walk(func):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [_resolve(node, module, is_package)]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top not in LAZY_ALLOWED:
                    found.append(f"{node.lineno}: {name}")
    return sorted(set(found))


def test_the_model_imports_nothing_inside_a_function():
    problems = []
    for path in _tracked("model/*.py"):
        module, is_package = _module_name(path)
        problems += [f"{path}:{hit}" for hit in
                     function_imports((REPO / path).read_text(), module, is_package)]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("source", [
    "def f():\n    from .adf_cpp import parse_tiling\n    return parse_tiling\n",
    "class A:\n    def m(self):\n        import aiedma.model.bd.lower\n",
    "async def f():\n    from aiedma.model import errors\n",
    "def f():\n    import numpy\n",
])
def test_a_planted_function_import_fails(tmp_path, source):
    assert function_imports(_plant(tmp_path, source), "aiedma.model.tiling.parameters")


def test_a_lazy_heavy_import_passes():
    source = "def parser():\n    import tree_sitter\n    import tree_sitter_cpp\n"
    assert not function_imports(source, "aiedma.model.adf.header")


# --- importing the model loads no heavy package ------------------------------------------

def heavy_modules_loaded_by(package: str, path: Path | None = None) -> list[str]:
    """The :data:`HEAVY` packages a fresh interpreter holds after ``import package``."""
    code = (f"import sys, {package}; "
            f"print(' '.join(sorted({{m.split('.')[0] for m in sys.modules}} & {set(HEAVY)!r})))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=path or REPO)
    return out.stdout.split()


def test_importing_the_model_loads_no_amaranth_cocotb_or_tree_sitter():
    assert heavy_modules_loaded_by("aiedma.model") == []


def test_a_planted_heavy_import_fails(tmp_path):
    package = tmp_path / "planted_model"
    package.mkdir()
    (package / "__init__.py").write_text("import tree_sitter\n")
    assert heavy_modules_loaded_by("planted_model", tmp_path) == ["tree_sitter"]
