"""One entry point lists and runs every regression (tb/__main__.py), and make sim reaches it."""

import shutil
import subprocess
import sys

import pytest
from repo import REPO

from aiedma.tb.__main__ import listing, main
from aiedma.tb.common.simulators import SIMULATORS
from aiedma.tb.regress import REGRESSIONS


def test_the_listing_names_every_regression_and_its_simulators():
    text = listing()
    for regression in REGRESSIONS.values():
        assert f"  {regression.name}  " in text or f"  {regression.name} " in text
        assert regression.summary in text
        assert set(regression.runs_on) <= set(SIMULATORS)
    assert text.count("simulators: ") == len(REGRESSIONS)


def test_python_m_aiedma_tb_prints_the_listing():
    out = subprocess.run([sys.executable, "-m", "aiedma.tb"], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == listing()


@pytest.mark.parametrize("name", list(REGRESSIONS))
def test_each_regression_runs_by_its_name(name, capsys):
    """``<name> --help`` reaches the regression's own options, under its listed name."""
    with pytest.raises(SystemExit) as done:
        main([name, "--help"])
    assert done.value.code == 0
    assert f"usage: python -m aiedma.tb {name}" in capsys.readouterr().out


def test_an_unknown_regression_is_named(capsys):
    assert main(["bulk"]) == 2
    assert capsys.readouterr().err == (
        f"error: regression='bulk': must be one of {', '.join(REGRESSIONS)}\n")


@pytest.mark.parametrize(("argv", "rule"), [
    (["random-graphs", "--sim", "amaranth", "icarus"],
     "simulator='icarus': regression random-graphs runs on amaranth, verilator, not on this "
     "simulator"),
    (["verilog-bulk", "--sim=modelsim"],
     "simulator='modelsim': must be one of verilator, icarus (regression verilog-bulk); the "
     "simulators are amaranth, verilator, icarus"),
])
def test_a_simulator_the_regression_does_not_run_on_is_refused(argv, rule, capsys):
    assert main(argv) == 2
    assert capsys.readouterr().err == f"error: {rule}\n"


def _make_n(*variables, target="sim"):
    return subprocess.run(["make", "-n", target, *variables], cwd=REPO, capture_output=True,
                          text=True)


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_test_leaves_the_long_tests_to_make_sim():
    done = _make_n(target="test")
    assert done.returncode == 0, done.stderr
    assert '.venv/bin/python -m pytest -m "not long" -n auto' in done.stdout.splitlines()


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
@pytest.mark.parametrize(("variables", "command"), [
    ((), "-m aiedma.tb blocks"),
    (("SIM=verilator", "WAVES=1"), "-m aiedma.tb blocks --sim verilator --waves"),
    (("REGRESSION=verilog-bulk", "SIM=icarus", "BDS=7"),
     "-m aiedma.tb verilog-bulk --sim icarus --bds 7 --seed 1"),
    (("REGRESSION=dma-sweep", "TASKS=9", "SCHEDULER=tcp://h:1"),
     "-m aiedma.tb dma-sweep --tasks 9 --scheduler tcp://h:1"),
])
def test_make_sim_takes_the_regression_and_the_simulator_apart(variables, command):
    done = _make_n(*variables)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    first = next(line for line in lines if "-m aiedma.tb " in line)
    assert first == f".venv/bin/python {command}"
    # the suite's long tests come first: they stop make before the longest stages
    assert lines.index(".venv/bin/python -m pytest -m long -n auto") < lines.index(first)
    for stage in ("random-graphs --graphs 200", "dma-programs --programs 200 --sim verilator",
                  "dma-programs --programs 50 --sim amaranth", "trace-replay --programs 50",
                  "axi-lite --sim verilator --transactions 10000",
                  "-m aiedma.flows.graph_examples"):
        assert stage in done.stdout


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
@pytest.mark.parametrize(("old", "new"), [
    ("bulk", "REGRESSION=verilog-bulk SIM=verilator"),
    ("bulk-icarus", "REGRESSION=verilog-bulk SIM=icarus"),
    ("dma-bulk", "REGRESSION=dma-sweep"),
])
def test_a_regression_spelled_as_sim_names_the_new_spelling(old, new):
    done = _make_n(f"SIM={old}")
    assert done.returncode != 0
    assert (f"SIM={old}: SIM names the simulator (amaranth, verilator or icarus) and "
            f"REGRESSION the regression: write make sim {new}.") in done.stderr
