"""The S2MM Current_Write_Count register (AM025): the model's word against the whole RTL
DMA's, read in every cycle of runs with chained and repeated BDs, finish on TLAST and a
channel reset in the middle of a BD."""

import numpy as np
import pytest

from aiedma.model.arch.kinds import BD_REGISTER_STRIDE, DMA_KINDS
from aiedma.model.arch.registers import (
    CONTROL_FIELDS,
    WRITE_COUNT_BITS,
    control_address,
    start_queue_address,
    write_count_address,
)
from aiedma.model.bd.descriptor import BufferDescriptor
from aiedma.model.bd.task import Task
from aiedma.model.system.stream import Beat
from aiedma.tb.system.dma_check import run_dma, words_taken


def base(kind):
    return 0 if kind == "shim" else DMA_KINDS[kind].memory_window("own").start


def chain(kind, lengths):
    """BDs 0.. of ``lengths`` words, chained, 8 words apart."""
    return {k: BufferDescriptor(kind, base_address=base(kind) + 8 * k, buffer_length=n,
                                valid_bd=1, **({"use_next_bd": 1, "next_bd": k + 1}
                                               if k + 1 < len(lengths) else {}))
            for k, n in enumerate(lengths)}


def writes_of(kind, table, *pushed, control=0):
    registers = DMA_KINDS[kind].bd_register_base
    queue = start_queue_address(kind, "s2mm", 0)
    return [*((registers + BD_REGISTER_STRIDE * n + 4 * w, word)
              for n, bd in table.items() for w, word in enumerate(bd.encode())),
            (control_address(kind, "s2mm", 0), control),
            *((queue, task.encode()) for task in pushed)]


def counts(result, kind):
    """The words read from S2MM 0's count, by cycle."""
    address = write_count_address(kind, 0)
    return {cycle: word for cycle, a, word in result.reads if a == address}


def runs(pairs):
    """``(cycle, value)`` pairs with each run of equal values kept once, at its first."""
    return [(c, v) for k, (c, v) in enumerate(pairs) if k == 0 or pairs[k - 1][1] != v]


def second_pass_last_bd(kind, writes, lengths):
    """The cycle the last BD of the second pass writes its first word, in the model's run
    with the count read every cycle (its count first reads 1 there; the longest BD alone
    reaches ``max(lengths)``)."""
    reads = [(c, write_count_address(kind, 0), None) for c in range(100)]
    taken = words_taken(kind, writes, timed_writes=reads)["s2mm0"]
    alone = run_dma(kind, writes, memory=np.zeros(32, dtype=np.int64),
                    inputs={"s2mm0": list(range(1, taken + 1))}, timed_writes=reads,
                    simulator=None)
    by_cycle = counts(alone, kind)
    longest = [c for c in sorted(by_cycle) if by_cycle[c] == max(lengths) - 1]
    return longest[1] - (max(lengths) - 2)


@pytest.mark.parametrize("kind", ["tile", "memtile", "shim"])
def test_the_count_restarts_with_each_bd_and_a_reset_clears_it_as_in_the_rtl(kind):
    """Chained BDs of 3, 1 and 5 words, twice; a channel reset in the middle of a BD of
    the second pass, then the task pushed again: read every cycle but the reset's."""
    lengths = [3, 1, 5]
    writes = writes_of(kind, chain(kind, lengths), Task(0, 2))
    control = control_address(kind, "s2mm", 0)
    reset = 1 << CONTROL_FIELDS[kind, "s2mm"]["reset"][0] if kind != "shim" else 0
    at = second_pass_last_bd(kind, writes, lengths)     # the reset, in that BD
    push = (start_queue_address(kind, "s2mm", 0), Task(0, 1).encode())
    host = {at: (control, reset), at + 1: (control, 0), at + 2: push}
    if kind == "shim":   # no reset bit on the shim: the push alone, once it is idle
        host = {at + 18: push}
    address = write_count_address(kind, 0)
    timed = [(c, *host[c]) if c in host else (c, address, None) for c in range(at + 48)]
    taken = words_taken(kind, writes, timed_writes=timed)["s2mm0"]
    result = run_dma(kind, writes, memory=np.zeros(32, dtype=np.int64),
                     inputs={"s2mm0": list(range(1, taken + 1))}, timed_writes=timed,
                     simulator="amaranth", reuse=True)
    by_cycle = counts(result, kind)
    seen = [by_cycle[c] for c in sorted(by_cycle)]
    # A pass's counts with repeats dropped (1, 2, 3, 1, 2, 3, 4, 5: the one-word BD's 1
    # and the next BD's first 1 are one run), so bubbles between BDs do not matter.
    counted = runs(sorted(by_cycle.items()))
    values = [v for _, v in counted]
    one_pass = [v for _, v in runs(list(enumerate(k for n in lengths for k in range(1, n + 1))))]
    starts = [counted[k][0] for k in range(len(counted)) if values[k:k + len(one_pass)] == one_pass]
    assert seen[0] == 0 and max(seen) == max(lengths)
    if kind == "shim":
        assert len(starts) == 3                               # two passes, then the push
    else:   # the second pass is cut: counting at the reset, 0 after it, then the push
        assert len(starts) == 2 and by_cycle[at - 1] > 0 and by_cycle[at + 3] == 0
        assert starts[1] > at


@pytest.mark.parametrize("kind", ["tile", "memtile"])
def test_after_a_bd_finished_on_tlast_the_count_holds_its_words(kind):
    """Finish on TLAST (mode 1): a BD of 6 words ended by a TLAST on its 2nd word reads 2
    from then on (no BD after it), the next task's BD of 4 words counting from 1 again."""
    writes = writes_of(kind, chain(kind, [6]), Task(0, 1), control=1 << 16)
    words = [Beat(1), Beat(2, True), Beat(3), Beat(4), Beat(5), Beat(6, True)]
    address = write_count_address(kind, 0)
    push = (start_queue_address(kind, "s2mm", 0), Task(0, 1).encode())
    timed = [(c, *push) if c == 25 else (c, address, None) for c in range(50)]
    result = run_dma(kind, writes, memory=np.zeros(16, dtype=np.int64),
                     inputs={"s2mm0": words}, timed_writes=timed, simulator="amaranth",
                     reuse=True)
    by_cycle = counts(result, kind)
    seen = [by_cycle[c] for c in sorted(by_cycle)]
    held = seen[seen.index(2):25]
    assert len(held) > 5 and set(held) == {2}           # the cut BD's words, held
    assert seen[25:].count(4) > 5 and seen[-1] == 4     # the next: 1 .. 4, its TLAST last
    assert all(word < 1 << WRITE_COUNT_BITS[kind] for word in seen)
