"""Reading real graph headers (model/adf/header.py): the shapes of issue 16, each
port's context, partial results, and fuzzing (the reader never raises for its text)."""

from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from aiedma.model import PortProgram
from aiedma.model.adf import CppSyntaxError, parse_graph_header, read_graph_header

EXAMPLES = Path(__file__).parents[3] / "examples"


def ports(text, defines=None):
    header = read_graph_header(text, defines)
    return {p.name: p for p in header.ports}, [str(s) for s in header.skipped]


def indices(port):
    return port.program.indices().tolist()


# --- 1. class scopes ------------------------------------------------------------------------

def test_every_class_is_its_own_namespace_of_buffers():
    found, skipped = ports((EXAMPLES / "test_cases.h").read_text())
    assert skipped == []
    assert list(found) == [f"TestCase{i}::mtxin.{side}[0]" for i in (1, 2, 3)
                           for side in ("in", "out")]
    assert [b.name for b in parse_graph_header((EXAMPLES / "test_cases.h").read_text())] == \
        ["TestCase1::mtxin", "TestCase2::mtxin", "TestCase3::mtxin"]


def test_a_constructor_defined_outside_its_class_and_namespaces():
    text = """
        namespace app { constexpr int N = 8;
        class G : public adf::graph { public: adf::shared_buffer<int32> b; G(); };
        G::G() { b = adf::shared_buffer<int32>::create({N}, 1, 1);
                 adf::read_access(b.out[0]) = adf::tiling({.tiling_dimension = {N / 2}}); }
        }"""
    found, skipped = ports(text)
    assert skipped == [] and list(found) == ["G::b.out[0]"]
    assert indices(found["G::b.out[0]"]) == [0, 1, 2, 3]


# --- 2. tilings kept in variables -------------------------------------------------------------

def test_tiling_parameters_variables():
    text = """
        class G : public adf::graph { public: adf::shared_buffer<int32> m;
        G() {
            m = adf::shared_buffer<int32>::create({8}, 2, 2);
            adf::tiling_parameters WriteAns_pattern = {.buffer_dimension = {8},
                .tiling_dimension = {4}, .tile_traversal = {{0, 4, 2}}};
            tiling_parameters second{.buffer_dimension = {8}, .tiling_dimension = {2},
                                     .offset = {6}};
            write_access(m.in[0]) = adf::tiling(WriteAns_pattern);
            write_access(m.in[1]) = WriteAns_pattern;
            read_access(m.out[0]) = {adf::tiling(second), tiling(WriteAns_pattern)};
            adf::tiling_parameters bad = {.buffer_dimension = {8}, .offset = {Q}};
            read_access(m.out[1]) = tiling(bad);
        } };"""
    found, skipped = ports(text)
    assert indices(found["G::m.in[0]"]) == list(range(8))
    assert found["G::m.in[0]"].program == found["G::m.in[1]"].program
    assert indices(found["G::m.out[0]"]) == [6, 7, *range(8)]
    # the error is placed where the variable's field is written, not at its use
    [problem] = skipped
    assert problem.startswith("read_access(m.out[1]) in class G: line 12, column 79: "
                              "unknown name Q")


def test_tiling_parameters_filled_field_by_field():
    text = """
        class G : public adf::graph { public: adf::shared_buffer<int32> m;
        adf::tiling_parameters full;
        G() {
            m = adf::shared_buffer<int32>::create({8}, 2, 1);
            full.buffer_dimension = {8};
            full.tiling_dimension = {4};
            full.offset = {2};
            adf::write_access(m.in[0]) = adf::tiling(full);
            full.offset = {4};                      // replaces the field
            adf::write_access(m.in[1]) = full;
            full = {.buffer_dimension = {8}, .tiling_dimension = {2}};   // a new value
            full.ofset = {1};
            adf::read_access(m.out[0]) = adf::tiling(full);
        } };"""
    found, skipped = ports(text)
    assert indices(found["G::m.in[0]"]) == [2, 3, 4, 5]
    assert indices(found["G::m.in[1]"]) == [4, 5, 6, 7]
    [problem] = skipped
    assert problem.startswith("read_access(m.out[0]) in class G: line 13, column 18: expected "
                              "a tiling_parameters field")


# --- 3. locals, members and their arithmetic ---------------------------------------------------

def test_locals_members_and_static_constants_as_sizes():
    text = """
        class G : public adf::graph {
            static const int Dim0 = 4;
            int Pad = 1;
            static constexpr unsigned Dim1{Dim0 / 2};
        public:
            adf::shared_buffer<int32> m;
            G() {
                uint D0123 = Dim0 * Dim1;
                m = adf::shared_buffer<int32>::create({D0123}, 1, 1);
                read_access(m.out[0]) = tiling({.buffer_dimension = {Dim0, Dim1},
                    .tiling_dimension = {Dim0 + 2 * Pad, Dim1}, .offset = {-Pad, 0}});
            }
        };"""
    found, skipped = ports(text)
    assert skipped == []
    assert indices(found["G::m.out[0]"]) == [-1, 0, 1, 2, 3, -1, -1, 4, 5, 6, 7, -1]


def test_a_variable_assigned_again_or_a_loop_variable_is_refused_where_used():
    text = """
        m = shared_buffer<int32>::create({16}, 2, 1);
        void build() {
            int n = 4;
            n = n * 2;
            write_access(m.in[0]) = tiling({.tiling_dimension = {n}});
            for (int k = 0; k < N; k++) { write_access(m.in[1]) = tiling({.offset = {k}}); }
        }"""
    _, skipped = ports(text)
    assert "n is not an integer constant: assigned again at line 5, column 13" in skipped[0]
    assert "k is not an integer constant: a loop variable" in skipped[1]


# --- 4. element types, template parameters and arrays --------------------------------------------

def test_element_types_from_templates_typedefs_usings_and_defines():
    text = """
        #define FFT_2D_TT_DATA cint16
        template <typename ITYPE = int16, int N = 4>
        class A : public adf::graph { public: adf::shared_buffer<ITYPE> m;
            A() { m = adf::shared_buffer<ITYPE>::create({N}, 1, 1);
                  read_access(m.out[0]) = tiling({}); } };
        class B : public adf::graph { typedef uint8 byte_t; using word = byte_t;
            public: adf::shared_buffer<word> m; adf::shared_buffer<FFT_2D_TT_DATA> f;
            B() { m = adf::shared_buffer<word>::create({8}, 1, 1);
                  f = adf::shared_buffer<FFT_2D_TT_DATA>::create({8}, 1, 1);
                  read_access(m.out[0]) = tiling({}); read_access(f.out[0]) = tiling({}); } };
        template <typename T> class C : public adf::graph { public: adf::shared_buffer<T> m;
            C() { m = adf::shared_buffer<T>::create({8}, 1, 1);
                  read_access(m.out[0]) = tiling({}); } };"""
    found, skipped = ports(text)
    assert [(n, p.dtype, p.shape) for n, p in found.items()] == [
        ("A::m.out[0]", "int16", (4,)), ("B::m.out[0]", "uint8", (8,)),
        ("B::f.out[0]", "cint16", (8,))]
    problem = skipped[0]  # then C::m's access, as C::m was never created
    assert problem.startswith("m = shared_buffer<T>::create(... in class C: line 13, column 42")
    assert "found 'T' (a template parameter without a default" in problem
    assert "give it with -D T=..." in problem
    found, skipped = ports(text, {"ITYPE": "int8", "N": 8, "T": "adf::bfloat16"})
    assert skipped == []
    assert (found["A::m.out[0]"].dtype, found["A::m.out[0]"].shape) == ("int8", (8,))
    assert found["C::m.out[0]"].dtype == "bfloat16"


def test_arrays_of_shared_buffers_literal_and_in_a_loop():
    text = """
        class G : public adf::graph { public: adf::shared_buffer<int32> mtx[2];
        G() {
            mtx[0] = adf::shared_buffer<int32>::create({4}, 1, 1);
            mtx[1] = adf::shared_buffer<int32>::create({6}, 1, 1);
            read_access(mtx[0].out[0]) = tiling({.tiling_dimension = {2}});
            read_access(mtx[1].out[0]) = tiling({.tiling_dimension = {3}, .offset = {3}});
        } };"""
    found, skipped = ports(text)
    assert skipped == []
    assert indices(found["G::mtx[0].out[0]"]) == [0, 1]
    assert indices(found["G::mtx[1].out[0]"]) == [3, 4, 5]
    found, skipped = ports((EXAMPLES / "arrays.h").read_text())
    assert skipped == [] and len(found) == 4
    assert indices(found["Pingpong::mtx[1].out[0]"]) == list(range(8, 16))


# --- 5. kernel and external-buffer ports ---------------------------------------------------------

def test_kernel_ports_are_core_tile_and_external_buffers_shim():
    found, skipped = ports((EXAMPLES / "kernel_shim.h").read_text())
    assert skipped == []
    assert {n: (p.kind, p.direction, p.owner, p.shape) for n, p in found.items()} == {
        "Blocks::k1.out[0]": ("tile", "read", "kernel", (8, 4)),
        "Blocks::k2.in[0]": ("tile", "write", "kernel", None),
        "Blocks::ddr.in[0]": ("shim", "write", "external_buffer", (64,)),
        "Blocks::ddr.out[0]": ("shim", "read", "external_buffer", (64,))}
    assert found["Blocks::k1.out[0]"].context == "core tile read"
    assert indices(found["Blocks::k1.out[0]"])[:8] == [0, 8, 16, 24, 1, 9, 17, 25]


def test_a_kernel_port_needs_a_shape():
    text = """kernel k; k = kernel::create(f);
              read_access(k.in[0]) = tiling({.tiling_dimension = {4}});"""
    found, skipped = ports(text)
    assert found == {} and "expected .buffer_dimension in every tiling of the kernel" in \
        skipped[0]


# --- 6. a pasted statement ---------------------------------------------------------------------

def test_a_pasted_statement_with_buffer_dimension():
    found, skipped = ports((EXAMPLES / "pasted.cpp").read_text())
    assert skipped == []
    [(name, port)] = found.items()
    assert (name, port.kind, port.direction, port.owner) == (
        "mtxB.out[0]", "memtile", "read", "undeclared")
    _, skipped = ports("read_access(mtxB.out[0]) = tiling({.tiling_dimension = {4}});")
    assert "a statement on its own needs .buffer_dimension" in skipped[0]


# --- 7. one error does not stop the text --------------------------------------------------------

def test_every_readable_port_is_read_and_each_other_says_why():
    header = read_graph_header((EXAMPLES / "partly_broken.h").read_text())
    assert [p.name for p in header.ports] == ["Partly::mtx.in[0]", "Partly::mtx.out[0]"]
    assert [(s.line, s.column) for s in header.skipped] == [(12, 80), (15, 74), (16, 34)]
    assert "did you mean offset?" in str(header.skipped[0])
    assert "unknown name WIDTH" in str(header.skipped[1])
    assert "expected an output port index 0..1" in str(header.skipped[2])
    with pytest.raises(CppSyntaxError, match=r"^line 12, column 80: "):
        parse_graph_header((EXAMPLES / "partly_broken.h").read_text())


def test_lexical_and_syntax_errors_skip_only_their_part():
    text = ('m = shared_buffer<int16>::create({8}, 1, 2);\n'
            'source(k) = "k.cc;\n'
            'read_access(m.out[0]) = tiling({.tiling_dimension = {4}});\n'
            'read_access(m.out[1]) = tiling({.tiling_dimension = {4}, .offset = });\n'
            'int x = ((( ;\n'
            'write_access(m.in[0]) = tiling({});\n')
    header = read_graph_header(text)
    assert [p.name for p in header.ports] == ["m.out[0]", "m.in[0]"]
    assert [(s.line, s.column) for s in header.skipped] == [(2, 13), (4, 68)]


def test_columns_count_characters_after_non_ascii_text():
    text = ("// façade, 日本\nm = shared_buffer<int16>::create({8}, 1, 1); /* é */ "
            "read_access(m.out[0]) = tiling({.offset = {X}});")
    [problem] = read_graph_header(text).skipped
    assert (problem.line, problem.column) == (2, 97)


def test_every_example_header_reads():
    settings = (EXAMPLES / "settings.h").read_text()   # sizes only, included by another
    for path in sorted(EXAMPLES.iterdir()):
        if path.name == "settings.h":
            continue
        includes = [settings] if path.name == "uses_settings.h" else []
        header = read_graph_header(path.read_text(), includes=includes)
        assert header.ports, path
        assert bool(header.skipped) == (path.name == "partly_broken.h"), path


def test_includes_define_before_the_text_and_defines_win():
    text = """class G : public adf::graph { public: adf::shared_buffer<T> m; G() {
        m = adf::shared_buffer<T>::create({N}, 1, 1);
        read_access(m.out[0]) = tiling({.buffer_dimension = {N}}); } };"""
    first = "#define V 3\ntypedef int16 T;\n"
    second = "const int N = V * 2;\n"    # uses what the first include defined
    header = read_graph_header(text, includes=[first, second])
    assert [(p.dtype, p.program.stream_length()) for p in header.ports] == [("int16", 6)]
    header = read_graph_header(text, {"V": 5}, includes=[first, second])
    assert header.ports[0].program.stream_length() == 10
    # without the includes the names are unknown, and the errors say so
    assert "found 'T'" in str(read_graph_header(text).skipped[0])
    assert "unknown name V" in str(read_graph_header(text, includes=["typedef int16 T;", second])
                                   .skipped[0])


def test_repetition_and_num_buffers_reach_the_buffer():
    text = """class G : public adf::graph { public: adf::shared_buffer<int32> m;
        G() { m = adf::shared_buffer<int32>::create({4}, 1, 1);
              adf::num_buffers(m) = 2; adf::repetition_count(m) = 3;
              read_access(m.out[0]) = tiling({}); } };"""
    [spec] = parse_graph_header(text)
    assert (spec.name, spec.num_buffers, spec.repetition_count) == ("G::m", 2, 3)
    assert spec.read_access[0] == PortProgram([{}])


# --- fuzzing: the reader never raises for its text -------------------------------------------

@settings(max_examples=200, deadline=None)
@given(text=st.text())
@example(text="{" * 3000)
@example(text="class A { " * 500)
@example(text="\ud800 read_access(m.out[0]) = tiling({.buffer_dimension = {4}});")
def test_fuzz_the_reader_never_raises(text):
    header = read_graph_header(text)
    assert all(s.line >= 0 for s in header.skipped)


@settings(max_examples=100, deadline=None)
@given(cut=st.integers(0, 4000))
def test_fuzz_truncated_headers(cut):
    text = (EXAMPLES / "test_cases.h").read_text()
    read_graph_header(text[:cut])
