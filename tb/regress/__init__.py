"""The regressions, one table: what each checks, on which simulators, and how to run it.

``python -m aiedma.tb`` lists :data:`REGRESSIONS`; ``python -m aiedma.tb <name> [--sim ...]
[options]`` runs one (``--help`` after the name lists its options). Each module below
owns its options (its ``main``); this table is the one place that names them all.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..common.simulators import VERILOG
from . import (
    axi_dma,
    axi_lite,
    blocks,
    dma_programs,
    dma_sweep,
    random_graphs,
    trace_replay,
    verilog_bulk,
)

__all__ = ["REGRESSIONS", "Regression"]


@dataclass(frozen=True)
class Regression:
    """One regression a user can run by name.

    Attributes
    ----------
    name : str
        What ``python -m aiedma.tb`` and ``make sim REGRESSION=...`` call it.
    main : callable
        ``main(argv) -> exit status``: parses the regression's own options and runs it.
    runs_on : tuple of str
        Its simulators (a subset of :data:`~aiedma.tb.common.simulators.SIMULATORS`).
    summary : str
        One line: what it checks and how.
    """

    name: str
    main: Callable[[Sequence[str] | None], int]
    runs_on: tuple[str, ...]
    summary: str


REGRESSIONS: dict[str, Regression] = {r.name: r for r in (
    Regression("blocks", blocks.main, blocks.RUNS_ON,
               "each block (address generator, MM2S and S2MM channels) on random BDs, "
               "co-simulated against the model every cycle (make sim's main job)"),
    Regression("verilog-bulk", verilog_bulk.main, verilog_bulk.RUNS_ON,
               "10^5 random BDs per kind, compared every cycle inside a file-driven Verilog "
               "testbench, sharded by seed on Dask"),
    Regression("random-graphs", random_graphs.main, random_graphs.RUNS_ON,
               "random graphs and task programs, every channel's engine as RTL inside the "
               "system model, every port of every cycle compared"),
    Regression("dma-programs", dma_programs.main, dma_programs.RUNS_ON,
               "random task programs on the whole RTL DMA inside the system model, against "
               "the model channels"),
    Regression("dma-sweep", dma_sweep.main, dma_sweep.RUNS_ON,
               "dma-programs by the 10^5 tasks per kind, sharded by seed on Dask"),
    Regression("trace-replay", trace_replay.main, VERILOG,
               "whole-DMA runs in the loop on Verilator, their port traces replayed on "
               "Icarus (no --sim: it uses both)"),
    Regression("axi-lite", axi_lite.main, axi_lite.RUNS_ON,
               "the AXI4-Lite register slave of each whole DMA under cocotbext-axi: 10^4 "
               "random reads and writes per kind under random pauses, against the model"),
    Regression("axi-dma", axi_dma.main, axi_dma.RUNS_ON,
               "random programs on every channel of each whole AXI DMA top: AXI4-Lite "
               "master, AXI4-Stream sources and sinks with random pauses, the shim's memory "
               "answering SLVERR, against the model"),
)}
"""Every regression, by name, in the order ``python -m aiedma.tb`` lists them."""
