// One micro-op pipeline of the compute module: the GEMM pipe (GEMMs on the GEMM core) or the ALU
// pipe (ALU instructions and reset GEMMs); it also learns the footprint of its instruction.
//
// Five stages: S0 walks `iter_out`, `iter_in` and `uop_bgn..uop_end` and reads the micro-op; D
// adds the loop offsets to its fields and checks every index against its buffer depth, into
// registers (decoding in S1 made the micro-op SRAM's output, the bank grant and S0's issue one
// long path); S1 asks for the bank and reads the SRAMs; S2 computes into the GEMM or ALU core's
// result register; S3 writes the accumulator row (the compute module narrows it into the output
// SRAM). The accumulator is two banks (the index's top
// bit), each with one read and one write port shared by both pipes, so S1 asks the compute module
// for its bank every cycle it reads or will write, and waits a cycle when the other pipe gets it.
// A granted S1 writes its bank in S3 two cycles later, so the grant also keeps the two pipes'
// writes apart.
//
// The accumulator bank returns old data when read in the cycle it is written, so S2 takes a row
// from the S3 write of this cycle or the write of the previous cycle when the addresses match;
// dependent micro-ops of one instruction therefore issue back to back. A vector ALU micro-op reads
// its source and then its destination, in two cycles, unless its source row is the one the previous
// vector micro-op of the same instruction read and no micro-op since has written that row: then S2
// reuses the held row and the micro-op takes one cycle.
//
// Footprint: the lowest and highest accumulator rows the instruction writes (its destinations) and
// reads as vector sources, and whether every index stays inside its buffer. The kernel's part comes
// from one pass over the micro-ops: the first loop iteration when the instruction runs at once, or
// a scan of the kernel (S0 and S1 only, nothing read or written) when it starts behind another
// instruction; the loops' part from tessera_loop_reach. The compute module lets two instructions
// overlap only when both footprints are known, in range and apart.
`include "tessera_config.svh"

module tessera_uop_pipe #(
  parameter bit GemmPipe = 1'b1  // 1: non-reset GEMMs; 0: ALU instructions and reset GEMMs
) (
  input  logic                                   clk_i,
  input  logic                                   rst_ni,
  input  logic                                   clear_i,
  // Commands from the compute sequencer.
  input  logic                                   start_i,   // take the instruction below
  input  logic                                   scan_i,    // with start_i: learn its footprint first, run on go_i
  input  logic                                   go_i,      // run the scanned instruction
  input  logic                                   retire_i,  // the finished instruction retired
  input  logic                                   halt_i,    // the other pipe faulted: stop
  input  logic                                   gemm_i,
  input  logic                                   reset_i,
  input  logic                                   use_imm_i,
  input  tessera_config_pkg::alu_op_e            alu_op_i,
  input  logic [31:0]                            imm_i,
  input  logic [tessera_config_pkg::INSN_GEMM_UOP_BGN_W-1:0] uop_bgn_i,
  input  logic [tessera_config_pkg::INSN_GEMM_UOP_END_W-1:0] uop_end_i,
  input  logic [tessera_config_pkg::LOOP_ITER_WIDTH-1:0] iter_out_i,
  input  logic [tessera_config_pkg::LOOP_ITER_WIDTH-1:0] iter_in_i,
  input  logic [tessera_config_pkg::INSN_GEMM_DST_FACTOR_OUT_W-1:0] dst_fo_i,
  input  logic [tessera_config_pkg::INSN_GEMM_DST_FACTOR_IN_W-1:0]  dst_fi_i,
  input  logic [tessera_config_pkg::INSN_GEMM_SRC_FACTOR_OUT_W-1:0] src_fo_i,
  input  logic [tessera_config_pkg::INSN_GEMM_SRC_FACTOR_IN_W-1:0]  src_fi_i,
  input  logic [tessera_config_pkg::INSN_GEMM_WGT_FACTOR_OUT_W-1:0] wgt_fo_i,
  input  logic [tessera_config_pkg::INSN_GEMM_WGT_FACTOR_IN_W-1:0]  wgt_fi_i,
  // Where the instruction is.
  output logic                                   busy_o,     // holds an instruction
  output logic                                   waiting_o,  // scanned, waiting for go_i
  output logic                                   started_o,  // running or done
  output logic                                   done_o,     // every micro-op written, not yet retired
  // For the trace port: the instruction starts executing this cycle (after any scan and wait), and
  // it becomes done this cycle (an instruction without micro-ops does both at once).
  output logic                                   exec_begin_o,
  output logic                                   exec_end_o,
  // Footprint: its rows are compared only while it is in range, so they fit an accumulator index.
  output logic                                   fp_valid_o,
  output logic                                   fp_in_range_o,
  output logic                                   fp_empty_o,
  output logic                                   fp_src_acc_o,  // reads accumulator rows as vector sources
  output logic [tessera_config_pkg::LOG_ACC_BUFF_DEPTH-1:0] fp_dst_lo_o,
  output logic [tessera_config_pkg::LOG_ACC_BUFF_DEPTH-1:0] fp_dst_hi_o,
  output logic [tessera_config_pkg::LOG_ACC_BUFF_DEPTH-1:0] fp_src_lo_o,
  output logic [tessera_config_pkg::LOG_ACC_BUFF_DEPTH-1:0] fp_src_hi_o,
  // Micro-op SRAM read port.
  output logic                                   uop_re_o,
  output logic [tessera_config_pkg::LOG_UOP_BUFF_DEPTH-1:0] uop_raddr_o,
  // Smaller configurations leave the micro-op word's top bits unused.
  /* verilator lint_off UNUSEDSIGNAL */
  input  logic [tessera_config_pkg::UOP_WIDTH-1:0]          uop_rdata_i,
  /* verilator lint_on UNUSEDSIGNAL */
  // Accumulator bank arbitration, reads (each bank's registered read data) and writes.
  output logic                                   slot_req_o,
  output logic                                   slot_bank_o,
  input  logic                                   slot_grant_i,
  output logic                                   acc_re_o,
  output logic [tessera_config_pkg::LOG_ACC_BUFF_DEPTH-1:0] acc_raddr_o,
  input  logic [2*tessera_config_pkg::ACC_MATRIX_WIDTH-1:0] acc_rdata_i,
  output logic                                   acc_we_o,
  output logic [tessera_config_pkg::LOG_ACC_BUFF_DEPTH-1:0] acc_waddr_o,
  output logic [tessera_config_pkg::ACC_MATRIX_WIDTH-1:0]   acc_wdata_o,
  // Input and weight SRAM reads (the GEMM pipe's).
  output logic                                   inp_re_o,
  output logic [tessera_config_pkg::LOG_INP_BUFF_DEPTH-1:0] inp_raddr_o,
  input  logic [tessera_config_pkg::INP_MATRIX_WIDTH-1:0]   inp_rdata_i,
  output logic                                   wgt_re_o,
  output logic [tessera_config_pkg::LOG_WGT_BUFF_DEPTH-1:0] wgt_raddr_o,
  input  logic [tessera_config_pkg::WGT_MATRIX_WIDTH-1:0]   wgt_rdata_i,
  // Events and faults.
  output logic                                   uop_o,       // a micro-op was written
  output logic                                   uop_gemm_o,  // ... of a GEMM (reset included)
  output logic                                   fault_o,
  // FAULT_INFO of an SRAM index fault: the micro-op index above a two-bit field code.
  output logic [tessera_config_pkg::INSN_GEMM_UOP_END_W+1:0] fault_info_o
);

  localparam int AccWidth = tessera_config_pkg::ACC_MATRIX_WIDTH;
  localparam int UopAw = tessera_config_pkg::LOG_UOP_BUFF_DEPTH;
  localparam int AccAw = tessera_config_pkg::LOG_ACC_BUFF_DEPTH;
  localparam int InpAw = tessera_config_pkg::LOG_INP_BUFF_DEPTH;
  localparam int WgtAw = tessera_config_pkg::LOG_WGT_BUFF_DEPTH;
  localparam int SrcAw = (InpAw > AccAw) ? InpAw : AccAw;  // a source indexes inputs or accumulators
  // Every field and count is as wide as the instruction and micro-op formats make it, and every
  // sum as wide as its largest value (VTA's fields are unsigned, so nothing wraps): an index is a
  // micro-op field plus iter_out-1 outer and iter_in-1 inner steps of at most 2^factor-1 each.
  localparam int IterW = tessera_config_pkg::LOOP_ITER_WIDTH;
  localparam int UopW = tessera_config_pkg::INSN_GEMM_UOP_END_W;  // a micro-op index, below uop_end
  localparam int DstFW = tessera_config_pkg::INSN_GEMM_DST_FACTOR_OUT_W;
  localparam int SrcFW = tessera_config_pkg::INSN_GEMM_SRC_FACTOR_OUT_W;
  localparam int WgtFW = tessera_config_pkg::INSN_GEMM_WGT_FACTOR_OUT_W;
  localparam int DstOffW = IterW + DstFW + 1;  // a loop offset (and reach): two products' sum
  localparam int SrcOffW = IterW + SrcFW + 1;
  localparam int WgtOffW = IterW + WgtFW + 1;
  localparam int UopDstW = tessera_config_pkg::UOP_DST_W;
  localparam int UopSrcW = tessera_config_pkg::UOP_SRC_W;
  localparam int UopWgtW = tessera_config_pkg::UOP_WGT_W;
  localparam int DstIdxW = ((DstOffW > UopDstW) ? DstOffW : UopDstW) + 1;  // field plus offset
  localparam int SrcIdxW = ((SrcOffW > UopSrcW) ? SrcOffW : UopSrcW) + 1;
  localparam int WgtIdxW = ((WgtOffW > UopWgtW) ? WgtOffW : UopWgtW) + 1;

  // Where the pipe is: idle; scanning the kernel; scanned, waiting to run; running; done.
  typedef enum logic [2:0] {PIdle, PScan, PWait, PRun, PDone} pipe_state_e;
  pipe_state_e pstate_q, pstate_d;
  // pstate_q != PIdle as a register of its own: the compute module's dispatch and grants read it.
  logic busy_q;

  // Fields of the instruction held.
  logic        gemm_q, reset_q, use_imm_q;
  tessera_config_pkg::alu_op_e alu_op_q;
  logic [31:0] imm_q;
  logic [tessera_config_pkg::INSN_GEMM_UOP_BGN_W-1:0] uop_bgn_q;
  logic [UopW-1:0]  uop_end_q;
  logic [IterW-1:0] iter_out_q, iter_in_q;
  logic [DstFW-1:0] dst_fo_q, dst_fi_q;
  logic [SrcFW-1:0] src_fo_q, src_fi_q;
  logic [WgtFW-1:0] wgt_fo_q, wgt_fi_q;

  logic alu_vector;
  assign alu_vector = !gemm_q && !use_imm_q;

  // An instruction without micro-ops only needs to retire.
  logic start_empty;
  assign start_empty = iter_out_i == '0 || iter_in_i == '0 || !(UopW'(uop_bgn_i) < uop_end_i);

  // ------------------------------------------------------------ stage registers
  // S0: loop walk.
  logic        s0_active_q, s0_scan_q;
  logic [UopW-1:0]    s0_uop_q;
  logic [IterW-1:0]   s0_i_q, s0_j_q;
  logic [DstOffW-1:0] s0_dst_out_q, s0_dst_q;  // offsets of the outer and of the current iteration
  logic [SrcOffW-1:0] s0_src_out_q, s0_src_q;
  logic [WgtOffW-1:0] s0_wgt_out_q, s0_wgt_q;
  // D: the micro-op arrives from its SRAM; its indices are computed and checked.
  logic        d_valid_q, d_first_q, d_scan_q;
  logic [UopW-1:0]    d_uop_q;
  logic [DstOffW-1:0] d_dst_off_q;
  logic [SrcOffW-1:0] d_src_off_q;
  logic [WgtOffW-1:0] d_wgt_off_q;
  // S1: bank request and SRAM reads.
  logic        s1_valid_q, s1_phase_q, s1_first_q, s1_scan_q;
  logic [UopW-1:0]    s1_uop_q;
  logic [UopDstW-1:0] s1_uop_dst_q;  // the micro-op's fields, for the footprint
  logic [UopSrcW-1:0] s1_uop_src_q;
  logic [UopWgtW-1:0] s1_uop_wgt_q;
  logic [AccAw-1:0] s1_idx_dst_q;
  logic [SrcAw-1:0] s1_idx_src_q;
  logic [WgtAw-1:0] s1_idx_wgt_q;
  logic             s1_bad_dst_q, s1_bad_src_q, s1_bad_wgt_q;
  logic             s1_src_held_q;  // its source is the held row (see s1_reuse_src)
  // S2: operands arrive and the cores compute.
  logic        s2_valid_q;
  logic [AccAw-1:0] s2_dst_q;
  logic [AccWidth-1:0] s2_src_val_q;
  // S3: the result is written.
  logic        s3_valid_q;
  logic [AccAw-1:0] s3_dst_q;
  // The write of the previous cycle, and the row read in the previous cycle.
  logic [AccWidth-1:0] fwd_data_q;
  logic [AccAw-1:0] acc_rd_addr_q;
  // A vector source row was read last cycle (it is in the bank's read register now).
  logic             src_read_q;
  // The row held in s2_src_val_q: its index, and whether it is still the SRAM's content.
  logic             src_hold_valid_q;
  logic [AccAw-1:0] src_hold_idx_q;
  // Footprint of the kernel (the micro-op fields' extremes) and whether the pass has seen it all.
  logic [UopDstW-1:0] k_dst_min_q, k_dst_max_q;
  logic [UopSrcW-1:0] k_src_min_q, k_src_max_q;
  logic [UopWgtW-1:0] k_wgt_max_q;
  logic        k_done_q;
  logic        fault_q;
  logic [UopW+1:0] fault_info_q;

  logic        s0_active_d, s0_scan_d;
  logic [UopW-1:0]    s0_uop_d;
  logic [IterW-1:0]   s0_i_d, s0_j_d;
  logic [DstOffW-1:0] s0_dst_out_d, s0_dst_d;
  logic [SrcOffW-1:0] s0_src_out_d, s0_src_d;
  logic [WgtOffW-1:0] s0_wgt_out_d, s0_wgt_d;
  logic        d_valid_d, d_first_d, d_scan_d;
  logic [UopW-1:0]    d_uop_d;
  logic [DstOffW-1:0] d_dst_off_d;
  logic [SrcOffW-1:0] d_src_off_d;
  logic [WgtOffW-1:0] d_wgt_off_d;
  logic        s1_valid_d, s1_phase_d, s1_first_d, s1_scan_d;
  logic [UopW-1:0]    s1_uop_d;
  logic [UopDstW-1:0] s1_uop_dst_d;
  logic [UopSrcW-1:0] s1_uop_src_d;
  logic [UopWgtW-1:0] s1_uop_wgt_d;
  logic [AccAw-1:0] s1_idx_dst_d;
  logic [SrcAw-1:0] s1_idx_src_d;
  logic [WgtAw-1:0] s1_idx_wgt_d;
  logic             s1_bad_dst_d, s1_bad_src_d, s1_bad_wgt_d;
  logic             s1_src_held_d;
  logic        s2_valid_d;
  logic [AccAw-1:0] s2_dst_d;
  logic [AccWidth-1:0] s2_src_val_d;
  logic        s3_valid_d;
  logic [AccAw-1:0] s3_dst_d;
  logic [AccWidth-1:0] fwd_data_d;
  logic [AccAw-1:0] acc_rd_addr_d;
  logic             src_read_d;
  logic             src_hold_valid_d;
  logic [AccAw-1:0] src_hold_idx_d;
  logic [UopDstW-1:0] k_dst_min_d, k_dst_max_d;
  logic [UopSrcW-1:0] k_src_min_d, k_src_max_d;
  logic [UopWgtW-1:0] k_wgt_max_d;
  logic        k_done_d;
  logic        fault_d;
  logic [UopW+1:0] fault_info_d;

  // ------------------------------------------------------------ D: indices and checks
  logic [UopDstW-1:0] uop_dst;
  logic [UopSrcW-1:0] uop_src;
  logic [UopWgtW-1:0] uop_wgt;
  logic [DstIdxW-1:0] idx_dst;
  logic [SrcIdxW-1:0] idx_src;
  logic [WgtIdxW-1:0] idx_wgt;
  logic        bad_dst, bad_src, bad_wgt, s1_run, s1_fault;
  // Smaller configurations leave the micro-op word's top bits unused.
  /* verilator lint_off UNUSEDSIGNAL */
  tessera_config_pkg::uop_t uop;
  /* verilator lint_on UNUSEDSIGNAL */
  assign uop = uop_rdata_i;
  always_comb begin
    uop_dst = uop.dst;
    uop_src = uop.src;
    uop_wgt = uop.wgt;
    idx_dst = DstIdxW'(uop_dst) + DstIdxW'(d_dst_off_q);
    idx_src = SrcIdxW'(uop_src) + SrcIdxW'(d_src_off_q);
    idx_wgt = WgtIdxW'(uop_wgt) + WgtIdxW'(d_wgt_off_q);
    // The same checks as the behavioral simulator: a reset GEMM only writes the accumulator.
    bad_dst = idx_dst >= DstIdxW'(tessera_config_pkg::ACC_BUFF_DEPTH);
    bad_src = !(gemm_q && reset_q) && (gemm_q || !use_imm_q) &&
              (idx_src >= (gemm_q ? SrcIdxW'(tessera_config_pkg::INP_BUFF_DEPTH)
                                  : SrcIdxW'(tessera_config_pkg::ACC_BUFF_DEPTH)));
    bad_wgt = gemm_q && !reset_q && (idx_wgt >= WgtIdxW'(tessera_config_pkg::WGT_BUFF_DEPTH));
  end

  // ------------------------------------------------------------ S1: bank request
  // After a fault (this pipe's or the other's) nothing more is written.
  logic stop;
  assign stop = fault_q || halt_i;
  assign s1_run = s1_valid_q && !s1_scan_q;
  assign s1_fault = s1_run && !s1_phase_q && (s1_bad_dst_q || s1_bad_src_q || s1_bad_wgt_q) && !stop;

  // A vector micro-op whose source is the held row skips the source read. Whether S1's micro-op
  // names the held row is decided as it enters S1, from the row held from the next cycle on, and
  // registered (s1_src_held_q): compared here, it was the start of the path through the bank
  // grant into the SRAMs' addresses. The held row does not change while a micro-op waits in
  // S1's first cycle: it is replaced only in the cycle after a source read (S1 then holds that
  // micro-op in its second cycle) and dropped only when S1's micro-op moves on or a new
  // instruction starts.
  logic s1_reuse_src, s1_src_phase;
  assign s1_reuse_src = alu_vector && !s1_phase_q && s1_src_held_q;
  // This cycle S1 reads the vector source (its first of two cycles).
  assign s1_src_phase = alu_vector && !s1_phase_q && !s1_reuse_src;

  // Every running S1 cycle reads a bank or reserves it for S3's write two cycles later. A faulting
  // or stopping pipe may still ask (S2 and S3 are cleared, so nothing it reads is written, and
  // the run ends), so the request waits neither for the checks nor for the other pipe's fault.
  assign slot_req_o = s1_run;
  assign slot_bank_o = s1_src_phase ? s1_idx_src_q[AccAw-1] : s1_idx_dst_q[AccAw-1];

  // S1 finishes its micro-op this cycle: granted, and not the source-read cycle of a vector one.
  logic s1_advance, s1_free, s0_issue;
  assign s1_advance = slot_req_o && slot_grant_i && !s1_src_phase;
  // S1 takes D's micro-op when it is free or frees this cycle (in a scan, S1 never waits).
  assign s1_free = !s1_valid_q || s1_scan_q || s1_advance;
  // S0 issues into a D that is free or moves on; D holds the SRAM's output by reading nothing new.
  assign s0_issue = s0_active_q && !stop && (!d_valid_q || s1_free);
  assign uop_re_o = s0_issue;
  assign uop_raddr_o = s0_uop_q[UopAw-1:0];

  // SRAM reads of S1: the GEMM operands, or the ALU source (first cycle) and destination.
  logic s1_read_ok;
  assign s1_read_ok = slot_req_o && slot_grant_i;
  assign inp_re_o = GemmPipe && s1_read_ok && gemm_q && !reset_q;
  assign inp_raddr_o = s1_idx_src_q[InpAw-1:0];
  assign wgt_re_o = inp_re_o;
  assign wgt_raddr_o = s1_idx_wgt_q;
  assign acc_re_o = s1_read_ok && !(gemm_q && reset_q);
  assign acc_raddr_o = s1_src_phase ? s1_idx_src_q[AccAw-1:0] : s1_idx_dst_q;

  // ------------------------------------------------------------ S2: compute
  // The row read last cycle (from the bank it was read in), with any write since the read applied.
  logic [AccWidth-1:0] acc_fresh, core_out, s3_result;
  // Where the row read last cycle comes from (either bank's read data, or a write since the read:
  // S3's result or the previous write) is decided in the cycle of the read, from the writes coming
  // (S2's destination becomes S3's, S3's the previous write), and registered: the cores'
  // arithmetic then follows one four-way multiplexer, not address comparisons. A reset GEMM's
  // zeros come out of the ALU core's result register like any result (tessera_alu_core's clr_i).
  typedef enum logic [1:0] {FreshBank0, FreshBank1, FreshS3, FreshPrev} fresh_e;
  // Kept as two bits (Yosys would re-encode it one-hot, a second level in front of the cores).
  (* fsm_encoding = "none" *) fresh_e fresh_q;
  fresh_e fresh_d;
  always_comb begin
    unique case (fresh_q)
      FreshBank0: acc_fresh = acc_rdata_i[0 +: AccWidth];
      FreshBank1: acc_fresh = acc_rdata_i[AccWidth +: AccWidth];
      FreshS3:    acc_fresh = core_out;
      default:    acc_fresh = fwd_data_q;
    endcase
  end

  if (GemmPipe) begin : g_gemm
    tessera_gemm_core u_gemm (
      .clk_i, .en_i(s2_valid_q),
      .inp_i(inp_rdata_i), .wgt_i(wgt_rdata_i), .acc_i(acc_fresh), .acc_o(core_out)
    );
    // The GEMM pipe never holds vector sources or reset GEMMs.
    logic unused_alu;
    assign unused_alu = ^{alu_op_q, imm_q, s2_src_val_q, reset_q};
`ifndef SYNTHESIS
    NoResetGemm: assert property (@(posedge clk_i) disable iff (!rst_ni || clear_i) !(start_i && gemm_i && reset_i))
      else $error("tessera_uop_pipe: the GEMM pipe was given a reset GEMM");
`endif
  end else begin : g_alu
    tessera_alu_core u_alu (
      .clk_i, .en_i(s2_valid_q && !gemm_q), .clr_i(s2_valid_q && gemm_q && reset_q),
      .op_i(alu_op_q), .use_imm_i(use_imm_q), .imm_i(imm_q),
      .a_i(acc_fresh), .b_i(s2_src_val_q), .y_o(core_out)
    );
    logic unused_gemm;
    assign unused_gemm = ^{inp_rdata_i, wgt_rdata_i};
  end
  assign s3_result = core_out;

  assign acc_we_o = s3_valid_q;
  assign acc_waddr_o = s3_dst_q;
  assign acc_wdata_o = s3_result;
  assign uop_o = s3_valid_q;
  assign uop_gemm_o = s3_valid_q && gemm_q;

  always_comb begin
    if (s3_valid_d && s2_dst_q == acc_raddr_o) fresh_d = FreshS3;
    else if (s3_valid_q && s3_dst_q == acc_raddr_o) fresh_d = FreshPrev;
    else fresh_d = acc_raddr_o[AccAw-1] ? FreshBank1 : FreshBank0;
  end

  // ------------------------------------------------------------ footprint
  logic reach_done_dst, reach_done_src, reach_done_wgt;
  logic [DstOffW-1:0] reach_dst;
  logic [SrcOffW-1:0] reach_src;
  logic [WgtOffW-1:0] reach_wgt;
  tessera_loop_reach #(.FactorWidth(DstFW), .ReachWidth(DstOffW)) u_reach_dst (
    .clk_i, .rst_ni, .start_i, .iter_out_i, .iter_in_i, .factor_out_i(dst_fo_i), .factor_in_i(dst_fi_i),
    .done_o(reach_done_dst), .reach_o(reach_dst)
  );
  tessera_loop_reach #(.FactorWidth(SrcFW), .ReachWidth(SrcOffW)) u_reach_src (
    .clk_i, .rst_ni, .start_i, .iter_out_i, .iter_in_i, .factor_out_i(src_fo_i), .factor_in_i(src_fi_i),
    .done_o(reach_done_src), .reach_o(reach_src)
  );
  tessera_loop_reach #(.FactorWidth(WgtFW), .ReachWidth(WgtOffW)) u_reach_wgt (
    .clk_i, .rst_ni, .start_i, .iter_out_i, .iter_in_i, .factor_out_i(wgt_fo_i), .factor_in_i(wgt_fi_i),
    .done_o(reach_done_wgt), .reach_o(reach_wgt)
  );

  // The footprint leaves the pipe through registers, a cycle after it is complete: the highest
  // rows' sums and range checks would otherwise precede the compute module's go decision and this
  // pipe's start. While it is valid its inputs no longer change (the kernel's extremes and the
  // loops' reach are final), and it only becomes invalid when the pipe goes idle, when the
  // compute module no longer reads it.
  logic [DstIdxW-1:0] fp_dst_hi;
  logic [SrcIdxW-1:0] fp_src_hi;
  logic [WgtIdxW-1:0] fp_wgt_hi;
  logic        fp_empty_q, fp_empty_d;
  logic        fp_valid, fp_in_range;
  logic        fp_valid_q, fp_in_range_q;
  logic [AccAw-1:0] fp_dst_hi_q, fp_src_hi_q;
  assign fp_dst_hi = DstIdxW'(k_dst_max_q) + DstIdxW'(reach_dst);
  assign fp_src_hi = SrcIdxW'(k_src_max_q) + SrcIdxW'(reach_src);
  assign fp_wgt_hi = WgtIdxW'(k_wgt_max_q) + WgtIdxW'(reach_wgt);
  assign fp_valid = (pstate_q != PIdle) && (fp_empty_q || (k_done_q && reach_done_dst && reach_done_src && reach_done_wgt));
  always_comb begin
    fp_in_range = fp_dst_hi < DstIdxW'(tessera_config_pkg::ACC_BUFF_DEPTH);
    if (gemm_q && !reset_q)
      fp_in_range = fp_in_range && fp_src_hi < SrcIdxW'(tessera_config_pkg::INP_BUFF_DEPTH) &&
                    fp_wgt_hi < WgtIdxW'(tessera_config_pkg::WGT_BUFF_DEPTH);
    else if (alu_vector)
      fp_in_range = fp_in_range && fp_src_hi < SrcIdxW'(tessera_config_pkg::ACC_BUFF_DEPTH);
    if (fp_empty_q) fp_in_range = 1'b1;
  end
  always_ff @(posedge clk_i) begin
    if (!rst_ni || clear_i) begin
      fp_valid_q    <= 1'b0;
      fp_in_range_q <= 1'b0;
      fp_dst_hi_q   <= '0;
      fp_src_hi_q   <= '0;
    end else begin
      fp_valid_q    <= fp_valid;
      fp_in_range_q <= fp_in_range;
      fp_dst_hi_q   <= fp_dst_hi[AccAw-1:0];
      fp_src_hi_q   <= fp_src_hi[AccAw-1:0];
    end
  end
  assign fp_empty_o = fp_empty_q;
  assign fp_valid_o = fp_valid_q;
  assign fp_in_range_o = fp_in_range_q;
  assign fp_src_acc_o = alu_vector;
  assign fp_dst_lo_o = AccAw'(k_dst_min_q);
  assign fp_dst_hi_o = fp_dst_hi_q;
  assign fp_src_lo_o = AccAw'(k_src_min_q);
  assign fp_src_hi_o = fp_src_hi_q;

  // ------------------------------------------------------------ sequencing
  logic drained;
  assign drained = !s0_active_q && !d_valid_q && !s1_valid_q && !s2_valid_q && !s3_valid_q;

  assign busy_o = busy_q;
  assign waiting_o = pstate_q == PWait;
  assign started_o = pstate_q == PRun || pstate_q == PDone;
  assign done_o = pstate_q == PDone;
  assign exec_begin_o = (pstate_q == PIdle && start_i && (start_empty || !scan_i)) || (pstate_q == PWait && go_i);
  assign exec_end_o = (pstate_q == PIdle && start_i && start_empty) || (pstate_q == PRun && drained && !fault_q);
  assign fault_o = fault_q;
  assign fault_info_o = fault_info_q;

  // Loop walk restart: the first micro-op of the kernel, offsets zero.
  logic s0_restart;
  assign s0_restart = (pstate_q == PWait && go_i);

  always_comb begin
    pstate_d = pstate_q;
    s0_active_d = s0_active_q;
    s0_scan_d = s0_scan_q;
    s0_uop_d = s0_uop_q;
    s0_i_d = s0_i_q;
    s0_j_d = s0_j_q;
    s0_dst_out_d = s0_dst_out_q;
    s0_src_out_d = s0_src_out_q;
    s0_wgt_out_d = s0_wgt_out_q;
    s0_dst_d = s0_dst_q;
    s0_src_d = s0_src_q;
    s0_wgt_d = s0_wgt_q;
    d_valid_d = d_valid_q;
    d_first_d = d_first_q;
    d_scan_d = d_scan_q;
    d_uop_d = d_uop_q;
    d_dst_off_d = d_dst_off_q;
    d_src_off_d = d_src_off_q;
    d_wgt_off_d = d_wgt_off_q;
    s1_valid_d = s1_valid_q;
    s1_phase_d = s1_phase_q;
    s1_first_d = s1_first_q;
    s1_scan_d = s1_scan_q;
    s1_uop_d = s1_uop_q;
    s1_uop_dst_d = s1_uop_dst_q;
    s1_uop_src_d = s1_uop_src_q;
    s1_uop_wgt_d = s1_uop_wgt_q;
    s1_idx_dst_d = s1_idx_dst_q;
    s1_idx_src_d = s1_idx_src_q;
    s1_idx_wgt_d = s1_idx_wgt_q;
    s1_bad_dst_d = s1_bad_dst_q;
    s1_bad_src_d = s1_bad_src_q;
    s1_bad_wgt_d = s1_bad_wgt_q;
    s1_src_held_d = s1_src_held_q;
    s2_valid_d = 1'b0;
    s2_dst_d = s2_dst_q;
    s2_src_val_d = s2_src_val_q;
    s3_valid_d = s2_valid_q;
    s3_dst_d = s2_dst_q;
    fwd_data_d = fwd_data_q;
    acc_rd_addr_d = acc_raddr_o;
    src_read_d = 1'b0;
    src_hold_valid_d = src_hold_valid_q;
    src_hold_idx_d = src_hold_idx_q;
    k_dst_min_d = k_dst_min_q;
    k_dst_max_d = k_dst_max_q;
    k_src_min_d = k_src_min_q;
    k_src_max_d = k_src_max_q;
    k_wgt_max_d = k_wgt_max_q;
    k_done_d = k_done_q;
    fp_empty_d = fp_empty_q;
    fault_d = fault_q;
    fault_info_d = fault_info_q;
    if (s3_valid_q) fwd_data_d = s3_result;

    // ---- the instruction's course
    case (pstate_q)
      PIdle: if (start_i) pstate_d = start_empty ? PDone : (scan_i ? PScan : PRun);
      PScan: if (!s0_active_q && !d_valid_q && !s1_valid_q) pstate_d = PWait;
      PWait: if (go_i) pstate_d = PRun;
      PRun: if (drained && !fault_q) pstate_d = PDone;
      PDone: if (retire_i) pstate_d = PIdle;
      default: pstate_d = PIdle;
    endcase

    // ---- S0: starts when the instruction is taken (a run or a scan) or a scanned one goes
    if ((pstate_q == PIdle && start_i && !start_empty) || s0_restart) begin
      s0_active_d  = 1'b1;
      s0_scan_d    = pstate_q == PIdle && scan_i;
      s0_uop_d     = pstate_q == PIdle ? UopW'(uop_bgn_i) : UopW'(uop_bgn_q);
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
      end else if (s0_scan_q) begin
        s0_active_d = 1'b0;  // a scan walks the kernel once
      end else begin
        s0_uop_d = UopW'(uop_bgn_q);
        if (s0_j_q + 1 < iter_in_q) begin
          s0_j_d   = s0_j_q + 1;
          s0_dst_d = s0_dst_q + DstOffW'(dst_fi_q);
          s0_src_d = s0_src_q + SrcOffW'(src_fi_q);
          s0_wgt_d = s0_wgt_q + WgtOffW'(wgt_fi_q);
        end else begin
          s0_j_d = '0;
          s0_dst_out_d = s0_dst_out_q + DstOffW'(dst_fo_q);
          s0_src_out_d = s0_src_out_q + SrcOffW'(src_fo_q);
          s0_wgt_out_d = s0_wgt_out_q + WgtOffW'(wgt_fo_q);
          s0_dst_d = s0_dst_out_q + DstOffW'(dst_fo_q);
          s0_src_d = s0_src_out_q + SrcOffW'(src_fo_q);
          s0_wgt_d = s0_wgt_out_q + WgtOffW'(wgt_fo_q);
          if (s0_i_q + 1 < iter_out_q) s0_i_d = s0_i_q + 1;
          else s0_active_d = 1'b0;
        end
      end
    end else if (stop) begin
      s0_active_d = 1'b0;
    end

    // ---- D: takes the issued micro-op when free or moving on
    if (!d_valid_q || s1_free) begin
      d_valid_d   = s0_issue;
      d_first_d   = s0_i_q == '0 && s0_j_q == '0;
      d_scan_d    = s0_scan_q;
      d_uop_d     = s0_uop_q;
      d_dst_off_d = s0_dst_q;
      d_src_off_d = s0_src_q;
      d_wgt_off_d = s0_wgt_q;
    end

    // ---- S1: takes D's micro-op when free or finishing; a vector micro-op stays a second cycle
    if (!s1_free) begin
      if (slot_req_o && slot_grant_i && s1_src_phase) begin
        s1_phase_d = 1'b1;
        src_read_d = 1'b1;
      end
    end else begin
      s1_valid_d   = d_valid_q;
      s1_phase_d   = 1'b0;
      s1_first_d   = d_first_q;
      s1_scan_d    = d_scan_q;
      s1_uop_d     = d_uop_q;
      s1_uop_dst_d = uop_dst;
      s1_uop_src_d = uop_src;
      s1_uop_wgt_d = uop_wgt;
      s1_idx_dst_d = idx_dst[AccAw-1:0];
      s1_idx_src_d = idx_src[SrcAw-1:0];
      s1_idx_wgt_d = idx_wgt[WgtAw-1:0];
      s1_bad_dst_d = bad_dst;
      s1_bad_src_d = bad_src;
      s1_bad_wgt_d = bad_wgt;
    end
    if (s1_fault) begin
      s1_valid_d = 1'b0;
      fault_d = 1'b1;
      fault_info_d = {s1_uop_q,
                      s1_bad_dst_q ? tessera_host_pkg::FaultFieldDst
                                   : (s1_bad_src_q ? tessera_host_pkg::FaultFieldSrc : tessera_host_pkg::FaultFieldWgt)};
    end

    // ---- the kernel's footprint, from the micro-ops of the first pass (or the scan)
    if (s1_valid_q && s1_first_q && !k_done_q) begin
      if (s1_uop_dst_q < k_dst_min_q) k_dst_min_d = s1_uop_dst_q;
      if (s1_uop_dst_q > k_dst_max_q) k_dst_max_d = s1_uop_dst_q;
      if (s1_uop_src_q < k_src_min_q) k_src_min_d = s1_uop_src_q;
      if (s1_uop_src_q > k_src_max_q) k_src_max_d = s1_uop_src_q;
      if (s1_uop_wgt_q > k_wgt_max_q) k_wgt_max_d = s1_uop_wgt_q;
      if (s1_uop_q + 1 == uop_end_q && (s1_scan_q || s1_advance || s1_fault)) k_done_d = 1'b1;
    end

    // ---- S2 takes the micro-op S1 finishes
    s2_valid_d = s1_advance && !s1_fault;
    s2_dst_d = s1_idx_dst_q;
    // The vector source read in S1's first cycle arrives now; it stays held for the next micro-ops
    // with the same source until one of them writes that row.
    if (src_read_q) begin
      s2_src_val_d = acc_fresh;
      src_hold_idx_d = acc_rd_addr_q;
      src_hold_valid_d = 1'b1;
    end
    if (s2_valid_d && s1_idx_dst_q == (src_read_q ? acc_rd_addr_q : src_hold_idx_q)) src_hold_valid_d = 1'b0;

    // ---- a new instruction: nothing held from the last one (loads and GEMMs may change the rows),
    // and its footprint still to learn
    if (pstate_q == PIdle && start_i) begin
      src_hold_valid_d = 1'b0;
      k_dst_min_d = '1;
      k_dst_max_d = '0;
      k_src_min_d = '1;
      k_src_max_d = '0;
      k_wgt_max_d = '0;
      k_done_d = 1'b0;
      fp_empty_d = start_empty;
    end

    // The micro-op S1 takes: whether its source is the row held from the next cycle on.
    if (s1_free) s1_src_held_d = src_hold_valid_d && idx_src[AccAw-1:0] == src_hold_idx_d;

    // After a fault nothing more is written: micro-ops behind the faulting one are dropped.
    if (stop) begin
      d_valid_d = 1'b0;
      s1_valid_d = 1'b0;
      s2_valid_d = 1'b0;
      s3_valid_d = 1'b0;
    end
  end

  // The instruction's fields, latched when it is taken.
  always_ff @(posedge clk_i) begin
    if (!rst_ni || clear_i) begin
      gemm_q <= 1'b0;
      reset_q <= 1'b0;
      use_imm_q <= 1'b0;
      alu_op_q <= tessera_config_pkg::ALU_OPCODE_MIN;
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
    end else if (pstate_q == PIdle && start_i) begin
      gemm_q <= gemm_i;
      reset_q <= reset_i;
      use_imm_q <= use_imm_i;
      alu_op_q <= alu_op_i;
      imm_q <= imm_i;
      uop_bgn_q <= uop_bgn_i;
      uop_end_q <= uop_end_i;
      iter_out_q <= iter_out_i;
      iter_in_q <= iter_in_i;
      dst_fo_q <= dst_fo_i;
      dst_fi_q <= dst_fi_i;
      src_fo_q <= src_fo_i;
      src_fi_q <= src_fi_i;
      wgt_fo_q <= wgt_fo_i;
      wgt_fi_q <= wgt_fi_i;
    end
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni || clear_i) begin
      pstate_q      <= PIdle;
      busy_q        <= 1'b0;
      s0_active_q   <= 1'b0;
      s0_scan_q     <= 1'b0;
      s0_uop_q      <= '0;
      s0_i_q        <= '0;
      s0_j_q        <= '0;
      s0_dst_out_q  <= '0;
      s0_src_out_q  <= '0;
      s0_wgt_out_q  <= '0;
      s0_dst_q      <= '0;
      s0_src_q      <= '0;
      s0_wgt_q      <= '0;
      d_valid_q     <= 1'b0;
      d_first_q     <= 1'b0;
      d_scan_q      <= 1'b0;
      d_uop_q       <= '0;
      d_dst_off_q   <= '0;
      d_src_off_q   <= '0;
      d_wgt_off_q   <= '0;
      s1_valid_q    <= 1'b0;
      s1_phase_q    <= 1'b0;
      s1_first_q    <= 1'b0;
      s1_scan_q     <= 1'b0;
      s1_uop_q      <= '0;
      s1_uop_dst_q  <= '0;
      s1_uop_src_q  <= '0;
      s1_uop_wgt_q  <= '0;
      s1_idx_dst_q  <= '0;
      s1_idx_src_q  <= '0;
      s1_idx_wgt_q  <= '0;
      s1_bad_dst_q  <= 1'b0;
      s1_bad_src_q  <= 1'b0;
      s1_bad_wgt_q  <= 1'b0;
      s1_src_held_q <= 1'b0;
      s2_valid_q    <= 1'b0;
      s2_dst_q      <= '0;
      s2_src_val_q  <= '0;
      s3_valid_q    <= 1'b0;
      s3_dst_q      <= '0;
      fwd_data_q    <= '0;
      acc_rd_addr_q <= '0;
      fresh_q       <= FreshBank0;
      src_read_q    <= 1'b0;
      src_hold_valid_q <= 1'b0;
      src_hold_idx_q <= '0;
      k_dst_min_q   <= '0;
      k_dst_max_q   <= '0;
      k_src_min_q   <= '0;
      k_src_max_q   <= '0;
      k_wgt_max_q   <= '0;
      k_done_q      <= 1'b0;
      fp_empty_q    <= 1'b0;
      fault_q       <= 1'b0;
      fault_info_q  <= '0;
    end else begin
      pstate_q <= pstate_d;
      // Taken on start, given up on retire: not after the other transitions, which depend on more.
      if (pstate_q == PIdle) busy_q <= start_i;
      else if (pstate_q == PDone && retire_i) busy_q <= 1'b0;
      s0_active_q <= s0_active_d;
      s0_scan_q <= s0_scan_d;
      s0_uop_q <= s0_uop_d;
      s0_i_q <= s0_i_d;
      s0_j_q <= s0_j_d;
      s0_dst_out_q <= s0_dst_out_d;
      s0_src_out_q <= s0_src_out_d;
      s0_wgt_out_q <= s0_wgt_out_d;
      s0_dst_q <= s0_dst_d;
      s0_src_q <= s0_src_d;
      s0_wgt_q <= s0_wgt_d;
      d_valid_q <= d_valid_d;
      d_first_q <= d_first_d;
      d_scan_q <= d_scan_d;
      d_uop_q <= d_uop_d;
      d_dst_off_q <= d_dst_off_d;
      d_src_off_q <= d_src_off_d;
      d_wgt_off_q <= d_wgt_off_d;
      s1_valid_q <= s1_valid_d;
      s1_phase_q <= s1_phase_d;
      s1_first_q <= s1_first_d;
      s1_scan_q <= s1_scan_d;
      s1_uop_q <= s1_uop_d;
      s1_uop_dst_q <= s1_uop_dst_d;
      s1_uop_src_q <= s1_uop_src_d;
      s1_uop_wgt_q <= s1_uop_wgt_d;
      s1_idx_dst_q <= s1_idx_dst_d;
      s1_idx_src_q <= s1_idx_src_d;
      s1_idx_wgt_q <= s1_idx_wgt_d;
      s1_bad_dst_q <= s1_bad_dst_d;
      s1_bad_src_q <= s1_bad_src_d;
      s1_bad_wgt_q <= s1_bad_wgt_d;
      s1_src_held_q <= s1_src_held_d;
      s2_valid_q <= s2_valid_d;
      s2_dst_q <= s2_dst_d;
      s2_src_val_q <= s2_src_val_d;
      s3_valid_q <= s3_valid_d;
      s3_dst_q <= s3_dst_d;
      fwd_data_q <= fwd_data_d;
      acc_rd_addr_q <= acc_rd_addr_d;
      fresh_q <= fresh_d;
      src_read_q <= src_read_d;
      src_hold_valid_q <= src_hold_valid_d;
      src_hold_idx_q <= src_hold_idx_d;
      k_dst_min_q <= k_dst_min_d;
      k_dst_max_q <= k_dst_max_d;
      k_src_min_q <= k_src_min_d;
      k_src_max_q <= k_src_max_d;
      k_wgt_max_q <= k_wgt_max_d;
      k_done_q <= k_done_d;
      fp_empty_q <= fp_empty_d;
      fault_q <= fault_d;
      fault_info_q <= fault_info_d;
    end
  end

`ifndef SYNTHESIS
  StateValid: assert property (@(posedge clk_i) disable iff (!rst_ni || clear_i)
                               pstate_q inside {PIdle, PScan, PWait, PRun, PDone})
    else $error("tessera_uop_pipe: invalid state %0d", pstate_q);
  BusyMatchesState: assert property (@(posedge clk_i) disable iff (!rst_ni || clear_i) busy_q == (pstate_q != PIdle))
    else $error("tessera_uop_pipe: the busy register disagrees with the state");
`endif

endmodule
