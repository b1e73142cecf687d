"""The shim's AXI top on a memory that answers SLVERR (cocotbext-axi's AxiRam raising for
chosen words): a faulted read gives 0, a faulted write leaves its word, and each channel
that met a fault shows error_dm_access_to_unavailable; the other channels are the
model's. The shim's AXI builds of test_axi_dma_cocotb.py: Icarus, and Verilator (``long``)."""

import pytest

from aiedma.model.arch.registers import status_address
from aiedma.tb.regress import axi_dma
from aiedma.tb.regress.axi_dma_runner import (
    bus_error_runs,
    compare_run,
    expected_run,
    expected_with_faults,
    run_axi_bus_errors,
)


@pytest.mark.parametrize("simulator", ["icarus", pytest.param("verilator", marks=pytest.mark.long)])
def test_slverr_answers_give_the_model_with_the_faults_and_nothing_else(simulator):
    cases, result, log = bus_error_runs(simulator, programs=3, pause=0.3)
    assert log is None, log
    statuses = {f"register {status_address('shim', d, 0):#x}" for d in ("mm2s", "s2mm")}
    for case, got in zip(cases, result["runs"], strict=True):
        assert compare_run(expected_with_faults(case), got, timed=False) == [], \
            case.program.description
        # Against the model without the faults the run differs exactly where they are:
        # MM2S 0's words, the memory S2MM 0 left, the two faulted channels' status.
        found = compare_run(expected_run(case.program), got, timed=False)
        assert sorted(line.split(":")[0] for line in found) == \
            sorted(["mm2s0 words", "memory", *statuses]), case.program.description


def test_bus_errors_need_programs():
    with pytest.raises(ValueError, match="programs=0: must be at least 1"):
        run_axi_bus_errors("verilator", programs=0)


def test_a_top_without_an_axi_master_skips_the_pass_and_says_why(capsys):
    assert axi_dma.main(["--kinds", "tile", "--sim", "verilator", "--passes", "errors"]) == 0
    assert "skipped, its top has no AXI4 master" in capsys.readouterr().out


def test_the_shim_skips_the_memory_inside_pass_and_says_why(capsys):
    assert axi_dma.main(["--kinds", "shim", "--sim", "icarus", "--passes", "memory"]) == 0
    assert "skipped, its memory is outside, behind its AXI4 master" in capsys.readouterr().out
