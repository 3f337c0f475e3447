// Fetch: reads the instruction stream from DRAM and dispatches each instruction, tagged with its
// index, to the load, compute or store instruction queue.
//
// It requests only as many instructions as its buffer can hold, so its read data never waits and
// never blocks the read channel the other modules share.
`include "tessera_config.svh"

module tessera_fetch #(
  parameter int BusWidth = 64,
  parameter int InsnWidth = 128,
  parameter int BufferDepth = 8,
  parameter int MaxBurstInsns = 16
) (
  input  logic                    clk_i,
  input  logic                    rst_ni,
  input  logic                    start_i,
  input  logic [31:0]             insn_addr_i,
  input  logic [31:0]             insn_count_i,
  output logic                    req_valid_o,
  output logic [31:0]             req_addr_o,
  output logic [7:0]              req_len_o,
  input  logic                    req_ready_i,
  input  logic                    rsp_valid_i,
  input  logic [BusWidth-1:0]     rsp_data_i,
  output logic                    rsp_ready_o,
  // Dispatch: one entry {index, instruction} to the queue of its module.
  output logic [32+InsnWidth-1:0] entry_o,
  output logic                    load_push_o,
  input  logic                    load_full_i,
  output logic                    compute_push_o,
  input  logic                    compute_full_i,
  output logic                    store_push_o,
  input  logic                    store_full_i,
  output logic                    busy_o,
  output logic                    stall_o,
  output tessera_host_pkg::status_t status_o,
  output logic [31:0]             next_insn_o
);

  localparam int InsnBytes = InsnWidth / 8;
  localparam int InsnBeats = InsnWidth / BusWidth;
  localparam int BufferCountWidth = $clog2(BufferDepth + 1);

  logic        active_q, active_d;
  logic [31:0] base_q, base_d, count_q, count_d;
  logic [31:0] request_index_q, request_index_d;    // next instruction to request
  logic [31:0] assemble_index_q, assemble_index_d;  // next instruction to assemble
  logic [31:0] dispatch_index_q, dispatch_index_d;  // next instruction to dispatch
  logic [BufferCountWidth-1:0] in_flight_q, in_flight_d;  // requested, not yet assembled
  logic [$clog2(InsnBeats + 1)-1:0] beat_q, beat_d;
  // The low beat is shifted out as the next arrives, so it is never read back.
  /* verilator lint_off UNUSEDSIGNAL */
  logic [InsnWidth-1:0] shift_q, shift_d;
  /* verilator lint_on UNUSEDSIGNAL */

  // Buffer of assembled instructions.
  logic buffer_push, buffer_pop, buffer_empty;
  // Requests never exceed the free slots, so the buffer cannot overflow and fullness is unused.
  /* verilator lint_off UNUSEDSIGNAL */
  logic buffer_full;
  /* verilator lint_on UNUSEDSIGNAL */
  logic [32+InsnWidth-1:0] buffer_head;
  logic [BufferCountWidth-1:0] buffer_count;
  logic [InsnWidth-1:0] assembled;

  tessera_fifo #(.Width(32 + InsnWidth), .Depth(BufferDepth)) u_buffer (
    .clk_i, .rst_ni, .clear_i(start_i),
    .push_i(buffer_push), .wdata_i({assemble_index_q, assembled}),
    .pop_i(buffer_pop), .rdata_o(buffer_head),
    .empty_o(buffer_empty), .full_o(buffer_full), .count_o(buffer_count)
  );

  // Request sizing: what the buffer can take, what is left, and the AXI page boundary. The
  // request is registered, sized only while none is pending and in two registered steps (the caps
  // in pairs, then their minimum), from a state that has not moved since the last request: while
  // it waits, the buffer only frees slots and nothing else it depends on moves, so it stays within
  // bounds. Sizing, the read arbiter's grant and the state the grant updates in one cycle were the
  // design's longest path.
  localparam int PageBits = tessera_config_pkg::AXI_PAGE_BITS;
  localparam int PageInsns = tessera_config_pkg::AXI_PAGE_BYTES / InsnBytes;
  localparam int BurstWidth = $clog2(((MaxBurstInsns > PageInsns) ? MaxBurstInsns : PageInsns) + 1);
  logic [BufferCountWidth-1:0] free_slots;
  logic [31:0] remaining, request_byte_addr;
  logic [BurstWidth-1:0] page_insns, room_insns, left_insns, burst_insns;
  // min(free slots, burst cap) and min(page, remaining)
  logic [BurstWidth-1:0] room_q, room_d, left_q, left_d;
  logic                  caps_fresh_q, caps_fresh_d;  // they were taken from the current state
  always_comb begin
    // The buffer's entries plus those in flight never exceed its depth.
    free_slots = BufferCountWidth'(BufferDepth) - buffer_count - in_flight_q;
    remaining = count_q - request_index_q;
    request_byte_addr = base_q + (request_index_q << $clog2(InsnBytes));
    page_insns = BurstWidth'(((PageBits + 1)'(tessera_config_pkg::AXI_PAGE_BYTES) -
                              (PageBits + 1)'(request_byte_addr[PageBits-1:0])) >> $clog2(InsnBytes));
    room_insns = (32'(free_slots) < MaxBurstInsns) ? BurstWidth'(free_slots) : BurstWidth'(MaxBurstInsns);
    left_insns = (remaining < 32'(page_insns)) ? BurstWidth'(remaining) : page_insns;
    burst_insns = (room_q < left_q) ? room_q : left_q;
  end
  logic                  request_valid_q, request_valid_d;
  logic [31:0]           request_addr_q, request_addr_d;
  logic [BurstWidth-1:0] request_insns_q, request_insns_d;
  assign req_valid_o = request_valid_q;
  assign req_addr_o = request_addr_q;
  assign req_len_o = 8'(32'(request_insns_q) * InsnBeats - 1);
  assign rsp_ready_o = 1'b1;

  // Little-endian assembly: the first beat holds the low bits.
  if (InsnBeats == 1) begin : g_one_beat
    assign assembled = rsp_data_i[InsnWidth-1:0];
  end else begin : g_beats
    assign assembled = {rsp_data_i, shift_q[InsnWidth-1:BusWidth]};
  end
  assign buffer_push = rsp_valid_i && (32'(beat_q) == InsnBeats - 1);

  // Dispatch by VTA's rules: LOAD of INP/WGT to load, STORE to store, everything else to compute.
  // The head is read through the memory format, whose opcode and memory type every format shares.
  /* verilator lint_off UNUSEDSIGNAL */
  tessera_config_pkg::insn_mem_t head_insn;
  /* verilator lint_on UNUSEDSIGNAL */
  assign head_insn = buffer_head[InsnWidth-1:0];
  logic to_load, to_store, target_full;
  always_comb begin
    to_load = head_insn.opcode == tessera_config_pkg::OPCODE_LOAD &&
              (head_insn.memory_type == tessera_config_pkg::MEM_ID_INP ||
               head_insn.memory_type == tessera_config_pkg::MEM_ID_WGT);
    to_store = head_insn.opcode == tessera_config_pkg::OPCODE_STORE;
    target_full = to_load ? load_full_i : (to_store ? store_full_i : compute_full_i);
  end
  assign buffer_pop = !buffer_empty && !target_full;
  assign entry_o = buffer_head;
  assign load_push_o = buffer_pop && to_load;
  assign store_push_o = buffer_pop && to_store;
  assign compute_push_o = buffer_pop && !to_load && !to_store;

  // Next state: a start resets the run; otherwise requests, assembly and dispatch move on.
  always_comb begin
    active_d = active_q;
    base_d = base_q;
    count_d = count_q;
    request_index_d = request_index_q;
    assemble_index_d = assemble_index_q;
    dispatch_index_d = dispatch_index_q;
    in_flight_d = in_flight_q;
    beat_d = beat_q;
    shift_d = shift_q;
    request_valid_d = request_valid_q;
    request_addr_d = request_addr_q;
    request_insns_d = request_insns_q;
    room_d = room_q;
    left_d = left_q;
    caps_fresh_d = caps_fresh_q;
    if (start_i) begin
      active_d = 1'b1;
      base_d = insn_addr_i;
      count_d = insn_count_i;
      request_index_d = '0;
      assemble_index_d = '0;
      dispatch_index_d = '0;
      in_flight_d = '0;
      beat_d = '0;
      request_valid_d = 1'b0;
      caps_fresh_d = 1'b0;
    end else begin
      room_d = room_insns;
      left_d = left_insns;
      caps_fresh_d = 1'b1;
      if (request_valid_q && req_ready_i) begin
        caps_fresh_d = 1'b0;
        request_valid_d = 1'b0;
        request_index_d = request_index_q + 32'(request_insns_q);
        in_flight_d = in_flight_d + BufferCountWidth'(request_insns_q);
      end else if (!request_valid_q && caps_fresh_q && active_q && burst_insns != '0) begin
        request_valid_d = 1'b1;
        request_addr_d = request_byte_addr;
        request_insns_d = burst_insns;
      end
      if (rsp_valid_i) begin
        shift_d = {rsp_data_i, shift_q[InsnWidth-1:BusWidth]};
        beat_d = (32'(beat_q) == InsnBeats - 1) ? '0 : beat_q + 1'b1;
      end
      if (buffer_push) begin
        assemble_index_d = assemble_index_q + 1'b1;
        in_flight_d = in_flight_d - 1'b1;
      end
      if (buffer_pop) dispatch_index_d = dispatch_index_q + 1'b1;
      if (active_q && dispatch_index_q == count_q) active_d = 1'b0;
    end
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      active_q         <= 1'b0;
      base_q           <= '0;
      count_q          <= '0;
      request_index_q  <= '0;
      assemble_index_q <= '0;
      dispatch_index_q <= '0;
      in_flight_q      <= '0;
      beat_q           <= '0;
      shift_q          <= '0;
      request_valid_q  <= 1'b0;
      request_addr_q   <= '0;
      request_insns_q  <= '0;
      room_q           <= '0;
      left_q           <= '0;
      caps_fresh_q     <= 1'b0;
    end else begin
      active_q         <= active_d;
      base_q           <= base_d;
      count_q          <= count_d;
      request_index_q  <= request_index_d;
      assemble_index_q <= assemble_index_d;
      dispatch_index_q <= dispatch_index_d;
      in_flight_q      <= in_flight_d;
      beat_q           <= beat_d;
      shift_q          <= shift_d;
      request_valid_q  <= request_valid_d;
      request_addr_q   <= request_addr_d;
      request_insns_q  <= request_insns_d;
      room_q           <= room_d;
      left_q           <= left_d;
      caps_fresh_q     <= caps_fresh_d;
    end
  end

  // Status: busy while instructions move, stalled when the head's queue is full.
  localparam int ArgBits = tessera_host_pkg::StatusArgBits;
  logic [ArgBits-1:0] head_module;
  assign head_module = to_load ? ArgBits'(tessera_host_pkg::InsnQueueLoad)
                               : (to_store ? ArgBits'(tessera_host_pkg::InsnQueueStore)
                                           : ArgBits'(tessera_host_pkg::InsnQueueCompute));
  assign stall_o = !buffer_empty && target_full;
  assign busy_o = active_q && !stall_o;
  always_comb begin
    status_o.arg = '0;
    if (stall_o) begin
      status_o.arg = head_module;
      status_o.state = tessera_host_pkg::StateFetchQueueFull;
    end else if (active_q) begin
      status_o.state = tessera_host_pkg::StateBusy;
    end else if (count_q != '0 && dispatch_index_q == count_q) begin
      status_o.state = tessera_host_pkg::StateAllDispatched;
    end else begin
      status_o.state = tessera_host_pkg::StateIdle;
    end
  end
  assign next_insn_o = dispatch_index_q;

endmodule
