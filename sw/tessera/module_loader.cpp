// The verbs that live in modules, in the executable: each loads its module from the plugin search
// path and runs the verb there. The model commands (compile MODEL.onnx, run, eval) are in
// tessera-cli-model.so with the ONNX importer and the image readers; serve is in
// tessera-cli-serve.so with the remote server and OpenSSL's libcrypto. The executable itself never
// loads protobuf, ONNX, libpng, zlib or libcrypto, so every other verb starts as fast as a program
// linking only the C++ runtime.
#include <dlfcn.h>
#include <unistd.h>

#include "cli.h"
#include "tessera/runtime/plugin_path.h"
#include "tessera/support/error.h"

namespace tessera::cli {

namespace {

// A module: its file, its entry point and what errors call it.
struct Module {
  const char* file;
  const char* entry;
  const char* what;
};
constexpr Module kModelModule{"tessera-cli-model.so", "tessera_cli_model_main", "the model commands' module"};
constexpr Module kServeModule{"tessera-cli-serve.so", "tessera_cli_serve_main", "the serve command's module"};

using Entry = int (*)(const char* verb, int argc, const char* const* argv);

Entry moduleEntry(const Module& module, const char* verb) {
  std::string tried;
  // Where the target plugins are (runtime/README.md): the modules are installed and built next to them.
  for (const std::string& dir : runtime::pluginSearchPath()) {
    const std::string file = dir + "/" + module.file;
    if (::access(file.c_str(), F_OK) != 0) {
      tried += (tried.empty() ? "" : ", ") + dir;
      continue;
    }
    void* handle = ::dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) throw Error(std::string("tessera ") + verb, "cannot load " + file + ": " + ::dlerror());
    const auto entry = reinterpret_cast<Entry>(::dlsym(handle, module.entry));
    if (!entry) throw Error(std::string("tessera ") + verb, file + " lacks " + module.entry);
    return entry;
  }
  throw Error(std::string("tessera ") + verb, std::string(module.what) + " " + module.file + " is in none of " + tried +
                                                  " (TESSERA_PLUGIN_PATH adds directories)");
}

// Runs one verb per process: the module is loaded once.
int runInModule(const Module& module, const char* verb, const std::vector<std::string>& args) {
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  argv.push_back(nullptr);
  // The module reports its own errors in the executable's words and returns the exit code.
  return moduleEntry(module, verb)(verb, static_cast<int>(args.size()), argv.data());
}

}  // namespace

int cmdCompileModel(const std::vector<std::string>& args) { return runInModule(kModelModule, "compile", args); }
int cmdRun(const std::vector<std::string>& args) { return runInModule(kModelModule, "run", args); }
int cmdEval(const std::vector<std::string>& args) { return runInModule(kModelModule, "eval", args); }
int cmdBenchModel(const std::vector<std::string>& args) { return runInModule(kModelModule, "bench-model", args); }
int cmdExplore(const std::vector<std::string>& args) { return runInModule(kModelModule, "explore", args); }
int cmdBuildModels(const std::vector<std::string>& args) { return runInModule(kModelModule, "build-models", args); }
int cmdServe(const std::vector<std::string>& args) { return runInModule(kServeModule, "serve", args); }

}  // namespace tessera::cli
