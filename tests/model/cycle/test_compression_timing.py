"""The compressor and decompressor's cycles (model/cycle/compression.py) against the format."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from aiedma.model.bd.compression import compress_words
from aiedma.model.cycle.compression import Compressor, Decompressor
from aiedma.model.cycle.contract import COMPRESS_LATENCY, DECOMPRESS_LATENCY


def sparse_bd(rng, n):
    data = rng.integers(1, 256, 4 * n, dtype=np.uint8)
    data[rng.random(4 * n) < rng.random()] = 0
    return data.view("<u4").astype(np.uint32).tolist()


def run_compressor(bds, modes, rng, cycles=5000):
    """Words of ``bds`` offered in order (``modes``: compression per BD), random valid and
    ready; returns the words out with TLAST and the cycle each input word was taken."""
    words = [(w, k == len(bd) - 1, k == len(bd) - 1, mode)
             for bd, mode in zip(bds, modes, strict=True) for k, w in enumerate(bd)]
    c, out, i = Compressor(), [], 0
    for _ in range(cycles):
        offer = i < len(words) and rng.random() < 0.8
        data, last, end, mode = words[i] if offer else (0, False, False, False)
        ready = bool(rng.random() < 0.7)
        cyc = c.sample(offer, data, last, False, mode, ready)
        taken = offer and cyc.i_ready
        sent = cyc.o_valid and ready
        if sent:
            out.append((cyc.o_data, cyc.o_last))
        c.clock((data, last, end) if taken else None, False, mode, sent)
        i += taken
        if i == len(words) and c.empty:
            return out
    raise AssertionError("the compressor did not finish")


@settings(max_examples=60, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**32 - 1), lengths=st.lists(st.integers(1, 20), min_size=1,
                                                        max_size=5))
def test_compressor_gives_the_format_under_random_stalls(seed, lengths):
    rng = np.random.default_rng(seed)
    bds = [sparse_bd(rng, n) for n in lengths]
    modes = [bool(m) for m in rng.integers(0, 2, len(bds))]
    expect = []
    for bd, mode in zip(bds, modes, strict=True):
        words = compress_words(bd).tolist() if mode else bd
        expect += [(w, k == len(words) - 1) for k, w in enumerate(words)]
    assert run_compressor(bds, modes, rng) == expect


def test_a_mask_leaves_compress_latency_after_its_last_word():
    c = Compressor()
    for k in range(8):
        assert c.sample(True, k, False, False, True, True).i_ready
        c.clock((k, False, False), False, True, False)
    for _ in range(COMPRESS_LATENCY - 1):
        assert not c.sample(False, 0, False, False, True, True).o_valid
        c.clock(None, False, True, False)
    assert c.sample(False, 0, False, False, True, True).o_data == 0x1111_1110   # words 1-7


def test_words_without_compression_pass_in_their_cycle():
    c = Compressor()
    cyc = c.sample(True, 7, True, False, False, True)
    assert (cyc.i_ready, cyc.o_valid, cyc.o_data, cyc.o_last) == (True, True, 7, True)


def run_decompressor(bds, modes, rng, cycles=5000):
    stream = []
    for bd, mode in zip(bds, modes, strict=True):
        words = compress_words(bd).tolist() if mode else bd
        stream += [(w, k == len(words) - 1, mode, len(bd)) for k, w in enumerate(words)]
    d, out, i, left, bd_index = Decompressor(), [], 0, len(bds[0]), 0
    for _ in range(cycles):
        offer = i < len(stream) and rng.random() < 0.8
        data, last, _, _ = stream[i] if offer else (0, False, False, 0)
        mode = modes[bd_index] if bd_index < len(bds) else False
        ready = bool(rng.random() < 0.7)
        cyc = d.sample(offer, data, last, False, mode, ready)
        sent = cyc.o_valid and ready
        if sent:
            out.append((cyc.o_data, cyc.o_last))
        took = d.took(offer, False, mode, sent)
        d.clock((data, last) if took else None, False, mode, left, sent)
        i += took
        if sent:
            left -= 1
            if not left:
                bd_index += 1
                left = len(bds[bd_index]) if bd_index < len(bds) else 0
        if bd_index == len(bds):
            return out
    raise AssertionError("the decompressor did not finish")


@settings(max_examples=60, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**32 - 1), lengths=st.lists(st.integers(1, 20), min_size=1,
                                                        max_size=5))
def test_decompressor_gives_the_words_back_under_random_stalls(seed, lengths):
    rng = np.random.default_rng(seed)
    bds = [sparse_bd(rng, n) for n in lengths]
    modes = [bool(m) for m in rng.integers(0, 2, len(bds))]
    got = run_decompressor(bds, modes, rng)
    assert [w for w, _ in got] == [w for bd in bds for w in bd]
    ends = np.cumsum(lengths) - 1
    assert [k for k, (_, last) in enumerate(got) if last] == ends.tolist()


def test_a_block_s_first_word_comes_decompress_latency_after_its_mask():
    d = Decompressor()
    assert d.sample(True, 0, False, False, True, True).i_ready     # an all-zero mask
    d.clock((0, False), False, True, 8, False)
    for _ in range(DECOMPRESS_LATENCY - 1):
        assert not d.sample(False, 0, False, False, True, True).o_valid
        d.clock(None, False, True, 8, False)
    cyc = d.sample(False, 0, False, False, True, True)
    assert (cyc.o_valid, cyc.o_data) == (True, 0)


def test_a_mask_waits_for_the_stage_head_to_have_settled():
    d = Decompressor()
    cyc = d.sample(True, 0, False, False, True, True, settled=False)
    assert not cyc.i_ready and not cyc.o_valid      # a new head: the mask stays
    assert not d.took(True, False, True, True, settled=False)
    assert d.sample(True, 0, False, False, True, True, settled=True).i_ready
