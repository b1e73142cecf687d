// AMD's "tiling parameters" tutorial graph, written as the tutorial writes it: kernels
// k1 and k2 write one 10x6 int32 memory-tile buffer mtx (k1 in 3x2 tiles, k2 in 2x3
// tiles), kernels k3 and k4 read it back in two halves.
//   aiedma run examples/tutorial_graph.h                      copies: k3, k4 get the halves
//   aiedma run examples/tutorial_graph.h --kernel k3=mykernels:add_one
#pragma once
#include <adf.h>
#include "kernels.h"

#define NCOLS 10
#define NROWS 6

class mygraph : public adf::graph {
public:
    adf::kernel k1, k2, k3, k4;
    adf::shared_buffer<int> mtx;
    adf::input_plio in1, in2;
    adf::output_plio out3, out4;

    mygraph() {
        in1 = adf::input_plio::create("DataIn1", adf::plio_32_bits, "data/input1.txt");
        in2 = adf::input_plio::create("DataIn2", adf::plio_32_bits, "data/input2.txt");
        out3 = adf::output_plio::create("DataOut3", adf::plio_32_bits, "data/output3.txt");
        out4 = adf::output_plio::create("DataOut4", adf::plio_32_bits, "data/output4.txt");

        k1 = adf::kernel::create(tile_k1);
        k2 = adf::kernel::create(tile_k2);
        k3 = adf::kernel::create(tile_k3);
        k4 = adf::kernel::create(tile_k4);
        adf::source(k1) = "k1.cc";
        adf::source(k2) = "k2.cc";
        adf::source(k3) = "k3.cc";
        adf::source(k4) = "k4.cc";
        adf::runtime<ratio>(k1) = 0.9;
        adf::runtime<ratio>(k2) = 0.9;
        adf::runtime<ratio>(k3) = 0.9;
        adf::runtime<ratio>(k4) = 0.9;

        mtx = adf::shared_buffer<int>::create({NCOLS, NROWS}, 2, 2);

        adf::connect<>(in1.out[0], k1.in[0]);
        adf::connect<>(in2.out[0], k2.in[0]);
        adf::dimensions(k1.in[0]) = {36};
        adf::dimensions(k2.in[0]) = {24};
        adf::dimensions(k1.out[0]) = {36};
        adf::dimensions(k2.out[0]) = {24};
        adf::connect<>(k1.out[0], mtx.in[0]);
        adf::connect<>(k2.out[0], mtx.in[1]);
        adf::write_access(mtx.in[0]) = adf::tiling({
            .buffer_dimension = {NCOLS, NROWS}, .tiling_dimension = {3, 2}, .offset = {0, 0},
            .tile_traversal = {{.dimension = 0, .stride = 3, .wrap = 2},
                               {.dimension = 1, .stride = 2, .wrap = 3}}});
        adf::write_access(mtx.in[1]) = adf::tiling({
            .buffer_dimension = {NCOLS, NROWS}, .tiling_dimension = {2, 3}, .offset = {6, 0},
            .tile_traversal = {{.dimension = 1, .stride = 3, .wrap = 2},
                               {.dimension = 0, .stride = 2, .wrap = 2}}});

        adf::connect<>(mtx.out[0], k3.in[0]);
        adf::connect<>(mtx.out[1], k4.in[0]);
        adf::read_access(mtx.out[0]) = adf::tiling({
            .buffer_dimension = {NCOLS, NROWS}, .tiling_dimension = {2, NROWS},
            .offset = {0, 0}, .tile_traversal = {{.dimension = 0, .stride = 2, .wrap = 2}}});
        adf::read_access(mtx.out[1]) = adf::tiling({
            .buffer_dimension = {NCOLS, NROWS}, .tiling_dimension = {3, NROWS},
            .offset = {4, 0}, .tile_traversal = {{.dimension = 0, .stride = 3, .wrap = 2}}});
        adf::dimensions(k3.in[0]) = {24};
        adf::dimensions(k4.in[0]) = {36};
        adf::dimensions(k3.out[0]) = {24};
        adf::dimensions(k4.out[0]) = {36};
        adf::connect<>(k3.out[0], out3.in[0]);
        adf::connect<>(k4.out[0], out4.in[0]);

        adf::repetition_count(mtx) = 1;
        adf::num_buffers(mtx) = 1;
    }
};
