// Unit tests of tessera::hw::Config: shipped configs, derived parameters and validation errors.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

#include "tessera/hw/built_configs.h"
#include "tessera/hw/config.h"
#include "tessera/support/error.h"

namespace {

using tessera::Error;
using tessera::hw::Config;
using tessera::hw::MemId;

::testing::AssertionResult Contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\"" << text << "\" does not contain \"" << part << "\"";
}

// The keys of VTA's default configuration, as raw JSON value text, in file order.
std::vector<std::pair<std::string, std::string>> defaultKeys() {
  return {{"NAME", "\"t\""},          {"LOG_INP_WIDTH", "3"},      {"LOG_WGT_WIDTH", "3"},
          {"LOG_ACC_WIDTH", "5"},     {"LOG_BATCH", "0"},          {"LOG_BLOCK", "4"},
          {"LOG_UOP_BUFF_SIZE", "15"}, {"LOG_INP_BUFF_SIZE", "15"}, {"LOG_WGT_BUFF_SIZE", "18"},
          {"LOG_ACC_BUFF_SIZE", "17"}, {"LOG_BUS_WIDTH", "6"}};
}

std::string toText(const std::vector<std::pair<std::string, std::string>>& keys) {
  std::string s = "{\n";
  for (size_t i = 0; i < keys.size(); ++i)
    s += "  \"" + keys[i].first + "\": " + keys[i].second + (i + 1 < keys.size() ? ",\n" : "\n");
  return s + "}\n";
}

// Default JSON with `key` set to `value` (added if absent).
std::string withKey(const std::string& key, const std::string& value) {
  auto keys = defaultKeys();
  bool found = false;
  for (auto& kv : keys)
    if (kv.first == key) { kv.second = value; found = true; }
  if (!found) keys.emplace_back(key, value);
  return toText(keys);
}

std::string withoutKey(const std::string& key) {
  auto keys = defaultKeys();
  std::vector<std::pair<std::string, std::string>> out;
  for (auto& kv : keys)
    if (kv.first != key) out.push_back(kv);
  return toText(out);
}

// Message of the tessera::Error Config::fromJson throws for `text`, or "" (with a failure) if none.
std::string errorOf(const std::string& text) {
  try {
    Config::fromJson(text, "cfg.json");
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no tessera::Error for:\n" << text;
  return "";
}

TEST(Config, ShippedConfigNamesAreTheThreeJsonFiles) {
  std::vector<std::string> names = tessera::hw::shippedConfigNames();
  EXPECT_EQ(names, (std::vector<std::string>{"batch2", "default", "small"}));
  EXPECT_TRUE(tessera::hw::shippedConfigJson("no_such_config").empty());
  EXPECT_TRUE(Contains(tessera::hw::shippedConfigJson("small"), "\"LOG_BLOCK\": 2"));
}

TEST(Config, EveryShippedConfigLoads) {
  for (const auto& name : tessera::hw::shippedConfigNames()) {
    SCOPED_TRACE(name);
    Config c;
    ASSERT_NO_THROW(c = Config::load(name));
    EXPECT_EQ(c.name, name);
    EXPECT_EQ(c.insnBytes, 16);
    EXPECT_EQ(c.uopBytes, 4);
    // Reloading the canonical JSON gives the same configuration.
    Config again = Config::fromJson(c.toJson(), "again.json");
    EXPECT_EQ(again.toJson(), c.toJson());
    EXPECT_EQ(again.accDepth, c.accDepth);
  }
}

TEST(Config, DefaultDerivedValuesEqualVta) {
  Config c = Config::load("default");
  EXPECT_EQ(c.batch, 1);
  EXPECT_EQ(c.blockIn, 16);
  EXPECT_EQ(c.blockOut, 16);
  EXPECT_EQ(c.inpWidth, 8);
  EXPECT_EQ(c.wgtWidth, 8);
  EXPECT_EQ(c.accWidth, 32);
  EXPECT_EQ(c.outWidth, 8);
  // 8 bits * 1 * 16 / 8 = 16 B; 8 * 16 * 16 / 8 = 256 B; 32 * 1 * 16 / 8 = 64 B; 8 * 1 * 16 / 8 = 16 B.
  EXPECT_EQ(c.inpElemBytes, 16);
  EXPECT_EQ(c.wgtElemBytes, 256);
  EXPECT_EQ(c.accElemBytes, 64);
  EXPECT_EQ(c.outElemBytes, 16);
  EXPECT_EQ(c.acc8ElemBytes, 16);
  // Depths: 2^15 / 4 = 8192, 2^15 / 16 = 2048, 2^18 / 256 = 1024, 2^17 / 64 = 2048.
  EXPECT_EQ(c.uopDepth, 8192u);
  EXPECT_EQ(c.inpDepth, 2048u);
  EXPECT_EQ(c.wgtDepth, 1024u);
  EXPECT_EQ(c.accDepth, 2048u);
  EXPECT_EQ(c.logUopDepth, 13);
  EXPECT_EQ(c.logInpDepth, 11);
  EXPECT_EQ(c.logWgtDepth, 10);
  EXPECT_EQ(c.logAccDepth, 11);
  // 64-bit bus = 8 B: ratios 16/8, 256/8, 64/8, 16/8.
  EXPECT_EQ(c.busWidth, 64);
  EXPECT_EQ(c.busBytes, 8);
  EXPECT_EQ(c.inpMatAxiRatio, 2);
  EXPECT_EQ(c.wgtMatAxiRatio, 32);
  EXPECT_EQ(c.accMatAxiRatio, 8);
  EXPECT_EQ(c.outMatAxiRatio, 2);
  EXPECT_EQ(c.dramElemBytes(MemId::kUop), 4);
  EXPECT_EQ(c.dramElemBytes(MemId::kWgt), 256);
  EXPECT_EQ(c.dramElemBytes(MemId::kInp), 16);
  EXPECT_EQ(c.dramElemBytes(MemId::kAcc), 64);
  EXPECT_EQ(c.dramElemBytes(MemId::kOut), 16);
  EXPECT_EQ(c.dramElemBytes(MemId::kAcc8), 16);
  EXPECT_EQ(c.sramDepth(MemId::kUop), 8192u);
  EXPECT_EQ(c.sramDepth(MemId::kInp), 2048u);
  EXPECT_EQ(c.sramDepth(MemId::kWgt), 1024u);
  EXPECT_EQ(c.sramDepth(MemId::kAcc), 2048u);
  EXPECT_EQ(c.sramDepth(MemId::kOut), 2048u);
  EXPECT_EQ(c.sramDepth(MemId::kAcc8), 2048u);
  EXPECT_EQ(c.insnQueueDepth, 512);
  EXPECT_EQ(c.depQueueDepth, 512);
}

TEST(Config, SmallDerivedValues) {
  Config c = Config::load("small");
  EXPECT_EQ(c.batch, 1);
  EXPECT_EQ(c.blockIn, 4);
  EXPECT_EQ(c.blockOut, 4);
  // 1*4 B, 4*4 B, 4*4 B (int32), 4 B, 4 B.
  EXPECT_EQ(c.inpElemBytes, 4);
  EXPECT_EQ(c.wgtElemBytes, 16);
  EXPECT_EQ(c.accElemBytes, 16);
  EXPECT_EQ(c.outElemBytes, 4);
  EXPECT_EQ(c.acc8ElemBytes, 4);
  // 2^12/4, 2^12/4, 2^12/16, 2^14/16.
  EXPECT_EQ(c.uopDepth, 1024u);
  EXPECT_EQ(c.inpDepth, 1024u);
  EXPECT_EQ(c.wgtDepth, 256u);
  EXPECT_EQ(c.accDepth, 1024u);
  EXPECT_EQ(c.busBytes, 4);
  EXPECT_EQ(c.inpMatAxiRatio, 1);
}

TEST(Config, Batch2DerivedValues) {
  Config c = Config::load("batch2");
  EXPECT_EQ(c.batch, 2);
  EXPECT_EQ(c.blockIn, 16);
  EXPECT_EQ(c.blockOut, 8);
  // 2*16 B, 8*16 B, 2*8*4 B, 2*8 B, 2*8 B.
  EXPECT_EQ(c.inpElemBytes, 32);
  EXPECT_EQ(c.wgtElemBytes, 128);
  EXPECT_EQ(c.accElemBytes, 64);
  EXPECT_EQ(c.outElemBytes, 16);
  EXPECT_EQ(c.acc8ElemBytes, 16);
  // 2^14/4, 2^15/32, 2^17/128, 2^16/64.
  EXPECT_EQ(c.uopDepth, 4096u);
  EXPECT_EQ(c.inpDepth, 1024u);
  EXPECT_EQ(c.wgtDepth, 1024u);
  EXPECT_EQ(c.accDepth, 1024u);
}

TEST(Config, FromJsonOfDefaultKeysMatchesShippedDefault) {
  Config mine = Config::fromJson(toText(defaultKeys()), "mine.json");
  Config shipped = Config::load("default");
  EXPECT_EQ(mine.name, "t");
  EXPECT_EQ(mine.inpElemBytes, shipped.inpElemBytes);
  EXPECT_EQ(mine.wgtDepth, shipped.wgtDepth);
  EXPECT_EQ(mine.accDepth, shipped.accDepth);
  EXPECT_EQ(mine.uopDepth, shipped.uopDepth);
}

TEST(Config, SplitBlockKeysAndQueueDepths) {
  // LOG_BLOCK replaced by LOG_BLOCK_IN 4 / LOG_BLOCK_OUT 3 (as in batch2), plus the optional queue
  // depths. Buffers shrunk so the micro-op fits: acc 2^16/32 = 2^11, wgt 2^17/128 = 2^10 entries,
  // dst 11 + src 11 + wgt 10 = 32 bits.
  std::vector<std::pair<std::string, std::string>> keys;
  for (auto& kv : defaultKeys())
    if (kv.first != "LOG_BLOCK") keys.push_back(kv);
  for (auto& kv : keys) {
    if (kv.first == "LOG_ACC_BUFF_SIZE") kv.second = "16";
    if (kv.first == "LOG_WGT_BUFF_SIZE") kv.second = "17";
  }
  keys.emplace_back("LOG_BLOCK_IN", "4");
  keys.emplace_back("LOG_BLOCK_OUT", "3");
  keys.emplace_back("INSN_QUEUE_DEPTH", "7");
  keys.emplace_back("DEP_QUEUE_DEPTH", "3");
  Config c = Config::fromJson(toText(keys), "split.json");
  EXPECT_EQ(c.blockIn, 16);
  EXPECT_EQ(c.blockOut, 8);
  EXPECT_EQ(c.inpElemBytes, 16);   // 1 * 16 int8
  EXPECT_EQ(c.wgtElemBytes, 128);  // 8 * 16 int8
  EXPECT_EQ(c.accElemBytes, 32);   // 1 * 8 int32
  EXPECT_EQ(c.outElemBytes, 8);
  EXPECT_EQ(c.accDepth, 2048u);
  EXPECT_EQ(c.wgtDepth, 1024u);
  EXPECT_EQ(c.insnQueueDepth, 7);
  EXPECT_EQ(c.depQueueDepth, 3);
}

TEST(Config, LoadFromFileUsesStemWhenNameMissing) {
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("tessera_cfg_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::string path = (dir / "mybox.json").string();
  {
    std::ofstream out(path);
    out << withoutKey("NAME");
  }
  Config c = Config::load(path);
  EXPECT_EQ(c.name, "mybox");
  EXPECT_EQ(c.accDepth, 2048u);
  std::filesystem::remove_all(dir);
}

TEST(Config, LoadOfUnknownNameOrPathFails) {
  try {
    Config::load("/nonexistent/dir/nope.json");
    FAIL() << "expected tessera::Error";
  } catch (const Error& e) {
    EXPECT_TRUE(Contains(e.what(), "no such config"));
    EXPECT_TRUE(Contains(e.what(), "default"));  // lists the shipped names
  }
}

TEST(Config, UnknownKeyIsNamed) {
  std::string msg = errorOf(withKey("LOG_FOO", "1"));
  EXPECT_TRUE(Contains(msg, "LOG_FOO"));
  EXPECT_TRUE(Contains(msg, "unknown key"));
  EXPECT_TRUE(Contains(msg, "cfg.json"));
}

TEST(Config, MissingKeyIsNamed) {
  std::string msg = errorOf(withoutKey("LOG_ACC_BUFF_SIZE"));
  EXPECT_TRUE(Contains(msg, "LOG_ACC_BUFF_SIZE"));
  EXPECT_TRUE(Contains(msg, "missing"));
  msg = errorOf(withoutKey("LOG_BLOCK"));
  EXPECT_TRUE(Contains(msg, "LOG_BLOCK"));
  EXPECT_TRUE(Contains(msg, "missing"));
}

TEST(Config, LogBlockAndSplitFormsAreExclusive) {
  std::string msg = errorOf(withKey("LOG_BLOCK_IN", "4"));
  EXPECT_TRUE(Contains(msg, "LOG_BLOCK"));
  // Only one of the split keys: the other is named as missing.
  auto keys = defaultKeys();
  std::vector<std::pair<std::string, std::string>> k2;
  for (auto& kv : keys)
    if (kv.first != "LOG_BLOCK") k2.push_back(kv);
  k2.emplace_back("LOG_BLOCK_IN", "4");
  msg = errorOf(toText(k2));
  EXPECT_TRUE(Contains(msg, "LOG_BLOCK_OUT"));
}

TEST(Config, NonIntegerValueIsNamed) {
  std::string msg = errorOf(withKey("LOG_BATCH", "1.5"));
  EXPECT_TRUE(Contains(msg, "LOG_BATCH"));
  EXPECT_TRUE(Contains(msg, "integer"));
  msg = errorOf(withKey("LOG_WGT_BUFF_SIZE", "\"18\""));
  EXPECT_TRUE(Contains(msg, "LOG_WGT_BUFF_SIZE"));
  EXPECT_TRUE(Contains(msg, "integer"));
  msg = errorOf(withKey("NAME", "3"));
  EXPECT_TRUE(Contains(msg, "NAME"));
}

TEST(Config, OutOfRangeValueIsNamed) {
  std::string msg = errorOf(withKey("LOG_BATCH", "6"));
  EXPECT_TRUE(Contains(msg, "LOG_BATCH"));
  EXPECT_TRUE(Contains(msg, "outside [0, 5]"));
  msg = errorOf(withKey("LOG_UOP_BUFF_SIZE", "-1"));
  EXPECT_TRUE(Contains(msg, "LOG_UOP_BUFF_SIZE"));
}

TEST(Config, UnsupportedWidthIsNamed) {
  std::string msg = errorOf(withKey("LOG_INP_WIDTH", "4"));
  EXPECT_TRUE(Contains(msg, "LOG_INP_WIDTH"));
  EXPECT_TRUE(Contains(msg, "unsupported width 16 bits"));
  msg = errorOf(withKey("LOG_ACC_WIDTH", "4"));
  EXPECT_TRUE(Contains(msg, "LOG_ACC_WIDTH"));
}

TEST(Config, BusNarrowerThanAllowedIsNamed) {
  std::string msg = errorOf(withKey("LOG_BUS_WIDTH", "4"));
  EXPECT_TRUE(Contains(msg, "LOG_BUS_WIDTH"));
  EXPECT_TRUE(Contains(msg, "narrower"));
}

TEST(Config, BusWiderThanNarrowestElementIsNamed) {
  // LOG_BLOCK 2: the input element is 1*4*8 = 32 bits, so a 64-bit bus is too wide.
  auto keys = defaultKeys();
  for (auto& kv : keys)
    if (kv.first == "LOG_BLOCK") kv.second = "2";
  for (auto& kv : keys)
    if (kv.first == "LOG_BUS_WIDTH") kv.second = "6";
  std::string msg = errorOf(toText(keys));
  EXPECT_TRUE(Contains(msg, "LOG_BUS_WIDTH"));
  EXPECT_TRUE(Contains(msg, "wider than the narrowest tensor element (32 bits)"));
}

TEST(Config, BufferTooSmallForOneElementIsNamed) {
  // One weight element is 256 B = 2^8; a 2^7-byte buffer cannot hold it.
  std::string msg = errorOf(withKey("LOG_WGT_BUFF_SIZE", "7"));
  EXPECT_TRUE(Contains(msg, "LOG_WGT_BUFF_SIZE"));
}

TEST(Config, AccumulatorDepthPastSramBaseFieldIsNamed) {
  // 2^26 B / 64 B = 2^20 entries: the index no longer fits the 16-bit sram_base.
  std::string msg = errorOf(withKey("LOG_ACC_BUFF_SIZE", "26"));
  EXPECT_TRUE(Contains(msg, "LOG_ACC_BUFF_SIZE"));
  EXPECT_TRUE(Contains(msg, "sram_base"));
}

TEST(Config, InputDeeperThanAccumulatorIsNamed) {
  // 2^16 / 16 = 2^12 input entries vs 2^11 accumulator entries: the micro-op src field indexes both.
  std::string msg = errorOf(withKey("LOG_INP_BUFF_SIZE", "16"));
  EXPECT_TRUE(Contains(msg, "LOG_INP_BUFF_SIZE"));
  EXPECT_TRUE(Contains(msg, "micro-op src field"));
}

TEST(Config, MicroOpPast32BitsIsNamed) {
  // acc depth 2^18/64 = 2^12: dst 12 + src 12 + wgt 10 = 34 bits > 32.
  std::string msg = errorOf(withKey("LOG_ACC_BUFF_SIZE", "18"));
  EXPECT_TRUE(Contains(msg, "LOG_ACC_BUFF_SIZE"));
  EXPECT_TRUE(Contains(msg, "32-bit micro-op"));
}

TEST(Config, GemmInstructionPast128BitsIsNamed) {
  // LOG_UOP_BUFF_SIZE 16 -> uop depth 2^14. GEMM word 0: opcode 0-2, deps 3-6, reset 7,
  // uop_bgn 8-21 (14), uop_end 22-36 (15), iter_out 37-50 (14); iter_in would end at 65 so it
  // moves to 64-77. dst 78-88, 89-99, src 100-110, 111-121 (11 bits each); wgt_factor_out (10)
  // would straddle bit 128 so it moves to 128-137, wgt_factor_in 138-147: 148 bits.
  std::string msg = errorOf(withKey("LOG_UOP_BUFF_SIZE", "16"));
  EXPECT_TRUE(Contains(msg, "LOG_UOP_BUFF_SIZE"));
  EXPECT_TRUE(Contains(msg, "GEMM instruction needs 148 bits"));
  EXPECT_TRUE(Contains(msg, "128-bit"));
}

TEST(Config, AluInstructionPast128BitsIsNamed) {
  // acc 2^18/64 = 2^12, inp 2^16/16 = 2^12, wgt 2^16/256 = 2^8, uop 2^14/4 = 2^12 (micro-op
  // 12+12+8 = 32 bits fits). GEMM: word 0 is 8+12+13+14+14 = 61 bits; then 64 + dst 24 + src 24 +
  // wgt 16 = 128 bits fits exactly.
  // ALU: 64 + dst 24 + src 24 = 112, alu_opcode 112-114, use_imm 115; imm (16) would straddle
  // bit 128 so it moves to 128-143: 144 bits.
  auto keys = defaultKeys();
  for (auto& kv : keys) {
    if (kv.first == "LOG_ACC_BUFF_SIZE") kv.second = "18";
    if (kv.first == "LOG_WGT_BUFF_SIZE") kv.second = "16";
    if (kv.first == "LOG_UOP_BUFF_SIZE") kv.second = "14";
    if (kv.first == "LOG_INP_BUFF_SIZE") kv.second = "16";  // 2^12 entries, equal to the accumulator
  }
  std::string msg = errorOf(toText(keys));
  EXPECT_TRUE(Contains(msg, "LOG_ACC_BUFF_SIZE"));
  EXPECT_TRUE(Contains(msg, "ALU instruction needs 144 bits"));
}

TEST(Config, InputShallowerThanAccumulatorIsRejected) {
  // inp 2^14/16 = 2^10 entries, acc 2^11: VTA toolchains disagree on the micro-op src width here.
  std::string msg = errorOf(withKey("LOG_INP_BUFF_SIZE", "14"));
  EXPECT_TRUE(Contains(msg, "LOG_INP_BUFF_SIZE"));
  EXPECT_TRUE(Contains(msg, "differs from the accumulator depth"));
}

// Regression test: the line:column prefix once pointed one column past the offending character
// (nlohmann's parse_error::byte counts the bad byte itself); fixed in hw/src/config.cpp.
TEST(Config, InvalidJsonReportsLineAndColumn) {
  // Line 3 is `  "LOG_BATCH": ,`: the unexpected ',' is column 16 (2 spaces + 11 + ':' + ' ').
  std::string text = "{\n  \"NAME\": \"x\",\n  \"LOG_BATCH\": ,\n}\n";
  std::string msg = errorOf(text);
  EXPECT_TRUE(Contains(msg, "cfg.json:3:16:"));
  EXPECT_TRUE(Contains(msg, "invalid JSON"));
}

// Regression test for the same off-by-one column (it reported 1:4).
TEST(Config, InvalidJsonOnFirstLine) {
  // "{ x" : the 'x' at column 3 cannot start a key.
  std::string msg = errorOf("{ x }");
  EXPECT_TRUE(Contains(msg, "cfg.json:1:3:"));
}

// Regression test (found by the config_json fuzzer): a number too large for a double made the
// JSON parser throw out_of_range, which is no parse_error and escaped as a non-tessera exception.
TEST(Config, JsonNumberOutOfRangeIsAnError) {
  std::string msg = errorOf("{\"LOG_BATCH\": 32E3333}");
  EXPECT_TRUE(Contains(msg, "cfg.json"));
  EXPECT_TRUE(Contains(msg, "invalid JSON"));
  EXPECT_TRUE(Contains(msg, "number overflow"));
}

TEST(Config, NonObjectJsonIsRejected) {
  std::string msg = errorOf("[1, 2]");
  EXPECT_TRUE(Contains(msg, "JSON object"));
}

TEST(Config, EmptyNameIsRejected) {
  std::string msg = errorOf(withKey("NAME", "\"\""));
  EXPECT_TRUE(Contains(msg, "NAME"));
}

}  // namespace

namespace {

TEST(BuiltConfigs, MatchesByDerivedParametersNotByName) {
  const tessera::hw::BuiltConfigs built({"default", "small"});
  tessera::hw::Config mine = tessera::hw::Config::load("default");
  mine.name = "mine";
  EXPECT_EQ(built.indexOf(mine), 0);
  EXPECT_EQ(built.indexOf(tessera::hw::Config::load("small")), 1);
  EXPECT_EQ(built.unsupportedReason(mine, "t", "RTL model", "LIST"), "");
  const tessera::hw::Config batch2 = tessera::hw::Config::load("batch2");
  EXPECT_EQ(built.indexOf(batch2), -1);
  const std::string why = built.unsupportedReason(batch2, "t", "RTL model", "LIST");
  EXPECT_EQ(why.rfind("t is not built for config 'batch2': the RTL model exists only for configs default, small; e.g. ", 0), 0u)
      << why;
  EXPECT_NE(why.find(" (add the config to LIST and rebuild, or build its models on request: tessera build-models batch2)"),
            std::string::npos) << why;
  EXPECT_EQ(tessera::hw::BuiltConfigs({}).unsupportedReason(batch2, "t", "RTL model", "LIST"),
            "t is not built for any config (LIST is empty)");
  // A config of the user's own: the list takes shipped names, so the advice says how to make it one.
  tessera::hw::Config own = batch2;
  own.name = "own";
  EXPECT_NE(built.unsupportedReason(own, "t", "RTL model", "LIST").find("(save it as hw/configs/own.json, add 'own' to LIST and rebuild)"),
            std::string::npos);
  // A config the explored space refuses for the target: its reason, and no advice to rebuild.
  tessera::hw::Config wide = tessera::hw::Config::load("default");
  wide.name = "wide";
  wide.logBusWidth = 7;
  wide.derive("wide");
  const std::string refused = built.unsupportedReason(wide, "tsim", "RTL model", "LIST");
  EXPECT_EQ(refused.rfind("tsim cannot run config 'wide' (hw/configs/space/explore.json): LOG_BUS_WIDTH 7: ", 0), 0u) << refused;
  EXPECT_EQ(refused.find("rebuild"), std::string::npos) << refused;
  EXPECT_EQ(built.unsupportedReason(wide, "t", "RTL model", "LIST").find("cannot run"), std::string::npos);
}

}  // namespace
