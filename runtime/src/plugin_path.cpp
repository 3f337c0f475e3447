// The plugin search path, shared by the target registry and the CLI's loader of its model commands.
#include "tessera/runtime/plugin_path.h"

#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>

namespace tessera::runtime {

namespace {

std::string executableDir() {
  char path[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) return "";
  const std::string exe(path, static_cast<size_t>(n));
  const size_t slash = exe.rfind('/');
  return slash == std::string::npos ? "" : exe.substr(0, slash);
}

}  // namespace

std::vector<std::string> pluginSearchPath() {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("TESSERA_PLUGIN_PATH")) {
    const std::string path = env;
    for (size_t pos = 0; pos <= path.size();) {
      size_t colon = path.find(':', pos);
      if (colon == std::string::npos) colon = path.size();
      if (colon > pos) dirs.push_back(path.substr(pos, colon - pos));
      pos = colon + 1;
    }
  }
  const std::string exeDir = executableDir();
  if (!exeDir.empty()) {
    dirs.push_back(exeDir);
    const size_t slash = exeDir.rfind('/');  // ../lib/tessera, spelled without the ".."
    if (slash != std::string::npos) dirs.push_back(exeDir.substr(0, slash) + "/lib/tessera");
  }
  dirs.push_back(TESSERA_BUILD_PLUGIN_DIR);
  dirs.push_back(TESSERA_INSTALL_PLUGIN_DIR);
  // Each once: the build's own executables find build/lib/tessera twice.
  std::vector<std::string> unique;
  for (const auto& dir : dirs)
    if (std::find(unique.begin(), unique.end(), dir) == unique.end()) unique.push_back(dir);
  return unique;
}

}  // namespace tessera::runtime
