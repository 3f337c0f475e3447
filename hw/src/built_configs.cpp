// Matching a config to the model built for one with the same derived parameters.
#include "tessera/hw/built_configs.h"

#include <optional>

#include "tessera/hw/config_space.h"
#include "tessera/hw/generate.h"
#include "tessera/support/error.h"

namespace tessera::hw {

BuiltConfigs::BuiltConfigs(const std::vector<std::string>& names) : names_(names) {
  for (const std::string& name : names_)
    parameters_.push_back(derivedParameters(Config::load(name)));
}

int BuiltConfigs::indexOf(const Config& cfg) const {
  const auto want = derivedParameters(cfg);
  for (size_t i = 0; i < parameters_.size(); ++i)
    if (parameters_[i] == want) return static_cast<int>(i);
  return -1;
}

std::string BuiltConfigs::unsupportedReason(const Config& cfg, const std::string& target, const std::string& model,
                                            const std::string& cmakeList) const {
  if (indexOf(cfg) >= 0) return "";
  if (names_.empty()) return target + " is not built for any config (" + cmakeList + " is empty)";
  std::string names;
  for (const std::string& n : names_) names += (names.empty() ? "" : ", ") + n;
  // One parameter that differs, so the reader sees why a config of the same name would not do.
  std::string differs;
  const auto want = derivedParameters(cfg);
  const auto& first = parameters_.front();
  for (size_t i = 0; i < want.size() && i < first.size(); ++i)
    if (want[i] != first[i]) {
      differs = "; e.g. " + want[i].first + " is " + std::to_string(want[i].second) + " here but " +
                std::to_string(first[i].second) + " in " + names_.front();
      break;
    }
  // A config the explored space says this target cannot run: rebuilding would not help, so say why.
  const std::vector<std::string> limits = ConfigSpace::shipped().refusals(cfg, target);
  if (!limits.empty()) {
    std::string why;
    for (const std::string& l : limits) why += (why.empty() ? "" : "; ") + l;
    return target + " cannot run config '" + cfg.name + "' (hw/configs/space/explore.json): " + why;
  }
  // The CMake lists take shipped configs' and explored points' names: a config of the user's own
  // must become a shipped one first.
  const std::string shipped = shippedConfigJson(cfg.name);
  std::optional<Config> named;
  if (!shipped.empty()) named = Config::fromJson(shipped, cfg.name);
  else {
    try {
      named = ConfigSpace::shipped().pointNamed(cfg.name);
    } catch (const Error&) {  // a refused point's name on a config of the user's own
    }
  }
  const bool isShipped = named && derivedParameters(*named) == want;
  return target + " is not built for config '" + cfg.name + "': the " + model + " exists only for configs " + names +
         differs +
         (isShipped ? " (add the config to " + cmakeList + " and rebuild, or build its models on request: tessera build-models " +
                          cfg.name + ")"
                    : " (save it as hw/configs/" + cfg.name + ".json, add '" + cfg.name + "' to " + cmakeList +
                          " and rebuild)");
}

}  // namespace tessera::hw
