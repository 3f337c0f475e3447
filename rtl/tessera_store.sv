// Store module: executes STORE, writing output-SRAM tiles to DRAM with one burst per row (split
// at 4 KiB), and releases its token only when every write response has come back.
`include "tessera_config.svh"

module tessera_store #(
  parameter int EntryWidth = 32 + tessera_config_pkg::INS_WIDTH
) (
  input  logic                                   clk_i,
  input  logic                                   rst_ni,
  input  logic                                   start_i,
  input  logic                                   q_valid_i,
  // Instruction words carry fields (opcode, next-stage flags, pads) store does not use.
  /* verilator lint_off UNUSEDSIGNAL */
  input  logic [EntryWidth-1:0]                  q_entry_i,
  /* verilator lint_on UNUSEDSIGNAL */
  output logic                                   q_pop_o,
  // Tokens: pops compute->store, pushes store->compute.
  input  logic                                   g2s_empty_i,
  output logic                                   g2s_pop_o,
  input  logic                                   s2g_full_i,
  output logic                                   s2g_push_o,
  // Output SRAM read port.
  output logic                                   out_re_o,
  output logic [tessera_config_pkg::LOG_ACC_BUFF_DEPTH-1:0] out_raddr_o,
  input  logic [tessera_config_pkg::OUT_MATRIX_WIDTH-1:0]   out_rdata_i,
  // AXI4 write channels.
  output logic [31:0]                            m_axi_awaddr_o,
  output logic [7:0]                             m_axi_awlen_o,
  output logic [2:0]                             m_axi_awsize_o,
  output logic [1:0]                             m_axi_awburst_o,
  output logic                                   m_axi_awvalid_o,
  input  logic                                   m_axi_awready_i,
  output logic [tessera_config_pkg::BUS_WIDTH-1:0]          m_axi_wdata_o,
  output logic [tessera_config_pkg::BUS_WIDTH/8-1:0]        m_axi_wstrb_o,
  output logic                                   m_axi_wlast_o,
  output logic                                   m_axi_wvalid_o,
  input  logic                                   m_axi_wready_i,
  input  logic [1:0]                             m_axi_bresp_i,
  input  logic                                   m_axi_bvalid_i,
  output logic                                   m_axi_bready_o,
  output logic                                   write_error_o,
  // Status and events.
  output logic                                   busy_o,
  output logic                                   stall_o,
  output logic                                   retire_o,
  output tessera_host_pkg::status_t              status_o,
  output logic [31:0]                            insn_o,
  output logic [31:0]                            head_insn_o  // the index of the queue head (it takes)
);

  localparam int Bus = tessera_config_pkg::BUS_WIDTH;
  localparam int BusBytes = Bus / 8;
  localparam int LogBusBytes = $clog2(BusBytes);
  localparam int OutWidth = tessera_config_pkg::OUT_MATRIX_WIDTH;
  localparam int ElemBeats = OutWidth / Bus;
  localparam int LogElemBytes = $clog2(tessera_config_pkg::OUT_ELEM_BYTES);
  localparam int Aw = tessera_config_pkg::LOG_ACC_BUFF_DEPTH;
  localparam int BeatWidth = (ElemBeats > 1) ? $clog2(ElemBeats) : 1;

  logic        pop_prev, push_prev;
  logic [15:0] y_size, x_size, x_stride;
  // Programs are validated against the buffer depth, so the field's bits above it are zero.
  /* verilator lint_off UNUSEDSIGNAL */
  logic [15:0] sram_base;
  /* verilator lint_on UNUSEDSIGNAL */
  logic [31:0] dram_base;
  always_comb begin
    pop_prev  = q_entry_i[tessera_config_pkg::INSN_MEM_POP_PREV_LO];
    push_prev = q_entry_i[tessera_config_pkg::INSN_MEM_PUSH_PREV_LO];
    sram_base = q_entry_i[tessera_config_pkg::INSN_MEM_SRAM_BASE_LO +: 16];
    dram_base = q_entry_i[tessera_config_pkg::INSN_MEM_DRAM_BASE_LO +: 32];
    y_size    = q_entry_i[tessera_config_pkg::INSN_MEM_Y_SIZE_LO +: 16];
    x_size    = q_entry_i[tessera_config_pkg::INSN_MEM_X_SIZE_LO +: 16];
    x_stride  = q_entry_i[tessera_config_pkg::INSN_MEM_X_STRIDE_LO +: 16];
  end

  typedef enum logic [1:0] {StIdle, StExec, StPush} state_e;
  state_e      state_q;
  logic        push_prev_q;
  logic [31:0] insn_q;

  logic deps_ready;
  tessera_host_pkg::status_t deps_status;
  tessera_dep_check u_deps (
    .pop_req_i({1'b0, pop_prev}), .pop_empty_i({1'b0, g2s_empty_i}), .pop_queue_i({tessera_host_pkg::QueueG2s, tessera_host_pkg::QueueG2s}),
    .push_req_i({1'b0, push_prev}), .push_full_i({1'b0, s2g_full_i}), .push_queue_i({tessera_host_pkg::QueueS2g, tessera_host_pkg::QueueS2g}),
    .ready_o(deps_ready), .status_o(deps_status)
  );

  logic issue, work;
  assign issue = (state_q == StIdle) && q_valid_i && deps_ready;
  assign work = issue && x_size != '0 && y_size != '0;
  assign q_pop_o = issue;
  assign g2s_pop_o = issue && pop_prev;

  // ------------------------------------------------------------ address side
  typedef enum logic [1:0] {AwIdle, AwRow, AwBurst} aw_state_e;
  aw_state_e   aw_state_q;
  logic [15:0] aw_rows_left_q, x_size_q, x_stride_q;
  logic [31:0] aw_row_elem_q, aw_addr_q, aw_beats_left_q;
  logic [31:0] page_beats, burst_beats;
  // The burst is sized into a register in the cycle after the address and beat count move, and
  // sent from the next, so sizing and the update on AWREADY are not one path.
  localparam int MaxBurstBeats = 256;
  localparam int BurstWidth = $clog2(MaxBurstBeats + 1);
  logic                  aw_sized_q, aw_row_end_q;
  logic [BurstWidth-1:0] aw_burst_q;

  always_comb begin
    page_beats = (32'd4096 - {20'b0, aw_addr_q[11:0]}) >> LogBusBytes;
    burst_beats = aw_beats_left_q;
    if (burst_beats > MaxBurstBeats) burst_beats = MaxBurstBeats;
    if (burst_beats > page_beats) burst_beats = page_beats;
  end

  // Burst lengths for the data side, which marks the last beat of each burst.
  logic       len_push, len_pop, len_empty, len_full;
  logic [7:0] len_head;
  // Only full/empty matter for the length queue; its occupancy output is left open.
  /* verilator lint_off PINCONNECTEMPTY */
  tessera_fifo #(.Width(8), .Depth(8)) u_lens (
    .clk_i, .rst_ni, .clear_i(start_i),
    .push_i(len_push), .wdata_i(8'(aw_burst_q - 1'b1)),
    .pop_i(len_pop), .rdata_o(len_head),
    .empty_o(len_empty), .full_o(len_full), .count_o()
  );
  /* verilator lint_on PINCONNECTEMPTY */

  assign m_axi_awvalid_o = (aw_state_q == AwBurst) && aw_sized_q && !len_full;
  assign m_axi_awaddr_o = aw_addr_q;
  assign m_axi_awlen_o = 8'(aw_burst_q - 1'b1);
  assign m_axi_awsize_o = 3'(LogBusBytes);
  assign m_axi_awburst_o = 2'b01;
  assign len_push = m_axi_awvalid_o && m_axi_awready_i;

  always_ff @(posedge clk_i) begin
    if (!rst_ni || start_i) begin
      aw_state_q      <= AwIdle;
      aw_rows_left_q  <= '0;
      aw_row_elem_q   <= '0;
      aw_addr_q       <= '0;
      aw_beats_left_q <= '0;
      x_size_q        <= '0;
      x_stride_q      <= '0;
      aw_sized_q      <= 1'b0;
      aw_row_end_q    <= 1'b0;
      aw_burst_q      <= '0;
    end else begin
      case (aw_state_q)
        AwIdle: begin
          if (work) begin
            aw_rows_left_q <= y_size;
            aw_row_elem_q  <= dram_base;
            x_size_q       <= x_size;
            x_stride_q     <= x_stride;
            aw_state_q     <= AwRow;
          end
        end
        AwRow: begin
          if (aw_rows_left_q == '0) begin
            aw_state_q <= AwIdle;
          end else begin
            aw_addr_q       <= aw_row_elem_q << LogElemBytes;
            aw_beats_left_q <= {16'b0, x_size_q} << (LogElemBytes - LogBusBytes);
            aw_row_elem_q   <= aw_row_elem_q + {16'b0, x_stride_q};
            aw_rows_left_q  <= aw_rows_left_q - 1'b1;
            aw_state_q      <= AwBurst;
          end
        end
        AwBurst: begin
          if (!aw_sized_q) begin
            aw_sized_q   <= 1'b1;
            aw_burst_q   <= BurstWidth'(burst_beats);
            // The row's last burst: what is left fits both caps (compared side by side, not after the min).
      aw_row_end_q <= aw_beats_left_q <= MaxBurstBeats && aw_beats_left_q <= page_beats;
          end else if (len_push) begin
            aw_sized_q      <= 1'b0;
            aw_addr_q       <= aw_addr_q + (32'(aw_burst_q) << LogBusBytes);
            aw_beats_left_q <= aw_beats_left_q - 32'(aw_burst_q);
            if (aw_row_end_q) aw_state_q <= AwRow;
          end
        end
        default: aw_state_q <= AwIdle;
      endcase
    end
  end

  // ------------------------------------------------------------ data side
  // Elements are read in SRAM order into a two-entry buffer, then sent beat by beat.
  logic [31:0]          rd_left_q;      // elements still to read from the SRAM
  logic [Aw-1:0]        rd_addr_q;
  logic                 rd_inflight_q;
  logic [OutWidth-1:0]  ebuf_q [2];
  logic                 ebuf_wr_q, ebuf_rd_q;
  logic [1:0]           ebuf_count_q;
  logic [BeatWidth-1:0] beat_q;
  logic [7:0]           burst_beat_q;
  logic [31:0]          beats_left_q;   // data beats still to send
  logic [31:0]          bursts_out_q;   // bursts whose response is outstanding

  assign out_re_o = (rd_left_q != '0) && (32'(ebuf_count_q) + 32'(rd_inflight_q) < 2);
  assign out_raddr_o = rd_addr_q;

  logic [OutWidth-1:0] head_elem;
  assign head_elem = ebuf_q[ebuf_rd_q];
  assign m_axi_wvalid_o = (ebuf_count_q != '0) && !len_empty;
  assign m_axi_wdata_o = Bus'(head_elem >> (32'(beat_q) * Bus));
  assign m_axi_wstrb_o = '1;
  assign m_axi_wlast_o = (burst_beat_q == len_head);
  assign len_pop = m_axi_wvalid_o && m_axi_wready_i && m_axi_wlast_o;
  assign m_axi_bready_o = 1'b1;
  assign write_error_o = m_axi_bvalid_i && (m_axi_bresp_i != 2'b00);

  logic w_fire, elem_sent;
  assign w_fire = m_axi_wvalid_o && m_axi_wready_i;
  assign elem_sent = w_fire && (32'(beat_q) == ElemBeats - 1);

  always_ff @(posedge clk_i) begin
    if (!rst_ni || start_i) begin
      rd_left_q     <= '0;
      rd_addr_q     <= '0;
      rd_inflight_q <= 1'b0;
      ebuf_wr_q     <= 1'b0;
      ebuf_rd_q     <= 1'b0;
      ebuf_count_q  <= '0;
      beat_q        <= '0;
      burst_beat_q  <= '0;
      beats_left_q  <= '0;
      bursts_out_q  <= '0;
    end else begin
      logic [1:0] count_d;
      logic [31:0] bursts_d;
      count_d = ebuf_count_q;
      bursts_d = bursts_out_q;
      if (work) begin
        rd_left_q    <= 32'(x_size) * 32'(y_size);
        rd_addr_q    <= sram_base[Aw-1:0];
        beats_left_q <= (32'(x_size) * 32'(y_size)) << $clog2(ElemBeats);
      end
      if (out_re_o) begin
        rd_left_q <= rd_left_q - 1'b1;
        rd_addr_q <= rd_addr_q + 1'b1;
      end
      rd_inflight_q <= out_re_o;
      if (rd_inflight_q) begin
        ebuf_q[ebuf_wr_q] <= out_rdata_i;
        ebuf_wr_q <= !ebuf_wr_q;
        count_d = count_d + 1'b1;
      end
      if (w_fire) begin
        beats_left_q <= beats_left_q - 1'b1;
        beat_q <= (32'(beat_q) == ElemBeats - 1) ? '0 : beat_q + 1'b1;
        burst_beat_q <= m_axi_wlast_o ? '0 : burst_beat_q + 1'b1;
      end
      if (elem_sent) begin
        ebuf_rd_q <= !ebuf_rd_q;
        count_d = count_d - 1'b1;
      end
      ebuf_count_q <= count_d;
      if (len_push) bursts_d = bursts_d + 1'b1;
      if (m_axi_bvalid_i) bursts_d = bursts_d - 1'b1;
      bursts_out_q <= bursts_d;
    end
  end

  logic engine_idle;
  assign engine_idle = (aw_state_q == AwIdle) && (beats_left_q == '0) && (bursts_out_q == '0) && !work;

  always_ff @(posedge clk_i) begin
    if (!rst_ni || start_i) begin
      state_q     <= StIdle;
      push_prev_q <= 1'b0;
      insn_q      <= '0;
    end else begin
      case (state_q)
        StIdle: begin
          if (q_valid_i) insn_q <= q_entry_i[EntryWidth-1 -: 32];
          if (issue) begin
            push_prev_q <= push_prev;
            state_q     <= StExec;
          end
        end
        // The engine starts in the cycle after issue, so idle is checked from the next cycle on.
        StExec: if (engine_idle) state_q <= StPush;
        StPush: state_q <= StIdle;
        default: state_q <= StIdle;
      endcase
    end
  end

  assign s2g_push_o = (state_q == StPush) && push_prev_q;
  assign retire_o = (state_q == StPush);
  assign busy_o = (state_q != StIdle);
  assign stall_o = (state_q == StIdle) && q_valid_i && !deps_ready;
  always_comb begin
    status_o = '0;
    if (state_q != StIdle) status_o.state = tessera_host_pkg::StateBusy;
    else if (q_valid_i) status_o = deps_status;
    else status_o.state = tessera_host_pkg::StateIdle;
  end
  assign insn_o = insn_q;
  assign head_insn_o = q_entry_i[EntryWidth-1 -: 32];

endmodule
