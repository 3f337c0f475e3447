// VTA instruction set: opcodes, decoded instruction and micro-op values, and their bit layouts.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "tessera/hw/config.h"

namespace tessera::hw {

// Fixed field widths of VTA's hw_spec_const.h; buffer-index widths come from the Config.
constexpr int kOpcodeBits = 3;
constexpr int kMemIdBits = 3;
constexpr int kMemSramBaseBits = 16;
constexpr int kMemDramBaseBits = 32;
constexpr int kMemSizeBits = 16;
constexpr int kMemStrideBits = 16;
constexpr int kMemPadBits = 4;
constexpr int kLoopIterBits = 14;
constexpr int kAluOpcodeBits = 3;
constexpr int kAluImmBits = 16;
constexpr int kInsnBits = 128;
constexpr int kUopBits = 32;

enum class Opcode : uint32_t { kLoad = 0, kStore = 1, kGemm = 2, kFinish = 3, kAlu = 4 };
enum class AluOp : uint32_t { kMin = 0, kMax = 1, kAdd = 2, kShr = 3, kMul = 4 };

// The three pipeline stages; instructions are dispatched to one of them by fetch.
enum class Stage : int { kLoad = 0, kCompute = 1, kStore = 2 };

// The four dependency-token queues between the stages.
enum class TokenQueue : int { kLoadToCompute = 0, kComputeToLoad = 1, kComputeToStore = 2, kStoreToCompute = 3 };

const char* opcodeName(Opcode op);
const char* aluOpName(uint32_t op);
const char* memIdName(uint32_t id);
const char* stageName(Stage s);
const char* tokenQueueName(TokenQueue q);  // e.g. "l2g (load->compute)"

// Every named instruction field, in the order the disassembler prints them.
enum class Field : int {
  kOpcode, kPopPrev, kPopNext, kPushPrev, kPushNext,
  kMemType, kSramBase, kDramBase, kYSize, kXSize, kXStride, kYPad0, kYPad1, kXPad0, kXPad1,
  kReset, kUopBgn, kUopEnd, kIterOut, kIterIn,
  kDstFactorOut, kDstFactorIn, kSrcFactorOut, kSrcFactorIn, kWgtFactorOut, kWgtFactorIn,
  kAluOpcode, kUseImm, kImm,
  kCount
};
const char* fieldName(Field f);  // VTA's struct member names, e.g. "x_stride"

// A decoded instruction: every field of every format, unused ones zero. Plain value type.
struct Insn {
  Opcode opcode = Opcode::kFinish;
  bool popPrev = false, popNext = false, pushPrev = false, pushNext = false;
  // LOAD / STORE
  uint32_t memType = 0, sramBase = 0, dramBase = 0, ySize = 0, xSize = 0, xStride = 0;
  uint32_t yPad0 = 0, yPad1 = 0, xPad0 = 0, xPad1 = 0;
  // GEMM / ALU
  bool reset = false;
  uint32_t uopBgn = 0, uopEnd = 0, iterOut = 0, iterIn = 0;
  uint32_t dstFactorOut = 0, dstFactorIn = 0, srcFactorOut = 0, srcFactorIn = 0;
  uint32_t wgtFactorOut = 0, wgtFactorIn = 0;
  // ALU
  uint32_t aluOp = 0;
  bool useImm = false;
  int32_t imm = 0;

  int64_t get(Field f) const;
  void set(Field f, int64_t v);
  bool operator==(const Insn& o) const;
  bool operator!=(const Insn& o) const { return !(*this == o); }

  bool isMem() const { return opcode == Opcode::kLoad || opcode == Opcode::kStore; }
  // A LOAD/STORE of zero width moves nothing; the runtime uses it to carry dependency flags.
  bool isNop() const { return isMem() && xSize == 0; }
  // The stage fetch dispatches this instruction to (VTA's fetch rules).
  Stage stage() const;
};

// A micro-op: accumulator, input (GEMM) or accumulator (ALU) source, and weight indices.
struct Uop {
  uint32_t dst = 0, src = 0, wgt = 0;
  bool operator==(const Uop& o) const { return dst == o.dst && src == o.src && wgt == o.wgt; }
};

// 128 bits of an encoded instruction as two little-endian 64-bit words (VTA's in-memory layout).
struct RawInsn {
  uint64_t lo = 0, hi = 0;
  bool operator==(const RawInsn& o) const { return lo == o.lo && hi == o.hi; }
};

// Where a field sits in the 128-bit word: first bit and width.
struct FieldPos {
  Field field;
  int lo;
  int width;
  bool isSigned;
};

// Bit positions of every instruction format and of the micro-op for one configuration. Follows the
// C bit-field allocation of VTA's hw_spec.h (a field never straddles its 64-bit, or for micro-ops
// 32-bit, storage unit), so encodings match VTA's for every configuration.
class InsnLayout {
 public:
  explicit InsnLayout(const Config& cfg);

  // Layout of the format used by `op` (LOAD/STORE: memory; GEMM and FINISH: GEMM; ALU: ALU).
  const std::vector<FieldPos>& format(Opcode op) const;
  const std::vector<FieldPos>& memFormat() const { return mem_; }
  const std::vector<FieldPos>& gemmFormat() const { return gemm_; }
  const std::vector<FieldPos>& aluFormat() const { return alu_; }
  // Micro-op fields: dst, src, wgt (FieldPos::field is unused there).
  const std::array<FieldPos, 3>& uopFormat() const { return uop_; }
  // Width of a field in the format of `op`, or 0 if that format has no such field.
  int width(Opcode op, Field f) const;

  // Empty if the instruction formats fit 128 bits; otherwise why not.
  static std::string overflowReason(const Config& cfg);

 private:
  std::vector<FieldPos> mem_, gemm_, alu_;
  std::array<FieldPos, 3> uop_;
};

// Encodes, decodes and validates instructions and micro-ops for one configuration.
// Encoding never invokes bit-field undefined behaviour: values are range-checked and placed with
// explicit shifts and masks.
class Isa {
 public:
  explicit Isa(const Config& cfg);
  const Config& config() const { return cfg_; }
  const InsnLayout& layout() const { return layout_; }

  // Throws tessera::Error if a field does not fit its width; `where` prefixes the message.
  RawInsn encode(const Insn& insn, const std::string& where = "") const;
  // Decodes all fields; the opcode may be invalid (check with validate()).
  Insn decode(const RawInsn& raw) const;
  uint32_t encodeUop(const Uop& uop, const std::string& where = "") const;
  Uop decodeUop(uint32_t raw) const;

  // Static checks of one instruction: opcode, memory type, dependency flags legal for its stage,
  // SRAM ranges, micro-op range, ALU opcode. Throws tessera::Error naming the instruction and the
  // field. `index` is the instruction's position in its program.
  void validate(const Insn& insn, size_t index) const;

  // Bytes <-> raw instructions (16 bytes each, little endian).
  static RawInsn rawFromBytes(const uint8_t* bytes);
  static void rawToBytes(const RawInsn& raw, uint8_t* bytes);

 private:
  Config cfg_;
  InsnLayout layout_;
};

// Elements (rows * columns, padding included) a LOAD writes into SRAM.
uint64_t loadFootprint(const Insn& insn);

}  // namespace tessera::hw
