// The JIT command queue: VTA runtime semantics for instruction, dependency and micro-op handling.
#include "tessera/runtime/command_queue.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <iostream>

#include "tessera/hw/asm.h"
#include "tessera/support/error.h"
#include "tessera/runtime/session.h"
#include "vta/runtime.h"

namespace tessera::runtime {

using hw::Insn;
using hw::MemId;
using hw::Opcode;

namespace {
// Bytes of the instruction and micro-op staging buffers (VTA's maximum transfer).
constexpr uint64_t kMaxXferBytes = uint64_t(1) << 22;

int memStage(uint32_t memType) {
  auto id = static_cast<MemId>(memType);
  return id == MemId::kAcc || id == MemId::kAcc8 || id == MemId::kUop ? kComputeStage : kLoadStage;
}

bool validPair(int from, int to) {
  return (from == kLoadStage && to == kComputeStage) || (from == kComputeStage && to == kLoadStage) ||
         (from == kComputeStage && to == kStoreStage) || (from == kStoreStage && to == kComputeStage);
}

// VTA's runtime numbers the stages from 1 (VTADepPush/VTADepPop queue ids).
hw::Stage hwStage(int vtaStage) { return static_cast<hw::Stage>(vtaStage - 1); }

std::string pairName(const char* fn, int from, int to) {
  return std::string(fn) + "(" + std::to_string(from) + ", " + std::to_string(to) + ")";
}
}  // namespace

CommandQueue::CommandQueue(Session& session)
    : session_(session), isa_(session.config()), device_(session.createDevice()), debug_(&std::cout) {
  DataBuffer* ib = session_.allocBuffer(kMaxXferBytes);
  DataBuffer* ub = session_.allocBuffer(kMaxXferBytes);
  insnBuffer_ = *ib;
  uopBuffer_ = *ub;
  ownedBuffers_[0] = ib;
  ownedBuffers_[1] = ub;
  maxInsns_ = static_cast<uint32_t>(kMaxXferBytes / 16);
  maxUops_ = static_cast<uint32_t>(kMaxXferBytes / 4);
}

CommandQueue::~CommandQueue() {
  for (DataBuffer* b : ownedBuffers_)
    if (b) session_.freeBuffer(b);
}

Insn& CommandQueue::create(int stage) { return stream_.append(hwStage(stage)); }

void CommandQueue::commitPendingPop(int stage) { stream_.commitPops(hwStage(stage)); }

void CommandQueue::depPop(int from, int to) {
  if (!validPair(from, to))
    throw Error(pairName("VTADepPop", from, to), "no token queue between these stages (1 load, 2 compute, 3 store)");
  stream_.pop(hwStage(from), hwStage(to));
}

void CommandQueue::depPush(int from, int to) {
  if (!validPair(from, to))
    throw Error(pairName("VTADepPush", from, to), "no token queue between these stages (1 load, 2 compute, 3 store)");
  stream_.push(hwStage(from), hwStage(to));
}

void CommandQueue::checkOverflow() {
  // One API call adds at most 6 instructions (noops and FINISH) beyond the one it creates.
  if (stream_.insns().size() + 6 > maxInsns_) synchronize(1u << 31);
}

namespace {
void checkInsn(const hw::Isa& isa, const Insn& in, size_t index, const char* api) {
  try {
    isa.encode(in);
    isa.validate(in, index);
  } catch (const Error& e) {
    throw Error(std::string(api) + ": " + e.where(), e.reason());
  }
}
}  // namespace

namespace {
// DRAM element index of a 2D transfer in a buffer, after checking that the buffer is aligned to the
// element, that the transfer stays inside it, and that the index fits the 32-bit dram_base.
uint32_t dramIndex(const DataBuffer& buf, uint64_t eb, uint32_t elemOffset, uint32_t xSize, uint32_t ySize,
                   uint32_t xStride, const char* api, const char* side, const char* verb) {
  if (buf.phys % eb)
    throw Error(std::string(api) + ": " + side + "_dram_addr",
                "buffer address is not a multiple of the " + std::to_string(eb) + "-byte element");
  if (xSize && ySize) {
    uint64_t endElem = uint64_t(elemOffset) + uint64_t(ySize - 1) * xStride + xSize;
    if (endElem * eb > buf.size)
      throw Error(api, std::string(verb) + " elements up to " + std::to_string(endElem) + " (" +
                           std::to_string(endElem * eb) + " bytes) of a " + std::to_string(buf.size) + "-byte buffer");
  }
  uint64_t base = buf.phys / eb + elemOffset;
  if (base > 0xffffffffull)
    throw Error(std::string(api) + ": " + side + "_elem_offset", "DRAM element index exceeds 32 bits");
  return static_cast<uint32_t>(base);
}
}  // namespace

void CommandQueue::loadBuffer2D(const DataBuffer& src, uint32_t srcElemOffset, uint32_t xSize, uint32_t ySize,
                                uint32_t xStride, uint32_t xPadBefore, uint32_t yPadBefore, uint32_t xPadAfter,
                                uint32_t yPadAfter, uint32_t dstSramIndex, uint32_t dstMemoryType) {
  if (dstMemoryType > 5 || dstMemoryType == static_cast<uint32_t>(MemId::kOut))
    throw Error("VTALoadBuffer2D: dst_memory_type", "invalid memory type " + std::to_string(dstMemoryType) +
                                                        " (UOP 0, WGT 1, INP 2, ACC 3, ACC_8BIT 5)");
  const uint64_t eb = session_.config().dramElemBytes(static_cast<MemId>(dstMemoryType));
  const uint32_t base = dramIndex(src, eb, srcElemOffset, xSize, ySize, xStride, "VTALoadBuffer2D", "src", "reads");
  Insn& in = create(memStage(dstMemoryType));
  in.opcode = Opcode::kLoad;
  in.memType = dstMemoryType;
  in.sramBase = dstSramIndex;
  in.dramBase = base;
  in.ySize = ySize;
  in.xSize = xSize;
  in.xStride = xStride;
  in.yPad0 = yPadBefore;
  in.yPad1 = yPadAfter;
  in.xPad0 = xPadBefore;
  in.xPad1 = xPadAfter;
  checkInsn(isa_, in, stream_.insns().size() - 1, "VTALoadBuffer2D");
  checkOverflow();
}

void CommandQueue::storeBuffer2D(uint32_t srcSramIndex, uint32_t srcMemoryType, const DataBuffer& dst,
                                 uint32_t dstElemOffset, uint32_t xSize, uint32_t ySize, uint32_t xStride) {
  if (srcMemoryType != static_cast<uint32_t>(MemId::kOut))
    throw Error("VTAStoreBuffer2D: src_memory_type",
                "stores read the accumulator as memory type OUT (4), got " + std::to_string(srcMemoryType));
  const uint64_t eb = session_.config().outElemBytes;
  const uint32_t base = dramIndex(dst, eb, dstElemOffset, xSize, ySize, xStride, "VTAStoreBuffer2D", "dst", "writes");
  Insn& in = create(kStoreStage);
  in.opcode = Opcode::kStore;
  in.memType = srcMemoryType;
  in.sramBase = srcSramIndex;
  in.dramBase = base;
  in.ySize = ySize;
  in.xSize = xSize;
  in.xStride = xStride;
  checkInsn(isa_, in, stream_.insns().size() - 1, "VTAStoreBuffer2D");
  checkOverflow();
}

void CommandQueue::uopLoopBegin(uint32_t extent, uint32_t dstFactor, uint32_t srcFactor, uint32_t wgtFactor) {
  if (!recording_) throw Error("VTAUopLoopBegin", "called outside the finit callback of VTAPushGEMMOp/VTAPushALUOp");
  if (!recording_->uops.empty())
    throw Error("VTAUopLoopBegin", "loops must be declared before the first VTAUopPush of a kernel");
  if (recording_->loops.size() >= 2) throw Error("VTAUopLoopBegin", "a kernel has at most two loops");
  recording_->loops.push_back({extent, dstFactor, srcFactor, wgtFactor});
  ++recording_->openLoops;
}

void CommandQueue::uopLoopEnd() {
  if (!recording_) throw Error("VTAUopLoopEnd", "called outside the finit callback of VTAPushGEMMOp/VTAPushALUOp");
  if (recording_->openLoops == 0) throw Error("VTAUopLoopEnd", "no open VTAUopLoopBegin");
  --recording_->openLoops;
}

void CommandQueue::uopPush(uint32_t mode, uint32_t resetOut, uint32_t dst, uint32_t src, uint32_t wgt,
                           uint32_t opcode, uint32_t useImm, int32_t imm) {
  if (!recording_) throw Error("VTAUopPush", "called outside the finit callback of VTAPushGEMMOp/VTAPushALUOp");
  UopKernel& k = *recording_;
  const std::string where = "VTAUopPush (micro-op " + std::to_string(k.uops.size()) + ")";
  if (mode > 1) throw Error(where, "mode must be 0 (GEMM) or 1 (ALU), got " + std::to_string(mode));
  if (k.mode >= 0 && k.mode != static_cast<int>(mode)) throw Error(where, "mode differs from the kernel's earlier micro-ops");
  if (k.reset >= 0 && k.reset != static_cast<int>(resetOut != 0))
    throw Error(where, "reset_out differs from the kernel's earlier micro-ops");
  if (mode == 1) {
    if (opcode > 4) throw Error(where, "invalid ALU opcode " + std::to_string(opcode));
    if (imm < -32768 || imm > 32767) throw Error(where, "immediate " + std::to_string(imm) + " does not fit 16 bits");
    if (k.aluOp >= 0 && (k.aluOp != static_cast<int>(opcode) || k.useImm != (useImm != 0) || k.imm != imm))
      throw Error(where, "ALU opcode, use_imm and immediate must be the same for every micro-op of a kernel");
    k.aluOp = static_cast<int>(opcode);
    k.useImm = useImm != 0;
    k.imm = imm;
  }
  // The accumulator pipeline cannot write the same index in two consecutive micro-ops (VTA rule).
  for (size_t i = k.uops.size() >= 2 ? k.uops.size() - 2 : 0; i < k.uops.size(); ++i)
    if (k.uops[i].dst == dst)
      throw Error(where, "dst_index " + std::to_string(dst) + " repeats within two micro-ops (read-after-write hazard)");
  hw::Uop u{dst, src, wgt};
  isa_.encodeUop(u, where);
  k.mode = static_cast<int>(mode);
  k.reset = resetOut != 0;
  k.uops.push_back(u);
}

void CommandQueue::recordKernel(void** handle, int (*finit)(void*), void* signature, int nbytes, bool gemm) {
  const char* api = gemm ? "VTAPushGEMMOp" : "VTAPushALUOp";
  if (!finit) throw Error(api, "finit callback is NULL");
  if (nbytes < 0 || (nbytes > 0 && !signature)) throw Error(api, "bad signature");
  if (recording_) throw Error(api, "nested kernel recording (called from inside another kernel's finit)");
  std::string key(static_cast<const char*>(signature), static_cast<const char*>(signature) + nbytes);
  auto& slot = kernels_[handle][key];
  if (!slot) {
    auto k = std::make_unique<UopKernel>();
    recording_ = k.get();
    int rc;
    try {
      rc = finit(signature);
    } catch (...) {
      recording_ = nullptr;
      throw;
    }
    recording_ = nullptr;
    if (!k->error.empty()) throw Error(api, "kernel recording failed: " + k->error);
    if (rc != 0) throw Error(api, "finit returned " + std::to_string(rc));
    if (k->openLoops) throw Error(api, "kernel ends with an open VTAUopLoopBegin");
    if (k->uops.empty()) throw Error(api, "kernel has no micro-ops");
    if (k->mode != (gemm ? 0 : 1))
      throw Error(api, std::string("kernel micro-ops were pushed in ") + (k->mode == 0 ? "GEMM" : "ALU") + " mode");
    if (k->uops.size() > session_.config().uopDepth)
      throw Error(api, "kernel of " + std::to_string(k->uops.size()) + " micro-ops exceeds the micro-op buffer (" +
                           std::to_string(session_.config().uopDepth) + " entries)");
    if (debugFlags_ & VTA_DEBUG_DUMP_UOP) dumpKernel(*k);
    slot = std::move(k);
  }
  if (handle) *handle = this;  // non-null marks the call site as initialized, as in VTA
  pushKernel(*slot, gemm);
}

void CommandQueue::recordError(const std::string& what) {
  if (recording_ && recording_->error.empty()) recording_->error = what;
}

void CommandQueue::pushKernel(UopKernel& k, bool gemm) {
  const auto& cfg = session_.config();
  if (!k.cached()) {
    const uint32_t size = static_cast<uint32_t>(k.uops.size());
    if (stagedUops_.size() + size > maxUops_) synchronize(1u << 31);
    uint32_t begin = uopSramEnd_ + size <= cfg.uopDepth ? uopSramEnd_ : 0;
    uint32_t end = begin + size;
    // Evict cached kernels the new one overlaps.
    for (auto it = cachedKernels_.begin(); it != cachedKernels_.end();) {
      UopKernel* o = *it;
      if (o->sramBegin < end && begin < o->sramEnd) {
        o->sramBegin = o->sramEnd = 0;
        it = cachedKernels_.erase(it);
      } else {
        ++it;
      }
    }
    k.sramBegin = begin;
    k.sramEnd = end;
    cachedKernels_.push_back(&k);
    uopSramEnd_ = end;
    uint64_t offset = stagedUops_.size();
    for (const auto& u : k.uops) stagedUops_.push_back(isa_.encodeUop(u));
    Insn& ld = create(kComputeStage);
    ld.opcode = Opcode::kLoad;
    ld.memType = static_cast<uint32_t>(MemId::kUop);
    ld.sramBase = begin;
    ld.dramBase = static_cast<uint32_t>(uopBuffer_.phys / 4 + offset);
    ld.ySize = 1;
    ld.xSize = size;
    ld.xStride = size;
  }
  Insn& in = create(kComputeStage);
  in.opcode = gemm ? Opcode::kGemm : Opcode::kAlu;
  in.reset = k.reset == 1;
  in.uopBgn = k.sramBegin;
  in.uopEnd = k.sramEnd;
  in.iterOut = in.iterIn = 1;
  const auto& L = k.loops;
  if (gemm) {
    if (L.size() > 0) {
      in.iterOut = L[0].extent; in.dstFactorOut = L[0].dstFactor; in.srcFactorOut = L[0].srcFactor; in.wgtFactorOut = L[0].wgtFactor;
    }
    if (L.size() > 1) {
      in.iterIn = L[1].extent; in.dstFactorIn = L[1].dstFactor; in.srcFactorIn = L[1].srcFactor; in.wgtFactorIn = L[1].wgtFactor;
    }
  } else {
    in.aluOp = static_cast<uint32_t>(k.aluOp);
    in.useImm = k.useImm;
    in.imm = k.imm;
    // One loop is the inner loop; two are outer then inner (VTA's ALU convention).
    if (L.size() == 1) {
      in.iterIn = L[0].extent; in.dstFactorIn = L[0].dstFactor; in.srcFactorIn = L[0].srcFactor;
    } else if (L.size() == 2) {
      in.iterOut = L[0].extent; in.dstFactorOut = L[0].dstFactor; in.srcFactorOut = L[0].srcFactor;
      in.iterIn = L[1].extent; in.dstFactorIn = L[1].dstFactor; in.srcFactorIn = L[1].srcFactor;
    }
  }
  checkInsn(isa_, in, stream_.insns().size() - 1, gemm ? "VTAPushGEMMOp" : "VTAPushALUOp");
  checkOverflow();
}

void CommandQueue::pushGemmOp(void** handle, int (*finit)(void*), void* signature, int nbytes) {
  recordKernel(handle, finit, signature, nbytes, true);
}

void CommandQueue::pushAluOp(void** handle, int (*finit)(void*), void* signature, int nbytes) {
  recordKernel(handle, finit, signature, nbytes, false);
}

void CommandQueue::rewriteForceSerial() {
  // Every stage change gets a token in each direction it needs, so nothing overlaps.
  std::vector<Insn>& insns = stream_.insns();
  int lastStore = -1;
  for (size_t i = 1; i < insns.size(); ++i) {
    Insn& prev = insns[i - 1];
    Insn& now = insns[i];
    const int ps = static_cast<int>(prev.stage()), ns = static_cast<int>(now.stage());
    prev.pushPrev = prev.pushNext = false;
    now.popPrev = now.popNext = false;
    if (ns - ps == 1) { prev.pushNext = true; now.popPrev = true; }
    else if (ps - ns == 1) { prev.pushPrev = true; now.popNext = true; }
    if (now.stage() == hw::Stage::kStore) lastStore = static_cast<int>(i);
  }
  stream_.dropPendingPops();
  // Before FINISH, compute must see the last store and the load stage must drain.
  if (!insns.empty() && lastStore == static_cast<int>(insns.size()) - 1) {
    insns.back().pushPrev = true;
    depPop(kStoreStage, kComputeStage);
    commitPendingPop(kComputeStage);
  }
  depPush(kComputeStage, kLoadStage);
  depPop(kComputeStage, kLoadStage);
  commitPendingPop(kLoadStage);
  depPush(kLoadStage, kComputeStage);
  depPop(kLoadStage, kComputeStage);
  commitPendingPop(kComputeStage);
}

void CommandQueue::dumpKernel(const UopKernel& k) const {
  *debug_ << "micro-op kernel: " << k.uops.size() << " micro-ops, " << k.loops.size() << " loop(s)\n";
  for (size_t i = 0; i < k.loops.size(); ++i)
    *debug_ << "  loop " << i << ": extent=" << k.loops[i].extent << " dst_factor=" << k.loops[i].dstFactor
            << " src_factor=" << k.loops[i].srcFactor << " wgt_factor=" << k.loops[i].wgtFactor << "\n";
  for (size_t i = 0; i < k.uops.size(); ++i) *debug_ << "  [" << i << "] " << hw::disassembleUop(k.uops[i]) << "\n";
}

void CommandQueue::discard() {
  stream_.clear();
  stagedUops_.clear();
  for (UopKernel* k : cachedKernels_) k->sramBegin = k->sramEnd = 0;
  cachedKernels_.clear();
  uopSramEnd_ = 0;
  recording_ = nullptr;
}

void CommandQueue::synchronize(uint32_t waitCycles) {
  if (recording_) throw Error("VTASynchronize", "called from inside a micro-op kernel's finit");
  if (debugFlags_ & VTA_DEBUG_FORCE_SERIAL) {
    rewriteForceSerial();
  } else {
    // FINISH must come after the last store and the last load.
    depPush(kStoreStage, kComputeStage);
    depPush(kLoadStage, kComputeStage);
    depPop(kStoreStage, kComputeStage);
    depPop(kLoadStage, kComputeStage);
    commitPendingPop(kComputeStage);
  }
  Insn& fin = create(kComputeStage);
  fin.opcode = Opcode::kFinish;
  if (stream_.popsPending()) throw Error("VTASynchronize", "internal error: pops pending after FINISH");

  std::vector<Insn> program;
  program.swap(stream_.insns());
  std::vector<uint32_t> uops;
  uops.swap(stagedUops_);
  for (UopKernel* k : cachedKernels_) k->sramBegin = k->sramEnd = 0;  // SRAM is not trusted across runs
  cachedKernels_.clear();
  uopSramEnd_ = 0;

  if (program.size() > maxInsns_) throw Error("VTASynchronize", "instruction stream exceeds the staging buffer");
  for (size_t i = 0; i < program.size(); ++i)
    hw::Isa::rawToBytes(isa_.encode(program[i], "instruction " + std::to_string(i)), insnBuffer_.host + 16 * i);
  for (size_t i = 0; i < uops.size(); ++i) std::memcpy(uopBuffer_.host + 4 * i, &uops[i], 4);
  if (debugFlags_ & VTA_DEBUG_DUMP_INSN) {
    *debug_ << "instruction stream: " << program.size() << " instructions\n";
    std::vector<hw::RawInsn> raws;
    for (const auto& in : program) raws.push_back(isa_.encode(in));
    *debug_ << hw::disassembleProgram(isa_, raws);
  }
  lastProgram_ = program;
  auto t0 = std::chrono::steady_clock::now();
  device_->run(insnBuffer_.phys, static_cast<uint32_t>(program.size()), waitCycles);
  lastRunSeconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  totalRunSeconds_ += lastRunSeconds_;
}

}  // namespace tessera::runtime
