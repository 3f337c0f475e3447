// Unit tests of tessera::hw::ConfigSpace: the shipped explored space, its points, limits and parse errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "tessera/hw/config_space.h"
#include "tessera/support/error.h"

namespace {

using tessera::Error;
using tessera::hw::ConfigSpace;

// The message of the error `f` throws, or "" when it throws none.
template <class F>
std::string errorOf(F f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

const char* kSpace = R"({"BASE": "default",
  "COARSE": {"LOG_BATCH": [0, 1], "LOG_BLOCK_IN": [4, 4], "LOG_BLOCK_OUT": [3, 4], "LOG_BUS_WIDTH": [6, 6]},
  "BUFFERS": {"LOG_UOP_BUFF_SIZE": [13, 15], "LOG_INP_BUFF_SIZE": [12, 18], "LOG_WGT_BUFF_SIZE": [14, 18],
              "LOG_ACC_BUFF_SIZE": [14, 17]},
  "TARGET_LIMITS": [{"TARGETS": ["tsim"], "KEY": "LOG_BATCH", "MAX": 0, "REASON": "one row only"}]})";

TEST(ConfigSpace, ShippedSpaceHoldsTheDefaultShapeAndRefusesWideBusesOnTheRtl) {
  const ConfigSpace space = ConfigSpace::shipped();
  const auto points = space.points();
  EXPECT_EQ(points.size(), 81u);  // 3 batches x 3 x 3 block shapes x 3 buses
  const auto p = space.point({0, 4, 4, 6});
  ASSERT_TRUE(p.valid) << p.refusal;
  EXPECT_EQ(p.name, "b0_i4_o4_w6");
  EXPECT_EQ(p.config.batch * p.config.blockIn * p.config.blockOut, 256);
  EXPECT_TRUE(space.refusals(p.config, "tsim").empty());
  const auto wide = space.point({0, 4, 4, 7});
  ASSERT_TRUE(wide.valid) << wide.refusal;
  ASSERT_EQ(space.refusals(wide.config, "tsim").size(), 1u);
  EXPECT_NE(space.refusals(wide.config, "tsim")[0].find("LOG_BUS_WIDTH 7"), std::string::npos);
  EXPECT_TRUE(space.refusals(wide.config, "fsim").empty());
  // A 256-bit bus is wider than a 1x8 input row: no buffer choice helps, and the reason is the ISA's.
  const auto refused = space.point({0, 3, 3, 8});
  EXPECT_FALSE(refused.valid);
  EXPECT_NE(refused.refusal.find("LOG_BUS_WIDTH"), std::string::npos) << refused.refusal;
}

TEST(ConfigSpace, PointsTakeTheLargestBuffersWithEqualInputAndAccumulatorDepths) {
  const ConfigSpace space = ConfigSpace::fromJson(kSpace, "test.json");
  const auto points = space.points();
  ASSERT_EQ(points.size(), 4u);
  EXPECT_EQ(points[0].name, "b0_i4_o3_w6");
  EXPECT_EQ(points[3].name, "b1_i4_o4_w6");
  for (const auto& p : points) {
    ASSERT_TRUE(p.valid) << p.name << ": " << p.refusal;
    EXPECT_EQ(p.config.inpDepth, p.config.accDepth) << p.name;
    EXPECT_LE(p.config.logAccBuffSize, 17) << p.name;
  }
  EXPECT_EQ(points[3].config.logAccBuffSize, 17);
  EXPECT_EQ(space.refusals(points[0].config, "tsim").size(), 0u);
  EXPECT_EQ(space.refusals(points[3].config, "tsim").size(), 1u);
  EXPECT_NE(errorOf([&] { space.point({2, 4, 4, 6}); }).find("LOG_BATCH"), std::string::npos);
}

TEST(ConfigSpace, PointsLoadByName) {
  const tessera::hw::Config c = tessera::hw::Config::load("b1_i4_o3_w6");
  EXPECT_EQ(c.name, "b1_i4_o3_w6");
  EXPECT_EQ(c.batch, 2);
  EXPECT_EQ(c.blockIn, 16);
  EXPECT_EQ(c.blockOut, 8);
  EXPECT_EQ(c.busWidth, 64);
  const ConfigSpace space = ConfigSpace::shipped();
  EXPECT_FALSE(space.pointNamed("b1_i4_o3").has_value());
  EXPECT_FALSE(space.pointNamed("b1_i4_o3_w6x").has_value());
  EXPECT_FALSE(space.pointNamed("b3_i4_o3_w6").has_value());  // LOG_BATCH outside the space
  EXPECT_FALSE(space.pointNamed("default").has_value());
  // A point without a config is refused by name with its reason, not taken for a missing file.
  EXPECT_NE(errorOf([] { tessera::hw::Config::load("b0_i3_o3_w8"); }).find("has no config: "), std::string::npos);
  EXPECT_NE(errorOf([] { tessera::hw::Config::load("b9_i4_o4_w6"); }).find("explored space"), std::string::npos);
  // By name only, as the simulators' models are registered: shipped, board, points with buffers;
  // never a file.
  EXPECT_EQ(tessera::hw::Config::named("small").blockIn, 4);
  EXPECT_EQ(tessera::hw::Config::named("pico").name, "pico");
  EXPECT_EQ(tessera::hw::Config::named("b0_i4_o3_w6_u14_i15_w15_a16").logWgtBuffSize, 15);
  const std::string file = (std::filesystem::temp_directory_path() / "tessera_named_test.json").string();
  std::ofstream(file) << tessera::hw::Config::load("small").toJson();
  EXPECT_EQ(tessera::hw::Config::load(file).blockIn, 4);
  EXPECT_NE(errorOf([&] { tessera::hw::Config::named(file); }).find("is neither"), std::string::npos);
  std::filesystem::remove(file);
  EXPECT_NE(errorOf([] { tessera::hw::Config::named("b9_i4_o4_w6"); }).find("is neither"), std::string::npos);
}

TEST(ConfigSpace, DrawsValidConfigsOverEveryBufferRangeTheSameForTheSameSeed) {
  const ConfigSpace space = ConfigSpace::fromJson(kSpace, "test space");
  const std::vector<tessera::hw::Config> drawn = space.draw(7, 200);
  ASSERT_EQ(drawn.size(), 200u);
  std::vector<int> lowest(4, 99), highest(4, 0);
  for (const auto& c : drawn) {
    // Loads again by its name, to the same parameters: the name is the whole config.
    const std::optional<tessera::hw::Config> again = space.pointNamed(c.name);
    ASSERT_TRUE(again.has_value()) << c.name;
    EXPECT_EQ(again->toJson(), c.toJson()) << c.name;
    EXPECT_EQ(space.nameOf(c), c.name);
    const int buffers[] = {c.logUopBuffSize, c.logInpBuffSize, c.logWgtBuffSize, c.logAccBuffSize};
    for (int k = 0; k < 4; ++k) {
      lowest[k] = std::min(lowest[k], buffers[k]);
      highest[k] = std::max(highest[k], buffers[k]);
    }
  }
  // Over 200 draws every buffer's range is reached at its low end and well above it.
  EXPECT_EQ(lowest, (std::vector<int>{13, 12, 14, 14}));
  for (int k = 0; k < 4; ++k) EXPECT_GE(highest[k], lowest[k] + 2) << k;
  std::vector<std::string> a, b, c;
  for (const auto& x : drawn) a.push_back(x.name);
  for (const auto& x : space.draw(7, 200)) b.push_back(x.name);
  for (const auto& x : space.draw(8, 200)) c.push_back(x.name);
  EXPECT_EQ(a, b) << "the same seed draws the same configs";
  EXPECT_EQ(std::set<std::string>(a.begin(), a.end()).size(), a.size()) << "distinct configs";
  EXPECT_NE(a, c);
  EXPECT_NE(errorOf([&] { space.draw(1, -1); }).find("-1"), std::string::npos);
  // A space of one config cannot give two distinct ones.
  const ConfigSpace one = ConfigSpace::fromJson(R"({"BASE": "default",
    "COARSE": {"LOG_BATCH": [0, 0], "LOG_BLOCK_IN": [4, 4], "LOG_BLOCK_OUT": [4, 4], "LOG_BUS_WIDTH": [6, 6]},
    "BUFFERS": {"LOG_UOP_BUFF_SIZE": [15, 15], "LOG_INP_BUFF_SIZE": [15, 15], "LOG_WGT_BUFF_SIZE": [18, 18],
                "LOG_ACC_BUFF_SIZE": [17, 17]}, "TARGET_LIMITS": []})", "one config");
  EXPECT_EQ(one.draw(1, 1).size(), 1u);
  EXPECT_NE(errorOf([&] { one.draw(1, 2); }).find("drew 1 distinct configs in 2000 draws, not the 2 asked for"),
            std::string::npos) << errorOf([&] { one.draw(1, 2); });
}

TEST(ConfigSpace, MalformedSpacesNameTheKey) {
  auto parse = [](const std::string& text) { return errorOf([&] { ConfigSpace::fromJson(text, "s.json"); }); };
  const std::string ranges = R"("COARSE": {"LOG_BATCH": [0, 1], "LOG_BLOCK_IN": [4, 4], "LOG_BLOCK_OUT": [4, 4], "LOG_BUS_WIDTH": [6, 6]},
    "BUFFERS": {"LOG_UOP_BUFF_SIZE": [15, 15], "LOG_INP_BUFF_SIZE": [15, 15], "LOG_WGT_BUFF_SIZE": [18, 18], "LOG_ACC_BUFF_SIZE": [17, 17]})";
  EXPECT_EQ(parse(R"({"BASE": "default", )" + ranges + "}"), "");
  EXPECT_NE(parse("{").find("s.json"), std::string::npos);
  EXPECT_NE(parse(R"({"BASE": "nope", )" + ranges + "}").find("BASE"), std::string::npos);
  EXPECT_NE(parse(R"({"BASE": "default", "EXTRA": 1, )" + ranges + "}").find("EXTRA"), std::string::npos);
  EXPECT_NE(parse(R"({"BASE": "default", "COARSE": {"LOG_BATCH": [2, 1]}, "BUFFERS": {}})").find("COARSE.LOG_BATCH"),
            std::string::npos);
  EXPECT_NE(parse(R"({"BASE": "default", "COARSE": {"LOG_BATCH": [0, 1]}, "BUFFERS": {}})").find("LOG_BLOCK_IN"),
            std::string::npos);
  EXPECT_NE(parse(R"({"BASE": "default", )" + ranges + R"(, "TARGET_LIMITS": [{"TARGETS": ["tsim"], "KEY": "LOG_BATCH", "MAX": 0}]})")
                .find("TARGET_LIMITS[0].REASON"),
            std::string::npos);
  EXPECT_NE(parse(R"({"BASE": "default", )" + ranges + R"(, "TARGET_LIMITS": [{"TARGETS": ["tsim"], "KEY": "NOPE", "MAX": 0, "REASON": "x"}]})")
                .find("TARGET_LIMITS[0].KEY"),
            std::string::npos);
}

}  // namespace
