// Memory-tile test cases in the shapes real tiling headers use, written for aiedma:
// several graph classes in one header, each calling its buffer mtxin (ports are
// reported as TestCase1::mtxin.out[0]); tilings kept in tiling_parameters variables;
// sizes from locals, members and static constants; element types from a template
// parameter with a default, a typedef, a using and a #define.
// aiedma walk examples/test_cases.h
// aiedma walk examples/test_cases.h -D ITYPE=cint16 -D NCOL=4 --port 'TestCase1::mtxin.out[0]'
#pragma once
#include <adf.h>

#define FRAME_TYPE cint16

template <typename ITYPE = int32, int NCOL = 8>
class TestCase1 : public adf::graph {
public:
    adf::input_plio in;
    adf::output_plio out;
    adf::shared_buffer<ITYPE> mtxin;
    static const int NROW = 4;

    TestCase1() {
        uint NELEM = NCOL * NROW;           // a plain local used as a size
        mtxin = adf::shared_buffer<ITYPE>::create({NCOL, NROW}, 1, 1);
        adf::tiling_parameters write_rows = {
            .buffer_dimension = {NCOL, NROW}, .tiling_dimension = {NCOL, 1}, .offset = {0, 0},
            .tile_traversal = {{.dimension = 1, .stride = 1, .wrap = NROW}}};
        adf::write_access(mtxin.in[0]) = adf::tiling(write_rows);
        // read it transposed: one column after the other
        adf::read_access(mtxin.out[0]) = adf::tiling({
            .buffer_dimension = {NCOL, NROW}, .tiling_dimension = {1, NROW}, .offset = {0, 0},
            .tile_traversal = {{.dimension = 0, .stride = 1, .wrap = NELEM / NROW}}});
        adf::connect(in.out[0], mtxin.in[0]);
        adf::connect(mtxin.out[0], out.in[0]);
    }
};

class TestCase2 : public adf::graph {
public:
    typedef int16 sample_t;
    adf::shared_buffer<sample_t> mtxin;
    int Pad = 2;                             // a member with a default

    TestCase2() {
        const int Dim0 = 8, Dim1 = 4;
        uint Dim01 = Dim0 * Dim1;
        mtxin = adf::shared_buffer<sample_t>::create({Dim01}, 1, 1);
        adf::write_access(mtxin.in[0]) = adf::tiling({.buffer_dimension = {Dim01}});
        // zero padding around 2-D tiles of a 1-D buffer seen as 8x4
        adf::tiling_parameters padded = {
            .buffer_dimension = {Dim0, Dim1}, .tiling_dimension = {Dim0 + 2 * Pad, Dim1},
            .offset = {-Pad, 0}, .tile_traversal = {{.dimension = 0, .stride = Dim0, .wrap = 1}}};
        adf::read_access(mtxin.out[0]) = adf::tiling(padded);
    }
};

class TestCase3 : public adf::graph {
    using word_t = FRAME_TYPE;
public:
    adf::shared_buffer<word_t> mtxin;
    TestCase3() {
        mtxin = adf::shared_buffer<word_t>::create({6, 2}, 1, 1);
        adf::write_access(mtxin.in[0]) = adf::tiling({.buffer_dimension = {6, 2}});
        adf::read_access(mtxin.out[0]) = adf::tiling({
            .buffer_dimension = {6, 2}, .tiling_dimension = {3, 2},
            .tile_traversal = {{.dimension = 0, .stride = 3, .wrap = 2}}});
    }
};
