"""Whole DMA channels in RTL (task queue, BD table, fetch, engine, locks, packets, tokens)
run random task programs inside the system model exactly as the model channels do."""

import pytest
from hdl_mutants import BubblyGate

from aiedma.hdl import channel as hdl_channel
from aiedma.tb.dma_run import check_program_channels, register_writes
from aiedma.tb.loop_random import random_program


@pytest.mark.parametrize("seed", range(1, 9))
def test_random_programs_on_whole_rtl_channels_equal_the_model(seed):
    check_program_channels(random_program(seed))


def test_the_programs_exercise_tokens_packets_and_chains():
    drawn = [random_program(seed) for seed in range(1, 9)]
    assert any(any(p.tokens) for p in drawn)
    assert any(bd.enable_packet for p in drawn for bd in p.reads)
    assert any(bd.use_next_bd for p in drawn for bd in p.reads)


def test_the_program_is_loaded_through_the_register_map():
    program = random_program(3)
    _, channels, dma, _ = program.build()
    writes = register_writes(channels[0])
    # Memory-tile BD n word w at 0xA0000 + 0x20 n + 4 w; MM2S 0's start queue at 0xA0634.
    assert (0xA0000, dma.bds[0].encode()[0]) in writes
    assert writes[-1] == (0xA0634, channels[0].queue[0].encode())


def test_a_bubble_at_a_chain_boundary_in_the_rtl_channel_is_caught(monkeypatch):
    seed = next(s for s in range(1, 40)
                if sum(bd.use_next_bd for bd in random_program(s).reads) >= 1)
    monkeypatch.setattr(hdl_channel, "LockGate", BubblyGate)
    with pytest.raises(AssertionError, match=rf"^seed={seed}: "):
        check_program_channels(random_program(seed))
