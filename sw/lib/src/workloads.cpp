// Blocked GEMM and ALU programs on the VTA runtime API, with their host references.
#include "tessera/sw/workloads.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

#include "tessera/hw/dram_timing.h"
#include "tessera/support/error.h"
#include "tessera/runtime/session.h"
#include "tessera/runtime/tessera.h"
#include "vta/runtime.h"

namespace tessera::sw {

namespace {

using runtime::Session;

// Everything a micro-op kernel depends on; its bytes are the kernel's cache signature.
struct KernelSig {
  int32_t kind;  // 0 GEMM, 1 GEMM reset, 2 ALU (compressed), 3 ALU uncompressed, 4 GEMM uncompressed
  uint32_t accBase, inpBase, wgtBase;
  uint32_t tb, to, tk;
  uint32_t aluOp;
  int32_t imm;
  uint32_t useImm;
  uint32_t srcBase;
  uint32_t width, rows, ky, accTile;  // convolution kernels
};

int recordKernel(void* signature) {
  KernelSig s;
  std::memcpy(&s, signature, sizeof s);
  switch (s.kind) {
    case 0:  // acc[b][o] += inp[b][k] * wgt[o][k]: outer loop b, inner loop k, micro-ops over o
      VTAUopLoopBegin(s.tb, s.to, s.tk, 0);
      VTAUopLoopBegin(s.tk, 0, 1, 1);
      for (uint32_t o = 0; o < s.to; ++o) VTAUopPush(0, 0, s.accBase + o, s.inpBase, s.wgtBase + o * s.tk, 0, 0, 0);
      VTAUopLoopEnd();
      VTAUopLoopEnd();
      return 0;
    case 4:  // the same without loops: one micro-op per (k, b, o)
      for (uint32_t k = 0; k < s.tk; ++k)
        for (uint32_t b = 0; b < s.tb; ++b)
          for (uint32_t o = 0; o < s.to; ++o)
            VTAUopPush(0, 0, s.accBase + b * s.to + o, s.inpBase + b * s.tk + k, s.wgtBase + o * s.tk + k, 0, 0, 0);
      return 0;
    case 5:  // one kernel row ky of a 3x3 convolution: outer loop output rows, inner loop kx,
             // micro-ops over (output-channel block, output column)
      VTAUopLoopBegin(s.rows, s.width, s.width + 2, 0);
      VTAUopLoopBegin(3, 0, 1, 1);
      for (uint32_t co = 0; co < s.to; ++co)
        for (uint32_t x = 0; x < s.width; ++x)
          VTAUopPush(0, 0, s.accBase + co * s.accTile + x, s.inpBase + s.ky * (s.width + 2) + x,
                     s.wgtBase + co * 9 + s.ky * 3, 0, 0, 0);
      VTAUopLoopEnd();
      VTAUopLoopEnd();
      return 0;
    case 1:  // reset the accumulator tile
      VTAUopLoopBegin(s.tb, s.to, 0, 0);
      for (uint32_t o = 0; o < s.to; ++o) VTAUopPush(0, 1, s.accBase + o, 0, 0, 0, 0, 0);
      VTAUopLoopEnd();
      return 0;
    case 2:  // ALU over a [tb][to] tile, compressed with one loop
      VTAUopLoopBegin(s.tb, s.to, s.to, 0);
      for (uint32_t o = 0; o < s.to; ++o)
        VTAUopPush(1, 0, s.accBase + o, s.srcBase + o, 0, s.aluOp, s.useImm, s.imm);
      VTAUopLoopEnd();
      return 0;
    case 3:  // ALU, one micro-op per element
      for (uint32_t i = 0; i < s.tb * s.to; ++i)
        VTAUopPush(1, 0, s.accBase + i, s.srcBase + i, 0, s.aluOp, s.useImm, s.imm);
      return 0;
  }
  return 1;
}

KernelSig sig(int kind) {
  KernelSig s;
  std::memset(&s, 0, sizeof s);
  s.kind = kind;
  return s;
}

// Requantizes a [rows][cols] accumulator tile in place: arithmetic shift right, then clip to int8.
void pushRequantize(void** handle, uint32_t accBase, uint32_t rows, uint32_t cols, int shift, bool compressed) {
  const struct { uint32_t op; int32_t imm; } steps[] = {{3, shift}, {0, 127}, {1, -128}};
  for (const auto& step : steps) {
    KernelSig as = sig(compressed ? 2 : 3);
    as.accBase = as.srcBase = accBase;
    as.tb = rows;
    as.to = cols;
    as.aluOp = step.op;
    as.imm = step.imm;
    as.useImm = 1;
    VTAPushALUOp(handle, recordKernel, &as, sizeof as);
  }
}

// Largest divisor of n that is at most cap (at least 1).
int divisorAtMost(int n, int cap) {
  for (int d = std::min(n, cap); d > 1; --d)
    if (n % d == 0) return d;
  return 1;
}

// Throws with the runtime's recorded error if a C API call failed.
void checkRuntime(const char* what) {
  if (const char* e = TesseraLastError()) {
    std::string msg = e;
    TesseraClearError();
    throw Error(what, msg);
  }
}

struct Buffer {
  void* handle = nullptr;
  explicit Buffer(size_t bytes) {
    handle = VTABufferAlloc(bytes);
    checkRuntime("VTABufferAlloc");
  }
  ~Buffer() { VTABufferFree(handle); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
};

int32_t clip8(int64_t v) { return static_cast<int32_t>(std::min<int64_t>(127, std::max<int64_t>(-128, v))); }

}  // namespace

int32_t referenceAlu(uint32_t op, int32_t a, int32_t b) {
  switch (op) {
    case 0: return std::min(a, b);
    case 1: return std::max(a, b);
    case 2: return static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b));
    case 3: {
      // Amount modulo 32; negative amounts shift left.
      int64_t amount = b;
      if (amount >= 0) return a >> (amount % 32);
      return static_cast<int32_t>(static_cast<uint32_t>(a) << ((-amount) % 32));
    }
    case 4: return static_cast<int32_t>(static_cast<uint32_t>(a) * static_cast<uint32_t>(b));
  }
  throw Error("referenceAlu", "invalid ALU opcode " + std::to_string(op));
}

std::vector<int8_t> referenceGemm(const GemmProblem& p, const std::vector<int8_t>& a, const std::vector<int8_t>& b) {
  std::vector<int8_t> c(size_t(p.m) * p.n);
  for (int i = 0; i < p.m; ++i)
    for (int j = 0; j < p.n; ++j) {
      int32_t sum = 0;
      for (int k = 0; k < p.k; ++k) sum += int32_t(a[size_t(i) * p.k + k]) * int32_t(b[size_t(j) * p.k + k]);
      c[size_t(i) * p.n + j] =
          static_cast<int8_t>(p.requantize ? clip8(referenceAlu(3, sum, p.shift)) : static_cast<uint8_t>(sum & 0xff));
    }
  return c;
}

GemmTiling chooseGemmTiling(const hw::Config& cfg, const GemmProblem& p) {
  const int B = cfg.batch, BI = cfg.blockIn, BO = cfg.blockOut;
  const int NB = p.m / B, NO = p.n / BO, NK = p.k / BI;
  const int halves = p.doubleBuffer ? 2 : 1;
  const int inpCap = static_cast<int>(cfg.inpDepth) / halves, wgtCap = static_cast<int>(cfg.wgtDepth) / halves;
  const int accCap = static_cast<int>(cfg.accDepth) / halves;
  const int maxLoop = (1 << 14) - 1;
  // The timed targets' default DRAM; each instruction costs a few cycles of issue and pipeline drain.
  const hw::DramTiming dram;
  const double bytesPerCycle = dram.busRate(cfg.busBytes), latency = dram.readLatency, insnOverhead = 8;
  auto readCycles = [&](double rows, double rowBytes) { return dram.rowReadCycles(rows, rowBytes, cfg.busBytes); };
  const int epilogueOps = p.requantize ? 3 : 0;
  auto fixed = [](int elems, int block, const char* what) {
    if (elems % block) throw Error(std::string("GEMM tile ") + what, "must be a multiple of " + std::to_string(block));
    return elems / block;
  };
  const int wantB = p.tileM ? fixed(p.tileM, B, "m") : 0, wantO = p.tileN ? fixed(p.tileN, BO, "n") : 0;
  const int wantK = p.tileK ? fixed(p.tileK, BI, "k") : 0;

  GemmTiling best;
  bool found = false;
  for (int tk = 1; tk <= NK; ++tk) {
    if (NK % tk || tk > maxLoop || (wantK && tk != wantK)) continue;
    for (int to = 1; to <= NO; ++to) {
      if (NO % to || (wantO && to != wantO) || to * tk > wgtCap) continue;
      for (int tb = 1; tb <= NB; ++tb) {
        if (NB % tb || (wantB && tb != wantB) || tb > maxLoop || tb * tk > inpCap || tb * to > accCap) continue;
        const double steps = double(NB / tb) * (NO / to) * (NK / tk), tiles = double(NB / tb) * (NO / to);
        const double load = readCycles(tb, double(tk) * cfg.inpElemBytes) + readCycles(to, double(tk) * cfg.wgtElemBytes) +
                            2 * insnOverhead;
        const double compute = double(tb) * to * tk + insnOverhead;
        const double overhead = double(tb) * to * (1 + epilogueOps) + (1 + epilogueOps) * insnOverhead;
        const double store = double(tb) * to * cfg.outElemBytes / bytesPerCycle + dram.writeLatency;
        const double cycles = halves == 2 ? load + latency + steps * std::max(compute, load) + tiles * overhead + store
                                          : steps * (compute + load) + tiles * (overhead + store);
        if (!found || cycles < best.estimatedCycles) {
          best = GemmTiling{tb, to, tk, cycles};
          found = true;
        }
      }
    }
  }
  if (!found)
    throw Error("GEMM " + std::to_string(p.m) + "x" + std::to_string(p.n) + "x" + std::to_string(p.k),
                "no tiling fits the SRAMs of this configuration" +
                    std::string(p.tileM || p.tileN || p.tileK ? " with the requested tile sizes" : ""));
  return best;
}

WorkloadResult runBlockedGemm(const GemmProblem& p, const RerunHook& rerun) {
  Session& session = Session::global();
  const hw::Config& cfg = session.config();
  const int B = cfg.batch, BI = cfg.blockIn, BO = cfg.blockOut;
  if (p.m <= 0 || p.n <= 0 || p.k <= 0 || p.m % B || p.n % BO || p.k % BI)
    throw Error("GEMM " + std::to_string(p.m) + "x" + std::to_string(p.n) + "x" + std::to_string(p.k),
                "m, n and k must be positive multiples of BATCH=" + std::to_string(B) + ", BLOCK_OUT=" +
                    std::to_string(BO) + " and BLOCK_IN=" + std::to_string(BI));
  if (p.shift < 0 || p.shift > 31) throw Error("GEMM shift", "must be in [0, 31]");
  const int NB = p.m / B, NO = p.n / BO, NK = p.k / BI;

  const GemmTiling tiling = chooseGemmTiling(cfg, p);
  const int TB = tiling.tb, TO = tiling.to, TK = tiling.tk;
  const int halves = p.doubleBuffer ? 2 : 1;
  const int inpCap = static_cast<int>(cfg.inpDepth) / halves, wgtCap = static_cast<int>(cfg.wgtDepth) / halves;
  const int accCap = static_cast<int>(cfg.accDepth) / halves;

  // Random operands, packed into VTA's blocked layouts.
  std::mt19937 rng(p.seed);
  std::uniform_int_distribution<int> dist(-128, 127);
  std::vector<int8_t> a(size_t(p.m) * p.k), b(size_t(p.n) * p.k);
  for (auto& v : a) v = static_cast<int8_t>(dist(rng));
  for (auto& v : b) v = static_cast<int8_t>(dist(rng));
  std::vector<int8_t> aPacked(a.size()), bPacked(b.size());
  for (int i = 0; i < p.m; ++i)
    for (int k = 0; k < p.k; ++k)  // [NB][NK][B][BI]
      aPacked[((size_t(i / B) * NK + k / BI) * B + i % B) * BI + k % BI] = a[size_t(i) * p.k + k];
  for (int j = 0; j < p.n; ++j)
    for (int k = 0; k < p.k; ++k)  // [NO][NK][BO][BI]
      bPacked[((size_t(j / BO) * NK + k / BI) * BO + j % BO) * BI + k % BI] = b[size_t(j) * p.k + k];

  Buffer aBuf(aPacked.size()), bBuf(bPacked.size()), cBuf(size_t(p.m) * p.n);
  VTABufferCopy(aPacked.data(), 0, aBuf.handle, 0, aPacked.size(), VTA_MEMCPY_H2D);
  VTABufferCopy(bPacked.data(), 0, bBuf.handle, 0, bPacked.size(), VTA_MEMCPY_H2D);
  checkRuntime("VTABufferCopy");

  VTACommandHandle cmd = VTATLSCommandHandle();
  auto& queue = session.threadQueue();
  hw::Counters before = queue.device().counters();
  double secondsBefore = queue.totalRunSeconds();

  void* gemmHandle = nullptr;
  void* resetHandle = nullptr;
  void* aluHandle = nullptr;
  int step = 0, tile = 0;
  for (int bt = 0; bt < NB / TB; ++bt) {
    for (int ot = 0; ot < NO / TO; ++ot, ++tile) {
      const uint32_t accBase = static_cast<uint32_t>((tile % halves) * accCap);
      // The accumulator half is free once the store of two tiles ago has finished.
      if (tile >= halves) VTADepPop(cmd, VTA_STAGE_STORE, VTA_STAGE_COMPUTE);
      KernelSig rs = sig(1);
      rs.accBase = accBase;
      rs.tb = TB;
      rs.to = TO;
      VTAPushGEMMOp(&resetHandle, recordKernel, &rs, sizeof rs);
      for (int kt = 0; kt < NK / TK; ++kt, ++step) {
        const uint32_t inpBase = static_cast<uint32_t>((step % halves) * inpCap);
        const uint32_t wgtBase = static_cast<uint32_t>((step % halves) * wgtCap);
        // Load stage: wait until compute released this half, fill it, hand it to compute.
        if (step >= halves) VTADepPop(cmd, VTA_STAGE_COMPUTE, VTA_STAGE_LOAD);
        VTALoadBuffer2D(cmd, aBuf.handle, static_cast<uint32_t>(bt * TB * NK + kt * TK), TK, TB, NK, 0, 0, 0, 0,
                        inpBase, 2);
        VTALoadBuffer2D(cmd, bBuf.handle, static_cast<uint32_t>(ot * TO * NK + kt * TK), TK, TO, NK, 0, 0, 0, 0,
                        wgtBase, 1);
        VTADepPush(cmd, VTA_STAGE_LOAD, VTA_STAGE_COMPUTE);
        VTADepPop(cmd, VTA_STAGE_LOAD, VTA_STAGE_COMPUTE);
        KernelSig gs = sig(p.uopCompression || TB * TO < 3 ? 0 : 4);
        gs.accBase = accBase;
        gs.inpBase = inpBase;
        gs.wgtBase = wgtBase;
        gs.tb = TB;
        gs.to = TO;
        gs.tk = TK;
        VTAPushGEMMOp(&gemmHandle, recordKernel, &gs, sizeof gs);
        VTADepPush(cmd, VTA_STAGE_COMPUTE, VTA_STAGE_LOAD);
        checkRuntime("GEMM tile");
      }
      // Requantize: shift, then clip to int8.
      if (p.requantize) pushRequantize(&aluHandle, accBase, TB, TO, p.shift, p.uopCompression);
      VTADepPush(cmd, VTA_STAGE_COMPUTE, VTA_STAGE_STORE);
      VTADepPop(cmd, VTA_STAGE_COMPUTE, VTA_STAGE_STORE);
      VTAStoreBuffer2D(cmd, accBase, 4, cBuf.handle, static_cast<uint32_t>(bt * TB * NO + ot * TO), TO, TB, NO);
      VTADepPush(cmd, VTA_STAGE_STORE, VTA_STAGE_COMPUTE);
      checkRuntime("GEMM epilogue");
    }
  }
  // Balance the tokens nobody consumed: the load stage takes the last releases of its halves and
  // compute takes the last store completions.
  for (int i = 0; i < std::min(step, halves); ++i) VTADepPop(cmd, VTA_STAGE_COMPUTE, VTA_STAGE_LOAD);
  for (int i = 0; i < std::min(tile, halves); ++i) VTADepPop(cmd, VTA_STAGE_STORE, VTA_STAGE_COMPUTE);
  VTASynchronize(cmd, 1u << 31);
  checkRuntime("VTASynchronize");
  // Counters and time of this workload's own run, before any re-runs.
  const hw::Counters ran = queue.device().counters().since(before);
  const double ranSeconds = queue.totalRunSeconds() - secondsBefore;
  if (rerun) rerun(queue.device(), queue.lastProgramPhys(), static_cast<uint32_t>(queue.lastProgram().size()));

  std::vector<int8_t> cPacked(size_t(p.m) * p.n);
  VTABufferCopy(cBuf.handle, 0, cPacked.data(), 0, cPacked.size(), VTA_MEMCPY_D2H);
  checkRuntime("VTABufferCopy");
  auto expect = referenceGemm(p, a, b);

  WorkloadResult r;
  r.counters = ran;
  r.deviceSeconds = ranSeconds;
  r.macs = uint64_t(p.m) * p.n * p.k;
  r.tiling = "tiles of " + std::to_string(TB * B) + "x" + std::to_string(TO * BO) + "x" + std::to_string(TK * BI) +
             " (m x n x k), " + (p.doubleBuffer ? "double" : "single") + "-buffered";
  for (int i = 0; i < p.m; ++i)
    for (int j = 0; j < p.n; ++j) {
      int8_t got = cPacked[((size_t(i / B) * NO + j / BO) * B + i % B) * BO + j % BO];
      int8_t want = expect[size_t(i) * p.n + j];
      if (got != want && r.mismatches++ == 0)
        r.firstMismatch = "C[" + std::to_string(i) + "][" + std::to_string(j) + "]: got " + std::to_string(got) +
                          ", expected " + std::to_string(want);
    }
  r.correct = r.mismatches == 0;
  return r;
}


WorkloadResult runConv3x3(const ConvProblem& p, const RerunHook& rerun) {
  Session& session = Session::global();
  const hw::Config& cfg = session.config();
  const int B = cfg.batch, BI = cfg.blockIn, BO = cfg.blockOut;
  const int H = p.height, W = p.width;
  if (H <= 0 || W <= 0 || p.inChannels <= 0 || p.outChannels <= 0 || p.inChannels % BI || p.outChannels % BO)
    throw Error("conv3x3", "sizes must be positive, channels multiples of BLOCK_IN=" + std::to_string(BI) +
                               " and BLOCK_OUT=" + std::to_string(BO));
  const int CIB = p.inChannels / BI, COB = p.outChannels / BO;
  const int inpHalf = static_cast<int>(cfg.inpDepth) / 2, wgtHalf = static_cast<int>(cfg.wgtDepth) / 2;
  const int accHalf = static_cast<int>(cfg.accDepth) / 2;
  if ((W + 2) * 3 > inpHalf || W > accHalf || 9 > wgtHalf)
    throw Error("conv3x3", "width " + std::to_string(W) + " does not fit the on-chip buffers of config " + cfg.name);
  const int TCO = divisorAtMost(COB, std::min(wgtHalf / 9, std::min(accHalf / W, static_cast<int>(cfg.uopDepth / 2) / W)));
  int TH = 1;
  for (int d = H; d >= 1; --d)
    if (H % d == 0 && (d + 2) * (W + 2) <= inpHalf && TCO * d * W <= accHalf) { TH = d; break; }

  std::mt19937 rng(p.seed);
  std::uniform_int_distribution<int> dist(-128, 127);
  // in[b][c][y][x], w[o][c][ky][kx]
  std::vector<int8_t> in(size_t(B) * p.inChannels * H * W), w(size_t(p.outChannels) * p.inChannels * 9);
  for (auto& v : in) v = static_cast<int8_t>(dist(rng));
  for (auto& v : w) v = static_cast<int8_t>(dist(rng));
  std::vector<int8_t> inPacked(in.size()), wPacked(w.size());
  for (int b = 0; b < B; ++b)
    for (int c = 0; c < p.inChannels; ++c)
      for (int y = 0; y < H; ++y)
        for (int x = 0; x < W; ++x)  // [CIB][H][W][B][BI]
          inPacked[((((size_t(c / BI) * H + y) * W + x) * B + b) * BI) + c % BI] =
              in[((size_t(b) * p.inChannels + c) * H + y) * W + x];
  for (int o = 0; o < p.outChannels; ++o)
    for (int c = 0; c < p.inChannels; ++c)
      for (int k = 0; k < 9; ++k)  // [COB][CIB][3][3][BO][BI]
        wPacked[(((size_t(o / BO) * CIB + c / BI) * 9 + k) * BO + o % BO) * BI + c % BI] =
            w[(size_t(o) * p.inChannels + c) * 9 + k];

  Buffer inBuf(inPacked.size()), wBuf(wPacked.size()), outBuf(size_t(B) * p.outChannels * H * W);
  VTABufferCopy(inPacked.data(), 0, inBuf.handle, 0, inPacked.size(), VTA_MEMCPY_H2D);
  VTABufferCopy(wPacked.data(), 0, wBuf.handle, 0, wPacked.size(), VTA_MEMCPY_H2D);
  checkRuntime("VTABufferCopy");

  VTACommandHandle cmd = VTATLSCommandHandle();
  auto& queue = session.threadQueue();
  hw::Counters before = queue.device().counters();
  double secondsBefore = queue.totalRunSeconds();
  void* convHandle = nullptr;
  void* resetHandle = nullptr;
  void* aluHandle = nullptr;
  int step = 0, tile = 0;
  const uint32_t accTile = static_cast<uint32_t>(TH * W);
  for (int ct = 0; ct < COB / TCO; ++ct) {
    for (int yt = 0; yt < H / TH; ++yt, ++tile) {
      const uint32_t accBase = static_cast<uint32_t>((tile % 2) * accHalf);
      if (tile >= 2) VTADepPop(cmd, VTA_STAGE_STORE, VTA_STAGE_COMPUTE);
      KernelSig rs = sig(1);
      rs.accBase = accBase;
      rs.tb = static_cast<uint32_t>(TCO * TH);
      rs.to = static_cast<uint32_t>(W);
      VTAPushGEMMOp(&resetHandle, recordKernel, &rs, sizeof rs);
      const int y0 = yt * TH;
      const int yFirst = std::max(y0 - 1, 0), yEnd = std::min(y0 + TH + 1, H);
      for (int ci = 0; ci < CIB; ++ci, ++step) {
        const uint32_t inpBase = static_cast<uint32_t>((step % 2) * inpHalf);
        const uint32_t wgtBase = static_cast<uint32_t>((step % 2) * wgtHalf);
        if (step >= 2) VTADepPop(cmd, VTA_STAGE_COMPUTE, VTA_STAGE_LOAD);
        VTALoadBuffer2D(cmd, inBuf.handle, static_cast<uint32_t>((ci * H + yFirst) * W), static_cast<uint32_t>(W),
                        static_cast<uint32_t>(yEnd - yFirst), static_cast<uint32_t>(W), 1, y0 == 0 ? 1 : 0, 1,
                        y0 + TH == H ? 1 : 0, inpBase, 2);
        VTALoadBuffer2D(cmd, wBuf.handle, static_cast<uint32_t>((ct * TCO * CIB + ci) * 9), 9,
                        static_cast<uint32_t>(TCO), static_cast<uint32_t>(CIB * 9), 0, 0, 0, 0, wgtBase, 1);
        VTADepPush(cmd, VTA_STAGE_LOAD, VTA_STAGE_COMPUTE);
        VTADepPop(cmd, VTA_STAGE_LOAD, VTA_STAGE_COMPUTE);
        for (uint32_t ky = 0; ky < 3; ++ky) {
          KernelSig cs = sig(5);
          cs.accBase = accBase;
          cs.inpBase = inpBase;
          cs.wgtBase = wgtBase;
          cs.to = static_cast<uint32_t>(TCO);
          cs.width = static_cast<uint32_t>(W);
          cs.rows = static_cast<uint32_t>(TH);
          cs.ky = ky;
          cs.accTile = accTile;
          VTAPushGEMMOp(&convHandle, recordKernel, &cs, sizeof cs);
        }
        VTADepPush(cmd, VTA_STAGE_COMPUTE, VTA_STAGE_LOAD);
        checkRuntime("conv3x3 step");
      }
      pushRequantize(&aluHandle, accBase, static_cast<uint32_t>(TCO * TH), static_cast<uint32_t>(W), p.shift, true);
      VTADepPush(cmd, VTA_STAGE_COMPUTE, VTA_STAGE_STORE);
      VTADepPop(cmd, VTA_STAGE_COMPUTE, VTA_STAGE_STORE);
      for (int co = 0; co < TCO; ++co)
        VTAStoreBuffer2D(cmd, accBase + co * accTile, 4, outBuf.handle,
                         static_cast<uint32_t>(((ct * TCO + co) * H + y0) * W), static_cast<uint32_t>(W),
                         static_cast<uint32_t>(TH), static_cast<uint32_t>(W));
      VTADepPush(cmd, VTA_STAGE_STORE, VTA_STAGE_COMPUTE);
      checkRuntime("conv3x3 epilogue");
    }
  }
  for (int i = 0; i < std::min(step, 2); ++i) VTADepPop(cmd, VTA_STAGE_COMPUTE, VTA_STAGE_LOAD);
  for (int i = 0; i < std::min(tile, 2); ++i) VTADepPop(cmd, VTA_STAGE_STORE, VTA_STAGE_COMPUTE);
  VTASynchronize(cmd, 1u << 31);
  checkRuntime("VTASynchronize");
  // Counters and time of this workload's own run, before any re-runs.
  const hw::Counters ran = queue.device().counters().since(before);
  const double ranSeconds = queue.totalRunSeconds() - secondsBefore;
  if (rerun) rerun(queue.device(), queue.lastProgramPhys(), static_cast<uint32_t>(queue.lastProgram().size()));

  std::vector<int8_t> outPacked(size_t(B) * p.outChannels * H * W);
  VTABufferCopy(outBuf.handle, 0, outPacked.data(), 0, outPacked.size(), VTA_MEMCPY_D2H);
  checkRuntime("VTABufferCopy");

  WorkloadResult r;
  r.counters = ran;
  r.deviceSeconds = ranSeconds;
  r.macs = uint64_t(B) * p.outChannels * H * W * p.inChannels * 9;
  r.tiling = "tiles of " + std::to_string(TCO * BO) + " output channels x " + std::to_string(TH) + " rows x " +
             std::to_string(W) + " columns, double-buffered";
  for (int b = 0; b < B; ++b)
    for (int o = 0; o < p.outChannels; ++o)
      for (int y = 0; y < H; ++y)
        for (int x = 0; x < W; ++x) {
          int32_t sum = 0;
          for (int c = 0; c < p.inChannels; ++c)
            for (int ky = 0; ky < 3; ++ky)
              for (int kx = 0; kx < 3; ++kx) {
                int iy = y + ky - 1, ix = x + kx - 1;
                if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                sum += int32_t(in[((size_t(b) * p.inChannels + c) * H + iy) * W + ix]) *
                       int32_t(w[(size_t(o) * p.inChannels + c) * 9 + ky * 3 + kx]);
              }
          int8_t want = static_cast<int8_t>(clip8(referenceAlu(3, sum, p.shift)));
          int8_t got = outPacked[((((size_t(o / BO) * H + y) * W + x) * B + b) * BO) + o % BO];
          if (got != want && r.mismatches++ == 0)
            r.firstMismatch = "out[" + std::to_string(b) + "][" + std::to_string(o) + "][" + std::to_string(y) + "][" +
                              std::to_string(x) + "]: got " + std::to_string(got) + ", expected " + std::to_string(want);
        }
  r.correct = r.mismatches == 0;
  return r;
}

WorkloadResult runAluTest(const AluProblem& p) {
  Session& session = Session::global();
  const hw::Config& cfg = session.config();
  const int lanes = cfg.batch * cfg.blockOut;
  if (p.op > 4) throw Error("ALU test", "invalid opcode " + std::to_string(p.op));
  if (p.rows <= 0 || uint32_t(p.rows) * 2 > cfg.accDepth)
    throw Error("ALU test", "rows must be in [1, " + std::to_string(cfg.accDepth / 2) + "]");
  if (p.useImm && (p.imm < -32768 || p.imm > 32767)) throw Error("ALU test", "immediate does not fit 16 bits");

  std::mt19937 rng(p.seed);
  // Operand ranges that exercise the interesting cases of each operation.
  std::uniform_int_distribution<int32_t> wide(-(1 << 20), 1 << 20);
  std::uniform_int_distribution<int32_t> shift(-12, 12), small(-300, 300);
  const size_t n = size_t(p.rows) * lanes;
  std::vector<int32_t> a(n), b(n);
  for (auto& v : a) v = p.op == 4 ? small(rng) : wide(rng);
  for (auto& v : b) v = p.op == 3 ? shift(rng) : p.op == 4 ? small(rng) : wide(rng);

  Buffer aBuf(n * 4), bBuf(n * 4), outBuf(n);
  VTABufferCopy(a.data(), 0, aBuf.handle, 0, n * 4, VTA_MEMCPY_H2D);
  VTABufferCopy(b.data(), 0, bBuf.handle, 0, n * 4, VTA_MEMCPY_H2D);
  checkRuntime("VTABufferCopy");
  VTACommandHandle cmd = VTATLSCommandHandle();
  const uint32_t rows = static_cast<uint32_t>(p.rows);
  VTALoadBuffer2D(cmd, aBuf.handle, 0, rows, 1, rows, 0, 0, 0, 0, 0, 3);
  if (!p.useImm) VTALoadBuffer2D(cmd, bBuf.handle, 0, rows, 1, rows, 0, 0, 0, 0, rows, 3);
  void* handle = nullptr;
  KernelSig s = sig(p.uopCompression ? 2 : 3);
  // Compressed: a single micro-op walked over the rows by a loop; otherwise one micro-op per row.
  s.tb = p.uopCompression ? rows : 1;
  s.to = p.uopCompression ? 1 : rows;
  s.accBase = 0;
  s.srcBase = rows;
  s.aluOp = p.op;
  s.useImm = p.useImm;
  s.imm = p.imm;
  VTAPushALUOp(&handle, recordKernel, &s, sizeof s);
  VTADepPush(cmd, VTA_STAGE_COMPUTE, VTA_STAGE_STORE);
  VTADepPop(cmd, VTA_STAGE_COMPUTE, VTA_STAGE_STORE);
  VTAStoreBuffer2D(cmd, 0, 4, outBuf.handle, 0, rows, 1, rows);
  VTASynchronize(cmd, 1u << 31);
  checkRuntime("ALU test");

  std::vector<int8_t> out(n);
  VTABufferCopy(outBuf.handle, 0, out.data(), 0, n, VTA_MEMCPY_D2H);
  WorkloadResult r;
  for (size_t i = 0; i < n; ++i) {
    int8_t want = static_cast<int8_t>(referenceAlu(p.op, a[i], p.useImm ? p.imm : b[i]));
    if (out[i] != want && r.mismatches++ == 0)
      r.firstMismatch = "element " + std::to_string(i) + ": got " + std::to_string(out[i]) + ", expected " +
                        std::to_string(want) + " (a=" + std::to_string(a[i]) +
                        ", b=" + std::to_string(p.useImm ? p.imm : b[i]) + ")";
  }
  r.correct = r.mismatches == 0;
  r.counters = session.threadQueue().device().counters();
  return r;
}

}  // namespace tessera::sw
