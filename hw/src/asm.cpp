// Text form of instructions and micro-ops, and binary program files.
#include "tessera/hw/asm.h"

#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tessera/support/error.h"
#include "tessera/support/file_io.h"
#include "tessera/support/format.h"

namespace tessera::hw {

namespace {

bool isDepField(Field f) {
  return f == Field::kPopPrev || f == Field::kPopNext || f == Field::kPushPrev || f == Field::kPushNext;
}

std::string depString(const Insn& insn) {
  std::string s;
  const Field deps[] = {Field::kPopPrev, Field::kPopNext, Field::kPushPrev, Field::kPushNext};
  for (Field f : deps)
    if (insn.get(f)) s += (s.empty() ? "" : "|") + std::string(fieldName(f));
  return s.empty() ? "-" : s;
}

}  // namespace

std::string mnemonic(const Insn& insn) {
  std::string m = opcodeName(insn.opcode);
  if (insn.isMem()) {
    m += ".";
    m += insn.memType <= 5 ? memIdName(insn.memType) : std::to_string(insn.memType);
  } else if (insn.opcode == Opcode::kAlu) {
    m += ".";
    m += insn.aluOp <= 4 ? aluOpName(insn.aluOp) : std::to_string(insn.aluOp);
  }
  return m;
}

std::string disassemble(const Isa& isa, const Insn& insn) {
  if (static_cast<uint32_t>(insn.opcode) > 4) {
    // Only the generic fields (opcode and dependency flags) are defined for an invalid opcode.
    RawInsn raw;
    for (const auto& p : isa.layout().gemmFormat()) {
      if (p.field != Field::kOpcode && !isDepField(p.field)) continue;
      raw.lo |= (static_cast<uint64_t>(insn.get(p.field)) & ((uint64_t(1) << p.width) - 1)) << p.lo;
    }
    return disassemble(isa, raw);
  }
  std::string line = mnemonic(insn) + " deps=" + depString(insn);
  for (const auto& p : isa.layout().format(insn.opcode)) {
    if (p.field == Field::kOpcode || isDepField(p.field)) continue;
    if (p.field == Field::kMemType || p.field == Field::kAluOpcode) continue;  // in the mnemonic
    int64_t v = insn.get(p.field);
    if (insn.opcode == Opcode::kFinish && v == 0) continue;
    line += " ";
    line += fieldName(p.field);
    line += "=";
    line += p.field == Field::kDramBase ? hex(static_cast<uint64_t>(v)) : std::to_string(v);
  }
  return line;
}

std::string disassemble(const Isa& isa, const RawInsn& raw) {
  uint32_t op = static_cast<uint32_t>(raw.lo & 7);
  if (op > 4) {
    char buf[64];
    std::snprintf(buf, sizeof buf, ".raw 0x%016llx%016llx", static_cast<unsigned long long>(raw.hi),
                  static_cast<unsigned long long>(raw.lo));
    return std::string(buf) + "  # invalid opcode " + std::to_string(op);
  }
  return disassemble(isa, isa.decode(raw));
}

std::string disassembleUop(const Uop& u) {
  return "UOP dst=" + std::to_string(u.dst) + " src=" + std::to_string(u.src) + " wgt=" + std::to_string(u.wgt);
}

std::string disassembleProgram(const Isa& isa, const std::vector<RawInsn>& program) {
  std::string out;
  char idx[32];
  for (size_t i = 0; i < program.size(); ++i) {
    std::snprintf(idx, sizeof idx, "%5zu: ", i);
    out += idx + disassemble(isa, program[i]) + "\n";
  }
  return out;
}

namespace {

struct Cursor {
  const std::string& origin;
  size_t line;
  std::string text;
  size_t pos = 0;

  [[noreturn]] void fail(const std::string& why, size_t at) const {
    throw Error(origin + ":" + std::to_string(line) + ":" + std::to_string(at + 1), why);
  }
  void skipSpace() {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t' || text[pos] == '\r')) ++pos;
  }
  bool atEnd() {
    skipSpace();
    return pos >= text.size();
  }
  std::string word() {
    skipSpace();
    size_t b = pos;
    while (pos < text.size() && text[pos] != ' ' && text[pos] != '\t' && text[pos] != '\r') ++pos;
    return text.substr(b, pos - b);
  }
};

bool parseNumber(const std::string& s, int64_t* out) {
  if (s.empty()) return false;
  size_t i = 0;
  bool neg = false;
  if (s[0] == '-' || s[0] == '+') { neg = s[0] == '-'; i = 1; }
  if (i >= s.size()) return false;
  int base = 10;
  if (s.size() > i + 2 && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X')) { base = 16; i += 2; }
  unsigned long long v = 0;
  for (; i < s.size(); ++i) {
    int d;
    char c = s[i];
    if (c >= '0' && c <= '9') d = c - '0';
    else if (base == 16 && c >= 'a' && c <= 'f') d = c - 'a' + 10;
    else if (base == 16 && c >= 'A' && c <= 'F') d = c - 'A' + 10;
    else if (c == '_') continue;
    else return false;
    if (v > (~0ULL - d) / base) return false;
    v = v * base + d;
  }
  if (v > 0x7fffffffffffffffULL) return false;
  *out = neg ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
  return true;
}

std::string upper(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

int lookupName(const std::string& s, const char* (*nameOf)(uint32_t), uint32_t count) {
  for (uint32_t i = 0; i < count; ++i)
    if (upper(s) == nameOf(i)) return static_cast<int>(i);
  int64_t v;
  if (parseNumber(s, &v) && v >= 0 && v < 8) return static_cast<int>(v);
  return -1;
}

}  // namespace

Assembly assemble(const Isa& isa, const std::string& text, const std::string& origin) {
  Assembly out;
  std::istringstream in(text);
  std::string raw;
  size_t lineNo = 0;
  while (std::getline(in, raw)) {
    ++lineNo;
    auto hash = raw.find('#');
    Cursor c{origin, lineNo, hash == std::string::npos ? raw : raw.substr(0, hash)};
    if (c.atEnd()) continue;
    size_t startPos = c.pos;
    std::string head = c.word();
    // Optional "<index>:" prefix as printed in listings.
    if (!head.empty() && head.back() == ':') {
      int64_t idx;
      if (!parseNumber(head.substr(0, head.size() - 1), &idx)) c.fail("bad index prefix '" + head + "'", startPos);
      if (c.atEnd()) c.fail("index prefix without an instruction", startPos);
      startPos = c.pos;
      head = c.word();
    }
    std::string op = upper(head), sub;
    auto dot = op.find('.', 1);
    if (dot != std::string::npos) { sub = op.substr(dot + 1); op = op.substr(0, dot); }

    if (op == ".RAW") {
      size_t at = c.pos;
      std::string v = c.word();
      if (v.size() != 34 || v[0] != '0' || (v[1] != 'x' && v[1] != 'X'))
        c.fail(".raw needs 0x followed by 32 hex digits", at);
      RawInsn r;
      int64_t hi, lo;
      if (!parseNumber("0x" + v.substr(2, 8), &hi) || !parseNumber("0x" + v.substr(10, 8), &lo))
        c.fail("bad hex digits in .raw", at);
      int64_t hi2, lo2;
      if (!parseNumber("0x" + v.substr(18, 8), &hi2) || !parseNumber("0x" + v.substr(26, 8), &lo2))
        c.fail("bad hex digits in .raw", at);
      r.hi = (uint64_t(hi) << 32) | uint64_t(lo);
      r.lo = (uint64_t(hi2) << 32) | uint64_t(lo2);
      if (!c.atEnd()) c.fail("unexpected text after .raw value", c.pos);
      out.insns.push_back(r);
      continue;
    }
    if (op == "UOP") {
      Uop u;
      bool seen[3] = {false, false, false};
      while (!c.atEnd()) {
        size_t at = c.pos;
        std::string tok = c.word();
        auto eq = tok.find('=');
        if (eq == std::string::npos) c.fail("expected name=value, got '" + tok + "'", at);
        std::string name = tok.substr(0, eq);
        int64_t v;
        if (!parseNumber(tok.substr(eq + 1), &v) || v < 0 || v > 0xffffffffLL)
          c.fail("bad value for " + name + ": '" + tok.substr(eq + 1) + "'", at + eq + 1);
        int k = name == "dst" || name == "dst_idx" ? 0 : name == "src" || name == "src_idx" ? 1
              : name == "wgt" || name == "wgt_idx" ? 2 : -1;
        if (k < 0) c.fail("unknown micro-op field '" + name + "' (dst, src, wgt)", at);
        if (seen[k]) c.fail("field '" + name + "' given twice", at);
        seen[k] = true;
        (k == 0 ? u.dst : k == 1 ? u.src : u.wgt) = static_cast<uint32_t>(v);
      }
      try {
        out.uops.push_back(isa.encodeUop(u));
      } catch (const Error& e) {
        c.fail(e.reason() + " (" + e.where() + ")", startPos);
      }
      continue;
    }

    Insn insn;
    if (op == "LOAD" || op == "STORE") {
      insn.opcode = op == "LOAD" ? Opcode::kLoad : Opcode::kStore;
      if (sub.empty()) c.fail(op + " needs a memory type suffix, e.g. " + op + ".INP", startPos);
      int id = lookupName(sub, memIdName, 6);
      if (id < 0) c.fail("unknown memory type '" + sub + "' (UOP, WGT, INP, ACC, OUT, ACC8)", startPos);
      insn.memType = static_cast<uint32_t>(id);
    } else if (op == "GEMM" || op == "FINISH") {
      insn.opcode = op == "GEMM" ? Opcode::kGemm : Opcode::kFinish;
      if (!sub.empty()) c.fail(op + " takes no suffix", startPos);
    } else if (op == "ALU") {
      insn.opcode = Opcode::kAlu;
      if (sub.empty()) c.fail("ALU needs an operation suffix, e.g. ALU.ADD", startPos);
      int id = lookupName(sub, aluOpName, 5);
      if (id < 0) c.fail("unknown ALU operation '" + sub + "' (MIN, MAX, ADD, SHR, MUL)", startPos);
      insn.aluOp = static_cast<uint32_t>(id);
    } else {
      c.fail("unknown mnemonic '" + head + "' (LOAD.x, STORE.x, GEMM, ALU.x, FINISH, UOP, .raw)", startPos);
    }
    std::map<std::string, bool> given;
    while (!c.atEnd()) {
      size_t at = c.pos;
      std::string tok = c.word();
      auto eq = tok.find('=');
      if (eq == std::string::npos) c.fail("expected name=value, got '" + tok + "'", at);
      std::string name = tok.substr(0, eq), value = tok.substr(eq + 1);
      if (given[name]) c.fail("field '" + name + "' given twice", at);
      given[name] = true;
      if (name == "deps") {
        if (value == "-") continue;
        std::stringstream ss(value);
        std::string flag;
        while (std::getline(ss, flag, '|')) {
          Field f = flag == "pop_prev" ? Field::kPopPrev : flag == "pop_next" ? Field::kPopNext
                  : flag == "push_prev" ? Field::kPushPrev : flag == "push_next" ? Field::kPushNext : Field::kCount;
          if (f == Field::kCount)
            c.fail("unknown dependency flag '" + flag + "' (pop_prev, pop_next, push_prev, push_next)", at + eq + 1);
          insn.set(f, 1);
        }
        continue;
      }
      bool found = false;
      for (const auto& p : isa.layout().format(insn.opcode)) {
        if (name != fieldName(p.field) || p.field == Field::kOpcode) continue;
        int64_t v;
        if (!parseNumber(value, &v)) c.fail("bad number '" + value + "' for field " + name, at + eq + 1);
        insn.set(p.field, v);
        found = true;
        // Range is checked by encode(); catch wrap-around of the 32-bit holder here.
        if (insn.get(p.field) != v)
          c.fail("value " + value + " does not fit field " + name + " (" + std::to_string(p.width) + " bits)", at + eq + 1);
        break;
      }
      if (!found) c.fail("field '" + name + "' does not exist in " + opcodeName(insn.opcode) + " instructions", at);
    }
    try {
      out.insns.push_back(isa.encode(insn));
    } catch (const Error& e) {
      c.fail(e.reason() + " (" + e.where() + ")", startPos);
    }
  }
  return out;
}

std::vector<RawInsn> readProgramFile(const std::string& path) {
  auto bytes = readBinaryFile(path);
  if (bytes.size() % 16 != 0)
    throw Error(path, "file size " + std::to_string(bytes.size()) +
                          " is not a multiple of the 16-byte instruction (truncated program? the last " +
                          std::to_string(bytes.size() % 16) + " bytes are a partial instruction)");
  if (bytes.empty()) throw Error(path, "program file is empty");
  std::vector<RawInsn> prog(bytes.size() / 16);
  for (size_t i = 0; i < prog.size(); ++i) prog[i] = Isa::rawFromBytes(&bytes[16 * i]);
  return prog;
}

std::vector<uint32_t> readUopFile(const std::string& path) {
  auto bytes = readBinaryFile(path);
  if (bytes.size() % 4 != 0)
    throw Error(path, "file size " + std::to_string(bytes.size()) + " is not a multiple of the 4-byte micro-op");
  std::vector<uint32_t> uops(bytes.size() / 4);
  for (size_t i = 0; i < uops.size(); ++i)
    uops[i] = uint32_t(bytes[4 * i]) | uint32_t(bytes[4 * i + 1]) << 8 | uint32_t(bytes[4 * i + 2]) << 16 |
              uint32_t(bytes[4 * i + 3]) << 24;
  return uops;
}

std::vector<uint8_t> programBytes(const std::vector<RawInsn>& program) {
  std::vector<uint8_t> b(program.size() * 16);
  for (size_t i = 0; i < program.size(); ++i) Isa::rawToBytes(program[i], &b[16 * i]);
  return b;
}

std::vector<uint8_t> uopBytes(const std::vector<uint32_t>& uops) {
  std::vector<uint8_t> b(uops.size() * 4);
  for (size_t i = 0; i < uops.size(); ++i)
    for (int k = 0; k < 4; ++k) b[4 * i + k] = static_cast<uint8_t>(uops[i] >> (8 * k));
  return b;
}

}  // namespace tessera::hw
