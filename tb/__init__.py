"""Testbenches: the RTL compared with the golden model, on every cycle.

Sub-packages, by level:

* :mod:`.common`: what every level shares: stimulus, stream helpers, scoreboards, the
  expected beats, simulated memories, coverage, the simulator vocabulary
  (:mod:`.common.simulators`), tool locations and the Dask shard runner;
* :mod:`.block`: one block on any simulator: the harnesses ``run_addrgen``,
  ``run_mm2s`` and ``run_s2mm`` (Amaranth in process, or cocotb on Verilator or Icarus);
* :mod:`.system`: RTL inside the system model: channel engines in the loop
  (:func:`rtl_runner` for ``Graph.run(rtl=...)``), the whole RTL DMA (:func:`run_dma`),
  random graphs and task programs;
* :mod:`.formal`: the formal harnesses (properties beside the blocks);
* :mod:`.regress`: the regressions; ``python -m aiedma.tb`` lists them and runs one.
"""

from .block.harness import check_addrgen, check_mm2s, check_s2mm, run_addrgen, run_mm2s, run_s2mm
from .common.simulators import SIMULATORS, UnsupportedSimulator
from .system.dma_check import run_dma
from .system.loop import rtl_runner

__all__ = ["SIMULATORS", "UnsupportedSimulator", "check_addrgen", "check_mm2s", "check_s2mm",
           "rtl_runner", "run_addrgen", "run_dma", "run_mm2s", "run_s2mm"]
