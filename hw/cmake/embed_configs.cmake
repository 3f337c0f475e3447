# Writes a C++ source embedding every hw/configs/*.json, so shipped configs resolve by name.
# Invoked with -DCONFIG_DIR=... -DOUTPUT=...
file(GLOB CONFIG_FILES "${CONFIG_DIR}/*.json")
list(SORT CONFIG_FILES)
set(BODY "")
foreach(f ${CONFIG_FILES})
  get_filename_component(name "${f}" NAME_WE)
  file(READ "${f}" text)
  string(APPEND BODY "    {\"${name}\", R\"tessera_json(${text})tessera_json\"},\n")
endforeach()
set(CONTENT "// Generated from hw/configs/*.json by hw/cmake/embed_configs.cmake; do not edit.
#include <string>
#include <utility>
#include <vector>

#include \"tessera/hw/config.h\"

namespace tessera::hw {
namespace {
const std::vector<std::pair<std::string, std::string>>& table() {
  static const std::vector<std::pair<std::string, std::string>> kConfigs = {
${BODY}  };
  return kConfigs;
}
}  // namespace

std::vector<std::string> shippedConfigNames() {
  std::vector<std::string> names;
  for (const auto& e : table()) names.push_back(e.first);
  return names;
}

std::string shippedConfigJson(const std::string& name) {
  for (const auto& e : table())
    if (e.first == name) return e.second;
  return std::string();
}
}  // namespace tessera::hw
")
# Only touch the file when it changes, so dependents are not rebuilt needlessly.
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" OLD)
  if(OLD STREQUAL CONTENT)
    return()
  endif()
endif()
file(WRITE "${OUTPUT}" "${CONTENT}")
