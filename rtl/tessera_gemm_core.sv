// The GEMM core: one micro-op's BATCH x BLOCK_IN x BLOCK_OUT multiply-accumulates per cycle, with
// the result registered (a pipeline stage of the compute module).
//
// acc[b][o] + sum_k inp[b][k] * wgt[o][k], all int8 operands and wrapping int32 accumulators,
// in VTA's SRAM layouts (inp [b][k], wgt [o][k], acc [b][o], element 0 in the low bits). The
// products are summed pairwise in place, a balanced tree of depth log2(BLOCK_IN). The result
// register only loads when enabled, so an idle core costs nothing in simulation.
//
// Two products per multiplier: outputs o and o+1 share the input inp[b][k], so one multiplication
// (wgt[o+1][k] * 2^16 + wgt[o][k]) * inp[b][k] yields both, the low product in the low 16 bits and
// the high one above. Two such packed products (k and k+1) are summed with a bias of 2^15 - 1: the
// low field then holds the two low products plus the bias, within [255, 65535], so it is exact in
// its 16 bits, unsigned, and never borrows from or carries into the high field, which holds the two
// high products' sum exactly. The bias comes off once per output (BLOCK_IN / 2 * (2^15 - 1)). This
// is a DSP48E1's multiply-add (25 x 18 multiplier, the bias or the other product through its 48-bit
// post-adder), so a GEMM core needs half as many DSPs as multiply-accumulates and its adder trees
// half the terms; the sums are exact, as before.
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
  localparam int OpWidth = 8;                 // int8 inputs and weights
  localparam int ProdWidth = 2 * OpWidth;     // one int8 x int8 product, and its field in a packed one
  localparam int PackWidth = ProdWidth + OpWidth + 1;  // 25: one DSP48E1 A operand
  localparam int PairWidth = PackWidth + OpWidth + 2;  // two packed products summed
  localparam int PairBias = (1 << (ProdWidth - 1)) - 1;  // 2^15 - 1: two low products lie in [-32512, 32768]
  localparam int Single = BlockIn % 2;        // an odd BLOCK_IN leaves one product alone
  localparam int SingleBias = 1 << (ProdWidth - 2);      // 2^14: one low product lies in [-16256, 16384]
  localparam int Terms = BlockIn / 2 + Single;  // terms of each output's adder tree (a power of two)
  localparam int SumWidth = ProdWidth + 2 + $clog2(Terms) + 1;  // a sum of Terms fields, signed
  localparam int Pairs = BlockOut / 2;        // output pairs sharing a multiplier
  localparam bit OddOut = (BlockOut % 2) != 0;
  localparam int TotalBias = (BlockIn / 2) * PairBias + Single * SingleBias;

  // hi * 2^16 + lo for int8 hi and lo, as a 25-bit signed value: lo's 16-bit two's complement below
  // and hi less lo's sign (its borrow) above, a 9-bit decrement rather than a 25-bit addition.
  function automatic logic signed [PackWidth-1:0] pack(input logic [OpWidth-1:0] hi, input logic [OpWidth-1:0] lo);
    logic [OpWidth:0] top;
    top = {hi[OpWidth-1], hi} - (OpWidth + 1)'(lo[OpWidth-1]);
    pack = {top, {OpWidth{lo[OpWidth-1]}}, lo};
  endfunction

  // The sum of Terms signed terms, a balanced tree.
  function automatic logic [SumWidth-1:0] tree_sum(input logic [Terms*SumWidth-1:0] t);
    logic [Terms*SumWidth-1:0] terms;
    terms = t;
    for (int width = Terms / 2; width >= 1; width = width / 2) begin
      for (int k = 0; k < width; k++)
        terms[k * SumWidth +: SumWidth] = terms[2 * k * SumWidth +: SumWidth] + terms[(2 * k + 1) * SumWidth +: SumWidth];
    end
    tree_sum = terms[SumWidth-1:0];
  endfunction

  function automatic logic [AccWidth-1:0] multiply_accumulate(
      input logic [tessera_config_pkg::INP_MATRIX_WIDTH-1:0] inp, input logic [tessera_config_pkg::WGT_MATRIX_WIDTH-1:0] wgt,
      input logic [AccWidth-1:0] acc);
    logic [Terms*SumWidth-1:0] lo_terms, hi_terms;
    // The summed packed products' top bits repeat the high field's sign.
    /* verilator lint_off UNUSEDSIGNAL */
    logic signed [PairWidth-1:0] prod;
    /* verilator lint_on UNUSEDSIGNAL */
    for (int b = 0; b < Batch; b++) begin
      for (int pr = 0; pr < Pairs; pr++) begin
        for (int t = 0; t < Terms; t++) begin
          prod = PairWidth'(pack(wgt[((2 * pr + 1) * BlockIn + 2 * t) * OpWidth +: OpWidth],
                                 wgt[(2 * pr * BlockIn + 2 * t) * OpWidth +: OpWidth]) *
                            $signed(inp[(b * BlockIn + 2 * t) * OpWidth +: OpWidth]));
          if (2 * t + 1 < BlockIn) begin
            prod = prod + PairWidth'(pack(wgt[((2 * pr + 1) * BlockIn + 2 * t + 1) * OpWidth +: OpWidth],
                                          wgt[(2 * pr * BlockIn + 2 * t + 1) * OpWidth +: OpWidth]) *
                                     $signed(inp[(b * BlockIn + 2 * t + 1) * OpWidth +: OpWidth])) + PairWidth'(PairBias);
          end else begin
            prod = prod + PairWidth'(SingleBias);
          end
          lo_terms[t * SumWidth +: SumWidth] = SumWidth'(prod[ProdWidth-1:0]);  // biased, unsigned
          hi_terms[t * SumWidth +: SumWidth] = SumWidth'($signed(prod[PairWidth-1:ProdWidth]));
        end
        multiply_accumulate[(b * BlockOut + 2 * pr) * 32 +: 32] =
            acc[(b * BlockOut + 2 * pr) * 32 +: 32] + 32'(tree_sum(lo_terms)) - 32'(TotalBias);
        multiply_accumulate[(b * BlockOut + 2 * pr + 1) * 32 +: 32] =
            acc[(b * BlockOut + 2 * pr + 1) * 32 +: 32] + 32'($signed(tree_sum(hi_terms)));
      end
      if (OddOut) begin
        for (int t = 0; t < Terms; t++) begin
          prod = '0;
          for (int k = 2 * t; k < 2 * t + 2 && k < BlockIn; k++) begin
            prod = prod + PairWidth'($signed(inp[(b * BlockIn + k) * OpWidth +: OpWidth]) *
                                     $signed(wgt[((BlockOut - 1) * BlockIn + k) * OpWidth +: OpWidth]));
          end
          lo_terms[t * SumWidth +: SumWidth] = SumWidth'(prod);
        end
        multiply_accumulate[(b * BlockOut + BlockOut - 1) * 32 +: 32] =
            acc[(b * BlockOut + BlockOut - 1) * 32 +: 32] + 32'($signed(tree_sum(lo_terms)));
      end
    end
  endfunction

  always_ff @(posedge clk_i) begin
    if (en_i) acc_o <= multiply_accumulate(inp_i, wgt_i, acc_i);
  end

endmodule
