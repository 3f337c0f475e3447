// Shared pieces of the tessera CLI: command table, argument helpers and error reporting.
#pragma once

#include <boost/program_options.hpp>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "cli_args.h"

namespace tessera::runtime {
class Session;
}

namespace tessera::cli {

namespace po = boost::program_options;

// A verb of the CLI: `tessera <name> ...`.
struct Command {
  const char* name;
  const char* summary;
  int (*run)(const std::vector<std::string>& args);
};

const std::vector<Command>& commands();

// Parses `args` with `opts` (and positional `pos`); prints --help when asked and returns false.
bool parse(const char* verb, const char* usage, const std::vector<std::string>& args, po::options_description& opts,
           const po::positional_options_description* pos, po::variables_map* vm);

// --config/-c into `config`: a config JSON file or shipped config name, by default
// $TESSERA_CONFIG when set and not empty, else "default". Every verb that takes a config uses this.
void addConfigOption(po::options_description& opts, std::string* config);
// --target/-t into `target`: by default $TESSERA_TARGET when set and not empty, else `fallback`.
void addTargetOption(po::options_description& opts, std::string* target, const char* fallback);
// The values of a repeatable --target-option KEY=VALUE, as the options a target is created with.
std::map<std::string, std::string> parseTargetOptionSpecs(const std::vector<std::string>& specs);

// Runs a verb and turns what it throws into a message on stderr and the exit code: 2 for a bad
// command line, 1 for bad input or a failed run (cli_common.cpp).
int runCommand(const char* verb, int (*run)(const std::vector<std::string>&), const std::vector<std::string>& args);

int cmdInfo(const std::vector<std::string>& args);
int cmdDisasm(const std::vector<std::string>& args);
int cmdAsm(const std::vector<std::string>& args);
int cmdSim(const std::vector<std::string>& args);
int cmdDemo(const std::vector<std::string>& args);
int cmdRegress(const std::vector<std::string>& args);
int cmdCoverage(const std::vector<std::string>& args);
int cmdBench(const std::vector<std::string>& args);
int cmdCompile(const std::vector<std::string>& args);
int cmdRunOp(const std::vector<std::string>& args);
// The model commands (cmd_graph.cpp: the graph compiler's CLI) live in a module of their own,
// tessera-cli-model.so, with the ONNX importer and the image readers, so the executable starts without loading protobuf, ONNX,
// libpng or zlib; model_module.cpp loads it when one of them runs.
int cmdCompileModel(const std::vector<std::string>& args);
int cmdRun(const std::vector<std::string>& args);
int cmdEval(const std::vector<std::string>& args);
// tessera bench --model: a model file's whole-network cycles, GEMM utilization by layer kind and host time.
int cmdBenchModel(const std::vector<std::string>& args);
// tessera build-models (cmd_build_models.cpp, in the model module): RTL and HLS models for more configs.
int cmdBuildModels(const std::vector<std::string>& args);
// tessera explore (cmd_explore.cpp, in the model module): co-design for a model and a part.
int cmdExplore(const std::vector<std::string>& args);
int cmdStream(const std::vector<std::string>& args);
int cmdServe(const std::vector<std::string>& args);
// tessera bench resnet18's whole-network part (cmd_bench_graph.cpp); returns non-zero on a mismatch.
int benchResnet18Graph(runtime::Session& session, bool json);

}  // namespace tessera::cli
