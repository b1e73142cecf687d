"""The worked examples of docs/tiling.md, and what they say about whole buffers."""

import numpy as np
import pytest
from vectors import load

from aiedma.model import PortProgram, TilingParameters

EXAMPLES = load("tiling_examples.json")["examples"]
BY_NAME = {e["name"]: TilingParameters.from_dict(e["tiling"]) for e in EXAMPLES}


@pytest.mark.parametrize("example", EXAMPLES, ids=[e["name"] for e in EXAMPLES])
def test_worked_example_stream(example):
    tp = TilingParameters.from_dict(example["tiling"])
    got = tp.indices()
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, example["indices"])
    assert tp.stream_length() == len(example["indices"])


@pytest.mark.parametrize("example", EXAMPLES, ids=[e["name"] for e in EXAMPLES])
def test_worked_example_is_legal_where_it_runs(example):
    tp = TilingParameters.from_dict(example["tiling"])
    direction = "write" if example["name"].endswith("write") else "read"
    tp.validate(kind="memtile", direction=direction, dtype="int32")


def test_k1_and_k2_write_every_element_once():
    buffer = np.full((6, 10), -7, dtype=np.int32)  # numpy (6, 10) holds a {10, 6} buffer
    BY_NAME["k1 write"].scatter(np.arange(36) + 100, buffer)
    BY_NAME["k2 write"].scatter(np.arange(24) + 200, buffer)
    assert (buffer != -7).all()
    # k1 wrote the 3x2 tiles of columns 0..5; k2 the 2x3 tiles of columns 6..9.
    assert buffer[0, :3].tolist() == [100, 101, 102]
    assert buffer[1, :3].tolist() == [103, 104, 105]
    assert buffer[:3, 6].tolist() == [200, 202, 204]


def test_k3_and_k4_read_every_element_once():
    buffer = np.arange(60).reshape(6, 10) * 10
    streams = [BY_NAME["k3 read"].gather(buffer), BY_NAME["k4 read"].gather(buffer)]
    values = np.sort(np.concatenate(streams))
    np.testing.assert_array_equal(values, np.arange(60) * 10)


def test_padding_reads_zero_values():
    tp = BY_NAME["1D zero padding and truncation"]
    buffer = np.arange(1, 257, dtype=np.int16)
    got = tp.gather(buffer)
    assert got.dtype == np.int16
    expected = np.concatenate([np.zeros(16), np.arange(1, 97), np.zeros(16 + 128)])
    np.testing.assert_array_equal(got, expected)


def test_write_then_read_round_trip_through_a_buffer():
    """Writing with k1+k2 and reading with k3+k4 moves every value exactly once."""
    stream_in = np.arange(60, dtype=np.int32)
    writer = PortProgram([BY_NAME["k1 write"], BY_NAME["k2 write"]])
    reader = PortProgram([BY_NAME["k3 read"], BY_NAME["k4 read"]])
    buffer = writer.scatter(stream_in, np.zeros(60, dtype=np.int32))
    stream_out = reader.gather(buffer)
    np.testing.assert_array_equal(np.sort(stream_out), stream_in)
    np.testing.assert_array_equal(stream_out, buffer[reader.indices()])


def test_port_program_runs_entries_in_order():
    program = PortProgram([BY_NAME["k3 read"], BY_NAME["k4 read"]])
    np.testing.assert_array_equal(
        program.indices(),
        np.concatenate([BY_NAME["k3 read"].indices(), BY_NAME["k4 read"].indices()]),
    )
    assert program.stream_length() == 60


def test_buffer_reshaped_by_buffer_dimension():
    """adf may read a {256} object as {32, 8}: the flat element order is shared."""
    tp = TilingParameters(buffer_dimension=[32, 8], tiling_dimension=[4, 8],
                          tile_traversal=[(0, 4, 8)])
    got = tp.gather(np.arange(256))
    assert got[:9].tolist() == [0, 1, 2, 3, 32, 33, 34, 35, 64]
    assert sorted(got.tolist()) == list(range(256))


def test_empty_buffer_dimension_takes_the_buffer_shape():
    tp = TilingParameters(tiling_dimension=[2, 3])
    buffer = np.arange(12).reshape(3, 4)  # a {4, 3} buffer
    assert tp.gather(buffer).tolist() == [0, 1, 4, 5, 8, 9]
    assert tp.resolve([4, 3]).indices().tolist() == [0, 1, 4, 5, 8, 9]


def test_empty_tiling_dimension_is_the_whole_buffer():
    tp = TilingParameters(buffer_dimension=[3, 2])
    assert tp.indices().tolist() == [0, 1, 2, 3, 4, 5]


def test_repetition_repeats_the_whole_traversal():
    tp = TilingParameters(buffer_dimension=[4], tiling_dimension=[2],
                          tile_traversal=[(0, 2, 2)], repetition=3)
    assert tp.indices().tolist() == [0, 1, 2, 3] * 3


def test_phase_and_packet_port_do_not_change_the_stream():
    base = BY_NAME["k3 read"]
    other = TilingParameters.from_dict({**base.to_dict(), "phase": 2, "packet_port_id": 1})
    np.testing.assert_array_equal(other.indices(), base.indices())


def test_overlapping_writes_keep_the_last_value():
    tp = TilingParameters(buffer_dimension=[6], tiling_dimension=[4],
                          tile_traversal=[(0, 2, 2)])  # positions 0..3 then 2..5
    buffer = tp.scatter([1, 2, 3, 4, 5, 6, 7, 8], np.zeros(6, dtype=int))
    assert buffer.tolist() == [1, 2, 5, 6, 7, 8]


def test_scatter_into_non_contiguous_buffer_writes_through():
    storage = np.zeros((4, 12), dtype=int)
    view = storage[:, ::2]  # a {6, 4} buffer that is not contiguous in memory
    TilingParameters(buffer_dimension=[6, 4]).scatter(np.arange(1, 25), view)
    assert storage[:, ::2].ravel().tolist() == list(range(1, 25))
    assert not storage[:, 1::2].any()
