"""The tiles AMD's MemTile tiling tutorial (Vitis Tutorials, AI Engine ML) shows from
aiesimulator, against the walk of the same tilings. Its data: element (row r, column c)
of layer l of an 8x8 image holds ``100 l + 10 r + c``."""

import numpy as np

from aiedma.model import TilingParameters


def layers(count):
    """The tutorial's input: ``count`` 8x8 layers, row after row."""
    return np.array([100 * (r // 8) + 10 * (r % 8) + c for r in range(8 * count)
                     for c in range(8)])


def tiles(stream, side):
    return stream.reshape(-1, side, side).tolist()


def test_test_case_2_quarters_of_layers_stacked_as_rows():
    # the layers seen as one 8 x 128 buffer: 4x4 quarters, two across, 32 down
    tp = TilingParameters(buffer_dimension=[8, 128], tiling_dimension=[4, 4],
                          tile_traversal=[(0, 4, 2), (1, 4, 32)])
    shown = tiles(tp.gather(layers(16)), 4)
    assert shown[0] == [[0, 1, 2, 3], [10, 11, 12, 13], [20, 21, 22, 23], [30, 31, 32, 33]]
    assert shown[1] == [[4, 5, 6, 7], [14, 15, 16, 17], [24, 25, 26, 27], [34, 35, 36, 37]]
    assert shown[2] == [[40, 41, 42, 43], [50, 51, 52, 53], [60, 61, 62, 63], [70, 71, 72, 73]]
    assert shown[4] == [[100, 101, 102, 103], [110, 111, 112, 113], [120, 121, 122, 123],
                        [130, 131, 132, 133]]
    assert shown[7] == [[144, 145, 146, 147], [154, 155, 156, 157], [164, 165, 166, 167],
                        [174, 175, 176, 177]]


def test_test_case_3_padded_quarters_of_one_layer():
    # the second memory tile: 6x6 quarters of a layer with a border of zeros
    tp = TilingParameters(buffer_dimension=[8, 8], tiling_dimension=[6, 6], offset=[-1, -1],
                          tile_traversal=[(0, 4, 2), (1, 4, 2)])
    shown = tiles(tp.gather(layers(1)), 6)
    assert shown[0] == [[0, 0, 0, 0, 0, 0], [0, 0, 1, 2, 3, 4], [0, 10, 11, 12, 13, 14],
                        [0, 20, 21, 22, 23, 24], [0, 30, 31, 32, 33, 34],
                        [0, 40, 41, 42, 43, 44]]
    assert shown[1] == [[0, 0, 0, 0, 0, 0], [3, 4, 5, 6, 7, 0], [13, 14, 15, 16, 17, 0],
                        [23, 24, 25, 26, 27, 0], [33, 34, 35, 36, 37, 0],
                        [43, 44, 45, 46, 47, 0]]
    assert shown[2] == [[0, 30, 31, 32, 33, 34], [0, 40, 41, 42, 43, 44],
                        [0, 50, 51, 52, 53, 54], [0, 60, 61, 62, 63, 64],
                        [0, 70, 71, 72, 73, 74], [0, 0, 0, 0, 0, 0]]
    assert shown[3] == [[33, 34, 35, 36, 37, 0], [43, 44, 45, 46, 47, 0],
                        [53, 54, 55, 56, 57, 0], [63, 64, 65, 66, 67, 0],
                        [73, 74, 75, 76, 77, 0], [0, 0, 0, 0, 0, 0]]


def test_test_case_4s_write_gives_an_offset_per_dimension_of_the_read():
    """``.offset = {0, 0}`` on its one-dimensional write, which the tutorial compiles: zeros
    past the buffer's dimensions are taken as none (a non-zero one stays an error,
    tests/model/tiling/test_tiling_errors.py)."""
    tp = TilingParameters(buffer_dimension=[64 * 512], tiling_dimension=[], offset=[0, 0])
    assert tp.offset == (0,)
    assert np.array_equal(tp.indices(), np.arange(64 * 512))
