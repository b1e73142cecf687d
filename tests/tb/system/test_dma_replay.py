"""The whole RTL DMA checked by replay of the model's run: it agrees where the loop run
agrees, and a difference in a word, a lock or the end of the run is reported at its cycle."""

import re

import numpy as np
import pytest

from aiedma.model.system.scheduler import run_system
from aiedma.tb.system.dma_block import RtlDmaAgent
from aiedma.tb.system.dma_check import check_program_channels
from aiedma.tb.system.dma_replay import DmaRecorder, replay_dma, replayable
from aiedma.tb.system.random_programs import random_program


def recorded_program(seed, kind="shim"):
    """A program's model run, recorded, with the block made before it ran."""
    agents, channels, dma, _ = random_program(seed, kind).build()
    block = RtlDmaAgent(dma, channels, "verilator")
    recorder = DmaRecorder(channels)
    run_system(agents, exact=True)
    return block, channels, recorder.finish()


def test_the_replay_and_the_loop_run_agree_on_a_program():
    program = random_program(2, "shim")
    _, _, dma, _ = program.build()
    assert replayable(dma)
    assert (check_program_channels(program, "verilator").cycles
            == check_program_channels(program, "verilator", lockstep=True).cycles)


def test_a_wrong_word_in_the_recording_is_reported_at_its_cycle():
    block, channels, recorded = recorded_program(3)
    reader = next(k for k, ch in enumerate(channels) if ch.name.endswith("mm2s0"))
    cycle = int(np.flatnonzero(recorded[reader]["moved"])[2])
    recorded[reader]["payload"][cycle] ^= 1
    with pytest.raises(AssertionError, match=rf"^seed=3: the RTL DMA differs from the model in "
                                             rf"cycle {cycle}: mm2s\.0\.o\.payload "
                                             rf"\({re.escape(channels[reader].name)}, BD \d+\) "):
        replay_dma(block, channels, recorded, [0] * 16, "seed=3")


def test_a_wrong_lock_value_is_reported_after_the_run():
    block, channels, recorded = recorded_program(3)
    with pytest.raises(AssertionError, match=r"reading its locks back \(2 cycles on\): "
                                             r"reg_rdata RTL 0x0 model 0x5$"):
        replay_dma(block, channels, recorded, [0, 5] + [0] * 14, "seed=3")
