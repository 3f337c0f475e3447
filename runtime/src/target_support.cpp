// What implementations of Target share: the seconds options, the config comparison of targets built for one config, relocating an instruction.
#include "tessera/runtime/target_support.h"

#include <algorithm>
#include <cstdlib>

#include "tessera/hw/program.h"
#include "tessera/support/error.h"

namespace tessera::runtime {

std::chrono::milliseconds secondsOption(const TargetOptions& options, const std::string& key,
                                        std::chrono::milliseconds fallback) {
  const auto it = options.find(key);
  if (it == options.end()) return fallback;
  char* end = nullptr;
  const double seconds = std::strtod(it->second.c_str(), &end);
  if (it->second.empty() || *end || !(seconds > 0) || seconds > 1e6)
    throw Error("target option " + key + "=" + it->second, "expected a number of seconds in (0, 1e6]");
  return std::chrono::milliseconds(std::max<int64_t>(1, static_cast<int64_t>(seconds * 1000)));
}

bool sameHardware(const hw::Config& a, const hw::Config& b) {
  hw::Config x = a, y = b;
  x.name.clear();
  x.description.clear();
  y.name.clear();
  y.description.clear();
  return x.toJson() == y.toJson();
}

hw::Insn movedDramBase(const hw::Insn& insn, size_t index, int64_t deltaBytes, const hw::Config& cfg) {
  const int64_t elemBytes = cfg.dramElemBytes(static_cast<hw::MemId>(insn.memType));
  if (deltaBytes % elemBytes)
    throw Error(hw::insnName(index, insn) + ", field dram_base",
                "cannot move it by " + std::to_string(deltaBytes) + " bytes, not a whole number of " +
                    std::to_string(elemBytes) + "-byte elements");
  hw::Insn moved = insn;
  moved.dramBase = static_cast<uint32_t>(static_cast<int64_t>(insn.dramBase) + deltaBytes / elemBytes);
  return moved;
}

}  // namespace tessera::runtime
