"""Every block on random BDs, co-simulated against the model every cycle (``make sim``).

``python -m aiedma.tb blocks [--sim amaranth|verilator|icarus] [--bds N] [--seed S]
[--seeds N] [--scheduler tcp://host:port]``

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

from ...model.bd.descriptor import BufferDescriptor
from ...model.bd.fields import KINDS
from ...model.bd.lower import lower
from ...model.cycle.contract import ADDRGEN_LATENCY
from ...model.cycle.timing import addrgen_trace
from ...model.tiling.parameters import TilingParameters
from ..block.harness import RUNS_ON, check_addrgen, check_mm2s
from ..common.coverage import Coverage
from ..common.scoreboard import Mismatch
from ..common.shards import ShardResult, run_shards, shard_seed
from ..common.stimulus import random_bds, random_pattern, stall_pattern

__all__ = ["main"]

VECTORS = Path(__file__).resolve().parents[2] / "tests" / "data"


@dataclass
class Row:
    kind: str
    run: str
    seed: int = 0
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
    row = Row(kind, name, seed or 0)
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


def regress_kind(seed: int, kind: str, bds_count: int, simulator: str, waves_on: bool,
                 vectors: str) -> tuple[list[Row], Coverage]:
    """One shard: every run of one kind from one seed; its rows and its coverage."""
    vectors_path = Path(vectors)
    rows: list[Row] = []
    rng = random.Random(seed)
    coverage = Coverage(kind)

    def waves(run: str) -> str | None:
        return f"build/waves/{simulator}_{kind}_{seed}_{run}.vcd" if waves_on else None

    bds = random_bds(kind, bds_count, seed)
    _run(rows, coverage, kind, "back-to-back", bds, simulator, seed=seed,
         waves=waves("back_to_back"))
    mixed = random_bds(kind, bds_count, seed + 1, allow_empty=True)
    ready = stall_pattern(mixed, rng)
    offer = random_pattern(rng, len(ready), 0.05)
    _run(rows, coverage, kind, "backpressure", mixed, simulator, ready=ready, offer=offer,
         seed=seed + 1, waves=waves("backpressure"))
    if kind == "memtile":
        if (vectors_path / "hardware.json").exists():
            _run(rows, coverage, kind, "lowered + NPU", _conformance_bds(vectors_path),
                 simulator, seed=seed, waves=waves("conformance"))
        else:
            print(f"note: no vectors at {vectors_path}; lowered examples not run "
                  "(pass --vectors)")
    memory = np.random.default_rng(seed).integers(0, 1 << 32, size=4096)
    few = bds[: max(1, bds_count // 5)]
    _run(rows, coverage, kind, "mm2s", few, simulator, ready=stall_pattern(few, rng),
         seed=seed, waves=waves("mm2s"), mm2s_memory=memory)
    return rows, coverage


def main(argv: list[str] | None = None) -> int:
    """Run every kind; print the table, the throughput and the coverage; 1 on a mismatch."""
    parser = argparse.ArgumentParser(prog="python -m aiedma.tb blocks",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--sim", choices=RUNS_ON, default="amaranth")
    parser.add_argument("--bds", type=int, default=1000, help="random BDs per kind (default 1000)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--kinds", nargs="+", choices=KINDS, default=list(KINDS))
    parser.add_argument("--waves", action="store_true", help="write waveforms into build/waves/")
    parser.add_argument("--vectors", type=Path, default=VECTORS,
                        help="folder of tiling_examples.json and hardware.json")
    parser.add_argument("--seeds", type=int, default=1,
                        help="shards per kind, each from its own seed (default 1)")
    parser.add_argument("--scheduler", default=None,
                        help="Dask scheduler address (tcp://host:port) to run the shards on")
    parser.add_argument("--workers", type=int, default=None,
                        help="workers of the local Dask cluster (default: every core)")
    parser.add_argument("--local", action="store_true",
                        help="run every shard in this process, one after another (no Dask)")
    args = parser.parse_args(argv)
    if args.seeds < 1:
        parser.error(f"--seeds={args.seeds}: must be at least 1")
    calls = [(shard_seed(args.seed, k, i), kind, args.bds, args.sim, args.waves,
              str(args.vectors))
             for i in range(args.seeds) for k, kind in enumerate(args.kinds)]
    if args.local or (len(calls) == 1 and args.scheduler is None):
        results = [_local(call) for call in calls]
    else:
        results = run_shards(regress_kind, calls, scheduler=args.scheduler,
                             workers=args.workers)
    rows: list[Row] = []
    coverages = []
    for result in results:
        if result.failed:
            rows.append(Row("?", "shard", result.seed, mismatches=1))
            print(f"FAILED shard seed {result.seed}: {result.error}", file=sys.stderr)
            continue
        shard_rows, coverage = result.value
        rows += shard_rows
        coverages.append(coverage)

    print(f"co-simulation on {args.sim}, seed {args.seed}, {len(calls)} shard(s): RTL against "
          "the golden model, every cycle")
    print(f"{'kind':8} {'run':14} {'seed':>7} {'BDs':>6} {'words':>8} {'cycles':>8} "
          f"{'bubbles':>8} {'mismatches':>10} {'cycles/s':>9}")
    for r in rows:
        print(f"{r.kind:8} {r.run:14} {r.seed:7} {r.bds:6} {r.words:8} {r.cycles:8} "
              f"{r.bubbles:8} {r.mismatches:10} {r.rate:9.0f}")
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


def _local(call: tuple):
    """One shard in this process, as :func:`~aiedma.tb.common.shards.run_shards` would give it."""
    return ShardResult(call[0], regress_kind(*call))

