// Cross-model runner: a program on several targets, DRAM comparison, the shrinker and the regression loop.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "tessera/hw/config.h"
#include "tessera/hw/counters.h"
#include "tessera/hw/dram.h"
#include "tessera/hw/insn_trace.h"
#include "tessera/regress/generator.h"
#include "tessera/regress/program.h"
#include "tessera/runtime/target.h"

namespace tessera::regress {

// A target to compare: a label for reports and how to make a fresh instance on a fresh DRAM.
struct TargetSpec {
  std::string label;
  std::function<std::unique_ptr<runtime::Target>(const hw::Config&, hw::Dram&)> create;
  // counters=exact: this target's counters must equal the nearest earlier cycle-counting target's.
  bool exactCounters = false;
};

// "NAME[:key=value]...": a target and its target options (runtime::TargetOptions, checked when
// the target is created), e.g. fsim:kernels=generic for an fsim instance on the portable kernel set.
// One key belongs to the regression itself, for testing the harness: fault=flip-stored-byte runs
// the target and then flips bit 6 of the first byte the stream's last STORE wrote, a deliberate
// disagreement that stays as long as the program stores anything. Never on unless spelled out.
// Another is counters=exact: besides DRAM, every counter of this target (hw::Counters, cycles and
// per-module busy and stall cycles included) and, where both record them, every instruction's
// span on each unit must equal those of the nearest earlier target that counts cycles, for RTL
// models of one design and memory timing, which agree cycle for cycle (tsim, tsim-cov, tsim-mut,
// rtl-sc, gls). Throws tessera::Error naming the spec if there is no such target, an option is not key=value,
// or the fault is not one of those.
TargetSpec parseTargetSpec(const std::string& text);
// Comma-separated specs, at least two; counters=exact not on the first.
std::vector<TargetSpec> parseTargetList(const std::string& text);

// One run of a program on one target.
struct Outcome {
  bool failed = false;
  std::string error;                          // the target's error message if it failed
  std::vector<std::vector<uint8_t>> regions;  // final bytes of every region of the program
  hw::Counters counters;
  double seconds = 0;                         // wall time of Target::run
  bool traced = false;                        // the target recorded instruction spans (timed targets)
  std::vector<hw::RunSpans> spans;            // of the run, when traced
};

// Fresh DRAM holding the program's regions, a fresh target, one run. The watchdog (wait_cycles)
// is 50x the program's cycle estimate, at least 10^6 cycles. With `traceSpans`, a timed target
// also records every instruction's span on its units (Target::traceInstructions).
Outcome execute(const Program& p, const TargetSpec& target, bool traceSpans = false);

// Why two targets disagree.
struct Mismatch {
  bool allFailed = false;  // every target failed: not a disagreement, but nothing was checked
  std::string summary;     // one line
  std::string detail;      // the first difference: region, address, STORE, row, element, lane, values
  std::string target;      // label of the target that disagrees with the reference; empty if all failed
  std::string firstDifference;  // one line: the first differing address and both values, or the error
};

// Compares every target's outcome with the first one's: one failing while another completes,
// or any byte of any region different; and a counters=exact target's counters with the nearest
// earlier cycle-counting target's. nullopt if they agree.
std::optional<Mismatch> compare(const Program& p, const std::vector<TargetSpec>& targets,
                                const std::vector<Outcome>& outcomes);

struct Trial {
  std::vector<Outcome> outcomes;
  std::optional<Mismatch> mismatch;
};
Trial runTrial(const Program& p, const std::vector<TargetSpec>& targets);

struct ShrinkResult {
  Program program;
  Mismatch mismatch;
  size_t candidates = 0;  // programs run
  size_t accepted = 0;    // of which still failed and became the new smallest
};

// Delta debugging of a failing program: removes blocks, then the extra tokens, extra orderings
// and single ops, then simplifies ops (loops to one iteration, kernels to one micro-op, rows and columns to one,
// padding off), re-lowering each candidate so its tokens stay balanced. A candidate counts only if
// checkProgram accepts it and it still fails the same way (a disagreement, or every target
// failing). Stops after `maxCandidates` runs.
ShrinkResult shrink(const Program& failing, const std::vector<TargetSpec>& targets, size_t maxCandidates = 4000);

// What happened to one program of a regression, for reports such as JUnit.
struct ProgramResult {
  enum class Status { kOk, kMismatch, kGeneratorError, kNotRun };
  uint64_t seed = 0;
  Status status = Status::kNotRun;
  double seconds = 0;      // generation, check and every target's run
  std::string target;      // the disagreeing target (mismatches)
  std::string message;     // one line naming seed, target and first difference (failures)
  std::string detail;      // the full report of the failure, with the command reproducing it
  std::string reproducer;  // the reproducer file written for it, if any
};

struct RegressSummary;

struct RegressOptions {
  hw::Config cfg;
  uint64_t seed = 1;       // program i uses seed + i
  uint64_t programs = 100;
  // Sharding: this run takes program i (seed + i) of the `programs` exactly when
  // i % shardCount == shardIndex, so shards 0..shardCount-1 together run each program once.
  uint64_t shardIndex = 0, shardCount = 1;
  bool quiet = false;      // no line per agreeing program: only failures and the summary
  Size size = Size::kSmall;
  std::vector<TargetSpec> targets;
  bool keepGoing = false;  // continue after a failure
  bool printProgram = false;
  bool shrink = true;
  size_t maxShrinkCandidates = 4000;
  std::string reproduce;   // command line (without --seed/--programs) printed to reproduce a failure
  // Where each failure's reproducer file goes (created when first needed); empty: none written.
  std::string reproducerDir;
  // Polled before each program: when it returns true the run stops there, as after a signal, and
  // the programs left are reported as not run.
  std::function<bool()> stopRequested;
  // Called after each program of this shard, with the summary so far (progress displays).
  std::function<void(const ProgramResult& last, const RegressSummary& sofar)> onProgram;
};

struct RegressSummary {
  uint64_t planned = 0;   // programs of this shard
  uint64_t programs = 0;  // of which run
  uint64_t failures = 0;  // disagreements, programs every target rejected, generator errors
  double seconds = 0;
  std::vector<uint64_t> cycles;       // per target, summed counters.cycles
  std::vector<double> targetSeconds;  // per target, summed Target::run time
  std::vector<uint64_t> failingSeeds;
  std::vector<ProgramResult> results;  // every program of the shard in order, those not run as kNotRun
  bool stopped = false;  // stopRequested ended the run early
};

// The number of programs shard `index` of `count` gets out of `programs`.
uint64_t shardPrograms(uint64_t programs, uint64_t index, uint64_t count);

// Generates, checks and runs the shard's programs, one progress line each (unless quiet); reports
// and shrinks every failure and writes its reproducer; ends with a summary line.
RegressSummary runRegression(const RegressOptions& o, std::ostream& out);

}  // namespace tessera::regress
