// Unit tests of the FPGA parts and the area model (tessera/hw/area.h): parsing, derived block RAM, fit and prediction.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "tessera/hw/area.h"
#include "tessera/hw/config_space.h"
#include "error_of.h"
#include "tessera/support/error.h"

namespace {

using tessera::testutil::errorOf;
using namespace tessera::hw;
using tessera::Error;

TEST(Parts, ShippedPartsAreKnownByNameOrFullPartString) {
  const auto parts = shippedParts();
  EXPECT_EQ(parts.size(), 5u);
  const Part z = partNamed("xc7z020clg400-1");
  EXPECT_EQ(z.name, "xc7z020");
  EXPECT_EQ(z.family, "xc7");
  EXPECT_EQ(z.luts, 53200);
  EXPECT_EQ(z.bram36, 140);
  EXPECT_EQ(z.dsps, 220);
  EXPECT_EQ(z.flowBoard, "pynq-z1");
  EXPECT_EQ(partNamed("XCZU3EG").family, "xcup");
  EXPECT_EQ(partNamed("ice40up5k").family, "ice40");
  const std::string e = errorOf([] { partNamed("xc7a35t"); });
  EXPECT_NE(e.find("--part xc7a35t"), std::string::npos) << e;
  EXPECT_NE(e.find("xc7z020 (Pynq-Z1"), std::string::npos) << e;
}

TEST(Parts, BadPartsFilesAreRefusedNamingTheKey) {
  EXPECT_NE(errorOf([] { partsFromJson(R"({"PARTS": []})", "p.json"); }).find("non-empty array"), std::string::npos);
  const char* noLuts = R"({"PARTS": [{"NAME": "x", "FAMILY": "xc7", "FFS": 1, "BRAM36": 1, "DSPS": 1, "CLOCK_MHZ": 100,
                           "CLOCK_BASIS": "b"}]})";
  EXPECT_NE(errorOf([&] { partsFromJson(noLuts, "p.json"); }).find("p.json: PARTS[0].LUTS"), std::string::npos);
  const char* badFamily = R"({"PARTS": [{"NAME": "x", "FAMILY": "stratix", "LUTS": 1, "FFS": 1, "BRAM36": 1, "DSPS": 1,
                              "CLOCK_MHZ": 100, "CLOCK_BASIS": "b"}]})";
  EXPECT_NE(errorOf([&] { partsFromJson(badFamily, "p.json"); }).find("'stratix' is not a family"), std::string::npos);
  const char* negative = R"({"PARTS": [{"NAME": "x", "FAMILY": "xc7", "LUTS": -5, "FFS": 1, "BRAM36": 1, "DSPS": 1,
                             "CLOCK_MHZ": 100, "CLOCK_BASIS": "b"}]})";
  EXPECT_NE(errorOf([&] { partsFromJson(negative, "p.json"); }).find("non-negative"), std::string::npos);
}

// Block RAM is derived from the RTL's structure; these are Yosys 0.23's synth_xilinx counts
// (scripts/fpga/yosys_report.py, xc7) of the same configs.
TEST(AreaModel, DerivedBlockRamMatchesYosys) {
  EXPECT_DOUBLE_EQ(blockRam36(Config::load("default")), 120.0);
  EXPECT_TRUE(queuesInLutRam(Config::load("default")));
  // 1x8x8: its SRAMs stay under 2 Mbit, so the instruction queues take 7.5 RAMB36 of block RAM.
  EXPECT_DOUBLE_EQ(blockRam36(Config::load("b0_i3_o3_w6")), 55.5);
  EXPECT_FALSE(queuesInLutRam(Config::load("b0_i3_o3_w6")));
}

TEST(AreaModel, FitOfNamesTheFirstResourceOverCapacity) {
  const Part z = partNamed("xc7z020");
  Resources r{40000, 20000, 100, 100};
  EXPECT_TRUE(fitOf(r, z).fits);
  EXPECT_NEAR(fitOf(r, z).worstShare, 40000.0 / 53200.0, 1e-9);
  r.bram36 = 152;
  const Fit f = fitOf(r, z);
  EXPECT_FALSE(f.fits);
  EXPECT_EQ(f.overflow, "BRAM36 152 > 140");
}

TEST(AreaModel, PredictsTheLinearModelOfItsFeatures) {
  const char* model = R"({"FAMILIES": {"xc7": {
      "LUT": {"ONE": 1000, "MACS": 10, "ALU_LANES": 0, "QUEUES_IN_LUTRAM": 500},
      "FF":  {"ONE": 100, "MACS": 1, "ALU_LANES": 0, "QUEUES_IN_LUTRAM": 0},
      "DSP": {"ONE": 1, "MACS": 0.5, "ALU_LANES": 2, "QUEUES_IN_LUTRAM": 0}}}})";
  const AreaModel m = AreaModel::fromJson(model, "a.json");
  const Resources r = m.predict(Config::load("default"), "xc7");
  EXPECT_DOUBLE_EQ(r.lut, 1000 + 10 * 256 + 500);
  EXPECT_DOUBLE_EQ(r.ff, 100 + 256);
  EXPECT_DOUBLE_EQ(r.dsp, 1 + 128 + 32);
  EXPECT_DOUBLE_EQ(r.bram36, 120.0);
  EXPECT_NE(errorOf([&] { m.predict(Config::load("default"), "xcup"); }).find("no fitted model for family 'xcup'"),
            std::string::npos);
  // Round trip through its JSON.
  EXPECT_DOUBLE_EQ(AreaModel::fromJson(m.toJson(), "b.json").predict(Config::load("small"), "xc7").lut,
                   m.predict(Config::load("small"), "xc7").lut);
}

TEST(AreaModel, BadModelsAreRefusedNamingTheKey) {
  EXPECT_NE(errorOf([] { AreaModel::fromJson("{}", "a.json"); }).find("FAMILIES"), std::string::npos);
  const char* unknown = R"({"FAMILIES": {"xc7": {
      "LUT": {"ONE": 1, "MACS": 1, "ALU_LANES": 0, "QUEUES_IN_LUTRAM": 0, "CLOCK": 3},
      "FF":  {"ONE": 1, "MACS": 1, "ALU_LANES": 0, "QUEUES_IN_LUTRAM": 0},
      "DSP": {"ONE": 1, "MACS": 1, "ALU_LANES": 0, "QUEUES_IN_LUTRAM": 0}}}})";
  EXPECT_NE(errorOf([&] { AreaModel::fromJson(unknown, "a.json"); }).find("a.json: FAMILIES.xc7.LUT.CLOCK"), std::string::npos);
  const char* missing = R"({"FAMILIES": {"xc7": {"LUT": {"ONE": 1}}}})";
  EXPECT_NE(errorOf([&] { AreaModel::fromJson(missing, "a.json"); }).find("FAMILIES.xc7.LUT.MACS"), std::string::npos);
}

// The shipped model's record of its own validation: each Xilinx family fitted, and within 10% on
// the configs held out of its fit.
TEST(AreaModel, ShippedModelCoversTheXilinxFamiliesWithinTenPercentHeldOut) {
  const AreaModel m = AreaModel::shipped();
  for (const char* family : {"xc7", "xcup"}) {
    ASSERT_TRUE(m.hasFamily(family)) << family;
    const FamilyAreaModel& f = m.family(family);
    EXPECT_GE(f.fittedOn.size(), 5u) << family;
    EXPECT_GE(f.heldOut.size(), 2u) << family;
    EXPECT_LE(f.heldOutMaxError, 0.10) << family;
  }
  EXPECT_FALSE(m.hasFamily("ice40"));
}

TEST(ConfigSpaceNames, BufferSuffixNamesAConfigAndRoundTrips) {
  const ConfigSpace space = ConfigSpace::shipped();
  const auto c = space.pointNamed("b0_i4_o4_w6_u15_i15_w17_a17");
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->logWgtBuffSize, 17);
  EXPECT_EQ(c->logAccBuffSize, 17);
  EXPECT_EQ(space.nameOf(*c), "b0_i4_o4_w6_u15_i15_w17_a17");
  EXPECT_EQ(space.nameOf(*space.pointNamed("b0_i4_o4_w6")), "b0_i4_o4_w6");
  EXPECT_EQ(space.nameOf(Config::load("default")), "b0_i4_o4_w6");
  EXPECT_NE(errorOf([&] { space.pointNamed("b0_i4_o4_w6_u15_i15_w25_a17"); }).find("LOG_WGT_BUFF_SIZE 25 is outside"),
            std::string::npos);
  EXPECT_FALSE(space.pointNamed("b0_i4_o4_w6_u15_i15").has_value());
  // Loadable wherever a config name is.
  EXPECT_EQ(Config::load("b0_i4_o4_w6_u15_i15_w17_a17").toJson(), c->toJson());
}

}  // namespace
