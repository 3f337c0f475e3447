// DRAM-to-SRAM engine of LOAD: 2D strided burst reads, padding written as zeros on the fly.
//
// Two halves run decoupled: the request side walks the DRAM rows and issues bursts (several may
// be outstanding); the write side walks the SRAM tile in order (pad rows, then per row: left pad,
// data, right pad, then bottom pad rows) and turns each returning beat, or each pad element, into
// one SRAM write command. Elements at least a bus beat wide take one write per beat (the beat's
// lane); narrower elements (micro-ops) are unpacked from the beat, one per cycle.
module tessera_mem_loader #(
  parameter int BusWidth = 64,
  parameter int SramAddrWidth = 16,
  parameter int BeatIdxWidth = 8
) (
  input  logic                      clk_i,
  input  logic                      rst_ni,
  input  logic                      start_i,
  input  logic [SramAddrWidth-1:0]  sram_base_i,
  input  logic [31:0]               dram_base_i,
  input  logic [15:0]               y_size_i,
  input  logic [15:0]               x_size_i,
  input  logic [15:0]               x_stride_i,
  input  logic [3:0]                y_pad0_i,
  input  logic [3:0]                y_pad1_i,
  input  logic [3:0]                x_pad0_i,
  input  logic [3:0]                x_pad1_i,
  input  logic [3:0]                log_elem_bytes_i,
  output logic                      busy_o,
  output logic                      done_o,
  output logic                      req_valid_o,
  output logic [31:0]               req_addr_o,
  output logic [7:0]                req_len_o,
  input  logic                      req_ready_i,
  input  logic                      rsp_valid_i,
  input  logic [BusWidth-1:0]       rsp_data_i,
  output logic                      rsp_ready_o,
  output logic                      wr_valid_o,
  output logic [SramAddrWidth-1:0]  wr_addr_o,
  output logic [BeatIdxWidth-1:0]   wr_beat_o,
  output logic                      wr_pad_o,
  output logic [BusWidth-1:0]       wr_data_o
);

  localparam int BusBytes = BusWidth / 8;
  localparam int LogBusBytes = $clog2(BusBytes);
  localparam int MaxBurstBeats = 256;
  localparam int PageBytes = 4096;

  // Instruction fields, held for the whole transfer.
  logic [15:0] y_size_q, x_size_q, x_stride_q;
  logic [3:0]  y_pad0_q, x_pad0_q;
  logic [3:0]  leb_q;
  logic [16:0] rows_total_q, cols_total_q;

  // ---------------------------------------------------------------- request side
  typedef enum logic [1:0] {RqIdle, RqRow, RqBurst} rq_state_e;
  rq_state_e   rq_state_q;
  logic [15:0] rq_rows_left_q;
  logic [31:0] rq_row_elem_q;
  logic [31:0] rq_addr_q;
  logic [31:0] rq_beats_left_q;

  logic [32:0] row_byte, row_end, row_aligned;
  logic [31:0] row_beats;
  always_comb begin
    row_byte    = {1'b0, rq_row_elem_q << leb_q};
    row_end     = row_byte + ({17'b0, x_size_q} << leb_q);
    row_aligned = row_byte & ~33'(BusBytes - 1);
    row_beats   = 32'((row_end - row_aligned + 33'(BusBytes - 1)) >> LogBusBytes);
  end

  logic [31:0] page_beats, burst_beats;
  always_comb begin
    page_beats = 32'((PageBytes - 32'(rq_addr_q[11:0])) >> LogBusBytes);
    burst_beats = rq_beats_left_q;
    if (burst_beats > MaxBurstBeats) burst_beats = MaxBurstBeats;
    if (burst_beats > page_beats) burst_beats = page_beats;
  end

  assign req_valid_o = (rq_state_q == RqBurst);
  assign req_addr_o = rq_addr_q;
  assign req_len_o = 8'(burst_beats - 1);

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      rq_state_q      <= RqIdle;
      rq_rows_left_q  <= '0;
      rq_row_elem_q   <= '0;
      rq_addr_q       <= '0;
      rq_beats_left_q <= '0;
    end else begin
      case (rq_state_q)
        RqIdle: begin
          if (start_i) begin
            rq_rows_left_q <= y_size_i;
            rq_row_elem_q  <= dram_base_i;
            rq_state_q     <= RqRow;
          end
        end
        RqRow: begin
          if (rq_rows_left_q == '0 || x_size_q == '0) begin
            rq_state_q <= RqIdle;
          end else begin
            rq_addr_q       <= row_aligned[31:0];
            rq_beats_left_q <= row_beats;
            rq_row_elem_q   <= rq_row_elem_q + {16'b0, x_stride_q};
            rq_rows_left_q  <= rq_rows_left_q - 1'b1;
            rq_state_q      <= RqBurst;
          end
        end
        RqBurst: begin
          if (req_ready_i) begin
            rq_addr_q       <= rq_addr_q + (burst_beats << LogBusBytes);
            rq_beats_left_q <= rq_beats_left_q - burst_beats;
            if (rq_beats_left_q == burst_beats) rq_state_q <= RqRow;
          end
        end
        default: rq_state_q <= RqIdle;
      endcase
    end
  end

  // ---------------------------------------------------------------- write side
  logic                     wr_active_q, done_pending_q;
  logic [16:0]              wr_row_q, wr_col_q;
  logic [SramAddrWidth-1:0] wr_addr_q;
  logic [BeatIdxWidth-1:0]  wr_beat_q;
  logic [LogBusBytes-1:0]   wr_boff_q;
  logic [31:0]              wr_row_elem_q;

  logic        narrow;        // elements narrower than a beat (micro-ops)
  logic [BeatIdxWidth-1:0] last_beat;
  logic        row_is_data, col_is_data, is_data, last_col, last_row, elem_last_in_row;
  logic [LogBusBytes-1:0] boff, elem_bytes_in_beat;
  logic        beat_consumed, elem_done;

  always_comb begin
    narrow = (32'(leb_q) < LogBusBytes);
    last_beat = narrow ? '0 : BeatIdxWidth'((1 << (32'(leb_q) - LogBusBytes)) - 1);
    row_is_data = (wr_row_q >= {13'b0, y_pad0_q}) && (wr_row_q < {13'b0, y_pad0_q} + {1'b0, y_size_q});
    col_is_data = (wr_col_q >= {13'b0, x_pad0_q}) && (wr_col_q < {13'b0, x_pad0_q} + {1'b0, x_size_q});
    is_data = row_is_data && col_is_data;
    last_col = (wr_col_q == cols_total_q - 1'b1);
    last_row = (wr_row_q == rows_total_q - 1'b1);
    elem_last_in_row = (wr_col_q == {13'b0, x_pad0_q} + {1'b0, x_size_q} - 1'b1);
    // A row's first data element starts wherever its DRAM address falls inside the first beat.
    boff = (wr_col_q == {13'b0, x_pad0_q}) ? LogBusBytes'(wr_row_elem_q << leb_q) : wr_boff_q;
    elem_bytes_in_beat = narrow ? LogBusBytes'(1 << leb_q) : '0;
    beat_consumed = !narrow || elem_last_in_row || (boff + elem_bytes_in_beat == '0);
    elem_done = !is_data || (rsp_valid_i && (narrow || wr_beat_q == last_beat));
  end

  assign rsp_ready_o = wr_active_q && is_data && beat_consumed;
  assign wr_valid_o = wr_active_q && (!is_data || rsp_valid_i);
  assign wr_addr_o = wr_addr_q;
  assign wr_beat_o = wr_beat_q;
  assign wr_pad_o = !is_data;
  assign wr_data_o = rsp_data_i >> {boff, 3'b000};

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      wr_active_q    <= 1'b0;
      done_pending_q <= 1'b0;
      done_o         <= 1'b0;
      wr_row_q       <= '0;
      wr_col_q       <= '0;
      wr_addr_q      <= '0;
      wr_beat_q      <= '0;
      wr_boff_q      <= '0;
      wr_row_elem_q  <= '0;
      y_size_q       <= '0;
      x_size_q       <= '0;
      x_stride_q     <= '0;
      y_pad0_q       <= '0;
      x_pad0_q       <= '0;
      leb_q          <= '0;
      rows_total_q   <= '0;
      cols_total_q   <= '0;
    end else begin
      done_o <= done_pending_q;
      done_pending_q <= 1'b0;
      if (start_i) begin
        y_size_q      <= y_size_i;
        x_size_q      <= x_size_i;
        x_stride_q    <= x_stride_i;
        y_pad0_q      <= y_pad0_i;
        x_pad0_q      <= x_pad0_i;
        leb_q         <= log_elem_bytes_i;
        rows_total_q  <= {13'b0, y_pad0_i} + {1'b0, y_size_i} + {13'b0, y_pad1_i};
        cols_total_q  <= {13'b0, x_pad0_i} + {1'b0, x_size_i} + {13'b0, x_pad1_i};
        wr_row_q      <= '0;
        wr_col_q      <= '0;
        wr_addr_q     <= sram_base_i;
        wr_beat_q     <= '0;
        wr_boff_q     <= '0;
        wr_row_elem_q <= dram_base_i;
        // An empty tile (no rows) completes without any transfer.
        if ({13'b0, y_pad0_i} + {1'b0, y_size_i} + {13'b0, y_pad1_i} == '0 || x_size_i == '0) begin
          done_pending_q <= 1'b1;
        end else begin
          wr_active_q <= 1'b1;
        end
      end else if (wr_valid_o) begin
        if (is_data && !narrow) wr_beat_q <= (wr_beat_q == last_beat) ? '0 : wr_beat_q + 1'b1;
        if (is_data && narrow) wr_boff_q <= boff + elem_bytes_in_beat;
        if (elem_done) begin
          wr_addr_q <= wr_addr_q + 1'b1;
          if (last_col) begin
            wr_col_q <= '0;
            if (row_is_data) wr_row_elem_q <= wr_row_elem_q + {16'b0, x_stride_q};
            if (last_row) begin
              wr_active_q <= 1'b0;
              done_pending_q <= 1'b1;
            end else begin
              wr_row_q <= wr_row_q + 1'b1;
            end
          end else begin
            wr_col_q <= wr_col_q + 1'b1;
          end
        end
      end
    end
  end

  assign busy_o = wr_active_q || done_pending_q || (rq_state_q != RqIdle);

endmodule
