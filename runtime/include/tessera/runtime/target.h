// The C++ driver interface: one Target implementation per simulator or board, chosen by name.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tessera/hw/config.h"
#include "tessera/hw/counters.h"
#include "tessera/hw/dram.h"
#include "tessera/hw/insn_trace.h"

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
  // What this instance actually runs where a target has variants chosen at creation (fsim: its
  // kernel set, e.g. "avx2"); empty if it has none. Lets tests check that an option took effect.
  virtual std::string variant() const { return std::string(); }
  // Per-instruction spans, on timed targets: after traceInstructions(true) returned true, every
  // successful run records which unit ran each instruction and from which cycle to which, until
  // traceInstructions(false); takeInstructionSpans() hands over the runs recorded since the last
  // call, oldest first. Untimed targets (fsim, hls) return false and record nothing.
  virtual bool traceInstructions(bool on) {
    (void)on;
    return false;
  }
  virtual std::vector<hw::RunSpans> takeInstructionSpans() { return {}; }
};

// Target-specific settings by key (e.g. tsim's trace=FILE); each target documents its keys.
using TargetOptions = std::map<std::string, std::string>;

using TargetFactory = std::function<std::unique_ptr<Target>(const hw::Config&, hw::Dram&, const TargetOptions&)>;

struct TargetInfo {
  std::string name;
  std::string description;
  TargetFactory create;
  // The option keys the target accepts, each with a line of help. A key "*" accepts every other
  // key too (remote targets pass them on to the server's target, which checks them).
  std::vector<std::pair<std::string, std::string>> options;
  // Why the target cannot run `cfg` (e.g. an RTL model built for some configs only); empty or
  // unset: it runs every config.
  std::function<std::string(const hw::Config&)> unsupportedReason;
  // Why these option values cannot run `cfg` on this machine (e.g. fsim forced to a kernel set the
  // CPU or the config's shape has no kernels for); empty or unset: they can.
  std::function<std::string(const hw::Config&, const TargetOptions&)> optionsProblem;

  bool supports(const hw::Config& cfg) const { return !unsupportedReason || unsupportedReason(cfg).empty(); }
};

// Where targets register. fsim registers itself inside the runtime; every other target lives in a
// plugin (a shared object, see target_plugin.h) whose entry point is handed the registrar. What a
// plugin registers, its manifest lists (runtime/README.md, "Plugin manifests").
class TargetRegistrar {
 public:
  // Throws tessera::Error if a target of that name is already registered.
  virtual void add(TargetInfo info) = 0;
  // A family of targets: every name starting with `prefix` (e.g. "remote:" for the
  // remote:HOST:PORT[/T] names). `make` builds the TargetInfo of one such name, with that name, on
  // its first lookup, or throws tessera::Error saying what is wrong with the name. Throws if the
  // prefix is already registered.
  virtual void addNamePrefix(std::string prefix, std::function<TargetInfo(const std::string& name)> make) = 0;

 protected:
  ~TargetRegistrar() = default;
};

// Every listed target: fsim and those of every plugin found (loading them all). Targets that need a
// device (zynq, icebreaker) and name families (remote:) are left out: they are found by name only.
std::vector<const TargetInfo*> availableTargets();
// Comma-separated names of every listed target, from the plugins' manifests: loads no plugin.
std::string availableTargetNames();
// The target of that name, loading the plugin that provides it on first use; throws
// tessera::Error listing the available targets and the plugin directories searched if there is
// none, or naming the plugin file and the loader's error if it cannot be loaded.
const TargetInfo& findTarget(const std::string& name);
// Throws tessera::Error naming the first key `info` does not accept, or why it cannot run `cfg`.
void checkTarget(const TargetInfo& info, const hw::Config& cfg, const TargetOptions& options);
// Creates a target by name after checkTarget().
std::unique_ptr<Target> createTarget(const std::string& name, const hw::Config& cfg, hw::Dram& dram,
                                     const TargetOptions& options = TargetOptions());
// Parses "key=value,key=value" (TESSERA_TARGET_OPTIONS); `origin` names the source in errors.
// A later key replaces an earlier one; an empty text gives no options.
TargetOptions parseTargetOptions(const std::string& text, const std::string& origin);

}  // namespace tessera::runtime
