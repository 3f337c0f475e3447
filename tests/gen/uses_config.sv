// Lint check of the generated SystemVerilog include: a module sized entirely by its macros.
`include "tessera_config.svh"

module uses_config (
  input  logic                                   clk_i,
  // Only the y_size field is extracted; the rest of the instruction is deliberately unused.
  /* verilator lint_off UNUSEDSIGNAL */
  input  logic [`TESSERA_INS_WIDTH-1:0]          insn_i,
  /* verilator lint_on UNUSEDSIGNAL */
  output logic [`TESSERA_INSN_MEM_Y_SIZE_W-1:0]  y_size_o
);
  logic [`TESSERA_INSN_MEM_Y_SIZE_W-1:0] y_size_q;
  always_ff @(posedge clk_i) begin
    y_size_q <= insn_i[`TESSERA_INSN_MEM_Y_SIZE_LO +: `TESSERA_INSN_MEM_Y_SIZE_W];
  end
  assign y_size_o = y_size_q;
endmodule
