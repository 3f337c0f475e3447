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
  localparam int OutAddrWidth = tessera_config_pkg::LOG_ACC_BUFF_DEPTH;
  localparam int BeatWidth = (ElemBeats > 1) ? $clog2(ElemBeats) : 1;
  localparam int InsnWidth = tessera_config_pkg::INS_WIDTH;
  localparam int SizeWidth = tessera_config_pkg::MEMOP_SIZE_BIT_WIDTH;
  localparam int StrideWidth = tessera_config_pkg::MEMOP_STRIDE_BIT_WIDTH;
  localparam int PageBits = tessera_config_pkg::AXI_PAGE_BITS;

  // The head instruction, read through the memory format. Programs are validated against the
  // buffer depth, so the SRAM base's bits above it are zero.
  /* verilator lint_off UNUSEDSIGNAL */
  tessera_config_pkg::insn_mem_t insn;
  /* verilator lint_on UNUSEDSIGNAL */
  assign insn = q_entry_i[InsnWidth-1:0];

  typedef enum logic [1:0] {StIdle, StExec, StPush} state_e;
  state_e      state_q, state_d;
  logic        push_prev_q, push_prev_d;
  logic [31:0] insn_q, insn_d;

  logic deps_ready;
  tessera_host_pkg::status_t deps_status;
  tessera_dep_check u_deps (
    .pop_req_i({1'b0, insn.pop_prev}), .pop_empty_i({1'b0, g2s_empty_i}), .pop_queue_i({tessera_host_pkg::QueueG2s, tessera_host_pkg::QueueG2s}),
    .push_req_i({1'b0, insn.push_prev}), .push_full_i({1'b0, s2g_full_i}), .push_queue_i({tessera_host_pkg::QueueS2g, tessera_host_pkg::QueueS2g}),
    .ready_o(deps_ready), .status_o(deps_status)
  );

  logic issue, work;
  assign issue = (state_q == StIdle) && q_valid_i && deps_ready;
  assign work = issue && insn.x_size != '0 && insn.y_size != '0;
  assign q_pop_o = issue;
  assign g2s_pop_o = issue && insn.pop_prev;

  // ------------------------------------------------------------ address side
  typedef enum logic [1:0] {AwIdle, AwRow, AwBurst} aw_state_e;
  aw_state_e            aw_state_q, aw_state_d;
  logic [SizeWidth-1:0] aw_rows_left_q, aw_rows_left_d, x_size_q, x_size_d;
  logic [StrideWidth-1:0] x_stride_q, x_stride_d;
  // The beats left of a row (x_size elements of ElemBeats beats each) and of a page.
  localparam int RowBeatsWidth = SizeWidth + LogElemBytes - LogBusBytes;
  localparam int PageBeatsWidth = PageBits - LogBusBytes + 1;
  localparam int MaxBurstBeats = tessera_config_pkg::AXI_MAX_BURST_BEATS;
  localparam int BurstWidth = $clog2(MaxBurstBeats + 1);
  localparam int CapWidth = (PageBeatsWidth > BurstWidth) ? PageBeatsWidth : BurstWidth;
  logic [31:0]              aw_row_elem_q, aw_row_elem_d, aw_addr_q, aw_addr_d;
  logic [RowBeatsWidth-1:0] aw_beats_left_q, aw_beats_left_d;
  logic [PageBits:0]         page_bytes;
  logic [PageBeatsWidth-1:0] page_beats;
  logic [BurstWidth-1:0]     burst_beats;
  // The burst is sized into a register in the cycle after the address and beat count move, and
  // sent from the next, so sizing and the update on AWREADY are not one path.
  logic                  aw_sized_q, aw_sized_d, aw_row_end_q, aw_row_end_d;
  logic [BurstWidth-1:0] aw_burst_q, aw_burst_d;

  always_comb begin
    page_bytes = (PageBits + 1)'(tessera_config_pkg::AXI_PAGE_BYTES) - (PageBits + 1)'(aw_addr_q[PageBits-1:0]);
    page_beats = PageBeatsWidth'(page_bytes >> LogBusBytes);
    burst_beats = (aw_beats_left_q > RowBeatsWidth'(MaxBurstBeats)) ? BurstWidth'(MaxBurstBeats)
                                                                  : BurstWidth'(aw_beats_left_q);
    if (CapWidth'(burst_beats) > CapWidth'(page_beats)) burst_beats = BurstWidth'(page_beats);
  end

  // Burst lengths for the data side, which marks the last beat of each burst.
  logic       length_push, length_pop, length_empty, length_full;
  logic [7:0] length_head;
  // Only full/empty matter for the length queue; its occupancy output is left open.
  /* verilator lint_off PINCONNECTEMPTY */
  tessera_fifo #(.Width(8), .Depth(8)) u_lengths (
    .clk_i, .rst_ni, .clear_i(start_i),
    .push_i(length_push), .wdata_i(8'(aw_burst_q - 1'b1)),
    .pop_i(length_pop), .rdata_o(length_head),
    .empty_o(length_empty), .full_o(length_full), .count_o()
  );
  /* verilator lint_on PINCONNECTEMPTY */

  assign m_axi_awvalid_o = (aw_state_q == AwBurst) && aw_sized_q && !length_full;
  assign m_axi_awaddr_o = aw_addr_q;
  assign m_axi_awlen_o = 8'(aw_burst_q - 1'b1);
  assign m_axi_awsize_o = 3'(LogBusBytes);
  assign m_axi_awburst_o = tessera_config_pkg::AXI_BURST_INCR;
  assign length_push = m_axi_awvalid_o && m_axi_awready_i;

  // Next state: a row at a time, each row's bursts sized, then sent.
  always_comb begin
    aw_state_d = aw_state_q;
    aw_rows_left_d = aw_rows_left_q;
    aw_row_elem_d = aw_row_elem_q;
    aw_addr_d = aw_addr_q;
    aw_beats_left_d = aw_beats_left_q;
    x_size_d = x_size_q;
    x_stride_d = x_stride_q;
    aw_sized_d = aw_sized_q;
    aw_row_end_d = aw_row_end_q;
    aw_burst_d = aw_burst_q;
    case (aw_state_q)
      AwIdle: begin
        if (work) begin
          aw_rows_left_d = insn.y_size;
          aw_row_elem_d = insn.dram_base;
          x_size_d = insn.x_size;
          x_stride_d = insn.x_stride;
          aw_state_d = AwRow;
        end
      end
      AwRow: begin
        if (aw_rows_left_q == '0) begin
          aw_state_d = AwIdle;
        end else begin
          aw_addr_d = aw_row_elem_q << LogElemBytes;
          aw_beats_left_d = RowBeatsWidth'(x_size_q) << (LogElemBytes - LogBusBytes);
          aw_row_elem_d = aw_row_elem_q + 32'(x_stride_q);
          aw_rows_left_d = aw_rows_left_q - 1'b1;
          aw_state_d = AwBurst;
        end
      end
      AwBurst: begin
        if (!aw_sized_q) begin
          aw_sized_d = 1'b1;
          aw_burst_d = BurstWidth'(burst_beats);
          // The row's last burst: what is left fits both caps (compared side by side, not after the min).
          aw_row_end_d = aw_beats_left_q <= RowBeatsWidth'(MaxBurstBeats) &&
                         aw_beats_left_q <= RowBeatsWidth'(page_beats);
        end else if (length_push) begin
          aw_sized_d = 1'b0;
          aw_addr_d = aw_addr_q + (32'(aw_burst_q) << LogBusBytes);
          aw_beats_left_d = aw_beats_left_q - RowBeatsWidth'(aw_burst_q);
          if (aw_row_end_q) aw_state_d = AwRow;
        end
      end
      default: aw_state_d = AwIdle;
    endcase
  end

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
      aw_state_q      <= aw_state_d;
      aw_rows_left_q  <= aw_rows_left_d;
      aw_row_elem_q   <= aw_row_elem_d;
      aw_addr_q       <= aw_addr_d;
      aw_beats_left_q <= aw_beats_left_d;
      x_size_q        <= x_size_d;
      x_stride_q      <= x_stride_d;
      aw_sized_q      <= aw_sized_d;
      aw_row_end_q    <= aw_row_end_d;
      aw_burst_q      <= aw_burst_d;
    end
  end

  // ------------------------------------------------------------ data side
  // Elements are read in SRAM order into a two-entry buffer, then sent beat by beat.
  logic [31:0]             read_left_q, read_left_d;  // elements still to read from the SRAM
  logic [OutAddrWidth-1:0] read_addr_q, read_addr_d;
  logic                    read_in_flight_q;          // an SRAM read returns its element this cycle
  logic [OutWidth-1:0]     element_buffer_q [2];
  logic                    element_write_slot_q, element_write_slot_d, element_read_slot_q, element_read_slot_d;
  logic [1:0]              element_count_q, element_count_d;
  logic [BeatWidth-1:0]    beat_q, beat_d;              // the beat of its element the head sends
  logic [7:0]              burst_beat_q, burst_beat_d;  // the beat of its burst
  logic [31:0]             beats_left_q, beats_left_d;  // data beats still to send
  logic [31:0]             bursts_out_q, bursts_out_d;  // bursts whose response is outstanding

  assign out_re_o = (read_left_q != '0) && (32'(element_count_q) + 32'(read_in_flight_q) < 2);
  assign out_raddr_o = read_addr_q;

  logic [OutWidth-1:0] head_elem;
  assign head_elem = element_buffer_q[element_read_slot_q];
  assign m_axi_wvalid_o = (element_count_q != '0) && !length_empty;
  assign m_axi_wdata_o = Bus'(head_elem >> (32'(beat_q) * Bus));
  assign m_axi_wstrb_o = '1;
  assign m_axi_wlast_o = (burst_beat_q == length_head);
  assign length_pop = m_axi_wvalid_o && m_axi_wready_i && m_axi_wlast_o;
  assign m_axi_bready_o = 1'b1;
  assign write_error_o = m_axi_bvalid_i && (m_axi_bresp_i != tessera_config_pkg::AXI_RESP_OKAY);

  logic w_handshake, elem_sent;
  assign w_handshake = m_axi_wvalid_o && m_axi_wready_i;
  assign elem_sent = w_handshake && (32'(beat_q) == ElemBeats - 1);

  // Next state: reads into the buffer, beats out of it, bursts answered.
  always_comb begin
    read_left_d = read_left_q;
    read_addr_d = read_addr_q;
    element_write_slot_d = element_write_slot_q;
    element_read_slot_d = element_read_slot_q;
    element_count_d = element_count_q;
    beat_d = beat_q;
    burst_beat_d = burst_beat_q;
    beats_left_d = beats_left_q;
    bursts_out_d = bursts_out_q;
    if (work) begin
      read_left_d = 32'(insn.x_size) * 32'(insn.y_size);
      read_addr_d = insn.sram_base[OutAddrWidth-1:0];
      beats_left_d = (32'(insn.x_size) * 32'(insn.y_size)) << $clog2(ElemBeats);
    end
    if (out_re_o) begin
      read_left_d = read_left_q - 1'b1;
      read_addr_d = read_addr_q + 1'b1;
    end
    if (read_in_flight_q) begin
      element_write_slot_d = !element_write_slot_q;
      element_count_d = element_count_d + 1'b1;
    end
    if (w_handshake) begin
      beats_left_d = beats_left_q - 1'b1;
      beat_d = (32'(beat_q) == ElemBeats - 1) ? '0 : beat_q + 1'b1;
      burst_beat_d = m_axi_wlast_o ? '0 : burst_beat_q + 1'b1;
    end
    if (elem_sent) begin
      element_read_slot_d = !element_read_slot_q;
      element_count_d = element_count_d - 1'b1;
    end
    if (length_push) bursts_out_d = bursts_out_d + 1'b1;
    if (m_axi_bvalid_i) bursts_out_d = bursts_out_d - 1'b1;
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni || start_i) begin
      read_left_q          <= '0;
      read_addr_q          <= '0;
      read_in_flight_q     <= 1'b0;
      element_write_slot_q <= 1'b0;
      element_read_slot_q  <= 1'b0;
      element_count_q      <= '0;
      beat_q               <= '0;
      burst_beat_q         <= '0;
      beats_left_q         <= '0;
      bursts_out_q         <= '0;
    end else begin
      read_left_q          <= read_left_d;
      read_addr_q          <= read_addr_d;
      read_in_flight_q     <= out_re_o;
      // The element an SRAM read returns goes to the write slot.
      if (read_in_flight_q) element_buffer_q[element_write_slot_q] <= out_rdata_i;
      element_write_slot_q <= element_write_slot_d;
      element_read_slot_q  <= element_read_slot_d;
      element_count_q      <= element_count_d;
      beat_q               <= beat_d;
      burst_beat_q         <= burst_beat_d;
      beats_left_q         <= beats_left_d;
      bursts_out_q         <= bursts_out_d;
    end
  end

  logic engine_idle;
  assign engine_idle = (aw_state_q == AwIdle) && (beats_left_q == '0) && (bursts_out_q == '0) && !work;

  // Next state: an instruction issues, runs until the engine is idle, then pushes its token.
  always_comb begin
    state_d = state_q;
    push_prev_d = push_prev_q;
    insn_d = insn_q;
    case (state_q)
      StIdle: begin
        if (q_valid_i) insn_d = q_entry_i[EntryWidth-1 -: 32];
        if (issue) begin
          push_prev_d = insn.push_prev;
          state_d = StExec;
        end
      end
      // The engine starts in the cycle after issue, so idle is checked from the next cycle on.
      StExec: if (engine_idle) state_d = StPush;
      StPush: state_d = StIdle;
      default: state_d = StIdle;
    endcase
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni || start_i) begin
      state_q     <= StIdle;
      push_prev_q <= 1'b0;
      insn_q      <= '0;
    end else begin
      state_q     <= state_d;
      push_prev_q <= push_prev_d;
      insn_q      <= insn_d;
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

`ifndef SYNTHESIS
  // Both state machines stay in their named states.
  StateValid: assert property (@(posedge clk_i) disable iff (!rst_ni)
                               state_q == StIdle || state_q == StExec || state_q == StPush)
    else $error("tessera_store: invalid state %0d", state_q);
  AwStateValid: assert property (@(posedge clk_i) disable iff (!rst_ni)
                                 aw_state_q == AwIdle || aw_state_q == AwRow || aw_state_q == AwBurst)
    else $error("tessera_store: invalid address-side state %0d", aw_state_q);
  // The buffer holds two elements: a read is issued only with room for its element.
  ElementBufferBound: assert property (@(posedge clk_i) disable iff (!rst_ni || start_i) element_count_q <= 2'd2)
    else $error("tessera_store: %0d elements in the two-entry buffer", element_count_q);
`endif

endmodule
