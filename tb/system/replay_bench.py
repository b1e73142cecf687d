"""The bench a Verilated top runs in: a Verilog module around it, and its C++ wrapper.

Verilator evaluates the logic that depends on a model's top-level inputs (its ``ico``
region) on every ``eval``, changed or not. With the design's ports as the model's
ports, a cycle of a replay costs three passes over the combinational logic: one when
the cycle's inputs are set, and the input logic again plus the logic after the
registers at the rising edge. :func:`bench_verilog` wraps the top in a module whose
only inputs are ``clk`` and ``strobe``: the design's other inputs are registers of the
bench, loaded from the C++ side through DPI (``aiedma_bench_fetch``), and its
outputs go back through DPI at each rising edge (``aiedma_bench_check``), before the
registers change. A replayed cycle is then one pass: the rising edge loads the next
cycle's inputs along with the design's registers, and the falling edge does nothing.

The C++ wrapper (:func:`bench_cxx`) keeps the same interface as a bare model (``set``
and ``get`` of a port by index in 32-bit words, ``eval``, ``edge``, ``replay``): a set
input is held in the bench's row and loaded by a pulse on ``strobe`` when the outputs
are next read or the clock next rises, so a design driven cycle by cycle from Python
sees its inputs as before.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["BENCH_TOP", "bench_cxx", "bench_verilog"]

BENCH_TOP = "aiedma_bench"
"""The bench module's name (the Verilated model's top)."""

_MIN_WORDS = 3   # a DPI vector over 64 bits is always an svBitVecVal array


def _layout(ports: Sequence[tuple[str, str, int]], direction: str) -> tuple[list[int], int]:
    """Per port, the 32-bit word it starts at in the bench's row of ``direction`` (-1 if
    it is not one of them; the clock is no input of the row); the row's words."""
    at, words = [], 0
    for kind, name, width in ports:
        if kind == direction and name != "clk":
            at.append(words)
            words += (width + 31) // 32
        else:
            at.append(-1)
    return at, max(words, _MIN_WORDS)


def _check(ports: Sequence[tuple[str, str, int]], top: str) -> None:
    names = [name for _, name, _ in ports]
    if "clk" not in names:
        raise ValueError(f"top {top}: no input named clk among its ports {names}: the "
                         "bench clocks the design through it")
    if "strobe" in names:
        raise ValueError(f"top {top}: a port is named strobe, the bench's own input")


def bench_verilog(ports: Sequence[tuple[str, str, int]], top: str) -> str:
    """The bench module around ``top`` (its ports ``(direction, name, width)``).

    Its ports: ``clk``, ``strobe`` and every output of ``top`` under its own name.

    Raises
    ------
    ValueError
        If ``top`` has no ``clk`` input, or a port named ``strobe``.
    """
    _check(ports, top)
    in_at, in_words = _layout(ports, "input")
    out_at, out_words = _layout(ports, "output")
    outputs = [(name, width) for kind, name, width in ports if kind == "output"]
    header = ", ".join(["input wire clk", "input wire strobe",
                        *(f"output wire [{width - 1}:0] {name}" for name, width in outputs)])
    connections, packing = [], []
    for (kind, name, width), i, o in zip(ports, in_at, out_at, strict=True):
        if name == "clk":
            connections.append(".clk(clk)")
        elif kind == "input":
            connections.append(f".{name}(row[{32 * i + width - 1}:{32 * i}])")
        else:
            connections.append(f".{name}({name})")
            packing.append(f"  assign outs[{32 * o + width - 1}:{32 * o}] = {name};")
            pad = -width % 32
            if pad:
                packing.append(f"  assign outs[{32 * o + width + pad - 1}:{32 * o + width}] = "
                               f"{pad}'h0;")
    used = sum((width + 31) // 32 for _, width in outputs)
    if used < out_words:
        packing.append(f"  assign outs[{32 * out_words - 1}:{32 * used}] = "
                       f"{32 * (out_words - used)}'h0;")
    return "\n".join([
        f"module {BENCH_TOP}({header});",
        f'  import "DPI-C" function void aiedma_bench_fetch(input bit advance, '
        f"output bit [{32 * in_words - 1}:0] row);",
        f'  import "DPI-C" function void aiedma_bench_check('
        f"input bit [{32 * out_words - 1}:0] outs);",
        f"  reg [{32 * in_words - 1}:0] row = {32 * in_words}'h0;",
        f"  reg [{32 * in_words - 1}:0] next_row;",
        f"  wire [{32 * out_words - 1}:0] outs;",
        *packing,
        f"  {top} dut({', '.join(connections)});",
        "  // A rising clock: the outputs of the cycle ending go out, the next cycle's inputs",
        "  // come in with the design's registers. A strobe loads the inputs set since.",
        "  always @(posedge clk or posedge strobe) begin",
        "    if (!strobe) aiedma_bench_check(outs);",
        "    aiedma_bench_fetch(!strobe, next_row);",
        "    row <= next_row;",
        "  end",
        "endmodule",
        "",
    ])


def _table(name: str, values: Sequence[int]) -> str:
    return f"constexpr int {name}[] = {{{', '.join(map(str, values)) or '0'}}};"


def _getters(ports: Sequence[tuple[str, str, int]]) -> list[str]:
    """The ``switch`` cases reading each output of the model by index."""
    cases = []
    for index, (kind, port, width) in enumerate(ports):
        if kind != "output":
            continue
        name = port.replace("__", "___05F")   # Verilator's escape of a double underscore
        words = (width + 31) // 32
        if width > 64:
            read = "".join(f"v[{w}] = t->{name}[{w}]; " for w in range(words))
        elif width > 32:
            read = f"v[0] = (uint32_t)t->{name}; v[1] = (uint32_t)(t->{name} >> 32); "
        else:
            read = f"v[0] = t->{name}; "
        cases.append(f"    case {index}: {read}break;")
    return cases


def bench_cxx(ports: Sequence[tuple[str, str, int]], top: str) -> str:
    """The C++ of the model's library: its life cycle, ``set``/``get`` by port index,
    ``eval``, ``edge`` and ``replay`` (see the module text), and the two DPI functions.

    Raises
    ------
    ValueError
        As :func:`bench_verilog`.
    """
    _check(ports, top)
    in_at, in_words = _layout(ports, "input")
    out_at, _ = _layout(ports, "output")
    clk = next(index for index, (_, name, _) in enumerate(ports) if name == "clk")
    words = [(width + 31) // 32 for _, _, width in ports]
    return "\n".join([
        '#include "Vtop.h"',
        '#include "Vtop__Dpi.h"',
        '#include "verilated.h"',
        "#include <cstdint>",
        "#include <cstring>",
        "namespace {",
        f"constexpr int IN_WORDS = {in_words};",
        f"constexpr int CLK = {clk};",
        _table("IN_AT", in_at),
        _table("OUT_AT", out_at),
        _table("WORDS", words),
        _CORE,
        "}  // namespace",
        'extern "C" {',
        "void aiedma_get(void* p, int port, uint32_t* v) {",
        "  Bench* b = static_cast<Bench*>(p);",
        "  if (port == CLK) { v[0] = b->top.clk; return; }",
        "  if (IN_AT[port] >= 0) {",
        "    std::memcpy(v, b->row + IN_AT[port], 4 * WORDS[port]);",
        "    return;",
        "  }",
        "  Vtop* t = &b->top;",
        "  switch (port) {", *_getters(ports), "  }",
        "}",
        _API,
        "}",
        "double sc_time_stamp() { return 0; }",
        "",
    ])


# The bench's state and what the DPI functions do with it. ``current`` is the bench
# being evaluated on this thread: DPI functions have no argument naming their model.
_CORE = """\
struct Replay {
  int64_t cycles, cycle, bad;
  int n_in; const int* in_port; const int* in_at; int in_stride; const uint32_t* in;
  int n_out; const int* out_port; const int* out_at; const int* out_words; int out_stride;
  const uint32_t* want; const uint32_t* care; uint32_t* got;
};
struct Bench {
  Vtop top;
  uint32_t row[IN_WORDS] = {};
  bool dirty = true;
  Replay* replay = nullptr;
};
thread_local Bench* current = nullptr;

// The inputs set since the last load into the design, settled.
void apply(Bench* b) {
  current = b;
  b->top.strobe = 1;
  b->top.eval();
  b->top.strobe = 0;
  b->top.eval();
  b->dirty = false;
}

// Replayed cycle c's inputs into the row (ports left out keep their value).
void load(Bench* b, const Replay& r, int64_t c) {
  const uint32_t* src = r.in + c * r.in_stride;
  for (int i = 0; i < r.n_in; ++i) {
    const int port = r.in_port[i];
    std::memcpy(b->row + IN_AT[port], src + r.in_at[i], 4 * WORDS[port]);
  }
}"""

_API = """\
void aiedma_bench_fetch(svBit advance, svBitVecVal* row) {
  Bench* b = current;
  Replay* r = b->replay;
  if (advance && r != nullptr && r->bad < 0 && ++r->cycle < r->cycles) load(b, *r, r->cycle);
  std::memcpy(row, b->row, sizeof b->row);
}
void aiedma_bench_check(const svBitVecVal* outs) {
  Replay* r = current->replay;
  if (r == nullptr || r->bad >= 0) return;
  const uint32_t* w = r->want + r->cycle * r->out_stride;
  const uint32_t* m = r->care + r->cycle * r->out_stride;
  uint32_t bad = 0;
  for (int o = 0; o < r->n_out; ++o) {
    const uint32_t* v = outs + OUT_AT[r->out_port[o]];
    uint32_t* g = r->got + r->out_at[o];
    for (int k = 0; k < r->out_words[o]; ++k) {
      g[k] = v[k];
      bad |= (v[k] ^ w[r->out_at[o] + k]) & m[r->out_at[o] + k];
    }
  }
  if (bad) r->bad = r->cycle;
}
void* aiedma_new() { return new Bench; }
void aiedma_delete(void* p) { delete static_cast<Bench*>(p); }
void aiedma_eval(void* p) {
  Bench* b = static_cast<Bench*>(p);
  if (b->dirty) apply(b);
}
void aiedma_set(void* p, int port, const uint32_t* v) {
  Bench* b = static_cast<Bench*>(p);
  if (port == CLK) {
    b->top.clk = v[0] & 1;
  } else if (IN_AT[port] >= 0) {
    std::memcpy(b->row + IN_AT[port], v, 4 * WORDS[port]);
    b->dirty = true;
  }
}
// A rising clock edge with the inputs set, then the clock low again.
void aiedma_edge(void* p) {
  Bench* b = static_cast<Bench*>(p);
  if (b->dirty) apply(b);
  current = b;
  b->top.clk = 1;
  b->top.eval();
  b->top.clk = 0;
  b->top.eval();
}
// A recorded run, one row of inputs a cycle, every compared output checked under its
// care mask at the cycle's rising edge; the first cycle with a difference, or -1.
int64_t aiedma_replay(void* p, int64_t cycles,
    int n_in, const int* in_port, const int* in_at, int in_stride, const uint32_t* in,
    int n_out, const int* out_port, const int* out_at, const int* out_words, int out_stride,
    const uint32_t* want, const uint32_t* care, uint32_t* got) {
  Bench* b = static_cast<Bench*>(p);
  if (cycles <= 0) return -1;
  Replay r{cycles, 0, -1, n_in, in_port, in_at, in_stride, in,
           n_out, out_port, out_at, out_words, out_stride, want, care, got};
  load(b, r, 0);
  apply(b);
  b->replay = &r;
  while (r.cycle < cycles && r.bad < 0) {
    b->top.clk = 1;
    b->top.eval();
    b->top.clk = 0;
    b->top.eval();
  }
  b->replay = nullptr;
  return r.bad;
}"""
