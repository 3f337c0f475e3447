// How far a GEMM/ALU instruction's two loops move one index field: (iter_out-1)*factor_out +
// (iter_in-1)*factor_in, by shift-and-add, one multiplier bit per cycle.
//
// The compute module needs this reach only to decide whether two instructions may overlap, a few
// cycles after they start, so a serial multiplier (a few adders) does instead of two wide
// parallel ones (DSP blocks the GEMM core and the ALU need). It finishes as soon as both
// remaining multipliers are zero: at once for single iterations, in at most LOOP_ITER_WIDTH cycles.
`include "tessera_config.svh"

module tessera_loop_reach #(
  parameter int IterWidth = tessera_config_pkg::LOOP_ITER_WIDTH,
  parameter int FactorWidth = 32,
  parameter int ReachWidth = 32
) (
  input  logic                   clk_i,
  input  logic                   rst_ni,
  input  logic                   start_i,
  input  logic [IterWidth-1:0]   iter_out_i,
  input  logic [IterWidth-1:0]   iter_in_i,
  input  logic [FactorWidth-1:0] factor_out_i,
  input  logic [FactorWidth-1:0] factor_in_i,
  output logic                   done_o,
  output logic [ReachWidth-1:0]  reach_o
);

  logic [IterWidth-1:0]  mult_out_q, mult_in_q, mult_out_d, mult_in_d;
  logic [ReachWidth-1:0] cand_out_q, cand_in_q, cand_out_d, cand_in_d;
  logic [ReachWidth-1:0] reach_q, reach_d;

  // Zero iterations mean the instruction does nothing; its reach is then zero too.
  function automatic logic [IterWidth-1:0] last_index(input logic [IterWidth-1:0] iters);
    last_index = (iters == '0) ? '0 : iters - 1'b1;
  endfunction

  always_comb begin
    mult_out_d = mult_out_q;
    mult_in_d = mult_in_q;
    cand_out_d = cand_out_q;
    cand_in_d = cand_in_q;
    reach_d = reach_q;
    if (start_i) begin
      mult_out_d = last_index(iter_out_i);
      mult_in_d = last_index(iter_in_i);
      cand_out_d = ReachWidth'(factor_out_i);
      cand_in_d = ReachWidth'(factor_in_i);
      reach_d = '0;
    end else if (!done_o) begin
      reach_d = reach_q + (mult_out_q[0] ? cand_out_q : '0) + (mult_in_q[0] ? cand_in_q : '0);
      mult_out_d = mult_out_q >> 1;
      mult_in_d = mult_in_q >> 1;
      cand_out_d = cand_out_q << 1;
      cand_in_d = cand_in_q << 1;
    end
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      mult_out_q <= '0;
      mult_in_q <= '0;
      cand_out_q <= '0;
      cand_in_q <= '0;
      reach_q <= '0;
    end else begin
      mult_out_q <= mult_out_d;
      mult_in_q <= mult_in_d;
      cand_out_q <= cand_out_d;
      cand_in_q <= cand_in_d;
      reach_q <= reach_d;
    end
  end

  assign done_o = (mult_out_q == '0) && (mult_in_q == '0);
  assign reach_o = reach_q;

endmodule
