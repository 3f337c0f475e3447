// The generated headers agree with the configs: exact file contents, and hand-checked default values.
#include <gtest/gtest.h>

#include <cctype>
#include <fstream>
#include <sstream>

#include "tessera/hw/config.h"
#include "tessera/hw/generate.h"
#include "tessera/hw/host_interface.h"
#include "tessera/hw/isa.h"

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

// The ISA's enumerations: VTA's macro names and values in the C header, typed enums in the
// SystemVerilog package (no integer copy beside them), and the types of their instruction fields.
TEST(GeneratedHeaders, IsaEnumerationsAreTypedInTheSvPackage) {
  EXPECT_EQ(VTA_OPCODE_LOAD, 0);
  EXPECT_EQ(VTA_OPCODE_ALU, 4);
  EXPECT_EQ(VTA_ALU_OPCODE_SHR, 3);
  EXPECT_EQ(VTA_ALU_OPCODE_MUL, 4);
  EXPECT_EQ(VTA_MEM_ID_INP, 2);
  EXPECT_EQ(VTA_MEM_ID_ACC_8BIT, 5);
  const auto cfg = tessera::hw::Config::load("default");
  const std::string sv = tessera::hw::generateSvInclude(cfg), cpp = tessera::hw::generateCppHeader(cfg);
  ASSERT_EQ(tessera::hw::isaEnums().size(), 3u);
  for (const auto& e : tessera::hw::isaEnums()) {
    EXPECT_NE(sv.find("  typedef enum logic [" + std::string(e.widthParam) + "-1:0] {\n"), std::string::npos) << e.type;
    EXPECT_NE(sv.find("  } " + std::string(e.type) + ";\n"), std::string::npos) << e.type;
    for (const auto& item : e.items) {
      const std::string value = std::to_string(item.value);
      EXPECT_NE(sv.find("    " + std::string(item.name) + " = " + std::to_string(e.bits) + "'d" + value),
                std::string::npos)
          << item.name;
      EXPECT_EQ(sv.find("localparam int unsigned " + std::string(item.name) + " "), std::string::npos) << item.name;
      EXPECT_NE(cpp.find("#define VTA_" + std::string(item.name) + " " + value + "\n"), std::string::npos) << item.name;
    }
  }
  EXPECT_EQ(tessera::hw::isaEnums()[0].items.back().value, static_cast<long long>(tessera::hw::Opcode::kAlu));
  // Every format's opcode, LOAD/STORE's memory type and ALU's opcode field are of the enum types.
  size_t opcodes = 0;
  for (size_t at = sv.find("    opcode_e opcode;\n"); at != std::string::npos; at = sv.find("    opcode_e opcode;\n", at + 1))
    ++opcodes;
  EXPECT_EQ(opcodes, 3u);
  EXPECT_NE(sv.find("    mem_id_e memory_type;\n"), std::string::npos);
  EXPECT_NE(sv.find("    alu_op_e alu_opcode;\n"), std::string::npos);
  // The AXI page the DRAM master's bursts stay inside, once.
  EXPECT_NE(sv.find("  localparam int unsigned AXI_PAGE_BITS = 12;\n"), std::string::npos);
  EXPECT_NE(sv.find("  localparam int unsigned AXI_PAGE_BYTES = 1 << AXI_PAGE_BITS;\n"), std::string::npos);
}

// The host-interface contract: the generated C++ header and docs table are the generator's output,
// docs/rtl.md carries that table verbatim, and the generated names are the ones everything uses.
TEST(GeneratedHostInterface, BuildOutputsMatchTheGenerator) {
  EXPECT_EQ(slurp(TESSERA_HOST_HEADER), tessera::hw::generateHostCppHeader());
  EXPECT_EQ(slurp(TESSERA_HOST_DOCS), tessera::hw::generateHostDocsTable());
}

TEST(GeneratedHostInterface, DocsRtlCarriesTheGeneratedTable) {
  const std::string doc = slurp(std::string(TESSERA_SOURCE_DIR) + "/docs/rtl.md");
  const std::string begin = "<!-- BEGIN host-interface table", end = "<!-- END host-interface table -->";
  const size_t b = doc.find(begin), e = doc.find(end);
  ASSERT_NE(b, std::string::npos) << "docs/rtl.md lost its BEGIN host-interface table marker";
  ASSERT_NE(e, std::string::npos) << "docs/rtl.md lost its END host-interface table marker";
  const size_t body = doc.find('\n', b) + 1;
  EXPECT_EQ(doc.substr(body, e - body), tessera::hw::generateHostDocsTable())
      << "docs/rtl.md's host-interface table differs from `tessera-host-gen --md`: paste its output between the markers";
}

TEST(GeneratedHostInterface, OneSetOfNames) {
  const auto& h = tessera::hw::hostInterface();
  // Messages name token queues as the contract does, and so do the SV package and the C++ header.
  for (int q = 0; q < 4; ++q)
    EXPECT_EQ(tessera::hw::tokenQueueName(static_cast<tessera::hw::TokenQueue>(q)), tessera::hw::tokenQueueLabel(q));
  EXPECT_EQ(tessera::hw::tokenQueueLabel(0), "l2g (load->compute)");
  const std::string sv = tessera::hw::generateHostSvPackage(), cpp = tessera::hw::generateHostCppHeader();
  for (const auto& q : h.tokenQueues) {
    EXPECT_NE(cpp.find("\"" + q.name + " ("), std::string::npos) << q.name;
    EXPECT_NE(sv.find("Queue" + std::string(1, static_cast<char>(std::toupper(q.name[0]))) + q.name.substr(1) + " ="),
              std::string::npos)
        << q.name;
  }
  // The trace port's units: one numbering for the SV package, the C++ header (with the track names
  // tools show) and docs/rtl.md's table.
  ASSERT_EQ(h.traceUnits.size(), 6u);
  const std::string md = tessera::hw::generateHostDocsTable();
  for (size_t u = 0; u < h.traceUnits.size(); ++u) {
    std::string camel;
    bool up = true;
    for (char c : h.traceUnits[u].name) {
      if (c == '_') {
        up = true;
        continue;
      }
      camel += up ? c : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      up = false;
    }
    EXPECT_NE(sv.find("localparam int unsigned Trace" + camel + " = " + std::to_string(u) + ";"), std::string::npos) << camel;
    EXPECT_NE(cpp.find("kTrace" + camel + " = " + std::to_string(u)), std::string::npos) << camel;
    EXPECT_NE(cpp.find("\"" + h.traceUnits[u].label + "\""), std::string::npos) << h.traceUnits[u].label;
    EXPECT_NE(md.find("| " + std::to_string(u) + " | " + h.traceUnits[u].name + " | " + h.traceUnits[u].label + " |"),
              std::string::npos)
        << h.traceUnits[u].name;
  }

  // Registers are word-aligned, in address order, and the counters fit below the 12-bit address space.
  for (size_t i = 1; i < h.registers.size(); ++i) {
    EXPECT_EQ(h.registers[i].value % 4, 0u) << h.registers[i].name;
    EXPECT_GT(h.registers[i].value, h.registers[i - 1].value) << h.registers[i].name;
  }
  EXPECT_LE(h.countersBase + 8 * h.counters.size(), 1u << h.addrWidth);
  EXPECT_EQ(h.counters.size(), 14u);
}

}  // namespace
