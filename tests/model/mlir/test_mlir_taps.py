"""Round trip: a lowered ADF port written as IRON / taplib access patterns (``aiedma bd
--format tap``) and read back by the tap reader gives the same element stream."""

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tiling_strategies import tilings
from vectors import load

from aiedma.mlir_commands import access_pattern, pattern_access, pattern_indices
from aiedma.model import BufferDescriptor, PortProgram, Task, TilingError
from aiedma.model.bd.lower import LoweredBD, LoweredProgram, LoweringError, lower
from aiedma.model.mlir import MlirError
from aiedma.model.mlir.write import lowered_taps

EXAMPLES = load("tiling_examples.json")["examples"]
CONTEXTS = [(k, d) for k in ("memtile", "tile", "shim") for d in ("read", "write")]


def _padded(example) -> bool:
    return bool((np.asarray(example["indices"]) < 0).any())


def taps_read_back(program, kind, direction, dtype) -> np.ndarray:
    """The element stream of the lowering's taps, as JSON text read by the tap reader."""
    taps = lowered_taps(lower(program, kind, direction, dtype))
    text = json.dumps([{"offset": t.offset, "sizes": list(t.sizes),
                        "strides": list(t.strides)} for t in taps])
    patterns = access_pattern(text)
    assert isinstance(patterns, list) and len(patterns) == len(taps)
    return np.concatenate([pattern_indices(pattern_access(p)) for p in patterns])


UNPADDED = [e for e in EXAMPLES if not _padded(e)]
PADDED = [e for e in EXAMPLES if _padded(e)]


@pytest.mark.parametrize("dtype", ["int32", "int64"])
@pytest.mark.parametrize("example", UNPADDED, ids=[e["name"] for e in UNPADDED])
def test_worked_examples_without_padding_round_trip_as_taps(example, dtype):
    program = PortProgram.from_json(example["tiling"])
    got = taps_read_back(program, "memtile", "read", dtype)
    np.testing.assert_array_equal(got, example["indices"])


def test_the_tutorial_ports_are_one_tap_each():
    k1 = next(e for e in EXAMPLES if e["name"] == "k1 write")
    (tap,) = lowered_taps(lower(k1["tiling"], "memtile", "write", "int32"))
    # 3 rows of tiles 20 apart, 2 tiles 3 apart, 2 rows of a tile 10 apart, 3 elements
    assert (tap.offset, tap.sizes, tap.strides) == (0, (3, 2, 2, 3), (20, 3, 10, 1))


@pytest.mark.parametrize("example", PADDED, ids=[e["name"] for e in PADDED])
def test_a_padded_port_is_an_error_naming_every_padding_field(example):
    lowered = lower(example["tiling"], "memtile", "read", "int32")
    with pytest.raises(MlirError, match="an access pattern \\(IRON tap\\) has no zero padding"
                       ) as caught:
        lowered_taps(lowered)
    padding = {f"BD {b.bd_id} {name}={value}" for b in lowered.bds
               for name, value in b.bd.fields().items() if "_zero_" in name and value}
    assert padding and all(field in str(caught.value) for field in padding)


def test_repeats_and_iterations_are_outer_dimensions():
    # Two passes over 2x4 tiles that step by 8, read three times: repeat 3, iteration 2.
    tiling = {"buffer_dimension": [16, 4], "tiling_dimension": [8, 4],
              "tile_traversal": [[0, 8, 2], [1, 0, 3]]}
    lowered = lower(tiling, "memtile", "read", "int32")
    taps = lowered_taps(lowered)
    assert len(taps) == 1 and lowered.task.repeat_count > 1
    np.testing.assert_array_equal(taps_read_back(tiling, "memtile", "read", "int32"),
                                  PortProgram.from_json(tiling).indices())


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_random_unpadded_ports_round_trip_as_taps(data):
    dtype = data.draw(st.sampled_from(["int8", "int16", "int32", "int64"]))
    per_word = {"int8": 4, "int16": 2}.get(dtype, 1)
    entries = data.draw(st.lists(tilings(max_elements=128, dim0_multiple=per_word,
                                         inside=True), min_size=1, max_size=3))
    kind, direction = data.draw(st.sampled_from(CONTEXTS))
    try:
        program = PortProgram(entries)     # entries of one port address one buffer
        program.validate(kind, direction, dtype)
        expected = program.indices()
        lower(program, kind, direction, dtype)
    except (TilingError, LoweringError):
        return          # not a port this DMA runs
    try:
        got = taps_read_back(program, kind, direction, dtype)
    except MlirError as error:
        # What the element notation cannot say: half a 64-bit element, or a sub-word
        # BD whose word steps need one more dimension than the DMA has.
        assert dtype != "int32", error
        assert ("are not whole 64-bit elements" in str(error)
                or "dimensions to write its" in str(error)
                or "no step inside one" in str(error)), error
        return
    np.testing.assert_array_equal(got, expected)


def test_a_chain_run_several_times_is_one_tap_per_load():
    # BD 0 (4 words, iteration of 2 stepping 16) then BD 1 (2 rows of 2, 8 apart), twice:
    # loads 0, 1, 0 (iteration 1), 1.
    first = BufferDescriptor("memtile", base_address=100, buffer_length=4, iteration_wrap=2,
                             iteration_stepsize=16, use_next_bd=1, next_bd=1, valid_bd=1)
    second = BufferDescriptor("memtile", base_address=102, buffer_length=4, d0_wrap=2,
                              d1_stepsize=8, valid_bd=1)
    lowered = LoweredProgram("memtile", "read", "int32", 100,
                             (LoweredBD(0, first, 0, 0), LoweredBD(1, second, 0, 0)),
                             Task(0, 2))
    taps = lowered_taps(lowered)
    assert [(t.offset, t.sizes, t.strides) for t in taps] == [
        (0, (4,), (1,)), (2, (2, 2), (8, 1)), (16, (4,), (1,)), (2, (2, 2), (8, 1))]
    got = np.concatenate([pattern_indices(t) for t in taps])
    np.testing.assert_array_equal(got, lowered.element_stream())
