// A loopback through a memory tile, written as today's mlir-aie passes leave a design
// (aie-opt --aie-objectFifo-stateful-transform and its runtime sequence): the memory
// tile's ping-pong buffers, locks and two channels' BD lists (aie.dma) inside
// aie.memtile_dma, BDs in the printed keyword form, the runtime sequence's operands as
// arith.constant values. The memory tile turns every ping block of 4x4 words column by
// column and sends every pong block as it came: aiedma run examples/mlir/pingpong.mlir
module {
  aie.device(npu1_1col) {
    %tile_0_0 = aie.tile(0, 0)
    %tile_0_1 = aie.tile(0, 1)
    aie.flow(%tile_0_0, DMA : 0, %tile_0_1, DMA : 0)
    aie.flow(%tile_0_1, DMA : 0, %tile_0_0, DMA : 0)
    aie.shim_dma_allocation @in0 (%tile_0_0, MM2S, 0)
    aie.shim_dma_allocation @out0 (%tile_0_0, S2MM, 0)
    aie.runtime_sequence(%arg0: memref<64xi32>, %arg1: memref<64xi32>) {
      %c0_i64 = arith.constant 0 : i64
      %c1_i64 = arith.constant 1 : i64
      %c64_i64 = arith.constant 64 : i64
      aiex.npu.dma_memcpy_nd (%arg0[%c0_i64, %c0_i64, %c0_i64, %c0_i64][%c1_i64, %c1_i64, %c1_i64, %c64_i64][%c0_i64, %c0_i64, %c0_i64, %c1_i64]) {id = 0 : i64, metadata = @in0} : memref<64xi32>
      aiex.npu.dma_memcpy_nd (%arg1[%c0_i64, %c0_i64, %c0_i64, %c0_i64][%c1_i64, %c1_i64, %c1_i64, %c64_i64][%c0_i64, %c0_i64, %c0_i64, %c1_i64]) {id = 1 : i64, metadata = @out0,
                                                issue_token = true} : memref<64xi32>
      aiex.npu.dma_wait {symbol = @out0}
    }
    %memtile_dma_0_1 = aie.memtile_dma(%tile_0_1) {
      %ping = aie.buffer(%tile_0_1) {sym_name = "ping"} : memref<16xi32>
      %pong = aie.buffer(%tile_0_1) {sym_name = "pong"} : memref<16xi32>
      %prod = aie.lock(%tile_0_1, 0) {init = 2 : i32, sym_name = "prod"}
      %cons = aie.lock(%tile_0_1, 1) {init = 0 : i32, sym_name = "cons"}
      %0 = aie.dma(S2MM, 0) [{
        %c1_i32 = arith.constant 1 : i32
        aie.use_lock(%prod, AcquireGreaterEqual, %c1_i32)
        aie.dma_bd(%ping : memref<16xi32> offset = 0 len = 16)
        aie.use_lock(%cons, Release, %c1_i32)
      }, {
        aie.use_lock(%prod, AcquireGreaterEqual, 1)
        aie.dma_bd(%pong : memref<16xi32>)
        aie.use_lock(%cons, Release, 1)
      }]
      %1 = aie.dma(MM2S, 0) [{
        aie.use_lock(%cons, AcquireGreaterEqual, 1)
        aie.dma_bd(%ping : memref<16xi32> offset = 0 len = 16 sizes = [4, 4] strides = [1, 4])
        aie.use_lock(%prod, Release, 1)
      }, {
        aie.use_lock(%cons, AcquireGreaterEqual, 1)
        aie.dma_bd(%pong : memref<16xi32>)
        aie.use_lock(%prod, Release, 1)
      }]
      aie.end
    }
  }
}
