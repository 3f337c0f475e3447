// Holds hls-sc's timing annotation to its documented agreement with rtl-sc's cycles, on GEMM, convolution, ALU and compiler programs, per built config.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "tessera/compiler/op/compile.h"
#include "tessera/compiler/op/program.h"
#include "tessera/hw/config.h"
#include "tessera/runtime/session.h"
#include "tessera/runtime/target.h"
#include "tessera/sw/workloads.h"

namespace {

using tessera::hw::Config;
namespace compiler = tessera::compiler;
namespace runtime = tessera::runtime;
namespace sw = tessera::sw;

// The agreement tsim/README.md ("hls-sc", measured table) and docs/user-guide.md state: hls-sc's
// cycles over rtl-sc's, on the same program and memory timing, by kind of program. The looser
// kinds run GEMMs whose micro-op kernels are long against few loop iterations, where hls-sc's
// separate pass checking a kernel's indices before running it weighs most (tsim/README.md).
constexpr double kVectorSpread = 0.03;  // ALU programs, residual add, pooling
constexpr double kGemmSpread = 0.08;    // blocked GEMMs with and without the requantization epilogue
constexpr double kConvSpread = 0.20;    // 3x3 convolutions
constexpr double kDenseSpread = 0.60;   // dense layers: one output row, the whole reduction per kernel

bool built(const std::string& target, const Config& cfg) {
  for (const runtime::TargetInfo* t : runtime::availableTargets())
    if (t->name == target) return t->supports(cfg);
  return false;
}

struct Workload {
  std::string name;
  double spread;  // the documented bound for its kind
  std::function<uint64_t(const std::string& target)> cycles;  // runs it, checks its output, returns cycles
};

// The benchmark programs of `tessera bench gemm` (smaller on small cores, as there), VTA's ALU
// tests and a few compiler operators, each run on `target` by one call.
std::vector<Workload> workloads(const Config& cfg) {
  std::vector<Workload> list;
  const std::string config = cfg.name;
  const int scale = cfg.blockIn * cfg.blockOut >= 256 ? 1 : 4;
  auto checked = [](const sw::WorkloadResult& r, const std::string& what) {
    EXPECT_TRUE(r.correct) << what << ": " << r.firstMismatch;
    return r.counters.cycles;
  };
  for (bool requantize : {false, true}) {
    sw::GemmProblem p;
    p.m = p.n = p.k = 256 / scale;
    p.requantize = requantize;
    const std::string name = "gemm " + std::to_string(p.m) + "^3" + (requantize ? " +requant" : "");
    list.push_back({name, kGemmSpread, [=](const std::string& target) {
                      runtime::Session::reset(target, config);
                      return checked(sw::runBlockedGemm(p), name + " on " + target);
                    }});
  }
  sw::ConvProblem conv;
  conv.inChannels = conv.outChannels = 256 / scale;
  const std::string convName = "conv3x3 14x14 " + std::to_string(conv.inChannels);
  list.push_back({convName, kConvSpread, [=](const std::string& target) {
                    runtime::Session::reset(target, config);
                    return checked(sw::runConv3x3(conv), convName + " on " + target);
                  }});
  const char* aluNames[] = {"min", "max", "add", "shr", "mul"};
  for (uint32_t op = 0; op < 5; ++op)
    for (bool useImm : {false, true}) {
      sw::AluProblem p;
      p.op = op;
      p.useImm = useImm;
      p.imm = op == 3 ? 3 : -7;
      p.rows = 64;
      const std::string name = std::string("alu ") + aluNames[op] + (useImm ? " imm" : "");
      list.push_back({name, kVectorSpread, [=](const std::string& target) {
                        runtime::Session::reset(target, config);
                        return checked(sw::runAluTest(p), name + " on " + target);
                      }});
    }
  compiler::op::Epilogue relu;
  relu.relu = true;
  relu.shift = 6;
  compiler::op::Epilogue sum;
  sum.bias = false;
  sum.shift = 1;
  struct Op {
    std::string name;
    compiler::op::Operator op;
    double spread;
  };
  const std::vector<Op> ops = {
      {"op conv2d 32x8x8->32 k3", compiler::op::Operator::conv2d(cfg.batch, 32, 8, 8, 32, 3, 1, 1, relu), kConvSpread},
      {"op dense 256->64", compiler::op::Operator::dense(cfg.batch, 256, 64, relu), kDenseSpread},
      {"op add 32x8x8", compiler::op::Operator::add(cfg.batch, 32, 8, 8, sum), kVectorSpread},
      {"op maxpool 32x16x16 k3 s2", compiler::op::Operator::maxPool(cfg.batch, 32, 16, 16, 3, 2, 1), kVectorSpread},
  };
  uint32_t seed = 1;
  for (const auto& [name, op, spread] : ops) {
    const compiler::op::OperatorData data = compiler::op::OperatorData::random(op, seed++);
    const compiler::op::Program prog = compiler::op::compile(cfg, op, data);
    const std::vector<int8_t> want = compiler::op::reference(op, data);
    list.push_back({name, spread, [=](const std::string& target) {
                      runtime::Session session(target, cfg);
                      const compiler::op::RunResult r = compiler::op::runProgram(prog, session, data);
                      EXPECT_EQ(r.output, want) << name << " on " << target;
                      return r.counters.cycles;
                    }});
  }
  return list;
}

// One config per ctest entry ($TESSERA_TIMING_CONFIG, set by tests/tsim/CMakeLists.txt for every
// shipped config), so a config added later is timed without editing this file.
TEST(HlsScTiming, CyclesStayWithinTheDocumentedSpreadOfRtlSc) {
  const char* name = std::getenv("TESSERA_TIMING_CONFIG");
  ASSERT_TRUE(name && *name) << "set TESSERA_TIMING_CONFIG to the config to time";
  const Config cfg = Config::load(name);
  if (!built("hls-sc", cfg) || !built("rtl-sc", cfg)) GTEST_SKIP() << "hls-sc or rtl-sc not built for " << cfg.name;
  std::printf("%-44s %12s %12s %8s %7s\n", ("config " + cfg.name).c_str(), "hls-sc cyc", "rtl-sc cyc", "ratio", "bound");
  for (const Workload& w : workloads(cfg)) {
    const uint64_t hls = w.cycles("hls-sc");
    const uint64_t rtl = w.cycles("rtl-sc");
    ASSERT_GT(rtl, 0u) << w.name;
    const double ratio = double(hls) / double(rtl);
    std::printf("%-44s %12llu %12llu %8.4f %6.0f%%\n", w.name.c_str(), static_cast<unsigned long long>(hls),
                static_cast<unsigned long long>(rtl), ratio, 100 * w.spread);
    EXPECT_LE(std::fabs(ratio - 1), w.spread) << w.name << " on " << cfg.name << ": hls-sc " << hls << " cycles, rtl-sc "
                                              << rtl;
  }
}

}  // namespace
