// One on-chip buffer of the pico core: a single-port RAM with a registered read, shaped so Yosys
// maps it to iCE40 EBRs (SB_RAM40_4K); a write returns the row's old data, as the EBR does.
module tessera_pico_ram #(
  parameter int Depth = 256,
  parameter int Width = 32,
  localparam int AddrWidth = (Depth > 1) ? $clog2(Depth) : 1
) (
  input  logic                 clk_i,
  input  logic                 we_i,
  input  logic [AddrWidth-1:0] addr_i,
  input  logic [Width-1:0]     wdata_i,
  output logic [Width-1:0]     rdata_o
);

  logic [Width-1:0] mem_q [Depth];

  always_ff @(posedge clk_i) begin
    if (we_i) mem_q[addr_i] <= wdata_i;
    rdata_o <= mem_q[addr_i];
  end

endmodule
