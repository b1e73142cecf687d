"""The AXI4-Lite slave of the whole DMAs under cocotb 2 and cocotbext-axi
(tb/block/axi_lite_bench.py): short random runs and the directed tests.

Builds are cached in ``build/cocotb`` as the other cocotb tests' are. ``make test`` runs
on Icarus, whose builds take seconds: the shim's top (the directed tests) and the core
tile's (the random run; tests/tb/block/test_axi_dma_cocotb.py builds both). On Verilator,
``long``: the shim (a build of about a minute), the random run and the directed tests. The
memory tile is left to ``make sim``: its Verilog is 229 k lines, which Icarus takes over a
minute to load and Verilator minutes to build. Every kind on Verilator, 10^4 transactions
each and the directed tests, is ``python -m aiedma.tb axi-lite`` in ``make sim``.
"""

from __future__ import annotations

import pytest
from repo import REPO

from aiedma.tb.block.axi_lite_runner import run_axi_lite

BUILD = REPO / "build"


def run(kind, simulator, test, **options):
    result = run_axi_lite(kind, simulator, test, build_root=BUILD, **options)
    assert not result["failed"] and not result["failures"], result
    return result


TRANSACTIONS = {"verilator": 300, "icarus": 200}
"""Random transactions a run: enough on Icarus to draw every role and both error rules
(the test checks it), fewer than on Verilator since each costs more there."""


@pytest.mark.parametrize(("simulator", "kind"), [
    ("icarus", "tile"), pytest.param("verilator", "shim", marks=pytest.mark.long)])
def test_random_reads_and_writes_match_the_model(simulator, kind):
    result = run(kind, simulator, "axi_lite_fuzz", transactions=TRANSACTIONS[simulator], seed=7)
    counts = result["counts"]
    # every role, both error rules and unaligned reads were drawn
    for label in ("write bd", "write lock_value", "write start_queue", "write status",
                  "write control", "write unmapped", "write partial strobe", "read bd",
                  "read lock_value", "read start_queue", "read status", "read control",
                  "read unmapped"):
        assert counts.get(label, 0) > 0, label
    assert any("unaligned" in label for label in counts)


SHIM_SIMULATORS = ["icarus", pytest.param("verilator", marks=pytest.mark.long)]


@pytest.mark.parametrize("simulator", SHIM_SIMULATORS)
def test_unmapped_addresses_answer_slverr(simulator):
    run("shim", simulator, "unmapped_addresses_answer_slverr")


@pytest.mark.parametrize("simulator", SHIM_SIMULATORS)
def test_partial_strobes_answer_slverr(simulator):
    run("shim", simulator, "partial_strobes_answer_slverr")


@pytest.mark.parametrize("simulator", SHIM_SIMULATORS)
def test_back_to_back_one_transaction_a_cycle(simulator):
    result = run("shim", simulator, "back_to_back_one_a_cycle")
    assert result["writes_cycles"] <= 72 and result["reads_cycles"] <= 72


def test_a_test_the_bench_does_not_have_is_refused():
    with pytest.raises(ValueError, match="test='fuzz'"):
        run_axi_lite("tile", "verilator", "fuzz")
