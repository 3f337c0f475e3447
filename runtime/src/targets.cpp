// The target registry: fsim built in, every other target in a plugin found by its manifest and loaded when named.
#include "tessera/runtime/target.h"

#include <dirent.h>
#include <dlfcn.h>

#include <algorithm>
#include <deque>
#include <fstream>
#include <mutex>

#include "tessera/support/error.h"
#include "tessera/hw/fsim.h"
#include "tessera/runtime/plugin_path.h"
#include "tessera/runtime/remote.h"
#include "tessera/runtime/target_plugin.h"
#include "tessera/runtime/icebreaker.h"
#include "tessera/runtime/zynq.h"

namespace tessera::runtime {

namespace detail {
void releaseGlobalSessionBeforePluginStatics();  // session.cpp
}  // namespace detail

namespace {

// The behavioral simulator as a driver target: untimed, bit-exact reference.
class FsimTarget : public Target {
 public:
  FsimTarget(const hw::Config& cfg, hw::Dram& dram, const std::string& kernelSet) : sim_(cfg, dram, kernelSet) {}
  std::string name() const override { return "fsim"; }
  void run(uint64_t insnPhys, uint32_t count, uint32_t waitCycles) override { sim_.run(insnPhys, count, waitCycles); }
  hw::Counters counters() const override { return sim_.counters(); }
  void resetCounters() override { sim_.resetCounters(); }
  std::string variant() const override { return sim_.backendName(); }

 private:
  hw::Fsim sim_;
};

std::string kernelSetOf(const TargetOptions& options) {
  const auto it = options.find("kernels");
  return it == options.end() || it->second.empty() ? "auto" : it->second;
}

TargetInfo fsimTarget() {
  return {"fsim", "behavioral simulator (untimed executable specification)",
          [](const hw::Config& cfg, hw::Dram& dram, const TargetOptions& options) {
            return std::unique_ptr<Target>(new FsimTarget(cfg, dram, kernelSetOf(options)));
          },
          {{"kernels", "inner loops: auto (the fastest this CPU and config allow), generic, avx2, avx512bw or "
                       "avx512-vnni; a set the CPU or config cannot run is an error"}},
          nullptr,
          [](const hw::Config& cfg, const TargetOptions& options) {
            const std::string set = kernelSetOf(options);
            const std::string why = hw::Fsim::kernelSetProblem(cfg, set);
            return why.empty() ? why : "kernels=" + set + ": " + why;
          }};
}

constexpr const char* kManifestSuffix = ".targets";
constexpr const char* kPluginSuffix = ".so";

bool endsWith(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// A plugin as its manifest describes it; loaded on first use.
struct Plugin {
  std::string manifest, library;
  std::vector<std::string> targets;
  bool loaded = false;
};

// The one registry of the process. Built on first use with fsim registered; the manifests of the
// plugins on the search path are read, loading none, only when a name is not built in or a listing
// is asked for, so a run on fsim touches no directory. Thread-safe; TargetInfos never move once added.
class Registry final : public TargetRegistrar {
 public:
  static Registry& get() {
    static Registry registry;
    return registry;
  }

  void add(TargetInfo info) override {
    std::lock_guard<std::recursive_mutex> lock(mutex_);
    if (registered(info.name)) throw Error("target '" + info.name + "'", "registered twice");
    targets_.push_back(std::move(info));
  }

  const TargetInfo& find(const std::string& name) {
    std::lock_guard<std::recursive_mutex> lock(mutex_);
    if (const TargetInfo* t = registered(name)) return *t;
    // remote:HOST:PORT[/T] names a server, not a registered target: one entry per name, made on
    // first use and kept out of the listings.
    if (remote::isRemoteName(name)) {
      for (const auto& t : remotes_)
        if (t.name == name) return t;
      remotes_.push_back(remote::remoteTargetInfo(name));
      return remotes_.back();
    }
    // zynq and icebreaker drive a board: they need a device to exist, so the listings (which tests and regressions
    // run every target of) leave it out, as they leave out remote servers.
    if (name == zynq::kName || name == icebreaker::kName) {
      for (const auto& t : boards_)
        if (t.name == name) return t;
      boards_.push_back(name == zynq::kName ? zynq::zynqTargetInfo() : icebreaker::serialTargetInfo());
      return boards_.back();
    }
    scanOnce();
    for (Plugin& p : plugins_) {
      if (std::find(p.targets.begin(), p.targets.end(), name) == p.targets.end()) continue;
      load(p, name);
      if (const TargetInfo* t = registered(name)) return *t;
      throw Error("target '" + name + "'", "plugin " + p.library + " is listed by " + p.manifest +
                                               " as providing it but did not register it");
    }
    std::string dirs;
    for (const auto& d : searchPath_) dirs += (dirs.empty() ? "" : ", ") + d;
    throw Error("target '" + name + "'", "unknown or not built (available: " + names() +
                                             "); no plugin manifest (*" + kManifestSuffix + ") names it in " + dirs +
                                             " (TESSERA_PLUGIN_PATH adds directories)");
  }

  std::vector<const TargetInfo*> all() {
    std::lock_guard<std::recursive_mutex> lock(mutex_);
    std::vector<const TargetInfo*> all;
    for (const std::string& name : nameList()) all.push_back(&find(name));
    return all;
  }

  std::string names() {
    std::string s;
    for (const std::string& n : nameList()) s += (s.empty() ? "" : ",") + n;
    return s;
  }

 private:
  Registry() { targets_.push_back(fsimTarget()); }

  void scanOnce() {
    if (scanned_) return;
    scanned_ = true;
    searchPath_ = pluginSearchPath();
    for (const auto& dir : searchPath_) scan(dir);
  }

  const TargetInfo* registered(const std::string& name) const {
    for (const auto& t : targets_)
      if (t.name == name) return &t;
    return nullptr;
  }

  // Registered targets first (fsim), then those the manifests promise, each name once.
  std::vector<std::string> nameList() {
    std::lock_guard<std::recursive_mutex> lock(mutex_);
    scanOnce();
    std::vector<std::string> list;
    auto addName = [&](const std::string& n) {
      if (std::find(list.begin(), list.end(), n) == list.end()) list.push_back(n);
    };
    for (const auto& t : targets_) addName(t.name);
    for (const auto& p : plugins_)
      for (const auto& n : p.targets) addName(n);
    return list;
  }

  // Reads every manifest in `dir` (sorted by name); a plugin file already found earlier on the
  // search path shadows later ones of the same name.
  void scan(const std::string& dir) {
    DIR* d = ::opendir(dir.c_str());
    if (!d) return;
    std::vector<std::string> manifests;
    while (const dirent* e = ::readdir(d))
      if (endsWith(e->d_name, kManifestSuffix)) manifests.push_back(e->d_name);
    ::closedir(d);
    std::sort(manifests.begin(), manifests.end());
    for (const auto& file : manifests) {
      const std::string stem = file.substr(0, file.size() - std::string(kManifestSuffix).size());
      bool shadowed = false;
      for (const auto& p : plugins_) shadowed |= endsWith(p.library, "/" + stem + kPluginSuffix);
      if (shadowed) continue;
      Plugin plugin;
      plugin.manifest = dir + "/" + file;
      plugin.library = dir + "/" + stem + kPluginSuffix;
      std::ifstream in(plugin.manifest);
      std::string line;
      while (std::getline(in, line)) {
        line.erase(0, line.find_first_not_of(" \t"));
        line.erase(line.find_last_not_of(" \t\r") + 1);
        if (!line.empty() && line[0] != '#') plugin.targets.push_back(line);
      }
      plugins_.push_back(std::move(plugin));
    }
  }

  // Loads the plugin and lets it register its targets. The handle is never closed: the targets'
  // factories and the objects they create live in it.
  void load(Plugin& plugin, const std::string& wanted) {
    if (plugin.loaded) return;
    const std::string what = "target '" + wanted + "'";
    void* handle = ::dlopen(plugin.library.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle)
      throw Error(what, "plugin " + plugin.library + " (listed by " + plugin.manifest +
                            ") cannot be loaded: " + ::dlerror());
    using AbiFn = int (*)();
    using RegisterFn = void (*)(TargetRegistrar&);
    auto abi = reinterpret_cast<AbiFn>(::dlsym(handle, "tessera_target_plugin_abi"));
    auto registerTargets = reinterpret_cast<RegisterFn>(::dlsym(handle, "tessera_register_targets"));
    if (!abi || !registerTargets)
      throw Error(what, "plugin " + plugin.library + " is not a Tessera target plugin (no tessera_target_plugin_abi "
                            "or tessera_register_targets entry point)");
    if (abi() != TESSERA_TARGET_PLUGIN_ABI)
      throw Error(what, "plugin " + plugin.library + " was built for plugin ABI " + std::to_string(abi()) +
                            ", this runtime has " + std::to_string(TESSERA_TARGET_PLUGIN_ABI) + " (rebuild it)");
    plugin.loaded = true;
    detail::releaseGlobalSessionBeforePluginStatics();
    const size_t before = targets_.size();
    registerTargets(*this);
    // Listing reads manifests only, so a target the manifest does not name would be invisible there.
    for (size_t i = before; i < targets_.size(); ++i)
      if (std::find(plugin.targets.begin(), plugin.targets.end(), targets_[i].name) == plugin.targets.end())
        throw Error(what, "plugin " + plugin.library + " registered target '" + targets_[i].name +
                              "', which its manifest " + plugin.manifest + " does not list (rebuild it)");
  }

  std::recursive_mutex mutex_;
  std::deque<TargetInfo> targets_;
  std::deque<TargetInfo> remotes_;
  std::deque<TargetInfo> boards_;
  std::vector<Plugin> plugins_;
  std::vector<std::string> searchPath_;
  bool scanned_ = false;
};

}  // namespace

std::vector<const TargetInfo*> availableTargets() { return Registry::get().all(); }

std::string availableTargetNames() { return Registry::get().names(); }

const TargetInfo& findTarget(const std::string& name) { return Registry::get().find(name); }

void checkTarget(const TargetInfo& info, const hw::Config& cfg, const TargetOptions& options) {
  for (const auto& [key, value] : options) {
    bool known = false;
    std::string keys;
    for (const auto& o : info.options) {
      known |= o.first == key || o.first == "*";
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
  if (info.optionsProblem) {
    const std::string why = info.optionsProblem(cfg, options);
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
