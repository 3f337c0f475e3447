// The configs a simulator layer was compiled for, and which of them runs a given config.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "tessera/hw/config.h"

namespace tessera::hw {

// The shipped configs a model (the HLS design, the verilated RTL) was built for. A config runs on
// the built model whose derived parameters all equal its own, whatever the names: a user's JSON
// with the default config's parameters runs on the model built for "default".
class BuiltConfigs {
 public:
  // `names` are shipped config names (hw/configs/NAME.json, embedded in the build).
  explicit BuiltConfigs(const std::vector<std::string>& names);

  const std::vector<std::string>& names() const { return names_; }
  bool empty() const { return names_.empty(); }
  // The position in names() of the model that runs `cfg`, or -1.
  int indexOf(const Config& cfg) const;

  // Why `target` cannot run `cfg`, or empty if it can: the configs its `model` (e.g. "RTL model")
  // exists for, one derived parameter that differs, and the CMake list to add the config to.
  std::string unsupportedReason(const Config& cfg, const std::string& target, const std::string& model,
                                const std::string& cmakeList) const;

 private:
  std::vector<std::string> names_;
  std::vector<std::vector<std::pair<std::string, long long>>> parameters_;
};

}  // namespace tessera::hw
