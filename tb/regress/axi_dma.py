"""Random programs on each whole AXI DMA top under cocotbext-axi, against the model.

For each kind and simulator, :func:`main` runs ``--programs`` random programs
(:func:`~aiedma.tb.system.stream_programs.random_stream_program`: every channel of the
DMA busy) on ``aiedma_axi_dma_<kind>`` through the bench of
:mod:`aiedma.tb.block.axi_dma_bench`: BDs, controls and tasks written by an
``AxiLiteMaster``, each S2MM stream fed by an ``AxiStreamSource`` and each MM2S stream
taken by an ``AxiStreamSink``, with random pauses on every stream (``--pause``), then
every word and TLAST, the memory, the tokens and the registers compared with the model;
then the same number of programs with no pause, every word's cycle compared too; then
the same programs again while a host makes ``--ops`` random AXI4-Lite reads and writes
in each (the master's channels paused at ``--pause``), each response, each register
port access and each word read compared with the model's in its cycle; then, on a top
with an AXI4 master (the shim's), as many programs whose memory answers SLVERR for some
words (:func:`~.axi_dma_runner.bus_error_program`): the words, memory and status must
be the model's with a faulted read giving 0, a faulted write leaving its word, and
``error_dm_access_to_unavailable`` set on each channel that met one; then, on the core
and memory tiles, ``--memory-programs`` programs on ``aiedma_axi_dma_<kind>_mem``, the
top with its memory inside, each program's memory loaded and read back through its
``s_axil_mem`` slave (streams paused; the channels wait on the memory's banks, so words
and outcome are compared, not cycles). ``--passes`` picks among the five. One line per
kind, simulator and pass; status 1 on any mismatch. The shim's top reaches memory
through its AXI4 master (a cocotbext-axi ``AxiRam``), whose answers are not the model's
cycles: its pass without pauses compares words and outcome only, and its host pass is
skipped, with a line that says so; the other tops have no bus to answer with an error,
and skip the bus-error pass so; the shim has no memory inside, and skips that pass.
"""

from __future__ import annotations

import argparse

from ...hdl.axi_dma import MASTER_KINDS
from .axi_dma_runner import RUNS_ON, run_axi_bus_errors, run_axi_dma
from .axi_lite import add_common_options

__all__ = ["PASSES", "RUNS_ON", "main"]

PASSES = {"pauses": "under stream pauses", "timed": "every word's cycle too",
          "host": "a host's accesses while it runs",
          "errors": "its memory answering SLVERR",
          "memory": "with its memory inside, under stream pauses"}
"""The regression's passes: what each compares beyond every word and the outcome."""


def main(argv: list[str] | None = None) -> int:
    """Run the regression; print one line per kind, simulator and pause; 1 on a mismatch."""
    parser = argparse.ArgumentParser(prog="python -m aiedma.tb axi-dma",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--programs", type=int, default=200,
                        help="random programs per kind, with pauses and without (default 200)")
    parser.add_argument("--ops", type=int, default=50,
                        help="random AXI4-Lite accesses a host makes while each program runs, "
                             "in the host pass (default 50)")
    parser.add_argument("--memory-programs", type=int, default=5,
                        help="random programs per kind in the memory pass (default 5: each "
                             "loads and reads back its whole memory, 4,096 or 8,192 words, "
                             "through AXI4-Lite)")
    parser.add_argument("--passes", nargs="+", choices=PASSES, default=list(PASSES),
                        help="which passes to run (default: all five)")
    add_common_options(parser, RUNS_ON,
                       "probability of a pause per cycle on each stream's source and sink "
                       "(in the host pass: on each AXI4-Lite channel)")
    args = parser.parse_args(argv)
    failed = 0
    for simulator in args.sim:
        for kind in args.kinds:
            for name in args.passes:
                what = f"{simulator} {kind} {PASSES[name]}"
                if kind not in MASTER_KINDS and name == "errors":
                    print(f"{what}: skipped, its top has no AXI4 master (its memory ports "
                          f"are the DMA's own), so no bus answers with an error")
                    continue
                if kind in MASTER_KINDS and name == "host":
                    print(f"{what}: skipped, its top reaches memory through an AXI4 master, "
                          f"so its cycles are not the model's and a host's accesses have no "
                          f"cycle of the model's run to be compared in")
                    continue
                if kind in MASTER_KINDS and name == "memory":
                    print(f"{what}: skipped, its memory is outside, behind its AXI4 master")
                    continue
                if kind in MASTER_KINDS and name == "timed":
                    what = f"{simulator} {kind} without pauses (words and outcome: an AXI4 " \
                           f"master's memory is not cycle for cycle the model's)"
                if name == "errors":
                    result = run_axi_bus_errors(simulator, programs=args.programs,
                                                seed=args.seed, pause=args.pause)
                else:
                    options = {"pauses": {"pause": args.pause}, "timed": {"pause": 0.0},
                               "host": {"pause": 0.0, "ops": args.ops,
                                        "axil_pause": args.pause},
                               "memory": {"pause": args.pause, "memory": True}}[name]
                    programs = args.memory_programs if name == "memory" else args.programs
                    result = run_axi_dma(kind, simulator, programs=programs,
                                         seed=args.seed, **options)
                failed += bool(result["failed"])
                _report(result, what, args.seed)
    return 1 if failed else 0


def _report(result: dict, what: str, seed: int) -> None:
    """One line for a pass (and its first mismatches)."""
    mismatches = result["mismatches"]
    for program, line in mismatches[:5]:
        print(f"MISMATCH {what} seed {program}: {line}")
    if result["failed"] and not mismatches:
        print(f"FAIL {what}: {result.get('log', '')}")
    faults = f", {result['faults']} words answered SLVERR" if "faults" in result else ""
    host = (f", {result['host_ops']} host accesses ({result['host_reads']} register port "
            f"reads compared in their cycle)" if result["host_ops"] else "")
    print(f"AXI DMA, {what}: {result['programs']} programs (seeds {seed}-"
          f"{seed + result['programs'] - 1}), {result['mm2s_words']} MM2S and "
          f"{result['s2mm_words']} S2MM words, {result['register_writes']} register writes "
          f"and {result['register_reads']} reads{host}{faults}, {result['cycles']} cycles in "
          f"{result['seconds']:.1f} s; {len(mismatches)} mismatches")
