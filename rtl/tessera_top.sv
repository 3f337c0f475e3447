// Top level of the accelerator: host registers, fetch, load, compute and store modules, their
// instruction and token queues, the SRAMs and the shared AXI4 master.
`include "tessera_config.svh"

module tessera_top (
  input  logic                            clk_i,
  input  logic                            rst_ni,
  // AXI4-Lite host slave.
  input  logic [11:0]                     s_axil_awaddr_i,
  input  logic                            s_axil_awvalid_i,
  output logic                            s_axil_awready_o,
  input  logic [31:0]                     s_axil_wdata_i,
  input  logic [3:0]                      s_axil_wstrb_i,
  input  logic                            s_axil_wvalid_i,
  output logic                            s_axil_wready_o,
  output logic [1:0]                      s_axil_bresp_o,
  output logic                            s_axil_bvalid_o,
  input  logic                            s_axil_bready_i,
  input  logic [11:0]                     s_axil_araddr_i,
  input  logic                            s_axil_arvalid_i,
  output logic                            s_axil_arready_o,
  output logic [31:0]                     s_axil_rdata_o,
  output logic [1:0]                      s_axil_rresp_o,
  output logic                            s_axil_rvalid_o,
  input  logic                            s_axil_rready_i,
  // AXI4 master to DRAM.
  output logic [31:0]                     m_axi_araddr_o,
  output logic [7:0]                      m_axi_arlen_o,
  output logic [2:0]                      m_axi_arsize_o,
  output logic [1:0]                      m_axi_arburst_o,
  output logic                            m_axi_arvalid_o,
  input  logic                            m_axi_arready_i,
  input  logic [`TESSERA_BUS_WIDTH-1:0]   m_axi_rdata_i,
  input  logic [1:0]                      m_axi_rresp_i,
  input  logic                            m_axi_rlast_i,
  input  logic                            m_axi_rvalid_i,
  output logic                            m_axi_rready_o,
  output logic [31:0]                     m_axi_awaddr_o,
  output logic [7:0]                      m_axi_awlen_o,
  output logic [2:0]                      m_axi_awsize_o,
  output logic [1:0]                      m_axi_awburst_o,
  output logic                            m_axi_awvalid_o,
  input  logic                            m_axi_awready_i,
  output logic [`TESSERA_BUS_WIDTH-1:0]   m_axi_wdata_o,
  output logic [`TESSERA_BUS_WIDTH/8-1:0] m_axi_wstrb_o,
  output logic                            m_axi_wlast_o,
  output logic                            m_axi_wvalid_o,
  input  logic                            m_axi_wready_i,
  input  logic [1:0]                      m_axi_bresp_i,
  input  logic                            m_axi_bvalid_i,
  output logic                            m_axi_bready_o,
  output logic                            irq_o
);

  localparam int Bus = `TESSERA_BUS_WIDTH;
  localparam int EntryWidth = 32 + `TESSERA_INS_WIDTH;
  localparam int QueueDepth = `TESSERA_INSN_QUEUE_DEPTH;
  localparam int TokenDepth = `TESSERA_DEP_QUEUE_DEPTH;
  localparam int QueueCountWidth = $clog2(QueueDepth + 1);
  localparam int TokenCountWidth = $clog2(TokenDepth + 1);
  localparam int InpLanes = `TESSERA_INP_MATRIX_WIDTH / Bus;
  localparam int WgtLanes = `TESSERA_WGT_MATRIX_WIDTH / Bus;
  localparam int AccLanes = `TESSERA_ACC_MATRIX_WIDTH / Bus;
  localparam int NumCounters = 14;
  localparam logic [3:0] CauseIndex = 4'd1, CauseReadError = 4'd2, CauseWriteError = 4'd3;

  // ------------------------------------------------------------ host registers
  logic        start, running, finish, fault;
  logic [3:0]  fault_cause;
  logic [31:0] fault_insn, fault_info;
  logic [31:0] insn_addr, insn_count;
  logic [4*8-1:0]  status;
  logic [4*32-1:0] insn_idx;
  logic [4*16-1:0] tokens;
  logic [3*16-1:0] queues;
  logic [NumCounters*2-1:0] count_inc;

  tessera_host_regs #(.NumCounters(NumCounters)) u_regs (
    .clk_i, .rst_ni,
    .s_axil_awaddr_i, .s_axil_awvalid_i, .s_axil_awready_o, .s_axil_wdata_i, .s_axil_wstrb_i,
    .s_axil_wvalid_i, .s_axil_wready_o, .s_axil_bresp_o, .s_axil_bvalid_o, .s_axil_bready_i,
    .s_axil_araddr_i, .s_axil_arvalid_i, .s_axil_arready_o, .s_axil_rdata_o, .s_axil_rresp_o,
    .s_axil_rvalid_o, .s_axil_rready_i,
    .start_o(start), .insn_addr_o(insn_addr), .insn_count_o(insn_count),
    .finish_i(finish), .fault_i(fault), .fault_cause_i(fault_cause), .fault_insn_i(fault_insn),
    .fault_info_i(fault_info),
    .status_i(status), .insn_i(insn_idx), .tokens_i(tokens), .queues_i(queues),
    .count_inc_i(count_inc), .running_o(running), .irq_o
  );

  // ------------------------------------------------------------ DRAM read arbiter
  // Clients: 0 fetch, 1 load, 2 compute.
  logic [2:0]     rd_req_valid, rd_req_ready, rd_rsp_valid, rd_rsp_ready;
  logic [3*32-1:0] rd_req_addr;
  logic [3*8-1:0]  rd_req_len;
  logic [Bus-1:0]  rd_rsp_data;
  logic            rd_error;
  logic [1:0]      rd_error_client;

  // The last-beat flag is part of the client interface but no client needs it: each counts beats.
  /* verilator lint_off PINCONNECTEMPTY */
  tessera_axi_rd_arbiter #(.Clients(3), .BusWidth(Bus)) u_arbiter (
    .clk_i, .rst_ni,
    .req_valid_i(rd_req_valid), .req_addr_i(rd_req_addr), .req_len_i(rd_req_len), .req_ready_o(rd_req_ready),
    .rsp_valid_o(rd_rsp_valid), .rsp_data_o(rd_rsp_data), .rsp_last_o(), .rsp_ready_i(rd_rsp_ready),
    .rsp_error_o(rd_error), .rsp_error_client_o(rd_error_client),
    .m_axi_araddr_o, .m_axi_arlen_o, .m_axi_arsize_o, .m_axi_arburst_o, .m_axi_arvalid_o, .m_axi_arready_i,
    .m_axi_rdata_i, .m_axi_rresp_i, .m_axi_rlast_i, .m_axi_rvalid_i, .m_axi_rready_o
  );
  /* verilator lint_on PINCONNECTEMPTY */

  // ------------------------------------------------------------ fetch and instruction queues
  logic [EntryWidth-1:0] fetch_entry;
  logic fetch_busy, fetch_stall;
  logic [2:0] q_push, q_pop, q_empty, q_full;
  logic [3*EntryWidth-1:0] q_head;

  tessera_fetch #(.BusWidth(Bus), .InsnWidth(`TESSERA_INS_WIDTH)) u_fetch (
    .clk_i, .rst_ni, .start_i(start), .insn_addr_i(insn_addr), .insn_count_i(insn_count),
    .req_valid_o(rd_req_valid[0]), .req_addr_o(rd_req_addr[0 +: 32]), .req_len_o(rd_req_len[0 +: 8]),
    .req_ready_i(rd_req_ready[0]),
    .rsp_valid_i(rd_rsp_valid[0]), .rsp_data_i(rd_rsp_data), .rsp_ready_o(rd_rsp_ready[0]),
    .entry_o(fetch_entry),
    .load_push_o(q_push[0]), .load_full_i(q_full[0]),
    .compute_push_o(q_push[1]), .compute_full_i(q_full[1]),
    .store_push_o(q_push[2]), .store_full_i(q_full[2]),
    .busy_o(fetch_busy), .stall_o(fetch_stall), .status_o(status[0 +: 8]), .next_insn_o(insn_idx[0 +: 32])
  );

  for (genvar q = 0; q < 3; q++) begin : g_insn_queue
    logic [QueueCountWidth-1:0] count;
    tessera_fifo #(.Width(EntryWidth), .Depth(QueueDepth)) u_queue (
      .clk_i, .rst_ni, .clear_i(start),
      .push_i(q_push[q]), .wdata_i(fetch_entry),
      .pop_i(q_pop[q]), .rdata_o(q_head[q * EntryWidth +: EntryWidth]),
      .empty_o(q_empty[q]), .full_o(q_full[q]), .count_o(count)
    );
    assign queues[q * 16 +: 16] = 16'(count);
  end

  // ------------------------------------------------------------ dependency token queues
  // 0 load->compute, 1 compute->load, 2 compute->store, 3 store->compute.
  logic [3:0] tok_push, tok_pop, tok_empty;
  // Load reserves space on load->compute by count (its instructions overlap), so that queue's full
  // flag is unused.
  /* verilator lint_off UNUSEDSIGNAL */
  logic [3:0] tok_full;
  /* verilator lint_on UNUSEDSIGNAL */
  for (genvar t = 0; t < 4; t++) begin : g_token_queue
    logic [TokenCountWidth-1:0] count;
    tessera_token_queue #(.Depth(TokenDepth)) u_tokens (
      .clk_i, .rst_ni, .clear_i(start),
      .push_i(tok_push[t]), .pop_i(tok_pop[t]),
      .empty_o(tok_empty[t]), .full_o(tok_full[t]), .count_o(count)
    );
    assign tokens[t * 16 +: 16] = 16'(count);
  end

  // ------------------------------------------------------------ SRAMs
  logic                                   uop_we, uop_re;
  logic [`TESSERA_LOG_UOP_BUFF_DEPTH-1:0] uop_waddr, uop_raddr;
  logic [`TESSERA_UOP_WIDTH-1:0]          uop_wdata, uop_rdata;
  logic [InpLanes-1:0]                    inp_we;
  logic                                   inp_re;
  logic [`TESSERA_LOG_INP_BUFF_DEPTH-1:0] inp_waddr, inp_raddr;
  logic [Bus-1:0]                         inp_wdata, wgt_wdata;
  logic [`TESSERA_INP_MATRIX_WIDTH-1:0]   inp_rdata;
  logic [WgtLanes-1:0]                    wgt_we;
  logic                                   wgt_re;
  logic [`TESSERA_LOG_WGT_BUFF_DEPTH-1:0] wgt_waddr, wgt_raddr;
  logic [`TESSERA_WGT_MATRIX_WIDTH-1:0]   wgt_rdata;
  logic [AccLanes-1:0]                    acc_we, out_we;
  logic                                   acc_re, out_re;
  logic [`TESSERA_LOG_ACC_BUFF_DEPTH-1:0] acc_waddr, acc_raddr, out_waddr, out_raddr;
  logic [`TESSERA_ACC_MATRIX_WIDTH-1:0]   acc_wdata, acc_rdata;
  logic [`TESSERA_OUT_MATRIX_WIDTH-1:0]   out_wdata, out_rdata;

  tessera_sram #(.Depth(`TESSERA_UOP_BUFF_DEPTH), .Lanes(1), .LaneWidth(`TESSERA_UOP_WIDTH)) u_uop_sram (
    .clk_i, .we_i(uop_we), .waddr_i(uop_waddr), .wdata_i(uop_wdata),
    .re_i(uop_re), .raddr_i(uop_raddr), .rdata_o(uop_rdata)
  );
  tessera_sram #(.Depth(`TESSERA_INP_BUFF_DEPTH), .Lanes(InpLanes), .LaneWidth(Bus), .Broadcast(1'b1)) u_inp_sram (
    .clk_i, .we_i(inp_we), .waddr_i(inp_waddr), .wdata_i(inp_wdata),
    .re_i(inp_re), .raddr_i(inp_raddr), .rdata_o(inp_rdata)
  );
  tessera_sram #(.Depth(`TESSERA_WGT_BUFF_DEPTH), .Lanes(WgtLanes), .LaneWidth(Bus), .Broadcast(1'b1)) u_wgt_sram (
    .clk_i, .we_i(wgt_we), .waddr_i(wgt_waddr), .wdata_i(wgt_wdata),
    .re_i(wgt_re), .raddr_i(wgt_raddr), .rdata_o(wgt_rdata)
  );
  tessera_sram #(.Depth(`TESSERA_ACC_BUFF_DEPTH), .Lanes(AccLanes), .LaneWidth(Bus)) u_acc_sram (
    .clk_i, .we_i(acc_we), .waddr_i(acc_waddr), .wdata_i(acc_wdata),
    .re_i(acc_re), .raddr_i(acc_raddr), .rdata_o(acc_rdata)
  );
  tessera_sram #(.Depth(`TESSERA_ACC_BUFF_DEPTH), .Lanes(AccLanes), .LaneWidth(Bus / 4)) u_out_sram (
    .clk_i, .we_i(out_we), .waddr_i(out_waddr), .wdata_i(out_wdata),
    .re_i(out_re), .raddr_i(out_raddr), .rdata_o(out_rdata)
  );

  // ------------------------------------------------------------ modules
  logic load_busy, load_stall, load_retire;
  logic compute_busy, compute_stall, compute_retire, gemm_uop, alu_uop, compute_fault;
  logic [31:0] compute_fault_info;
  logic store_busy, store_stall, store_retire, write_error;

  tessera_load #(.EntryWidth(EntryWidth)) u_load (
    .clk_i, .rst_ni, .start_i(start),
    .q_valid_i(!q_empty[0]), .q_entry_i(q_head[0 +: EntryWidth]), .q_pop_o(q_pop[0]),
    .c2l_empty_i(tok_empty[1]), .c2l_pop_o(tok_pop[1]), .l2c_count_i(tokens[0 +: 16]), .l2c_push_o(tok_push[0]),
    .req_valid_o(rd_req_valid[1]), .req_addr_o(rd_req_addr[32 +: 32]), .req_len_o(rd_req_len[8 +: 8]),
    .req_ready_i(rd_req_ready[1]),
    .rsp_valid_i(rd_rsp_valid[1]), .rsp_data_i(rd_rsp_data), .rsp_ready_o(rd_rsp_ready[1]),
    .inp_we_o(inp_we), .inp_waddr_o(inp_waddr), .inp_wdata_o(inp_wdata),
    .wgt_we_o(wgt_we), .wgt_waddr_o(wgt_waddr), .wgt_wdata_o(wgt_wdata),
    .busy_o(load_busy), .stall_o(load_stall), .retire_o(load_retire), .status_o(status[8 +: 8]),
    .insn_o(insn_idx[32 +: 32])
  );

  tessera_compute #(.EntryWidth(EntryWidth)) u_compute (
    .clk_i, .rst_ni, .start_i(start),
    .q_valid_i(!q_empty[1]), .q_entry_i(q_head[EntryWidth +: EntryWidth]), .q_pop_o(q_pop[1]),
    .l2c_empty_i(tok_empty[0]), .l2c_pop_o(tok_pop[0]), .s2c_empty_i(tok_empty[3]), .s2c_pop_o(tok_pop[3]),
    .c2l_full_i(tok_full[1]), .c2l_push_o(tok_push[1]), .c2s_full_i(tok_full[2]), .c2s_push_o(tok_push[2]),
    .req_valid_o(rd_req_valid[2]), .req_addr_o(rd_req_addr[64 +: 32]), .req_len_o(rd_req_len[16 +: 8]),
    .req_ready_i(rd_req_ready[2]),
    .rsp_valid_i(rd_rsp_valid[2]), .rsp_data_i(rd_rsp_data), .rsp_ready_o(rd_rsp_ready[2]),
    .uop_we_o(uop_we), .uop_waddr_o(uop_waddr), .uop_wdata_o(uop_wdata),
    .uop_re_o(uop_re), .uop_raddr_o(uop_raddr), .uop_rdata_i(uop_rdata),
    .inp_re_o(inp_re), .inp_raddr_o(inp_raddr), .inp_rdata_i(inp_rdata),
    .wgt_re_o(wgt_re), .wgt_raddr_o(wgt_raddr), .wgt_rdata_i(wgt_rdata),
    .acc_we_o(acc_we), .acc_waddr_o(acc_waddr), .acc_wdata_o(acc_wdata),
    .acc_re_o(acc_re), .acc_raddr_o(acc_raddr), .acc_rdata_i(acc_rdata),
    .out_we_o(out_we), .out_waddr_o(out_waddr), .out_wdata_o(out_wdata),
    .busy_o(compute_busy), .stall_o(compute_stall), .retire_o(compute_retire), .finish_o(finish),
    .gemm_uop_o(gemm_uop), .alu_uop_o(alu_uop), .fault_o(compute_fault), .fault_info_o(compute_fault_info),
    .status_o(status[16 +: 8]), .insn_o(insn_idx[64 +: 32])
  );

  tessera_store #(.EntryWidth(EntryWidth)) u_store (
    .clk_i, .rst_ni, .start_i(start),
    .q_valid_i(!q_empty[2]), .q_entry_i(q_head[2 * EntryWidth +: EntryWidth]), .q_pop_o(q_pop[2]),
    .c2s_empty_i(tok_empty[2]), .c2s_pop_o(tok_pop[2]), .s2c_full_i(tok_full[3]), .s2c_push_o(tok_push[3]),
    .out_re_o(out_re), .out_raddr_o(out_raddr), .out_rdata_i(out_rdata),
    .m_axi_awaddr_o, .m_axi_awlen_o, .m_axi_awsize_o, .m_axi_awburst_o, .m_axi_awvalid_o, .m_axi_awready_i,
    .m_axi_wdata_o, .m_axi_wstrb_o, .m_axi_wlast_o, .m_axi_wvalid_o, .m_axi_wready_i,
    .m_axi_bresp_i, .m_axi_bvalid_i, .m_axi_bready_o, .write_error_o(write_error),
    .busy_o(store_busy), .stall_o(store_stall), .retire_o(store_retire), .status_o(status[24 +: 8]),
    .insn_o(insn_idx[96 +: 32])
  );

  // ------------------------------------------------------------ faults and counters
  always_comb begin
    fault = 1'b0;
    fault_cause = '0;
    fault_insn = '0;
    fault_info = '0;
    if (compute_fault) begin
      fault = 1'b1;
      fault_cause = CauseIndex;
      fault_insn = insn_idx[64 +: 32];
      fault_info = compute_fault_info;
    end else if (rd_error) begin
      fault = 1'b1;
      fault_cause = CauseReadError;
      fault_insn = insn_idx[rd_error_client * 32 +: 32];
      fault_info = {30'b0, rd_error_client};
    end else if (write_error) begin
      fault = 1'b1;
      fault_cause = CauseWriteError;
      fault_insn = insn_idx[96 +: 32];
    end
  end

  always_comb begin
    count_inc = '0;
    count_inc[0 * 2 +: 2]  = {1'b0, running};
    count_inc[1 * 2 +: 2]  = {1'b0, fetch_busy};
    count_inc[2 * 2 +: 2]  = {1'b0, fetch_stall};
    count_inc[3 * 2 +: 2]  = {1'b0, load_busy};
    count_inc[4 * 2 +: 2]  = {1'b0, load_stall};
    count_inc[5 * 2 +: 2]  = {1'b0, compute_busy};
    count_inc[6 * 2 +: 2]  = {1'b0, compute_stall};
    count_inc[7 * 2 +: 2]  = {1'b0, store_busy};
    count_inc[8 * 2 +: 2]  = {1'b0, store_stall};
    count_inc[9 * 2 +: 2]  = {1'b0, m_axi_rvalid_i && m_axi_rready_o};
    count_inc[10 * 2 +: 2] = {1'b0, m_axi_wvalid_o && m_axi_wready_i};
    count_inc[11 * 2 +: 2] = {1'b0, gemm_uop};
    count_inc[12 * 2 +: 2] = {1'b0, alu_uop};
    count_inc[13 * 2 +: 2] = 2'(load_retire) + 2'(compute_retire) + 2'(store_retire);
  end

endmodule
