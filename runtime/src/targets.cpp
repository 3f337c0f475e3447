// The targets built into the runtime, their options, and creation by name.
#include "tessera/runtime/target.h"

#include "tessera/hw/error.h"
#include "tessera/hw/fsim.h"
#include "tessera/hls/simulator.h"
#ifdef TESSERA_HAVE_TSIM
#include "tessera/tsim/simulator.h"
#endif

namespace tessera::runtime {

namespace {

// The behavioral simulator as a driver target: untimed, bit-exact reference.
class FsimTarget : public Target {
 public:
  FsimTarget(const hw::Config& cfg, hw::Dram& dram) : sim_(cfg, dram) {}
  std::string name() const override { return "fsim"; }
  void run(uint64_t insnPhys, uint32_t count, uint32_t waitCycles) override { sim_.run(insnPhys, count, waitCycles); }
  hw::Counters counters() const override { return sim_.counters(); }
  void resetCounters() override { sim_.resetCounters(); }

 private:
  hw::Fsim sim_;
};

// The HLS design (hls/design) in C simulation: untimed, for the configs the build compiled it for.
class HlsTarget : public Target {
 public:
  HlsTarget(const hw::Config& cfg, hw::Dram& dram) : sim_(cfg, dram) {}
  std::string name() const override { return "hls"; }
  void run(uint64_t insnPhys, uint32_t count, uint32_t waitCycles) override { sim_.run(insnPhys, count, waitCycles); }
  hw::Counters counters() const override { return sim_.counters(); }
  void resetCounters() override { sim_.resetCounters(); }

 private:
  hls::Simulator sim_;
};

std::string hlsDescription() {
  std::string names;
  for (const auto& n : hls::Simulator::builtConfigs()) names += (names.empty() ? "" : ", ") + n;
  return "HLS C++ design in C simulation (untimed; configs " + names + ")";
}

#ifdef TESSERA_HAVE_TSIM
// The RTL under Verilator, cycle-accurate, for the configs the build verilated: clocked by tsim's
// own loop (tsim) or hosted in the SystemC testbench (rtl-sc); same run protocol and counters.
class TsimTarget : public Target {
 public:
  TsimTarget(const hw::Config& cfg, hw::Dram& dram, const TargetOptions& options, tsim::Engine engine)
      : sim_(cfg, dram, tsim::Options::parse(options), engine), engine_(engine) {}
  std::string name() const override { return tsim::engineTarget(engine_); }
  void run(uint64_t insnPhys, uint32_t count, uint32_t waitCycles) override { sim_.run(insnPhys, count, waitCycles); }
  hw::Counters counters() const override { return sim_.counters(); }
  void resetCounters() override { sim_.resetCounters(); }

 private:
  tsim::Simulator sim_;
  const tsim::Engine engine_;
};

std::string tsimDescription(tsim::Engine engine) {
  std::string names;
  for (const auto& n : tsim::Simulator::builtConfigs(engine)) names += (names.empty() ? "" : ", ") + n;
  if (engine == tsim::Engine::kSystemC)
    return "RTL in the SystemC testbench (Verilator --sc, cycle-accurate, same cycles as tsim; configs " + names +
           "; one SystemC kernel per process)";
  if (engine == tsim::Engine::kHlsSystemC)
    return "HLS design as clocked SystemC processes in the same testbench (cycle-approximate; configs " + names +
           "; one SystemC kernel per process)";
  return "RTL simulator (Verilator, cycle-accurate; configs " + names + ")";
}

// rtl-sc and hls-sc take tsim's options but waveforms, which only tsim writes.
std::vector<std::pair<std::string, std::string>> scOptionKeys() {
  std::vector<std::pair<std::string, std::string>> keys;
  for (const auto& k : tsim::Options::keys())
    if (k.first != "trace" && k.first != "trace-force") keys.push_back(k);
  return keys;
}
#endif

}  // namespace

const std::vector<TargetInfo>& builtinTargets() {
  static const std::vector<TargetInfo> kTargets = [] {
    std::vector<TargetInfo> targets = {
      {"fsim", "behavioral simulator (untimed executable specification)",
       [](const hw::Config& cfg, hw::Dram& dram, const TargetOptions&) {
         return std::unique_ptr<Target>(new FsimTarget(cfg, dram));
       },
       {},
       nullptr},
      {"hls", hlsDescription(),
       [](const hw::Config& cfg, hw::Dram& dram, const TargetOptions&) {
         return std::unique_ptr<Target>(new HlsTarget(cfg, dram));
       },
       {},
       [](const hw::Config& cfg) { return hls::Simulator::unsupportedReason(cfg); }},
#ifdef TESSERA_HAVE_TSIM
      {"tsim", tsimDescription(tsim::Engine::kVerilator),
       [](const hw::Config& cfg, hw::Dram& dram, const TargetOptions& options) {
         return std::unique_ptr<Target>(new TsimTarget(cfg, dram, options, tsim::Engine::kVerilator));
       },
       tsim::Options::keys(),
       [](const hw::Config& cfg) { return tsim::Simulator::unsupportedReason(cfg); }},
#endif
    };
#ifdef TESSERA_HAVE_TSIM
    // Only in builds that found SystemC.
    for (const tsim::Engine engine : {tsim::Engine::kSystemC, tsim::Engine::kHlsSystemC}) {
      if (tsim::Simulator::builtConfigs(engine).empty()) continue;
      targets.push_back({tsim::engineTarget(engine), tsimDescription(engine),
                         [engine](const hw::Config& cfg, hw::Dram& dram, const TargetOptions& options) {
                           return std::unique_ptr<Target>(new TsimTarget(cfg, dram, options, engine));
                         },
                         scOptionKeys(),
                         [engine](const hw::Config& cfg) { return tsim::Simulator::unsupportedReason(cfg, engine); }});
    }
#endif
    return targets;
  }();
  return kTargets;
}

std::string availableTargetNames() {
  std::string s;
  for (const auto& t : builtinTargets()) s += (s.empty() ? "" : ",") + t.name;
  return s;
}

const TargetInfo& findTarget(const std::string& name) {
  for (const auto& t : builtinTargets())
    if (t.name == name) return t;
  throw Error("target '" + name + "'", "unknown or not built into this build (available: " + availableTargetNames() + ")");
}

void checkTarget(const TargetInfo& info, const hw::Config& cfg, const TargetOptions& options) {
  for (const auto& [key, value] : options) {
    bool known = false;
    std::string keys;
    for (const auto& o : info.options) {
      known |= o.first == key;
      keys += (keys.empty() ? "" : ", ") + o.first;
    }
    if (!known)
      throw Error("target option '" + key + "'", "unknown for target " + info.name +
                                                     (keys.empty() ? " (it takes no options)" : " (known: " + keys + ")"));
  }
  if (info.unsupportedReason) {
    const std::string why = info.unsupportedReason(cfg);
    if (!why.empty()) throw Error("target " + info.name, why);
  }
}

std::unique_ptr<Target> createTarget(const std::string& name, const hw::Config& cfg, hw::Dram& dram,
                                     const TargetOptions& options) {
  const TargetInfo& info = findTarget(name);
  checkTarget(info, cfg, options);
  return info.create(cfg, dram, options);
}

TargetOptions parseTargetOptions(const std::string& text, const std::string& origin) {
  TargetOptions options;
  size_t pos = 0;
  while (pos <= text.size() && !text.empty()) {
    size_t comma = text.find(',', pos);
    if (comma == std::string::npos) comma = text.size();
    const std::string entry = text.substr(pos, comma - pos);
    pos = comma + 1;
    if (entry.empty()) continue;  // "a=1," or ",,": nothing to set
    const size_t eq = entry.find('=');
    if (eq == std::string::npos || eq == 0)
      throw Error(origin, "entry '" + entry + "' is not KEY=VALUE (expected key=value,key=value)");
    options[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  return options;
}

}  // namespace tessera::runtime
