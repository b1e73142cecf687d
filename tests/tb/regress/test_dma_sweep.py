"""The bulk task-program sweep (tb/regress/dma_sweep.py): shards, merged summary, failing seeds."""

import pytest

from aiedma.tb.common.shards import run_shards
from aiedma.tb.regress import dma_sweep
from aiedma.tb.system.random_programs import random_program


def test_shards_cover_the_tasks_with_consecutive_seeds():
    calls = dma_sweep.shard_calls(["memtile", "tile"], 10, 7, 3, "verilator")
    # 10 tasks -> 3 memory-tile programs of 4 tasks (seeds 7..9, one a shard) and 4
    # core-tile programs of 3 (seeds 7..10 split 2/1/1)
    assert calls == [(7, "memtile", 1, "verilator"), (8, "memtile", 1, "verilator"),
                     (9, "memtile", 1, "verilator"), (7, "tile", 2, "verilator"),
                     (9, "tile", 1, "verilator"), (10, "tile", 1, "verilator")]


def test_a_sweep_on_dask_merges_its_shards():
    # the core tile: its block builds in a fifth of the memory tile's time
    calls = dma_sweep.shard_calls(["tile"], 12, 1, 2, "verilator")
    results = run_shards(dma_sweep.dma_shard, calls, workers=2, processes=False)
    (row,) = dma_sweep.summarise(results)
    assert (row["kind"], row["shards"], row["programs"], row["tasks"]) == ("tile", 2, 4, 12)
    assert row["mismatches"] == 0 and row["cycles"] > 0


def test_a_failing_program_is_reported_by_its_seed(monkeypatch):
    check = dma_sweep.check_program_channels

    def broken(program, simulator, **options):
        if program.seed == 3:
            raise AssertionError("seed=3: the sink's words or their cycles differ")
        return check(program, simulator, **options)

    monkeypatch.setattr(dma_sweep, "check_program_channels", broken)
    result = dma_sweep.dma_shard(2, "tile", 3, "verilator")
    assert result["mismatches"] == 1 and result["programs"] == 3
    assert result["failed"] == [(3, "seed=3: the sink's words or their cycles differ")]


def test_bad_task_count_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as stop:
        dma_sweep.main(["--tasks", "0"])
    assert stop.value.code == 2
    assert "--tasks=0: must be at least 1" in capsys.readouterr().err


@pytest.mark.parametrize("kind", ["tile", "memtile", "shim"])
def test_a_programs_task_count_is_what_its_build_queues(kind):
    # The sweep counts tasks without building the program a second time.
    for seed in range(1, 4):
        program = random_program(seed, kind)
        _, channels, _, _ = program.build()
        assert program.place.tasks == sum(len(channel.queue) for channel in channels)
