// The HLS accelerator: fetch, load, compute and store as synthesizable C++, and the C-simulation driver loop.
#include "tessera_hls.h"

namespace TESSERA_HLS_NS {

namespace {

const int kBusBytes = VTA_BUS_BYTES;

// Field `name` of an instruction or micro-op, from the generated bit positions.
#define INSN_FIELD(insn, FMT, NAME) \
  ((insn).range(TESSERA_INSN_##FMT##_##NAME##_LO + TESSERA_INSN_##FMT##_##NAME##_W - 1, TESSERA_INSN_##FMT##_##NAME##_LO).to_uint64())
#define UOP_FIELD(uop, NAME) ((uop).range(TESSERA_UOP_##NAME##_LO + TESSERA_UOP_##NAME##_W - 1, TESSERA_UOP_##NAME##_LO).to_uint64())

// Reads EW bits at byte address `addr` through the bus: whole bus words, then the wanted bytes.
// Elements are bus aligned except micro-ops and (in C simulation) instruction streams.
template <int EW>
ap_uint<EW> dram_read(const bus_t* dram, uint64_t addr) {
  const uint64_t first = addr / kBusBytes;
  const int off = int(addr % kBusBytes) * 8;
  const int words = (off + EW + VTA_BUS_WIDTH - 1) / VTA_BUS_WIDTH;
  ap_uint<EW + 2 * VTA_BUS_WIDTH> buf = 0;
READ_WORDS:
  for (int k = 0; k < words; ++k) {
#pragma HLS PIPELINE II = 1
    buf.range(k * VTA_BUS_WIDTH + VTA_BUS_WIDTH - 1, k * VTA_BUS_WIDTH) = dram[first + k];
  }
  return ap_uint<EW>(buf >> off);
}

// Writes EW bits at a bus-aligned byte address (STORE's elements are whole bus words).
template <int EW>
void dram_write(bus_t* dram, uint64_t addr, const ap_uint<EW>& v) {
  const uint64_t first = addr / kBusBytes;
WRITE_WORDS:
  for (int k = 0; k < EW / VTA_BUS_WIDTH; ++k) {
#pragma HLS PIPELINE II = 1
    dram[first + k] = bus_t(v.range(k * VTA_BUS_WIDTH + VTA_BUS_WIDTH - 1, k * VTA_BUS_WIDTH));
  }
}

// The stage an instruction goes to: 0 load, 1 compute, 2 store.
int stage_of(const insn_t& insn) {
  const uint64_t op = INSN_FIELD(insn, MEM, OPCODE);
  if (op == VTA_OPCODE_STORE) return 2;
  if (op == VTA_OPCODE_LOAD) {
    const uint64_t mem = INSN_FIELD(insn, MEM, MEMORY_TYPE);
    if (mem == VTA_MEM_ID_INP || mem == VTA_MEM_ID_WGT) return 0;
  }
  return 1;
}

// Writes accumulator row `idx` and its low bytes into the output SRAM, which STORE reads.
void write_acc(acc_vec_t acc_mem[VTA_ACC_BUFF_DEPTH], out_vec_t out_mem[VTA_ACC_BUFF_DEPTH], uint32_t idx,
               const acc_vec_t& row) {
  out_vec_t out = 0;
NARROW:
  for (int e = 0; e < VTA_BATCH * VTA_BLOCK_OUT; ++e) {
#pragma HLS UNROLL
    out.range(e * VTA_OUT_WIDTH + VTA_OUT_WIDTH - 1, e * VTA_OUT_WIDTH) =
        row.range(e * VTA_ACC_WIDTH + VTA_OUT_WIDTH - 1, e * VTA_ACC_WIDTH);
  }
  acc_mem[idx] = row;
  out_mem[idx] = out;
}

// Decoded LOAD/STORE fields.
struct mem_insn_t {
  uint32_t mem_type, sram_base, dram_base, y_size, x_size, x_stride, y_pad_0, y_pad_1, x_pad_0, x_pad_1;
};

mem_insn_t decode_mem(const insn_t& insn) {
  mem_insn_t m;
  m.mem_type = uint32_t(INSN_FIELD(insn, MEM, MEMORY_TYPE));
  m.sram_base = uint32_t(INSN_FIELD(insn, MEM, SRAM_BASE));
  m.dram_base = uint32_t(INSN_FIELD(insn, MEM, DRAM_BASE));
  m.y_size = uint32_t(INSN_FIELD(insn, MEM, Y_SIZE));
  m.x_size = uint32_t(INSN_FIELD(insn, MEM, X_SIZE));
  m.x_stride = uint32_t(INSN_FIELD(insn, MEM, X_STRIDE));
  m.y_pad_0 = uint32_t(INSN_FIELD(insn, MEM, Y_PAD_0));
  m.y_pad_1 = uint32_t(INSN_FIELD(insn, MEM, Y_PAD_1));
  m.x_pad_0 = uint32_t(INSN_FIELD(insn, MEM, X_PAD_0));
  m.x_pad_1 = uint32_t(INSN_FIELD(insn, MEM, X_PAD_1));
  return m;
}

// The padded 2-D tile walk every LOAD shares: for each SRAM entry of the tile, whether it is padding
// and, if not, the DRAM element index it copies. `visit(sram_index, is_pad, dram_index)`.
template <typename Visit>
void walk_tile(const mem_insn_t& m, Visit visit) {
  const uint32_t width = m.x_pad_0 + m.x_size + m.x_pad_1;
  const uint32_t rows = m.y_pad_0 + m.y_size + m.y_pad_1;
  uint32_t sram = m.sram_base;
TILE_ROWS:
  for (uint32_t y = 0; y < rows; ++y) {
  TILE_COLS:
    for (uint32_t x = 0; x < width; ++x) {
#pragma HLS PIPELINE II = 1
      const bool pad = y < m.y_pad_0 || y >= m.y_pad_0 + m.y_size || x < m.x_pad_0 || x >= m.x_pad_0 + m.x_size;
      const uint64_t dram_idx = uint64_t(m.dram_base) + uint64_t(y - m.y_pad_0) * m.x_stride + (x - m.x_pad_0);
      visit(sram, pad, pad ? uint64_t(0) : dram_idx);
      ++sram;
    }
  }
}

// Token bookkeeping of one instruction at a module's head: which queues it pops and pushes.
struct deps_t {
  bool pop_prev, pop_next, push_prev, push_next;
};

deps_t deps_of(const insn_t& insn) {
  deps_t d;
  d.pop_prev = INSN_FIELD(insn, MEM, POP_PREV) != 0;
  d.pop_next = INSN_FIELD(insn, MEM, POP_NEXT) != 0;
  d.push_prev = INSN_FIELD(insn, MEM, PUSH_PREV) != 0;
  d.push_next = INSN_FIELD(insn, MEM, PUSH_NEXT) != 0;
  return d;
}

// Takes the next instruction of `q` into the module's holding register if it holds none.
bool take(stage_state_t& st, insn_queue_t& q) {
  if (st.holding == 1) return true;
  insn_t insn;
  if (!q.read_nb(insn)) return false;
  st.insn = insn;
  st.holding = 1;
  return true;
}

// Index of lane group `e` of an int32 accumulator row.
inline int acc_hi(int e) { return e * VTA_ACC_WIDTH + VTA_ACC_WIDTH - 1; }
inline int acc_lo(int e) { return e * VTA_ACC_WIDTH; }

}  // namespace

void reset_stage(stage_state_t& st) {
  st.insn = 0;
  st.holding = 0;
  st.retired = 0;
  st.wait_queue = 0;
}

void reset_compute(compute_state_t& st) {
  reset_stage(st.s);
  st.fault = FAULT_NONE;
  st.fault_field = 0;
  st.fault_uop = 0;
  st.fault_value = 0;
  st.work = 0;
}

int fetch(ap_uint<32> insn_count, ap_uint<64> insn_addr, const bus_t* dram, stage_state_t& st,
          insn_queue_t& load_q, insn_queue_t& compute_q, insn_queue_t& store_q) {
#pragma HLS INTERFACE s_axilite port = insn_count bundle = CONTROL_BUS
#pragma HLS INTERFACE s_axilite port = insn_addr bundle = CONTROL_BUS
#pragma HLS INTERFACE s_axilite port = st bundle = CONTROL_BUS
#pragma HLS INTERFACE m_axi port = dram offset = slave bundle = ins_port
#pragma HLS INTERFACE s_axilite port = dram bundle = CONTROL_BUS
#pragma HLS INTERFACE axis port = load_q
#pragma HLS INTERFACE axis port = compute_q
#pragma HLS INTERFACE axis port = store_q
#pragma HLS INTERFACE s_axilite port = return bundle = CONTROL_BUS
FETCH:
  while (st.retired < insn_count) {
    const insn_t insn = dram_read<VTA_INS_WIDTH>(dram, insn_addr.to_uint64() + uint64_t(st.retired.to_uint()) * VTA_INS_ELEM_BYTES);
    const int stage = stage_of(insn);
    insn_queue_t& q = stage == 0 ? load_q : stage == 1 ? compute_q : store_q;
    if (!q.write_nb(insn)) {
      st.wait_queue = stage;
      return STAGE_WAIT_INSN_Q;
    }
    st.retired += 1;
  }
  return STAGE_IDLE;
}

int load(const bus_t* dram, stage_state_t& st, insn_queue_t& load_q, token_queue_t& c2l, token_queue_t& l2c,
         inp_vec_t inp_mem[VTA_INP_BUFF_DEPTH], wgt_vec_t wgt_mem[VTA_WGT_BUFF_DEPTH], ap_uint<1> drain) {
#pragma HLS INTERFACE m_axi port = dram offset = slave bundle = data_port
#pragma HLS INTERFACE s_axilite port = dram bundle = CONTROL_BUS
#pragma HLS INTERFACE s_axilite port = st bundle = CONTROL_BUS
#pragma HLS INTERFACE axis port = load_q
#pragma HLS INTERFACE axis port = c2l
#pragma HLS INTERFACE axis port = l2c
#pragma HLS INTERFACE bram port = inp_mem
#pragma HLS INTERFACE bram port = wgt_mem
#pragma HLS INTERFACE s_axilite port = drain bundle = CONTROL_BUS
#pragma HLS INTERFACE s_axilite port = return bundle = CONTROL_BUS
  if (drain == 1) {
  LOAD_DRAIN:
    while (!load_q.empty()) load_q.read();
  LOAD_DRAIN_C2L:
    while (!c2l.empty()) c2l.read();
    return STAGE_IDLE;
  }
LOAD:
  while (take(st, load_q)) {
    const deps_t d = deps_of(st.insn);
    if (d.pop_next && c2l.empty()) { st.wait_queue = Q_C2L; return STAGE_WAIT_POP; }
    if (d.push_next && l2c.full()) { st.wait_queue = Q_L2C; return STAGE_WAIT_PUSH; }
    if (d.pop_next) c2l.read();
    const mem_insn_t m = decode_mem(st.insn);
    if (m.x_size != 0) {  // a zero-width LOAD only carries its dependency flags
      if (m.mem_type == VTA_MEM_ID_INP) {
        walk_tile(m, [&](uint32_t sram, bool pad, uint64_t idx) {
          inp_mem[sram] = pad ? inp_vec_t(0) : dram_read<VTA_INP_MATRIX_WIDTH>(dram, idx * VTA_INP_ELEM_BYTES);
        });
      } else {
        walk_tile(m, [&](uint32_t sram, bool pad, uint64_t idx) {
          wgt_mem[sram] = pad ? wgt_vec_t(0) : dram_read<VTA_WGT_MATRIX_WIDTH>(dram, idx * VTA_WGT_ELEM_BYTES);
        });
      }
    }
    if (d.push_next) l2c.write(1);
    st.holding = 0;
    st.retired += 1;
  }
  return STAGE_IDLE;
}

namespace {

// LOAD UOP / ACC / ACC_8BIT in compute.
void compute_load(const bus_t* dram, const mem_insn_t& m, uop_t uop_mem[VTA_UOP_BUFF_DEPTH],
                  acc_vec_t acc_mem[VTA_ACC_BUFF_DEPTH], out_vec_t out_mem[VTA_ACC_BUFF_DEPTH]) {
  if (m.mem_type == VTA_MEM_ID_UOP) {
    // One row of micro-ops, four bytes each: narrower than a bus word, so unpacked from it.
  LOAD_UOPS:
    for (uint32_t x = 0; x < m.x_size; ++x) {
#pragma HLS PIPELINE II = 1
      uop_mem[m.sram_base + x] = dram_read<VTA_UOP_WIDTH>(dram, (uint64_t(m.dram_base) + x) * VTA_UOP_ELEM_BYTES);
    }
    return;
  }
  const bool acc8 = m.mem_type == VTA_MEM_ID_ACC_8BIT;
  walk_tile(m, [&](uint32_t sram, bool pad, uint64_t idx) {
    acc_vec_t row = 0;
    if (!pad && !acc8) {
      row = dram_read<VTA_ACC_MATRIX_WIDTH>(dram, idx * VTA_ACC_ELEM_BYTES);
    } else if (!pad) {
      // ACC_8BIT: int8 values sign-extended into the int32 lanes.
      const ap_uint<VTA_OUT_MATRIX_WIDTH> bytes = dram_read<VTA_OUT_MATRIX_WIDTH>(dram, idx * TESSERA_ACC8_ELEM_BYTES);
    WIDEN:
      for (int e = 0; e < VTA_BATCH * VTA_BLOCK_OUT; ++e) {
#pragma HLS UNROLL
        const ap_int<VTA_OUT_WIDTH> v = bytes.range(e * VTA_OUT_WIDTH + VTA_OUT_WIDTH - 1, e * VTA_OUT_WIDTH);
        row.range(acc_hi(e), acc_lo(e)) = ap_int<VTA_ACC_WIDTH>(v);
      }
    }
    write_acc(acc_mem, out_mem, sram, row);
  });
}

// Decoded GEMM/ALU loop fields.
struct loop_insn_t {
  bool reset;
  uint32_t uop_bgn, uop_end, iter_out, iter_in;
  uint32_t dst_out, dst_in, src_out, src_in, wgt_out, wgt_in;
};

loop_insn_t decode_loops(const insn_t& insn, bool gemm) {
  loop_insn_t l;
  l.reset = INSN_FIELD(insn, GEMM, RESET) != 0;
  l.uop_bgn = uint32_t(INSN_FIELD(insn, GEMM, UOP_BGN));
  l.uop_end = uint32_t(INSN_FIELD(insn, GEMM, UOP_END));
  l.iter_out = uint32_t(INSN_FIELD(insn, GEMM, ITER_OUT));
  l.iter_in = uint32_t(INSN_FIELD(insn, GEMM, ITER_IN));
  l.dst_out = uint32_t(INSN_FIELD(insn, GEMM, DST_FACTOR_OUT));
  l.dst_in = uint32_t(INSN_FIELD(insn, GEMM, DST_FACTOR_IN));
  l.src_out = uint32_t(INSN_FIELD(insn, GEMM, SRC_FACTOR_OUT));
  l.src_in = uint32_t(INSN_FIELD(insn, GEMM, SRC_FACTOR_IN));
  l.wgt_out = gemm ? uint32_t(INSN_FIELD(insn, GEMM, WGT_FACTOR_OUT)) : 0;
  l.wgt_in = gemm ? uint32_t(INSN_FIELD(insn, GEMM, WGT_FACTOR_IN)) : 0;
  return l;
}

// Checks every index the loops reach against its buffer depth before anything is written, and
// reports the violation fsim reports (the first field with one, then its first micro-op). One
// pipelined pass checks all fields of a micro-op at once. False on a fault.
bool check_indices(const loop_insn_t& l, bool gemm, const uop_t uop_mem[VTA_UOP_BUFF_DEPTH], compute_state_t& st) {
  if (l.iter_out == 0 || l.iter_in == 0 || l.uop_bgn >= l.uop_end) return true;
  const int fields = gemm ? (l.reset ? 1 : 3) : 2;
  const uint64_t loop_max[3] = {uint64_t(l.iter_out - 1) * l.dst_out + uint64_t(l.iter_in - 1) * l.dst_in,
                                uint64_t(l.iter_out - 1) * l.src_out + uint64_t(l.iter_in - 1) * l.src_in,
                                uint64_t(l.iter_out - 1) * l.wgt_out + uint64_t(l.iter_in - 1) * l.wgt_in};
  const uint64_t depth[3] = {VTA_ACC_BUFF_DEPTH, gemm ? uint64_t(VTA_INP_BUFF_DEPTH) : uint64_t(VTA_ACC_BUFF_DEPTH),
                             VTA_WGT_BUFF_DEPTH};
  bool bad[3] = {false, false, false};
  uint32_t first[3] = {0, 0, 0};
  uint64_t reached[3] = {0, 0, 0};
CHECK_UOPS:
  for (uint32_t u = l.uop_bgn; u < l.uop_end; ++u) {
#pragma HLS PIPELINE II = 1
    const uop_t uop = uop_mem[u];
    const uint64_t base[3] = {UOP_FIELD(uop, DST), UOP_FIELD(uop, SRC), UOP_FIELD(uop, WGT)};
  CHECK_FIELDS:
    for (int f = 0; f < 3; ++f) {
#pragma HLS UNROLL
      if (f < fields && !bad[f] && base[f] + loop_max[f] >= depth[f]) {
        bad[f] = true;
        first[f] = u;
        reached[f] = base[f] + loop_max[f];
      }
    }
  }
REPORT:
  for (int f = 0; f < 3; ++f) {
#pragma HLS UNROLL
    if (bad[f]) {
      st.fault = FAULT_INDEX;
      st.fault_field = f;
      st.fault_uop = first[f];
      st.fault_value = reached[f];
      return false;
    }
  }
  return true;
}

// The GEMM core on one micro-op: BATCH x BLOCK_OUT dot products of BLOCK_IN int8 pairs, wrapping int32.
acc_vec_t gemm_core(const acc_vec_t& acc, const inp_vec_t& inp, const wgt_vec_t& wgt) {
#pragma HLS INLINE
  acc_vec_t out;
GEMM_BATCH:
  for (int b = 0; b < VTA_BATCH; ++b) {
  GEMM_OUT:
    for (int o = 0; o < VTA_BLOCK_OUT; ++o) {
#pragma HLS UNROLL
      const int e = b * VTA_BLOCK_OUT + o;
      ap_int<VTA_ACC_WIDTH> sum = acc.range(acc_hi(e), acc_lo(e));
    GEMM_DOT:
      for (int k = 0; k < VTA_BLOCK_IN; ++k) {
#pragma HLS UNROLL
        const int ib = (b * VTA_BLOCK_IN + k) * VTA_INP_WIDTH;
        const int wb = (o * VTA_BLOCK_IN + k) * VTA_WGT_WIDTH;
        const ap_int<VTA_INP_WIDTH> x = inp.range(ib + VTA_INP_WIDTH - 1, ib);
        const ap_int<VTA_WGT_WIDTH> w = wgt.range(wb + VTA_WGT_WIDTH - 1, wb);
        sum += x * w;
      }
      out.range(acc_hi(e), acc_lo(e)) = sum;
    }
  }
  return out;
}

// The vector ALU on one lane: docs/isa.md's table (wrapping ADD/MUL, SHR with a signed amount).
ap_int<VTA_ACC_WIDTH> alu_lane(int op, const ap_int<VTA_ACC_WIDTH>& a, const ap_int<VTA_ACC_WIDTH>& b) {
#pragma HLS INLINE
  switch (op) {
    case VTA_ALU_OPCODE_MIN: return a < b ? a : b;
    case VTA_ALU_OPCODE_MAX: return a > b ? a : b;
    case VTA_ALU_OPCODE_ADD: return ap_int<VTA_ACC_WIDTH>(a + b);
    case VTA_ALU_OPCODE_MUL: return ap_int<VTA_ACC_WIDTH>(a * b);
    default: {  // SHR: amount mod 32; a negative amount shifts left by its magnitude mod 32
      if (b >= 0) return a >> int(b.range(4, 0).to_uint64());
      const ap_int<VTA_ACC_WIDTH + 1> neg = -b;
      return a << int(neg.range(4, 0).to_uint64());
    }
  }
}

// GEMM or ALU: the loop nest over iter_out, iter_in and the micro-ops.
void compute_loops(const insn_t& insn, bool gemm, const loop_insn_t& l, const uop_t uop_mem[VTA_UOP_BUFF_DEPTH],
                   const inp_vec_t inp_mem[VTA_INP_BUFF_DEPTH], const wgt_vec_t wgt_mem[VTA_WGT_BUFF_DEPTH],
                   acc_vec_t acc_mem[VTA_ACC_BUFF_DEPTH], out_vec_t out_mem[VTA_ACC_BUFF_DEPTH]) {
  const int alu_op = int(INSN_FIELD(insn, ALU, ALU_OPCODE));
  const bool use_imm = INSN_FIELD(insn, ALU, USE_IMM) != 0;
  const ap_int<VTA_ALUOP_IMM_BIT_WIDTH> imm16 = insn.range(TESSERA_INSN_ALU_IMM_LO + TESSERA_INSN_ALU_IMM_W - 1, TESSERA_INSN_ALU_IMM_LO);
  const ap_int<VTA_ACC_WIDTH> imm = imm16;
  // The previous vector micro-op's source row, held while that micro-op did not write it: a run of
  // micro-ops with one source (a per-channel constant) reads the accumulator once each (II=1).
  bool held = false;
  uint32_t held_idx = 0;
  acc_vec_t held_row = 0;
LOOP_OUT:
  for (uint32_t i = 0; i < l.iter_out; ++i) {
  LOOP_IN:
    for (uint32_t j = 0; j < l.iter_in; ++j) {
    LOOP_UOP:
      for (uint32_t u = l.uop_bgn; u < l.uop_end; ++u) {
#pragma HLS PIPELINE II = 1
        const uop_t uop = uop_mem[u];
        const uint32_t dst = uint32_t(UOP_FIELD(uop, DST) + uint64_t(i) * l.dst_out + uint64_t(j) * l.dst_in);
        const uint32_t src = uint32_t(UOP_FIELD(uop, SRC) + uint64_t(i) * l.src_out + uint64_t(j) * l.src_in);
        if (gemm) {
          if (l.reset) {
            write_acc(acc_mem, out_mem, dst, acc_vec_t(0));  // a reset GEMM writes zeros
            continue;
          }
          const uint32_t wgt = uint32_t(UOP_FIELD(uop, WGT) + uint64_t(i) * l.wgt_out + uint64_t(j) * l.wgt_in);
          write_acc(acc_mem, out_mem, dst, gemm_core(acc_mem[dst], inp_mem[src], wgt_mem[wgt]));
          continue;
        }
        const acc_vec_t a_row = acc_mem[dst];
        const acc_vec_t b_row = use_imm ? acc_vec_t(0) : (held && held_idx == src) ? held_row : acc_mem[src];
        held = !use_imm && dst != src;
        held_idx = src;
        held_row = b_row;
        acc_vec_t r;
      ALU_LANES:
        for (int e = 0; e < VTA_BATCH * VTA_BLOCK_OUT; ++e) {
#pragma HLS UNROLL
          const ap_int<VTA_ACC_WIDTH> a = a_row.range(acc_hi(e), acc_lo(e));
          const ap_int<VTA_ACC_WIDTH> b = use_imm ? imm : ap_int<VTA_ACC_WIDTH>(b_row.range(acc_hi(e), acc_lo(e)));
          r.range(acc_hi(e), acc_lo(e)) = alu_lane(alu_op, a, b);
        }
        write_acc(acc_mem, out_mem, dst, r);
      }
    }
  }
}

}  // namespace

int compute(const bus_t* dram, compute_state_t& st, insn_queue_t& compute_q, token_queue_t& l2c, token_queue_t& c2l,
            token_queue_t& c2s, token_queue_t& s2c, ap_uint<1> finish_enable, ap_uint<64> work_budget,
            uop_t uop_mem[VTA_UOP_BUFF_DEPTH], const inp_vec_t inp_mem[VTA_INP_BUFF_DEPTH],
            const wgt_vec_t wgt_mem[VTA_WGT_BUFF_DEPTH], acc_vec_t acc_mem[VTA_ACC_BUFF_DEPTH],
            out_vec_t out_mem[VTA_ACC_BUFF_DEPTH], ap_uint<1> drain) {
#pragma HLS INTERFACE m_axi port = dram offset = slave bundle = uop_port
#pragma HLS INTERFACE s_axilite port = dram bundle = CONTROL_BUS
#pragma HLS INTERFACE s_axilite port = finish_enable bundle = CONTROL_BUS
#pragma HLS INTERFACE s_axilite port = work_budget bundle = CONTROL_BUS
#pragma HLS INTERFACE s_axilite port = st bundle = CONTROL_BUS
#pragma HLS INTERFACE axis port = compute_q
#pragma HLS INTERFACE axis port = l2c
#pragma HLS INTERFACE axis port = c2l
#pragma HLS INTERFACE axis port = c2s
#pragma HLS INTERFACE axis port = s2c
#pragma HLS INTERFACE bram port = uop_mem
#pragma HLS INTERFACE bram port = inp_mem
#pragma HLS INTERFACE bram port = wgt_mem
#pragma HLS INTERFACE bram port = acc_mem
#pragma HLS INTERFACE bram port = out_mem
#pragma HLS INTERFACE s_axilite port = drain bundle = CONTROL_BUS
#pragma HLS INTERFACE s_axilite port = return bundle = CONTROL_BUS
  if (drain == 1) {
  COMPUTE_DRAIN:
    while (!compute_q.empty()) compute_q.read();
  COMPUTE_DRAIN_L2C:
    while (!l2c.empty()) l2c.read();
  COMPUTE_DRAIN_S2C:
    while (!s2c.empty()) s2c.read();
    return STAGE_IDLE;
  }
  if (st.fault != FAULT_NONE) return STAGE_FAULT;
COMPUTE:
  while (take(st.s, compute_q)) {
    const insn_t& insn = st.s.insn;
    const deps_t d = deps_of(insn);
    if (d.pop_prev && l2c.empty()) { st.s.wait_queue = Q_L2C; return STAGE_WAIT_POP; }
    if (d.pop_next && s2c.empty()) { st.s.wait_queue = Q_S2C; return STAGE_WAIT_POP; }
    if (d.push_prev && c2l.full()) { st.s.wait_queue = Q_C2L; return STAGE_WAIT_PUSH; }
    if (d.push_next && c2s.full()) { st.s.wait_queue = Q_C2S; return STAGE_WAIT_PUSH; }
    const uint64_t op = INSN_FIELD(insn, MEM, OPCODE);
    if (op == VTA_OPCODE_FINISH && finish_enable == 0) return STAGE_AT_FINISH;
    if (op == VTA_OPCODE_GEMM || op == VTA_OPCODE_ALU) {
      // Checks come before the tokens are taken: a faulting instruction changes nothing.
      const bool gemm = op == VTA_OPCODE_GEMM;
      const loop_insn_t l = decode_loops(insn, gemm);
      if (!check_indices(l, gemm, uop_mem, st)) return STAGE_FAULT;
      const uint64_t uops = l.uop_end > l.uop_bgn ? uint64_t(l.iter_out) * l.iter_in * (l.uop_end - l.uop_bgn) : 0;
      st.work += uops;
      if (work_budget != 0 && st.work > work_budget) {
        st.fault = FAULT_BUDGET;
        st.fault_value = st.work;
        return STAGE_FAULT;
      }
    }
    if (d.pop_prev) l2c.read();
    if (d.pop_next) s2c.read();
    if (op == VTA_OPCODE_LOAD) {
      const mem_insn_t m = decode_mem(insn);
      if (m.x_size != 0) compute_load(dram, m, uop_mem, acc_mem, out_mem);
    } else if (op == VTA_OPCODE_GEMM || op == VTA_OPCODE_ALU) {
      const bool gemm = op == VTA_OPCODE_GEMM;
      compute_loops(insn, gemm, decode_loops(insn, gemm), uop_mem, inp_mem, wgt_mem, acc_mem, out_mem);
    }
    if (d.push_prev) c2l.write(1);
    if (d.push_next) c2s.write(1);
    st.s.holding = 0;
    st.s.retired += 1;
    if (op == VTA_OPCODE_FINISH) return STAGE_DONE;
  }
  return STAGE_IDLE;
}

int store(bus_t* dram, stage_state_t& st, insn_queue_t& store_q, token_queue_t& c2s, token_queue_t& s2c,
          const out_vec_t out_mem[VTA_ACC_BUFF_DEPTH], ap_uint<1> drain) {
#pragma HLS INTERFACE m_axi port = dram offset = slave bundle = data_port
#pragma HLS INTERFACE s_axilite port = dram bundle = CONTROL_BUS
#pragma HLS INTERFACE s_axilite port = st bundle = CONTROL_BUS
#pragma HLS INTERFACE axis port = store_q
#pragma HLS INTERFACE axis port = c2s
#pragma HLS INTERFACE axis port = s2c
#pragma HLS INTERFACE bram port = out_mem
#pragma HLS INTERFACE s_axilite port = drain bundle = CONTROL_BUS
#pragma HLS INTERFACE s_axilite port = return bundle = CONTROL_BUS
  if (drain == 1) {
  STORE_DRAIN:
    while (!store_q.empty()) store_q.read();
  STORE_DRAIN_C2S:
    while (!c2s.empty()) c2s.read();
    return STAGE_IDLE;
  }
STORE:
  while (take(st, store_q)) {
    const deps_t d = deps_of(st.insn);
    if (d.pop_prev && c2s.empty()) { st.wait_queue = Q_C2S; return STAGE_WAIT_POP; }
    if (d.push_prev && s2c.full()) { st.wait_queue = Q_S2C; return STAGE_WAIT_PUSH; }
    if (d.pop_prev) c2s.read();
    const mem_insn_t m = decode_mem(st.insn);
    if (m.x_size != 0) {
    STORE_ROWS:
      for (uint32_t y = 0; y < m.y_size; ++y) {
      STORE_COLS:
        for (uint32_t x = 0; x < m.x_size; ++x) {
#pragma HLS PIPELINE II = 1
          const uint64_t idx = uint64_t(m.dram_base) + uint64_t(y) * m.x_stride + x;
          dram_write<VTA_OUT_MATRIX_WIDTH>(dram, idx * VTA_OUT_ELEM_BYTES, out_mem[m.sram_base + y * m.x_size + x]);
        }
      }
    }
    if (d.push_prev) s2c.write(1);
    st.holding = 0;
    st.retired += 1;
  }
  return STAGE_IDLE;
}

int tessera_hls_top(ap_uint<32> insn_count, ap_uint<64> insn_addr, bus_t* dram, ap_uint<64> work_budget, accel_t& a) {
  reset_stage(a.fetch_st);
  reset_stage(a.load_st);
  reset_stage(a.store_st);
  reset_compute(a.compute_st);
  a.load_q.clear();
  a.compute_q.clear();
  a.store_q.clear();
  a.l2c.clear();
  a.c2l.clear();
  a.c2s.clear();
  a.s2c.clear();
  ap_uint<1> finish_enable = 0;
RUN:
  for (;;) {
    // A module made progress if it retired an instruction (fetch: dispatched one).
    const uint32_t before = a.fetch_st.retired.to_uint() + a.load_st.retired.to_uint() + a.store_st.retired.to_uint() +
                            a.compute_st.s.retired.to_uint();
    fetch(insn_count, insn_addr, dram, a.fetch_st, a.load_q, a.compute_q, a.store_q);
    load(dram, a.load_st, a.load_q, a.c2l, a.l2c, a.inp_mem, a.wgt_mem, 0);
    store(dram, a.store_st, a.store_q, a.c2s, a.s2c, a.out_mem, 0);
    const int c = compute(dram, a.compute_st, a.compute_q, a.l2c, a.c2l, a.c2s, a.s2c, finish_enable, work_budget,
                          a.uop_mem, a.inp_mem, a.wgt_mem, a.acc_mem, a.out_mem, 0);
    if (c == STAGE_DONE) return TOP_DONE;
    if (c == STAGE_FAULT) return TOP_FAULT;
    const uint32_t after = a.fetch_st.retired.to_uint() + a.load_st.retired.to_uint() + a.store_st.retired.to_uint() +
                           a.compute_st.s.retired.to_uint();
    if (after != before) continue;
    // Nothing moved: FINISH may now run, as fsim runs it once every other module is stuck.
    if (c == STAGE_AT_FINISH && finish_enable == 0) {
      finish_enable = 1;
      continue;
    }
    const bool drained = a.fetch_st.retired == insn_count && a.load_q.empty() && a.compute_q.empty() &&
                         a.store_q.empty() && a.load_st.holding == 0 && a.compute_st.s.holding == 0 &&
                         a.store_st.holding == 0;
    return drained ? TOP_NO_FINISH : TOP_DEADLOCK;
  }
}

}  // namespace TESSERA_HLS_NS
