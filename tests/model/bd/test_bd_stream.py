"""BD address streams: hardware vectors and a per-word reference from docs/bd.md's pseudo-code."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from vectors import load

from aiedma.model.bd.descriptor import BufferDescriptor
from aiedma.model.bd.fields import ADDRESS_DIMENSIONS, KINDS
from aiedma.model.errors import BDError

HARDWARE = load("hardware.json")

# --- the reference: docs/bd.md's pseudo-code, one word at a time ---------------------------

ZERO, DATA = "zero", "data"


def _data_addresses(start: int, steps: list[int], wraps: list[int]) -> Iterator[int]:
    """docs/bd.md "Address generation": counters and ripple, literally."""
    n = len(steps)
    i = [0] * n
    while True:
        yield start + sum(i[k] * steps[k] for k in range(n))
        i[0] += 1
        k = 0
        # The outermost dimension (k = n - 1) has no wrap: it only counts up.
        while k < n - 1 and wraps[k] != 0 and i[k] == wraps[k]:
            i[k] = 0
            i[k + 1] += 1
            k += 1


def _loop(wrap: int) -> Iterator[int]:
    return iter(range(wrap)) if wrap else itertools.count()  # wrap 0: never wraps


def _memtile_order(wraps: list[int], before: list[int], after: list[int]) -> Iterator[str]:
    """docs/bd.md "Zero padding" stream order, literally (ZERO / DATA tokens)."""
    (w0, w1, w2), (b0, b1, b2), (a0, a1, a2) = wraps, before, after
    row = b0 + w0 + a0
    block = (b1 + w1 + a1) * row
    for _i3 in itertools.count():
        yield from [ZERO] * (b2 * block)
        for _i2 in _loop(w2):
            yield from [ZERO] * (b1 * row)
            for _i1 in _loop(w1):
                yield from [ZERO] * b0
                for _i0 in _loop(w0):
                    yield DATA
                yield from [ZERO] * a0
            yield from [ZERO] * (a1 * row)
        yield from [ZERO] * (a2 * block)


def reference_stream(bd: BufferDescriptor, iteration_current: int | None = None) -> list[int]:
    """One execution of ``bd``, word by word; zero words do not advance the counters."""
    v = bd.fields()
    n = ADDRESS_DIMENSIONS[bd.kind]
    current = v["iteration_current"] if iteration_current is None else iteration_current
    start = v["base_address"] + current * v["iteration_stepsize"]
    steps = [v[f"d{k}_stepsize"] for k in range(n)]
    wraps = [v[f"d{k}_wrap"] for k in range(n - 1)]
    data = _data_addresses(start, steps, wraps)
    if bd.kind == "memtile":
        order = _memtile_order(wraps, [v[f"d{k}_zero_before"] for k in range(3)],
                               [v[f"d{k}_zero_after"] for k in range(3)])
    else:
        order = itertools.repeat(DATA)
    return [next(data) if token == DATA else -1
            for token in itertools.islice(order, v["buffer_length"])]


# --- hardware vectors -----------------------------------------------------------------


@pytest.mark.parametrize("case", HARDWARE["memtile_padding"] + HARDWARE["tile_addresses"],
                         ids=lambda c: c["name"])
def test_hardware_streams(case: dict) -> None:
    bd = BufferDescriptor.from_dict(case["bd"])
    got = bd.stream()
    assert got.dtype == np.int64
    assert got.tolist() == case["stream"]
    assert reference_stream(bd) == case["stream"]


def test_memtile_2d_padding_structure() -> None:
    """docs/bd.md's description of the 64x64 case, checked independently of the vector."""
    bd = BufferDescriptor.from_dict(HARDWARE["memtile_padding"][0]["bd"])
    rows = bd.stream().reshape(64, 16)
    for r in (0, 1, 63):
        assert (rows[r] == -1).all()
    for r in range(2, 63):
        assert rows[r][0] == -1 and rows[r][15] == -1
        assert rows[r][1:15].tolist() == list(range(14 * (r - 2), 14 * (r - 2) + 14))


def test_architecture_example() -> None:
    bd = BufferDescriptor("memtile", base_address=0, buffer_length=16, d0_stepsize=1, d0_wrap=13,
                          d0_zero_before=2, d0_zero_after=1, valid_bd=1)
    memory = np.arange(1, 14)  # memory holds 1..13
    stream = bd.stream()
    values = np.where(stream >= 0, memory[np.maximum(stream, 0)], 0)
    assert values.tolist() == [0, 0, *range(1, 14), 0]


# --- hand-checked corners ----------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_linear(kind: str) -> None:
    bd = BufferDescriptor(kind, base_address=100, buffer_length=7)
    assert bd.stream().tolist() == list(range(100, 107))


@pytest.mark.parametrize("kind", KINDS)
def test_empty(kind: str) -> None:
    got = BufferDescriptor(kind).stream()
    assert got.dtype == np.int64 and got.shape == (0,)


def test_outermost_dimension_counts_up() -> None:
    bd = BufferDescriptor("memtile", buffer_length=10, d0_wrap=1, d1_wrap=1, d2_wrap=1,
                          d3_stepsize=1000)
    assert bd.stream().tolist() == [1000 * k for k in range(10)]
    bd = BufferDescriptor("shim", buffer_length=6, d0_wrap=2, d1_wrap=1, d2_stepsize=50)
    assert bd.stream().tolist() == [0, 1, 50, 51, 100, 101]


def test_wrap_zero_freezes_the_dimensions_above() -> None:
    # D1 never wraps: D2 (step 1000) never moves, D1 counts up for ever.
    bd = BufferDescriptor("tile", buffer_length=8, d0_wrap=2, d1_wrap=0, d1_stepsize=10,
                          d2_stepsize=1000)
    assert bd.stream().tolist() == [0, 1, 10, 11, 20, 21, 30, 31]
    bd = BufferDescriptor("memtile", buffer_length=6, d0_wrap=0, d0_stepsize=3, d1_wrap=2,
                          d0_zero_before=2)
    assert bd.stream().tolist() == [-1, -1, 0, 3, 6, 9]


def test_cut_mid_pattern() -> None:
    bd = BufferDescriptor("memtile", buffer_length=9, d0_wrap=3, d0_zero_before=1,
                          d0_zero_after=1, d1_wrap=2, d1_stepsize=10, d1_zero_after=1)
    # row = 5 words; block: 2 rows + 1 padded row
    assert bd.stream().tolist() == [-1, 0, 1, 2, -1, -1, 10, 11, 12]


def test_d2_padding_blocks() -> None:
    bd = BufferDescriptor("memtile", buffer_length=2 * 8, d0_wrap=2, d1_wrap=1, d2_wrap=1,
                          d2_zero_before=1, d2_zero_after=1, d1_zero_before=1, d3_stepsize=100)
    # block = (1 + 1 + 0) * 2 = 4 words; one D3 step = (1 + 1 + 1) * 4 = 12 words
    block_zero = [-1] * 4
    assert bd.stream().tolist() == [*block_zero, -1, -1, 0, 1, *block_zero, -1, -1, -1, -1]


def test_iteration_offset() -> None:
    bd = BufferDescriptor("tile", base_address=10, buffer_length=3, iteration_wrap=4,
                          iteration_stepsize=100, iteration_current=1)
    assert bd.stream().tolist() == [110, 111, 112]
    assert bd.stream(iteration_current=3).tolist() == [310, 311, 312]
    assert bd.stream(0).tolist() == [10, 11, 12]
    loads = []
    for _ in range(5):
        loads.append(int(bd.stream()[0]))
        bd = bd.next_iteration()
    assert loads == [110, 210, 310, 10, 110]


def test_iteration_argument_is_validated() -> None:
    bd = BufferDescriptor("shim", buffer_length=3, iteration_wrap=4, iteration_stepsize=10)
    assert bd.stream(iteration_current=6).tolist() == [60, 61, 62]   # past the wrap: taken
    with pytest.raises(BDError, match=r"^iteration_current=64: must be in 0\.\.63"):
        bd.stream(iteration_current=64)
    with pytest.raises(BDError, match=r"^iteration_current=True: must be an integer"):
        bd.stream(iteration_current=True)


def test_longest_memtile_bd() -> None:
    """The longest memory-tile BD over a ~10**9-word period (the stream never builds the period)."""
    bd = BufferDescriptor("memtile", buffer_length=(1 << 17) - 1, d0_wrap=1023, d1_wrap=1023,
                          d2_wrap=1023, d0_zero_before=63, d0_zero_after=63,
                          d1_zero_before=31, d1_zero_after=31, d2_zero_after=15,
                          d1_stepsize=1023, d2_stepsize=1 << 17)
    got = bd.stream()
    assert got.shape == ((1 << 17) - 1,)
    row = 63 + 1023 + 63
    first = 31 * row + 63  # D1 before: 31 padded rows, then D0 before: 63 words
    assert (got[:first] == -1).all()
    assert got[first : first + 1023].tolist() == list(range(1023))
    assert got.tolist() == reference_stream(bd)


# --- property: stream() == reference over random small BDs ----------------------------------


@st.composite
def small_bds(draw: st.DrawFn, kind: str) -> BufferDescriptor:
    """Valid BDs with small sizes: wrap 0, padding of every dimension, iteration."""
    n = ADDRESS_DIMENSIONS[kind]
    v: dict[str, int] = {
        "base_address": draw(st.integers(0, 40)),
        "iteration_wrap": draw(st.integers(1, 4)),
        "iteration_stepsize": draw(st.integers(1, 30)),
    }
    v["iteration_current"] = draw(st.integers(0, v["iteration_wrap"] - 1))
    for k in range(n):
        v[f"d{k}_stepsize"] = draw(st.integers(1, 9) | st.sampled_from([1, 16, 1000]))
    for k in range(n - 1):
        v[f"d{k}_wrap"] = draw(st.integers(0, 4))
    period = 1
    if kind == "memtile":
        # Draw padding, then drop what docs/bd.md's legality rules forbid.
        for k in range(3):
            for side in ("before", "after"):
                v[f"d{k}_zero_{side}"] = draw(st.integers(0, 2))
        for k in range(3):
            if v[f"d{k}_wrap"] == 0:
                v[f"d{k}_zero_after"] = 0
                for j in range(k + 1, 3):
                    v[f"d{j}_zero_before"] = v[f"d{j}_zero_after"] = 0
        for k in range(3):
            period *= v[f"d{k}_zero_before"] + v[f"d{k}_wrap"] + v[f"d{k}_zero_after"]
    else:
        for k in range(n - 1):
            period *= v[f"d{k}_wrap"]
    # Enough words for a few periods (reaching the outermost dimension), cut anywhere.
    top = 150 if period == 0 else min(500, 2 * period + 10)
    v["buffer_length"] = draw(st.integers(0, top))
    return BufferDescriptor(kind, **v)


@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=250, deadline=None)
@given(data=st.data())
def test_stream_matches_reference(kind: str, data: st.DataObject) -> None:
    bd = data.draw(small_bds(kind))
    got = bd.stream()
    assert got.dtype == np.int64
    assert got.tolist() == reference_stream(bd)
    other = data.draw(st.integers(0, bd.iteration_wrap - 1))
    assert bd.stream(other).tolist() == reference_stream(bd, other)
