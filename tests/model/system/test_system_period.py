"""The period check (model/system/period.py): it finds the pipeline's periods, and a
field it was not told about stops it (a missed field must refuse, never pass)."""

from __future__ import annotations

import numpy as np
import pytest

from aiedma.flows.graph_examples import pipeline_graph
from aiedma.model.system.period import NotPeriodic, image, periodicity
from aiedma.model.system.scheduler import SystemRun


def _images(monkeypatch, num_buffers: int, iterations: int, cycles: set[int]) -> dict:
    """Images of the pipeline's run (every cycle stepped) at the ends of these cycles."""
    images = {}
    step = SystemRun.cycle

    def imaging(run: SystemRun) -> None:
        step(run)
        if run.cycles in cycles:
            images[run.cycles] = image((run.agents, run.streams), run.cycles)

    monkeypatch.setattr(SystemRun, "cycle", imaging)
    data = np.arange(iterations * 64, dtype=np.int32)
    result = pipeline_graph(num_buffers, 64).run(iterations, {"in": data}, exact=True)
    assert np.array_equal(result.outputs["out"].ravel(), data * 3 + 1)
    return images


def test_pipeline_with_two_buffers_repeats_every_two_iterations(monkeypatch):
    images = _images(monkeypatch, 2, 12, {293, 549, 805})
    first = periodicity(images[293], images[549])
    assert first.period == 256
    assert periodicity(images[549], images[805]) == first
    # what advances a period: the source's words, the producer's 8 and the consumer's
    # 2 runs, 128 words through each channel and stream
    deltas = {path.split("/")[-1]: delta for path, delta in first.counters.items()}
    assert deltas["StreamSource._next"] == 128
    assert sorted(d for p, d in first.counters.items() if p.endswith("KernelAgent.done")) == [2, 8]
    assert deltas["Channel.words"] == 128


def test_pipeline_with_one_buffer_repeats_every_iteration(monkeypatch):
    images = _images(monkeypatch, 1, 12, {800, 1001, 1100})
    assert periodicity(images[800], images[1001]).period == 201
    with pytest.raises(NotPeriodic):
        periodicity(images[800], images[1100])


def test_the_images_change_nothing(monkeypatch):
    _images(monkeypatch, 2, 4, set(range(0, 600, 7)))   # the output check is inside


class _Agent:
    def __init__(self) -> None:
        self.name, self.steps, self.cycle_seen = "a", 0, 0


def _pair(change) -> tuple:
    a, b = _Agent(), _Agent()
    change(b)
    return image([a], 10), image([b], 30)


def test_a_field_with_no_role_that_differs_refuses():
    with pytest.raises(NotPeriodic, match=r"_Agent\.steps is 0, then 1: no role"):
        periodicity(*_pair(lambda b: setattr(b, "steps", 1)))


def test_the_structure_and_arrays_must_repeat():
    with pytest.raises(NotPeriodic, match="structure"):
        periodicity(*_pair(lambda b: setattr(b, "extra", [])))
    a, b = _Agent(), _Agent()
    a.table, b.table = np.zeros(3), np.ones(3)
    with pytest.raises(NotPeriodic, match="array"):
        periodicity(image([a], 0), image([b], 5))


def test_state_it_cannot_see_never_repeats():
    a, b = _Agent(), _Agent()
    a.walk = b.walk = iter(range(3))
    with pytest.raises(NotPeriodic, match="structure"):
        periodicity(image([a], 0), image([b], 5))


def test_objects_are_numbered_by_place_not_identity():
    a, b = _Agent(), _Agent()
    a.held, b.held = [1, 2], [1, 2]
    a.again, b.again = a.held, b.held
    assert periodicity(image([a], 0), image([b], 5)).counters == {}
    b.again = [1, 2]   # equal, but no longer the same object
    with pytest.raises(NotPeriodic, match="structure"):
        periodicity(image([a], 0), image([b], 5))
