// Behavioral simulator: validate a stream once, schedule the three stages by tokens as VTA does,
// decode each instruction from its words as it issues, run tight SRAM loops.
#include "tessera/hw/fsim.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

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
  for (uint32_t id = 0; id <= uint32_t(MemId::kAcc8); ++id) elemBytes_[id] = static_cast<uint64_t>(cfg.dramElemBytes(static_cast<MemId>(id)));
  const auto& uf = isa_.layout().uopFormat();
  auto maskOf = [](int width) { return static_cast<uint32_t>(detail::lowBits(std::min(width, 32))); };
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
  for (uint32_t op = 0; op <= uint32_t(AluOp::kMul); ++op) aluKernels_[op] = kernels::selectAlu(op, accLanes_, kernelSet);
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

// A set of token queues: bit q for TokenQueue q.
using QueueMask = uint8_t;
constexpr QueueMask queueBit(TokenQueue q) { return QueueMask(1u << int(q)); }
constexpr int kTokenQueues = 4, kStages = 3;
constexpr QueueMask kAllQueues = (1u << kTokenQueues) - 1;

// The queue each dependency flag of a stage's instruction pops or pushes: a stage's previous
// stage sends it tokens on one queue and takes them back on another, and so does its next stage.
// Flags a stage does not have are refused by validation before anything runs.
struct StageQueues {
  QueueMask popPrev, popNext, pushPrev, pushNext;
};
constexpr StageQueues kStageQueues[kStages] = {
    /* load */ {0, queueBit(TokenQueue::kComputeToLoad), 0, queueBit(TokenQueue::kLoadToCompute)},
    /* compute */
    {queueBit(TokenQueue::kLoadToCompute), queueBit(TokenQueue::kStoreToCompute), queueBit(TokenQueue::kComputeToLoad),
     queueBit(TokenQueue::kComputeToStore)},
    /* store */ {queueBit(TokenQueue::kComputeToStore), 0, queueBit(TokenQueue::kStoreToCompute), 0}};

}  // namespace

// An instruction as fetch queues it: what the scheduler needs without decoding it again.
struct Fsim::Queued {
  uint32_t insn;  // index in the program
  uint8_t pops, pushes;  // QueueMasks
  uint8_t stage;  // Stage
  uint8_t kind;   // kFinish, kImmAlu
  static constexpr uint8_t kFinish = 1;
  static constexpr uint8_t kImmAlu = 2;  // an ALU instruction with an immediate: it may start or join a chain
  bool finish() const { return kind & kFinish; }
  bool immAlu() const { return kind & kImmAlu; }
};

// One run's scheduler, VTA's: fetch dispatches instructions in order into three bounded queues,
// one per stage, and each stage issues its queue's head once the token queues it pops are not
// empty and those it pushes are not full. Stages drain in turn (load, store, compute) until none
// moves; then FINISH retires, or the run is stuck.
class Fsim::Scheduler {
 public:
  Scheduler(Fsim& sim, const uint8_t* insns, uint32_t count)
      : sim_(sim),
        dec_(*sim.decoder_),
        insns_(insns),
        insnBytes_(static_cast<uint32_t>(sim.cfg_.insnBytes)),
        count_(count),
        queueDepth_(static_cast<uint32_t>(sim.cfg_.insnQueueDepth)),
        tokenDepth_(sim.cfg_.depQueueDepth) {
    if (sim.queueSlots_.size() != size_t(kStages) * queueDepth_) sim.queueSlots_.assign(size_t(kStages) * queueDepth_, {});
    for (int s = 0; s < kStages; ++s) queues_[s].slot = &sim.queueSlots_[size_t(s) * queueDepth_];
    full_ = tokenDepth_ <= 0 ? kAllQueues : 0;
  }

  // Runs until FINISH retires; throws if it retires with work or tokens left, or if the run is
  // stuck (deadlock, no FINISH).
  void run() {
    for (;;) {
      bool moved = fetch();
      moved |= drain(Stage::kLoad);
      moved |= drain(Stage::kStore);
      moved |= drain(Stage::kCompute);
      if (moved) continue;
      const InsnQueue& compute = queue(Stage::kCompute);
      if (compute.size && compute.front().finish() && !blocked(compute.front())) {
        retireFinish();
        return;
      }
      throwStuck();
    }
  }

 private:
  // A bounded ring of queued instructions.
  struct InsnQueue {
    Queued* slot = nullptr;
    uint32_t head = 0, size = 0;
    const Queued& front() const { return slot[head]; }
    const Queued& at(uint32_t pos) const { return slot[pos]; }
  };

  InsnQueue& queue(Stage s) { return queues_[int(s)]; }
  uint32_t next(uint32_t pos) const { return pos + 1 == queueDepth_ ? 0 : pos + 1; }
  void popFront(InsnQueue& q) {
    q.head = next(q.head);
    --q.size;
  }

  void words(uint32_t idx, uint64_t* w) const { detail::loadWords(insns_ + size_t(idx) * insnBytes_, w); }
  Insn decodeAt(uint32_t idx) const {
    uint64_t w[2];
    words(idx, w);
    Insn in;
    dec_.decode(w, &in);
    return in;
  }

  // The stage instruction `idx` goes to and what it pops and pushes.
  Queued classify(uint32_t idx) const {
    uint64_t w[2];
    words(idx, w);
    const uint32_t op = detail::FastDecoder::opcode(w), f = detail::FastDecoder::flags(w);
    Stage stage = Stage::kCompute;
    if (op == uint32_t(Opcode::kStore)) {
      stage = Stage::kStore;
    } else if (op == uint32_t(Opcode::kLoad)) {
      const uint32_t id = detail::FastDecoder::memType(w);
      if (id == uint32_t(MemId::kInp) || id == uint32_t(MemId::kWgt)) stage = Stage::kLoad;
    }
    const StageQueues& sq = kStageQueues[int(stage)];
    Queued e;
    e.insn = idx;
    e.pops = QueueMask(((f & detail::dep::kPopPrev) ? sq.popPrev : 0) | ((f & detail::dep::kPopNext) ? sq.popNext : 0));
    e.pushes =
        QueueMask(((f & detail::dep::kPushPrev) ? sq.pushPrev : 0) | ((f & detail::dep::kPushNext) ? sq.pushNext : 0));
    e.stage = uint8_t(stage);
    e.kind = uint8_t((op == uint32_t(Opcode::kFinish) ? Queued::kFinish : 0) |
                     (op == uint32_t(Opcode::kAlu) && dec_.aluUsesImm(w) ? Queued::kImmAlu : 0));
    return e;
  }

  // Dispatches instructions in order until the next one's queue is full.
  bool fetch() {
    bool moved = false;
    while (fetchPc_ < count_) {
      const Queued e = fetchedKnown_ ? fetched_ : classify(fetchPc_);
      InsnQueue& q = queues_[e.stage];
      if (q.size >= queueDepth_) {
        fetched_ = e;  // it waits for room; classified once
        fetchedKnown_ = true;
        break;
      }
      fetchedKnown_ = false;
      uint32_t tail = q.head + q.size;
      if (tail >= queueDepth_) tail -= queueDepth_;
      q.slot[tail] = e;
      ++q.size;
      ++fetchPc_;
      moved = true;
    }
    return moved;
  }

  bool blocked(const Queued& e) const { return (e.pops & empty_) || (e.pushes & full_); }
  // Why an instruction cannot issue, in the words of run_error (pops first, then pushes, each in
  // queue order), or empty if it can.
  std::string blockedBy(const Queued& e) const {
    for (int q = 0; q < kTokenQueues; ++q)
      if ((e.pops & queueBit(TokenQueue(q))) && tokens_[q] == 0) return run_error::waitsForToken(TokenQueue(q));
    for (int q = 0; q < kTokenQueues; ++q)
      if ((e.pushes & queueBit(TokenQueue(q))) && tokens_[q] >= tokenDepth_)
        return run_error::waitsForSpace(TokenQueue(q), tokenDepth_);
    return "";
  }
  // Most instructions pop and push nothing: the loops visit only the queues in the mask.
  void takeTokens(QueueMask pops) {
    for (unsigned m = pops; m; m &= m - 1) {
      const int q = __builtin_ctz(m);
      if (--tokens_[q] == 0) empty_ |= queueBit(TokenQueue(q));
      full_ &= QueueMask(~queueBit(TokenQueue(q)));
    }
  }
  void giveTokens(QueueMask pushes) {
    for (unsigned m = pushes; m; m &= m - 1) {
      const int q = __builtin_ctz(m);
      if (++tokens_[q] >= tokenDepth_) full_ |= queueBit(TokenQueue(q));
      empty_ &= QueueMask(~queueBit(TokenQueue(q)));
    }
  }

  void issue(const Queued& e) {
    takeTokens(e.pops);
    uint64_t w[2];
    words(e.insn, w);
    using D = detail::FastDecoder;
    if (D::opcode(w) == uint32_t(Opcode::kLoad) && D::memType(w) == uint32_t(MemId::kUop) && D::xSize(w)) {
      // LOAD.UOP straight from the words (toolchains load a kernel before most GEMM/ALU
      // instructions): what execute() does for it, without decoding every field. Validation
      // made it one row (y_size 1) without padding.
      const uint32_t n = D::xSize(w);
      ++sim_.counters_.insns[uint32_t(Opcode::kLoad)];
      sim_.counters_.loadBytes[uint32_t(MemId::kUop)] += uint64_t(n) * sim_.elemBytes_[uint32_t(MemId::kUop)];
      sim_.loadUops(D::sramBase(w), D::dramBase(w), n);
    } else {
      dec_.decode(w, &current_);
      sim_.execute(current_, e.insn);
    }
    giveTokens(e.pushes);
  }

  // Immediate ALU instructions over the same loops, queued back to back in compute (a
  // requantization's MUL, SHR, MAX, MIN), run as one pass over their entries when they are what
  // drain would issue in a row anyway: only the first may pop, only the last may push, none is
  // blocked. `first` was just taken off compute's queue; returns how many of the instructions
  // queued after it join it (0: none), their steps in chain_ and `first` decoded in current_.
  uint32_t aluChainAfter(const Queued& first) {
    const InsnQueue& q = queue(Stage::kCompute);
    if (first.pushes || !q.size || !q.front().immAlu()) return 0;
    uint64_t w[2];
    words(first.insn, w);
    uint32_t joined = 0, pos = q.head;
    while (joined + 1 < kMaxAluChain && joined < q.size && q.at(pos).immAlu()) {
      const Queued& e = q.at(pos);
      if (e.finish() || e.pops || (e.pushes & full_)) break;
      uint64_t v[2];
      words(e.insn, v);
      if (!dec_.sameAluLoops(w, v)) break;
      ++joined;
      if (e.pushes) break;  // the chain ends with it
      pos = next(pos);
    }
    if (!joined) return 0;
    dec_.decode(w, &current_);
    if (!sim_.aluChainRunsAsOne(current_, joined + 1)) return 0;
    chain_[0] = {current_.aluOp, current_.imm};
    pos = q.head;
    for (uint32_t k = 1; k <= joined; ++k, pos = next(pos)) {
      words(q.at(pos).insn, w);
      chain_[k] = {dec_.aluOp(w), dec_.aluImm(w)};
    }
    return joined;
  }

  // Issues the stage's queue in order until its head is blocked (or is FINISH).
  bool drain(Stage st) {
    InsnQueue& q = queue(st);
    bool moved = false;
    while (q.size) {
      const Queued e = q.front();
      if (e.finish() || blocked(e)) break;
      popFront(q);
      moved = true;
      const uint32_t joined = st == Stage::kCompute && e.immAlu() ? aluChainAfter(e) : 0;
      if (!joined) {
        issue(e);
        continue;
      }
      QueueMask lastPushes = 0;
      for (uint32_t k = 0; k < joined; ++k) {
        lastPushes = q.front().pushes;
        popFront(q);
      }
      // The first member's pops, the chain, the last member's pushes: what issuing them one by
      // one does, since no other stage runs in between.
      takeTokens(e.pops);
      sim_.execAluChain(current_, e.insn, chain_, joined + 1);
      giveTokens(lastPushes);
    }
    return moved;
  }

  // Everything that could run has run; FINISH raises done, and anything left is an error.
  void retireFinish() {
    InsnQueue& compute = queue(Stage::kCompute);
    const Queued finish = compute.front();
    popFront(compute);
    issue(finish);
    run_error::UnbalancedFinish left;
    for (int s = 0; s < kStages; ++s)
      if (queues_[s].size) {
        const Queued& e = queues_[s].front();
        left.neverExecuted(Stage(s), e.insn, decodeAt(e.insn), blockedBy(e));
      }
    if (fetchPc_ < count_) left.neverFetched(fetchPc_, decodeAt(fetchPc_), count_);
    for (int q = 0; q < kTokenQueues; ++q)
      if (tokens_[q]) left.tokensLeft(TokenQueue(q), tokens_[q]);
    if (!left.empty()) throw left.error(finish.insn);
  }

  // Nothing moved and FINISH cannot retire: the program ended without FINISH, or a deadlock.
  [[noreturn]] void throwStuck() {
    const bool idle = fetchPc_ >= count_ && !queues_[0].size && !queues_[1].size && !queues_[2].size;
    if (idle) throw run_error::missingFinish(count_);
    run_error::Deadlock deadlock;
    uint32_t first = count_;
    for (int s = 0; s < kStages; ++s) {
      if (!queues_[s].size) continue;
      const Queued& e = queues_[s].front();
      deadlock.stageBlocked(Stage(s), e.insn, decodeAt(e.insn), blockedBy(e));
      first = std::min(first, e.insn);
    }
    if (fetchPc_ < count_) deadlock.fetchStalled(fetchPc_, decodeAt(fetchPc_), queueDepth_);
    throw deadlock.error(first == count_ ? fetchPc_ : first);
  }

  Fsim& sim_;
  const detail::FastDecoder& dec_;
  const uint8_t* const insns_;
  const uint32_t insnBytes_, count_;
  const uint32_t queueDepth_;  // of each instruction queue
  const int tokenDepth_;       // of each token queue
  InsnQueue queues_[kStages];
  uint32_t fetchPc_ = 0;
  Queued fetched_{};  // instruction fetchPc_, once classified
  bool fetchedKnown_ = false;
  int tokens_[kTokenQueues] = {};
  // Bit q set: token queue q is empty (a pop of it blocks) / full (a push to it blocks).
  QueueMask empty_ = kAllQueues, full_ = 0;
  Insn current_;  // the issuing instruction, decoded into in place (no zeroing per instruction)
  kernels::AluStep chain_[kMaxAluChain];
};

void Fsim::run(uint64_t insnPhys, uint32_t count, uint64_t waitCycles) {
  // The whole stream is validated first, so a malformed program fails before anything executes.
  // The scheduler then reads the instruction words in place and decodes each one as it issues:
  // a stream of any length costs no memory of its own.
  const detail::CheckedProgram checked = detail::checkProgram(isa_, dram_, *decoder_, insnPhys, count);
  const uint8_t* insns = checked.bytes;
  // A STORE may overwrite the stream itself; the program is what it was when the run started.
  std::vector<uint8_t> snapshot;
  if (checked.storesIntoItself) {
    snapshot.assign(insns, insns + uint64_t(count) * uint64_t(cfg_.insnBytes));
    insns = snapshot.data();
  }
  counters_.runs += 1;
  workBudget_ = waitCycles;
  workDone_ = 0;
  Scheduler(*this, insns, count).run();
}

kernels::Loops Fsim::loopsOf(const Insn& in) {
  return kernels::Loops{in.iterOut,     in.iterIn,      in.uopBgn,       in.uopEnd,      in.dstFactorOut,
                        in.dstFactorIn, in.srcFactorOut, in.srcFactorIn, in.wgtFactorOut, in.wgtFactorIn};
}

void Fsim::execute(const Insn& in, size_t index) {
  switch (in.opcode) {
    case Opcode::kLoad:
      if (in.isNop()) { ++counters_.nops; return; }
      ++counters_.insns[uint32_t(Opcode::kLoad)];
      execLoad(in, index);
      return;
    case Opcode::kStore:
      if (in.isNop()) { ++counters_.nops; return; }
      ++counters_.insns[uint32_t(Opcode::kStore)];
      execStore(in, index);
      return;
    case Opcode::kGemm: ++counters_.insns[uint32_t(Opcode::kGemm)]; execGemm(in, index); return;
    case Opcode::kAlu: ++counters_.insns[uint32_t(Opcode::kAlu)]; execAlu(in, index); return;
    case Opcode::kFinish: ++counters_.insns[uint32_t(Opcode::kFinish)]; return;
  }
}

void Fsim::execLoad(const Insn& in, size_t) {
  const MemId id = static_cast<MemId>(in.memType);
  const uint64_t eb = elemBytes_[in.memType];
  counters_.loadBytes[in.memType] += uint64_t(in.xSize) * in.ySize * eb;
  if (id == MemId::kUop) {
    loadUops(in.sramBase, in.dramBase, in.xSize);
    return;
  }
  // Rows of x_size elements between their pads, the pad rows above and below: every entry of
  // [sram_base, sram_base + footprint) is written once, in order. Pads of 0 cost nothing.
  const uint64_t width = uint64_t(in.xPad0) + in.xSize + in.xPad1;
  const uint64_t rowBytes = uint64_t(in.xSize) * eb;
  uint64_t sram = in.sramBase;
  if (in.yPad0) clearEntries(id, sram, width * in.yPad0);
  sram += width * in.yPad0;
  for (uint32_t y = 0; y < in.ySize; ++y) {
    if (in.xPad0) clearEntries(id, sram, in.xPad0);
    sram += in.xPad0;
    const uint64_t rowPhys = (uint64_t(in.dramBase) + uint64_t(y) * in.xStride) * eb;
    // Streams from other toolchains load small tiles that walk DRAM forward, so the hardware
    // prefetcher, which stops at page boundaries, leaves most of their first touches cold. Ask
    // for the next row (after the last row, the bytes that follow it) while this one is copied.
    const uint64_t nextPhys = y + 1 < in.ySize ? rowPhys + uint64_t(in.xStride) * eb : rowPhys + rowBytes;
    prefetchDram(nextPhys, rowBytes);
    storeEntries(id, sram, dram_.raw(rowPhys), in.xSize);
    sram += in.xSize;
    if (in.xPad1) clearEntries(id, sram, in.xPad1);
    sram += in.xPad1;
  }
  if (in.yPad1) clearEntries(id, sram, width * in.yPad1);
}

void Fsim::storeEntries(MemId id, uint64_t sramIdx, const uint8_t* src, uint64_t n) {
  if (id == MemId::kAcc || id == MemId::kAcc8) {
    int32_t* d = &acc_[sramIdx * accLanes_];
    if (id == MemId::kAcc) std::memcpy(d, src, n * elemBytes_[uint32_t(MemId::kAcc)]);
    else widen_(d, reinterpret_cast<const int8_t*>(src), n * static_cast<uint64_t>(accLanes_));  // sign-extends
    return;
  }
  // Inputs and weights: compare with the bytes already there and repack only what changed. A
  // toolchain reloads the same tile often (an input block for every block of weights it meets);
  // a row that differs usually differs in its first bytes, so the comparison costs little then.
  const bool isInp = id == MemId::kInp;
  const uint64_t eb = elemBytes_[uint32_t(id)];
  uint8_t* cached = (isInp ? inpRaw_.data() : wgtRaw_.data()) + sramIdx * eb;
  if (std::memcmp(cached, src, n * eb) == 0) return;
  const kernels::Shape& sh = backend_.shape;
  uint8_t* packed = (isInp ? inpPacked_.data() : wgtPacked_.data()) + sramIdx * (isInp ? sh.inpEntryBytes : sh.wgtEntryBytes);
  if (isInp) {  // input entries are small: copy and pack the row in one go
    std::memcpy(cached, src, n * eb);
    backend_.packInp(sh, packed, reinterpret_cast<const int8_t*>(src), n);
    return;
  }
  for (uint64_t e = 0; e < n; ++e, cached += eb, src += eb, packed += sh.wgtEntryBytes) {
    if (std::memcmp(cached, src, eb) == 0) continue;
    std::memcpy(cached, src, eb);
    backend_.packWgt(sh, packed, reinterpret_cast<const int8_t*>(src), 1);
  }
}

void Fsim::clearEntries(MemId id, uint64_t sramIdx, uint64_t n) {
  if (id == MemId::kAcc || id == MemId::kAcc8) {
    std::memset(&acc_[sramIdx * accLanes_], 0, n * static_cast<uint64_t>(accLanes_) * sizeof(int32_t));
    return;
  }
  constexpr int kMaxBlock = 64;  // BLOCK_IN and BLOCK_OUT at most: the largest element is a 64x64 weight
  static const uint8_t kZeros[kMaxBlock * kMaxBlock] = {};
  for (uint64_t e = 0; e < n; ++e) storeEntries(id, sramIdx + e, kZeros, 1);
}

void Fsim::prefetchDram(uint64_t phys, uint64_t bytes) const {
  // A hint, never a fault: x86 and Arm prefetches of unmapped addresses are dropped. The span is
  // capped so a huge row costs no more than a page's worth of hints.
  constexpr uint64_t kCacheLine = 64;
  const uintptr_t base = reinterpret_cast<uintptr_t>(dram_.raw(0));
  const uint64_t end = phys + std::min<uint64_t>(bytes, Dram::kPageBytes);
  for (uint64_t a = phys; a < end; a += kCacheLine) __builtin_prefetch(reinterpret_cast<const void*>(base + a));
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
    // Entries of 16 lanes (BATCH x BLOCK_OUT = 16, VTA's default) are cleared with a fixed-size
    // store rather than a call to memset each.
    constexpr uint64_t kFixedLanes = 16;
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
        if (lanes == kFixedLanes) {
          for (uint32_t u = in.uopBgn; u < in.uopEnd; ++u)
            std::memset(acc + (uops[u].dst + off) * kFixedLanes, 0, kFixedLanes * sizeof(int32_t));
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
  counters_.insns[uint32_t(Opcode::kAlu)] += n;
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
