// The pico core's host registers: tessera_host_regs' AXI4-Lite map (docs/rtl.md) read through
// constant-indexed selects, with the counters the serial core has kept CounterBits wide.
`include "tessera_config.svh"

module tessera_pico_regs #(
  // Width of each kept counter; its 64-bit register pair reads it zero-extended.
  parameter int CounterBits = 32,
  localparam int AddrWidth = tessera_host_pkg::RegAddrWidth,
  localparam int NumCounters = tessera_host_pkg::NumCounters,
  localparam int NumModules = tessera_host_pkg::NumModules,
  localparam int NumTokenQueues = tessera_host_pkg::NumTokenQueues,
  localparam int NumInsnQueues = tessera_host_pkg::NumInsnQueues,
  localparam int StatusBits = tessera_host_pkg::StatusStateBits + tessera_host_pkg::StatusArgBits
) (
  input  logic                      clk_i,
  input  logic                      rst_ni,
  // AXI4-Lite slave. Registers are whole words: the two byte-offset bits select nothing.
  /* verilator lint_off UNUSEDSIGNAL */
  input  logic [AddrWidth-1:0]      s_axil_awaddr_i,
  /* verilator lint_on UNUSEDSIGNAL */
  input  logic                      s_axil_awvalid_i,
  output logic                      s_axil_awready_o,
  input  logic [31:0]               s_axil_wdata_i,
  input  logic [3:0]                s_axil_wstrb_i,
  input  logic                      s_axil_wvalid_i,
  output logic                      s_axil_wready_o,
  output logic [1:0]                s_axil_bresp_o,
  output logic                      s_axil_bvalid_o,
  input  logic                      s_axil_bready_i,
  /* verilator lint_off UNUSEDSIGNAL */
  input  logic [AddrWidth-1:0]      s_axil_araddr_i,
  /* verilator lint_on UNUSEDSIGNAL */
  input  logic                      s_axil_arvalid_i,
  output logic                      s_axil_arready_o,
  output logic [31:0]               s_axil_rdata_o,
  output logic [1:0]                s_axil_rresp_o,
  output logic                      s_axil_rvalid_o,
  input  logic                      s_axil_rready_i,
  // Control.
  output logic                      start_o,
  output logic [31:0]               insn_addr_o,
  output logic [31:0]               insn_count_o,
  input  logic                      finish_i,
  input  logic                      fault_i,
  input  logic [tessera_host_pkg::FaultCauseBits-1:0] fault_cause_i,
  input  logic [31:0]               fault_insn_i,
  input  logic [31:0]               fault_info_i,
  // Status words as tessera_host_regs takes them.
  input  logic [NumModules*StatusBits-1:0]  status_i,
  input  logic [NumModules*32-1:0]          insn_i,
  input  logic [NumTokenQueues*16-1:0]      tokens_i,
  input  logic [NumInsnQueues*16-1:0]       queues_i,
  // One increment bit per counter and cycle; only the kept counters' bits are read.
  /* verilator lint_off UNUSEDSIGNAL */
  input  logic [NumCounters-1:0]    count_inc_i,
  /* verilator lint_on UNUSEDSIGNAL */
  output logic                      irq_o
);

  localparam int WordBits = AddrWidth - 2;
  localparam logic [WordBits-1:0] WordCtrl = WordBits'(tessera_host_pkg::RegCtrl >> 2);
  localparam logic [WordBits-1:0] WordCycles = WordBits'(tessera_host_pkg::RegCycles >> 2);
  localparam logic [WordBits-1:0] WordInsnCount = WordBits'(tessera_host_pkg::RegInsnCount >> 2);
  localparam logic [WordBits-1:0] WordInsnAddr = WordBits'(tessera_host_pkg::RegInsnAddr >> 2);
  localparam logic [WordBits-1:0] WordFaultCause = WordBits'(tessera_host_pkg::RegFaultCause >> 2);
  localparam logic [WordBits-1:0] WordFaultInsn = WordBits'(tessera_host_pkg::RegFaultInsn >> 2);
  localparam logic [WordBits-1:0] WordFaultInfo = WordBits'(tessera_host_pkg::RegFaultInfo >> 2);
  localparam int StatusWord = 32'(tessera_host_pkg::RegStatusBase) >> 2;
  localparam int InsnWord = 32'(tessera_host_pkg::RegInsnBase) >> 2;
  localparam int TokensWord = 32'(tessera_host_pkg::RegTokensBase) >> 2;
  localparam int QueueWord = 32'(tessera_host_pkg::RegQueueBase) >> 2;
  localparam int CountersWord = 32'(tessera_host_pkg::RegCountersBase) >> 2;
  // The counters the serial core keeps: micro-ops and retired instructions (the cycle counter is
  // the CYCLES register itself). The others (busy, stall, DRAM beats) would cost a quarter of the
  // register block's logic; they read zero.
  localparam logic [NumCounters-1:0] Kept =
      NumCounters'((1 << tessera_host_pkg::CounterGemmUops) | (1 << tessera_host_pkg::CounterAluUops) |
                   (1 << tessera_host_pkg::CounterRetired));

  logic        running_q, done_q, fault_q;
  logic [31:0] cycles_q, insn_addr_q, insn_count_q, fault_insn_q, fault_info_q;
  logic [tessera_host_pkg::FaultCauseBits-1:0] fault_cause_q;

  // ------------------------------------------------------------ writes
  logic        aw_have_q, w_have_q, do_write;
  logic [WordBits-1:0] aw_addr_q;
  logic [31:0] w_data_q;
  logic [3:0]  w_strb_q;

  assign s_axil_awready_o = !aw_have_q;
  assign s_axil_wready_o = !w_have_q;
  assign do_write = aw_have_q && w_have_q && !s_axil_bvalid_o;
  assign s_axil_bresp_o = tessera_config_pkg::AXI_RESP_OKAY;

  function automatic logic [31:0] merge(input logic [31:0] old, input logic [31:0] data, input logic [3:0] strb);
    for (int i = 0; i < 4; i++) merge[i * 8 +: 8] = strb[i] ? data[i * 8 +: 8] : old[i * 8 +: 8];
  endfunction

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      aw_have_q       <= 1'b0;
      w_have_q        <= 1'b0;
      aw_addr_q       <= '0;
      w_data_q        <= '0;
      w_strb_q        <= '0;
      s_axil_bvalid_o <= 1'b0;
      insn_addr_q     <= '0;
      insn_count_q    <= '0;
      start_o         <= 1'b0;
    end else begin
      start_o <= 1'b0;
      if (s_axil_awvalid_i && s_axil_awready_o) begin
        aw_have_q <= 1'b1;
        aw_addr_q <= s_axil_awaddr_i[AddrWidth-1:2];
      end
      if (s_axil_wvalid_i && s_axil_wready_o) begin
        w_have_q <= 1'b1;
        w_data_q <= s_axil_wdata_i;
        w_strb_q <= s_axil_wstrb_i;
      end
      if (do_write) begin
        aw_have_q <= 1'b0;
        w_have_q <= 1'b0;
        s_axil_bvalid_o <= 1'b1;
        // Read-only and reserved words acknowledge a write and ignore it.
        if (aw_addr_q == WordCtrl && w_strb_q[0] && w_data_q[tessera_host_pkg::CtrlBitStart] && !running_q)
          start_o <= 1'b1;
        if (aw_addr_q == WordInsnCount) insn_count_q <= merge(insn_count_q, w_data_q, w_strb_q);
        if (aw_addr_q == WordInsnAddr) insn_addr_q <= merge(insn_addr_q, w_data_q, w_strb_q);
      end else if (s_axil_bvalid_o && s_axil_bready_i) begin
        s_axil_bvalid_o <= 1'b0;
      end
    end
  end

  assign insn_addr_o = insn_addr_q;
  assign insn_count_o = insn_count_q;

  // ------------------------------------------------------------ run state
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      running_q     <= 1'b0;
      done_q        <= 1'b0;
      fault_q       <= 1'b0;
      cycles_q      <= '0;
      fault_cause_q <= tessera_host_pkg::FaultNone;
      fault_insn_q  <= '0;
      fault_info_q  <= '0;
    end else if (start_o) begin
      running_q     <= 1'b1;
      done_q        <= 1'b0;
      fault_q       <= 1'b0;
      cycles_q      <= '0;
      fault_cause_q <= tessera_host_pkg::FaultNone;
      fault_insn_q  <= '0;
      fault_info_q  <= '0;
    end else if (running_q) begin
      cycles_q <= cycles_q + 1'b1;
      if (fault_i) begin
        running_q     <= 1'b0;
        fault_q       <= 1'b1;
        fault_cause_q <= fault_cause_i;
        fault_insn_q  <= fault_insn_i;
        fault_info_q  <= fault_info_i;
      end else if (finish_i) begin
        running_q <= 1'b0;
        done_q    <= 1'b1;
      end
    end
  end

  assign irq_o = done_q || fault_q;

  // ------------------------------------------------------------ counters
  // Indexed by counter; the slices of counters not kept are constant zero and never read.
  /* verilator lint_off UNUSEDSIGNAL */
  logic [NumCounters*CounterBits-1:0] counters;
  /* verilator lint_on UNUSEDSIGNAL */
  for (genvar c = 0; c < NumCounters; c++) begin : g_counter
    if (Kept[c]) begin : g_kept
      logic [CounterBits-1:0] value_q;
      always_ff @(posedge clk_i) begin
        if (!rst_ni || start_o) value_q <= '0;
        else value_q <= value_q + CounterBits'(count_inc_i[c]);
      end
      assign counters[c * CounterBits +: CounterBits] = value_q;
    end else begin : g_zero
      assign counters[c * CounterBits +: CounterBits] = '0;
    end
  end

  // ------------------------------------------------------------ reads
  // One case over the word address: Yosys makes it a parallel multiplexer, where a chain of ifs
  // would cost a LUT per register and bit.
  localparam logic [WordBits-1:0] WordCounterCycles = WordBits'(CountersWord + 2 * tessera_host_pkg::CounterCycles);
  logic [WordBits-1:0] rd_word;
  logic [31:0] read_value;
  logic [31:0] ctrl_value;
  always_comb begin
    ctrl_value = '0;
    ctrl_value[tessera_host_pkg::CtrlBitRunning] = running_q;
    ctrl_value[tessera_host_pkg::CtrlBitDone] = done_q;
    ctrl_value[tessera_host_pkg::CtrlBitFault] = fault_q;
  end
  assign rd_word = s_axil_araddr_i[AddrWidth-1:2];
`ifndef SYNTHESIS
  // The case below names each status, index, token and queue word of the host contract.
  initial assert (NumModules == 4 && NumTokenQueues == 4 && NumInsnQueues == 3)
    else $fatal(1, "tessera_pico_regs: the host contract's register arrays changed size");
`endif
  always_comb begin
    read_value = '0;
    unique case (rd_word)
      WordCtrl: read_value = ctrl_value;
      WordCycles, WordCounterCycles: read_value = cycles_q;
      WordInsnCount: read_value = insn_count_q;
      WordInsnAddr: read_value = insn_addr_q;
      WordFaultCause: read_value = 32'(fault_cause_q);
      WordFaultInsn: read_value = fault_insn_q;
      WordFaultInfo: read_value = fault_info_q;
      WordBits'(StatusWord + 0): read_value = 32'(status_i[0 * StatusBits +: StatusBits]);
      WordBits'(StatusWord + 1): read_value = 32'(status_i[1 * StatusBits +: StatusBits]);
      WordBits'(StatusWord + 2): read_value = 32'(status_i[2 * StatusBits +: StatusBits]);
      WordBits'(StatusWord + 3): read_value = 32'(status_i[3 * StatusBits +: StatusBits]);
      WordBits'(InsnWord + 0): read_value = insn_i[0 * 32 +: 32];
      WordBits'(InsnWord + 1): read_value = insn_i[1 * 32 +: 32];
      WordBits'(InsnWord + 2): read_value = insn_i[2 * 32 +: 32];
      WordBits'(InsnWord + 3): read_value = insn_i[3 * 32 +: 32];
      WordBits'(TokensWord + 0): read_value = 32'(tokens_i[0 * 16 +: 16]);
      WordBits'(TokensWord + 1): read_value = 32'(tokens_i[1 * 16 +: 16]);
      WordBits'(TokensWord + 2): read_value = 32'(tokens_i[2 * 16 +: 16]);
      WordBits'(TokensWord + 3): read_value = 32'(tokens_i[3 * 16 +: 16]);
      WordBits'(QueueWord + 0): read_value = 32'(queues_i[0 * 16 +: 16]);
      WordBits'(QueueWord + 1): read_value = 32'(queues_i[1 * 16 +: 16]);
      WordBits'(QueueWord + 2): read_value = 32'(queues_i[2 * 16 +: 16]);
      WordBits'(CountersWord + 2 * tessera_host_pkg::CounterGemmUops):
        read_value = 32'(counters[tessera_host_pkg::CounterGemmUops * CounterBits +: CounterBits]);
      WordBits'(CountersWord + 2 * tessera_host_pkg::CounterAluUops):
        read_value = 32'(counters[tessera_host_pkg::CounterAluUops * CounterBits +: CounterBits]);
      WordBits'(CountersWord + 2 * tessera_host_pkg::CounterRetired):
        read_value = 32'(counters[tessera_host_pkg::CounterRetired * CounterBits +: CounterBits]);
      default: read_value = '0;  // reserved words, counters the core does not keep, high words
    endcase
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      s_axil_rvalid_o <= 1'b0;
      s_axil_rdata_o  <= '0;
    end else if (s_axil_arvalid_i && s_axil_arready_o) begin
      s_axil_rvalid_o <= 1'b1;
      s_axil_rdata_o  <= read_value;
    end else if (s_axil_rvalid_o && s_axil_rready_i) begin
      s_axil_rvalid_o <= 1'b0;
    end
  end

  assign s_axil_arready_o = !s_axil_rvalid_o;
  assign s_axil_rresp_o = tessera_config_pkg::AXI_RESP_OKAY;

endmodule
