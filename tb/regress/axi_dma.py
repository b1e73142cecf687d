"""Random programs on each whole AXI DMA top under cocotbext-axi, against the model.

For each kind and simulator, :func:`main` runs ``--programs`` random programs
(:func:`~aiedma.tb.system.stream_programs.random_stream_program`: every channel of the
DMA busy) on ``aiedma_axi_dma_<kind>`` through the bench of
:mod:`aiedma.tb.block.axi_dma_bench`: BDs, controls and tasks written by an
``AxiLiteMaster``, each S2MM stream fed by an ``AxiStreamSource`` and each MM2S stream
taken by an ``AxiStreamSink``, with random pauses on every stream (``--pause``), then
every word and TLAST, the memory, the tokens and the registers compared with the model;
then the same number of programs with no pause, every word's cycle compared too. One
line per kind, simulator and pause; status 1 on any mismatch.
"""

from __future__ import annotations

import argparse

from .axi_dma_runner import RUNS_ON, run_axi_dma
from .axi_lite import add_common_options

__all__ = ["RUNS_ON", "main"]


def main(argv: list[str] | None = None) -> int:
    """Run the regression; print one line per kind, simulator and pause; 1 on a mismatch."""
    parser = argparse.ArgumentParser(prog="python -m aiedma.tb axi-dma",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--programs", type=int, default=200,
                        help="random programs per kind, with pauses and without (default 200)")
    add_common_options(parser, RUNS_ON,
                       "probability of a pause per cycle on each stream's source and sink")
    args = parser.parse_args(argv)
    failed = 0
    for simulator in args.sim:
        for kind in args.kinds:
            for pause in (args.pause, 0.0):
                result = run_axi_dma(kind, simulator, programs=args.programs,
                                     seed=args.seed, pause=pause)
                mismatches = result["mismatches"]
                failed += bool(result["failed"])
                for seed, line in mismatches[:5]:
                    print(f"MISMATCH {simulator} {kind} pause {pause} seed {seed}: {line}")
                if result["failed"] and not mismatches:
                    print(f"FAIL {simulator} {kind} pause {pause}: {result.get('log', '')}")
                timing = "every word's cycle too" if pause == 0 else f"pause {pause}"
                print(f"AXI {kind} DMA on {simulator} ({timing}): {result['programs']} "
                      f"programs (seeds {args.seed}-{args.seed + args.programs - 1}), "
                      f"{result['mm2s_words']} MM2S and {result['s2mm_words']} S2MM words, "
                      f"{result['register_writes']} register writes and "
                      f"{result['register_reads']} reads, {result['cycles']} cycles in "
                      f"{result['seconds']:.1f} s; {len(mismatches)} mismatches")
    return 1 if failed else 0
