"""One simulator vocabulary (tb/common/simulators.py): each runner a subset, one error."""

import numpy as np
import pytest

from aiedma.tb import SIMULATORS, UnsupportedSimulator, run_addrgen, run_dma
from aiedma.tb.block import cocotb_runner, harness
from aiedma.tb.common.simulators import IN_PROCESS, VERILOG, check_simulator
from aiedma.tb.regress import REGRESSIONS, verilog_bulk
from aiedma.tb.system import loop


def test_every_runner_names_a_subset_of_the_one_vocabulary():
    assert set(IN_PROCESS) | set(VERILOG) == set(SIMULATORS)
    for runs_on in (harness.RUNS_ON, cocotb_runner.RUNS_ON, loop.RUNS_ON, verilog_bulk.RUNS_ON,
                    *(r.runs_on for r in REGRESSIONS.values())):
        assert runs_on and set(runs_on) <= set(SIMULATORS)


def test_a_supported_simulator_passes():
    assert check_simulator("icarus", VERILOG, "run_bulk") == "icarus"


@pytest.mark.parametrize(("call", "message"), [
    (lambda: run_addrgen("tile", [], simulator="modelsim"),
     "simulator='modelsim': must be one of amaranth, verilator, icarus (the block harness); "
     "the simulators are amaranth, verilator, icarus"),
    (lambda: cocotb_runner.run_cocotb("aiedma_addrgen_tile", "amaranth", {}),
     "simulator='amaranth': run_cocotb runs on verilator, icarus, not on this simulator"),
    (lambda: loop.run_with_rtl([], [], "icarus"),
     "simulator='icarus': run_with_rtl runs on amaranth, verilator, not on this simulator"),
    (lambda: run_dma("tile", [], np.zeros(0), simulator="icarus"),
     "simulator='icarus': run_dma (None runs the model alone) runs on amaranth, verilator, "
     "not on this simulator"),
    (lambda: verilog_bulk.run_bulk("tile", 4, 1, "amaranth"),
     "simulator='amaranth': run_bulk runs on verilator, icarus, not on this simulator"),
])
def test_a_runner_refuses_a_simulator_with_one_error(call, message):
    with pytest.raises(UnsupportedSimulator) as error:
        call()
    assert str(error.value) == message
