// Compute module: executes LOAD UOP/ACC/ACC_8BIT, GEMM, ALU and FINISH in instruction order.
//
// GEMM and ALU run as a four-stage micro-op pipeline: S0 walks the two loops and the micro-op
// range and reads the micro-op; S1 adds the loop offsets, checks the indices against the buffer
// depths and reads the SRAMs; S2 computes into the GEMM or ALU core's result register; S3 writes
// the accumulator (and its narrowed copy in the output SRAM). The accumulator SRAM has one read
// port and returns old data when read in the cycle it is written, so S2 takes a row from the S3
// write of this cycle or the write of the previous cycle when the addresses match; with that,
// dependent micro-ops issue back to back. A vector ALU micro-op reads its source and then its
// destination, so it holds S1 for two cycles.
`include "tessera_config.svh"

module tessera_compute #(
  parameter int EntryWidth = 32 + `TESSERA_INS_WIDTH
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
  input  logic                                   l2c_empty_i,
  output logic                                   l2c_pop_o,
  input  logic                                   s2c_empty_i,
  output logic                                   s2c_pop_o,
  input  logic                                   c2l_full_i,
  output logic                                   c2l_push_o,
  input  logic                                   c2s_full_i,
  output logic                                   c2s_push_o,
  // DRAM read client for micro-op and accumulator loads.
  output logic                                   req_valid_o,
  output logic [31:0]                            req_addr_o,
  output logic [7:0]                             req_len_o,
  input  logic                                   req_ready_i,
  input  logic                                   rsp_valid_i,
  input  logic [`TESSERA_BUS_WIDTH-1:0]          rsp_data_i,
  output logic                                   rsp_ready_o,
  // Micro-op SRAM.
  output logic                                   uop_we_o,
  output logic [`TESSERA_LOG_UOP_BUFF_DEPTH-1:0] uop_waddr_o,
  output logic [`TESSERA_UOP_WIDTH-1:0]          uop_wdata_o,
  output logic                                   uop_re_o,
  output logic [`TESSERA_LOG_UOP_BUFF_DEPTH-1:0] uop_raddr_o,
  // Smaller configurations leave the micro-op word's top bits unused.
  /* verilator lint_off UNUSEDSIGNAL */
  input  logic [`TESSERA_UOP_WIDTH-1:0]          uop_rdata_i,
  /* verilator lint_on UNUSEDSIGNAL */
  // Input and weight SRAM read ports.
  output logic                                   inp_re_o,
  output logic [`TESSERA_LOG_INP_BUFF_DEPTH-1:0] inp_raddr_o,
  input  logic [`TESSERA_INP_MATRIX_WIDTH-1:0]   inp_rdata_i,
  output logic                                   wgt_re_o,
  output logic [`TESSERA_LOG_WGT_BUFF_DEPTH-1:0] wgt_raddr_o,
  input  logic [`TESSERA_WGT_MATRIX_WIDTH-1:0]   wgt_rdata_i,
  // Accumulator SRAM and its narrowed copy, the output SRAM.
  output logic [AccLanes-1:0]                    acc_we_o,
  output logic [`TESSERA_LOG_ACC_BUFF_DEPTH-1:0] acc_waddr_o,
  output logic [`TESSERA_ACC_MATRIX_WIDTH-1:0]   acc_wdata_o,
  output logic                                   acc_re_o,
  output logic [`TESSERA_LOG_ACC_BUFF_DEPTH-1:0] acc_raddr_o,
  input  logic [`TESSERA_ACC_MATRIX_WIDTH-1:0]   acc_rdata_i,
  output logic [AccLanes-1:0]                    out_we_o,
  output logic [`TESSERA_LOG_ACC_BUFF_DEPTH-1:0] out_waddr_o,
  output logic [`TESSERA_OUT_MATRIX_WIDTH-1:0]   out_wdata_o,
  // Status, events and faults.
  output logic                                   busy_o,
  output logic                                   stall_o,
  output logic                                   retire_o,
  output logic                                   finish_o,
  output logic                                   gemm_uop_o,
  output logic                                   alu_uop_o,
  output logic                                   fault_o,
  output logic [31:0]                            fault_info_o,
  output logic [7:0]                             status_o,
  output logic [31:0]                            insn_o
);

  localparam int Bus = `TESSERA_BUS_WIDTH;
  localparam int AccWidth = `TESSERA_ACC_MATRIX_WIDTH;
  localparam int AccLanes = AccWidth / Bus;
  localparam int AccValues = `TESSERA_BATCH * `TESSERA_BLOCK_OUT;
  localparam int UopAw = `TESSERA_LOG_UOP_BUFF_DEPTH;
  localparam int AccAw = `TESSERA_LOG_ACC_BUFF_DEPTH;
  localparam int InpAw = `TESSERA_LOG_INP_BUFF_DEPTH;
  localparam int WgtAw = `TESSERA_LOG_WGT_BUFF_DEPTH;
  localparam int LoadAw = (UopAw > AccAw) ? UopAw : AccAw;
  localparam int BeatIdxWidth = (AccLanes > 1) ? $clog2(AccLanes) : 1;
  localparam int Acc8Lanes = 4;  // an int8 beat widens to four lanes of int32
  localparam logic [2:0] OpLoad = 3'(`TESSERA_OPCODE_LOAD);
  localparam logic [2:0] OpGemm = 3'(`TESSERA_OPCODE_GEMM);
  localparam logic [2:0] OpFinish = 3'(`TESSERA_OPCODE_FINISH);
  localparam logic [2:0] OpAlu = 3'(`TESSERA_OPCODE_ALU);
  localparam logic [2:0] MemUop = 3'(`TESSERA_MEM_ID_UOP);
  localparam logic [2:0] MemAcc = 3'(`TESSERA_MEM_ID_ACC);
  localparam logic [3:0] LogUopBytes = 4'($clog2(`TESSERA_UOP_ELEM_BYTES));
  localparam logic [3:0] LogAccBytes = 4'($clog2(`TESSERA_ACC_ELEM_BYTES));
  localparam logic [3:0] LogAcc8Bytes = 4'($clog2(`TESSERA_ACC8_ELEM_BYTES));
  localparam logic [1:0] QueueL2C = 2'd0, QueueC2L = 2'd1, QueueC2S = 2'd2, QueueS2C = 2'd3;

  // ------------------------------------------------------------ decode of the queue head
  logic [2:0]  opcode, mem_type;
  logic        pop_prev, pop_next, push_prev, push_next;
  logic [15:0] x_size;
  always_comb begin
    opcode    = q_entry_i[`TESSERA_INSN_MEM_OPCODE_LO +: 3];
    pop_prev  = q_entry_i[`TESSERA_INSN_MEM_POP_PREV_LO];
    pop_next  = q_entry_i[`TESSERA_INSN_MEM_POP_NEXT_LO];
    push_prev = q_entry_i[`TESSERA_INSN_MEM_PUSH_PREV_LO];
    push_next = q_entry_i[`TESSERA_INSN_MEM_PUSH_NEXT_LO];
    mem_type  = q_entry_i[`TESSERA_INSN_MEM_MEMORY_TYPE_LO +: 3];
    x_size    = q_entry_i[`TESSERA_INSN_MEM_X_SIZE_LO +: 16];
  end

  typedef enum logic [2:0] {StIdle, StLoad, StUops, StPush, StFinish, StFault} state_e;
  state_e      state_q;
  logic        push_prev_q, push_next_q;
  logic [31:0] insn_q;

  logic deps_ready;
  logic [7:0] deps_status;
  tessera_dep_check u_deps (
    .pop_req_i({pop_next, pop_prev}), .pop_empty_i({s2c_empty_i, l2c_empty_i}),
    .pop_queue_i({QueueS2C, QueueL2C}),
    .push_req_i({push_next, push_prev}), .push_full_i({c2s_full_i, c2l_full_i}),
    .push_queue_i({QueueC2S, QueueC2L}),
    .ready_o(deps_ready), .status_o(deps_status)
  );

  logic issue, is_load, is_uops;
  assign issue = (state_q == StIdle) && q_valid_i && deps_ready;
  assign is_load = (opcode == OpLoad);
  assign is_uops = (opcode == OpGemm) || (opcode == OpAlu);
  assign q_pop_o = issue;
  assign l2c_pop_o = issue && pop_prev;
  assign s2c_pop_o = issue && pop_next;

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
  assign ld_sram_base = q_entry_i[`TESSERA_INSN_MEM_SRAM_BASE_LO +: 16];

  // Compute runs one instruction at a time, so the loader always takes the job and its tags are
  // not needed.
  logic loader_ready;
  logic unused_tag_done, unused_tag_wr;
  tessera_mem_loader #(.BusWidth(Bus), .SramAddrWidth(LoadAw), .BeatIdxWidth(BeatIdxWidth), .TagWidth(1)) u_loader (
    .clk_i, .rst_ni, .clear_i(start_i),
    .job_valid_i(load_start), .job_ready_o(loader_ready), .tag_i(1'b0),
    .done_tag_o(unused_tag_done), .wr_tag_o(unused_tag_wr),
    .sram_base_i(ld_sram_base[LoadAw-1:0]),
    .dram_base_i(q_entry_i[`TESSERA_INSN_MEM_DRAM_BASE_LO +: 32]),
    .y_size_i(q_entry_i[`TESSERA_INSN_MEM_Y_SIZE_LO +: 16]),
    .x_size_i(x_size),
    .x_stride_i(q_entry_i[`TESSERA_INSN_MEM_X_STRIDE_LO +: 16]),
    .y_pad0_i(q_entry_i[`TESSERA_INSN_MEM_Y_PAD_0_LO +: 4]),
    .y_pad1_i(q_entry_i[`TESSERA_INSN_MEM_Y_PAD_1_LO +: 4]),
    .x_pad0_i(q_entry_i[`TESSERA_INSN_MEM_X_PAD_0_LO +: 4]),
    .x_pad1_i(q_entry_i[`TESSERA_INSN_MEM_X_PAD_1_LO +: 4]),
    .log_elem_bytes_i(mem_type == MemUop ? LogUopBytes : (mem_type == MemAcc ? LogAccBytes : LogAcc8Bytes)),
    .busy_o(loader_busy), .done_o(loader_done),
    .req_valid_o, .req_addr_o, .req_len_o, .req_ready_i,
    .rsp_valid_i, .rsp_data_i, .rsp_ready_o,
    .wr_valid_o(ld_valid), .wr_addr_o(ld_addr), .wr_beat_o(ld_beat), .wr_pad_o(ld_pad), .wr_data_o(ld_data)
  );

  // An int8 beat of ACC_8BIT widens to four lanes of sign-extended int32 values.
  logic [4*Bus-1:0] ld_widened;
  always_comb begin
    for (int i = 0; i < Bus / 8; i++) ld_widened[i * 32 +: 32] = 32'($signed(ld_data[i * 8 +: 8]));
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
  assign uop_wdata_o = ld_data[`TESSERA_UOP_WIDTH-1:0];

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

  logic alu_vector;
  assign alu_vector = !gemm_q && !use_imm_q;

  // S1 holds a vector ALU micro-op for a second cycle, so S0 must not issue behind it.
  logic s0_issue, s1_busy_next;
  assign s1_busy_next = s1_valid_q && alu_vector && !s1_phase_q;
  assign s0_issue = (state_q == StUops) && s0_active_q && !s1_busy_next && !fault_o;
  assign uop_re_o = s0_issue;
  assign uop_raddr_o = s0_uop_q[UopAw-1:0];

  // S1: indices of the micro-op read in the previous cycle.
  logic [31:0] uop_dst, uop_src, uop_wgt;
  logic [31:0] idx_dst, idx_src, idx_wgt;
  logic        bad_dst, bad_src, bad_wgt, s1_fault;
  always_comb begin
    uop_dst = 32'(uop_rdata_i[`TESSERA_UOP_DST_LO +: `TESSERA_UOP_DST_W]);
    uop_src = 32'(uop_rdata_i[`TESSERA_UOP_SRC_LO +: `TESSERA_UOP_SRC_W]);
    uop_wgt = 32'(uop_rdata_i[`TESSERA_UOP_WGT_LO +: `TESSERA_UOP_WGT_W]);
    idx_dst = uop_dst + s1_dst_off_q;
    idx_src = uop_src + s1_src_off_q;
    idx_wgt = uop_wgt + s1_wgt_off_q;
    // The same checks as the behavioral simulator: a reset GEMM only writes the accumulator.
    bad_dst = idx_dst >= `TESSERA_ACC_BUFF_DEPTH;
    bad_src = !(gemm_q && reset_q) && (idx_src >= (gemm_q ? `TESSERA_INP_BUFF_DEPTH : `TESSERA_ACC_BUFF_DEPTH));
    bad_wgt = gemm_q && !reset_q && (idx_wgt >= `TESSERA_WGT_BUFF_DEPTH);
    s1_fault = s1_valid_q && !s1_phase_q && (bad_dst || bad_src || bad_wgt);
  end

  // SRAM reads of S1: the GEMM operands, or the ALU source (first cycle) and destination.
  logic s1_reads_acc_src;
  assign s1_reads_acc_src = alu_vector && !s1_phase_q;
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
    for (int v = 0; v < AccValues; v++) out_wdata_o[v * 8 +: 8] = acc_wdata[v * 32 +: 8];
  end
  assign out_we_o = acc_we_o;
  assign out_waddr_o = acc_waddr_o;

  // ------------------------------------------------------------ sequencing
  logic uops_drained;
  assign uops_drained = !s0_active_q && !s1_valid_q && !s2_valid_q && !s3_valid_q;

  always_ff @(posedge clk_i) begin
    if (!rst_ni || start_i) begin
      state_q       <= StIdle;
      push_prev_q   <= 1'b0;
      push_next_q   <= 1'b0;
      insn_q        <= '0;
      is_uop_load_q <= 1'b0;
      is_acc_load_q <= 1'b0;
      gemm_q        <= 1'b0;
      reset_q       <= 1'b0;
      use_imm_q     <= 1'b0;
      alu_op_q      <= '0;
      imm_q         <= '0;
      uop_bgn_q     <= '0;
      uop_end_q     <= '0;
      iter_out_q    <= '0;
      iter_in_q     <= '0;
      dst_fo_q      <= '0;
      dst_fi_q      <= '0;
      src_fo_q      <= '0;
      src_fi_q      <= '0;
      wgt_fo_q      <= '0;
      wgt_fi_q      <= '0;
      fault_o       <= 1'b0;
      fault_info_o  <= '0;
    end else begin
      case (state_q)
        StIdle: begin
          if (q_valid_i) insn_q <= q_entry_i[EntryWidth-1 -: 32];
          if (issue) begin
            push_prev_q <= push_prev;
            push_next_q <= push_next;
            if (opcode == OpFinish) begin
              state_q <= StFinish;
            end else if (is_load) begin
              is_uop_load_q <= (mem_type == MemUop);
              is_acc_load_q <= (mem_type == MemAcc);
              state_q <= (x_size != '0) ? StLoad : StPush;
            end else if (is_uops) begin
              gemm_q     <= (opcode == OpGemm);
              reset_q    <= q_entry_i[`TESSERA_INSN_GEMM_RESET_LO];
              use_imm_q  <= q_entry_i[`TESSERA_INSN_ALU_USE_IMM_LO];
              alu_op_q   <= q_entry_i[`TESSERA_INSN_ALU_ALU_OPCODE_LO +: 3];
              imm_q      <= 32'($signed(q_entry_i[`TESSERA_INSN_ALU_IMM_LO +: `TESSERA_INSN_ALU_IMM_W]));
              uop_bgn_q  <= 32'(q_entry_i[`TESSERA_INSN_GEMM_UOP_BGN_LO +: `TESSERA_INSN_GEMM_UOP_BGN_W]);
              uop_end_q  <= 32'(q_entry_i[`TESSERA_INSN_GEMM_UOP_END_LO +: `TESSERA_INSN_GEMM_UOP_END_W]);
              iter_out_q <= 32'(q_entry_i[`TESSERA_INSN_GEMM_ITER_OUT_LO +: `TESSERA_INSN_GEMM_ITER_OUT_W]);
              iter_in_q  <= 32'(q_entry_i[`TESSERA_INSN_GEMM_ITER_IN_LO +: `TESSERA_INSN_GEMM_ITER_IN_W]);
              dst_fo_q   <= 32'(q_entry_i[`TESSERA_INSN_GEMM_DST_FACTOR_OUT_LO +: `TESSERA_INSN_GEMM_DST_FACTOR_OUT_W]);
              dst_fi_q   <= 32'(q_entry_i[`TESSERA_INSN_GEMM_DST_FACTOR_IN_LO +: `TESSERA_INSN_GEMM_DST_FACTOR_IN_W]);
              src_fo_q   <= 32'(q_entry_i[`TESSERA_INSN_GEMM_SRC_FACTOR_OUT_LO +: `TESSERA_INSN_GEMM_SRC_FACTOR_OUT_W]);
              src_fi_q   <= 32'(q_entry_i[`TESSERA_INSN_GEMM_SRC_FACTOR_IN_LO +: `TESSERA_INSN_GEMM_SRC_FACTOR_IN_W]);
              // ALU instructions have no weight factors; their fields there hold the ALU opcode.
              wgt_fo_q   <= (opcode == OpGemm)
                            ? 32'(q_entry_i[`TESSERA_INSN_GEMM_WGT_FACTOR_OUT_LO +: `TESSERA_INSN_GEMM_WGT_FACTOR_OUT_W]) : '0;
              wgt_fi_q   <= (opcode == OpGemm)
                            ? 32'(q_entry_i[`TESSERA_INSN_GEMM_WGT_FACTOR_IN_LO +: `TESSERA_INSN_GEMM_WGT_FACTOR_IN_W]) : '0;
              state_q <= StUops;
            end else begin
              state_q <= StPush;
            end
          end
        end
        StLoad: if (loader_done) state_q <= StPush;
        StUops: begin
          if (s1_fault) begin
            fault_o <= 1'b1;
            fault_info_o <= {s1_uop_q[29:0], bad_dst ? 2'd0 : (bad_src ? 2'd1 : 2'd2)};
            state_q <= StFault;
          end else if (uops_drained) begin
            state_q <= StPush;
          end
        end
        StPush: state_q <= StIdle;
        StFinish: state_q <= StFinish;
        StFault: state_q <= StFault;
        default: state_q <= StIdle;
      endcase
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
    end else begin
      // S0 starts when the instruction is latched (the cycle after issue).
      if (state_q == StIdle && issue && is_uops) begin
        s0_active_q <=
            32'(q_entry_i[`TESSERA_INSN_GEMM_ITER_OUT_LO +: `TESSERA_INSN_GEMM_ITER_OUT_W]) != '0 &&
            32'(q_entry_i[`TESSERA_INSN_GEMM_ITER_IN_LO +: `TESSERA_INSN_GEMM_ITER_IN_W]) != '0 &&
            32'(q_entry_i[`TESSERA_INSN_GEMM_UOP_BGN_LO +: `TESSERA_INSN_GEMM_UOP_BGN_W]) <
                32'(q_entry_i[`TESSERA_INSN_GEMM_UOP_END_LO +: `TESSERA_INSN_GEMM_UOP_END_W]);
        s0_uop_q     <= 32'(q_entry_i[`TESSERA_INSN_GEMM_UOP_BGN_LO +: `TESSERA_INSN_GEMM_UOP_BGN_W]);
        s0_i_q       <= '0;
        s0_j_q       <= '0;
        s0_dst_out_q <= '0;
        s0_src_out_q <= '0;
        s0_wgt_out_q <= '0;
        s0_dst_q     <= '0;
        s0_src_q     <= '0;
        s0_wgt_q     <= '0;
      end else if (s0_issue) begin
        if (s0_uop_q + 1 < uop_end_q) begin
          s0_uop_q <= s0_uop_q + 1;
        end else begin
          s0_uop_q <= uop_bgn_q;
          if (s0_j_q + 1 < iter_in_q) begin
            s0_j_q   <= s0_j_q + 1;
            s0_dst_q <= s0_dst_q + dst_fi_q;
            s0_src_q <= s0_src_q + src_fi_q;
            s0_wgt_q <= s0_wgt_q + wgt_fi_q;
          end else begin
            s0_j_q <= '0;
            s0_dst_out_q <= s0_dst_out_q + dst_fo_q;
            s0_src_out_q <= s0_src_out_q + src_fo_q;
            s0_wgt_out_q <= s0_wgt_out_q + wgt_fo_q;
            s0_dst_q <= s0_dst_out_q + dst_fo_q;
            s0_src_q <= s0_src_out_q + src_fo_q;
            s0_wgt_q <= s0_wgt_out_q + wgt_fo_q;
            if (s0_i_q + 1 < iter_out_q) s0_i_q <= s0_i_q + 1;
            else s0_active_q <= 1'b0;
          end
        end
      end else if (fault_o) begin
        s0_active_q <= 1'b0;
      end

      // S1 takes the issued micro-op; a vector ALU micro-op stays a second cycle.
      if (s1_busy_next) begin
        s1_phase_q <= 1'b1;
      end else begin
        s1_valid_q   <= s0_issue;
        s1_phase_q   <= 1'b0;
        s1_uop_q     <= s0_uop_q;
        s1_dst_off_q <= s0_dst_q;
        s1_src_off_q <= s0_src_q;
        s1_wgt_off_q <= s0_wgt_q;
      end
      if (s1_fault) s1_valid_q <= 1'b0;

      // S2 takes the micro-op whose reads S1 completes this cycle.
      s2_valid_q <= s1_valid_q && !s1_busy_next && !s1_fault;
      s2_dst_q <= idx_dst[AccAw-1:0];
      // The vector source read in S1's first cycle arrives now.
      if (s1_valid_q && alu_vector && s1_phase_q) s2_src_val_q <= acc_fresh;
      acc_rd_addr_q <= acc_raddr_o;

      s3_valid_q <= s2_valid_q;
      s3_gemm_q  <= gemm_q;
      s3_reset_q <= reset_q;
      s3_dst_q   <= s2_dst_q;

      fwd_valid_q <= s3_valid_q;
      fwd_addr_q  <= s3_dst_q;
      if (s3_valid_q) fwd_data_q <= s3_result;

      // After a fault nothing more is written: micro-ops behind the faulting one are dropped.
      if (fault_o) begin
        s1_valid_q <= 1'b0;
        s2_valid_q <= 1'b0;
        s3_valid_q <= 1'b0;
      end
    end
  end

  // ------------------------------------------------------------ status
  assign c2l_push_o = (state_q == StPush) && push_prev_q;
  assign c2s_push_o = (state_q == StPush) && push_next_q;
  assign retire_o = (state_q == StPush) || (state_q == StIdle && issue && opcode == OpFinish);
  assign finish_o = (state_q == StFinish);
  assign busy_o = (state_q == StLoad) || (state_q == StUops) || (state_q == StPush);
  assign stall_o = (state_q == StIdle) && q_valid_i && !deps_ready;
  always_comb begin
    if (state_q == StFinish) status_o = 8'd5;
    else if (state_q != StIdle) status_o = 8'd1;
    else if (q_valid_i) status_o = deps_status;
    else status_o = 8'd0;
  end
  assign insn_o = insn_q;

  // The loader reports completion through done; its busy level and readiness are not needed here.
  logic unused_loader;
  assign unused_loader = loader_busy ^ loader_ready ^ unused_tag_done ^ unused_tag_wr;

endmodule
