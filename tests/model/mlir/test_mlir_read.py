"""mlir-aie files read into BDs: every expected stream and field worked out by hand here.

The example files (examples/mlir/) are written for this project in the shapes
mlir-aie's own tests use; each test says what the hardware must do with them.
"""

from pathlib import Path

import numpy as np
import pytest

from aiedma.model import BufferDescriptor, Task
from aiedma.model.bd.task import task_stream
from aiedma.model.mlir import read_mlir

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "mlir"
OWN = 0x20000   # a memory tile's own memory starts at word 0x20000 (docs/bd.md)


def design(name: str):
    read = read_mlir((EXAMPLES / name).read_text())
    assert read.warnings == [], [str(w) for w in read.warnings]
    return read


def bd_of(read, column: int, row: int, bd_id: int):
    (found,) = [b for b in read.bds if (b.tile.column, b.tile.row, b.bd_id)
                == (column, row, bd_id)]
    assert found.problems == [], [str(p) for p in found.problems]
    return found


def elements(design_bd) -> list[int]:
    words = design_bd.bd.stream()
    return np.where(words < 0, -1, words - design_bd.buffer_word).tolist()


# --- the chain shim -> memory tile -> core tile -----------------------------------------

def test_tiles_take_their_kind_from_the_row():
    read = design("passthrough.mlir")
    assert read.device == "npu1_1col"
    assert {name: t.kind for name, t in read.tiles.items()} == {
        "tile_0_0": "shim", "tile_0_1": "memtile", "tile_0_2": "tile"}


def test_buffers_and_locks_are_read_with_address_type_and_init():
    read = design("passthrough.mlir")
    ping = read.buffers["in_ping"]
    assert (ping.address, ping.element, ping.shape, ping.bits) == (1024, "i32", (32,), 32)
    assert {lock.name: (lock.id, lock.init) for lock in read.locks.values()} == {
        "mem_prod": (0, 1), "mem_cons": (1, 0), "in_prod": (0, 2), "in_cons": (1, 0)}


def test_memtile_s2mm_chain_is_one_bd_looping_on_itself_with_own_locks():
    read = design("passthrough.mlir")
    s2mm = bd_of(read, 0, 1, 0)
    # own memory from word 0x20000; own locks from ID 64; AcquireGreaterEqual 1 -> -1
    assert s2mm.bd == BufferDescriptor(
        "memtile", base_address=OWN, buffer_length=64, valid_bd=1, use_next_bd=1,
        next_bd=0, lock_acq_enable=1, lock_acq_id=64, lock_acq_value=-1,
        lock_rel_id=65, lock_rel_value=1)
    (chain,) = [c for c in read.chains if c.tile.kind == "memtile" and c.direction == "s2mm"]
    assert (chain.channel, [b.bd_id for b in chain.bds], chain.loops) == (0, [0], True)


def test_memtile_mm2s_reads_the_8x8_block_column_by_column():
    read = design("passthrough.mlir")
    mm2s = bd_of(read, 0, 1, 1)
    # [<size = 8, stride = 1>, <size = 8, stride = 8>]: inner 8 elements 8 apart
    assert (mm2s.bd.d0_wrap, mm2s.bd.d0_stepsize, mm2s.bd.d1_wrap, mm2s.bd.d1_stepsize) == (
        8, 8, 8, 1)
    assert elements(mm2s) == [column + 8 * row for column in range(8) for row in range(8)]


def test_core_tile_ping_pong_alternates_two_buffers():
    read = design("passthrough.mlir")
    ping, pong = bd_of(read, 0, 2, 0), bd_of(read, 0, 2, 1)
    assert (ping.bd.base_address, pong.bd.base_address) == (1024 // 4, 1152 // 4)
    assert (ping.bd.next_bd, ping.bd.use_next_bd, pong.bd.next_bd, pong.bd.use_next_bd) == (
        1, 1, 0, 1)
    assert ping.bd.lock_acq_id == pong.bd.lock_acq_id == 0      # in_prod, init 2
    assert ping.bd.lock_rel_id == pong.bd.lock_rel_id == 1      # in_cons
    assert elements(ping) == elements(pong) == list(range(32))


def test_dma_memcpy_nd_outermost_dimension_is_repeat_and_iteration():
    read = design("passthrough.mlir")
    shim = bd_of(read, 0, 0, 1)
    # [2, 1, 1, 32][32, 0, 0, 1]: 32 words a pass, twice, the second 32 words on
    assert shim.bd == BufferDescriptor("shim", buffer_length=32, iteration_wrap=2,
                                       iteration_stepsize=32, valid_bd=1)
    (chain,) = [c for c in read.chains if c.tile.kind == "shim"]
    assert (chain.direction, chain.channel, chain.repeat, chain.issue_token) == (
        "mm2s", 0, 2, True)
    words, _ = task_stream("shim", {1: shim.bd}, Task(1, chain.repeat))
    assert words.tolist() == list(range(64))


# --- padding on a memory tile ---------------------------------------------------------

def test_keyword_dma_bd_pads_the_8bit_image_as_the_hardware_test():
    read = design("padding.mlir")
    image = bd_of(read, 0, 1, 0)
    assert image.bd.fields(include_defaults=False) == {
        "buffer_length": 1024, "base_address": OWN, "d0_wrap": 14, "d1_wrap": 61,
        "d1_stepsize": 14, "d0_zero_before": 1, "d0_zero_after": 1, "d1_zero_before": 2,
        "d1_zero_after": 1, "valid_bd": 1}
    rows = np.asarray(elements(image)).reshape(64, 16)   # 16 words a padded row
    zero_rows = [r for r in range(64) if (rows[r] == -1).all()]
    assert zero_rows == [0, 1, 63]
    data = rows[2:63]
    assert (data[:, 0] == -1).all() and (data[:, 15] == -1).all()
    assert data[:, 1:15].ravel().tolist() == list(range(854))   # words 0..853 in order


def test_positional_dma_bd_pads_13_words_two_before_one_after():
    read = design("padding.mlir")
    row = bd_of(read, 0, 1, 24)
    assert elements(row) == [-1, -1, *range(13), -1]
    assert row.bd.base_address == OWN + 4096 // 4
    (chain,) = [c for c in read.chains if c.bds[0] is row]
    assert chain.channel == 1          # channel 1 runs BDs 24-47


# --- the runtime sequence: a task, writebd, address_patch, write32, blockwrite ----------

def test_writebd_and_dma_bd_of_one_transfer_give_the_same_register_words():
    read = design("runtime.mlir")
    task, written, blocked = (bd_of(read, 0, 0, n) for n in (0, 1, 2))
    assert task.bd.encode() == written.bd.encode() == blocked.bd.encode()
    assert task.bd.fields(include_defaults=False) == {
        "buffer_length": 64, "d0_wrap": 4, "d1_wrap": 4, "d1_stepsize": 4,
        "d2_stepsize": 64, "valid_bd": 1}
    assert written.buffer is read.host[0]        # the address patch names argument 0
    assert written.origin == "aiex.npu.writebd + address_patch"


def test_write32_to_the_start_queue_starts_the_written_bd():
    read = design("runtime.mlir")
    queued = [c for c in read.chains if c.origin == "aiex.npu.write32"]
    assert [(c.direction, c.channel, c.bds[0].bd_id, c.repeat, c.issue_token)
            for c in queued] == [("mm2s", 0, 1, 1, True)]


def test_task_form_runs_its_bd_with_token():
    read = design("runtime.mlir")
    (task,) = [c for c in read.chains if c.origin == "aiex.dma_configure_task"]
    assert (task.tile.kind, task.direction, task.issue_token, task.repeat) == (
        "shim", "mm2s", True, 1)
    rows = [plane * 64 + row * 4 for plane in range(4) for row in range(4)]
    assert elements(task.bds[0]) == [r + k for r in rows for k in range(4)]


def test_writebd_on_a_memtile_subtracts_one_from_steps_and_iteration():
    registers = {"bd_id": 30, "buffer_length": 12, "buffer_offset": 8, "column": 3, "row": 2,
                 "d0_size": 3, "d0_stride": 1, "d1_size": 4, "d1_stride": 9, "d2_size": 0,
                 "d2_stride": 0, "iteration_current": 0, "iteration_size": 2,
                 "iteration_stride": 99, "lock_acq_enable": 1, "lock_acq_id": 65,
                 "lock_acq_val": -1, "lock_rel_id": 66, "lock_rel_val": 1,
                 "d0_zero_before": 1, "valid_bd": 1}
    attributes = ", ".join(f"{name} = {value} : i32" for name, value in registers.items())
    text = ("aie.device(xcve2802) {\n  aiex.runtime_sequence(%a: memref<8xi32>) {\n"
            f"    aiex.npu.writebd {{{attributes}}}\n  }}\n}}\n")
    read = read_mlir(text)
    (written,) = read.bds
    assert written.tile.kind == "memtile"           # row 2 of xcve2802 is a memory tile
    assert written.bd.fields(include_defaults=False) == {
        "buffer_length": 12, "base_address": 2, "d0_wrap": 3, "d0_stepsize": 2,
        "d1_wrap": 4, "d1_stepsize": 10, "iteration_wrap": 3, "iteration_stepsize": 100,
        "lock_acq_enable": 1, "lock_acq_id": 65, "lock_acq_value": -1, "lock_rel_id": 66,
        "lock_rel_value": 1, "d0_zero_before": 1, "valid_bd": 1}


def test_writebd_with_iteration_current_past_its_wrap_is_read_with_a_warning():
    # mlir-aie's dma_to_npu_core_tile.mlir writes current 42 with a wrap of 29 (size 29)
    registers = {"bd_id": 3, "buffer_length": 8, "buffer_offset": 0, "column": 0, "row": 2,
                 "d0_size": 0, "d0_stride": 0, "d1_size": 0, "d1_stride": 0, "d2_stride": 0,
                 "iteration_current": 42, "iteration_size": 28, "iteration_stride": 0,
                 "valid_bd": 1}
    attributes = ", ".join(f"{name} = {value} : i32" for name, value in registers.items())
    text = ("aie.device(npu1_1col) {\n  aiex.runtime_sequence(%a: memref<8xi32>) {\n"
            f"    aiex.npu.writebd {{{attributes}}}\n  }}\n}}\n")
    read = read_mlir(text)
    (written,) = read.bds
    assert (written.bd.iteration_current, written.bd.iteration_wrap) == (42, 29)
    assert not written.problems
    (warning,) = [w for w in read.warnings if "iteration_current" in w.message]
    assert warning.line == 3 and "BD 3: iteration_current=42: not below" in warning.message


# --- each construct read on its own ---------------------------------------------------------

BROKEN_LINE = """module {
  aie.device(npu1_1col) {
    %t = aie.tile(0, 2)
    %b = aie.buffer(%t) {address = 0 : i32} : memref<16xi32>
    %l = aie.lock(%t, 3) {init = 1 : i32}
    %m = aie.mem(%t) {
      %0 = aie.dma_start(MM2S, 0, ^bb1, ^bb3)
    ^bb1:
      aie.use_lock(%l, Acquire, 1)
      aie.dma_bd(%b : memref<16xi32>, 0, 16) ) oops
      aie.next_bd ^bb3
    ^bb3:
      aie.end
    }
    %x = aie.lock(%t, ) {init = 0 : i32}
    %m2 = aie.mem(%t) {
      %0 = aie.dma_start(S2MM, 1, ^bb1, ^bb3)
    ^bb1:
      aie.use_lock(%l, Acquire, 1)
      aie.dma_bd(%b : memref<16xi32>, 4, 8)
      aie.use_lock(%l, Release, 2)
      aie.next_bd ^bb3
    ^bb3:
      aie.end
    }
  }
}
"""


def test_a_construct_that_cannot_be_read_is_a_line_column_warning_and_the_rest_reads():
    read = read_mlir(BROKEN_LINE)
    where = [(w.line, w.column) for w in read.warnings]
    # the column of the stray ')' in each line
    assert where == [(10, 46), (15, 23)], [str(w) for w in read.warnings]
    assert str(read.warnings[0]) == ("10:46: not read: cannot read ')' in "
                                     "'aie.dma_bd(%b : memref<16xi32>, 0, 16) ) oops'")
    (bd,) = read.bds
    # Acquire 1 (equal) keeps the value positive; offset 4 words, 8 words long
    assert bd.bd == BufferDescriptor("tile", base_address=4, buffer_length=8, valid_bd=1,
                                     lock_acq_enable=1, lock_acq_id=3, lock_acq_value=1,
                                     lock_rel_id=3, lock_rel_value=2)
    assert bd.direction == "s2mm"


def test_a_file_with_no_device_reads_nothing_and_says_so():
    read = read_mlir("func.func @f() {\n  return\n}\n")
    assert read.bds == [] and "no aie.device" in str(read.warnings[0])


@pytest.mark.parametrize("name", sorted(p.name for p in EXAMPLES.glob("*.mlir")))
def test_every_example_reads_without_warnings(name):
    assert design(name).bds


def test_packet_and_next_bd_id_attributes_and_the_dma_bd_packet_op():
    text = """aie.device(npu1_1col) {
      %t = aie.tile(0, 2)
      %b = aie.buffer(%t) {address = 0 : i32} : memref<16xi32>
      %m = aie.mem(%t) {
        %0 = aie.dma_start(MM2S, 1, ^bb1, ^bb3, repeat_count = 3)
      ^bb1:
        aie.dma_bd(%b : memref<16xi32>, 0, 8) {bd_id = 4 : i32, next_bd_id = 9 : i32,
                   packet = #aie.packet_info<pkt_type = 2, pkt_id = 7>}
        aie.end
      ^bb2:
        aie.dma_bd_packet(5, 3)
        aie.dma_bd(%b : memref<16xi32>, 8, 8) {bd_id = 9 : i32}
        aie.end
      ^bb3:
        aie.end
      }
    }"""
    read = read_mlir(text)
    assert read.warnings == []
    first = bd_of(read, 0, 2, 4)
    assert (first.bd.use_next_bd, first.bd.next_bd) == (1, 9)
    assert (first.bd.enable_packet, first.bd.packet_type, first.bd.packet_id) == (1, 2, 7)
    (chain,) = read.chains
    assert (chain.direction, chain.channel, chain.repeat) == ("mm2s", 1, 4)   # stored minus one
    assert [b.bd_id for b in chain.bds] == [4, 9]     # next_bd_id = 9 leads to ^bb2's BD
    second = bd_of(read, 0, 2, 9)
    assert second.bd.base_address == 8 and second.bd.use_next_bd == 0
    assert (second.bd.enable_packet, second.bd.packet_type, second.bd.packet_id) == (1, 5, 3)
