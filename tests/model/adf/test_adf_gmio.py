"""GMIO ports' tilings in a graph header: the shim DMA's read of DDR (``input_gmio``) or
write to it (``output_gmio``), in the element type of the buffer each is connected to, as
AIE-ML graphs program them (``adf::read_access(gmio_in.out[0]) = tiling``)."""

import numpy as np

from aiedma.model.adf import read_graph_header

GEMM_SHAPE = """\
class Single : public adf::graph {
public:
    adf::input_gmio gmio_in;
    adf::output_gmio gmio_out;
    adf::input_gmio to_kernel;
private:
    adf::kernel core;
    adf::shared_buffer<int8_t> buf_in;
    adf::shared_buffer<int16> buf_out;
public:
    Single() {
        core = adf::kernel::create(gemm);
        buf_in = adf::shared_buffer<int8_t>::create({4096}, 1, 1);
        buf_out = adf::shared_buffer<int16>::create({1024}, 1, 1);
        gmio_in = input_gmio::create("gmio_in", 64, 1000);
        gmio_out = adf::output_gmio::create(64, 1000);
        to_kernel = adf::input_gmio::create(64, 1000);
        adf::input_gmio local = adf::input_gmio::create(64, 1000);
        adf::connect(gmio_in.out[0], buf_in.in[0]);
        adf::connect(buf_in.out[0], core.in[0]);
        adf::connect(to_kernel.out[0], core.in[1]);
        adf::connect(core.out[0], buf_out.in[0]);
        adf::connect(buf_out.out[0], gmio_out.in[0]);
        adf::connect(local.out[0], buf_in.in[0]);

        adf::tiling_parameters all;
        all.buffer_dimension = {4096};
        all.tiling_dimension = {4096};
        all.offset = {0};
        adf::read_access(gmio_in.out[0]) = all;
        adf::write_access(buf_in.in[0]) = all;
        adf::write_access(gmio_out.in[0]) = adf::tiling({.buffer_dimension = {32, 32},
            .tiling_dimension = {32, 1}, .offset = {0, 0},
            .tile_traversal = {{.dimension = 1, .stride = 2, .wrap = 16}}});
        adf::read_access(to_kernel.out[0]) = adf::tiling({.buffer_dimension = {256},
                                                         .tiling_dimension = {256}});
        adf::read_access(local.out[0]) = adf::tiling({.buffer_dimension = {8},
                                                     .tiling_dimension = {8}});
        adf::write_access(gmio_in.out[0]) = all;
        adf::read_access(gmio_out.in[0]) = adf::tiling({.tiling_dimension = {8}});
        adf::input_gmio bare = adf::input_gmio::create(64, 1000);
        adf::connect(bare.out[0], core.in[2]);
        adf::read_access(bare.out[0]) = adf::tiling({.tiling_dimension = {8}});
    }
};
"""


def test_gmio_ports_are_the_shims_in_the_connected_buffers_element_type():
    header = read_graph_header(GEMM_SHAPE)
    assert not [s for s in header.skipped if "create" in str(s)], header.skipped
    ports = {p.name: p for p in header.ports}
    read = ports["Single::gmio_in.out[0]"]
    assert (read.kind, read.direction, read.dtype, read.owner) == ("shim", "read", "int8",
                                                                   "input_gmio")
    assert read.context == "shim read"
    assert np.array_equal(read.program.indices(), np.arange(4096))
    write = ports["Single::gmio_out.in[0]"]
    assert (write.kind, write.direction, write.dtype) == ("shim", "write", "int16")
    assert write.program.indices()[:3].tolist() == [0, 1, 2]
    assert write.program.indices()[32:35].tolist() == [64, 65, 66]   # every other row
    # a GMIO feeding a kernel: the element type is the kernel's, which the header lacks
    assert ports["Single::to_kernel.out[0]"].dtype is None
    # one declared where it is created
    assert ports["Single::local.out[0]"].kind == "shim"
    assert ports["Single::buf_in.in[0]"].kind == "memtile"


def test_a_gmio_access_in_the_wrong_direction_or_without_its_buffer_is_skipped():
    header = read_graph_header(GEMM_SHAPE)
    problems = [str(s) for s in header.skipped]
    assert any("write_access(gmio_in.out[0])" in p and "expected read_access(gmio_in.out[i])"
               in p and "found write_access on 'out'" in p for p in problems), problems
    assert any("read_access(gmio_out.in[0])" in p and "expected write_access(gmio_out.in[i])"
               in p for p in problems), problems
    assert any("read_access(bare.out[0])" in p and "expected .buffer_dimension in every "
               "tiling of the input_gmio bare (its DDR buffer)" in p for p in problems), problems
    assert len(header.ports) == 5


DIMENSIONS_BY_NAME = """\
#define TILE_ROWS 4
std::vector<uint32> DimAin = {
    8 * TILE_ROWS, // tile size
    64             // tiles
};
int NotAList = 3;
class MatMult : public adf::graph {
    adf::kernel k;
public:
    MatMult() {
        k = adf::kernel::create(mm);
        dimensions(k.in[0]) = DimAin;
        read_access(k.in[0]) = adf::tiling({.tiling_dimension = {32, 2},
            .tile_traversal = {{.dimension = 1, .stride = 2, .wrap = 32}}});
        dimensions(k.in[1]) = NotAList;
    }
};
"""


def test_a_kernel_ports_dimensions_may_be_a_variable_initialised_with_its_shape():
    """AMD's matrix-multiply tutorial writes ``dimensions(MatMult.in[0]) = DimAin;`` with
    ``std::vector<uint32> DimAin = {tile size, tiles}``."""
    header = read_graph_header(DIMENSIONS_BY_NAME)
    (port,) = header.ports
    assert (port.name, port.kind, port.shape) == ("MatMult::k.in[0]", "tile", (32, 64))
    assert port.program.indices()[:3].tolist() == [0, 1, 2]
    (problem,) = header.skipped
    assert "dimensions(k.in[1])" in str(problem)
    assert ("expected '{' and the buffer's shape, or a std::vector / std::array initialised "
            "with one, found 'NotAList'") in str(problem)
