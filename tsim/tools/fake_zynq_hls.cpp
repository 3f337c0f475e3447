// The fake Zynq board's HLS bitstream: each ap_start of a stage IP calls that stage function of hls/design with the arguments its registers hold (hls_map's offsets), as the synthesized block would.
#include "fake_zynq_hls.h"

#include "tessera/gen/hls_register_map.h"
#include "tessera_hls.h"

namespace tessera::fake_zynq {

namespace {

namespace d = TESSERA_HLS_NS;
namespace m = hls_map;

uint32_t word(const uint8_t* window, uint32_t offset) {
  return *reinterpret_cast<const volatile uint32_t*>(window + offset);
}
void setWord(uint8_t* window, uint32_t offset, uint32_t v) { *reinterpret_cast<volatile uint32_t*>(window + offset) = v; }
bool bit(const uint8_t* window, uint32_t offset, uint32_t b) { return (word(window, offset + 4 * (b / 32)) >> (b % 32)) & 1; }
void setBit(uint8_t* window, uint32_t offset, uint32_t b, bool v) {
  const uint32_t at = offset + 4 * (b / 32), mask = 1u << (b % 32);
  setWord(window, at, v ? (word(window, at) | mask) : (word(window, at) & ~mask));
}

template <int W>
void get(const uint8_t* window, uint32_t offset, uint32_t lsb, ap_uint<W>& v) {
  for (int i = 0; i < W; ++i) v[i] = bit(window, offset, lsb + i);
}
template <int W>
void put(uint8_t* window, uint32_t offset, uint32_t lsb, const ap_uint<W>& v) {
  for (int i = 0; i < W; ++i) setBit(window, offset, lsb + i, v[i]);
}

void getStage(const uint8_t* w, uint32_t offset, uint32_t base, d::stage_state_t& st) {
  get(w, offset, base + m::stage_state::kInsnLsb, st.insn);
  get(w, offset, base + m::stage_state::kHoldingLsb, st.holding);
  get(w, offset, base + m::stage_state::kRetiredLsb, st.retired);
  get(w, offset, base + m::stage_state::kWaitQueueLsb, st.wait_queue);
}
void putStage(uint8_t* w, uint32_t offset, uint32_t base, const d::stage_state_t& st) {
  put(w, offset, base + m::stage_state::kInsnLsb, st.insn);
  put(w, offset, base + m::stage_state::kHoldingLsb, st.holding);
  put(w, offset, base + m::stage_state::kRetiredLsb, st.retired);
  put(w, offset, base + m::stage_state::kWaitQueueLsb, st.wait_queue);
}
void getCompute(const uint8_t* w, uint32_t offset, d::compute_state_t& st) {
  getStage(w, offset, m::compute_state::kSLsb, st.s);
  get(w, offset, m::compute_state::kFaultLsb, st.fault);
  get(w, offset, m::compute_state::kFaultFieldLsb, st.fault_field);
  get(w, offset, m::compute_state::kFaultUopLsb, st.fault_uop);
  get(w, offset, m::compute_state::kFaultValueLsb, st.fault_value);
  get(w, offset, m::compute_state::kWorkLsb, st.work);
}
void putCompute(uint8_t* w, uint32_t offset, const d::compute_state_t& st) {
  putStage(w, offset, m::compute_state::kSLsb, st.s);
  put(w, offset, m::compute_state::kFaultLsb, st.fault);
  put(w, offset, m::compute_state::kFaultFieldLsb, st.fault_field);
  put(w, offset, m::compute_state::kFaultUopLsb, st.fault_uop);
  put(w, offset, m::compute_state::kFaultValueLsb, st.fault_value);
  put(w, offset, m::compute_state::kWorkLsb, st.work);
}

// The state structs must be exactly as wide as the map says, or fields would be lost crossing the bus.
static_assert(m::stage_state::kBits == VTA_INS_WIDTH + 1 + 32 + 4, "stage_state_t's aggregated width");

uint64_t u64(const uint8_t* w, uint32_t offset) { return word(w, offset) | uint64_t(word(w, offset + 4)) << 32; }

class Bitstream : public HlsBitstream {
 public:
  Bitstream() : a_(new d::accel_t()) {}

  int call(int ip, uint8_t* w, uint8_t* dramBase) override {
    d::accel_t& a = *a_;
    int rc = 0;
    switch (ip) {
      case m::kFetch: {
        d::stage_state_t st;
        getStage(w, m::fetch::kStI, 0, st);
        rc = d::fetch(word(w, m::fetch::kInsnCount), u64(w, m::fetch::kInsnAddr), bus(dramBase, w, m::fetch::kDram), st,
                      a.load_q, a.compute_q, a.store_q);
        putStage(w, m::fetch::kStO, 0, st);
        finish(w, m::fetch::kApReturn, m::fetch::kStOValid, rc);
        break;
      }
      case m::kLoad: {
        d::stage_state_t st;
        getStage(w, m::load::kStI, 0, st);
        rc = d::load(bus(dramBase, w, m::load::kDram), st, a.load_q, a.c2l, a.l2c, a.inp_mem, a.wgt_mem,
                     flag(w, m::load::kDrain));
        putStage(w, m::load::kStO, 0, st);
        finish(w, m::load::kApReturn, m::load::kStOValid, rc);
        break;
      }
      case m::kCompute: {
        d::compute_state_t st;
        getCompute(w, m::compute::kStI, st);
        const ap_uint<1> finishEnable = flag(w, m::compute::kFinishEnable);
        rc = d::compute(bus(dramBase, w, m::compute::kDram), st, a.compute_q, a.l2c, a.c2l, a.c2s, a.s2c, finishEnable,
                        u64(w, m::compute::kWorkBudget), a.uop_mem, a.inp_mem, a.wgt_mem, a.acc_mem, a.out_mem,
                        flag(w, m::compute::kDrain));
        putCompute(w, m::compute::kStO, st);
        finish(w, m::compute::kApReturn, m::compute::kStOValid, rc);
        break;
      }
      case m::kStore: {
        d::stage_state_t st;
        getStage(w, m::store::kStI, 0, st);
        rc = d::store(bus(dramBase, w, m::store::kDram), st, a.store_q, a.c2s, a.s2c, a.out_mem,
                      flag(w, m::store::kDrain));
        putStage(w, m::store::kStO, 0, st);
        finish(w, m::store::kApReturn, m::store::kStOValid, rc);
        break;
      }
      default: break;
    }
    return rc;
  }

  uint64_t leftInQueues() const override {
    const d::accel_t& a = *a_;
    return a.load_q.size() + a.compute_q.size() + a.store_q.size() + a.l2c.size() + a.c2l.size() + a.c2s.size() +
           a.s2c.size();
  }

 private:
  // The m_axi port's base address register offsets every DRAM address of the call.
  static d::bus_t* bus(uint8_t* dramBase, const uint8_t* w, uint32_t offset) {
    return reinterpret_cast<d::bus_t*>(dramBase + word(w, offset));
  }
  static ap_uint<1> flag(const uint8_t* w, uint32_t offset) {
    ap_uint<1> v;
    v[0] = word(w, offset) & 1;
    return v;
  }
  static void finish(uint8_t* w, uint32_t apReturn, uint32_t valid, int rc) {
    setWord(w, apReturn, static_cast<uint32_t>(rc));
    setWord(w, valid, 1);
  }

  std::unique_ptr<d::accel_t> a_;
};

}  // namespace

const char* hlsBitstreamConfig() { return TESSERA_FAKE_HLS_CONFIG; }
std::unique_ptr<HlsBitstream> makeHlsBitstream() { return std::unique_ptr<HlsBitstream>(new Bitstream()); }

}  // namespace tessera::fake_zynq
