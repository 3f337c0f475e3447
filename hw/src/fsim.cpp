// Behavioral simulator: decode once, schedule the three stages by tokens, run tight SRAM loops.
#include "tessera/hw/fsim.h"

#include <algorithm>
#include <cstring>
#include <sys/mman.h>
#include <deque>

#include "tessera/hw/asm.h"
#include "tessera/support/error.h"
#include "tessera/hw/program.h"
#include "tessera/hw/run_error.h"
#include "fast_decode.h"
#include "fsim_kernels.h"


static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "DRAM layouts assume a little-endian host");

namespace tessera::hw {

namespace detail {

constexpr size_t kMapAtLeast = 16 * 1024;

void* allocateZeroed(size_t bytes) {
  if (bytes >= kMapAtLeast) {
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    return p;
  }
  void* p = std::calloc(bytes ? bytes : 1, 1);
  if (!p) throw std::bad_alloc();
  return p;
}

void freeZeroed(void* p, size_t bytes) {
  if (!p) return;
  if (bytes >= kMapAtLeast) ::munmap(p, bytes);
  else std::free(p);
}

}  // namespace detail

std::string Fsim::kernelSetProblem(const Config& cfg, const std::string& kernelSet) {
  return kernels::unavailableReason(cfg.batch, cfg.blockIn, cfg.blockOut, kernelSet);
}

std::string Fsim::kernelSetCpuProblem(const std::string& kernelSet) { return kernels::cpuProblem(kernelSet); }

Fsim::~Fsim() = default;

Fsim::Fsim(const Config& cfg, Dram& dram, const std::string& kernelSet)
    : cfg_(cfg), isa_(cfg), dram_(dram), batch_(cfg.batch), blockIn_(cfg.blockIn), blockOut_(cfg.blockOut) {
  decoder_ = std::make_unique<detail::FastDecoder>(isa_, dram_);
  for (uint32_t id = 0; id < 6; ++id) elemBytes_[id] = static_cast<uint64_t>(cfg.dramElemBytes(static_cast<MemId>(id)));
  const auto& uf = isa_.layout().uopFormat();
  auto maskOf = [](int width) { return width >= 32 ? ~0u : (1u << width) - 1; };
  uopFields_ = {static_cast<uint32_t>(uf[0].lo), maskOf(uf[0].width), static_cast<uint32_t>(uf[1].lo),
                maskOf(uf[1].width), static_cast<uint32_t>(uf[2].lo), maskOf(uf[2].width)};
  accLanes_ = batch_ * blockOut_;
  backend_ = kernels::selectBackend(batch_, blockIn_, blockOut_, kernelSet);
  const auto& sh = backend_.shape;
  // Every SRAM starts as zeros. Zero-filled arrays come as untouched zero pages; a packed layout
  // whose zero is not zero bytes (the VNNI layout biases inputs) is filled with its zero entry.
  inpRaw_ = detail::ZeroedArray<uint8_t>(size_t(cfg.inpDepth) * cfg.inpElemBytes);
  wgtRaw_ = detail::ZeroedArray<uint8_t>(size_t(cfg.wgtDepth) * cfg.wgtElemBytes);
  inpPacked_ = detail::ZeroedArray<uint8_t>(size_t(cfg.inpDepth) * sh.inpEntryBytes);
  wgtPacked_ = detail::ZeroedArray<uint8_t>(size_t(cfg.wgtDepth) * sh.wgtEntryBytes);
  const std::vector<int8_t> zeros(std::max(cfg.inpElemBytes, cfg.wgtElemBytes), 0);
  auto fillWithZeroEntry = [&](uint8_t* buf, uint32_t depth, size_t entryBytes, kernels::PackFn pack) {
    std::vector<uint8_t> zero(entryBytes);
    pack(sh, zero.data(), zeros.data(), 1);
    if (std::all_of(zero.begin(), zero.end(), [](uint8_t b) { return b == 0; })) return;
    if (std::all_of(zero.begin(), zero.end(), [&](uint8_t b) { return b == zero[0]; })) {
      std::memset(buf, zero[0], size_t(depth) * entryBytes);
      return;
    }
    for (uint32_t i = 0; i < depth; ++i) std::memcpy(buf + size_t(i) * entryBytes, zero.data(), entryBytes);
  };
  fillWithZeroEntry(inpPacked_.data(), cfg.inpDepth, sh.inpEntryBytes, backend_.packInp);
  fillWithZeroEntry(wgtPacked_.data(), cfg.wgtDepth, sh.wgtEntryBytes, backend_.packWgt);
  acc_ = detail::ZeroedArray<int32_t>(size_t(cfg.accDepth) * accLanes_);
  uops_ = detail::ZeroedArray<Uop>(cfg.uopDepth);
  for (uint32_t op = 0; op < 5; ++op) aluKernels_[op] = kernels::selectAlu(op, accLanes_, kernelSet);
  aluChain_ = kernels::selectAluChain(accLanes_, kernelSet);
  widen_ = kernels::selectWiden(kernelSet);
  narrow_ = kernels::selectNarrow(kernelSet);
}

int8_t Fsim::inp(uint32_t index, int b, int k) const {
  return static_cast<int8_t>(inpRaw_[size_t(index) * cfg_.inpElemBytes + b * blockIn_ + k]);
}

int8_t Fsim::wgt(uint32_t index, int o, int k) const {
  return static_cast<int8_t>(wgtRaw_[size_t(index) * cfg_.wgtElemBytes + o * blockIn_ + k]);
}

namespace {

// The token queues an instruction pops and pushes, as bit masks over TokenQueue (l2g 1, g2l 2,
// g2s 4, s2g 8), by its stage and dependency flags (pop_prev 1, pop_next 2, push_prev 4,
// push_next 8). Flags a stage does not have are refused by validation before anything runs.
constexpr uint8_t kL2g = 1, kG2l = 2, kG2s = 4, kS2g = 8;

struct Sched {
  uint8_t stage, pops, pushes;
  bool finish;
  bool immAlu;  // an ALU instruction with an immediate (compute)
};

}  // namespace

void Fsim::run(uint64_t insnPhys, uint32_t count, uint64_t waitCycles) {
  // Validate the whole stream first, so a malformed program fails before anything executes. The
  // scheduler then reads the instruction words in place and decodes each one as it issues: a
  // stream of any length costs no memory of its own.
  if (count == 0) throw Error("run", "instruction count is 0: a program needs at least a FINISH");
  const uint8_t* bytes = dram_.at(insnPhys, uint64_t(count) * 16,
                                  "instruction fetch of " + std::to_string(count) + " instructions at 0x" +
                                      [&] {
                                        char b[24];
                                        std::snprintf(b, sizeof b, "%llx", static_cast<unsigned long long>(insnPhys));
                                        return std::string(b);
                                      }());
  const detail::FastDecoder& dec = *decoder_;
  const uint64_t insnEnd = insnPhys + uint64_t(count) * 16;
  bool storesIntoStream = false;
  for (uint32_t i = 0; i < count; ++i) {
    uint64_t w[2];
    detail::loadWords(bytes + 16 * size_t(i), w);
    if (!dec.validWords(w)) validateOrThrow(isa_, dram_, isa_.decode(Isa::rawFromBytes(bytes + 16 * size_t(i))), i);
    if (detail::FastDecoder::opcode(w) == uint32_t(Opcode::kStore)) {
      Insn in;
      dec.decode(w, &in);
      const DramRange r = dramRange(in, cfg_);
      storesIntoStream |= r.end > r.first && r.first < insnEnd && insnPhys < r.end;
    }
  }
  // A STORE may overwrite the stream itself; the program is what it was when the run started.
  std::vector<uint8_t> snapshot;
  if (storesIntoStream) {
    snapshot.assign(bytes, bytes + uint64_t(count) * 16);
    bytes = snapshot.data();
  }
  auto words = [&](uint32_t idx, uint64_t* w) { detail::loadWords(bytes + 16 * size_t(idx), w); };
  auto decodeAt = [&](uint32_t idx) {
    uint64_t w[2];
    words(idx, w);
    Insn in;
    dec.decode(w, &in);
    return in;
  };
  Insn current;  // the issuing instruction, decoded into in place (no zeroing per instruction)
  auto schedOf = [&](uint32_t idx) {
    uint64_t w[2];
    words(idx, w);
    const uint32_t op = detail::FastDecoder::opcode(w), f = detail::FastDecoder::flags(w);
    Sched s{uint8_t(Stage::kCompute), 0, 0, op == uint32_t(Opcode::kFinish), false};
    if (op == uint32_t(Opcode::kStore)) {
      s.stage = uint8_t(Stage::kStore);
      s.pops = (f & 1) ? kG2s : 0;
      s.pushes = (f & 4) ? kS2g : 0;
    } else if (op == uint32_t(Opcode::kLoad) &&
               (dec.memType(w) == uint32_t(MemId::kInp) || dec.memType(w) == uint32_t(MemId::kWgt))) {
      s.stage = uint8_t(Stage::kLoad);
      s.pops = (f & 2) ? kG2l : 0;
      s.pushes = (f & 8) ? kL2g : 0;
    } else {
      s.pops = uint8_t(((f & 1) ? kL2g : 0) | ((f & 2) ? kS2g : 0));
      s.pushes = uint8_t(((f & 4) ? kG2l : 0) | ((f & 8) ? kG2s : 0));
      s.immAlu = op == uint32_t(Opcode::kAlu) && dec.aluUsesImm(w);
    }
    return s;
  };

  // Fetch: in order into three bounded instruction queues (rings of instruction indices).
  const uint32_t insnCap = static_cast<uint32_t>(cfg_.insnQueueDepth);
  const int tokenCap = cfg_.depQueueDepth;
  if (rings_.size() != size_t(3) * insnCap) {
    rings_.assign(size_t(3) * insnCap, 0);
    ringSched_.assign(size_t(3) * insnCap, 0);
    ringImmAlu_.assign(insnCap, 0);
  }
  uint32_t* ring[3] = {&rings_[0], &rings_[insnCap], &rings_[2 * size_t(insnCap)]};
  // Beside each queued index, its pops and pushes (low and high nibble) and whether it is FINISH.
  uint8_t* ringSched[3] = {&ringSched_[0], &ringSched_[insnCap], &ringSched_[2 * size_t(insnCap)]};
  uint8_t* const immAlu = ringImmAlu_.data();  // compute's entries that may start or join a chain
  uint32_t head[3] = {0, 0, 0}, size[3] = {0, 0, 0};
  uint8_t fetchStage = 0;  // stage of instruction fetchPc, once known
  bool fetchStageKnown = false;
  uint32_t fetchPc = 0;
  int tokens[4] = {0, 0, 0, 0};
  // Bit q set: queue q is empty (a pop of it blocks) / full (a push to it blocks).
  uint8_t emptyMask = 15, fullMask = tokenCap <= 0 ? 15 : 0;
  auto front = [&](int s) { return ring[s][head[s]]; };
  auto popFront = [&](int s) {
    head[s] = head[s] + 1 == insnCap ? 0 : head[s] + 1;
    --size[s];
  };
  Sched fetchSched{};
  auto fetch = [&]() {
    bool moved = false;
    while (fetchPc < count) {
      if (!fetchStageKnown) {
        fetchSched = schedOf(fetchPc);
        fetchStage = fetchSched.stage;
        fetchStageKnown = true;
      }
      const int s = fetchStage;
      if (size[s] >= insnCap) break;
      uint32_t tail = head[s] + size[s];
      if (tail >= insnCap) tail -= insnCap;
      ring[s][tail] = fetchPc++;
      ringSched[s][tail] = uint8_t(fetchSched.pops | fetchSched.pushes << 4);
      if (s == int(Stage::kCompute)) immAlu[tail] = fetchSched.immAlu;
      if (fetchSched.finish) ringSched[s][tail] = 0xff;  // FINISH pops and pushes nothing
      ++size[s];
      fetchStageKnown = false;
      moved = true;
    }
    return moved;
  };
  auto blocked = [&](const Sched& s) { return (s.pops & emptyMask) || (s.pushes & fullMask); };
  // Why an instruction cannot issue, in the words of run_error (pops first, then pushes, each in
  // queue order), or empty if it can.
  auto blockedBy = [&](const Sched& s) -> std::string {
    for (int q = 0; q < 4; ++q)
      if ((s.pops >> q & 1) && tokens[q] == 0) return run_error::waitsForToken(static_cast<TokenQueue>(q));
    for (int q = 0; q < 4; ++q)
      if ((s.pushes >> q & 1) && tokens[q] >= tokenCap)
        return run_error::waitsForSpace(static_cast<TokenQueue>(q), tokenCap);
    return "";
  };
  auto takeTokens = [&](uint8_t pops) {
    for (int q = 0; q < 4; ++q)
      if (pops >> q & 1) {
        if (--tokens[q] == 0) emptyMask |= uint8_t(1 << q);
        fullMask &= uint8_t(~(1 << q));
      }
  };
  auto giveTokens = [&](uint8_t pushes) {
    for (int q = 0; q < 4; ++q)
      if (pushes >> q & 1) {
        if (++tokens[q] >= tokenCap) fullMask |= uint8_t(1 << q);
        emptyMask &= uint8_t(~(1 << q));
      }
  };
  auto issue = [&](uint32_t idx, const Sched& s) {
    takeTokens(s.pops);
    uint64_t w[2];
    words(idx, w);
    if ((w[0] & 0x3ff) >> 7 == uint64_t(MemId::kUop) && (w[0] & 7) == uint64_t(Opcode::kLoad) &&
        detail::FastDecoder::xSize(w)) {
      // LOAD.UOP straight from the words (toolchains load a kernel before most GEMM/ALU
      // instructions): what execute() does for it, without decoding every field. Validation
      // made it one row (y_size 1) without padding.
      const uint32_t n = detail::FastDecoder::xSize(w);
      ++counters_.insns[0];
      counters_.loadBytes[uint32_t(MemId::kUop)] += uint64_t(n) * elemBytes_[uint32_t(MemId::kUop)];
      loadUops(static_cast<uint32_t>((w[0] >> detail::mem::kSramBase) & 0xffff),
               static_cast<uint32_t>((w[0] >> detail::mem::kDramBase) & 0xffffffffu), n);
    } else {
      dec.decode(w, &current);
      execute(current, idx);
    }
    giveTokens(s.pushes);
  };
  // Immediate ALU instructions over the same loops, queued back to back in compute (a
  // requantization's MUL, SHR, MAX, MIN), run as one pass over their entries when they are what
  // drain would issue in a row anyway: only the first may pop, only the last may push, none is
  // blocked. Returns how many of the instructions queued after `idx` join it (0: none).
  kernels::AluStep chain[kMaxAluChain];
  auto aluChainAfter = [&](uint32_t idx, uint8_t code) -> uint32_t {
    const int c = int(Stage::kCompute);
    if (code >> 4 || !size[c] || !immAlu[head[c]]) return 0;
    uint64_t w[2];
    words(idx, w);
    uint32_t joined = 0, pos = head[c];
    while (joined + 1 < kMaxAluChain && joined < size[c] && immAlu[pos]) {
      const uint8_t next = ringSched[c][pos];
      if (next == 0xff || (next & 15) || ((next >> 4) & fullMask)) break;
      uint64_t v[2];
      words(ring[c][pos], v);
      if (!dec.sameAluLoops(w, v)) break;
      ++joined;
      if (next >> 4) break;  // it pushes: the chain ends with it
      pos = pos + 1 == insnCap ? 0 : pos + 1;
    }
    if (!joined) return 0;
    dec.decode(w, &current);
    if (!aluChainRunsAsOne(current, joined + 1)) return 0;
    chain[0] = {current.aluOp, current.imm};
    pos = head[c];
    for (uint32_t k = 1; k <= joined; ++k) {
      words(ring[c][pos], w);
      chain[k] = {dec.aluOp(w), dec.aluImm(w)};
      pos = pos + 1 == insnCap ? 0 : pos + 1;
    }
    return joined;
  };
  auto drain = [&](Stage st) {
    const int s = int(st);
    bool moved = false;
    while (size[s]) {
      const uint8_t code = ringSched[s][head[s]];
      if (code == 0xff) break;  // FINISH
      const Sched sc{uint8_t(s), uint8_t(code & 15), uint8_t(code >> 4), false, false};
      if (blocked(sc)) break;
      const uint32_t idx = front(s);
      const bool chainHead = st == Stage::kCompute && immAlu[head[s]];
      popFront(s);
      moved = true;
      const uint32_t joined = chainHead ? aluChainAfter(idx, code) : 0;
      if (!joined) {
        issue(idx, sc);
        continue;
      }
      uint8_t lastCode = 0;
      for (uint32_t k = 0; k < joined; ++k) {
        lastCode = ringSched[s][head[s]];
        popFront(s);
      }
      // The first member's pops, the chain, the last member's pushes: what issuing them one by
      // one does, since no other stage runs in between.
      takeTokens(sc.pops);
      execAluChain(current, idx, chain, joined + 1);
      giveTokens(uint8_t(lastCode >> 4));
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

    const int c = int(Stage::kCompute);
    if (size[c] && schedOf(front(c)).finish && !blocked(schedOf(front(c)))) {
      // Everything that could run has run; FINISH raises done.
      const uint32_t finishIdx = front(c);
      popFront(c);
      issue(finishIdx, schedOf(finishIdx));
      run_error::UnbalancedFinish left;
      for (int s = 0; s < 3; ++s)
        if (size[s])
          left.neverExecuted(static_cast<Stage>(s), front(s), decodeAt(front(s)), blockedBy(schedOf(front(s))));
      if (fetchPc < count) left.neverFetched(fetchPc, decodeAt(fetchPc), count);
      for (int t = 0; t < 4; ++t)
        if (tokens[t]) left.tokensLeft(static_cast<TokenQueue>(t), tokens[t]);
      if (!left.empty()) throw left.error(finishIdx);
      return;
    }
    const bool idle = fetchPc >= count && !size[0] && !size[1] && !size[2];
    if (idle) throw run_error::missingFinish(count);
    run_error::Deadlock deadlock;
    for (int s = 0; s < 3; ++s) {
      if (!size[s]) continue;
      deadlock.stageBlocked(static_cast<Stage>(s), front(s), decodeAt(front(s)), blockedBy(schedOf(front(s))));
    }
    if (fetchPc < count) deadlock.fetchStalled(fetchPc, decodeAt(fetchPc), insnCap);
    uint32_t first = count;
    for (int s = 0; s < 3; ++s)
      if (size[s]) first = std::min(first, front(s));
    throw deadlock.error(first == count ? fetchPc : first);
  }
}

kernels::Loops Fsim::loopsOf(const Insn& in) {
  return kernels::Loops{in.iterOut,     in.iterIn,      in.uopBgn,       in.uopEnd,      in.dstFactorOut,
                        in.dstFactorIn, in.srcFactorOut, in.srcFactorIn, in.wgtFactorOut, in.wgtFactorIn};
}

namespace {
}  // namespace

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
  const uint64_t eb = elemBytes_[in.memType];
  const uint64_t width = uint64_t(in.xPad0) + in.xSize + in.xPad1;
  counters_.loadBytes[in.memType] += uint64_t(in.xSize) * in.ySize * eb;

  if (id == MemId::kUop) {
    loadUops(in.sramBase, in.dramBase, in.xSize);
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
      const uint64_t lanes = n * static_cast<uint64_t>(accLanes_);
      if (padding) std::memset(d, 0, lanes * 4);
      else if (id == MemId::kAcc) std::memcpy(d, src, n * eb);
      else widen_(d, reinterpret_cast<const int8_t*>(src), lanes);  // ACC8 sign-extends
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
  const uint64_t rowBytes = uint64_t(in.xSize) * eb;
  for (uint32_t y = 0; y < in.ySize; ++y) {
    zeroElems(sram, in.xPad0);
    sram += in.xPad0;
    const uint64_t rowPhys = (uint64_t(in.dramBase) + uint64_t(y) * in.xStride) * eb;
    // Streams from other toolchains load small tiles that walk DRAM forward, so the hardware
    // prefetcher, which stops at page boundaries, leaves most of their first touches cold. Ask
    // for the next row (after the last row, the bytes that follow it) while this one is copied.
    const uint64_t nextPhys = y + 1 < in.ySize ? rowPhys + uint64_t(in.xStride) * eb : rowPhys + rowBytes;
    prefetchDram(nextPhys, rowBytes);
    copyElems(sram, dram_.raw(rowPhys), in.xSize);
    sram += in.xSize;
    zeroElems(sram, in.xPad1);
    sram += in.xPad1;
  }
  zeroElems(sram, width * in.yPad1);
}

void Fsim::prefetchDram(uint64_t phys, uint64_t bytes) const {
  // A hint, never a fault: x86 and Arm prefetches of unmapped addresses are dropped. The span is
  // capped so a huge row costs no more than a page's worth of hints.
  const uintptr_t base = reinterpret_cast<uintptr_t>(dram_.raw(0));
  const uint64_t end = phys + std::min<uint64_t>(bytes, 4096);
  for (uint64_t a = phys; a < end; a += 64) __builtin_prefetch(reinterpret_cast<const void*>(base + a));
}

void Fsim::loadUops(uint32_t sramBase, uint32_t dramBase, uint32_t n) {
  const uint64_t phys = uint64_t(dramBase) * elemBytes_[uint32_t(MemId::kUop)];
  const uint8_t* src = dram_.raw(phys);
  prefetchDram(phys + uint64_t(n) * 4, uint64_t(n) * 4);
  Uop* dst = &uops_[sramBase];
  const UopFields f = uopFields_;
  for (uint32_t x = 0; x < n; ++x) {
    uint32_t w;
    std::memcpy(&w, src + 4 * x, 4);
    dst[x] = Uop{(w >> f.dstShift) & f.dstMask, (w >> f.srcShift) & f.srcMask, (w >> f.wgtShift) & f.wgtMask};
  }
}

void Fsim::execStore(const Insn& in, size_t) {
  const uint64_t eb = cfg_.outElemBytes;
  counters_.storeBytes += uint64_t(in.xSize) * in.ySize * eb;
  for (uint32_t y = 0; y < in.ySize; ++y) {
    int8_t* dst = reinterpret_cast<int8_t*>(dram_.raw((uint64_t(in.dramBase) + uint64_t(y) * in.xStride) * eb));
    const int32_t* src = &acc_[(uint64_t(in.sramBase) + uint64_t(y) * in.xSize) * accLanes_];
    narrow_(dst, src, uint64_t(in.xSize) * accLanes_);  // keeps the low bits, as VTA's store does
  }
}

void Fsim::checkLoopIndices(const Insn& in, size_t index) const {
  if (in.iterOut == 0 || in.iterIn == 0 || in.uopBgn >= in.uopEnd) return;
  const bool gemm = in.opcode == Opcode::kGemm;
  {
    // The largest index of each operand at the last iteration, in one pass over the micro-ops;
    // the loop below finds the first offending micro-op only when one of them is past its depth.
    uint32_t maxDst = 0, maxSrc = 0, maxWgt = 0;
    const Uop* u = uops_.data();
    for (uint32_t i = in.uopBgn; i < in.uopEnd; ++i) {
      maxDst = std::max(maxDst, u[i].dst);
      maxSrc = std::max(maxSrc, u[i].src);
      maxWgt = std::max(maxWgt, u[i].wgt);
    }
    auto reach = [&](uint32_t base, uint64_t fo, uint64_t fi) {
      return uint64_t(base) + uint64_t(in.iterOut - 1) * fo + uint64_t(in.iterIn - 1) * fi;
    };
    const bool resetOnly = gemm && in.reset;
    if (reach(maxDst, in.dstFactorOut, in.dstFactorIn) < cfg_.accDepth &&
        (resetOnly || reach(maxSrc, in.srcFactorOut, in.srcFactorIn) < (gemm ? cfg_.inpDepth : cfg_.accDepth)) &&
        (resetOnly || !gemm || reach(maxWgt, in.wgtFactorOut, in.wgtFactorIn) < cfg_.wgtDepth))
      return;
  }
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
    // Entries of 16 lanes (BATCH x BLOCK_OUT = 16) are cleared with a fixed-size store rather than
    // a call to memset each.
    int32_t* const acc = acc_.data();
    const uint64_t lanes = static_cast<uint64_t>(accLanes_);
    const Uop* const uops = uops_.data();
    if (in.uopEnd - in.uopBgn == 1 && in.dstFactorIn == 1) {
      // One micro-op stepping one entry per inner iteration (how toolchains zero a tile): each
      // outer iteration clears a contiguous run, and back-to-back runs are one clear.
      const uint64_t run = uint64_t(in.iterIn) * lanes, first = uops[in.uopBgn].dst;
      if (in.dstFactorOut == in.iterIn) {
        std::memset(acc + first * lanes, 0, run * in.iterOut * sizeof(int32_t));
      } else {
        for (uint32_t i = 0; i < in.iterOut; ++i)
          std::memset(acc + (first + uint64_t(i) * in.dstFactorOut) * lanes, 0, run * sizeof(int32_t));
      }
      return;
    }
    for (uint32_t i = 0; i < in.iterOut; ++i)
      for (uint32_t j = 0; j < in.iterIn; ++j) {
        const uint64_t off = uint64_t(i) * in.dstFactorOut + uint64_t(j) * in.dstFactorIn;
        if (lanes == 16) {
          for (uint32_t u = in.uopBgn; u < in.uopEnd; ++u) std::memset(acc + (uops[u].dst + off) * 16, 0, 64);
        } else {
          for (uint32_t u = in.uopBgn; u < in.uopEnd; ++u) std::fill_n(acc + (uops[u].dst + off) * lanes, lanes, 0);
        }
      }
    return;
  }
  counters_.gemmUops += nUops;
  counters_.macs += nUops * uint64_t(batch_) * blockIn_ * blockOut_;
  backend_.gemm(backend_.shape, loopsOf(in), uops_.data(), acc_.data(), inpPacked_.data(), wgtPacked_.data());
}

bool Fsim::aluChainRunsAsOne(const Insn& first, uint32_t n) const {
  // One micro-op whose loops reach no entry twice: row i covers entries i * dstOut + j * dstIn,
  // which stay apart when the inner factor moves and each row starts past the one before.
  if (first.uopEnd - first.uopBgn != 1) return false;
  if (first.iterIn > 1 && first.dstFactorIn == 0) return false;
  if (first.iterOut > 1 && uint64_t(first.dstFactorOut) <= uint64_t(first.iterIn - 1) * first.dstFactorIn) return false;
  // A work budget the chain would cross must stop at the member that crosses it.
  const uint64_t nUops = uint64_t(first.iterOut) * first.iterIn;
  return !workBudget_ || workDone_ + n * nUops <= workBudget_;
}

void Fsim::execAluChain(const Insn& first, size_t index, const kernels::AluStep* steps, uint32_t n) {
  // Every member has the first's loops, so its index checks are the first's.
  checkLoopIndices(first, index);
  const uint64_t nUops = uint64_t(first.iterOut) * first.iterIn;
  workDone_ += n * nUops;
  counters_.insns[4] += n;
  counters_.aluUops += n * nUops;
  counters_.aluElemOps += n * nUops * accLanes_;
  aluChain_(loopsOf(first), uops_.data(), acc_.data(), accLanes_, steps, n);
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
