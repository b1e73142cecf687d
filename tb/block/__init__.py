"""One block on any simulator: the harnesses (:mod:`.harness`, Amaranth in process) and the
cocotb runner and bench (Verilator or Icarus), every cycle checked by the one scoreboard."""
