// A three-stage pipeline in1 -> k1 -> a -> k2 -> b -> k3 -> out1 whose first and last
// connect have their sources swapped: k1 reads b and k3 reads in1. Every volume still
// matches, so the graph builds, but k1, a, k2 and b now form a loop in which each waits
// for the other's output first: the run hangs and names every waiting channel and kernel.
//   aiedma run examples/hang_graph.h          HANGS (status 1)
//   aiedma run examples/hang_graph_fixed.h    the same pipeline wired as meant
#pragma once
#include <adf.h>

class hanggraph : public adf::graph {
public:
    adf::kernel k1, k2, k3;
    adf::shared_buffer<int> a, b;
    adf::input_plio in1;
    adf::output_plio out1;

    hanggraph() {
        in1 = adf::input_plio::create("DataIn1", adf::plio_32_bits, "data/input1.txt");
        out1 = adf::output_plio::create("DataOut1", adf::plio_32_bits, "data/output1.txt");
        k1 = adf::kernel::create(stage1);
        k2 = adf::kernel::create(stage2);
        k3 = adf::kernel::create(stage3);
        a = adf::shared_buffer<int>::create({4, 3}, 1, 1);
        b = adf::shared_buffer<int>::create({4, 3}, 1, 1);

        adf::connect<>(b.out[0], k1.in[0]);      // the bug: k1 should read in1
        adf::connect<>(k1.out[0], a.in[0]);
        adf::connect<>(a.out[0], k2.in[0]);
        adf::connect<>(k2.out[0], b.in[0]);
        adf::connect<>(in1.out[0], k3.in[0]);    // the bug: k3 should read b
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
