// The tiling tutorial's graph in aiedma's words: kernels k1 and k2 write one 10x6
// memory-tile buffer in 3x2 and 2x3 tiles, k3 and k4 read it back in two halves.
// aiedma walk examples/graph.h                      every port, with its context
// aiedma walk examples/graph.h --port 'mtx.out[1]'  one port
#pragma once
#include <adf.h>

#define NCOLS 10          // dimension 0, contiguous
constexpr int NROWS = 6;

class tutorial : public adf::graph {
    adf::shared_buffer<int32> mtx;
    adf::kernel k1, k2, k3, k4;

public:
    tutorial() {
        mtx = adf::shared_buffer<int32>::create({NCOLS, NROWS}, 2, 2);
        adf::connect(k1.out[0], mtx.in[0]);   // not a DMA setting: skipped
        adf::write_access(mtx.in[0]) = adf::tiling({
            .buffer_dimension = {NCOLS, NROWS}, .tiling_dimension = {3, 2}, .offset = {0, 0},
            .tile_traversal = {{.dimension = 0, .stride = 3, .wrap = 2},
                               {.dimension = 1, .stride = 2, .wrap = 3}}});
        adf::write_access(mtx.in[1]) = adf::tiling({
            .buffer_dimension = {NCOLS, NROWS}, .tiling_dimension = {2, 3}, .offset = {6, 0},
            .tile_traversal = {{.dimension = 1, .stride = 3, .wrap = 2},
                               {.dimension = 0, .stride = 2, .wrap = 2}}});
        adf::read_access(mtx.out[0]) = adf::tiling({
            .buffer_dimension = {NCOLS, NROWS}, .tiling_dimension = {2, NROWS},
            .tile_traversal = {{.dimension = 0, .stride = 2, .wrap = 2}}});
        adf::read_access(mtx.out[1]) = adf::tiling({
            .buffer_dimension = {NCOLS, NROWS}, .tiling_dimension = {3, NROWS}, .offset = {4, 0},
            .tile_traversal = {{.dimension = 0, .stride = 3, .wrap = 2}}});
    }
};
