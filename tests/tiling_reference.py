"""A per-element reference of the tiling walk, written straight from docs/tiling.md.

Deliberately naive (nested Python loops, one element at a time) so that it is
easy to check by eye against the spec's pseudo-code; the vectorised model is
compared with it. It shares no code with ``aiedma.model.tiling.walk``.
"""

from itertools import product


def reference_walk(tp) -> tuple[list[int], set[int]]:
    """Stream of linear indices (-1 = zero) and the set of dimensions that padded."""
    buffer = list(tp.buffer_dimension)
    n = len(buffer)
    tile = list(tp.tiling_dimension) or buffer
    offset = list(tp.offset) + [0] * (n - len(tp.offset))
    bound = list(tp.boundary_dimension or buffer)
    loops = list(reversed(tp.tile_traversal))  # outermost first
    stream, padded = [], set()
    for _rep in range(tp.repetition):
        for counters in product(*[range(t.wrap) for t in loops]):
            origin = list(offset)
            for c, t in zip(counters, loops, strict=True):
                origin[t.dimension] += c * t.stride
            # Inside a tile dimension 0 is fastest: iterate t[N-1] outermost.
            for reversed_t in product(*[range(size) for size in reversed(tile)]):
                p = [origin[d] + reversed_t[n - 1 - d] for d in range(n)]
                outside = [d for d in range(n) if not 0 <= p[d] < bound[d]]
                if outside:
                    padded.update(outside)
                    stream.append(-1)
                    continue
                lin = 0
                for d in reversed(range(n)):
                    lin = lin * buffer[d] + p[d]
                stream.append(lin)
    return stream, padded
