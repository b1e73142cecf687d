"""tb/common/tools.py: the quick-build switch and what it changes in a Verilator build."""

import pytest

from aiedma import cli
from aiedma.tb.common import tools
from aiedma.tb.system import loop_verilator


@pytest.mark.parametrize(("value", "quick"), [("1", True), ("0", False), ("", False)])
def test_quick_builds_makes_the_cxx_o0(monkeypatch, value, quick):
    monkeypatch.setenv(tools.QUICK_BUILDS, value)
    assert tools.quick_builds() is quick
    flags = tools.verilator_env()["MAKEFLAGS"].split()
    assert ("OPT_FAST=-O0" in flags and "OPT_GLOBAL=-O0" in flags) is quick
    assert "CFG_CXXFLAGS_PCH_I=-include" in flags


def test_a_bad_quick_builds_value_is_a_clear_error(monkeypatch):
    monkeypatch.setenv(tools.QUICK_BUILDS, "yes")
    with pytest.raises(ValueError, match=r"^AIEDMA_QUICK_BUILDS='yes': must be 0 or 1"):
        tools.verilator_env()


def test_a_quick_build_is_kept_apart_from_an_optimised_one(monkeypatch, tmp_path):
    # the in-the-loop library's folder is named by a digest that holds the choice
    built = []

    def build(folder, top, verilog, wrapper):
        built.append(folder.name)
        raise RuntimeError("stop")   # no compiler needed: only the folder's name matters

    monkeypatch.setattr(loop_verilator, "BUILD", tmp_path)
    monkeypatch.setattr(loop_verilator.VerilatedTop, "_build", staticmethod(build))
    verilog = "module t(clk);\n  input clk;\nendmodule\n"
    for value in ("1", "0"):
        monkeypatch.setenv(tools.QUICK_BUILDS, value)
        with pytest.raises(RuntimeError, match="stop"):
            loop_verilator.VerilatedTop._library("t", verilog)
    assert len(built) == 2 and built[0] != built[1]


def test_a_small_top_is_compiled_o2_and_a_whole_dma_keeps_verilators_os(monkeypatch):
    # (a library's key holds the flags: loop_verilator._library)
    small, large = "m" * 1000, "m" * (loop_verilator.SMALL_TOP + 1)
    monkeypatch.setenv(tools.QUICK_BUILDS, "0")
    assert loop_verilator.make_flags(small) == "OPT_FAST=-O2 OPT_GLOBAL=-O2"
    assert loop_verilator.make_flags(large) == ""
    monkeypatch.setenv(tools.QUICK_BUILDS, "1")   # -O0 for every top
    assert loop_verilator.make_flags(small) == ""


def test_a_bad_quick_builds_value_is_one_line_from_the_command_line(monkeypatch, tmp_path,
                                                                    capsys):
    monkeypatch.setenv(tools.QUICK_BUILDS, "yes")
    assert cli.main(["verilog", "--out", str(tmp_path)]) == 2
    assert capsys.readouterr().err == (
        "aiedma verilog: error: AIEDMA_QUICK_BUILDS='yes': must be 0 or 1 (1: Verilated "
        "models compiled with -O0, for short runs)\n")
    assert not list(tmp_path.iterdir())   # nothing half-done
