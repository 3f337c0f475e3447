// Event counters every target reports: instructions, bytes moved, MACs, ALU operations, cycles.
#pragma once

#include <cstdint>
#include <string>

namespace tessera::hw {

// Every target fills the instruction-level counters (insns to aluElemOps) the same way: fsim as it
// executes, tsim from the decoded program of each completed run (and it fails the run if the RTL's
// own micro-op or retirement counts disagree). The cycle-level counters come from timed targets:
// on tsim, the RTL's counter registers (docs/rtl.md, 0x100..), accumulated over runs.
struct Counters {
  // Executed instructions by opcode (LOAD, STORE, GEMM, FINISH, ALU); zero-width LOAD/STORE
  // (dependency carriers) are counted in `nops` instead.
  uint64_t insns[5] = {0, 0, 0, 0, 0};
  uint64_t nops = 0;
  // Bytes read from DRAM by LOAD, by memory type (UOP, WGT, INP, ACC, OUT unused, ACC8).
  uint64_t loadBytes[6] = {0, 0, 0, 0, 0, 0};
  // Bytes written to DRAM by STORE.
  uint64_t storeBytes = 0;
  uint64_t gemmUops = 0;       // micro-ops executed by accumulating GEMMs
  uint64_t gemmResetUops = 0;  // micro-ops executed by GEMMs with reset set
  uint64_t macs = 0;           // multiply-accumulates (BATCH*BLOCK_IN*BLOCK_OUT per GEMM micro-op)
  uint64_t aluUops = 0;
  uint64_t aluElemOps = 0;     // BATCH*BLOCK_OUT per ALU micro-op
  uint64_t cycles = 0;         // clock cycles from start to done; 0 on untimed targets such as fsim
  uint64_t runs = 0;           // device runs accumulated

  // Cycle-level counters of timed targets (all 0 on fsim), indexed by Module.
  enum Module { kFetch = 0, kLoad = 1, kCompute = 2, kStore = 3 };
  uint64_t busyCycles[4] = {0, 0, 0, 0};   // cycles a module works on an instruction (DRAM waits included)
  uint64_t stallCycles[4] = {0, 0, 0, 0};  // cycles a module's next instruction waits on a token or queue
                                           // (fetch: on a full instruction queue)
  uint64_t dramReadBeats = 0;              // AXI read data beats (instruction fetch included)
  uint64_t dramWriteBeats = 0;             // AXI write data beats

  uint64_t totalInsns() const { return insns[0] + insns[1] + insns[2] + insns[3] + insns[4] + nops; }
  uint64_t totalLoadBytes() const;
  Counters& operator+=(const Counters& o);
  // Counts accumulated since `before` (a snapshot of the same counters taken earlier).
  Counters since(const Counters& before) const;
  // Human-readable block, one counter per line, for `tessera sim --stats` and the demo.
  std::string format() const;
  // The same as a flat JSON object.
  std::string toJson() const;
};

}  // namespace tessera::hw
