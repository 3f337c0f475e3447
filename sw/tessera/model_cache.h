// Simulator models built on request: the RTL (tsim, rtl-sc) and the HLS design (hls, hls-sc) for configs the build did not make them for, in a cached plugin-only build of the source tree.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "tessera/hw/config.h"

namespace tessera::cli {

// Where models are cached and what they are built from.
struct ModelCache {
  std::string dir;     // holds one plugin-only build per source tree
  std::string source;  // Tessera's source tree (CMakeLists.txt, rtl/, hls/, tsim/)
};

// The cache `dirFlag` names, else $TESSERA_MODEL_CACHE, $XDG_CACHE_HOME/tessera/models or
// ~/.cache/tessera/models; the source tree `sourceFlag` names, else the one this CLI was built from.
// Throws naming the flag to pass when there is no such directory.
ModelCache modelCache(const std::string& dirFlag, const std::string& sourceFlag);

// The name the cache's build takes `c` by: its shipped name, or its point of the explored space
// (hw/configs/space/explore.json), buffers included. Throws when `c` is neither (a config of other
// widths, or outside the space's ranges), saying why.
std::string modelName(const hw::Config& c);

struct BuiltModels {
  std::string pluginDir;                // put it first on TESSERA_PLUGIN_PATH to run them
  std::vector<std::string> rtl, hls;    // the configs (names) with RTL models (tsim, rtl-sc), HLS models (hls, hls-sc)
  std::vector<std::string> rtlRefused;  // "NAME: why" for configs the space refuses for the RTL (HLS only)
  bool built = false;                   // whether anything was compiled (else all were cached)
};

// Makes sure the cache holds models for `configs`: builds what is missing (minutes for each new
// config's RTL models), else only checks the cached build is current. One process at a time per
// cache (a lock file). Throws naming the build's log when the build fails.
BuiltModels buildModels(const ModelCache& cache, const std::vector<hw::Config>& configs,
                        const std::function<void(const std::string&)>& progress);

}  // namespace tessera::cli
