"""Short sweeps on processes forked from the test's (tb/common/shards.py, run_forked):
results in the order of the calls, a failing call named by its seed, and the whole-DMA
programs' shards giving what they give in this process."""

from __future__ import annotations

import os

import pytest

from aiedma.tb.common.shards import run_forked
from aiedma.tb.regress import dma_programs
from aiedma.tb.regress.dma_sweep import dma_shard


def pid_unless_13(seed: int, offset: int) -> tuple[int, int]:
    if seed == 13:
        raise ValueError("thirteen refused")
    return seed + offset, os.getpid()


def test_results_in_order_from_other_processes_and_a_failure_names_its_seed():
    seeds = [3, 13, 5, 8]
    results = run_forked(pid_unless_13, [(s, 1) for s in seeds], jobs=2)
    assert [r.seed for r in results] == seeds
    assert [r.value[0] for r in results if not r.failed] == [4, 6, 9]
    assert all(r.value[1] != os.getpid() for r in results if not r.failed)
    (bad,) = [r for r in results if r.failed]
    assert bad.seed == 13 and "ValueError: thirteen refused" in bad.error


def test_one_job_runs_here():
    (result,) = run_forked(pid_unless_13, [(2, 0)], jobs=4)
    assert result.value == (2, os.getpid())


def test_whole_dma_programs_forked_give_what_they_give_here():
    calls = [(1, "tile", 3, "verilator"), (4, "tile", 3, "verilator")]
    here = [dma_shard(*call) for call in calls]
    forked = run_forked(dma_shard, calls, jobs=2)
    for mine, theirs in zip(here, forked, strict=True):
        assert theirs.value["mismatches"] == mine["mismatches"] == 0
        assert (theirs.value["cycles"], theirs.value["tasks"]) == (mine["cycles"], mine["tasks"])
        assert theirs.value["cycles"] > 0


@pytest.mark.parametrize("jobs", [0, -2])
def test_fewer_than_one_job_is_refused(jobs):
    with pytest.raises(ValueError, match=rf"jobs={jobs}: must be at least 1"):
        run_forked(pid_unless_13, [(2, 0)], jobs=jobs)


@pytest.mark.parametrize(("argv", "rule"), [
    (["--jobs", "0"], "--jobs=0: must be at least 1 (left out: every core)"),
    (["--jobs", "-1"], "--jobs=-1: must be at least 1 (left out: every core)"),
    (["--programs", "0"], "--programs=0: must be at least 1"),
])
def test_the_dma_programs_regression_refuses_counts_below_one(argv, rule, capsys):
    with pytest.raises(SystemExit) as stop:
        dma_programs.main(["--sim", "verilator", "--kinds", "tile", *argv])
    assert stop.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1].endswith(f"error: {rule}")
