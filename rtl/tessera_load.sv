// Load module: executes LOAD of inputs and weights into their SRAMs, in instruction order,
// synchronised with compute by the dependency tokens.
`include "tessera_config.svh"

module tessera_load #(
  parameter int EntryWidth = 32 + tessera_config_pkg::INS_WIDTH
) (
  input  logic                                  clk_i,
  input  logic                                  rst_ni,
  input  logic                                  start_i,
  // Instruction queue head.
  input  logic                                  q_valid_i,
  // Instruction words carry fields (opcode, previous-stage flags, padding bits) load does not use.
  /* verilator lint_off UNUSEDSIGNAL */
  input  logic [EntryWidth-1:0]                 q_entry_i,
  /* verilator lint_on UNUSEDSIGNAL */
  output logic                                  q_pop_o,
  // Tokens: pops compute->load, pushes load->compute.
  input  logic                                  g2l_empty_i,
  output logic                                  g2l_pop_o,
  input  logic                                  l2g_pop_i,   // compute takes a token from l2g
  output logic                                  l2g_push_o,
  // DRAM read client.
  output logic                                  req_valid_o,
  output logic [31:0]                           req_addr_o,
  output logic [7:0]                            req_len_o,
  input  logic                                  req_ready_i,
  input  logic                                  rsp_valid_i,
  input  logic [tessera_config_pkg::BUS_WIDTH-1:0]         rsp_data_i,
  output logic                                  rsp_ready_o,
  // SRAM write ports (one bus beat, written to the enabled lanes).
  output logic [InpLanes-1:0]                   inp_we_o,
  output logic [tessera_config_pkg::LOG_INP_BUFF_DEPTH-1:0] inp_waddr_o,
  output logic [tessera_config_pkg::BUS_WIDTH-1:0]         inp_wdata_o,
  output logic [WgtLanes-1:0]                   wgt_we_o,
  output logic [tessera_config_pkg::LOG_WGT_BUFF_DEPTH-1:0] wgt_waddr_o,
  output logic [tessera_config_pkg::BUS_WIDTH-1:0]         wgt_wdata_o,
  // Status and events.
  output logic                                  busy_o,
  output logic                                  stall_o,
  output logic                                  retire_o,
  output logic [31:0]                           head_insn_o,    // the index of the queue head (it takes)
  output logic [31:0]                           retire_insn_o,  // the index of the one retiring
  output tessera_host_pkg::status_t             status_o,
  output logic [31:0]                           insn_o
);

  localparam int Bus = tessera_config_pkg::BUS_WIDTH;
  localparam int InpLanes = tessera_config_pkg::INP_MATRIX_WIDTH / Bus;
  localparam int WgtLanes = tessera_config_pkg::WGT_MATRIX_WIDTH / Bus;
  localparam int MaxLanes = (InpLanes > WgtLanes) ? InpLanes : WgtLanes;
  localparam int BeatIdxWidth = (MaxLanes > 1) ? $clog2(MaxLanes) : 1;
  localparam int InpAw = tessera_config_pkg::LOG_INP_BUFF_DEPTH;
  localparam int WgtAw = tessera_config_pkg::LOG_WGT_BUFF_DEPTH;
  localparam int SramAw = (InpAw > WgtAw) ? InpAw : WgtAw;
  localparam logic [3:0] LogInpElemBytes = 4'($clog2(tessera_config_pkg::INP_ELEM_BYTES));
  localparam logic [3:0] LogWgtElemBytes = 4'($clog2(tessera_config_pkg::WGT_ELEM_BYTES));
  localparam int InsnWidth = tessera_config_pkg::INS_WIDTH;

  // The queue head, read through the memory format. Programs are validated against the buffer
  // depth, so the SRAM base's bits above it are zero.
  /* verilator lint_off UNUSEDSIGNAL */
  tessera_config_pkg::insn_mem_t insn;
  logic [tessera_config_pkg::MEMOP_SRAM_ADDR_BIT_WIDTH-1:0] sram_base;
  /* verilator lint_on UNUSEDSIGNAL */
  logic pop_next, push_next, is_input;
  assign insn = q_entry_i[InsnWidth-1:0];
  assign pop_next = insn.pop_next;
  assign push_next = insn.push_next;
  assign sram_base = insn.sram_base;
  assign is_input = insn.memory_type == tessera_config_pkg::MEM_ID_INP;

  localparam int TokenDepth = tessera_config_pkg::DEP_QUEUE_DEPTH;

  // Instructions overlap in the loader (the next one's bursts go out while the previous one's data
  // arrives), so the tokens they will push are reserved when they issue: l2g_used_q counts the
  // tokens on l2g plus those reserved, so it goes up when an instruction that pushes issues and
  // down when compute pops. Kept as a counter of its own, with its full flag a register, rather
  // than the token count plus the reservations compared in front of the issue decision.
  localparam int UsedWidth = $clog2(TokenDepth + 1);
  logic [UsedWidth-1:0] l2g_used_q;
  logic        l2g_full_q;
  logic [31:0] insn_q;
  logic        l2g_full;
  assign l2g_full = l2g_full_q;

  // The dependency check's decision inline (as in tessera_compute: synthesis keeps the hierarchy),
  // tessera_dep_check for what the head waits for.
  logic deps_ready, deps_check_ready;
  assign deps_ready = !(pop_next && g2l_empty_i) && !(push_next && l2g_full);
  tessera_host_pkg::status_t deps_status;
  tessera_dep_check u_deps (
    .pop_req_i({1'b0, pop_next}), .pop_empty_i({1'b0, g2l_empty_i}), .pop_queue_i({tessera_host_pkg::QueueG2l, tessera_host_pkg::QueueG2l}),
    .push_req_i({1'b0, push_next}), .push_full_i({1'b0, l2g_full}), .push_queue_i({tessera_host_pkg::QueueL2g, tessera_host_pkg::QueueL2g}),
    .ready_o(deps_check_ready), .status_o(deps_status)
  );

  // Every instruction, dependency-only ones included, becomes a loader job so completions (and
  // the tokens they push) stay in program order. Tag: {instruction index, is input, pushes a
  // token}; the index names the retiring instruction on the trace port, as up to three are in flight.
  localparam int TagWidth = 32 + 2;
  logic issue, job_ready, loader_busy, loader_done;
  // Writes need only the target SRAM, completions the push flag and the index.
  /* verilator lint_off UNUSEDSIGNAL */
  logic [TagWidth-1:0] done_tag, wr_tag;
  /* verilator lint_on UNUSEDSIGNAL */
  assign issue = q_valid_i && deps_ready && job_ready;
  assign q_pop_o = issue;
  assign g2l_pop_o = issue && pop_next;

  logic                    wr_valid, wr_pad;
  logic [SramAw-1:0]       wr_addr;
  logic [BeatIdxWidth-1:0] wr_beat;
  logic [Bus-1:0]          wr_data;

  tessera_mem_loader #(.BusWidth(Bus), .SramAddrWidth(SramAw), .BeatIdxWidth(BeatIdxWidth), .TagWidth(TagWidth)) u_loader (
    .clk_i, .rst_ni, .clear_i(start_i),
    .job_valid_i(issue), .job_ready_o(job_ready),
    .sram_base_i(sram_base[SramAw-1:0]), .dram_base_i(insn.dram_base),
    .y_size_i(insn.y_size), .x_size_i(insn.x_size), .x_stride_i(insn.x_stride),
    .y_pad0_i(insn.y_pad_0), .y_pad1_i(insn.y_pad_1), .x_pad0_i(insn.x_pad_0), .x_pad1_i(insn.x_pad_1),
    .log_elem_bytes_i(is_input ? LogInpElemBytes : LogWgtElemBytes),
    .tag_i({q_entry_i[EntryWidth-1 -: 32], is_input, push_next}),
    .done_o(loader_done), .done_tag_o(done_tag), .busy_o(loader_busy),
    .req_valid_o, .req_addr_o, .req_len_o, .req_ready_i,
    .rsp_valid_i, .rsp_data_i, .rsp_ready_o,
    .wr_valid_o(wr_valid), .wr_addr_o(wr_addr), .wr_beat_o(wr_beat), .wr_pad_o(wr_pad), .wr_data_o(wr_data),
    .wr_tag_o(wr_tag)
  );

  // A pad element is written whole, as zeros; a data beat fills its lane of the element.
  always_comb begin
    inp_we_o = '0;
    wgt_we_o = '0;
    if (wr_valid && wr_tag[1]) begin
      if (wr_pad) inp_we_o = '1;
      else inp_we_o = InpLanes'(1) << wr_beat;
    end
    if (wr_valid && !wr_tag[1]) begin
      if (wr_pad) wgt_we_o = '1;
      else wgt_we_o = WgtLanes'(1) << wr_beat;
    end
  end
  assign inp_waddr_o = wr_addr[InpAw-1:0];
  assign wgt_waddr_o = wr_addr[WgtAw-1:0];
  // The SRAMs broadcast one beat to the enabled lanes.
  assign inp_wdata_o = wr_pad ? '0 : wr_data;
  assign wgt_wdata_o = inp_wdata_o;

  logic reserve;
  assign reserve = issue && push_next;

  always_ff @(posedge clk_i) begin
    if (!rst_ni || start_i) begin
      l2g_used_q <= '0;
      l2g_full_q <= 1'b0;
      insn_q     <= '0;
    end else begin
      if (q_valid_i) insn_q <= q_entry_i[EntryWidth-1 -: 32];
      if (reserve && !l2g_pop_i) begin
        l2g_used_q <= l2g_used_q + 1'b1;
        l2g_full_q <= 32'(l2g_used_q) == TokenDepth - 1;
      end else if (l2g_pop_i && !reserve) begin
        l2g_used_q <= l2g_used_q - 1'b1;
        l2g_full_q <= 1'b0;
      end
    end
  end

  assign l2g_push_o = loader_done && done_tag[0];
  assign retire_o = loader_done;
  assign head_insn_o = q_entry_i[EntryWidth-1 -: 32];
  assign retire_insn_o = done_tag[TagWidth-1 -: 32];
  assign busy_o = loader_busy;
  assign stall_o = q_valid_i && !deps_ready;
  always_comb begin
    status_o = '0;
    if (q_valid_i && !deps_ready) status_o = deps_status;
    else if (loader_busy || q_valid_i) status_o.state = tessera_host_pkg::StateBusy;
    else status_o.state = tessera_host_pkg::StateIdle;
  end
  assign insn_o = insn_q;

`ifndef SYNTHESIS
  DepsInline: assert property (@(posedge clk_i) disable iff (!rst_ni || start_i) deps_ready == deps_check_ready)
    else $error("tessera_load: the inline dependency check disagrees with tessera_dep_check");
`else
  logic unused_deps_check;
  assign unused_deps_check = deps_check_ready;
`endif

endmodule
