// A core tile between two shim channels, written for aiedma in the shapes of
// mlir-aie's lowered object FIFOs: the core's DMA receives 16-word blocks into two
// buffers in turn, the core (a kernel call, followed as a copy of its first buffer into
// its last) fills the output buffer, and the core's DMA sends it back. The loop runs
// twice over ping and pong: 4 blocks, the 64 words the host sends.
module {
  aie.device(npu1_1col) {
    %tile_0_0 = aie.tile(0, 0)
    %tile_0_2 = aie.tile(0, 2)
    %in_ping = aie.buffer(%tile_0_2) {address = 1024 : i32, sym_name = "in_ping"} : memref<16xi32>
    %in_pong = aie.buffer(%tile_0_2) {address = 1088 : i32, sym_name = "in_pong"} : memref<16xi32>
    %out_buff = aie.buffer(%tile_0_2) {address = 1152 : i32, sym_name = "out_buff"} : memref<16xi32>
    %in_prod = aie.lock(%tile_0_2, 0) {init = 2 : i32, sym_name = "in_prod"}
    %in_cons = aie.lock(%tile_0_2, 1) {init = 0 : i32, sym_name = "in_cons"}
    %out_prod = aie.lock(%tile_0_2, 2) {init = 1 : i32, sym_name = "out_prod"}
    %out_cons = aie.lock(%tile_0_2, 3) {init = 0 : i32, sym_name = "out_cons"}
    aie.flow(%tile_0_0, DMA : 0, %tile_0_2, DMA : 0)
    aie.flow(%tile_0_2, DMA : 0, %tile_0_0, DMA : 0)
    func.func private @kernel(memref<16xi32>, memref<16xi32>)
    %core_0_2 = aie.core(%tile_0_2) {
      %c0 = arith.constant 0 : index
      %c2 = arith.constant 2 : index
      %c4 = arith.constant 4 : index
      scf.for %arg0 = %c0 to %c4 step %c2 {
        aie.use_lock(%in_cons, AcquireGreaterEqual, 1)
        aie.use_lock(%out_prod, AcquireGreaterEqual, 1)
        func.call @kernel(%in_ping, %out_buff) : (memref<16xi32>, memref<16xi32>) -> ()
        aie.use_lock(%in_prod, Release, 1)
        aie.use_lock(%out_cons, Release, 1)
        aie.use_lock(%in_cons, AcquireGreaterEqual, 1)
        aie.use_lock(%out_prod, AcquireGreaterEqual, 1)
        func.call @kernel(%in_pong, %out_buff) : (memref<16xi32>, memref<16xi32>) -> ()
        aie.use_lock(%in_prod, Release, 1)
        aie.use_lock(%out_cons, Release, 1)
      }
      aie.end
    }
    %mem_0_2 = aie.mem(%tile_0_2) {
      %0 = aie.dma_start(S2MM, 0, ^bb1, ^bb3)
    ^bb1:  // 2 preds: ^bb0, ^bb2
      aie.use_lock(%in_prod, AcquireGreaterEqual, 1)
      aie.dma_bd(%in_ping : memref<16xi32>, 0, 16)
      aie.use_lock(%in_cons, Release, 1)
      aie.next_bd ^bb2
    ^bb2:  // pred: ^bb1
      aie.use_lock(%in_prod, AcquireGreaterEqual, 1)
      aie.dma_bd(%in_pong : memref<16xi32>, 0, 16)
      aie.use_lock(%in_cons, Release, 1)
      aie.next_bd ^bb1
    ^bb3:  // pred: ^bb0
      %1 = aie.dma_start(MM2S, 0, ^bb4, ^bb5)
    ^bb4:  // 2 preds: ^bb3, ^bb4
      aie.use_lock(%out_cons, AcquireGreaterEqual, 1)
      aie.dma_bd(%out_buff : memref<16xi32>, 0, 16)
      aie.use_lock(%out_prod, Release, 1)
      aie.next_bd ^bb4
    ^bb5:  // pred: ^bb3
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
