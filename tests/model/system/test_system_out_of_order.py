"""Out-of-order S2MM in the model: each packet lands in the BD its header names, the task
ends after its count of packets, and a BD that is not available sets a status error."""

import numpy as np
import pytest

from aiedma.model import BufferDescriptor, Task
from aiedma.model.bd.packet import packet_header
from aiedma.model.cycle.contract import ADDRGEN_LATENCY, BD_OFFER_LATENCY
from aiedma.model.system.dma import DMA
from aiedma.model.system.memory import MEMORY_TILE_WINDOWS, Memory, shim_space
from aiedma.model.system.scheduler import DeadlockError, run_system
from aiedma.model.system.stream import Beat, PacketMerge, Stream, StreamSource

OUT_OF_ORDER = 1 << 3          # the S2MM control register's enable_out_of_order


def bd(kind="tile", **fields):
    return BufferDescriptor(kind, valid_bd=1, **fields)


def base(kind):
    return MEMORY_TILE_WINDOWS["own"] if kind == "memtile" else 0


def memory(dma, start, count):
    block, offset = dma.memory.resolve(base(dma.kind) + start)
    return block.dump(offset, count).tolist()


def receiver(kind="tile", bds=None):
    """A DMA whose S2MM 0 is in out-of-order mode, with BDs ``bds`` (ID to BD)."""
    dma = DMA(kind, 3, 3) if kind != "shim" else DMA(
        "shim", 3, 0, memory=shim_space("shim(3,0)", Memory("ddr", 1 << 12)))
    for bd_id, descriptor in (bds or {}).items():
        dma.write_bd(bd_id, descriptor)
    dma.s2mm[0].write_control(OUT_OF_ORDER)
    return dma


def packet(bd_id, values, packet_id=0):
    return [Beat(packet_header(packet_id, 0, 0, 0, out_of_order_bd_id=bd_id)),
            *(Beat(v, i == len(values) - 1) for i, v in enumerate(values))]


def receive(dma, tasks, words, depth=2):
    stream = Stream("in", depth)
    channel = dma.s2mm[0].connect(stream)
    for task in tasks:
        channel.push(task)
    report = run_system([StreamSource("source", stream, words), channel])
    return channel, stream, report


def test_packets_from_two_senders_through_a_merge_land_in_the_bds_their_headers_name():
    sender = DMA("tile", 2, 3)
    block, _ = sender.memory.resolve(0)
    block.load(0, np.arange(1, 101))
    # MM2S 0: BD 0 then BD 1, packet ID 1; MM2S 1: BD 8 twice (its iteration moves on).
    sender.write_bd(0, bd(buffer_length=3, enable_packet=1, packet_id=1, out_of_order_bd_id=5,
                          use_next_bd=1, next_bd=1))
    sender.write_bd(1, bd(base_address=10, buffer_length=2, enable_packet=1, packet_id=1,
                          out_of_order_bd_id=3))
    sender.write_bd(8, bd(base_address=20, buffer_length=2, enable_packet=1, packet_id=2,
                          out_of_order_bd_id=4, iteration_wrap=2, iteration_stepsize=2))
    lock = 7
    # The receiving BDs: 4 takes two packets, one after the other (its iteration);
    # each releases the lock the host waits on, one per packet.
    dma = receiver("tile", {
        3: bd(base_address=40, buffer_length=2, lock_rel_id=lock, lock_rel_value=1),
        4: bd(base_address=50, buffer_length=2, iteration_wrap=2, iteration_stepsize=2,
              lock_rel_id=lock, lock_rel_value=1),
        5: bd(base_address=60, buffer_length=3, lock_rel_id=lock, lock_rel_value=1),
    })
    a, b, merged = Stream("a"), Stream("b"), Stream("merged")
    first = sender.mm2s[0].connect(a)
    second = sender.mm2s[1].connect(b)
    first.push(Task(0))
    second.push(Task(8, repeat_count=2))
    merge = PacketMerge("merge", [a, b], merged, packet_ids=[1, 2], tagged=[True, True])
    channel = dma.s2mm[0].connect(merged)
    channel.push(Task(0, repeat_count=4, enable_token_issue=True))   # start_bd unused
    report = run_system([first, second, merge, channel])
    assert memory(dma, 60, 3) == [1, 2, 3]
    assert memory(dma, 40, 2) == [11, 12]
    assert memory(dma, 50, 4) == [21, 22, 23, 24]     # in the order sender 2 sent them
    table, index = dma.locks.route(lock)
    assert table.values[index] == 4
    assert [d.task.repeat_count for d in channel.done] == [4]
    assert channel.tokens and channel.status_fields() == {
        "error_fot_length_exceeded": 0, "error_fot_bds_per_task": 0,
        "error_bd_unavailable": 0, "error_bd_invalid": 0}
    assert report.words[channel.name] == 4 + 9    # 4 headers, 9 data words


def test_the_task_takes_its_count_of_packets_in_arrival_order_and_no_more():
    dma = receiver("tile", {2: bd(base_address=0, buffer_length=2),
                            9: bd(base_address=10, buffer_length=1)})
    words = packet(9, [5]) + packet(2, [6, 7]) + packet(9, [8]) + packet(2, [1, 1])
    channel, stream, _ = receive(dma, [Task(0, repeat_count=3)], words, depth=8)
    # the third packet rewrote BD 9 (no iteration): arrival order, not BD order
    assert memory(dma, 0, 2) == [6, 7] and memory(dma, 10, 1) == [8]
    assert len(channel.done) == 1
    assert len(stream) == 3 and stream.peek().data == packet(2, [])[0].data   # left there


def test_first_word_written_after_the_header_the_fetch_and_the_offer():
    dma = receiver("tile", {1: bd(base_address=0, buffer_length=1)})
    stream = Stream("in")
    channel = dma.s2mm[0].connect(stream)
    channel.push(Task(0))
    cycles = {}
    source = StreamSource("source", stream, packet(1, [9]))
    for cycle in range(40):
        for agent in (source, channel):
            agent.step(cycle)
        if channel.stream.can_pop() is False and "header" not in cycles and channel.words:
            cycles["header"] = cycle
        written = memory(dma, 0, 1) == [9]
        for agent in (source, channel):
            agent.commit()
        stream.commit()
        if written and "word" not in cycles:
            cycles["word"] = cycle
    # task started in cycle 0, header taken in 1, BD fetched in 2, offered in 2 + 3,
    # first beat after the address generator, its write a cycle after it joins.
    assert cycles["header"] == 1
    assert cycles["word"] == 2 + BD_OFFER_LATENCY + ADDRGEN_LATENCY + 1


@pytest.mark.parametrize(("kind", "named", "flag"), [
    ("tile", 20, "error_bd_unavailable"),        # a core tile has 16 BDs
    ("memtile", 30, "error_bd_unavailable"),     # S2MM 0 runs BDs 0-23
    ("shim", 17, "error_bd_unavailable"),
])
def test_a_bd_not_available_sets_its_status_error_stops_and_a_reset_clears_it(kind, named, flag):
    dma = receiver(kind, {1: bd(kind, base_address=base(kind), buffer_length=2),
                          6: BufferDescriptor(kind, base_address=base(kind), buffer_length=2)})
    channel, stream, _ = receive(dma, [Task(0, repeat_count=2)],
                                 packet(1, [3, 4]) + packet(named, [8]))
    assert memory(dma, 0, 2) == [3, 4]           # the packet before it landed
    fields = channel.status_fields()
    assert fields[flag] == 1 and sum(fields.values()) == 1
    assert not channel.busy and channel.done == []    # stopped: its task never ends
    assert len(stream) == 1 and stream.peek().data == 8   # the rest of the packet not taken
    channel.push(Task(0))
    with pytest.raises(DeadlockError, match=rf"s2mm0: .*stopped by {flag} until a reset"):
        run_system([channel])                         # stopped: no task starts
    assert len(channel.queue) == 1
    channel.reset()                                   # clears the flag and the queue
    assert channel.status_fields()[flag] == 0
    stream.pop()
    stream.commit()
    channel.push(Task(0))
    run_system([StreamSource("again", stream, packet(1, [5, 6])), channel])
    assert memory(dma, 0, 2) == [5, 6] and len(channel.done) == 1


def test_a_named_bd_that_is_not_valid_stops_the_channel_holding_it_until_a_reset():
    """As an in-order load: the BD is fetched (it is the BD fetched last), stays at the
    head of the fetch stage (the channel stays busy), and sets error_bd_invalid from
    the cycle after it is offered; nothing more is taken until a channel reset."""
    kind = "tile"
    dma = receiver(kind, {1: bd(kind, base_address=0, buffer_length=2),
                          6: BufferDescriptor(kind, base_address=8, buffer_length=2)})
    stream = Stream("in", 2)
    channel = dma.s2mm[0].connect(stream)
    channel.push(Task(0, repeat_count=3))
    source = StreamSource("source", stream, packet(1, [3, 4]) + packet(6, [8]) + packet(1, [9]))
    with pytest.raises(DeadlockError, match=r"s2mm0: BD 6: .*stopped by error_bd_invalid "
                                            r"until a reset"):
        run_system([source, channel])
    assert memory(dma, 0, 2) == [3, 4] and memory(dma, 8, 2) == [0, 0]
    fields = channel.status_fields()
    assert fields["error_bd_invalid"] == 1 and sum(fields.values()) == 1
    assert channel.busy and channel.done == [] and channel.bd == 6
    channel.reset()
    assert channel.status_fields()["error_bd_invalid"] == 0 and not channel.busy


def test_with_the_bit_clear_a_packet_bd_takes_its_own_header_as_before():
    dma = receiver("tile", {2: bd(base_address=0, buffer_length=2, enable_packet=1)})
    dma.s2mm[0].write_control(0)
    channel, _, _ = receive(dma, [Task(2)], packet(9, [6, 7]))   # the ID in it is ignored
    assert memory(dma, 0, 2) == [6, 7]
    assert "error_bd_unavailable" not in channel.status_fields()


def test_with_finish_on_tlast_a_short_packet_ends_its_bd_and_the_next_header_follows():
    dma = receiver("tile", {2: bd(base_address=0, buffer_length=4),
                            3: bd(base_address=10, buffer_length=2)})
    dma.s2mm[0].write_control(OUT_OF_ORDER | 1 << 16)          # fot_mode 1
    words = packet(2, [6]) + packet(3, [7, 8]) + packet(2, [9, 9, 9])
    channel, _, _ = receive(dma, [Task(0, repeat_count=3)], words)
    assert memory(dma, 0, 4) == [9, 9, 9, 0] and memory(dma, 10, 2) == [7, 8]
    assert len(channel.done) == 1 and channel.status_fields()["error_fot_length_exceeded"] == 0
