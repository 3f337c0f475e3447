// Host registers behind an AXI4-Lite slave: VTA's control map (start/done, cycle counter,
// instruction count and address), fault and status words, and the performance counters.
module tessera_host_regs #(
  parameter int NumCounters = 14
) (
  input  logic                      clk_i,
  input  logic                      rst_ni,
  // AXI4-Lite slave.
  // Registers are whole words: the two byte-offset bits of the write address select nothing.
  /* verilator lint_off UNUSEDSIGNAL */
  input  logic [11:0]               s_axil_awaddr_i,
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
  input  logic [11:0]               s_axil_araddr_i,
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
  input  logic [3:0]                fault_cause_i,
  input  logic [31:0]               fault_insn_i,
  input  logic [31:0]               fault_info_i,
  // Status words: per module (fetch, load, compute, store) state and instruction index, token
  // counts (L2C, C2L, C2S, S2C) and instruction-queue occupancies (load, compute, store).
  input  logic [4*8-1:0]            status_i,
  input  logic [4*32-1:0]           insn_i,
  input  logic [4*16-1:0]           tokens_i,
  input  logic [3*16-1:0]           queues_i,
  // Counter increments, one 2-bit amount per counter and cycle (index = offset (0x100 + 8 i)).
  input  logic [NumCounters*2-1:0]  count_inc_i,
  output logic                      running_o,
  output logic                      irq_o
);

  localparam logic [1:0] RespOkay = 2'b00;

  logic        running_q, done_q, fault_q;
  logic [31:0] cycles_q, insn_addr_q, insn_count_q;
  logic [3:0]  fault_cause_q;
  logic [31:0] fault_insn_q, fault_info_q;

  // ------------------------------------------------------------ writes
  logic        aw_have_q, w_have_q;
  logic [11:2] aw_addr_q;
  logic [31:0] w_data_q;
  logic [3:0]  w_strb_q;
  logic        do_write;

  assign s_axil_awready_o = !aw_have_q;
  assign s_axil_wready_o = !w_have_q;
  assign do_write = aw_have_q && w_have_q && !s_axil_bvalid_o;
  assign s_axil_bresp_o = RespOkay;

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
        aw_addr_q <= s_axil_awaddr_i[11:2];
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
        case (aw_addr_q)
          10'h000: if (w_strb_q[0] && w_data_q[0] && !running_q) start_o <= 1'b1;
          10'h002: insn_count_q <= merge(insn_count_q, w_data_q, w_strb_q);
          10'h003: insn_addr_q <= merge(insn_addr_q, w_data_q, w_strb_q);
          default: ;  // read-only or reserved: the write is acknowledged and ignored
        endcase
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
      fault_cause_q <= '0;
      fault_insn_q  <= '0;
      fault_info_q  <= '0;
    end else if (start_o) begin
      running_q     <= 1'b1;
      done_q        <= 1'b0;
      fault_q       <= 1'b0;
      cycles_q      <= '0;
      fault_cause_q <= '0;
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
  logic [31:0] read_value;
  always_comb begin
    read_value = '0;
    case (s_axil_araddr_i[11:2])
      10'h000: read_value = {29'b0, fault_q, done_q, running_q};
      10'h001: read_value = cycles_q;
      10'h002: read_value = insn_count_q;
      10'h003: read_value = insn_addr_q;
      10'h005: read_value = {28'b0, fault_cause_q};
      10'h006: read_value = fault_insn_q;
      10'h007: read_value = fault_info_q;
      10'h008, 10'h009, 10'h00a, 10'h00b: read_value = {24'b0, status_i[s_axil_araddr_i[3:2] * 8 +: 8]};
      10'h00c, 10'h00d, 10'h00e, 10'h00f: read_value = insn_i[s_axil_araddr_i[3:2] * 32 +: 32];
      10'h010, 10'h011, 10'h012, 10'h013: read_value = {16'b0, tokens_i[s_axil_araddr_i[3:2] * 16 +: 16]};
      10'h014: read_value = {16'b0, queues_i[15:0]};
      10'h015: read_value = {16'b0, queues_i[31:16]};
      10'h016: read_value = {16'b0, queues_i[47:32]};
      default: begin
        if (s_axil_araddr_i[11:8] == 4'h1 && 32'(s_axil_araddr_i[7:3]) < NumCounters) begin
          read_value = counters[32'(s_axil_araddr_i[7:2]) * 32 +: 32];
        end
      end
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
  assign s_axil_rresp_o = RespOkay;

endmodule
