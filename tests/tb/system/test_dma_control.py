"""Channel control registers: written and read back alike in the model and the RTL DMA, and
a channel reset in the middle of a task, model against RTL on every cycle."""

import numpy as np
import pytest

from aiedma.model.arch.kinds import BD_REGISTER_STRIDE, DEFAULT_ROW, DMA_KINDS
from aiedma.model.arch.registers import (
    COMPRESSION_FIELDS,
    CONTROL_FIELDS,
    control_address,
    lock_value_address,
    start_queue_address,
)
from aiedma.model.bd.descriptor import BufferDescriptor
from aiedma.model.bd.task import Task
from aiedma.model.errors import NotModelledWarning
from aiedma.model.system.registers import RegisterWriter, apply_writes, read_register
from aiedma.model.system.scheduler import DeadlockError, run_system
from aiedma.model.system.stream import Stream, StreamSink
from aiedma.tb.system.dma_block import AmaranthBlock
from aiedma.tb.system.dma_check import run_dma
from aiedma.tb.system.random_programs import program_dma

KINDS = ["tile", "memtile", "shim"]


def bd_writes(kind, table):
    base = DMA_KINDS[kind].bd_register_base
    return [(base + BD_REGISTER_STRIDE * n + 4 * w, word)
            for n, bd in table.items() for w, word in enumerate(bd.encode())]


def control_words(kind):
    """Per channel (address, word written): every bit set, or a pattern of fields; no reset
    (a reset bit would hold the channel in reset)."""
    words = {}
    for direction in ("s2mm", "mm2s"):
        for index in range(DMA_KINDS[kind].channels):
            fields = CONTROL_FIELDS[kind, direction]
            word = 0xFFFF_FFFF if index % 2 else (0xA5 << 8 | 1 << 0 | 1 << 31)
            if "reset" in fields:
                word &= ~(1 << fields["reset"][0])
            words[control_address(kind, direction, index)] = word
    return words


def rtl_read_back(kind, writes, addresses, compression=True):
    block = AmaranthBlock.shared(kind, compression)
    dut, seen = block.dut, {}

    async def bench(ctx):
        ctx.set(dut.pause, 1)
        for address, value in writes:
            ctx.set(dut.reg_write, 1)
            ctx.set(dut.reg_addr, address)
            ctx.set(dut.reg_wdata, value)
            await ctx.tick()
        ctx.set(dut.reg_write, 0)
        for address in addresses:
            ctx.set(dut.reg_read, 1)
            ctx.set(dut.reg_addr, address)
            await ctx.tick()
            seen[address] = ctx.get(dut.reg_rdata)

    block.run(bench)
    return seen


@pytest.mark.parametrize("kind", KINDS)
def test_control_words_read_back_alike_in_the_model_and_the_rtl(kind):
    words = control_words(kind)
    dma = program_dma(kind, DEFAULT_ROW[kind])
    apply_writes(dma, list(words.items()))
    model = {address: read_register(dma, address) for address in words}
    assert model == rtl_read_back(kind, list(words.items()), list(words))
    # reserved bits (bit 0 and 31 here) read back 0; every field as written
    for direction in ("s2mm", "mm2s"):
        fields = CONTROL_FIELDS[kind, direction]
        channel = dma.channel(direction, 0)
        assert channel.control_field("controller_id") == 0xA5
        assert model[control_address(kind, direction, 0)] & (1 | 1 << 31) == 0
        assert set(fields) >= {"controller_id"}
    assert model[control_address(kind, "mm2s", 1)] == sum(
        ((1 << w) - 1) << lsb for name, (lsb, w) in CONTROL_FIELDS[kind, "mm2s"].items()
        if name != "reset")


@pytest.mark.parametrize("kind", ["tile", pytest.param("memtile", marks=pytest.mark.long)])
def test_without_compressors_the_enables_read_0_in_the_model_and_the_rtl(kind):
    """Built without the (de)compressors the enable bits are not implemented: a write of
    every bit reads back with them 0 and every other field as written."""
    words = control_words(kind)
    dma = program_dma(kind, DEFAULT_ROW[kind], compression=False)
    apply_writes(dma, list(words.items()))
    model = {address: read_register(dma, address) for address in words}
    assert model == rtl_read_back(kind, list(words.items()), list(words), compression=False)
    for direction in ("s2mm", "mm2s"):
        fields = CONTROL_FIELDS[kind, direction]
        enable = 1 << fields[COMPRESSION_FIELDS[direction]][0]
        every = sum(((1 << w) - 1) << lsb for name, (lsb, w) in fields.items()
                    if name != "reset")
        assert model[control_address(kind, direction, 1)] == every & ~enable
        assert dma.channel(direction, 1).control_field(COMPRESSION_FIELDS[direction]) == 0


def test_the_model_refuses_a_control_word_wider_than_32_bits():
    dma = program_dma("tile", 2)
    with pytest.raises(ValueError, match=r"^value=4294967296: write 0 to 0x1de10: a register "
                                         r"word is 0\.\.2\^32-1"):
        apply_writes(dma, [(control_address("tile", "mm2s", 0), 1 << 32)])
    with pytest.raises(ValueError, match=r"^address='0x1de14': no BD, lock or control register "
                                         r"of a tile DMA the model reads is there"):
        read_register(dma, start_queue_address("tile", "mm2s", 0))


def reset_program(kind):
    """MM2S 0 runs a long BD holding lock 3 and releasing lock 4; S2MM 0 waits on lock 5
    (never set); both are reset mid-task, then each runs a short new task."""
    own = DMA_KINDS[kind].memory_window("own").start if kind != "shim" else 0
    lock = DMA_KINDS[kind].lock_window("own").start
    table = {
        0: BufferDescriptor(kind, base_address=own, buffer_length=40, lock_acq_enable=1,
                            lock_acq_id=lock + 3, lock_acq_value=-1, lock_rel_id=lock + 4,
                            lock_rel_value=1, valid_bd=1),
        2: BufferDescriptor(kind, base_address=own + 100, buffer_length=4, valid_bd=1),
        # S2MM: on the memory tile BDs 0-23 serve channel 0 of either direction
        4: BufferDescriptor(kind, base_address=own + 200, buffer_length=8, lock_acq_enable=1,
                            lock_acq_id=lock + 5, lock_acq_value=-1, valid_bd=1),
        6: BufferDescriptor(kind, base_address=own + 300, buffer_length=4, valid_bd=1),
    }
    mm2s, s2mm = (control_address(kind, d, 0) for d in ("mm2s", "s2mm"))
    reset = {d: 1 << CONTROL_FIELDS[kind, d]["reset"][0] for d in ("mm2s", "s2mm")}
    writes = [*bd_writes(kind, table), (lock_value_address(kind, 3), 1),
              (mm2s, 7 << 8), (s2mm, 9 << 8),
              (start_queue_address(kind, "mm2s", 0), Task(0, enable_token_issue=True).encode()),
              (start_queue_address(kind, "s2mm", 0), Task(4).encode())]
    timed = [(20, mm2s, 7 << 8 | reset["mm2s"]), (21, s2mm, reset["s2mm"]),
             (23, mm2s, 7 << 8), (24, s2mm, 0),
             (26, start_queue_address(kind, "mm2s", 0), Task(2, enable_token_issue=True).encode()),
             (27, start_queue_address(kind, "s2mm", 0), Task(6, enable_token_issue=True).encode())]
    return writes, timed


@pytest.mark.parametrize(("kind", "simulator"), [("tile", "amaranth"), ("memtile", "amaranth")])
def test_a_reset_mid_task_drops_it_and_a_task_pushed_after_runs(kind, simulator):
    writes, timed = reset_program(kind)
    args = {"memory": np.arange(1000, 1400), "inputs": {"s2mm0": [70, 71, 72, 73]},
            "timed_writes": timed}
    model = run_dma(kind, writes, simulator=None, **args)
    words = [d for d, _ in model.outputs["mm2s0"]]
    # BD 0 moved some words before the reset (from cycle 22 nothing more), then BD 2's four
    assert 0 < len(words) - 4 < 40 and words[-4:] == [1100, 1101, 1102, 1103]
    assert words[:-4] == list(range(1000, 1000 + len(words) - 4))
    assert [last for _, last in model.outputs["mm2s0"]][-4:] == [False] * 3 + [True]
    assert model.memory[300:304].tolist() == [70, 71, 72, 73]
    assert model.memory[200:208].tolist() == list(range(1200, 1208)), "S2MM BD 4 never wrote"
    # locks untouched by the reset: lock 3 stays taken, lock 4 never released
    assert (model.locks[3], model.locks[4], model.locks[5]) == (0, 0, 0)
    assert len(model.tokens["mm2s0"]) == 1 and len(model.tokens["s2mm0"]) == 1
    rtl = run_dma(kind, writes, simulator=simulator, reuse=True, **args)   # raises if not equal
    assert rtl.outputs == model.outputs and rtl.tokens == model.tokens


@pytest.mark.parametrize(("kind", "simulator"), [("memtile", "amaranth"), ("tile", "verilator")])
def test_the_rtl_tokens_carry_the_controller_id_of_their_cycle(kind, simulator):
    """The RTL DMA's ``token_controller`` shows the channel's controller ID; a token carries
    the ID of the cycle it comes in (7, then 9 after a write between the tasks)."""
    own = DMA_KINDS[kind].memory_window("own").start
    bd = BufferDescriptor(kind, base_address=own + 4, buffer_length=3, valid_bd=1)
    queue, control = start_queue_address(kind, "mm2s", 0), control_address(kind, "mm2s", 0)
    token = Task(0, enable_token_issue=True).encode()
    writes = [*bd_writes(kind, {0: bd}), (control, 7 << 8), (queue, token)]
    timed = [(30, control, 9 << 8), (31, queue, token)]
    args = {"memory": np.arange(100), "timed_writes": timed}
    model = run_dma(kind, writes, simulator=None, **args)
    assert model.token_controllers == {"mm2s0": [7, 9]}
    rtl = run_dma(kind, writes, simulator=simulator, reuse=True, **args)   # raises if not equal
    assert rtl.token_controllers == {"mm2s0": [7, 9]} and rtl.tokens == model.tokens


def test_tokens_carry_the_controller_id_and_a_reset_before_the_run_empties_the_queue():
    kind = "tile"
    bd = BufferDescriptor(kind, base_address=4, buffer_length=3, valid_bd=1)
    queue, control = start_queue_address(kind, "mm2s", 0), control_address(kind, "mm2s", 0)
    dma = program_dma(kind, 2)
    apply_writes(dma, [*bd_writes(kind, {0: bd}), (control, 7 << 8),
                       (queue, Task(0, enable_token_issue=True).encode())])
    stream = Stream("out")
    dma.mm2s[0].connect(stream)
    writer = RegisterWriter(dma, [(30, control, 9 << 8),
                                  (31, queue, Task(0, enable_token_issue=True).encode())])
    run_system([dma.mm2s[0], StreamSink("sink", stream), writer], exact=True)
    assert [d.controller_id for d in dma.mm2s[0].done] == [7, 9]
    # a reset written before the run: the queue pushed before it is emptied
    dma = program_dma(kind, 2)
    apply_writes(dma, [*bd_writes(kind, {0: bd}), (queue, Task(0).encode()), (control, 2),
                       (queue, Task(0).encode())])   # and one pushed while held: dropped
    assert not dma.mm2s[0].queue and dma.mm2s[0].control == 2
    apply_writes(dma, [(control, 0), (queue, Task(0).encode())])   # released: it runs
    assert len(dma.mm2s[0].queue) == 1


def test_a_task_on_a_shim_channel_with_a_pause_bit_set_runs_with_a_warning():
    """Pausing is the one control bit the model stores without its behaviour (FoT,
    out-of-order and (de)compression are modelled, their tests elsewhere)."""
    kind = "shim"
    bd = BufferDescriptor(kind, base_address=4, buffer_length=3, valid_bd=1)
    pause = 1 << CONTROL_FIELDS[kind, "s2mm"]["pause_stream"][0]
    writes = [*bd_writes(kind, {0: bd}), (control_address(kind, "s2mm", 0), pause),
              (start_queue_address(kind, "s2mm", 0), Task(0).encode())]
    with pytest.warns(NotModelledWarning, match=r"pause_stream=1: not modelled"):
        run_dma(kind, writes, inputs={"s2mm0": [5, 6, 7]}, simulator=None)


def sweep_program(kind):
    """MM2S 0: a chain of two BDs (a packet header, an acquire, releases, iteration) run
    three times; S2MM 0: a chain of two BDs (a release) run twice; tokens on both."""
    own = DMA_KINDS[kind].memory_window("own").start
    lock = DMA_KINDS[kind].lock_window("own").start
    table = {
        0: BufferDescriptor(kind, base_address=own, buffer_length=3, lock_acq_enable=1,
                            lock_acq_id=lock + 3, lock_acq_value=-1, lock_rel_id=lock + 4,
                            lock_rel_value=1, use_next_bd=1, next_bd=1, enable_packet=1,
                            packet_id=3, valid_bd=1),
        1: BufferDescriptor(kind, base_address=own + 50, buffer_length=2, lock_rel_id=lock + 4,
                            lock_rel_value=2, iteration_wrap=3, iteration_stepsize=7,
                            valid_bd=1),
        2: BufferDescriptor(kind, base_address=own + 100, buffer_length=4, valid_bd=1),
        4: BufferDescriptor(kind, base_address=own + 200, buffer_length=3, lock_rel_id=lock + 6,
                            lock_rel_value=1, use_next_bd=1, next_bd=6, valid_bd=1),
        6: BufferDescriptor(kind, base_address=own + 300, buffer_length=2, valid_bd=1),
    }
    return [*bd_writes(kind, table), (lock_value_address(kind, 3), 5),
            (start_queue_address(kind, "mm2s", 0), Task(0, 3, True).encode()),
            (start_queue_address(kind, "s2mm", 0), Task(4, 2, True).encode())]


@pytest.mark.parametrize("at", [1, 7, 13, 17])
def test_a_reset_in_any_stage_of_a_task_is_the_same_in_the_model_and_the_rtl(at):
    """Reset MM2S 0 in cycle ``at`` and S2MM 0 a cycle later (a fetch on its way, a lock
    request, a header, a BD's words, a release queued, tasks done), then a task each."""
    kind = "tile"
    writes = sweep_program(kind)
    mm2s, s2mm = (control_address(kind, d, 0) for d in ("mm2s", "s2mm"))
    reset = {d: 1 << CONTROL_FIELDS[kind, d]["reset"][0] for d in ("mm2s", "s2mm")}
    timed = [(at, mm2s, reset["mm2s"]), (at + 1, s2mm, reset["s2mm"]), (at + 2, mm2s, 0),
             (at + 3, s2mm, 0),
             (at + 5, start_queue_address(kind, "mm2s", 0), Task(2, 1, True).encode()),
             (at + 6, start_queue_address(kind, "s2mm", 0), Task(6, 1, True).encode())]

    def run(words, simulator):
        return run_dma(kind, writes, memory=np.arange(1000, 1400),
                       inputs={"s2mm0": list(range(70, 70 + words))}, simulator=simulator,
                       timed_writes=timed, reuse=True)

    # As many input words as S2MM 0 takes before its reset, and the new task's two: the
    # model says how many (fewer leave it waiting; more are never taken).
    for words in range(2, 14):
        try:
            model = run(words, None)
        except DeadlockError:     # too few: S2MM 0 waits for a word
            continue
        if model.memory[300:302].tolist() == [68 + words, 69 + words]:
            break
    else:
        raise AssertionError("no input length fits")
    assert [d for d, _ in model.outputs["mm2s0"]][-4:] == [1100, 1101, 1102, 1103]
    rtl = run(words, "amaranth")   # raises on any difference, cycle by cycle at the outputs
    assert rtl.memory.tolist() == model.memory.tolist() and rtl.locks == model.locks
