"""BD stimulus for the RTL tests: hypothesis strategies and hand-picked corners."""

from __future__ import annotations

import warnings

from hypothesis import strategies as st

from aiedma.model.bd.descriptor import BufferDescriptor
from aiedma.model.bd.fields import ADDRESS_DIMENSIONS, FIELD_INDEX, HAS_PADDING
from aiedma.model.errors import UndocumentedBehaviourWarning

# Padding legality (docs/bd.md): padding around a dimension that never wraps is illegal.
_NEEDS_WRAP = {
    "d0_wrap": ("d0_zero_after", "d1_zero_before", "d1_zero_after",
                "d2_zero_before", "d2_zero_after"),
    "d1_wrap": ("d1_zero_after", "d2_zero_before", "d2_zero_after"),
    "d2_wrap": ("d2_zero_after",),
}


def _value(name: str, kind: str, small: int) -> st.SearchStrategy[int]:
    """Mostly small values (where patterns wrap within a short BD), often the field's
    extremes, sometimes anything."""
    f = FIELD_INDEX[kind][name]
    low = st.integers(f.minimum, min(small, f.maximum))
    return st.one_of(low, low, low, st.sampled_from([f.minimum, f.maximum]),
                     st.integers(f.minimum, f.maximum))


@st.composite
def bds(draw: st.DrawFn, kind: str, *, min_length: int = 0, max_length: int = 200,
        padding: bool = True) -> BufferDescriptor:
    """A legal BD of ``kind`` with ``min_length <= buffer_length <= max_length``."""
    n = ADDRESS_DIMENSIONS[kind]
    v: dict[str, int] = {
        # Lengths 0, 1 and 2 stress the BD boundary: draw them often.
        "buffer_length": draw(st.one_of(st.integers(min_length, min_length + 2),
                                        st.integers(min_length, max_length),
                                        st.integers(min_length, max_length))),
        "base_address": draw(_value("base_address", kind, 64)),
    }
    for k in range(n):
        v[f"d{k}_stepsize"] = draw(_value(f"d{k}_stepsize", kind, 8))
    for k in range(n - 1):
        v[f"d{k}_wrap"] = draw(st.one_of(st.just(0), _value(f"d{k}_wrap", kind, 5)))
    if padding and HAS_PADDING[kind]:
        for k in range(n - 1):
            for side in ("before", "after"):
                v[f"d{k}_zero_{side}"] = draw(_value(f"d{k}_zero_{side}", kind, 2))
        for wrap, forbidden in _NEEDS_WRAP.items():
            if v[wrap] == 0:
                v.update(dict.fromkeys(forbidden, 0))
    v["iteration_wrap"] = draw(_value("iteration_wrap", kind, 4))
    # At or past the wrap too: the hardware takes it (the model's choice, docs/decisions.md).
    top = FIELD_INDEX[kind]["iteration_current"].maximum
    v["iteration_current"] = draw(st.one_of(
        st.integers(0, v["iteration_wrap"] - 1),
        st.integers(min(v["iteration_wrap"], top), top)))
    v["iteration_stepsize"] = draw(_value("iteration_stepsize", kind, 16))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndocumentedBehaviourWarning)
        return BufferDescriptor(kind, **v)


def chains(kind: str, *, min_length: int = 0, max_length: int = 120, max_size: int = 4,
           padding: bool = True) -> st.SearchStrategy[list[BufferDescriptor]]:
    """Chains of 1..max_size BDs, offered back to back."""
    return st.lists(bds(kind, min_length=min_length, max_length=max_length, padding=padding),
                    min_size=1, max_size=max_size)


def corners(kind: str) -> list[BufferDescriptor]:
    """Hand-picked extremes of ``kind``: maximal steps, wraps, padding and iteration,
    address wrap-around, wraps of 1 (every dimension carries on every beat), length 1."""
    index = FIELD_INDEX[kind]
    n = ADDRESS_DIMENSIONS[kind]

    def top(name: str) -> int:
        return index[name].maximum

    steps_max = {f"d{k}_stepsize": top(f"d{k}_stepsize") for k in range(n)}
    wraps_max = {f"d{k}_wrap": top(f"d{k}_wrap") for k in range(n - 1)}
    wraps_one = dict.fromkeys((f"d{k}_wrap" for k in range(n - 1)), 1)
    iteration_max = {"iteration_wrap": top("iteration_wrap"),
                     "iteration_current": top("iteration_wrap") - 1,
                     "iteration_stepsize": top("iteration_stepsize")}
    out = [
        BufferDescriptor(kind, buffer_length=5, base_address=top("base_address"),
                         **steps_max, **wraps_max, **iteration_max),
        BufferDescriptor(kind, buffer_length=9, **steps_max, **wraps_one),
        BufferDescriptor(kind, buffer_length=1, base_address=3),
        BufferDescriptor(kind, buffer_length=7, d0_wrap=2, **{f"d{n - 1}_stepsize": 3}),
        BufferDescriptor(kind, buffer_length=0),
        BufferDescriptor(kind, buffer_length=1, **steps_max, **iteration_max),
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndocumentedBehaviourWarning)
        # iteration_current at its field's maximum, past a wrap of 29 (the offset is
        # 63 steps; mlir-aie writes such BDs).
        out.append(BufferDescriptor(kind, buffer_length=3, iteration_wrap=29,
                                    iteration_current=top("iteration_current"),
                                    iteration_stepsize=top("iteration_stepsize")))
    if HAS_PADDING[kind]:
        pad_max = {f"d{k}_zero_{side}": top(f"d{k}_zero_{side}")
                   for k in range(n - 1) for side in ("before", "after")}
        out += [
            # Every padding at its maximum around single-word rows and blocks: all zero.
            BufferDescriptor(kind, buffer_length=200, **wraps_one, **pad_max),
            # Each level's padding at its maximum alone.
            BufferDescriptor(kind, buffer_length=200, d0_wrap=1, d1_wrap=2,
                             d0_zero_before=top("d0_zero_before"),
                             d0_zero_after=top("d0_zero_after")),
            BufferDescriptor(kind, buffer_length=100, d0_wrap=1, d1_wrap=1, d1_stepsize=4,
                             d1_zero_before=top("d1_zero_before"),
                             d1_zero_after=top("d1_zero_after")),
            # D2 padding alone: blocks of one word, so 15 zeros, a word, 15 zeros.
            BufferDescriptor(kind, buffer_length=40, base_address=9, **wraps_one,
                             d2_zero_before=15, d2_zero_after=15),
            # D0 never wraps: only "before" padding is legal, then data forever.
            BufferDescriptor(kind, buffer_length=70, d0_wrap=0, d0_zero_before=63,
                             d0_stepsize=top("d0_stepsize")),
            # D1 never wraps, with D1 "before" rows around padded D0 rows.
            BufferDescriptor(kind, buffer_length=60, d0_wrap=3, d1_wrap=0,
                             d0_zero_before=1, d0_zero_after=2, d1_zero_before=2,
                             d1_stepsize=10),
            BufferDescriptor(kind, buffer_length=30, d0_wrap=top("d0_wrap"), d0_zero_before=5,
                             d0_zero_after=top("d0_zero_after"), **steps_max),
        ]
    return out
