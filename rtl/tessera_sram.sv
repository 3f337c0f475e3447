// Simple dual-port synchronous RAM (one write, one registered read) with a write enable per lane.
//
// Each lane is its own memory array so synthesis infers one RAM per lane (or a vendor macro can
// replace this module); a read in the same cycle as a write to the same row returns the old data.
// With Broadcast set, the write data is one lane wide and goes to every enabled lane: a DRAM beat
// fills one lane of a wide row without building a row-wide copy of it.
module tessera_sram #(
  parameter int Depth = 1024,
  parameter int Lanes = 1,
  parameter int LaneWidth = 64,
  parameter bit Broadcast = 1'b0,
  localparam int AddrWidth = (Depth > 1) ? $clog2(Depth) : 1,
  localparam int WriteWidth = Broadcast ? LaneWidth : Lanes * LaneWidth
) (
  input  logic                           clk_i,
  input  logic [Lanes-1:0]               we_i,
  input  logic [AddrWidth-1:0]           waddr_i,
  input  logic [WriteWidth-1:0]          wdata_i,
  input  logic                           re_i,
  input  logic [AddrWidth-1:0]           raddr_i,
  output logic [Lanes*LaneWidth-1:0]     rdata_o
);

  for (genvar l = 0; l < Lanes; l++) begin : g_lane
    logic [LaneWidth-1:0] mem_q [Depth];
    logic [LaneWidth-1:0] rdata_q;
    logic [LaneWidth-1:0] wdata;

    if (Broadcast) begin : g_broadcast
      assign wdata = wdata_i[LaneWidth-1:0];
    end else begin : g_lane_data
      assign wdata = wdata_i[l * LaneWidth +: LaneWidth];
    end

    always_ff @(posedge clk_i) begin
      if (we_i[l]) mem_q[waddr_i] <= wdata;
      if (re_i) rdata_q <= mem_q[raddr_i];
    end

    assign rdata_o[l * LaneWidth +: LaneWidth] = rdata_q;
  end

`ifndef SYNTHESIS
  // A row past Depth does not exist (Depth need not be a power of two).
  WriteInRange: assert property (@(posedge clk_i) we_i != '0 |-> 32'(waddr_i) < Depth)
    else $error("tessera_sram: write to row %0d of %0d", waddr_i, Depth);
  ReadInRange: assert property (@(posedge clk_i) re_i |-> 32'(raddr_i) < Depth)
    else $error("tessera_sram: read of row %0d of %0d", raddr_i, Depth);
`endif

endmodule
