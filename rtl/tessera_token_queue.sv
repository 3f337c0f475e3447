// Dependency-token queue between two modules: tokens carry no data, so it is a bounded counter.
module tessera_token_queue #(
  parameter int Depth = 512,
  localparam int CountWidth = $clog2(Depth + 1)
) (
  input  logic                  clk_i,
  input  logic                  rst_ni,
  input  logic                  clear_i,
  input  logic                  push_i,
  input  logic                  pop_i,
  output logic                  empty_o,
  output logic                  full_o,
  output logic [CountWidth-1:0] count_o
);

  logic [CountWidth-1:0] count_q;
  // Empty and full are registers, set from the count before the change, so a dependency check
  // reading them does not also go through the count's comparison.
  logic empty_q, full_q;
  logic do_push, do_pop;
  assign do_push = push_i && !full_q;
  assign do_pop = pop_i && !empty_q;

  always_ff @(posedge clk_i) begin
    if (!rst_ni || clear_i) begin
      count_q <= '0;
      empty_q <= 1'b1;
      full_q  <= 1'b0;
    end else if (do_push && !do_pop) begin
      count_q <= count_q + 1'b1;
      empty_q <= 1'b0;
      full_q  <= 32'(count_q) == Depth - 1;
    end else if (do_pop && !do_push) begin
      count_q <= count_q - 1'b1;
      empty_q <= count_q == CountWidth'(1);
      full_q  <= 1'b0;
    end
  end

  assign empty_o = empty_q;
  assign full_o = full_q;
  assign count_o = count_q;

`ifndef SYNTHESIS
  // The dependency checks wait for a token or for room first: a lost token deadlocks the program,
  // a token taken from nothing breaks the order it guards.
  PushNotFull: assert property (@(posedge clk_i) disable iff (!rst_ni || clear_i) push_i |-> !full_o)
    else $error("tessera_token_queue: push while full");
  PopNotEmpty: assert property (@(posedge clk_i) disable iff (!rst_ni || clear_i) pop_i |-> !empty_o)
    else $error("tessera_token_queue: pop while empty");
`endif

`ifdef FORMAL
  // Properties proved by k-induction (tests/formal): the flags are exact and the count moves by
  // exactly the accepted pushes and pops, so no token is lost or made up. The design starts in
  // reset; push and pop are otherwise unconstrained.
  logic f_past_valid = 1'b0;
  always_ff @(posedge clk_i) f_past_valid <= 1'b1;
  always_comb if (!f_past_valid) assume (!rst_ni);

  always_comb begin
    if (f_past_valid) begin
      FlagsExact: assert (empty_q == (count_q == '0) && full_q == (32'(count_q) == Depth) && 32'(count_q) <= Depth);
    end
  end
  always_ff @(posedge clk_i) begin
    if (f_past_valid && $past(rst_ni) && !$past(clear_i) && rst_ni && !clear_i) begin
      CountFollowsHandshakes: assert (count_q == $past(count_q) + CountWidth'($past(do_push)) - CountWidth'($past(do_pop)));
    end
    if (f_past_valid && (!$past(rst_ni) || $past(clear_i))) begin
      ClearEmpties: assert (count_q == '0);
    end
  end
`endif

endmodule
