// Co-design's search: the configs of the explored space that fit a part, each with its predicted
// cycles for a model and its predicted resources, ranked by an objective, with the Pareto front.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "tessera/hw/area.h"
#include "tessera/hw/config.h"
#include "tessera/hw/config_space.h"

namespace tessera::compiler::explore {

enum class Objective { kLatency, kThroughput, kLatencyPerLut };
// Parses latency|throughput|latency-per-lut; `where` names the option in the error.
Objective parseObjective(const std::string& text, const std::string& where);
std::string objectiveName(Objective o);

struct Options {
  hw::Part part;
  Objective objective = Objective::kLatency;
  int budget = 40;                  // model compilations (cycle predictions) the search may spend
  std::vector<std::string> points;  // coarse points to consider, by name; empty: the whole space
  int imagesPerRun = 1;             // the model's batch: images one run infers (throughput)
};

// One config the search looked at: a coarse point with one choice of buffers.
struct Candidate {
  std::string point;          // the coarse point, e.g. b0_i4_o4_w6
  hw::Config config;          // named by hw::ConfigSpace::nameOf (the point's name, with its buffers when not the largest)
  hw::Resources resources;    // predicted by the area model
  hw::Fit fit;                // against the part
  bool evaluated = false;     // its cycles were predicted (the model compiled for it)
  double predictedCycles = 0;
  double score = 0;           // the objective, lower is better (when evaluated)
  bool pareto = false;        // not dominated in (predicted cycles, LUT, DSP, BRAM) among evaluated fitting configs
  std::string pruned;         // why it was not evaluated, when it was not
};

struct Exploration {
  std::vector<Candidate> candidates;  // every coarse point once (evaluated or pruned), then the local search's configs
  int compilations = 0;
  std::vector<size_t> ranking;        // evaluated fitting candidates, best first
};

// The predicted cycles of the model compiled for a config; throws (tessera::Error) when the model
// does not compile for it, which prunes the config with the error.
using CyclePredictor = std::function<double(const hw::Config&)>;
// Called after each compilation: (compilations so far, budget, the config just evaluated).
using Progress = std::function<void(int, int, const std::string&)>;

// Enumerates the space's coarse points that the RTL can run, shrinks each one's buffers until the
// area model says it fits the part, predicts the cycles of each fitting point, then searches the
// buffers of the best points locally (one step per buffer) while the budget lasts.
Exploration explore(const hw::ConfigSpace& space, const hw::AreaModel& area, const Options& options,
                    const CyclePredictor& predict, const Progress& progress = nullptr);

// The objective's value of cycles and resources on a part (lower is better).
double score(Objective o, double cycles, const hw::Resources& r, const Options& options);
// Images per second at the part's clock.
double imagesPerSecond(double cycles, const Options& options);

}  // namespace tessera::compiler::explore
