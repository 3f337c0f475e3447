// tessera build-models: the RTL and HLS simulators' models for configs the build did not make them for, built into the model cache.
#include <chrono>
#include <cstdio>

#include "cli.h"
#include "model_cache.h"
#include "progress.h"
#include "tessera/hw/config.h"
#include "tessera/support/error.h"

namespace tessera::cli {

int cmdBuildModels(const std::vector<std::string>& args) {
  po::options_description opts("options");
  std::vector<std::string> names;
  std::string cacheDir, source;
  opts.add_options()
      ("config", po::value<std::vector<std::string>>(&names), "CONFIG...: config JSON files or names (shipped, or points "
                                                              "of the explored space: tessera info --space)")
      ("model-cache", po::value<std::string>(&cacheDir),
       "DIR: the cache (default $TESSERA_MODEL_CACHE, else $XDG_CACHE_HOME/tessera/models or ~/.cache/tessera/models)")
      ("source", po::value<std::string>(&source), "DIR: Tessera's source tree to build from (default: the one this CLI was built from)")
      ("quiet,q", "no progress line");
  po::positional_options_description pos;
  pos.add("config", -1);
  po::variables_map vm;
  if (!parse("build-models", "CONFIG... [--model-cache DIR] [--source DIR]", args, opts, &pos, &vm)) return 0;
  if (names.empty()) throw po::error("needs at least one CONFIG");
  std::vector<hw::Config> configs;
  for (const std::string& n : names) configs.push_back(hw::Config::load(n));
  const ModelCache cache = modelCache(cacheDir, source);
  const auto start = std::chrono::steady_clock::now();
  BuiltModels built;
  {
    ProgressLine progress(!vm.count("quiet") && ProgressLine::stderrIsTerminal());
    built = buildModels(cache, configs, [&](const std::string& s) { progress.set("build-models: " + s); });
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("models in %s (%s in %.0f s):\n", built.pluginDir.c_str(), built.built ? "built" : "all cached, checked",
              seconds);
  for (const std::string& n : built.rtl) std::printf("  %-30s tsim, rtl-sc, hls, hls-sc\n", n.c_str());
  for (const std::string& why : built.rtlRefused) {
    const std::string n = why.substr(0, why.find(':'));
    std::printf("  %-30s hls, hls-sc (the RTL targets refuse it: %s)\n", n.c_str(), why.substr(n.size() + 2).c_str());
  }
  std::printf("run on them with TESSERA_PLUGIN_PATH=%s, e.g.\n  TESSERA_PLUGIN_PATH=%s tessera regress --config %s "
              "--targets fsim,hls%s\n",
              built.pluginDir.c_str(), built.pluginDir.c_str(), names.front().c_str(),
              built.rtl.empty() ? "" : ",tsim,rtl-sc");
  return 0;
}

}  // namespace tessera::cli
