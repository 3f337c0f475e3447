// The design of one config (namespace TESSERA_HLS_NS) behind the config-independent Model interface.
#include "model.h"

#include "tessera_hls.h"

namespace tessera::hls {

namespace {

namespace d = TESSERA_HLS_NS;

static_assert(sizeof(d::bus_t) * 8 == VTA_BUS_WIDTH,
              "ap_uint<BUS> must be exactly one bus word so the DRAM image is read through bus_t*");

class DesignModel : public Model {
 public:
  // The SRAMs are large (hundreds of KiB): on the heap, zeroed like fsim's at creation.
  DesignModel() : a_(new d::accel_t()) {}

  RunOutcome run(uint8_t* dramBase, uint64_t insnPhys, uint32_t count, uint64_t workBudget) override {
    d::accel_t& a = *a_;
    RunOutcome r;
    r.top = d::tessera_hls_top(count, insnPhys, reinterpret_cast<d::bus_t*>(dramBase), workBudget, a);
    r.fetched = a.fetch_st.retired.to_uint();
    const d::stage_state_t* st[3] = {&a.load_st, &a.compute_st.s, &a.store_st};
    for (int m = 0; m < 3; ++m) {
      r.retired[m] = st[m]->retired.to_uint();
      r.holding[m] = st[m]->holding == 1;
      r.waitQueue[m] = st[m]->wait_queue.to_uint();
    }
    // Which kind of wait: the queue a module waits on tells it (each module pops and pushes distinct queues).
    r.waitPush[0] = r.waitQueue[0] == d::Q_L2C;
    r.waitPush[1] = r.waitQueue[1] == d::Q_C2L || r.waitQueue[1] == d::Q_C2S;
    r.waitPush[2] = r.waitQueue[2] == d::Q_S2C;
    r.queued[0] = uint32_t(a.load_q.size());
    r.queued[1] = uint32_t(a.compute_q.size());
    r.queued[2] = uint32_t(a.store_q.size());
    r.tokens[0] = uint32_t(a.l2c.size());
    r.tokens[1] = uint32_t(a.c2l.size());
    r.tokens[2] = uint32_t(a.c2s.size());
    r.tokens[3] = uint32_t(a.s2c.size());
    r.fault = a.compute_st.fault.to_int();
    r.faultField = a.compute_st.fault_field.to_int();
    r.faultUop = a.compute_st.fault_uop.to_uint();
    r.faultValue = a.compute_st.fault_value.to_uint64();
    return r;
  }

 private:
  std::unique_ptr<d::accel_t> a_;
};

}  // namespace

std::unique_ptr<Model> TESSERA_HLS_MODEL_FACTORY() { return std::unique_ptr<Model>(new DesignModel()); }

}  // namespace tessera::hls
