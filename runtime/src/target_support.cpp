// What implementations of Target share: the seconds options and the config comparison of targets built for one config.
#include "tessera/runtime/target_support.h"

#include <algorithm>
#include <cstdlib>

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

}  // namespace tessera::runtime
