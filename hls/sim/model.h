// The seam between the config-independent hls target and the design compiled once per config.
#pragma once

#include <cstdint>
#include <memory>

namespace tessera::hls {

// Where the design stopped, in plain integers (design types stay inside each config's namespace).
struct RunOutcome {
  int top = 0;              // top_status_e: 0 done, 1 deadlock, 2 fault, 3 no FINISH
  uint32_t fetched = 0;     // instructions fetch dispatched
  uint32_t retired[3] = {}; // instructions each module (0 load, 1 compute, 2 store) completed
  bool holding[3] = {};     // the module holds an instruction it could not start
  uint32_t waitQueue[3] = {};  // the token queue that instruction waits on
  bool waitPush[3] = {};       // waiting for room (push) rather than a token (pop)
  uint32_t queued[3] = {};     // entries left in each instruction queue
  uint32_t tokens[4] = {};     // tokens left: l2c, c2l, c2s, s2c
  int fault = 0;               // fault_e: 1 index out of range, 2 work budget exceeded
  int faultField = 0;          // 0 dst, 1 src, 2 wgt
  uint32_t faultUop = 0;
  uint64_t faultValue = 0;
};

// One accelerator instance of the design for one config, with its SRAMs (persistent across runs).
class Model {
 public:
  virtual ~Model() = default;
  // Runs tessera_hls_top over the DRAM image at `dramBase` (physical address 0).
  virtual RunOutcome run(uint8_t* dramBase, uint64_t insnPhys, uint32_t count, uint64_t workBudget) = 0;
};

using ModelFactory = std::unique_ptr<Model> (*)();
struct BuiltModel {
  const char* config;
  ModelFactory create;
};
extern const BuiltModel kBuiltModels[];
extern const int kBuiltModelCount;

}  // namespace tessera::hls
