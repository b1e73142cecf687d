// Two shared buffers in one array, made in a loop with a constant bound.
// aiedma walk examples/arrays.h      lists Pingpong::mtx[0].in[0] ... Pingpong::mtx[1].out[0]
#pragma once
#include <adf.h>

class Pingpong : public adf::graph {
    static constexpr unsigned N = 16;
public:
    adf::shared_buffer<uint8> mtx[2];
    Pingpong() {
        for (int i = 0; i < 2; i++) {
            mtx[i] = adf::shared_buffer<uint8>::create({N}, 1, 1);
            adf::write_access(mtx[i].in[0]) = adf::tiling({.buffer_dimension = {N}});
        }
        // the first buffer is read forwards in halves, the second from its middle
        adf::read_access(mtx[0].out[0]) = adf::tiling({.buffer_dimension = {N},
            .tiling_dimension = {N / 2}, .tile_traversal = {{0, N / 2, 2}}});
        adf::read_access(mtx[1].out[0]) = adf::tiling({.buffer_dimension = {N},
            .tiling_dimension = {N / 2}, .offset = {N / 2}});
    }
};
