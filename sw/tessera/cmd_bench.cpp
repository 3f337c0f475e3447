// tessera bench: accelerator benchmarks on any target, with cycles, utilization and simulation speed.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "cli.h"
#include "tessera/compiler/op/compile.h"
#include "tessera/compiler/op/program.h"
#include "tessera/compiler/op/suite.h"
#include "tessera/runtime/session.h"
#include "tessera/runtime/target.h"
#include "tessera/support/error.h"
#include "tessera/support/format.h"
#include "tessera/sw/workloads.h"

namespace tessera::cli {

namespace {

struct BenchRow {
  std::string name;
  sw::WorkloadResult result;
};

// One table row; cycle-derived columns show "-" on untimed targets.
void printRow(const hw::Config& cfg, const BenchRow& row) {
  const auto& c = row.result.counters;
  const uint64_t idealCycles = row.result.macs / (uint64_t(cfg.batch) * cfg.blockIn * cfg.blockOut);
  // Timed targets count bus beats (instructions and micro-ops included); fsim counts LOAD/STORE bytes.
  const uint64_t readBytes = c.cycles ? c.dramReadBeats * uint64_t(cfg.busBytes) : c.totalLoadBytes();
  const uint64_t writeBytes = c.cycles ? c.dramWriteBeats * uint64_t(cfg.busBytes) : c.storeBytes;
  char util[32] = "-", speed[32] = "-", cycles[32] = "-";
  if (c.cycles) {
    std::snprintf(util, sizeof util, "%.1f%%", 100.0 * double(idealCycles) / double(c.cycles));
    std::snprintf(cycles, sizeof cycles, "%s", thousands(c.cycles).c_str());
    if (row.result.deviceSeconds > 0)
      std::snprintf(speed, sizeof speed, "%s", thousands(uint64_t(double(c.cycles) / row.result.deviceSeconds)).c_str());
  }
  std::printf("%-30s %14s %12s %12s %7s %12s %12s %9.3f %12s  %s\n", row.name.c_str(),
              thousands(row.result.macs).c_str(), cycles, thousands(idealCycles).c_str(), util,
              thousands(readBytes).c_str(), thousands(writeBytes).c_str(), row.result.deviceSeconds, speed,
              row.result.correct ? "ok" : ("MISMATCH: " + row.result.firstMismatch).c_str());
}

void printHeader() {
  std::printf("%-30s %14s %12s %12s %7s %12s %12s %9s %12s  %s\n", "workload", "MACs", "cycles", "ideal", "util",
              "DRAM read B", "DRAM write B", "wall s", "cycles/s", "check");
}

// ResNet-18's layers compiled and run on the session's target, one row each, then the network total.
int benchResnet18(runtime::Session& session) {
  const hw::Config& cfg = session.config();
  const uint64_t perCycle = uint64_t(cfg.batch) * cfg.blockIn * cfg.blockOut;
  std::printf("tessera bench resnet18: target %s, config %s (%dx%dx%d GEMM core, %llu MACs/cycle)\n\n",
              session.targetName().c_str(), cfg.name.c_str(), cfg.batch, cfg.blockIn, cfg.blockOut,
              static_cast<unsigned long long>(perCycle));
  std::printf("%-5s %-26s %3s %14s %11s %11s %7s %11s %11s %10s %8s %10s  %s\n", "layer", "shape", "x", "MACs", "ideal",
              "cycles", "util", "DRAM read B", "DRAM wr B", "compile ms", "est err", "tiling", "check");
  struct Total {
    uint64_t macs = 0, ideal = 0, cycles = 0, read = 0, write = 0;
    double weightedUtil = 0;  // sum of MACs x utilization
  } all, c2to11;
  double compileSeconds = 0;
  int failures = 0;
  uint32_t seed = 1;
  for (const compiler::op::SuiteLayer& layer : compiler::op::resnet18Suite()) {
    const compiler::op::Operator& op = layer.op;
    const compiler::op::OperatorData data = compiler::op::OperatorData::random(op, seed++);
    const auto t0 = std::chrono::steady_clock::now();
    const compiler::op::Program prog = compiler::op::compile(cfg, op, data);
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    compileSeconds += secs;
    const compiler::op::RunResult r = compiler::op::runProgram(prog, session, data);
    const bool ok = r.output == compiler::op::reference(op, data);
    if (!ok) ++failures;
    const hw::Counters& c = r.counters;
    const uint64_t ideal = op.macs() / perCycle;
    const uint64_t read = c.cycles ? c.dramReadBeats * uint64_t(cfg.busBytes) : c.totalLoadBytes();
    const uint64_t write = c.cycles ? c.dramWriteBeats * uint64_t(cfg.busBytes) : c.storeBytes;
    char shape[64], util[16] = "-", cycles[32] = "-", err[16] = "-";
    if (op.kind == compiler::op::OpKind::kDense)
      std::snprintf(shape, sizeof shape, "dense %d->%d", op.inChannels, op.outChannels);
    else
      std::snprintf(shape, sizeof shape, "%dx%dx%d->%d k%d p%d s%d", op.height, op.width, op.inChannels, op.outChannels,
                    op.kernelH, op.padH, op.strideH);
    if (c.cycles) {
      std::snprintf(util, sizeof util, "%.1f%%", 100.0 * double(ideal) / double(c.cycles));
      std::snprintf(cycles, sizeof cycles, "%s", thousands(c.cycles).c_str());
      std::snprintf(err, sizeof err, "%+.1f%%", 100.0 * (prog.summary.estimatedCycles - double(c.cycles)) / double(c.cycles));
    }
    const std::string& t = prog.summary.tiling;
    std::printf("%-5s %-26s %3d %14s %11s %11s %7s %11s %11s %10.2f %8s %10s  %s\n", op.name.c_str(), shape,
                layer.occurrences, thousands(op.macs()).c_str(), thousands(ideal).c_str(), cycles, util,
                thousands(read).c_str(), thousands(write).c_str(), secs * 1e3, err, t.substr(0, t.find(' ', t.find("tci="))).c_str(),
                ok ? "ok" : "MISMATCH");
    for (Total* to : {&all, &c2to11}) {
      if (to == &c2to11 && (op.name == "C1" || op.name == "FC")) continue;
      const uint64_t n = uint64_t(layer.occurrences);
      to->macs += n * op.macs();
      to->ideal += n * ideal;
      to->cycles += n * c.cycles;
      to->read += n * read;
      to->write += n * write;
      if (c.cycles) to->weightedUtil += double(n * op.macs()) * double(ideal) / double(c.cycles);
    }
  }
  auto totalLine = [&](const char* name, const char* what, const Total& t) {
    char util[16] = "-";
    if (t.cycles) std::snprintf(util, sizeof util, "%.1f%%", 100.0 * t.weightedUtil / double(t.macs));
    std::printf("%-5s %-26s %3s %14s %11s %11s %7s %11s %11s\n", name, what, "", thousands(t.macs).c_str(),
                thousands(t.ideal).c_str(), t.cycles ? thousands(t.cycles).c_str() : "-", util,
                thousands(t.read).c_str(), thousands(t.write).c_str());
  };
  std::printf("\n");
  totalLine("total", "ResNet-18 (x = occurrences)", all);
  totalLine("C2-11", "C2..C11 with occurrences", c2to11);

  // The layers VTA left to the CPU: max pooling, residual adds, global average pooling.
  std::printf("\nvector-ALU layers\n%-5s %-26s %3s %14s %11s %11s %11s %11s %10s %8s %10s  %s\n", "layer", "shape", "x",
              "outputs", "cycles", "outputs/cyc", "DRAM read B", "DRAM wr B", "compile ms", "est err", "tiling", "check");
  uint64_t vectorCycles = 0;
  for (const compiler::op::SuiteLayer& layer : compiler::op::resnet18VectorSuite()) {
    const compiler::op::Operator& op = layer.op;
    const compiler::op::OperatorData data = compiler::op::OperatorData::random(op, seed++);
    const auto t0 = std::chrono::steady_clock::now();
    const compiler::op::Program prog = compiler::op::compile(cfg, op, data);
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    compileSeconds += secs;
    const compiler::op::RunResult r = compiler::op::runProgram(prog, session, data);
    const bool ok = r.output == compiler::op::reference(op, data);
    if (!ok) ++failures;
    const hw::Counters& c = r.counters;
    const uint64_t outputs = uint64_t(op.batch) * op.outChannels * op.outHeight() * op.outWidth();
    const uint64_t read = c.cycles ? c.dramReadBeats * uint64_t(cfg.busBytes) : c.totalLoadBytes();
    const uint64_t write = c.cycles ? c.dramWriteBeats * uint64_t(cfg.busBytes) : c.storeBytes;
    char shape[64], rate[16] = "-", cycles[32] = "-", err[16] = "-";
    if (op.kind == compiler::op::OpKind::kAdd)
      std::snprintf(shape, sizeof shape, "add %dx%dx%d", op.height, op.width, op.inChannels);
    else
      std::snprintf(shape, sizeof shape, "%s %dx%dx%d k%d p%d s%d", op.kind == compiler::op::OpKind::kMaxPool ? "max" : "avg",
                    op.height, op.width, op.inChannels, op.kernelH, op.padH, op.strideH);
    if (c.cycles) {
      std::snprintf(rate, sizeof rate, "%.2f", double(outputs) / double(c.cycles));
      std::snprintf(cycles, sizeof cycles, "%s", thousands(c.cycles).c_str());
      std::snprintf(err, sizeof err, "%+.1f%%", 100.0 * (prog.summary.estimatedCycles - double(c.cycles)) / double(c.cycles));
    }
    vectorCycles += uint64_t(layer.occurrences) * c.cycles;
    const std::string& t = prog.summary.tiling;
    std::printf("%-5s %-26s %3d %14s %11s %11s %11s %11s %10.2f %8s %10s  %s\n", op.name.c_str(), shape,
                layer.occurrences, thousands(outputs).c_str(), cycles, rate, thousands(read).c_str(),
                thousands(write).c_str(), secs * 1e3, err, t.substr(0, t.find(' ', t.find("tci="))).c_str(),
                ok ? "ok" : "MISMATCH");
  }
  if (all.cycles)
    std::printf("\nnetwork: %s cycles with occurrences (convolutions and dense %s, vector-ALU layers %s = %.1f%%)\n",
                thousands(all.cycles + vectorCycles).c_str(), thousands(all.cycles).c_str(),
                thousands(vectorCycles).c_str(), 100.0 * double(vectorCycles) / double(all.cycles + vectorCycles));
  std::printf("\ncompile time of the whole suite: %.1f ms\n", compileSeconds * 1e3);
  std::printf("ideal = MACs / (BATCH*BLOCK_IN*BLOCK_OUT), of the unpadded layer; util = ideal / cycles; the total "
              "lines' util is MAC-weighted;\nest err = (cost-model estimate - cycles) / cycles; DRAM bytes are bus beats x "
              "bus bytes on timed targets, LOAD/STORE bytes on fsim.\n");
  if (benchResnet18Graph(session, false)) ++failures;
  return failures ? 1 : 0;
}

}  // namespace

int cmdBench(const std::vector<std::string>& args) {
  // A model file (--model): the model module compiles and runs it (cmd_graph.cpp).
  for (const std::string& a : args)
    if (a == "--model" || a.rfind("--model=", 0) == 0) return cmdBenchModel(args);
  po::options_description opts("options");
  std::string config, target, which, compare;
  bool json = false;
  int m = 0, n = 0, k = 0, tileM = 0, tileN = 0, tileK = 0;
  addConfigOption(opts, &config);
  addTargetOption(opts, &target, "tsim");
  opts.add_options()
      ("benchmark", po::value<std::string>(&which)->default_value("gemm"), "benchmark: gemm or resnet18")
      ("m", po::value<int>(&m)->default_value(0), "run only this GEMM shape: rows (with --n and --k)")
      ("n", po::value<int>(&n)->default_value(0), "GEMM columns")
      ("k", po::value<int>(&k)->default_value(0), "GEMM reduction length")
      ("tile-m", po::value<int>(&tileM)->default_value(0), "GEMM tile rows (0: chosen by the cycle model)")
      ("tile-n", po::value<int>(&tileN)->default_value(0), "GEMM tile columns (0: chosen)")
      ("tile-k", po::value<int>(&tileK)->default_value(0), "GEMM tile reduction length (0: chosen)")
      ("compare", po::value<std::string>(&compare), "run the same programs on this target too and print both "
       "cycle counts side by side (e.g. --target hls-sc --compare rtl-sc)")
      ("json", po::bool_switch(&json), "resnet18: the whole network's figures as one JSON object");
  po::positional_options_description pos;
  pos.add("benchmark", 1);
  po::variables_map vm;
  if (!parse("bench", "gemm [--target T] [--config C] [--m M --n N --k K] [--compare T2] | resnet18 [--target T] [--config C] [--json] | --model MODEL.onnx|MODEL.tsm --input FILE [--calibrate DIR|IDX] [--target T] [--json]",
             args, opts, &pos, &vm))
    return 0;
  if (which == "resnet18") {
    if (m || n || k || tileM || tileN || tileK || !compare.empty())
      throw Error("tessera bench resnet18", "takes only --target, --config and --json");
    runtime::Session::reset(target, config);
    // --json: the whole network's figures as one object (the per-layer suite is text only).
    if (json) return benchResnet18Graph(runtime::Session::global(), true);
    return benchResnet18(runtime::Session::global());
  }
  if (json) throw Error("tessera bench gemm", "--json is for resnet18");
  if (which != "gemm") throw Error("tessera bench", "unknown benchmark '" + which + "' (available: gemm, resnet18)");
  if ((m || n || k) && !(m && n && k)) throw Error("tessera bench gemm", "--m, --n and --k go together");

  runtime::Session::reset(target, config);
  auto& session = runtime::Session::global();
  // A copy: --compare resets the global session, which destroys the first session's config while
  // the second target's rows are still printed with it.
  const hw::Config cfg = session.config();
  if (!compare.empty()) {
    // Refuse a second target that cannot run before spending minutes on the first.
    const runtime::TargetInfo& info = runtime::findTarget(compare);
    if (!info.supports(cfg)) throw Error("--compare " + compare, info.unsupportedReason(cfg));
  }
  std::printf("tessera bench gemm: target %s, config %s (%dx%dx%d GEMM core, %d MACs/cycle)\n\n",
              session.targetName().c_str(), cfg.name.c_str(), cfg.batch, cfg.blockIn, cfg.blockOut,
              cfg.batch * cfg.blockIn * cfg.blockOut);

  struct Job {
    std::string name;
    std::function<sw::WorkloadResult()> run;
  };
  std::vector<Job> jobs;
  std::vector<std::string> tilings;
  auto gemm = [&](int gm, int gn, int gk, bool requantize) {
    sw::GemmProblem p;
    p.m = gm;
    p.n = gn;
    p.k = gk;
    p.requantize = requantize;
    p.tileM = tileM;
    p.tileN = tileN;
    p.tileK = tileK;
    const sw::GemmTiling t = sw::chooseGemmTiling(cfg, p);
    tilings.push_back("gemm " + std::to_string(gm) + "x" + std::to_string(gn) + "x" + std::to_string(gk) +
                      ": tiles " + std::to_string(t.tb * cfg.batch) + "x" + std::to_string(t.to * cfg.blockOut) +
                      "x" + std::to_string(t.tk * cfg.blockIn) + ", model estimate " +
                      std::to_string(static_cast<uint64_t>(t.estimatedCycles)) + " cycles");
    std::string name = "gemm " + std::to_string(gm) + "x" + std::to_string(gn) + "x" + std::to_string(gk) +
                       (requantize ? " +requant" : "");
    jobs.push_back({name, [p] { return sw::runBlockedGemm(p); }});
  };
  if (m) {
    gemm(m, n, k, false);
    gemm(m, n, k, true);
  } else {
    // Compute-bound GEMMs (no epilogue), the same with the ALU requantization epilogue, and the
    // 3x3 convolution tile loop with padded strided input loads.
    const int scale = cfg.blockIn * cfg.blockOut >= 256 ? 1 : 4;  // smaller cores: smaller problems
    gemm(256 / scale, 256 / scale, 256 / scale, false);
    gemm(256 / scale, 256 / scale, 512 / scale, false);
    gemm(512 / scale, 512 / scale, 512 / scale, false);
    gemm(256 / scale, 256 / scale, 256 / scale, true);
    sw::ConvProblem conv;
    conv.height = conv.width = 14;
    conv.inChannels = conv.outChannels = 256 / scale;
    jobs.push_back({"conv3x3 14x14 " + std::to_string(conv.inChannels) + "->" + std::to_string(conv.outChannels),
                    [conv] { return sw::runConv3x3(conv); }});
  }

  printHeader();
  int failures = 0;
  std::vector<BenchRow> rows;
  for (const auto& job : jobs) {
    rows.push_back({job.name, job.run()});
    printRow(cfg, rows.back());
    if (!rows.back().result.correct) ++failures;
  }
  std::printf("\n");
  if (!compare.empty()) {
    // The same programs (same tiling, data and instruction streams) on the second target.
    const std::string first = session.targetName();
    runtime::Session::reset(compare, config);
    const std::string second = runtime::Session::global().targetName();
    std::printf("the same programs on target %s:\n\n", second.c_str());
    printHeader();
    std::vector<BenchRow> other;
    for (const auto& job : jobs) {
      other.push_back({job.name, job.run()});
      printRow(cfg, other.back());
      if (!other.back().result.correct) ++failures;
    }
    std::printf("\n%-30s %12s %12s %8s\n", "workload", (first + " cyc").c_str(), (second + " cyc").c_str(), "ratio");
    for (size_t i = 0; i < rows.size(); ++i) {
      const uint64_t a = rows[i].result.counters.cycles, b = other[i].result.counters.cycles;
      char ratio[32] = "-";
      if (a && b) std::snprintf(ratio, sizeof ratio, "%.3f", double(a) / double(b));
      std::printf("%-30s %12s %12s %8s\n", rows[i].name.c_str(), a ? thousands(a).c_str() : "-",
                  b ? thousands(b).c_str() : "-", ratio);
    }
    std::printf("\n");
  }
  for (const auto& t : tilings) std::printf("%s\n", t.c_str());
  std::printf("\nideal = MACs / (BATCH*BLOCK_IN*BLOCK_OUT); util = ideal / cycles (GEMM-core utilization);\n"
              "cycles/s = simulated cycles per second of wall time inside the device run.\n");
  return failures ? 1 : 0;
}

}  // namespace tessera::cli
