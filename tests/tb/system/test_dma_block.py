# amaranth: UnusedElaboratable=no
# (test_the_block_has_the_channels_of_its_kind builds blocks it never elaborates)
"""The whole RTL DMA (hdl/dma.py): register port, shared BD table, lock unit, status."""

import numpy as np
import pytest

from aiedma.hdl.dma import DMA
from aiedma.model.arch.kinds import BD_REGISTER_STRIDE, DMA_KINDS
from aiedma.model.arch.registers import (
    STATUS_FIELDS,
    lock_value_address,
    start_queue_address,
    status_address,
)
from aiedma.model.bd.descriptor import BufferDescriptor
from aiedma.model.bd.task import Task
from aiedma.model.cycle.contract import RELEASE_QUEUE_DEPTH, load_word_offsets
from aiedma.model.system.locks import LockTable
from aiedma.tb.system.dma_block import AmaranthBlock
from aiedma.tb.system.dma_check import run_dma

OWN = DMA_KINDS["memtile"].memory_window("own").start
LOCK = DMA_KINDS["memtile"].lock_window("own").start   # the BD's ID of own lock 0


def bd_writes(kind, table):
    base = DMA_KINDS[kind].bd_register_base
    return [(base + BD_REGISTER_STRIDE * n + 4 * w, word)
            for n, bd in table.items() for w, word in enumerate(bd.encode())]


def field(word, name):
    lsb, width = STATUS_FIELDS[name]
    return word >> lsb & ((1 << width) - 1)


def simulate(kind, bench):
    """Run ``bench(ctx, dut, write, read)`` on the kind's block on Amaranth, from reset (the
    block elaborated once a process: :meth:`AmaranthBlock.shared`)."""
    block = AmaranthBlock.shared(kind)
    dut = block.dut

    async def testbench(ctx):
        async def write(address, value):
            ctx.set(dut.reg_write, 1)
            ctx.set(dut.reg_addr, address)
            ctx.set(dut.reg_wdata, value)
            await ctx.tick()
            ctx.set(dut.reg_write, 0)

        async def read(address):
            ctx.set(dut.reg_read, 1)
            ctx.set(dut.reg_addr, address)
            await ctx.tick()
            ctx.set(dut.reg_read, 0)
            return ctx.get(dut.reg_rdata)

        await bench(ctx, dut, write, read)

    block.run(testbench)


def test_registers_read_back_and_status_counts_the_queue():
    bd = BufferDescriptor("memtile", base_address=OWN + 5, buffer_length=9, d0_wrap=3,
                          d0_stepsize=2, d1_stepsize=7, iteration_wrap=4,
                          iteration_current=2, iteration_stepsize=11, valid_bd=1)
    seen = {}

    async def bench(ctx, dut, write, read):
        ctx.set(dut.pause, 1)           # nothing runs: the queue only fills
        for address, word in bd_writes("memtile", {30: bd}):
            await write(address, word)
        await write(lock_value_address("memtile", 7), 42)
        seen["words"] = [await read(address) for address, _ in bd_writes("memtile", {30: bd})]
        seen["lock"] = await read(lock_value_address("memtile", 7))
        queue = start_queue_address("memtile", "mm2s", 3)
        for k in range(5):
            await write(queue, Task(30, 1 + k).encode())
            seen[k] = await read(status_address("memtile", "mm2s", 3))
        seen["other"] = await read(status_address("memtile", "mm2s", 1))

    simulate("memtile", bench)
    assert seen["words"] == list(bd.encode()) and seen["lock"] == 42
    assert [field(seen[k], "task_queue_size") for k in range(5)] == [1, 2, 3, 4, 4]
    # the fifth push finds the queue full: flagged, not silently lost
    assert [field(seen[k], "task_queue_overflow") for k in range(5)] == [0, 0, 0, 0, 1]
    assert field(seen[0], "channel_running") == 1 and field(seen[0], "status") == 2
    assert seen["other"] == 0


def test_a_release_past_63_is_flagged_and_the_lock_kept():
    bd = BufferDescriptor("tile", buffer_length=2, lock_rel_id=3, lock_rel_value=1, valid_bd=1)
    seen = {}

    async def bench(ctx, dut, write, read):
        for address, word in bd_writes("tile", {0: bd}):
            await write(address, word)
        await write(lock_value_address("tile", 3), 63)
        await write(start_queue_address("tile", "mm2s", 0), Task(0).encode())
        ctx.set(dut.mm2s[0].o.ready, 1)
        for _ in range(20):
            await ctx.tick()
        seen["error"] = ctx.get(dut.error)
        seen["lock"] = await read(lock_value_address("tile", 3))

    simulate("tile", bench)
    assert seen == {"error": 1, "lock": 63}


def test_a_channel_owing_the_most_releases_holds_its_next_bd():
    # MM2S 0 runs one-word BDs, each releasing the west neighbour's lock 2, so the
    # release leaves on the block's neighbour port; that port is not granted for the
    # first `held` cycles: RELEASE_QUEUE_DEPTH BDs pass, the next waits at the gate,
    # and every BD goes once the releases are granted. The neighbour's unit grants a
    # request from a register, shown the cycle after it decides.
    count, held = RELEASE_QUEUE_DEPTH + 2, 40
    table = {i: BufferDescriptor("memtile", base_address=OWN + i, buffer_length=1,
                                 lock_rel_id=2, lock_rel_value=1, use_next_bd=int(i + 1 < count),
                                 next_bd=(i + 1) % count, valid_bd=1) for i in range(count)}
    seen = {"words": [], "granted": 0}

    async def bench(ctx, dut, write, read):
        for address, word in bd_writes("memtile", table):
            await write(address, word)
        await write(start_queue_address("memtile", "mm2s", 0), Task(0).encode())
        ctx.set(dut.mm2s[0].o.ready, 1)
        port = dut.neighbour_release[0]
        shown = False
        for cycle in range(held + 20):
            ctx.set(port.grant, shown)
            seen["granted"] += shown
            if ctx.get(dut.mm2s[0].o.valid):
                seen["words"].append(cycle)
            shown = bool(ctx.get(port.request)) and cycle >= held
            await ctx.tick()

    simulate("memtile", bench)
    assert len([c for c in seen["words"] if c < held]) == RELEASE_QUEUE_DEPTH, seen
    assert len(seen["words"]) == count and seen["granted"] == count, seen


@pytest.mark.parametrize("beats", [1, 2, 3])
def test_a_chain_streams_a_bd_every_fetch_interval(beats):
    """The walk decides a chain's next load from the fetched BD's own words, so a channel
    fetches a BD every ``FETCH_INTERVAL`` cycles: a chain of BDs of that many beats or
    more, run twice, leaves with no bubble, and a shorter BD fills the interval with a
    bubble (neither more nor less: ``load_word_offsets``)."""
    count = 6
    table = {i: BufferDescriptor("memtile", base_address=OWN + 8 * i, buffer_length=beats,
                                 use_next_bd=int(i + 1 < count), next_bd=i + 1, valid_bd=1)
             for i in range(count)}
    words = []

    async def bench(ctx, dut, write, read):
        for address, word in bd_writes("memtile", table):
            await write(address, word)
        await write(start_queue_address("memtile", "mm2s", 0), Task(0, 2).encode())
        ctx.set(dut.mm2s[0].o.ready, 1)
        for cycle in range(60):
            if ctx.get(dut.mm2s[0].o.valid):
                words.append(cycle)
            await ctx.tick()

    simulate("memtile", bench)
    assert len(words) == 2 * count * beats, words
    assert words == [words[0] + c for c in load_word_offsets([beats] * 2 * count)], words


# The memory tile on Amaranth; on Verilator the core tile, whose block builds in a fifth
# of the memory tile's time (make sim runs memory-tile programs on Verilator).
@pytest.mark.parametrize(("kind", "second", "simulator"),
                         [("memtile", 2, "amaranth"), ("tile", 1, "verilator")])
def test_two_channels_racing_for_one_lock_are_served_in_channel_order(kind, second, simulator):
    # MM2S 0 and a second MM2S (on a memory tile one of the same BD half) share lock 5
    # (one token): MM2S 0 wins the first cycle, the other gets the lock when MM2S 0 gives
    # it back
    own = DMA_KINDS[kind].memory_window("own").start
    lock = DMA_KINDS[kind].lock_window("own").start + 5
    table = {n: BufferDescriptor(kind, base_address=own + 16 * n, buffer_length=4,
                                 lock_acq_enable=1, lock_acq_id=lock, lock_acq_value=-1,
                                 lock_rel_id=lock, lock_rel_value=1, valid_bd=1)
             for n in (0, 1)}
    writes = [*bd_writes(kind, table),
              (lock_value_address(kind, 5), 1),
              (start_queue_address(kind, "mm2s", 0), Task(0, 2).encode()),
              (start_queue_address(kind, "mm2s", second), Task(1, 2).encode())]
    result = run_dma(kind, writes, memory=np.arange(100, 164), simulator=simulator, reuse=True)
    assert [d for d, _ in result.outputs["mm2s0"]] == [100, 101, 102, 103] * 2
    assert [d for d, _ in result.outputs[f"mm2s{second}"]] == [116, 117, 118, 119] * 2
    assert result.locks[5] == 1


def two_readers_and_a_writer(kind, table, second):
    """Writes of ``table`` (BDs 0, 1, 2) and tasks starting BD 0 on MM2S 0, BD 1 on MM2S
    ``second`` and BD 2 on S2MM 0."""
    return [*bd_writes(kind, table),
            (start_queue_address(kind, "mm2s", 0), Task(0).encode()),
            (start_queue_address(kind, "mm2s", second), Task(1).encode()),
            (start_queue_address(kind, "s2mm", 0), Task(2).encode())]


@pytest.mark.parametrize(("kind", "second", "simulator"),
                         [("memtile", 2, "amaranth"), ("tile", 1, "verilator")])
def test_a_lock_that_opens_for_two_waiting_channels_grants_one_a_cycle(kind, second, simulator,
                                                                       monkeypatch):
    # MM2S 0 and a second MM2S wait at their gates on lock 5 (0); S2MM 0's BD releases
    # 2 onto it: both could have it in the next cycle, but a tile grants one acquire a
    # cycle: MM2S 0 then the other, the RTL as the model every cycle
    own = DMA_KINDS[kind].memory_window("own").start
    lock = DMA_KINDS[kind].lock_window("own").start + 5
    table = {n: BufferDescriptor(kind, base_address=own + 16 * n, buffer_length=4,
                                 lock_acq_enable=1, lock_acq_id=lock, lock_acq_value=-1,
                                 valid_bd=1) for n in (0, 1)}
    table[2] = BufferDescriptor(kind, base_address=own + 48, buffer_length=2, lock_rel_id=lock,
                                lock_rel_value=2, valid_bd=1)
    writes = two_readers_and_a_writer(kind, table, second)
    args = {"memory": np.arange(100, 164), "inputs": {"s2mm0": [7, 8]}}
    result = run_dma(kind, writes, **args, simulator=simulator, reuse=True)
    assert [d for d, _ in result.outputs["mm2s0"]] == [100, 101, 102, 103]
    assert [d for d, _ in result.outputs[f"mm2s{second}"]] == [116, 117, 118, 119]
    assert result.locks[5] == 0
    # Without the rules the run is three cycles shorter (the program does exercise
    # them): both would acquire in the cycle after the release, the first a cycle
    # sooner (the release wrote the lock at the end of the cycle before) and the second
    # three (one acquire a cycle, then its lock written by the first).
    untimed = LockTable.try_acquire
    monkeypatch.setattr(LockTable, "try_acquire",
                        lambda table, lock_id, value, where="", cycle=None, settled=False:
                        untimed(table, lock_id, value, where))
    assert run_dma(kind, writes, **args, simulator=None).cycles == result.cycles - 3


@pytest.mark.parametrize(("kind", "second", "simulator"),
                         [("memtile", 2, "amaranth"), ("tile", 1, "verilator")])
def test_two_releases_due_in_one_cycle_are_applied_one_a_cycle(kind, second, simulator,
                                                               monkeypatch):
    # MM2S 0 (three words) and a second MM2S (two words, fetched a cycle later) complete
    # in the same cycle, releasing locks 5 and 6; S2MM 0 waits on lock 6. A tile applies
    # one release a cycle, MM2S 0's first: S2MM 0 starts a cycle later than it would
    # with both applied at once, the RTL as the model every cycle.
    own = DMA_KINDS[kind].memory_window("own").start
    locks = DMA_KINDS[kind].lock_window("own").start
    table = {n: BufferDescriptor(kind, base_address=own + 16 * n, buffer_length=3 - n,
                                 lock_rel_id=locks + 5 + n, lock_rel_value=1, valid_bd=1)
             for n in (0, 1)}
    table[2] = BufferDescriptor(kind, base_address=own + 48, buffer_length=2,
                                lock_acq_enable=1, lock_acq_id=locks + 6, lock_acq_value=-1,
                                valid_bd=1)
    writes = two_readers_and_a_writer(kind, table, second)
    args = {"memory": np.arange(100, 164), "inputs": {"s2mm0": [7, 8]}}
    result = run_dma(kind, writes, **args, simulator=simulator, reuse=True)
    assert [d for d, _ in result.outputs["mm2s0"]] == [100, 101, 102]
    assert [d for d, _ in result.outputs[f"mm2s{second}"]] == [116, 117]
    assert (result.locks[5], result.locks[6]) == (1, 0)
    assert list(result.memory[48:50]) == [7, 8]
    # Without the rule (every release applied in its cycle) the run is a cycle shorter.
    monkeypatch.setattr(LockTable, "take_release_port", lambda table, cycle: True)
    assert run_dma(kind, writes, **args, simulator=None).cycles == result.cycles - 1


def test_two_channels_starting_on_one_bd_advance_its_iteration_in_turn():
    # both channels start on BD 0 in the same cycle; the fetch port serves MM2S 0 first,
    # then MM2S 2, which sees the first's advance
    bd = BufferDescriptor("memtile", base_address=OWN, buffer_length=2, iteration_wrap=3,
                          iteration_stepsize=10, valid_bd=1)
    writes = [*bd_writes("memtile", {0: bd}),
              (start_queue_address("memtile", "mm2s", 0), Task(0, 3).encode()),
              (start_queue_address("memtile", "mm2s", 2), Task(0, 3).encode())]
    result = run_dma("memtile", writes, memory=np.arange(100, 180), simulator="amaranth",
                     reuse=True)
    first = [d for d, _ in result.outputs["mm2s0"]]
    second = [d for d, _ in result.outputs["mm2s2"]]
    assert sorted(first + second) == sorted([100, 101, 110, 111, 120, 121] * 2)
    assert first[:2] == [100, 101] and second[:2] == [110, 111]


@pytest.mark.parametrize("kind", ["tile", "memtile", "shim"])
def test_the_block_has_the_channels_of_its_kind(kind):
    # (its conversion to Verilog: make verilog; tests/flows/test_verilog.py has the shim's)
    dma = DMA(kind)
    assert len(dma.mm2s) == len(dma.s2mm) == DMA_KINDS[kind].channels
    assert hasattr(dma, "neighbour_acquire") == (kind == "memtile")


@pytest.mark.filterwarnings("ignore::aiedma.model.errors.UndocumentedBehaviourWarning")
def test_a_bd_whose_iteration_current_is_past_its_wrap_runs_as_in_the_model():
    # mlir-aie writes iteration_current 42 with a wrap of 29: the first load's offset is
    # 42 steps, the next loads count 0, 1, ...; the RTL as the model, every cycle
    own = DMA_KINDS["tile"].memory_window("own").start
    bd = BufferDescriptor("tile", base_address=own, buffer_length=2, iteration_wrap=29,
                          iteration_current=42, iteration_stepsize=3, valid_bd=1)
    writes = [*bd_writes("tile", {0: bd}),
              (start_queue_address("tile", "mm2s", 0), Task(0, 3).encode())]
    result = run_dma("tile", writes, memory=np.arange(200), simulator="amaranth", reuse=True)
    assert [d for d, _ in result.outputs["mm2s0"]] == [126, 127, 0, 1, 3, 4]
