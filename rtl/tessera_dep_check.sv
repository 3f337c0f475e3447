// Decides whether an instruction's dependency flags let it start: every token it pops must be
// there and every queue it pushes to must have room; otherwise says which queue it waits on.
module tessera_dep_check (
  input  logic [1:0] pop_req_i,
  input  logic [1:0] pop_empty_i,
  input  logic [3:0] pop_queue_i,
  input  logic [1:0] push_req_i,
  input  logic [1:0] push_full_i,
  input  logic [3:0] push_queue_i,
  output logic       ready_o,
  output logic [7:0] status_o
);

  localparam logic [3:0] StateWaitPop = 4'd2;
  localparam logic [3:0] StateWaitPush = 4'd3;

  always_comb begin
    ready_o = 1'b1;
    status_o = 8'd1;
    // Report the first blocking queue in a fixed order: pops, then pushes.
    for (int i = 1; i >= 0; i--) begin
      if (push_req_i[i] && push_full_i[i]) begin
        ready_o = 1'b0;
        status_o = {2'b00, push_queue_i[2*i +: 2], StateWaitPush};
      end
    end
    for (int i = 1; i >= 0; i--) begin
      if (pop_req_i[i] && pop_empty_i[i]) begin
        ready_o = 1'b0;
        status_o = {2'b00, pop_queue_i[2*i +: 2], StateWaitPop};
      end
    end
  end

endmodule
