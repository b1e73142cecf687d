// Three mistakes, each its own line:column error; the two good ports are still read.
// aiedma walk examples/partly_broken.h
#pragma once
#include <adf.h>

class Partly : public adf::graph {
public:
    adf::shared_buffer<int16> mtx;
    Partly() {
        mtx = adf::shared_buffer<int16>::create({16}, 2, 2);
        adf::write_access(mtx.in[0]) = adf::tiling({.buffer_dimension = {16}});
        adf::write_access(mtx.in[1]) = adf::tiling({.buffer_dimension = {16}, .ofset = {4}});
        adf::read_access(mtx.out[0]) = adf::tiling({.buffer_dimension = {16},
            .tiling_dimension = {8}, .tile_traversal = {{0, 8, 2}}});
        adf::read_access(mtx.out[1]) = adf::tiling({.tiling_dimension = {WIDTH}});
        adf::read_access(mtx.out[2]) = adf::tiling({.buffer_dimension = {16}});
    }
};
