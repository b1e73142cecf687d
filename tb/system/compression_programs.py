"""Random (de)compression programs for the whole DMA: model against RTL on every cycle.

A program (:func:`random_compression_program`) runs two tasks on one core or memory tile
at once: MM2S 0 reads a chain of 1 to 3 BDs of sparse words (a random share of zero
bytes), each BD with or without ``enable_compression``, some with a packet header, its
``tlast_suppress`` random; S2MM 0 writes a chain of 1 to 3 BDs from a stream that is
each BD's words compressed (``model/bd/compression.py``) where its BD and the channel
have decompression on, as they are elsewhere, with a packet header before a packet BD.
Each control bit is set in most programs and clear in some, so a BD bit alone is run
too. For a DMA built without the (de)compressors (``compression=False``) the control
bits are written as ever but read 0, so the stream carries every BD's words as they
are. :func:`~.dma_check.run_dma` compares the words and their cycles on the stream, the
memory, the locks and the token cycles.
"""

from __future__ import annotations

import random

import numpy as np

from ...model.arch.kinds import DMA_KINDS
from ...model.arch.registers import COMPRESSING_KINDS, control_address, start_queue_address
from ...model.bd.compression import compress_words
from ...model.bd.descriptor import BufferDescriptor
from ...model.bd.packet import packet_header
from ...model.bd.task import Task
from ...model.errors import AiedmaError, field_error
from ...model.system.stream import Beat
from .random_programs import WritesProgram, bd_table_writes

__all__ = ["CompressionProgram", "random_compression_program"]

_ON = 1 << 4   # compression_enable (MM2S) / decompression_enable (S2MM)


CompressionProgram = WritesProgram
"""A random (de)compression program (:class:`~.random_programs.WritesProgram`)."""


def _sparse(rng: random.Random, n: int) -> list[int]:
    zero = rng.random()
    return [sum((0 if rng.random() < zero else rng.randrange(1, 256)) << 8 * k
                for k in range(4)) for _ in range(n)]


def _chain(rng: random.Random, kind: str, first: int, base: int) -> dict[int, BufferDescriptor]:
    """1 to 3 chained BDs from BD ``first``, 32 words apart from ``base``."""
    count, table = rng.randint(1, 3), {}
    for k in range(count):
        more = {"use_next_bd": 1, "next_bd": first + k + 1} if k + 1 < count else {}
        table[first + k] = BufferDescriptor(
            kind, base_address=base + 32 * k, buffer_length=rng.randint(1, 20), valid_bd=1,
            enable_compression=int(rng.random() < 0.7), enable_packet=int(rng.random() < 0.3),
            packet_id=rng.randrange(32), tlast_suppress=int(rng.random() < 0.3), **more)
    return table


def random_compression_program(seed: int, kind: str = "tile", *,
                               compression: bool = True) -> CompressionProgram:
    """A random :class:`CompressionProgram` on ``kind`` (``"tile"`` or ``"memtile"``),
    for a DMA built with its (de)compressors or, ``compression=False``, without."""
    if kind not in COMPRESSING_KINDS:
        raise field_error(AiedmaError, "kind", kind,
                          "compression is in core-tile and memory-tile DMAs only (AM020)")
    rng = random.Random(seed)
    own = DMA_KINDS[kind].memory_window("own").start
    reads, writes = _chain(rng, kind, 0, own), _chain(rng, kind, 8, own + 128)
    memory = np.array(_sparse(rng, 96), dtype=np.int64)
    compress, decompress = rng.random() < 0.8, rng.random() < 0.8
    words: list[Beat] = []
    for bd in writes.values():
        if bd.enable_packet:
            words.append(Beat(packet_header(bd.packet_id, 0, 0, 0)))
        data = _sparse(rng, bd.buffer_length)
        packed = compression and decompress and bd.enable_compression
        sent = compress_words(data).tolist() if packed else data
        words += [Beat(int(w), k == len(sent) - 1) for k, w in enumerate(sent)]
    program = bd_table_writes(kind, {**reads, **writes})
    program += [(control_address(kind, "mm2s", 0), _ON * compress),
                (control_address(kind, "s2mm", 0), _ON * decompress),
                (start_queue_address(kind, "s2mm", 0), Task(8, 1, True).encode()),
                (start_queue_address(kind, "mm2s", 0),
                 Task(0, rng.randint(1, 2), True).encode())]
    def bds(chain: dict) -> list:
        return [(bd.buffer_length, bd.enable_compression) for bd in chain.values()]
    text = f"{kind}, compress {compress} {bds(reads)}, decompress {decompress} {bds(writes)}"
    return CompressionProgram(seed, kind, program, memory, {"s2mm0": words}, text)
