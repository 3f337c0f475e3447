// Synchronous first-word-fall-through FIFO; the instruction queues between fetch and the modules.
//
// The head is read combinationally from the read pointer, a register, so FPGA synthesis can map the
// array to LUT RAM or, absorbing the pointer into the read port, to block RAM. LutRam asks for LUT
// RAM (the ram_style attribute Vivado and Yosys honour), for deep queues in configs whose SRAMs
// need the block RAM.
module tessera_fifo #(
  parameter int Width = 32,
  parameter int Depth = 8,
  parameter bit LutRam = 1'b0,
  localparam int PtrWidth = (Depth > 1) ? $clog2(Depth) : 1,
  localparam int CountWidth = $clog2(Depth + 1)
) (
  input  logic                  clk_i,
  input  logic                  rst_ni,
  input  logic                  clear_i,
  input  logic                  push_i,
  input  logic [Width-1:0]      wdata_i,
  input  logic                  pop_i,
  output logic [Width-1:0]      rdata_o,
  output logic                  empty_o,
  output logic                  full_o,
  output logic [CountWidth-1:0] count_o
);

  logic [PtrWidth-1:0]   wr_ptr_q, rd_ptr_q;
  // The read pointer's successor, kept ready: the next read address (which block RAM takes into
  // its own address register) is then one choice after a pop, not an increment and a wrap.
  logic [PtrWidth-1:0]   rd_ptr_next_q;
  logic [CountWidth-1:0] count_q;

  // Empty and full are registers, set from the count before the change, so the producers' and
  // consumers' handshakes do not also go through the count's comparison.
  logic empty_q, full_q;
  logic do_push, do_pop;
  assign do_push = push_i && !full_q;
  assign do_pop = pop_i && !empty_q;

`ifdef FORMAL
  // The array slot the formal properties below look into (tracked entry's).
  logic [PtrWidth-1:0] f_slot;
  logic [Width-1:0]    f_slot_data;
`endif

  function automatic logic [PtrWidth-1:0] next_ptr(input logic [PtrWidth-1:0] p);
    next_ptr = (32'(p) == Depth - 1) ? '0 : p + 1'b1;
  endfunction

  if (LutRam) begin : g_lutram
    (* ram_style = "distributed" *) logic [Width-1:0] mem_q [Depth];
    always_ff @(posedge clk_i) begin
      if (do_push) mem_q[wr_ptr_q] <= wdata_i;
    end
    assign rdata_o = mem_q[rd_ptr_q];
`ifdef FORMAL
    assign f_slot_data = mem_q[f_slot];
`endif
  end else begin : g_any
    logic [Width-1:0] mem_q [Depth];
    always_ff @(posedge clk_i) begin
      if (do_push) mem_q[wr_ptr_q] <= wdata_i;
    end
    assign rdata_o = mem_q[rd_ptr_q];
`ifdef FORMAL
    assign f_slot_data = mem_q[f_slot];
`endif
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni || clear_i) begin
      wr_ptr_q <= '0;
      rd_ptr_q <= '0;
      rd_ptr_next_q <= next_ptr('0);
      count_q  <= '0;
      empty_q  <= 1'b1;
      full_q   <= 1'b0;
    end else begin
      if (do_push) wr_ptr_q <= next_ptr(wr_ptr_q);
      if (do_pop) begin
        rd_ptr_q <= rd_ptr_next_q;
        rd_ptr_next_q <= next_ptr(rd_ptr_next_q);
      end
      if (do_push && !do_pop) begin
        count_q <= count_q + 1'b1;
        empty_q <= 1'b0;
        full_q  <= 32'(count_q) == Depth - 1;
      end else if (do_pop && !do_push) begin
        count_q <= count_q - 1'b1;
        empty_q <= count_q == CountWidth'(1);
        full_q  <= 1'b0;
      end
    end
  end

  assign empty_o = empty_q;
  assign full_o = full_q;
  assign count_o = count_q;

`ifndef SYNTHESIS
  // Producers check full and consumers empty first: a push into a full queue would drop an
  // instruction and a pop of an empty one would execute a stale entry.
  PushNotFull: assert property (@(posedge clk_i) disable iff (!rst_ni || clear_i) push_i |-> !full_o)
    else $error("tessera_fifo: push while full");
  PopNotEmpty: assert property (@(posedge clk_i) disable iff (!rst_ni || clear_i) pop_i |-> !empty_o)
    else $error("tessera_fifo: pop while empty");
`endif

`ifdef FORMAL
  // Properties proved by k-induction (tests/formal): the flags are exact, and an arbitrary pushed
  // entry leaves at the pop its position says, with its data: so nothing is lost, duplicated or
  // reordered. The design starts in reset; push and pop are otherwise unconstrained.
  logic f_past_valid = 1'b0;
  always_ff @(posedge clk_i) f_past_valid <= 1'b1;
  always_comb if (!f_past_valid) assume (!rst_ni);

  // The pointers, the count and the flags agree.
  logic [PtrWidth:0] f_occupied;
  assign f_occupied = (wr_ptr_q >= rd_ptr_q) ? (PtrWidth + 1)'(wr_ptr_q - rd_ptr_q)
                                             : (PtrWidth + 1)'(Depth) - (PtrWidth + 1)'(rd_ptr_q - wr_ptr_q);
  always_comb begin
    if (f_past_valid) begin
      FlagsExact: assert (empty_q == (count_q == '0) && full_q == (32'(count_q) == Depth) && 32'(count_q) <= Depth);
      PointersInRange: assert (32'(wr_ptr_q) < Depth && 32'(rd_ptr_q) < Depth && rd_ptr_next_q == next_ptr(rd_ptr_q));
      CountMatchesPointers: assert (full_q ? (wr_ptr_q == rd_ptr_q) : (32'(f_occupied) % Depth == 32'(count_q)));
    end
  end

  // The count moves by exactly the accepted pushes and pops.
  always_ff @(posedge clk_i) begin
    if (f_past_valid && $past(rst_ni) && !$past(clear_i) && rst_ni && !clear_i) begin
      CountFollowsHandshakes: assert (count_q == $past(count_q) + CountWidth'($past(do_push)) - CountWidth'($past(do_pop)));
    end
  end

  // One tracked entry: chosen at any accepted push (f_pick), it has f_ahead entries before it and
  // must be the head, with its data, when they are gone.
  logic f_pick;
  assign f_pick = $anyseq;
  logic f_tracking = 1'b0;
  logic [Width-1:0] f_data;
  logic [CountWidth-1:0] f_ahead;
  always_ff @(posedge clk_i) begin
    if (!rst_ni || clear_i) begin
      f_tracking <= 1'b0;
    end else if (f_tracking) begin
      if (do_pop) begin
        if (f_ahead == '0) f_tracking <= 1'b0;
        else f_ahead <= f_ahead - 1'b1;
      end
    end else if (do_push && f_pick) begin
      f_tracking <= 1'b1;
      f_data <= wdata_i;
      f_ahead <= count_q - CountWidth'(do_pop);
    end
  end
  logic [PtrWidth:0] f_slot_sum;
  assign f_slot_sum = (PtrWidth + 1)'(rd_ptr_q) + (PtrWidth + 1)'(f_ahead);
  assign f_slot = (32'(f_slot_sum) >= Depth) ? PtrWidth'(32'(f_slot_sum) - Depth) : PtrWidth'(f_slot_sum);
  always_comb begin
    if (f_past_valid && f_tracking) begin
      TrackedEntryHeld: assert (f_ahead < count_q && f_slot_data == f_data);
      TrackedEntryLeavesInOrder: assert (f_ahead != '0 || (!empty_o && rdata_o == f_data));
    end
  end
`endif

endmodule
