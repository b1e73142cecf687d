// Zero padding on a memory tile's MM2S, in both forms of aie.dma_bd. The 8-bit
// 64x64 buffer is read as mlir-aie's hardware test does (a 56-byte window of 61 rows,
// a word of zeros on each side, two zero rows before and one after); the 32-bit
// buffer of 13 elements gets two zero words before and one after.
module {
  aie.device(npu1_1col) {
    %tile_0_1 = aie.tile(0, 1)
    %image = aie.buffer(%tile_0_1) {address = 0 : i32, sym_name = "image"} : memref<64x64xi8>
    %row = aie.buffer(%tile_0_1) {address = 4096 : i32, sym_name = "row"} : memref<13xi32>
    %memtile_dma_0_1 = aie.memtile_dma(%tile_0_1) {
      %0 = aie.dma_start(MM2S, 0, ^bb1, ^bb2)
    ^bb1:
      aie.dma_bd(%image : memref<64x64xi8>) {bd_id = 0 : i32, len = 4096 : i32, dimensions = #aie<bd_dim_layout_array[<size = 61, stride = 56>, <size = 56, stride = 1>]>, pad_dimensions = #aie<bd_pad_layout_array[<const_pad_before = 2, const_pad_after = 1>, <const_pad_before = 4, const_pad_after = 4>]>}
      aie.end
    ^bb2:
      %1 = aie.dma_start(MM2S, 1, ^bb3, ^bb4)
    ^bb3:
      aie.dma_bd(%row : memref<13xi32>, 0, 16, [<size = 13, stride = 1>], [<const_pad_before = 2, const_pad_after = 1>]) {bd_id = 24 : i32}
      aie.end
    ^bb4:
      aie.end
    }
  }
}
