"""Testbenches: stimulus, scoreboard and simulator runners comparing the RTL with the model.

``run_addrgen``, ``run_mm2s`` and ``run_s2mm`` run a user's BDs through the RTL on Amaranth's
simulator (default) or on cocotb with Verilator or Icarus, checked every cycle.
"""

from .run import SIMULATORS, check_addrgen, check_mm2s, check_s2mm, run_addrgen, run_mm2s, run_s2mm

__all__ = ["SIMULATORS", "check_addrgen", "check_mm2s", "check_s2mm", "run_addrgen", "run_mm2s",
           "run_s2mm"]
