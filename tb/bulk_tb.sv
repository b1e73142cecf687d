// Bulk testbench of the address generator: stimulus and expected trace from $readmemh
// files written by aiedma.tb.bulk; every cycle compared inside the simulator.
//
// bulk_params.vh (generated) defines BULK_TOP, BULK_BD_WIDTH, BULK_BEAT_WIDTH, BULK_WIDTH
// (expected word: beat payload, then o.valid, i.ready, i.valid), BULK_DEPTH and
// BULK_BD_DEPTH (memory sizes). counts.hex gives the number of BDs and of cycles.
//
// Cycle t: inputs are set from pattern.hex (bit 0 o.ready, bit 1 offer) and the next
// BD, the combinational outputs settle, {i.valid, i.ready, o.valid, payload or 0} is
// compared with expected.hex, then the clock rises. The first mismatch prints
// "BULK MISMATCH cycle <t> expected <hex> got <hex>" and stops with $fatal; a clean run
// prints "BULK PASS compared <n> cycles".
`include "bulk_params.vh"

module bulk_tb;
  reg clk = 1'b0;
  reg rst = 1'b0;
  reg i_valid = 1'b0;
  reg o_ready = 1'b0;
  reg [`BULK_BD_WIDTH-1:0] i_payload = {`BULK_BD_WIDTH{1'b0}};
  wire i_ready;
  wire o_valid;
  wire [`BULK_BEAT_WIDTH-1:0] o_payload;

  `BULK_TOP dut (
    .clk(clk), .rst(rst),
    .i__valid(i_valid), .i__ready(i_ready), .i__payload(i_payload),
    .o__valid(o_valid), .o__ready(o_ready), .o__payload(o_payload)
  );

  reg [`BULK_BD_WIDTH-1:0] bds [0:`BULK_BD_DEPTH-1];
  reg [1:0] pattern [0:`BULK_DEPTH-1];
  reg [`BULK_WIDTH-1:0] expected [0:`BULK_DEPTH-1];
  reg [31:0] counts [0:1];

  integer t;
  integer ptr;
  integer nbds;
  integer ncycles;
  reg [1:0] pat;
  reg [`BULK_WIDTH-1:0] want;
  reg [`BULK_WIDTH-1:0] got;

  initial begin
    $readmemh("counts.hex", counts);
    nbds = counts[0];
    ncycles = counts[1];
    if (ncycles > `BULK_DEPTH || nbds > `BULK_BD_DEPTH || nbds < 1) begin
      $display("BULK ERROR counts %0d BDs %0d cycles exceed the build", nbds, ncycles);
      $fatal(1);
    end
    $readmemh("bds.hex", bds, 0, nbds - 1);
    $readmemh("pattern.hex", pattern, 0, ncycles - 1);
    $readmemh("expected.hex", expected, 0, ncycles - 1);
    ptr = 0;
    // Two reset cycles (Amaranth's reset is synchronous). rst rises after time 0 so that
    // Icarus evaluates every `always @*` of the design (none runs before an input changes).
    #1 rst = 1'b1;
    repeat (2) begin
      #1 clk = 1'b1;
      #1 clk = 1'b0;
    end
    rst = 1'b0;
    for (t = 0; t < ncycles; t = t + 1) begin
      pat = pattern[t];
      o_ready = pat[0];
      i_valid = pat[1] && (ptr < nbds);
      i_payload = bds[(ptr < nbds) ? ptr : 0];
      #1;
      got = {i_valid, i_ready, o_valid,
             o_valid ? o_payload : {`BULK_BEAT_WIDTH{1'b0}}};
      want = expected[t];
      if (got !== want) begin
        $display("BULK MISMATCH cycle %0d expected %h got %h", t, want, got);
        $display("  (fields: i.valid i.ready o.valid, then the beat payload; BD %0d of %0d)",
                 ptr, nbds);
        $fatal(1);
      end
      if (i_valid && i_ready) ptr = ptr + 1;
      clk = 1'b1;
      #1 clk = 1'b0;
    end
    $display("BULK PASS compared %0d cycles", ncycles);
    $finish;
  end
endmodule
