"""The lowering's law: the BDs and task reproduce the port program's stream exactly."""

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tiling_strategies import tilings
from vectors import load

from aiedma.model import BufferDescriptor, PortProgram, TilingError, TilingParameters
from aiedma.model.arch.dtypes import ELEMENT_BITS
from aiedma.model.bd.lower import LoweringError, lower, word_stream_to_elements
from aiedma.model.bd.task import run_task

MIN_EXAMPLES = 500
CONTEXTS = [(k, d) for k in ("memtile", "tile", "shim") for d in ("read", "write")]
EXAMPLES = load("tiling_examples.json")["examples"]


def check_lowering(program, kind, direction, dtype, base_address=0, first_bd=0):
    """Lower, run the task, and compare element by element; returns the lowering."""
    lowered = lower(program, kind, direction, dtype, base_address, first_bd=first_bd)
    words, table = run_task(kind, lowered.table(), lowered.task)
    got = word_stream_to_elements(words, base_address, dtype)
    np.testing.assert_array_equal(got, PortProgram(program).indices())
    for b in lowered.bds:
        assert BufferDescriptor.decode(kind, b.bd.encode()) == b.bd
        # A task leaves every BD as it found it, so it can run again.
        assert table[b.bd_id].iteration_current == 0
    return lowered


@st.composite
def lowering_cases(draw):
    dtype = draw(st.sampled_from(sorted(ELEMENT_BITS)))
    per_word = max(1, 32 // ELEMENT_BITS[dtype])
    # Half the programs stay inside their buffer, so every kind and direction is legal.
    inside = draw(st.booleans())
    entries = draw(st.lists(tilings(max_elements=256, dim0_multiple=per_word, inside=inside),
                            min_size=1, max_size=3))
    # One port addresses one buffer: later entries share the first one's shape.
    shape = entries[0].buffer_dimension
    entries = [e if e.buffer_dimension == shape else
               TilingParameters.from_dict({**e.to_dict(), "buffer_dimension": shape,
                                           "tiling_dimension": [], "offset": [],
                                           "boundary_dimension": None, "tile_traversal": []})
               for e in entries]
    legal = []
    for kind, direction in CONTEXTS:
        try:
            PortProgram(entries).validate(kind, direction, dtype)
            legal.append((kind, direction))
        except TilingError:
            pass
    kind, direction = draw(st.sampled_from(legal)) if legal else ("memtile", "read")
    base = draw(st.sampled_from([0, 4, 1000]))
    return entries, kind, direction, dtype, base, bool(legal)


def test_lowering_reproduces_random_port_programs():
    count = [0]

    @settings(max_examples=MIN_EXAMPLES + 100)
    @given(case=lowering_cases())
    def check(case):
        entries, kind, direction, dtype, base, legal = case
        if not legal:  # padding in dimension 3: no context takes it
            with pytest.raises(TilingError, match="only dimensions 0, 1 and 2"):
                lower(entries, "memtile", "read", dtype)
            return
        try:
            check_lowering(entries, kind, direction, dtype, base)
        except LoweringError as error:
            # Too many BDs, or a buffer that at this base runs past the kind's addresses.
            text = str(error)
            assert ("BDs but" in text and "over" in text) or (
                "base_address=" in text and "must be in 0.." in text), text
            return
        count[0] += 1

    check()
    assert count[0] >= MIN_EXAMPLES, f"only {count[0]} port programs were lowered and compared"


@pytest.mark.parametrize("example", EXAMPLES, ids=[e["name"] for e in EXAMPLES])
def test_worked_examples_lower_to_one_memtile_bd(example):
    tp = TilingParameters.from_dict(example["tiling"])
    direction = "write" if example["name"].endswith("write") else "read"
    lowered = check_lowering([tp], "memtile", direction, "int32", base_address=0x100)
    assert len(lowered.bds) == 1


def test_npu_padding_case_lowers_to_the_hardware_bd():
    """tiling -> BD for the 32-bit 1-D NPU case gives exactly the hardware-checked BD."""
    (case,) = [c for c in load("hardware.json")["memtile_padding"] if "32-bit" in c["name"]]
    tp = TilingParameters(buffer_dimension=[13], tiling_dimension=[16], offset=[-2])
    (only,) = lower([tp], "memtile", "read").bds
    expected = BufferDescriptor.from_dict(case["bd"])
    assert only.bd.stream().tolist() == case["stream"]
    assert only.bd.replace(d0_wrap=expected.d0_wrap) == expected


def test_chain_numbering_and_tlast():
    tiles = [{"buffer_dimension": [64], "tiling_dimension": [8], "offset": [o]} for o in (0, 40, 8)]
    lowered = check_lowering(tiles, "memtile", "read", "int32", first_bd=24)
    ids = [b.bd_id for b in lowered.bds]
    assert ids == [24, 25, 26] and lowered.task.start_bd == 24
    assert [b.bd.next_bd for b in lowered.bds[:-1]] == [25, 26]
    assert [b.bd.use_next_bd for b in lowered.bds] == [1, 1, 0]
    assert [b.bd.tlast_suppress for b in lowered.bds] == [1, 1, 0]


def test_repetition_becomes_the_repeat_count_and_a_loop_the_iteration():
    # Tile levels, then the dimension-0 loop: 3 levels, all a core tile has. The
    # dimension-1 loop is unrolled into a chain of 2 BDs, the 40 planes are the
    # iteration (wrap <= 64) and the repetition multiplies the repeat count.
    tp = TilingParameters(buffer_dimension=[8, 8, 40], tiling_dimension=[2, 2, 1],
                          tile_traversal=[(0, 2, 2), (1, 2, 2), (2, 1, 40)], repetition=3)
    lowered = check_lowering([tp], "tile", "read", "int32")
    assert len(lowered.bds) == 2
    assert lowered.task.repeat_count == 3 * 40
    assert {(b.bd.iteration_wrap, b.bd.iteration_stepsize) for b in lowered.bds} == {(40, 64)}
    # With 70 planes the iteration cannot hold them: the error says how many BDs.
    with pytest.raises(LoweringError, match=r"needs 140 BDs but 16 are available"):
        lower([tp.resolve([8, 8, 70]).__class__.from_dict(
            {**tp.to_dict(), "buffer_dimension": [8, 8, 70],
             "tile_traversal": [(0, 2, 2), (1, 2, 2), (2, 1, 70)]})], "tile", "read")
    tp = TilingParameters(buffer_dimension=[4, 4, 4, 4], tiling_dimension=[2, 2, 2, 1],
                          tile_traversal=[(0, 2, 2), (1, 2, 2), (3, 1, 4)], repetition=2)
    lowered = check_lowering([tp], "tile", "read", "int32")
    bd = lowered.bds[0].bd
    assert lowered.task.repeat_count == 8
    assert (bd.iteration_wrap, bd.iteration_stepsize) == (4, 64)


def test_packet_port_ids_mark_their_bds():
    entries = [{"buffer_dimension": [32], "tiling_dimension": [16], "packet_port_id": 0},
               {"buffer_dimension": [32], "tiling_dimension": [16], "offset": [16],
                "packet_port_id": 3, "phase": 1}]
    lowered = check_lowering(entries, "memtile", "read", "int32")
    assert [(b.bd.enable_packet, b.bd.packet_id, b.phase) for b in lowered.bds] == [
        (1, 0, 0), (1, 3, 1)]
    # Every packet ends with TLAST, though the first BD is not the chain's last.
    assert [b.bd.tlast_suppress for b in lowered.bds] == [0, 0]


@pytest.mark.parametrize(("dtype", "words"), [("int8", 8), ("int16", 16), ("cint32", 64)])
def test_sub_word_and_wide_types_pack_dimension_0(dtype, words):
    tp = TilingParameters(buffer_dimension=[16, 2], tiling_dimension=[16, 1],
                          tile_traversal=[(1, 1, 2)])
    lowered = check_lowering([tp], "memtile", "read", dtype)
    assert lowered.bds[0].bd.buffer_length == words


def test_pad_wider_than_its_field_moves_up_a_level():
    # 200 zeros before 64 data words: more than d0_zero_before holds (63), so the
    # zeros are 2 padded rows of 100 words (64 data + 36 after) at D1.
    tp = TilingParameters(buffer_dimension=[64], tiling_dimension=[300], offset=[-200])
    (only,) = check_lowering([tp], "memtile", "read", "int32").bds
    fields = only.bd.fields(include_defaults=False)
    assert fields | {"d1_wrap": 1} == {"buffer_length": 300, "d0_wrap": 64, "d0_zero_after": 36,
                                       "d1_zero_before": 2, "d1_wrap": 1, "valid_bd": 1}


def test_budget_error_names_the_limit_and_the_count():
    # 700 planes, each a tile padded in dimension 1, 7 planes apart: alike tiles fold
    # into one BD dimension and the planes into another, so this fits one BD ...
    planes = TilingParameters(buffer_dimension=[2, 3, 5000], tiling_dimension=[2, 3, 1],
                              offset=[0, -1, 0], tile_traversal=[(2, 7, 700)])
    assert len(check_lowering([planes], "memtile", "read", "int32").bds) == 1
    # ... and 64-word pads before 8-word rows are one level of 8 padded rows. With
    # 7-word rows no level divides the pad, d0_zero_before (63) is 1 short, and the
    # rows need BDs of their own.
    rows = TilingParameters(buffer_dimension=[8, 30], tiling_dimension=[72, 30], offset=[-64, 0])
    assert len(check_lowering([rows], "memtile", "read", "int32").bds) == 1
    rows = TilingParameters(buffer_dimension=[7, 30], tiling_dimension=[71, 30], offset=[-64, 0])
    with pytest.raises(LoweringError) as caught:
        lower([rows], "memtile", "read")
    message = str(caught.value)
    found = re.search(r"needs (\d+) BDs but 24 are available to a memtile channel "
                      r"from BD 0 \((\d+) over\)", message)
    assert found and (int(found.group(1)), int(found.group(2))) == (31, 7)
    assert (caught.value.needed, caught.value.available) == (31, 24)
    assert "d0_zero_before 64 exceeds 63 (1 over)" in message
    # The count is the chain it would build: 20 such rows do fit, in 21 BDs.
    rows = TilingParameters(buffer_dimension=[7, 20], tiling_dimension=[71, 20], offset=[-64, 0])
    assert len(check_lowering([rows], "memtile", "read", "int32").bds) == 21


def test_first_bd_out_of_range():
    with pytest.raises(LoweringError, match=r"^first_bd=16: must be in 0..15 for a tile"):
        lower([{"buffer_dimension": [8]}], "tile", "read", first_bd=16)
