// Stream generator: programs in the shape of TVM's VTA flow (per-row ALU kernels, many small loads,
// long GEMM micro-op kernels), built with VTA's runtime rules for dependency flags and micro-op caching.
#include "tessera/streams/streams.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>

#include "tessera/hw/dep_stream.h"
#include "tessera/support/error.h"
#include "tessera/hw/program.h"
#include "tessera/regress/rng.h"
#include "tessera/support/format.h"

namespace tessera::streams {

namespace {

using hw::AluOp;
using hw::Insn;
using hw::MemId;
using hw::Opcode;
using hw::Stage;
using hw::Uop;

constexpr uint64_t kPage = 4096;

uint64_t alignUp(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }
// FNV-1a: the shape's name in the seed, the same on every platform (std::hash is not).
uint64_t nameHash(const std::string& s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}
uint32_t ceilDiv(uint32_t a, uint32_t b) { return (a + b - 1) / b; }

// [bgn, end) of a micro-op kernel in the micro-op SRAM.
struct UopRange {
  uint32_t bgn = 0, end = 0;
};

// Builds one stream: DRAM regions in allocation order from 0x1000 (data and outputs first, then
// the micro-ops staged while instructions are emitted, then the instructions), VTA's folding of
// dependency flags, and VTA's runtime micro-op cache (a kernel stays in the micro-op SRAM until a
// later one overlaps it; a kernel not resident is loaded by a LOAD.UOP just before its use).
class Builder {
 public:
  Builder(const hw::Config& cfg, const std::string& shape, uint64_t seed, double scale)
      : cfg(cfg), isa(cfg), rng(seed ^ nameHash(shape)),
        ds(hw::DependencyStream::Folding::kVtaRuntime) {
    out.cfg = cfg;
    out.shape = shape;
    out.seed = seed;
    out.scale = scale;
  }

  const hw::Config cfg;
  hw::Isa isa;
  regress::Rng rng;
  hw::DependencyStream ds;
  Stream out;

  uint64_t elemBytes(MemId id) const { return static_cast<uint64_t>(cfg.dramElemBytes(id)); }

  // A data region of `entries` elements of `id`, random contents.
  uint64_t data(const std::string& name, MemId id, uint64_t entries) {
    const uint64_t bytes = entries * elemBytes(id);
    Region r{name, reserve(bytes), std::vector<uint8_t>(bytes)};
    if (id == MemId::kAcc) {
      // Accumulator-range values, not full 32-bit noise: sums and shifts stay meaningful.
      for (uint64_t i = 0; i + 4 <= bytes; i += 4) {
        const int32_t v = static_cast<int32_t>(rng.srange(-(1 << 14), 1 << 14));
        std::memcpy(&r.bytes[i], &v, 4);
      }
    } else {
      for (uint64_t i = 0; i < bytes; i += 8) {
        const uint64_t w = rng.next();
        std::memcpy(&r.bytes[i], &w, std::min<uint64_t>(8, bytes - i));
      }
    }
    out.regions.push_back(std::move(r));
    return out.regions.back().base;
  }

  // An output range of `entries` OUT elements (not a region: the program writes all of it).
  uint64_t output(const std::string& name, uint64_t entries) {
    const uint64_t bytes = entries * elemBytes(MemId::kOut);
    out.outputs.push_back({name, reserve(bytes), bytes});
    return out.outputs.back().base;
  }

  uint32_t dramIndex(MemId id, uint64_t phys) const {
    const uint64_t eb = elemBytes(id);
    if (phys % eb) throw Error("stream generator", "a region is not aligned to its element");
    return static_cast<uint32_t>(phys / eb);
  }

  // --- Micro-op kernels ------------------------------------------------------------------------

  // A kernel with the same micro-ops as an earlier one is the same kernel (cached), unless
  // `unique`: then it is staged again, as a toolchain that stages one kernel per instruction does.
  // `slot` > size pads its staging in DRAM to that many micro-ops.
  UopRange kernel(const std::vector<Uop>& uops, bool unique = false, uint32_t slot = 0) {
    if (uops.empty() || uops.size() > cfg.uopDepth) throw Error("stream generator", "kernel size out of range");
    std::vector<uint32_t> enc;
    enc.reserve(uops.size());
    for (const Uop& u : uops) enc.push_back(isa.encodeUop(u, "stream generator kernel"));
    int id = -1;
    if (!unique) {
      auto it = kernelIds_.find(enc);
      if (it != kernelIds_.end()) id = it->second;
    }
    if (id < 0) {
      id = static_cast<int>(kernels_.size());
      kernels_.push_back({enc, stage(enc, slot), 0, 0, false});
      if (!unique) kernelIds_[enc] = id;
    }
    Kernel& k = kernels_[static_cast<size_t>(id)];
    if (!k.resident) {
      const uint32_t n = static_cast<uint32_t>(enc.size());
      const uint32_t bgn = uopSramEnd_ + n <= cfg.uopDepth ? uopSramEnd_ : 0;
      for (int other : resident_) {
        Kernel& o = kernels_[static_cast<size_t>(other)];
        if (o.resident && o.sramBgn < bgn + n && bgn < o.sramEnd) o.resident = false;
      }
      resident_.erase(std::remove_if(resident_.begin(), resident_.end(),
                                     [&](int r) { return !kernels_[static_cast<size_t>(r)].resident; }),
                      resident_.end());
      k.sramBgn = bgn;
      k.sramEnd = bgn + n;
      k.resident = true;
      resident_.push_back(id);
      uopSramEnd_ = bgn + n;
      Insn& ld = ds.append(Stage::kCompute);
      ld.opcode = Opcode::kLoad;
      ld.memType = static_cast<uint32_t>(MemId::kUop);
      ld.sramBase = bgn;
      ld.dramBase = k.dramIndex;  // plus the staging region's base, known once all data is placed
      uopLoads_.push_back(ds.insns().size() - 1);
      ld.ySize = 1;
      ld.xSize = n;
      ld.xStride = n;
    }
    return {k.sramBgn, k.sramEnd};
  }

  // --- Instructions ----------------------------------------------------------------------------

  Insn& load(MemId id, uint32_t sram, uint64_t phys, uint32_t y, uint32_t x, uint32_t stride, uint32_t yPad0 = 0,
             uint32_t yPad1 = 0, uint32_t xPad0 = 0, uint32_t xPad1 = 0) {
    const Stage st = id == MemId::kInp || id == MemId::kWgt ? Stage::kLoad : Stage::kCompute;
    Insn& in = ds.append(st);
    in.opcode = Opcode::kLoad;
    in.memType = static_cast<uint32_t>(id);
    in.sramBase = sram;
    in.dramBase = dramIndex(id, phys);
    in.ySize = y;
    in.xSize = x;
    in.xStride = stride;
    in.yPad0 = yPad0;
    in.yPad1 = yPad1;
    in.xPad0 = xPad0;
    in.xPad1 = xPad1;
    return in;
  }

  struct Loops {
    uint32_t iterOut = 1, iterIn = 1;
    uint32_t dstOut = 0, dstIn = 0, srcOut = 0, srcIn = 0, wgtOut = 0, wgtIn = 0;
  };

  Insn& gemm(bool reset, UopRange k, const Loops& l) {
    Insn& in = ds.append(Stage::kCompute);
    in.opcode = Opcode::kGemm;
    in.reset = reset;
    setLoops(in, k, l);
    in.wgtFactorOut = l.wgtOut;
    in.wgtFactorIn = l.wgtIn;
    return in;
  }

  Insn& alu(AluOp op, UopRange k, const Loops& l, bool useImm = false, int32_t imm = 0) {
    Insn& in = ds.append(Stage::kCompute);
    in.opcode = Opcode::kAlu;
    in.aluOp = static_cast<uint32_t>(op);
    in.useImm = useImm;
    in.imm = imm;
    setLoops(in, k, l);
    return in;
  }

  Insn& store(uint32_t sram, uint64_t phys, uint32_t y, uint32_t x, uint32_t stride) {
    Insn& in = ds.append(Stage::kStore);
    in.opcode = Opcode::kStore;
    in.memType = static_cast<uint32_t>(MemId::kOut);
    in.sramBase = sram;
    in.dramBase = dramIndex(MemId::kOut, phys);
    in.ySize = y;
    in.xSize = x;
    in.xStride = stride;
    return in;
  }

  // Tiles that compute writes into one of `buffers` accumulator buffers and the store stage
  // drains: compute waits for the store of the tile that last used the buffer (VTA's s2g token).
  struct StorePipe {
    uint32_t buffers = 2;
    uint64_t tiles = 0;
  };
  void beginTile(StorePipe& p) {
    if (p.tiles >= p.buffers) ds.pop(Stage::kStore, Stage::kCompute);
  }
  template <typename F>
  void endTile(StorePipe& p, F emitStores) {
    ds.push(Stage::kCompute, Stage::kStore);
    ds.pop(Stage::kCompute, Stage::kStore);
    emitStores();
    ds.push(Stage::kStore, Stage::kCompute);
    ++p.tiles;
  }
  void drain(StorePipe& p) {
    for (uint64_t i = 0; i < std::min<uint64_t>(p.tiles, p.buffers); ++i) ds.pop(Stage::kStore, Stage::kCompute);
    p.tiles = 0;
  }

  // Tiles the load stage brings into one of `buffers` INP/WGT buffers for compute: the load stage
  // waits for compute to release the buffer (g2l), compute waits for the data (l2g).
  struct LoadPipe {
    uint32_t buffers = 2;
    uint64_t tiles = 0;
  };
  void beginLoads(LoadPipe& p) {
    if (p.tiles >= p.buffers) ds.pop(Stage::kCompute, Stage::kLoad);
  }
  void endLoads(LoadPipe& p) {
    ds.push(Stage::kLoad, Stage::kCompute);
    ds.pop(Stage::kLoad, Stage::kCompute);
    ++p.tiles;
  }
  void release(LoadPipe&) { ds.push(Stage::kCompute, Stage::kLoad); }
  void drain(LoadPipe& p) {
    for (uint64_t i = 0; i < std::min<uint64_t>(p.tiles, p.buffers); ++i) ds.pop(Stage::kCompute, Stage::kLoad);
    ds.commitPops(Stage::kLoad);
    p.tiles = 0;
  }

  // VTASynchronize's ending: FINISH after the last load and store, then the DRAM images.
  Stream finish() {
    ds.push(Stage::kStore, Stage::kCompute);
    ds.push(Stage::kLoad, Stage::kCompute);
    ds.pop(Stage::kStore, Stage::kCompute);
    ds.pop(Stage::kLoad, Stage::kCompute);
    ds.commitPops(Stage::kCompute);
    ds.append(Stage::kCompute).opcode = Opcode::kFinish;

    out.insns = ds.insns();
    if (!staged_.empty()) {
      Region r{"uops", next_, std::vector<uint8_t>(staged_.size() * 4)};
      std::memcpy(r.bytes.data(), staged_.data(), r.bytes.size());
      for (size_t i : uopLoads_) out.insns[i].dramBase += dramIndex(MemId::kUop, r.base);
      next_ = alignUp(r.base + r.bytes.size(), kPage);
      out.regions.push_back(std::move(r));
    }
    Region insns{"insns", next_, std::vector<uint8_t>(out.insns.size() * 16)};
    for (size_t i = 0; i < out.insns.size(); ++i) {
      const std::string where = "stream " + out.shape + ", " + hw::insnName(i, out.insns[i]);
      isa.validate(out.insns[i], i);
      hw::Isa::rawToBytes(isa.encode(out.insns[i], where), &insns.bytes[16 * i]);
    }
    out.regions.push_back(std::move(insns));
    return std::move(out);
  }

 private:
  struct Kernel {
    std::vector<uint32_t> enc;
    uint32_t dramIndex;  // micro-op index in the staging region
    uint32_t sramBgn, sramEnd;
    bool resident;
  };

  uint64_t reserve(uint64_t bytes) {
    const uint64_t base = next_;
    next_ = alignUp(next_ + std::max<uint64_t>(bytes, 1), kPage);
    if (next_ > (uint64_t(1) << 32)) throw Error("stream generator", "the stream's DRAM images pass 4 GiB");
    return base;
  }

  uint32_t stage(const std::vector<uint32_t>& enc, uint32_t slot) {
    const uint32_t at = static_cast<uint32_t>(staged_.size());
    staged_.insert(staged_.end(), enc.begin(), enc.end());
    // Padding of a slot: micro-ops of an unrelated kernel, never loaded.
    for (uint32_t i = static_cast<uint32_t>(enc.size()); i < slot; ++i)
      staged_.push_back(isa.encodeUop(Uop{static_cast<uint32_t>(rng.range(0, cfg.accDepth - 1)),
                                          static_cast<uint32_t>(rng.range(0, cfg.accDepth - 1)), 0}));
    return at;
  }

  static void setLoops(Insn& in, UopRange k, const Loops& l) {
    in.uopBgn = k.bgn;
    in.uopEnd = k.end;
    in.iterOut = l.iterOut;
    in.iterIn = l.iterIn;
    in.dstFactorOut = l.dstOut;
    in.dstFactorIn = l.dstIn;
    in.srcFactorOut = l.srcOut;
    in.srcFactorIn = l.srcIn;
  }

  uint64_t next_ = kPage;
  std::vector<uint32_t> staged_;
  std::vector<size_t> uopLoads_;  // LOAD.UOPs, whose dram_base is relative to the staging region until finish()
  std::vector<Kernel> kernels_;
  std::map<std::vector<uint32_t>, int> kernelIds_;
  std::vector<int> resident_;
  uint32_t uopSramEnd_ = 0;
};

// ---- Operators in TVM's VTA style ----------------------------------------------------------------

// The requantization epilogue: (acc >> shift) clipped to int8, optionally after a ReLU.
void requantize(Builder& b, uint32_t base, uint32_t rows, uint32_t rowPitch, uint32_t cols, uint32_t shift, bool relu) {
  const UopRange k = b.kernel({Uop{base, base, 0}});
  Builder::Loops l;
  l.iterOut = rows;
  l.dstOut = l.srcOut = rowPitch;
  l.iterIn = cols;
  l.dstIn = l.srcIn = 1;
  b.alu(AluOp::kShr, k, l, true, static_cast<int32_t>(shift));
  b.alu(AluOp::kMax, k, l, true, relu ? 0 : -128);
  b.alu(AluOp::kMin, k, l, true, 127);
}

// A 2D convolution (stride 1, no padding) on int8 activations [cib][H][W] and weights
// [cob][cib][k][k]: weights loaded once, output rows in bands, input bands double-buffered through
// the load stage, accumulators double-buffered against the store stage. One GEMM per band walks
// the band's rows and columns in its two loops over a micro-op kernel of cob*cib*k*k micro-ops.
void conv2d(Builder& b, const std::string& name, uint32_t cin, uint32_t cout, uint32_t h, uint32_t w, uint32_t k) {
  const hw::Config& c = b.cfg;
  const uint32_t cib = ceilDiv(cin, static_cast<uint32_t>(c.blockIn)), cob = ceilDiv(cout, static_cast<uint32_t>(c.blockOut));
  const uint32_t ho = h - k + 1, wo = w - k + 1;
  uint32_t band = 4;
  while (band > 1 && (2 * cib * (band + k - 1) * w > c.inpDepth || 2 * cob * band * wo > c.accDepth)) --band;
  if (cob * cib * k * k > c.wgtDepth || cob * cib * k * k > c.uopDepth / 2 || 2 * cib * k * w > c.inpDepth)
    throw Error("stream generator", name + " does not fit config " + c.name);
  const uint64_t inp = b.data(name + "-inp", MemId::kInp, uint64_t(cib) * h * w);
  const uint64_t wgt = b.data(name + "-wgt", MemId::kWgt, uint64_t(cob) * cib * k * k);
  const uint64_t outp = b.output(name + "-out", uint64_t(cob) * ho * wo);
  const uint32_t rowsIn = band + k - 1, inBuf = cib * rowsIn * w, accBuf = cob * band * wo;
  const uint32_t wgtBase = 0;  // weights at the bottom of the weight SRAM, loaded once

  // Weights once, before the first band; compute waits for them with the first band's data.
  Builder::LoadPipe lp;
  Builder::StorePipe sp;
  b.load(MemId::kWgt, wgtBase, wgt, 1, cob * cib * k * k, cob * cib * k * k);
  for (uint32_t r0 = 0, t = 0; r0 < ho; r0 += band, ++t) {
    const uint32_t rows = std::min(band, ho - r0), buf = t % 2;
    b.beginLoads(lp);
    for (uint32_t ci = 0; ci < cib; ++ci)
      b.load(MemId::kInp, buf * inBuf + ci * rowsIn * w, inp + (uint64_t(ci) * h + r0) * w * b.elemBytes(MemId::kInp),
             rows + k - 1, w, w);
    b.endLoads(lp);
    b.beginTile(sp);
    const uint32_t acc = buf * accBuf;
    std::vector<Uop> reset, mac;
    for (uint32_t co = 0; co < cob; ++co) {
      reset.push_back(Uop{acc + co * band * wo, 0, 0});
      for (uint32_t ci = 0; ci < cib; ++ci)
        for (uint32_t ky = 0; ky < k; ++ky)
          for (uint32_t kx = 0; kx < k; ++kx)
            mac.push_back(Uop{acc + co * band * wo, buf * inBuf + ci * rowsIn * w + ky * w + kx,
                              wgtBase + ((co * cib + ci) * k + ky) * k + kx});
    }
    Builder::Loops l;
    l.iterOut = rows;
    l.dstOut = wo;
    l.srcOut = w;
    l.iterIn = wo;
    l.dstIn = l.srcIn = 1;
    b.gemm(true, b.kernel(reset), l);
    b.gemm(false, b.kernel(mac), l);
    b.release(lp);
    for (uint32_t co = 0; co < cob; ++co) requantize(b, acc + co * band * wo, rows, wo, wo, 6, true);
    b.endTile(sp, [&] {
      for (uint32_t co = 0; co < cob; ++co)
        b.store(acc + co * band * wo, outp + (uint64_t(co) * ho + r0) * wo * b.elemBytes(MemId::kOut), rows, wo, wo);
    });
  }
  b.drain(lp);
  b.drain(sp);
}

// A dense layer: int8 x [m][cib] times weights [cob][cib], requantized (with a ReLU if asked). The
// inputs are loaded once; the outputs come in chunks of output blocks whose weights fit half the
// weight SRAM, double-buffered through the load stage.
void dense(Builder& b, const std::string& name, uint32_t rowsTotal, uint32_t cin, uint32_t cout, bool relu) {
  const hw::Config& c = b.cfg;
  const uint32_t cib = ceilDiv(cin, static_cast<uint32_t>(c.blockIn)), cob = ceilDiv(cout, static_cast<uint32_t>(c.blockOut));
  const uint32_t m = ceilDiv(rowsTotal, static_cast<uint32_t>(c.batch));
  uint32_t chunk = cob;
  while (chunk > 1 && (2 * chunk * cib > c.wgtDepth || chunk * cib > c.uopDepth / 4 || 2 * m * chunk > c.accDepth)) --chunk;
  if (2 * chunk * cib > c.wgtDepth || chunk * cib > c.uopDepth / 4 || 2 * m * chunk > c.accDepth || m * cib > c.inpDepth)
    throw Error("stream generator", name + " does not fit config " + c.name);
  const uint64_t inp = b.data(name + "-inp", MemId::kInp, uint64_t(m) * cib);
  const uint64_t wgt = b.data(name + "-wgt", MemId::kWgt, uint64_t(cob) * cib);
  const uint64_t outp = b.output(name + "-out", uint64_t(m) * cob);
  Builder::LoadPipe lp;
  Builder::StorePipe sp;
  b.load(MemId::kInp, 0, inp, 1, m * cib, m * cib);
  for (uint32_t co0 = 0, t = 0; co0 < cob; co0 += chunk, ++t) {
    const uint32_t cc = std::min(chunk, cob - co0), wBuf = (t % 2) * chunk * cib, acc = (t % 2) * m * chunk;
    b.beginLoads(lp);
    b.load(MemId::kWgt, wBuf, wgt + uint64_t(co0) * cib * b.elemBytes(MemId::kWgt), 1, cc * cib, cc * cib);
    b.endLoads(lp);
    b.beginTile(sp);
    std::vector<Uop> reset, mac;
    for (uint32_t co = 0; co < cc; ++co) {
      reset.push_back(Uop{acc + co, 0, 0});
      for (uint32_t ci = 0; ci < cib; ++ci) mac.push_back(Uop{acc + co, ci, wBuf + co * cib + ci});
    }
    Builder::Loops l;
    l.iterOut = m;
    l.dstOut = cc;
    l.srcOut = cib;
    b.gemm(true, b.kernel(reset), l);
    b.gemm(false, b.kernel(mac), l);
    b.release(lp);
    requantize(b, acc, m, cc, cc, 7, relu);
    b.endTile(sp, [&] { b.store(acc, outp + uint64_t(co0) * b.elemBytes(MemId::kOut), m, cc, cob); });
  }
  b.drain(lp);
  b.drain(sp);
}

// Max pooling of int8 activations [cb][H][W] (loaded with LOAD.ACC_8BIT), fused with a ReLU
// (outputs start at zero), lowered as other toolchains do: separable, one ALU instruction per row
// with a micro-op per window position and a loop over the row's outputs. Per band of output rows:
// the input rows, a horizontal pass per input row into a temporary, a vertical pass per output row.
// `uniqueKernels` stages every row kernel by itself (slot micro-ops apart) and loads it before its
// ALU, as a toolchain without kernel reuse across rows does.
struct PoolParams {
  uint32_t cb = 1, h = 8, w = 8, k = 2, stride = 2, band = 8;
  bool uniqueKernels = false;
  uint32_t slot = 0;
};

void maxpool(Builder& b, const std::string& name, const PoolParams& p) {
  const hw::Config& c = b.cfg;
  const uint32_t ho = (p.h - p.k) / p.stride + 1, wo = (p.w - p.k) / p.stride + 1;
  uint32_t band = std::min(p.band, ho);
  auto rowsIn = [&](uint32_t rows) { return (rows - 1) * p.stride + p.k; };
  auto footprint = [&](uint32_t rows) { return 2 * (rowsIn(rows) * p.w + rowsIn(rows) * wo + rows * wo); };
  while (band > 1 && footprint(band) > c.accDepth) --band;
  if (footprint(band) > c.accDepth) throw Error("stream generator", name + " does not fit config " + c.name);
  const uint64_t inp = b.data(name + "-inp", MemId::kAcc8, uint64_t(p.cb) * p.h * p.w);
  const uint64_t outp = b.output(name + "-out", uint64_t(p.cb) * ho * wo);
  const uint32_t inSize = rowsIn(band) * p.w, tmpSize = rowsIn(band) * wo, outSize = band * wo;
  const uint32_t setSize = inSize + tmpSize + outSize;
  Builder::StorePipe sp;
  for (uint32_t cbi = 0, t = 0; cbi < p.cb; ++cbi)
    for (uint32_t r0 = 0; r0 < ho; r0 += band, ++t) {
      const uint32_t rows = std::min(band, ho - r0), nIn = rowsIn(rows);
      const uint32_t in = (t % 2) * setSize, tmp = in + inSize, o = tmp + tmpSize;
      b.beginTile(sp);
      b.load(MemId::kAcc8, in, inp + (uint64_t(cbi) * p.h + r0 * p.stride) * p.w * b.elemBytes(MemId::kAcc8), nIn,
             p.w, p.w);
      Builder::Loops all;
      all.iterOut = nIn;
      all.dstOut = wo;
      all.iterIn = wo;
      all.dstIn = 1;
      b.gemm(true, b.kernel({Uop{tmp, 0, 0}}), all);
      all.iterOut = rows;
      b.gemm(true, b.kernel({Uop{o, 0, 0}}), all);
      Builder::Loops row;
      row.iterIn = wo;
      row.dstIn = 1;
      row.srcIn = p.stride;
      for (uint32_t y = 0; y < nIn; ++y) {  // horizontal: tmp[y][x] = max over dx of in[y][x*s + dx]
        std::vector<Uop> u;
        for (uint32_t dx = 0; dx < p.k; ++dx) u.push_back(Uop{tmp + y * wo, in + y * p.w + dx, 0});
        b.alu(AluOp::kMax, b.kernel(u, p.uniqueKernels, p.slot), row);
      }
      row.srcIn = 1;
      for (uint32_t r = 0; r < rows; ++r) {  // vertical: out[r][x] = max over dy of tmp[r*s + dy][x]
        std::vector<Uop> u;
        for (uint32_t dy = 0; dy < p.k; ++dy) u.push_back(Uop{o + r * wo, tmp + (r * p.stride + dy) * wo, 0});
        b.alu(AluOp::kMax, b.kernel(u, p.uniqueKernels, p.slot), row);
      }
      b.endTile(sp, [&] {
        b.store(o, outp + (uint64_t(cbi) * ho + r0) * wo * b.elemBytes(MemId::kOut), rows, wo, wo);
      });
    }
  b.drain(sp);
}

uint32_t scaled(uint32_t n, double scale) { return std::max<uint32_t>(1, static_cast<uint32_t>(std::lround(n * scale))); }

// ---- Shapes ---------------------------------------------------------------------------------------

// C = requant(A x B^T) for a 16x16x16 problem: one tile, about ten instructions.
void shapeMatmul(Builder& b) {
  dense(b, "matmul", scaled(16, b.out.scale), 16, 16, false);
}

// LeNet-5's layers (independent inputs): conv 1->6 5x5 on 32x32, max pooling 2x2, conv 6->16
// 5x5 on 14x14, max pooling, and the three dense layers.
void shapeLenet(Builder& b) {
  conv2d(b, "conv1", 1, 6, 32, 32, 5);
  PoolParams pool;
  pool.cb = ceilDiv(6, static_cast<uint32_t>(b.cfg.blockOut));
  pool.h = pool.w = 28;
  maxpool(b, "pool1", pool);
  conv2d(b, "conv2", 6, 16, 14, 14, 5);
  pool.cb = ceilDiv(16, static_cast<uint32_t>(b.cfg.blockOut));
  pool.h = pool.w = 10;
  maxpool(b, "pool2", pool);
  dense(b, "fc1", static_cast<uint32_t>(b.cfg.batch), 400, 120, true);
  dense(b, "fc2", static_cast<uint32_t>(b.cfg.batch), 120, 84, true);
  dense(b, "fc3", static_cast<uint32_t>(b.cfg.batch), 84, 10, false);
}

// One 3x3/2 max pooling of a 64-channel 18x18 tensor.
void shapeMaxpool(Builder& b) {
  PoolParams p;
  p.cb = ceilDiv(64, static_cast<uint32_t>(b.cfg.blockOut));
  p.h = p.w = 17;
  p.k = 3;
  p.stride = 2;
  maxpool(b, "maxpool", p);
}

// Max pooling over tall, narrow tensors with every row kernel staged and loaded by itself: about
// 268,000 instructions, half of them LOAD.UOPs of 2-4 micro-ops staged 24 bytes apart (3 MB).
void shapePoolRows(Builder& b) {
  const uint32_t kSizes[3] = {2, 3, 4};
  for (uint32_t layer = 0; layer < 3; ++layer) {
    PoolParams p;
    p.k = kSizes[layer];
    p.stride = 1;
    p.w = p.k + 3;  // four outputs per row
    p.band = 32;
    p.cb = 4;
    p.h = scaled(5184, b.out.scale) + p.k - 1;
    p.uniqueKernels = true;
    p.slot = 6;
    maxpool(b, "pool" + std::to_string(layer), p);
  }
}

// Elementwise C = clip((A + B) >> 1) on int32 tensors of 1.4 MB, one row per tile.
void shapeEltwiseAdd(Builder& b) {
  const hw::Config& c = b.cfg;
  const uint32_t cb = 4, h = scaled(215, b.out.scale), w = 26;
  const uint64_t entries = uint64_t(cb) * h * w;
  const uint64_t a = b.data("a", MemId::kAcc, entries), bb = b.data("b", MemId::kAcc, entries);
  const uint64_t outp = b.output("c", entries);
  if (4 * w > c.accDepth) throw Error("stream generator", "eltwise-add does not fit config " + c.name);
  Builder::StorePipe sp;
  const uint64_t accB = b.elemBytes(MemId::kAcc), outB = b.elemBytes(MemId::kOut);
  for (uint32_t row = 0; row < cb * h; ++row) {
    const uint32_t x = (row % 2) * 2 * w, y = x + w;
    b.beginTile(sp);
    b.load(MemId::kAcc, x, a + uint64_t(row) * w * accB, 1, w, w);
    b.load(MemId::kAcc, y, bb + uint64_t(row) * w * accB, 1, w, w);
    Builder::Loops l;
    l.iterIn = w;
    l.dstIn = l.srcIn = 1;
    b.alu(AluOp::kAdd, b.kernel({Uop{x, y, 0}}), l);
    requantize(b, x, 1, w, w, 1, false);
    b.endTile(sp, [&] { b.store(x, outp + uint64_t(row) * w * outB, 1, w, w); });
  }
  b.drain(sp);
}

// Elementwise C = clip((A * 77) >> 6) on an int8 tensor of 1.4 MB (LOAD.ACC_8BIT), tiles of
// three rows.
void shapeEltwiseMul(Builder& b) {
  const hw::Config& c = b.cfg;
  const uint32_t cb = 8, h = scaled(125, b.out.scale), w = 29, rows = 3;
  const uint64_t entries = uint64_t(cb) * h * w * rows;
  const uint64_t a = b.data("a", MemId::kAcc8, entries);
  const uint64_t outp = b.output("c", entries);
  if (2 * rows * w > c.accDepth) throw Error("stream generator", "eltwise-mul does not fit config " + c.name);
  Builder::StorePipe sp;
  const uint64_t inB = b.elemBytes(MemId::kAcc8), outB = b.elemBytes(MemId::kOut);
  for (uint32_t t = 0; t < cb * h; ++t) {
    const uint32_t x = (t % 2) * rows * w;
    const uint64_t first = uint64_t(t) * rows * w;
    b.beginTile(sp);
    b.load(MemId::kAcc8, x, a + first * inB, rows, w, w);
    Builder::Loops l;
    l.iterOut = rows;
    l.dstOut = l.srcOut = w;
    l.iterIn = w;
    l.dstIn = l.srcIn = 1;
    b.alu(AluOp::kMul, b.kernel({Uop{x, x, 0}}), l, true, 77);
    requantize(b, x, rows, w, w, 6, false);
    b.endTile(sp, [&] { b.store(x, outp + first * outB, rows, w, w); });
  }
  b.drain(sp);
}

// Matmul + bias + ReLU in tiles of 12 rows x 6 output blocks over a reduction of 64 blocks: the
// inputs and weights arrive in 13 small LOADs per tile (two rows or one weight row each), and one
// GEMM runs a 1,152-micro-op kernel (3 rows x 6 blocks x 64 blocks) over a 2 x 2 loop; about 6,700
// LOADs in 10,300 instructions.
void shapeGemmLoads(Builder& b) {
  const hw::Config& c = b.cfg;
  const uint32_t kRows = 3, mt = 4 * kRows, nbt = 6, ntiles = 4;
  uint32_t kb = 64;
  while (kb > 1 && (kRows * nbt * kb > c.uopDepth / 2 - 64 || 2 * nbt * kb > c.wgtDepth || 2 * mt * kb > c.inpDepth)) --kb;
  const uint32_t mtiles = scaled(129, b.out.scale), nb = nbt * ntiles, m = mt * mtiles;
  const uint64_t inp = b.data("a", MemId::kInp, uint64_t(m) * kb);
  const uint64_t wgt = b.data("w", MemId::kWgt, uint64_t(nb) * kb);
  const uint64_t bias = b.data("bias", MemId::kAcc, nb);
  const uint64_t outp = b.output("c", uint64_t(m) * nb);
  const uint64_t inpB = b.elemBytes(MemId::kInp), wgtB = b.elemBytes(MemId::kWgt), accB = b.elemBytes(MemId::kAcc);
  const uint32_t accSet = mt * nbt + nbt;
  Builder::LoadPipe lp;
  Builder::StorePipe sp;
  for (uint32_t mi = 0, t = 0; mi < mtiles; ++mi)
    for (uint32_t ni = 0; ni < ntiles; ++ni, ++t) {
      const uint32_t buf = t % 2, inBase = buf * mt * kb, wBase = buf * nbt * kb, acc = buf * accSet,
                     biasBase = acc + mt * nbt;
      b.beginLoads(lp);
      for (uint32_t r = 0; r < mt; r += 2)
        b.load(MemId::kInp, inBase + r * kb, inp + (uint64_t(mi) * mt + r) * kb * inpB, 2, kb, kb);
      for (uint32_t n = 0; n < nbt; ++n)
        b.load(MemId::kWgt, wBase + n * kb, wgt + (uint64_t(ni) * nbt + n) * kb * wgtB, 1, kb, kb);
      b.endLoads(lp);
      b.beginTile(sp);
      b.load(MemId::kAcc, biasBase, bias + uint64_t(ni) * nbt * accB, 1, nbt, nbt);
      std::vector<Uop> mac;
      for (uint32_t r = 0; r < kRows; ++r)
        for (uint32_t n = 0; n < nbt; ++n)
          for (uint32_t k = 0; k < kb; ++k) mac.push_back(Uop{acc + r * nbt + n, inBase + r * kb + k, wBase + n * kb + k});
      Builder::Loops quads;  // rows (2 io + ii) * 3 + the kernel's row
      quads.iterOut = quads.iterIn = 2;
      quads.dstOut = 2 * kRows * nbt;
      quads.dstIn = kRows * nbt;
      quads.srcOut = 2 * kRows * kb;
      quads.srcIn = kRows * kb;
      Builder::Loops tile;
      tile.iterOut = mt;
      tile.dstOut = nbt;
      tile.iterIn = nbt;
      tile.dstIn = 1;
      b.gemm(true, b.kernel({Uop{acc, 0, 0}}), tile);
      b.gemm(false, b.kernel(mac), quads);
      b.release(lp);
      tile.srcIn = 1;  // bias[n] broadcast over the rows
      b.alu(AluOp::kAdd, b.kernel({Uop{acc, biasBase, 0}}), tile);
      requantize(b, acc, mt, nbt, nbt, 10, true);
      b.endTile(sp, [&] {
        b.store(acc, outp + (uint64_t(mi) * mt * nb + uint64_t(ni) * nbt) * b.elemBytes(MemId::kOut), mt, nbt, nb);
      });
    }
  b.drain(lp);
  b.drain(sp);
}

struct ShapeDef {
  ShapeInfo info;
  void (*build)(Builder&);
};

const std::vector<ShapeDef>& shapeDefs() {
  static const std::vector<ShapeDef> kShapes = {
      {{"matmul", "a 16x16x16 matmul with requantization: one tile, about ten instructions"}, shapeMatmul},
      {{"lenet", "LeNet-5's layers: two 5x5 convolutions, two max poolings, three dense layers (~300 instructions)"},
       shapeLenet},
      {{"maxpool", "a 3x3/2 max pooling of a 64-channel 17x17 tensor, one ALU instruction per row (~180 instructions)"},
       shapeMaxpool},
      {{"pool-rows", "max pooling of tall narrow tensors, one ALU instruction per row with 2-4 micro-ops, each kernel "
                     "loaded by its own LOAD.UOP: ~268,000 instructions, 3 MB of micro-ops"},
       shapePoolRows},
      {{"eltwise-add", "elementwise add of two 1.4 MB int32 tensors with requantization, one row per tile (~6,000 "
                       "instructions)"},
       shapeEltwiseAdd},
      {{"eltwise-mul", "elementwise multiply-by-constant of a 1.4 MB int8 tensor with requantization (~6,000 "
                       "instructions)"},
       shapeEltwiseMul},
      {{"gemm-loads", "matmul + bias + ReLU: ~6,700 small LOADs, GEMMs of a 1,152-micro-op kernel over a 2x2 loop "
                      "(~10,300 instructions)"},
       shapeGemmLoads},
  };
  return kShapes;
}

}  // namespace

const std::vector<ShapeInfo>& shapes() {
  static const std::vector<ShapeInfo> kInfos = [] {
    std::vector<ShapeInfo> v;
    for (const auto& d : shapeDefs()) v.push_back(d.info);
    return v;
  }();
  return kInfos;
}

Stream generate(const hw::Config& cfg, const std::string& shape, uint64_t seed, double scale) {
  if (!(scale > 0) || scale > 64) throw Error("stream scale", "must be in (0, 64]");
  for (const auto& d : shapeDefs()) {
    if (shape != d.info.name) continue;
    Builder b(cfg, shape, seed, scale);
    d.build(b);
    return b.finish();
  }
  std::string names;
  for (const auto& d : shapeDefs()) names += (names.empty() ? "" : ", ") + std::string(d.info.name);
  throw Error("stream shape '" + shape + "'", "unknown (shapes: " + names + ")");
}

void place(const Stream& s, hw::Dram& dram) {
  for (const Region& r : s.regions) dram.write(r.base, r.bytes.data(), r.bytes.size(), "stream region " + r.name);
}

uint64_t Stream::regionBytes(const std::string& name) const {
  for (const Region& r : regions)
    if (r.name == name) return r.bytes.size();
  return 0;
}

std::string Stream::summary() const {
  uint64_t loads = 0, uopLoads = 0, stores = 0, gemms = 0, alus = 0, nops = 0, maxUops = 0, data = 0;
  for (const Insn& in : insns) {
    if (in.isNop()) ++nops;
    else if (in.opcode == Opcode::kLoad) (in.memType == static_cast<uint32_t>(MemId::kUop) ? uopLoads : loads) += 1;
    else if (in.opcode == Opcode::kStore) ++stores;
    else if (in.opcode == Opcode::kGemm) ++gemms;
    else if (in.opcode == Opcode::kAlu) ++alus;
    if (in.opcode == Opcode::kGemm || in.opcode == Opcode::kAlu) maxUops = std::max<uint64_t>(maxUops, in.uopEnd - in.uopBgn);
  }
  for (const Region& r : regions)
    if (r.name != "uops" && r.name != "insns") data += r.bytes.size();
  uint64_t outBytes = 0;
  for (const Output& o : outputs) outBytes += o.bytes;
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "%s instructions (%s LOAD, %s LOAD.UOP, %s GEMM, %s ALU, %s STORE, %s NOP), "
                "micro-ops %s bytes, inputs %s bytes, outputs %s bytes, kernels up to %s micro-ops",
                thousands(insns.size()).c_str(), thousands(loads).c_str(), thousands(uopLoads).c_str(),
                thousands(gemms).c_str(), thousands(alus).c_str(), thousands(stores).c_str(), thousands(nops).c_str(),
                thousands(regionBytes("uops")).c_str(), thousands(data).c_str(), thousands(outBytes).c_str(),
                thousands(maxUops).c_str());
  return buf;
}

}  // namespace tessera::streams
