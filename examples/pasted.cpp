// One statement copied out of a graph, without the create of its buffer: read
// because its tiling gives buffer_dimension (a memory-tile read is assumed).
// aiedma walk examples/pasted.cpp
read_access(mtxB.out[0]) = tiling({.buffer_dimension = {8, 8}, .tiling_dimension = {4, 4},
    .offset = {0, 0}, .tile_traversal = {{.dimension = 0, .stride = 4, .wrap = 2},
                                        {.dimension = 1, .stride = 4, .wrap = 2}}});
