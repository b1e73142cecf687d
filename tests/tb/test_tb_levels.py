"""tb/ by level: each sub-package imports only its own level and the levels it builds on.

The import collector is tests/test_layout.py's, so these edges are read the same way
as the layering between model, hdl, tb and flows.
"""

import subprocess

import pytest
from repo import REPO
from test_layout import imports_of

# What each level of tb/ may import from tb/ (itself included); the package face
# (tb/__init__.py) and the entry point (tb/__main__.py) re-export and may read all.
MAY_IMPORT = {
    "common": {"common"},
    "block": {"common", "block"},
    "system": {"common", "system"},
    "formal": {"common", "block", "formal"},
    "regress": {"common", "block", "system", "regress"},
}


def level_violation(importer: str, imported: str) -> str | None:
    """Why module ``importer`` (``aiedma.tb.<level>...``) may not import ``imported``."""
    mine, theirs = importer.split("."), imported.split(".")
    if mine[:2] != ["aiedma", "tb"] or theirs[:2] != ["aiedma", "tb"] or len(theirs) < 3 \
            or len(mine) < 4:
        return None
    level, other = mine[2], theirs[2]
    if other in MAY_IMPORT and other not in MAY_IMPORT[level]:
        return f"tb level {level} may not import tb level {other}"
    return None


def test_every_tb_module_sits_in_a_level():
    files = subprocess.run(["git", "ls-files", "tb/*.py"], cwd=REPO, capture_output=True,
                           text=True, check=True).stdout.split()
    loose = [f for f in files if f.count("/") == 1 and f not in ("tb/__init__.py",
                                                                   "tb/__main__.py")]
    assert not loose, f"modules outside the levels of tb/: {loose}"
    assert {f.split("/")[1] for f in files if f.count("/") == 2} == set(MAY_IMPORT)


def test_tb_levels_import_one_way():
    files = subprocess.run(["git", "ls-files", "tb/*/*.py"], cwd=REPO, capture_output=True,
                           text=True, check=True).stdout.split()
    problems, checked = [], 0
    for path in files:
        parts = path[:-3].split("/")[1:]
        is_package = parts[-1] == "__init__"
        module = ".".join(["aiedma", "tb", *(parts[:-1] if is_package else parts)])
        for imported in imports_of((REPO / path).read_text(), module, is_package):
            checked += 1
            why = level_violation(module if not is_package else module + ".__init__",
                                  imported)
            if why:
                problems.append(f"{path}: imports {imported}: {why}")
    assert checked > 100
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(("importer", "imported"), [
    ("aiedma.tb.common.stimulus", "aiedma.tb.block.harness"),
    ("aiedma.tb.system.loop", "aiedma.tb.regress.blocks"),
    ("aiedma.tb.block.harness", "aiedma.tb.system.loop"),
])
def test_the_level_checker_refuses_a_wrong_edge(importer, imported):
    assert level_violation(importer, imported)


@pytest.mark.parametrize(("importer", "imported"), [
    ("aiedma.tb.regress.blocks", "aiedma.tb.block.harness"),
    ("aiedma.tb.system.dma_check", "aiedma.tb.common.simulators"),
    ("aiedma.tb.formal.reference", "aiedma.tb.block.harness"),
])
def test_the_level_checker_allows_a_right_edge(importer, imported):
    assert level_violation(importer, imported) is None
