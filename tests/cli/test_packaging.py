"""One distribution, one import name: aiedma.model, .hdl, .tb, .flows, nothing generic."""

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from repo import REPO

import aiedma
import aiedma.flows
import aiedma.hdl
import aiedma.model
import aiedma.tb


def test_subpackages_come_from_the_top_level_folders():
    for package, folder in [(aiedma.model, "model"), (aiedma.hdl, "hdl"), (aiedma.tb, "tb"),
                            (aiedma.flows, "flows")]:
        assert Path(package.__file__).parent == REPO / folder


def test_generic_names_are_not_importable():
    """Outside the checkout, only ``aiedma`` is importable, never ``model`` / ``hdl`` / ``tb``."""
    probe = ("import importlib.util as u; "
             "print([n for n in ('model', 'hdl', 'tb', 'flows', 'aiedma') if u.find_spec(n)])")
    out = subprocess.run([sys.executable, "-c", probe], cwd="/", capture_output=True,
                         text=True, check=True).stdout
    assert out.strip() == "['aiedma']"


def test_wheel_installs_only_the_aiedma_package(tmp_path):
    """What ``pip install .`` would put into site-packages: aiedma/ and its dist-info."""
    # Build from a copy: setuptools leaves build/ and *.egg-info beside the sources.
    source = tmp_path / "source"
    source.mkdir()
    for item in ("pyproject.toml", "README.md", "aiedma", "model", "hdl", "tb", "flows"):
        if (REPO / item).is_dir():
            shutil.copytree(REPO / item, source / item,
                            ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(REPO / item, source / item)
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
         "--quiet", "--disable-pip-version-check", "-w", str(tmp_path), str(source)],
        check=True, capture_output=True,
    )
    (wheel,) = tmp_path.glob("aiedma-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    top = {name.split("/")[0] for name in names}
    assert top == {"aiedma", f"{wheel.name.split('-')[0]}-{wheel.name.split('-')[1]}.dist-info"}
    for sub in ("model", "hdl", "tb", "flows", "model/arch", "model/tiling", "model/bd",
                "model/cycle", "model/system"):
        assert f"aiedma/{sub}/__init__.py" in names
    assert "aiedma/model/tiling/parameters.py" in names
    assert not any(n.startswith("tests/") for n in names)
