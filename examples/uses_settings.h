// A graph whose sizes and element type come from a local header (examples/settings.h):
// aiedma follows #include "..." beside the including file; -D still overrides.
//   aiedma walk examples/uses_settings.h
//   aiedma walk examples/uses_settings.h -D NCOL=4
#pragma once
#include <adf.h>
#include "settings.h"
#include "kernels.h"   // not here: passed over, as nothing the tilings use comes from it

class Columns : public adf::graph {
public:
    adf::shared_buffer<sample_t> mtx;
    Columns() {
        mtx = adf::shared_buffer<sample_t>::create({NCOL, NROW}, 1, 1);
        adf::write_access(mtx.in[0]) = adf::tiling({.buffer_dimension = {NCOL, NROW}});
        // 2-column strips, left to right
        adf::read_access(mtx.out[0]) = adf::tiling({
            .buffer_dimension = {NCOL, NROW}, .tiling_dimension = {2, NROW},
            .tile_traversal = {{.dimension = 0, .stride = 2, .wrap = NCOL / 2}}});
    }
};
