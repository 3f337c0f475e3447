// The stream generator's programs: deterministic, valid and race-free (the regression's checker),
// complete on fsim, storing every byte of their outputs, and the advertised sizes at scale 1.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tessera/hw/config.h"
#include "tessera/hw/dram.h"
#include "tessera/support/error.h"
#include "tessera/hw/fsim.h"
#include "tessera/regress/check.h"
#include "tessera/streams/streams.h"

namespace {

using namespace tessera;

// The stream as a regression program, so the regression's checker can judge it: micro-ops and
// instructions keep their kinds, outputs become OUT regions, every other image is read-only data.
regress::Program asProgram(const streams::Stream& s) {
  regress::Program p;
  p.cfg = s.cfg;
  p.seed = s.seed;
  p.size = s.shape;
  for (const auto& r : s.regions) {
    regress::Region g;
    g.name = r.name;
    g.kind = r.name == "uops" ? regress::RegionKind::kUop
             : r.name == "insns" ? regress::RegionKind::kInsn
                                 : regress::RegionKind::kInp;
    g.base = r.base;
    g.init = r.bytes;
    p.regions.push_back(g);
  }
  for (const auto& o : s.outputs) {
    regress::Region g;
    g.name = o.name;
    g.kind = regress::RegionKind::kOut;
    g.base = o.base;
    g.init.assign(o.bytes, 0);
    p.regions.insert(p.regions.end() - 1, g);  // the instruction region stays last
  }
  p.insns = s.insns;
  p.insnOp.assign(s.insns.size(), -1);
  return p;
}

// Runs `s` on fsim over a DRAM whose output ranges first hold `fill`; returns the outputs.
std::vector<uint8_t> runOnFsim(const streams::Stream& s, uint8_t fill) {
  hw::Dram dram(s.cfg);
  streams::place(s, dram);
  for (const auto& o : s.outputs) {
    std::vector<uint8_t> bytes(o.bytes, fill);
    dram.write(o.base, bytes.data(), bytes.size(), o.name);
  }
  hw::Fsim sim(s.cfg, dram);
  sim.run(s.insnBase(), s.insnCount());
  std::vector<uint8_t> out;
  for (const auto& o : s.outputs) {
    const uint8_t* p = dram.at(o.base, o.bytes, o.name);
    out.insert(out.end(), p, p + o.bytes);
  }
  return out;
}

bool sameStream(const streams::Stream& a, const streams::Stream& b) {
  if (a.insns != b.insns || a.regions.size() != b.regions.size() || a.outputs.size() != b.outputs.size()) return false;
  for (size_t i = 0; i < a.regions.size(); ++i)
    if (a.regions[i].base != b.regions[i].base || a.regions[i].bytes != b.regions[i].bytes) return false;
  return true;
}

// Small versions of the big shapes, so the checker (quadratic in the touches of an entry) stays fast.
double testScale(const std::string& shape) {
  if (shape == "pool-rows") return 0.01;
  if (shape == "eltwise-add" || shape == "eltwise-mul" || shape == "gemm-loads") return 0.05;
  return 1.0;
}

class StreamShapes : public ::testing::TestWithParam<std::string> {};

TEST_P(StreamShapes, ValidRaceFreeAndCompleteOnEveryConfig) {
  for (const auto& name : hw::shippedConfigNames()) {
    SCOPED_TRACE("config " + name);
    const hw::Config cfg = hw::Config::load(name);
    const streams::Stream s = streams::generate(cfg, GetParam(), 7, testScale(GetParam()));
    ASSERT_FALSE(s.insns.empty());
    ASSERT_FALSE(s.outputs.empty());
    EXPECT_NO_THROW(regress::checkProgram(asProgram(s)));
    // Every output byte is stored: outputs prefilled differently come out the same.
    std::vector<uint8_t> a, b;
    ASSERT_NO_THROW(a = runOnFsim(s, 0x00));
    ASSERT_NO_THROW(b = runOnFsim(s, 0xa5));
    EXPECT_EQ(a, b);
  }
}

TEST_P(StreamShapes, DeterministicBySeed) {
  const hw::Config cfg = hw::Config::load("default");
  const double scale = testScale(GetParam());
  const auto a = streams::generate(cfg, GetParam(), 3, scale), b = streams::generate(cfg, GetParam(), 3, scale),
             c = streams::generate(cfg, GetParam(), 4, scale);
  EXPECT_TRUE(sameStream(a, b));
  EXPECT_FALSE(sameStream(a, c));  // other data
  EXPECT_EQ(a.insns.size(), c.insns.size());
}

std::vector<std::string> shapeNames() {
  std::vector<std::string> v;
  for (const auto& s : streams::shapes()) v.push_back(s.name);
  return v;
}

INSTANTIATE_TEST_SUITE_P(Shapes, StreamShapes, ::testing::ValuesIn(shapeNames()),
                         [](const ::testing::TestParamInfo<std::string>& i) {
                           std::string n = i.param;
                           for (char& c : n)
                             if (c == '-') c = '_';
                           return n;
                         });

// The measured sizes (issue 17's programs) at scale 1 on the default config, run to completion.
TEST(StreamSizes, BigShapesAtScaleOne) {
  const hw::Config cfg = hw::Config::load("default");
  struct Want {
    const char* shape;
    size_t minInsns, maxInsns;
  } wants[] = {{"matmul", 10, 20},          {"lenet", 100, 320},         {"maxpool", 50, 320},
               {"pool-rows", 250000, 290000}, {"eltwise-add", 5500, 6500}, {"eltwise-mul", 5500, 6500},
               {"gemm-loads", 9500, 11000}};
  for (const auto& w : wants) {
    SCOPED_TRACE(w.shape);
    const auto s = streams::generate(cfg, w.shape, 1);
    EXPECT_GE(s.insns.size(), w.minInsns);
    EXPECT_LE(s.insns.size(), w.maxInsns);
    EXPECT_NO_THROW(runOnFsim(s, 0));
  }
  const auto pool = streams::generate(cfg, "pool-rows", 1);
  EXPECT_GT(pool.regionBytes("uops"), 2900000u);
}

TEST(StreamErrors, UnknownShapeAndBadScale) {
  const hw::Config cfg = hw::Config::load("default");
  try {
    streams::generate(cfg, "nope", 1);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("pool-rows"), std::string::npos) << e.what();
  }
  EXPECT_THROW(streams::generate(cfg, "matmul", 1, 0), Error);
}

}  // namespace
