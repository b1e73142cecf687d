"""Random out-of-order programs: an S2MM channel in out-of-order mode, the whole RTL DMA
against the model (:func:`~.dma_check.run_dma`, every cycle its outputs show).

S2MM 0 of a core or memory tile runs one or two out-of-order tasks over a stream of
packets, each packet's header naming one of a few receiving BDs (in the channel's BDs,
with iteration, lock acquires and releases, and chain and packet fields the mode must
ignore), in finish-on-TLAST mode 1 now and then (packets that end early); MM2S 0 sends a
packet BD with an out-of-order BD ID at the same time, so the header the RTL inserts is
compared too.
"""

from __future__ import annotations

import random

import numpy as np

from ...model.arch.kinds import DMA_KINDS
from ...model.arch.registers import control_address, lock_value_address, start_queue_address
from ...model.bd.descriptor import BufferDescriptor
from ...model.bd.packet import packet_header
from ...model.bd.task import Task
from ...model.errors import AiedmaError, field_error
from ...model.system.stream import Beat
from .random_programs import WritesProgram, bd_table_writes

__all__ = ["OutOfOrderProgram", "random_out_of_order_program"]

OUT_OF_ORDER_KINDS = ("tile", "memtile")
"""The kinds the random programs run on (the shim's external memory is left out)."""

_CREDITS = 40
"""Lock 4's value at the start: more than a program's packets, so acquires never wait
for ever."""


OutOfOrderProgram = WritesProgram
"""A random out-of-order program (:class:`~.random_programs.WritesProgram`)."""


def _receiving_bds(rng: random.Random, kind: str) -> dict[int, BufferDescriptor]:
    """One to four BDs of S2MM 0, 32 words apart, some iterating, some releasing lock 3,
    some acquiring lock 4 (which starts at ``_CREDITS``), some with chain or packet
    fields (ignored out of order)."""
    own = DMA_KINDS[kind].memory_window("own").start
    lock = DMA_KINDS[kind].lock_window("own").start + 3
    ids = rng.sample(list(DMA_KINDS[kind].channel_bds(0))[:15], rng.randint(1, 4))
    table = {}
    for k, bd_id in enumerate(ids):
        fields: dict[str, int] = {}
        if rng.random() < 0.4:
            fields.update(iteration_wrap=rng.randint(2, 3), iteration_stepsize=8)
        if rng.random() < 0.5:
            fields.update(lock_rel_id=lock, lock_rel_value=1)
        if rng.random() < 0.3:
            fields.update(lock_acq_enable=1, lock_acq_id=lock + 1, lock_acq_value=-1)
        if rng.random() < 0.3:
            fields.update(use_next_bd=1, next_bd=ids[0])
        if rng.random() < 0.3:
            fields.update(enable_packet=1, packet_id=rng.randrange(32))
        table[bd_id] = BufferDescriptor(kind, base_address=own + 32 * k,
                                        buffer_length=rng.randint(1, 6), valid_bd=1, **fields)
    return table


def random_out_of_order_program(seed: int, kind: str = "tile") -> OutOfOrderProgram:
    """A random :class:`OutOfOrderProgram` on ``kind`` (``"tile"`` or ``"memtile"``).

    Raises
    ------
    AiedmaError
        For another kind.
    """
    if kind not in OUT_OF_ORDER_KINDS:
        raise field_error(AiedmaError, "kind", kind,
                          f"out-of-order programs run on {', '.join(OUT_OF_ORDER_KINDS)}")
    rng = random.Random(seed)
    own = DMA_KINDS[kind].memory_window("own").start
    table = _receiving_bds(rng, kind)
    tasks = [Task(rng.randrange(16), rng.randint(1, 5), rng.random() < 0.5)
             for _ in range(rng.randint(1, 2))]
    fot = rng.random() < 0.3      # finish on TLAST (mode 1): a packet may end its BD early
    words: list[Beat] = []
    named: list[int] = []
    for _ in range(sum(t.repeat_count for t in tasks)):
        bd_id = rng.choice(sorted(table))
        named.append(bd_id)
        words.append(Beat(packet_header(rng.randrange(32), 0, 1, 2, out_of_order_bd_id=bd_id)))
        length = table[bd_id].buffer_length
        if fot:
            length = rng.randint(1, length)
        words += [Beat(rng.randrange(1 << 16), i == length - 1) for i in range(length)]
    sender = DMA_KINDS[kind].channel_bds(0)[-1]    # MM2S 0's packet BD: channel 0's last
    table[sender] = BufferDescriptor(kind, base_address=own + 200, buffer_length=3,
                                     enable_packet=1, packet_id=rng.randrange(32),
                                     out_of_order_bd_id=rng.randrange(64), valid_bd=1)
    writes = bd_table_writes(kind, table)
    writes.append((lock_value_address(kind, 4), _CREDITS))
    writes.append((control_address(kind, "s2mm", 0),
                   int(fot) << 16 | rng.randrange(256) << 8 | 1 << 3))
    writes += [(start_queue_address(kind, "s2mm", 0), task.encode()) for task in tasks]
    writes.append((start_queue_address(kind, "mm2s", 0), Task(sender, 1, True).encode()))
    text = (f"{kind}, FoT {int(fot)}, BDs {sorted(t for t in table if t != sender)}, tasks "
            f"{[t.repeat_count for t in tasks]}, packets to {named}")
    memory = np.array([rng.randrange(1 << 16) for _ in range(256)])
    return OutOfOrderProgram(seed, kind, writes, memory, {"s2mm0": words}, text)
