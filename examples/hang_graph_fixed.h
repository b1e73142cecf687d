// examples/hang_graph.h wired as meant: in1 -> k1 -> a -> k2 -> b -> k3 -> out1. The
// kernels copy, so out1 is in1 as a's transposed read and b's read in halves order it.
//   aiedma run examples/hang_graph_fixed.h
#pragma once
#include <adf.h>

class pipelinegraph : public adf::graph {
public:
    adf::kernel k1, k2, k3;
    adf::shared_buffer<int> a, b;
    adf::input_plio in1;
    adf::output_plio out1;

    pipelinegraph() {
        in1 = adf::input_plio::create("DataIn1", adf::plio_32_bits, "data/input1.txt");
        out1 = adf::output_plio::create("DataOut1", adf::plio_32_bits, "data/output1.txt");
        k1 = adf::kernel::create(stage1);
        k2 = adf::kernel::create(stage2);
        k3 = adf::kernel::create(stage3);
        a = adf::shared_buffer<int>::create({4, 3}, 1, 1);
        b = adf::shared_buffer<int>::create({4, 3}, 1, 1);

        adf::connect<>(in1.out[0], k1.in[0]);
        adf::connect<>(k1.out[0], a.in[0]);
        adf::connect<>(a.out[0], k2.in[0]);
        adf::connect<>(k2.out[0], b.in[0]);
        adf::connect<>(b.out[0], k3.in[0]);
        adf::connect<>(k3.out[0], out1.in[0]);
        adf::dimensions(k3.in[0]) = {12};
        adf::dimensions(k3.out[0]) = {12};

        // a is read transposed (one column a tile); b in two 2x3 halves
        adf::write_access(a.in[0]) = adf::tiling({
            .buffer_dimension = {4, 3}, .tiling_dimension = {4, 3}, .offset = {0, 0}});
        adf::read_access(a.out[0]) = adf::tiling({
            .buffer_dimension = {4, 3}, .tiling_dimension = {1, 3}, .offset = {0, 0},
            .tile_traversal = {{.dimension = 0, .stride = 1, .wrap = 4}}});
        adf::write_access(b.in[0]) = adf::tiling({
            .buffer_dimension = {4, 3}, .tiling_dimension = {4, 3}, .offset = {0, 0}});
        adf::read_access(b.out[0]) = adf::tiling({
            .buffer_dimension = {4, 3}, .tiling_dimension = {2, 3}, .offset = {0, 0},
            .tile_traversal = {{.dimension = 0, .stride = 2, .wrap = 2}}});
    }
};
