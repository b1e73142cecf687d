"""The co-simulation regression behind ``make sim``: every kind, checked every cycle.

``python -m aiedma.tb.regress [--sim amaranth|verilator|icarus] [--bds N] [--seed S]``

Per kind: N random legal BDs back to back with ready held high (the throughput
run: words / cycles must be 1.000 after the fixed latency), the same BDs plus
empty ones under backpressure biased to stall on wrap and padding edges with an
idle producer now and then, the worked examples lowered by the BD layer and the
NPU-tested padding cases (memory tile), and the MM2S channel over a random
memory. Prints a summary and coverage; exits 1 on any mismatch.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..model.bd.descriptor import BufferDescriptor
from ..model.bd.fields import KINDS
from ..model.bd.lower import lower
from ..model.cycle.contract import ADDRGEN_LATENCY
from ..model.cycle.timing import addrgen_trace
from ..model.tiling.parameters import TilingParameters
from .coverage import Coverage
from .run import SIMULATORS, check_addrgen, check_mm2s
from .scoreboard import Mismatch
from .stimulus import random_bds, random_pattern, stall_pattern

__all__ = ["main"]

VECTORS = Path(__file__).resolve().parents[1] / "tests" / "data"


@dataclass
class Row:
    kind: str
    run: str
    bds: int = 0
    words: int = 0
    cycles: int = 0
    bubbles: int = 0
    mismatches: int = 0
    rate: float = 0.0


def _conformance_bds(vectors: Path) -> list[BufferDescriptor]:
    """The worked tiling examples lowered to memory-tile BDs, and the NPU padding BDs."""
    examples = json.loads((vectors / "tiling_examples.json").read_text())["examples"]
    hardware = json.loads((vectors / "hardware.json").read_text())
    bds = []
    for example in examples:
        direction = "write" if example["name"].endswith("write") else "read"
        lowered = lower([TilingParameters.from_dict(example["tiling"])], "memtile", direction)
        bds += [b.bd for b in lowered.bds]
    bds += [BufferDescriptor.from_dict(case["bd"]) for case in hardware["memtile_padding"]]
    return bds


def _run(rows, coverage, kind, name, bds, simulator, *, ready=None, offer=None, seed=None,
         waves=None, mm2s_memory=None) -> None:
    row = Row(kind, name)
    try:
        if mm2s_memory is None:
            result = check_addrgen(kind, bds, ready, simulator, offer=offer, seed=seed,
                                   waves=waves)
            coverage.add_run(bds, addrgen_trace(kind, bds, ready, offer))
        else:
            result = check_mm2s(kind, bds, mm2s_memory, ready, simulator, offer=offer,
                                seed=seed, waves=waves)
        s = result.summary
        row.bds, row.words, row.cycles, row.bubbles = s.bds, s.words, s.cycles, s.bubbles
        row.rate = result.cycles_per_second
    except Mismatch as error:
        row.bds, row.mismatches = len(bds), 1
        print(f"MISMATCH {kind} {name}: {error}", file=sys.stderr)
    rows.append(row)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sim", choices=SIMULATORS, default="amaranth")
    parser.add_argument("--bds", type=int, default=1000, help="random BDs per kind (default 1000)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--kinds", nargs="+", choices=KINDS, default=list(KINDS))
    parser.add_argument("--waves", action="store_true", help="write waveforms into build/waves/")
    parser.add_argument("--vectors", type=Path, default=VECTORS,
                        help="folder of tiling_examples.json and hardware.json")
    args = parser.parse_args(argv)

    rows: list[Row] = []
    coverages = []
    for k, kind in enumerate(args.kinds):
        seed = args.seed * 1000 + k
        rng = random.Random(seed)
        coverage = Coverage(kind)

        def waves(run: str, kind: str = kind) -> str | None:
            return f"build/waves/{args.sim}_{kind}_{run}.vcd" if args.waves else None

        bds = random_bds(kind, args.bds, seed)
        _run(rows, coverage, kind, "back-to-back", bds, args.sim, seed=seed,
             waves=waves("back_to_back"))
        mixed = random_bds(kind, args.bds, seed + 1, allow_empty=True)
        ready = stall_pattern(mixed, rng)
        offer = random_pattern(rng, len(ready), 0.05)
        _run(rows, coverage, kind, "backpressure", mixed, args.sim, ready=ready, offer=offer,
             seed=seed + 1, waves=waves("backpressure"))
        if kind == "memtile":
            if (args.vectors / "hardware.json").exists():
                _run(rows, coverage, kind, "lowered + NPU", _conformance_bds(args.vectors),
                     args.sim, seed=seed, waves=waves("conformance"))
            else:
                print(f"note: no vectors at {args.vectors}; lowered examples not run "
                      "(pass --vectors)")
        memory = np.random.default_rng(seed).integers(0, 1 << 32, size=4096)
        few = bds[: max(1, args.bds // 5)]
        _run(rows, coverage, kind, "mm2s", few, args.sim, ready=stall_pattern(few, rng),
             seed=seed, waves=waves("mm2s"), mm2s_memory=memory)
        coverages.append(coverage)

    print(f"co-simulation on {args.sim}, seed {args.seed}: RTL against the golden model, "
          "every cycle")
    print(f"{'kind':8} {'run':14} {'BDs':>6} {'words':>8} {'cycles':>8} {'bubbles':>8} "
          f"{'mismatches':>10} {'cycles/s':>9}")
    for r in rows:
        print(f"{r.kind:8} {r.run:14} {r.bds:6} {r.words:8} {r.cycles:8} {r.bubbles:8} "
              f"{r.mismatches:10} {r.rate:9.0f}")
    for r in rows:
        if r.run == "back-to-back" and not r.mismatches:
            ratio = r.words / (r.cycles - ADDRGEN_LATENCY)
            print(f"{r.kind}: words / cycles after the {ADDRGEN_LATENCY}-cycle latency, ready "
                  f"high: {ratio:.3f}")
    for coverage in coverages:
        print(coverage.report())
    failed = sum(r.mismatches for r in rows)
    print(f"{len(rows) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
