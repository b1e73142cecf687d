"""Random programs for every channel of a DMA at once, whose results do not depend on timing.

:func:`random_stream_program` draws a program a host would write through a DMA's
registers: every MM2S channel reads a chain of 1 to 3 random BDs (2-D and 3-D walks,
iteration offsets, zero padding on the memory tile, packet headers, TLAST suppressed or
not), repeated; every S2MM channel writes a chain of 1 to 3 BDs (linear or 2-D) into a
region of its own, repeated; some channels send completion tokens, with a random
controller ID. About half the MM2S channels wait, before each pass of their chain, for a
lock that the S2MM channel of the same number releases after each pass of its own.

Nothing a channel reads is written by another, and every lock is a count of passes, so
the words on each stream, the memory after the run, the locks, the tokens and every
register at the end are the same whatever the streams' backpressure and pauses: the
program's model run (:func:`~.dma_check.run_dma` with ``simulator=None``) is the
reference for a run under any bus timing, as the AXI bench needs
(:mod:`aiedma.tb.block.axi_dma_bench`).
"""

from __future__ import annotations

import random

import numpy as np

from ...model.arch.kinds import DMA_KINDS
from ...model.arch.registers import CONTROL_FIELDS, control_address, start_queue_address
from ...model.bd.descriptor import BufferDescriptor
from ...model.bd.task import Task
from ...model.errors import AiedmaError, field_error
from ...model.system.stream import Beat
from .dma_check import words_taken
from .random_programs import PROGRAM_PLACES, WritesProgram, bd_table_writes, random_read

__all__ = ["REGION_WORDS", "SOURCE_WORDS", "random_stream_program", "region_words"]

SOURCE_WORDS = 256
"""Random words at the start of the tile's memory, which every MM2S channel reads."""

REGION_WORDS = 1024
"""Words of each S2MM channel's region, after the first ``2 * REGION_WORDS``."""


def region_words(kind: str) -> int:
    """Words of memory a program of ``kind`` touches, from the tile's first word: the
    source, the MM2S walks past it, and one region per S2MM channel."""
    return REGION_WORDS * (2 + DMA_KINDS[kind].channels)


def _bds_of(kind: str, channel: int, direction: str, count: int) -> list[int]:
    """``count`` BD IDs of the channel's own share of the BDs it may run (its half of
    the table on the memory tile, the whole table elsewhere), split evenly between
    the channels of both directions that run the same BDs."""
    dma = DMA_KINDS[kind]
    bds = dma.channel_bds(channel)
    sharing = dma.half_channels(bds)
    per = len(bds) // (2 * len(sharing))
    slot = 2 * sharing.index(channel) + (direction == "s2mm")
    return [bds.start + per * slot + k for k in range(count)]


def _chain(bds: list[BufferDescriptor], ids: list[int]) -> dict[int, BufferDescriptor]:
    """The BDs under ``ids``, each pointing at the next."""
    table = {}
    for k, (bd, bd_id) in enumerate(zip(bds, ids, strict=True)):
        table[bd_id] = bd.replace(use_next_bd=1, next_bd=ids[k + 1]) if k + 1 < len(ids) else bd
    return table


def _write_bd(rng: random.Random, kind: str, base: int) -> BufferDescriptor:
    """An S2MM BD of up to 24 words inside 512 words from ``base``: linear or 2-D."""
    length = rng.randint(1, 24)
    if rng.random() < 0.5:
        return BufferDescriptor(kind, base_address=base, buffer_length=length, valid_bd=1)
    return BufferDescriptor(kind, base_address=base, buffer_length=length, valid_bd=1,
                            d0_wrap=rng.randint(1, 4), d0_stepsize=rng.randint(1, 3),
                            d1_stepsize=rng.randint(4, 16))


def _control(rng: random.Random, kind: str, direction: str, channel: int) -> tuple[int, int]:
    """The channel's control register: a random controller ID, nothing else on (the
    S2MM in FoT mode 0, which takes a TLAST as data)."""
    lsb, width = CONTROL_FIELDS[kind, direction]["controller_id"]
    return control_address(kind, direction, channel), rng.randrange(1 << width) << lsb


def random_stream_program(seed: int, kind: str = "tile") -> WritesProgram:
    """A random program on every channel of ``kind`` (a key of ``PROGRAM_PLACES``) whose
    outcome does not depend on the streams' timing; the same seed and kind, the same
    program. Its memory is :func:`region_words` words from the tile's first word; its
    inputs give each S2MM channel exactly the words its tasks take, the last with TLAST
    (mode 0 takes a TLAST as data, and an AXI4-Stream source ends its last frame with
    one)."""
    if kind not in PROGRAM_PLACES:
        raise field_error(AiedmaError, "kind", kind, "stream programs run on "
                          f"{' or '.join(PROGRAM_PLACES)}")
    rng = random.Random(seed)
    channels = DMA_KINDS[kind].channels
    first = 0 if kind == "shim" else DMA_KINDS[kind].memory_window("own").start
    own_lock = DMA_KINDS[kind].lock_window("own").start   # a BD's ID of the tile's lock 0
    writes: list[tuple[int, int]] = []
    lines = []
    for n in range(channels):
        chain, repeat = rng.randint(1, 3), rng.randint(1, 3)
        reads = [random_read(rng, first + 8 * k + 16 * n, kind) for k in range(chain)]
        targets = [_write_bd(rng, kind, first + REGION_WORDS * (2 + n) + 512 * (k % 2))
                   for k in range(rng.randint(1, 3))]
        synced = rng.random() < 0.5
        if synced:   # the reader's pass p waits for the writer's pass p
            lock = own_lock + 1 + n
            reads[0] = reads[0].replace(lock_acq_enable=1, lock_acq_id=lock, lock_acq_value=-1)
            targets[-1] = targets[-1].replace(lock_rel_id=lock, lock_rel_value=1)
        write_repeat = repeat if synced else rng.randint(1, 3)
        mm2s_ids = _bds_of(kind, n, "mm2s", chain)
        s2mm_ids = _bds_of(kind, n, "s2mm", len(targets))
        writes += bd_table_writes(kind, _chain(reads, mm2s_ids))
        writes += bd_table_writes(kind, _chain(targets, s2mm_ids))
        writes += [_control(rng, kind, "mm2s", n), _control(rng, kind, "s2mm", n)]
        writes += [(start_queue_address(kind, "mm2s", n),
                    Task(mm2s_ids[0], repeat, rng.random() < 0.5).encode()),
                   (start_queue_address(kind, "s2mm", n),
                    Task(s2mm_ids[0], write_repeat, rng.random() < 0.5).encode())]
        lines.append(f"channel {n}: read {[bd.buffer_length for bd in reads]} x{repeat}, "
                     f"write {[bd.buffer_length for bd in targets]} x{write_repeat}"
                     f"{', synced' if synced else ''}")
    memory = np.zeros(region_words(kind), dtype=np.int64)
    memory[:SOURCE_WORDS] = [rng.randrange(1 << 32) for _ in range(SOURCE_WORDS)]
    taken = words_taken(kind, writes, memory)
    inputs = {}
    for name, count in sorted(taken.items()):
        beats = [Beat(rng.randrange(1 << 32), rng.random() < 0.2) for _ in range(count)]
        if beats:
            beats[-1] = Beat(beats[-1].data, True)
        inputs[name] = beats
    return WritesProgram(seed, kind, writes, memory, inputs, f"{kind}: " + "; ".join(lines))
