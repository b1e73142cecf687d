// Two memory-tile reads in the shapes of AMD's tiling tutorial (test cases 1 and 4),
// written for aiedma: each lowers here to 1 BD, while aiecompiler refuses them for
// lack of BDs. `aiedma bd` prints both counts and warns:
//   aiedma bd examples/bd_budget.h --port 'Layers::mtxin.out[0]'
//   aiedma bd examples/bd_budget.h --port 'Halo::mtxin.out[0]'
//   aiedma bd examples/bd_budget.h --port 'Halo::mtxin.out[0]' -D TILE0=16   (fits)
#pragma once
#include <adf.h>

// 8x8 images of 16 layers read as 4x4 quarters, layer after layer.
template <int LAYERS = 16>
class Layers : public adf::graph {
public:
    adf::shared_buffer<int32> mtxin;
    Layers() {
        const uint Dim0 = 8, Dim1 = 8;
        uint D0123 = Dim0 * Dim1 * LAYERS;
        mtxin = adf::shared_buffer<int32>::create({D0123}, 1, 1);
        adf::write_access(mtxin.in[0]) = adf::tiling({
            .buffer_dimension = {D0123}, .tiling_dimension = {D0123}, .offset = {0}});
        adf::read_access(mtxin.out[0]) = adf::tiling({
            .buffer_dimension = {Dim0, Dim1, LAYERS},
            .tiling_dimension = {Dim0 / 2, Dim1 / 2, 1},
            .offset = {0, 0, 0},
            .tile_traversal = {{.dimension = 0, .stride = Dim0 / 2, .wrap = 2},
                               {.dimension = 1, .stride = Dim1 / 2, .wrap = 2},
                               {.dimension = 2, .stride = 1, .wrap = LAYERS}}});
    }
};

// 64 channels of 512 samples, read in TILE0 x 4 tiles down the samples with 4 rows of
// zeros above and below each channel group.
template <int TILE0 = 8>
class Halo : public adf::graph {
public:
    adf::shared_buffer<int32> mtxin;
    int Pad = 4;
    Halo() {
        const uint D0 = 64, D1 = 512, Tile1 = 4;
        mtxin = adf::shared_buffer<int32>::create({D0 * D1}, 1, 1);
        adf::write_access(mtxin.in[0]) = adf::tiling({.buffer_dimension = {D0 * D1}});
        adf::read_access(mtxin.out[0]) = adf::tiling({
            .buffer_dimension = {D0, D1}, .tiling_dimension = {TILE0, Tile1},
            .offset = {0, -Pad},
            .tile_traversal = {{.dimension = 1, .stride = Tile1, .wrap = (D1 + 2 * Pad) / Tile1},
                               {.dimension = 0, .stride = TILE0, .wrap = D0 / TILE0}}});
    }
};
