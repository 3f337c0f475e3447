// Fuzz harness: arbitrary bytes as an instruction stream (and the DRAM data after it) decoded, validated and run on fsim.
#include <cstddef>
#include <cstdint>
#include <algorithm>

#include "tessera/hw/config.h"
#include "tessera/hw/dram.h"
#include "tessera/support/error.h"
#include "tessera/hw/fsim.h"

namespace {

using namespace tessera;

// The small config keeps SRAMs (and so the largest LOAD/STORE) small, which keeps executions fast.
const hw::Config& config() {
  static const hw::Config cfg = hw::Config::load("small");
  return cfg;
}

// Instructions at one page, data at the next pages: where generated programs put them, so
// mutated dram_base fields often land on bytes the input controls.
constexpr uint64_t kInsnBase = 0x10000, kDataBase = 0x20000;
constexpr size_t kMaxInsns = 64;
// GEMM/ALU micro-ops per run: enough for real kernels, small enough for thousands of runs a second.
constexpr uint64_t kMicroOpBudget = 20000;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  // The first byte splits the input: that many instructions (at most kMaxInsns), the rest is data.
  const size_t insns = std::min<size_t>(size_t(data[0]) % kMaxInsns + 1, (size - 1) / 16);
  if (insns == 0) return 0;
  hw::Dram dram(config());
  dram.write(kInsnBase, data + 1, insns * 16, "fuzz instructions");
  const size_t rest = size - 1 - insns * 16;
  if (rest) dram.write(kDataBase, data + 1 + insns * 16, rest, "fuzz data");
  hw::Fsim sim(config(), dram, "generic");
  try {
    sim.run(kInsnBase, static_cast<uint32_t>(insns), kMicroOpBudget);
    // A second run on the same state: SRAM contents and counters persist across runs on the device.
    sim.run(kInsnBase, static_cast<uint32_t>(insns), kMicroOpBudget);
  } catch (const Error&) {
    // Refusing a malformed program with a tessera::Error is the contract; anything else is a bug.
  }
  return 0;
}
