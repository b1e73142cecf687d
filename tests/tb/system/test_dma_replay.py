"""The whole RTL DMA checked by replay of the model's run: it agrees where the loop run
agrees, and a difference in a word, a lock or the end of the run is reported at its cycle."""

import re

import numpy as np
import pytest

from aiedma.model.arch.kinds import DEFAULT_ROW
from aiedma.model.arch.registers import STATUS_FIELDS, start_queue_address
from aiedma.model.bd.descriptor import BufferDescriptor
from aiedma.model.bd.task import Task
from aiedma.model.system.registers import apply_writes
from aiedma.model.system.scheduler import DeadlockError, run_system
from aiedma.model.system.stream import Stream, StreamSink
from aiedma.tb.system.dma_block import RtlDmaAgent
from aiedma.tb.system.dma_check import check_program_channels
from aiedma.tb.system.dma_replay import DmaRecorder, replay_dma, replayable
from aiedma.tb.system.random_programs import bd_table_writes, program_dma, random_program


# The core tile's whole DMA: make test Verilates it for the sweeps too (the shim's is a
# build of its own, left to make sim's tests).
def recorded_program(seed, kind="tile"):
    """A program's model run, recorded, with the block made before it ran."""
    agents, channels, dma, _ = random_program(seed, kind).build()
    block = RtlDmaAgent(dma, channels, "verilator")
    recorder = DmaRecorder(channels)
    run_system(agents, exact=True)
    return block, channels, recorder.finish()


def test_the_replay_and_the_loop_run_agree_on_a_program():
    program = random_program(2, "tile")
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


def test_the_recorded_error_column_is_the_status_words_bd_error_on_every_cycle():
    """The recorder reads a channel's status word only once the channel has the BD error:
    the column must still be the status word's error_bd_invalid bit in every cycle (a
    task on a BD never written stops MM2S 0 one cycle, then another task is pushed)."""
    kind = "tile"
    dma = program_dma(kind, DEFAULT_ROW[kind])
    good = BufferDescriptor(kind, base_address=0, buffer_length=3, valid_bd=1)
    queue = start_queue_address(kind, "mm2s", 0)
    apply_writes(dma, [*bd_table_writes(kind, {7: good}), (queue, Task(7).encode()),
                       (queue, Task(5).encode())])   # BD 5: all zeros, not valid
    out = Stream("out")
    channel = dma.mm2s[0].connect(out)
    sink = StreamSink("sink", out)
    recorder = DmaRecorder([channel])
    shown = []
    step = channel.step   # the recorder's: the status word is read after it, as it was

    def stepped(cycle):
        stall = step(cycle)
        shown.append(channel.status_word() >> STATUS_FIELDS["error_bd_invalid"][0] & 1)
        return stall

    channel.step = stepped
    with pytest.raises(DeadlockError):   # stopped by the error until a reset
        run_system([channel, sink], exact=True)
    channel.step = step   # the recorder stops watching its own wrapper
    (column,) = recorder.finish()
    assert any(shown) and not all(shown)
    assert column["invalid"].tolist() == shown
