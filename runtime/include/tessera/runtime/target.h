// The C++ driver interface: one Target implementation per simulator or board, chosen by name.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tessera/hw/config.h"
#include "tessera/hw/counters.h"
#include "tessera/hw/dram.h"

namespace tessera::runtime {

// One accelerator instance of some target, sharing the simulated physical DRAM.
class Target {
 public:
  virtual ~Target() = default;
  virtual std::string name() const = 0;
  // Runs `count` instructions at physical address `insnPhys` until FINISH. `waitCycles` bounds the
  // run on timed targets (0: the target's default watchdog). Throws tessera::Error on any fault.
  virtual void run(uint64_t insnPhys, uint32_t count, uint32_t waitCycles) = 0;
  // Counters accumulated since creation or the last resetCounters().
  virtual hw::Counters counters() const = 0;
  virtual void resetCounters() = 0;
};

using TargetFactory = std::function<std::unique_ptr<Target>(const hw::Config&, hw::Dram&)>;

struct TargetInfo {
  std::string name;
  std::string description;
  TargetFactory create;
};

// The targets built into this library (fsim always; others when their simulators are built).
const std::vector<TargetInfo>& builtinTargets();
// Comma-separated names of builtinTargets().
std::string availableTargetNames();
// Creates a target by name; throws tessera::Error listing the available targets if unknown.
std::unique_ptr<Target> createTarget(const std::string& name, const hw::Config& cfg, hw::Dram& dram);

}  // namespace tessera::runtime
