// The model commands (compile MODEL.onnx, run, eval) in the executable: each loads
// tessera-cli-model.so, which holds them with the ONNX importer and the image readers, and runs the
// verb there. The executable itself never loads protobuf, ONNX, libpng or zlib, so every other verb
// starts as fast as a program linking only the C++ runtime.
#include <dlfcn.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>

#include "cli.h"
#include "tessera/support/error.h"

namespace tessera::cli {

namespace {

constexpr const char* kModule = "tessera-cli-model.so";
constexpr const char* kEntry = "tessera_cli_model_main";
using Entry = int (*)(const char* verb, int argc, const char* const* argv);

std::string executableDir() {
  char path[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) return "";
  const std::string exe(path, static_cast<size_t>(n));
  const size_t slash = exe.rfind('/');
  return slash == std::string::npos ? "" : exe.substr(0, slash);
}

// Where the target plugins are looked for (runtime/README.md), in the same order: TESSERA_PLUGIN_PATH,
// the executable's directory, ../lib/tessera next to it, and this build's plugin directory.
std::vector<std::string> searchPath() {
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
    const size_t slash = exeDir.rfind('/');
    if (slash != std::string::npos) dirs.push_back(exeDir.substr(0, slash) + "/lib/tessera");
  }
#ifdef TESSERA_BUILD_PLUGIN_DIR
  dirs.push_back(TESSERA_BUILD_PLUGIN_DIR);
#endif
  return dirs;
}

Entry moduleEntry(const char* verb) {
  static Entry entry = nullptr;
  if (entry) return entry;
  std::string tried, lastError;
  for (const std::string& dir : searchPath()) {
    const std::string file = dir + "/" + kModule;
    if (::access(file.c_str(), F_OK) != 0) {
      tried += (tried.empty() ? "" : ", ") + dir;
      continue;
    }
    void* handle = ::dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) throw Error(std::string("tessera ") + verb, "cannot load " + file + ": " + ::dlerror());
    entry = reinterpret_cast<Entry>(::dlsym(handle, kEntry));
    if (!entry) throw Error(std::string("tessera ") + verb, file + " lacks " + kEntry);
    return entry;
  }
  throw Error(std::string("tessera ") + verb, std::string("the model commands' module ") + kModule +
                                                  " is in none of " + tried + " (TESSERA_PLUGIN_PATH adds directories)");
}

int runInModule(const char* verb, const std::vector<std::string>& args) {
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  argv.push_back(nullptr);
  // The module reports its own errors in the executable's words and returns the exit code.
  return moduleEntry(verb)(verb, static_cast<int>(args.size()), argv.data());
}

}  // namespace

int cmdCompileModel(const std::vector<std::string>& args) { return runInModule("compile", args); }
int cmdRun(const std::vector<std::string>& args) { return runInModule("run", args); }
int cmdEval(const std::vector<std::string>& args) { return runInModule("eval", args); }

}  // namespace tessera::cli
