"""Reading the adf graph API's C++ (model/adf/): the tutorial, the spellings,
the errors, a render/parse round trip, and fuzzing of the parser and the BD decoder."""

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from tiling_strategies import tilings
from vectors import load

from aiedma.model import (
    AiedmaError,
    BufferDescriptor,
    PortProgram,
    TilingError,
    TilingParameters,
)
from aiedma.model.adf import (
    CppSyntaxError,
    SharedBufferSpec,
    parse_graph_header,
    parse_port_program,
    parse_tiling,
    to_cpp,
)
from aiedma.model.bd.fields import KINDS, RESERVED, WORDS

EXAMPLES = {e["name"]: e for e in load("tiling_examples.json")["examples"]}

# The tutorial's four kernels around one 10x6 memory-tile buffer, written as a
# graph header would be: the parser must skip everything but the buffer's lines.
TUTORIAL = r"""
// Tiling parameters tutorial: k1 and k2 write a 10x6 buffer, k3 and k4 read it.
#include <adf.h>
#include "kernels.h"

using namespace adf;

#define FRAME_LENGTH 10   /* dimension 0, contiguous */
constexpr int NFRAMES = 6;
static constexpr unsigned HALF = FRAME_LENGTH / 2;

class TilingGraph : public adf::graph {
public:
    kernel k1, k2, k3, k4;
    input_plio in1, in2;
    output_plio out1, out2;
    shared_buffer<int32> mtx;  // the memory-tile buffer

    TilingGraph() {
        k1 = kernel::create(kernel1);
        k2 = kernel::create(kernel2);
        k3 = kernel::create(kernel3);
        k4 = kernel::create(kernel4);
        source(k1) = "k1.cc"; source(k2) = "k2.cc";
        runtime<ratio>(k1) = 0.9;
        in1 = input_plio::create("In1", plio_64_bits, "data/in1.txt");

        mtx = shared_buffer<int32>::create({FRAME_LENGTH, NFRAMES}, 2, 2);

        connect<>(in1.out[0], k1.in[0]);
        connect<>(k1.out[0], mtx.in[0]);
        connect<> n2(k2.out[0], mtx.in[1]);
        connect<>(mtx.out[0], k3.in[0]);
        connect<>(mtx.out[1], k4.in[0]);
        dimensions(k1.out[0]) = {36};
        for (int i = 0; i < 4; i++) { location<kernel>(k1) = tile(i, 0); }

        // k1 writes 3x2 tiles row by row
        write_access(mtx.in[0]) = tiling({
            .buffer_dimension = {FRAME_LENGTH, NFRAMES},
            .tiling_dimension = {3, 2},
            .offset = {0, 0},
            .tile_traversal = {{.dimension = 0, .stride = 3, .wrap = 2},
                               {.dimension = 1, .stride = 2, .wrap = 3}}});
        // k2 writes 2x3 tiles column by column, from column 6
        adf::write_access(mtx.in[1]) = adf::tiling({
            .buffer_dimension = {FRAME_LENGTH, NFRAMES},
            .tiling_dimension = {2, 3},
            .offset = {HALF + 1, 0},
            .tile_traversal = {{.dimension=1, .stride=3, .wrap=2},
                               {.dimension=0, .stride=2, .wrap=2},},
        });
        read_access(mtx.out[0]) = tiling({.buffer_dimension = {10, 6},
                                          .tiling_dimension = {2, NFRAMES},
                                          .offset = {0, 0},
                                          .tile_traversal = {{0, 2, 2}}});   // positional
        read_access(mtx.out[1]) = tiling({.buffer_dimension = {10, 6},
                                          .tiling_dimension = {3, 6}, .offset = {4, 0},
                                          .tile_traversal = {{.order=0, .stride=3, .wrap=2}}});
        repetition_count(mtx) = 3;
        num_buffers(mtx) = 2;
        repetition_count(k1) = 4;   // a kernel's: not the buffer's business
    }
};
"""

K1 = """tiling({.buffer_dimension={10,6}, .tiling_dimension={3,2}, .offset={0,0},
  .tile_traversal={{.dimension=0,.stride=3,.wrap=2}, {.dimension=1,.stride=2,.wrap=3}}})"""


def _indices(program):
    return program.indices().tolist()


# --- the tutorial -------------------------------------------------------------------------

def test_tutorial_header_gives_the_worked_examples():
    [spec] = parse_graph_header(TUTORIAL)
    assert isinstance(spec, SharedBufferSpec)
    assert (spec.name, spec.dtype, spec.shape, spec.n_in, spec.n_out) == (
        "TilingGraph::mtx", "int32", (10, 6), 2, 2)  # every class its own namespace
    assert (spec.repetition_count, spec.num_buffers) == (3, 2)
    assert sorted(spec.write_access) == [0, 1] and sorted(spec.read_access) == [0, 1]
    for program, name in [(spec.write_access[0], "k1 write"), (spec.write_access[1], "k2 write"),
                          (spec.read_access[0], "k3 read"), (spec.read_access[1], "k4 read")]:
        assert isinstance(program, PortProgram)
        assert _indices(program) == EXAMPLES[name]["indices"], name
        assert program == PortProgram([EXAMPLES[name]["tiling"]])


def test_declaration_forms_prefixes_and_c_type_names():
    text = """
        adf::shared_buffer<int> a = adf::shared_buffer<int>::create({8}, 1, 1);
        auto b = shared_buffer<adf::uint16>::create({4, 2}, 1, 1);
        this->c = shared_buffer<uint8_t>::create({16}, 1, 1);
        adf::write_access(this->a.in[0]) = adf::tiling({.buffer_dimension = {8}});
        adf::read_access(b.out[0]) = tiling_parameters{.tiling_dimension = {2, 2}};
        adf::num_buffers(a) = 2;
        adf::repetition_count(this->c) = 5;
    """
    a, b, c = parse_graph_header(text)
    assert [(s.name, s.dtype, s.shape) for s in (a, b, c)] == [
        ("a", "int32", (8,)), ("b", "uint16", (4, 2)), ("c", "uint8", (16,))]
    assert (a.num_buffers, a.repetition_count, c.repetition_count) == (2, 1, 5)
    assert a.write_access[0].entries[0].buffer_dimension == (8,)
    assert b.read_access[0].entries[0].tiling_dimension == (2, 2)


def test_access_before_create_and_reassignment():
    text = """
        write_access(m.in[0]) = tiling({.buffer_dimension = {4}, .offset = {1}});
        m = shared_buffer<int16>::create({4}, 1, 1);
        write_access(m.in[0]) = tiling({.buffer_dimension = {4}});  // replaces the first
    """
    [spec] = parse_graph_header(text)
    assert spec.write_access[0] == PortProgram([{"buffer_dimension": [4]}])


def test_external_buffers_and_kernel_settings_are_not_ours():
    text = """
        ddr = external_buffer<int32>::create({64}, 0, 1);
        read_access(ddr.out[0]) = tiling({.buffer_dimension = {64}});
        repetition_count(k1) = 2;
        num_buffers(k1.in[0]) = 2;
    """
    assert parse_graph_header(text) == []


def test_a_header_without_buffers_is_empty():
    assert parse_graph_header("") == []
    assert parse_graph_header("int main() { return 0; }") == []


# --- spellings ------------------------------------------------------------------------------

def test_parse_tiling_reads_one_tiling():
    tp = parse_tiling(K1)
    assert tp == TilingParameters.from_dict(EXAMPLES["k1 write"]["tiling"])
    assert tp.indices().tolist() == EXAMPLES["k1 write"]["indices"]
    assert parse_tiling("{.buffer_dimension = {10, 6}};") == TilingParameters(
        buffer_dimension=[10, 6])
    assert parse_tiling("adf::tiling({})") == TilingParameters()


def test_positional_traversal_equals_designated():
    designated = parse_tiling(K1)
    positional = parse_tiling("tiling({.buffer_dimension={10,6}, .tiling_dimension={3,2},"
                              " .offset={0,0}, .tile_traversal={{0,3,2}, {1, 2, 3,}}})")
    mixed = parse_tiling("tiling({.buffer_dimension={10,6}, .tiling_dimension={3,2},"
                         " .offset={0,0}, .tile_traversal={{0,3,2},"
                         " {.wrap=3, .dimension=1, .stride=2}}})")
    assert designated == positional == mixed


def test_order_is_the_old_spelling_of_dimension():
    old = parse_tiling("tiling({.buffer_dimension={10,6}, .tiling_dimension={2,3},"
                       " .offset={6,0}, .tile_traversal={{.order=1, .stride=3, .wrap=2},"
                       " {.order=0, .stride=2, .wrap=2}}})")
    assert old.indices().tolist() == EXAMPLES["k2 write"]["indices"]
    with pytest.raises(TilingError, match=r"^line 1, column 57: tile_traversal\[0\].order=1: "
                                          "'order' is the old spelling"):
        parse_tiling("tiling({.buffer_dimension={4}, .tile_traversal={{.order=1, .dimension=0,"
                     " .stride=1, .wrap=1}}})")


def test_missing_traversal_fields_take_the_cpp_defaults():
    # traversing_parameters{} is {0, 0, 0}: a missing wrap is the model's wrap error.
    assert parse_tiling("{.buffer_dimension={4}, .tile_traversal={{.wrap=2}}}").tile_traversal[
        0].to_dict() == {"dimension": 0, "stride": 0, "wrap": 2}
    with pytest.raises(TilingError, match=r"^line 1, column 42: tile_traversal\[0\]\.wrap=0: "):
        parse_tiling("{.buffer_dimension={4}, .tile_traversal={{0, 1}}}")


def test_trailing_commas_everywhere():
    text = """tiling({.buffer_dimension={10,6,}, .tiling_dimension={3,2,}, .offset={0,0,},
              .tile_traversal={{.dimension=0,.stride=3,.wrap=2,}, {1,2,3,},},})"""
    assert parse_tiling(text) == parse_tiling(K1)
    program = parse_port_program("{" + K1 + ", " + K1 + ",}")
    assert len(program) == 2


@pytest.mark.parametrize("gap", ["/* c */", "// c\n", "\n\t", "/* a\n b */ // c\n  ", "\\\n"])
def test_comments_and_whitespace_between_every_token(gap):
    tokens = ("mtx = shared_buffer < int32 > :: create ( { 10 , 6 } , 1 , 1 ) ; "
              "write_access ( mtx . in [ 0 ] ) = tiling ( { . buffer_dimension = { 10 , 6 } , "
              ". tiling_dimension = { 3 , 2 } , . offset = { 0 , - 0 } , . tile_traversal = { { "
              ". dimension = 0 , . stride = 3 , . wrap = 2 } , { 1 , 2 , 3 } } } ) ;").split()
    [spec] = parse_graph_header(gap + gap.join(tokens) + gap)
    assert _indices(spec.write_access[0]) == EXAMPLES["k1 write"]["indices"]


def test_defines_and_constants_resolve_in_text_order():
    text = """
        #define W 10
        #define AREA (W * H)          /* evaluated where it is used, as cpp does */
        constexpr int H = W - 4;      // 6
        const int TW{W / 2 - 2}, TH = (H % 4);   // 3, 2
        static constexpr std::uint32_t STEPS = -(-7 / 2);   // C++ truncates: 3
        int const ROWS = AREA / W;    // 6
        #define FUNC(x) ((x) + 1)
        constexpr float RATIO = 0.5;
        tiling({.buffer_dimension = {W, ROWS}, .tiling_dimension = {TW, TH}, .offset = {0, 0},
                .tile_traversal = {{0, TW, 2}, {1, TH, STEPS}}})
    """
    assert parse_tiling(text) == parse_tiling(K1)
    for name, why in [("FUNC", "a function-like macro"), ("RATIO", "declared float")]:
        with pytest.raises(CppSyntaxError, match=f"{name} is not an integer constant: {why}"):
            parse_tiling(text.replace("{W, ROWS}", f"{{W, {name}}}"))


def test_undef_and_later_definitions():
    text = "#define N 3\n#undef N\n{.buffer_dimension = {N}}"
    with pytest.raises(CppSyntaxError, match=r"^line 3, column 23: unknown name N"):
        parse_tiling(text)
    text = "#define N 3\n#define N 5\n{.buffer_dimension = {N}}"
    assert parse_tiling(text).buffer_dimension == (5,)


def test_define_values_follow_redefinitions_and_stay_cheap():
    # A #define is evaluated where it is used: M sees each N in turn.
    text = "#define N 3\n#define M (N * 2)\n{.offset = {M,\n#define N 5\nM}}"
    assert parse_tiling(text).offset == (6, 10)
    # Evaluations are cached: 2**40 expansions would never finish.
    chain = "#define A0 1\n" + "".join(f"#define A{i} (A{i - 1} + A{i - 1})\n"
                                       for i in range(1, 41))
    assert parse_tiling(chain + "{.offset = {A30}}").offset == (2**30,)
    with pytest.raises(CppSyntaxError, match="expressions nest at most 100 deep"):
        parse_tiling(chain + "{.offset = {A40}}")


def test_crlf_line_endings_and_byte_order_mark():
    text = "\ufeff#define W 10\r\nm = shared_buffer<int>::create({W, \\\r\n 6}, 1, 1);\r\n"
    [spec] = parse_graph_header(text)
    assert spec.shape == (10, 6)
    with pytest.raises(CppSyntaxError, match=r"^line 4, column 35: unknown name X"):
        parse_graph_header(text + "  q = shared_buffer<int>::create({X}, 1, 1);\r\n")


def test_caller_defines_override_or_supply_names():
    text = "#define W 10\nconstexpr int H = 6;\n{.buffer_dimension = {W, H, D}}"
    got = parse_tiling(text, defines={"W": 12, "D": "W / 4 + 1"})  # -D W=12 -D D=W/4+1
    assert got.buffer_dimension == (12, 6, 4)
    assert parse_tiling(text, defines={"H": np.int64(2), "D": 1}).buffer_dimension == (10, 2, 1)
    with pytest.raises(CppSyntaxError, match=r"D \(given in defines\) is not an integer constant: "
                                             "expected an integer, found '1.5'"):
        parse_tiling(text, defines={"D": "1.5"})
    for bad in [{"D": True}, {"D": 1.0}, {"1D": 1}, {"D": "#define X"}, ["D"]]:
        with pytest.raises(CppSyntaxError, match="defines"):
            parse_tiling(text, defines=bad)


@pytest.mark.parametrize(("literal", "value"), [
    ("0xA", 10), ("0XaU", 10), ("6UL", 6), ("6ull", 6), ("0b110", 6), ("010", 8),
    ("1'000", 1000), ("0", 0), ("(2 + 3) * 2", 10), ("2 + 3 * 2", 8), ("-7 / 2 + 9", 6),
    ("-7 % 3 + 5", 4), ("- -3", 3), ("+4", 4),
])
def test_integer_literals_and_arithmetic(literal, value):
    assert parse_tiling(f"{{.offset = {{{literal}}}}}").offset == (value,)


def test_negative_offsets_and_optional_fields():
    five = parse_tiling("""tiling({.buffer_dimension = {256}, .tiling_dimension = {256},
                                   .offset = {-32}, .tile_traversal = {{0, 256, 1}}})""")
    assert five.indices().tolist() == EXAMPLES["1D zero padding before"]["indices"]
    six = parse_tiling("""tiling({.buffer_dimension = {0x100}, .tiling_dimension = {128},
                                  .offset = {-(16)}, .tile_traversal = {{0, 144, 2}},
                                  .boundary_dimension = {96}, .packet_port_id = 1,
                                  .phase = 2, .repetition = 1})""")
    assert six.indices().tolist() == EXAMPLES["1D zero padding and truncation"]["indices"]
    assert (six.packet_port_id, six.phase, six.boundary_dimension) == (1, 2, (96,))


def test_port_program_single_or_list():
    one = parse_port_program(K1 + ";")
    assert len(one) == 1 and one.entries[0] == parse_tiling(K1)
    two = parse_port_program("""
        #define FIRST {0, 2, 2}
        {
            tiling({.buffer_dimension = {10, 6}, .tiling_dimension = {2, 6},
                    .tile_traversal = {{0, 2, 2}}}),
            {.buffer_dimension = {10, 6}, .tiling_dimension = {3, 6}, .offset = {4, 0},
             .tile_traversal = {{0, 3, 2}}},
        }""")
    assert _indices(two) == EXAMPLES["k3 read"]["indices"] + EXAMPLES["k4 read"]["indices"]


# --- round trip -----------------------------------------------------------------------------

@settings(max_examples=250, deadline=None)
@given(tp=tilings(), phase=st.integers(0, 3), packet_port_id=st.integers(-1, 3))
def test_render_and_parse_round_trip(tp, phase, packet_port_id):
    tp = replace(tp, phase=phase, packet_port_id=packet_port_id)
    text = to_cpp(tp)
    assert parse_tiling(text) == tp
    assert parse_port_program(text) == PortProgram([tp])


@pytest.mark.parametrize("name", list(EXAMPLES))
def test_worked_examples_round_trip(name):
    program = PortProgram([EXAMPLES[name]["tiling"]] * 2)
    text = to_cpp(program)
    assert text.startswith("{tiling({") and text.count("tiling(") == 2
    assert parse_port_program(text) == program
    assert _indices(parse_port_program(text)) == EXAMPLES[name]["indices"] * 2


def test_to_cpp_refuses_other_values():
    with pytest.raises(TilingError, match="value='dict': must be a TilingParameters"):
        to_cpp({"buffer_dimension": [4]})


# --- errors: line, column, expected and found ----------------------------------------------

HEADER = "mtx = shared_buffer<int32>::create({10, 6}, 2, 2);\n"

H, T = parse_graph_header, parse_tiling

ERRORS = [
    ("unterminated brace", H, HEADER + "write_access(mtx.in[0]) = tiling({\n"
     "    .buffer_dimension = {10, 6},\n    .tiling_dimension = {3, 2}\n",
     CppSyntaxError, 5, 1,
     "expected ',' or '}' (to close the '{' at line 2, column 34), found the end of the text"),
    ("missing =", H, HEADER + "read_access(mtx.out[0]) = tiling({.buffer_dimension = {10, 6},\n"
     "    .tile_traversal = {{.dimension = 0, .stride 3, .wrap = 2}}});",
     CppSyntaxError, 3, 49, "expected '=' after .stride, found '3'"),
    ("unknown field", H, HEADER + "write_access(mtx.in[0]) = tiling({.tile_dimension = {3, 2}});",
     CppSyntaxError, 2, 36, "expected a tiling_parameters field (buffer_dimension, "
     "tiling_dimension, offset, tile_traversal, packet_port_id, repetition, phase, "
     "boundary_dimension), found 'tile_dimension' (did you mean tiling_dimension?)"),
    ("unknown identifier", H, "#define W 10\n" + HEADER +
     "read_access(mtx.out[0]) = tiling({.buffer_dimension = {W, HEIGHT}});",
     CppSyntaxError, 3, 59, "unknown name HEIGHT"),
    ("traversal with 4 numbers", H, HEADER +
     "read_access(mtx.out[0]) = tiling({.tile_traversal = {{0, 3, 2, 1}}});",
     CppSyntaxError, 2, 64, "expected '}' (a traversal has 3 numbers: dimension, stride, "
     "wrap), found '1'"),
    ("port index out of range", H, HEADER +
     "read_access(mtx.out[5]) = tiling({.buffer_dimension = {10, 6}});",
     CppSyntaxError, 2, 21, "expected an output port index 0..1 (mtx has n_out=2), found 5"),
    ("write to an output port", H, HEADER + "write_access(mtx.out[0]) = tiling({});",
     CppSyntaxError, 2, 18, "expected 'in' (write_access programs an input port: "
     "buffer.in[i]), found 'out'"),
    ("unknown buffer", H, HEADER + "write_access(mxt.in[0]) = tiling({});",
     CppSyntaxError, 2, 14, "expected a shared buffer created in this text (mtx), found 'mxt'"),
    ("zero wrap from the model", H, HEADER + "write_access(mtx.in[0]) = tiling({\n"
     "    .buffer_dimension = {10, 6}, .tiling_dimension = {3, 2},\n"
     "    .tile_traversal = {{.dimension = 0, .stride = 3, .wrap = 0}}});",
     TilingError, 4, 62, "tile_traversal[0].wrap=0: a loop needs at least 1 tile"),
    ("tile size zero from the model", H, HEADER +
     "write_access(mtx.in[0]) = tiling({.tiling_dimension = {3, 0}});",
     TilingError, 2, 59, "tiling_dimension[1]=0: tile sizes must be at least 1"),
    ("entries of different sizes", H, HEADER + "write_access(mtx.in[0]) = {\n"
     "    tiling({.buffer_dimension = {10, 6}}),\n    tiling({.buffer_dimension = {10, 5}})};",
     TilingError, 4, 33, "entries[1].buffer_dimension=[10, 5]: holds 50 elements"),
    ("empty port program", H, HEADER + "write_access(mtx.in[0]) = {};",
     TilingError, 2, 27, "entries=[]: a port program needs at least one entry"),
    ("field given twice", T, "tiling({.offset = {1}, .offset = {2}})",
     CppSyntaxError, 1, 25, "expected each field once, found .offset again "
     "(first at line 1, column 10)"),
    ("missing semicolon", H, HEADER + "repetition_count(mtx) = 2\nnum_buffers(mtx) = 2;",
     CppSyntaxError, 3, 1, "expected ';' after the repetition_count, found 'num_buffers'"),
    ("bad num_buffers", H, HEADER + "num_buffers(mtx) = 3;",
     TilingError, 2, 20, "num_buffers=3: must be 1 or 2 (ping-pong)"),
    ("bad shape", H, "b = shared_buffer<int8>::create({4, 0}, 1, 1);",
     TilingError, 1, 33, "shape=[4, 0]: a shared buffer has 1 to 4 dimensions"),
    ("bad element type", H, "b = shared_buffer<mystruct>::create({4}, 1, 1);",
     CppSyntaxError, 1, 19, "expected an adf element type (int4, "),
    ("buffer created twice", H, HEADER + HEADER, CppSyntaxError, 2, 1,
     "expected a new buffer name, found 'mtx' (created already at line 1, column 1)"),
    ("division by zero", T, "constexpr int Z = 0;\n{.buffer_dimension = {4 / Z}}",
     CppSyntaxError, 2, 27, "expected a divisor other than 0, found 'Z' (which is 0)"),
    ("float where an integer is needed", T, "{.buffer_dimension = {2.5}}",
     CppSyntaxError, 1, 23, "expected an integer, found '2.5'"),
    ("unterminated comment", T, "{.buffer_dimension = {4}} /* end",
     CppSyntaxError, 1, 27, "expected '*/' to close this comment, found the end of the text"),
    ("unterminated string", H, 'source(k) = "k.cc;\n', CppSyntaxError, 1, 13,
     "expected a closing \" for this string literal, found the end of the line"),
    ("too big", T, "{.buffer_dimension = {0xFFFFFFFFFFFFFFFF * 2}}", CppSyntaxError, 1, 44,
     "expected a value that fits in 64 bits, found one of 65 bits"),
    ("recursive define", T, "#define A (B + 1)\n#define B A\n{.offset = {A}}",
     CppSyntaxError, 3, 13, "A is not an integer constant: line 1, column 12: B is not an "
     "integer constant: line 2, column 11: A is defined in terms of itself"),
    ("text after the tiling", T, K1 + " extra", CppSyntaxError, 2, 90,
     "expected the end of the text, found 'extra'"),
]


@pytest.mark.parametrize(("parse", "text", "cls", "line", "column", "detail"),
                         [case[1:] for case in ERRORS], ids=[case[0] for case in ERRORS])
def test_errors_name_line_column_expected_and_found(parse, text, cls, line, column, detail):
    with pytest.raises(cls) as caught:
        parse(text)
    assert type(caught.value) is cls
    assert str(caught.value).startswith(f"line {line}, column {column}: {detail}"), \
        str(caught.value)
    if cls is CppSyntaxError:
        assert (caught.value.line, caught.value.column) == (line, column)


def test_input_must_be_text():
    with pytest.raises(CppSyntaxError, match="text='bytes': must be a str"):
        parse_graph_header(b"mtx = 1;")


# --- fuzzing: every input gives a result or the project's own error -------------------------

def _own_errors_only(parse, *args):
    """Run ``parse``; any exception must be an AiedmaError (returned for inspection)."""
    try:
        return parse(*args)
    except Exception as error:  # the point is to see every kind
        assert isinstance(error, AiedmaError), f"{type(error).__name__}: {error}"
        return error


PARSERS = [parse_graph_header, parse_port_program, parse_tiling]

FRAGMENTS = [
    "{", "}", "(", ")", "[", "]", ",", ";", "=", ".", "::", "->", "-", "+", "*", "/", "%", "<",
    ">", ":", "#define N ", "#undef N\n", "#include <adf.h>\n", "\n", " ", "//", "/*", "*/",
    "'", '"', "\\\n", "0", "3", "0x1F", "1.5", "08", "N", "mtx", "in", "out", "tiling",
    "adf", "shared_buffer", "external_buffer", "<int32>", "create", "write_access",
    "read_access", "repetition_count", "num_buffers", "constexpr int", "const", "static",
    ".buffer_dimension", ".tiling_dimension", ".offset", ".tile_traversal", ".dimension",
    ".order", ".stride", ".wrap", ".boundary_dimension", ".repetition", ".phase",
    ".packet_port_id", "{0, 3, 2}", "{10, 6}", "mtx.in[0]", "mtx.out[1]", "é", "\x00",
]


@settings(max_examples=300, deadline=None)
@given(text=st.text())
@example(text="(" * 400 + "1")
@example(text="{.offset={" + "-" * 3000 + "1}}")
def test_fuzz_arbitrary_text(text):
    for parse in PARSERS:
        _own_errors_only(parse, text)


@settings(max_examples=300, deadline=None)
@given(text=st.lists(st.sampled_from(FRAGMENTS), max_size=60).map("".join))
@example(text="#define A B\n#define B A\n{.offset={A}}")
@example(text="{.offset={" + "9999999999 * " * 500 + "1}}")  # once: str() of a 5000-digit int
def test_fuzz_token_soup(text):
    for parse in PARSERS:
        _own_errors_only(parse, text)


@st.composite
def mutated(draw, text):
    """``text`` with a few random characters inserted, deleted or replaced."""
    chars = list(text)
    alphabet = st.sampled_from("{}()[],;=.:-+*/%<>#'\"\\ \n0123456789xNabz_") | st.characters()
    for _ in range(draw(st.integers(1, 6))):
        where = draw(st.integers(0, len(chars)))
        action = draw(st.sampled_from(["insert", "delete", "replace"]))
        if action == "insert":
            chars.insert(where, draw(alphabet))
        elif where < len(chars):
            if action == "delete":
                del chars[where]
            else:
                chars[where] = draw(alphabet)
    return "".join(chars)


@settings(max_examples=300, deadline=None)
@given(text=mutated(TUTORIAL))
def test_fuzz_mutated_header(text):
    _own_errors_only(parse_graph_header, text)


@settings(max_examples=300, deadline=None)
@given(text=mutated("#define N 2\nconstexpr int M = N * 3;\n{" + K1 + ",\n  tiling({"
                    ".buffer_dimension={M, 10}, .offset={-1, N}, .boundary_dimension={6, 9},"
                    " .tile_traversal={{.order=0, .stride=N, .wrap=2}}, .repetition=2}),}"))
def test_fuzz_mutated_port_program(text):
    _own_errors_only(parse_port_program, text)


_WORD = (st.integers(0, 2**32 - 1) | st.integers(-(2**40), 2**40) | st.booleans()
         | st.floats(allow_nan=True) | st.integers(2**32, 2**70))


@st.composite
def bd_words(draw):
    """A kind (sometimes not one) and words: random, or legal-looking (reserved bits clear)."""
    if draw(st.integers(0, 4)):
        kind = draw(st.sampled_from(KINDS))
    else:
        kind = draw(st.text(max_size=8) | st.integers() | st.none() | st.sampled_from(KINDS))
    known = isinstance(kind, str) and kind in WORDS
    count = WORDS[kind] if known and draw(st.integers(0, 3)) else draw(st.integers(0, 10))
    style = draw(st.sampled_from(["any", "clear", "sparse"]))
    if not (known and count == WORDS[kind]) or style == "any":
        return kind, draw(st.lists(_WORD, min_size=count, max_size=count))
    if style == "clear":  # random fields, reserved bits 0
        return kind, [draw(st.integers(0, 2**32 - 1)) & ~RESERVED[kind][i] for i in range(count)]
    bits = st.lists(st.integers(0, 31), max_size=3)  # a few bits set: more words decode
    return kind, [sum({1 << b for b in draw(bits)}) & ~RESERVED[kind][i] for i in range(count)]


@settings(max_examples=400, deadline=None)
@pytest.mark.filterwarnings("ignore::aiedma.model.errors.UndocumentedBehaviourWarning")
@given(case=bd_words())
@example(case=("tile", [0] * 6))
@example(case=("memtile", [0, 0, 0, 0, 0, 0, 0, 1 << 31]))
def test_fuzz_bd_decoder(case):
    kind, words = case
    result = _own_errors_only(BufferDescriptor.decode, kind, words)
    if isinstance(result, BufferDescriptor):
        assert result.encode() == [int(w) for w in words]
        assert BufferDescriptor.decode(kind, result.encode()) == result


