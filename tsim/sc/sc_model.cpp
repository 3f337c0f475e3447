// tsim's Model interface over the SystemC testbench: lets the tsim run protocol drive the rtl-sc and hls-sc hardware unchanged.
#include "tessera/support/error.h"
#include "testbench.h"

namespace tessera::tsim {

namespace {

// One harness's use of its config's testbench. Several may exist for one config (a runtime
// session is created before the previous one is destroyed); they take turns: a harness that
// finds another one attached takes the testbench over and resets the hardware first, so no state
// leaks from one device to another.
class ScBenchModel final : public Model {
 public:
  ScBenchModel(Bench& bench, const std::string& kind, const std::string& config)
      : b_(bench), tb_(sc::Kernel::get().testbench(kind, config)), kind_(kind) {}
  ~ScBenchModel() override {
    if (tb_.attached() == &b_) tb_.attach(nullptr);
  }

  void reset(int cycles) override {
    resetCycles_ = cycles;
    tb_.attach(&b_);
    b_.host.reset();
    b_.mem.reset();
    tb_.model().clearStop();
    tb_.run(uint64_t(cycles), uint64_t(cycles), false);
  }
  void step() override {
    own();
    tb_.run(1, 0, false);
  }
  uint64_t stepUntilIrq(uint64_t maxCycles) override {
    own();
    return tb_.run(maxCycles, 0, true);
  }
  void stepCycles(uint64_t n) override {
    own();
    tb_.run(n, 0, false);
  }
  std::string stopReason() const override { return tb_.model().stopReason(); }
  void openTrace(const std::string& path) override {
    throw Error("trace " + path, kind_ + "-sc writes no waveforms" +
                                     std::string(kind_ == "rtl" ? "; trace the same RTL with the tsim target" : ""));
  }
  void closeTrace() override {}  // openTrace never opens one

 private:
  void own() {
    if (tb_.attached() != &b_) reset(resetCycles_);
  }

  Bench& b_;
  sc::Testbench& tb_;
  const std::string kind_;
  int resetCycles_ = 8;
};

}  // namespace

std::unique_ptr<Model> createScBenchModel(Bench& bench, const std::string& kind, const std::string& config) {
  return std::make_unique<ScBenchModel>(bench, kind, config);
}

}  // namespace tessera::tsim
