// Behavioral simulator: decode once, schedule the three stages by tokens, run tight SRAM loops.
#include "tessera/hw/fsim.h"

#include <algorithm>
#include <cstring>
#include <deque>

#include "tessera/hw/asm.h"
#include "tessera/hw/error.h"
#include "tessera/hw/program.h"
#include "tessera/hw/run_error.h"
#include "fsim_kernels.h"


static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "DRAM layouts assume a little-endian host");

namespace tessera::hw {

std::string Fsim::kernelSetProblem(const Config& cfg, const std::string& kernelSet) {
  return kernels::unavailableReason(cfg.batch, cfg.blockIn, cfg.blockOut, kernelSet);
}

std::string Fsim::kernelSetCpuProblem(const std::string& kernelSet) { return kernels::cpuProblem(kernelSet); }

Fsim::Fsim(const Config& cfg, Dram& dram, const std::string& kernelSet)
    : cfg_(cfg), isa_(cfg), dram_(dram), batch_(cfg.batch), blockIn_(cfg.blockIn), blockOut_(cfg.blockOut) {
  accLanes_ = batch_ * blockOut_;
  backend_ = kernels::selectBackend(batch_, blockIn_, blockOut_, kernelSet);
  const auto& sh = backend_.shape;
  inpRaw_.assign(size_t(cfg.inpDepth) * cfg.inpElemBytes, 0);
  wgtRaw_.assign(size_t(cfg.wgtDepth) * cfg.wgtElemBytes, 0);
  inpPacked_.resize(size_t(cfg.inpDepth) * sh.inpEntryBytes);
  wgtPacked_.resize(size_t(cfg.wgtDepth) * sh.wgtEntryBytes);
  // Packed zeros are not necessarily zero bytes (the VNNI layout biases inputs).
  std::vector<int8_t> zeros(std::max(cfg.inpElemBytes, cfg.wgtElemBytes), 0);
  for (uint32_t i = 0; i < cfg.inpDepth; ++i) backend_.packInp(sh, &inpPacked_[size_t(i) * sh.inpEntryBytes], zeros.data(), 1);
  for (uint32_t i = 0; i < cfg.wgtDepth; ++i) backend_.packWgt(sh, &wgtPacked_[size_t(i) * sh.wgtEntryBytes], zeros.data(), 1);
  acc_.assign(size_t(cfg.accDepth) * accLanes_, 0);
  uops_.assign(cfg.uopDepth, Uop());
  for (uint32_t op = 0; op < 5; ++op) aluKernels_[op] = kernels::selectAlu(op, accLanes_, kernelSet);
}

int8_t Fsim::inp(uint32_t index, int b, int k) const {
  return static_cast<int8_t>(inpRaw_[size_t(index) * cfg_.inpElemBytes + b * blockIn_ + k]);
}

int8_t Fsim::wgt(uint32_t index, int o, int k) const {
  return static_cast<int8_t>(wgtRaw_[size_t(index) * cfg_.wgtElemBytes + o * blockIn_ + k]);
}

void Fsim::run(uint64_t insnPhys, uint32_t count, uint64_t waitCycles) {
  // Decode and validate the whole stream once; the scheduler then works on decoded values.
  const std::vector<Insn> prog = decodeProgram(isa_, dram_, insnPhys, count);

  std::deque<uint32_t> queues[3];
  int tokens[4] = {0, 0, 0, 0};
  const size_t insnCap = static_cast<size_t>(cfg_.insnQueueDepth);
  const int tokenCap = cfg_.depQueueDepth;
  uint32_t fetchPc = 0;

  // Token queues each instruction pops from and pushes to, by stage.
  auto pops = [](const Insn& in, int* q) {
    int n = 0;
    switch (in.stage()) {
      case Stage::kLoad: if (in.popNext) q[n++] = int(TokenQueue::kComputeToLoad); break;
      case Stage::kCompute:
        if (in.popPrev) q[n++] = int(TokenQueue::kLoadToCompute);
        if (in.popNext) q[n++] = int(TokenQueue::kStoreToCompute);
        break;
      case Stage::kStore: if (in.popPrev) q[n++] = int(TokenQueue::kComputeToStore); break;
    }
    return n;
  };
  auto pushes = [](const Insn& in, int* q) {
    int n = 0;
    switch (in.stage()) {
      case Stage::kLoad: if (in.pushNext) q[n++] = int(TokenQueue::kLoadToCompute); break;
      case Stage::kCompute:
        if (in.pushPrev) q[n++] = int(TokenQueue::kComputeToLoad);
        if (in.pushNext) q[n++] = int(TokenQueue::kComputeToStore);
        break;
      case Stage::kStore: if (in.pushPrev) q[n++] = int(TokenQueue::kStoreToCompute); break;
    }
    return n;
  };
  // Why the head of a stage cannot issue, or empty if it can.
  auto blockedBy = [&](const Insn& in) -> std::string {
    int q[2];
    int n = pops(in, q);
    for (int i = 0; i < n; ++i)
      if (tokens[q[i]] == 0) return run_error::waitsForToken(static_cast<TokenQueue>(q[i]));
    n = pushes(in, q);
    for (int i = 0; i < n; ++i)
      if (tokens[q[i]] >= tokenCap) return run_error::waitsForSpace(static_cast<TokenQueue>(q[i]), tokenCap);
    return "";
  };
  auto issue = [&](uint32_t idx) {
    const Insn& in = prog[idx];
    int q[2];
    int n = pops(in, q);
    for (int i = 0; i < n; ++i) --tokens[q[i]];
    execute(in, idx);
    n = pushes(in, q);
    for (int i = 0; i < n; ++i) ++tokens[q[i]];
  };
  auto fetch = [&]() {
    bool moved = false;
    while (fetchPc < count) {
      auto& q = queues[int(prog[fetchPc].stage())];
      if (q.size() >= insnCap) break;
      q.push_back(fetchPc++);
      moved = true;
    }
    return moved;
  };
  auto drain = [&](Stage s) {
    bool moved = false;
    auto& q = queues[int(s)];
    while (!q.empty()) {
      const Insn& in = prog[q.front()];
      if (in.opcode == Opcode::kFinish) break;
      if (!blockedBy(in).empty()) break;
      uint32_t idx = q.front();
      q.pop_front();
      issue(idx);
      moved = true;
    }
    return moved;
  };

  counters_.runs += 1;
  workBudget_ = waitCycles;
  workDone_ = 0;
  for (;;) {
    bool moved = fetch();
    moved |= drain(Stage::kLoad);
    moved |= drain(Stage::kStore);
    moved |= drain(Stage::kCompute);
    if (moved) continue;

    auto& cq = queues[int(Stage::kCompute)];
    if (!cq.empty() && prog[cq.front()].opcode == Opcode::kFinish && blockedBy(prog[cq.front()]).empty()) {
      // Everything that could run has run; FINISH raises done.
      uint32_t finishIdx = cq.front();
      cq.pop_front();
      issue(finishIdx);
      run_error::UnbalancedFinish left;
      for (int s = 0; s < 3; ++s)
        if (!queues[s].empty())
          left.neverExecuted(static_cast<Stage>(s), queues[s].front(), prog[queues[s].front()],
                             blockedBy(prog[queues[s].front()]));
      if (fetchPc < count) left.neverFetched(fetchPc, prog[fetchPc], count);
      for (int t = 0; t < 4; ++t)
        if (tokens[t]) left.tokensLeft(static_cast<TokenQueue>(t), tokens[t]);
      if (!left.empty()) throw left.error(finishIdx);
      return;
    }
    bool idle = fetchPc >= count && queues[0].empty() && queues[1].empty() && queues[2].empty();
    if (idle) throw run_error::missingFinish(count);
    run_error::Deadlock deadlock;
    for (int s = 0; s < 3; ++s) {
      if (queues[s].empty()) continue;
      const uint32_t idx = queues[s].front();
      deadlock.stageBlocked(static_cast<Stage>(s), idx, prog[idx], blockedBy(prog[idx]));
    }
    if (fetchPc < count) deadlock.fetchStalled(fetchPc, prog[fetchPc], insnCap);
    uint32_t first = count;
    for (int s = 0; s < 3; ++s)
      if (!queues[s].empty()) first = std::min(first, queues[s].front());
    throw deadlock.error(first == count ? fetchPc : first);
  }
}

kernels::Loops Fsim::loopsOf(const Insn& in) {
  return kernels::Loops{in.iterOut,     in.iterIn,      in.uopBgn,       in.uopEnd,      in.dstFactorOut,
                        in.dstFactorIn, in.srcFactorOut, in.srcFactorIn, in.wgtFactorOut, in.wgtFactorIn};
}

void Fsim::execute(const Insn& in, size_t index) {
  switch (in.opcode) {
    case Opcode::kLoad:
      if (in.isNop()) { ++counters_.nops; return; }
      ++counters_.insns[0];
      execLoad(in, index);
      return;
    case Opcode::kStore:
      if (in.isNop()) { ++counters_.nops; return; }
      ++counters_.insns[1];
      execStore(in, index);
      return;
    case Opcode::kGemm: ++counters_.insns[2]; execGemm(in, index); return;
    case Opcode::kAlu: ++counters_.insns[4]; execAlu(in, index); return;
    case Opcode::kFinish: ++counters_.insns[3]; return;
  }
}

void Fsim::execLoad(const Insn& in, size_t) {
  const MemId id = static_cast<MemId>(in.memType);
  const uint64_t eb = cfg_.dramElemBytes(id);
  const uint64_t width = uint64_t(in.xPad0) + in.xSize + in.xPad1;
  counters_.loadBytes[in.memType] += uint64_t(in.xSize) * in.ySize * eb;

  if (id == MemId::kUop) {
    const uint8_t* src = dram_.raw(uint64_t(in.dramBase) * eb);
    for (uint32_t x = 0; x < in.xSize; ++x) {
      uint32_t w;
      std::memcpy(&w, src + 4 * x, 4);
      uops_[in.sramBase + x] = isa_.decodeUop(w);
    }
    return;
  }
  // Inputs and weights: compare with the bytes already there and repack only what changed.
  const kernels::Shape& sh = backend_.shape;
  const bool isInp = id == MemId::kInp;
  uint8_t* raw = isInp ? inpRaw_.data() : wgtRaw_.data();
  uint8_t* packed = isInp ? inpPacked_.data() : wgtPacked_.data();
  const size_t packedBytes = isInp ? sh.inpEntryBytes : sh.wgtEntryBytes;
  const kernels::PackFn pack = isInp ? backend_.packInp : backend_.packWgt;
  static const uint8_t kZeros[4096] = {};  // the largest element: 64x64 int8 weights
  auto putElems = [&](uint64_t sramIdx, const uint8_t* src, uint64_t n, bool padding) {
    if (id == MemId::kAcc || id == MemId::kAcc8) {
      int32_t* d = &acc_[sramIdx * accLanes_];
      if (padding) std::fill_n(d, n * accLanes_, 0);
      else if (id == MemId::kAcc) std::memcpy(d, src, n * eb);
      else for (uint64_t i = 0; i < n * accLanes_; ++i) d[i] = static_cast<int8_t>(src[i]);  // ACC8 sign-extends
      return;
    }
    if (isInp && !padding) {  // input tiles rarely repeat: copy and pack the row in one go
      std::memcpy(raw + sramIdx * eb, src, n * eb);
      pack(sh, packed + sramIdx * packedBytes, reinterpret_cast<const int8_t*>(src), n);
      return;
    }
    for (uint64_t e = 0; e < n; ++e) {
      const uint8_t* s = padding ? kZeros : src + e * eb;
      uint8_t* cached = raw + (sramIdx + e) * eb;
      if (std::memcmp(cached, s, eb) == 0) continue;
      std::memcpy(cached, s, eb);
      pack(sh, packed + (sramIdx + e) * packedBytes, reinterpret_cast<const int8_t*>(s), 1);
    }
  };
  auto zeroElems = [&](uint64_t sramIdx, uint64_t n) { putElems(sramIdx, nullptr, n, true); };
  auto copyElems = [&](uint64_t sramIdx, const uint8_t* src, uint64_t n) { putElems(sramIdx, src, n, false); };

  uint64_t sram = in.sramBase;
  zeroElems(sram, width * in.yPad0);
  sram += width * in.yPad0;
  for (uint32_t y = 0; y < in.ySize; ++y) {
    zeroElems(sram, in.xPad0);
    sram += in.xPad0;
    copyElems(sram, dram_.raw((uint64_t(in.dramBase) + uint64_t(y) * in.xStride) * eb), in.xSize);
    sram += in.xSize;
    zeroElems(sram, in.xPad1);
    sram += in.xPad1;
  }
  zeroElems(sram, width * in.yPad1);
}

void Fsim::execStore(const Insn& in, size_t) {
  const uint64_t eb = cfg_.outElemBytes;
  counters_.storeBytes += uint64_t(in.xSize) * in.ySize * eb;
  for (uint32_t y = 0; y < in.ySize; ++y) {
    int8_t* dst = reinterpret_cast<int8_t*>(dram_.raw((uint64_t(in.dramBase) + uint64_t(y) * in.xStride) * eb));
    const int32_t* src = &acc_[(uint64_t(in.sramBase) + uint64_t(y) * in.xSize) * accLanes_];
    // Narrowing keeps the low bits, as VTA's store does.
    for (uint64_t i = 0; i < uint64_t(in.xSize) * accLanes_; ++i) dst[i] = static_cast<int8_t>(src[i]);
  }
}

void Fsim::checkLoopIndices(const Insn& in, size_t index) const {
  if (in.iterOut == 0 || in.iterIn == 0 || in.uopBgn >= in.uopEnd) return;
  const bool gemm = in.opcode == Opcode::kGemm;
  struct Check {
    uint32_t Uop::*field;
    uint64_t factorOut, factorIn, depth;
    run_error::Operand operand;
  } checks[3] = {
      {&Uop::dst, in.dstFactorOut, in.dstFactorIn, cfg_.accDepth, run_error::Operand::kDst},
      {&Uop::src, in.srcFactorOut, in.srcFactorIn, gemm ? cfg_.inpDepth : cfg_.accDepth, run_error::Operand::kSrc},
      {&Uop::wgt, in.wgtFactorOut, in.wgtFactorIn, cfg_.wgtDepth, run_error::Operand::kWgt}};
  const int nChecks = gemm ? 3 : 2;
  for (int c = 0; c < nChecks; ++c) {
    const auto& ck = checks[c];
    if (gemm && in.reset && c != 0) continue;   // a reset GEMM only writes the accumulator
    uint64_t loopMax = uint64_t(in.iterOut - 1) * ck.factorOut + uint64_t(in.iterIn - 1) * ck.factorIn;
    for (uint32_t u = in.uopBgn; u < in.uopEnd; ++u) {
      uint64_t idx = uint64_t(uops_[u].*ck.field) + loopMax;
      if (idx >= ck.depth)
        throw run_error::sramIndexPastDepth(cfg_, index, in, u, ck.operand, idx);
    }
  }
}

void Fsim::chargeWork(const Insn& in, size_t index, uint64_t uops) {
  workDone_ += uops;
  if (workBudget_ && workDone_ > workBudget_)
    throw run_error::budgetExceeded(index, in, workBudget_, workDone_);
}

void Fsim::execGemm(const Insn& in, size_t index) {
  checkLoopIndices(in, index);
  const uint64_t nUops = uint64_t(in.iterOut) * in.iterIn * (in.uopEnd > in.uopBgn ? in.uopEnd - in.uopBgn : 0);
  chargeWork(in, index, nUops);
  if (in.reset) {
    counters_.gemmResetUops += nUops;
    for (uint32_t i = 0; i < in.iterOut; ++i)
      for (uint32_t j = 0; j < in.iterIn; ++j)
        for (uint32_t u = in.uopBgn; u < in.uopEnd; ++u) {
          uint64_t dst = uops_[u].dst + uint64_t(i) * in.dstFactorOut + uint64_t(j) * in.dstFactorIn;
          std::fill_n(&acc_[dst * accLanes_], accLanes_, 0);
        }
    return;
  }
  counters_.gemmUops += nUops;
  counters_.macs += nUops * uint64_t(batch_) * blockIn_ * blockOut_;
  backend_.gemm(backend_.shape, loopsOf(in), uops_.data(), acc_.data(), inpPacked_.data(), wgtPacked_.data());
}

void Fsim::execAlu(const Insn& in, size_t index) {
  checkLoopIndices(in, index);
  const uint64_t nUops = uint64_t(in.iterOut) * in.iterIn * (in.uopEnd > in.uopBgn ? in.uopEnd - in.uopBgn : 0);
  chargeWork(in, index, nUops);
  counters_.aluUops += nUops;
  counters_.aluElemOps += nUops * accLanes_;
  aluKernels_[in.aluOp](loopsOf(in), uops_.data(), acc_.data(), accLanes_, in.useImm, in.imm);
}

}  // namespace tessera::hw
