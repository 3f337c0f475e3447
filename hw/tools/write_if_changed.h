// Writing a generated file only when its content changes, shared by the build's generator tools.
#pragma once

#include <fstream>
#include <sstream>
#include <string>

#include "tessera/support/error.h"

namespace tessera::hw::tools {

// Rewrites `path` only when its content changes, so the build does not cascade. Throws
// tessera::Error naming the file if it cannot be written.
inline void writeIfChanged(const std::string& path, const std::string& text) {
  std::ifstream in(path, std::ios::binary);
  if (in) {
    std::stringstream ss;
    ss << in.rdbuf();
    if (ss.str() == text) return;
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out || !(out << text)) throw Error(path, "cannot write generated file");
}

}  // namespace tessera::hw::tools
