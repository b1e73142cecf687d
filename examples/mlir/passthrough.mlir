// A shim -> memory tile -> core tile chain, written for aiedma in the shapes of
// mlir-aie's own tests: the memory tile turns an 8x8 block column by column, the
// core tile receives into two buffers in turn (ping-pong locks), and the runtime
// sequence sends 64 words as two repeats of 32 (the outermost dimension).
module {
  aie.device(npu1_1col) {
    %tile_0_0 = aie.tile(0, 0)
    %tile_0_1 = aie.tile(0, 1)
    %tile_0_2 = aie.tile(0, 2)
    %mem_buff = aie.buffer(%tile_0_1) {address = 0 : i32, sym_name = "mem_buff"} : memref<64xi32>
    %in_ping = aie.buffer(%tile_0_2) {address = 1024 : i32, sym_name = "in_ping"} : memref<32xi32>
    %in_pong = aie.buffer(%tile_0_2) {address = 1152 : i32, sym_name = "in_pong"} : memref<32xi32>
    %out_buff = aie.buffer(%tile_0_2) {address = 1280 : i32, sym_name = "out_buff"} : memref<32xi32>
    %mem_prod = aie.lock(%tile_0_1, 0) {init = 1 : i32, sym_name = "mem_prod"}
    %mem_cons = aie.lock(%tile_0_1, 1) {init = 0 : i32, sym_name = "mem_cons"}
    %in_prod = aie.lock(%tile_0_2, 0) {init = 2 : i32, sym_name = "in_prod"}
    %in_cons = aie.lock(%tile_0_2, 1) {init = 0 : i32, sym_name = "in_cons"}
    aie.flow(%tile_0_0, DMA : 0, %tile_0_1, DMA : 0)
    aie.flow(%tile_0_1, DMA : 0, %tile_0_2, DMA : 0)
    %memtile_dma_0_1 = aie.memtile_dma(%tile_0_1) {
      %0 = aie.dma_start(S2MM, 0, ^bb1, ^bb2)
    ^bb1:  // 2 preds: ^bb0, ^bb1
      aie.use_lock(%mem_prod, AcquireGreaterEqual, 1)
      aie.dma_bd(%mem_buff : memref<64xi32>, 0, 64)
      aie.use_lock(%mem_cons, Release, 1)
      aie.next_bd ^bb1
    ^bb2:  // pred: ^bb0
      %1 = aie.dma_start(MM2S, 0, ^bb3, ^bb4)
    ^bb3:  // 2 preds: ^bb2, ^bb3
      aie.use_lock(%mem_cons, AcquireGreaterEqual, 1)
      aie.dma_bd(%mem_buff : memref<64xi32>, 0, 64, [<size = 8, stride = 1>, <size = 8, stride = 8>])
      aie.use_lock(%mem_prod, Release, 1)
      aie.next_bd ^bb3
    ^bb4:  // pred: ^bb2
      aie.end
    }
    %mem_0_2 = aie.mem(%tile_0_2) {
      %0 = aie.dma_start(S2MM, 0, ^bb1, ^bb3)
    ^bb1:  // 2 preds: ^bb0, ^bb2
      aie.use_lock(%in_prod, AcquireGreaterEqual, 1)
      aie.dma_bd(%in_ping : memref<32xi32>, 0, 32)
      aie.use_lock(%in_cons, Release, 1)
      aie.next_bd ^bb2
    ^bb2:  // pred: ^bb1
      aie.use_lock(%in_prod, AcquireGreaterEqual, 1)
      aie.dma_bd(%in_pong : memref<32xi32>, 0, 32)
      aie.use_lock(%in_cons, Release, 1)
      aie.next_bd ^bb1
    ^bb3:  // pred: ^bb0
      aie.end
    }
    aie.shim_dma_allocation @in0(MM2S, 0, 0)
    aiex.runtime_sequence(%arg0: memref<64xi32>, %arg1: memref<64xi32>) {
      aiex.npu.dma_memcpy_nd(%arg0[0, 0, 0, 0][2, 1, 1, 32][32, 0, 0, 1]) {id = 1 : i64, metadata = @in0, issue_token = true} : memref<64xi32>
      aiex.npu.dma_wait {symbol = @in0}
    }
  }
}
