"""The public RTL runners, the scoreboard's failure reports, coverage and the regression."""

import random
import threading

import numpy as np
import pytest

import aiedma.tb.block.harness as tb_run
from aiedma.model import AiedmaError, BufferDescriptor
from aiedma.model.cycle.contract import ADDRESS_BITS, ADDRGEN_LATENCY, MM2S_LATENCY
from aiedma.model.cycle.timing import addrgen_trace, mm2s_trace
from aiedma.tb.block.harness import check_addrgen, check_mm2s, run_addrgen, run_mm2s
from aiedma.tb.common.coverage import Coverage
from aiedma.tb.common.scoreboard import Mismatch
from aiedma.tb.common.stimulus import random_bds, random_pattern, stall_pattern
from aiedma.tb.regress import blocks

NPU_1D = BufferDescriptor("memtile", buffer_length=16, d0_wrap=13, d0_zero_before=2,
                          d0_zero_after=1, valid_bd=1)


@pytest.mark.parametrize("kind", ["tile", "memtile", "shim"])
def test_random_back_to_back_bds_one_word_per_cycle(kind):
    bds = random_bds(kind, 40, seed=11)
    result = check_addrgen(kind, bds, seed=11)
    expected = [(max(a, 0), a < 0, j == bd.buffer_length - 1)
                for bd in bds for j, a in enumerate(bd.stream().tolist())]
    mask = (1 << ADDRESS_BITS[kind]) - 1
    assert result.beats == [(a & mask, z, lst) for a, z, lst in expected]
    assert result.summary.bubbles == 0
    assert result.summary.cycles == result.summary.words + ADDRGEN_LATENCY


def test_backpressure_and_idle_producer_keep_the_beats():
    bds = random_bds("memtile", 30, seed=5, allow_empty=True)
    rng = random.Random(5)
    ready = stall_pattern(bds, rng)
    offer = random_pattern(rng, len(ready), 0.3)
    held = run_addrgen("memtile", bds)
    assert check_addrgen("memtile", bds, ready, offer=offer, seed=5).beats == held


def test_mm2s_channel_sends_memory_words_and_zero_padding():
    memory = np.arange(100, 100 + 64)
    words = run_mm2s("memtile", [NPU_1D], memory)
    assert [w for w, _ in words] == [0, 0, *range(100, 113), 0]
    assert [last for _, last in words] == [False] * 15 + [True]
    stalled = run_mm2s("memtile", [NPU_1D], memory, ready=[True, False] * 30)
    assert stalled == words


def test_a_model_difference_is_reported_with_cycle_bd_counters_and_seed(monkeypatch):
    """The RTL runs the real BD; the model is told the base address is 1 higher."""
    shifted = NPU_1D.replace(base_address=1)
    monkeypatch.setattr(tb_run, "addrgen_trace",
                        lambda kind, bds, ready, offer: addrgen_trace(kind, [shifted], ready,
                                                                      offer))
    with pytest.raises(Mismatch) as caught:
        check_addrgen("memtile", [NPU_1D], seed=1234)
    message = str(caught.value)
    # The first data word comes after the latency and two zero words.
    assert f"cycle {ADDRGEN_LATENCY + 2}:" in message
    assert "beat (address, zero, last) = (0, False, False), model (1, False, False)" in message
    assert "BD 0 of 1" in message and "counters {'d0': 2" in message
    assert "replay with seed=1234" in message


def test_mm2s_difference_is_reported(monkeypatch):
    """The RTL reads memory; the model is told every word is 1 higher."""
    memory = np.arange(64)
    monkeypatch.setattr(tb_run, "mm2s_trace", lambda kind, bds, mem, ready, offer:
                        mm2s_trace(kind, bds, mem + 1, ready, offer))
    # Zero words read nothing (0 on both sides): the first data word differs, one
    # cycle of read latency after its beat (two zero beats after the first).
    cycle = ADDRGEN_LATENCY + 2 + MM2S_LATENCY
    with pytest.raises(Mismatch, match=rf"MM2S channel, cycle {cycle}: word \(data, last\) = "
                                       r"\(0x00000000, False\), model \(0x00000001, False\)"):
        check_mm2s("memtile", [NPU_1D], memory, seed=9)


def test_a_reused_simulation_is_reset_between_runs_and_dropped_after_a_mismatch(monkeypatch):
    """The harness runs each block from one elaboration per process: a run after another
    (a long one, left under backpressure) sees the block and its memory port afresh, as a
    block built for it would, and a run stopped by a mismatch is not reused."""
    memory = np.arange(100, 164)
    first = check_mm2s("memtile", random_bds("memtile", 8, seed=3, allow_empty=True),
                       np.arange(64), ready=[True, False] * 200, seed=3)
    key = ("mm2s", "memtile", threading.get_ident())
    reused = tb_run.ReusedSimulation.cache[key]
    assert first.summary.words > 0
    again = check_mm2s("memtile", [NPU_1D], memory, seed=4)
    assert tb_run.ReusedSimulation.cache[key] is reused
    assert [w for w, _ in again.beats] == [0, 0, *range(100, 113), 0]
    assert again.summary.cycles == ADDRGEN_LATENCY + MM2S_LATENCY + 16   # from reset
    monkeypatch.setattr(tb_run, "mm2s_trace", lambda kind, bds, mem, ready, offer:
                        mm2s_trace(kind, bds, mem + 1, ready, offer))
    with pytest.raises(Mismatch):
        check_mm2s("memtile", [NPU_1D], memory)
    assert key not in tb_run.ReusedSimulation.cache
    monkeypatch.undo()
    assert check_mm2s("memtile", [NPU_1D], memory).beats == again.beats


@pytest.mark.parametrize(("call", "message"), [
    (lambda: run_addrgen("tile", [NPU_1D]),
     r"bds\[0\]=.*must be a BufferDescriptor of kind 'tile'"),
    (lambda: run_addrgen("tile", [], simulator="modelsim"),
     r"simulator='modelsim': must be one of"),
])
def test_bad_runner_input(call, message):
    with pytest.raises(AiedmaError, match=message):
        call()


def test_coverage_bins_are_counted_from_the_run():
    cov = Coverage("memtile")
    assert cov.missed() == cov.bins  # nothing before a run
    bd = BufferDescriptor("memtile", buffer_length=64, d0_wrap=2, d1_wrap=2, d2_wrap=2,
                          d0_zero_before=1, valid_bd=1)
    cov.add_run([bd], addrgen_trace("memtile", [bd], ready=[True] * 4 + [False, True] * 40))
    assert cov.hits["d0_wrap 2"] == 1 and cov.hits["d0_zero_before 1"] == 1
    assert cov.hits["dimensions in use: 4"] == 1
    assert cov.hits["simultaneous wraps: 3+"] > 0  # D0, D1 and D2 wrap together
    assert cov.hits["stall on a wrap cycle"] > 0
    assert "d0_wrap max" in cov.missed()


def test_short_regression_passes_and_reports(capsys):
    assert blocks.main(["--bds", "25", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    for kind in ("tile", "memtile", "shim"):
        assert (f"{kind}: words / cycles after the {ADDRGEN_LATENCY}-cycle latency, "
                "ready high: 1.000") in out
    assert "lowered + NPU" in out
    assert out.rstrip().endswith("10 passed, 0 failed")
