"""Hypothesis strategies for random valid tilings and port programs."""

from hypothesis import strategies as st

from aiedma.model import TilingParameters, TraversingParameters


def _budgeted(draw, low, high, budget):
    """An integer in [low, high] that keeps the product of draws under ``budget``."""
    value = draw(st.integers(low, max(low, min(high, budget[0]))))
    budget[0] = max(1, budget[0] // max(value, 1))
    return value


@st.composite
def tilings(draw, max_elements=512, dim0_multiple=1):
    budget = [max_elements]
    n = draw(st.integers(1, 4))
    buffer = draw(st.lists(st.integers(1, 6), min_size=n, max_size=n))
    # dim0_multiple scales dimension 0 so that sub-word types stay word-aligned.
    buffer[0] *= dim0_multiple
    whole = draw(st.integers(0, 9)) == 0  # sometimes the default "whole buffer" tile
    tile = [] if whole else [_budgeted(draw, 1, b + 3, budget) for b in buffer]
    offset = draw(st.lists(st.integers(-3, 5), max_size=n))
    if dim0_multiple > 1:
        tile = tile and [tile[0] * dim0_multiple, *tile[1:]]
        offset = offset and [offset[0] * dim0_multiple, *offset[1:]]
    traversal = []
    for _ in range(draw(st.integers(0, 3))):
        dim, stride = draw(st.integers(0, n - 1)), draw(st.integers(0, 5))
        stride *= dim0_multiple if dim == 0 else 1
        wrap = _budgeted(draw, 1, 3, budget)
        spelling = draw(st.sampled_from(["object", "dict", "triple"]))
        traversal.append(
            TraversingParameters(dimension=dim, stride=stride, wrap=wrap) if spelling == "object"
            else {"dimension": dim, "stride": stride, "wrap": wrap} if spelling == "dict"
            else (dim, stride, wrap)
        )
    boundary = draw(st.none() | st.tuples(*[st.integers(1, b) for b in buffer]))
    if boundary is not None and dim0_multiple > 1:
        boundary = (max(1, boundary[0] // dim0_multiple) * dim0_multiple, *boundary[1:])
    repetition = _budgeted(draw, 1, 3, budget)
    return TilingParameters(buffer_dimension=buffer, tiling_dimension=tile, offset=offset,
                            tile_traversal=traversal, boundary_dimension=boundary,
                            repetition=repetition)


