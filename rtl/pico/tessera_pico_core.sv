// The pico core's one sequential executor: fsim's schedule (fetch into three bounded queues, drain
// load, store, then compute while their heads' tokens allow, FINISH once nothing moves) kept as
// positions into the instruction stream, and every instruction executed a word or a MAC a cycle.
`include "tessera_config.svh"

module tessera_pico_core #(
  // Byte-address bits of the DRAM the core can reach (17 for the board's 128 KiB; at most 31):
  // instruction indices are kept one bit wider than that memory holds, so a stream running past
  // it reaches an address the memory refuses (a DRAM read fault) before any index could wrap.
  parameter int DramAddrWidth = 31,
  localparam int Bus = tessera_config_pkg::BUS_WIDTH,
  localparam int NumModules = tessera_host_pkg::NumModules,
  localparam int StatusBits = tessera_host_pkg::StatusStateBits + tessera_host_pkg::StatusArgBits,
  localparam int NumTokenQueues = tessera_host_pkg::NumTokenQueues,
  localparam int NumInsnQueues = tessera_host_pkg::NumInsnQueues,
  localparam int NumCounters = tessera_host_pkg::NumCounters
) (
  input  logic                                        clk_i,
  input  logic                                        rst_ni,
  // Run control, from the host registers; INSN_ADDR and INSN_COUNT are read throughout the run.
  input  logic                                        start_i,
  input  logic [31:0]                                 insn_addr_i,
  input  logic [31:0]                                 insn_count_i,
  output logic                                        finish_o,
  output logic                                        fault_o,
  output logic [tessera_host_pkg::FaultCauseBits-1:0] fault_cause_o,
  output logic [31:0]                                 fault_insn_o,
  output logic [31:0]                                 fault_info_o,
  // The status words tessera_top shows, per module, token queue and instruction queue.
  output logic [NumModules*StatusBits-1:0]            status_o,
  output logic [NumModules*32-1:0]                    insn_o,
  output logic [NumTokenQueues*16-1:0]                tokens_o,
  output logic [NumInsnQueues*16-1:0]                 queues_o,
  // Counter increments of the core's events (tessera_host_pkg::Counter*), one bit per counter.
  output logic [NumCounters-1:0]                      count_inc_o,
  // DRAM word port (tessera_pico_dram).
  output logic                                        mem_req_o,
  output logic                                        mem_we_o,
  output logic [31:0]                                 mem_addr_o,
  output logic [Bus-1:0]                              mem_wdata_o,
  input  logic                                        mem_done_i,
  input  logic                                        mem_error_i,
  input  logic [Bus-1:0]                              mem_rdata_i
);

  // ------------------------------------------------------------ shape of the buffers
  // Each buffer is an array of bus words: an input row is InpWords of them, a weight block
  // WgtWords, an accumulator row one word per lane.
  localparam int BusBytes = tessera_config_pkg::BUS_BYTES;
  localparam int LogBusBytes = $clog2(BusBytes);
  localparam int BlockIn = tessera_config_pkg::BLOCK_IN;
  localparam int Lanes = tessera_config_pkg::BATCH * tessera_config_pkg::BLOCK_OUT;
  localparam int LogLanes = $clog2(Lanes);
  localparam int InpWords = tessera_config_pkg::INP_MAT_AXI_RATIO;
  localparam int WgtWords = tessera_config_pkg::WGT_MAT_AXI_RATIO;
  localparam int LogInpWords = $clog2(InpWords);
  localparam int LogWgtWords = $clog2(WgtWords);
  localparam int UopAddrW = tessera_config_pkg::LOG_UOP_BUFF_DEPTH;
  localparam int InpIdxW = tessera_config_pkg::LOG_INP_BUFF_DEPTH;
  localparam int WgtIdxW = tessera_config_pkg::LOG_WGT_BUFF_DEPTH;
  localparam int AccIdxW = tessera_config_pkg::LOG_ACC_BUFF_DEPTH;
  localparam int InpAddrW = InpIdxW + LogInpWords;
  localparam int WgtAddrW = WgtIdxW + LogWgtWords;
  localparam int AccAddrW = AccIdxW + LogLanes;
  // Words of a LOAD's element in its buffer; ACC8 fills accumulator rows from bytes.
  localparam int MaxElemWords = (WgtWords > Lanes) ? WgtWords : Lanes;
  localparam int ElemWordW = $clog2(MaxElemWords) + 1;
  localparam int LaneW = LogLanes + 1;
  localparam int OutWidth = tessera_config_pkg::OUT_WIDTH;
  localparam int OutPerWord = tessera_config_pkg::BUS_WIDTH / OutWidth;
  localparam int LogOutPerWord = $clog2(OutPerWord);
  localparam int BytesPerWord = tessera_config_pkg::BUS_WIDTH / tessera_config_pkg::INP_WIDTH;
  localparam int LogBytesPerWord = $clog2(BytesPerWord);
  localparam int IterW = tessera_config_pkg::LOOP_ITER_WIDTH;
  localparam int SramW = tessera_config_pkg::MEMOP_SRAM_ADDR_BIT_WIDTH;
  // log2 of the DRAM bytes of an element of each memory type.
  localparam logic [2:0] LogUopBytes = 3'($clog2(tessera_config_pkg::UOP_ELEM_BYTES));
  localparam logic [2:0] LogInpBytes = 3'($clog2(tessera_config_pkg::INP_ELEM_BYTES));
  localparam logic [2:0] LogWgtBytes = 3'($clog2(tessera_config_pkg::WGT_ELEM_BYTES));
  localparam logic [2:0] LogAccBytes = 3'($clog2(tessera_config_pkg::ACC_ELEM_BYTES));
  localparam logic [2:0] LogAcc8Bytes = 3'($clog2(tessera_config_pkg::ACC8_ELEM_BYTES));
  localparam logic [2:0] LogOutBytes = 3'($clog2(tessera_config_pkg::OUT_ELEM_BYTES));
  localparam int InsnWidth = tessera_config_pkg::INS_WIDTH;
  localparam int LogInsnBytes = $clog2(tessera_config_pkg::INS_ELEM_BYTES);
  localparam int InsnWords = InsnWidth / Bus;  // an instruction's bus words, read one a request
  // A LOAD walks (pad + size + pad) rows and columns.
  localparam int WalkW = tessera_config_pkg::MEMOP_SIZE_BIT_WIDTH + 1;

  localparam int InsnCap = tessera_config_pkg::INSN_QUEUE_DEPTH;
  localparam int TokenCap = tessera_config_pkg::DEP_QUEUE_DEPTH;
  localparam int QueueW = $clog2(InsnCap + 1);
  localparam int TokenW = $clog2(TokenCap + 1);

  localparam int MaxIdxW = (AccIdxW > WgtIdxW) ? ((AccIdxW > InpIdxW) ? AccIdxW : InpIdxW)
                                               : ((WgtIdxW > InpIdxW) ? WgtIdxW : InpIdxW);
  localparam int CheckW = MaxIdxW + 1;
  localparam int IdxW = (DramAddrWidth - LogInsnBytes + 1 > 32) ? 32 : DramAddrWidth - LogInsnBytes + 1;
  localparam int QLoad = tessera_host_pkg::InsnQueueLoad;
  localparam int QCompute = tessera_host_pkg::InsnQueueCompute;
  localparam int QStore = tessera_host_pkg::InsnQueueStore;
  localparam int TokL2g = 32'(tessera_host_pkg::QueueL2g);
  localparam int TokG2l = 32'(tessera_host_pkg::QueueG2l);
  localparam int TokG2s = 32'(tessera_host_pkg::QueueG2s);
  localparam int TokS2g = 32'(tessera_host_pkg::QueueS2g);
  localparam int ModFetch = tessera_host_pkg::ModuleFetch;


  // Bounds checks run over the micro-op fields in fsim's order.
  localparam logic [1:0] FieldDst = tessera_host_pkg::FaultFieldDst;
  localparam logic [1:0] FieldSrc = tessera_host_pkg::FaultFieldSrc;
  localparam logic [1:0] FieldWgt = tessera_host_pkg::FaultFieldWgt;

  typedef logic [StatusBits-1:0] status_t;
  // The argument is a queue index, which fits the status word's argument field.
  /* verilator lint_off UNUSEDSIGNAL */
  function automatic status_t status(input tessera_host_pkg::state_t state, input int arg);
    status = {tessera_host_pkg::StatusArgBits'(arg), state};
  endfunction

  // The token queues an instruction of queue q pops and pushes (bit = token queue), from the flags
  // in its first word.
  function automatic logic [NumTokenQueues-1:0] pops_of(input logic [1:0] q, input logic [31:0] word0);
    logic pop_prev, pop_next;
    pop_prev = word0[tessera_config_pkg::INSN_MEM_POP_PREV_LO];
    pop_next = word0[tessera_config_pkg::INSN_MEM_POP_NEXT_LO];
    pops_of = '0;
    if (q == 2'(QStore)) pops_of[TokG2s] = pop_prev;
    else if (q == 2'(QLoad)) pops_of[TokG2l] = pop_next;
    else begin
      pops_of[TokL2g] = pop_prev;
      pops_of[TokS2g] = pop_next;
    end
  endfunction
  function automatic logic [NumTokenQueues-1:0] pushes_of(input logic [1:0] q, input logic [31:0] word0);
    logic push_prev, push_next;
    push_prev = word0[tessera_config_pkg::INSN_MEM_PUSH_PREV_LO];
    push_next = word0[tessera_config_pkg::INSN_MEM_PUSH_NEXT_LO];
    pushes_of = '0;
    if (q == 2'(QStore)) pushes_of[TokS2g] = push_prev;
    else if (q == 2'(QLoad)) pushes_of[TokL2g] = push_next;
    else begin
      pushes_of[TokG2l] = push_prev;
      pushes_of[TokG2s] = push_next;
    end
  endfunction
  /* verilator lint_on UNUSEDSIGNAL */

  // Byte `index` of a row, from the bus word holding it (only the index's low bits select).
  /* verilator lint_off UNUSEDSIGNAL */
  function automatic logic signed [7:0] byte_of(input logic [Bus-1:0] word, input logic [31:0] index);
    byte_of = '0;
    for (int b = 0; b < BytesPerWord; b++)
      if (index[LogBytesPerWord-1:0] == LogBytesPerWord'(b)) byte_of = word[b * 8 +: 8];
  endfunction
  /* verilator lint_on UNUSEDSIGNAL */

  // a + b for an address with its sticky bit (see row_addr_q).
  function automatic logic [DramAddrWidth:0] add_addr(input logic [DramAddrWidth:0] a, input logic [35:0] b);
    logic [36:0] sum;
    sum = 37'(a[DramAddrWidth-1:0]) + 37'(b);
    add_addr = {a[DramAddrWidth] || sum[36:DramAddrWidth] != '0, sum[DramAddrWidth-1:0]};
  endfunction

  // ------------------------------------------------------------ buffers and serial unit
  logic uop_we, inp_we, wgt_we, acc_we;
  logic [UopAddrW-1:0] uop_addr;
  logic [InpAddrW-1:0] inp_addr;
  logic [WgtAddrW-1:0] wgt_addr;
  logic [AccAddrW-1:0] acc_addr;
  logic [Bus-1:0] buf_wdata, uop_rdata, inp_rdata, wgt_rdata, acc_rdata;

  tessera_pico_ram #(.Depth(tessera_config_pkg::UOP_BUFF_DEPTH), .Width(Bus)) u_uop (
    .clk_i, .we_i(uop_we), .addr_i(uop_addr), .wdata_i(buf_wdata), .rdata_o(uop_rdata)
  );
  tessera_pico_ram #(.Depth(tessera_config_pkg::INP_BUFF_DEPTH * InpWords), .Width(Bus)) u_inp (
    .clk_i, .we_i(inp_we), .addr_i(inp_addr), .wdata_i(buf_wdata), .rdata_o(inp_rdata)
  );
  tessera_pico_ram #(.Depth(tessera_config_pkg::WGT_BUFF_DEPTH * WgtWords), .Width(Bus)) u_wgt (
    .clk_i, .we_i(wgt_we), .addr_i(wgt_addr), .wdata_i(buf_wdata), .rdata_o(wgt_rdata)
  );
  tessera_pico_ram #(.Depth(tessera_config_pkg::ACC_BUFF_DEPTH * Lanes), .Width(Bus)) u_acc (
    .clk_i, .we_i(acc_we), .addr_i(acc_addr), .wdata_i(buf_wdata), .rdata_o(acc_rdata)
  );

  logic ser_start, ser_mul, ser_busy;
  logic [31:0] ser_a, ser_b, ser_result;
  tessera_pico_serial u_serial (
    .clk_i, .rst_ni, .start_i(ser_start), .mul_i(ser_mul), .a_i(ser_a), .b_i(ser_b), .busy_o(ser_busy),
    .result_o(ser_result)
  );

  // ------------------------------------------------------------ state
  typedef enum logic [4:0] {
    StIdle, StFetch, StDrain, StHead, StInsn, StExec,
    StLoadElem, StLoadRead, StLoadWrite,
    StStoreRead, StStoreByte, StStoreWrite,
    StCheckStart, StCheckOut, StCheckIn, StCheckUop, StCheckCmp,
    StUop, StUopData, StGemmReset, StGemmLane, StGemmMac, StGemmWrite,
    StAluDst, StAluSrc, StAluOp, StAluWait,
    StRetire, StNext, StFinish, StStuck
  } state_e;

  state_e state_q, state_d;
  // Scheduler: where fetch is, and per instruction queue the stream position at or before its head
  // and how many instructions it holds; the token counts.
  logic [IdxW-1:0] fetch_pc_q, fetch_pc_d;
  // (Flat vectors, one slice per queue: Yosys 0.23 takes neither unpacked-array assignments nor
  // multi-dimensional packed arrays.)
  logic [NumInsnQueues*IdxW-1:0] pos_q, pos_d;
  logic [NumInsnQueues*QueueW-1:0] size_q, size_d;
  logic [NumTokenQueues*TokenW-1:0] tokens_q, tokens_d;
  logic [1:0] queue_q, queue_d;
  logic moved_q, moved_d, finish_head_q, finish_head_d;
  logic [NumModules*StatusBits-1:0] mod_status_q, mod_status_d;
  // The executing instruction and its token effects.
  logic [InsnWidth-1:0] insn_q, insn_d;
  logic [1:0] word_q, word_d;
  logic [NumTokenQueues-1:0] pops_q, pops_d, pushes_q, pushes_d;
  // LOAD and STORE walks.
  logic [WalkW-1:0] y_q, y_d, x_q, x_d;
  logic [ElemWordW-1:0] w_q, w_d;
  logic [SramW-1:0] sram_q, sram_d;
  // DRAM byte addresses of the walk's row and element, DramAddrWidth bits and a sticky bit above
  // them set once the true address passes the memory: it reaches the bus as an address the
  // memory refuses (a fault), never as one wrapped back into it.
  logic [DramAddrWidth:0] row_addr_q, row_addr_d, col_addr_q, col_addr_d;
  logic [Bus-1:0] data_q, data_d;
  // GEMM and ALU loops: check field, loop indices, offsets (outer, and outer plus inner), the
  // current micro-op's entries, lane and reduction indices, the running sum.
  logic [1:0] field_q, field_d;
  // The largest loop offset, CheckW bits and a sticky bit above set when it reaches past them
  // (then every entry is past its buffer).
  logic [CheckW:0] loop_max_q, loop_max_d;
  // (The loop position has its own register block below, driven by a few events, so each
  // register sees one adder and a reset rather than a multiplexer per state that touches it.)
  logic [IterW-1:0] i_q, j_q;
  logic [UopAddrW:0] u_q;
  logic [AccIdxW-1:0] dst_off_i_q, dst_off_q, dst_q, dst_d;
  logic [InpIdxW-1:0] src_off_i_q, src_off_q, src_q, src_d;
  logic [WgtIdxW-1:0] wgt_off_i_q, wgt_off_q, wgt_q, wgt_d;
  // Loop events: restart the micro-ops (check or execution), the next micro-op of the check, the
  // whole loop from the start, a micro-op done (its lanes all written).
  logic uops_from_bgn, uop_check_next, loop_start, uop_done, last_uop, last_j, last_i;
  logic [LaneW-1:0] lane_q, lane_d;
  logic [$clog2(tessera_config_pkg::BLOCK_IN)+1-1:0] k_q, k_d;
  logic [31:0] sum_q, sum_d;
  // Run outcome pulses for the host registers.
  logic finish_q, finish_d, fault_q, fault_d;
  logic [tessera_host_pkg::FaultCauseBits-1:0] fault_cause_q, fault_cause_d;
  logic [IdxW-1:0] fault_insn_q, fault_insn_d;
  logic [UopAddrW+2:0] fault_info_q, fault_info_d;
  logic gemm_uop, alu_uop, retire;
  // The DRAM address: instruction words from the stream base, LOAD and STORE words from the
  // element's address, through one adder.
  logic addr_from_col;
  logic [31:0] addr_offset;
  assign mem_addr_o = (addr_from_col ? 32'(col_addr_q) : insn_addr_i) + addr_offset;
`ifndef SYNTHESIS
  // With the sticky bit inside the bus address, a refused address stays refused.
  initial assert (DramAddrWidth < 32)
    else $fatal(1, "tessera_pico_core: DramAddrWidth must leave the sticky bit room below bit 32");
`endif
  // Updates of the drained queue's slices (and of fetch's queue), applied after the state case.
  logic fetch_size_inc, cur_size_dec, cur_pos_inc, cur_status_we;
  logic [NumTokenQueues-1:0] tok_pop, tok_push;
  status_t cur_status;

  // Views of the executing instruction in its three formats; each format leaves bits unused, and
  // the micro-op word has spare high bits.
  /* verilator lint_off UNUSEDSIGNAL */
  tessera_config_pkg::insn_mem_t mem_insn;
  tessera_config_pkg::insn_gemm_t gemm_insn;
  tessera_config_pkg::insn_alu_t alu_insn;
  tessera_config_pkg::uop_t uop;
  /* verilator lint_on UNUSEDSIGNAL */
  assign mem_insn = insn_q;
  assign gemm_insn = insn_q;
  assign alu_insn = insn_q;
  tessera_config_pkg::opcode_e opcode;
  assign opcode = mem_insn.opcode;
  logic is_gemm;
  assign is_gemm = opcode == tessera_config_pkg::OPCODE_GEMM;
  logic gemm_reset;
  assign gemm_reset = is_gemm && gemm_insn.reset;
  assign uop = uop_rdata[tessera_config_pkg::UOP_WIDTH-1:0];


  // Loop fields common to GEMM and ALU (their formats agree on them), chosen by check field.
  logic [IterW-1:0] iter_out, iter_in;
  logic [UopAddrW-1:0] uop_bgn;
  logic [UopAddrW:0] uop_end;
  logic [31:0] factor_out, factor_in;
  always_comb begin
    iter_out = is_gemm ? IterW'(gemm_insn.iter_out) : IterW'(alu_insn.iter_out);
    iter_in = is_gemm ? IterW'(gemm_insn.iter_in) : IterW'(alu_insn.iter_in);
    uop_bgn = is_gemm ? UopAddrW'(gemm_insn.uop_bgn) : UopAddrW'(alu_insn.uop_bgn);
    uop_end = is_gemm ? (UopAddrW + 1)'(gemm_insn.uop_end) : (UopAddrW + 1)'(alu_insn.uop_end);
    unique case (field_q)
      FieldDst: begin
        factor_out = is_gemm ? 32'(gemm_insn.dst_factor_out) : 32'(alu_insn.dst_factor_out);
        factor_in = is_gemm ? 32'(gemm_insn.dst_factor_in) : 32'(alu_insn.dst_factor_in);
      end
      FieldSrc: begin
        factor_out = is_gemm ? 32'(gemm_insn.src_factor_out) : 32'(alu_insn.src_factor_out);
        factor_in = is_gemm ? 32'(gemm_insn.src_factor_in) : 32'(alu_insn.src_factor_in);
      end
      default: begin
        factor_out = 32'(gemm_insn.wgt_factor_out);
        factor_in = 32'(gemm_insn.wgt_factor_in);
      end
    endcase
  end

  logic [CheckW:0] sum_max;
  assign sum_max = (CheckW + 1)'(loop_max_q[CheckW-1:0]) + (CheckW + 1)'(ser_result[CheckW-1:0]);

  // The micro-op field under check and the depth it must stay below.
  logic [31:0] check_field, check_depth;
  always_comb begin
    unique case (field_q)
      FieldDst: begin
        check_field = 32'(uop.dst);
        check_depth = tessera_config_pkg::ACC_BUFF_DEPTH;
      end
      FieldSrc: begin
        check_field = 32'(uop.src);
        check_depth = is_gemm ? tessera_config_pkg::INP_BUFF_DEPTH : tessera_config_pkg::ACC_BUFF_DEPTH;
      end
      default: begin
        check_field = 32'(uop.wgt);
        check_depth = tessera_config_pkg::WGT_BUFF_DEPTH;
      end
    endcase
  end

  // LOAD geometry by memory type: log2 of the DRAM element bytes and the buffer words an element fills.
  tessera_config_pkg::mem_id_e load_mem;
  assign load_mem = mem_insn.memory_type;
  logic [2:0] load_log_bytes;
  logic [ElemWordW-1:0] load_words;
  always_comb begin
    unique case (load_mem)
      tessera_config_pkg::MEM_ID_UOP: begin load_log_bytes = LogUopBytes; load_words = ElemWordW'(1); end
      tessera_config_pkg::MEM_ID_INP: begin load_log_bytes = LogInpBytes; load_words = ElemWordW'(InpWords); end
      tessera_config_pkg::MEM_ID_WGT: begin load_log_bytes = LogWgtBytes; load_words = ElemWordW'(WgtWords); end
      tessera_config_pkg::MEM_ID_ACC_8BIT: begin load_log_bytes = LogAcc8Bytes; load_words = ElemWordW'(Lanes); end
      default: begin load_log_bytes = LogAccBytes; load_words = ElemWordW'(Lanes); end
    endcase
  end
  logic load_is_acc8;
  assign load_is_acc8 = load_mem == tessera_config_pkg::MEM_ID_ACC_8BIT;

  // Where the walk is: padding or data, and the last column, row and word.
  logic [WalkW-1:0] width, height;
  logic pad_row, pad_col, pad, last_word, last_col, last_row;
  always_comb begin
    width = WalkW'(mem_insn.x_pad_0) + WalkW'(mem_insn.x_size) + WalkW'(mem_insn.x_pad_1);
    height = WalkW'(mem_insn.y_pad_0) + WalkW'(mem_insn.y_size) + WalkW'(mem_insn.y_pad_1);
    pad_row = y_q < WalkW'(mem_insn.y_pad_0) || y_q >= WalkW'(mem_insn.y_pad_0) + WalkW'(mem_insn.y_size);
    pad_col = x_q < WalkW'(mem_insn.x_pad_0) || x_q >= WalkW'(mem_insn.x_pad_0) + WalkW'(mem_insn.x_size);
    pad = pad_row || pad_col;
    last_word = w_q == load_words - 1'b1;
    last_col = x_q == width - 1'b1;
    last_row = y_q == height - 1'b1;
  end
  logic [31:0] stride_bytes;
  assign stride_bytes = 32'(mem_insn.x_stride) << (opcode == tessera_config_pkg::OPCODE_STORE ? LogOutBytes : load_log_bytes);

  // The word a LOAD writes to its buffer: the DRAM word, a sign-extended byte of it (ACC8), or zero.
  logic [Bus-1:0] load_word;
  always_comb begin
    if (pad) load_word = '0;
    else if (load_is_acc8) load_word = Bus'($signed(byte_of(data_q, 32'(w_q))));
    else load_word = data_q;
  end

  // GEMM: the lane's batch row and output column, the input and weight bytes of reduction step k.
  logic [LaneW-1:0] lane_b, lane_o;
  assign lane_b = lane_q >> $clog2(tessera_config_pkg::BLOCK_OUT);
  assign lane_o = lane_q & LaneW'(tessera_config_pkg::BLOCK_OUT - 1);
  logic signed [15:0] product;
  assign product = byte_of(inp_rdata, 32'(lane_b) * tessera_config_pkg::BLOCK_IN + 32'(k_q)) *
                   byte_of(wgt_rdata, 32'(lane_o) * tessera_config_pkg::BLOCK_IN + 32'(k_q));
  // The reduction step whose operands are addressed this cycle: the first on entering a lane.
  logic [31:0] k_addr;
  assign k_addr = state_q == StGemmMac ? 32'(k_q) + 1 : 0;

  // ALU operands and result of the one-cycle operations.
  logic [31:0] alu_b, alu_simple;
  logic alu_serial;
  always_comb begin
    alu_b = alu_insn.use_imm ? 32'($signed(alu_insn.imm)) : acc_rdata;
    alu_serial = alu_insn.alu_opcode == tessera_config_pkg::ALU_OPCODE_SHR || alu_insn.alu_opcode == tessera_config_pkg::ALU_OPCODE_MUL;
    unique case (alu_insn.alu_opcode)
      tessera_config_pkg::ALU_OPCODE_MIN: alu_simple = $signed(sum_q) < $signed(alu_b) ? sum_q : alu_b;
      tessera_config_pkg::ALU_OPCODE_MAX: alu_simple = $signed(sum_q) < $signed(alu_b) ? alu_b : sum_q;
      tessera_config_pkg::ALU_OPCODE_ADD: alu_simple = sum_q + alu_b;
      default: alu_simple = sum_q;  // validation admits no other opcode
    endcase
  end

  // The first word of an instruction being read (fetch's, or the head candidate's in StHead),
  // through the memory format: the opcode and memory type are in it, the rest is not.
  /* verilator lint_off UNUSEDSIGNAL */
  tessera_config_pkg::insn_mem_t head_insn;
  /* verilator lint_on UNUSEDSIGNAL */
  assign head_insn = InsnWidth'(mem_rdata_i);

  // The head candidate read in StHead: its token effects and whether the tokens let it issue
  // (the wait shown is the first blocking pop, else the first blocking push, in queue order).
  logic [NumTokenQueues-1:0] head_pops, head_pushes;
  logic head_blocked;
  status_t head_wait;
  always_comb begin
    head_pops = pops_of(queue_q, mem_rdata_i);
    head_pushes = pushes_of(queue_q, mem_rdata_i);
    head_blocked = 1'b0;
    head_wait = status(tessera_host_pkg::StateBusy, 0);
    for (int t = NumTokenQueues - 1; t >= 0; t--)
      if (head_pushes[t] && 32'(tokens_q[(t) * TokenW +: TokenW]) >= TokenCap) begin
        head_blocked = 1'b1;
        head_wait = status(tessera_host_pkg::StateWaitPush, t);
      end
    for (int t = NumTokenQueues - 1; t >= 0; t--)
      if (head_pops[t] && tokens_q[(t) * TokenW +: TokenW] == '0) begin
        head_blocked = 1'b1;
        head_wait = status(tessera_host_pkg::StateWaitPop, t);
      end
  end

  // The instruction queue of the instruction whose first word is being read (VTA's fetch rules):
  // the one fetch dispatches, or the candidate for the head in StHead.
  logic [1:0] fetch_queue;
  always_comb begin
    if (head_insn.opcode == tessera_config_pkg::OPCODE_STORE) fetch_queue = 2'(QStore);
    else if (head_insn.opcode == tessera_config_pkg::OPCODE_LOAD &&
             (head_insn.memory_type == tessera_config_pkg::MEM_ID_INP ||
              head_insn.memory_type == tessera_config_pkg::MEM_ID_WGT))
      fetch_queue = 2'(QLoad);
    else fetch_queue = 2'(QCompute);
  end
  // The stream position and count of the queue being drained (queue q's status word is module
  // q + 1), and the count of the queue of the instruction fetch reads. (Selected by comparison with
  // each constant index: Yosys builds a shifter for a computed one.)
  logic [IdxW-1:0] cur_pos;
  logic [QueueW-1:0] cur_size, fetch_size;  // fetch_size: of the queue fetch's instruction goes to
  always_comb begin
    cur_pos = '0;
    cur_size = '0;
    fetch_size = '0;
    for (int q = 0; q < NumInsnQueues; q++) begin
      if (queue_q == 2'(q)) begin
        cur_pos = pos_q[q * IdxW +: IdxW];
        cur_size = size_q[q * QueueW +: QueueW];
      end
      if (fetch_queue == 2'(q)) fetch_size = size_q[q * QueueW +: QueueW];
    end
  end


  // ------------------------------------------------------------ next state
  always_comb begin
    state_d = state_q;
    fetch_pc_d = fetch_pc_q;
    pos_d = pos_q;
    size_d = size_q;
    tokens_d = tokens_q;
    queue_d = queue_q;
    moved_d = moved_q;
    finish_head_d = finish_head_q;
    mod_status_d = mod_status_q;
    insn_d = insn_q;
    word_d = word_q;
    pushes_d = pushes_q;
    pops_d = pops_q;
    y_d = y_q;
    x_d = x_q;
    w_d = w_q;
    sram_d = sram_q;
    row_addr_d = row_addr_q;
    col_addr_d = col_addr_q;
    data_d = data_q;
    field_d = field_q;
    loop_max_d = loop_max_q;
    uops_from_bgn = 1'b0;
    uop_check_next = 1'b0;
    loop_start = 1'b0;
    dst_d = dst_q;
    src_d = src_q;
    wgt_d = wgt_q;
    lane_d = lane_q;
    k_d = k_q;
    sum_d = sum_q;
    finish_d = 1'b0;
    fault_d = 1'b0;
    fault_cause_d = fault_cause_q;
    fault_insn_d = fault_insn_q;
    fault_info_d = fault_info_q;
    gemm_uop = 1'b0;
    alu_uop = 1'b0;
    retire = 1'b0;
    fetch_size_inc = 1'b0;
    tok_pop = '0;
    tok_push = '0;
    cur_size_dec = 1'b0;
    cur_pos_inc = 1'b0;
    cur_status_we = 1'b0;
    cur_status = status(tessera_host_pkg::StateBusy, 0);

    mem_req_o = 1'b0;
    mem_we_o = 1'b0;
    addr_from_col = 1'b0;
    addr_offset = 32'(fetch_pc_q) << LogInsnBytes;
    mem_wdata_o = data_q;
    uop_we = 1'b0;
    inp_we = 1'b0;
    wgt_we = 1'b0;
    acc_we = 1'b0;
    buf_wdata = load_word;
    uop_addr = UopAddrW'(sram_q);
    inp_addr = InpAddrW'((32'(sram_q) << LogInpWords) + 32'(w_q));
    wgt_addr = WgtAddrW'((32'(sram_q) << LogWgtWords) + 32'(w_q));
    acc_addr = AccAddrW'((32'(sram_q) << LogLanes) + 32'(w_q));
    ser_start = 1'b0;
    ser_mul = 1'b1;
    ser_a = 32'(iter_out) - 1;
    ser_b = factor_out;

    unique case (state_q)
      StIdle, StStuck: begin
        if (start_i) begin
          fetch_pc_d = '0;
          for (int q = 0; q < NumInsnQueues; q++) begin
            pos_d[(q) * IdxW +: IdxW] = '0;
            size_d[(q) * QueueW +: QueueW] = '0;
          end
          for (int t = 0; t < NumTokenQueues; t++) tokens_d[(t) * TokenW +: TokenW] = '0;
          for (int m = 0; m < NumModules; m++) begin
            mod_status_d[(m) * StatusBits +: StatusBits] = status(tessera_host_pkg::StateIdle, 0);
          end
          mod_status_d[ModFetch * StatusBits +: StatusBits] = status(tessera_host_pkg::StateBusy, 0);
          moved_d = 1'b0;
          state_d = StFetch;
        end
      end

      // Fetch dispatches in program order until the next instruction's queue is full.
      StFetch: begin
        if (32'(fetch_pc_q) == insn_count_i) begin
          mod_status_d[ModFetch * StatusBits +: StatusBits] = status(tessera_host_pkg::StateAllDispatched, 0);
          queue_d = 2'(QLoad);
          state_d = StDrain;
        end else begin
          mem_req_o = 1'b1;
          if (mem_done_i) begin
            if (mem_error_i) begin
              fault_d = 1'b1;
              state_d = StIdle;
            end else if (32'(fetch_size) < InsnCap) begin
              fetch_size_inc = 1'b1;
              fetch_pc_d = fetch_pc_q + 1'b1;
              moved_d = 1'b1;
              mod_status_d[ModFetch * StatusBits +: StatusBits] = status(tessera_host_pkg::StateBusy, 0);
            end else begin
              mod_status_d[ModFetch * StatusBits +: StatusBits] =
                  status(tessera_host_pkg::StateFetchQueueFull, 32'(fetch_queue));
              queue_d = 2'(QLoad);
              state_d = StDrain;
            end
          end
        end
      end

      // Each queue in fsim's order (load, store, compute) issues its head while it can.
      StDrain: begin
        if (queue_q == 2'(QCompute)) finish_head_d = 1'b0;
        if (cur_size == '0) begin
          cur_status_we = 1'b1;
          cur_status = status(tessera_host_pkg::StateIdle, 0);
          state_d = StNext;
        end else begin
          state_d = StHead;
        end
      end

      // The head is the first instruction of the queue at or after its position.
      StHead: begin
        mem_req_o = 1'b1;
        addr_offset = 32'(cur_pos) << LogInsnBytes;
        if (mem_done_i) begin
          if (mem_error_i) begin
            fault_d = 1'b1;
            state_d = StIdle;
          end else if (fetch_queue != queue_q) begin
            cur_pos_inc = 1'b1;
          end else begin
            insn_d = {mem_rdata_i, insn_q[InsnWidth-1:Bus]};
            if (head_blocked) begin
              cur_status_we = 1'b1;
              cur_status = head_wait;
              state_d = StNext;
            end else if (head_insn.opcode == tessera_config_pkg::OPCODE_FINISH) begin
              // FINISH, its tokens there, waits until nothing else can move; it then pops and
              // pushes as its flags say (fsim issues it so).
              finish_head_d = 1'b1;
              pops_d = head_pops;
              pushes_d = head_pushes;
              cur_status_we = 1'b1;
              cur_status = status(tessera_host_pkg::StateBusy, 0);
              state_d = StNext;
            end else begin
              for (int t = 0; t < NumTokenQueues; t++)
                tok_pop[t] = head_pops[t];
              pushes_d = head_pushes;
              cur_status_we = 1'b1;
              cur_status = status(tessera_host_pkg::StateBusy, 0);
              word_d = 2'd1;
              state_d = StInsn;
            end
          end
        end
      end

      StInsn: begin
        mem_req_o = 1'b1;
        addr_offset = (32'(cur_pos) << LogInsnBytes) + (32'(word_q) << LogBusBytes);
        if (mem_done_i) begin
          if (mem_error_i) begin
            fault_d = 1'b1;
            state_d = StIdle;
          end else begin
            // Words arrive in order and shift in from the top: after the fourth, word 0 is lowest.
            insn_d = {mem_rdata_i, insn_q[InsnWidth-1:Bus]};
            word_d = word_q + 1'b1;
            if (word_q == 2'(InsnWords - 1)) state_d = StExec;
          end
        end
      end

      StExec: begin
        y_d = '0;
        x_d = '0;
        w_d = '0;
        lane_d = '0;
        sram_d = mem_insn.sram_base;
        field_d = FieldDst;
        state_d = StRetire;
        if (opcode == tessera_config_pkg::OPCODE_LOAD) begin
          row_addr_d = add_addr('0, 36'(mem_insn.dram_base) << load_log_bytes);
          col_addr_d = add_addr('0, 36'(mem_insn.dram_base) << load_log_bytes);
          // A LOAD without columns is a no-op, its padding included (fsim's isNop).
          if (mem_insn.x_size != '0) state_d = StLoadElem;
        end else if (opcode == tessera_config_pkg::OPCODE_STORE) begin
          row_addr_d = add_addr('0, 36'(mem_insn.dram_base) << LogOutBytes);
          col_addr_d = add_addr('0, 36'(mem_insn.dram_base) << LogOutBytes);
          if (mem_insn.x_size != '0 && mem_insn.y_size != '0) state_d = StStoreRead;
        end else if (opcode == tessera_config_pkg::OPCODE_GEMM || opcode == tessera_config_pkg::OPCODE_ALU) begin
          if (iter_out != '0 && iter_in != '0 && (UopAddrW + 1)'(uop_bgn) < uop_end) state_d = StCheckStart;
        end
      end

      // ---- LOAD: rows of (pad, data, pad) elements, each element its buffer words.
      StLoadElem: begin
        // ACC8 takes BusBytes accumulator lanes from each DRAM word.
        if (pad || (load_is_acc8 && (32'(w_q) % BytesPerWord) != 0)) state_d = StLoadWrite;
        else state_d = StLoadRead;
      end
      StLoadRead: begin
        mem_req_o = 1'b1;
        addr_from_col = 1'b1;
        addr_offset = load_is_acc8 ? (32'(w_q) >> LogBytesPerWord) << LogBusBytes : 32'(w_q) << LogBusBytes;
        if (mem_done_i) begin
          data_d = mem_rdata_i;
          if (mem_error_i) begin
            fault_d = 1'b1;
            state_d = StIdle;
          end else begin
            state_d = StLoadWrite;
          end
        end
      end
      StLoadWrite: begin
        unique case (load_mem)
          tessera_config_pkg::MEM_ID_UOP: uop_we = 1'b1;
          tessera_config_pkg::MEM_ID_INP: inp_we = 1'b1;
          tessera_config_pkg::MEM_ID_WGT: wgt_we = 1'b1;
          tessera_config_pkg::MEM_ID_ACC, tessera_config_pkg::MEM_ID_ACC_8BIT: acc_we = 1'b1;
          default: ;
        endcase
        state_d = StLoadElem;
        w_d = w_q + 1'b1;
        if (last_word) begin
          w_d = '0;
          sram_d = sram_q + 1'b1;
          if (!pad) col_addr_d = add_addr(col_addr_q, 36'd1 << load_log_bytes);
          x_d = x_q + 1'b1;
          if (last_col) begin
            x_d = '0;
            y_d = y_q + 1'b1;
            if (!pad_row) begin
              row_addr_d = add_addr(row_addr_q, 36'(stride_bytes));
              col_addr_d = add_addr(row_addr_q, 36'(stride_bytes));
            end
            if (last_row) state_d = StRetire;
          end
        end
      end

      // ---- STORE: each element's lanes narrowed to bytes, a bus word written per BusBytes lanes.
      StStoreRead: begin
        acc_addr = AccAddrW'((32'(sram_q) << LogLanes) + 32'(lane_q));
        state_d = StStoreByte;
      end
      StStoreByte: begin
        for (int b = 0; b < OutPerWord; b++)
          if (LogOutPerWord'(lane_q) == LogOutPerWord'(b)) data_d[b * OutWidth +: OutWidth] = acc_rdata[OutWidth-1:0];
        if (LogOutPerWord'(lane_q) == LogOutPerWord'(OutPerWord - 1)) begin
          state_d = StStoreWrite;
        end else begin
          lane_d = lane_q + 1'b1;
          state_d = StStoreRead;
        end
      end
      StStoreWrite: begin
        mem_req_o = 1'b1;
        mem_we_o = 1'b1;
        addr_from_col = 1'b1;
        addr_offset = (32'(lane_q) >> LogOutPerWord) << LogBusBytes;
        if (mem_done_i) begin
          if (mem_error_i) begin
            fault_d = 1'b1;
            state_d = StIdle;
          end else begin
            state_d = StStoreRead;
            lane_d = lane_q + 1'b1;
            if (32'(lane_q) == Lanes - 1) begin
              lane_d = '0;
              sram_d = sram_q + 1'b1;
              col_addr_d = add_addr(col_addr_q, 36'(tessera_config_pkg::OUT_ELEM_BYTES));
              x_d = x_q + 1'b1;
              if (x_q == WalkW'(mem_insn.x_size) - 1'b1) begin
                x_d = '0;
                y_d = y_q + 1'b1;
                row_addr_d = add_addr(row_addr_q, 36'(stride_bytes));
                col_addr_d = add_addr(row_addr_q, 36'(stride_bytes));
                if (y_q == WalkW'(mem_insn.y_size) - 1'b1) state_d = StRetire;
              end
            end
          end
        end
      end

      // ---- GEMM and ALU bounds, before anything is written (fsim's checkLoopIndices): per
      // field, the largest loop offset (iter_out-1)*factor_out + (iter_in-1)*factor_in, then every
      // micro-op's entry plus it against the buffer's depth.
      StCheckStart: begin
        ser_start = 1'b1;
        state_d = StCheckOut;
      end
      StCheckOut: begin
        ser_a = 32'(iter_in) - 1;
        ser_b = factor_in;
        if (!ser_busy) begin
          loop_max_d = {ser_result[31:CheckW] != '0, ser_result[CheckW-1:0]};
          ser_start = 1'b1;
          state_d = StCheckIn;
        end
      end
      StCheckIn: begin
        if (!ser_busy) begin
          loop_max_d = {loop_max_q[CheckW] || ser_result[31:CheckW] != '0 || sum_max[CheckW], sum_max[CheckW-1:0]};
          uops_from_bgn = 1'b1;
          state_d = StCheckUop;
        end
      end
      StCheckUop: begin
        uop_addr = UopAddrW'(u_q);
        state_d = StCheckCmp;
      end
      StCheckCmp: begin
        if (loop_max_q[CheckW] || 32'(check_field) + 32'(loop_max_q[CheckW-1:0]) >= check_depth) begin
          fault_d = 1'b1;
          state_d = StIdle;
        end else if (!last_uop) begin
          uop_check_next = 1'b1;
          state_d = StCheckUop;
        end else if (field_q == FieldDst && !gemm_reset) begin
          field_d = FieldSrc;
          state_d = StCheckStart;
        end else if (field_q == FieldSrc && is_gemm) begin
          field_d = FieldWgt;
          state_d = StCheckStart;
        end else begin
          uops_from_bgn = 1'b1;
          loop_start = 1'b1;
          state_d = StUop;
        end
      end

      // ---- GEMM and ALU loops: for i, for j, for each micro-op, every lane.
      StUop: begin
        uop_addr = UopAddrW'(u_q);
        state_d = StUopData;
      end
      StUopData: begin
        dst_d = AccIdxW'(uop.dst) + dst_off_q;
        src_d = InpIdxW'(uop.src) + src_off_q;
        wgt_d = WgtIdxW'(uop.wgt) + wgt_off_q;
        lane_d = '0;
        k_d = '0;
        gemm_uop = is_gemm;
        alu_uop = !is_gemm;
        state_d = gemm_reset ? StGemmReset : is_gemm ? StGemmLane : StAluDst;
      end

      StGemmReset: begin
        acc_addr = AccAddrW'((32'(dst_q) << LogLanes) + 32'(lane_q));
        acc_we = 1'b1;
        buf_wdata = '0;
        lane_d = lane_q + 1'b1;
      end
      StGemmLane, StGemmMac: begin
        acc_addr = AccAddrW'((32'(dst_q) << LogLanes) + 32'(lane_q));
        inp_addr = InpAddrW'((32'(src_q) << LogInpWords) + ((32'(lane_b) * BlockIn + k_addr) >> LogBytesPerWord));
        wgt_addr = WgtAddrW'((32'(wgt_q) << LogWgtWords) + ((32'(lane_o) * BlockIn + k_addr) >> LogBytesPerWord));
        if (state_q == StGemmLane) begin
          k_d = '0;
          state_d = StGemmMac;
        end else begin
          sum_d = (k_q == '0 ? acc_rdata : sum_q) + 32'(product);
          k_d = k_q + 1'b1;
          if (32'(k_q) == tessera_config_pkg::BLOCK_IN - 1) state_d = StGemmWrite;
        end
      end
      StGemmWrite: begin
        acc_addr = AccAddrW'((32'(dst_q) << LogLanes) + 32'(lane_q));
        acc_we = 1'b1;
        buf_wdata = sum_q;
        lane_d = lane_q + 1'b1;
        state_d = StGemmLane;
      end

      StAluDst: begin
        acc_addr = AccAddrW'((32'(dst_q) << LogLanes) + 32'(lane_q));
        state_d = StAluSrc;
      end
      StAluSrc: begin
        acc_addr = AccAddrW'((32'(src_q) << LogLanes) + 32'(lane_q));
        sum_d = acc_rdata;
        state_d = StAluOp;
      end
      StAluOp: begin
        acc_addr = AccAddrW'((32'(dst_q) << LogLanes) + 32'(lane_q));
        if (alu_serial) begin
          ser_start = 1'b1;
          ser_mul = alu_insn.alu_opcode == tessera_config_pkg::ALU_OPCODE_MUL;
          ser_a = sum_q;
          ser_b = alu_b;
          state_d = StAluWait;
        end else begin
          acc_we = 1'b1;
          buf_wdata = alu_simple;
          lane_d = lane_q + 1'b1;
          state_d = StAluDst;
        end
      end
      StAluWait: begin
        acc_addr = AccAddrW'((32'(dst_q) << LogLanes) + 32'(lane_q));
        if (!ser_busy) begin
          acc_we = 1'b1;
          buf_wdata = ser_result;
          lane_d = lane_q + 1'b1;
          state_d = StAluDst;
        end
      end

      // ---- the instruction is done (or, from StDrain and StHead, the queue cannot issue)
      StRetire: begin
        // An executed instruction: its pushes, its queue slot and its position.
        for (int t = 0; t < NumTokenQueues; t++)
          tok_push[t] = pushes_q[t];
        cur_size_dec = 1'b1;
        cur_pos_inc = 1'b1;
        retire = 1'b1;
        moved_d = 1'b1;
        state_d = StDrain;
      end

      // The queue cannot issue: the next queue, or after compute the end of fsim's pass.
      StNext: begin
        if (queue_q == 2'(QLoad)) begin
          queue_d = 2'(QStore);
          state_d = StDrain;
        end else if (queue_q == 2'(QStore)) begin
          queue_d = 2'(QCompute);
          state_d = StDrain;
        end else if (moved_q) begin
          moved_d = 1'b0;
          state_d = StFetch;
        end else if (finish_head_q) begin
          state_d = StFinish;
        end else begin
          // Nothing can move and no FINISH heads compute: a deadlock, left visible in the status
          // registers as tessera_top leaves it.
          state_d = StStuck;
        end
      end

      StFinish: begin
        tok_pop = pops_q;
        tok_push = pushes_q;
        cur_size_dec = 1'b1;  // compute's queue: StNext reaches StFinish from it
        mod_status_d[tessera_host_pkg::ModuleCompute * StatusBits +: StatusBits] =
            status(tessera_host_pkg::StateHaltedAtFinish, 0);
        retire = 1'b1;
        finish_d = 1'b1;
        state_d = StIdle;
      end

      default: state_d = StIdle;
    endcase

    // A lane loop ends with the micro-op: the next one, or the next inner or outer iteration.
    if (uop_done) state_d = (last_uop && last_j && last_i) ? StRetire : StUop;

    // Counts move by one: an adder per count, fed by its own up and down flags.
    for (int q = 0; q < NumInsnQueues; q++) begin
      if (queue_q == 2'(q)) begin
        if (cur_pos_inc) pos_d[q * IdxW +: IdxW] = cur_pos + 1'b1;
        if (cur_status_we) mod_status_d[(q + 1) * StatusBits +: StatusBits] = cur_status;
      end
      if (fetch_queue == 2'(q) && fetch_size_inc)
        size_d[q * QueueW +: QueueW] = size_q[q * QueueW +: QueueW] + 1'b1;
      else if (queue_q == 2'(q) && cur_size_dec)
        size_d[q * QueueW +: QueueW] = size_q[q * QueueW +: QueueW] - 1'b1;
    end
    for (int t = 0; t < NumTokenQueues; t++) begin
      if (tok_push[t] && !tok_pop[t]) tokens_d[t * TokenW +: TokenW] = tokens_q[t * TokenW +: TokenW] + 1'b1;
      else if (tok_pop[t] && !tok_push[t]) tokens_d[t * TokenW +: TokenW] = tokens_q[t * TokenW +: TokenW] - 1'b1;
    end
    // A fault's cause and details follow from the state that raised it.
    if (fault_d) begin
      fault_insn_d = state_q == StFetch ? fetch_pc_q : cur_pos;
      fault_info_d = (UopAddrW + 3)'(ModFetch);
      fault_cause_d = tessera_host_pkg::FaultDramReadError;
      if (state_q == StLoadRead) fault_info_d = (UopAddrW + 3)'(queue_q) + 1'b1;
      if (state_q == StStoreWrite) begin
        fault_cause_d = tessera_host_pkg::FaultDramWriteError;
        fault_info_d = '0;
      end
      if (state_q == StCheckCmp) begin
        fault_cause_d = tessera_host_pkg::FaultSramIndex;
        fault_info_d = {u_q, field_q};
      end
    end
  end

  // ------------------------------------------------------------ GEMM and ALU loop position
  assign uop_done = (state_q == StGemmReset || state_q == StGemmWrite || (state_q == StAluOp && !alu_serial) ||
                     (state_q == StAluWait && !ser_busy)) && 32'(lane_q) == Lanes - 1;
  assign last_uop = u_q + 1'b1 == uop_end;
  assign last_j = j_q == iter_in - 1'b1;
  assign last_i = i_q == iter_out - 1'b1;
  // The offsets of each operand: outer (i * factor_out) and current (that plus j * factor_in),
  // kept to the operand's index width (a checked index fits it, so the sums are exact).
  logic [AccIdxW-1:0] dst_fo, dst_fi;
  logic [InpIdxW-1:0] src_fo, src_fi;
  logic [WgtIdxW-1:0] wgt_fo, wgt_fi;
  always_comb begin
    dst_fo = AccIdxW'(is_gemm ? 32'(gemm_insn.dst_factor_out) : 32'(alu_insn.dst_factor_out));
    dst_fi = AccIdxW'(is_gemm ? 32'(gemm_insn.dst_factor_in) : 32'(alu_insn.dst_factor_in));
    src_fo = InpIdxW'(is_gemm ? 32'(gemm_insn.src_factor_out) : 32'(alu_insn.src_factor_out));
    src_fi = InpIdxW'(is_gemm ? 32'(gemm_insn.src_factor_in) : 32'(alu_insn.src_factor_in));
    wgt_fo = WgtIdxW'(gemm_insn.wgt_factor_out);
    wgt_fi = WgtIdxW'(gemm_insn.wgt_factor_in);
  end
  always_ff @(posedge clk_i) begin
    if (uops_from_bgn) u_q <= (UopAddrW + 1)'(uop_bgn);
    else if (uop_check_next || (uop_done && !last_uop)) u_q <= u_q + 1'b1;
    else if (uop_done) u_q <= (UopAddrW + 1)'(uop_bgn);
    if (loop_start) begin
      i_q <= '0;
      j_q <= '0;
      dst_off_i_q <= '0;
      dst_off_q <= '0;
      src_off_i_q <= '0;
      src_off_q <= '0;
      wgt_off_i_q <= '0;
      wgt_off_q <= '0;
    end else if (uop_done && last_uop && last_j) begin
      i_q <= i_q + 1'b1;
      j_q <= '0;
      dst_off_i_q <= dst_off_i_q + dst_fo;
      dst_off_q <= dst_off_i_q + dst_fo;
      src_off_i_q <= src_off_i_q + src_fo;
      src_off_q <= src_off_i_q + src_fo;
      wgt_off_i_q <= wgt_off_i_q + wgt_fo;
      wgt_off_q <= wgt_off_i_q + wgt_fo;
    end else if (uop_done && last_uop) begin
      j_q <= j_q + 1'b1;
      dst_off_q <= dst_off_q + dst_fi;
      src_off_q <= src_off_q + src_fi;
      wgt_off_q <= wgt_off_q + wgt_fi;
    end
  end

  // ------------------------------------------------------------ registers
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      state_q <= StIdle;
      fetch_pc_q <= '0;
      for (int q = 0; q < NumInsnQueues; q++) begin
        pos_q[(q) * IdxW +: IdxW] <= '0;
        size_q[(q) * QueueW +: QueueW] <= '0;
      end
      for (int t = 0; t < NumTokenQueues; t++) tokens_q[(t) * TokenW +: TokenW] <= '0;
      for (int m = 0; m < NumModules; m++) begin
        mod_status_q[(m) * StatusBits +: StatusBits] <= status(tessera_host_pkg::StateIdle, 0);
      end
      queue_q <= '0;
      moved_q <= 1'b0;
      finish_head_q <= 1'b0;
      finish_q <= 1'b0;
      fault_q <= 1'b0;
      fault_cause_q <= tessera_host_pkg::FaultNone;
      fault_insn_q <= '0;
      fault_info_q <= '0;
    end else begin
      state_q <= state_d;
      fetch_pc_q <= fetch_pc_d;
      pos_q <= pos_d;
      size_q <= size_d;
      tokens_q <= tokens_d;
      mod_status_q <= mod_status_d;
      queue_q <= queue_d;
      moved_q <= moved_d;
      finish_head_q <= finish_head_d;
      finish_q <= finish_d;
      fault_q <= fault_d;
      fault_cause_q <= fault_cause_d;
      fault_insn_q <= fault_insn_d;
      fault_info_q <= fault_info_d;
    end
  end

  // The datapath registers need no reset: every instruction sets them before use.
  always_ff @(posedge clk_i) begin
    insn_q <= insn_d;
    word_q <= word_d;
    pushes_q <= pushes_d;
    pops_q <= pops_d;
    y_q <= y_d;
    x_q <= x_d;
    w_q <= w_d;
    sram_q <= sram_d;
    row_addr_q <= row_addr_d;
    col_addr_q <= col_addr_d;
    data_q <= data_d;
    field_q <= field_d;
    loop_max_q <= loop_max_d;
    dst_q <= dst_d;
    src_q <= src_d;
    wgt_q <= wgt_d;
    lane_q <= lane_d;
    k_q <= k_d;
    sum_q <= sum_d;
  end

  // ------------------------------------------------------------ outputs
  assign finish_o = finish_q;
  assign fault_o = fault_q;
  assign fault_cause_o = fault_cause_q;
  assign fault_insn_o = 32'(fault_insn_q);
  assign fault_info_o = 32'(fault_info_q);

  always_comb begin
    for (int m = 0; m < NumModules; m++) begin
      status_o[m * StatusBits +: StatusBits] = mod_status_q[(m) * StatusBits +: StatusBits];
      insn_o[m * 32 +: 32] = '0;
    end
    // Fetch's index is how far it has dispatched; a queue's module shows its position, which is
    // its head once drained (the instruction running, blocked, or FINISH, which keeps it).
    insn_o[ModFetch * 32 +: 32] = 32'(fetch_pc_q);
    for (int q = 0; q < NumInsnQueues; q++) insn_o[(q + 1) * 32 +: 32] = 32'(pos_q[q * IdxW +: IdxW]);
    for (int t = 0; t < NumTokenQueues; t++) tokens_o[t * 16 +: 16] = 16'(tokens_q[(t) * TokenW +: TokenW]);
    for (int q = 0; q < NumInsnQueues; q++) queues_o[q * 16 +: 16] = 16'(size_q[(q) * QueueW +: QueueW]);
  end

  always_comb begin
    count_inc_o = '0;
    count_inc_o[tessera_host_pkg::CounterGemmUops] = gemm_uop;
    count_inc_o[tessera_host_pkg::CounterAluUops] = alu_uop;
    count_inc_o[tessera_host_pkg::CounterRetired] = retire;
  end

`ifndef SYNTHESIS
  // The state machine only takes its named states (five bits hold one more encoding).
  StateValid: assert property (@(posedge clk_i) disable iff (!rst_ni)
      state_q inside {StIdle, StFetch, StDrain, StHead, StInsn, StExec, StLoadElem, StLoadRead, StLoadWrite,
                      StStoreRead, StStoreByte, StStoreWrite, StCheckStart, StCheckOut, StCheckIn, StCheckUop,
                      StCheckCmp, StUop, StUopData, StGemmReset, StGemmLane, StGemmMac, StGemmWrite, StAluDst,
                      StAluSrc, StAluOp, StAluWait, StRetire, StNext, StFinish, StStuck})
    else $error("tessera_pico_core: invalid state %0d", state_q);
  // X checks (Ibex's ASSERT_KNOWN): out of reset, the state and every control output is 0 or 1, and
  // the fields a request or a fault carries are too. Verilator simulates two states, where these
  // hold by construction; they speak in a four-state simulator, where an X here would otherwise
  // reach the DRAM port or the host registers unseen.
  StateKnown: assert property (@(posedge clk_i) disable iff (!rst_ni) !$isunknown(state_q))
    else $error("tessera_pico_core: unknown state");
  MemReqKnown: assert property (@(posedge clk_i) disable iff (!rst_ni) !$isunknown(mem_req_o))
    else $error("tessera_pico_core: unknown mem_req_o");
  MemCmdKnown: assert property (@(posedge clk_i) disable iff (!rst_ni)
                                mem_req_o |-> !$isunknown({mem_we_o, mem_addr_o}))
    else $error("tessera_pico_core: a DRAM request with an unknown address or direction");
  MemWdataKnown: assert property (@(posedge clk_i) disable iff (!rst_ni)
                                  mem_req_o && mem_we_o |-> !$isunknown(mem_wdata_o))
    else $error("tessera_pico_core: a DRAM write of unknown data");
  BufferWriteKnown: assert property (@(posedge clk_i) disable iff (!rst_ni)
                                     !$isunknown({uop_we, inp_we, wgt_we, acc_we, ser_start}))
    else $error("tessera_pico_core: unknown buffer write enable or serial-unit start");
  RunOutcomeKnown: assert property (@(posedge clk_i) disable iff (!rst_ni)
                                    !$isunknown({finish_o, fault_o, count_inc_o}))
    else $error("tessera_pico_core: unknown finish, fault or counter increment");
  FaultDetailsKnown: assert property (@(posedge clk_i) disable iff (!rst_ni)
                                      fault_o |-> !$isunknown({fault_cause_o, fault_insn_o, fault_info_o}))
    else $error("tessera_pico_core: a fault with unknown cause, instruction or details");
  StatusKnown: assert property (@(posedge clk_i) disable iff (!rst_ni)
                                !$isunknown({status_o, insn_o, tokens_o, queues_o}))
    else $error("tessera_pico_core: unknown status, index, token or queue word");
`endif

endmodule
