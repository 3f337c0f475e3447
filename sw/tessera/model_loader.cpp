// The model commands (compile MODEL.onnx, run, eval) in the executable: each loads
// tessera-cli-model.so, which holds them with the ONNX importer and the image readers, and runs the
// verb there. The executable itself never loads protobuf, ONNX, libpng or zlib, so every other verb
// starts as fast as a program linking only the C++ runtime.
#include <dlfcn.h>
#include <unistd.h>

#include "cli.h"
#include "tessera/runtime/plugin_path.h"
#include "tessera/support/error.h"

namespace tessera::cli {

namespace {

constexpr const char* kModule = "tessera-cli-model.so";
constexpr const char* kEntry = "tessera_cli_model_main";
using Entry = int (*)(const char* verb, int argc, const char* const* argv);

Entry moduleEntry(const char* verb) {
  static Entry entry = nullptr;
  if (entry) return entry;
  std::string tried, lastError;
  // Where the target plugins are (runtime/README.md): the module is installed and built next to them.
  for (const std::string& dir : runtime::pluginSearchPath()) {
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
