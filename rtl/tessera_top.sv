// Top level of the accelerator: host registers, fetch, load, compute and store modules, their
// instruction and token queues, the SRAMs and the shared AXI4 master.
`include "tessera_config.svh"

module tessera_top (
  input  logic                            clk_i,
  input  logic                            rst_ni,
  // AXI4-Lite host slave.
  input  logic [tessera_host_pkg::RegAddrWidth-1:0] s_axil_awaddr_i,
  input  logic                            s_axil_awvalid_i,
  output logic                            s_axil_awready_o,
  input  logic [31:0]                     s_axil_wdata_i,
  input  logic [3:0]                      s_axil_wstrb_i,
  input  logic                            s_axil_wvalid_i,
  output logic                            s_axil_wready_o,
  output logic [1:0]                      s_axil_bresp_o,
  output logic                            s_axil_bvalid_o,
  input  logic                            s_axil_bready_i,
  input  logic [tessera_host_pkg::RegAddrWidth-1:0] s_axil_araddr_i,
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
  input  logic [tessera_config_pkg::BUS_WIDTH-1:0]   m_axi_rdata_i,
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
  output logic [tessera_config_pkg::BUS_WIDTH-1:0]   m_axi_wdata_o,
  output logic [tessera_config_pkg::BUS_WIDTH/8-1:0] m_axi_wstrb_o,
  output logic                            m_axi_wlast_o,
  output logic                            m_axi_wvalid_o,
  input  logic                            m_axi_wready_i,
  input  logic [1:0]                      m_axi_bresp_i,
  input  logic                            m_axi_bvalid_i,
  output logic                            m_axi_bready_o,
  output logic                            irq_o,
  // Instruction trace (docs/rtl.md): per unit of tessera_host_pkg (Trace*), a strobe when an
  // instruction begins and when one ends there, each with the instruction's index, and the cycle
  // of the run they belong to. Debug only: a design may leave them unconnected.
  output logic [tessera_host_pkg::NumTraceUnits-1:0]    trace_begin_o,
  output logic [tessera_host_pkg::NumTraceUnits*32-1:0] trace_begin_insn_o,
  output logic [tessera_host_pkg::NumTraceUnits-1:0]    trace_end_o,
  output logic [tessera_host_pkg::NumTraceUnits*32-1:0] trace_end_insn_o,
  output logic [31:0]                                   trace_cycle_o
);

  localparam int Bus = tessera_config_pkg::BUS_WIDTH;
  localparam int EntryWidth = 32 + tessera_config_pkg::INS_WIDTH;
  localparam int QueueDepth = tessera_config_pkg::INSN_QUEUE_DEPTH;
  localparam int TokenDepth = tessera_config_pkg::DEP_QUEUE_DEPTH;
  localparam int QueueCountWidth = $clog2(QueueDepth + 1);
  localparam int TokenCountWidth = $clog2(TokenDepth + 1);
  localparam int InpLanes = tessera_config_pkg::INP_MATRIX_WIDTH / Bus;
  localparam int WgtLanes = tessera_config_pkg::WGT_MATRIX_WIDTH / Bus;
  localparam int AccLanes = tessera_config_pkg::ACC_MATRIX_WIDTH / Bus;
  localparam int NumCounters = tessera_host_pkg::NumCounters;
  localparam int StatusBits = tessera_host_pkg::StatusStateBits + tessera_host_pkg::StatusArgBits;
  localparam int NumModules = tessera_host_pkg::NumModules;
  localparam int NumTokenQueues = tessera_host_pkg::NumTokenQueues;
  localparam int NumInsnQueues = tessera_host_pkg::NumInsnQueues;
  // Indices of the per-module status and instruction-index words.
  localparam int ModFetch = tessera_host_pkg::ModuleFetch;
  localparam int ModLoad = tessera_host_pkg::ModuleLoad;
  localparam int ModCompute = tessera_host_pkg::ModuleCompute;
  localparam int ModStore = tessera_host_pkg::ModuleStore;
  // DRAM read clients are numbered as the modules they are, which FAULT_INFO reports.
  localparam int ReadClients = ModCompute + 1;
  // The output SRAM keeps OUT_WIDTH of every ACC_WIDTH accumulator value.
  localparam int OutLaneWidth = Bus * tessera_config_pkg::OUT_WIDTH / tessera_config_pkg::ACC_WIDTH;
  localparam int QLoad = tessera_host_pkg::InsnQueueLoad;
  localparam int QCompute = tessera_host_pkg::InsnQueueCompute;
  localparam int QStore = tessera_host_pkg::InsnQueueStore;
  localparam int TokL2g = 32'(tessera_host_pkg::QueueL2g);
  localparam int TokG2l = 32'(tessera_host_pkg::QueueG2l);
  localparam int TokG2s = 32'(tessera_host_pkg::QueueG2s);
  localparam int TokS2g = 32'(tessera_host_pkg::QueueS2g);

  // ------------------------------------------------------------ host registers
  logic        start, running, finish, fault;
  logic [tessera_host_pkg::FaultCauseBits-1:0] fault_cause;
  logic [31:0] fault_insn, fault_info;
  logic [31:0] insn_addr, insn_count;
  logic [NumModules*StatusBits-1:0] status;
  logic [NumModules*32-1:0]         insn_idx;
  logic [NumTokenQueues*16-1:0]     tokens;
  logic [NumInsnQueues*16-1:0]      queues;
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
  // Clients: fetch, load and compute, by module index.
  logic [ReadClients-1:0]    rd_req_valid, rd_req_ready, rd_rsp_valid, rd_rsp_ready;
  logic [ReadClients*32-1:0] rd_req_addr;
  logic [ReadClients*8-1:0]  rd_req_len;
  logic [Bus-1:0]  rd_rsp_data;
  logic            rd_error;
  logic [1:0]      rd_error_client;

  // The last-beat flag is part of the client interface but no client needs it: each counts beats.
  /* verilator lint_off PINCONNECTEMPTY */
  tessera_axi_rd_arbiter #(.Clients(ReadClients), .BusWidth(Bus)) u_arbiter (
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
  logic [NumInsnQueues-1:0] q_push, q_pop, q_empty, q_full;
  logic [NumInsnQueues*EntryWidth-1:0] q_head;

  tessera_fetch #(.BusWidth(Bus), .InsnWidth(tessera_config_pkg::INS_WIDTH)) u_fetch (
    .clk_i, .rst_ni, .start_i(start), .insn_addr_i(insn_addr), .insn_count_i(insn_count),
    .req_valid_o(rd_req_valid[ModFetch]), .req_addr_o(rd_req_addr[ModFetch * 32 +: 32]),
    .req_len_o(rd_req_len[ModFetch * 8 +: 8]), .req_ready_i(rd_req_ready[ModFetch]),
    .rsp_valid_i(rd_rsp_valid[ModFetch]), .rsp_data_i(rd_rsp_data), .rsp_ready_o(rd_rsp_ready[ModFetch]),
    .entry_o(fetch_entry),
    .load_push_o(q_push[QLoad]), .load_full_i(q_full[QLoad]),
    .compute_push_o(q_push[QCompute]), .compute_full_i(q_full[QCompute]),
    .store_push_o(q_push[QStore]), .store_full_i(q_full[QStore]),
    .busy_o(fetch_busy), .stall_o(fetch_stall), .status_o(status[ModFetch * StatusBits +: StatusBits]), .next_insn_o(insn_idx[ModFetch * 32 +: 32])
  );

  // The instruction queues (INSN_QUEUE_DEPTH entries of EntryWidth bits) fit block RAM, but where
  // the config's SRAMs already take about 2 Mbit they go to LUT RAM: on the default config they would
  // add 7.5 RAMB36 to the 120 of its SRAMs, 91% of an xc7z020's block RAM (docs/fpga.md).
  localparam logic [63:0] SramBits =
      64'(tessera_config_pkg::UOP_BUFF_DEPTH) * 64'(tessera_config_pkg::UOP_WIDTH) +
      64'(tessera_config_pkg::INP_BUFF_DEPTH) * 64'(tessera_config_pkg::INP_MATRIX_WIDTH) +
      64'(tessera_config_pkg::WGT_BUFF_DEPTH) * 64'(tessera_config_pkg::WGT_MATRIX_WIDTH) +
      64'(tessera_config_pkg::ACC_BUFF_DEPTH) * 64'(tessera_config_pkg::ACC_MATRIX_WIDTH) +
      64'(tessera_config_pkg::ACC_BUFF_DEPTH) * 64'(tessera_config_pkg::OUT_MATRIX_WIDTH);
  localparam logic [63:0] QueueLutRamSramBits = 64'(2 * 1024 * 1024);
  localparam bit QueueLutRam = SramBits >= QueueLutRamSramBits;

  logic compute_q_held;
  for (genvar q = 0; q < NumInsnQueues; q++) begin : g_insn_queue
    logic [QueueCountWidth-1:0] count;
    tessera_fifo #(.Width(EntryWidth), .Depth(QueueDepth), .LutRam(QueueLutRam)) u_queue (
      .clk_i, .rst_ni, .clear_i(start),
      .push_i(q_push[q]), .wdata_i(fetch_entry),
      .pop_i(q_pop[q]), .rdata_o(q_head[q * EntryWidth +: EntryWidth]),
      .empty_o(q_empty[q]), .full_o(q_full[q]), .count_o(count)
    );
    // Compute holds its next instruction in a register of its own; it still counts as queued.
    assign queues[q * 16 +: 16] = 16'(count) + 16'(q == QCompute && compute_q_held);
  end

  // ------------------------------------------------------------ dependency token queues
  // Indexed by tessera_host_pkg's token queues (l2g, g2l, g2s, s2g).
  logic [NumTokenQueues-1:0] tok_push, tok_pop, tok_empty;
  // Load reserves space on l2g by count (its instructions overlap), so that queue's full
  // flag is unused.
  /* verilator lint_off UNUSEDSIGNAL */
  logic [NumTokenQueues-1:0] tok_full;
  /* verilator lint_on UNUSEDSIGNAL */
  for (genvar t = 0; t < NumTokenQueues; t++) begin : g_token_queue
    logic [TokenCountWidth-1:0] count;
    tessera_token_queue #(.Depth(TokenDepth)) u_tokens (
      .clk_i, .rst_ni, .clear_i(start),
      .push_i(tok_push[t]), .pop_i(tok_pop[t]),
      .empty_o(tok_empty[t]), .full_o(tok_full[t]), .count_o(count)
    );
    assign tokens[t * 16 +: 16] = 16'(count);
  end

  // ------------------------------------------------------------ SRAMs
  localparam int AccAw = tessera_config_pkg::LOG_ACC_BUFF_DEPTH;
  localparam int BankAw = AccAw - 1;
  localparam int AccWidth = tessera_config_pkg::ACC_MATRIX_WIDTH;
  localparam int OutWidth = tessera_config_pkg::OUT_MATRIX_WIDTH;
  logic                                   uop_a_we, uop_a_re, uop_b_re;
  logic [tessera_config_pkg::LOG_UOP_BUFF_DEPTH-1:0] uop_a_addr, uop_b_addr;
  logic [tessera_config_pkg::UOP_WIDTH-1:0]          uop_a_wdata, uop_a_rdata, uop_b_rdata;
  logic [InpLanes-1:0]                    inp_we;
  logic                                   inp_re;
  logic [tessera_config_pkg::LOG_INP_BUFF_DEPTH-1:0] inp_waddr, inp_raddr;
  logic [Bus-1:0]                         inp_wdata, wgt_wdata;
  logic [tessera_config_pkg::INP_MATRIX_WIDTH-1:0]   inp_rdata;
  logic [WgtLanes-1:0]                    wgt_we;
  logic                                   wgt_re;
  logic [tessera_config_pkg::LOG_WGT_BUFF_DEPTH-1:0] wgt_waddr, wgt_raddr;
  logic [tessera_config_pkg::WGT_MATRIX_WIDTH-1:0]   wgt_rdata;
  // The accumulator and output SRAMs are two banks each (the row index's top bit), packed by bank.
  logic [2*AccLanes-1:0]                  acc_we, out_we;
  logic [1:0]                             acc_re;
  logic [2*BankAw-1:0]                    acc_waddr, acc_raddr, out_waddr;
  logic [2*AccWidth-1:0]                  acc_wdata, acc_rdata;
  logic [2*OutWidth-1:0]                  out_wdata, out_rdata_banks;
  logic                                   out_re;
  logic [AccAw-1:0]                       out_raddr;
  logic [OutWidth-1:0]                    out_rdata;
  logic                                   out_rd_bank_q;

  tessera_sram_2p #(.Depth(tessera_config_pkg::UOP_BUFF_DEPTH), .Width(tessera_config_pkg::UOP_WIDTH)) u_uop_sram (
    .clk_i, .a_we_i(uop_a_we), .a_re_i(uop_a_re), .a_addr_i(uop_a_addr), .a_wdata_i(uop_a_wdata),
    .a_rdata_o(uop_a_rdata), .b_re_i(uop_b_re), .b_addr_i(uop_b_addr), .b_rdata_o(uop_b_rdata)
  );
  tessera_sram #(.Depth(tessera_config_pkg::INP_BUFF_DEPTH), .Lanes(InpLanes), .LaneWidth(Bus), .Broadcast(1'b1)) u_inp_sram (
    .clk_i, .we_i(inp_we), .waddr_i(inp_waddr), .wdata_i(inp_wdata),
    .re_i(inp_re), .raddr_i(inp_raddr), .rdata_o(inp_rdata)
  );
  tessera_sram #(.Depth(tessera_config_pkg::WGT_BUFF_DEPTH), .Lanes(WgtLanes), .LaneWidth(Bus), .Broadcast(1'b1)) u_wgt_sram (
    .clk_i, .we_i(wgt_we), .waddr_i(wgt_waddr), .wdata_i(wgt_wdata),
    .re_i(wgt_re), .raddr_i(wgt_raddr), .rdata_o(wgt_rdata)
  );
  for (genvar b = 0; b < 2; b++) begin : g_acc_bank
    tessera_sram #(.Depth(tessera_config_pkg::ACC_BUFF_DEPTH / 2), .Lanes(AccLanes), .LaneWidth(Bus)) u_acc_sram (
      .clk_i, .we_i(acc_we[b * AccLanes +: AccLanes]), .waddr_i(acc_waddr[b * BankAw +: BankAw]),
      .wdata_i(acc_wdata[b * AccWidth +: AccWidth]),
      .re_i(acc_re[b]), .raddr_i(acc_raddr[b * BankAw +: BankAw]), .rdata_o(acc_rdata[b * AccWidth +: AccWidth])
    );
    // Only the store module reads the output SRAM: both banks at its row, the answer from its bank.
    tessera_sram #(.Depth(tessera_config_pkg::ACC_BUFF_DEPTH / 2), .Lanes(AccLanes), .LaneWidth(OutLaneWidth)) u_out_sram (
      .clk_i, .we_i(out_we[b * AccLanes +: AccLanes]), .waddr_i(out_waddr[b * BankAw +: BankAw]),
      .wdata_i(out_wdata[b * OutWidth +: OutWidth]),
      .re_i(out_re && out_raddr[AccAw-1] == 1'(b)), .raddr_i(out_raddr[BankAw-1:0]),
      .rdata_o(out_rdata_banks[b * OutWidth +: OutWidth])
    );
  end
  always_ff @(posedge clk_i) begin
    if (!rst_ni) out_rd_bank_q <= 1'b0;
    else if (out_re) out_rd_bank_q <= out_raddr[AccAw-1];
  end
  assign out_rdata = out_rd_bank_q ? out_rdata_banks[OutWidth +: OutWidth] : out_rdata_banks[0 +: OutWidth];

  // ------------------------------------------------------------ modules
  logic load_busy, load_stall, load_retire;
  logic [31:0] load_head_insn, load_retire_insn, store_head_insn;
  logic compute_busy, compute_stall, compute_retire, compute_fault;
  logic [1:0] gemm_uops, alu_uops;
  logic [31:0] compute_fault_info;
  logic store_busy, store_stall, store_retire, write_error;
  // The compute module's trace strobes (its sequencer, the GEMM pipe, the ALU pipe) and indices.
  logic [2:0]  compute_trace_begin, compute_trace_end;
  logic [31:0] compute_head_insn, compute_seq_insn, gemm_insn, alu_insn;

  tessera_load #(.EntryWidth(EntryWidth)) u_load (
    .clk_i, .rst_ni, .start_i(start),
    .q_valid_i(!q_empty[QLoad]), .q_entry_i(q_head[QLoad * EntryWidth +: EntryWidth]), .q_pop_o(q_pop[QLoad]),
    .g2l_empty_i(tok_empty[TokG2l]), .g2l_pop_o(tok_pop[TokG2l]), .l2g_pop_i(tok_pop[TokL2g]),
    .l2g_push_o(tok_push[TokL2g]),
    .req_valid_o(rd_req_valid[ModLoad]), .req_addr_o(rd_req_addr[ModLoad * 32 +: 32]),
    .req_len_o(rd_req_len[ModLoad * 8 +: 8]), .req_ready_i(rd_req_ready[ModLoad]),
    .rsp_valid_i(rd_rsp_valid[ModLoad]), .rsp_data_i(rd_rsp_data), .rsp_ready_o(rd_rsp_ready[ModLoad]),
    .inp_we_o(inp_we), .inp_waddr_o(inp_waddr), .inp_wdata_o(inp_wdata),
    .wgt_we_o(wgt_we), .wgt_waddr_o(wgt_waddr), .wgt_wdata_o(wgt_wdata),
    .busy_o(load_busy), .stall_o(load_stall), .retire_o(load_retire), .head_insn_o(load_head_insn), .retire_insn_o(load_retire_insn),
    .status_o(status[ModLoad * StatusBits +: StatusBits]),
    .insn_o(insn_idx[ModLoad * 32 +: 32])
  );

  tessera_compute #(.EntryWidth(EntryWidth)) u_compute (
    .clk_i, .rst_ni, .start_i(start),
    .q_valid_i(!q_empty[QCompute]), .q_entry_i(q_head[QCompute * EntryWidth +: EntryWidth]), .q_pop_o(q_pop[QCompute]),
    .q_held_o(compute_q_held),
    .l2g_empty_i(tok_empty[TokL2g]), .l2g_pop_o(tok_pop[TokL2g]), .s2g_empty_i(tok_empty[TokS2g]), .s2g_pop_o(tok_pop[TokS2g]),
    .g2l_full_i(tok_full[TokG2l]), .g2l_push_o(tok_push[TokG2l]), .g2s_full_i(tok_full[TokG2s]), .g2s_push_o(tok_push[TokG2s]),
    .req_valid_o(rd_req_valid[ModCompute]), .req_addr_o(rd_req_addr[ModCompute * 32 +: 32]),
    .req_len_o(rd_req_len[ModCompute * 8 +: 8]), .req_ready_i(rd_req_ready[ModCompute]),
    .rsp_valid_i(rd_rsp_valid[ModCompute]), .rsp_data_i(rd_rsp_data), .rsp_ready_o(rd_rsp_ready[ModCompute]),
    .uop_a_we_o(uop_a_we), .uop_a_re_o(uop_a_re), .uop_a_addr_o(uop_a_addr), .uop_a_wdata_o(uop_a_wdata),
    .uop_a_rdata_i(uop_a_rdata), .uop_b_re_o(uop_b_re), .uop_b_addr_o(uop_b_addr), .uop_b_rdata_i(uop_b_rdata),
    .inp_re_o(inp_re), .inp_raddr_o(inp_raddr), .inp_rdata_i(inp_rdata),
    .wgt_re_o(wgt_re), .wgt_raddr_o(wgt_raddr), .wgt_rdata_i(wgt_rdata),
    .acc_we_o(acc_we), .acc_waddr_o(acc_waddr), .acc_wdata_o(acc_wdata),
    .acc_re_o(acc_re), .acc_raddr_o(acc_raddr), .acc_rdata_i(acc_rdata),
    .out_we_o(out_we), .out_waddr_o(out_waddr), .out_wdata_o(out_wdata),
    .busy_o(compute_busy), .stall_o(compute_stall), .retire_o(compute_retire), .finish_o(finish),
    .gemm_uops_o(gemm_uops), .alu_uops_o(alu_uops), .fault_o(compute_fault), .fault_info_o(compute_fault_info),
    .status_o(status[ModCompute * StatusBits +: StatusBits]), .insn_o(insn_idx[ModCompute * 32 +: 32]),
    .trace_begin_o(compute_trace_begin), .trace_end_o(compute_trace_end), .trace_head_insn_o(compute_head_insn),
    .trace_seq_insn_o(compute_seq_insn), .trace_gemm_insn_o(gemm_insn), .trace_alu_insn_o(alu_insn)
  );

  tessera_store #(.EntryWidth(EntryWidth)) u_store (
    .clk_i, .rst_ni, .start_i(start),
    .q_valid_i(!q_empty[QStore]), .q_entry_i(q_head[QStore * EntryWidth +: EntryWidth]), .q_pop_o(q_pop[QStore]),
    .g2s_empty_i(tok_empty[TokG2s]), .g2s_pop_o(tok_pop[TokG2s]), .s2g_full_i(tok_full[TokS2g]), .s2g_push_o(tok_push[TokS2g]),
    .out_re_o(out_re), .out_raddr_o(out_raddr), .out_rdata_i(out_rdata),
    .m_axi_awaddr_o, .m_axi_awlen_o, .m_axi_awsize_o, .m_axi_awburst_o, .m_axi_awvalid_o, .m_axi_awready_i,
    .m_axi_wdata_o, .m_axi_wstrb_o, .m_axi_wlast_o, .m_axi_wvalid_o, .m_axi_wready_i,
    .m_axi_bresp_i, .m_axi_bvalid_i, .m_axi_bready_o, .write_error_o(write_error),
    .busy_o(store_busy), .stall_o(store_stall), .retire_o(store_retire), .status_o(status[ModStore * StatusBits +: StatusBits]),
    .insn_o(insn_idx[ModStore * 32 +: 32]), .head_insn_o(store_head_insn)
  );

  // ------------------------------------------------------------ faults and counters
  // A read error reaches the host registers a cycle after its beat is consumed, with the
  // instruction its client was on then: the consuming client's ready and the run's end would
  // otherwise be one path.
  logic        rd_error_q;
  logic [1:0]  rd_error_client_q;
  logic [31:0] rd_error_insn_q;
  always_ff @(posedge clk_i) begin
    if (!rst_ni || start) begin
      rd_error_q        <= 1'b0;
      rd_error_client_q <= '0;
      rd_error_insn_q   <= '0;
    end else begin
      rd_error_q        <= rd_error;
      rd_error_client_q <= rd_error_client;
      rd_error_insn_q   <= insn_idx[rd_error_client * 32 +: 32];
    end
  end

  always_comb begin
    fault = 1'b0;
    fault_cause = '0;
    fault_insn = '0;
    fault_info = '0;
    if (compute_fault) begin
      fault = 1'b1;
      fault_cause = tessera_host_pkg::FaultSramIndex;
      fault_insn = insn_idx[ModCompute * 32 +: 32];
      fault_info = compute_fault_info;
    end else if (rd_error_q) begin
      fault = 1'b1;
      fault_cause = tessera_host_pkg::FaultDramReadError;
      fault_insn = rd_error_insn_q;
      fault_info = {30'b0, rd_error_client_q};
    end else if (write_error) begin
      fault = 1'b1;
      fault_cause = tessera_host_pkg::FaultDramWriteError;
      fault_insn = insn_idx[ModStore * 32 +: 32];
    end
  end

  always_comb begin
    count_inc = '0;
    count_inc[tessera_host_pkg::CounterCycles * 2 +: 2]         = {1'b0, running};
    count_inc[tessera_host_pkg::CounterFetchBusy * 2 +: 2]      = {1'b0, fetch_busy};
    count_inc[tessera_host_pkg::CounterFetchStall * 2 +: 2]     = {1'b0, fetch_stall};
    count_inc[tessera_host_pkg::CounterLoadBusy * 2 +: 2]       = {1'b0, load_busy};
    count_inc[tessera_host_pkg::CounterLoadStall * 2 +: 2]      = {1'b0, load_stall};
    count_inc[tessera_host_pkg::CounterComputeBusy * 2 +: 2]    = {1'b0, compute_busy};
    count_inc[tessera_host_pkg::CounterComputeStall * 2 +: 2]   = {1'b0, compute_stall};
    count_inc[tessera_host_pkg::CounterStoreBusy * 2 +: 2]      = {1'b0, store_busy};
    count_inc[tessera_host_pkg::CounterStoreStall * 2 +: 2]     = {1'b0, store_stall};
    count_inc[tessera_host_pkg::CounterDramReadBeats * 2 +: 2]  = {1'b0, m_axi_rvalid_i && m_axi_rready_o};
    count_inc[tessera_host_pkg::CounterDramWriteBeats * 2 +: 2] = {1'b0, m_axi_wvalid_o && m_axi_wready_i};
    count_inc[tessera_host_pkg::CounterGemmUops * 2 +: 2]       = gemm_uops;
    count_inc[tessera_host_pkg::CounterAluUops * 2 +: 2]        = alu_uops;
    count_inc[tessera_host_pkg::CounterRetired * 2 +: 2]        = 2'(load_retire) + 2'(compute_retire) + 2'(store_retire);
  end

  // ------------------------------------------------------------ instruction trace
  // An instruction begins on load and store when it leaves their queue (they pop it with its
  // tokens), on fetch when it enters a queue (a one-cycle span). Store's index register holds
  // the instruction it retires; load names its own, as several may be in flight. FINISH ends in
  // the cycle the host registers take finish, the run's last counted one.
  localparam int TrFetch = tessera_host_pkg::TraceFetch;
  localparam int TrLoad = tessera_host_pkg::TraceLoad;
  localparam int TrCompute = tessera_host_pkg::TraceCompute;
  localparam int TrGemm = tessera_host_pkg::TraceGemmPipe;
  localparam int TrAlu = tessera_host_pkg::TraceAluPipe;
  localparam int TrStore = tessera_host_pkg::TraceStore;
  localparam int NumTraceUnits = tessera_host_pkg::NumTraceUnits;
  // The strobes as one expression and the indices as whole words: the simulators evaluate this
  // every cycle, traced or not.
  function automatic logic [NumTraceUnits-1:0] at_unit(input logic bit_i, input int unit);
    at_unit = NumTraceUnits'(bit_i) << unit;
  endfunction
  assign trace_begin_o = at_unit(q_push != '0, TrFetch) | at_unit(q_pop[QLoad], TrLoad) |
                         at_unit(compute_trace_begin[0], TrCompute) | at_unit(compute_trace_begin[1], TrGemm) |
                         at_unit(compute_trace_begin[2], TrAlu) | at_unit(q_pop[QStore], TrStore);
  assign trace_end_o = at_unit(q_push != '0, TrFetch) | at_unit(load_retire, TrLoad) |
                       at_unit(compute_trace_end[0] || (finish && running), TrCompute) |
                       at_unit(compute_trace_end[1], TrGemm) | at_unit(compute_trace_end[2], TrAlu) |
                       at_unit(store_retire, TrStore);
  assign trace_begin_insn_o[TrFetch * 32 +: 32] = fetch_entry[EntryWidth-1 -: 32];
  assign trace_begin_insn_o[TrLoad * 32 +: 32] = load_head_insn;
  assign trace_begin_insn_o[TrCompute * 32 +: 32] = compute_head_insn;
  assign trace_begin_insn_o[TrGemm * 32 +: 32] = gemm_insn;
  assign trace_begin_insn_o[TrAlu * 32 +: 32] = alu_insn;
  assign trace_begin_insn_o[TrStore * 32 +: 32] = store_head_insn;
  assign trace_end_insn_o[TrFetch * 32 +: 32] = fetch_entry[EntryWidth-1 -: 32];
  assign trace_end_insn_o[TrLoad * 32 +: 32] = load_retire_insn;
  assign trace_end_insn_o[TrCompute * 32 +: 32] = compute_seq_insn;
  assign trace_end_insn_o[TrGemm * 32 +: 32] = gemm_insn;
  assign trace_end_insn_o[TrAlu * 32 +: 32] = alu_insn;
  assign trace_end_insn_o[TrStore * 32 +: 32] = insn_idx[ModStore * 32 +: 32];

  // Cycles since the run started: the CYCLES counter while the run goes, still counting after it,
  // so work FINISH did not wait for (a store draining) gets its own cycles.
  logic [31:0] trace_cycle_q;
  always_ff @(posedge clk_i) begin
    if (!rst_ni || start) trace_cycle_q <= '0;
    else trace_cycle_q <= trace_cycle_q + 1'b1;
  end
  assign trace_cycle_o = trace_cycle_q;

`ifndef SYNTHESIS
  // Functional cover points (tsim-cov counts them; docs/verification.md).
  tessera_cover #(.EntryWidth(EntryWidth), .NumInsnQueues(NumInsnQueues), .NumTokenQueues(NumTokenQueues)) u_cover (
    .clk_i, .rst_ni, .start_i(start), .running_i(running), .finish_i(finish), .fault_i(fault),
    .fault_cause_i(fault_cause), .q_pop_i(q_pop), .q_head_i(q_head), .q_full_i(q_full), .fetch_stall_i(fetch_stall),
    .tok_empty_i(tok_empty), .tok_full_i(tok_full),
    .arvalid_i(m_axi_arvalid_o), .arready_i(m_axi_arready_i), .araddr_i(m_axi_araddr_o), .arlen_i(m_axi_arlen_o),
    .rvalid_i(m_axi_rvalid_i), .rready_i(m_axi_rready_o),
    .awvalid_i(m_axi_awvalid_o), .awready_i(m_axi_awready_i), .awaddr_i(m_axi_awaddr_o), .awlen_i(m_axi_awlen_o),
    .wvalid_i(m_axi_wvalid_o), .wready_i(m_axi_wready_i), .bvalid_i(m_axi_bvalid_i), .bready_i(m_axi_bready_o)
  );

  // AXI: a source holds VALID and its payload stable until the handshake (AMBA AXI A3.2.1); the
  // DRAM and host models rely on it as a real interconnect would.
  ArStable: assert property (@(posedge clk_i) disable iff (!rst_ni) m_axi_arvalid_o && !m_axi_arready_i |=>
                             m_axi_arvalid_o && $stable({m_axi_araddr_o, m_axi_arlen_o, m_axi_arsize_o, m_axi_arburst_o}))
    else $error("tessera_top: AR channel changed before AR ready");
  AwStable: assert property (@(posedge clk_i) disable iff (!rst_ni) m_axi_awvalid_o && !m_axi_awready_i |=>
                             m_axi_awvalid_o && $stable({m_axi_awaddr_o, m_axi_awlen_o, m_axi_awsize_o, m_axi_awburst_o}))
    else $error("tessera_top: AW channel changed before AW ready");
  WStable: assert property (@(posedge clk_i) disable iff (!rst_ni) m_axi_wvalid_o && !m_axi_wready_i |=>
                            m_axi_wvalid_o && $stable({m_axi_wdata_o, m_axi_wstrb_o, m_axi_wlast_o}))
    else $error("tessera_top: W channel changed before W ready");
  LiteRStable: assert property (@(posedge clk_i) disable iff (!rst_ni) s_axil_rvalid_o && !s_axil_rready_i |=>
                                s_axil_rvalid_o && $stable({s_axil_rdata_o, s_axil_rresp_o}))
    else $error("tessera_top: AXI4-Lite R channel changed before R ready");
  LiteBStable: assert property (@(posedge clk_i) disable iff (!rst_ni) s_axil_bvalid_o && !s_axil_bready_i |=>
                                s_axil_bvalid_o && $stable(s_axil_bresp_o))
    else $error("tessera_top: AXI4-Lite B channel changed before B ready");
`endif

endmodule
