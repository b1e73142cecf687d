"""The DMA's compressed stream format: zero bytes of a BD's words left off the stream.

AM020 ("Sparsity") has the core-tile and memory-tile DMAs (not the shim's) drop the zero
bytes of activations on the AXI4-Stream: MM2S compresses, S2MM decompresses, chosen per BD
by ``enable_compression`` (AM025: core tile BD word 1 bit 31, memory tile BD word 4 bit
31; ``model/bd/fields.py``) and in effect only while the channel's control register
enables it too (``compression_enable`` / ``decompression_enable``, bit 4;
``model/arch/registers.py``). The format is the one UG1583's "compressed load" describes
for the core's decompression: a 32-bit mask where bit ``i`` stands for byte ``i``, a 0
bit a zero byte, a 1 bit the next byte of the data.

A BD's words are cut into **blocks** of 8 words (32 bytes), the first block starting at
the BD's first word. A block is sent as one mask word (bit ``i`` set when byte ``i`` of
the block is not zero) followed by the block's non-zero bytes, packed in order and padded
with zero bytes to a whole word. So a block of all zeros is 1 word and a block without a
zero byte is 9.

Decisions (docs/decisions.md, "Compression"):

* **decision**: bytes are little-endian, in ascending address order: byte ``i`` of a
  block is byte ``i % 4`` (bits ``8 * (i % 4)`` up) of its word ``i // 4``, and mask bit
  ``i`` is that byte; packed bytes fill each packed word from its byte 0. The order AMD
  uses inside the packed words is not published (mlir-aie's dma_compression example says
  AIE-ML and AIE2P differ); this is the order the memory itself holds the bytes in, and
  the block size and word padding are what that example's figures pin (arange words
  1024..4095 give 1920 words, :func:`compressed_length`).
* **decision**: a BD whose length is not a multiple of 8 ends with a short block: its
  mask has bits only for the block's own bytes (the rest are 0) and it packs only them.
  The hardware is not padded with zero words: the receiver knows how many words the block
  holds from its own BD's ``buffer_length`` (``decompress_words``' ``n``), and no word
  the sender's BD does not hold is ever sent or written. Mask bits beyond a short block's
  bytes are ignored on decompression (they name no byte of the BD).
* **decision**: every BD starts a new block; a block never spans two BDs.

Both functions are vectorised over blocks where the format allows it: compression is
NumPy throughout; decompression walks the masks block by block (each mask says where the
next one is) and unpacks with NumPy.
"""

from __future__ import annotations

import numpy as np

from ..errors import AiedmaError, field_error

__all__ = [
    "BLOCK_BYTES",
    "BLOCK_WORDS",
    "CompressionError",
    "block_sizes",
    "compress_words",
    "compressed_length",
    "decompress_words",
]

BLOCK_WORDS = 8
"""Words of a BD one mask word covers."""

BLOCK_BYTES = 4 * BLOCK_WORDS
"""Bytes one mask word covers, one mask bit each."""

_WORD_MIN, _WORD_MAX = -(2 ** 31), 2 ** 32 - 1


class CompressionError(AiedmaError):
    """A word list that is not a compressed (or compressible) stream."""


def _as_words(words: object, name: str) -> np.ndarray:
    """``words`` as a 1-D ``uint32`` array; values ``-2**31 .. 2**32 - 1`` (two's
    complement below 0, as the memory stores them), anything else an error."""
    array = np.asarray(words)
    if array.ndim != 1:
        raise field_error(CompressionError, f"{name}.shape", array.shape,
                          "must be a 1-D list of words")
    if array.size == 0:
        return np.zeros(0, np.uint32)
    if array.dtype.kind not in "iu":
        raise field_error(CompressionError, f"{name}.dtype", str(array.dtype),
                          "words must be integers")
    wide = array.astype(np.int64) if array.dtype != np.uint64 else array
    bad = np.flatnonzero((wide < _WORD_MIN) | (wide > _WORD_MAX))
    if bad.size:
        i = int(bad[0])
        raise field_error(CompressionError, f"{name}[{i}]", int(array[i]),
                          f"a word is {_WORD_MIN} .. {_WORD_MAX}")
    return wide.astype(np.int64).astype(np.uint32)


def _block_bytes(words: np.ndarray) -> np.ndarray:
    """The words as blocks of bytes, ``(blocks, 32)``, a short last block padded with 0."""
    blocks = -(-words.size // BLOCK_WORDS)
    padded = np.zeros(blocks * BLOCK_WORDS, "<u4")
    padded[:words.size] = words
    return padded.view(np.uint8).reshape(blocks, BLOCK_BYTES)


def block_sizes(words: object) -> np.ndarray:
    """Compressed words of each block of ``words``: 1 (its mask) + its packed words.

    Parameters
    ----------
    words : array_like of int
        One BD's words, in order.

    Returns
    -------
    numpy.ndarray of int64
        One entry per block (``ceil(len(words) / 8)`` of them).
    """
    data = _block_bytes(_as_words(words, "words"))
    return 1 + -(-np.count_nonzero(data, axis=1) // 4)


def compressed_length(words: object) -> int:
    """Words :func:`compress_words` gives for ``words`` (one BD's)."""
    return int(block_sizes(words).sum())


def compress_words(words: object) -> np.ndarray:
    """One BD's words as the compressing MM2S sends them.

    Parameters
    ----------
    words : array_like of int
        The BD's words in stream order, each ``-2**31 .. 2**32 - 1``.

    Returns
    -------
    numpy.ndarray of uint32
        Per block of 8 words (the last may be shorter): its mask word, then its
        non-zero bytes packed little-endian and padded with zeros to a whole word.

    Raises
    ------
    CompressionError
        ``words`` is not a 1-D list of words in range (naming the first bad one).

    Examples
    --------
    >>> compress_words([0, 0x0000_0500, 0, 0, 0, 0, 0, 0x0700_0000]).tolist()
    [2147483680, 1797]
    """
    data = _block_bytes(_as_words(words, "words"))
    nonzero = data != 0
    counts = np.count_nonzero(nonzero, axis=1)
    sizes = 1 + -(-counts // 4)
    start = 4 * (np.cumsum(sizes) - sizes)          # each block's first byte in the output
    out = np.zeros(4 * int(sizes.sum()), np.uint8)
    masks = np.packbits(nonzero, axis=1, bitorder="little")   # 4 bytes: mask, little-endian
    out[start[:, None] + np.arange(4)] = masks
    rows, columns = np.nonzero(nonzero)
    rank = np.cumsum(nonzero, axis=1)[rows, columns] - 1   # place among the block's bytes
    out[start[rows] + 4 + rank] = data[rows, columns]
    return out.view("<u4").astype(np.uint32)


def decompress_words(words: object, n: int) -> np.ndarray:
    """The ``n`` words a decompressing S2MM writes from a compressed stream.

    Parameters
    ----------
    words : array_like of int
        The compressed stream of one BD (as :func:`compress_words` gives it).
    n : int
        Words to write: the BD's ``buffer_length``. Block ``b`` holds
        ``min(8, n - 8 * b)`` words; a short block's mask bits past its bytes are ignored.

    Returns
    -------
    numpy.ndarray of uint32
        ``n`` words.

    Raises
    ------
    CompressionError
        ``n`` is negative, or the stream ends before the ``n`` words are whole, or words
        follow them (each naming the length and the rule).
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise field_error(CompressionError, "n", n, "the words to write are an integer >= 0")
    stream = _as_words(words, "words")
    out = np.zeros(-(-int(n) // BLOCK_WORDS) * BLOCK_BYTES, np.uint8).reshape(-1, BLOCK_BYTES)
    position = 0
    bits = np.arange(BLOCK_BYTES, dtype=np.uint32)
    for block in range(out.shape[0]):
        size = min(BLOCK_WORDS, int(n) - BLOCK_WORDS * block)
        if position >= stream.size:
            raise field_error(CompressionError, "len(words)", stream.size,
                              f"the stream ends before block {block}'s mask "
                              f"({n} words to write)")
        mask = int(stream[position]) & ((1 << 4 * size) - 1)
        count = mask.bit_count()
        packed = -(-count // 4)
        if position + 1 + packed > stream.size:
            raise field_error(CompressionError, "len(words)", stream.size,
                              f"block {block}'s mask {mask:#010x} needs {packed} packed "
                              f"words after word {position}")
        data = stream[position + 1:position + 1 + packed].astype("<u4").view(np.uint8)
        out[block, (mask >> bits & 1).astype(bool)] = data[:count]
        position += 1 + packed
    if position != stream.size:
        raise field_error(CompressionError, "len(words)", stream.size,
                          f"the {n} words end at word {position}; no word may follow them")
    return out.reshape(-1).view("<u4")[:int(n)].astype(np.uint32)
