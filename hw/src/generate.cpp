// Header generators: the only place hardware parameters are turned into source text.
#include "tessera/hw/generate.h"

#include <algorithm>
#include <cctype>

#include "tessera/hw/host_interface.h"
#include "tessera/hw/isa.h"

namespace tessera::hw {

const std::vector<IsaEnum>& isaEnums() {
  static const std::vector<IsaEnum> enums = {
      {"opcode_e", "OPCODE_BIT_WIDTH", kOpcodeBits, Field::kOpcode,
       {{"OPCODE_LOAD", static_cast<long long>(Opcode::kLoad)},
        {"OPCODE_STORE", static_cast<long long>(Opcode::kStore)},
        {"OPCODE_GEMM", static_cast<long long>(Opcode::kGemm)},
        {"OPCODE_FINISH", static_cast<long long>(Opcode::kFinish)},
        {"OPCODE_ALU", static_cast<long long>(Opcode::kAlu)}}},
      {"alu_op_e", "ALU_OPCODE_BIT_WIDTH", kAluOpcodeBits, Field::kAluOpcode,
       {{"ALU_OPCODE_MIN", static_cast<long long>(AluOp::kMin)},
        {"ALU_OPCODE_MAX", static_cast<long long>(AluOp::kMax)},
        {"ALU_OPCODE_ADD", static_cast<long long>(AluOp::kAdd)},
        {"ALU_OPCODE_SHR", static_cast<long long>(AluOp::kShr)},
        {"ALU_OPCODE_MUL", static_cast<long long>(AluOp::kMul)}}},
      {"mem_id_e", "MEMOP_ID_BIT_WIDTH", kMemIdBits, Field::kMemType,
       {{"MEM_ID_UOP", static_cast<long long>(MemId::kUop)},
        {"MEM_ID_WGT", static_cast<long long>(MemId::kWgt)},
        {"MEM_ID_INP", static_cast<long long>(MemId::kInp)},
        {"MEM_ID_ACC", static_cast<long long>(MemId::kAcc)},
        {"MEM_ID_OUT", static_cast<long long>(MemId::kOut)},
        {"MEM_ID_ACC_8BIT", static_cast<long long>(MemId::kAcc8)}}},
  };
  return enums;
}

std::vector<std::pair<std::string, long long>> derivedParameters(const Config& c) {
  std::vector<std::pair<std::string, long long>> p = {
      {"LOG_INP_WIDTH", c.logInpWidth}, {"LOG_WGT_WIDTH", c.logWgtWidth}, {"LOG_ACC_WIDTH", c.logAccWidth},
      {"LOG_OUT_WIDTH", c.logOutWidth}, {"LOG_BATCH", c.logBatch}, {"LOG_BLOCK_IN", c.logBlockIn},
      {"LOG_BLOCK_OUT", c.logBlockOut}, {"LOG_UOP_BUFF_SIZE", c.logUopBuffSize},
      {"LOG_INP_BUFF_SIZE", c.logInpBuffSize}, {"LOG_WGT_BUFF_SIZE", c.logWgtBuffSize},
      {"LOG_ACC_BUFF_SIZE", c.logAccBuffSize}, {"LOG_BUS_WIDTH", c.logBusWidth},
      {"INP_WIDTH", c.inpWidth}, {"WGT_WIDTH", c.wgtWidth}, {"ACC_WIDTH", c.accWidth}, {"OUT_WIDTH", c.outWidth},
      {"BATCH", c.batch}, {"BLOCK_IN", c.blockIn}, {"BLOCK_OUT", c.blockOut},
      {"BUS_WIDTH", c.busWidth}, {"BUS_BYTES", c.busBytes},
      {"INS_WIDTH", c.insnBytes * 8}, {"UOP_WIDTH", c.uopBytes * 8},
      {"INS_ELEM_BYTES", c.insnBytes}, {"UOP_ELEM_BYTES", c.uopBytes},
      {"INP_ELEM_BYTES", c.inpElemBytes}, {"WGT_ELEM_BYTES", c.wgtElemBytes},
      {"ACC_ELEM_BYTES", c.accElemBytes}, {"OUT_ELEM_BYTES", c.outElemBytes}, {"ACC8_ELEM_BYTES", c.acc8ElemBytes},
      {"INP_MATRIX_WIDTH", c.inpElemBytes * 8}, {"WGT_MATRIX_WIDTH", c.wgtElemBytes * 8},
      {"ACC_MATRIX_WIDTH", c.accElemBytes * 8}, {"OUT_MATRIX_WIDTH", c.outElemBytes * 8},
      {"INP_MAT_AXI_RATIO", c.inpMatAxiRatio}, {"WGT_MAT_AXI_RATIO", c.wgtMatAxiRatio},
      {"ACC_MAT_AXI_RATIO", c.accMatAxiRatio}, {"OUT_MAT_AXI_RATIO", c.outMatAxiRatio},
      {"LOG_UOP_BUFF_DEPTH", c.logUopDepth}, {"LOG_INP_BUFF_DEPTH", c.logInpDepth},
      {"LOG_WGT_BUFF_DEPTH", c.logWgtDepth}, {"LOG_ACC_BUFF_DEPTH", c.logAccDepth},
      {"UOP_BUFF_DEPTH", c.uopDepth}, {"INP_BUFF_DEPTH", c.inpDepth}, {"WGT_BUFF_DEPTH", c.wgtDepth},
      {"ACC_BUFF_DEPTH", c.accDepth},
      {"INSN_QUEUE_DEPTH", c.insnQueueDepth}, {"DEP_QUEUE_DEPTH", c.depQueueDepth},
      {"OPCODE_BIT_WIDTH", kOpcodeBits}, {"ALU_OPCODE_BIT_WIDTH", kAluOpcodeBits},
      {"MEMOP_ID_BIT_WIDTH", kMemIdBits}, {"MEMOP_SRAM_ADDR_BIT_WIDTH", kMemSramBaseBits},
      {"MEMOP_DRAM_ADDR_BIT_WIDTH", kMemDramBaseBits}, {"MEMOP_SIZE_BIT_WIDTH", kMemSizeBits},
      {"MEMOP_STRIDE_BIT_WIDTH", kMemStrideBits}, {"MEMOP_PAD_BIT_WIDTH", kMemPadBits},
      {"LOOP_ITER_WIDTH", kLoopIterBits}, {"ALUOP_IMM_BIT_WIDTH", kAluImmBits},
      {"SHR_ARG_BIT_WIDTH", c.logAccWidth},
  };
  for (const IsaEnum& e : isaEnums())
    for (const auto& item : e.items) p.push_back({item.name, item.value});
  // Bit positions of every field of every instruction format and of the micro-op.
  InsnLayout layout(c);
  auto upper = [](std::string s) {
    for (auto& ch : s) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    return s;
  };
  const struct { const char* name; const std::vector<FieldPos>* fields; } formats[] = {
      {"MEM", &layout.memFormat()}, {"GEMM", &layout.gemmFormat()}, {"ALU", &layout.aluFormat()}};
  for (const auto& f : formats) {
    for (const auto& pos : *f.fields) {
      std::string base = std::string("INSN_") + f.name + "_" + upper(fieldName(pos.field));
      p.push_back({base + "_LO", pos.lo});
      p.push_back({base + "_W", pos.width});
    }
  }
  const char* uopNames[3] = {"DST", "SRC", "WGT"};
  for (int i = 0; i < 3; ++i) {
    p.push_back({std::string("UOP_") + uopNames[i] + "_LO", layout.uopFormat()[i].lo});
    p.push_back({std::string("UOP_") + uopNames[i] + "_W", layout.uopFormat()[i].width});
  }
  return p;
}

namespace {
std::string guardName(const Config& c, const char* suffix) {
  std::string g = "TESSERA_CONFIG_" + c.name + "_" + suffix;
  for (auto& ch : g) ch = std::isalnum(static_cast<unsigned char>(ch)) ? static_cast<char>(std::toupper(ch)) : '_';
  return g;
}

std::string banner(const Config& c, const char* comment) {
  return std::string(comment) + " Generated by tessera-gen from hw/configs/" + c.name +
         ".json; do not edit: change the JSON instead.\n";
}

std::string cMacros(const Config& c) {
  std::string s;
  s += "#define TESSERA_CONFIG_NAME \"" + c.name + "\"\n";
  for (const auto& [name, value] : derivedParameters(c)) {
    // VTA's names for the hw_spec_const.h set, TESSERA_ for the field positions.
    std::string prefix = name.rfind("INSN_", 0) == 0 || name.rfind("UOP_", 0) == 0 ? "TESSERA_" : "VTA_";
    if (name == "UOP_WIDTH" || name == "UOP_ELEM_BYTES" || name == "UOP_BUFF_DEPTH") prefix = "VTA_";
    if (name == "DEP_QUEUE_DEPTH" || name == "ACC8_ELEM_BYTES") prefix = "TESSERA_";
    s += "#define " + prefix + name + " " + std::to_string(value) + "\n";
  }
  return s;
}
}  // namespace

std::string generateCppHeader(const Config& c) {
  std::string g = guardName(c, "H");
  std::string s = banner(c, "//");
  s += "#ifndef " + g + "\n#define " + g + "\n\n";
  s += cMacros(c);
  s += "\n#ifdef __cplusplus\nnamespace tessera::gen {\ninline constexpr const char kConfigName[] = \"" + c.name + "\";\n";
  for (const auto& [name, value] : derivedParameters(c)) {
    std::string id = "k";
    bool up = true;
    for (char ch : name) {
      if (ch == '_') { up = true; continue; }
      id += up ? ch : static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      up = false;
    }
    s += "inline constexpr long long " + id + " = " + std::to_string(value) + ";\n";
  }
  s += "}  // namespace tessera::gen\n#endif\n\n#endif  // " + g + "\n";
  return s;
}

std::string generateHlsHeader(const Config& c) {
  std::string g = guardName(c, "HLS_H");
  std::string s = banner(c, "//");
  s += "#ifndef " + g + "\n#define " + g + "\n\n" + cMacros(c) + "\n#endif  // " + g + "\n";
  return s;
}

namespace {
// A packed struct of one instruction (or micro-op) format, most significant field first, with the
// bits no field uses named unused_<lo> so the struct is exactly `total` bits wide. A field whose
// kind is one of the ISA's enumerations (opcode, memory type, ALU opcode) has that enum's type.
std::string svPackedStruct(const std::string& type, const std::vector<FieldPos>& fields, int total,
                           const std::vector<std::string>& names) {
  std::vector<std::pair<FieldPos, std::string>> sorted;
  for (size_t i = 0; i < fields.size(); ++i) sorted.push_back({fields[i], names[i]});
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.first.lo > b.first.lo; });
  std::string s = "  typedef struct packed {\n";
  int top = total;
  auto gap = [&](int lo) {
    if (top > lo) s += "    logic [" + std::to_string(top - lo) + "-1:0] unused_" + std::to_string(lo) + ";\n";
  };
  for (const auto& [pos, name] : sorted) {
    gap(pos.lo + pos.width);
    const IsaEnum* kind = nullptr;
    for (const IsaEnum& e : isaEnums())
      if (e.field == pos.field && e.bits == pos.width) kind = &e;
    if (kind)
      s += "    " + std::string(kind->type) + " " + name + ";\n";
    else
      s += "    logic [" + std::to_string(pos.width) + "-1:0] " + name + ";\n";
    top = pos.lo;
  }
  gap(0);
  s += "  } " + type + ";\n";
  return s;
}

bool isEnumItem(const std::string& name) {
  for (const IsaEnum& e : isaEnums())
    for (const auto& item : e.items)
      if (name == item.name) return true;
  return false;
}
}  // namespace

std::string generateSvInclude(const Config& c) {
  std::string g = guardName(c, "SVH");
  std::string s = banner(c, "//");
  s += "// The configuration as package tessera_config_pkg (constants, the ISA's enumerations as typed\n"
       "// enums and the packed instruction formats) and the host-interface contract as package\n"
       "// tessera_host_pkg. Included by every rtl/ file; the guard defines each package once per\n"
       "// compilation unit.\n";
  s += "`ifndef " + g + "\n`define " + g + "\n\n";
  // Every include of this file names packages, not its own file; most constants go unused by a given module.
  s += "/* verilator lint_off DECLFILENAME */\n/* verilator lint_off UNUSEDPARAM */\n";
  s += "package tessera_config_pkg;\n\n";
  for (const auto& [name, value] : derivedParameters(c))
    if (!isEnumItem(name)) s += "  localparam int unsigned " + name + " = " + std::to_string(value) + ";\n";
  s += "\n  // AXI4 (AMBA AXI A3.4): no burst crosses a page, an INCR burst has at most AXI_MAX_BURST_BEATS\n"
       "  // beats; the INCR burst type, the OKAY and SLVERR responses.\n";
  s += "  localparam int unsigned AXI_PAGE_BITS = " + std::to_string(kAxiPageBits) + ";\n";
  s += "  localparam int unsigned AXI_PAGE_BYTES = 1 << AXI_PAGE_BITS;\n";
  s += "  localparam int unsigned AXI_MAX_BURST_BEATS = " + std::to_string(kAxiMaxBurstBeats) + ";\n";
  s += "  localparam logic [1:0] AXI_BURST_INCR = 2'd" + std::to_string(kAxiBurstIncr) + ";\n";
  s += "  localparam logic [1:0] AXI_RESP_OKAY = 2'd" + std::to_string(kAxiRespOkay) + ";\n";
  s += "  localparam logic [1:0] AXI_RESP_SLVERR = 2'd" + std::to_string(kAxiRespSlvErr) + ";\n";
  s += "\n  // The ISA's opcodes, ALU opcodes and memory ids, the types of those instruction fields.\n";
  for (const IsaEnum& e : isaEnums()) {
    s += "  typedef enum logic [" + std::string(e.widthParam) + "-1:0] {\n";
    for (size_t i = 0; i < e.items.size(); ++i)
      s += "    " + std::string(e.items[i].name) + " = " + std::to_string(e.bits) + "'d" +
           std::to_string(e.items[i].value) + (i + 1 < e.items.size() ? ",\n" : "\n");
    s += "  } " + std::string(e.type) + ";\n";
  }
  InsnLayout layout(c);
  auto names = [](const std::vector<FieldPos>& fields) {
    std::vector<std::string> n;
    for (const auto& f : fields) n.push_back(fieldName(f.field));
    return n;
  };
  const int insnBits = c.insnBytes * 8;
  s += "\n  // Instruction formats (LOAD/STORE, GEMM/FINISH, ALU) and the micro-op, as packed structs.\n";
  s += svPackedStruct("insn_mem_t", layout.memFormat(), insnBits, names(layout.memFormat()));
  s += svPackedStruct("insn_gemm_t", layout.gemmFormat(), insnBits, names(layout.gemmFormat()));
  s += svPackedStruct("insn_alu_t", layout.aluFormat(), insnBits, names(layout.aluFormat()));
  std::vector<FieldPos> uop(layout.uopFormat().begin(), layout.uopFormat().end());
  s += svPackedStruct("uop_t", uop, c.uopBytes * 8, {"dst", "src", "wgt"});
  s += "\nendpackage\n\n";
  s += generateHostSvPackage();
  s += "/* verilator lint_on UNUSEDPARAM */\n/* verilator lint_on DECLFILENAME */\n";
  s += "\n`endif  // " + g + "\n";
  return s;
}

std::string generateTcl(const Config& c) {
  std::string s = banner(c, "#");
  s += "set TESSERA_CONFIG_NAME \"" + c.name + "\"\n";
  for (const auto& [name, value] : derivedParameters(c)) s += "set TESSERA_" + name + " " + std::to_string(value) + "\n";
  return s;
}

}  // namespace tessera::hw
