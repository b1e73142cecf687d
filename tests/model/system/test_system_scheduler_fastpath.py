"""The scheduler's fast path gives what stepping every cycle gives, on random graphs and programs.

Every comparison runs the same system twice, ``exact=True`` (one cycle at a time) and
the default (steady stretches jumped), and checks outputs, memory, cycle count and
every report column. A counter of the jumps taken shows the fast path was exercised
(a comparison in which nothing jumped proves nothing).
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from aiedma.flows.graph_examples import pipeline_graph, run_tutorial
from aiedma.model.arch.kinds import DMA_KINDS
from aiedma.model.bd.descriptor import BufferDescriptor
from aiedma.model.bd.task import Task
from aiedma.model.errors import AiedmaError
from aiedma.model.system import channel as channel_module
from aiedma.model.system.channel import Channel
from aiedma.model.system.dma import DMA
from aiedma.model.system.graph import Graph
from aiedma.model.system.kernel import KernelAgent
from aiedma.model.system.memory import MEMORY_TILE_WINDOWS, MEMORY_TILE_WORDS, MemoryAccessError
from aiedma.model.system.scheduler import NEVER, DeadlockError, SystemRun, run_system
from aiedma.model.system.stream import Stream, StreamSink, StreamSource
from aiedma.tb.system.random_programs import random_graph, random_program

OWN = MEMORY_TILE_WINDOWS["own"]


@pytest.fixture
def jumps(monkeypatch):
    """Cycles covered by fast-path jumps in the runs of one test."""
    covered = {"jumps": 0, "cycles": 0}
    jump = SystemRun._jump

    def counting(self):
        before = self.cycles
        jump(self)
        if self.cycles != before:
            covered["jumps"] += 1
            covered["cycles"] += self.cycles - before

    monkeypatch.setattr(SystemRun, "_jump", counting)
    return covered


def assert_same_graph_run(exact, fast):
    assert exact.report.text() == fast.report.text()
    assert exact.report.system == fast.report.system
    assert exact.outputs.keys() == fast.outputs.keys()
    assert exact.packet_ids == fast.packet_ids
    for name, words in exact.outputs.items():
        np.testing.assert_array_equal(words, fast.outputs[name], err_msg=name)
    for name, runs in exact.received.items():
        for a, b in zip(runs, fast.received[name], strict=True):
            for x, y in zip(a, b, strict=True):
                np.testing.assert_array_equal(x, y)


def copy_graph(shape, num_buffers, read_tile=None):
    g = Graph("copy")
    buf = g.shared_buffer(shape, 1, 1, name="buf")
    buf.num_buffers = num_buffers
    g.connect(g.input("in"), buf.inputs[0])
    g.connect(buf.outputs[0], g.output("out"))
    buf.write_access(0, {"tiling_dimension": shape})
    buf.read_access(0, {"tiling_dimension": read_tile or shape})
    return g


@pytest.mark.parametrize("seed", range(1, 31))
def test_random_graphs_same_with_and_without_jumps(seed, jumps):
    drawn = random_graph(seed)
    for ready in (drawn.output_ready, {}):   # drawn backpressure, then none
        runs = [drawn.graph.run(drawn.iterations, drawn.inputs, output_ready=ready, exact=e)
                for e in (True, False)]
        assert_same_graph_run(*runs)


def test_random_graphs_jump(jumps):
    """Without backpressure, most random graphs have stretches to jump."""
    for seed in range(1, 31):
        drawn = random_graph(seed)
        drawn.graph.run(drawn.iterations, drawn.inputs)
    assert jumps["jumps"] > 30


@pytest.mark.parametrize("kind", ["memtile", "tile"])
@pytest.mark.parametrize("seed", range(1, 21))
def test_random_programs_same_with_and_without_jumps(seed, kind):
    program = random_program(seed, kind)
    results = []
    for exact in (True, False):
        agents, _, dma, sinks = program.build()
        report = run_system(agents, exact=exact)
        target = dma.memory.resolve(program.place.target)
        results.append((report, [s.data for s in sinks], target[0].dump(target[1], 64)))
    (report, words, memory), (fast_report, fast_words, fast_memory) = results
    assert report == fast_report
    assert words == fast_words
    np.testing.assert_array_equal(memory, fast_memory)


@pytest.mark.parametrize(("shape", "num_buffers", "iterations", "read_tile"), [
    ([64, 16], 2, 3, None), ([64, 16], 1, 2, None), ([48, 8], 2, 2, [16, 4]),
    ([7, 5], 2, 4, None), ([256], 2, 2, [32])])
def test_copy_graphs_same_and_jumped(shape, num_buffers, iterations, read_tile, jumps):
    data = np.arange(iterations * int(np.prod(shape)), dtype=np.int32) * 7 - 100
    runs = [copy_graph(shape, num_buffers, read_tile).run(iterations, {"in": data}, exact=e)
            for e in (True, False)]
    assert_same_graph_run(*runs)
    assert jumps["cycles"] > runs[0].report.cycles // 2


@pytest.mark.parametrize("num_buffers", [1, 2])
def test_pipeline_and_tutorial_same_and_jumped(num_buffers, jumps):
    data = np.arange(6 * 64, dtype=np.int32)
    assert_same_graph_run(*(pipeline_graph(num_buffers, 64).run(6, {"in": data}, exact=e)
                            for e in (True, False)))
    assert_same_graph_run(*(run_tutorial(num_buffers, 3, exact=e) for e in (True, False)))
    assert jumps["jumps"] > 0


def test_output_backpressure_patterns_jump_only_where_ready_holds(jumps):
    """A ready pattern of long runs: jumps stop at every change of the pattern."""
    rng = random.Random(5)
    pattern = [v for _ in range(20) for v in [rng.random() < 0.5] * rng.randint(1, 40)]
    data = np.arange(2 * 256, dtype=np.int32)
    runs = [copy_graph([256], 2, [64]).run(2, {"in": data}, output_ready={"out": pattern},
                                           exact=e) for e in (True, False)]
    assert_same_graph_run(*runs)
    assert jumps["jumps"] > 0


def one_dma_program(read_base, write_base, length=64):
    """An MM2S channel reading while an S2MM channel of the same tile writes."""
    dma = DMA("memtile")
    dma.memory.resolve(OWN)[0].load(0, np.arange(4096))
    dma.write_bd(0, BufferDescriptor("memtile", base_address=read_base, buffer_length=length,
                                     valid_bd=1))
    dma.write_bd(24, BufferDescriptor("memtile", base_address=write_base, buffer_length=length,
                                      valid_bd=1))
    out, into = Stream("out"), Stream("in")
    dma.mm2s[0].connect(out).push(Task(0))
    dma.s2mm[1].connect(into).push(Task(24))
    source = StreamSource("src", into, range(1000, 1000 + length))
    sink = StreamSink("sink", out, expect=length)
    return [source, *dma.channels, sink], dma, sink


@pytest.mark.parametrize(("read", "write"), [(0, 256), (0, 10), (10, 0)])
def test_channels_touching_the_same_words(read, write, jumps):
    """Reads and writes of one word in one stretch keep their cycle order (no jump over it)."""
    results = []
    for exact in (True, False):
        agents, dma, sink = one_dma_program(OWN + read, OWN + write)
        report = run_system(agents, exact=exact)
        results.append((report, sink.data, dma.memory.resolve(OWN)[0].dump(0, 512)))
    assert results[0][0] == results[1][0]
    assert results[0][1] == results[1][1]
    np.testing.assert_array_equal(results[0][2], results[1][2])
    if read == 0 and write == 256:
        assert jumps["jumps"] > 0   # disjoint words: the stretch is jumped


def test_memory_fault_inside_a_stretch_is_the_same_error():
    """A BD that runs past its memory faults at the same word either way."""
    errors = []
    for exact in (True, False):
        dma = DMA("memtile")
        top = OWN + MEMORY_TILE_WORDS - 20   # runs into the east window, which has no memory
        dma.write_bd(0, BufferDescriptor("memtile", base_address=top, buffer_length=64,
                                         valid_bd=1))
        out = Stream("out")
        dma.mm2s[0].connect(out).push(Task(0))
        with pytest.raises(MemoryAccessError) as error:
            run_system([*dma.channels, StreamSink("sink", out, expect=64)], exact=exact)
        errors.append(str(error.value))
    assert errors[0] == errors[1]


def test_deadlock_is_the_same_error():
    errors = []
    for exact in (True, False):
        dma = DMA("memtile")
        dma.write_bd(0, BufferDescriptor("memtile", base_address=OWN, buffer_length=64,
                                         lock_acq_enable=1, lock_acq_id=64 + 3,
                                         lock_acq_value=-1, valid_bd=1))
        out = Stream("out")
        dma.mm2s[0].connect(out).push(Task(0))
        with pytest.raises(DeadlockError) as error:
            run_system([*dma.channels, StreamSink("sink", out, expect=64)], exact=exact)
        errors.append((str(error.value), error.value.report))
    assert errors[0] == errors[1]


def test_max_cycles_guard_is_the_same(jumps):
    data = np.arange(2 * 1024, dtype=np.int32)
    messages = []
    for exact in (True, False):
        with pytest.raises(Exception) as error:
            copy_graph([1024], 2).run(2, {"in": data}, max_cycles=1500, exact=exact)
        messages.append(str(error.value))
    assert messages[0] == messages[1]


def test_an_agent_without_a_steady_state_keeps_every_cycle(jumps):
    """One agent that cannot describe its steady state (here a bare stepping wrapper)
    disables jumps for the whole run."""

    class Opaque:
        def __init__(self, agent):
            self.agent, self.name = agent, agent.name

        @property
        def busy(self):
            return self.agent.busy

        def step(self, cycle):
            return self.agent.step(cycle)

        def commit(self):
            self.agent.commit()

        def ports(self):
            return self.agent.ports()

    agents, _, _ = one_dma_program(OWN, OWN + 256)
    run_system([Opaque(agents[0]), *agents[1:]])
    assert jumps["jumps"] == 0
    agents, _, _ = one_dma_program(OWN, OWN + 256)
    run_system(agents)
    assert jumps["jumps"] > 0


@pytest.mark.parametrize("low", range(1, 9))
def test_a_ready_pattern_ending_low_ends_the_jump_where_it_ends(low):
    """After its pattern a sink is always ready: a pattern whose last cycles hold off
    changes at its end, so a jump must stop there (random program seed 188 found it)."""
    runs = []
    for exact in (True, False):
        link = Stream("link")
        source = StreamSource("source", link, np.arange(40))
        sink = StreamSink("sink", link, ready=[True] * 8 + [False] * low)
        runs.append((run_system([source, sink], exact=exact), sink.data))
    assert runs[0] == runs[1]
    assert runs[0][0].cycles == 41 + low   # the sink takes each word a cycle after its push


@pytest.mark.parametrize(("num_buffers", "size", "iterations"),
                         [(1, 64, 12), (2, 64, 12), (2, 16, 20), (1, 48, 9), (2, 32, 17)])
def test_pipeline_graphs_jump_buffer_edge_to_edge(num_buffers, size, iterations, jumps):
    """A pipeline whose kernels change every 16 words: the fast path ends its jumps at
    the agents' next events and gives what stepping every cycle gives."""
    data = (np.arange(iterations * size, dtype=np.int32) * 5) - 7
    runs = [pipeline_graph(num_buffers, size).run(iterations, {"in": data}, exact=e)
            for e in (True, False)]
    assert_same_graph_run(*runs)
    np.testing.assert_array_equal(runs[1].outputs["out"].ravel(), data * 3 + 1)
    assert jumps["cycles"] > runs[0].report.cycles // 8


def _late_by_one(cls, monkeypatch):
    """Plant an off-by-one: every event ``cls`` reports comes one cycle late."""
    event = cls.next_event

    def late(self, last, moved):
        when = event(self, last, moved)
        return when if when == NEVER else when + 1

    monkeypatch.setattr(cls, "next_event", late)


def _pipeline_runs(num_buffers=2, size=64, iterations=4):
    data = np.arange(iterations * size, dtype=np.int32)
    return [pipeline_graph(num_buffers, size).run(iterations, {"in": data}, exact=e)
            for e in (True, False)]


def _copy_runs():
    data = np.arange(3 * 64 * 16, dtype=np.int32)
    return [copy_graph([64, 16], 2).run(3, {"in": data}, exact=e) for e in (True, False)]


def _link_runs(ready=None):
    """40 words from a source into a sink (with a ``ready`` pattern): report and words."""
    runs = []
    for exact in (True, False):
        link = Stream("link")
        source = StreamSource("source", link, np.arange(40))
        sink = StreamSink("sink", link, ready=ready)
        runs.append((run_system([source, sink], exact=exact), sink.data))
    return runs


def _held_sink_runs():
    """The sink holds off from cycle 40 to 69: the last word waits."""
    return _link_runs([True] * 40 + [False] * 30)


# The run where each agent's events decide the jumps: kernels and the source in the
# pipeline, the channels' BD ends in the copy graph, the sink's ready pattern.
_BINDING = {KernelAgent: _pipeline_runs, Channel: _copy_runs, StreamSource: _link_runs,
            StreamSink: _held_sink_runs}


@pytest.mark.parametrize("cls", list(_BINDING))
def test_an_event_one_cycle_late_is_caught(cls, monkeypatch):
    """The exact comparison is sharp: a jump one cycle past an agent's event moves a
    word that should not move (or none that should), and the runs differ or fail."""
    runs = _BINDING[cls]
    graphs = runs not in (_link_runs, _held_sink_runs)
    if graphs:
        assert_same_graph_run(*runs())   # sound as it is
    else:
        assert runs()[0] == runs()[1]
    _late_by_one(cls, monkeypatch)
    try:
        exact, fast = runs()
    except (AiedmaError, IndexError):   # e.g. a source asked for a word it does not have
        return
    if not graphs:
        assert exact != fast
    else:
        with pytest.raises(AssertionError):
            assert_same_graph_run(exact, fast)


@pytest.mark.parametrize("cls", [KernelAgent, Channel, StreamSource, StreamSink])
def test_an_event_one_cycle_early_only_costs_speed(cls, monkeypatch):
    """An event reported early ends a jump early: more cycles stepped, the same run."""
    event = cls.next_event

    def early(self, last, moved):
        when = event(self, last, moved)
        return when if when in (NEVER, last + 1) else when - 1

    monkeypatch.setattr(cls, "next_event", early)
    runs = _BINDING[cls]()
    if cls in (StreamSource, StreamSink):
        assert runs[0] == runs[1]
    else:
        assert_same_graph_run(*runs)


def _program_run(program):
    """Everything a random program's run shows: report, words and their cycles, tokens,
    locks and the target memory."""
    agents, channels, dma, sinks = program.build()
    times = {s.name: [] for s in sinks}
    for sink in sinks:
        step = sink.step

        def timed(cycle, step=step, into=times[sink.name]):
            stall = step(cycle)
            if stall is None:
                into.append(cycle)
            return stall

        sink.step = timed
    report = run_system(agents, exact=True)
    target = dma.memory.resolve(program.place.target)
    tokens = [[(d.cycle, d.token) for d in c.done] for c in channels]
    own = DMA_KINDS[dma.kind].lock_window("own").start
    locks = [dma.locks.route(own + k)[0][k] for k in range(DMA_KINDS[dma.kind].locks)]
    return (report, [s.beats for s in sinks], times, tokens,
            target[0].dump(target[1], 64).tolist(), locks)


@pytest.mark.parametrize("kind", ["memtile", "tile", "shim"])
def test_quiet_channels_and_kept_beats_change_nothing(kind, monkeypatch):
    """A quiet channel's short step and a short BD's kept beats give the run the full
    step and a fresh stream give, word for word and cycle for cycle."""
    programs = [random_program(seed, kind) for seed in range(1, 41)]
    quick = [_program_run(p) for p in programs]
    quiet_steps = 0
    quiet = Channel._quiet_step

    def counted(self):
        nonlocal quiet_steps
        quiet_steps += 1
        return quiet(self)

    monkeypatch.setattr(Channel, "_quiet_step", counted)
    [_program_run(p) for p in programs]
    assert quiet_steps > 100, "the programs' channels were quiet in some cycles"
    monkeypatch.setattr(Channel, "_quiet", lambda self, busy: False)
    monkeypatch.setattr(channel_module, "_short_beats", channel_module._beats_of)
    full = [_program_run(p) for p in programs]
    for seed, (a, b) in enumerate(zip(quick, full, strict=True), start=1):
        assert a == b, f"seed {seed}"


@pytest.mark.parametrize("num_buffers", [1, 2])
def test_a_jump_starts_the_cycle_after_an_s2mm_stops(num_buffers, monkeypatch):
    """An S2MM writes the word it took last in the cycle after (its datapath's pending
    write), so its pending write is no part of its steady state; in its first stalled
    cycle the write is done and the skid takes the beat shown, so after a second one
    nothing changes and a jump may start. In the pipeline, whose S2MM stops at every
    producer buffer, such jumps happen, never with a write still pending, and the run is
    the one stepping every cycle gives."""
    seen = {"starts": 0, "after_a_word": 0}
    jump = SystemRun._jump

    def checked(self):
        channels = [(k, a) for k, a in enumerate(self.agents)
                    if isinstance(a, Channel) and not a.is_mm2s]
        history = getattr(self, "_s2mm_moved", [])
        before = self.cycles
        jump(self)
        if self.cycles == before:
            return
        seen["starts"] += 1
        for k, channel in channels:
            if not self._moved[k]:
                assert channel.engine.datapath.write is None, "a write left to a jump"
                if len(history) > 2 and history[-3][k] and not history[-2][k]:
                    seen["after_a_word"] += 1

    cycle = SystemRun.cycle

    def remembered(self):
        cycle(self)
        history = self.__dict__.setdefault("_s2mm_moved", [])
        history.append(list(self._moved))
        del history[:-3]

    monkeypatch.setattr(SystemRun, "_jump", checked)
    monkeypatch.setattr(SystemRun, "cycle", remembered)
    assert_same_graph_run(*_pipeline_runs(num_buffers=num_buffers, iterations=6))
    assert seen["starts"] > 0
    assert seen["after_a_word"] > 6   # one a producer buffer at least
