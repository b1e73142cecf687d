"""The vectorised walk against the per-element reference, over random tilings.

Random valid parameters: 1 to 4 dimensions, tiles larger than the buffer,
negative offsets, overlapping and repeated tiles (stride 0), boundaries,
repetition, and the three spellings of a traversal entry.
"""

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from tiling_reference import reference_walk
from tiling_strategies import tilings

from aiedma.model import PortProgram, TilingError, TilingParameters

MIN_EXAMPLES = 500


def _counted(test):
    """Run a hypothesis test and fail if it ran fewer than MIN_EXAMPLES examples."""
    def run():
        count = [0]
        test(count)
        assert count[0] >= MIN_EXAMPLES, f"only {count[0]} examples ran"
    run.__name__ = test.__name__
    return run


@_counted
@settings(max_examples=MIN_EXAMPLES + 100)
@given(tp=tilings())
@example(tp=TilingParameters(buffer_dimension=[32, 4, 2], tiling_dimension=[34, 6, 2],
                             offset=[-1, -1, 0], tile_traversal=[(0, 128, 1), (1, 4, 1)]))
def test_walk_matches_reference(count, tp):
    count[0] += 1
    expected, _ = reference_walk(tp)
    got = tp.indices()
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, expected)
    assert tp.stream_length() == len(expected)


@_counted
@settings(max_examples=MIN_EXAMPLES)
@given(tp=tilings())
def test_validate_refuses_exactly_the_walks_that_pad(count, tp):
    """The per-dimension extents agree with the zeros the reference produces."""
    count[0] += 1
    _, padded = reference_walk(tp)
    assert set(tp.padded_dimensions()) == padded
    for kind, direction in [("tile", "read"), ("shim", "read"), ("memtile", "write")]:
        if padded:
            with pytest.raises(TilingError, match=r"outside the boundary \[0, "):
                tp.validate(kind=kind, direction=direction)
        else:
            tp.validate(kind=kind, direction=direction)
    if 3 in padded:
        with pytest.raises(TilingError, match="only dimensions 0, 1 and 2"):
            tp.validate(kind="memtile", direction="read")
    else:
        tp.validate(kind="memtile", direction="read")


@settings(max_examples=200)
@given(tp=tilings(), data=st.data())
def test_gather_and_scatter_match_reference(tp, data):
    expected, padded = reference_walk(tp)
    size = int(np.prod(tp.buffer_dimension))
    buffer = np.arange(1, size + 1, dtype=np.int32)
    assert tp.gather(buffer).tolist() == [buffer[i] if i >= 0 else 0 for i in expected]

    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    stream = rng.integers(-99, 100, size=len(expected)).tolist()
    target = np.full(size, 1000, dtype=np.int32)
    if padded:
        with pytest.raises(TilingError, match="no write padding"):
            tp.scatter(stream, target)
        assert (target == 1000).all(), "a refused write must leave the buffer untouched"
        return
    reference = [1000] * size
    for position, value in zip(expected, stream, strict=True):
        reference[position] = value  # in order: the last write wins
    assert tp.scatter(stream, target).tolist() == reference


@settings(max_examples=200)
@given(tp=tilings())
def test_dict_round_trip(tp):
    assert TilingParameters.from_dict(tp.to_dict()) == tp
    assert PortProgram.from_json(PortProgram([tp, tp]).to_json()) == PortProgram([tp, tp])


@settings(max_examples=100)
@given(entries=st.lists(tilings(max_elements=128), min_size=1, max_size=3))
def test_port_program_is_entries_in_order(entries):
    # One port addresses one buffer: an entry of another size is swapped for a
    # whole-buffer walk of the first entry's shape.
    shape = entries[0].buffer_dimension
    size = int(np.prod(shape))
    entries = [e if int(np.prod(e.buffer_dimension)) == size
               else TilingParameters(buffer_dimension=shape, repetition=e.repetition)
               for e in entries]
    program = PortProgram(entries)
    expected = [i for e in entries for i in reference_walk(e)[0]]
    assert program.indices().tolist() == expected


@pytest.mark.parametrize("slices_max", [0, 1, 3, 10**9])
def test_walk_zeros_are_the_same_by_slices_or_by_index(monkeypatch, slices_max):
    """Zeros are written as strided slices, or past a count of them as one indexed
    write; every threshold gives one stream (0: always indexed, 10**9: always slices)."""
    import aiedma.model.tiling.walk as walk

    monkeypatch.setattr(walk, "_ZERO_SLICES_MAX", slices_max)
    halo = TilingParameters(buffer_dimension=[16, 8, 4, 2], tiling_dimension=[6, 4, 3, 2],
                            offset=[-1, -1, -1, 0],
                            tile_traversal=[(0, 4, 4), (1, 4, 2), (2, 2, 2)], repetition=2)
    np.testing.assert_array_equal(halo.indices(), reference_walk(halo)[0])
