"""The task stream and ``element_stream`` against the load-by-load loop they replaced.

``loop_task`` is the earlier :func:`~aiedma.model.bd.task.run_task`: every pass walks
the chain, streams each BD at its current iteration and writes the BD back advanced.
The vectorised task (chain walked once, loads written in place, repeating passes
copied) must give the same words, bit for bit, and the same table afterwards, on
random chains with repeats and iterations; ``element_stream`` must equal the word
stream converted by :func:`~aiedma.model.bd.lower.word_stream_to_elements`.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from test_stream_vectorised import bds, divmod_stream

from aiedma.model.bd.descriptor import stream_addresses
from aiedma.model.bd.fields import FIELD_INDEX, KINDS
from aiedma.model.bd.lower import (
    LoweredBD,
    LoweredProgram,
    LoweringError,
    word_stream_to_elements,
)
from aiedma.model.bd.task import REPEAT_COUNT_MAX, Task, run_task, task_stream


def loop_task(bds_table, task):
    """The task as computed before vectorising: one load at a time."""
    table = dict(bds_table)
    parts = []
    for _ in range(task.repeat_count):
        bd_id = task.start_bd
        while True:
            bd = table[bd_id]
            parts.append(bd.stream())
            table[bd_id] = bd.next_iteration()
            if not bd.use_next_bd:
                break
            bd_id = bd.next_bd
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64), table


@st.composite
def chains(draw: st.DrawFn, kind: str) -> tuple[dict, Task]:
    """A chain of 1-5 random BDs (numbered in the first half) and a task over it."""
    count = draw(st.integers(1, 5))
    ids = draw(st.lists(st.integers(0, 15), min_size=count, max_size=count, unique=True))
    table = {}
    for n, bd_id in enumerate(ids):
        bd = draw(bds(kind)).replace(valid_bd=1)
        bd = bd.replace(buffer_length=min(bd.buffer_length, 3000))
        if n + 1 < count:
            bd = bd.replace(use_next_bd=1, next_bd=ids[n + 1])
        table[bd_id] = bd
    repeat = draw(st.sampled_from([1, 2, 3, 7, REPEAT_COUNT_MAX]) | st.integers(1, 20))
    return table, Task(ids[0], repeat_count=repeat)


@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_task_equals_loop(kind, data):
    table, task = data.draw(chains(kind))
    got, after = run_task(kind, table, task)
    want, want_after = loop_task(table, task)
    assert got.dtype == want.dtype == np.int64
    np.testing.assert_array_equal(got, want)
    assert after == want_after


@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=20, deadline=None)
@given(data=st.data(), dtype=st.sampled_from(["int32", "int16", "int8", "int64"]))
def test_element_stream_equals_converted_words(kind, data, dtype):
    table, task = data.draw(chains(kind))
    words = loop_task(table, task)[0]
    base = data.draw(st.integers(0, 1 << 12))
    program = LoweredProgram(kind, "read", dtype, base,
                             tuple(LoweredBD(i, bd, 0, 0) for i, bd in table.items()), task)
    assume(dtype != "int64" or words.size % 2 == 0)   # 64-bit elements are word pairs
    try:
        want = word_stream_to_elements(words, base, dtype)
    except LoweringError:   # a word pair that is not consecutive: the same refusal
        with pytest.raises(LoweringError):
            program.element_stream()
        return
    got = program.element_stream()
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


@settings(max_examples=40, deadline=None)
@given(data=st.data(), start=st.integers(-(1 << 40), 1 << 10))
def test_stream_below_zero(data, start):
    """A shifted stream may start below 0: zero words stay -1, data words keep their sum."""
    bd = data.draw(bds("memtile"))
    pattern = bd.pattern()
    got = stream_addresses(start, bd.buffer_length, **pattern)
    np.testing.assert_array_equal(got, divmod_stream(start, bd.buffer_length, **pattern))


@st.composite
def tiled_chains(draw: st.DrawFn, kind: str) -> tuple[dict, Task]:
    """A chain of 2-6 BDs of one pattern and length at bases that step evenly, or
    not (one base moved), maybe one BD of another length between them, maybe one
    of the same affine shape with other zero padding, all at
    iteration 0 of one wrap and step, or one not: the chains a lowered program makes,
    built by doubling loads and passes and by moving a load of a pattern built."""
    bd = draw(bds(kind)).replace(valid_bd=1, iteration_current=0)
    bd = bd.replace(buffer_length=min(bd.buffer_length, 2000))
    count = draw(st.integers(2, 6))
    step = draw(st.integers(-(1 << 10), 1 << 10))
    top = max(bd.base_address, bd.base_address + step * (count - 1))
    bottom = min(bd.base_address, bd.base_address + step * (count - 1))
    assume(bottom >= 0 and top + 50 <= FIELD_INDEX[kind]["base_address"].maximum)
    bases = [bd.base_address + step * n for n in range(count)]
    if draw(st.booleans()):
        bases[draw(st.integers(1, count - 1))] += draw(st.integers(1, 50))
    other = draw(st.sampled_from([None, *range(1, count - 1)]))   # A, ..., B, A, ...
    table = {}
    for n, base in enumerate(bases):
        link = {"use_next_bd": 1, "next_bd": n + 1} if n + 1 < count else {}
        length = bd.buffer_length - 1 if n == other and bd.buffer_length else bd.buffer_length
        table[n] = bd.replace(base_address=base, buffer_length=length, **link)
    widest = FIELD_INDEX[kind]["d0_wrap"].maximum
    if (bd.kind == "memtile" and bd.d0_zero_before and 0 < bd.d0_wrap < widest
            and draw(st.booleans())):
        # One load with a word of padding less and a word of data more: the same
        # affine shape (radices, steps), other zeros (the edge tiles of a halo read).
        n = draw(st.integers(0, count - 1))
        table[n] = table[n].replace(d0_zero_before=bd.d0_zero_before - 1,
                                    d0_wrap=bd.d0_wrap + 1)
    if draw(st.booleans()):   # one load at another iteration index: no pass doubling
        n = draw(st.integers(0, count - 1))
        table[n] = table[n].replace(iteration_current=bd.iteration_wrap - 1)
    repeat = draw(st.sampled_from([1, 2, bd.iteration_wrap, 3 * bd.iteration_wrap + 1]))
    return table, Task(0, repeat_count=repeat)


@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=60, deadline=None)
@given(data=st.data(), shift=st.integers(-50, 50))
def test_chains_of_one_pattern_equal_loop(kind, data, shift):
    """Loads moved from the load before and passes moved from pass 0 give the loop's
    words, zeros included (a zero word moved is no longer -1 unless written back)."""
    table, task = data.draw(tiled_chains(kind))
    got, after = task_stream(kind, table, task, shift=shift)
    want, want_after = loop_task(table, task)
    want = np.where(want >= 0, want + shift, -1)
    np.testing.assert_array_equal(got, want)
    assert after == want_after
