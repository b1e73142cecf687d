// Clock of the bulk testbench under Verilator (tb/bulk_tb.sv): no timing scheduler, a
// cycle is two evaluations. Runs until the testbench calls $finish or $fatal.
#include <memory>

#include "Vbulk_tb.h"
#include "verilated.h"

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
