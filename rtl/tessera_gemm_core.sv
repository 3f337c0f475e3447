// The GEMM core: one micro-op's BATCH x BLOCK_IN x BLOCK_OUT multiply-accumulates, combinational.
//
// acc[b][o] + sum_k inp[b][k] * wgt[o][k], all int8 operands and wrapping int32 accumulators,
// in VTA's SRAM layouts (inp [b][k], wgt [o][k], acc [b][o], element 0 in the low bits). The
// products are summed pairwise in place, a balanced tree of depth log2(BLOCK_IN).
`include "tessera_config.svh"

module tessera_gemm_core (
  input  logic [`TESSERA_INP_MATRIX_WIDTH-1:0] inp_i,
  input  logic [`TESSERA_WGT_MATRIX_WIDTH-1:0] wgt_i,
  input  logic [`TESSERA_ACC_MATRIX_WIDTH-1:0] acc_i,
  output logic [`TESSERA_ACC_MATRIX_WIDTH-1:0] acc_o
);

  localparam int Batch = `TESSERA_BATCH;
  localparam int BlockIn = `TESSERA_BLOCK_IN;
  localparam int BlockOut = `TESSERA_BLOCK_OUT;

  for (genvar b = 0; b < Batch; b++) begin : g_batch
    for (genvar o = 0; o < BlockOut; o++) begin : g_out
      logic [BlockIn*32-1:0] terms;
      always_comb begin
        for (int k = 0; k < BlockIn; k++) begin
          terms[k * 32 +: 32] = 32'($signed(inp_i[(b * BlockIn + k) * 8 +: 8]) * $signed(wgt_i[(o * BlockIn + k) * 8 +: 8]));
        end
        for (int width = BlockIn / 2; width >= 1; width = width / 2) begin
          for (int k = 0; k < width; k++) terms[k * 32 +: 32] = terms[2 * k * 32 +: 32] + terms[(2 * k + 1) * 32 +: 32];
        end
        acc_o[(b * BlockOut + o) * 32 +: 32] = acc_i[(b * BlockOut + o) * 32 +: 32] + terms[31:0];
      end
    end
  end

endmodule
