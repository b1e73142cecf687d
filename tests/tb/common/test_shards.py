"""Sweeps sharded by seed on Dask: a local cluster of two workers, results merged.

The shards run on a :class:`~dask.distributed.LocalCluster` of two thread workers
(``processes=False``: the test stays small); a real bulk sweep of two shards per run
on Icarus is merged into one summary, and a failing shard reports its seed.
"""

from __future__ import annotations

import pytest

from aiedma.tb.common.shards import SHARD_SEED_STEP, run_shards, shard_seed, shard_sizes
from aiedma.tb.regress.verilog_bulk import bulk_shard, shard_calls, summarise

pytest.importorskip("dask.distributed", reason="dask[distributed] is the dist extra "
                    "(make setup installs it)")


def square_unless_13(seed: int, offset: int) -> int:
    if seed == 13:
        raise ValueError("thirteen refused")
    return seed * seed + offset


def test_results_in_order_and_a_failing_shard_names_its_seed():
    seeds = [3, 13, 5, 8]
    seen = []
    results = run_shards(square_unless_13, [(s, 1) for s in seeds], workers=2,
                         processes=False, on_result=seen.append)
    assert [r.seed for r in results] == seeds
    assert [r.value for r in results if not r.failed] == [10, 26, 65]
    (bad,) = [r for r in results if r.failed]
    assert bad.seed == 13 and "ValueError: thirteen refused" in bad.error
    assert sorted(r.seed for r in seen) == sorted(seeds)


def test_bulk_shards_merge_into_one_summary(tmp_path):
    calls = shard_calls(["tile"], ["high", "stall"], 61, 4, 2, "icarus", tmp_path)
    assert [c[0] for c in calls] == [4000, 4000 + SHARD_SEED_STEP] * 2
    assert [c[3] for c in calls] == [31, 30, 31, 30]
    broken = (777, "tile", "high", 5, "no-such-simulator", str(tmp_path))
    results = run_shards(bulk_shard, [*calls, broken], workers=2, processes=False)
    rows = summarise(results)
    by_ready = {(r["kind"], r["ready"]): r for r in rows}
    for ready in ("high", "stall"):
        row = by_ready["tile", ready]
        assert row["shards"] == 2 and row["bds"] == 61 and row["mismatches"] == 0
        shard_values = [r.value for r in results if not r.failed and r.value["ready"] == ready]
        assert row["compared"] == sum(v["compared"] for v in shard_values) == row["cycles"]
    (failed,) = [r for r in rows if r["failed"]]
    assert failed["failed"][0][0] == 777
    assert "simulator='no-such-simulator': must be one of verilator, icarus" \
        in failed["failed"][0][1]


def test_regression_shards_by_seed_on_a_local_cluster(capsys):
    """``tb/regress/blocks.py --seeds 2``: two shards of one kind on two workers, one summary."""
    from aiedma.tb.regress import blocks

    assert blocks.main(["--sim", "amaranth", "--bds", "2", "--kinds", "shim", "--seeds", "2",
                         "--workers", "2"]) == 0
    out = capsys.readouterr().out
    assert "2 shard(s)" in out
    for seed in (1000, 101_000):   # kind 0 of --kinds, seed 1: shards 0 and 1
        assert f"back-to-back   {seed:7}" in out
    assert "6 passed, 0 failed" in out


def test_each_kind_and_shard_has_its_own_seed():
    assert shard_seed(1, 0) == 1000            # shard 0: the unsharded run's seed
    assert shard_seed(2, 1, 3) == 2001 + 3 * SHARD_SEED_STEP == 302_001


@pytest.mark.parametrize(("total", "shards", "sizes"), [
    (10, 3, [4, 3, 3]),
    (2, 5, [1, 1]),          # never an empty shard
    (0, 4, []),
    (6, 1, [6]),
])
def test_shard_sizes_split_evenly_the_larger_first(total, shards, sizes):
    assert shard_sizes(total, shards) == sizes
    assert sum(shard_sizes(total, shards)) == total


def test_shard_sizes_needs_a_shard():
    with pytest.raises(ValueError, match=r"^shards=0: must be at least 1$"):
        shard_sizes(5, 0)
