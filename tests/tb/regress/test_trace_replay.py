"""Closed-loop RTL runs replayed on Icarus (tb/regress/trace_replay.py): every port, every cycle."""

import dataclasses

import pytest

from aiedma.tb.regress import trace_replay
from aiedma.tb.regress.trace_replay import recording, replay_icarus
from aiedma.tb.system.dma_check import check_program_channels
from aiedma.tb.system.loop_verilator import top_verilog, verilog_ports
from aiedma.tb.system.random_programs import random_program


@pytest.fixture(scope="module")
def recorded():
    """Three random core-tile programs on the whole RTL DMA in the loop on Verilator (the
    memory tile's block takes five times as long to build; make sim replays its programs)."""
    with recording() as record:
        for seed in (1, 2, 3):
            check_program_channels(random_program(seed, "tile"), "verilator", lockstep=True)
    return record.by_top()


def test_the_recorded_runs_replay_on_icarus_without_a_mismatch(recorded):
    assert list(recorded) == ["aiedma_dma_tile_c0_r2"]   # one DMA block, all channels
    for segments in recorded.values():
        result = replay_icarus(segments)
        assert result.passed, result.mismatch
        assert result.segments == 3 and result.cycles == sum(len(s.rows) for s in segments)


def _names(top):
    return [n for _, n, _ in verilog_ports(top_verilog(top), top) if n != "clk"]


def test_a_wrong_expected_output_is_named_with_its_cycle(recorded):
    top, segments = next(iter(recorded.items()))
    token = _names(top).index("mm2s__0__token")
    first = segments[0]
    rows = list(first.rows)
    cycle = len(rows) // 2
    row = list(rows[cycle])
    row[token] ^= 1
    rows[cycle] = tuple(row)
    result = replay_icarus([dataclasses.replace(first, rows=rows)])
    assert not result.passed
    assert result.mismatch == (f"segment 0, cycle {cycle}: mm2s__0__token expected "
                               f"{row[token]:#x} got {row[token] ^ 1:#x}")


def test_a_changed_input_changes_what_the_rtl_does(recorded):
    # a BD word written differently: the channel then moves other words or flags an
    # error, and the replay finds the first output that differs
    top, segments = next(iter(recorded.items()))
    names = _names(top)
    write, data = names.index("reg_write"), names.index("reg_wdata")
    rows = list(segments[0].rows)
    k = next(i for i, r in enumerate(rows) if r[write] and r[data])
    row = list(rows[k])
    row[data] ^= 0x3      # the first nonzero BD word, low bits changed
    rows[k] = tuple(row)
    result = replay_icarus([dataclasses.replace(segments[0], rows=rows)])
    assert not result.passed and "expected" in result.mismatch


def test_missing_icarus_is_a_clear_error(recorded, monkeypatch):
    monkeypatch.setattr(trace_replay.shutil, "which", lambda tool: None)
    with pytest.raises(trace_replay.ToolMissing, match="make setup installs it"):
        replay_icarus(next(iter(recorded.values())))
