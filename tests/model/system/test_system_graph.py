"""The graph API: the tiling tutorial graph (docs/tiling.md), ping-pong, a deadlock on purpose,
packet split and merge, borrowed neighbour channels, sub-word element types, and the compile
checks with their messages."""


import re
import warnings

import numpy as np
import pytest

from aiedma.flows import graph_examples
from aiedma.flows.graph_examples import (
    TUTORIAL_READS,
    main,
    packet_merge_graph,
    packet_split_graph,
    pipeline_graph,
    run_tutorial,
    tutorial_graph,
)
from aiedma.model import PacketError
from aiedma.model.bd.packet import packet_header
from aiedma.model.system.graph import Graph, GraphError, SharedBuffer, UnwrittenReadWarning
from aiedma.model.system.kernel import (
    KernelAgent,
    KernelError,
    KernelInput,
    KernelOutput,
    from_words,
    to_words,
)
from aiedma.model.system.scheduler import DeadlockError, run_system
from aiedma.model.system.stream import Beat, Stream, StreamSink, StreamSource
from aiedma.model.tiling.parameters import TilingParameters

# docs/tiling.md "Worked examples" 1-4, as printed there: k1 and k2 write the 10x6 buffer in these
# orders, k3 and k4 must receive exactly these elements.
R3, R4 = TUTORIAL_READS
EX1 = [0, 1, 2, 10, 11, 12, 3, 4, 5, 13, 14, 15, 20, 21, 22, 30, 31, 32, 23, 24, 25, 33, 34, 35,
       40, 41, 42, 50, 51, 52, 43, 44, 45, 53, 54, 55]
EX2 = [6, 7, 16, 17, 26, 27, 36, 37, 46, 47, 56, 57, 8, 9, 18, 19, 28, 29, 38, 39, 48, 49, 58, 59]
EX3 = [0, 1, 10, 11, 20, 21, 30, 31, 40, 41, 50, 51, 2, 3, 12, 13, 22, 23, 32, 33, 42, 43, 52, 53]
EX4 = [4, 5, 6, 14, 15, 16, 24, 25, 26, 34, 35, 36, 44, 45, 46, 54, 55, 56,
       7, 8, 9, 17, 18, 19, 27, 28, 29, 37, 38, 39, 47, 48, 49, 57, 58, 59]


def identity(x):
    return x


def rounds(indices, n):
    """Round r writes index + 1000 r, so every element says where and when it was written."""
    return np.array([np.asarray(indices) + 1000 * r for r in range(n)])


@pytest.mark.parametrize("num_buffers", [1, 2])
def test_tutorial_graph_kernels_receive_the_elements_tiling_md_lists(num_buffers):
    iterations = 4
    result = tutorial_graph(num_buffers).run(iterations, {"in1": rounds(EX1, iterations),
                                                    "in2": rounds(EX2, iterations)})
    np.testing.assert_array_equal(result.outputs["out3"], rounds(EX3, iterations))
    np.testing.assert_array_equal(result.outputs["out4"], rounds(EX4, iterations))
    assert [r[0].tolist() for r in result.received["k3"]] == rounds(EX3, iterations).tolist()
    assert len(result.received["k1"]) == 6 * iterations, "a 6-element buffer runs 6 times"
    report = result.report
    assert report.locks == {"memtile(1,1)": 4 * num_buffers}
    assert report.bds["memtile(1,1)"] > 0
    for channel, words in (("s2mm0", 36), ("s2mm1", 24), ("mm2s0", 24), ("mm2s1", 36)):
        assert report.system.words[f"memtile(1,1).{channel}"] == words * iterations
    assert report.system.stranded == {}


def test_tutorial_graph_with_a_repetition_count():
    # Two rounds per iteration: the inputs carry two buffers' worth each iteration.
    inputs = {"in1": rounds(EX1, 4), "in2": rounds(EX2, 4)}
    result = tutorial_graph(2, repetition_count=2).run(2, inputs)
    np.testing.assert_array_equal(result.outputs["out3"].reshape(4, -1), rounds(EX3, 4))
    np.testing.assert_array_equal(result.outputs["out4"].reshape(4, -1), rounds(EX4, 4))


def test_ping_pong_beats_one_buffer():
    def cycles(num_buffers):
        return tutorial_graph(num_buffers).run(6, {"in1": rounds(EX1, 6),
                                             "in2": rounds(EX2, 6)}).report.cycles
    assert cycles(2) < cycles(1)


def test_a_ping_pong_pipeline_accounts_for_every_word_and_overlaps():
    iterations, size = 20, 64
    data = np.arange(iterations * size, dtype=np.int32)
    single = pipeline_graph(1).run(iterations, {"in": data})
    double = pipeline_graph(2).run(iterations, {"in": data})
    for result in (single, double):
        # Nothing lost, duplicated or reordered.
        np.testing.assert_array_equal(result.outputs["out"].ravel(), data * 3 + 1)
        assert result.report.system.words["memtile(1,1).s2mm0"] == data.size
        assert result.report.system.stranded == {}
    # With one copy the two sides take turns; with two they overlap.
    assert double.report.cycles < 0.75 * single.report.cycles
    lock = {name: r.report.system.stalls["memtile(1,1).s2mm0"].get("lock", 0)
            for name, r in (("single", single), ("double", double))}
    assert lock["double"] < lock["single"]
    assert "BDs used on memtile(1,1)" in double.report.text()


def test_a_graph_that_deadlocks_on_purpose_reports_the_waiting_locks():
    """A feedback loop with no initial data: each buffer waits for the other."""
    g = Graph()
    a, b = g.shared_buffer([8], 1, 1, name="a"), g.shared_buffer([8], 1, 1, name="b")
    k, k2 = g.kernel("k", lambda x: x + 1, [8], [8]), g.kernel("k2", identity, [8], [8])
    g.connect(a.outputs[0], k.inputs[0])
    g.connect(k.outputs[0], b.inputs[0])
    g.connect(b.outputs[0], k2.inputs[0])
    g.connect(k2.outputs[0], a.inputs[0])
    for x in (a, b):
        x.write_access(0, {})
        x.read_access(0, {})
    with pytest.raises(DeadlockError) as caught:
        g.run(2)
    message = str(caught.value)
    assert "memtile(1,1).mm2s0: BD 4: waits on lock 65 (memtile(1,1) locks lock 1) = 0, " \
           "wants >= 1" in message
    assert "memtile(1,1).mm2s1: BD 28: waits on lock 67" in message
    waits = caught.value.waits
    assert waits["memtile(1,1).s2mm0"].cause == "empty"
    assert {w.lock.lock_id for w in waits.values() if w.lock} == {65, 67}


def test_packet_split_one_read_reaches_two_kernels_and_headers_are_dropped():
    iterations = 3
    data = np.arange(60 * iterations)
    result = packet_split_graph().run(iterations, {"in": data})
    np.testing.assert_array_equal(result.outputs["out3"], rounds(EX3, iterations) // 1000 * 60
                                  + np.array(EX3))
    np.testing.assert_array_equal(result.outputs["out4"], rounds(EX4, iterations) // 1000 * 60
                                  + np.array(EX4))
    # Each receiver checked (parity included) and dropped one header per packet BD.
    assert result.packet_ids == {"k3.in[0]": [0] * iterations, "k4.in[0]": [1] * iterations}
    words = result.report.system.words
    assert words["memtile(1,1).mm2s0"] == iterations * (60 + 2), "one header per packet BD"
    assert words["k3"] == iterations * (1 + 24 + 24), "header in, data in, data out"


def test_packet_split_straight_to_graph_outputs():
    g = Graph()
    buf = g.shared_buffer([8], 1, 1, name="b")
    split = g.pktsplit(2, "split")
    g.connect(g.input("in"), buf.inputs[0])
    g.connect(buf.outputs[0], split.inputs[0])
    g.connect(split.outputs[0], g.output("even"))
    g.connect(split.outputs[1], g.output("odd"))
    buf.write_access(0, {})
    buf.read_access(0, [{"tiling_dimension": [1], "offset": [k], "packet_port_id": k % 2}
                        for k in range(8)])
    result = g.run(1, {"in": np.arange(10, 18)})
    assert result.outputs["even"].tolist() == [[10, 12, 14, 16]]
    assert result.outputs["odd"].tolist() == [[11, 13, 15, 17]]
    assert result.packet_ids == {"even": [0] * 4, "odd": [1] * 4}


def test_packet_merge_a_kernel_and_a_memtile_read_reach_one_kernel_tagged_by_id():
    iterations = 3
    a, b = np.arange(16 * iterations), 1000 + np.arange(16 * iterations)
    result = packet_merge_graph().run(iterations, {"in_a": a, "in_b": b})
    ids = result.packet_ids["collector.in[0]"]
    runs = [r[0].tolist() for r in result.received["collector"]]
    # One 8-word packet a run: ka's buffers carry ID 0, the read's entries ID 1.
    assert len(ids) == len(runs) == 4 * iterations
    assert sorted(ids) == [0] * 2 * iterations + [1] * 2 * iterations
    assert [w for i, r in zip(ids, runs, strict=True) if i == 0 for w in r] == a.tolist()
    assert [w for i, r in zip(ids, runs, strict=True) if i == 1 for w in r] == b.tolist()
    # Every word arrives once; only the headers (checked, parity included) are gone.
    assert sorted(result.outputs["out"].ravel().tolist()) == sorted([*a, *b])
    words = result.report.system.words
    assert words["memtile(1,1).mm2s0"] == iterations * (16 + 2), "MM2S header per packet BD"
    assert words["merge"] == iterations * (32 + 4), "the merge passes or inserts 4 headers"
    assert words["collector"] == iterations * (4 + 32 + 32), "headers in, data in, data out"


def test_packet_merge_of_two_kernels_to_a_graph_output_packets_span_runs():
    """ka sends 12-element buffers, kb 4; the graph output drops the headers; runs of ka and kb
    follow from the merge's volume (ka runs once by default, out has 16)."""
    g = Graph()
    ka = g.kernel("ka", lambda x: x * 2, [12], [12])
    kb = g.kernel("kb", lambda x: -x, [4], [4])
    merge = g.pktmerge(2)
    collector = g.kernel("collector", identity, [16], [16])
    g.connect(g.input("in_a"), ka.inputs[0])
    g.connect(g.input("in_b"), kb.inputs[0])
    g.connect(ka.outputs[0], merge.inputs[0])
    g.connect(kb.outputs[0], merge.inputs[1])
    g.connect(merge.outputs[0], collector.inputs[0])
    g.connect(collector.outputs[0], g.output("out"))
    assert merge.name == "pktmerge0"
    result = g.run(4, {"in_a": np.arange(48), "in_b": np.arange(1, 17)})
    got = result.outputs["out"]
    assert got.shape == (4, 16)
    assert sorted(got.ravel().tolist()) == sorted([*(2 * np.arange(48)), *(-np.arange(1, 17))])
    assert sorted(result.packet_ids["collector.in[0]"]) == [0] * 4 + [1] * 4
    # Packets keep their words together and in order.
    flat = got.ravel().tolist()
    assert [w for w in flat if w >= 0] == (2 * np.arange(48)).tolist()
    assert [w for w in flat if w < 0] == (-np.arange(1, 17)).tolist()


def test_packet_merge_straight_to_a_graph_output():
    g = Graph()
    ka, kb = g.kernel("ka", identity, [2], [2]), g.kernel("kb", identity, [2], [2])
    merge = g.pktmerge(2, "m")
    for k, kernel in enumerate((ka, kb)):
        g.connect(g.input(f"in{k}"), kernel.inputs[0])
        g.connect(kernel.outputs[0], merge.inputs[k])
    g.connect(merge.outputs[0], g.output("out"))
    result = g.run(3, {"in0": [1, 2, 3, 4, 5, 6], "in1": [-1, -2, -3, -4, -5, -6]})
    assert sorted(result.packet_ids["out"]) == [0, 0, 0, 1, 1, 1]
    assert result.outputs["out"].shape == (3, 4)
    flat = result.outputs["out"].ravel().tolist()
    assert [w for w in flat if w > 0] == [1, 2, 3, 4, 5, 6]


def test_a_read_feeding_pktmerge_needs_its_input_packet_id():
    g = packet_merge_graph()
    g.nodes["mtx"].read_access(0, [{"tiling_dimension": [8], "offset": [0], "packet_port_id": 1},
                                   {"tiling_dimension": [8], "offset": [8], "packet_port_id": 0}])
    with pytest.raises(GraphError, match=r"^mtx\.out\[0\] entries\[1\]\.packet_port_id=0: feeds "
                                         r"merge\.in\[1\], which carries packet ID 1: every entry "
                                         r"of the read needs packet_port_id 1"):
        g.run(1, {"in_a": np.arange(16), "in_b": np.arange(16)})
    g.nodes["mtx"].read_access(0, {"tiling_dimension": [16]})  # no packets at all
    with pytest.raises(GraphError, match=r"^mtx\.out\[0\] entries\[0\]\.packet_port_id=-1: "):
        g.run(1, {"in_a": np.arange(16), "in_b": np.arange(16)})


def test_packet_merge_volume_is_the_sum_of_its_inputs():
    g = packet_merge_graph()
    g.nodes["collector"].runs = 3
    with pytest.raises(GraphError, match=r"^transfer volume=\[32, 24\]: differs at the two ends "
                                         r"of merge\.out\[0\] -> collector\.in\[0\]: 32 "
                                         r"elements per iteration leave merge\.out\[0\] \(the "
                                         r"sum of its inputs: 16 \+ 16\) but collector\.in\[0\] "
                                         r"takes 24"):
        g.run(1, {"in_a": np.arange(16), "in_b": np.arange(16)})


def test_more_than_six_ports_borrow_the_neighbours_channels():
    """Eleven writers: six on the memory tile, four from the west neighbour, one from the
    east one, reaching the buffer through their east / west windows and lock IDs."""
    n = 11
    g = Graph()
    buf = g.shared_buffer([n, 4], n, 1, name="wide")
    for i in range(n):
        g.connect(g.input(f"in{i}"), buf.inputs[i])
        buf.write_access(i, {"tiling_dimension": [1, 4], "offset": [i, 0]})
    g.connect(buf.outputs[0], g.output("out"))
    buf.read_access(0, {})
    inputs = {f"in{i}": [i + n * row for row in range(4)] for i in range(n)}
    result = g.run(1, inputs)
    assert result.outputs["out"].tolist() == [list(range(4 * n))]
    words = result.report.system.words
    assert words["memtile(0,1).s2mm3"] == 4 and words["memtile(2,1).s2mm0"] == 4
    assert set(result.report.bds) == {"memtile(1,1)", "memtile(0,1)", "memtile(2,1)"}


# --- checks ------------------------------------------------------------------------------------


def test_transfer_volume_must_match_at_both_ends():
    g = Graph()
    k = g.kernel("k", identity, [6], [5])
    buf = g.shared_buffer([12], 1, 1, name="b")
    g.connect(g.input("in"), k.inputs[0])
    g.connect(k.outputs[0], buf.inputs[0])
    g.connect(buf.outputs[0], g.output("out"))
    buf.write_access(0, {})
    buf.read_access(0, {})
    with pytest.raises(GraphError, match=r"^transfer volume=12: differs at the two ends of "
                                         r"k\.out\[0\] -> b\.in\[0\]: b\.in\[0\] carries 12 "
                                         r"elements per iteration \(write_access of 12 x "
                                         r"repetition_count 1\), not a whole number of "
                                         r"k\.out\[0\] buffers of 5"):
        g.run(1, {"in": range(12)})


def test_transfer_volume_conflict_between_two_buffers():
    g = Graph()
    k = g.kernel("k", identity, [4], [4])
    a, b = g.shared_buffer([8], 1, 1, name="a"), g.shared_buffer([12], 1, 1, name="b")
    g.connect(g.input("in"), a.inputs[0])
    g.connect(a.outputs[0], k.inputs[0])
    g.connect(k.outputs[0], b.inputs[0])
    g.connect(b.outputs[0], g.output("out"))
    for x in (a, b):
        x.write_access(0, {})
        x.read_access(0, {})
    with pytest.raises(GraphError, match=r"^transfer volume=\[8, 12\]: differs at the two ends of "
                                         r"k\.out\[0\] -> b\.in\[0\]: 8 elements per iteration "
                                         r"leave k\.out\[0\] \(buffer 4 x 2 run\(s\), set by "
                                         r"a\.out\[0\]\) but b\.in\[0\] takes 12"):
        g.run(1, {"in": range(8)})


def test_more_ports_than_a_memory_tile_has():
    g = Graph()
    for b in range(3):
        buf = g.shared_buffer([5], 5, 1, name=f"b{b}")
        for i in range(5):
            g.connect(g.input(f"in{b}{i}"), buf.inputs[i])
            buf.write_access(i, {"tiling_dimension": [1], "offset": [i]})
        g.connect(buf.outputs[0], g.output(f"out{b}"))
        buf.read_access(0, {})
    with pytest.raises(GraphError, match=r"^write \(S2MM\) ports=15: more than a memory tile "
                                         r"has: 6 own \+ 4 west \+ 4 east = 14 \(at b2\.in\[4\]\)"):
        g.run(1, {f"in{b}{i}": [i] for b in range(3) for i in range(5)})


def test_bd_budget_exceeded_names_tile_channel_and_numbers():
    """Overlapping tiles of changing shape need one BD each: 30 BDs on one channel."""
    g = Graph()
    buf = g.shared_buffer([64], 1, 1, name="b")
    g.connect(g.input("in"), buf.inputs[0])
    g.connect(buf.outputs[0], g.output("out"))
    buf.write_access(0, {})
    buf.read_access(0, [{"tiling_dimension": [1 + k % 3], "offset": [k]} for k in range(30)])
    with pytest.raises(GraphError, match=r"^insufficient number of available buffer descriptors "
                                         r"on memtile\(1,1\) MM2S channel 0: b\.out\[0\] "
                                         r"\(copy 0\) needs 30 BD\(s\) but 21 of BDs 0-23 "
                                         r"\(shared by channels 0/2/4 of both directions\) are "
                                         r"left; the lowering says: the port program needs 30"):
        g.run(1, {"in": range(64)})


def test_bd_budget_counts_the_lock_bds():
    g = Graph()
    buf = g.shared_buffer([64], 1, 1, name="b")
    buf.num_buffers = 2
    g.connect(g.input("in"), buf.inputs[0])
    g.connect(buf.outputs[0], g.output("out"))
    buf.write_access(0, {})
    # 10 data BDs + 2 lock BDs per copy = 24, and the writer on S2MM 0 shares the half.
    buf.read_access(0, [{"tiling_dimension": [2 + k % 2], "offset": [k * 4]} for k in range(10)])
    with pytest.raises(GraphError, match=r"^insufficient number of available buffer descriptors "
                                         r"on memtile\(1,1\) MM2S channel 0: b\.out\[0\] "
                                         r"\(copy 1\)"):
        g.run(1, {"in": range(64)})


def test_a_tiling_the_memory_tile_cannot_do_names_the_port():
    buf = SharedBuffer.create([8], 1, 1, name="b")
    with pytest.raises(GraphError, match=r"^b\.in\[0\]: entries\[0\]: offset\[0\]=-2, .*a "
                                         r"write cannot leave the boundary"):
        buf.write_access(0, {"tiling_dimension": [8], "offset": [-2]})
    with pytest.raises(GraphError, match=r"^b\.out\[0\] entries\[0\]\.buffer_dimension=\[4\]: "
                                         r"holds 4 elements but the buffer holds 8"):
        buf.read_access(0, {"buffer_dimension": [4]})


@pytest.mark.parametrize(("build", "message"), [
    (lambda g, b: g.connect(b.outputs[0], g.output("out")),
     r"^port='b\.in\[0\]': is not connected"),
    (lambda g, b: (g.connect(g.input("in"), b.inputs[0]),
                   g.connect(b.outputs[0], g.output("o"))),
     r"^port='b\.in\[0\]': has no write_access"),
])
def test_unconnected_ports_and_missing_access(build, message):
    g = Graph()
    b = g.shared_buffer([4], 1, 1, name="b")
    build(g, b)
    with pytest.raises(GraphError, match=message):
        g.run(1)


def test_argument_checks():
    with pytest.raises(GraphError, match=r"^num_buffers\(b\)=3: must be 1, or 2 for ping-pong"):
        SharedBuffer.create([4], 1, 1, name="b").num_buffers = 3
    with pytest.raises(GraphError, match=r"^repetition_count\(b\)=0: must be at least 1"):
        SharedBuffer.create([4], 1, 1, name="b").repetition_count = 0
    with pytest.raises(GraphError, match=r"^b shape=\[4, 1, 1, 1, 1\]: a shared buffer has 1 to 4"):
        SharedBuffer.create([4, 1, 1, 1, 1], 1, 1, name="b")
    with pytest.raises(GraphError, match=r"^b n_in=15: must be in 1..14"):
        SharedBuffer.create([4], 15, 1, name="b")
    with pytest.raises(GraphError, match=r"^b dtype='int64': the graph model moves 32-, 16- "
                                         r"and 8-bit elements: int32, "):
        SharedBuffer.create([4], 1, 1, "int64", name="b")
    g = Graph()
    b = g.shared_buffer([4], 1, 1, name="b")
    with pytest.raises(GraphError, match=r"^source='b\.in\[0\]': must be an output port"):
        g.connect(b.inputs[0], b.outputs[0])
    g.connect(g.input("in"), b.inputs[0])
    with pytest.raises(GraphError, match=r"^port='b\.in\[0\]': is already connected"):
        g.connect(g.input("in2"), b.inputs[0])
    with pytest.raises(GraphError, match=r"^name='b': two nodes of a graph share it"):
        g.shared_buffer([4], 1, 1, name="b")


def test_input_data_must_match_the_volume():
    g = pipeline_graph(1, size=16)
    with pytest.raises(GraphError, match=r"^len\(inputs\['in'\]\)=20: the graph input sends 16 "
                                         r"per iteration: 2 iterations need 32"):
        g.run(2, {"in": range(20)})
    with pytest.raises(GraphError, match=r"^inputs=\['nope'\]: no graph input has this name"):
        g.run(2, {"in": range(32), "nope": []})


def test_a_read_feeding_pktsplit_needs_packet_ids():
    g = packet_split_graph()
    buf = g.nodes["mtx"]
    buf.read_access(0, [R3 | {"packet_port_id": 0}, R4])
    with pytest.raises(GraphError, match=r"^mtx\.out\[0\] entries\[1\]\.packet_port_id=-1: feeds "
                                         r"split, which has outputs 0..1"):
        g.run(1, {"in": range(60)})


# --- the kernel agent ----------------------------------------------------------------------------


def test_a_kernel_function_must_fill_its_outputs():
    a, b = Stream("a"), Stream("b")
    kernel = KernelAgent("k", lambda x: x[:2], [KernelInput(a, 3)], [KernelOutput(b, 3)], runs=1)
    with pytest.raises(KernelError, match=r"^k\.out\[0\]=2: the function returned 2 elements; "
                                          r"the output buffer holds 3"):
        run_system([StreamSource("s", a, [1, 2, 3]), kernel, StreamSink("t", b)])


def test_a_kernel_value_must_fit_the_type():
    a, b = Stream("a"), Stream("b")
    kernel = KernelAgent("k", lambda x: x.astype(np.int64) << 40, [KernelInput(a, 1)],
                         [KernelOutput(b, 1)], runs=1)
    with pytest.raises(KernelError, match=r"^k\.out\[0\]=1099511627776: does not fit int32"):
        run_system([StreamSource("s", a, [1]), kernel, StreamSink("t", b)])


@pytest.mark.parametrize("dtype", ["int32", "uint32"])
@pytest.mark.parametrize("result_type", ["same", "int64", "list"])
def test_a_kernel_gives_its_outputs_words_as_to_words_makes_them(dtype, result_type):
    """A result of the kernel's own type and size is taken as its bits: the same words
    as any other result's, packed and checked by to_words."""
    values = np.array([0, 1, -1, 7, -(1 << 31), (1 << 31) - 1, 5, -3]) if dtype == "int32" \
        else np.array([0, 1, 7, (1 << 32) - 1, 1 << 31, 5, 3, 9])
    result = {"same": values.astype(dtype), "int64": values.astype(np.int64),
              "list": values.tolist()}[result_type]
    kernel = KernelAgent("k", lambda x: result, [KernelInput(Stream("a"), 8)],
                         [KernelOutput(Stream("b"), 8)], runs=1, dtype=dtype)
    words = kernel.call_words([np.zeros(8, dtype=dtype)])
    expected = to_words(values, dtype, "x")
    assert len(words) == 1
    assert words[0].dtype == np.uint32
    np.testing.assert_array_equal(words[0], expected)
    assert kernel.call([np.zeros(8, dtype=dtype)]) == [expected.tolist()]


def test_a_kernel_result_of_its_type_and_the_wrong_size_is_refused():
    kernel = KernelAgent("k", lambda x: x[:2], [KernelInput(Stream("a"), 3)],
                         [KernelOutput(Stream("b"), 3)], runs=1)
    with pytest.raises(KernelError, match=r"^k\.out\[0\]=2: the function returned 2"):
        kernel.call_words([np.zeros(3, dtype=np.int32)])


def test_a_packet_input_checks_the_header():
    a = Stream("a")
    kernel = KernelAgent("k", identity, [KernelInput(a, 1, packet=True)], [], runs=1)
    with pytest.raises(PacketError, match=r"bad parity.*; received by k\.in\[0\]$"):
        run_system([StreamSource("s", a, [Beat(0), Beat(5, True)]), kernel])
    a = Stream("a")
    kernel = KernelAgent("k", identity, [KernelInput(a, 1, packet=True)], [], runs=1)
    run_system([StreamSource("s", a, [Beat(packet_header(3, 0, 0, 0)), Beat(5, True)]), kernel])
    assert kernel.packet_ids == [[3]] and kernel.received[0][0].tolist() == [5]


def test_the_example_module_runs_and_prints_reports(capsys, monkeypatch):
    # RTL on Amaranth only: tests/tb/system/test_loop.py runs the tutorial graph on Verilator.
    monkeypatch.setattr(graph_examples, "IN_PROCESS", ("amaranth",))
    assert main() == 0
    out = capsys.readouterr().out
    assert out.count("k3 and k4 received exactly the listed elements") == 2
    assert "memtile(1,1).mm2s0" in out and "locks used on memtile(1,1): 8" in out
    for cycles in re.findall(r"^(\d+) cycles$", out, flags=re.M):
        assert f"RTL on amaranth : cycles model {cycles}, RTL {cycles};" in out
    assert out.count("0 mismatches") == 2


def _split_fed_by_input(g):
    split = g.pktsplit(1, "s")
    g.connect(g.input("in"), split.inputs[0])
    g.connect(split.outputs[0], g.output("out"))


def _split_to_buffer(g):
    a, b = g.shared_buffer([4], 1, 1, name="a"), g.shared_buffer([4], 1, 1, name="b")
    split = g.pktsplit(1, "s")
    g.connect(g.input("in"), a.inputs[0])
    g.connect(a.outputs[0], split.inputs[0])
    g.connect(split.outputs[0], b.inputs[0])
    g.connect(b.outputs[0], g.output("out"))
    for x in (a, b):
        x.write_access(0, {})
        x.read_access(0, {"packet_port_id": 0})


def _many_buffers(shape, n_buffers):
    def build(g):
        for k in range(n_buffers):
            buf = g.shared_buffer(shape, 1, 1, name=f"b{k}")
            g.connect(g.input(f"in{k}"), buf.inputs[0])
            g.connect(buf.outputs[0], g.output(f"out{k}"))
            buf.write_access(0, {})
            buf.read_access(0, {})
    return build


def _merge_fed_by_input(g):
    merge = g.pktmerge(1, "m")
    g.connect(g.input("in"), merge.inputs[0])
    g.connect(merge.outputs[0], g.output("out"))


def _merge_to_buffer(g):
    k, b = g.kernel("k", identity, [4], [4]), g.shared_buffer([4], 1, 1, name="b")
    merge = g.pktmerge(1, "m")
    g.connect(g.input("in"), k.inputs[0])
    g.connect(k.outputs[0], merge.inputs[0])
    g.connect(merge.outputs[0], b.inputs[0])
    g.connect(b.outputs[0], g.output("out"))
    b.write_access(0, {})
    b.read_access(0, {})


@pytest.mark.parametrize(("build", "message"), [
    (_merge_fed_by_input,
     r"^port='m\.in\[0\]': a pktmerge input is fed by a kernel or a shared buffer's read port"),
    (_merge_to_buffer,
     r"^port='m\.out\[0\]': a pktmerge output feeds a kernel or a graph output"),
    (_split_fed_by_input, r"^port='s\.in\[0\]': a pktsplit is fed by a shared buffer's read port"),
    (_split_to_buffer, r"^port='s\.out\[0\]': a pktsplit output feeds a kernel or a graph output"),
    (lambda g: g.connect(g.input("in"), g.output("out")),
     r"^connection='in\.out\[0\] -> out\.in\[0\]': a graph input straight to a graph output"),
    (_many_buffers([256, 257], 2),
     r"^memory=131584: the buffers need more words than the memory tile's 131072"),
])
def test_compile_checks(build, message):
    g = Graph()
    build(g)
    with pytest.raises(GraphError, match=message):
        g.run(1, {})


def test_more_argument_checks():
    with pytest.raises(GraphError, match=r"^k\.inputs\[0\]=0: a kernel buffer holds at least 1"):
        Graph().kernel("k", identity, [0])
    with pytest.raises(GraphError, match=r"^k\.runs=0: must be at least 1"):
        Graph().kernel("k", identity, [1], runs=0)
    with pytest.raises(GraphError, match=r"^pktsplit outputs=33: must be in 1..32"):
        Graph().pktsplit(33)
    with pytest.raises(GraphError, match=r"^pktmerge inputs=0: must be in 1..32 \(packet IDs\)"):
        Graph().pktmerge(0)
    buf = SharedBuffer.create([4], 1, 2, name="b")
    with pytest.raises(GraphError, match=r"^b port=2: has 2 read port\(s\)"):
        buf.read_access(2, {})
    with pytest.raises(GraphError, match=r"^port='b\.out\[0\]': write_access takes a port of "
                                         r"inputs of b"):
        buf.write_access(buf.outputs[0], {})
    g = Graph()
    with pytest.raises(GraphError, match=r"^destination='b\.out\[1\]': must be an input port"):
        g.connect(buf.outputs[0], buf.outputs[1])
    with pytest.raises(GraphError, match=r"^iterations=0: must be at least 1"):
        g.run(0)
    with pytest.raises(GraphError, match=r"^inputs='in': the graph input needs 2 x 16 elements"):
        pipeline_graph(1, size=16).run(2, {})


def test_a_kernel_returns_one_array_per_output():
    a, b, c = Stream("a"), Stream("b"), Stream("c")
    kernel = KernelAgent("k", identity, [KernelInput(a, 1)],
                         [KernelOutput(b, 1), KernelOutput(c, 1)], runs=1)
    with pytest.raises(KernelError, match=r"^outputs=1: kernel k has 2 output\(s\); its function "
                                          r"must return one array each"):
        run_system([StreamSource("s", a, [1]), kernel])


# --- sub-word element types ----------------------------------------------------------------------


def _subword_graph(dtype, per):
    """in -> p (8 elements) -> an 8x4 buffer of ``dtype`` -> c (16 elements) -> out; the read
    walks tiles of ``per`` x 4 along dimension 0 (word-aligned)."""
    g = Graph()
    producer, reader = g.kernel("p", identity, [8], [8]), g.kernel("c", identity, [16], [16])
    buf = g.shared_buffer([8, 4], 1, 1, dtype=dtype, name="b")
    g.connect(g.input("in"), producer.inputs[0])
    g.connect(producer.outputs[0], buf.inputs[0])
    g.connect(buf.outputs[0], reader.inputs[0])
    g.connect(reader.outputs[0], g.output("out"))
    read = {"buffer_dimension": [8, 4], "tiling_dimension": [per, 4], "offset": [0, 0],
            "tile_traversal": [(0, per, 8 // per)]}
    buf.write_access(0, {"tiling_dimension": [8, 4]})
    buf.read_access(0, read)
    return g, TilingParameters.from_dict(read).indices()


@pytest.mark.parametrize(("dtype", "per"), [("int16", 2), ("uint16", 2), ("int8", 4),
                                            ("uint8", 4)])
def test_sub_word_elements_pack_into_words_and_kernels_see_elements(dtype, per):
    iterations = 3
    g, walk = _subword_graph(dtype, per)
    low = -16 if dtype.startswith("int") else 0
    data = (np.arange(32 * iterations) % 96 + low).reshape(iterations, 32)
    result = g.run(iterations, {"in": data})
    np.testing.assert_array_equal(result.outputs["out"], data[:, walk])
    assert result.outputs["out"].dtype == np.dtype(dtype)
    first = result.received["c"][0][0]
    assert first.dtype == np.dtype(dtype) and first.tolist() == data[0, walk[:16]].tolist()
    words = result.report.system.words
    for channel in ("s2mm0", "mm2s0"):
        assert words[f"memtile(1,1).{channel}"] == 32 * iterations // per, "packed words"


def test_sub_word_elements_are_little_endian_in_a_word():
    assert to_words(np.array([1, 2]), "int16", "x").tolist() == [0x0002_0001]
    assert to_words(np.array([-1, 3]), "int16", "x").tolist() == [0x0003_FFFF]
    assert to_words(np.array([1, 2, 3, -4]), "int8", "x").tolist() == [0xFC03_0201]
    assert from_words([0xFC03_0201], "int8").tolist() == [1, 2, 3, -4]
    assert from_words([0x0003_FFFF], "uint16").tolist() == [0xFFFF, 3]


def test_sub_word_checks_name_the_port_and_the_rule():
    g = Graph()
    k = g.kernel("k", identity, [3], [3])
    buf = g.shared_buffer([6], 1, 1, dtype="int16", name="b")
    g.connect(g.input("in"), k.inputs[0])
    g.connect(k.outputs[0], buf.inputs[0])
    g.connect(buf.outputs[0], g.output("out"))
    buf.write_access(0, {})
    buf.read_access(0, {})
    with pytest.raises(GraphError, match=r"^k\.inputs\[0\]=3: int16 packs 2 elements to a 32-bit "
                                         r"word: a kernel buffer holds a whole number of words"):
        g.run(1, {"in": np.arange(6)})
    g, _ = _subword_graph("int8", 4)
    with pytest.raises(KernelError, match=r"^inputs\['in'\]=128: does not fit int8"):
        g.run(1, {"in": np.arange(32) + 100})
    with pytest.raises(KernelError, match=r"^len\(x\)=3: int16 packs 2 elements to a 32-bit "
                                          r"word: send a whole number of words"):
        to_words(np.arange(3), "int16", "x")


def test_a_read_of_elements_no_writer_wrote_is_a_warning_naming_port_and_elements():
    g = Graph()
    buf = g.shared_buffer([8], 1, 1, name="half")
    g.connect(g.input("in"), buf.inputs[0])
    g.connect(buf.outputs[0], g.output("out"))
    buf.write_access(0, {"tiling_dimension": [4], "offset": [2]})    # elements 2..5
    buf.read_access(0, {"tiling_dimension": [8]})                     # reads 0..7
    assert {p.name: m.tolist() for p, m in buf.unwritten_reads().items()} == {
        "half.out[0]": [0, 1, 6, 7]}
    with pytest.warns(UnwrittenReadWarning, match=r"^half\.out\[0\] reads 4 element\(s\) no "
                      r"write port of half writes in a round .*: 0\.\.1, 6\.\.7$"):
        result = g.run(1, {"in": [20, 30, 40, 50]})
    assert result.outputs["out"].tolist() == [[0, 0, 20, 30, 40, 50, 0, 0]]


def test_the_tutorial_graph_reads_only_what_it_writes():
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnwrittenReadWarning)
        tutorial_graph(1).run(1, {"in1": rounds(EX1, 1), "in2": rounds(EX2, 1)})


def test_graph_run_hands_its_channels_to_the_rtl_runner():
    """The model calls the runner it is given, with every agent and the memory-tile channels."""
    calls = []

    def runner(agents, channels, max_cycles):
        calls.append(([c.name for c in channels], max_cycles))
        return run_system(agents, max_cycles, exact=True)

    model = run_tutorial(1, 2)
    handed = run_tutorial(1, 2, rtl=runner)
    (names, max_cycles), = calls
    assert names and all(name.startswith("memtile(1,1).") for name in names)
    assert max_cycles == 10_000_000
    assert handed.report.text() == model.report.text()


@pytest.mark.parametrize(("rtl", "hint"), [("verilator", "'verilator'"), (1, "'amaranth'")])
def test_graph_run_refuses_an_rtl_that_is_no_runner(rtl, hint):
    message = (rf"^rtl={rtl!r}: must be None \(the model alone\) or an RTL runner: pass "
               rf"rtl=aiedma\.tb\.rtl_runner\({hint}\)$")
    with pytest.raises(GraphError, match=message):
        tutorial_graph(1).run(1, {}, rtl=rtl)


def test_a_graph_input_sends_the_element_type_of_the_buffer_its_data_reaches():
    g = Graph()
    buf = g.shared_buffer([8], 1, 1, "int8", "bytes")
    k = g.kernel("k", lambda x: x, [8], [8])
    g.connect(g.input("direct"), buf.inputs[0])
    g.connect(buf.outputs[0], k.inputs[0])
    g.connect(k.outputs[0], g.output("out"))
    assert g.input_dtype("direct") == "int8"
    lone = Graph()
    lone.connect(lone.input("in"), lone.output("out"))
    assert lone.input_dtype("in") == "int32"   # no buffer on the way: the default
    with pytest.raises(GraphError, match=r"^input='out': no graph input of that name$"):
        lone.input_dtype("out")
