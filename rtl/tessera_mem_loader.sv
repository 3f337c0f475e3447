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
`include "tessera_config.svh"

module tessera_mem_loader #(
  parameter int BusWidth = 64,
  parameter int SramAddrWidth = 16,
  parameter int BeatIdxWidth = 8,
  parameter int TagWidth = 1,
  parameter int JobQueueDepth = 2,
  // The instruction fields a job carries (LOAD's memory format).
  localparam int DramAddrWidth = tessera_config_pkg::MEMOP_DRAM_ADDR_BIT_WIDTH,
  localparam int SizeWidth = tessera_config_pkg::MEMOP_SIZE_BIT_WIDTH,
  localparam int StrideWidth = tessera_config_pkg::MEMOP_STRIDE_BIT_WIDTH,
  localparam int PadWidth = tessera_config_pkg::MEMOP_PAD_BIT_WIDTH,
  localparam int LogElemBytesWidth = 4
) (
  input  logic                         clk_i,
  input  logic                         rst_ni,
  input  logic                         clear_i,
  // Job: one LOAD instruction's fields.
  input  logic                         job_valid_i,
  output logic                         job_ready_o,
  input  logic [SramAddrWidth-1:0]     sram_base_i,
  input  logic [DramAddrWidth-1:0]     dram_base_i,
  input  logic [SizeWidth-1:0]         y_size_i,
  input  logic [SizeWidth-1:0]         x_size_i,
  input  logic [StrideWidth-1:0]       x_stride_i,
  input  logic [PadWidth-1:0]          y_pad0_i,
  input  logic [PadWidth-1:0]          y_pad1_i,
  input  logic [PadWidth-1:0]          x_pad0_i,
  input  logic [PadWidth-1:0]          x_pad1_i,
  input  logic [LogElemBytesWidth-1:0] log_elem_bytes_i,
  input  logic [TagWidth-1:0]          tag_i,
  // Completion, in job order: the job's last SRAM write has been made.
  output logic                         done_o,
  output logic [TagWidth-1:0]          done_tag_o,
  output logic                         busy_o,
  // DRAM read client.
  output logic                         req_valid_o,
  output logic [31:0]                  req_addr_o,
  output logic [7:0]                   req_len_o,
  input  logic                         req_ready_i,
  input  logic                         rsp_valid_i,
  input  logic [BusWidth-1:0]          rsp_data_i,
  output logic                         rsp_ready_o,
  // SRAM write command.
  output logic                         wr_valid_o,
  output logic [SramAddrWidth-1:0]     wr_addr_o,
  output logic [BeatIdxWidth-1:0]      wr_beat_o,
  output logic                         wr_pad_o,
  output logic [BusWidth-1:0]          wr_data_o,
  output logic [TagWidth-1:0]          wr_tag_o
);

  localparam int BusBytes = BusWidth / 8;
  localparam int LogBusBytes = $clog2(BusBytes);
  localparam int MaxBurstBeats = tessera_config_pkg::AXI_MAX_BURST_BEATS;
  localparam int PageBits = tessera_config_pkg::AXI_PAGE_BITS;
  localparam int BurstWidth = $clog2(MaxBurstBeats + 1);
  // A tile's rows (columns): padding, size and padding.
  localparam int WalkWidth = SizeWidth + 1;
  localparam int JobWidth = SramAddrWidth + DramAddrWidth + 2 * SizeWidth + StrideWidth + 4 * PadWidth +
                            LogElemBytesWidth + TagWidth;

  // Beat-aligned start address and beat count of one DRAM row.
  function automatic logic [63:0] row_span(input logic [31:0] elem, input logic [LogElemBytesWidth-1:0] log_elem_bytes,
                                           input logic [SizeWidth-1:0] x_size);
    logic [32:0] first, last, aligned;
    first = {1'b0, elem << log_elem_bytes};
    last = first + (33'(x_size) << log_elem_bytes);
    // The cast in parentheses: Yosys 0.23 drops a ~ applied directly to a size cast (~33'(x) is x
    // there), which made every DRAM row start at 0 in synthesized netlists (gls/README.md).
    aligned = first & ~(33'(BusBytes - 1));
    row_span = {aligned[31:0], 32'((last - aligned + 33'(BusBytes - 1)) >> LogBusBytes)};
  endfunction

  // ---------------------------------------------------------------- request side
  logic                         request_active_q, request_active_d;
  logic [SizeWidth-1:0]         request_rows_left_q, request_rows_left_d, request_x_size_q, request_x_size_d;
  logic [StrideWidth-1:0]       request_x_stride_q, request_x_stride_d;
  logic [LogElemBytesWidth-1:0] request_log_elem_bytes_q, request_log_elem_bytes_d;
  logic [31:0]                  request_next_elem_q, request_next_elem_d;  // element address of the next row
  logic [31:0]                  request_addr_q, request_addr_d, request_beats_left_q, request_beats_left_d;

  logic        jobs_push, jobs_pop, jobs_empty, jobs_full;
  logic [JobWidth-1:0] jobs_head;

  assign job_ready_o = !request_active_q && !jobs_full;
  assign jobs_push = job_valid_i && job_ready_o;

  // The beats left of a page (at most a page of them).
  localparam int PageBeatsWidth = PageBits - LogBusBytes + 1;
  localparam int CapWidth = (PageBeatsWidth > BurstWidth) ? PageBeatsWidth : BurstWidth;
  logic [PageBits:0]         page_bytes;
  logic [PageBeatsWidth-1:0] page_beats;
  logic [BurstWidth-1:0]     burst_beats;
  always_comb begin
    page_bytes = (PageBits + 1)'(tessera_config_pkg::AXI_PAGE_BYTES) - (PageBits + 1)'(request_addr_q[PageBits-1:0]);
    page_beats = PageBeatsWidth'(page_bytes >> LogBusBytes);
    burst_beats = (request_beats_left_q > 32'(MaxBurstBeats)) ? BurstWidth'(MaxBurstBeats)
                                                            : BurstWidth'(request_beats_left_q);
    if (CapWidth'(burst_beats) > CapWidth'(page_beats)) burst_beats = BurstWidth'(page_beats);
  end

  // The burst is sized into a register in the cycle after the address and beat count move, and
  // requested from the next: sizing, the read arbiter and the update on its ready in one cycle
  // would be too deep a path.
  logic                  request_sized_q, request_sized_d, request_row_end_q, request_row_end_d;
  logic [BurstWidth-1:0] request_burst_q, request_burst_d;
  assign req_valid_o = request_active_q && request_sized_q;
  assign req_addr_o = request_addr_q;
  assign req_len_o = 8'(request_burst_q - 1'b1);

  logic [63:0] first_row, next_row;
  assign first_row = row_span(dram_base_i, log_elem_bytes_i, x_size_i);
  assign next_row = row_span(request_next_elem_q, request_log_elem_bytes_q, request_x_size_q);

  // Next state: a new job's first row, the sizing of the next burst, or the burst just accepted.
  always_comb begin
    request_active_d = request_active_q;
    request_rows_left_d = request_rows_left_q;
    request_x_size_d = request_x_size_q;
    request_x_stride_d = request_x_stride_q;
    request_log_elem_bytes_d = request_log_elem_bytes_q;
    request_next_elem_d = request_next_elem_q;
    request_addr_d = request_addr_q;
    request_beats_left_d = request_beats_left_q;
    request_sized_d = request_sized_q;
    request_row_end_d = request_row_end_q;
    request_burst_d = request_burst_q;
    if (jobs_push) begin
      request_sized_d = 1'b0;
      request_active_d = (y_size_i != '0) && (x_size_i != '0);
      request_rows_left_d = y_size_i - 1'b1;
      request_x_size_d = x_size_i;
      request_x_stride_d = x_stride_i;
      request_log_elem_bytes_d = log_elem_bytes_i;
      request_next_elem_d = dram_base_i + 32'(x_stride_i);
      request_addr_d = first_row[63:32];
      request_beats_left_d = first_row[31:0];
    end else if (request_active_q && !request_sized_q) begin
      request_sized_d = 1'b1;
      request_burst_d = BurstWidth'(burst_beats);
      // The row's last burst: what is left fits both caps (compared side by side, not after the min).
      request_row_end_d = request_beats_left_q <= 32'(MaxBurstBeats) && request_beats_left_q <= 32'(page_beats);
    end else if (req_valid_o && req_ready_i) begin
      request_sized_d = 1'b0;
      if (!request_row_end_q) begin
        request_addr_d = request_addr_q + (32'(request_burst_q) << LogBusBytes);
        request_beats_left_d = request_beats_left_q - 32'(request_burst_q);
      end else if (request_rows_left_q == '0) begin
        request_active_d = 1'b0;
      end else begin
        // The next row starts in the very next cycle.
        request_addr_d = next_row[63:32];
        request_beats_left_d = next_row[31:0];
        request_next_elem_d = request_next_elem_q + 32'(request_x_stride_q);
        request_rows_left_d = request_rows_left_q - 1'b1;
      end
    end
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni || clear_i) begin
      request_active_q         <= 1'b0;
      request_rows_left_q      <= '0;
      request_x_size_q         <= '0;
      request_x_stride_q       <= '0;
      request_log_elem_bytes_q <= '0;
      request_next_elem_q      <= '0;
      request_addr_q           <= '0;
      request_beats_left_q     <= '0;
      request_sized_q          <= 1'b0;
      request_row_end_q        <= 1'b0;
      request_burst_q          <= '0;
    end else begin
      request_active_q         <= request_active_d;
      request_rows_left_q      <= request_rows_left_d;
      request_x_size_q         <= request_x_size_d;
      request_x_stride_q       <= request_x_stride_d;
      request_log_elem_bytes_q <= request_log_elem_bytes_d;
      request_next_elem_q      <= request_next_elem_d;
      request_addr_q           <= request_addr_d;
      request_beats_left_q     <= request_beats_left_d;
      request_sized_q          <= request_sized_d;
      request_row_end_q        <= request_row_end_d;
      request_burst_q          <= request_burst_d;
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
  logic [SramAddrWidth-1:0]     job_sram_base;
  logic [DramAddrWidth-1:0]     job_dram_base;
  logic [SizeWidth-1:0]         job_y_size, job_x_size;
  logic [StrideWidth-1:0]       job_x_stride;
  logic [PadWidth-1:0]          job_y_pad0, job_y_pad1, job_x_pad0, job_x_pad1;
  logic [LogElemBytesWidth-1:0] job_log_elem_bytes;
  logic [TagWidth-1:0]          job_tag;
  assign {job_tag, job_log_elem_bytes, job_x_pad1, job_x_pad0, job_y_pad1, job_y_pad0, job_x_stride, job_x_size,
          job_y_size, job_dram_base, job_sram_base} = jobs_head;

  logic                         write_active_q, write_active_d, done_q, done_d;
  logic [TagWidth-1:0]          write_tag_q, write_tag_d, done_tag_q, done_tag_d;
  logic [StrideWidth-1:0]       x_stride_q, x_stride_d;
  logic [PadWidth-1:0]          y_pad0_q, y_pad0_d, x_pad0_q, x_pad0_d;
  logic [LogElemBytesWidth-1:0] log_elem_bytes_q, log_elem_bytes_d;
  // The tile's bounds as the write side compares them, computed when the job starts rather than
  // in front of every comparison (the ready to the read channel depends on them).
  logic [WalkWidth-1:0]     rows_last_q, rows_last_d, columns_last_q, columns_last_d;
  logic [WalkWidth-1:0]     row_data_end_q, row_data_end_d, column_data_end_q, column_data_end_d;
  logic [WalkWidth-1:0]     column_data_last_q, column_data_last_d;
  logic [WalkWidth-1:0]     write_row_q, write_row_d, write_column_q, write_column_d;
  logic [SramAddrWidth-1:0] write_addr_q, write_addr_d;
  logic [BeatIdxWidth-1:0]  write_beat_q, write_beat_d;
  logic [LogBusBytes-1:0]   write_byte_offset_q, write_byte_offset_d;
  logic [31:0]              write_row_elem_q, write_row_elem_d;  // element address of the row's data

  logic                    narrow;  // elements narrower than a beat (micro-ops)
  logic [BeatIdxWidth-1:0] last_beat;
  logic                    row_is_data, column_is_data, is_data, last_column, last_row, elem_last_in_row;
  logic [LogBusBytes-1:0]  byte_offset;
  logic                    beat_consumed, elem_done, job_finished;
  logic [WalkWidth-1:0]    job_rows, job_columns;

  // Where the write side stands in the tile (a data row, a data column, the row's first or last
  // data column) is kept in registers, compared on the next row and column rather than in front
  // of the ready to the read channel.
  logic row_in_data_q, row_in_data_d, column_in_data_q, column_in_data_d;
  logic column_first_data_q, column_first_data_d, column_last_data_q, column_last_data_d;
  logic [WalkWidth-1:0] write_row_next, write_column_next;

  // What the element size decides, and where in its beat an element starts, are registers too,
  // kept ready for the element being written: the ready to the read channel feeds the read
  // arbiter's order queue in the same cycle, so it follows registers through two levels. Per job:
  // elements narrower than a beat, the last beat of an element, an element's bytes within a beat
  // (narrow ones). Per row: the byte offset of its first data element in its beat
  // (row_byte_offset_q). And whether an element ends its beat: starting at the row's offset
  // (row_wrap_q) or at the running offset (run_wrap_q).
  logic                    narrow_q, narrow_d, row_wrap_q, row_wrap_d, run_wrap_q, run_wrap_d;
  logic [BeatIdxWidth-1:0] last_beat_q, last_beat_d;
  logic [LogBusBytes-1:0]  elem_bytes_q, elem_bytes_d, row_byte_offset_q, row_byte_offset_d;

  // The byte offset of an element within its beat.
  function automatic logic [LogBusBytes-1:0] elem_byte_offset(input logic [31:0] elem,
                                                              input logic [LogElemBytesWidth-1:0] log_elem_bytes);
    elem_byte_offset = LogBusBytes'(elem << log_elem_bytes);
  endfunction

  always_comb begin
    narrow = narrow_q;
    last_beat = last_beat_q;
    row_is_data = row_in_data_q;
    column_is_data = column_in_data_q;
    is_data = row_is_data && column_is_data;
    last_column = (write_column_q == columns_last_q);
    last_row = (write_row_q == rows_last_q);
    elem_last_in_row = column_last_data_q;
    // A row's first data element starts wherever its DRAM address falls inside the first beat.
    byte_offset = column_first_data_q ? row_byte_offset_q : write_byte_offset_q;
    beat_consumed = !narrow || elem_last_in_row || (column_first_data_q ? row_wrap_q : run_wrap_q);
    elem_done = !is_data || (rsp_valid_i && (narrow || write_beat_q == last_beat));
    job_rows = WalkWidth'(job_y_pad0) + WalkWidth'(job_y_size) + WalkWidth'(job_y_pad1);
    job_columns = WalkWidth'(job_x_pad0) + WalkWidth'(job_x_size) + WalkWidth'(job_x_pad1);
  end

  assign job_finished = wr_valid_o && elem_done && last_column && last_row;

  // The next row and column while the job goes on, compared with the job's bounds; a new job
  // starts at row and column 0, where the comparisons reduce to its padding and size alone.
  always_comb begin
    write_row_next = write_row_q;
    write_column_next = write_column_q;
    if (!job_finished && wr_valid_o && elem_done) begin
      if (last_column) begin
        write_column_next = '0;
        write_row_next = write_row_q + 1'b1;
      end else begin
        write_column_next = write_column_q + 1'b1;
      end
    end
  end

  always_comb begin
    if (jobs_pop) begin
      row_in_data_d       = job_y_pad0 == '0 && job_y_size != '0;
      column_in_data_d    = job_x_pad0 == '0 && job_x_size != '0;
      column_first_data_d = job_x_pad0 == '0;
      column_last_data_d  = WalkWidth'(job_x_pad0) + WalkWidth'(job_x_size) == WalkWidth'(1);
    end else begin
      row_in_data_d       = write_row_next >= WalkWidth'(y_pad0_q) && write_row_next < row_data_end_q;
      column_in_data_d    = write_column_next >= WalkWidth'(x_pad0_q) && write_column_next < column_data_end_q;
      column_first_data_d = write_column_next == WalkWidth'(x_pad0_q);
      column_last_data_d  = write_column_next == column_data_last_q;
    end
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni || clear_i) begin
      row_in_data_q       <= 1'b0;
      column_in_data_q    <= 1'b0;
      column_first_data_q <= 1'b1;  // column 0 is the first data column of a tile without padding
      column_last_data_q  <= 1'b1;
    end else begin
      row_in_data_q       <= row_in_data_d;
      column_in_data_q    <= column_in_data_d;
      column_first_data_q <= column_first_data_d;
      column_last_data_q  <= column_last_data_d;
    end
  end

  // The next job starts when the write side is idle or finishing its current job; an empty job
  // completes when it starts, so it waits for an idle cycle rather than complete together with
  // the job before it (one completion per cycle).
  logic job_empty, job_narrow;
  logic [LogBusBytes-1:0] job_elem_bytes;
  assign job_narrow = 32'(job_log_elem_bytes) < LogBusBytes;
  assign job_elem_bytes = job_narrow ? LogBusBytes'(1 << job_log_elem_bytes) : '0;
  assign job_empty = (job_rows == '0 || job_x_size == '0);
  assign jobs_pop = !jobs_empty && (!write_active_q || (job_finished && !job_empty));

  assign rsp_ready_o = write_active_q && is_data && beat_consumed;
  assign wr_valid_o = write_active_q && (!is_data || rsp_valid_i);
  assign wr_addr_o = write_addr_q;
  assign wr_beat_o = write_beat_q;
  assign wr_pad_o = !is_data;
  assign wr_data_o = rsp_data_i >> {byte_offset, 3'b000};
  assign wr_tag_o = write_tag_q;

  // Next state: the element written (the next beat, element, column or row), then a new job's
  // start, which overrides it.
  always_comb begin
    write_active_d = write_active_q;
    write_tag_d = write_tag_q;
    done_d = 1'b0;
    done_tag_d = done_tag_q;
    write_row_d = write_row_q;
    write_column_d = write_column_q;
    write_addr_d = write_addr_q;
    write_beat_d = write_beat_q;
    write_byte_offset_d = write_byte_offset_q;
    write_row_elem_d = write_row_elem_q;
    x_stride_d = x_stride_q;
    y_pad0_d = y_pad0_q;
    x_pad0_d = x_pad0_q;
    log_elem_bytes_d = log_elem_bytes_q;
    rows_last_d = rows_last_q;
    columns_last_d = columns_last_q;
    row_data_end_d = row_data_end_q;
    column_data_end_d = column_data_end_q;
    column_data_last_d = column_data_last_q;
    narrow_d = narrow_q;
    last_beat_d = last_beat_q;
    elem_bytes_d = elem_bytes_q;
    row_byte_offset_d = row_byte_offset_q;
    row_wrap_d = row_wrap_q;
    run_wrap_d = run_wrap_q;
    if (job_finished) begin
      write_active_d = 1'b0;
      done_d = 1'b1;
      done_tag_d = write_tag_q;
    end else if (wr_valid_o) begin
      if (is_data && !narrow) write_beat_d = (write_beat_q == last_beat) ? '0 : write_beat_q + 1'b1;
      if (is_data && narrow) begin
        write_byte_offset_d = byte_offset + elem_bytes_q;
        run_wrap_d = byte_offset + elem_bytes_q + elem_bytes_q == '0;
      end
      if (elem_done) begin
        write_addr_d = write_addr_q + 1'b1;
        if (last_column) begin
          write_column_d = '0;
          write_row_d = write_row_q + 1'b1;
          if (row_is_data) begin
            write_row_elem_d = write_row_elem_q + 32'(x_stride_q);
            row_byte_offset_d = elem_byte_offset(write_row_elem_q + 32'(x_stride_q), log_elem_bytes_q);
            row_wrap_d = elem_byte_offset(write_row_elem_q + 32'(x_stride_q), log_elem_bytes_q) + elem_bytes_q == '0;
          end
        end else begin
          write_column_d = write_column_q + 1'b1;
        end
      end
    end
    if (jobs_pop) begin
      x_stride_d = job_x_stride;
      y_pad0_d = job_y_pad0;
      x_pad0_d = job_x_pad0;
      log_elem_bytes_d = job_log_elem_bytes;
      narrow_d = job_narrow;
      last_beat_d = job_narrow ? '0 : BeatIdxWidth'((1 << (32'(job_log_elem_bytes) - LogBusBytes)) - 1);
      elem_bytes_d = job_elem_bytes;
      row_byte_offset_d = elem_byte_offset(job_dram_base, job_log_elem_bytes);
      row_wrap_d = elem_byte_offset(job_dram_base, job_log_elem_bytes) + job_elem_bytes == '0;
      run_wrap_d = job_elem_bytes == '0;
      rows_last_d = job_rows - 1'b1;
      columns_last_d = job_columns - 1'b1;
      row_data_end_d = WalkWidth'(job_y_pad0) + WalkWidth'(job_y_size);
      column_data_end_d = WalkWidth'(job_x_pad0) + WalkWidth'(job_x_size);
      column_data_last_d = WalkWidth'(job_x_pad0) + WalkWidth'(job_x_size) - 1'b1;
      write_row_d = '0;
      write_column_d = '0;
      write_addr_d = job_sram_base;
      write_beat_d = '0;
      write_byte_offset_d = '0;
      write_row_elem_d = job_dram_base;
      write_tag_d = job_tag;
      // An empty tile (no rows, or a zero-width dependency carrier) completes at once.
      if (job_empty) begin
        write_active_d = 1'b0;
        done_d = 1'b1;
        done_tag_d = job_tag;
      end else begin
        write_active_d = 1'b1;
      end
    end
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni || clear_i) begin
      write_active_q      <= 1'b0;
      write_tag_q         <= '0;
      done_q              <= 1'b0;
      done_tag_q          <= '0;
      write_row_q         <= '0;
      write_column_q      <= '0;
      write_addr_q        <= '0;
      write_beat_q        <= '0;
      write_byte_offset_q <= '0;
      write_row_elem_q    <= '0;
      x_stride_q          <= '0;
      y_pad0_q            <= '0;
      x_pad0_q            <= '0;
      log_elem_bytes_q    <= '0;
      rows_last_q         <= '0;
      columns_last_q      <= '0;
      row_data_end_q      <= '0;
      column_data_end_q   <= '0;
      column_data_last_q  <= '0;
      narrow_q            <= 1'b0;
      last_beat_q         <= '0;
      elem_bytes_q        <= '0;
      row_byte_offset_q   <= '0;
      row_wrap_q          <= 1'b0;
      run_wrap_q          <= 1'b0;
    end else begin
      write_active_q      <= write_active_d;
      write_tag_q         <= write_tag_d;
      done_q              <= done_d;
      done_tag_q          <= done_tag_d;
      write_row_q         <= write_row_d;
      write_column_q      <= write_column_d;
      write_addr_q        <= write_addr_d;
      write_beat_q        <= write_beat_d;
      write_byte_offset_q <= write_byte_offset_d;
      write_row_elem_q    <= write_row_elem_d;
      x_stride_q          <= x_stride_d;
      y_pad0_q            <= y_pad0_d;
      x_pad0_q            <= x_pad0_d;
      log_elem_bytes_q    <= log_elem_bytes_d;
      rows_last_q         <= rows_last_d;
      columns_last_q      <= columns_last_d;
      row_data_end_q      <= row_data_end_d;
      column_data_end_q   <= column_data_end_d;
      column_data_last_q  <= column_data_last_d;
      narrow_q            <= narrow_d;
      last_beat_q         <= last_beat_d;
      elem_bytes_q        <= elem_bytes_d;
      row_byte_offset_q   <= row_byte_offset_d;
      row_wrap_q          <= row_wrap_d;
      run_wrap_q          <= run_wrap_d;
    end
  end

  assign done_o = done_q;
  assign done_tag_o = done_tag_q;
  assign busy_o = request_active_q || !jobs_empty || write_active_q || done_q;

endmodule
