// The GEMM core: one micro-op's BATCH x BLOCK_IN x BLOCK_OUT multiply-accumulates per cycle, with
// the result registered (a pipeline stage of the compute module).
//
// acc[b][o] + sum_k inp[b][k] * wgt[o][k], all int8 operands and wrapping int32 accumulators,
// in VTA's SRAM layouts (inp [b][k], wgt [o][k], acc [b][o], element 0 in the low bits). The
// products are summed pairwise in place, a balanced tree of depth log2(BLOCK_IN). The result
// register only loads when enabled, so an idle core costs nothing in simulation.
`include "tessera_config.svh"

module tessera_gemm_core (
  input  logic                                 clk_i,
  input  logic                                 en_i,
  input  logic [tessera_config_pkg::INP_MATRIX_WIDTH-1:0] inp_i,
  input  logic [tessera_config_pkg::WGT_MATRIX_WIDTH-1:0] wgt_i,
  input  logic [tessera_config_pkg::ACC_MATRIX_WIDTH-1:0] acc_i,
  output logic [tessera_config_pkg::ACC_MATRIX_WIDTH-1:0] acc_o
);

  localparam int Batch = tessera_config_pkg::BATCH;
  localparam int BlockIn = tessera_config_pkg::BLOCK_IN;
  localparam int BlockOut = tessera_config_pkg::BLOCK_OUT;
  localparam int AccWidth = tessera_config_pkg::ACC_MATRIX_WIDTH;

  function automatic logic [AccWidth-1:0] multiply_accumulate(
      input logic [tessera_config_pkg::INP_MATRIX_WIDTH-1:0] inp, input logic [tessera_config_pkg::WGT_MATRIX_WIDTH-1:0] wgt,
      input logic [AccWidth-1:0] acc);
    logic [BlockIn*32-1:0] terms;
    for (int b = 0; b < Batch; b++) begin
      for (int o = 0; o < BlockOut; o++) begin
        for (int k = 0; k < BlockIn; k++) begin
          terms[k * 32 +: 32] = 32'($signed(inp[(b * BlockIn + k) * 8 +: 8]) * $signed(wgt[(o * BlockIn + k) * 8 +: 8]));
        end
        for (int width = BlockIn / 2; width >= 1; width = width / 2) begin
          for (int k = 0; k < width; k++) terms[k * 32 +: 32] = terms[2 * k * 32 +: 32] + terms[(2 * k + 1) * 32 +: 32];
        end
        multiply_accumulate[(b * BlockOut + o) * 32 +: 32] = acc[(b * BlockOut + o) * 32 +: 32] + terms[31:0];
      end
    end
  endfunction

  always_ff @(posedge clk_i) begin
    if (en_i) acc_o <= multiply_accumulate(inp_i, wgt_i, acc_i);
  end

endmodule
