"""Flows around the blocks: Verilog export and lint, FPGA synthesis, benchmarks, examples.

Owns: ``make verilog`` (:mod:`.verilog`), ``make fpga`` (:mod:`.fpga`,
:mod:`.pin_harness`), ``make bench`` (:mod:`.bench`, :mod:`.model_bench`,
:mod:`.machine`) and the example graphs ``make sim`` ends with
(:mod:`.graph_examples`).
May import: :mod:`aiedma.model`, :mod:`aiedma.hdl`, :mod:`aiedma.tb`.
"""
