// The target registry: fsim built in, every other target in a plugin found by its manifest and loaded when named.
#include "tessera/runtime/target.h"

#include <dirent.h>
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <deque>
#include <fstream>
#include <mutex>
#include <optional>
#include <sstream>

#include "tessera/hw/fsim.h"
#include "tessera/runtime/plugin_path.h"
#include "tessera/runtime/target_plugin.h"
#include "tessera/support/error.h"

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
constexpr const char* kBuildHintPrefix = "# build: ";
constexpr const char* kPluginSuffix = ".so";

bool endsWith(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

bool startsWith(const std::string& s, const std::string& head) { return s.compare(0, head.size(), head) == 0; }

// One line of a manifest (runtime/README.md, "Plugin manifests"): a target's name, or a name
// prefix every target of a family starts with, and whether it is listed.
struct ManifestEntry {
  std::string name;     // the target's name, or the prefix ("remote:" for remote:*)
  bool prefix = false;  // written NAME*: every name starting with `name`
  bool device = false;  // needs a device: looked up by name only, never listed
  bool listed() const { return !prefix && !device; }
};

// A plugin as its manifest describes it; loaded on first use.
struct Plugin {
  std::string manifest, library;
  std::string buildHint;  // the manifest's "# build: COMMAND" line: how to build a plugin built on request
  std::vector<ManifestEntry> entries;
  bool loaded = false;

  const ManifestEntry* entryFor(const std::string& name) const {
    for (const auto& e : entries)
      if (!e.prefix && e.name == name) return &e;
    for (const auto& e : entries)
      if (e.prefix && startsWith(name, e.name)) return &e;
    return nullptr;
  }
  bool declares(const std::string& name, bool prefix) const {
    for (const auto& e : entries)
      if (e.name == name && e.prefix == prefix) return true;
    return false;
  }
};

// Parses one manifest line ("NAME", "NAME device", "PREFIX*"); empty with `problem` set if it is
// none of these.
std::optional<ManifestEntry> parseManifestLine(const std::string& line, std::string* problem) {
  std::istringstream in(line);
  std::vector<std::string> words;
  for (std::string word; in >> word;) words.push_back(word);
  ManifestEntry e;
  e.name = words.front();
  if (e.name.size() > 1 && e.name.back() == '*') {
    e.prefix = true;
    e.name.pop_back();
  }
  if (e.name.find('*') != std::string::npos) {
    *problem = "'" + words.front() + "' is neither a target name nor a name prefix (PREFIX*)";
    return std::nullopt;
  }
  for (size_t i = 1; i < words.size(); ++i) {
    if (words[i] != "device") {
      *problem = "unknown attribute '" + words[i] + "' of " + words.front() + " (the one attribute is device)";
      return std::nullopt;
    }
    e.device = true;
  }
  return e;
}

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

  void addNamePrefix(std::string prefix, std::function<TargetInfo(const std::string&)> make) override {
    std::lock_guard<std::recursive_mutex> lock(mutex_);
    for (const auto& p : prefixes_)
      if (p.prefix == prefix) throw Error("target name prefix '" + prefix + "'", "registered twice");
    prefixes_.push_back({std::move(prefix), std::move(make)});
  }

  const TargetInfo& find(const std::string& name) {
    std::lock_guard<std::recursive_mutex> lock(mutex_);
    if (const TargetInfo* t = registered(name)) return *t;
    scanOnce();
    for (Plugin& p : plugins_) {
      const ManifestEntry* entry = p.entryFor(name);
      if (!entry) continue;
      load(p, name);
      if (const TargetInfo* t = registered(name)) return *t;
      if (entry->prefix) return named(*entry, p, name);
      throw Error("target '" + name + "'", "plugin " + p.library + " is listed by " + p.manifest +
                                               " as providing it but did not register it");
    }
    std::string dirs;
    for (const auto& d : searchPath_) dirs += (dirs.empty() ? "" : ", ") + d;
    throw Error("target '" + name + "'", "unknown or not built (available: " + names() +
                                             "); no plugin manifest (*" + kManifestSuffix + ") names it in " + dirs +
                                             " (TESSERA_PLUGIN_PATH adds directories)" +
                                             (skipped_.empty() ? "" : "; manifest lines skipped: " + skipped_));
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
  struct NamePrefix {
    std::string prefix;
    std::function<TargetInfo(const std::string&)> make;
  };

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
    for (const auto& t : named_)
      if (t.name == name) return &t;
    return nullptr;
  }

  // The target `name` of the family its plugin registered for `entry`'s prefix, made on its
  // first lookup (which throws if the name is malformed) and kept.
  const TargetInfo& named(const ManifestEntry& entry, const Plugin& plugin, const std::string& name) {
    for (const auto& p : prefixes_)
      if (p.prefix == entry.name) {
        TargetInfo info = p.make(name);
        if (info.name != name)
          throw Error("target '" + name + "'", "plugin " + plugin.library + " made target '" + info.name +
                                                   "' for it (a plugin bug)");
        named_.push_back(std::move(info));
        return named_.back();
      }
    throw Error("target '" + name + "'", "plugin " + plugin.library + " is listed by " + plugin.manifest +
                                             " as providing the names " + entry.name +
                                             "* but did not register that prefix");
  }

  // Registered targets first (fsim), then those the manifests list, each name once. Targets that
  // need a device and name families are left out: they are looked up by name only.
  std::vector<std::string> nameList() {
    std::lock_guard<std::recursive_mutex> lock(mutex_);
    scanOnce();
    std::vector<std::string> list;
    auto addName = [&](const std::string& n) {
      if (std::find(list.begin(), list.end(), n) == list.end()) list.push_back(n);
    };
    for (const auto& t : targets_)
      if (listed(t.name)) addName(t.name);
    for (const auto& p : plugins_)
      for (const auto& e : p.entries)
        if (e.listed()) addName(e.name);
    return list;
  }

  // A registered target is listed unless the manifest of its plugin says it needs a device.
  bool listed(const std::string& name) const {
    for (const auto& p : plugins_)
      if (p.loaded)
        for (const auto& e : p.entries)
          if (!e.prefix && e.name == name) return e.listed();
    return true;  // built in
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
      for (int number = 1; std::getline(in, line); ++number) {
        line.erase(0, line.find_first_not_of(" \t"));
        line.erase(line.find_last_not_of(" \t\r") + 1);
        if (startsWith(line, kBuildHintPrefix)) plugin.buildHint = line.substr(std::string(kBuildHintPrefix).size());
        if (line.empty() || line[0] == '#') continue;
        std::string problem;
        if (auto entry = parseManifestLine(line, &problem)) plugin.entries.push_back(*entry);
        else skipped_ += (skipped_.empty() ? "" : "; ") + plugin.manifest + ":" + std::to_string(number) + ": " + problem;
      }
      plugins_.push_back(std::move(plugin));
    }
  }

  // Loads the plugin and lets it register its targets. The handle is never closed: the targets'
  // factories and the objects they create live in it.
  void load(Plugin& plugin, const std::string& wanted) {
    if (plugin.loaded) return;
    const std::string what = "target '" + wanted + "'";
    // A plugin the build makes only on request has its manifest from configuration on: say how to build it.
    if (::access(plugin.library.c_str(), F_OK) != 0 && !plugin.buildHint.empty())
      throw Error(what, "plugin " + plugin.library + " (listed by " + plugin.manifest +
                            ") is not built: the build makes it on request only (" + plugin.buildHint + ")");
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
    const size_t targetsBefore = targets_.size(), prefixesBefore = prefixes_.size();
    registerTargets(*this);
    // Listing reads manifests only, so a target the manifest does not name would be invisible there.
    for (size_t i = targetsBefore; i < targets_.size(); ++i)
      if (!plugin.declares(targets_[i].name, false))
        throw Error(what, "plugin " + plugin.library + " registered target '" + targets_[i].name +
                              "', which its manifest " + plugin.manifest + " does not list (rebuild it)");
    for (size_t i = prefixesBefore; i < prefixes_.size(); ++i)
      if (!plugin.declares(prefixes_[i].prefix, true))
        throw Error(what, "plugin " + plugin.library + " registered the names " + prefixes_[i].prefix +
                              "*, which its manifest " + plugin.manifest + " does not list (rebuild it)");
  }

  std::recursive_mutex mutex_;
  std::deque<TargetInfo> targets_;
  std::vector<NamePrefix> prefixes_;
  std::deque<TargetInfo> named_;  // made by the families of prefixes_, one per name looked up
  std::vector<Plugin> plugins_;
  std::vector<std::string> searchPath_;
  std::string skipped_;  // the manifest lines that name nothing, where and why
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
