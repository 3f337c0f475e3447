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
  localparam int BufCountWidth = $clog2(BufferDepth + 1);
  localparam logic [2:0] OpLoad = 3'(tessera_config_pkg::OPCODE_LOAD);
  localparam logic [2:0] OpStore = 3'(tessera_config_pkg::OPCODE_STORE);
  localparam logic [2:0] MemInp = 3'(tessera_config_pkg::MEM_ID_INP);
  localparam logic [2:0] MemWgt = 3'(tessera_config_pkg::MEM_ID_WGT);

  logic        active_q;
  logic [31:0] base_q, count_q;
  logic [31:0] req_idx_q;      // next instruction to request
  logic [31:0] asm_idx_q;      // next instruction to assemble
  logic [31:0] disp_idx_q;     // next instruction to dispatch
  logic [BufCountWidth-1:0] inflight_q;
  logic [$clog2(InsnBeats + 1)-1:0] beat_q;
  // The low beat is shifted out as the next arrives, so it is never read back.
  /* verilator lint_off UNUSEDSIGNAL */
  logic [InsnWidth-1:0] shift_q;
  /* verilator lint_on UNUSEDSIGNAL */

  // Buffer of assembled instructions.
  logic buf_push, buf_pop, buf_empty;
  // Requests never exceed the free slots, so the buffer cannot overflow and fullness is unused.
  /* verilator lint_off UNUSEDSIGNAL */
  logic buf_full;
  /* verilator lint_on UNUSEDSIGNAL */
  logic [32+InsnWidth-1:0] buf_head;
  logic [BufCountWidth-1:0] buf_count;
  logic [InsnWidth-1:0] assembled;

  tessera_fifo #(.Width(32 + InsnWidth), .Depth(BufferDepth)) u_buffer (
    .clk_i, .rst_ni, .clear_i(start_i),
    .push_i(buf_push), .wdata_i({asm_idx_q, assembled}),
    .pop_i(buf_pop), .rdata_o(buf_head),
    .empty_o(buf_empty), .full_o(buf_full), .count_o(buf_count)
  );

  // Request sizing: what the buffer can take, what is left, and the 4 KiB page boundary. The
  // request is registered, sized only while none is pending and in two registered steps (the caps
  // in pairs, then their minimum), from a state that has not moved since the last request: while
  // it waits, the buffer only frees slots and nothing else it depends on moves, so it stays within
  // bounds. Sizing, the read arbiter's grant and the state the grant updates in one cycle were the
  // design's longest path.
  localparam int PageInsns = 4096 / InsnBytes;
  localparam int BurstWidth = $clog2(((MaxBurstInsns > PageInsns) ? MaxBurstInsns : PageInsns) + 1);
  logic [BufCountWidth-1:0] free_slots;
  logic [31:0] remaining, req_byte_addr;
  logic [BurstWidth-1:0] page_insns, room_insns, left_insns, burst_insns;
  logic [BurstWidth-1:0] room_q, left_q;  // min(free slots, burst cap) and min(page, remaining)
  logic                  caps_fresh_q;    // they were taken from the current state
  always_comb begin
    // The buffer's entries plus those in flight never exceed its depth.
    free_slots = BufCountWidth'(BufferDepth) - buf_count - inflight_q;
    remaining = count_q - req_idx_q;
    req_byte_addr = base_q + (req_idx_q << $clog2(InsnBytes));
    page_insns = BurstWidth'((13'd4096 - {1'b0, req_byte_addr[11:0]}) >> $clog2(InsnBytes));
    room_insns = (32'(free_slots) < MaxBurstInsns) ? BurstWidth'(free_slots) : BurstWidth'(MaxBurstInsns);
    left_insns = (remaining < 32'(page_insns)) ? BurstWidth'(remaining) : page_insns;
    burst_insns = (room_q < left_q) ? room_q : left_q;
  end
  logic                  req_valid_q;
  logic [31:0]           req_addr_q;
  logic [BurstWidth-1:0] req_insns_q;
  assign req_valid_o = req_valid_q;
  assign req_addr_o = req_addr_q;
  assign req_len_o = 8'(32'(req_insns_q) * InsnBeats - 1);
  assign rsp_ready_o = 1'b1;

  // Little-endian assembly: the first beat holds the low bits.
  if (InsnBeats == 1) begin : g_one_beat
    assign assembled = rsp_data_i[InsnWidth-1:0];
  end else begin : g_beats
    assign assembled = {rsp_data_i, shift_q[InsnWidth-1:BusWidth]};
  end
  assign buf_push = rsp_valid_i && (32'(beat_q) == InsnBeats - 1);

  // Dispatch by VTA's rules: LOAD of INP/WGT to load, STORE to store, everything else to compute.
  logic [2:0] head_opcode, head_mem;
  logic to_load, to_store, target_full;
  always_comb begin
    head_opcode = buf_head[tessera_config_pkg::INSN_MEM_OPCODE_LO +: 3];
    head_mem = buf_head[tessera_config_pkg::INSN_MEM_MEMORY_TYPE_LO +: 3];
    to_load = (head_opcode == OpLoad) && (head_mem == MemInp || head_mem == MemWgt);
    to_store = (head_opcode == OpStore);
    target_full = to_load ? load_full_i : (to_store ? store_full_i : compute_full_i);
  end
  assign buf_pop = !buf_empty && !target_full;
  assign entry_o = buf_head;
  assign load_push_o = buf_pop && to_load;
  assign store_push_o = buf_pop && to_store;
  assign compute_push_o = buf_pop && !to_load && !to_store;

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      active_q   <= 1'b0;
      base_q     <= '0;
      count_q    <= '0;
      req_idx_q  <= '0;
      asm_idx_q  <= '0;
      disp_idx_q <= '0;
      inflight_q <= '0;
      beat_q     <= '0;
      shift_q    <= '0;
      req_valid_q <= 1'b0;
      req_addr_q  <= '0;
      req_insns_q <= '0;
      room_q      <= '0;
      left_q      <= '0;
      caps_fresh_q <= 1'b0;
    end else if (start_i) begin
      active_q   <= 1'b1;
      base_q     <= insn_addr_i;
      count_q    <= insn_count_i;
      req_idx_q  <= '0;
      asm_idx_q  <= '0;
      disp_idx_q <= '0;
      inflight_q <= '0;
      beat_q     <= '0;
      req_valid_q <= 1'b0;
      caps_fresh_q <= 1'b0;
    end else begin
      logic [BufCountWidth-1:0] inflight_d;
      inflight_d = inflight_q;
      room_q <= room_insns;
      left_q <= left_insns;
      caps_fresh_q <= 1'b1;
      if (req_valid_q && req_ready_i) begin
        caps_fresh_q <= 1'b0;
        req_valid_q <= 1'b0;
        req_idx_q <= req_idx_q + 32'(req_insns_q);
        inflight_d = inflight_d + BufCountWidth'(req_insns_q);
      end else if (!req_valid_q && caps_fresh_q && active_q && burst_insns != '0) begin
        req_valid_q <= 1'b1;
        req_addr_q  <= req_byte_addr;
        req_insns_q <= burst_insns;
      end
      if (rsp_valid_i) begin
        shift_q <= {rsp_data_i, shift_q[InsnWidth-1:BusWidth]};
        beat_q <= (32'(beat_q) == InsnBeats - 1) ? '0 : beat_q + 1'b1;
      end
      if (buf_push) begin
        asm_idx_q <= asm_idx_q + 1'b1;
        inflight_d = inflight_d - 1'b1;
      end
      inflight_q <= inflight_d;
      if (buf_pop) disp_idx_q <= disp_idx_q + 1'b1;
      if (active_q && disp_idx_q == count_q) active_q <= 1'b0;
    end
  end

  // Status: busy while instructions move, stalled when the head's queue is full.
  localparam int ArgBits = tessera_host_pkg::StatusArgBits;
  logic [ArgBits-1:0] head_module;
  assign head_module = to_load ? ArgBits'(tessera_host_pkg::InsnQueueLoad)
                               : (to_store ? ArgBits'(tessera_host_pkg::InsnQueueStore)
                                           : ArgBits'(tessera_host_pkg::InsnQueueCompute));
  assign stall_o = !buf_empty && target_full;
  assign busy_o = active_q && !stall_o;
  always_comb begin
    status_o.arg = '0;
    if (stall_o) begin
      status_o.arg = head_module;
      status_o.state = tessera_host_pkg::StateFetchQueueFull;
    end else if (active_q) begin
      status_o.state = tessera_host_pkg::StateBusy;
    end else if (count_q != '0 && disp_idx_q == count_q) begin
      status_o.state = tessera_host_pkg::StateAllDispatched;
    end else begin
      status_o.state = tessera_host_pkg::StateIdle;
    end
  end
  assign next_insn_o = disp_idx_q;

endmodule
