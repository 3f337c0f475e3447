// tessera regress: constrained-random programs on several targets, compared byte for byte, shrunk on mismatch.
#include <cstdlib>
#include <iostream>

#include "cli.h"
#include "tessera/hw/error.h"
#include "tessera/regress/runner.h"

namespace tessera::cli {

namespace {

// fsim against the RTL simulator when it is built for `cfg`; otherwise against itself with the
// portable kernels, which still holds the vector kernels and the generator's validity to account.
std::string defaultTargets(const hw::Config& cfg) {
  for (const auto* t : runtime::availableTargets())
    if (t->name == "tsim" && t->supports(cfg)) return "fsim,tsim";
  return "fsim,fsim:kernels=generic";
}

}  // namespace

int cmdRegress(const std::vector<std::string>& args) {
  po::options_description opts("options");
  std::string config, targets, size;
  uint64_t programs = 0, seed = 0;
  size_t shrinkRuns = 0;
  addConfigOption(opts, &config);
  opts.add_options()
      ("programs,n", po::value<uint64_t>(&programs)->default_value(100), "number of programs to generate and run")
      ("seed,s", po::value<uint64_t>(&seed)->default_value(1), "seed of the first program; program i uses seed + i")
      ("targets,t", po::value<std::string>(&targets),
       "comma-separated targets to compare, each NAME[:key=value]... (fsim:kernels=SET for one fsim kernel set); "
       "the first is the reference. Default: fsim,tsim if tsim runs the config, else fsim,fsim:kernels=generic")
      ("size", po::value<std::string>(&size)->default_value("small"), "program size: small, medium or large")
      ("keep-going,k", "continue after a mismatch (default: stop at the first)")
      ("print-program,p", "print each program's listing before running it")
      ("no-shrink", "report a mismatch without shrinking it")
      ("shrink-runs", po::value<size_t>(&shrinkRuns)->default_value(4000), "at most this many candidate runs per shrink");
  po::variables_map vm;
  if (!parse("regress", "[--programs N] [--seed S] [--targets A,B] [--config C] [--size small|medium|large] "
                        "[--keep-going] [--print-program]",
             args, opts, nullptr, &vm))
    return 0;

  // Names that do not resolve are bad arguments (exit 2), like a malformed option.
  regress::RegressOptions o;
  try {
    o.cfg = hw::Config::load(config);
    if (targets.empty()) targets = defaultTargets(o.cfg);
    o.size = regress::parseSize(size);
    o.targets = regress::parseTargetList(targets);
    // A target may support only some configs (the RTL is built per config): find out now rather
    // than report every program as a mismatch.
    for (const auto& t : o.targets) {
      hw::Dram dram(o.cfg);
      t.create(o.cfg, dram);
    }
  } catch (const Error& e) {
    throw po::error(e.what());
  }
  if (programs == 0) throw po::error("--programs must be at least 1");
  o.seed = seed;
  o.programs = programs;
  o.keepGoing = vm.count("keep-going") != 0;
  o.printProgram = vm.count("print-program") != 0;
  o.shrink = vm.count("no-shrink") == 0;
  o.maxShrinkCandidates = shrinkRuns;
  o.reproduce = "tessera regress --config " + config + " --size " + size + " --targets " + targets;
  const regress::RegressSummary sum = regress::runRegression(o, std::cout);
  return sum.failures ? 1 : 0;
}

}  // namespace tessera::cli
