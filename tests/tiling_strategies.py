"""Hypothesis strategies for random valid tilings and port programs."""

import math

from hypothesis import strategies as st

from aiedma.model import TilingParameters, TraversingParameters


def _budgeted(draw, low, high, budget):
    """An integer in [low, high] that keeps the product of draws under ``budget``."""
    value = draw(st.integers(low, max(low, min(high, budget[0]))))
    budget[0] = max(1, budget[0] // max(value, 1))
    return value


@st.composite
def tilings(draw, max_elements=512, dim0_multiple=1, inside=False):
    """Random valid tilings; ``inside`` builds the buffer around the walk (no padding).

    ``dim0_multiple`` scales dimension 0 so that sub-word types stay word-aligned.
    """
    budget = [max_elements]
    n = draw(st.integers(1, 4))
    buffer = draw(st.lists(st.integers(1, 6), min_size=n, max_size=n))
    whole = not inside and draw(st.integers(0, 9)) == 0  # sometimes the "whole buffer" tile
    tile = [] if whole else [_budgeted(draw, 1, b + 3, budget) for b in buffer]
    if whole:  # the tile is the buffer: it spends the budget too
        budget[0] = max(1, budget[0] // math.prod(buffer))
    low = 0 if inside else -3
    offset = draw(st.lists(st.integers(low, 5), min_size=n if inside else 0, max_size=n))
    traversal = []
    for _ in range(draw(st.integers(0, 3))):
        dim, stride = draw(st.integers(0, n - 1)), draw(st.integers(0, 5))
        wrap = _budgeted(draw, 1, 3, budget)
        traversal.append((dim, stride, wrap))
    boundary = None
    if inside:
        # The buffer holds the whole walk, with a little room on the far side.
        reach = list(offset)
        for dim, stride, wrap in traversal:
            reach[dim] += (wrap - 1) * stride
        buffer = [r + t + draw(st.integers(0, 2)) for r, t in zip(reach, tile, strict=True)]
    else:
        boundary = draw(st.none() | st.tuples(*[st.integers(1, b) for b in buffer]))
    m = dim0_multiple
    buffer[0] *= m
    tile = tile and [tile[0] * m, *tile[1:]]
    offset = offset and [offset[0] * m, *offset[1:]]
    traversal = [(d, stride * m if d == 0 else stride, wrap) for d, stride, wrap in traversal]
    if boundary is not None:
        boundary = (boundary[0] * m, *boundary[1:])
    spellings = draw(st.lists(st.sampled_from(["object", "dict", "triple"]),
                              min_size=len(traversal), max_size=len(traversal)))
    traversal = [
        TraversingParameters(dimension=d, stride=stride, wrap=wrap) if spelling == "object"
        else {"dimension": d, "stride": stride, "wrap": wrap} if spelling == "dict"
        else (d, stride, wrap)
        for (d, stride, wrap), spelling in zip(traversal, spellings, strict=True)
    ]
    repetition = _budgeted(draw, 1, 3, budget)
    return TilingParameters(buffer_dimension=buffer, tiling_dimension=tile, offset=offset,
                            tile_traversal=traversal, boundary_dimension=boundary,
                            repetition=repetition)
