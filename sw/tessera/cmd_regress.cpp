// tessera regress: constrained-random programs on several targets, compared byte for byte, shrunk on mismatch.
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "cli.h"
#include "progress.h"
#include "tessera/support/error.h"
#include "tessera/regress/junit.h"
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

// --coverage DIR: the RTL targets of the list become their coverage builds, which count into DIR
// (tsim becomes tsim-cov:coverage=DIR, icebreaker-sim icebreaker-sim-cov:coverage=DIR); a list
// without one is refused, as it would count nothing.
std::string withCoverage(const std::string& targets, const std::string& dir) {
  std::string out;
  bool rtl = false;
  size_t from = 0;
  while (from <= targets.size()) {
    size_t comma = targets.find(',', from);
    if (comma == std::string::npos) comma = targets.size();
    std::string item = targets.substr(from, comma - from);
    const std::string name = item.substr(0, item.find(':'));
    const bool tsim = name == "tsim" || name == "tsim-cov", board = name == "icebreaker-sim" || name == "icebreaker-sim-cov";
    if (tsim || board) {
      if (item.find(":coverage=") != std::string::npos)
        throw po::error("--coverage and the target option coverage= of '" + item + "' say the same twice: give one");
      item = (tsim ? "tsim-cov" : "icebreaker-sim-cov") + item.substr(name.size()) + ":coverage=" + dir;
      rtl = true;
    }
    out += (out.empty() ? "" : ",") + item;
    from = comma + 1;
  }
  if (!rtl)
    throw po::error("--coverage counts the RTL's coverage on tsim-cov or icebreaker-sim-cov: the targets '" + targets +
                    "' have no tsim, icebreaker-sim or their coverage builds to count it on");
  return out;
}

// "I/N" of --shard: shard I (0-based) of N.
void parseShard(const std::string& text, uint64_t* index, uint64_t* count) {
  const size_t slash = text.find('/');
  auto number = [&](const std::string& part, const char* what) {
    if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos || part.size() > 18)
      throw po::error("--shard '" + text + "': " + what + " '" + part +
                      "' is not a decimal number (expected I/N, e.g. 0/4 for the first of four shards)");
    return std::stoull(part);
  };
  if (slash == std::string::npos)
    throw po::error("--shard '" + text + "': expected I/N, shard I (0 to N-1) of N, e.g. 0/4 for the first of four");
  *index = number(text.substr(0, slash), "the index");
  *count = number(text.substr(slash + 1), "the count");
  if (*count == 0) throw po::error("--shard '" + text + "': the count must be at least 1");
  if (*index >= *count)
    throw po::error("--shard '" + text + "': the index " + std::to_string(*index) + " must be below the count " +
                    std::to_string(*count) + " (shards are numbered 0 to N-1)");
}

// The signal that asked the run to stop (SIGINT, SIGTERM: Ctrl-C, or Slurm at the time limit), so
// the run ends after the current program and still writes its report.
volatile std::sig_atomic_t stopSignal = 0;
void onStopSignal(int sig) { stopSignal = sig; }

std::string clock(double seconds) {
  const long s = static_cast<long>(seconds);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
  return buf;
}

}  // namespace

int cmdRegress(const std::vector<std::string>& args) {
  po::options_description opts("options");
  std::string config, targets, size, shard, junit, reproducers, coverageDir, mergeJunit;
  std::vector<std::string> reports;
  uint64_t programs = 0, seed = 0;
  size_t shrinkRuns = 0;
  addConfigOption(opts, &config);
  opts.add_options()
      ("programs,n", po::value<uint64_t>(&programs)->default_value(100), "number of programs to generate and run")
      ("seed,s", po::value<uint64_t>(&seed)->default_value(1), "seed of the first program; program i uses seed + i")
      ("targets,t", po::value<std::string>(&targets),
       "comma-separated targets to compare, each NAME[:key=value]... (fsim:kernels=SET for one fsim kernel set); "
       "the first is the reference; counters=exact on a target also compares its counters, cycles included, with "
       "the nearest earlier cycle-counting target's (e.g. fsim,tsim,rtl-sc:counters=exact). Default: fsim,tsim if tsim runs the config, else fsim,fsim:kernels=generic")
      ("size", po::value<std::string>(&size)->default_value("small"), "program size: small, medium or large")
      ("keep-going,k", "continue after a mismatch (default: stop at the first)")
      ("print-program,p", "print each program's listing before running it")
      ("no-shrink", "report a mismatch without shrinking it")
      ("shrink-runs", po::value<size_t>(&shrinkRuns)->default_value(4000), "at most this many candidate runs per shrink")
      ("shard", po::value<std::string>(&shard),
       "I/N: run only program i with i % N == I (I from 0 to N-1); shards 0..N-1 together run each program once")
      ("junit", po::value<std::string>(&junit), "FILE: write a JUnit XML report (replaces an earlier report there)")
      ("reproducers", po::value<std::string>(&reproducers)->default_value("tessera-reproducers"),
       "DIR: write each mismatch, shrunk, as a reproducer file (replay: tessera sim --repro FILE)")
      ("no-reproducers", "write no reproducer files")
      ("quiet,q", "no line per agreeing program: only mismatches and the summary")
      ("coverage", po::value<std::string>(&coverageDir),
       "DIR: run the RTL with coverage (tsim becomes tsim-cov, icebreaker-sim icebreaker-sim-cov) and write this process's counts to DIR when it ends "
       "(tessera coverage report DIR)")
      ("merge-junit", po::value<std::string>(&mergeJunit),
       "OUT: run nothing; join the JUnit reports of a run's shards (the files after the options) into OUT")
      ("reports", po::value<std::vector<std::string>>(&reports), "shard reports for --merge-junit");
  po::positional_options_description pos;
  pos.add("reports", -1);
  po::variables_map vm;
  if (!parse("regress", "[--programs N] [--seed S] [--targets A,B] [--config C] [--size small|medium|large] "
                        "[--keep-going] [--print-program] [--no-shrink] [--shrink-runs N] [--shard I/N] [--junit FILE] "
                        "[--reproducers DIR | --no-reproducers] [--quiet] [--coverage DIR] | --merge-junit OUT SHARD.xml...",
             args, opts, &pos, &vm))
    return 0;

  if (vm.count("merge-junit")) {
    if (reports.empty()) throw po::error("--merge-junit: give the shard reports after the options");
    regress::checkJunitPath(mergeJunit);
    const regress::MergedJunit m = regress::mergeJunit(reports);
    regress::writeJunitFile(mergeJunit, m.xml);
    std::cout << "merged " << m.shards << " shard report(s) into " << mergeJunit << ": " << m.tests << " programs, "
              << m.failures << " mismatch(es), " << m.errors << " generator error(s), " << m.skipped << " not run\n";
    return m.failures || m.errors ? 1 : 0;
  }
  if (!reports.empty())
    throw po::error("unexpected argument '" + reports.front() + "' (shard reports go with --merge-junit OUT)");

  // Names that do not resolve are bad arguments (exit 2), like a malformed option.
  regress::RegressOptions o;
  try {
    o.cfg = hw::Config::load(config);
    if (targets.empty()) targets = defaultTargets(o.cfg);
    if (vm.count("coverage")) {
      if (coverageDir.empty()) throw po::error("--coverage: empty directory name");
      targets = withCoverage(targets, coverageDir);
    }
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
  if (vm.count("shard")) parseShard(shard, &o.shardIndex, &o.shardCount);
  if (vm.count("no-reproducers")) {
    if (!vm["reproducers"].defaulted()) throw po::error("--reproducers and --no-reproducers contradict each other");
    reproducers.clear();
  } else if (reproducers.empty()) {
    throw po::error("--reproducers: empty directory name (--no-reproducers writes none)");
  } else {
    struct stat st;
    if (::stat(reproducers.c_str(), &st) == 0 && !S_ISDIR(st.st_mode))
      throw po::error("--reproducers '" + reproducers + "': exists and is not a directory");
  }
  if (vm.count("junit")) regress::checkJunitPath(junit);
  o.seed = seed;
  o.programs = programs;
  o.keepGoing = vm.count("keep-going") != 0;
  o.printProgram = vm.count("print-program") != 0;
  o.shrink = vm.count("no-shrink") == 0;
  o.maxShrinkCandidates = shrinkRuns;
  o.quiet = vm.count("quiet") != 0;
  o.reproducerDir = reproducers;
  o.reproduce = "tessera regress --config " + config + " --size " + size + " --targets " + targets;

  // With stdout on the terminal too, the per-program lines already show progress.
  ProgressLine progress(ProgressLine::stderrIsTerminal() && (o.quiet || ::isatty(1) != 1));
  const std::string what = "regress" + (!vm.count("shard") ? std::string() : " shard " + shard);
  progress.set(what + ": starting");
  const auto t0 = std::chrono::steady_clock::now();
  if (progress.enabled())
    o.onProgram = [&](const regress::ProgramResult&, const regress::RegressSummary& sofar) {
      const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      const double rate = secs > 0 ? sofar.programs / secs : 0;
      char line[256];
      std::snprintf(line, sizeof line, "%s: %llu/%llu programs, %.1f/s, %llu mismatch%s, ETA %s", what.c_str(),
                    static_cast<unsigned long long>(sofar.programs), static_cast<unsigned long long>(sofar.planned),
                    rate, static_cast<unsigned long long>(sofar.failures), sofar.failures == 1 ? "" : "es",
                    rate > 0 ? clock((sofar.planned - sofar.programs) / rate).c_str() : "?");
      progress.set(line);
    };
  struct sigaction stop = {}, oldInt = {}, oldTerm = {};
  stop.sa_handler = onStopSignal;
  ::sigaction(SIGINT, &stop, &oldInt);
  ::sigaction(SIGTERM, &stop, &oldTerm);
  o.stopRequested = [] { return stopSignal != 0; };
  const regress::RegressSummary sum = regress::runRegression(o, std::cout);
  // A second signal while the report is written ends the process as usual.
  ::sigaction(SIGINT, &oldInt, nullptr);
  ::sigaction(SIGTERM, &oldTerm, nullptr);
  if (!junit.empty()) {
    regress::writeJunitFile(junit, regress::formatJunit(o, sum));
    std::cout << "JUnit report: " << junit << "\n";
  }
  if (sum.stopped) return 128 + stopSignal;
  return sum.failures ? 1 : 0;
}

}  // namespace tessera::cli
