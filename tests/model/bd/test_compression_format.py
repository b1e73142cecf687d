"""The compressed stream format (model/bd/compression.py): figures, corners, round trips."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aiedma.model.bd.compression import (
    CompressionError,
    block_sizes,
    compress_words,
    compressed_length,
    decompress_words,
)


def sparse_words(rng, n, zero_fraction):
    """``n`` random words with about ``zero_fraction`` of their bytes zero."""
    data = rng.integers(1, 256, 4 * n, dtype=np.uint8)
    data[rng.random(4 * n) < zero_fraction] = 0
    return data.view("<u4").astype(np.uint32)


def reference_compress(words):
    """Byte by byte, as the format's text reads (the test's own naive version)."""
    out = []
    for start in range(0, len(words), 8):
        block = [int(w) >> 8 * k & 0xFF for w in words[start:start + 8] for k in range(4)]
        mask = sum(1 << i for i, b in enumerate(block) if b)
        packed = [b for b in block if b]
        packed += [0] * (-len(packed) % 4)
        out.append(mask)
        out += [sum(packed[j + k] << 8 * k for k in range(4)) for j in range(0, len(packed), 4)]
    return out


def test_arange_after_the_warm_up_bd_compresses_to_1920_words():
    # mlir-aie programming_examples/basic/dma_compression: arange(4096) int32 in BDs of
    # 1024 words, the first sent as it is, the other 3072 words in 1920 (2944 in all).
    words = np.arange(4096)
    sent = sum(compressed_length(words[s:s + 1024]) for s in range(1024, 4096, 1024))
    assert sent == 1920
    assert 1024 + sent == 2944
    assert set(block_sizes(words[1024:]).tolist()) == {5}   # mask + 15 or 16 bytes


def test_all_zero_block_is_one_word_and_a_full_block_nine():
    assert compress_words(np.zeros(8, np.uint32)).tolist() == [0]
    full = np.full(8, 0x04030201, np.uint32)
    assert compress_words(full).tolist() == [0xFFFF_FFFF] + [0x04030201] * 8


def test_byte_order_is_little_endian_in_address_order():
    words = [0, 0x0000_0500, 0, 0, 0, 0, 0, 0x0700_0000]
    assert compress_words(words).tolist() == [1 << 5 | 1 << 31, 0x0000_0705]


def test_a_partial_block_masks_only_its_bytes():
    words = [0x11, 0, 0x2200]             # 3 words: one short block
    assert compress_words(words).tolist() == [1 << 0 | 1 << 9, 0x2211]
    assert decompress_words([1 << 0 | 1 << 9, 0x2211], 3).tolist() == words
    # Bits past the short block's bytes name nothing: ignored.
    assert decompress_words([1 << 0 | 1 << 9 | 1 << 31, 0x2211], 3).tolist() == words


def test_empty_and_negative_words():
    assert compress_words([]).tolist() == []
    assert decompress_words([], 0).tolist() == []
    assert decompress_words(compress_words([-1]), 1).tolist() == [0xFFFF_FFFF]


@settings(max_examples=200, deadline=None, derandomize=True)
@given(n=st.integers(0, 70), zero_fraction=st.floats(0, 1), seed=st.integers(0, 2**32 - 1))
def test_round_trip_and_reference_on_random_sparse_words(n, zero_fraction, seed):
    words = sparse_words(np.random.default_rng(seed), n, zero_fraction)
    packed = compress_words(words)
    assert packed.tolist() == reference_compress(words)
    assert packed.size == compressed_length(words)
    assert decompress_words(packed, n).tolist() == words.tolist()


@pytest.mark.parametrize(("words", "n", "match"), [
    ([], 1, r"len\(words\)=0: the stream ends before block 0's mask"),
    ([0xFF], 8, r"len\(words\)=1: block 0's mask 0x000000ff needs 2 packed words"),
    ([0, 0], 8, r"len\(words\)=2: the 8 words end at word 1; no word may follow"),
    ([0], -1, r"n=-1: the words to write are an integer >= 0"),
])
def test_bad_compressed_streams_name_the_rule(words, n, match):
    with pytest.raises(CompressionError, match=match):
        decompress_words(words, n)


@pytest.mark.parametrize(("words", "match"), [
    ([2**32], r"words\[0\]=4294967296: a word is -2147483648 .. 4294967295"),
    ([[1, 2]], r"words.shape=\[1, 2\]: must be a 1-D list of words"),
    ([1.5], r"words.dtype='float64': words must be integers"),
])
def test_bad_words_name_the_rule(words, match):
    with pytest.raises(CompressionError, match=match):
        compress_words(words)
