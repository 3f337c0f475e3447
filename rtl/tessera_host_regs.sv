// Host registers behind an AXI4-Lite slave: VTA's control map (start/done, cycle counter,
// instruction count and address), fault and status words, and the performance counters.
`include "tessera_config.svh"

module tessera_host_regs #(
  parameter int NumCounters = tessera_host_pkg::NumCounters,
  parameter int AddrWidth = tessera_host_pkg::RegAddrWidth,
  parameter int NumModules = tessera_host_pkg::NumModules,
  parameter int NumTokenQueues = tessera_host_pkg::NumTokenQueues,
  parameter int NumInsnQueues = tessera_host_pkg::NumInsnQueues,
  parameter int StatusBits = tessera_host_pkg::StatusStateBits + tessera_host_pkg::StatusArgBits
) (
  input  logic                      clk_i,
  input  logic                      rst_ni,
  // AXI4-Lite slave.
  // Registers are whole words: the two byte-offset bits of the write address select nothing.
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
  // Registers are whole words: the two byte-offset bits of the read address select nothing.
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
  // Status words: per module (fetch, load, compute, store) state and instruction index, token
  // counts (tessera_host_pkg's token queues) and instruction-queue occupancies (load, compute, store).
  input  logic [NumModules*StatusBits-1:0]  status_i,
  input  logic [NumModules*32-1:0]          insn_i,
  input  logic [NumTokenQueues*16-1:0]      tokens_i,
  input  logic [NumInsnQueues*16-1:0]       queues_i,
  // Counter increments, one 2-bit amount per counter and cycle (index = tessera_host_pkg::Counter*).
  input  logic [NumCounters*2-1:0]  count_inc_i,
  output logic                      running_o,
  output logic                      irq_o
);

  // Registers are addressed by word: the index is the byte offset without its two low bits.
  localparam int WordBits = AddrWidth - 2;
  localparam logic [WordBits-1:0] WordCtrl = WordBits'(tessera_host_pkg::RegCtrl >> 2);
  localparam logic [WordBits-1:0] WordCycles = WordBits'(tessera_host_pkg::RegCycles >> 2);
  localparam logic [WordBits-1:0] WordInsnCount = WordBits'(tessera_host_pkg::RegInsnCount >> 2);
  localparam logic [WordBits-1:0] WordInsnAddr = WordBits'(tessera_host_pkg::RegInsnAddr >> 2);
  localparam logic [WordBits-1:0] WordFaultCause = WordBits'(tessera_host_pkg::RegFaultCause >> 2);
  localparam logic [WordBits-1:0] WordFaultInsn = WordBits'(tessera_host_pkg::RegFaultInsn >> 2);
  localparam logic [WordBits-1:0] WordFaultInfo = WordBits'(tessera_host_pkg::RegFaultInfo >> 2);
  localparam int unsigned StatusWord = 32'(tessera_host_pkg::RegStatusBase) >> 2;
  localparam int unsigned InsnWord = 32'(tessera_host_pkg::RegInsnBase) >> 2;
  localparam int unsigned TokensWord = 32'(tessera_host_pkg::RegTokensBase) >> 2;
  localparam int unsigned QueueWord = 32'(tessera_host_pkg::RegQueueBase) >> 2;
  localparam int unsigned CountersWord = 32'(tessera_host_pkg::RegCountersBase) >> 2;

  logic        running_q, done_q, fault_q;
  logic [31:0] cycles_q, insn_addr_q, insn_count_q;
  logic [tessera_host_pkg::FaultCauseBits-1:0] fault_cause_q;
  logic [31:0] fault_insn_q, fault_info_q;

  // ------------------------------------------------------------ writes
  logic        aw_have_q, w_have_q;
  logic [WordBits-1:0] aw_addr_q;
  logic [31:0] w_data_q;
  logic [3:0]  w_strb_q;
  logic        do_write;

  assign s_axil_awready_o = !aw_have_q;
  assign s_axil_wready_o = !w_have_q;
  assign do_write = aw_have_q && w_have_q && !s_axil_bvalid_o;
  assign s_axil_bresp_o = tessera_config_pkg::AXI_RESP_OKAY;

  function automatic logic [31:0] merge(input logic [31:0] old, input logic [31:0] data, input logic [3:0] strb);
    for (int i = 0; i < 4; i++) merge[i * 8 +: 8] = strb[i] ? data[i * 8 +: 8] : old[i * 8 +: 8];
  endfunction

  // Next state of the write channel and of the registers the host writes.
  logic        aw_have_d, w_have_d, bvalid_d, start_d;
  logic [WordBits-1:0] aw_addr_d;
  logic [31:0] w_data_d, insn_addr_d, insn_count_d;
  logic [3:0]  w_strb_d;
  always_comb begin
    aw_have_d    = aw_have_q;
    w_have_d     = w_have_q;
    aw_addr_d    = aw_addr_q;
    w_data_d     = w_data_q;
    w_strb_d     = w_strb_q;
    bvalid_d     = s_axil_bvalid_o;
    insn_addr_d  = insn_addr_q;
    insn_count_d = insn_count_q;
    start_d      = 1'b0;
    if (s_axil_awvalid_i && s_axil_awready_o) begin
      aw_have_d = 1'b1;
      aw_addr_d = s_axil_awaddr_i[AddrWidth-1:2];
    end
    if (s_axil_wvalid_i && s_axil_wready_o) begin
      w_have_d = 1'b1;
      w_data_d = s_axil_wdata_i;
      w_strb_d = s_axil_wstrb_i;
    end
    if (do_write) begin
      aw_have_d = 1'b0;
      w_have_d  = 1'b0;
      bvalid_d  = 1'b1;
      case (aw_addr_q)
        WordCtrl: begin
          if (w_strb_q[0] && w_data_q[tessera_host_pkg::CtrlBitStart] && !running_q) start_d = 1'b1;
        end
        WordInsnCount: insn_count_d = merge(insn_count_q, w_data_q, w_strb_q);
        WordInsnAddr: insn_addr_d = merge(insn_addr_q, w_data_q, w_strb_q);
        default: ;  // read-only or reserved: the write is acknowledged and ignored
      endcase
    end else if (s_axil_bvalid_o && s_axil_bready_i) begin
      bvalid_d = 1'b0;
    end
  end

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
      aw_have_q       <= aw_have_d;
      w_have_q        <= w_have_d;
      aw_addr_q       <= aw_addr_d;
      w_data_q        <= w_data_d;
      w_strb_q        <= w_strb_d;
      s_axil_bvalid_o <= bvalid_d;
      insn_addr_q     <= insn_addr_d;
      insn_count_q    <= insn_count_d;
      start_o         <= start_d;
    end
  end

  assign insn_addr_o = insn_addr_q;
  assign insn_count_o = insn_count_q;

  // ------------------------------------------------------------ run state
  logic        running_d, done_d, fault_d;
  logic [31:0] cycles_d, fault_insn_d, fault_info_d;
  logic [tessera_host_pkg::FaultCauseBits-1:0] fault_cause_d;
  always_comb begin
    running_d     = running_q;
    done_d        = done_q;
    fault_d       = fault_q;
    cycles_d      = cycles_q;
    fault_cause_d = fault_cause_q;
    fault_insn_d  = fault_insn_q;
    fault_info_d  = fault_info_q;
    if (start_o) begin
      running_d     = 1'b1;
      done_d        = 1'b0;
      fault_d       = 1'b0;
      cycles_d      = '0;
      fault_cause_d = tessera_host_pkg::FaultNone;
      fault_insn_d  = '0;
      fault_info_d  = '0;
    end else if (running_q) begin
      cycles_d = cycles_q + 1'b1;
      if (fault_i) begin
        running_d     = 1'b0;
        fault_d       = 1'b1;
        fault_cause_d = fault_cause_i;
        fault_insn_d  = fault_insn_i;
        fault_info_d  = fault_info_i;
      end else if (finish_i) begin
        running_d = 1'b0;
        done_d    = 1'b1;
      end
    end
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      running_q     <= 1'b0;
      done_q        <= 1'b0;
      fault_q       <= 1'b0;
      cycles_q      <= '0;
      fault_cause_q <= tessera_host_pkg::FaultNone;
      fault_insn_q  <= '0;
      fault_info_q  <= '0;
    end else begin
      running_q     <= running_d;
      done_q        <= done_d;
      fault_q       <= fault_d;
      cycles_q      <= cycles_d;
      fault_cause_q <= fault_cause_d;
      fault_insn_q  <= fault_insn_d;
      fault_info_q  <= fault_info_d;
    end
  end

  assign irq_o = done_q || fault_q;
  assign running_o = running_q;

  // ------------------------------------------------------------ counters
  logic [NumCounters*64-1:0] counters;
  for (genvar i = 0; i < NumCounters; i++) begin : g_counter
    logic [63:0] value_q;
    always_ff @(posedge clk_i) begin
      if (!rst_ni || start_o) value_q <= '0;
      else value_q <= value_q + 64'(count_inc_i[i * 2 +: 2]);
    end
    assign counters[i * 64 +: 64] = value_q;
  end

  // ------------------------------------------------------------ reads
  // The status words are registered first: each is its module's dependency check on the head of
  // its queue, and with the read multiplexer behind it that was too deep a path. A read sees them
  // as they were in the cycle before the read is taken.
  logic [NumModules*StatusBits-1:0] status_q;
  always_ff @(posedge clk_i) begin
    if (!rst_ni) status_q <= '0;
    else status_q <= status_i;
  end

  // The arrays of per-module, per-queue and counter registers are found by their word offset from
  // their base; the scalar registers by their word.
  logic [WordBits-1:0] rd_word;
  logic [31:0] read_value;
  int unsigned rd_status, rd_insn, rd_tokens, rd_queue, rd_counter;
  always_comb begin
    rd_word = s_axil_araddr_i[AddrWidth-1:2];
    rd_status = 32'(rd_word) - StatusWord;
    rd_insn = 32'(rd_word) - InsnWord;
    rd_tokens = 32'(rd_word) - TokensWord;
    rd_queue = 32'(rd_word) - QueueWord;
    rd_counter = 32'(rd_word) - CountersWord;  // two words per 64-bit counter
    read_value = '0;
    if (rd_word == WordCtrl) begin
      read_value[tessera_host_pkg::CtrlBitRunning] = running_q;
      read_value[tessera_host_pkg::CtrlBitDone] = done_q;
      read_value[tessera_host_pkg::CtrlBitFault] = fault_q;
    end else if (rd_word == WordCycles) begin
      read_value = cycles_q;
    end else if (rd_word == WordInsnCount) begin
      read_value = insn_count_q;
    end else if (rd_word == WordInsnAddr) begin
      read_value = insn_addr_q;
    end else if (rd_word == WordFaultCause) begin
      read_value = 32'(fault_cause_q);
    end else if (rd_word == WordFaultInsn) begin
      read_value = fault_insn_q;
    end else if (rd_word == WordFaultInfo) begin
      read_value = fault_info_q;
    end else if (rd_status < NumModules) begin
      read_value = 32'(status_q[rd_status * StatusBits +: StatusBits]);
    end else if (rd_insn < NumModules) begin
      read_value = insn_i[rd_insn * 32 +: 32];
    end else if (rd_tokens < NumTokenQueues) begin
      read_value = 32'(tokens_i[rd_tokens * 16 +: 16]);
    end else if (rd_queue < NumInsnQueues) begin
      read_value = 32'(queues_i[rd_queue * 16 +: 16]);
    end else if (rd_counter < 2 * NumCounters) begin
      read_value = counters[rd_counter * 32 +: 32];
    end
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

`ifdef FORMAL
  // Properties proved by k-induction (tests/formal): AXI4-Lite's rules for a slave, one response
  // per request, writes and reads of the control registers, and a valid run state. The host's
  // channels are unconstrained.
  logic f_past_valid = 1'b0;
  always_ff @(posedge clk_i) f_past_valid <= 1'b1;
  always_comb if (!f_past_valid) assume (!rst_ni);

  // Requests taken and responses given: one read outstanding at most, and every write response
  // answers an address and a data half taken before it.
  logic [1:0] f_reads, f_aw, f_w;
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      f_reads <= '0;
      f_aw <= '0;
      f_w <= '0;
    end else begin
      f_reads <= f_reads + 2'(s_axil_arvalid_i && s_axil_arready_o) - 2'(s_axil_rvalid_o && s_axil_rready_i);
      f_aw <= f_aw + 2'(s_axil_awvalid_i && s_axil_awready_o) - 2'(s_axil_bvalid_o && s_axil_bready_i);
      f_w <= f_w + 2'(s_axil_wvalid_i && s_axil_wready_o) - 2'(s_axil_bvalid_o && s_axil_bready_i);
    end
  end
  always_comb begin
    if (f_past_valid && rst_ni) begin
      OneReadOutstanding: assert (f_reads <= 2'd1 && s_axil_rvalid_o == (f_reads == 2'd1));
      // A held address or data half plus the response not yet taken: the next write's halves may
      // arrive while the last one's response waits.
      WritesAccounted: assert (f_aw == 2'(aw_have_q) + 2'(s_axil_bvalid_o) && f_w == 2'(w_have_q) + 2'(s_axil_bvalid_o));
      RunStateValid: assert (!(running_q && (done_q || fault_q)) && !(done_q && fault_q) && irq_o == (done_q || fault_q));
    end
  end

  // The instruction count a write of w_data_q under w_strb_q leaves, written out byte by byte
  // rather than through the design's merge().
  logic [31:0] f_written_count;
  assign f_written_count = {w_strb_q[3] ? w_data_q[31:24] : insn_count_q[31:24],
                            w_strb_q[2] ? w_data_q[23:16] : insn_count_q[23:16],
                            w_strb_q[1] ? w_data_q[15:8] : insn_count_q[15:8],
                            w_strb_q[0] ? w_data_q[7:0] : insn_count_q[7:0]};

  always_ff @(posedge clk_i) begin
    if (f_past_valid && $past(rst_ni) && rst_ni) begin
      // A response stays, unchanged, until the host takes it.
      if ($past(s_axil_rvalid_o && !s_axil_rready_i)) begin
        ReadHeldUntilReady: assert (s_axil_rvalid_o && s_axil_rdata_o == $past(s_axil_rdata_o));
      end
      if ($past(s_axil_bvalid_o && !s_axil_bready_i)) begin
        WriteResponseHeld: assert (s_axil_bvalid_o);
      end
      // A read returns the register as it was when the address was taken.
      if ($past(s_axil_arvalid_i && s_axil_arready_o && s_axil_araddr_i[AddrWidth-1:2] == WordInsnAddr)) begin
        ReadReturnsRegister: assert (s_axil_rdata_o == $past(insn_addr_q));
      end
      // A write changes the bytes its strobe names and nothing else.
      if ($past(do_write && aw_addr_q == WordInsnCount)) begin
        WriteMergesStrobe: assert (insn_count_q == $past(f_written_count));
      end else begin
        OtherWritesKeepRegister: assert (insn_count_q == $past(insn_count_q));
      end
      // A run starts only from a write of the start bit while idle, for one cycle.
      if (start_o) begin
        StartFromControlWrite: assert ($past(do_write && aw_addr_q == WordCtrl && w_strb_q[0] && w_data_q[tessera_host_pkg::CtrlBitStart] && !running_q));
      end
      // The cycle counter counts the run's cycles.
      if ($past(running_q && !start_o)) begin
        CyclesCountRun: assert (cycles_q == $past(cycles_q) + 1'b1);
      end
    end
  end
`endif

endmodule
