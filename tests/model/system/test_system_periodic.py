"""The periodic jump (model/system/periodic.py) gives what stepping every cycle gives.

Every comparison runs a graph twice, ``exact=True`` and the default (the fast path with
the periodic jump), and checks the outputs, what each kernel received, the memory, the
cycle count and every report column; a counter of the periodic jumps taken shows the
jump was exercised. Then the cases where it must not jump, or must raise as stepping
does.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from aiedma.flows.graph_examples import pipeline_graph
from aiedma.model.system import graph as graph_module
from aiedma.model.system.graph import Graph
from aiedma.model.system.kernel import KernelAgent, KernelError
from aiedma.model.system.period import image
from aiedma.model.system.periodic import PeriodicJump
from aiedma.tb.system.random_programs import random_graph


@pytest.fixture
def periodic(monkeypatch):
    """Periodic jumps taken, cycles they covered, and every run's agents."""
    seen = {"jumps": 0, "cycles": 0, "agents": []}
    jump = PeriodicJump._jump
    run_system = graph_module.run_system

    def counting(self, run, before, after, per):
        start = run.cycles
        jumped = jump(self, run, before, after, per)
        if jumped:
            seen["jumps"] += 1
            seen["cycles"] += run.cycles - start
        return jumped

    def keeping(agents, *args, **kwargs):
        seen["agents"].append(agents)
        return run_system(agents, *args, **kwargs)

    monkeypatch.setattr(PeriodicJump, "_jump", counting)
    monkeypatch.setattr(graph_module, "run_system", keeping)
    return seen


def _memories(agents) -> list[np.ndarray]:
    owners = {id(o): o for o, _, _ in image(agents, 0).slots if type(o).__name__ == "Memory"}
    return [owner.data.copy() for owner in owners.values()]


def assert_same(graph: Graph, iterations: int, inputs: dict, periodic: dict,
                output_ready: dict | None = None) -> None:
    runs, memories = [], []
    for exact in (True, False):
        runs.append(graph.run(iterations, inputs, output_ready=output_ready, exact=exact))
        memories.append(_memories(periodic["agents"][-1]))
    exact, fast = runs
    assert exact.report.text() == fast.report.text()
    assert exact.report.system == fast.report.system
    assert exact.packet_ids == fast.packet_ids
    assert exact.outputs.keys() == fast.outputs.keys()
    for name, words in exact.outputs.items():
        np.testing.assert_array_equal(words, fast.outputs[name], err_msg=name)
    assert exact.received.keys() == fast.received.keys()
    for name, calls in exact.received.items():
        assert len(calls) == len(fast.received[name]), name
        for a, b in zip(calls, fast.received[name], strict=True):
            for x, y in zip(a, b, strict=True):
                np.testing.assert_array_equal(x, y)
    for a, b in zip(*memories, strict=True):
        np.testing.assert_array_equal(a, b)


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def _walk(rng: random.Random, shape: list[int]) -> dict:
    tile = [rng.choice(_divisors(n)) for n in shape]
    loops = [(d, tile[d], shape[d] // tile[d]) for d in range(len(shape)) if shape[d] > tile[d]]
    rng.shuffle(loops)
    return {"buffer_dimension": shape, "tiling_dimension": tile, "offset": [0] * len(shape),
            "tile_traversal": loops}


def random_pipeline(seed: int) -> tuple[Graph, int, dict, dict]:
    """in -> producer -> shared buffer (random tilings, 1 or 2 buffers, 1 or 2 readers) ->
    consumer -> out0 (and out1 straight from the second reader); long enough to jump."""
    rng = random.Random(seed)
    shape = [rng.choice([4, 8, 16])] + ([rng.choice([2, 4])] if rng.random() < 0.5 else [])
    words = int(np.prod(shape))
    scale, shift, minus = rng.randint(1, 5), rng.randint(-9, 9), rng.randint(0, 9)
    g = Graph(f"pipeline {seed}")
    size = rng.choice([d for d in _divisors(words) if d <= 32])
    producer = g.kernel("producer", lambda x: x * scale + shift, [size], [size])
    buf = g.shared_buffer(shape, 1, rng.choice([1, 2]), name="buf")
    buf.num_buffers = rng.choice([1, 2])
    g.connect(g.input("in"), producer.inputs[0])
    g.connect(producer.outputs[0], buf.inputs[0])
    buf.write_access(0, _walk(rng, shape))
    for r, port in enumerate(buf.outputs):
        buf.read_access(port, _walk(rng, shape))
        if r == 0:
            size = rng.choice([d for d in _divisors(words) if d <= 64])
            consumer = g.kernel("consumer", lambda x: x - minus, [size], [size])
            g.connect(port, consumer.inputs[0])
            g.connect(consumer.outputs[0], g.output("out0"))
        else:
            g.connect(port, g.output(f"out{r}"))
    iterations = rng.randint(6, 40)
    data = np.array([rng.randrange(1 << 20) for _ in range(iterations * words)], dtype=np.int32)
    ready = {f"out{r}": [rng.random() < 0.7 for _ in range(rng.randint(0, 200))]
             for r in range(len(buf.outputs))}
    return g, iterations, {"in": data}, ready


@pytest.mark.parametrize(("num_buffers", "size", "iterations"),
                         [(2, 64, 30), (1, 64, 25), (2, 16, 40), (1, 48, 20), (2, 32, 33)])
def test_pipelines_jump_whole_periods(num_buffers, size, iterations, periodic):
    data = np.arange(iterations * size, dtype=np.int32) * 5 - 7
    assert_same(pipeline_graph(num_buffers, size), iterations, {"in": data}, periodic)
    assert periodic["jumps"] == 1
    assert periodic["cycles"] > 0


@pytest.mark.parametrize("seed", range(1, 11))
def test_random_pipelines_same(seed, periodic):
    g, iterations, inputs, ready = random_pipeline(seed)
    for output_ready in (ready, {}):
        assert_same(g, iterations, inputs, periodic, output_ready)


def test_random_pipelines_jump(periodic):
    for seed in range(1, 11):
        g, iterations, inputs, _ = random_pipeline(seed)
        g.run(iterations, inputs)
    assert periodic["jumps"] > 5


@pytest.mark.parametrize("seed", range(1, 7))
def test_long_random_copy_graphs_same(seed, periodic):
    drawn = random_graph(seed)
    rng = random.Random(seed)
    iterations = rng.randint(6, 40)
    words = drawn.inputs["in"].size // drawn.iterations
    data = np.array([rng.randrange(1 << 31) for _ in range(iterations * words)])
    for output_ready in (drawn.output_ready, {}):
        assert_same(drawn.graph, iterations, {"in": data}, periodic, output_ready)


def test_a_kernel_with_state_is_called_in_order(periodic):
    """A kernel function that counts its calls: the jump calls it as often, in order."""
    calls = []

    def counting(x):
        calls.append(1)
        return x + len(calls)

    g = pipeline_graph(2, 64)
    g.nodes["consumer"].function = counting
    data = np.arange(30 * 64, dtype=np.int32)
    exact = g.run(30, {"in": data}, exact=True)
    calls.clear()
    fast = g.run(30, {"in": data})
    np.testing.assert_array_equal(exact.outputs["out"], fast.outputs["out"])
    assert exact.report.text() == fast.report.text()
    assert periodic["jumps"] == 1


def test_a_kernel_error_inside_the_jump_is_the_same_error(periodic):
    def failing(x):
        if x[0] >= 20 * 64:
            return x[:3]   # the wrong size: a KernelError
        return x

    errors = []
    for exact in (True, False):
        g = pipeline_graph(2, 64)
        g.nodes["consumer"].function = failing
        with pytest.raises(KernelError) as error:
            g.run(30, {"in": np.arange(30 * 64, dtype=np.int32)}, exact=exact)
        errors.append(str(error.value))
    assert errors[0] == errors[1]


def test_sub_word_kernels_do_not_jump(periodic):
    """int16 packs two elements to a word: a tag per word is not a tag per element."""
    g = Graph("int16")
    k = g.kernel("k", lambda x: x * 2, [16], [16])
    buf = g.shared_buffer([64], 1, 1, dtype="int16", name="buf")
    g.connect(g.input("in"), k.inputs[0])
    g.connect(k.outputs[0], buf.inputs[0])
    g.connect(buf.outputs[0], g.output("out"))
    buf.write_access(0, {"tiling_dimension": [64]})
    buf.read_access(0, {"tiling_dimension": [64]})
    data = np.arange(30 * 64, dtype=np.int16)
    assert_same(g, 30, {"in": data}, periodic)
    assert periodic["jumps"] == 0


def test_a_field_with_no_role_stops_the_jump(periodic, monkeypatch):
    """A kernel that counts its steps in a field the images were not told about: the
    state never repeats, so nothing jumps (a missed field refuses, never passes)."""
    step = KernelAgent.step

    def counting(self, cycle):
        self.steps_seen = getattr(self, "steps_seen", 0) + 1
        return step(self, cycle)

    monkeypatch.setattr(KernelAgent, "step", counting)
    data = np.arange(30 * 64, dtype=np.int32)
    assert_same(pipeline_graph(2, 64), 30, {"in": data}, periodic)
    assert periodic["jumps"] == 0


def test_a_ready_pattern_still_running_stops_the_jump(periodic):
    data = np.arange(30 * 64, dtype=np.int32)
    pattern = [True, False] * 5000
    assert_same(pipeline_graph(2, 64), 30, {"in": data}, periodic, {"out": pattern})
    assert periodic["jumps"] == 0
