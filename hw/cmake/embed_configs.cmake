# Writes a C++ source embedding every hw/configs/*.json and hw/configs/boards/*.json, so shipped and
# board configs resolve by name, and the explored space's files hw/configs/space/{explore,parts,area}.json.
# Invoked with
# -DCONFIG_DIR=... -DOUTPUT=...
function(embed_table dir out_var)
  file(GLOB files "${dir}/*.json")
  list(SORT files)
  set(body "")
  foreach(f ${files})
    get_filename_component(name "${f}" NAME_WE)
    file(READ "${f}" text)
    string(APPEND body "    {\"${name}\", R\"tessera_json(${text})tessera_json\"},\n")
  endforeach()
  set(${out_var} "${body}" PARENT_SCOPE)
endfunction()
embed_table("${CONFIG_DIR}" BODY)
embed_table("${CONFIG_DIR}/boards" BOARD_BODY)
file(READ "${CONFIG_DIR}/space/explore.json" SPACE_TEXT)
file(READ "${CONFIG_DIR}/space/parts.json" PARTS_TEXT)
file(READ "${CONFIG_DIR}/space/area.json" AREA_TEXT)
set(CONTENT "// Generated from hw/configs/*.json by hw/cmake/embed_configs.cmake; do not edit.
#include <string>
#include <utility>
#include <vector>

#include \"tessera/hw/area.h\"
#include \"tessera/hw/config.h\"
#include \"tessera/hw/config_space.h\"

namespace tessera::hw {
namespace {
const std::vector<std::pair<std::string, std::string>>& table() {
  static const std::vector<std::pair<std::string, std::string>> kConfigs = {
${BODY}  };
  return kConfigs;
}
const std::vector<std::pair<std::string, std::string>>& boardTable() {
  static const std::vector<std::pair<std::string, std::string>> kConfigs = {
${BOARD_BODY}  };
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

std::vector<std::string> boardConfigNames() {
  std::vector<std::string> names;
  for (const auto& e : boardTable()) names.push_back(e.first);
  return names;
}

std::string boardConfigJson(const std::string& name) {
  for (const auto& e : boardTable())
    if (e.first == name) return e.second;
  return std::string();
}

std::string shippedSpaceJson() { return R\"tessera_json(${SPACE_TEXT})tessera_json\"; }
std::string shippedPartsJson() { return R\"tessera_json(${PARTS_TEXT})tessera_json\"; }
std::string shippedAreaJson() { return R\"tessera_json(${AREA_TEXT})tessera_json\"; }
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
