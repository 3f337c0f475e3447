// tessera sim: a bare-metal loader and runner over simulated DRAM, on any target.
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "progress.h"
#include "tessera/hw/asm.h"
#include "tessera/support/error.h"
#include "tessera/regress/reproducer.h"
#include "tessera/runtime/session.h"
#include "tessera/support/file_io.h"
#include "tessera/support/format.h"

namespace tessera::cli {

namespace {

struct Placement {
  std::string file;
  uint64_t addr;
  uint64_t size;
};

// Large --load files are mapped from the page cache (hw::Dram::loadFile): one that shrinks while
// the run reads it raises SIGBUS, reported as an error rather than a crash.
void onSigbus(int) {
  static const char msg[] =
      "tessera sim: error: a file given to --load changed size while the run read it (SIGBUS)\n";
  ssize_t ignored = ::write(2, msg, sizeof msg - 1);
  (void)ignored;
  ::_exit(1);
}

// --repro: the reproducer brings its config, DRAM image and targets, so the options that set
// those up here would be ignored; they are refused rather than silently dropped.
int replayRepro(const std::string& file, const po::variables_map& vm, const std::string& target) {
  for (const char* option : {"insn", "load", "dump", "trace", "target-option", "wait-cycles"})
    if (vm.count(option) && !vm[option].defaulted())
      throw po::error(std::string("--") + option + " does not go with --repro (the reproducer holds the whole run)");
  if (!vm["config"].defaulted()) throw po::error("--config does not go with --repro (the reproducer holds its config)");
  const regress::Reproducer r = regress::readReproducer(file);
  std::ostringstream out;
  bool differ;
  {
    ProgressLine progress(ProgressLine::stderrIsTerminal());
    progress.set("sim: replaying " + file);
    differ = regress::replayReproducer(r, vm["target"].defaulted() ? std::string() : target, out);
  }
  std::fputs(out.str().c_str(), stdout);
  return differ ? 1 : 0;
}

}  // namespace

int cmdSim(const std::vector<std::string>& args) {
  po::options_description opts("options");
  std::string config, target, insn, repro;
  std::vector<std::string> loads, dumps, targetOptions;
  std::string trace;
  addConfigOption(opts, &config);
  addTargetOption(opts, &target, "fsim");
  opts.add_options()
      ("load,l", po::value<std::vector<std::string>>(&loads), "FILE@ADDR: place a file's bytes at a physical address (repeatable)")
      ("insn,i", po::value<std::string>(&insn),
       "ADDR:COUNT of instructions already loaded, or a program FILE placed automatically")
      ("repro", po::value<std::string>(&repro),
       "FILE: replay a tessera regress reproducer on its targets (or on --target A,B,...) and show the difference")
      ("dump,d", po::value<std::vector<std::string>>(&dumps), "ADDR:BYTES:FILE: write DRAM bytes to a file after the run (repeatable)")
      ("wait-cycles,w", po::value<uint32_t>()->default_value(0),
       "stop with an error past this many cycles (fsim: GEMM/ALU micro-ops); 0: no bound")
      ("target-option,o", po::value<std::vector<std::string>>(&targetOptions),
       "KEY=VALUE: a target option, e.g. mem-latency=100 on tsim (repeatable; adds to $TESSERA_TARGET_OPTIONS)")
      ("trace", po::value<std::string>(&trace), "FILE: write an FST waveform of the run (tsim; view with GTKWave)")
      ("stats,s", "print the target's counters")
      ("force,f", "replace existing dump and trace files");
  po::variables_map vm;
  if (!parse("sim",
             "--insn ADDR:COUNT|FILE [--load FILE@ADDR]... [--dump ADDR:BYTES:FILE]... [--config C] [--target T] "
             "[--target-option KEY=VALUE]... [--trace FILE] [--stats] | --repro FILE [--target A,B,...]",
             args, opts, nullptr, &vm))
    return 0;
  if (!repro.empty()) return replayRepro(repro, vm, target);
  if (insn.empty()) throw po::error("the option '--insn' is required but missing (or give --repro FILE)");

  runtime::TargetOptions options = parseTargetOptionSpecs(targetOptions);
  if (!trace.empty()) {
    bool traces = false;
    for (const auto& o : runtime::findTarget(target).options) traces |= o.first == "trace";
    if (!traces) throw Error("--trace " + trace, "target " + target + " writes no waveforms (tsim does)");
    options["trace"] = trace;
    if (vm.count("force")) options["trace-force"] = "1";
  }
  runtime::Session session(target, hw::Config::load(config), options);
  hw::Dram& dram = session.dram();

  // Place files, refusing overlaps so one load cannot silently clobber another.
  std::vector<Placement> placed;
  uint64_t highest = hw::Dram::kPageBytes;
  struct sigaction bus = {};
  bus.sa_handler = onSigbus;
  ::sigaction(SIGBUS, &bus, nullptr);
  for (const auto& spec : loads) {
    const LoadSpec load = parseLoadSpec(spec);
    Placement p{load.file, load.addr, 0};
    struct stat st;
    if (::stat(p.file.c_str(), &st) != 0) throw Error(p.file, "cannot open file for reading");
    p.size = S_ISREG(st.st_mode) ? static_cast<uint64_t>(st.st_size) : 0;
    for (const auto& q : placed)
      if (p.addr < q.addr + q.size && q.addr < p.addr + p.size)
        throw Error("--load " + spec, "overlaps " + q.file + " at [" + hex(q.addr) + ", " + hex(q.addr + q.size) + ")");
    p.size = dram.loadFile(p.addr, p.file, "--load " + spec);
    for (const auto& q : placed)  // a pipe's size is known only once read
      if (p.addr < q.addr + q.size && q.addr < p.addr + p.size)
        throw Error("--load " + spec, "overlaps " + q.file + " at [" + hex(q.addr) + ", " + hex(q.addr + q.size) + ")");
    highest = std::max<uint64_t>(highest, p.addr + p.size);
    placed.push_back(std::move(p));
  }

  uint64_t insnAddr;
  uint64_t count;
  if (insn.find(':') != std::string::npos) {
    const InsnRange range = parseInsnRange(insn);
    insnAddr = range.addr;
    count = range.count;
  } else {
    auto program = hw::readProgramFile(insn);
    auto bytes = hw::programBytes(program);
    // Place the program after everything loaded, page aligned.
    insnAddr = (highest + hw::Dram::kPageBytes - 1) / hw::Dram::kPageBytes * hw::Dram::kPageBytes;
    dram.write(insnAddr, bytes.data(), bytes.size(), "--insn " + insn);
    count = program.size();
    std::printf("placed %llu instructions from %s at %s\n", static_cast<unsigned long long>(count), insn.c_str(),
                hex(insnAddr).c_str());
  }

  // Malformed dumps fail before the run, not after minutes of simulation.
  std::vector<DumpSpec> dumpSpecs;
  for (const auto& spec : dumps) {
    dumpSpecs.push_back(parseDumpSpec(spec));
    dram.at(dumpSpecs.back().addr, dumpSpecs.back().bytes, "--dump " + spec);
  }

  auto device = session.createDevice();
  auto t0 = std::chrono::steady_clock::now();
  {
    ProgressLine progress(ProgressLine::stderrIsTerminal());
    progress.set("sim: running " + std::to_string(count) + " instructions on " + target);
    device->run(insnAddr, static_cast<uint32_t>(count), vm["wait-cycles"].as<uint32_t>());
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("ran %llu instructions on %s (config %s) in %.3f ms\n", static_cast<unsigned long long>(count),
              target.c_str(), session.config().name.c_str(), secs * 1e3);
  // Timed targets: how fast the simulation itself went.
  const uint64_t cycles = device->counters().cycles;
  if (cycles && secs > 0)
    std::printf("%llu cycles simulated at %.0f cycles/s\n", static_cast<unsigned long long>(cycles), cycles / secs);

  for (size_t i = 0; i < dumps.size(); ++i) {
    const DumpSpec& d = dumpSpecs[i];
    writeBinaryFile(d.file, dram.at(d.addr, d.bytes, "--dump " + dumps[i]), d.bytes, vm.count("force") != 0);
    std::printf("dumped %llu bytes at %s to %s\n", static_cast<unsigned long long>(d.bytes), hex(d.addr).c_str(),
                d.file.c_str());
  }
  if (vm.count("stats")) std::printf("%s", device->counters().format().c_str());
  return 0;
}

}  // namespace tessera::cli
