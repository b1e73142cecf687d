"""The broadcast address stream against the digit-by-digit one it replaced.

``divmod_stream`` is the earlier :func:`~aiedma.model.bd.descriptor.stream_addresses`,
kept here verbatim in substance: every position split into its padded digits with
``divmod``, a zero word wherever a digit is in padding. The vectorised stream must
equal it bit for bit (values and dtype) on random BDs of every kind: padding on every
side, wrap 0 and 1, a ``buffer_length`` ending inside the first pattern or running
over several, and iteration offsets.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aiedma.model.bd.descriptor import BufferDescriptor, padded_digits, padded_radices
from aiedma.model.bd.fields import ADDRESS_DIMENSIONS, FIELD_INDEX, KINDS


def divmod_stream(start: int, length: int, steps: Sequence[int], wraps: Sequence[int],
                  before: Sequence[int], after: Sequence[int]) -> np.ndarray:
    """The stream as computed before vectorising: one divmod per dimension and position."""
    open_dim = next((k for k, w in enumerate(wraps) if w == 0), len(wraps))
    digits, rest = [], np.arange(length, dtype=np.int64)
    for k in range(open_dim):
        rest, digit = np.divmod(rest, before[k] + wraps[k] + after[k])
        digits.append(digit)
    digits.append(rest)
    address = np.full(length, start, dtype=np.int64)
    data = np.ones(length, dtype=bool)
    for k, digit in enumerate(digits):
        i = digit - (before[k] if k < len(wraps) else 0)
        data &= i >= 0
        if k < len(digits) - 1:
            data &= i < wraps[k]
        address += i * steps[k]
    return np.where(data, address, -1)


def reference(bd: BufferDescriptor, iteration_current: int) -> np.ndarray:
    pattern = bd.pattern()
    start = bd.base_address + iteration_current * bd.iteration_stepsize
    return divmod_stream(start, bd.buffer_length, **pattern)


def _wrap(draw: st.DrawFn, maximum: int) -> int:
    return draw(st.sampled_from([0, 1, 2, maximum]) | st.integers(0, min(maximum, 70)))


@st.composite
def bds(draw: st.DrawFn, kind: str) -> BufferDescriptor:
    """Legal BDs of ``kind`` with every stream feature in play, up to 2**17 words."""
    index = FIELD_INDEX[kind]
    n = ADDRESS_DIMENSIONS[kind]
    v: dict[str, int] = {"base_address": draw(st.integers(0, index["base_address"].maximum))}
    v["iteration_wrap"] = draw(st.integers(1, 8))
    v["iteration_current"] = draw(st.integers(0, v["iteration_wrap"] - 1))
    v["iteration_stepsize"] = draw(st.integers(1, 1 << 12))
    for k in range(n):
        v[f"d{k}_stepsize"] = draw(st.sampled_from([1, 2, 7, index[f"d{k}_stepsize"].maximum])
                                   | st.integers(1, 300))
    for k in range(n - 1):
        v[f"d{k}_wrap"] = _wrap(draw, index[f"d{k}_wrap"].maximum)
    if kind == "memtile":
        never = False
        for k in range(n - 1):
            limit = index[f"d{k}_zero_before"].maximum
            if not never:
                v[f"d{k}_zero_before"] = draw(st.sampled_from([0, 0, 1, limit])
                                              | st.integers(0, limit))
                if v[f"d{k}_wrap"]:
                    v[f"d{k}_zero_after"] = draw(st.sampled_from([0, 0, 1, limit])
                                                 | st.integers(0, limit))
            never = never or v[f"d{k}_wrap"] == 0
    pattern = {"wraps": [v[f"d{k}_wrap"] for k in range(n - 1)],
               "before": [v.get(f"d{k}_zero_before", 0) for k in range(n - 1)],
               "after": [v.get(f"d{k}_zero_after", 0) for k in range(n - 1)]}
    period = int(np.prod(padded_radices(**pattern), dtype=np.int64))
    longest = min(index["buffer_length"].maximum, 1 << 17)
    # Inside the first pattern, just past it, over several, or anything up to the longest.
    v["buffer_length"] = draw(st.integers(0, min(period, longest))
                              | st.integers(min(period, longest), min(3 * period + 5, longest))
                              | st.integers(0, longest))
    return BufferDescriptor(kind, **v)


@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_stream_equals_divmod_stream(kind: str, data: st.DataObject) -> None:
    bd = data.draw(bds(kind))
    current = data.draw(st.integers(0, bd.iteration_wrap - 1))
    for got, want in ((bd.stream(), reference(bd, bd.iteration_current)),
                      (bd.stream(current), reference(bd, current))):
        assert got.dtype == want.dtype == np.int64
        assert got.shape == want.shape
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_digits_follow_the_radices(kind: str, data: st.DataObject) -> None:
    """``padded_digits`` rebuilds each position from :func:`padded_radices` (one rule)."""
    bd = data.draw(bds(kind))
    pattern = bd.pattern()
    positions = np.arange(min(bd.buffer_length, 5000), dtype=np.int64)
    digits = padded_digits(positions, pattern["wraps"], pattern["before"], pattern["after"])
    radices = padded_radices(pattern["wraps"], pattern["before"], pattern["after"])
    assert len(digits) == len(radices) + 1
    rebuilt = digits[-1]
    for digit, radix in zip(digits[-2::-1], radices[::-1], strict=True):
        assert ((digit >= 0) & (digit < radix)).all()
        rebuilt = rebuilt * radix + digit
    np.testing.assert_array_equal(rebuilt, positions)


def test_padding_in_every_dimension_and_the_open_one() -> None:
    """A hand-made corner: D1 never wraps but has zero rows before it, D0 padded both sides."""
    bd = BufferDescriptor("memtile", buffer_length=23, d0_wrap=2, d0_zero_before=1,
                          d0_zero_after=1, d1_wrap=0, d1_zero_before=2, d1_stepsize=10,
                          base_address=5)
    # rows of 4 words: 2 zero rows, then [-1, a, a + 1, -1] with a = 5, 15, 25, 35
    want = [-1] * 8 + [w for a in (5, 15, 25) for w in (-1, a, a + 1, -1)] + [-1, 35, 36]
    assert bd.stream().tolist() == want
    assert reference(bd, 0).tolist() == want
