"""The AXI4-Lite register slave of each whole DMA under cocotb: random and directed tests.

For each kind and simulator, :func:`main` runs the bench of
:mod:`aiedma.tb.block.axi_lite_bench` on ``aiedma_axi_dma_<kind>``: ``--transactions``
random reads and writes (registers of every role, unmapped and unaligned addresses,
partial strobes) back to back under random pauses on all five AXI channels, each
response and word compared with the golden model, then the directed tests of each
error rule and the back-to-back count. One line per kind and simulator; status 1 on any
failure.
"""

from __future__ import annotations

import argparse

from ...model.arch.kinds import KINDS
from ..block.axi_lite_runner import BENCH_TESTS, RUNS_ON, run_axi_lite

__all__ = ["RUNS_ON", "add_common_options", "main"]


def add_common_options(parser: argparse.ArgumentParser, runs_on: tuple[str, ...],
                       pause_help: str) -> None:
    """The options the AXI regressions share: ``--seed``, ``--pause``, ``--sim``, ``--kinds``."""
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--pause", type=float, default=0.3, help=pause_help)
    parser.add_argument("--sim", nargs="+", choices=runs_on, default=["verilator"])
    parser.add_argument("--kinds", nargs="+", choices=KINDS, default=list(KINDS))


def main(argv: list[str] | None = None) -> int:
    """Run the regression; print one line per kind and simulator; 1 on any failure."""
    parser = argparse.ArgumentParser(prog="python -m aiedma.tb axi-lite",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--transactions", type=int, default=10_000,
                        help="random transactions per kind (default 10000)")
    add_common_options(parser, RUNS_ON, "probability of a pause per cycle on each AXI channel")
    args = parser.parse_args(argv)
    failed = 0
    for simulator in args.sim:
        for kind in args.kinds:
            lines = []
            for test in BENCH_TESTS:
                result = run_axi_lite(kind, simulator, test, transactions=args.transactions,
                                      seed=args.seed, pause=args.pause)
                if result["failed"]:
                    failed += 1
                    print(f"FAIL {simulator} {kind} {test}: "
                          f"{'; '.join(result['failures'][:5]) or result.get('log', '')}")
                lines.append((test, result))
            fuzz = dict(lines)["axi_lite_fuzz"]
            b2b = dict(lines)["back_to_back_one_a_cycle"]
            print(f"AXI4-Lite slave of the {kind} DMA on {simulator}: "
                  f"{fuzz['transactions']} random transactions (seed {args.seed}) in "
                  f"{fuzz['cycles']} cycles, {fuzz['seconds']:.1f} s "
                  f"({fuzz['transactions_per_second']:.0f}/s); 64 writes in "
                  f"{b2b.get('writes_cycles')} cycles, 64 reads in {b2b.get('reads_cycles')}; "
                  f"{sum(r['failed'] for _, r in lines)} of {len(lines)} tests failed")
    return 1 if failed else 0
