// Co-design's search: coarse points enumerated, buffers shrunk to fit, cycles predicted, buffers searched locally.
#include "tessera/compiler/explore/explore.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>

#include "tessera/support/error.h"

namespace tessera::compiler::explore {

namespace {

const char* const kBufferKeys[] = {"LOG_UOP_BUFF_SIZE", "LOG_INP_BUFF_SIZE", "LOG_WGT_BUFF_SIZE", "LOG_ACC_BUFF_SIZE"};
// The RTL's targets share the space's limits; tsim stands for them (a bitstream is built from the RTL).
const char* const kRtlTarget = "tsim";

// How far a config is from fitting: the summed excess of every resource over the part's capacity.
double excess(const hw::Resources& r, const hw::Part& p) {
  auto over = [](double used, double cap) { return cap > 0 ? std::max(0.0, used / cap - 1.0) : (used > 0 ? 1e9 : 0.0); };
  return over(r.lut, static_cast<double>(p.luts)) + over(r.ff, static_cast<double>(p.ffs)) +
         over(r.dsp, static_cast<double>(p.dsps)) + over(r.bram36, p.bram36);
}

using BufferKey = std::tuple<std::string, int, int, int, int>;
BufferKey keyOf(const std::string& point, const hw::Config& c) {
  return {point, c.logUopBuffSize, c.logInpBuffSize, c.logWgtBuffSize, c.logAccBuffSize};
}

// The configs one buffer step from `c` (dir -1: smaller, +1: larger, 0: both) that validate: each
// buffer alone, and the input and accumulator buffers together (their depths are often tied).
std::vector<hw::Config> neighbours(const hw::Config& c, const hw::ConfigSpace& space, int dir) {
  std::vector<std::vector<std::string>> moves;
  for (const char* k : kBufferKeys) moves.push_back({k});
  moves.push_back({"LOG_INP_BUFF_SIZE", "LOG_ACC_BUFF_SIZE"});
  std::vector<hw::Config> out;
  for (int d : {-1, 1}) {
    if (dir != 0 && d != dir) continue;
    for (const auto& move : moves) {
      hw::Config n = c;
      bool inRange = true;
      for (const std::string& key : move) {
        int* v = n.intKey(key);
        *v += d;
        for (const hw::KeyRange& r : space.buffers())
          if (r.key == key && (*v < r.min || *v > r.max)) inRange = false;
      }
      if (!inRange) continue;
      try {
        n.derive(n.name);
      } catch (const std::exception&) {
        continue;
      }
      out.push_back(n);
    }
  }
  return out;
}

}  // namespace

Objective parseObjective(const std::string& text, const std::string& where) {
  if (text == "latency") return Objective::kLatency;
  if (text == "throughput") return Objective::kThroughput;
  if (text == "latency-per-lut") return Objective::kLatencyPerLut;
  throw Error(where + " " + text, "is not an objective (latency, throughput, latency-per-lut)");
}

std::string objectiveName(Objective o) {
  switch (o) {
    case Objective::kLatency: return "latency";
    case Objective::kThroughput: return "throughput";
    case Objective::kLatencyPerLut: return "latency-per-lut";
  }
  return "?";
}

double imagesPerSecond(double cycles, const Options& options) {
  return cycles > 0 ? options.imagesPerRun * options.part.clockMhz * 1e6 / cycles : 0.0;
}

double score(Objective o, double cycles, const hw::Resources& r, const Options& options) {
  switch (o) {
    case Objective::kLatency: return cycles / (options.part.clockMhz * 1e6);
    case Objective::kThroughput: return -imagesPerSecond(cycles, options);
    case Objective::kLatencyPerLut: return cycles / (options.part.clockMhz * 1e6) * r.lut;
  }
  return cycles;
}

Exploration explore(const hw::ConfigSpace& space, const hw::AreaModel& area, const Options& options,
                    const CyclePredictor& predict, const Progress& progress) {
  if (options.budget <= 0)
    throw Error("--budget " + std::to_string(options.budget), "must be at least 1 (model compilations the search may spend)");
  const hw::Part& part = options.part;
  if (!area.hasFamily(part.family))
    throw Error("--part " + part.name, "is an " + part.family + " part, and the area model (hw/configs/space/area.json) "
                                       "has no fitted model for family " + part.family + " yet");
  std::vector<hw::SpacePoint> points = space.points();
  if (!options.points.empty()) {
    std::vector<hw::SpacePoint> chosen;
    for (const std::string& name : options.points) {
      auto it = std::find_if(points.begin(), points.end(), [&](const hw::SpacePoint& p) { return p.name == name; });
      if (it == points.end())
        throw Error("--points " + name, "is not a point of the space " + space.origin() + " (tessera info --space lists them)");
      chosen.push_back(*it);
    }
    points = chosen;
  }

  Exploration ex;
  std::set<BufferKey> seen;
  auto evaluate = [&](Candidate& c) {
    if (ex.compilations >= options.budget) {
      c.pruned = "not evaluated: the budget of " + std::to_string(options.budget) + " compilations was spent";
      return;
    }
    ++ex.compilations;
    try {
      c.predictedCycles = predict(c.config);
      c.evaluated = true;
      c.score = score(options.objective, c.predictedCycles, c.resources, options);
    } catch (const std::exception& e) {
      c.pruned = std::string("the model does not compile for it: ") + e.what();
    }
    if (progress) progress(ex.compilations, options.budget, c.config.name);
  };

  // Coarse points: the largest buffers, shrunk step by step (the step that most reduces the excess
  // over the part) until the area model says the point fits.
  std::vector<Candidate> coarse;
  for (const hw::SpacePoint& p : points) {
    Candidate c;
    c.point = p.name;
    if (!p.valid) {
      c.pruned = "no config: " + p.refusal;
      coarse.push_back(c);
      continue;
    }
    c.config = p.config;
    const std::vector<std::string> why = space.refusals(p.config, kRtlTarget);
    if (!why.empty()) {
      c.pruned = "the RTL cannot run it: " + why.front();
      coarse.push_back(c);
      continue;
    }
    c.resources = area.predict(c.config, part.family);
    double e = excess(c.resources, part);
    while (e > 0) {
      bool moved = false;
      for (const hw::Config& n : neighbours(c.config, space, -1)) {
        const hw::Resources r = area.predict(n, part.family);
        const double en = excess(r, part);
        if (en < e - 1e-12) {
          e = en;
          c.config = n;
          c.resources = r;
          moved = true;
        }
      }
      if (!moved) break;
    }
    c.config = *space.pointNamed(space.nameOf(c.config));  // named, described as loading it by name gives
    c.fit = hw::fitOf(c.resources, part);
    if (!c.fit.fits) c.pruned = "does not fit " + part.name + ": " + c.fit.overflow + " (predicted, its buffers shrunk as far as that helped)";
    coarse.push_back(c);
  }
  // Evaluate in the order the objective favours by the GEMM core's size, so a small budget spends
  // itself on the likeliest winners.
  std::vector<size_t> order;
  for (size_t i = 0; i < coarse.size(); ++i)
    if (coarse[i].pruned.empty()) order.push_back(i);
  const bool smallFirst = options.objective == Objective::kLatencyPerLut;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const double ma = double(coarse[a].config.batch) * coarse[a].config.blockIn * coarse[a].config.blockOut;
    const double mb = double(coarse[b].config.batch) * coarse[b].config.blockIn * coarse[b].config.blockOut;
    return smallFirst ? ma < mb : ma > mb;
  });
  for (size_t i : order) {
    seen.insert(keyOf(coarse[i].point, coarse[i].config));
    evaluate(coarse[i]);
  }
  ex.candidates = coarse;

  // Local search over the buffers of the best coarse points: move to any fitting neighbour that
  // scores better, until none does or the budget is spent.
  auto rank = [&]() {
    std::vector<size_t> r;
    for (size_t i = 0; i < ex.candidates.size(); ++i)
      if (ex.candidates[i].evaluated && ex.candidates[i].fit.fits) r.push_back(i);
    // Equal scores (buffers a model does not need) go to the smaller config.
    std::stable_sort(r.begin(), r.end(), [&](size_t a, size_t b) {
      const Candidate &x = ex.candidates[a], &y = ex.candidates[b];
      return std::make_tuple(x.score, x.resources.lut, x.resources.bram36, x.resources.dsp) <
             std::make_tuple(y.score, y.resources.lut, y.resources.bram36, y.resources.dsp);
    });
    return r;
  };
  const size_t kSeeds = 3;
  std::vector<size_t> seeds = rank();
  if (seeds.size() > kSeeds) seeds.resize(kSeeds);
  for (size_t s : seeds) {
    size_t current = s;
    bool improved = true;
    while (improved && ex.compilations < options.budget) {
      improved = false;
      const hw::Config from = ex.candidates[current].config;
      for (hw::Config n : neighbours(from, space, 0)) {
        if (ex.compilations >= options.budget) break;
        const std::string point = ex.candidates[current].point;
        if (!seen.insert(keyOf(point, n)).second) continue;
        Candidate c;
        c.point = point;
        n = *space.pointNamed(space.nameOf(n));
        c.config = n;
        c.resources = area.predict(n, part.family);
        c.fit = hw::fitOf(c.resources, part);
        if (!c.fit.fits) continue;  // the local search stays inside the part
        evaluate(c);
        ex.candidates.push_back(c);
        if (c.evaluated && c.score < ex.candidates[current].score) {
          current = ex.candidates.size() - 1;
          improved = true;
          break;
        }
      }
    }
  }

  ex.ranking = rank();
  for (size_t i : ex.ranking) {
    const Candidate& a = ex.candidates[i];
    bool dominated = false;
    for (size_t j : ex.ranking) {
      const Candidate& b = ex.candidates[j];
      const bool noWorse = b.predictedCycles <= a.predictedCycles && b.resources.lut <= a.resources.lut &&
                           b.resources.dsp <= a.resources.dsp && b.resources.bram36 <= a.resources.bram36;
      const bool better = b.predictedCycles < a.predictedCycles || b.resources.lut < a.resources.lut ||
                          b.resources.dsp < a.resources.dsp || b.resources.bram36 < a.resources.bram36;
      if (noWorse && better) dominated = true;
    }
    ex.candidates[i].pareto = !dominated;
  }
  return ex;
}

}  // namespace tessera::compiler::explore
