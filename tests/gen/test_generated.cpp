// The generated headers agree with the configs: exact file contents, and hand-checked default values.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "tessera/hw/config.h"
#include "tessera/hw/generate.h"

// The default config's generated C++ header, in a namespace of its own for this test.
namespace generated_default {
#include "default/tessera_config.h"
}

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(GeneratedHeaders, BuildOutputsMatchTheGeneratorForEveryConfig) {
  for (const auto& name : tessera::hw::shippedConfigNames()) {
    auto cfg = tessera::hw::Config::load(name);
    const std::string dir = std::string(TESSERA_GENERATED_DIR) + "/" + name + "/";
    EXPECT_EQ(slurp(dir + "tessera_config.h"), tessera::hw::generateCppHeader(cfg)) << name;
    EXPECT_EQ(slurp(dir + "hls_config.h"), tessera::hw::generateHlsHeader(cfg)) << name;
    EXPECT_EQ(slurp(dir + "tessera_config.svh"), tessera::hw::generateSvInclude(cfg)) << name;
    EXPECT_EQ(slurp(dir + "tessera_config.tcl"), tessera::hw::generateTcl(cfg)) << name;
  }
}

TEST(GeneratedHeaders, DefaultValuesAreVtas) {
  // hw_spec_const.h arithmetic for VTA's default 1x16x16 configuration.
  EXPECT_EQ(VTA_BATCH, 1);
  EXPECT_EQ(VTA_BLOCK_IN, 16);
  EXPECT_EQ(VTA_BLOCK_OUT, 16);
  EXPECT_EQ(VTA_INP_ELEM_BYTES, 16);
  EXPECT_EQ(VTA_WGT_ELEM_BYTES, 256);
  EXPECT_EQ(VTA_ACC_ELEM_BYTES, 64);
  EXPECT_EQ(VTA_OUT_ELEM_BYTES, 16);
  EXPECT_EQ(VTA_UOP_BUFF_DEPTH, 8192);
  EXPECT_EQ(VTA_LOG_INP_BUFF_DEPTH, 11);
  EXPECT_EQ(VTA_LOG_WGT_BUFF_DEPTH, 10);
  EXPECT_EQ(VTA_LOG_ACC_BUFF_DEPTH, 11);
  EXPECT_EQ(VTA_INP_MAT_AXI_RATIO, 2);
  EXPECT_EQ(VTA_WGT_MAT_AXI_RATIO, 32);
  // Field positions of the C bit-field packing: y_size, dst_factor_out and the ALU immediate open
  // the second 64-bit word; the micro-op is dst[0:10] src[11:21] wgt[22:31].
  EXPECT_EQ(TESSERA_INSN_MEM_Y_SIZE_LO, 64);
  EXPECT_EQ(TESSERA_INSN_MEM_DRAM_BASE_LO, 26);
  EXPECT_EQ(TESSERA_INSN_MEM_X_PAD_1_LO, 124);
  EXPECT_EQ(TESSERA_INSN_GEMM_UOP_END_LO, 21);
  EXPECT_EQ(TESSERA_INSN_GEMM_DST_FACTOR_OUT_LO, 64);
  EXPECT_EQ(TESSERA_INSN_GEMM_WGT_FACTOR_IN_LO, 118);
  EXPECT_EQ(TESSERA_INSN_ALU_ALU_OPCODE_LO, 108);
  EXPECT_EQ(TESSERA_INSN_ALU_IMM_LO, 112);
  EXPECT_EQ(TESSERA_INSN_ALU_IMM_W, 16);
  EXPECT_EQ(TESSERA_UOP_SRC_LO, 11);
  EXPECT_EQ(TESSERA_UOP_WGT_LO, 22);
  // The constexpr mirror says the same.
  EXPECT_EQ(generated_default::tessera::gen::kWgtBuffDepth, 1024);
  EXPECT_STREQ(generated_default::tessera::gen::kConfigName, "default");
}

}  // namespace
