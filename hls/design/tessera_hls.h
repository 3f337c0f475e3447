// The HLS accelerator's interface: types from the generated hls_config.h, stage state, and the four stage functions.
#ifndef TESSERA_HLS_DESIGN_H
#define TESSERA_HLS_DESIGN_H

// Include order matters: hls_config.h (VTA_* / TESSERA_* macros of one config) must be on the
// include path (-I build/generated/<config>). Everything is parameterized by it; nothing is restated.
#include <ap_int.h>
#include <hls_stream.h>
#include <stdint.h>

#include "hls_config.h"

// C simulation compiles this design once per config; each copy lives in its own namespace so they
// link into one library. A vendor tool compiles one config and needs no namespace.
#ifndef TESSERA_HLS_NS
#define TESSERA_HLS_NS tessera_hls_design
#endif

namespace TESSERA_HLS_NS {

typedef ap_uint<VTA_INS_WIDTH> insn_t;
typedef ap_uint<VTA_UOP_WIDTH> uop_t;
typedef ap_uint<VTA_BUS_WIDTH> bus_t;
typedef ap_uint<VTA_INP_MATRIX_WIDTH> inp_vec_t;  // one input SRAM row: BATCH x BLOCK_IN int8
typedef ap_uint<VTA_WGT_MATRIX_WIDTH> wgt_vec_t;  // one weight row: BLOCK_OUT x BLOCK_IN int8
typedef ap_uint<VTA_ACC_MATRIX_WIDTH> acc_vec_t;  // one accumulator row: BATCH x BLOCK_OUT int32
typedef ap_uint<VTA_OUT_MATRIX_WIDTH> out_vec_t;  // its low bytes, which STORE writes
typedef ap_uint<1> token_t;
// A module takes its next instruction out of the queue into its instruction register while it
// waits for tokens, so that register is the queue's last slot: the stream holds one entry fewer,
// and fetch stalls at exactly TESSERA_INSN_QUEUE_DEPTH waiting instructions, as in fsim.
static_assert(TESSERA_INSN_QUEUE_DEPTH >= 2,
              "the HLS design needs INSN_QUEUE_DEPTH >= 2 (one slot is the module's instruction register)");
typedef hls::stream<insn_t, TESSERA_INSN_QUEUE_DEPTH - 1> insn_queue_t;
typedef hls::stream<token_t, TESSERA_DEP_QUEUE_DEPTH> token_queue_t;

// What a stage reports after a call (the return value of every stage function).
enum stage_status_e {
  STAGE_IDLE = 0,         // nothing to do: its instruction queue is empty (fetch: all dispatched)
  STAGE_WAIT_POP = 1,     // its instruction waits for a token (queue in wait_queue)
  STAGE_WAIT_PUSH = 2,    // its instruction waits for room on a token queue (wait_queue)
  STAGE_WAIT_INSN_Q = 3,  // fetch only: the instruction queue of module wait_queue is full
  STAGE_AT_FINISH = 4,    // compute only: FINISH is at its head, its tokens available, not yet enabled
  STAGE_DONE = 5,         // compute only: FINISH executed
  STAGE_FAULT = 6         // compute only: a GEMM/ALU index out of range or the work budget exceeded
};

// Token queue numbers (as the RTL's status words): L2C, C2L, C2S, S2C.
enum token_queue_e { Q_L2C = 0, Q_C2L = 1, Q_C2S = 2, Q_S2C = 3 };

// Fault causes of compute.
enum fault_e { FAULT_NONE = 0, FAULT_INDEX = 1, FAULT_BUDGET = 2 };

// A module's state between calls: the instruction it holds (read from its queue, waiting for its
// tokens), how many instructions it has retired, and what it waits on. In hardware these are the
// registers of a free-running module; C simulation keeps them here so a module can return when it
// would block and resume on the next call.
struct stage_state_t {
  insn_t insn;
  ap_uint<1> holding;
  ap_uint<32> retired;    // instructions completed this run (fetch: dispatched)
  ap_uint<4> wait_queue;  // the token queue (or, for fetch, the module) it waits on
};

// Compute's extra state: the fault it stopped on and its work count against the run's budget.
struct compute_state_t {
  stage_state_t s;
  ap_uint<2> fault;        // fault_e
  ap_uint<2> fault_field;  // FAULT_INDEX: 0 dst, 1 src, 2 wgt
  ap_uint<32> fault_uop;   // FAULT_INDEX: the micro-op
  ap_uint<64> fault_value; // FAULT_INDEX: the index reached; FAULT_BUDGET: the work done
  ap_uint<64> work;        // GEMM/ALU micro-ops executed this run
};

// Resets the state at the start of a run (the SRAMs keep their contents, as on the device).
void reset_stage(stage_state_t& st);
void reset_compute(compute_state_t& st);

// fetch: dispatches instructions insn_count of them from byte address insn_addr, in order, to the
// load (LOAD INP/WGT), compute (LOAD UOP/ACC/ACC_8BIT, GEMM, ALU, FINISH) or store (STORE) queue.
// Returns STAGE_IDLE when all are dispatched, STAGE_WAIT_INSN_Q when a queue is full.
int fetch(ap_uint<32> insn_count, ap_uint<64> insn_addr, const bus_t* dram, stage_state_t& st,
          insn_queue_t& load_q, insn_queue_t& compute_q, insn_queue_t& store_q);

// load: LOAD INP/WGT into the input and weight SRAMs; pops c2l (pop_next), pushes l2c (push_next).
// With drain = 1 (here and for compute and store) a call executes nothing: it empties the queues
// the stage reads and returns STAGE_IDLE. On the FPGA the queues are stream FIFOs that outlive a
// run, so the host drains what a faulted or deadlocked run left before the next run.
int load(const bus_t* dram, stage_state_t& st, insn_queue_t& load_q, token_queue_t& c2l, token_queue_t& l2c,
         inp_vec_t inp_mem[VTA_INP_BUFF_DEPTH], wgt_vec_t wgt_mem[VTA_WGT_BUFF_DEPTH], ap_uint<1> drain);

// compute: LOAD UOP/ACC/ACC_8BIT, GEMM, ALU and FINISH; owns the micro-op cache, accumulator and
// output SRAMs. Pops l2c (pop_prev) and s2c (pop_next), pushes c2l (push_prev) and c2s (push_next).
// FINISH executes only when finish_enable is 1 (the C-simulation driver sets it once no other
// module can move; on the FPGA it is a CONTROL_BUS register the host sets to 1). work_budget
// bounds the GEMM/ALU micro-ops of a run (0: unbounded).
int compute(const bus_t* dram, compute_state_t& st, insn_queue_t& compute_q, token_queue_t& l2c, token_queue_t& c2l,
            token_queue_t& c2s, token_queue_t& s2c, ap_uint<1> finish_enable, ap_uint<64> work_budget,
            uop_t uop_mem[VTA_UOP_BUFF_DEPTH], const inp_vec_t inp_mem[VTA_INP_BUFF_DEPTH],
            const wgt_vec_t wgt_mem[VTA_WGT_BUFF_DEPTH], acc_vec_t acc_mem[VTA_ACC_BUFF_DEPTH],
            out_vec_t out_mem[VTA_ACC_BUFF_DEPTH], ap_uint<1> drain);

// store: STORE from the output SRAM to DRAM; pops c2s (pop_prev), pushes s2c (push_prev).
int store(bus_t* dram, stage_state_t& st, insn_queue_t& store_q, token_queue_t& c2s, token_queue_t& s2c,
          const out_vec_t out_mem[VTA_ACC_BUFF_DEPTH], ap_uint<1> drain);

// Everything one accelerator instance holds: queues, module state, SRAMs.
struct accel_t {
  insn_queue_t load_q, compute_q, store_q;
  token_queue_t l2c, c2l, c2s, s2c;
  stage_state_t fetch_st, load_st, store_st;
  compute_state_t compute_st;
  uop_t uop_mem[VTA_UOP_BUFF_DEPTH];
  inp_vec_t inp_mem[VTA_INP_BUFF_DEPTH];
  wgt_vec_t wgt_mem[VTA_WGT_BUFF_DEPTH];
  acc_vec_t acc_mem[VTA_ACC_BUFF_DEPTH];
  out_vec_t out_mem[VTA_ACC_BUFF_DEPTH];
};

// Outcome of tessera_hls_top.
enum top_status_e { TOP_DONE = 0, TOP_DEADLOCK = 1, TOP_FAULT = 2, TOP_NO_FINISH = 3 };

// The C-simulation driver (VTA's testbench loop): runs the four modules round-robin, each until it
// would block, enables FINISH once none can move, and returns TOP_DONE after FINISH, TOP_DEADLOCK
// when no module can move and FINISH cannot run, TOP_NO_FINISH when everything ran without one,
// TOP_FAULT when compute faulted. The state in `a` then says where each module stopped.
int tessera_hls_top(ap_uint<32> insn_count, ap_uint<64> insn_addr, bus_t* dram, ap_uint<64> work_budget, accel_t& a);

}  // namespace TESSERA_HLS_NS

#endif  // TESSERA_HLS_DESIGN_H
