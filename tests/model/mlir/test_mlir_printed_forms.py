"""The forms today's mlir-aie prints (its test/npu-xrt designs): ``aie.runtime_sequence``,
``arith.constant`` operands, ``aie.dma`` BD lists, buffers and locks declared inside a
DMA region, the keyword form of ``aie.dma_bd`` and its ``iteration``, ``affine.for``,
and a file of several devices."""

from pathlib import Path

import pytest

from aiedma.model.bd.packet import packet_header
from aiedma.model.mlir import MlirError, read_mlir
from aiedma.model.mlir.branches import FOREVER
from aiedma.model.mlir.run import run_design
from aiedma.model.system.stream import StreamError

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "mlir"

# examples/mlir/pingpong.mlir without its comment lines: positions in messages count
# from its "module {" line
_PINGPONG = (EXAMPLES / "pingpong.mlir").read_text()
LOOPBACK = _PINGPONG[_PINGPONG.index("module {"):]


def transposed_4x4(values: list[int]) -> list[int]:
    return [values[4 * row + column] for column in range(4) for row in range(4)]


def looped_back(data: list[int]) -> list[int]:
    """The 64 words the loopback returns: each ping block turned column by column, each
    pong block as it came."""
    return [*transposed_4x4(data[:16]), *data[16:32], *transposed_4x4(data[32:48]),
            *data[48:]]


def test_the_loopback_as_mlir_aie_prints_it_reads_without_warnings_and_runs():
    design = read_mlir(LOOPBACK)
    assert design.warnings == []
    chains = {(c.tile.kind, c.direction): c for c in design.chains}
    reader = chains["memtile", "mm2s"]
    assert [b.bd_id for b in reader.bds] == [2, 3] and reader.loops   # aie.dma loops
    ping = reader.bds[0].fields
    assert (ping["lock_acq_enable"], ping["lock_acq_value"], ping["use_next_bd"],
            ping["next_bd"]) == (1, -1, 1, 3)
    assert (ping["d0_wrap"], ping["d0_stepsize"], ping["d1_stepsize"]) == (4, 4, 1)
    result = run_design(design)
    assert result.hang is None and result.written == ["arg1"]
    # the reader turns every 4x4 block (ping, then pong) column by column
    assert result.host["arg1"].tolist() == looped_back(list(range(64)))


@pytest.mark.parametrize(("attributes", "loops", "repeat"), [
    ("", True, 1), ("{loop = false}", False, 1), ("{loop = false, repeat_count = 2 : i32}",
                                                   False, 3)])
def test_an_aie_dma_list_loops_unless_told_and_takes_its_repeat_count(attributes, loops,
                                                                     repeat):
    text = LOOPBACK.replace("%1 = aie.dma(MM2S, 0) [{", f"%1 = aie.dma(MM2S, 0) {attributes} [{{")
    chain = next(c for c in read_mlir(text).chains
                 if c.tile.kind == "memtile" and c.direction == "mm2s")
    assert (chain.loops, chain.repeat) == (loops, repeat)
    assert ("use_next_bd" in chain.bds[-1].fields) == loops


def test_a_pad_value_is_not_read_and_says_why():
    text = LOOPBACK.replace("%1 = aie.dma(MM2S, 0) [{", "%1 = aie.dma(MM2S, 0) "
                                                        "{pad_value = 42 : i32} [{")
    (warning,) = read_mlir(text).warnings
    assert "aie.dma: not read: pad_value=42: an AIE-ML DMA pads with zeros" in str(warning)


def test_the_keyword_form_reads_pads_and_the_iteration_attribute():
    text = LOOPBACK.replace(
        "aie.dma_bd(%pong : memref<16xi32>)\n        aie.use_lock(%prod",
        "aie.dma_bd(%pong : memref<16xi32> offset = 2 len = 16 sizes = [12] strides = [1] "
        "pad [<const_pad_before = 3, const_pad_after = 1>]) "
        "{iteration = #aie.bd_iteration<size = 4, stride = 8, current = 1>}\n"
        "        aie.use_lock(%prod")
    design = read_mlir(text)
    assert design.warnings == []
    fields = next(c for c in design.chains if c.tile.kind == "memtile"
                  and c.direction == "mm2s").bds[1].fields
    assert fields["buffer_length"] == 16 and fields["d0_zero_before"] == 3
    assert fields["d0_zero_after"] == 1 and fields["d0_wrap"] == 12
    assert (fields["iteration_wrap"], fields["iteration_stepsize"],
            fields["iteration_current"]) == (4, 8, 1)


def test_a_second_device_is_not_read_and_is_named():
    text = LOOPBACK + LOOPBACK.replace("npu1_1col", "npu2")
    design = read_mlir(text)
    (warning,) = design.warnings
    assert warning.line == LOOPBACK.count("\n") + 2
    assert "aie.device: not read: one device a file is run, the first (line 2)" in str(warning)
    assert len(design.host) == 2 and design.device == "npu1_1col"


def test_a_core_loop_in_affine_for_is_read_as_scf_for():
    core = """    %tile_0_2 = aie.tile(0, 2)
    %l = aie.lock(%tile_0_2, 0) {init = 0 : i32}
    %core_0_2 = aie.core(%tile_0_2) {
      affine.for %i = 0 to 4 step 2 {
        affine.for %j = 0 to 3 {
          aie.use_lock(%l, Release, 1)
        }
      }
      aie.end
    }
"""
    text = LOOPBACK.replace("    aie.flow(%tile_0_0, DMA : 0, %tile_0_1", core
                            + "    aie.flow(%tile_0_0, DMA : 0, %tile_0_1", 1)
    design = read_mlir(text)
    assert design.warnings == []
    (outer,) = design.cores[0].body
    assert outer.count == 2 and outer.body[0].count == 3


def test_a_started_task_whose_bd_is_not_read_is_left_out_of_the_run_with_its_warning():
    text = LOOPBACK.replace("aiex.npu.dma_wait {symbol = @out0}", """\
%t = aiex.dma_configure_task(%tile_0_1, MM2S, 1) {
        aie.use_lock(%cons, AcquireGreaterEqual, %undefined)
        aie.dma_bd(%ping : memref<16xi32>, 0, 16)
        aie.end
      }
      aiex.dma_start_task(%t)
      aiex.dma_wait {symbol = @out0}""")
    design = read_mlir(text)
    (warning,) = design.warnings
    assert "the lock value must be an integer constant, not '%undefined'" in str(warning)
    result = run_design(design)
    assert result.hang is None and result.written == ["arg1"]


def test_a_bd_number_written_again_waits_for_the_queued_task_to_take_it():
    """mlir-aie's dmabd_task_queue: two transfers on one channel with ``id = 0`` each;
    the second write of BD 0 lands after the first task has taken its BD."""
    half = "[0, 0, 0, 0][1, 1, 1, 32][0, 0, 0, 1]"
    text = LOOPBACK.replace("%arg1: memref<64xi32>)", "%arg1: memref<64xi32>, "
                            "%arg2: memref<32xi32>, %arg3: memref<32xi32>)")
    first = text.index("aiex.npu.dma_memcpy_nd (%arg0")
    end = text.index("\n", first)
    text = (text[:first] + f"aiex.npu.dma_memcpy_nd (%arg2{half}) {{id = 0 : i64, "
            f"metadata = @in0}} : memref<32xi32>\n      aiex.npu.dma_memcpy_nd "
            f"(%arg3{half}) {{id = 0 : i64, metadata = @in0}} : memref<32xi32>"
            + text[end:])
    design = read_mlir(text)
    assert design.warnings == []
    a, b = list(range(100, 132)), list(range(200, 232))
    result = run_design(design, {"arg2": a, "arg3": b})
    assert result.hang is None
    data = a + b
    assert result.host["arg1"].tolist() == looped_back(data)


INITIALISED = """aie.device(npu1_1col) {
  %tile_0_0 = aie.tile(0, 0)
  %tile_0_1 = aie.tile(0, 1)
  aie.flow(%tile_0_1, DMA : 0, %tile_0_0, DMA : 0)
  aie.shim_dma_allocation @out0 (%tile_0_0, S2MM, 0)
  %table = aie.buffer(%tile_0_1) {sym_name = "table"} : memref<2x4xi16> = INITIAL
  %memtile_dma_0_1 = aie.memtile_dma(%tile_0_1) {
    %0 = aie.dma(MM2S, 0) {loop = false} [{
      aie.dma_bd(%table : memref<2x4xi16>)
    }]
    aie.end
  }
  aie.runtime_sequence(%out: memref<8xi16>) {
    aiex.npu.dma_memcpy_nd (%out[0, 0, 0, 0][1, 1, 1, 8][0, 0, 0, 1]) {id = 0 : i64,
                                              metadata = @out0, issue_token = true} : memref<8xi16>
    aiex.npu.dma_wait {symbol = @out0}
  }
}
"""


@pytest.mark.parametrize(("initial", "want"), [
    ("dense<[[1, -2, 3, 4], [5, 6, 7, 8]]>", [1, -2, 3, 4, 5, 6, 7, 8]),
    ("dense<7>", [7] * 8)])
def test_a_buffers_dense_initial_value_is_in_memory_when_the_run_starts(initial, want):
    design = read_mlir(INITIALISED.replace("INITIAL", initial))
    assert design.warnings == []
    result = run_design(design)
    assert result.hang is None
    assert result.host["out"].view("<i2").tolist() == want


def test_an_initial_value_of_the_wrong_size_is_not_read_and_says_so():
    design = read_mlir(INITIALISED.replace("INITIAL", "dense<[1, 2, 3]>"))
    assert any("its initial value has 3 elements; the buffer holds 8" in str(w)
               for w in design.warnings)


def test_an_older_writebds_ddr_id_names_the_host_argument_it_reads():
    text = """aie.device(npu1_1col) {
  aie.runtime_sequence(%a: memref<64xi32>, %b: memref<64xi32>) {
    aiex.npu.writebd {bd_id = 3 : i32, buffer_length = 16 : i32, buffer_offset = 32 : i32,
      column = 0 : i32, row = 0 : i32, ddr_id = 1 : i32, valid_bd = 1 : i32}
  }
}
"""
    design = read_mlir(text)
    assert design.warnings == []
    (bd,) = design.bds
    assert bd.problems == [] and bd.buffer.name == "b"
    assert (bd.fields["base_address"], bd.fields["buffer_length"]) == (8, 16)
    bad = read_mlir(text.replace("ddr_id = 1", "ddr_id = 2"))
    assert "ddr_id=2: the runtime sequence has 2 arguments" in str(bad.warnings[0])


def test_a_memref_global_with_no_value_is_a_symbol_and_no_warning():
    text = LOOPBACK.replace("    %tile_0_0 = aie.tile(0, 0)", '''\
    memref.global "public" @in0_fifo : memref<16xi32>
    memref.global "private" constant @bad : memref<2xi32> = dense<"0x01">
    %tile_0_0 = aie.tile(0, 0)''')
    (warning,) = read_mlir(text).warnings
    assert warning.line == 4 and "expected dense<[...]> integer data" in str(warning)


def test_the_hosts_writes_to_a_lock_and_to_data_memory_are_made_in_sequence_order():
    """``maskwrite32`` changes the masked bits of a memory tile's word, ``write32`` of
    its lock's value register lets the BD waiting on it go."""
    text = INITIALISED.replace("INITIAL", "dense<[[1, -2, 3, 4], [5, 6, 7, 8]]>").replace(
        "  %memtile_dma_0_1", "  %go = aie.lock(%tile_0_1, 1) {init = 0 : i32}\n"
        "  %memtile_dma_0_1").replace(
        "      aie.dma_bd(%table", "      aie.use_lock(%go, AcquireGreaterEqual, 1)\n"
        "      aie.dma_bd(%table").replace(
        "    aiex.npu.dma_wait", "    aiex.npu.maskwrite32 {column = 0 : i32, row = 1 : i32, "
        "address = 0 : ui32, value = 0x163 : ui32, mask = 0xFF : ui32}\n"
        "    aiex.npu.write32 {column = 0 : i32, row = 1 : i32, address = 0xC0010 : ui32, "
        "value = 1 : ui32}\n    aiex.npu.dma_wait")
    design = read_mlir(text)
    assert design.warnings == []
    result = run_design(design)
    assert result.hang is None
    assert result.host["out"].view("<i2").tolist() == [0x63, -2, 3, 4, 5, 6, 7, 8]
    never = run_design(read_mlir(text.replace("value = 1 : ui32}", "value = 0 : ui32}")))
    assert never.hang is not None
    assert sorted(never.unfinished) == ["memtile(0,1).mm2s0", "shim(0,0).s2mm0"]


def packet_loopback(flow: str, packet: str = "3") -> str:
    """LOOPBACK with the shim's stream into the memory tile as ``flow``, the shim's
    transfer sending packets with ID ``packet``."""
    return LOOPBACK.replace("    aie.flow(%tile_0_0, DMA : 0, %tile_0_1, DMA : 0)\n", flow).replace(
        "{id = 0 : i64, metadata = @in0}",
        f"{{id = 0 : i64, metadata = @in0, packet = <pkt_id = {packet}, pkt_type = 0>}}")


ONE_TO_ONE = """    aie.packet_flow(3) {
      aie.packet_source<%tile_0_0, DMA : 0>
      aie.packet_dest<%tile_0_1, DMA : 0>
    }KEEP
"""


def test_a_packet_flow_routes_by_id_and_the_switch_drops_the_header():
    design = read_mlir(packet_loopback(ONE_TO_ONE.replace("KEEP", "")))
    assert design.warnings == [] and len(design.packet_flows) == 1
    result = run_design(design)
    assert result.hang is None
    assert result.host["arg1"].tolist() == looped_back(list(range(64)))


def test_keep_pkt_header_hands_the_header_to_the_receiving_channel():
    flow = ONE_TO_ONE.replace("KEEP", " {keep_pkt_header = true}")
    result = run_design(read_mlir(packet_loopback(flow)))
    # the header is the memory tile's first word: its ping buffer's element 0
    assert result.host["arg1"].tolist()[0] == packet_header(3, 0, 0, 0)


def test_a_packet_for_another_id_stops_the_run_naming_it():
    with pytest.raises(StreamError, match=r"packet_id=5: shim\(0,0\)\.mm2s0 packet switch "
                                          r"has outputs for packet IDs 3 only"):
        run_design(read_mlir(packet_loopback(ONE_TO_ONE.replace("KEEP", ""), packet="5")))


def test_a_multicast_packet_flow_is_refused_by_name():
    flow = ONE_TO_ONE.replace("KEEP", "").replace(
        "      aie.packet_dest<%tile_0_1, DMA : 0>\n",
        "      aie.packet_dest<%tile_0_1, DMA : 0>\n      aie.packet_dest<%tile_0_1, DMA : 1>\n")
    with pytest.raises(MlirError, match=r"^aie.packet_flow\(3\) at 5:5 sends to 2 DMA "
                                        r"channels: a multicast packet flow is not run$"):
        run_design(read_mlir(packet_loopback(flow)))


def test_packets_of_two_sources_reach_one_channel_whole_and_interleaved():
    flow = ONE_TO_ONE.replace("KEEP", "").replace(
        "      aie.packet_source<%tile_0_0, DMA : 0>\n",
        "      aie.packet_source<%tile_0_0, DMA : 0>\n"
        "      aie.packet_source<%tile_0_0, DMA : 1>\n")
    text = packet_loopback(flow).replace(
        "%arg1: memref<64xi32>)", "%arg1: memref<64xi32>, %arg2: memref<32xi32>, "
        "%arg3: memref<32xi32>)").replace(
        "aie.shim_dma_allocation @out0", "aie.shim_dma_allocation @in1 (%tile_0_0, MM2S, 1)\n"
        "    aie.shim_dma_allocation @out0")
    half = "[0, 0, 0, 0][1, 1, 1, 32][0, 0, 0, 1]"
    first = text.index("aiex.npu.dma_memcpy_nd (%arg0")
    text = (text[:first] + "".join(
        f"aiex.npu.dma_memcpy_nd (%{arg}{half}) {{id = {k} : i64, metadata = @{meta}, packet "
        f"= <pkt_id = 3, pkt_type = 0>}} : memref<32xi32>\n      "
        for k, (arg, meta) in enumerate((("arg2", "in0"), ("arg3", "in1")), start=2))
        + text[text.index("\n", first) + 7:])
    design = read_mlir(text)
    assert design.warnings == []
    a, b = list(range(100, 132)), list(range(200, 232))
    result = run_design(design, {"arg2": a, "arg3": b})
    assert result.hang is None
    out = result.host["arg1"].tolist()
    assert sorted(out) == a + b
    # a packet's 32 words are two of the memory tile's 16-word buffers, never mixed
    assert {tuple(sorted(out[k:k + 32])) for k in (0, 32)} == {tuple(a), tuple(b)}


ROUTED = """    %switchbox_0_0 = aie.switchbox(%tile_0_0) {
      aie.connect<South : 3, North : 0>
      aie.connect<North : 0, South : 2>
    }
    %shim_mux_0_0 = aie.shim_mux(%tile_0_0) {
      aie.connect<DMA : 0, North : 3>
      aie.connect<North : 2, DMA : 0>
    }
    %switchbox_0_1 = aie.switchbox(%tile_0_1) {
      aie.connect<South : 0, DMA : 0>
      aie.connect<DMA : 0, South : 0>
    }
"""


def test_a_routed_designs_switchboxes_are_followed_into_flows():
    text = LOOPBACK.replace("    aie.flow(%tile_0_0, DMA : 0, %tile_0_1, DMA : 0)\n"
                            "    aie.flow(%tile_0_1, DMA : 0, %tile_0_0, DMA : 0)\n", ROUTED)
    design = read_mlir(text)
    assert design.warnings == []
    assert sorted((f.source.kind, f.source_channel, f.dest.kind, f.dest_channel)
                  for f in design.flows) == [("memtile", 0, "shim", 0), ("shim", 0, "memtile", 0)]
    result = run_design(design)
    assert result.hang is None
    assert result.host["arg1"].tolist() == looped_back(list(range(64)))


def test_a_routed_broadcast_is_not_read_and_says_so():
    text = LOOPBACK.replace("    aie.flow(%tile_0_0, DMA : 0, %tile_0_1, DMA : 0)\n"
                            "    aie.flow(%tile_0_1, DMA : 0, %tile_0_0, DMA : 0)\n",
                            ROUTED.replace("aie.connect<South : 0, DMA : 0>",
                                           "aie.connect<South : 0, DMA : 0>\n"
                                           "      aie.connect<South : 0, DMA : 1>"))
    (warning,) = read_mlir(text).warnings
    assert str(warning) == ("10:7: aie.connect: not read: tile(0,0)'s MM2S 0 reaches 2 DMA "
                            "channels (a broadcast is not run)")


def core_in(text: str, body: str) -> str:
    """LOOPBACK with a core tile whose lock ``%l`` (init 0) its ``aie.core`` body uses."""
    core = f"""    %tile_0_2 = aie.tile(0, 2)
    %l = aie.lock(%tile_0_2, 0) {{init = 0 : i32}}
    %core_0_2 = aie.core(%tile_0_2) {{
{body}
    }}
"""
    return text.replace("    aie.flow(%tile_0_0, DMA : 0, %tile_0_1", core
                        + "    aie.flow(%tile_0_0, DMA : 0, %tile_0_1", 1)


BRANCHES = """      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c3 = arith.constant 3 : index
      cf.br ^bb1(%c0 : index)
    ^bb1(%0: index):  // 2 preds: ^bb0, ^bb2
      %1 = arith.cmpi slt, %0, %c3 : index
      cf.cond_br %1, ^bb2, ^bb3
    ^bb2:  // pred: ^bb1
      aie.use_lock(%l, Release, 1)
      %2 = arith.addi %0, %c1 : index
      cf.br ^bb1(%2 : index)
    ^bb3:  // pred: ^bb1
      aie.end"""


def test_a_core_lowered_to_blocks_and_branches_is_followed_as_it_runs():
    design = read_mlir(core_in(LOOPBACK, BRANCHES))
    assert design.warnings == []
    steps = design.cores[0].body
    assert [(s.action, s.value) for s in steps] == [("release", 1)] * 3


def test_a_branch_on_a_value_from_memory_stops_the_following_and_says_so():
    body = BRANCHES.replace("%1 = arith.cmpi slt, %0, %c3 : index",
                            "%1 = memref.load %buf[%0] : memref<4xi1>")
    (warning,) = read_mlir(core_in(LOOPBACK, body)).warnings
    assert "aie.core: not read: cf.cond_br on %1, a value the core computes from memory" \
        in str(warning)


def test_a_bd_chain_started_on_a_channel_runs_with_the_buffers_it_names():
    text = LOOPBACK.replace("    aie.shim_dma_allocation @in0", """\
    aie.bd_chain @send(%half: memref<32xi32>, %rest: memref<64xi32>) {
      aie.dma_bd(%half : memref<32xi32>, 0, 32)
      aie.next_bd ^bd1
    ^bd1:
      aie.dma_bd(%rest : memref<64xi32>, 32, 32)
      aie.end
    }
    aie.shim_dma_allocation @in0""").replace(
        "%arg1: memref<64xi32>)", "%arg1: memref<64xi32>, %arg2: memref<32xi32>)")
    first = text.index("aiex.npu.dma_memcpy_nd (%arg0")
    text = (text[:first] + "%t = aiex.dma_start_bd_chain @send(%arg2, %arg0) : "
            "(memref<32xi32>, memref<64xi32>)\n                  on (%tile_0_0, MM2S, 0)"
            + text[text.index("\n", first):])
    design = read_mlir(text)
    assert design.warnings == []
    # the chain's BDs are numbered around BD 1, which the S2MM transfer names
    chain = next(c for c in design.chains if c.origin == "aiex.dma_start_bd_chain")
    assert [b.bd_id for b in chain.bds] == [0, 2]
    data = list(range(500, 532)) + list(range(32, 64))
    result = run_design(design, {"arg2": data[:32]})
    assert result.hang is None
    assert result.host["arg1"].tolist() == looped_back(data)


def test_a_core_that_branches_back_for_ever_is_one_endless_loop():
    body = """      %c0 = arith.constant 0 : index
      cf.br ^bb1
    ^bb1:  // 2 preds: ^bb0, ^bb1
      aie.use_lock(%l, Release, 2)
      cf.br ^bb1"""
    design = read_mlir(core_in(LOOPBACK, body))
    assert design.warnings == []
    (loop,) = design.cores[0].body
    assert loop.count == FOREVER and [(s.action, s.value) for s in loop.body] == [
        ("release", 2)]


def test_two_flows_from_one_channel_are_refused_as_a_broadcast():
    text = LOOPBACK.replace("    aie.flow(%tile_0_1, DMA : 0, %tile_0_0, DMA : 0)\n",
                            "    aie.flow(%tile_0_1, DMA : 0, %tile_0_0, DMA : 0)\n"
                            "    aie.flow(%tile_0_1, DMA : 0, %tile_0_0, DMA : 1)\n")
    with pytest.raises(MlirError, match=r"^aie.flow at 7:5 and at 6:5: two flows from "
                                        r"tile\(0,1\)'s MM2S 0 \(a broadcast is not run\)$"):
        run_design(read_mlir(text))


WRITEBD_TASK = """aie.device(npu1_1col) {
  %t00 = aie.tile(0, 0)
  %t01 = aie.tile(0, 1)
  aie.flow(%t00, DMA : 0, %t01, DMA : 0)
  aie.shim_dma_allocation @in (%t00, MM2S, 0)
  aie.runtime_sequence(%in: memref<16xi32>) {
    aiex.npu.dma_memcpy_nd(%in[0, 0, 0, 0][1, 1, 1, 16][0, 0, 0, 1]) {id = 0 : i64,
                                                                metadata = @in}
    aiex.npu.writebd {bd_id = 0 : i32, buffer_length = 16 : i32, buffer_offset = 524288 : i32,
      column = 0 : i32, row = 1 : i32, lock_acq_enable = 1 : i32, lock_acq_id = 64 : i32,
      lock_acq_val = 127 : i32, lock_rel_id = 65 : i32, lock_rel_val = 1 : i32,
      valid_bd = 1 : i32}
    aiex.npu.write32 {address = ADDRESS : ui32, column = 0 : i32, row = 1 : i32,
                      value = 0x80000000 : ui32}
    aiex.npu.sync {channel = 0 : i32, column = 0 : i32, column_num = 1 : i32,
                   direction = 0 : i32, row = 1 : i32, row_num = 1 : i32}
  }
}
"""


@pytest.mark.parametrize("address", ["0xA0604", "0x1A0604"])
def test_a_writebd_task_as_mlir_aie_writes_it(address):
    """``lock_acq_val = 127`` is the register's 7 bits of -1; a ``write32`` giving row and
    column may carry the tile's bits in its address too (mlir-aie ORs them in)."""
    design = read_mlir(WRITEBD_TASK.replace("ADDRESS", address))
    assert design.warnings == []
    bd = next(b for b in design.bds if b.origin == "aiex.npu.writebd")
    assert bd.problems == [] and bd.fields["lock_acq_value"] == -1
    (started,) = [c for c in design.chains if c.tile.kind == "memtile"]
    assert (started.direction, started.channel, started.issue_token) == ("s2mm", 0, True)


def test_a_kernels_declaration_is_not_a_runtime_sequence():
    text = LOOPBACK.replace("    aie.shim_dma_allocation @in0", "    func.func private "
                            "@kernel(%A: memref<16xi32>, %n: i32) -> ()\n"
                            "    aie.shim_dma_allocation @in0")
    design = read_mlir(text)
    assert design.warnings == [] and [h.name for h in design.host] == ["arg0", "arg1"]


def test_a_shape_written_with_spaces_reads_as_without():
    text = LOOPBACK.replace('{sym_name = "ping"} : memref<16xi32>',
                            '{sym_name = "ping"} : memref<4 x 4 x i32>').replace(
        "aie.dma_bd(%ping : memref<16xi32> offset = 0 len = 16)",
        "aie.dma_bd(%ping : memref<4 x 4 x i32> offset = 0 len = 16)").replace(
        "aie.dma_bd(%ping : memref<16xi32> offset = 0 len = 16 sizes",
        "aie.dma_bd(%ping : memref<4 x 4 x i32> offset = 0 len = 16 sizes")
    design = read_mlir(text)
    assert design.warnings == []
    assert next(b for b in design.buffers.values() if b.name == "ping").shape == (4, 4)
    assert run_design(design).hang is None


def test_an_unranked_runtime_argument_costs_only_itself():
    text = LOOPBACK.replace("%arg1: memref<64xi32>)", "%arg1: memref<64xi32>, "
                            "%arg2: memref<*xi32>)")
    design = read_mlir(text)
    (warning,) = design.warnings
    assert ("aie.runtime_sequence: not read: runtime argument %arg2: an unranked "
            "'memref <* xi32>' is not read: give its shape") in str(warning)
    assert [h.name for h in design.host] == ["arg0", "arg1"]
    assert run_design(design).hang is None


def test_a_configure_of_the_device_run_is_read_in_place_and_of_another_is_named():
    named = LOOPBACK.replace("aie.device(npu1_1col) {", "aie.device(npu1_1col) @main {")
    start = named.index("      %c0_i64 = arith.constant")
    end = named.index("    }\n    %memtile_dma_0_1")
    text = named[:start] + "      aiex.configure @main {\n" + named[start:end] + "      }\n" \
        + named[end:]
    design = read_mlir(text)
    assert design.warnings == []
    assert run_design(design).written == ["arg1"]
    other = read_mlir(text.replace("aiex.configure @main {", "aiex.configure @other {"))
    (warning,) = other.warnings
    assert ("aiex.configure: not read: it configures device @other, not the one run (a "
            "reconfiguration is not run)") in str(warning)


def test_a_bd_block_shared_by_a_channel_of_the_other_half_is_named():
    text = """aie.device(npu1_1col) {
  %t = aie.tile(0, 1)
  %b = aie.buffer(%t) {address = 0 : i32} : memref<16xi32>
  %m = aie.memtile_dma(%t) {
    %0 = aie.dma_start(MM2S, 0, ^bd0, ^next)
  ^next:
    %1 = aie.dma_start(MM2S, 1, ^bd0, ^end)
  ^bd0:
    aie.dma_bd(%b : memref<16xi32>, 0, 16)
    aie.next_bd ^bd0
  ^end:
    aie.end
  }
}
"""
    (warning,) = read_mlir(text).warnings
    assert str(warning) == ("7:5: aie.dma_start: channel 1 of tile(0,1) runs BDs 24-47 "
                            "(shared by channels 1/3/5 of both directions); BD 0, which "
                            "another channel's chain shares, is not one")


def test_a_channel_with_a_task_and_no_flow_is_refused_by_name():
    text = LOOPBACK.replace("    aie.flow(%tile_0_1, DMA : 0, %tile_0_0, DMA : 0)\n", "")
    with pytest.raises(MlirError, match=r"^channel memtile\(0,1\)\.mm2s0 has a task but no "
                                        r"flow between DMA channels carries its stream "):
        run_design(read_mlir(text))


PING_BD = "aie.dma_bd(%ping : memref<16xi32> offset = 0 len = 16)"
FLOW_IN = "    aie.flow(%tile_0_0, DMA : 0, %tile_0_1, DMA : 0)\n"
PING_LIST = """%0 = aie.dma(S2MM, 0) [{"""


@pytest.mark.parametrize(("old", "new", "message"), [
    (PING_BD, "aie.dma_bd(%ping : memref<16xi32> offset = 0 len)", "len has no value"),
    (PING_BD, "aie.dma_bd(%ping : memref<16xi32> 7 = 0)",
     "expected name = value after the buffer's type"),
    (PING_BD, "aie.dma_bd(%ping : memref<16xi32> len = 16 sizes = [4, 4] strides = [1])",
     "sizes [4, 4] and strides [1] differ in length"),
    (PING_BD, "aie.dma_bd(%ping : memref<16xi32>) {iteration = 4}",
     "iteration must be #aie.bd_iteration<size = .., stride = .., current = ..>"),
    (PING_LIST, "%0 = aie.dma(S2MM, 0) [7, {", "expected [{ BD }, { BD }, ...] after"),
    ('{sym_name = "ping"} : memref<16xi32>', '{sym_name = "ping"} : memref<16xi32> = dense<x>',
     "an initial element must be an integer constant, not 'x'"),
    ('{sym_name = "ping"} : memref<16xi32>', '{sym_name = "ping"} : memref<16xi32> = '
     'dense<1, 2>', "its initial value must be dense<[integers]> or dense<integer>"),
    ("aiex.npu.dma_wait {symbol = @out0}", "aiex.npu.maskwrite32 {buffer = @ping, "
     "address = 1 : ui32, value = 1 : ui32, mask = 1 : ui32}",
     "an address inside a buffer (buffer = @...) is not read; give the tile's address"),
    ("aiex.npu.dma_wait {symbol = @out0}", "aiex.npu.maskwrite32 {column = 0 : i32, "
     "row = 1 : i32, address = 0xA0604 : ui32, value = 1 : ui32, mask = 1 : ui32}",
     "a masked write to a start queue is not read"),
    ("aiex.npu.dma_wait {symbol = @out0}", "%t = aiex.dma_start_bd_chain @none(%arg0) : "
     "(memref<64xi32>) on (%tile_0_0, MM2S, 1)", "@none is not an aie.bd_chain"),
    (PING_LIST, "%0 = aie.dma(S2MM) [{", "aie.dma: not read: expected (direction, channel)"),
    (FLOW_IN, "    %sb = aie.switchbox(%tile_0_0) {\n      aie.connect<South : 3>\n    }\n",
     "aie.connect: expected <bundle : channel, bundle : channel>"),
    (FLOW_IN, "    aie.packet_flow(3) {\n      aie.packet_source<%tile_0_0>\n"
     "      aie.packet_dest<%tile_0_1, DMA : 0>\n    }\n",
     "aie.packet_source: expected <%tile, bundle : channel>"),
])
def test_a_printed_form_that_cannot_be_read_is_a_warning_naming_why(old, new, message):
    assert old in LOOPBACK
    warnings = [str(w) for w in read_mlir(LOOPBACK.replace(old, new, 1)).warnings]
    assert any(message in w for w in warnings), warnings


def test_a_bd_chain_given_the_wrong_number_of_buffers_is_named():
    text = LOOPBACK.replace("    aie.shim_dma_allocation @in0", """\
    aie.bd_chain @send(%a: memref<64xi32>, %b: memref<64xi32>) {
      aie.dma_bd(%a : memref<64xi32>, 0, 64)
      aie.end
    }
    aie.shim_dma_allocation @in0""").replace(
        "aiex.npu.dma_wait {symbol = @out0}", "%t = aiex.dma_start_bd_chain @send(%arg0) : "
        "(memref<64xi32>) on (%tile_0_0, MM2S, 1)")
    assert any("@send takes 2 arguments, not 1" in str(w) for w in read_mlir(text).warnings)


@pytest.mark.parametrize(("back", "message"), [
    ("cf.br ^bb7", "cf.br: block ^bb7 does not exist"),
    # a counter that only grows: no state comes back, so no endless loop is seen
    ("cf.br ^bb1(%1 : index)", "the core runs more than 200000 operations")])
def test_a_core_whose_branches_cannot_be_followed_is_named(back, message):
    body = f"""      %c1 = arith.constant 1 : index
      cf.br ^bb1(%c1 : index)
    ^bb1(%0: index):
      %1 = arith.addi %0, %c1 : index
      aie.use_lock(%l, Release, 1)
      {back}"""
    (warning,) = read_mlir(core_in(LOOPBACK, body)).warnings
    assert f"aie.core: not read: {message}" in str(warning)


def test_an_iteration_stride_of_part_of_a_word_is_a_problem_naming_it():
    text = LOOPBACK.replace("memref<16xi32> offset = 0 len = 16)",
                            "memref<16xi32> offset = 0 len = 16) "
                            "{iteration = #aie.bd_iteration<size = 2, stride = 3>}", 1)
    design = read_mlir(text.replace("memref<16xi32>", "memref<64xi8>"))
    bd = next(b for b in design.bds if b.fields.get("iteration_wrap") == 2)
    assert ("iteration.stride=3: the iteration stride of 3 x 8-bit elements is 24 bits, not "
            "a whole number of 32-bit words") in [str(p) for p in bd.problems]
