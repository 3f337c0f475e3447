// Where the HLS design's four stages stopped after a run, and fsim's words for it: shared by the hls target and the zynq driver of the HLS bitstream.
#pragma once

#include <cstdint>
#include <vector>

#include "tessera/hw/config.h"
#include "tessera/hw/isa.h"

namespace tessera::hw {

// Where the design stopped, in plain integers (design types stay inside each config's namespace).
struct HlsRunOutcome {
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

// Throws the error fsim throws for the run of `prog` that stopped as `r` (a fault, a deadlock, a
// missing FINISH, or a FINISH with work left); returns if the run completed cleanly.
void explainHlsOutcome(const Config& cfg, const std::vector<Insn>& prog, const HlsRunOutcome& r, uint64_t waitCycles);

}  // namespace tessera::hw
