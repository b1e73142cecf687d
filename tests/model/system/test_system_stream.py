"""Streams: valid/ready FIFOs, sources and sinks, pktsplit routing by ID, pktmerge tagging."""

import numpy as np
import pytest

from aiedma.model import BufferDescriptor, PacketError, Task
from aiedma.model.bd.packet import packet_header, parse_packet_header
from aiedma.model.system.dma import DMA
from aiedma.model.system.memory import MEMORY_TILE_WINDOWS
from aiedma.model.system.scheduler import Stall, run_system
from aiedma.model.system.stream import (
    Beat,
    PacketMerge,
    PacketSplit,
    Stream,
    StreamError,
    StreamSink,
    StreamSource,
)

OWN = MEMORY_TILE_WINDOWS["own"]


def packet(packet_id, *data):
    """A header then ``data``, TLAST on the last word."""
    return [Beat(packet_header(packet_id, 0, 1, 2)),
            *(Beat(d, i == len(data) - 1) for i, d in enumerate(data))]


# --- the FIFO ---------------------------------------------------------------------------------


def test_a_push_is_seen_next_cycle_and_room_freed_next_cycle():
    s = Stream("s", depth=2)
    assert s.can_push() and not s.can_pop()
    s.push(Beat(1))
    s.push(Beat(2))
    assert not s.can_push(), "two pushed this cycle fill a depth-2 stream"
    assert not s.can_pop(), "not visible before the cycle ends"
    s.commit()
    assert s.pop() == Beat(1)
    assert not s.can_push(), "the room a pop frees shows next cycle"
    s.commit()
    assert s.can_push() and len(s) == 1 and s.pushed == 2


def test_stream_misuse_is_an_error():
    s = Stream("s", depth=1)
    s.push(Beat(1))
    with pytest.raises(StreamError, match=r"^push=2: stream s is full \(depth 1\); a producer "
                                          r"pushes only when the stream is ready"):
        s.push(Beat(2))
    with pytest.raises(StreamError, match=r"^pop='s': the stream has no word"):
        s.pop()
    with pytest.raises(StreamError, match=r"^depth=0: stream t needs depth >= 1"):
        Stream("t", depth=0)


@pytest.mark.parametrize(("depth", "cycles"), [(1, 20), (2, 11), (4, 11)])
def test_depth_two_gives_full_rate(depth, cycles):
    s = Stream("s", depth=depth)
    sink = StreamSink("sink", s, expect=10)
    report = run_system([StreamSource("src", s, range(10)), sink])
    assert sink.data == list(range(10))
    assert [b.last for b in sink.beats] == [False] * 9 + [True]
    assert report.cycles == cycles


def test_a_jump_passes_words_as_an_array_with_the_beats_before_them():
    s = Stream("s", depth=2)
    s.push(Beat(1, True))
    s.push(Beat(2))
    s.commit()
    s.bulk_push_words(np.array([3, 4, 5, 6]), last=True)
    words, lasts = s.bulk_pop_words(4)
    assert words.tolist() == [1, 2, 3, 4] and lasts == [0]
    s.settle()
    assert len(s) == 2 and s.pushed == 6
    assert [s.pop(), s.pop()] == [Beat(5), Beat(6, True)], "the rest became beats, TLAST kept"
    s.bulk_push_words(np.array([7, 8]), last=True)
    assert s.bulk_pop_words(2)[1] == [1], "the run's TLAST, on its final word"
    s.bulk_push_words(np.array([9]))
    assert s.bulk_pop(1) == [Beat(9)], "a pop of beats takes the run as beats"
    with pytest.raises(StreamError, match=r"^pop='s': a jump pops 1 words and 0 are there"):
        s.bulk_pop_words(1)


@pytest.mark.parametrize("exact", [True, False])
def test_sources_and_sinks_keep_tlast_inside_a_jump(exact):
    words = [Beat(k, k % 37 == 36) for k in range(200)] + [Beat(200, True)]
    s = Stream("s")
    sink = StreamSink("sink", s, expect=len(words))
    run_system([StreamSource("src", s, words), sink], exact=exact)
    assert sink.beats == words
    s = Stream("s")
    sink = StreamSink("sink", s, expect=300)
    run_system([StreamSource("src", s, np.arange(300, dtype=np.int32)), sink], exact=exact)
    assert sink.data == list(range(300))
    assert [k for k, beat in enumerate(sink.beats) if beat.last] == [299]


def test_a_sink_stays_busy_while_words_wait():
    s = Stream("s")
    sink = StreamSink("sink", s)
    run_system([StreamSource("src", s, range(5)), sink])
    assert sink.data == list(range(5))


# --- pktsplit ---------------------------------------------------------------------------------


def test_pktsplit_routes_by_packet_id_and_the_receiver_drops_the_header():
    inbound, a, b = Stream("in"), Stream("a"), Stream("b")
    words = packet(3, 10, 11) + packet(7, 20) + packet(3, 12)
    sinks = [StreamSink("ka", a, expect=3, drop_headers=True),
             StreamSink("kb", b, expect=1, drop_headers=True)]
    split = PacketSplit("split", inbound, {3: a, 7: b})
    run_system([StreamSource("src", inbound, words), split, *sinks])
    assert sinks[0].data == [10, 11, 12] and sinks[0].packet_ids == [3, 3]
    assert sinks[1].data == [20] and sinks[1].packet_ids == [7]
    assert split.packets == 3


def test_pktsplit_with_a_sequence_of_outputs_and_drop_header():
    inbound, a, b = Stream("in"), Stream("a"), Stream("b")
    sa, sb = StreamSink("ka", a, expect=1), StreamSink("kb", b, expect=2)
    split = PacketSplit("split", inbound, [a, b], drop_header=True)
    run_system([StreamSource("src", inbound, packet(1, 5, 6) + packet(0, 4)), split, sa, sb])
    assert sa.data == [4] and sb.data == [5, 6]


def test_pktsplit_refuses_a_header_with_bad_parity():
    bad = packet_header(2, 0, 1, 2) ^ 1 << 31
    inbound = Stream("in")
    split = PacketSplit("split", inbound, {2: Stream("a")})
    with pytest.raises(PacketError, match=rf"^word=0x{bad:08X}: bad parity: a header must have an "
                                          r"odd number of ones; split, packet 0$"):
        run_system([StreamSource("src", inbound, [Beat(bad), Beat(1, True)]), split])


def test_pktsplit_refuses_an_id_it_has_no_output_for():
    inbound = Stream("in")
    split = PacketSplit("split", inbound, {0: Stream("a"), 1: Stream("b")})
    with pytest.raises(StreamError, match=r"^packet_id=4: split has outputs for packet IDs 0, 1 "
                                          r"only; split, packet 0$"):
        run_system([StreamSource("src", inbound, packet(4, 1)), split])


def test_a_header_cannot_end_a_packet():
    inbound = Stream("in")
    split = PacketSplit("split", inbound, {0: Stream("a")})
    with pytest.raises(PacketError, match=r"^last=True: a packet header cannot end a packet"):
        run_system([StreamSource("src", inbound, [Beat(packet_header(0, 0, 0, 0), True)]),
                    split])


def test_a_receiver_checks_the_header_it_drops():
    s = Stream("s")
    with pytest.raises(PacketError, match=r"^word=0x00000000: bad parity.*; received by sink$"):
        run_system([StreamSource("src", s, [Beat(0), Beat(1, True)]),
                    StreamSink("sink", s, drop_headers=True)])


def test_a_packet_half_through_is_busy_and_waits_for_input():
    inbound, out = Stream("in"), Stream("out")
    split = PacketSplit("split", inbound, {1: out})
    inbound.push(packet(1, 1, 2)[0])
    inbound.commit()
    assert split.step(0) is None
    assert split.busy
    assert split.step(1) == Stall("empty", detail="in")


# --- pktmerge ---------------------------------------------------------------------------------


def test_pktmerge_tags_each_input_and_never_interleaves_packets():
    a, b, out = Stream("a"), Stream("b"), Stream("out", depth=4)
    merge = PacketMerge("merge", [a, b], out, packet_ids=[4, 9], source_row=1, source_column=2)
    sink = StreamSink("sink", out)
    words_a = [Beat(1), Beat(2), Beat(3, True), Beat(4, True)]
    words_b = [Beat(10), Beat(11, True)]
    run_system([StreamSource("sa", a, words_a), StreamSource("sb", b, words_b), merge, sink])
    got = [(b.data, b.last) for b in sink.beats]
    ha, hb = packet_header(4, 0, 1, 2), packet_header(9, 0, 1, 2)
    # Round robin at packet boundaries: a, b, a.
    assert got == [(ha, False), (1, False), (2, False), (3, True), (hb, False), (10, False),
                   (11, True), (ha, False), (4, True)]
    assert merge.packets == 3


def test_pktmerge_then_pktsplit_round_trip():
    a, b, merged, x, y = (Stream(n) for n in ("a", "b", "merged", "x", "y"))
    merge = PacketMerge("merge", [a, b], merged, packet_ids=[0, 1])
    split = PacketSplit("split", merged, [x, y])
    sx, sy = StreamSink("sx", x, drop_headers=True), StreamSink("sy", y, drop_headers=True)
    run_system([StreamSource("sa", a, [1, 2, 3]), StreamSource("sb", b, [7, 8]),
                merge, split, sx, sy])
    assert sx.data == [1, 2, 3] and sy.data == [7, 8]
    assert sx.packet_ids == [0] and sy.packet_ids == [1]


def test_pktmerge_passes_headers_through_and_checks_them():
    a, out = Stream("a"), Stream("out")
    sink = StreamSink("sink", out)
    run_system([StreamSource("sa", a, packet(6, 1)), PacketMerge("merge", [a], out), sink])
    assert parse_packet_header(sink.beats[0].data).packet_id == 6
    a, out = Stream("a"), Stream("out")
    with pytest.raises(PacketError, match=r"bad parity.*; merge, input 0$"):
        run_system([StreamSource("sa", a, [Beat(0), Beat(1, True)]),
                    PacketMerge("merge", [a], out), StreamSink("sink", out)])


def test_pktmerge_checks_carried_headers_against_the_input_packet_id():
    # Input 0 inserts headers (ID 3); input 1 carries its own, which must say ID 5.
    a, b, out = Stream("a"), Stream("b"), Stream("out")
    sink = StreamSink("sink", out, drop_headers=True)
    run_system([StreamSource("sa", a, [1, 2]), StreamSource("sb", b, packet(5, 7)),
                PacketMerge("merge", [a, b], out, packet_ids=[3, 5], tagged=[False, True]),
                sink])
    assert sorted(sink.packet_ids) == [3, 5] and sorted(sink.data) == [1, 2, 7]
    a, b, out = Stream("a"), Stream("b"), Stream("out")
    with pytest.raises(StreamError, match=r"^packet_id=6: input 1 of merge carries packet ID 5 "
                                          r"only; merge, input 1, packet 0$"):
        run_system([StreamSource("sb", b, packet(6, 7)),
                    PacketMerge("merge", [a, b], out, packet_ids=[3, 5], tagged=[False, True]),
                    StreamSink("sink", out)])
    a, b, out = Stream("a"), Stream("b"), Stream("out")
    with pytest.raises(PacketError, match=r"bad parity.*; merge, input 1$"):
        run_system([StreamSource("sb", b, [Beat(packet_header(5, 0, 0, 0) ^ (1 << 31)),
                                           Beat(7, True)]),
                    PacketMerge("merge", [a, b], out, packet_ids=[3, 5], tagged=[False, True]),
                    StreamSink("sink", out)])
    with pytest.raises(StreamError, match=r"^tagged=\[True\]: m has 2 inputs; give one flag "
                                          r"each, with packet_ids"):
        PacketMerge("m", [Stream("a"), Stream("b")], Stream("o"), packet_ids=[1, 2],
                    tagged=[True])
    with pytest.raises(StreamError, match=r"^tagged=\[True\]: m has 1 inputs"):
        PacketMerge("m", [Stream("a")], Stream("o"), tagged=[True])


def test_pktmerge_arguments():
    with pytest.raises(StreamError, match=r"^packet_ids=\[1\]: m has 2 inputs; give one ID each"):
        PacketMerge("m", [Stream("a"), Stream("b")], Stream("o"), packet_ids=[1])
    with pytest.raises(StreamError, match=r"^inputs=\[\]: m needs at least one input"):
        PacketMerge("m", [], Stream("o"))
    with pytest.raises(StreamError, match=r"^outputs=\[\]: s needs at least one output"):
        PacketSplit("s", Stream("i"), [])


# --- with DMA channels ------------------------------------------------------------------------


def test_one_memory_tile_read_reaches_two_receivers_by_packet_id():
    """An MM2S chain of two packet BDs (IDs 0 and 1) split to two S2MM channels that drop
    the headers: each receiver gets its part, headers have odd parity."""
    mem = DMA("memtile", 0, 1)
    own, offset = mem.memory.resolve(OWN)
    own.load(offset, range(100, 110))
    mem.write_bd(0, BufferDescriptor("memtile", base_address=OWN, buffer_length=4, valid_bd=1,
                                     enable_packet=1, packet_id=0, use_next_bd=1, next_bd=1))
    mem.write_bd(1, BufferDescriptor("memtile", base_address=OWN + 4, buffer_length=6, valid_bd=1,
                                     enable_packet=1, packet_id=1))
    core = [DMA("tile", c, 2) for c in (0, 1)]
    lengths = (4, 6)
    for dma, n in zip(core, lengths, strict=True):
        dma.write_bd(0, BufferDescriptor("tile", base_address=0, buffer_length=n, valid_bd=1,
                                         enable_packet=1))
    out, to_0, to_1 = Stream("out"), Stream("to0"), Stream("to1")
    mem.mm2s[0].connect(out).push(Task(0, repeat_count=2))
    for dma, s in zip(core, (to_0, to_1), strict=True):
        dma.s2mm[0].connect(s).push(Task(0, repeat_count=2))
    split = PacketSplit("split", out, [to_0, to_1])
    report = run_system([mem.mm2s[0], split, core[0].s2mm[0], core[1].s2mm[0]])
    assert core[0].memory.resolve(0)[0].dump(0, 4).tolist() == [100, 101, 102, 103]
    assert core[1].memory.resolve(0)[0].dump(0, 6).tolist() == list(range(104, 110))
    assert split.packets == 4
    assert report.words["memtile(0,1).mm2s0"] == 2 * (4 + 6 + 2)
    assert report.stranded == {}
