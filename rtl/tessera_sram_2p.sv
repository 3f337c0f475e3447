// Dual-port synchronous RAM: port A reads or writes, port B reads; both reads registered.
//
// The micro-op SRAM: the loader writes through port A and the GEMM pipe reads through it (never
// in one cycle), the ALU pipe reads through port B. This is a block RAM's true dual-port mode, so
// the two readers cost no second copy. A read of port B in the cycle port A writes the same row
// returns the old data.
module tessera_sram_2p #(
  parameter int Depth = 1024,
  parameter int Width = 32,
  localparam int AddrWidth = (Depth > 1) ? $clog2(Depth) : 1
) (
  input  logic                 clk_i,
  input  logic                 a_we_i,
  input  logic                 a_re_i,
  input  logic [AddrWidth-1:0] a_addr_i,
  input  logic [Width-1:0]     a_wdata_i,
  output logic [Width-1:0]     a_rdata_o,
  input  logic                 b_re_i,
  input  logic [AddrWidth-1:0] b_addr_i,
  output logic [Width-1:0]     b_rdata_o
);

  logic [Width-1:0] mem_q [Depth];
  logic [Width-1:0] a_rdata_q, b_rdata_q;

  always_ff @(posedge clk_i) begin
    if (a_we_i) mem_q[a_addr_i] <= a_wdata_i;
    if (a_re_i) a_rdata_q <= mem_q[a_addr_i];
  end

  always_ff @(posedge clk_i) begin
    if (b_re_i) b_rdata_q <= mem_q[b_addr_i];
  end

  assign a_rdata_o = a_rdata_q;
  assign b_rdata_o = b_rdata_q;

`ifndef SYNTHESIS
  // A row past Depth does not exist (Depth need not be a power of two); port A serves one user a cycle.
  AInRange: assert property (@(posedge clk_i) (a_we_i || a_re_i) |-> 32'(a_addr_i) < Depth)
    else $error("tessera_sram_2p: port A row %0d of %0d", a_addr_i, Depth);
  BInRange: assert property (@(posedge clk_i) b_re_i |-> 32'(b_addr_i) < Depth)
    else $error("tessera_sram_2p: port B row %0d of %0d", b_addr_i, Depth);
  AOneUse: assert property (@(posedge clk_i) !(a_we_i && a_re_i))
    else $error("tessera_sram_2p: port A written and read in one cycle");
`endif

endmodule
