// Compute module: executes LOAD UOP/ACC/ACC_8BIT, GEMM, ALU and FINISH in instruction order.
//
// GEMM and ALU run as a four-stage micro-op pipeline: S0 walks the two loops and the micro-op
// range and reads the micro-op; S1 adds the loop offsets, checks the indices against the buffer
// depths and reads the SRAMs; S2 computes into the GEMM or ALU core's result register; S3 writes
// the accumulator (and its narrowed copy in the output SRAM). The accumulator SRAM has one read
// port and returns old data when read in the cycle it is written, so S2 takes a row from the S3
// write of this cycle or the write of the previous cycle when the addresses match; with that,
// dependent micro-ops issue back to back. A vector ALU micro-op reads its source and then its
// destination, so it holds S1 for two cycles, unless its source row is the one the previous vector
// micro-op of the same instruction read and no micro-op since has written that row: then S2 reuses
// the held row and the micro-op takes one cycle.
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
  // Micro-op SRAM.
  output logic                                   uop_we_o,
  output logic [tessera_config_pkg::LOG_UOP_BUFF_DEPTH-1:0] uop_waddr_o,
  output logic [tessera_config_pkg::UOP_WIDTH-1:0]          uop_wdata_o,
  output logic                                   uop_re_o,
  output logic [tessera_config_pkg::LOG_UOP_BUFF_DEPTH-1:0] uop_raddr_o,
  // Smaller configurations leave the micro-op word's top bits unused.
  /* verilator lint_off UNUSEDSIGNAL */
  input  logic [tessera_config_pkg::UOP_WIDTH-1:0]          uop_rdata_i,
  /* verilator lint_on UNUSEDSIGNAL */
  // Input and weight SRAM read ports.
  output logic                                   inp_re_o,
  output logic [tessera_config_pkg::LOG_INP_BUFF_DEPTH-1:0] inp_raddr_o,
  input  logic [tessera_config_pkg::INP_MATRIX_WIDTH-1:0]   inp_rdata_i,
  output logic                                   wgt_re_o,
  output logic [tessera_config_pkg::LOG_WGT_BUFF_DEPTH-1:0] wgt_raddr_o,
  input  logic [tessera_config_pkg::WGT_MATRIX_WIDTH-1:0]   wgt_rdata_i,
  // Accumulator SRAM and its narrowed copy, the output SRAM.
  output logic [AccLanes-1:0]                    acc_we_o,
  output logic [tessera_config_pkg::LOG_ACC_BUFF_DEPTH-1:0] acc_waddr_o,
  output logic [tessera_config_pkg::ACC_MATRIX_WIDTH-1:0]   acc_wdata_o,
  output logic                                   acc_re_o,
  output logic [tessera_config_pkg::LOG_ACC_BUFF_DEPTH-1:0] acc_raddr_o,
  input  logic [tessera_config_pkg::ACC_MATRIX_WIDTH-1:0]   acc_rdata_i,
  output logic [AccLanes-1:0]                    out_we_o,
  output logic [tessera_config_pkg::LOG_ACC_BUFF_DEPTH-1:0] out_waddr_o,
  output logic [tessera_config_pkg::OUT_MATRIX_WIDTH-1:0]   out_wdata_o,
  // Status, events and faults.
  output logic                                   busy_o,
  output logic                                   stall_o,
  output logic                                   retire_o,
  output logic                                   finish_o,
  output logic                                   gemm_uop_o,
  output logic                                   alu_uop_o,
  output logic                                   fault_o,
  output logic [31:0]                            fault_info_o,
  output tessera_host_pkg::status_t              status_o,
  output logic [31:0]                            insn_o
);

  localparam int Bus = tessera_config_pkg::BUS_WIDTH;
  localparam int AccWidth = tessera_config_pkg::ACC_MATRIX_WIDTH;
  localparam int AccLanes = AccWidth / Bus;
  localparam int AccValues = tessera_config_pkg::BATCH * tessera_config_pkg::BLOCK_OUT;
  localparam int UopAw = tessera_config_pkg::LOG_UOP_BUFF_DEPTH;
  localparam int AccAw = tessera_config_pkg::LOG_ACC_BUFF_DEPTH;
  localparam int InpAw = tessera_config_pkg::LOG_INP_BUFF_DEPTH;
  localparam int WgtAw = tessera_config_pkg::LOG_WGT_BUFF_DEPTH;
  localparam int LoadAw = (UopAw > AccAw) ? UopAw : AccAw;
  localparam int BeatIdxWidth = (AccLanes > 1) ? $clog2(AccLanes) : 1;
  localparam int AccElemWidth = tessera_config_pkg::ACC_WIDTH;  // one accumulator value
  localparam int OutElemWidth = tessera_config_pkg::OUT_WIDTH;  // one output value
  localparam int Acc8Width = 8;                                 // one ACC_8BIT value in DRAM
  localparam int Acc8Lanes = AccElemWidth / Acc8Width;  // an int8 beat widens to this many lanes
  localparam logic [2:0] OpLoad = 3'(tessera_config_pkg::OPCODE_LOAD);
  localparam logic [2:0] OpGemm = 3'(tessera_config_pkg::OPCODE_GEMM);
  localparam logic [2:0] OpFinish = 3'(tessera_config_pkg::OPCODE_FINISH);
  localparam logic [2:0] OpAlu = 3'(tessera_config_pkg::OPCODE_ALU);
  localparam logic [2:0] MemUop = 3'(tessera_config_pkg::MEM_ID_UOP);
  localparam logic [2:0] MemAcc = 3'(tessera_config_pkg::MEM_ID_ACC);
  localparam logic [3:0] LogUopBytes = 4'($clog2(tessera_config_pkg::UOP_ELEM_BYTES));
  localparam logic [3:0] LogAccBytes = 4'($clog2(tessera_config_pkg::ACC_ELEM_BYTES));
  localparam logic [3:0] LogAcc8Bytes = 4'($clog2(tessera_config_pkg::ACC8_ELEM_BYTES));
  localparam int InsnWidth = tessera_config_pkg::INS_WIDTH;
  localparam tessera_host_pkg::token_queue_t QueueL2g = tessera_host_pkg::QueueL2g;
  localparam tessera_host_pkg::token_queue_t QueueG2l = tessera_host_pkg::QueueG2l;
  localparam tessera_host_pkg::token_queue_t QueueG2s = tessera_host_pkg::QueueG2s;
  localparam tessera_host_pkg::token_queue_t QueueS2g = tessera_host_pkg::QueueS2g;
  // FAULT_INFO of an SRAM index fault: the field code in the low bits, the micro-op index above.
  localparam int FaultFieldBits = 2;

  // ------------------------------------------------------------ decode of the queue head
  // A queue entry is {instruction index, instruction}; the instruction is decoded through the
  // generated formats (the fields every format shares are read through the memory format).
  // Each format has fields only some opcodes use.
  /* verilator lint_off UNUSEDSIGNAL */
  tessera_config_pkg::insn_mem_t  mem_insn;
  tessera_config_pkg::insn_gemm_t gemm_insn;
  tessera_config_pkg::insn_alu_t  alu_insn;
  /* verilator lint_on UNUSEDSIGNAL */
  logic [31:0] entry_index;
  assign mem_insn = q_entry_i[InsnWidth-1:0];
  assign gemm_insn = q_entry_i[InsnWidth-1:0];
  assign alu_insn = q_entry_i[InsnWidth-1:0];
  assign entry_index = q_entry_i[EntryWidth-1 -: 32];

  logic [2:0]  opcode, mem_type;
  logic        pop_prev, pop_next, push_prev, push_next;
  logic [15:0] x_size;
  always_comb begin
    opcode    = mem_insn.opcode;
    pop_prev  = mem_insn.pop_prev;
    pop_next  = mem_insn.pop_next;
    push_prev = mem_insn.push_prev;
    push_next = mem_insn.push_next;
    mem_type  = mem_insn.memory_type;
    x_size    = mem_insn.x_size;
  end

  typedef enum logic [2:0] {StIdle, StLoad, StUops, StPush, StFinish, StFault} state_e;
  state_e      state_q;
  logic        push_prev_q, push_next_q;
  logic [31:0] insn_q;

  logic deps_ready;
  tessera_host_pkg::status_t deps_status;
  tessera_dep_check u_deps (
    .pop_req_i({pop_next, pop_prev}), .pop_empty_i({s2g_empty_i, l2g_empty_i}),
    .pop_queue_i({QueueS2g, QueueL2g}),
    .push_req_i({push_next, push_prev}), .push_full_i({g2s_full_i, g2l_full_i}),
    .push_queue_i({QueueG2s, QueueG2l}),
    .ready_o(deps_ready), .status_o(deps_status)
  );

  logic issue, is_load, is_uops;
  assign issue = (state_q == StIdle) && q_valid_i && deps_ready;
  assign is_load = (opcode == OpLoad);
  assign is_uops = (opcode == OpGemm) || (opcode == OpAlu);
  assign q_pop_o = issue;
  assign l2g_pop_o = issue && pop_prev;
  assign s2g_pop_o = issue && pop_next;

  // ------------------------------------------------------------ loads of micro-ops and accumulators
  logic                    load_start, loader_done, loader_busy;
  logic                    is_uop_load_q, is_acc_load_q;
  logic                    ld_valid, ld_pad;
  logic [LoadAw-1:0]       ld_addr;
  logic [BeatIdxWidth-1:0] ld_beat;
  logic [Bus-1:0]          ld_data;
  // Programs are validated against the buffer depth, so the field's bits above it are zero.
  /* verilator lint_off UNUSEDSIGNAL */
  logic [15:0]             ld_sram_base;
  /* verilator lint_on UNUSEDSIGNAL */

  assign load_start = issue && is_load && x_size != '0;
  assign ld_sram_base = mem_insn.sram_base;

  // Compute runs one instruction at a time, so the loader always takes the job and its tags are
  // not needed.
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
    .log_elem_bytes_i(mem_type == MemUop ? LogUopBytes : (mem_type == MemAcc ? LogAccBytes : LogAcc8Bytes)),
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

  assign uop_we_o = ld_valid && is_uop_load_q;
  assign uop_waddr_o = ld_addr[UopAw-1:0];
  assign uop_wdata_o = ld_data[tessera_config_pkg::UOP_WIDTH-1:0];

  // ------------------------------------------------------------ micro-op pipeline
  // Fields of the GEMM/ALU instruction being executed.
  logic        gemm_q, reset_q, use_imm_q;
  logic [2:0]  alu_op_q;
  logic [31:0] imm_q;
  logic [31:0] uop_bgn_q, uop_end_q, iter_out_q, iter_in_q;
  logic [31:0] dst_fo_q, dst_fi_q, src_fo_q, src_fi_q, wgt_fo_q, wgt_fi_q;

  // S0: loop walk.
  logic        s0_active_q;
  logic [31:0] s0_uop_q, s0_i_q, s0_j_q;
  logic [31:0] s0_dst_out_q, s0_src_out_q, s0_wgt_out_q;  // offsets of the outer iteration
  logic [31:0] s0_dst_q, s0_src_q, s0_wgt_q;              // offsets of the current iteration
  // S1: index computation and SRAM reads.
  logic        s1_valid_q, s1_phase_q;
  logic [31:0] s1_dst_off_q, s1_src_off_q, s1_wgt_off_q;
  // Micro-op indices are below the micro-op buffer depth; FAULT_INFO keeps 30 bits of them.
  /* verilator lint_off UNUSEDSIGNAL */
  logic [31:0] s1_uop_q;
  /* verilator lint_on UNUSEDSIGNAL */
  // S2: operands arrive and the cores compute.
  logic        s2_valid_q;
  logic [AccAw-1:0] s2_dst_q;
  logic [AccWidth-1:0] s2_src_val_q;
  // S3: the result is written.
  logic        s3_valid_q, s3_gemm_q, s3_reset_q;
  logic [AccAw-1:0] s3_dst_q;
  // The accumulator write of the previous cycle, and the row read in the previous cycle.
  logic             fwd_valid_q;
  logic [AccAw-1:0] fwd_addr_q;
  logic [AccWidth-1:0] fwd_data_q;
  logic [AccAw-1:0] acc_rd_addr_q;
  // The row held in s2_src_val_q: its index, and whether it is still the SRAM's content.
  logic             src_hold_valid_q;
  logic [AccAw-1:0] src_hold_idx_q;
  // Their next state, from the always_comb below.
  logic        s0_active_d;
  logic [31:0] s0_uop_d, s0_i_d, s0_j_d;
  logic [31:0] s0_dst_out_d, s0_src_out_d, s0_wgt_out_d;
  logic [31:0] s0_dst_d, s0_src_d, s0_wgt_d;
  logic        s1_valid_d, s1_phase_d;
  logic [31:0] s1_dst_off_d, s1_src_off_d, s1_wgt_off_d, s1_uop_d;
  logic        s2_valid_d;
  logic [AccAw-1:0] s2_dst_d;
  logic [AccWidth-1:0] s2_src_val_d;
  logic        s3_valid_d, s3_gemm_d, s3_reset_d;
  logic [AccAw-1:0] s3_dst_d;
  logic             fwd_valid_d;
  logic [AccAw-1:0] fwd_addr_d;
  logic [AccWidth-1:0] fwd_data_d;
  logic [AccAw-1:0] acc_rd_addr_d;
  logic             src_hold_valid_d;
  logic [AccAw-1:0] src_hold_idx_d;

  logic alu_vector;
  assign alu_vector = !gemm_q && !use_imm_q;

  // S1 holds a vector ALU micro-op for a second cycle, so S0 must not issue behind it, unless it
  // reuses the held source row.
  logic s0_issue, s1_busy_next, s1_reuse_src;
  assign s1_busy_next = s1_valid_q && alu_vector && !s1_phase_q && !s1_reuse_src;
  assign s0_issue = (state_q == StUops) && s0_active_q && !s1_busy_next && !fault_o;
  assign uop_re_o = s0_issue;
  assign uop_raddr_o = s0_uop_q[UopAw-1:0];

  // S1: indices of the micro-op read in the previous cycle.
  logic [31:0] uop_dst, uop_src, uop_wgt;
  logic [31:0] idx_dst, idx_src, idx_wgt;
  logic        bad_dst, bad_src, bad_wgt, s1_fault;
  // Smaller configurations leave the micro-op word's top bits unused.
  /* verilator lint_off UNUSEDSIGNAL */
  tessera_config_pkg::uop_t uop;
  /* verilator lint_on UNUSEDSIGNAL */
  assign uop = uop_rdata_i;
  always_comb begin
    uop_dst = 32'(uop.dst);
    uop_src = 32'(uop.src);
    uop_wgt = 32'(uop.wgt);
    idx_dst = uop_dst + s1_dst_off_q;
    idx_src = uop_src + s1_src_off_q;
    idx_wgt = uop_wgt + s1_wgt_off_q;
    // The same checks as the behavioral simulator: a reset GEMM only writes the accumulator.
    bad_dst = idx_dst >= tessera_config_pkg::ACC_BUFF_DEPTH;
    bad_src = !(gemm_q && reset_q) && (idx_src >= (gemm_q ? tessera_config_pkg::INP_BUFF_DEPTH : tessera_config_pkg::ACC_BUFF_DEPTH));
    bad_wgt = gemm_q && !reset_q && (idx_wgt >= tessera_config_pkg::WGT_BUFF_DEPTH);
    s1_fault = s1_valid_q && !s1_phase_q && (bad_dst || bad_src || bad_wgt);
  end
  assign s1_reuse_src = s1_valid_q && alu_vector && !s1_phase_q && src_hold_valid_q && !bad_src &&
                        idx_src[AccAw-1:0] == src_hold_idx_q;

  // SRAM reads of S1: the GEMM operands, or the ALU source (first cycle) and destination.
  logic s1_reads_acc_src;
  assign s1_reads_acc_src = alu_vector && !s1_phase_q && !s1_reuse_src;
  assign inp_re_o = s1_valid_q && gemm_q && !reset_q && !s1_fault;
  assign inp_raddr_o = idx_src[InpAw-1:0];
  assign wgt_re_o = inp_re_o;
  assign wgt_raddr_o = idx_wgt[WgtAw-1:0];
  assign acc_re_o = s1_valid_q && !(gemm_q && reset_q) && !s1_fault;
  assign acc_raddr_o = s1_reads_acc_src ? idx_src[AccAw-1:0] : idx_dst[AccAw-1:0];

  // S2: the accumulator row read last cycle, with any write since the read applied.
  logic [AccWidth-1:0] acc_fresh, gemm_out, alu_out, s3_result;
  always_comb begin
    if (s3_valid_q && s3_dst_q == acc_rd_addr_q) acc_fresh = s3_result;
    else if (fwd_valid_q && fwd_addr_q == acc_rd_addr_q) acc_fresh = fwd_data_q;
    else acc_fresh = acc_rdata_i;
  end

  tessera_gemm_core u_gemm (
    .clk_i, .en_i(s2_valid_q && gemm_q && !reset_q),
    .inp_i(inp_rdata_i), .wgt_i(wgt_rdata_i), .acc_i(acc_fresh), .acc_o(gemm_out)
  );
  tessera_alu_core u_alu (
    .clk_i, .en_i(s2_valid_q && !gemm_q), .op_i(alu_op_q), .use_imm_i(use_imm_q), .imm_i(imm_q),
    .a_i(acc_fresh), .b_i(s2_src_val_q), .y_o(alu_out)
  );

  always_comb begin
    if (!s3_gemm_q) s3_result = alu_out;
    else if (s3_reset_q) s3_result = '0;
    else s3_result = gemm_out;
  end

  assign gemm_uop_o = s3_valid_q && s3_gemm_q;
  assign alu_uop_o = s3_valid_q && !s3_gemm_q;

  // Accumulator and output SRAM writes: the loader's or S2's (never both: one instruction at a time).
  logic [AccWidth-1:0] acc_wdata;
  always_comb begin
    if (state_q == StLoad) begin
      acc_we_o = ld_acc_we;
      acc_waddr_o = ld_addr[AccAw-1:0];
      acc_wdata = ld_acc_wdata;
    end else begin
      acc_we_o = s3_valid_q ? '1 : '0;
      acc_waddr_o = s3_dst_q;
      acc_wdata = s3_result;
    end
  end
  assign acc_wdata_o = acc_wdata;
  // The output SRAM keeps each accumulator value's low byte, which is what STORE writes to DRAM.
  always_comb begin
    for (int v = 0; v < AccValues; v++) out_wdata_o[v * OutElemWidth +: OutElemWidth] = acc_wdata[v * AccElemWidth +: OutElemWidth];
  end
  assign out_we_o = acc_we_o;
  assign out_waddr_o = acc_waddr_o;

  // ------------------------------------------------------------ sequencing
  logic uops_drained;
  assign uops_drained = !s0_active_q && !s1_valid_q && !s2_valid_q && !s3_valid_q;

  // Next state of the sequencer and of the fields of the instruction being executed.
  state_e state_d;
  logic push_prev_d;
  logic push_next_d;
  logic [31:0] insn_d;
  logic is_uop_load_d;
  logic is_acc_load_d;
  logic gemm_d;
  logic reset_d;
  logic use_imm_d;
  logic [2:0] alu_op_d;
  logic [31:0] imm_d;
  logic [31:0] uop_bgn_d;
  logic [31:0] uop_end_d;
  logic [31:0] iter_out_d;
  logic [31:0] iter_in_d;
  logic [31:0] dst_fo_d;
  logic [31:0] dst_fi_d;
  logic [31:0] src_fo_d;
  logic [31:0] src_fi_d;
  logic [31:0] wgt_fo_d;
  logic [31:0] wgt_fi_d;
  logic fault_d;
  logic [31:0] fault_info_d;
  always_comb begin
    state_d = state_q;
    push_prev_d = push_prev_q;
    push_next_d = push_next_q;
    insn_d = insn_q;
    is_uop_load_d = is_uop_load_q;
    is_acc_load_d = is_acc_load_q;
    gemm_d = gemm_q;
    reset_d = reset_q;
    use_imm_d = use_imm_q;
    alu_op_d = alu_op_q;
    imm_d = imm_q;
    uop_bgn_d = uop_bgn_q;
    uop_end_d = uop_end_q;
    iter_out_d = iter_out_q;
    iter_in_d = iter_in_q;
    dst_fo_d = dst_fo_q;
    dst_fi_d = dst_fi_q;
    src_fo_d = src_fo_q;
    src_fi_d = src_fi_q;
    wgt_fo_d = wgt_fo_q;
    wgt_fi_d = wgt_fi_q;
    fault_d = fault_o;
    fault_info_d = fault_info_o;
    case (state_q)
      StIdle: begin
        if (q_valid_i) insn_d = entry_index;
        if (issue) begin
          push_prev_d = push_prev;
          push_next_d = push_next;
          if (opcode == OpFinish) begin
            state_d = StFinish;
          end else if (is_load) begin
            is_uop_load_d = (mem_type == MemUop);
            is_acc_load_d = (mem_type == MemAcc);
            state_d = (x_size != '0) ? StLoad : StPush;
          end else if (is_uops) begin
            gemm_d = (opcode == OpGemm);
            reset_d = gemm_insn.reset;
            use_imm_d = alu_insn.use_imm;
            alu_op_d = alu_insn.alu_opcode;
            imm_d = 32'($signed(alu_insn.imm));
            uop_bgn_d = 32'(gemm_insn.uop_bgn);
            uop_end_d = 32'(gemm_insn.uop_end);
            iter_out_d = 32'(gemm_insn.iter_out);
            iter_in_d = 32'(gemm_insn.iter_in);
            dst_fo_d = 32'(gemm_insn.dst_factor_out);
            dst_fi_d = 32'(gemm_insn.dst_factor_in);
            src_fo_d = 32'(gemm_insn.src_factor_out);
            src_fi_d = 32'(gemm_insn.src_factor_in);
            // ALU instructions have no weight factors; their fields there hold the ALU opcode.
            wgt_fo_d = (opcode == OpGemm) ? 32'(gemm_insn.wgt_factor_out) : '0;
            wgt_fi_d = (opcode == OpGemm) ? 32'(gemm_insn.wgt_factor_in) : '0;
            state_d = StUops;
          end else begin
            state_d = StPush;
          end
        end
      end
      StLoad: if (loader_done) state_d = StPush;
      StUops: begin
        if (s1_fault) begin
          fault_d = 1'b1;
          fault_info_d = {s1_uop_q[31-FaultFieldBits:0],
                           bad_dst ? tessera_host_pkg::FaultFieldDst
                                   : (bad_src ? tessera_host_pkg::FaultFieldSrc : tessera_host_pkg::FaultFieldWgt)};
          state_d = StFault;
        end else if (uops_drained) begin
          state_d = StPush;
        end
      end
      StPush: state_d = StIdle;
      StFinish: state_d = StFinish;
      StFault: state_d = StFault;
      default: state_d = StIdle;
    endcase
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni || start_i) begin
      state_q <= StIdle;
      push_prev_q <= 1'b0;
      push_next_q <= 1'b0;
      insn_q <= '0;
      is_uop_load_q <= 1'b0;
      is_acc_load_q <= 1'b0;
      gemm_q <= 1'b0;
      reset_q <= 1'b0;
      use_imm_q <= 1'b0;
      alu_op_q <= '0;
      imm_q <= '0;
      uop_bgn_q <= '0;
      uop_end_q <= '0;
      iter_out_q <= '0;
      iter_in_q <= '0;
      dst_fo_q <= '0;
      dst_fi_q <= '0;
      src_fo_q <= '0;
      src_fi_q <= '0;
      wgt_fo_q <= '0;
      wgt_fi_q <= '0;
      fault_o <= 1'b0;
      fault_info_o <= '0;
    end else begin
      state_q <= state_d;
      push_prev_q <= push_prev_d;
      push_next_q <= push_next_d;
      insn_q <= insn_d;
      is_uop_load_q <= is_uop_load_d;
      is_acc_load_q <= is_acc_load_d;
      gemm_q <= gemm_d;
      reset_q <= reset_d;
      use_imm_q <= use_imm_d;
      alu_op_q <= alu_op_d;
      imm_q <= imm_d;
      uop_bgn_q <= uop_bgn_d;
      uop_end_q <= uop_end_d;
      iter_out_q <= iter_out_d;
      iter_in_q <= iter_in_d;
      dst_fo_q <= dst_fo_d;
      dst_fi_q <= dst_fi_d;
      src_fo_q <= src_fo_d;
      src_fi_q <= src_fi_d;
      wgt_fo_q <= wgt_fo_d;
      wgt_fi_q <= wgt_fi_d;
      fault_o <= fault_d;
      fault_info_o <= fault_info_d;
    end
  end

  // The micro-op pipeline: next state.
  always_comb begin
    s0_active_d = s0_active_q;
    s0_uop_d = s0_uop_q;
    s0_i_d = s0_i_q;
    s0_j_d = s0_j_q;
    s0_dst_out_d = s0_dst_out_q;
    s0_src_out_d = s0_src_out_q;
    s0_wgt_out_d = s0_wgt_out_q;
    s0_dst_d = s0_dst_q;
    s0_src_d = s0_src_q;
    s0_wgt_d = s0_wgt_q;
    s1_valid_d = s1_valid_q;
    s1_phase_d = s1_phase_q;
    s1_uop_d = s1_uop_q;
    s1_dst_off_d = s1_dst_off_q;
    s1_src_off_d = s1_src_off_q;
    s1_wgt_off_d = s1_wgt_off_q;
    s2_valid_d = s2_valid_q;
    s2_dst_d = s2_dst_q;
    s2_src_val_d = s2_src_val_q;
    s3_valid_d = s3_valid_q;
    s3_gemm_d = s3_gemm_q;
    s3_reset_d = s3_reset_q;
    s3_dst_d = s3_dst_q;
    fwd_valid_d = fwd_valid_q;
    fwd_addr_d = fwd_addr_q;
    fwd_data_d = fwd_data_q;
    acc_rd_addr_d = acc_rd_addr_q;
    src_hold_valid_d = src_hold_valid_q;
    src_hold_idx_d = src_hold_idx_q;

    // S0 starts when the instruction is latched (the cycle after issue).
    if (state_q == StIdle && issue && is_uops) begin
      s0_active_d = gemm_insn.iter_out != '0 && gemm_insn.iter_in != '0 &&
                   32'(gemm_insn.uop_bgn) < 32'(gemm_insn.uop_end);
      s0_uop_d     = 32'(gemm_insn.uop_bgn);
      s0_i_d       = '0;
      s0_j_d       = '0;
      s0_dst_out_d = '0;
      s0_src_out_d = '0;
      s0_wgt_out_d = '0;
      s0_dst_d     = '0;
      s0_src_d     = '0;
      s0_wgt_d     = '0;
    end else if (s0_issue) begin
      if (s0_uop_q + 1 < uop_end_q) begin
        s0_uop_d = s0_uop_q + 1;
      end else begin
        s0_uop_d = uop_bgn_q;
        if (s0_j_q + 1 < iter_in_q) begin
          s0_j_d   = s0_j_q + 1;
          s0_dst_d = s0_dst_q + dst_fi_q;
          s0_src_d = s0_src_q + src_fi_q;
          s0_wgt_d = s0_wgt_q + wgt_fi_q;
        end else begin
          s0_j_d = '0;
          s0_dst_out_d = s0_dst_out_q + dst_fo_q;
          s0_src_out_d = s0_src_out_q + src_fo_q;
          s0_wgt_out_d = s0_wgt_out_q + wgt_fo_q;
          s0_dst_d = s0_dst_out_q + dst_fo_q;
          s0_src_d = s0_src_out_q + src_fo_q;
          s0_wgt_d = s0_wgt_out_q + wgt_fo_q;
          if (s0_i_q + 1 < iter_out_q) s0_i_d = s0_i_q + 1;
          else s0_active_d = 1'b0;
        end
      end
    end else if (fault_o) begin
      s0_active_d = 1'b0;
    end

    // S1 takes the issued micro-op; a vector ALU micro-op stays a second cycle.
    if (s1_busy_next) begin
      s1_phase_d = 1'b1;
    end else begin
      s1_valid_d   = s0_issue;
      s1_phase_d   = 1'b0;
      s1_uop_d     = s0_uop_q;
      s1_dst_off_d = s0_dst_q;
      s1_src_off_d = s0_src_q;
      s1_wgt_off_d = s0_wgt_q;
    end
    if (s1_fault) s1_valid_d = 1'b0;

    // S2 takes the micro-op whose reads S1 completes this cycle.
    s2_valid_d = s1_valid_q && !s1_busy_next && !s1_fault;
    s2_dst_d = idx_dst[AccAw-1:0];
    // The vector source read in S1's first cycle arrives now; it stays held for the next micro-ops
    // with the same source until one of them writes that row.
    if (s1_valid_q && alu_vector && s1_phase_q) begin
      s2_src_val_d = acc_fresh;
      src_hold_idx_d = idx_src[AccAw-1:0];
      src_hold_valid_d = idx_dst[AccAw-1:0] != idx_src[AccAw-1:0];
    end else if (s2_valid_d && idx_dst[AccAw-1:0] == src_hold_idx_q) begin
      src_hold_valid_d = 1'b0;
    end
    // Rows may change between instructions (loads, GEMM): a held row lives within one instruction.
    if (state_q == StIdle && issue) src_hold_valid_d = 1'b0;
    acc_rd_addr_d = acc_raddr_o;

    s3_valid_d = s2_valid_q;
    s3_gemm_d  = gemm_q;
    s3_reset_d = reset_q;
    s3_dst_d   = s2_dst_q;

    fwd_valid_d = s3_valid_q;
    fwd_addr_d  = s3_dst_q;
    if (s3_valid_q) fwd_data_d = s3_result;

    // After a fault nothing more is written: micro-ops behind the faulting one are dropped.
    if (fault_o) begin
      s1_valid_d = 1'b0;
      s2_valid_d = 1'b0;
      s3_valid_d = 1'b0;
    end
  end

  // The micro-op pipeline registers.
  always_ff @(posedge clk_i) begin
    if (!rst_ni || start_i) begin
      s0_active_q   <= 1'b0;
      s0_uop_q      <= '0;
      s0_i_q        <= '0;
      s0_j_q        <= '0;
      s0_dst_out_q  <= '0;
      s0_src_out_q  <= '0;
      s0_wgt_out_q  <= '0;
      s0_dst_q      <= '0;
      s0_src_q      <= '0;
      s0_wgt_q      <= '0;
      s1_valid_q    <= 1'b0;
      s1_phase_q    <= 1'b0;
      s1_uop_q      <= '0;
      s1_dst_off_q  <= '0;
      s1_src_off_q  <= '0;
      s1_wgt_off_q  <= '0;
      s2_valid_q    <= 1'b0;
      s2_dst_q      <= '0;
      s2_src_val_q  <= '0;
      s3_valid_q    <= 1'b0;
      s3_gemm_q     <= 1'b0;
      s3_reset_q    <= 1'b0;
      s3_dst_q      <= '0;
      fwd_valid_q   <= 1'b0;
      fwd_addr_q    <= '0;
      fwd_data_q    <= '0;
      acc_rd_addr_q <= '0;
      src_hold_valid_q <= 1'b0;
      src_hold_idx_q <= '0;
    end else begin
      s0_active_q <= s0_active_d;
      s0_uop_q <= s0_uop_d;
      s0_i_q <= s0_i_d;
      s0_j_q <= s0_j_d;
      s0_dst_out_q <= s0_dst_out_d;
      s0_src_out_q <= s0_src_out_d;
      s0_wgt_out_q <= s0_wgt_out_d;
      s0_dst_q <= s0_dst_d;
      s0_src_q <= s0_src_d;
      s0_wgt_q <= s0_wgt_d;
      s1_valid_q <= s1_valid_d;
      s1_phase_q <= s1_phase_d;
      s1_uop_q <= s1_uop_d;
      s1_dst_off_q <= s1_dst_off_d;
      s1_src_off_q <= s1_src_off_d;
      s1_wgt_off_q <= s1_wgt_off_d;
      s2_valid_q <= s2_valid_d;
      s2_dst_q <= s2_dst_d;
      s2_src_val_q <= s2_src_val_d;
      s3_valid_q <= s3_valid_d;
      s3_gemm_q <= s3_gemm_d;
      s3_reset_q <= s3_reset_d;
      s3_dst_q <= s3_dst_d;
      fwd_valid_q <= fwd_valid_d;
      fwd_addr_q <= fwd_addr_d;
      fwd_data_q <= fwd_data_d;
      acc_rd_addr_q <= acc_rd_addr_d;
      src_hold_valid_q <= src_hold_valid_d;
      src_hold_idx_q <= src_hold_idx_d;
    end
  end

  // ------------------------------------------------------------ status
  assign g2l_push_o = (state_q == StPush) && push_prev_q;
  assign g2s_push_o = (state_q == StPush) && push_next_q;
  assign retire_o = (state_q == StPush) || (state_q == StIdle && issue && opcode == OpFinish);
  assign finish_o = (state_q == StFinish);
  assign busy_o = (state_q == StLoad) || (state_q == StUops) || (state_q == StPush);
  assign stall_o = (state_q == StIdle) && q_valid_i && !deps_ready;
  always_comb begin
    status_o = '0;
    if (state_q == StFinish) status_o.state = tessera_host_pkg::StateHaltedAtFinish;
    else if (state_q != StIdle) status_o.state = tessera_host_pkg::StateBusy;
    else if (q_valid_i) status_o = deps_status;
    else status_o.state = tessera_host_pkg::StateIdle;
  end
  assign insn_o = insn_q;

`ifndef SYNTHESIS
  // The S1 range check is what keeps the SRAM addresses, cut to the buffers' address widths, from
  // wrapping onto another row: no read or write may be issued with an index past the depth.
  InpIndexInRange: assert property (@(posedge clk_i) disable iff (!rst_ni || start_i)
                                    inp_re_o |-> idx_src < tessera_config_pkg::INP_BUFF_DEPTH)
    else $error("tessera_compute: input SRAM index %0d out of range", idx_src);
  WgtIndexInRange: assert property (@(posedge clk_i) disable iff (!rst_ni || start_i)
                                    wgt_re_o |-> idx_wgt < tessera_config_pkg::WGT_BUFF_DEPTH)
    else $error("tessera_compute: weight SRAM index %0d out of range", idx_wgt);
  AccIndexInRange: assert property (@(posedge clk_i) disable iff (!rst_ni || start_i)
                                    acc_re_o |-> (s1_reads_acc_src ? idx_src : idx_dst) < tessera_config_pkg::ACC_BUFF_DEPTH)
    else $error("tessera_compute: accumulator SRAM index out of range");
`endif

  // The loader reports completion through done; its busy level and readiness are not needed here.
  logic unused_loader;
  assign unused_loader = loader_busy ^ loader_ready ^ unused_tag_done ^ unused_tag_wr;

endmodule
