// Compute module: executes LOAD UOP/ACC/ACC_8BIT, GEMM, ALU and FINISH; a GEMM and an ALU
// instruction run side by side when they touch different accumulator rows.
//
// Instructions leave the queue in program order. LOAD and FINISH run alone, through the loader or
// at once. GEMMs go to the GEMM pipe and ALU instructions (and reset GEMMs, which only write zeros)
// to the ALU pipe (tessera_uop_pipe), one instruction per pipe. An instruction taken while the
// other pipe holds an older one first scans its micro-ops for its footprint and starts only when
// the older one's footprint is known, both stay inside their buffers and neither writes rows the
// other reads or writes; otherwise it waits for the older one to finish. The result is that of one
// instruction after the other, as fsim computes it, and an epilogue on one accumulator half runs
// while the GEMM core fills the other half.
//
// An instruction's tokens are pushed when it and every older one have finished, so the load and
// store modules see what a one-at-a-time compute stage would have written; an instruction without
// tokens to push frees its pipe as soon as it finishes. An instruction pushing to a queue an
// in-flight older one also pushes to waits until that one retires, so the room checked when it
// left the queue is still there.
//
// The accumulator SRAM (and the output SRAM beside it) is two banks, split by the row index's top
// bit, each with one read and one write port; the pipes ask for a bank in S1 and the older
// instruction's pipe gets it first. The micro-op SRAM has a port for each pipe; the loader writes
// through the GEMM pipe's port, never while a pipe runs.
`include "tessera_config.svh"

module tessera_compute #(
  parameter int EntryWidth = 32 + tessera_config_pkg::INS_WIDTH
) (
  input  logic                                   clk_i,
  input  logic                                   rst_ni,
  input  logic                                   start_i,
  input  logic                                   q_valid_i,
  // Instruction words carry fields compute does not decode for every opcode.
  /* verilator lint_off UNUSEDSIGNAL */
  input  logic [EntryWidth-1:0]                  q_entry_i,
  /* verilator lint_on UNUSEDSIGNAL */
  output logic                                   q_pop_o,
  output logic                                   q_held_o,  // an instruction waits in the head register
  // Tokens.
  input  logic                                   l2g_empty_i,
  output logic                                   l2g_pop_o,
  input  logic                                   s2g_empty_i,
  output logic                                   s2g_pop_o,
  input  logic                                   g2l_full_i,
  output logic                                   g2l_push_o,
  input  logic                                   g2s_full_i,
  output logic                                   g2s_push_o,
  // DRAM read client for micro-op and accumulator loads.
  output logic                                   req_valid_o,
  output logic [31:0]                            req_addr_o,
  output logic [7:0]                             req_len_o,
  input  logic                                   req_ready_i,
  input  logic                                   rsp_valid_i,
  input  logic [tessera_config_pkg::BUS_WIDTH-1:0]          rsp_data_i,
  output logic                                   rsp_ready_o,
  // Micro-op SRAM: port A (loader writes, GEMM pipe reads) and port B (ALU pipe reads).
  output logic                                   uop_a_we_o,
  output logic                                   uop_a_re_o,
  output logic [tessera_config_pkg::LOG_UOP_BUFF_DEPTH-1:0] uop_a_addr_o,
  output logic [tessera_config_pkg::UOP_WIDTH-1:0]          uop_a_wdata_o,
  input  logic [tessera_config_pkg::UOP_WIDTH-1:0]          uop_a_rdata_i,
  output logic                                   uop_b_re_o,
  output logic [tessera_config_pkg::LOG_UOP_BUFF_DEPTH-1:0] uop_b_addr_o,
  input  logic [tessera_config_pkg::UOP_WIDTH-1:0]          uop_b_rdata_i,
  // Input and weight SRAM read ports.
  output logic                                   inp_re_o,
  output logic [tessera_config_pkg::LOG_INP_BUFF_DEPTH-1:0] inp_raddr_o,
  input  logic [tessera_config_pkg::INP_MATRIX_WIDTH-1:0]   inp_rdata_i,
  output logic                                   wgt_re_o,
  output logic [tessera_config_pkg::LOG_WGT_BUFF_DEPTH-1:0] wgt_raddr_o,
  input  logic [tessera_config_pkg::WGT_MATRIX_WIDTH-1:0]   wgt_rdata_i,
  // Accumulator SRAM banks and their narrowed copies, the output SRAM banks (bank b in slice b).
  output logic [2*AccLanes-1:0]                  acc_we_o,
  output logic [2*BankAw-1:0]                    acc_waddr_o,
  output logic [2*AccWidth-1:0]                  acc_wdata_o,
  output logic [1:0]                             acc_re_o,
  output logic [2*BankAw-1:0]                    acc_raddr_o,
  input  logic [2*AccWidth-1:0]                  acc_rdata_i,
  output logic [2*AccLanes-1:0]                  out_we_o,
  output logic [2*BankAw-1:0]                    out_waddr_o,
  output logic [2*OutWidth-1:0]                  out_wdata_o,
  // Status, events and faults.
  output logic                                   busy_o,
  output logic                                   stall_o,
  output logic                                   retire_o,
  output logic                                   finish_o,
  output logic [1:0]                             gemm_uops_o,  // micro-ops written this cycle
  output logic [1:0]                             alu_uops_o,
  output logic                                   fault_o,
  output logic [31:0]                            fault_info_o,
  output tessera_host_pkg::status_t              status_o,
  output logic [31:0]                            insn_o,
  // Instruction trace: bit 0 the instructions the sequencer runs itself (LOAD, FINISH, ...), bit
  // 1 the GEMM pipe's, bit 2 the ALU pipe's; a begin and an end strobe each. The sequencer begins
  // the head instruction and ends its own; a pipe begins and ends the one it holds, or the head.
  // FINISH's end is tessera_top's: the cycle the host registers see finish_o.
  output logic [2:0]                             trace_begin_o,
  output logic [2:0]                             trace_end_o,
  output logic [31:0]                            trace_head_insn_o,
  output logic [31:0]                            trace_seq_insn_o,
  output logic [31:0]                            trace_gemm_insn_o,
  output logic [31:0]                            trace_alu_insn_o
);

  localparam int Bus = tessera_config_pkg::BUS_WIDTH;
  localparam int AccWidth = tessera_config_pkg::ACC_MATRIX_WIDTH;
  localparam int OutWidth = tessera_config_pkg::OUT_MATRIX_WIDTH;
  localparam int AccLanes = AccWidth / Bus;
  localparam int AccValues = tessera_config_pkg::BATCH * tessera_config_pkg::BLOCK_OUT;
  localparam int UopAw = tessera_config_pkg::LOG_UOP_BUFF_DEPTH;
  localparam int AccAw = tessera_config_pkg::LOG_ACC_BUFF_DEPTH;
  localparam int BankAw = AccAw - 1;
  localparam int LoadAw = (UopAw > AccAw) ? UopAw : AccAw;
  localparam int BeatIdxWidth = (AccLanes > 1) ? $clog2(AccLanes) : 1;
  localparam int AccElemWidth = tessera_config_pkg::ACC_WIDTH;  // one accumulator value
  localparam int OutElemWidth = tessera_config_pkg::OUT_WIDTH;  // one output value
  localparam int Acc8Width = 8;                                 // one ACC_8BIT value in DRAM
  localparam int Acc8Lanes = AccElemWidth / Acc8Width;  // an int8 beat widens to this many lanes
  localparam logic [3:0] LogUopBytes = 4'($clog2(tessera_config_pkg::UOP_ELEM_BYTES));
  localparam logic [3:0] LogAccBytes = 4'($clog2(tessera_config_pkg::ACC_ELEM_BYTES));
  localparam logic [3:0] LogAcc8Bytes = 4'($clog2(tessera_config_pkg::ACC8_ELEM_BYTES));
  localparam int InsnWidth = tessera_config_pkg::INS_WIDTH;
  localparam int SizeWidth = tessera_config_pkg::MEMOP_SIZE_BIT_WIDTH;
  localparam tessera_host_pkg::token_queue_t QueueL2g = tessera_host_pkg::QueueL2g;
  localparam tessera_host_pkg::token_queue_t QueueG2l = tessera_host_pkg::QueueG2l;
  localparam tessera_host_pkg::token_queue_t QueueG2s = tessera_host_pkg::QueueG2s;
  localparam tessera_host_pkg::token_queue_t QueueS2g = tessera_host_pkg::QueueS2g;
  // The pipes, by index.
  localparam int PipeGemm = 0;
  localparam int PipeAlu = 1;

  // ------------------------------------------------------------ the head register
  // The instruction at the queue's head moves into a register of its own, with what dispatch
  // needs decoded, and is checked and dispatched from there: deciding on the queue's read data
  // made the queue's output, the dependency check, dispatch and the loader's or a pipe's first
  // stage one path. The register refills in the cycle its instruction leaves, so instructions
  // still leave one per cycle; one reaching an empty register dispatches a cycle later than it
  // would from the queue.
  logic                  hd_valid_q;
  logic [EntryWidth-1:0] hd_entry_q;
  logic                  hd_is_load_q, hd_is_uops_q, hd_is_finish_q, hd_target_q, hd_load_nonempty_q;
  logic [3:0]            hd_leb_q;
  logic                  take;  // the head instruction is dispatched or issued this cycle
  assign q_pop_o = q_valid_i && (!hd_valid_q || take);
  assign q_held_o = hd_valid_q;

  // Each format has fields only some opcodes use.
  /* verilator lint_off UNUSEDSIGNAL */
  tessera_config_pkg::insn_mem_t  q_mem_insn;
  tessera_config_pkg::insn_gemm_t q_gemm_insn;
  /* verilator lint_on UNUSEDSIGNAL */
  assign q_mem_insn = q_entry_i[InsnWidth-1:0];
  assign q_gemm_insn = q_entry_i[InsnWidth-1:0];

  always_ff @(posedge clk_i) begin
    if (!rst_ni || start_i) begin
      hd_valid_q         <= 1'b0;
      hd_entry_q         <= '0;
      hd_is_load_q       <= 1'b0;
      hd_is_uops_q       <= 1'b0;
      hd_is_finish_q     <= 1'b0;
      hd_target_q        <= 1'b0;
      hd_load_nonempty_q <= 1'b0;
      hd_leb_q           <= '0;
    end else if (q_pop_o) begin
      hd_valid_q         <= 1'b1;
      hd_entry_q         <= q_entry_i;
      hd_is_load_q       <= q_mem_insn.opcode == tessera_config_pkg::OPCODE_LOAD;
      hd_is_uops_q       <= q_mem_insn.opcode == tessera_config_pkg::OPCODE_GEMM ||
                            q_mem_insn.opcode == tessera_config_pkg::OPCODE_ALU;
      hd_is_finish_q     <= q_mem_insn.opcode == tessera_config_pkg::OPCODE_FINISH;
      // Reset GEMMs only write zeros: the ALU pipe takes them, the GEMM pipe keeps the GEMM core busy.
      hd_target_q        <= (q_mem_insn.opcode == tessera_config_pkg::OPCODE_GEMM && !q_gemm_insn.reset) ?
                            1'(PipeGemm) : 1'(PipeAlu);
      hd_load_nonempty_q <= q_mem_insn.x_size != '0;
      hd_leb_q           <= q_mem_insn.memory_type == tessera_config_pkg::MEM_ID_UOP ? LogUopBytes :
                            (q_mem_insn.memory_type == tessera_config_pkg::MEM_ID_ACC ? LogAccBytes : LogAcc8Bytes);
    end else if (take) begin
      hd_valid_q         <= 1'b0;
    end
  end

  // ------------------------------------------------------------ decode of the head register
  // A queue entry is {instruction index, instruction}; the instruction is decoded through the
  // generated formats (the fields every format shares are read through the memory format).
  // Each format has fields only some opcodes use.
  /* verilator lint_off UNUSEDSIGNAL */
  tessera_config_pkg::insn_mem_t  mem_insn;
  tessera_config_pkg::insn_gemm_t gemm_insn;
  tessera_config_pkg::insn_alu_t  alu_insn;
  /* verilator lint_on UNUSEDSIGNAL */
  logic [31:0] entry_index;
  assign mem_insn = hd_entry_q[InsnWidth-1:0];
  assign gemm_insn = hd_entry_q[InsnWidth-1:0];
  assign alu_insn = hd_entry_q[InsnWidth-1:0];
  assign entry_index = hd_entry_q[EntryWidth-1 -: 32];

  tessera_config_pkg::opcode_e opcode;
  tessera_config_pkg::mem_id_e mem_type;
  logic                        pop_prev, pop_next, push_prev, push_next;
  logic [SizeWidth-1:0]        x_size;
  always_comb begin
    opcode    = mem_insn.opcode;
    pop_prev  = mem_insn.pop_prev;
    pop_next  = mem_insn.pop_next;
    push_prev = mem_insn.push_prev;
    push_next = mem_insn.push_next;
    mem_type  = mem_insn.memory_type;
    x_size    = mem_insn.x_size;
  end

  typedef enum logic [2:0] {StIdle, StLoad, StPush, StFinish} state_e;
  state_e      state_q;
  logic        push_prev_q, push_next_q;
  logic [31:0] insn_q;

  // ------------------------------------------------------------ the two pipes' slots
  logic [1:0]  pipe_busy, pipe_waiting, pipe_started, pipe_done, pipe_fault;
  logic [1:0]  pipe_start, pipe_go, pipe_retire, pipe_exec_begin, pipe_exec_end;
  logic [1:0]  fp_valid, fp_in_range, fp_empty, fp_src_acc;
  logic [tessera_config_pkg::LOG_ACC_BUFF_DEPTH-1:0] fp_dst_lo [2];
  logic [tessera_config_pkg::LOG_ACC_BUFF_DEPTH-1:0] fp_dst_hi [2];
  logic [tessera_config_pkg::LOG_ACC_BUFF_DEPTH-1:0] fp_src_lo [2];
  logic [tessera_config_pkg::LOG_ACC_BUFF_DEPTH-1:0] fp_src_hi [2];
  logic [tessera_config_pkg::INSN_GEMM_UOP_END_W+1:0] pipe_fault_info [2];
  // Per slot: the instruction's index and the tokens it pushes when it retires.
  logic [31:0] slot_index_q [2];
  logic [1:0]  slot_push_prev_q, slot_push_next_q;
  // The pipe holding the older instruction (when both hold one).
  logic        older_q;

  logic any_fault;
  assign any_fault = |pipe_fault;

  // The oldest instruction in flight.
  logic oldest;
  assign oldest = pipe_busy[older_q] ? older_q : !older_q;

  // A finished instruction retires (and frees its pipe for the next one) at once, unless it pushes
  // tokens while an older one still runs in the other pipe: a push promises the other modules
  // every write before it, so it waits for that one. One instruction retires per cycle, the
  // older first.
  logic [1:0] can_retire;
  for (genvar p = 0; p < 2; p++) begin : g_can_retire
    assign can_retire[p] = pipe_busy[p] && pipe_done[p] && !any_fault &&
                           (!(slot_push_prev_q[p] || slot_push_next_q[p]) ||
                            !(pipe_busy[1 - p] && older_q == 1'(1 - p)));
  end
  logic retire_pipe, retiring;
  assign retire_pipe = can_retire != '0;
  assign retiring = can_retire[oldest] ? oldest : !oldest;

  // ------------------------------------------------------------ dispatch
  logic is_load, is_uops, target;
  assign is_load = hd_is_load_q;
  assign is_uops = hd_is_uops_q;
  assign target = hd_target_q;

  // A push waits while an older instruction in flight still has to push to the same queue. Which
  // queues the instructions in the pipes push to is kept in two registers, set from the pipes'
  // next occupancy (a pipe is taken by dispatch and freed by retire only), rather than read
  // from the pipes' busy flags in front of the dependency check.
  logic push_prev_pending_q, push_next_pending_q, push_prev_pending_d, push_next_pending_d;
  logic push_prev_pending, push_next_pending;
  assign push_prev_pending = push_prev_pending_q;
  assign push_next_pending = push_next_pending_q;
  always_comb begin
    push_prev_pending_d = 1'b0;
    push_next_pending_d = 1'b0;
    for (int p = 0; p < 2; p++) begin
      if (pipe_start[p]) begin
        push_prev_pending_d = push_prev_pending_d || push_prev;
        push_next_pending_d = push_next_pending_d || push_next;
      end else if (pipe_busy[p] && !pipe_retire[p]) begin
        push_prev_pending_d = push_prev_pending_d || slot_push_prev_q[p];
        push_next_pending_d = push_next_pending_d || slot_push_next_q[p];
      end
    end
  end

  // The dependency check's decision is made here, inline, and tessera_dep_check only says what
  // the head waits for: synthesis keeps the hierarchy, so the decision taken from a module of its
  // own could not merge with dispatch, and cost two levels more in front of the pipes and the
  // loader.
  logic deps_ready, deps_check_ready;
  assign deps_ready = !(pop_prev && l2g_empty_i) && !(pop_next && s2g_empty_i) &&
                      !(push_prev && (g2l_full_i || push_prev_pending)) &&
                      !(push_next && (g2s_full_i || push_next_pending));
  tessera_host_pkg::status_t deps_status;
  tessera_dep_check u_deps (
    .pop_req_i({pop_next, pop_prev}), .pop_empty_i({s2g_empty_i, l2g_empty_i}),
    .pop_queue_i({QueueS2g, QueueL2g}),
    .push_req_i({push_next, push_prev}),
    .push_full_i({g2s_full_i || push_next_pending, g2l_full_i || push_prev_pending}),
    .push_queue_i({QueueG2s, QueueG2l}),
    .ready_o(deps_check_ready), .status_o(deps_status)
  );

  logic head_ready, dispatch, issue;
  assign head_ready = (state_q == StIdle) && hd_valid_q && deps_ready && !any_fault;
  // GEMM/ALU: into a free pipe. LOAD, FINISH and the rest: once both pipes are empty.
  assign dispatch = head_ready && is_uops && !pipe_busy[target];
  assign issue = head_ready && !is_uops && pipe_busy == '0;
  assign take = dispatch || issue;
  assign l2g_pop_o = take && pop_prev;
  assign s2g_pop_o = take && pop_next;
  assign pipe_start = dispatch ? (2'b01 << target) : 2'b00;

  // ------------------------------------------------------------ when a scanned instruction goes
  function automatic logic apart(input logic [tessera_config_pkg::LOG_ACC_BUFF_DEPTH-1:0] lo_a,
                                 input logic [tessera_config_pkg::LOG_ACC_BUFF_DEPTH-1:0] hi_a,
                                 input logic [tessera_config_pkg::LOG_ACC_BUFF_DEPTH-1:0] lo_b,
                                 input logic [tessera_config_pkg::LOG_ACC_BUFF_DEPTH-1:0] hi_b);
    apart = hi_a < lo_b || hi_b < lo_a;
  endfunction

  logic footprints_apart;
  always_comb begin
    footprints_apart = fp_empty[0] || fp_empty[1] ||
                       (apart(fp_dst_lo[0], fp_dst_hi[0], fp_dst_lo[1], fp_dst_hi[1]) &&
                        (!fp_src_acc[0] || apart(fp_src_lo[0], fp_src_hi[0], fp_dst_lo[1], fp_dst_hi[1])) &&
                        (!fp_src_acc[1] || apart(fp_src_lo[1], fp_src_hi[1], fp_dst_lo[0], fp_dst_hi[0])));
  end

  // A waiting instruction goes when the other pipe is empty, holds a younger one or is done, or
  // holds an older running one it can overlap with.
  for (genvar p = 0; p < 2; p++) begin : g_go
    localparam int Other = 1 - p;
    logic other_older;
    assign other_older = pipe_busy[Other] && older_q == 1'(Other);
    assign pipe_go[p] = pipe_waiting[p] && !any_fault &&
                        (!other_older || pipe_done[Other] ||
                         (pipe_started[Other] && fp_valid[Other] && fp_valid[p] && fp_in_range[Other] &&
                          fp_in_range[p] && footprints_apart));
  end

  assign pipe_retire = retire_pipe ? (2'b01 << retiring) : 2'b00;

  // ------------------------------------------------------------ loads of micro-ops and accumulators
  logic                    load_start, loader_done, loader_busy;
  logic                    is_uop_load_q, is_acc_load_q;
  logic                    ld_valid, ld_pad;
  logic [LoadAw-1:0]       ld_addr;
  logic [BeatIdxWidth-1:0] ld_beat;
  logic [Bus-1:0]          ld_data;
  // Programs are validated against the buffer depth, so the field's bits above it are zero.
  /* verilator lint_off UNUSEDSIGNAL */
  logic [tessera_config_pkg::MEMOP_SRAM_ADDR_BIT_WIDTH-1:0] ld_sram_base;
  /* verilator lint_on UNUSEDSIGNAL */

  assign load_start = issue && is_load && hd_load_nonempty_q;
  assign ld_sram_base = mem_insn.sram_base;

  // A load runs alone, so the loader always takes the job and its tags are not needed.
  logic loader_ready;
  logic unused_tag_done, unused_tag_wr;
  tessera_mem_loader #(.BusWidth(Bus), .SramAddrWidth(LoadAw), .BeatIdxWidth(BeatIdxWidth), .TagWidth(1)) u_loader (
    .clk_i, .rst_ni, .clear_i(start_i),
    .job_valid_i(load_start), .job_ready_o(loader_ready), .tag_i(1'b0),
    .done_tag_o(unused_tag_done), .wr_tag_o(unused_tag_wr),
    .sram_base_i(ld_sram_base[LoadAw-1:0]),
    .dram_base_i(mem_insn.dram_base),
    .y_size_i(mem_insn.y_size),
    .x_size_i(x_size),
    .x_stride_i(mem_insn.x_stride),
    .y_pad0_i(mem_insn.y_pad_0),
    .y_pad1_i(mem_insn.y_pad_1),
    .x_pad0_i(mem_insn.x_pad_0),
    .x_pad1_i(mem_insn.x_pad_1),
    .log_elem_bytes_i(hd_leb_q),
    .busy_o(loader_busy), .done_o(loader_done),
    .req_valid_o, .req_addr_o, .req_len_o, .req_ready_i,
    .rsp_valid_i, .rsp_data_i, .rsp_ready_o,
    .wr_valid_o(ld_valid), .wr_addr_o(ld_addr), .wr_beat_o(ld_beat), .wr_pad_o(ld_pad), .wr_data_o(ld_data)
  );

  // An int8 beat of ACC_8BIT widens to four lanes of sign-extended int32 values.
  logic [Acc8Lanes*Bus-1:0] ld_widened;
  always_comb begin
    for (int i = 0; i < Bus / Acc8Width; i++) begin
      ld_widened[i * AccElemWidth +: AccElemWidth] = AccElemWidth'($signed(ld_data[i * Acc8Width +: Acc8Width]));
    end
  end

  logic [AccLanes-1:0] ld_acc_we;
  logic [AccWidth-1:0] ld_acc_wdata;
  always_comb begin
    ld_acc_we = '0;
    ld_acc_wdata = '0;
    if (ld_valid && !is_uop_load_q) begin
      if (ld_pad) begin
        ld_acc_we = '1;
      end else if (is_acc_load_q) begin
        ld_acc_we = AccLanes'(1) << ld_beat;
        ld_acc_wdata = {AccLanes{ld_data}};
      end else begin
        ld_acc_we = AccLanes'({Acc8Lanes{1'b1}}) << (32'(ld_beat) * Acc8Lanes);
        ld_acc_wdata = {(AccLanes / Acc8Lanes){ld_widened}};
      end
    end
  end

  // ------------------------------------------------------------ the pipes
  logic [1:0]  uop_re, slot_req, slot_bank, slot_grant, pipe_acc_re, pipe_acc_we, pipe_uop, pipe_uop_gemm;
  logic [UopAw-1:0] uop_raddr [2];
  logic [AccAw-1:0] pipe_acc_raddr [2];
  logic [AccAw-1:0] pipe_acc_waddr [2];
  logic [AccWidth-1:0] pipe_acc_wdata [2];
  logic [tessera_config_pkg::UOP_WIDTH-1:0] uop_rdata [2];
  assign uop_rdata[PipeGemm] = uop_a_rdata_i;
  assign uop_rdata[PipeAlu] = uop_b_rdata_i;

  // The fields every pipe takes from the head instruction.
  logic [31:0] head_imm;
  assign head_imm = 32'($signed(alu_insn.imm));

  // When both pipes want one bank, the older instruction's pipe gets it, unless the younger one was
  // refused in the previous cycle: a GEMM wants its bank every cycle, and an epilogue reading a
  // per-channel row from that bank would otherwise wait for the whole GEMM.
  logic denied_q, denied_d;
  logic favoured;
  assign favoured = denied_q ? !oldest : oldest;
  logic bank_conflict;
  assign bank_conflict = slot_req == 2'b11 && slot_bank[0] == slot_bank[1];
  // Bit by bit rather than indexed by !favoured, which synthesis built as an integer subtraction.
  assign slot_grant = {!(bank_conflict && !favoured), !(bank_conflict && favoured)};
  assign denied_d = bank_conflict && favoured == oldest;
  always_ff @(posedge clk_i) begin
    if (!rst_ni || start_i) denied_q <= 1'b0;
    else denied_q <= denied_d;
  end

  logic [1:0] inp_re_p, wgt_re_p;
  logic [tessera_config_pkg::LOG_INP_BUFF_DEPTH-1:0] inp_raddr_p [2];
  logic [tessera_config_pkg::LOG_WGT_BUFF_DEPTH-1:0] wgt_raddr_p [2];
  for (genvar p = 0; p < 2; p++) begin : g_pipe
    tessera_uop_pipe #(.GemmPipe(p == PipeGemm)) u_pipe (
      .clk_i, .rst_ni, .clear_i(start_i),
      .start_i(pipe_start[p]), .scan_i(pipe_busy[1 - p] && !pipe_done[1 - p]), .go_i(pipe_go[p]),
      .retire_i(pipe_retire[p]),
      .halt_i(any_fault),
      .gemm_i(opcode == tessera_config_pkg::OPCODE_GEMM), .reset_i(gemm_insn.reset), .use_imm_i(alu_insn.use_imm),
      .alu_op_i(alu_insn.alu_opcode), .imm_i(head_imm),
      .uop_bgn_i(gemm_insn.uop_bgn), .uop_end_i(gemm_insn.uop_end),
      .iter_out_i(gemm_insn.iter_out), .iter_in_i(gemm_insn.iter_in),
      .dst_fo_i(gemm_insn.dst_factor_out), .dst_fi_i(gemm_insn.dst_factor_in),
      .src_fo_i(gemm_insn.src_factor_out), .src_fi_i(gemm_insn.src_factor_in),
      // ALU instructions have no weight factors; their fields there hold the ALU opcode.
      .wgt_fo_i(opcode == tessera_config_pkg::OPCODE_GEMM ? gemm_insn.wgt_factor_out : '0),
      .wgt_fi_i(opcode == tessera_config_pkg::OPCODE_GEMM ? gemm_insn.wgt_factor_in : '0),
      .busy_o(pipe_busy[p]), .waiting_o(pipe_waiting[p]), .started_o(pipe_started[p]), .done_o(pipe_done[p]),
      .exec_begin_o(pipe_exec_begin[p]), .exec_end_o(pipe_exec_end[p]),
      .fp_valid_o(fp_valid[p]), .fp_in_range_o(fp_in_range[p]), .fp_empty_o(fp_empty[p]),
      .fp_src_acc_o(fp_src_acc[p]), .fp_dst_lo_o(fp_dst_lo[p]), .fp_dst_hi_o(fp_dst_hi[p]),
      .fp_src_lo_o(fp_src_lo[p]), .fp_src_hi_o(fp_src_hi[p]),
      .uop_re_o(uop_re[p]), .uop_raddr_o(uop_raddr[p]), .uop_rdata_i(uop_rdata[p]),
      .slot_req_o(slot_req[p]), .slot_bank_o(slot_bank[p]), .slot_grant_i(slot_grant[p]),
      .acc_re_o(pipe_acc_re[p]), .acc_raddr_o(pipe_acc_raddr[p]), .acc_rdata_i(acc_rdata_i),
      .acc_we_o(pipe_acc_we[p]), .acc_waddr_o(pipe_acc_waddr[p]), .acc_wdata_o(pipe_acc_wdata[p]),
      .inp_re_o(inp_re_p[p]), .inp_raddr_o(inp_raddr_p[p]), .inp_rdata_i(inp_rdata_i),
      .wgt_re_o(wgt_re_p[p]), .wgt_raddr_o(wgt_raddr_p[p]), .wgt_rdata_i(wgt_rdata_i),
      .uop_o(pipe_uop[p]), .uop_gemm_o(pipe_uop_gemm[p]),
      .fault_o(pipe_fault[p]), .fault_info_o(pipe_fault_info[p])
    );
  end

  // The input and weight SRAMs are read by the GEMM pipe only.
  assign inp_re_o = inp_re_p[PipeGemm];
  assign inp_raddr_o = inp_raddr_p[PipeGemm];
  assign wgt_re_o = wgt_re_p[PipeGemm];
  assign wgt_raddr_o = wgt_raddr_p[PipeGemm];
  logic unused_alu_pipe_reads;
  assign unused_alu_pipe_reads = ^{inp_re_p[PipeAlu], inp_raddr_p[PipeAlu], wgt_re_p[PipeAlu], wgt_raddr_p[PipeAlu]};

  // Micro-op SRAM: the loader writes through port A while no pipe runs.
  assign uop_a_we_o = ld_valid && is_uop_load_q;
  assign uop_a_wdata_o = ld_data[tessera_config_pkg::UOP_WIDTH-1:0];
  assign uop_a_re_o = uop_re[PipeGemm];
  assign uop_a_addr_o = uop_a_we_o ? ld_addr[UopAw-1:0] : uop_raddr[PipeGemm];
  assign uop_b_re_o = uop_re[PipeAlu];
  assign uop_b_addr_o = uop_raddr[PipeAlu];

  // Accumulator and output banks: the loader's writes, or each pipe's into the bank of its row (the
  // grants keep both pipes off one bank in one cycle, for reads and for writes).
  always_comb begin
    acc_we_o = '0;
    acc_waddr_o = '0;
    acc_wdata_o = '0;
    acc_re_o = '0;
    acc_raddr_o = '0;
    for (int b = 0; b < 2; b++) begin
      if (state_q == StLoad) begin
        if (ld_addr[AccAw-1] == 1'(b)) acc_we_o[b * AccLanes +: AccLanes] = ld_acc_we;
        acc_waddr_o[b * BankAw +: BankAw] = ld_addr[BankAw-1:0];
        acc_wdata_o[b * AccWidth +: AccWidth] = ld_acc_wdata;
      end else begin
        for (int p = 0; p < 2; p++) begin
          if (pipe_acc_we[p] && pipe_acc_waddr[p][AccAw-1] == 1'(b)) begin
            acc_we_o[b * AccLanes +: AccLanes] = '1;
            acc_waddr_o[b * BankAw +: BankAw] = pipe_acc_waddr[p][BankAw-1:0];
            acc_wdata_o[b * AccWidth +: AccWidth] = pipe_acc_wdata[p];
          end
        end
      end
      for (int p = 0; p < 2; p++) begin
        if (pipe_acc_re[p] && pipe_acc_raddr[p][AccAw-1] == 1'(b)) begin
          acc_re_o[b] = 1'b1;
          acc_raddr_o[b * BankAw +: BankAw] = pipe_acc_raddr[p][BankAw-1:0];
        end
      end
    end
  end
  // The output SRAM keeps each accumulator value's low byte, which is what STORE writes to DRAM.
  always_comb begin
    for (int b = 0; b < 2; b++) begin
      for (int v = 0; v < AccValues; v++) begin
        out_wdata_o[b * OutWidth + v * OutElemWidth +: OutElemWidth] =
            acc_wdata_o[b * AccWidth + v * AccElemWidth +: OutElemWidth];
      end
    end
  end
  assign out_we_o = acc_we_o;
  assign out_waddr_o = acc_waddr_o;

  assign gemm_uops_o = 2'(pipe_uop_gemm[PipeGemm]) + 2'(pipe_uop_gemm[PipeAlu]);
  assign alu_uops_o = 2'(pipe_uop[PipeAlu] && !pipe_uop_gemm[PipeAlu]);
  logic unused_gemm_pipe_uop;
  assign unused_gemm_pipe_uop = pipe_uop[PipeGemm];

  // ------------------------------------------------------------ sequencing
  state_e state_d;
  logic push_prev_d, push_next_d, older_d;
  logic [31:0] insn_d;
  logic is_uop_load_d, is_acc_load_d;
  always_comb begin
    state_d = state_q;
    push_prev_d = push_prev_q;
    push_next_d = push_next_q;
    insn_d = insn_q;
    is_uop_load_d = is_uop_load_q;
    is_acc_load_d = is_acc_load_q;
    older_d = older_q;
    case (state_q)
      StIdle: begin
        if (hd_valid_q) insn_d = entry_index;
        if (issue) begin
          push_prev_d = push_prev;
          push_next_d = push_next;
          if (hd_is_finish_q) begin
            state_d = StFinish;
          end else if (is_load) begin
            is_uop_load_d = (mem_type == tessera_config_pkg::MEM_ID_UOP);
            is_acc_load_d = (mem_type == tessera_config_pkg::MEM_ID_ACC);
            state_d = hd_load_nonempty_q ? StLoad : StPush;
          end else begin
            state_d = StPush;
          end
        end
      end
      StLoad: if (loader_done) state_d = StPush;
      StPush: state_d = StIdle;
      StFinish: state_d = StFinish;
      default: state_d = StIdle;
    endcase
    // Ages: a dispatched instruction is the younger one if the other pipe keeps an instruction.
    if (dispatch) begin
      older_d = (pipe_busy[!target] && !pipe_retire[!target]) ? !target : target;
    end else if (retire_pipe) begin
      older_d = !retiring;
    end
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni || start_i) begin
      state_q <= StIdle;
      push_prev_q <= 1'b0;
      push_next_q <= 1'b0;
      insn_q <= '0;
      is_uop_load_q <= 1'b0;
      is_acc_load_q <= 1'b0;
      older_q <= 1'b0;
      slot_index_q[0] <= '0;
      slot_index_q[1] <= '0;
      slot_push_prev_q <= '0;
      slot_push_next_q <= '0;
      push_prev_pending_q <= 1'b0;
      push_next_pending_q <= 1'b0;
    end else begin
      push_prev_pending_q <= push_prev_pending_d;
      push_next_pending_q <= push_next_pending_d;
      state_q <= state_d;
      push_prev_q <= push_prev_d;
      push_next_q <= push_next_d;
      insn_q <= insn_d;
      is_uop_load_q <= is_uop_load_d;
      is_acc_load_q <= is_acc_load_d;
      older_q <= older_d;
      if (dispatch) begin
        slot_index_q[target] <= entry_index;
        slot_push_prev_q[target] <= push_prev;
        slot_push_next_q[target] <= push_next;
      end
    end
  end

  // ------------------------------------------------------------ status
  logic fault_pipe;
  assign fault_pipe = pipe_fault[PipeAlu];
  assign g2l_push_o = (state_q == StPush && push_prev_q) || (retire_pipe && slot_push_prev_q[retiring]);
  assign g2s_push_o = (state_q == StPush && push_next_q) || (retire_pipe && slot_push_next_q[retiring]);
  assign retire_o = (state_q == StPush) || (state_q == StIdle && issue && hd_is_finish_q) || retire_pipe;
  assign finish_o = (state_q == StFinish);
  assign busy_o = (state_q == StLoad) || (state_q == StPush) || pipe_busy != '0;
  assign stall_o = (state_q == StIdle) && hd_valid_q && !deps_ready && pipe_busy == '0;
  assign fault_o = any_fault;
  assign fault_info_o = 32'(pipe_fault_info[fault_pipe]);
  always_comb begin
    status_o = '0;
    if (state_q == StFinish) status_o.state = tessera_host_pkg::StateHaltedAtFinish;
    else if (busy_o) status_o.state = tessera_host_pkg::StateBusy;
    else if (hd_valid_q) status_o = deps_status;
    else if (q_valid_i) status_o.state = tessera_host_pkg::StateBusy;  // moving into the head register
    else status_o.state = tessera_host_pkg::StateIdle;
  end
  // Trace: a pipe begins or ends the instruction it holds, or the head one it takes this cycle.
  assign trace_begin_o = {pipe_exec_begin[PipeAlu], pipe_exec_begin[PipeGemm], issue};
  assign trace_end_o = {pipe_exec_end[PipeAlu], pipe_exec_end[PipeGemm], state_q == StPush};
  assign trace_head_insn_o = entry_index;
  assign trace_seq_insn_o = insn_q;
  assign trace_gemm_insn_o = pipe_busy[PipeGemm] ? slot_index_q[PipeGemm] : entry_index;
  assign trace_alu_insn_o = pipe_busy[PipeAlu] ? slot_index_q[PipeAlu] : entry_index;

  // The faulting instruction, else the oldest in flight, else the one at the queue's head.
  always_comb begin
    if (any_fault) insn_o = slot_index_q[fault_pipe];
    else if (pipe_busy != '0) insn_o = slot_index_q[oldest];
    else insn_o = insn_q;
  end

`ifndef SYNTHESIS
  StateValid: assert property (@(posedge clk_i) disable iff (!rst_ni)
                               state_q inside {StIdle, StLoad, StPush, StFinish})
    else $error("tessera_compute: invalid state %0d", state_q);
  // The grants give each bank to one pipe per cycle, which keeps their writes apart too.
  logic [1:0] rd_bank, wr_bank;
  assign rd_bank = {pipe_acc_raddr[1][AccAw-1], pipe_acc_raddr[0][AccAw-1]};
  assign wr_bank = {pipe_acc_waddr[1][AccAw-1], pipe_acc_waddr[0][AccAw-1]};
  OneReaderPerBank: assert property (@(posedge clk_i) disable iff (!rst_ni || start_i)
                                     !(pipe_acc_re == 2'b11 && rd_bank[0] == rd_bank[1]))
    else $error("tessera_compute: both pipes read accumulator bank %0d", rd_bank[0]);
  OneWriterPerBank: assert property (@(posedge clk_i) disable iff (!rst_ni || start_i)
                                     !(pipe_acc_we == 2'b11 && wr_bank[0] == wr_bank[1]))
    else $error("tessera_compute: both pipes write accumulator bank %0d", wr_bank[0]);
  NoPipeDuringLoad: assert property (@(posedge clk_i) disable iff (!rst_ni || start_i)
                                     state_q == StLoad |-> pipe_busy == '0)
    else $error("tessera_compute: a pipe runs during a load");
  DepsInline: assert property (@(posedge clk_i) disable iff (!rst_ni || start_i) deps_ready == deps_check_ready)
    else $error("tessera_compute: the inline dependency check disagrees with tessera_dep_check");
  PendingPushes: assert property (@(posedge clk_i) disable iff (!rst_ni || start_i)
                                  push_prev_pending_q == |(pipe_busy & slot_push_prev_q) &&
                                  push_next_pending_q == |(pipe_busy & slot_push_next_q))
    else $error("tessera_compute: the pending-push registers disagree with the pipes");
  // Two instructions overlap only with apart, in-range footprints: then neither can fault.
  OneFaultAtATime: assert property (@(posedge clk_i) disable iff (!rst_ni || start_i) pipe_fault != 2'b11)
    else $error("tessera_compute: both pipes faulted");
`endif

  // The loader reports completion through done; its busy level and readiness are not needed here.
  logic unused_loader;
  assign unused_loader = loader_busy ^ loader_ready ^ unused_tag_done ^ unused_tag_wr;
`ifdef SYNTHESIS
  logic unused_deps_check;
  assign unused_deps_check = deps_check_ready;
`endif

endmodule
