"""``BDBatch`` (every BD at once) against the per-BD methods it stands for.

The batch's streams equal each BD's :meth:`~BufferDescriptor.stream` on BDs with
every stream feature in play (the strategy of the stream tests, long BDs included);
its register words equal :meth:`~BufferDescriptor.encode` and decode back to the same
BDs; its check refuses exactly what the constructor refuses, with the constructor's
message and the BD's index.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_stream_vectorised import bds

from aiedma.model.bd.batch import BDBatch
from aiedma.model.bd.descriptor import BufferDescriptor, padded_radices
from aiedma.model.bd.fields import FIELDS, KINDS
from aiedma.model.errors import BDError, UndocumentedBehaviourWarning


def _assert_batch_equals(kind: str, listed: list[BufferDescriptor]) -> None:
    batch = BDBatch.from_bds(kind, listed)
    assert len(batch) == len(listed)
    assert batch.bds() == listed
    addresses, offsets = batch.streams()
    assert offsets.tolist() == np.concatenate(
        ([0], np.cumsum([bd.buffer_length for bd in listed]))).tolist()
    for i, bd in enumerate(listed):
        got = addresses[offsets[i]:offsets[i + 1]]
        assert got.dtype == np.int64
        np.testing.assert_array_equal(got, bd.stream(), err_msg=repr(bd))
        radices = padded_radices(**{k: v for k, v in bd.pattern().items() if k != "steps"})
        assert batch.first_radices()[i] == (radices[0] if radices else 0)
    words = batch.encode()
    assert words.dtype == np.uint32
    assert words.tolist() == [bd.encode() for bd in listed]


@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_batch_equals_each_bd(kind: str, data: st.DataObject) -> None:
    listed = data.draw(st.lists(bds(kind), max_size=6))
    _assert_batch_equals(kind, listed)


@pytest.mark.parametrize("kind", KINDS)
def test_corner_bds(kind: str) -> None:
    """Defaults, length 0 and 1, D0 never wrapping with an iteration offset."""
    listed = [BufferDescriptor(kind), BufferDescriptor(kind, buffer_length=1),
              BufferDescriptor(kind, buffer_length=9, d0_wrap=0, d0_stepsize=3,
                               iteration_wrap=4, iteration_current=3, iteration_stepsize=5,
                               base_address=7),
              BufferDescriptor(kind, buffer_length=30, d0_wrap=2, d1_wrap=3, d1_stepsize=10)]
    if kind == "memtile":
        listed.append(BufferDescriptor(kind, buffer_length=23, d0_wrap=2, d0_zero_before=1,
                                       d0_zero_after=1, d1_wrap=0, d1_zero_before=2,
                                       d1_stepsize=10, base_address=5))
    _assert_batch_equals(kind, listed)
    _assert_batch_equals(kind, [])


@pytest.mark.parametrize("kind", KINDS)
def test_encoded_words_decode_to_the_batch(kind: str) -> None:
    """Every field at its maximum and minimum, through the model's own decoder."""
    tops = {f.name: f.maximum for f in FIELDS[kind]}
    lows = {f.name: f.minimum for f in FIELDS[kind]}
    for values in (tops, lows):
        values["iteration_current"] = min(values["iteration_current"],
                                          values["iteration_wrap"] - 1)
    batch = BDBatch(kind, {name: [lows[name], tops[name]] for name in tops})
    for i, words in enumerate(batch.encode().tolist()):
        assert BufferDescriptor.decode(kind, words) == batch.bd(i)
    assert batch.bds() == [batch.bd(0), batch.bd(1)]


@pytest.mark.parametrize(("kind", "bad"), [
    ("memtile", {"d0_wrap": 0, "d1_zero_before": 1}),
    ("memtile", {"d1_wrap": 0, "d1_zero_after": 2}),
    ("shim", {"enable_packet": 1, "buffer_length": 0}),
    ("tile", {"d0_stepsize": 0}),
    ("shim", {"burst_length": 100}),
    ("memtile", {"next_bd": 48}),
    ("tile", {"lock_rel_value": -65}),
])
def test_check_refuses_what_the_constructor_refuses(kind: str, bad: dict) -> None:
    with pytest.raises(BDError) as want:
        BufferDescriptor(kind, **bad)
    good = {name: 1 if name == "buffer_length" else BufferDescriptor(kind).fields()[name]
            for name in bad}
    columns = {name: [good[name], good[name], value, value] for name, value in bad.items()}
    with pytest.raises(BDError, match=r"^BD 2 of the batch: ") as got:
        BDBatch(kind, columns)
    assert str(got.value) == f"BD 2 of the batch: {want.value}"


def test_check_warns_once_for_iteration_current_past_its_wrap() -> None:
    columns = {"iteration_wrap": [3, 3, 3, 29], "iteration_current": [0, 2, 3, 42]}
    with pytest.warns(UndocumentedBehaviourWarning, match=r"^2 BD\(s\) of the batch, the "
                                                          r"first BD 2: iteration_current"):
        batch = BDBatch("tile", columns)
    assert [bd.iteration_current for bd in batch.bds()] == [0, 2, 3, 42]


def test_columns_are_checked_for_shape_and_names() -> None:
    with pytest.raises(BDError, match="same length"):
        BDBatch("tile", {"buffer_length": [1, 2], "base_address": [0]})
    with pytest.raises(BDError, match="d0_zero_before=0: not a field of a tile BD"):
        BDBatch("tile", {"d0_zero_before": [0]})
    with pytest.raises(BDError, match="one-dimensional integer array"):
        BDBatch("tile", {"buffer_length": [1.5]})
    batch = BDBatch("shim", {}, count=3)
    assert batch.bds() == [BufferDescriptor("shim")] * 3
    with pytest.raises(ValueError, match="read-only"):
        batch["buffer_length"][0] = 4
