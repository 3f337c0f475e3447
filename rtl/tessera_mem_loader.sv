// DRAM-to-SRAM engine of LOAD: 2D strided burst reads, padding written as zeros on the fly.
//
// Two halves run decoupled, so one instruction's DRAM latency hides behind the previous one's
// data: the request side takes a job as soon as it has issued the previous job's bursts, walks
// the DRAM rows and issues a burst every other cycle at most, each sized in a register the cycle
// before (several may be outstanding); the write side takes
// jobs in order from a small queue and walks the SRAM tile (pad rows, then per row: left pad,
// data, right pad, then bottom pad rows), turning each returning beat, or each pad element, into
// one SRAM write command. Elements at least a bus beat wide take one write per beat (the beat's
// lane); narrower elements (micro-ops) are unpacked from the beat, one per cycle. Each job carries
// a tag that accompanies its writes and comes back with its completion.
module tessera_mem_loader #(
  parameter int BusWidth = 64,
  parameter int SramAddrWidth = 16,
  parameter int BeatIdxWidth = 8,
  parameter int TagWidth = 1,
  parameter int JobQueueDepth = 2
) (
  input  logic                      clk_i,
  input  logic                      rst_ni,
  input  logic                      clear_i,
  // Job: one LOAD instruction's fields.
  input  logic                      job_valid_i,
  output logic                      job_ready_o,
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
  input  logic [TagWidth-1:0]       tag_i,
  // Completion, in job order: the job's last SRAM write has been made.
  output logic                      done_o,
  output logic [TagWidth-1:0]       done_tag_o,
  output logic                      busy_o,
  // DRAM read client.
  output logic                      req_valid_o,
  output logic [31:0]               req_addr_o,
  output logic [7:0]                req_len_o,
  input  logic                      req_ready_i,
  input  logic                      rsp_valid_i,
  input  logic [BusWidth-1:0]       rsp_data_i,
  output logic                      rsp_ready_o,
  // SRAM write command.
  output logic                      wr_valid_o,
  output logic [SramAddrWidth-1:0]  wr_addr_o,
  output logic [BeatIdxWidth-1:0]   wr_beat_o,
  output logic                      wr_pad_o,
  output logic [BusWidth-1:0]       wr_data_o,
  output logic [TagWidth-1:0]       wr_tag_o
);

  localparam int BusBytes = BusWidth / 8;
  localparam int LogBusBytes = $clog2(BusBytes);
  localparam int MaxBurstBeats = 256;
  localparam int PageBytes = 4096;
  localparam int BurstWidth = $clog2(MaxBurstBeats + 1);
  localparam int JobWidth = SramAddrWidth + 32 + 3 * 16 + 4 * 4 + 4 + TagWidth;

  // Beat-aligned start address and beat count of one DRAM row.
  function automatic logic [63:0] row_span(input logic [31:0] elem, input logic [3:0] leb, input logic [15:0] x_size);
    logic [32:0] first, last, aligned;
    first = {1'b0, elem << leb};
    last = first + ({17'b0, x_size} << leb);
    // The cast in parentheses: Yosys 0.23 drops a ~ applied directly to a size cast (~33'(x) is x
    // there), which made every DRAM row start at 0 in synthesized netlists (gls/README.md).
    aligned = first & ~(33'(BusBytes - 1));
    row_span = {aligned[31:0], 32'((last - aligned + 33'(BusBytes - 1)) >> LogBusBytes)};
  endfunction

  // ---------------------------------------------------------------- request side
  logic        rq_active_q;
  logic [15:0] rq_rows_left_q, rq_x_size_q, rq_x_stride_q;
  logic [3:0]  rq_leb_q;
  logic [31:0] rq_next_elem_q;   // element address of the next row
  logic [31:0] rq_addr_q, rq_beats_left_q;

  logic        jobs_push, jobs_pop, jobs_empty, jobs_full;
  logic [JobWidth-1:0] jobs_head;

  assign job_ready_o = !rq_active_q && !jobs_full;
  assign jobs_push = job_valid_i && job_ready_o;

  logic [31:0] page_beats, burst_beats;
  always_comb begin
    page_beats = (32'(PageBytes) - {20'b0, rq_addr_q[11:0]}) >> LogBusBytes;
    burst_beats = rq_beats_left_q;
    if (burst_beats > MaxBurstBeats) burst_beats = MaxBurstBeats;
    if (burst_beats > page_beats) burst_beats = page_beats;
  end

  // The burst is sized into a register in the cycle after the address and beat count move, and
  // requested from the next: sizing, the read arbiter and the update on its ready in one cycle
  // would be too deep a path.
  logic                  rq_sized_q, rq_row_end_q;
  logic [BurstWidth-1:0] rq_burst_q;
  assign req_valid_o = rq_active_q && rq_sized_q;
  assign req_addr_o = rq_addr_q;
  assign req_len_o = 8'(rq_burst_q - 1'b1);

  logic [63:0] first_row, next_row;
  assign first_row = row_span(dram_base_i, log_elem_bytes_i, x_size_i);
  assign next_row = row_span(rq_next_elem_q, rq_leb_q, rq_x_size_q);

  always_ff @(posedge clk_i) begin
    if (!rst_ni || clear_i) begin
      rq_active_q     <= 1'b0;
      rq_rows_left_q  <= '0;
      rq_x_size_q     <= '0;
      rq_x_stride_q   <= '0;
      rq_leb_q        <= '0;
      rq_next_elem_q  <= '0;
      rq_addr_q       <= '0;
      rq_beats_left_q <= '0;
      rq_sized_q      <= 1'b0;
      rq_row_end_q    <= 1'b0;
      rq_burst_q      <= '0;
    end else if (jobs_push) begin
      rq_sized_q      <= 1'b0;
      rq_active_q     <= (y_size_i != '0) && (x_size_i != '0);
      rq_rows_left_q  <= y_size_i - 1'b1;
      rq_x_size_q     <= x_size_i;
      rq_x_stride_q   <= x_stride_i;
      rq_leb_q        <= log_elem_bytes_i;
      rq_next_elem_q  <= dram_base_i + {16'b0, x_stride_i};
      rq_addr_q       <= first_row[63:32];
      rq_beats_left_q <= first_row[31:0];
    end else if (rq_active_q && !rq_sized_q) begin
      rq_sized_q   <= 1'b1;
      rq_burst_q   <= BurstWidth'(burst_beats);
      // The row's last burst: what is left fits both caps (compared side by side, not after the min).
      rq_row_end_q <= rq_beats_left_q <= MaxBurstBeats && rq_beats_left_q <= page_beats;
    end else if (req_valid_o && req_ready_i) begin
      rq_sized_q <= 1'b0;
      if (!rq_row_end_q) begin
        rq_addr_q       <= rq_addr_q + (32'(rq_burst_q) << LogBusBytes);
        rq_beats_left_q <= rq_beats_left_q - 32'(rq_burst_q);
      end else if (rq_rows_left_q == '0) begin
        rq_active_q <= 1'b0;
      end else begin
        // The next row starts in the very next cycle.
        rq_addr_q       <= next_row[63:32];
        rq_beats_left_q <= next_row[31:0];
        rq_next_elem_q  <= rq_next_elem_q + {16'b0, rq_x_stride_q};
        rq_rows_left_q  <= rq_rows_left_q - 1'b1;
      end
    end
  end

  // Jobs wait here for the write side, in order.
  /* verilator lint_off PINCONNECTEMPTY */
  tessera_fifo #(.Width(JobWidth), .Depth(JobQueueDepth)) u_jobs (
    .clk_i, .rst_ni, .clear_i,
    .push_i(jobs_push),
    .wdata_i({tag_i, log_elem_bytes_i, x_pad1_i, x_pad0_i, y_pad1_i, y_pad0_i, x_stride_i, x_size_i, y_size_i,
              dram_base_i, sram_base_i}),
    .pop_i(jobs_pop), .rdata_o(jobs_head),
    .empty_o(jobs_empty), .full_o(jobs_full), .count_o()
  );
  /* verilator lint_on PINCONNECTEMPTY */

  // ---------------------------------------------------------------- write side
  logic [SramAddrWidth-1:0] job_sram_base;
  logic [31:0]              job_dram_base;
  logic [15:0]              job_y_size, job_x_size, job_x_stride;
  logic [3:0]               job_y_pad0, job_y_pad1, job_x_pad0, job_x_pad1, job_leb;
  logic [TagWidth-1:0]      job_tag;
  assign {job_tag, job_leb, job_x_pad1, job_x_pad0, job_y_pad1, job_y_pad0, job_x_stride, job_x_size, job_y_size,
          job_dram_base, job_sram_base} = jobs_head;

  logic                     wr_active_q, done_q;
  logic [TagWidth-1:0]      wr_tag_q, done_tag_q;
  logic [15:0]              x_stride_q;
  logic [3:0]               y_pad0_q, x_pad0_q, leb_q;
  // The tile's bounds as the write side compares them, computed when the job starts rather than
  // in front of every comparison (the ready to the read channel depends on them).
  logic [16:0]              rows_last_q, cols_last_q, row_data_end_q, col_data_end_q, col_data_last_q;
  logic [16:0]              wr_row_q, wr_col_q;
  logic [SramAddrWidth-1:0] wr_addr_q;
  logic [BeatIdxWidth-1:0]  wr_beat_q;
  logic [LogBusBytes-1:0]   wr_boff_q;
  logic [31:0]              wr_row_elem_q;

  logic        narrow;        // elements narrower than a beat (micro-ops)
  logic [BeatIdxWidth-1:0] last_beat;
  logic        row_is_data, col_is_data, is_data, last_col, last_row, elem_last_in_row;
  logic [LogBusBytes-1:0] boff;
  logic        beat_consumed, elem_done, job_finished;
  logic [16:0] job_rows, job_cols;

  // Where the write side stands in the tile (a data row, a data column, the row's first or last
  // data column) is kept in registers, compared on the next row and column rather than in front
  // of the ready to the read channel.
  logic row_in_data_q, col_in_data_q, col_first_data_q, col_last_data_q;
  logic [16:0] wr_row_d, wr_col_d;

  // What the element size decides, and where in its beat an element starts, are registers too,
  // kept ready for the element being written: the ready to the read channel feeds the read
  // arbiter's order queue in the same cycle, so it follows registers through two levels. Per job:
  // elements narrower than a beat, the last beat of an element, an element's bytes within a beat
  // (narrow ones). Per row: the byte offset of its first data element in its beat (row_boff_q).
  // And whether an element ends its beat: starting at the row's offset (row_wrap_q) or at the
  // running offset (run_wrap_q).
  logic                    narrow_q, row_wrap_q, run_wrap_q;
  logic [BeatIdxWidth-1:0] last_beat_q;
  logic [LogBusBytes-1:0]  eb_q, row_boff_q;

  function automatic logic [LogBusBytes-1:0] elem_boff(input logic [31:0] elem, input logic [3:0] leb);
    elem_boff = LogBusBytes'(elem << leb);
  endfunction

  always_comb begin
    narrow = narrow_q;
    last_beat = last_beat_q;
    row_is_data = row_in_data_q;
    col_is_data = col_in_data_q;
    is_data = row_is_data && col_is_data;
    last_col = (wr_col_q == cols_last_q);
    last_row = (wr_row_q == rows_last_q);
    elem_last_in_row = col_last_data_q;
    // A row's first data element starts wherever its DRAM address falls inside the first beat.
    boff = col_first_data_q ? row_boff_q : wr_boff_q;
    beat_consumed = !narrow || elem_last_in_row || (col_first_data_q ? row_wrap_q : run_wrap_q);
    elem_done = !is_data || (rsp_valid_i && (narrow || wr_beat_q == last_beat));
    job_rows = {13'b0, job_y_pad0} + {1'b0, job_y_size} + {13'b0, job_y_pad1};
    job_cols = {13'b0, job_x_pad0} + {1'b0, job_x_size} + {13'b0, job_x_pad1};
  end

  assign job_finished = wr_valid_o && elem_done && last_col && last_row;

  // The next row and column while the job goes on, compared with the job's bounds; a new job
  // starts at row and column 0, where the comparisons reduce to its padding and size alone.
  always_comb begin
    wr_row_d = wr_row_q;
    wr_col_d = wr_col_q;
    if (!job_finished && wr_valid_o && elem_done) begin
      if (last_col) begin
        wr_col_d = '0;
        wr_row_d = wr_row_q + 1'b1;
      end else begin
        wr_col_d = wr_col_q + 1'b1;
      end
    end
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni || clear_i) begin
      row_in_data_q    <= 1'b0;
      col_in_data_q    <= 1'b0;
      col_first_data_q <= 1'b1;  // column 0 is the first data column of a tile without padding
      col_last_data_q  <= 1'b1;
    end else if (jobs_pop) begin
      row_in_data_q    <= job_y_pad0 == '0 && job_y_size != '0;
      col_in_data_q    <= job_x_pad0 == '0 && job_x_size != '0;
      col_first_data_q <= job_x_pad0 == '0;
      col_last_data_q  <= {13'b0, job_x_pad0} + {1'b0, job_x_size} == 17'd1;
    end else begin
      row_in_data_q    <= wr_row_d >= {13'b0, y_pad0_q} && wr_row_d < row_data_end_q;
      col_in_data_q    <= wr_col_d >= {13'b0, x_pad0_q} && wr_col_d < col_data_end_q;
      col_first_data_q <= wr_col_d == {13'b0, x_pad0_q};
      col_last_data_q  <= wr_col_d == col_data_last_q;
    end
  end

  // The next job starts when the write side is idle or finishing its current job; an empty job
  // completes when it starts, so it waits for an idle cycle rather than complete together with
  // the job before it (one completion per cycle).
  logic job_empty, job_narrow;
  logic [LogBusBytes-1:0] job_eb;
  assign job_narrow = 32'(job_leb) < LogBusBytes;
  assign job_eb = job_narrow ? LogBusBytes'(1 << job_leb) : '0;
  assign job_empty = (job_rows == '0 || job_x_size == '0);
  assign jobs_pop = !jobs_empty && (!wr_active_q || (job_finished && !job_empty));

  assign rsp_ready_o = wr_active_q && is_data && beat_consumed;
  assign wr_valid_o = wr_active_q && (!is_data || rsp_valid_i);
  assign wr_addr_o = wr_addr_q;
  assign wr_beat_o = wr_beat_q;
  assign wr_pad_o = !is_data;
  assign wr_data_o = rsp_data_i >> {boff, 3'b000};
  assign wr_tag_o = wr_tag_q;

  always_ff @(posedge clk_i) begin
    if (!rst_ni || clear_i) begin
      wr_active_q   <= 1'b0;
      wr_tag_q      <= '0;
      done_q        <= 1'b0;
      done_tag_q    <= '0;
      wr_row_q      <= '0;
      wr_col_q      <= '0;
      wr_addr_q     <= '0;
      wr_beat_q     <= '0;
      wr_boff_q     <= '0;
      wr_row_elem_q <= '0;
      x_stride_q    <= '0;
      y_pad0_q      <= '0;
      x_pad0_q      <= '0;
      leb_q         <= '0;
      rows_last_q   <= '0;
      cols_last_q   <= '0;
      row_data_end_q  <= '0;
      col_data_end_q  <= '0;
      col_data_last_q <= '0;
      narrow_q      <= 1'b0;
      last_beat_q   <= '0;
      eb_q          <= '0;
      row_boff_q    <= '0;
      row_wrap_q    <= 1'b0;
      run_wrap_q    <= 1'b0;
    end else begin
      done_q <= 1'b0;
      if (job_finished) begin
        wr_active_q <= 1'b0;
        done_q      <= 1'b1;
        done_tag_q  <= wr_tag_q;
      end else if (wr_valid_o) begin
        if (is_data && !narrow) wr_beat_q <= (wr_beat_q == last_beat) ? '0 : wr_beat_q + 1'b1;
        if (is_data && narrow) begin
          wr_boff_q  <= boff + eb_q;
          run_wrap_q <= boff + eb_q + eb_q == '0;
        end
        if (elem_done) begin
          wr_addr_q <= wr_addr_q + 1'b1;
          if (last_col) begin
            wr_col_q <= '0;
            wr_row_q <= wr_row_q + 1'b1;
            if (row_is_data) begin
              wr_row_elem_q <= wr_row_elem_q + {16'b0, x_stride_q};
              row_boff_q    <= elem_boff(wr_row_elem_q + {16'b0, x_stride_q}, leb_q);
              row_wrap_q    <= elem_boff(wr_row_elem_q + {16'b0, x_stride_q}, leb_q) + eb_q == '0;
            end
          end else begin
            wr_col_q <= wr_col_q + 1'b1;
          end
        end
      end
      if (jobs_pop) begin
        x_stride_q    <= job_x_stride;
        y_pad0_q      <= job_y_pad0;
        x_pad0_q      <= job_x_pad0;
        leb_q         <= job_leb;
        narrow_q      <= job_narrow;
        last_beat_q   <= job_narrow ? '0 : BeatIdxWidth'((1 << (32'(job_leb) - LogBusBytes)) - 1);
        eb_q          <= job_eb;
        row_boff_q    <= elem_boff(job_dram_base, job_leb);
        row_wrap_q    <= elem_boff(job_dram_base, job_leb) + job_eb == '0;
        run_wrap_q    <= job_eb == '0;
        rows_last_q   <= job_rows - 1'b1;
        cols_last_q   <= job_cols - 1'b1;
        row_data_end_q  <= {13'b0, job_y_pad0} + {1'b0, job_y_size};
        col_data_end_q  <= {13'b0, job_x_pad0} + {1'b0, job_x_size};
        col_data_last_q <= {13'b0, job_x_pad0} + {1'b0, job_x_size} - 1'b1;
        wr_row_q      <= '0;
        wr_col_q      <= '0;
        wr_addr_q     <= job_sram_base;
        wr_beat_q     <= '0;
        wr_boff_q     <= '0;
        wr_row_elem_q <= job_dram_base;
        wr_tag_q      <= job_tag;
        // An empty tile (no rows, or a zero-width dependency carrier) completes at once.
        if (job_empty) begin
          wr_active_q <= 1'b0;
          done_q      <= 1'b1;
          done_tag_q  <= job_tag;
        end else begin
          wr_active_q <= 1'b1;
        end
      end
    end
  end

  assign done_o = done_q;
  assign done_tag_o = done_tag_q;
  assign busy_o = rq_active_q || !jobs_empty || wr_active_q || done_q;

endmodule
