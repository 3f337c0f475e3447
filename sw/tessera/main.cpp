// tessera: the command-line tool; dispatches to one verb per subcommand.
#include <algorithm>
#include <cstdio>
#include <cstring>

#include "cli.h"

namespace tessera::cli {

const std::vector<Command>& commands() {
  static const std::vector<Command> kCommands = {
      {"info", "print a hardware configuration and every derived parameter", cmdInfo},
      {"disasm", "disassemble a binary program (or micro-op) file", cmdDisasm},
      {"asm", "assemble a text program into a binary file", cmdAsm},
      {"sim", "load files into simulated DRAM, run a program on a target, dump memory", cmdSim},
      {"demo", "run a blocked int8 GEMM with requantization through the runtime and check it", cmdDemo},
      {"regress", "run random programs on several targets and compare them; shrink mismatches", cmdRegress},
      {"coverage", "report the RTL coverage tsim-cov counted (tessera regress --coverage DIR): per module, lcov, HTML", cmdCoverage},
      {"compile", "compile an ONNX model to a compiled model file, or one quantized operator to a program; print every stage", cmdCompile},
      {"run", "run an ONNX or compiled model on a target: its answer (top-5 or tensors) and a per-layer table", cmdRun},
      {"eval", "accuracy of a model on an IDX data set: quantized on the accelerator next to float on the host", cmdEval},
      {"run-op", "compile (or load) an operator, run it on a target and check it against the reference", cmdRunOp},
      {"stream", "generate an instruction stream shaped like another VTA toolchain's, as a tessera sim export", cmdStream},
      {"bench", "benchmarks with cycles, GEMM-core utilization, DRAM traffic and simulation speed", cmdBench},
      {"explore", "co-design: search the config space for a model and an FPGA part; verify the best with Yosys and tsim", cmdExplore},
      {"build-models", "build the RTL and HLS simulators' models for more configs (points of the explored space), cached", cmdBuildModels},
      {"serve", "serve a target's device to remote:HOST:PORT clients over TCP", cmdServe},
  };
  return kCommands;
}

}  // namespace tessera::cli

namespace {

void printUsage(FILE* out) {
  std::fprintf(out, "usage: tessera <command> [options]\n\ncommands:\n");
  int width = 0;
  for (const auto& c : tessera::cli::commands()) width = std::max(width, static_cast<int>(std::strlen(c.name)));
  for (const auto& c : tessera::cli::commands()) std::fprintf(out, "  %-*s %s\n", width, c.name, c.summary);
  std::fprintf(out, "\nRun 'tessera <command> --help' for the options of a command.\n"
                    "Environment: TESSERA_TARGET and TESSERA_CONFIG select the default target and config.\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    printUsage(stderr);
    return 2;
  }
  std::string verb = argv[1];
  if (verb == "--help" || verb == "-h" || verb == "help") {
    printUsage(stdout);
    return 0;
  }
  for (const auto& c : tessera::cli::commands()) {
    if (verb != c.name) continue;
    return tessera::cli::runCommand(c.name, c.run, std::vector<std::string>(argv + 2, argv + argc));
  }
  std::fprintf(stderr, "tessera: error: unknown command '%s'\n\n", verb.c_str());
  printUsage(stderr);
  return 2;
}
