// tessera: the command-line tool; dispatches to one verb per subcommand.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <sstream>

#include "cli.h"
#include "tessera/hw/error.h"

namespace tessera::cli {

const std::vector<Command>& commands() {
  static const std::vector<Command> kCommands = {
      {"info", "print a hardware configuration and every derived parameter", cmdInfo},
      {"disasm", "disassemble a binary program (or micro-op) file", cmdDisasm},
      {"asm", "assemble a text program into a binary file", cmdAsm},
      {"sim", "load files into simulated DRAM, run a program on a target, dump memory", cmdSim},
      {"demo", "run a blocked int8 GEMM with requantization through the runtime and check it", cmdDemo},
      {"regress", "run random programs on several targets and compare them; shrink mismatches", cmdRegress},
      {"compile", "compile an ONNX model to a compiled model file, or one quantized operator to a program; print every stage", cmdCompile},
      {"run", "run an ONNX or compiled model on a target: its answer (top-5 or tensors) and a per-layer table", cmdRun},
      {"eval", "accuracy of a model on an IDX data set: quantized on the accelerator next to float on the host", cmdEval},
      {"run-op", "compile (or load) an operator, run it on a target and check it against the reference", cmdRunOp},
      {"stream", "generate an instruction stream shaped like another VTA toolchain's, as a tessera sim export", cmdStream},
      {"bench", "benchmarks with cycles, GEMM-core utilization, DRAM traffic and simulation speed", cmdBench},
  };
  return kCommands;
}

bool parse(const char* verb, const char* usage, const std::vector<std::string>& args, po::options_description& opts,
           const po::positional_options_description* pos, po::variables_map* vm) {
  opts.add_options()("help,h", "show this help");
  auto parser = po::command_line_parser(args).options(opts);
  if (pos) parser.positional(*pos);
  po::store(parser.run(), *vm);
  if (vm->count("help")) {
    std::printf("usage: tessera %s %s\n\n", verb, usage);
    std::ostringstream os;
    os << opts;
    std::printf("%s", os.str().c_str());
    return false;
  }
  po::notify(*vm);
  return true;
}

namespace {
std::string envOr(const char* name, const char* fallback) {
  const char* value = std::getenv(name);
  return value && *value ? value : fallback;
}
}  // namespace

void addConfigOption(po::options_description& opts, std::string* config) {
  opts.add_options()("config,c", po::value<std::string>(config)->default_value(envOr("TESSERA_CONFIG", "default")),
                     "config JSON file or shipped config name ($TESSERA_CONFIG)");
}

void addTargetOption(po::options_description& opts, std::string* target, const char* fallback) {
  opts.add_options()("target,t", po::value<std::string>(target)->default_value(envOr("TESSERA_TARGET", fallback)),
                     "target to run on ($TESSERA_TARGET)");
}

uint64_t parseNumber(const std::string& text, const std::string& what) {
  if (text.empty()) throw Error(what, "empty number");
  size_t i = 0;
  int base = 10;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) { base = 16; i = 2; }
  uint64_t v = 0;
  for (; i < text.size(); ++i) {
    char c = text[i];
    int d = c >= '0' && c <= '9' ? c - '0' : base == 16 && c >= 'a' && c <= 'f' ? c - 'a' + 10
          : base == 16 && c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    if (d < 0) throw Error(what, "'" + text + "' is not a decimal or 0x-hex number");
    if (v > (~uint64_t(0) - d) / base) throw Error(what, "'" + text + "' is too large");
    v = v * base + d;
  }
  return v;
}

}  // namespace tessera::cli

namespace {

void printUsage(FILE* out) {
  std::fprintf(out, "usage: tessera <command> [options]\n\ncommands:\n");
  for (const auto& c : tessera::cli::commands()) std::fprintf(out, "  %-8s %s\n", c.name, c.summary);
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
    std::vector<std::string> args(argv + 2, argv + argc);
    try {
      return c.run(args);
    } catch (const boost::program_options::error& e) {
      std::fprintf(stderr, "tessera %s: error: %s (see 'tessera %s --help')\n", c.name, e.what(), c.name);
      return 2;
    } catch (const tessera::Error& e) {
      std::fprintf(stderr, "tessera %s: error: %s\n", c.name, e.what());
      return 1;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "tessera %s: internal error: %s\n", c.name, e.what());
      return 1;
    }
  }
  std::fprintf(stderr, "tessera: error: unknown command '%s'\n\n", verb.c_str());
  printUsage(stderr);
  return 2;
}
