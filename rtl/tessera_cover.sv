// Functional cover points of the accelerator, watching tessera_top's queues, tokens, AXI ports and run state (simulation only).
//
// Each `cover property` names a situation the regression must reach for the design to count as
// exercised (docs/verification.md lists them and why); Verilator counts them under
// --coverage-user (tsim-cov), and `tessera coverage report` shows which were never hit. The
// instructions are decoded where their module takes them from its queue.
`include "tessera_config.svh"

// Simulation only, the whole module: synthesis reads no trace of it (tessera_top instantiates it
// under the same guard).
`ifndef SYNTHESIS
module tessera_cover #(
  parameter int EntryWidth = 32 + tessera_config_pkg::INS_WIDTH,
  parameter int NumInsnQueues = 3,
  parameter int NumTokenQueues = 4,
  parameter int BeatBytes = tessera_config_pkg::BUS_WIDTH / 8
) (
  input logic                                   clk_i,
  input logic                                   rst_ni,
  // Run control.
  input logic                                   start_i,
  input logic                                   running_i,
  input logic                                   finish_i,
  input logic                                   fault_i,
  input logic [tessera_host_pkg::FaultCauseBits-1:0] fault_cause_i,
  // Instruction queues (load, compute, store): pops with their heads, fullness, fetch stalled on them.
  input logic [NumInsnQueues-1:0]               q_pop_i,
  // Only the fields the cover points decode are read: not the instruction indices.
  /* verilator lint_off UNUSEDSIGNAL */
  input logic [NumInsnQueues*EntryWidth-1:0]    q_head_i,
  /* verilator lint_on UNUSEDSIGNAL */
  input logic [NumInsnQueues-1:0]               q_full_i,
  input logic                                   fetch_stall_i,
  // Dependency token queues (l2g, g2l, g2s, s2g).
  input logic [NumTokenQueues-1:0]              tok_empty_i,
  input logic [NumTokenQueues-1:0]              tok_full_i,
  // The AXI4 master's channels.
  input logic                                   arvalid_i,
  input logic                                   arready_i,
  input logic [31:0]                            araddr_i,
  input logic [7:0]                             arlen_i,
  input logic                                   rvalid_i,
  input logic                                   rready_i,
  input logic                                   awvalid_i,
  input logic                                   awready_i,
  input logic [31:0]                            awaddr_i,
  input logic [7:0]                             awlen_i,
  input logic                                   wvalid_i,
  input logic                                   wready_i,
  input logic                                   bvalid_i,
  input logic                                   bready_i
);

  localparam int InsWidth = tessera_config_pkg::INS_WIDTH;
  localparam int QLoad = tessera_host_pkg::InsnQueueLoad;
  localparam int QCompute = tessera_host_pkg::InsnQueueCompute;
  localparam int QStore = tessera_host_pkg::InsnQueueStore;
  localparam int TokL2g = 32'(tessera_host_pkg::QueueL2g);
  localparam int TokG2l = 32'(tessera_host_pkg::QueueG2l);
  localparam int TokG2s = 32'(tessera_host_pkg::QueueG2s);
  localparam int TokS2g = 32'(tessera_host_pkg::QueueS2g);

  // Each queue's head as the three instruction formats, of which the cover points read some fields.
  /* verilator lint_off UNUSEDSIGNAL */
  tessera_config_pkg::insn_mem_t  load_mem, compute_mem, store_mem;
  tessera_config_pkg::insn_gemm_t gemm;
  tessera_config_pkg::insn_alu_t  alu;
  /* verilator lint_on UNUSEDSIGNAL */
  assign load_mem = q_head_i[QLoad * EntryWidth +: InsWidth];
  assign compute_mem = q_head_i[QCompute * EntryWidth +: InsWidth];
  assign store_mem = q_head_i[QStore * EntryWidth +: InsWidth];
  assign gemm = q_head_i[QCompute * EntryWidth +: InsWidth];
  assign alu = q_head_i[QCompute * EntryWidth +: InsWidth];

  logic load_take, compute_take, store_take;
  assign load_take = q_pop_i[QLoad];
  assign compute_take = q_pop_i[QCompute];
  assign store_take = q_pop_i[QStore];
  logic is_gemm, is_alu, is_compute_load;
  assign is_gemm = compute_take && gemm.opcode == tessera_config_pkg::OPCODE_GEMM;
  assign is_alu = compute_take && alu.opcode == tessera_config_pkg::OPCODE_ALU;
  assign is_compute_load = compute_take && compute_mem.opcode == tessera_config_pkg::OPCODE_LOAD;

  // ---------------------------------------------------------------- every opcode on its module
  LoadInp: cover property (@(posedge clk_i) disable iff (!rst_ni)
    load_take && load_mem.opcode == tessera_config_pkg::OPCODE_LOAD && load_mem.memory_type == tessera_config_pkg::MEM_ID_INP);
  LoadWgt: cover property (@(posedge clk_i) disable iff (!rst_ni)
    load_take && load_mem.opcode == tessera_config_pkg::OPCODE_LOAD && load_mem.memory_type == tessera_config_pkg::MEM_ID_WGT);
  LoadUop: cover property (@(posedge clk_i) disable iff (!rst_ni)
    is_compute_load && compute_mem.memory_type == tessera_config_pkg::MEM_ID_UOP);
  LoadAcc: cover property (@(posedge clk_i) disable iff (!rst_ni)
    is_compute_load && compute_mem.memory_type == tessera_config_pkg::MEM_ID_ACC);
  LoadAcc8: cover property (@(posedge clk_i) disable iff (!rst_ni)
    is_compute_load && compute_mem.memory_type == tessera_config_pkg::MEM_ID_ACC_8BIT);
  Gemm: cover property (@(posedge clk_i) disable iff (!rst_ni) is_gemm && !gemm.reset);
  GemmReset: cover property (@(posedge clk_i) disable iff (!rst_ni) is_gemm && gemm.reset);
  AluReset: cover property (@(posedge clk_i) disable iff (!rst_ni) is_alu && alu.reset);
  Finish: cover property (@(posedge clk_i) disable iff (!rst_ni)
    compute_take && gemm.opcode == tessera_config_pkg::OPCODE_FINISH);
  Store: cover property (@(posedge clk_i) disable iff (!rst_ni)
    store_take && store_mem.opcode == tessera_config_pkg::OPCODE_STORE);

  // ---------------------------------------------------------------- every ALU op, immediate and vector
  AluMinImm: cover property (@(posedge clk_i) disable iff (!rst_ni) is_alu && !alu.reset && alu.use_imm == 1'b1 && alu.alu_opcode == tessera_config_pkg::ALU_OPCODE_MIN);
  AluMinVec: cover property (@(posedge clk_i) disable iff (!rst_ni) is_alu && !alu.reset && alu.use_imm == 1'b0 && alu.alu_opcode == tessera_config_pkg::ALU_OPCODE_MIN);
  AluMaxImm: cover property (@(posedge clk_i) disable iff (!rst_ni) is_alu && !alu.reset && alu.use_imm == 1'b1 && alu.alu_opcode == tessera_config_pkg::ALU_OPCODE_MAX);
  AluMaxVec: cover property (@(posedge clk_i) disable iff (!rst_ni) is_alu && !alu.reset && alu.use_imm == 1'b0 && alu.alu_opcode == tessera_config_pkg::ALU_OPCODE_MAX);
  AluAddImm: cover property (@(posedge clk_i) disable iff (!rst_ni) is_alu && !alu.reset && alu.use_imm == 1'b1 && alu.alu_opcode == tessera_config_pkg::ALU_OPCODE_ADD);
  AluAddVec: cover property (@(posedge clk_i) disable iff (!rst_ni) is_alu && !alu.reset && alu.use_imm == 1'b0 && alu.alu_opcode == tessera_config_pkg::ALU_OPCODE_ADD);
  AluShrImm: cover property (@(posedge clk_i) disable iff (!rst_ni) is_alu && !alu.reset && alu.use_imm == 1'b1 && alu.alu_opcode == tessera_config_pkg::ALU_OPCODE_SHR);
  AluShrVec: cover property (@(posedge clk_i) disable iff (!rst_ni) is_alu && !alu.reset && alu.use_imm == 1'b0 && alu.alu_opcode == tessera_config_pkg::ALU_OPCODE_SHR);
  AluMulImm: cover property (@(posedge clk_i) disable iff (!rst_ni) is_alu && !alu.reset && alu.use_imm == 1'b1 && alu.alu_opcode == tessera_config_pkg::ALU_OPCODE_MUL);
  AluMulVec: cover property (@(posedge clk_i) disable iff (!rst_ni) is_alu && !alu.reset && alu.use_imm == 1'b0 && alu.alu_opcode == tessera_config_pkg::ALU_OPCODE_MUL);
  // A negative immediate shifts left: the other half of SHR's datapath.
  AluShrImmNegative: cover property (@(posedge clk_i) disable iff (!rst_ni)
    is_alu && !alu.reset && alu.use_imm == 1'b1 && alu.alu_opcode == tessera_config_pkg::ALU_OPCODE_SHR && alu.imm[15]);

  // ---------------------------------------------------------------- dependency flags, each legal combination per module
  // Load has no previous module and store no next one: their other two flags are invalid. Each
  // combination is a point of its own, named by its flags' bits (Verilator merges the points of a
  // generate loop into one).
  LoadDepsPopNext0PushNext0: cover property (@(posedge clk_i) disable iff (!rst_ni)
    load_take && load_mem.pop_next == 1'b0 && load_mem.push_next == 1'b0);
  LoadDepsPopNext0PushNext1: cover property (@(posedge clk_i) disable iff (!rst_ni)
    load_take && load_mem.pop_next == 1'b0 && load_mem.push_next == 1'b1);
  LoadDepsPopNext1PushNext0: cover property (@(posedge clk_i) disable iff (!rst_ni)
    load_take && load_mem.pop_next == 1'b1 && load_mem.push_next == 1'b0);
  LoadDepsPopNext1PushNext1: cover property (@(posedge clk_i) disable iff (!rst_ni)
    load_take && load_mem.pop_next == 1'b1 && load_mem.push_next == 1'b1);
  ComputeDepsPopPrev0PopNext0PushPrev0PushNext0: cover property (@(posedge clk_i) disable iff (!rst_ni)
    compute_take && {gemm.pop_prev, gemm.pop_next, gemm.push_prev, gemm.push_next} == 4'b0000);
  ComputeDepsPopPrev0PopNext0PushPrev0PushNext1: cover property (@(posedge clk_i) disable iff (!rst_ni)
    compute_take && {gemm.pop_prev, gemm.pop_next, gemm.push_prev, gemm.push_next} == 4'b0001);
  ComputeDepsPopPrev0PopNext0PushPrev1PushNext0: cover property (@(posedge clk_i) disable iff (!rst_ni)
    compute_take && {gemm.pop_prev, gemm.pop_next, gemm.push_prev, gemm.push_next} == 4'b0010);
  ComputeDepsPopPrev0PopNext0PushPrev1PushNext1: cover property (@(posedge clk_i) disable iff (!rst_ni)
    compute_take && {gemm.pop_prev, gemm.pop_next, gemm.push_prev, gemm.push_next} == 4'b0011);
  ComputeDepsPopPrev0PopNext1PushPrev0PushNext0: cover property (@(posedge clk_i) disable iff (!rst_ni)
    compute_take && {gemm.pop_prev, gemm.pop_next, gemm.push_prev, gemm.push_next} == 4'b0100);
  ComputeDepsPopPrev0PopNext1PushPrev0PushNext1: cover property (@(posedge clk_i) disable iff (!rst_ni)
    compute_take && {gemm.pop_prev, gemm.pop_next, gemm.push_prev, gemm.push_next} == 4'b0101);
  ComputeDepsPopPrev0PopNext1PushPrev1PushNext0: cover property (@(posedge clk_i) disable iff (!rst_ni)
    compute_take && {gemm.pop_prev, gemm.pop_next, gemm.push_prev, gemm.push_next} == 4'b0110);
  ComputeDepsPopPrev0PopNext1PushPrev1PushNext1: cover property (@(posedge clk_i) disable iff (!rst_ni)
    compute_take && {gemm.pop_prev, gemm.pop_next, gemm.push_prev, gemm.push_next} == 4'b0111);
  ComputeDepsPopPrev1PopNext0PushPrev0PushNext0: cover property (@(posedge clk_i) disable iff (!rst_ni)
    compute_take && {gemm.pop_prev, gemm.pop_next, gemm.push_prev, gemm.push_next} == 4'b1000);
  ComputeDepsPopPrev1PopNext0PushPrev0PushNext1: cover property (@(posedge clk_i) disable iff (!rst_ni)
    compute_take && {gemm.pop_prev, gemm.pop_next, gemm.push_prev, gemm.push_next} == 4'b1001);
  ComputeDepsPopPrev1PopNext0PushPrev1PushNext0: cover property (@(posedge clk_i) disable iff (!rst_ni)
    compute_take && {gemm.pop_prev, gemm.pop_next, gemm.push_prev, gemm.push_next} == 4'b1010);
  ComputeDepsPopPrev1PopNext0PushPrev1PushNext1: cover property (@(posedge clk_i) disable iff (!rst_ni)
    compute_take && {gemm.pop_prev, gemm.pop_next, gemm.push_prev, gemm.push_next} == 4'b1011);
  ComputeDepsPopPrev1PopNext1PushPrev0PushNext0: cover property (@(posedge clk_i) disable iff (!rst_ni)
    compute_take && {gemm.pop_prev, gemm.pop_next, gemm.push_prev, gemm.push_next} == 4'b1100);
  ComputeDepsPopPrev1PopNext1PushPrev0PushNext1: cover property (@(posedge clk_i) disable iff (!rst_ni)
    compute_take && {gemm.pop_prev, gemm.pop_next, gemm.push_prev, gemm.push_next} == 4'b1101);
  ComputeDepsPopPrev1PopNext1PushPrev1PushNext0: cover property (@(posedge clk_i) disable iff (!rst_ni)
    compute_take && {gemm.pop_prev, gemm.pop_next, gemm.push_prev, gemm.push_next} == 4'b1110);
  ComputeDepsPopPrev1PopNext1PushPrev1PushNext1: cover property (@(posedge clk_i) disable iff (!rst_ni)
    compute_take && {gemm.pop_prev, gemm.pop_next, gemm.push_prev, gemm.push_next} == 4'b1111);
  StoreDepsPopPrev0PushPrev0: cover property (@(posedge clk_i) disable iff (!rst_ni)
    store_take && store_mem.pop_prev == 1'b0 && store_mem.push_prev == 1'b0);
  StoreDepsPopPrev0PushPrev1: cover property (@(posedge clk_i) disable iff (!rst_ni)
    store_take && store_mem.pop_prev == 1'b0 && store_mem.push_prev == 1'b1);
  StoreDepsPopPrev1PushPrev0: cover property (@(posedge clk_i) disable iff (!rst_ni)
    store_take && store_mem.pop_prev == 1'b1 && store_mem.push_prev == 1'b0);
  StoreDepsPopPrev1PushPrev1: cover property (@(posedge clk_i) disable iff (!rst_ni)
    store_take && store_mem.pop_prev == 1'b1 && store_mem.push_prev == 1'b1);

  // ---------------------------------------------------------------- micro-op loops
  GemmOneIteration: cover property (@(posedge clk_i) disable iff (!rst_ni)
    is_gemm && 32'(gemm.iter_out) == 32'd1 && 32'(gemm.iter_in) == 32'd1 && 32'(gemm.uop_end) - 32'(gemm.uop_bgn) == 32'd1);
  GemmOuterLoop: cover property (@(posedge clk_i) disable iff (!rst_ni) is_gemm && 32'(gemm.iter_out) > 32'd1);
  GemmInnerLoop: cover property (@(posedge clk_i) disable iff (!rst_ni) is_gemm && 32'(gemm.iter_in) > 32'd1);
  GemmManyUops: cover property (@(posedge clk_i) disable iff (!rst_ni) is_gemm && 32'(gemm.uop_end) - 32'(gemm.uop_bgn) > 32'd1);
  AluOneIteration: cover property (@(posedge clk_i) disable iff (!rst_ni)
    is_alu && 32'(alu.iter_out) == 32'd1 && 32'(alu.iter_in) == 32'd1 && 32'(alu.uop_end) - 32'(alu.uop_bgn) == 32'd1);
  AluOuterLoop: cover property (@(posedge clk_i) disable iff (!rst_ni) is_alu && 32'(alu.iter_out) > 32'd1);
  AluInnerLoop: cover property (@(posedge clk_i) disable iff (!rst_ni) is_alu && 32'(alu.iter_in) > 32'd1);
  AluManyUops: cover property (@(posedge clk_i) disable iff (!rst_ni) is_alu && 32'(alu.uop_end) - 32'(alu.uop_bgn) > 32'd1);

  // ---------------------------------------------------------------- padding on each side of a 2-D load
  LoadPadTop: cover property (@(posedge clk_i) disable iff (!rst_ni) load_take && load_mem.y_pad_0 != '0);
  LoadPadBottom: cover property (@(posedge clk_i) disable iff (!rst_ni) load_take && load_mem.y_pad_1 != '0);
  LoadPadLeft: cover property (@(posedge clk_i) disable iff (!rst_ni) load_take && load_mem.x_pad_0 != '0);
  LoadPadRight: cover property (@(posedge clk_i) disable iff (!rst_ni) load_take && load_mem.x_pad_1 != '0);
  LoadAccPadded: cover property (@(posedge clk_i) disable iff (!rst_ni)
    is_compute_load && compute_mem.memory_type != tessera_config_pkg::MEM_ID_UOP &&
    {compute_mem.y_pad_0, compute_mem.y_pad_1, compute_mem.x_pad_0, compute_mem.x_pad_1} != '0);
  LoadStrided: cover property (@(posedge clk_i) disable iff (!rst_ni)
    load_take && 32'(load_mem.y_size) > 32'd1 && load_mem.x_stride > load_mem.x_size);
  StoreStrided: cover property (@(posedge clk_i) disable iff (!rst_ni)
    store_take && 32'(store_mem.y_size) > 32'd1 && store_mem.x_stride > store_mem.x_size);

  // ---------------------------------------------------------------- queues full and drained
  // Fetch holds an instruction for a full queue: back-pressure.
  LoadQueueFull: cover property (@(posedge clk_i) disable iff (!rst_ni) q_full_i[QLoad] && fetch_stall_i);
  ComputeQueueFull: cover property (@(posedge clk_i) disable iff (!rst_ni) q_full_i[QCompute] && fetch_stall_i);
  StoreQueueFull: cover property (@(posedge clk_i) disable iff (!rst_ni) q_full_i[QStore] && fetch_stall_i);
  // Each token queue full, and emptied again by its consumer during a run.
  L2gFull: cover property (@(posedge clk_i) disable iff (!rst_ni) tok_full_i[TokL2g]);
  L2gDrained: cover property (@(posedge clk_i) disable iff (!rst_ni || start_i) running_i && $rose(tok_empty_i[TokL2g]));
  G2lFull: cover property (@(posedge clk_i) disable iff (!rst_ni) tok_full_i[TokG2l]);
  G2lDrained: cover property (@(posedge clk_i) disable iff (!rst_ni || start_i) running_i && $rose(tok_empty_i[TokG2l]));
  G2sFull: cover property (@(posedge clk_i) disable iff (!rst_ni) tok_full_i[TokG2s]);
  G2sDrained: cover property (@(posedge clk_i) disable iff (!rst_ni || start_i) running_i && $rose(tok_empty_i[TokG2s]));
  S2gFull: cover property (@(posedge clk_i) disable iff (!rst_ni) tok_full_i[TokS2g]);
  S2gDrained: cover property (@(posedge clk_i) disable iff (!rst_ni || start_i) running_i && $rose(tok_empty_i[TokS2g]));

  // ---------------------------------------------------------------- AXI: stalls on each channel, bursts to a 4 KiB boundary
  ArStall: cover property (@(posedge clk_i) disable iff (!rst_ni) arvalid_i && !arready_i);
  RStall: cover property (@(posedge clk_i) disable iff (!rst_ni) rvalid_i && !rready_i);
  AwStall: cover property (@(posedge clk_i) disable iff (!rst_ni) awvalid_i && !awready_i);
  WStall: cover property (@(posedge clk_i) disable iff (!rst_ni) wvalid_i && !wready_i);
  BStall: cover property (@(posedge clk_i) disable iff (!rst_ni) bvalid_i && !bready_i);
  // A burst's end address; only its offset in a 4 KiB page matters.
  /* verilator lint_off UNUSEDSIGNAL */
  logic [31:0] ar_end, aw_end;
  /* verilator lint_on UNUSEDSIGNAL */
  assign ar_end = araddr_i + (32'(arlen_i) + 32'd1) * 32'(BeatBytes);
  assign aw_end = awaddr_i + (32'(awlen_i) + 32'd1) * 32'(BeatBytes);
  ReadBurstTo4KiB: cover property (@(posedge clk_i) disable iff (!rst_ni) arvalid_i && arready_i && ar_end[11:0] == 12'd0);
  WriteBurstTo4KiB: cover property (@(posedge clk_i) disable iff (!rst_ni) awvalid_i && awready_i && aw_end[11:0] == 12'd0);
  ReadBurstLong: cover property (@(posedge clk_i) disable iff (!rst_ni) arvalid_i && arready_i && arlen_i >= 8'd15);
  WriteBurstLong: cover property (@(posedge clk_i) disable iff (!rst_ni) awvalid_i && awready_i && awlen_i >= 8'd15);

  // ---------------------------------------------------------------- faults and runs
  FaultSramIndex: cover property (@(posedge clk_i) disable iff (!rst_ni)
    fault_i && running_i && fault_cause_i == tessera_host_pkg::FaultSramIndex);
  FaultDramRead: cover property (@(posedge clk_i) disable iff (!rst_ni)
    fault_i && running_i && fault_cause_i == tessera_host_pkg::FaultDramReadError);
  FaultDramWrite: cover property (@(posedge clk_i) disable iff (!rst_ni)
    fault_i && running_i && fault_cause_i == tessera_host_pkg::FaultDramWriteError);
  // A run that starts where the last one ended (after FINISH or a fault), with no reset between.
  logic ended_q;
  always_ff @(posedge clk_i) begin
    if (!rst_ni) ended_q <= 1'b0;
    else if (running_i && (finish_i || fault_i)) ended_q <= 1'b1;
  end
  BackToBackRuns: cover property (@(posedge clk_i) disable iff (!rst_ni) start_i && ended_q);

endmodule
`endif
