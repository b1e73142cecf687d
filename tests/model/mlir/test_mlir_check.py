"""Each hardware rule an mlir-aie BD can break is reported, naming the rule and the field."""

import pytest

from aiedma.model.mlir import Access, access_fields, read_mlir, writebd_fields


def one_bd(kind_row: int, buffer: str, bd: str, direction: str = "MM2S", channel: int = 0,
           device: str = "npu1_1col"):
    """A device with one BD on the tile in row ``kind_row`` (1: memory tile, 2: core)."""
    region = "aie.memtile_dma" if kind_row == 1 else "aie.mem"
    text = f"""aie.device({device}) {{
      %t = aie.tile(0, {kind_row})
      %b = aie.buffer(%t) {{address = 0 : i32}} : {buffer}
      %m = {region}(%t) {{
        %0 = aie.dma_start({direction}, {channel}, ^bb1, ^bb2)
      ^bb1:
        {bd}
        aie.end
      ^bb2:
        aie.end
      }}
    }}"""
    read = read_mlir(text)
    assert read.warnings == [], [str(w) for w in read.warnings]
    (found,) = read.bds
    return found


def messages(found) -> list[str]:
    return [str(p) for p in found.problems]


def test_a_wrap_over_its_10_bit_field_names_d0_wrap():
    # (rows that overlap: a contiguous access would be written linear, with no wrap)
    found = one_bd(1, "memref<4096xi32>", "aie.dma_bd(%b : memref<4096xi32>, 0, 4096, "
                   "[<size = 2, stride = 2040>, <size = 2048, stride = 1>])")
    assert found.bd is None
    assert messages(found) == ["d0_wrap=2048: must be in 0..1023 in a memtile BD "
                               "(10-bit plain)"]


def test_a_core_tile_wrap_over_8_bits_and_a_step_over_13_bits_are_both_named():
    found = one_bd(2, "memref<8192xi32>", "aie.dma_bd(%b : memref<8192xi32>, 0, 600, "
                   "[<size = 2, stride = 9000>, <size = 300, stride = 1>])")
    assert messages(found) == [
        "d1_stepsize=9000: must be in 1..8192 in a tile BD (13-bit minus one)",
        "d0_wrap=300: must be in 0..255 in a tile BD (8-bit plain)"]


def test_a_non_unit_innermost_stride_of_8bit_data_is_refused():
    found = one_bd(2, "memref<64xi8>", "aie.dma_bd(%b : memref<64xi8>, 0, 32, "
                   "[<size = 4, stride = 16>, <size = 8, stride = 2>])")
    assert found.bd is None
    (message,) = messages(found)
    assert message.startswith("strides[1]=2: the innermost stride of 8-bit elements must "
                              "be 1: the DMA moves whole 32-bit words")


def test_padding_that_is_not_whole_words_names_the_pad():
    found = one_bd(1, "memref<64xi8>", "aie.dma_bd(%b : memref<64xi8>, 0, 20, "
                   "[<size = 16, stride = 1>], [<const_pad_before = 2, const_pad_after = 2>])")
    assert messages(found) == [
        "pads[0].const_pad_before=2: innermost padding of 2 x 8-bit elements is 16 bits, "
        "not a whole number of 32-bit words",
        "pads[0].const_pad_after=2: innermost padding of 2 x 8-bit elements is 16 bits, "
        "not a whole number of 32-bit words"]


@pytest.mark.parametrize(("row", "direction", "where"), [
    (2, "MM2S", "tile MM2S"), (1, "S2MM", "memtile S2MM")])
def test_padding_outside_a_memory_tile_mm2s_is_refused(row, direction, where):
    found = one_bd(row, "memref<16xi32>", "aie.dma_bd(%b : memref<16xi32>, 0, 16, "
                   "[<size = 13, stride = 1>], [<const_pad_before = 2, const_pad_after = 1>])",
                   direction=direction)
    assert messages(found) == [
        f"pads=[[2, 1]]: zero padding exists only on a memory tile's MM2S channels, not on "
        f"a {where} channel"]


def test_a_bd_outside_its_channels_half_of_the_memory_tile_table_is_named():
    found = one_bd(1, "memref<16xi32>", "aie.dma_bd(%b : memref<16xi32>, 0, 16) "
                   "{bd_id = 30 : i32}", channel=0)
    assert messages(found) == ["bd_id=30: channel 0 runs BDs 0-23 (shared by channels 0/2/4 "
                               "of both directions)"]


def chain_of(count: int, row: int, channel: int = 0) -> str:
    region = "aie.memtile_dma" if row == 1 else "aie.mem"
    blocks = "\n".join(f"""      ^bb{k}:
        aie.dma_bd(%b : memref<16xi32>, 0, 16)
        aie.next_bd ^bb{k + 1}""" for k in range(1, count + 1))
    return f"""aie.device(npu1_1col) {{
      %t = aie.tile(0, {row})
      %b = aie.buffer(%t) {{address = 0 : i32}} : memref<16xi32>
      %m = {region}(%t) {{
        %0 = aie.dma_start(MM2S, {channel}, ^bb1, ^bb0)
{blocks}
      ^bb{count + 1}:
        aie.end
      ^bb0:
        aie.end
      }}
    }}"""


def test_more_bds_than_the_memory_tile_channels_half_is_reported_at_the_25th():
    read = read_mlir(chain_of(25, 1, channel=1))
    assert [b.bd_id for b in read.bds[:24]] == list(range(24, 48))
    assert all(not b.problems for b in read.bds[:23])
    # BD 47 chains on to the 25th BD, which has no number in the table
    assert messages(read.bds[23]) == ["next_bd=48: must be in 0..47 in a memtile BD (6-bit "
                                      "plain); the memory tile has 48 BDs"]
    (message,) = messages(read.bds[24])
    assert message.startswith("bd_id=48: channel 1 of tile(0,1) has no free BD: it has 24, "
                              "BDs 24-47 (shared by channels 1/3/5 of both directions)")


def test_more_bds_than_a_core_tile_has_is_reported_at_the_17th():
    read = read_mlir(chain_of(17, 2))
    assert [bool(b.problems) for b in read.bds] == [False] * 15 + [True, True]
    assert messages(read.bds[15])[0].startswith("next_bd=16: must be in 0..15")
    (message,) = messages(read.bds[16])
    assert message.startswith("bd_id=16: channel 0 of tile(0,2) has no "
                                                "free BD: it has 16, BDs 0-15")


def test_more_dimensions_than_the_dma_has():
    out = access_fields("tile", 32, 0, Access(0, 16, (1, 2, 2, 2, 2), (0, 8, 4, 2, 1)), "mm2s")
    assert [str(p) for p in out.problems] == [
        "sizes=[1, 2, 2, 2, 2]: a tile BD has 3 address dimensions and an iteration; 5 "
        "dimensions cannot be one BD"]


def test_a_size_that_is_not_whole_words():
    out = access_fields("memtile", 16, 0, Access(1, 3), "mm2s")
    assert [str(p).split(":")[0] for p in out.problems] == ["offset=1", "len=3"]


def test_a_shim_step_over_20_bits_names_d1_stepsize():
    text = """aie.device(npu1_1col) {
      %s = aie.tile(0, 0)
      aie.shim_dma_allocation @in(MM2S, 0, 0)
      aiex.runtime_sequence(%a: memref<4194304xi32>) {
        aiex.npu.dma_memcpy_nd(%a[0, 0, 0, 0][1, 1, 2, 4][0, 0, 1048577, 1])
            {id = 0 : i64, metadata = @in} : memref<4194304xi32>
      }
    }"""
    (found,) = read_mlir(text).bds
    assert [m.split(":")[0] for m in messages(found)] == ["d1_stepsize=1048577"]


def test_a_lock_of_another_tile_is_named():
    text = """aie.device(npu1_1col) {
      %t = aie.tile(0, 2)
      %u = aie.tile(0, 3)
      %b = aie.buffer(%t) {address = 0 : i32} : memref<16xi32>
      %l = aie.lock(%u, 0) {init = 1 : i32}
      %m = aie.mem(%t) {
        %0 = aie.dma_start(MM2S, 0, ^bb1, ^bb2)
      ^bb1:
        aie.use_lock(%l, AcquireGreaterEqual, 1)
        aie.dma_bd(%b : memref<16xi32>, 0, 16)
        aie.end
      ^bb2:
        aie.end
      }
    }"""
    (found,) = read_mlir(text).bds
    assert messages(found) == ["lock_acq_id=0: lock %l is on tile(0,3); a tile DMA uses its "
                               "own tile's locks"]


def test_writebd_of_a_field_the_kind_lacks_is_named():
    out = writebd_fields("tile", {"buffer_length": 4, "d2_size": 3, "bogus": 1})
    assert [str(p) for p in out.problems] == ["bogus=1: not an attribute of aiex.npu.writebd"]
    assert out.fields["d2_wrap"] == 3          # kept, so the BD's constructor names it


def test_a_memtile_d3_jump_is_not_taken_for_a_linear_transfer():
    # d3 (no wrap field) of size 2 and stride 1000 after 4 contiguous words
    out = access_fields("memtile", 32, 0, Access(0, 8, (2, 1, 1, 4), (1000, 0, 0, 1)), "mm2s")
    assert out.problems == []
    assert out.fields == {"base_address": 0, "buffer_length": 8, "d0_wrap": 4,
                          "d0_stepsize": 1, "d1_wrap": 1, "d2_wrap": 1, "d3_stepsize": 1000}


def test_a_linear_transfer_has_no_wraps():
    out = access_fields("shim", 32, 5, Access(3, 64, (1, 1, 1, 64), (0, 0, 0, 1)), "mm2s")
    assert out.fields == {"base_address": 8, "buffer_length": 64}


@pytest.mark.parametrize("access", [
    "[<size = 2, stride = 2048>, <size = 2048, stride = 1>]",
    "[<size = 4, stride = 1024>, <size = 2, stride = 512>, <size = 512, stride = 1>]",
    "[<size = 1, stride = 0>, <size = 4096, stride = 1>]"])
def test_a_contiguous_access_is_linear_whatever_its_sizes(access):
    """mlir-aie writes a transfer whose dimensions each step over the ones inside as a
    linear BD, so a 2048-word row is no wrap over 10 bits."""
    found = one_bd(1, "memref<4096xi32>", f"aie.dma_bd(%b : memref<4096xi32>, 0, 4096, "
                                          f"{access})")
    assert found.problems == []
    assert found.bd.buffer_length == 4096
    assert not any(found.fields.get(f"d{k}_wrap") for k in range(3))
