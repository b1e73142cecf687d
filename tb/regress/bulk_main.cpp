// Clock and file loader of the bulk testbench under Verilator (tb/regress/bulk_tb.sv): no timing
// scheduler, a cycle is two evaluations; runs until the testbench calls $finish or $fatal.
//
// The memories come from raw little-endian files written by aiedma.tb.regress.verilog_bulk, read whole
// with fread and handed to the testbench through DPI: bds.bin (each BD payload as
// ceil(width / 64) 64-bit limbs, least significant first), pattern.bin (one byte per
// cycle) and expected.bin (one 64-bit word per cycle).
#include <cstdint>
#include <cstdio>
#include <memory>
#include <vector>

#include "Vbulk_tb.h"
#include "Vbulk_tb__Dpi.h"
#include "verilated.h"

namespace {
std::vector<std::uint64_t> bds;
std::vector<std::uint8_t> pattern;
std::vector<std::uint64_t> expected;
int bd_limbs = 1;
int bd_words = 1;

// The whole file into out: false unless it holds exactly count entries.
template <typename T>
bool load(const char* name, std::vector<T>& out, std::size_t count) {
    std::FILE* file = std::fopen(name, "rb");
    if (file == nullptr) return false;
    out.resize(count);
    const std::size_t got = std::fread(out.data(), sizeof(T), count, file);
    const bool longer = std::fgetc(file) != EOF;
    std::fclose(file);
    return got == count && !longer;
}
}  // namespace

int bulk_load(int nbds, int ncycles, int bd_width) {
    bd_limbs = (bd_width + 63) / 64;
    bd_words = (bd_width + 31) / 32;
    if (!load("bds.bin", bds, static_cast<std::size_t>(nbds) * bd_limbs)) return 1;
    if (!load("pattern.bin", pattern, ncycles)) return 2;
    if (!load("expected.bin", expected, ncycles)) return 3;
    return 0;
}

void bulk_bd(int i, svBitVecVal* bd) {
    const std::uint64_t* limbs = &bds[static_cast<std::size_t>(i) * bd_limbs];
    for (int w = 0; w < bd_words; ++w) {
        bd[w] = static_cast<svBitVecVal>(limbs[w / 2] >> (32 * (w % 2)));
    }
}

int bulk_pattern(int t) { return pattern[t]; }

unsigned long long bulk_expected(int t) { return expected[t]; }

int main(int argc, char** argv) {
    const std::unique_ptr<VerilatedContext> context{new VerilatedContext};
    context->commandArgs(argc, argv);
    const std::unique_ptr<Vbulk_tb> top{new Vbulk_tb{context.get()}};
    top->clk = 0;
    top->eval();
    while (!context->gotFinish()) {
        top->clk = 1;
        top->eval();
        top->clk = 0;
        top->eval();
    }
    top->final();
    return 0;
}
