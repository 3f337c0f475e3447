// tessera-cli-model.so: the model commands with everything only they need (ONNX, protobuf, image
// readers), loaded by the executable when one of them runs (module_loader.cpp).
#include <cstring>

#include "cli.h"

extern "C" __attribute__((visibility("default"))) int tessera_cli_model_main(const char* verb, int argc,
                                                                              const char* const* argv) {
  using namespace tessera::cli;
  const std::vector<std::string> args(argv, argv + argc);
  if (!std::strcmp(verb, "compile")) return runCommand(verb, cmdCompileModel, args);
  if (!std::strcmp(verb, "run")) return runCommand(verb, cmdRun, args);
  if (!std::strcmp(verb, "eval")) return runCommand(verb, cmdEval, args);
  if (!std::strcmp(verb, "explore")) return runCommand(verb, cmdExplore, args);
  if (!std::strcmp(verb, "build-models")) return runCommand(verb, cmdBuildModels, args);
  if (!std::strcmp(verb, "bench-model")) return runCommand("bench", cmdBenchModel, args);
  std::fprintf(stderr, "tessera %s: internal error: the model module has no such command\n", verb);
  return 1;
}
