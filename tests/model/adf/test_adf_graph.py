"""Reading a graph header's kernels, PLIO / GMIO, connects, dimensions and repetition
counts (model/adf/graph.py): what it reads, and a line:column warning for what it cannot."""

from aiedma.model.adf.graph import Endpoint, GraphConnection, read_graph_text

HEADER = """\
class g : public adf::graph {
public:
    adf::kernel k1, k2, k4;
    adf::input_plio in1;
    adf::output_gmio out1;
    adf::shared_buffer<int> mtx;
    g() {
        k1 = adf::kernel::create(add_one);
        k3 = kernel::create(scale<int>);
        in1 = adf::input_plio::create("DataIn1", adf::plio_32_bits, "in.txt");
        in2 = adf::input_gmio::create("gm", 64, 1);
        out2 = adf::output_plio::create("DataOut2", adf::plio_32_bits, "out.txt");
        adf::connect<>(in1.out[0], k1.in[0]);
        adf::connect<adf::stream>(in2, this->k2.in[1]);
        connect(k1.out[0], mtx.in[0]);
        adf::connect<>(mtx.out[0]);
        adf::dimensions(k1.in[0]) = {4, 6};
        adf::dimensions(k1.out[0]) = {N};
        adf::repetition_count(k1) = 3;
        adf::connect<>(k2.out[0], out1.in[0]);
        adf::source(k1) = "k1.cc";
        adf::location<kernel>(k2) = adf::tile(1, 2);
    }
};
"""


def test_kernels_created_or_declared_with_their_functions():
    found = read_graph_text(HEADER)
    assert found.kernels == {"k1": "add_one", "k2": "", "k4": "", "k3": "scale<int>"}


def test_plio_and_gmio_created_or_declared_with_their_direction():
    found = read_graph_text(HEADER)
    assert found.ios == {"in1": "input", "out1": "output", "in2": "input", "out2": "output"}


def test_connects_with_or_without_a_template_this_and_a_bare_port():
    found = read_graph_text(HEADER)
    assert found.connections == [
        GraphConnection(Endpoint("in1", "out", 0), Endpoint("k1", "in", 0), 13, 9),
        GraphConnection(Endpoint("in2"), Endpoint("k2", "in", 1), 14, 9),
        GraphConnection(Endpoint("k1", "out", 0), Endpoint("mtx", "in", 0), 15, 9),
        GraphConnection(Endpoint("k2", "out", 0), Endpoint("out1", "in", 0), 20, 9)]
    assert [str(c.source) for c in found.connections] == ["in1.out[0]", "in2", "k1.out[0]",
                                                         "k2.out[0]"]


def test_dimensions_and_a_kernels_repetition_count():
    found = read_graph_text(HEADER)
    assert found.dimensions == {("k1", "in", 0): (4, 6)}
    assert found.repetitions == {"k1": 3}


def test_what_it_cannot_read_is_a_line_column_warning_and_the_rest_still_reads():
    found = read_graph_text(HEADER)
    assert found.warnings == [
        "16:9: connect < > ( mtx . out [ 0 ] ): not read: expected "
        "connect<>(a.out[i], b.in[j])",
        "18:9: dimensions ( k1 . out [ 0 ] ): not read: expected dimensions(k.in[0]) = "
        "{n, ...} with integer literals (the kernel's buffer size then comes from its "
        "connection)",
        "21:9: source(k1): source is not modelled (the system model runs kernels as Python "
        "callables on streams)",
        "22:9: location<kernel>(k2): location is not modelled (the system model runs "
        "kernels as Python callables on streams)"]
    # the statements after each unread one were read (connect at line 20, count at 19)
    assert found.connections[-1].line == 20 and found.repetitions == {"k1": 3}


def test_a_repetition_count_that_is_no_literal_is_left_to_the_buffer_reader():
    # repetition_count(mtx) = N * 2 is a shared buffer's, read with its macros elsewhere
    found = read_graph_text("adf::repetition_count(mtx) = N * 2; repetition_count(k) = 2;")
    assert found.repetitions == {"k": 2} and found.warnings == []


def test_cut_off_text_never_raises():
    for text in ("", "}}}{{ ;;", "int x = 3;"):
        found = read_graph_text(text)
        assert not (found.kernels or found.ios or found.connections or found.warnings)
    assert read_graph_text("connect<>(a.out[0], b.in[0]").warnings == [
        "1:1: connect < > ( a .: not read: expected connect<>(a.out[i], b.in[j])"]
    assert read_graph_text("k = kernel::create(").kernels == {"k": ""}
