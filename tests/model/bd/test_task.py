"""Tasks: chains, repeat counts, iteration write-back, and their errors."""

import numpy as np
import pytest

from aiedma.model import BDError, BufferDescriptor, Task, run_task


def bd(kind="tile", **fields):
    return BufferDescriptor(kind, valid_bd=1, **fields)


def test_task_word_layout():
    assert Task(5, repeat_count=3, enable_token_issue=True).encode() == 1 << 31 | 2 << 16 | 5
    assert Task(0).encode() == 0


@pytest.mark.parametrize(("fields", "message"), [
    ({"start_bd": 0, "repeat_count": 0}, r"^repeat_count=0: must be in 1..256"),
    ({"start_bd": 0, "repeat_count": 257}, r"^repeat_count=257: must be in 1..256"),
    ({"start_bd": -1}, r"^start_bd=-1: must be in 0..63"),
])
def test_task_fields_are_checked(fields, message):
    with pytest.raises(BDError, match=message):
        Task(**fields)


def test_chain_runs_in_order_and_repeats():
    table = {2: bd(base_address=10, buffer_length=2, use_next_bd=1, next_bd=7),
             7: bd(base_address=50, buffer_length=1)}
    words, _ = run_task("tile", table, Task(2, repeat_count=2))
    assert words.tolist() == [10, 11, 50, 10, 11, 50]


def test_iteration_offsets_each_load_and_is_written_back():
    table = {0: bd(base_address=100, buffer_length=2, iteration_wrap=3, iteration_stepsize=10)}
    words, after = run_task("tile", table, Task(0, repeat_count=4))
    assert words.tolist() == [100, 101, 110, 111, 120, 121, 100, 101]
    assert after[0].iteration_current == 1
    assert table[0].iteration_current == 0, "the caller's table is not changed"


@pytest.mark.filterwarnings("ignore::aiedma.model.errors.UndocumentedBehaviourWarning")
def test_iteration_current_past_its_wrap_uses_its_offset_once_then_restarts():
    # mlir-aie's dma_to_npu_core_tile.mlir: current 42, wrap 29
    table = {0: bd(base_address=0, buffer_length=1, iteration_wrap=29, iteration_current=42,
                   iteration_stepsize=2, use_next_bd=1, next_bd=1),
             1: bd(base_address=1000, buffer_length=1, iteration_wrap=3, iteration_current=5,
                   iteration_stepsize=10)}
    words, after = run_task("tile", table, Task(0, repeat_count=40))
    loads = dict(table)
    want = []
    for _ in range(40):   # one load at a time, as a channel fetches them
        for n in (0, 1):
            want.append(int(loads[n].stream()[0]))
            loads[n] = loads[n].next_iteration()
    assert words.tolist() == want and want[:4] == [84, 1050, 0, 1000]
    assert after == loads and after[0].iteration_current == 39 % 29


@pytest.mark.parametrize(("table", "message"), [
    ({}, r"^bd_id=0: no such BD in the table"),
    ({0: BufferDescriptor("tile", buffer_length=1)}, r"valid_bd=0: a BD loaded by a task must"),
    ({0: bd(buffer_length=1, use_next_bd=1, next_bd=1), 1: bd(buffer_length=1, use_next_bd=1)},
     r"^next_bd=0: the chain loops back"),
])
def test_chain_errors(table, message):
    with pytest.raises(BDError, match=message):
        run_task("tile", table, Task(0))


def test_memtile_chain_stays_in_its_half():
    table = {23: bd("memtile", buffer_length=1, use_next_bd=1, next_bd=24),
             24: bd("memtile", buffer_length=1)}
    with pytest.raises(BDError, match=r"^next_bd=24: a memory-tile chain stays in its half"):
        run_task("memtile", table, Task(23))


def test_empty_bd_gives_no_words():
    words, _ = run_task("shim", {0: bd("shim")}, Task(0))
    assert words.dtype == np.int64 and words.size == 0
