// The same shim transfer three ways, written for aiedma: an aie.dma_bd in a task
// (BD 0), the register values mlir-aie lowers it to in aiex.npu.writebd (BD 1, its
// host address patched in and its task pushed by write32), and the raw words of a
// block write (BD 2). A 4x4x4 block of a 256-element buffer: rows of 4, 4 rows 4 apart,
// 4 planes 64 apart.
module {
  aie.device(npu1_1col) {
    %tile_0_0 = aie.tile(0, 0)
    memref.global "private" constant @bd2_words : memref<8xi32> = dense<[64, 0, 0, 4194304, 4194307, 63, 0, 33554432]>
    aiex.runtime_sequence(%arg0: memref<256xi32>) {
      %t0 = aiex.dma_configure_task(%tile_0_0, MM2S, 0) {
        aie.dma_bd(%arg0 : memref<256xi32>, 0, 64, [<size = 4, stride = 64>, <size = 4, stride = 4>, <size = 4, stride = 1>]) {bd_id = 0 : i32}
        aie.end
      } {issue_token = true}
      aiex.dma_start_task(%t0)
      aiex.dma_await_task(%t0)
      aiex.npu.writebd {bd_id = 1 : i32, buffer_length = 64 : i32, buffer_offset = 0 : i32, column = 0 : i32, row = 0 : i32, d0_size = 4 : i32, d0_stride = 0 : i32, d1_size = 4 : i32, d1_stride = 3 : i32, d2_size = 0 : i32, d2_stride = 63 : i32, enable_packet = 0 : i32, iteration_current = 0 : i32, iteration_size = 0 : i32, iteration_stride = 0 : i32, lock_acq_enable = 0 : i32, lock_acq_id = 0 : i32, lock_acq_val = 0 : i32, lock_rel_id = 0 : i32, lock_rel_val = 0 : i32, next_bd = 0 : i32, out_of_order_id = 0 : i32, packet_id = 0 : i32, packet_type = 0 : i32, use_next_bd = 0 : i32, valid_bd = 1 : i32}
      aiex.npu.address_patch {addr = 118820 : ui32, arg_idx = 0 : i32, arg_plus = 0 : i32}
      aiex.npu.write32 {address = 119316 : ui32, value = 2147483649 : ui32}
      aiex.npu.sync {channel = 0 : i32, column = 0 : i32, column_num = 1 : i32, direction = 1 : i32, row = 0 : i32, row_num = 1 : i32}
      %0 = memref.get_global @bd2_words : memref<8xi32>
      aiex.npu.blockwrite(%0) {address = 118848 : ui32} : memref<8xi32>
    }
  }
}
