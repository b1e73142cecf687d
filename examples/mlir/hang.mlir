// loopback.mlir with one line missing: the memory tile's S2MM BD never releases the
// lock `full`, so its MM2S channel waits for ever and the host's output never comes.
// aiedma run names every waiting channel, its BD, the lock, its value and what it wants.
module {
  aie.device(npu1_1col) {
    %tile_0_0 = aie.tile(0, 0)
    %tile_0_1 = aie.tile(0, 1)
    %block = aie.buffer(%tile_0_1) {address = 0 : i32, sym_name = "block"} : memref<64xi32>
    %empty = aie.lock(%tile_0_1, 0) {init = 1 : i32, sym_name = "empty"}
    %full = aie.lock(%tile_0_1, 1) {init = 0 : i32, sym_name = "full"}
    aie.flow(%tile_0_0, DMA : 0, %tile_0_1, DMA : 0)
    aie.flow(%tile_0_1, DMA : 0, %tile_0_0, DMA : 0)
    %memtile_dma_0_1 = aie.memtile_dma(%tile_0_1) {
      %0 = aie.dma_start(S2MM, 0, ^bb1, ^bb2)
    ^bb1:  // 2 preds: ^bb0, ^bb1
      aie.use_lock(%empty, AcquireGreaterEqual, 1)
      aie.dma_bd(%block : memref<64xi32>, 0, 64)
      aie.next_bd ^bb1
    ^bb2:  // pred: ^bb0
      %1 = aie.dma_start(MM2S, 0, ^bb3, ^bb4)
    ^bb3:  // 2 preds: ^bb2, ^bb3
      aie.use_lock(%full, AcquireGreaterEqual, 1)
      aie.dma_bd(%block : memref<64xi32>, 0, 64, [<size = 8, stride = 1>, <size = 8, stride = 8>])
      aie.use_lock(%empty, Release, 1)
      aie.next_bd ^bb3
    ^bb4:  // pred: ^bb2
      aie.end
    }
    aie.shim_dma_allocation @in0(MM2S, 0, 0)
    aie.shim_dma_allocation @out0(S2MM, 0, 0)
    aiex.runtime_sequence(%in: memref<64xi32>, %out: memref<64xi32>) {
      aiex.npu.dma_memcpy_nd(%in[0, 0, 0, 0][1, 1, 1, 64][0, 0, 0, 1]) {id = 1 : i64, metadata = @in0} : memref<64xi32>
      aiex.npu.dma_memcpy_nd(%out[0, 0, 0, 0][1, 1, 1, 64][0, 0, 0, 1]) {id = 0 : i64, metadata = @out0, issue_token = true} : memref<64xi32>
      aiex.npu.dma_wait {symbol = @out0}
    }
  }
}
