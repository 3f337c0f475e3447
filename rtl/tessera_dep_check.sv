// Decides whether an instruction's dependency flags let it start: every token it pops must be
// there and every queue it pushes to must have room; otherwise says which queue it waits on.
`include "tessera_config.svh"

module tessera_dep_check #(
  parameter int QueueBits = tessera_host_pkg::StatusArgBits
) (
  input  logic [1:0] pop_req_i,
  input  logic [1:0] pop_empty_i,
  input  logic [2*QueueBits-1:0] pop_queue_i,
  input  logic [1:0] push_req_i,
  input  logic [1:0] push_full_i,
  input  logic [2*QueueBits-1:0] push_queue_i,
  output logic       ready_o,
  output tessera_host_pkg::status_t status_o
);

  always_comb begin
    ready_o = 1'b1;
    status_o.arg = '0;
    status_o.state = tessera_host_pkg::StateBusy;
    // Report the first blocking queue in a fixed order: pops, then pushes.
    for (int i = 1; i >= 0; i--) begin
      if (push_req_i[i] && push_full_i[i]) begin
        ready_o = 1'b0;
        status_o.arg = push_queue_i[QueueBits*i +: QueueBits];
        status_o.state = tessera_host_pkg::StateWaitPush;
      end
    end
    for (int i = 1; i >= 0; i--) begin
      if (pop_req_i[i] && pop_empty_i[i]) begin
        ready_o = 1'b0;
        status_o.arg = pop_queue_i[QueueBits*i +: QueueBits];
        status_o.state = tessera_host_pkg::StateWaitPop;
      end
    end
  end

`ifdef FORMAL
  // Properties proved over every input (tests/formal): an instruction starts exactly when none of
  // its pops finds an empty queue and none of its pushes a full one, and a waiting one names the
  // first blocking queue in the order pop 0, pop 1, push 0, push 1.
  logic [1:0] f_pop_blocked, f_push_blocked;
  assign f_pop_blocked = pop_req_i & pop_empty_i;
  assign f_push_blocked = push_req_i & push_full_i;
  always_comb begin
    ReadyExact: assert (ready_o == (f_pop_blocked == '0 && f_push_blocked == '0));
    if (f_pop_blocked[0]) begin
      NamesFirstPop: assert (status_o.state == tessera_host_pkg::StateWaitPop && status_o.arg == pop_queue_i[0 +: QueueBits]);
    end else if (f_pop_blocked[1]) begin
      NamesSecondPop: assert (status_o.state == tessera_host_pkg::StateWaitPop && status_o.arg == pop_queue_i[QueueBits +: QueueBits]);
    end else if (f_push_blocked[0]) begin
      NamesFirstPush: assert (status_o.state == tessera_host_pkg::StateWaitPush && status_o.arg == push_queue_i[0 +: QueueBits]);
    end else if (f_push_blocked[1]) begin
      NamesSecondPush: assert (status_o.state == tessera_host_pkg::StateWaitPush && status_o.arg == push_queue_i[QueueBits +: QueueBits]);
    end else begin
      BusyWhenReady: assert (status_o.state == tessera_host_pkg::StateBusy && status_o.arg == '0);
    end
  end
`endif

endmodule
