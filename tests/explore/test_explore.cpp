// Unit tests of co-design's search (tessera/compiler/explore/explore.h) with a stand-in cycle predictor.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "tessera/compiler/explore/explore.h"
#include "error_of.h"
#include "tessera/support/error.h"

namespace {

using tessera::testutil::errorOf;
using namespace tessera;
using namespace tessera::compiler::explore;

// A linear area model: LUTs and DSPs grow with the GEMM core, FFs with the ALU.
hw::AreaModel area() {
  const std::string family = R"({
      "LUT": {"ONE": 5000, "MACS": 60, "ALU_LANES": 300, "QUEUES_IN_LUTRAM": 0},
      "FF":  {"ONE": 3000, "MACS": 10, "ALU_LANES": 100, "QUEUES_IN_LUTRAM": 0},
      "DSP": {"ONE": 1, "MACS": 0.5, "ALU_LANES": 2, "QUEUES_IN_LUTRAM": 0}})";
  return hw::AreaModel::fromJson(R"({"FAMILIES": {"xc7": )" + family + R"(, "xcup": )" + family + "}}", "test area model");
}

// Cycles fall with the GEMM core and with the weight buffer (fewer reloads), as a model's would.
double cycles(const hw::Config& c) {
  return 1e7 / (double(c.batch) * c.blockIn * c.blockOut) + 1e5 * (20 - c.logWgtBuffSize);
}

Options options(const std::string& part) {
  Options o;
  o.part = hw::partNamed(part);
  return o;
}

TEST(Explore, EveryCoarsePointIsEvaluatedOrPrunedWithWhy) {
  int calls = 0;
  const Exploration e = explore(hw::ConfigSpace::shipped(), area(), options("xc7z020"), [&](const hw::Config& c) {
    ++calls;
    return cycles(c);
  });
  EXPECT_EQ(calls, e.compilations);
  EXPECT_LE(e.compilations, 40);
  std::set<std::string> points;
  for (const Candidate& c : e.candidates) {
    points.insert(c.point);
    EXPECT_TRUE(c.evaluated || !c.pruned.empty()) << c.point;
    if (c.config.logBusWidth > 6 && !c.config.name.empty()) {
      EXPECT_NE(c.pruned.find("the RTL cannot run it"), std::string::npos);
    }
  }
  EXPECT_EQ(points.size(), 81u);
  ASSERT_FALSE(e.ranking.empty());
  // Best first, every ranked config fits the part by the model.
  for (size_t i = 0; i < e.ranking.size(); ++i) {
    const Candidate& c = e.candidates[e.ranking[i]];
    EXPECT_TRUE(c.fit.fits);
    EXPECT_LE(c.resources.bram36, 140);
    EXPECT_LE(c.resources.dsp, 220);
    if (i) {
      EXPECT_LE(e.candidates[e.ranking[i - 1]].score, c.score);
    }
  }
}

TEST(Explore, BuffersShrinkUntilThePointFits) {
  // 1x16x16 with its largest buffers takes 120 RAMB36: on a part of 100 it shrinks them to fit; on
  // the xc7z010 (60) no buffers fit it (its 32 weight lanes alone take 32), and it says so.
  Options o = options("xczu7ev");
  o.part.bram36 = 100;
  o.points = {"b0_i4_o4_w6"};
  o.budget = 1;
  Exploration e = explore(hw::ConfigSpace::shipped(), area(), o, cycles);
  ASSERT_EQ(e.ranking.size(), 1u);
  const Candidate& c = e.candidates[e.ranking.front()];
  EXPECT_LE(c.resources.bram36, 100);
  EXPECT_GT(c.resources.bram36, 60);
  EXPECT_NE(c.config.name, "b0_i4_o4_w6");  // its buffers are not the point's largest
  o.part.bram36 = 60;
  e = explore(hw::ConfigSpace::shipped(), area(), o, cycles);
  EXPECT_TRUE(e.ranking.empty());
  EXPECT_NE(e.candidates.front().pruned.find("does not fit xczu7ev: BRAM36"), std::string::npos) << e.candidates.front().pruned;
}

TEST(Explore, TheBudgetBoundsCompilationsAndSaysWhatItLeftOut) {
  Options o = options("xczu7ev");
  o.budget = 3;
  const Exploration e = explore(hw::ConfigSpace::shipped(), area(), o, cycles);
  EXPECT_EQ(e.compilations, 3);
  size_t budgetPruned = 0;
  for (const Candidate& c : e.candidates) budgetPruned += c.pruned.find("budget of 3") != std::string::npos;
  EXPECT_GT(budgetPruned, 0u);
}

TEST(Explore, LocalSearchTriesTheBuffersAroundTheBestPoints) {
  // 1x16x16's largest buffers take 120 RAMB36; on a part of 100 they are shrunk to fit, then the
  // local search tries one buffer step at a time.
  const hw::AreaModel light = hw::AreaModel::fromJson(R"({"FAMILIES": {"xc7": {
      "LUT": {"ONE": 1000, "MACS": 10, "ALU_LANES": 0, "QUEUES_IN_LUTRAM": 0},
      "FF":  {"ONE": 1000, "MACS": 1, "ALU_LANES": 0, "QUEUES_IN_LUTRAM": 0},
      "DSP": {"ONE": 1, "MACS": 0.1, "ALU_LANES": 0, "QUEUES_IN_LUTRAM": 0}}}})",
                                                      "light");
  Options o = options("xc7z020");
  o.part.bram36 = 100;
  o.points = {"b0_i4_o4_w6"};
  o.budget = 12;
  const Exploration e = explore(hw::ConfigSpace::shipped(), light, o, cycles);
  ASSERT_FALSE(e.ranking.empty());
  EXPECT_GT(e.candidates.size(), 1u);  // the coarse point, then its neighbours
  EXPECT_GT(e.compilations, 1);
  const Candidate& best = e.candidates[e.ranking.front()];
  for (const Candidate& c : e.candidates) {
    if (c.evaluated) {
      EXPECT_LE(c.resources.bram36, 100) << c.config.name;
    }
    if (c.evaluated && c.fit.fits) {
      EXPECT_LE(best.score, c.score);
    }
  }
  EXPECT_NE(best.config.name, "b0_i4_o4_w6");
  EXPECT_EQ(hw::ConfigSpace::shipped().pointNamed(best.config.name)->toJson(), best.config.toJson());
}

TEST(Explore, ParetoFrontHoldsOnlyUndominatedConfigs) {
  const Exploration e = explore(hw::ConfigSpace::shipped(), area(), options("xczu7ev"), cycles);
  size_t onFront = 0;
  for (size_t i : e.ranking) {
    const Candidate& a = e.candidates[i];
    onFront += a.pareto;
    for (size_t j : e.ranking) {
      const Candidate& b = e.candidates[j];
      const bool dominates = b.predictedCycles <= a.predictedCycles && b.resources.lut <= a.resources.lut &&
                             b.resources.dsp <= a.resources.dsp && b.resources.bram36 <= a.resources.bram36 &&
                             (b.predictedCycles < a.predictedCycles || b.resources.lut < a.resources.lut ||
                              b.resources.dsp < a.resources.dsp || b.resources.bram36 < a.resources.bram36);
      if (dominates) {
        EXPECT_FALSE(a.pareto) << a.config.name << " is dominated by " << b.config.name;
      }
    }
  }
  EXPECT_GT(onFront, 0u);
  // The best by latency is on the front.
  EXPECT_TRUE(e.candidates[e.ranking.front()].pareto);
}

TEST(Explore, ConfigsThatDoNotCompileArePrunedWithTheError) {
  Options o = options("xczu7ev");
  o.points = {"b0_i3_o3_w6", "b0_i4_o4_w6"};
  const Exploration e = explore(hw::ConfigSpace::shipped(), area(), o, [](const hw::Config& c) -> double {
    if (c.blockIn == 8) throw Error("model.onnx", "layer conv1 does not fit");
    return cycles(c);
  });
  bool sawError = false;
  for (const Candidate& c : e.candidates)
    if (c.point == "b0_i3_o3_w6") {
      EXPECT_FALSE(c.evaluated);
      sawError = sawError || c.pruned.find("layer conv1 does not fit") != std::string::npos;
    }
  EXPECT_TRUE(sawError);
}

TEST(Explore, BadInputIsRefusedNamingIt) {
  Options o = options("xc7z020");
  o.budget = 0;
  EXPECT_NE(errorOf([&] { explore(hw::ConfigSpace::shipped(), area(), o, cycles); }).find("--budget 0"), std::string::npos);
  o = options("xc7z020");
  o.points = {"b9_i4_o4_w6"};
  EXPECT_NE(errorOf([&] { explore(hw::ConfigSpace::shipped(), area(), o, cycles); }).find("--points b9_i4_o4_w6"),
            std::string::npos);
  EXPECT_NE(errorOf([&] { explore(hw::ConfigSpace::shipped(), area(), options("ice40up5k"), cycles); })
                .find("no fitted model for family ice40"),
            std::string::npos);
  EXPECT_NE(errorOf([] { parseObjective("speed", "--objective"); }).find("--objective speed"), std::string::npos);
  EXPECT_EQ(parseObjective("latency-per-lut", "--objective"), Objective::kLatencyPerLut);
}

TEST(Explore, ObjectivesRankAsTheyShould) {
  Options o = options("xczu7ev");
  const hw::Resources small{10000, 0, 0, 0}, large{40000, 0, 0, 0};
  // latency: fewer cycles win whatever the LUTs; latency-per-lut: the small core at 2x the cycles wins.
  EXPECT_LT(score(Objective::kLatency, 1e6, large, o), score(Objective::kLatency, 2e6, small, o));
  EXPECT_LT(score(Objective::kLatencyPerLut, 2e6, small, o), score(Objective::kLatencyPerLut, 1e6, large, o));
  EXPECT_DOUBLE_EQ(imagesPerSecond(1e6, o), 100.0);  // 100 MHz, one image per run
  o.imagesPerRun = 4;
  EXPECT_DOUBLE_EQ(imagesPerSecond(1e6, o), 400.0);
  EXPECT_LT(score(Objective::kThroughput, 1e6, large, o), score(Objective::kThroughput, 2e6, small, o));
}

}  // namespace
