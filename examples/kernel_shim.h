// Tilings on a kernel's ports (the core tile's DMA) and on an external buffer's
// ports (the shim DMA) are read too, each with its own context.
// aiedma walk examples/kernel_shim.h
// aiedma bd examples/kernel_shim.h --port 'Blocks::ddr.out[0]'   (shim, read)
#pragma once
#include <adf.h>

class Blocks : public adf::graph {
public:
    adf::kernel k1, k2;
    adf::external_buffer<int32> ddr;
    Blocks() {
        k1 = adf::kernel::create(producer);
        k2 = adf::kernel::create(consumer);
        ddr = adf::external_buffer<int32>::create({64}, 1, 1);
        adf::connect(k1.out[0], k2.in[0]);
        adf::dimensions(k1.out[0]) = {8, 4};
        // k1's output leaves its tile column by column
        adf::read_access(k1.out[0]) = adf::tiling({.tiling_dimension = {1, 4},
            .tile_traversal = {{.dimension = 0, .stride = 1, .wrap = 8}}});
        // k2's input is filled in 4x2 blocks
        adf::write_access(k2.in[0]) = adf::tiling({.buffer_dimension = {8, 4},
            .tiling_dimension = {4, 2},
            .tile_traversal = {{.dimension = 0, .stride = 4, .wrap = 2},
                               {.dimension = 1, .stride = 2, .wrap = 2}}});
        adf::write_access(ddr.in[0]) = adf::tiling({.buffer_dimension = {64}});
        adf::read_access(ddr.out[0]) = adf::tiling({.buffer_dimension = {16, 4},
            .tiling_dimension = {16, 1},
            .tile_traversal = {{.dimension = 1, .stride = 2, .wrap = 2},
                               {.dimension = 1, .stride = 1, .wrap = 2}}});
    }
};
