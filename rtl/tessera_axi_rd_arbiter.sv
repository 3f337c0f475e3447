// Shares the AXI4 read channels between the modules that read DRAM (fetch, load, compute).
//
// Clients issue whole bursts (address, beats - 1) and receive their beats in order: with a single
// AXI ID the responses come back in request order, so an order queue of client numbers routes
// each R beat. Several bursts may be outstanding, which hides the DRAM latency; every client must
// keep accepting its beats (none may stall the shared R channel indefinitely). Read data is
// registered before it reaches the clients.
`include "tessera_config.svh"

module tessera_axi_rd_arbiter #(
  parameter int Clients = 3,
  parameter int BusWidth = 64,
  parameter int MaxOutstanding = 16,
  localparam int ClientWidth = (Clients > 1) ? $clog2(Clients) : 1
) (
  input  logic                          clk_i,
  input  logic                          rst_ni,
  // Client side, one lane per client.
  input  logic [Clients-1:0]            req_valid_i,
  input  logic [Clients*32-1:0]         req_addr_i,
  input  logic [Clients*8-1:0]          req_len_i,
  output logic [Clients-1:0]            req_ready_o,
  output logic [Clients-1:0]            rsp_valid_o,
  output logic [BusWidth-1:0]           rsp_data_o,
  output logic                          rsp_last_o,
  input  logic [Clients-1:0]            rsp_ready_i,
  // Error response seen (pulse) and the client it belongs to.
  output logic                          rsp_error_o,
  output logic [ClientWidth-1:0]        rsp_error_client_o,
  // AXI4 master read channels.
  output logic [31:0]                   m_axi_araddr_o,
  output logic [7:0]                    m_axi_arlen_o,
  output logic [2:0]                    m_axi_arsize_o,
  output logic [1:0]                    m_axi_arburst_o,
  output logic                          m_axi_arvalid_o,
  input  logic                          m_axi_arready_i,
  input  logic [BusWidth-1:0]           m_axi_rdata_i,
  input  logic [1:0]                    m_axi_rresp_i,
  input  logic                          m_axi_rlast_i,
  input  logic                          m_axi_rvalid_i,
  output logic                          m_axi_rready_o
);

  localparam logic [2:0] BeatSize = 3'($clog2(BusWidth / 8));

  // Address channel register: one request held until the slave takes it.
  logic                   ar_valid_q;
  logic [31:0]            ar_addr_q;
  logic [7:0]             ar_len_q;

  // The grant is a register: the client it names is accepted the next cycle the address channel
  // and the order queue have room, so no client's request logic feeds another's through the arbiter
  // in one cycle (the request handshake was the design's longest path). A grant whose client
  // withdrew its request (a restart) is dropped.
  logic                   grant_valid_q, grant_valid_d;
  logic [ClientWidth-1:0] grant_q, grant_d;

  // Order queue of the clients whose bursts are outstanding.
  logic                   order_push, order_pop, order_empty, order_full;
  logic [ClientWidth-1:0] order_head;

  // Only full/empty matter for the order queue; its occupancy output is left open.
  /* verilator lint_off PINCONNECTEMPTY */
  tessera_fifo #(.Width(ClientWidth), .Depth(MaxOutstanding)) u_order (
    .clk_i, .rst_ni, .clear_i(1'b0),
    .push_i(order_push), .wdata_i(grant_q),
    .pop_i(order_pop), .rdata_o(order_head),
    .empty_o(order_empty), .full_o(order_full), .count_o()
  );
  /* verilator lint_on PINCONNECTEMPTY */

  logic can_issue;
  assign can_issue = (!ar_valid_q || m_axi_arready_i) && !order_full;
  assign order_push = can_issue && grant_valid_q && req_valid_i[grant_q];

  // Client by client rather than indexed by a variable, which synthesis built as integer arithmetic.
  for (genvar c = 0; c < Clients; c++) begin : g_ready
    assign req_ready_o[c] = order_push && grant_q == ClientWidth'(c);
  end

  // The next grant: kept while its client waits, otherwise round robin starting after the client
  // granted last, among the requests other than the one accepted this cycle (that client's next
  // request, if any, is not up yet). The candidate index wraps by a comparison, not a `%`, which
  // synthesis would build as a divider.
  function automatic logic [ClientWidth-1:0] after(input logic [ClientWidth-1:0] client,
                                                    input logic [ClientWidth:0] step);
    logic [ClientWidth:0] c;
    c = {1'b0, client} + step;
    if (c >= (ClientWidth + 1)'(Clients)) c = c - (ClientWidth + 1)'(Clients);
    after = ClientWidth'(c);
  endfunction

  logic [Clients-1:0] contenders;
  always_comb begin
    contenders = req_valid_i;
    if (order_push) contenders[grant_q] = 1'b0;
    grant_d = grant_q;
    grant_valid_d = grant_valid_q && req_valid_i[grant_q] && !order_push;
    if (!grant_valid_d) begin
      for (int i = Clients; i >= 1; i--) begin
        if (contenders[after(grant_q, (ClientWidth + 1)'(i))]) begin
          grant_d = after(grant_q, (ClientWidth + 1)'(i));
          grant_valid_d = 1'b1;
        end
      end
    end
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      ar_valid_q    <= 1'b0;
      ar_addr_q     <= '0;
      ar_len_q      <= '0;
      grant_valid_q <= 1'b0;
      grant_q       <= '0;
    end else begin
      grant_valid_q <= grant_valid_d;
      grant_q       <= grant_d;
      if (order_push) begin
        ar_valid_q <= 1'b1;
        ar_addr_q  <= req_addr_i[grant_q*32 +: 32];
        ar_len_q   <= req_len_i[grant_q*8 +: 8];
      end else if (m_axi_arready_i) begin
        ar_valid_q <= 1'b0;
      end
    end
  end

  assign m_axi_araddr_o  = ar_addr_q;
  assign m_axi_arlen_o   = ar_len_q;
  assign m_axi_arsize_o  = BeatSize;
  assign m_axi_arburst_o = tessera_config_pkg::AXI_BURST_INCR;
  assign m_axi_arvalid_o = ar_valid_q;

  // Read data passes a two-entry register slice (full rate, and the clients' logic sees registers
  // rather than the bus), then goes to the client at the head of the order queue.
  logic                 slice_push, slice_pop, slice_empty, slice_full;
  logic [BusWidth+2:0]  slice_head;
  logic [BusWidth-1:0]  beat_data;
  logic [1:0]           beat_resp;
  logic                 beat_last;

  /* verilator lint_off PINCONNECTEMPTY */
  tessera_fifo #(.Width(BusWidth + 3), .Depth(2)) u_slice (
    .clk_i, .rst_ni, .clear_i(1'b0),
    .push_i(slice_push), .wdata_i({m_axi_rlast_i, m_axi_rresp_i, m_axi_rdata_i}),
    .pop_i(slice_pop), .rdata_o(slice_head),
    .empty_o(slice_empty), .full_o(slice_full), .count_o()
  );
  /* verilator lint_on PINCONNECTEMPTY */

  assign m_axi_rready_o = !slice_full;
  assign slice_push = m_axi_rvalid_i && m_axi_rready_o;
  assign {beat_last, beat_resp, beat_data} = slice_head;

  for (genvar c = 0; c < Clients; c++) begin : g_rsp_valid
    assign rsp_valid_o[c] = !order_empty && !slice_empty && order_head == ClientWidth'(c);
  end
  assign rsp_data_o = beat_data;
  assign rsp_last_o = beat_last;
  assign slice_pop = !slice_empty && !order_empty && rsp_ready_i[order_head];
  assign order_pop = slice_pop && beat_last;

  assign rsp_error_o = slice_pop && (beat_resp != tessera_config_pkg::AXI_RESP_OKAY);
  assign rsp_error_client_o = order_head;

`ifdef FORMAL
  // Properties proved by k-induction (tests/formal), with the order and slice queues' own: the
  // clients and the AXI slave are unconstrained (a client may withdraw a request).
  logic f_past_valid = 1'b0;
  always_ff @(posedge clk_i) f_past_valid <= 1'b1;
  always_comb if (!f_past_valid) assume (!rst_ni);

  always_comb begin
    if (f_past_valid && rst_ni) begin
      // At most one request is accepted a cycle, only a requesting client's, and only when the
      // address register is free (nothing overwrites a request the slave has not taken).
      OneAcceptance: assert ($onehot0(req_ready_o) && (req_ready_o & ~req_valid_i) == '0);
      AddressRegisterFree: assert (!order_push || !ar_valid_q || m_axi_arready_i);
      // A beat goes to one client, the one whose burst is oldest.
      OneResponder: assert ($onehot0(rsp_valid_o) && (rsp_valid_o == '0 || rsp_valid_o[order_head]));
      GrantInRange: assert (32'(grant_q) < Clients);
    end
  end

  // The accepted request is the next one the address channel carries, and the channel holds a
  // request, unchanged, until the slave takes it (AXI4's rule for a master).
  logic [31:0] f_granted_addr;
  logic [7:0]  f_granted_len;
  assign f_granted_addr = req_addr_i[grant_q*32 +: 32];
  assign f_granted_len = req_len_i[grant_q*8 +: 8];
  always_ff @(posedge clk_i) begin
    if (f_past_valid && $past(rst_ni) && rst_ni) begin
      if ($past(order_push)) begin
        ArCarriesAccepted: assert (m_axi_arvalid_o && m_axi_araddr_o == $past(f_granted_addr) && m_axi_arlen_o == $past(f_granted_len));
      end else if ($past(m_axi_arvalid_o && !m_axi_arready_i)) begin
        ArHeldUntilReady: assert (m_axi_arvalid_o && m_axi_araddr_o == $past(m_axi_araddr_o) && m_axi_arlen_o == $past(m_axi_arlen_o));
      end
    end
  end

  // Round robin: a client that keeps requesting sees fewer than Clients other acceptances first.
  // The induction invariant: each acceptance while c waits moves the grant at least one place
  // nearer c in round-robin order, so the acceptances seen and the distance left stay below Clients.
  logic [Clients-1:0] f_starved, f_behind;
  for (genvar c = 0; c < Clients; c++) begin : g_fair
    logic [3:0] f_passed = '0;
    always_ff @(posedge clk_i) begin
      if (!rst_ni || !req_valid_i[c] || req_ready_o[c]) f_passed <= '0;
      else if (order_push && f_passed != '1) f_passed <= f_passed + 1'b1;
    end
    assign f_starved[c] = 32'(f_passed) >= Clients;
    int unsigned f_distance;
    assign f_distance = (c >= 32'(grant_q)) ? c - 32'(grant_q) : c + Clients - 32'(grant_q);
    assign f_behind[c] = f_passed != '0 && 32'(f_passed) + f_distance > Clients - 1;
  end
  always_comb if (f_past_valid && rst_ni) RoundRobinDistance: assert (f_behind == '0);
  always_comb if (f_past_valid) RoundRobin: assert (f_starved == '0);
`endif

endmodule
