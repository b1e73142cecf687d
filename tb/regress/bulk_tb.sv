// Bulk testbench of the address generator: stimulus and expected trace from files
// written by aiedma.tb.regress.verilog_bulk; every cycle compared inside the simulator.
//
// bulk_params.vh (generated) defines BULK_TOP, BULK_BD_WIDTH, BULK_BEAT_WIDTH, BULK_WIDTH
// (expected word: beat payload, then o.valid, i.ready, i.valid), BULK_DEPTH and
// BULK_BD_DEPTH (memory sizes, fixed per simulator so that one build serves every run).
// counts.hex gives the number of BDs and of cycles. Under Icarus the memories are read
// with $readmemh from bds.hex, pattern.hex and expected.hex; under Verilator they are
// filled through DPI from the raw little-endian files bds.bin, pattern.bin and
// expected.bin, which tb/regress/bulk_main.cpp reads with fread: Verilator's $readmemh reads a
// character at a time and took ~80 % of a run's time.
//
// Synchronous, without delays: under Verilator the clock comes from tb/regress/bulk_main.cpp
// (no timing scheduler, so a cycle costs two evaluations); under Icarus an initial block
// makes it. Two reset edges, then in cycle t: inputs come from pattern.hex (bit 0
// o.ready, bit 1 offer) and the next BD, the combinational outputs settle, and at the
// rising edge {i.valid, i.ready, o.valid, payload or 0} is compared with expected.hex.
// The first mismatch prints "BULK MISMATCH cycle <t> expected <hex> got <hex>" and stops
// with $fatal; a clean run prints "BULK PASS compared <n> cycles".
`include "bulk_params.vh"

`ifdef VERILATOR
module bulk_tb (input wire clk);
  wire go = 1'b1;
`else
module bulk_tb;
  reg clk = 1'b0;
  reg go = 1'b0;
  // go rises after time 0, so that Icarus evaluates every `always @*` of the design
  // (none runs before an input changes); then the clock runs.
  initial begin
    #1 go = 1'b1;
    forever #1 clk = ~clk;
  end
`endif
  reg [1:0] resets = 2'd0;
  integer t = 0;
  integer ptr = 0;
  integer nbds;
  integer ncycles;

  reg [`BULK_BD_WIDTH-1:0] bds [0:`BULK_BD_DEPTH-1];
  reg [1:0] pattern [0:`BULK_DEPTH-1];
  reg [`BULK_WIDTH-1:0] expected [0:`BULK_DEPTH-1];
  reg [31:0] counts [0:1];

`ifdef VERILATOR
  // tb/regress/bulk_main.cpp: bulk_load reads the .bin files (0: done; else the file that failed
  // or was not as long as the counts say), the others return one entry each.
  import "DPI-C" function int bulk_load(input int nbds, input int ncycles, input int bd_width);
  import "DPI-C" function void bulk_bd(input int i, output bit [`BULK_BD_WIDTH-1:0] bd);
  import "DPI-C" function int bulk_pattern(input int t);
  import "DPI-C" function longint unsigned bulk_expected(input int t);
  integer i;
  integer failed;
  bit [`BULK_BD_WIDTH-1:0] bd;
  longint unsigned word;
`endif

  // Amaranth's reset is synchronous: high for two rising edges.
  wire rst = go && resets != 2'd2;
  wire live = go && resets == 2'd2;
  wire [1:0] pat = pattern[t];
  wire o_ready = live && pat[0];
  wire i_valid = live && pat[1] && (ptr < nbds);
  wire [`BULK_BD_WIDTH-1:0] i_payload = bds[(ptr < nbds) ? ptr : 0];
  wire i_ready;
  wire o_valid;
  wire [`BULK_BEAT_WIDTH-1:0] o_payload;
  wire [`BULK_WIDTH-1:0] got = {i_valid, i_ready, o_valid,
                                o_valid ? o_payload : {`BULK_BEAT_WIDTH{1'b0}}};

  `BULK_TOP dut (
    .clk(clk), .rst(rst),
    .i__valid(i_valid), .i__ready(i_ready), .i__payload(i_payload),
    .o__valid(o_valid), .o__ready(o_ready), .o__payload(o_payload),
    .cut(1'b0)   // finish on TLAST is the S2MM engine's: never here
  );

  initial begin
    $readmemh("counts.hex", counts);
    nbds = counts[0];
    ncycles = counts[1];
    if (ncycles > `BULK_DEPTH || nbds > `BULK_BD_DEPTH || nbds < 1 || ncycles < 1) begin
      $display("BULK ERROR counts %0d BDs %0d cycles exceed the build", nbds, ncycles);
      $fatal(1);
    end
`ifdef VERILATOR
    failed = bulk_load(nbds, ncycles, `BULK_BD_WIDTH);
    if (failed != 0) begin
      $display("BULK ERROR reading %s", failed == 1 ? "bds.bin" : failed == 2 ? "pattern.bin"
               : "expected.bin");
      $fatal(1);
    end
    for (i = 0; i < nbds; i = i + 1) begin
      bulk_bd(i, bd);
      bds[i] = bd;
    end
    for (i = 0; i < ncycles; i = i + 1) begin
      pattern[i] = 2'(bulk_pattern(i));
      word = bulk_expected(i);
      expected[i] = word[`BULK_WIDTH-1:0];
    end
`else
    $readmemh("bds.hex", bds, 0, nbds - 1);
    $readmemh("pattern.hex", pattern, 0, ncycles - 1);
    $readmemh("expected.hex", expected, 0, ncycles - 1);
`endif
  end

  always @(posedge clk) begin
    if (rst) begin
      resets <= resets + 2'd1;
    end else if (live) begin
      if (got !== expected[t]) begin
        $display("BULK MISMATCH cycle %0d expected %h got %h", t, expected[t], got);
        $display("  (fields: i.valid i.ready o.valid, then the beat payload; BD %0d of %0d)",
                 ptr, nbds);
        $fatal(1);
      end
      if (i_valid && i_ready) ptr <= ptr + 1;
      t <= t + 1;
      if (t + 1 == ncycles) begin
        $display("BULK PASS compared %0d cycles", ncycles);
        $finish;
      end
    end
  end
endmodule
