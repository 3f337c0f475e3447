// tessera compile / run-op: one quantized operator compiled (and run on a target), every stage printable.
#include <cstring>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "cli.h"
#include "tessera/compiler/op/compile.h"
#include "tessera/compiler/op/program.h"
#include "tessera/hw/config.h"
#include "tessera/runtime/session.h"
#include "tessera/support/error.h"

namespace tessera::cli {

namespace {

// Options shared by both verbs: what to compile and how.
struct OpArgs {
  std::string spec, config, tiling, output, program;
  uint32_t seed = 1;
  bool printAfterAll = false, force = false;
};

void addOpOptions(po::options_description& opts, OpArgs& a) {
  addConfigOption(opts, &a.config);
  opts.add_options()
      ("spec", po::value<std::string>(&a.spec), "the operator, e.g. \"conv2d cin=64 h=56 w=56 cout=64 kernel=3 "
       "stride=1 pad=1 shift=8 relu=1\", \"dense cin=512 cout=1000\", \"add c=64 h=56 w=56 shift=1 round=1\", "
       "\"maxpool c=64 h=112 w=112 kernel=3 stride=2 pad=1\" (docs/compiler.md lists the keys)")
      ("seed", po::value<uint32_t>(&a.seed)->default_value(1), "seed of the random weights, bias and input")
      ("tiling", po::value<std::string>(&a.tiling), "tile sizes TCO,TH,TW,TCI in blocks (default: searched)")
      ("print-after-all", po::bool_switch(&a.printAfterAll), "print every stage: operator, tiling search, loop "
       "nest, runtime calls, instructions, summary")
      ("output,o", po::value<std::string>(&a.output), "write the compiled program to this file")
      ("force", po::bool_switch(&a.force), "overwrite --output if it exists");
}

compiler::op::Tiling parseTiling(const std::string& text) {
  compiler::op::Tiling t;
  int* fields[4] = {&t.tco, &t.th, &t.tw, &t.tci};
  std::stringstream ss(text);
  std::string part;
  int n = 0;
  while (std::getline(ss, part, ',')) {
    if (n == 4) throw Error("--tiling " + text, "expected four numbers TCO,TH,TW,TCI");
    const uint64_t blocks = parseNumber(part, "--tiling " + text);
    if (blocks > uint64_t(std::numeric_limits<int>::max()))
      throw Error("--tiling " + text, "'" + part + "' blocks is past any tensor's size");
    *fields[n++] = static_cast<int>(blocks);
  }
  if (n != 4) throw Error("--tiling " + text, "expected four numbers TCO,TH,TW,TCI");
  return t;
}

struct Compiled {
  compiler::op::Program program;
  compiler::op::OperatorData data;
  double seconds = 0;
};

// Compiles the spec (or loads --program), printing stages if asked; saves --output.
Compiled compileOrLoad(const OpArgs& a, const hw::Config& cfg) {
  Compiled c;
  if (!a.program.empty()) {
    if (!a.spec.empty()) throw Error("--program " + a.program, "give either an operator spec or --program, not both");
    c.program = compiler::op::Program::load(a.program);
    const hw::Config programCfg = hw::Config::fromJson(c.program.configJson, a.program);
    if (programCfg.toJson() != cfg.toJson())
      throw Error(a.program, "was compiled for config '" + programCfg.name + "', not '" + cfg.name +
                                 "' (give --config " + programCfg.name + ")");
    c.data = c.program.constants();
    const compiler::op::OperatorData inputs = compiler::op::OperatorData::random(c.program.op, a.seed);
    c.data.input = inputs.input;
    c.data.input2 = inputs.input2;
    if (c.program.op.runtimeWeights) c.data.weights = inputs.weights;  // an operand of each run, like the inputs
    std::printf("loaded %s: %s\n", a.program.c_str(), c.program.op.describe().c_str());
    return c;
  }
  if (a.spec.empty()) throw Error("tessera", "no operator given (a spec such as \"conv2d cin=16 h=8 w=8 cout=16 kernel=3 pad=1\")");
  const compiler::op::Operator op = compiler::op::Operator::parse(a.spec, "operator spec");
  c.data = compiler::op::OperatorData::random(op, a.seed);
  compiler::op::CompileOptions o;
  if (a.printAfterAll) o.printAfterAll = &std::cout;
  if (!a.tiling.empty()) o.tiling = parseTiling(a.tiling);
  const auto t0 = std::chrono::steady_clock::now();
  c.program = compiler::op::compile(cfg, op, c.data, o);
  c.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cout.flush();
  if (!a.output.empty()) {
    c.program.save(a.output, a.force);
    std::printf("wrote %s\n", a.output.c_str());
  }
  return c;
}

}  // namespace

int cmdCompile(const std::vector<std::string>& args) {
  // A model file compiles as a network (a compiled .tsm to its host code with --emit); anything else
  // is an operator spec.
  auto endsWith = [](const std::string& a, const char* ext) {
    const size_t n = std::strlen(ext);
    return a.size() > n && a.compare(a.size() - n, n, ext) == 0;
  };
  for (const std::string& a : args)
    if (endsWith(a, ".onnx") || endsWith(a, ".tsm")) return cmdCompileModel(args);
  po::options_description opts("options");
  OpArgs a;
  addOpOptions(opts, a);
  po::positional_options_description pos;
  pos.add("spec", 1);
  po::variables_map vm;
  if (!parse("compile", "SPEC [--config C] [--seed S] [--tiling TCO,TH,TW,TCI] [--print-after-all] [-o FILE [--force]]", args, opts,
             &pos, &vm))
    return 0;
  const hw::Config cfg = hw::Config::load(a.config);
  const Compiled c = compileOrLoad(a, cfg);
  if (!a.printAfterAll) std::printf("%s", compiler::op::formatSummary(cfg, c.program).c_str());
  std::printf("compiled in %.3f ms\n", c.seconds * 1e3);
  return 0;
}

int cmdRunOp(const std::vector<std::string>& args) {
  po::options_description opts("options");
  OpArgs a;
  std::string target;
  addOpOptions(opts, a);
  addTargetOption(opts, &target, "fsim");
  opts.add_options()
      ("program", po::value<std::string>(&a.program), "run a program file written by `tessera compile -o` instead");
  po::positional_options_description pos;
  pos.add("spec", 1);
  po::variables_map vm;
  if (!parse("run-op", "SPEC | --program FILE [--target T] [--config C] [--seed S] [--print-after-all]", args, opts,
             &pos, &vm))
    return 0;
  const hw::Config cfg = hw::Config::load(a.config);
  runtime::Session session(target, cfg);  // refuses an unknown target before compiling
  const Compiled c = compileOrLoad(a, cfg);
  if (!a.printAfterAll) std::printf("%s", compiler::op::formatSummary(cfg, c.program).c_str());
  const compiler::op::RunResult r = compiler::op::runProgram(c.program, session, c.data);
  const std::vector<int8_t> want = compiler::op::reference(c.program.op, c.data);
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < want.size(); ++i)
    if (r.output[i] != want[i] && bad++ == 0) first = i;
  const uint64_t ideal = c.program.summary.paddedMacs / (uint64_t(cfg.batch) * cfg.blockIn * cfg.blockOut);
  std::printf("ran on %s: %llu instructions", session.targetName().c_str(),
              static_cast<unsigned long long>(r.counters.totalInsns()));
  if (r.counters.cycles && c.program.op.onVectorAlu())
    std::printf(", %llu cycles (estimate %.0f)", static_cast<unsigned long long>(r.counters.cycles),
                c.program.summary.estimatedCycles);
  else if (r.counters.cycles)
    std::printf(", %llu cycles (ideal %llu, GEMM-core utilization %.1f%%, estimate %.0f)",
                static_cast<unsigned long long>(r.counters.cycles), static_cast<unsigned long long>(ideal),
                100.0 * double(ideal) / double(r.counters.cycles), c.program.summary.estimatedCycles);
  std::printf("\n");
  if (bad) {
    std::printf("MISMATCH: %zu of %zu outputs differ from the reference; first at %zu: got %d, want %d\n", bad,
                want.size(), first, int(r.output[first]), int(want[first]));
    return 1;
  }
  std::printf("all %zu outputs match the reference\n", want.size());
  return 0;
}

}  // namespace tessera::cli
