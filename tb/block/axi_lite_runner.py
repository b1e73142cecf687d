"""Run the AXI4-Lite benches (:mod:`.axi_lite_bench`) on an ``aiedma_axi_dma_<kind>`` top.

:func:`run_axi_lite` builds the top as :mod:`.cocotb_runner` does (the same build folder
``<build_root>/cocotb/<simulator>/aiedma_axi_dma_<kind>/``, reused while the sources of
the RTL and the model and the options hash the same) and runs one cocotb test of the
bench on it, the configuration passed as a JSON file, the verdict read back from one.
"""

from __future__ import annotations

from pathlib import Path

from ...model.arch.kinds import check_kind
from ..common.simulators import VERILOG, check_simulator
from .axi_lite_bench import CONFIG_ENV, RESULT_ENV
from .cocotb_runner import log_tail, run_bench

__all__ = ["BENCH_TESTS", "RUNS_ON", "run_axi_lite"]

RUNS_ON = VERILOG
"""cocotb runs the exported Verilog."""

BENCH_MODULE = "aiedma.tb.block.axi_lite_bench"
BENCH_TESTS = ("axi_lite_fuzz", "unmapped_addresses_answer_slverr",
               "partial_strobes_answer_slverr", "back_to_back_one_a_cycle")
"""The bench's cocotb tests, by name."""

def run_axi_lite(kind: str, simulator: str, test: str = "axi_lite_fuzz", *,
                 transactions: int = 300, seed: int = 1, pause: float = 0.3,
                 build_root: str | Path = "build") -> dict:
    """Run one test of the AXI4-Lite bench on ``aiedma_axi_dma_<kind>``.

    Parameters
    ----------
    kind : {"tile", "memtile", "shim"}
    simulator : {"verilator", "icarus"}
    test : str
        One of :data:`BENCH_TESTS`.
    transactions : int
        Random transactions of the fuzz (the last sweep of every register comes on top).
    seed : int
        The fuzz's random seed (the same seed, the same transactions).
    pause : float
        Probability of a pause in a cycle, on each AXI channel.
    build_root : path
        Everything goes below ``<build_root>/cocotb/<simulator>/``.

    Returns
    -------
    dict
        The bench's result: ``transactions``, ``cycles``, ``seconds``,
        ``transactions_per_second``, ``counts`` (checks by op and role), ``failures``
        (empty when every response and word matched the model), and ``failed``.

    Raises
    ------
    CocotbError
        If the build fails or the bench ends without a result.
    """
    check_kind(kind)
    check_simulator(simulator, RUNS_ON, "run_axi_lite")
    if test not in BENCH_TESTS:
        raise ValueError(f"test={test!r}: must be one of {', '.join(BENCH_TESTS)}")
    top = f"aiedma_axi_dma_{kind}"
    folder = (Path(build_root) / "cocotb" / simulator / top).resolve()
    folder.mkdir(parents=True, exist_ok=True)
    config = {"kind": kind, "transactions": transactions, "seed": seed, "pause": pause}
    result, failed, files = run_bench(simulator, top, folder, module=BENCH_MODULE,
                                      input_env=CONFIG_ENV, inputs=config,
                                      result_env=RESULT_ENV, testcase=test, prefix="axil")
    result["failed"] = bool(failed)
    if failed:
        result["log"] = log_tail(files["log"])
    for path in files.values():
        path.unlink(missing_ok=True)
    return result
