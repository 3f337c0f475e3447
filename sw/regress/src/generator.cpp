// Constrained-random generation of regression programs: regions, blocks of ops, interleaving, lowering.
#include "tessera/regress/generator.h"

#include <algorithm>
#include <climits>

#include "tessera/support/error.h"
#include "tessera/regress/check.h"
#include "tessera/regress/rng.h"

namespace tessera::regress {

const char* sizeName(Size size) {
  switch (size) {
    case Size::kSmall: return "small";
    case Size::kMedium: return "medium";
    case Size::kLarge: return "large";
  }
  return "?";
}

Size parseSize(const std::string& text) {
  if (text == "small") return Size::kSmall;
  if (text == "medium") return Size::kMedium;
  if (text == "large") return Size::kLarge;
  throw Error("size '" + text + "'", "expected small, medium or large");
}

namespace {

struct Params {
  uint64_t cycleBudget;       // stop adding blocks past this estimate
  uint32_t maxBlocks;
  uint32_t maxWindowEntries;  // entries of one buffer window...
  uint32_t maxWindowBytes;    // ...and its DRAM bytes, so 256-byte weights stay cheap
  uint32_t maxFootprint;      // SRAM entries one LOAD writes
  uint32_t maxKernel;         // micro-ops per kernel
  uint32_t maxIter;           // iter_out and iter_in
  uint32_t maxUops;           // micro-op executions of one GEMM/ALU
  uint32_t maxComputeOps;     // GEMM/ALU per block
  uint32_t maxStores;         // STOREs per block
  uint64_t outBytes;          // capacity of each OUT region
};

Params paramsFor(Size s) {
  switch (s) {
    case Size::kSmall: return {6000, 6, 64, 4096, 32, 8, 8, 128, 3, 3, 32768};
    case Size::kMedium: return {25000, 20, 160, 16384, 96, 16, 16, 512, 5, 4, 131072};
    case Size::kLarge: return {100000, 48, 384, 65536, 256, 32, 32, 2048, 8, 5, 524288};
  }
  return paramsFor(Size::kSmall);
}

constexpr uint64_t kPage = 4096;
constexpr uint32_t kUopRegionWords = 4096;

uint64_t alignUp(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

struct Window {
  uint32_t base = 0, size = 1;
  uint32_t end() const { return base + size; }
};

struct Shape {
  uint32_t yPad0 = 0, ySize = 1, yPad1 = 0, xPad0 = 0, xSize = 1, xPad1 = 0;
  uint64_t footprint() const { return uint64_t(yPad0 + ySize + yPad1) * (xPad0 + xSize + xPad1); }
};

// A compute-stage instruction before its micro-ops are placed: GEMM/ALU carry their kernel.
struct Item {
  hw::Insn insn;
  std::vector<hw::Uop> kernel;
  bool repeat = false;  // re-run the previous item's kernel as it sits in the micro-op buffer
};

struct Block {
  std::vector<hw::Insn> load, compute, store;
};

class Generator {
 public:
  Generator(const hw::Config& cfg, uint64_t seed, Size size)
      : cfg_(cfg), isa_(cfg), rng_(seed), P_(paramsFor(size)) {
    prog_.cfg = cfg;
    prog_.seed = seed;
    prog_.size = sizeName(size);
    depth_[kBufUop] = cfg.uopDepth;
    depth_[kBufInp] = cfg.inpDepth;
    depth_[kBufWgt] = cfg.wgtDepth;
    depth_[kBufAcc] = cfg.accDepth;
    for (int b = 0; b < kBufCount; ++b) written_[b].assign(depth_[b], 0);
  }

  Program run() {
    setupRegions();
    setupWindows();
    std::vector<Block> blocks;
    for (uint32_t b = 0; b < P_.maxBlocks; ++b) {
      if (b > 0 && cost_ >= P_.cycleBudget) break;
      blocks.push_back(genBlock());
      const Block& blk = blocks.back();
      for (const auto* part : {&blk.load, &blk.compute, &blk.store}) cost_ += estimateCycles(cfg_, *part);
    }
    interleave(blocks);
    prog_.extraTokenPercent = rng_.chance(40) ? 0 : static_cast<uint32_t>(rng_.range(5, 40));
    addNops(static_cast<uint32_t>(blocks.size()));
    addEdges();
    lower(prog_);
    return std::move(prog_);
  }

 private:
  int eb(hw::MemId id) const { return cfg_.dramElemBytes(id); }
  static int bufOf(hw::MemId id) {
    switch (id) {
      case hw::MemId::kUop: return kBufUop;
      case hw::MemId::kInp: return kBufInp;
      case hw::MemId::kWgt: return kBufWgt;
      default: return kBufAcc;
    }
  }
  uint32_t fieldMax(hw::Opcode op, hw::Field f) const {
    return static_cast<uint32_t>((uint64_t(1) << isa_.layout().width(op, f)) - 1);
  }
  uint32_t uopFieldMax(int i) const { return static_cast<uint32_t>((uint64_t(1) << isa_.layout().uopFormat()[i].width) - 1); }

  // Largest window of a buffer: bounded in entries, DRAM bytes and depth.
  uint32_t windowMax(int buf) const {
    static const hw::MemId kIds[kBufCount] = {hw::MemId::kUop, hw::MemId::kInp, hw::MemId::kWgt, hw::MemId::kAcc};
    uint32_t byBytes = std::max<uint32_t>(1, P_.maxWindowBytes / static_cast<uint32_t>(eb(kIds[buf])));
    return std::min({P_.maxWindowEntries, byBytes, depth_[buf]});
  }

  // ---- DRAM regions ----
  void setupRegions() {
    struct Want {
      std::string name;
      RegionKind kind;
      uint64_t bytes;
    };
    const uint64_t accElems = std::max<uint64_t>(64, 4ull * windowMax(kBufAcc));
    std::vector<Want> wants = {
        {"inp", RegionKind::kInp, std::max<uint64_t>(64, 4ull * windowMax(kBufInp)) * eb(hw::MemId::kInp)},
        {"wgt", RegionKind::kWgt, std::max<uint64_t>(64, 4ull * windowMax(kBufWgt)) * eb(hw::MemId::kWgt)},
        {"acc", RegionKind::kAcc, accElems * eb(hw::MemId::kAcc)},
        {"acc8", RegionKind::kAcc8, accElems * eb(hw::MemId::kAcc8)},
        {"uop", RegionKind::kUop, 4ull * kUopRegionWords},
    };
    const uint64_t nOut = rng_.range(1, 2);
    for (uint64_t i = 0; i < nOut; ++i) wants.push_back({"out" + std::to_string(i), RegionKind::kOut, P_.outBytes});
    for (size_t i = wants.size() - 1; i > 0; --i) std::swap(wants[i], wants[rng_.range(0, i)]);

    // Regions start at a multiple of every element size, so dram_base (an element index) can
    // name the first byte of any of them whatever the memory type.
    uint64_t align = kPage;
    for (hw::MemId id : {hw::MemId::kInp, hw::MemId::kWgt, hw::MemId::kAcc, hw::MemId::kAcc8, hw::MemId::kOut})
      while (align % static_cast<uint64_t>(eb(id))) align *= 2;
    uint64_t total = 0;
    for (const auto& w : wants) total += alignUp(w.bytes, align) + 2 * align;
    total += uint64_t(1) << 20;  // room for the instruction region
    // Low addresses as a board's allocator hands out, or high ones so bit 31 of AXI addresses
    // and large dram_base values are exercised.
    uint64_t cur = rng_.chance(60) ? alignUp(kPage * rng_.range(1, 1024), align)
                                   : rng_.range(uint64_t(1) << 31, (uint64_t(1) << 32) - total - align) / align * align;
    for (const auto& w : wants) {
      Region r;
      r.name = w.name;
      r.kind = w.kind;
      r.base = cur;
      r.init.resize(w.bytes);
      fill(r);
      cur = alignUp(cur + w.bytes, align) + align * rng_.range(0, 2);
      regionOf_[static_cast<int>(w.kind)] = static_cast<int>(prog_.regions.size());
      if (w.kind == RegionKind::kOut) {
        outRegions_.push_back(static_cast<int>(prog_.regions.size()));
        outBump_.push_back(0);
      }
      prog_.regions.push_back(std::move(r));
    }
    Region insn;
    insn.name = "insn";
    insn.kind = RegionKind::kInsn;
    // Half the streams start inside a page rather than at its first byte (a runtime may place a
    // stream at any 16-byte boundary), so fetch's bursts meet the 4 KiB boundary at every offset.
    // Drawn from a generator of its own: the rest of each seed's program stays as it was.
    Rng placement(prog_.seed ^ 0x1f83d9abfb41bd6bull);
    insn.base = cur + (placement.chance(50) ? 16 * placement.range(1, kPage / 16 - 1) : 0);
    prog_.regions.push_back(std::move(insn));
  }

  void fill(Region& r) {
    auto& d = r.init;
    if (r.kind == RegionKind::kAcc) {
      // Accumulators: mostly random, some small (so shifts and clips matter), some extremes.
      static const int32_t kSpecial[] = {INT32_MIN, INT32_MAX, -1, 0, 1, 0x7fff, -0x8000, 0x8000, -129, 128};
      for (size_t i = 0; i + 4 <= d.size(); i += 4) {
        uint32_t v;
        switch (rng_.weighted({50, 30, 20})) {
          case 0: v = static_cast<uint32_t>(rng_.next()); break;
          case 1: v = static_cast<uint32_t>(static_cast<int32_t>(rng_.srange(-300, 300))); break;
          default: v = static_cast<uint32_t>(kSpecial[rng_.range(0, sizeof kSpecial / sizeof kSpecial[0] - 1)]); break;
        }
        for (int k = 0; k < 4; ++k) d[i + k] = static_cast<uint8_t>(v >> (8 * k));
      }
      return;
    }
    for (size_t i = 0; i < d.size(); i += 8) {
      uint64_t v = rng_.next();
      for (size_t k = 0; k < 8 && i + k < d.size(); ++k) d[i + k] = static_cast<uint8_t>(v >> (8 * k));
    }
  }

  Region& region(RegionKind k) { return prog_.regions[regionOf_[static_cast<int>(k)]]; }
  static RegionKind regionKindOf(hw::MemId id) {
    switch (id) {
      case hw::MemId::kInp: return RegionKind::kInp;
      case hw::MemId::kWgt: return RegionKind::kWgt;
      case hw::MemId::kAcc: return RegionKind::kAcc;
      case hw::MemId::kAcc8: return RegionKind::kAcc8;
      default: return RegionKind::kUop;
    }
  }

  // ---- SRAM windows ----
  void setupWindows() {
    for (int b : {kBufInp, kBufWgt, kBufAcc}) {
      const uint32_t max = windowMax(b);
      const uint64_t n = rng_.range(1, 3);
      for (uint64_t i = 0; i < n; ++i) {
        Window w;
        switch (rng_.weighted({50, 35, 15})) {
          case 0: w.size = static_cast<uint32_t>(rng_.range(std::max<uint32_t>(1, max / 4), max)); break;
          case 1: w.size = static_cast<uint32_t>(rng_.range(1, max)); break;
          default: w.size = static_cast<uint32_t>(rng_.range(1, std::min<uint32_t>(4, max))); break;
        }
        // The top of the buffer (the last valid index) and index 0 are where range bugs live.
        switch (rng_.weighted({20, 10, 70})) {
          case 0: w.base = depth_[b] - w.size; break;
          case 1: w.base = 0; break;
          default: w.base = static_cast<uint32_t>(rng_.range(0, depth_[b] - w.size)); break;
        }
        windows_[b].push_back(w);
      }
    }
  }

  const Window& pickWindow(int buf) { return windows_[buf][rng_.range(0, windows_[buf].size() - 1)]; }

  bool full(int buf, const Window& w) const {
    for (uint32_t e = w.base; e < w.end(); ++e)
      if (!written_[buf][e]) return false;
    return true;
  }
  void markWritten(int buf, uint64_t base, uint64_t n) {
    for (uint64_t e = base; e < base + n; ++e) written_[buf][e] = 1;
  }

  // ---- loads ----
  Shape randomShape(uint64_t room, bool pad) {
    const uint64_t f = std::min<uint64_t>(room, P_.maxFootprint);
    Shape s;
    const uint64_t w = rng_.chance(50) ? rng_.range(1, std::min<uint64_t>(f, 8)) : rng_.range(1, std::min<uint64_t>(f, 64));
    const uint64_t h = rng_.range(1, f / w);
    s.xPad0 = s.xPad1 = s.yPad0 = s.yPad1 = 0;
    if (pad && w >= 2 && rng_.chance(35)) s.xPad0 = static_cast<uint32_t>(rng_.range(0, std::min<uint64_t>(15, w - 1)));
    if (pad && w - s.xPad0 >= 2 && rng_.chance(35))
      s.xPad1 = static_cast<uint32_t>(rng_.range(0, std::min<uint64_t>(15, w - 1 - s.xPad0)));
    s.xSize = static_cast<uint32_t>(w - s.xPad0 - s.xPad1);
    if (pad && h <= 30 && rng_.chance(3)) {
      // Rows of padding only: y_size 0 with x_size > 0 is a LOAD that reads no DRAM.
      s.yPad0 = static_cast<uint32_t>(rng_.range(h > 15 ? h - 15 : 0, std::min<uint64_t>(15, h)));
      s.yPad1 = static_cast<uint32_t>(h - s.yPad0);
      s.ySize = 0;
      return s;
    }
    if (pad && h >= 2 && rng_.chance(35)) s.yPad0 = static_cast<uint32_t>(rng_.range(0, std::min<uint64_t>(15, h - 1)));
    if (pad && h - s.yPad0 >= 2 && rng_.chance(35))
      s.yPad1 = static_cast<uint32_t>(rng_.range(0, std::min<uint64_t>(15, h - 1 - s.yPad0)));
    s.ySize = static_cast<uint32_t>(h - s.yPad0 - s.yPad1);
    return s;
  }

  // Where a LOAD of `s` reads: a data region of its kind, or bytes earlier STOREs wrote (a round
  // trip through DRAM). Stores only ever go above an OUT region's bump pointer, so anything below
  // it is never overwritten later. False if the shape does not fit.
  bool pickSource(hw::MemId id, const Shape& s, uint32_t* dramBase, uint32_t* stride) {
    const uint64_t e = static_cast<uint64_t>(eb(id));
    const uint32_t xs = s.xSize, ys = s.ySize;
    if (ys <= 1) {
      *stride = rng_.chance(50) ? xs : static_cast<uint32_t>(rng_.range(0, 64));
    } else {
      switch (rng_.weighted({60, 20, 20})) {
        case 0: *stride = static_cast<uint32_t>(rng_.range(xs, xs + 8)); break;
        case 1: *stride = xs; break;
        default: *stride = static_cast<uint32_t>(rng_.range(0, xs - 1)); break;  // rows overlap or repeat
      }
    }
    auto need = [&] { return ys == 0 ? uint64_t(0) : uint64_t(ys - 1) * *stride + xs; };
    if (!stored_.empty() && rng_.chance(15)) {
      const Stored& st = stored_[rng_.range(0, stored_.size() - 1)];
      const Region& r = prog_.regions[outRegions_[st.out]];
      const uint64_t first = st.lo / e;
      if ((first + need()) * e <= outBump_[st.out]) {
        *dramBase = static_cast<uint32_t>(r.base / e + first);
        return true;
      }
    }
    const Region& r = region(regionKindOf(id));
    const uint64_t elems = r.init.size() / e;
    if (xs > elems) return false;
    if (need() > elems) *stride = static_cast<uint32_t>((elems - xs) / (ys - 1));
    *dramBase = static_cast<uint32_t>(r.base / e + rng_.range(0, elems - need()));
    return true;
  }

  hw::Insn makeLoad(hw::MemId id, uint64_t sram, const Shape& s) {
    hw::Insn in;
    in.opcode = hw::Opcode::kLoad;
    in.memType = static_cast<uint32_t>(id);
    in.sramBase = static_cast<uint32_t>(sram);
    in.yPad0 = s.yPad0;
    in.ySize = s.ySize;
    in.yPad1 = s.yPad1;
    in.xPad0 = s.xPad0;
    in.xSize = s.xSize;
    in.xPad1 = s.xPad1;
    if (!pickSource(id, s, &in.dramBase, &in.xStride)) {
      Shape one;
      in.ySize = in.xSize = 1;
      in.yPad0 = in.yPad1 = in.xPad0 = in.xPad1 = 0;
      pickSource(id, one, &in.dramBase, &in.xStride);
    }
    return in;
  }

  // Writes every entry of `w` with LOADs of random shapes; some overlap the previous one.
  void tileLoads(std::vector<hw::Insn>& out, hw::MemId id, const Window& w) {
    uint64_t pos = w.base;
    while (pos < w.end()) {
      hw::Insn in = makeLoad(id, pos, randomShape(w.end() - pos, true));
      const uint64_t f = hw::loadFootprint(in);
      out.push_back(in);
      markWritten(bufOf(id), pos, f);
      pos += f;
      if (f > 1 && pos < w.end() && rng_.chance(8)) pos -= rng_.range(1, f - 1);
    }
  }

  // ---- compute ----
  struct Loops {
    uint32_t n, iterOut, iterIn;
  };
  Loops loopShape() {
    Loops l;
    l.n = static_cast<uint32_t>(rng_.chance(50) ? rng_.range(1, std::min<uint32_t>(3, P_.maxKernel)) : rng_.range(1, P_.maxKernel));
    l.iterOut = static_cast<uint32_t>(rng_.chance(30) ? 1 : rng_.range(1, P_.maxIter));
    l.iterIn = static_cast<uint32_t>(rng_.chance(30) ? 1 : rng_.range(1, P_.maxIter));
    while (uint64_t(l.n) * l.iterOut * l.iterIn > P_.maxUops) {
      uint32_t* biggest = l.n >= l.iterOut && l.n >= l.iterIn ? &l.n : l.iterOut >= l.iterIn ? &l.iterOut : &l.iterIn;
      *biggest = (*biggest + 1) / 2;
    }
    return l;
  }

  struct Factors {
    uint32_t out = 0, in = 0;
    uint64_t span = 0;  // largest offset the loops add to a micro-op index
  };
  // Loop factors keeping every index of a window of `size` entries inside it. A factor whose loop
  // runs once is never multiplied by more than 0, so it may hold any value of its field.
  Factors factors(uint32_t size, const Loops& l, uint32_t maxOut, uint32_t maxIn) {
    Factors f;
    uint64_t room = size - 1;
    auto pick = [&](uint32_t iters, uint32_t fieldMax) -> uint32_t {
      if (iters == 1) return rng_.chance(30) ? static_cast<uint32_t>(rng_.range(0, fieldMax)) : 0;
      const uint64_t lim = std::min<uint64_t>(room / (iters - 1), fieldMax);
      uint64_t v;
      switch (rng_.weighted({20, 25, 55})) {
        case 0: v = 0; break;
        case 1: v = std::min<uint64_t>(1, lim); break;
        default: v = rng_.range(0, lim); break;
      }
      room -= v * (iters - 1);
      return static_cast<uint32_t>(v);
    };
    f.out = pick(l.iterOut, maxOut);
    f.in = pick(l.iterIn, maxIn);
    f.span = uint64_t(l.iterOut - 1) * (l.iterOut > 1 ? f.out : 0) + uint64_t(l.iterIn - 1) * (l.iterIn > 1 ? f.in : 0);
    return f;
  }
  uint32_t indexIn(const Window& w, const Factors& f) {
    return static_cast<uint32_t>(w.base + rng_.range(0, w.size - 1 - f.span));
  }

  void setLoops(hw::Insn& in, const Loops& l) {
    in.iterOut = l.iterOut;
    in.iterIn = l.iterIn;
  }

  Item gemmItem(const Window& aw, const Window& iw, const Window& ww) {
    Item it;
    Loops l = loopShape();
    auto& in = it.insn;
    in.opcode = hw::Opcode::kGemm;
    setLoops(in, l);
    const hw::Opcode g = hw::Opcode::kGemm;
    Factors d = factors(aw.size, l, fieldMax(g, hw::Field::kDstFactorOut), fieldMax(g, hw::Field::kDstFactorIn));
    Factors s = factors(iw.size, l, fieldMax(g, hw::Field::kSrcFactorOut), fieldMax(g, hw::Field::kSrcFactorIn));
    Factors w = factors(ww.size, l, fieldMax(g, hw::Field::kWgtFactorOut), fieldMax(g, hw::Field::kWgtFactorIn));
    in.dstFactorOut = d.out, in.dstFactorIn = d.in;
    in.srcFactorOut = s.out, in.srcFactorIn = s.in;
    in.wgtFactorOut = w.out, in.wgtFactorIn = w.in;
    for (uint32_t u = 0; u < l.n; ++u) it.kernel.push_back({indexIn(aw, d), indexIn(iw, s), indexIn(ww, w)});
    return it;
  }

  // A reset GEMM zeroing exactly [base, base + n) of the accumulator, in one of three loop forms.
  // A reset reads neither input nor weight, so their micro-op fields and factors are arbitrary.
  Item resetItem(uint32_t base, uint32_t n) {
    Item it;
    auto& in = it.insn;
    in.opcode = hw::Opcode::kGemm;
    in.reset = true;
    std::vector<uint32_t> divisors;
    for (uint32_t d = 1; d <= n; ++d)
      if (n % d == 0) divisors.push_back(d);
    const uint32_t d = divisors[rng_.range(0, divisors.size() - 1)];
    std::vector<uint32_t> dsts;
    switch (rng_.range(0, 2)) {
      case 0:  // one micro-op per entry, in random order
        for (uint32_t u = 0; u < n; ++u) dsts.push_back(base + u);
        for (size_t i = dsts.size() - 1; i > 0; --i) std::swap(dsts[i], dsts[rng_.range(0, i)]);
        in.iterOut = in.iterIn = 1;
        break;
      case 1:  // one micro-op, both loops
        dsts.push_back(base);
        in.iterOut = d;
        in.iterIn = n / d;
        in.dstFactorOut = n / d;
        in.dstFactorIn = 1;
        break;
      default:  // a kernel of d entries repeated by the outer loop
        for (uint32_t u = 0; u < d; ++u) dsts.push_back(base + u);
        in.iterOut = n / d;
        in.iterIn = 1;
        in.dstFactorOut = d;
        break;
    }
    const bool garbage = rng_.chance(50);
    for (uint32_t dst : dsts)
      it.kernel.push_back({dst, garbage ? static_cast<uint32_t>(rng_.range(0, uopFieldMax(1))) : 0,
                           garbage ? static_cast<uint32_t>(rng_.range(0, uopFieldMax(2))) : 0});
    if (garbage) {
      const hw::Opcode g = hw::Opcode::kGemm;
      in.srcFactorOut = static_cast<uint32_t>(rng_.range(0, fieldMax(g, hw::Field::kSrcFactorOut)));
      in.srcFactorIn = static_cast<uint32_t>(rng_.range(0, fieldMax(g, hw::Field::kSrcFactorIn)));
      in.wgtFactorOut = static_cast<uint32_t>(rng_.range(0, fieldMax(g, hw::Field::kWgtFactorOut)));
      in.wgtFactorIn = static_cast<uint32_t>(rng_.range(0, fieldMax(g, hw::Field::kWgtFactorIn)));
    }
    return it;
  }

  int32_t aluImmediate(uint32_t aluOp) {
    switch (static_cast<hw::AluOp>(aluOp)) {
      case hw::AluOp::kShr:  // both directions, amounts past 31 and the 16-bit extremes
        return static_cast<int32_t>(rng_.weighted({50, 30, 20}) == 0 ? rng_.srange(-40, 40)
                                    : rng_.chance(60)                ? rng_.srange(0, 31)
                                                                     : rng_.srange(-32768, 32767));
      case hw::AluOp::kMul: return static_cast<int32_t>(rng_.chance(50) ? rng_.srange(-300, 300) : rng_.srange(-32768, 32767));
      default: return static_cast<int32_t>(rng_.chance(50) ? rng_.srange(-1000, 1000) : rng_.srange(-32768, 32767));
    }
  }

  Item aluItem(const Window& aw) {
    Item it;
    Loops l = loopShape();
    auto& in = it.insn;
    in.opcode = hw::Opcode::kAlu;
    setLoops(in, l);
    in.aluOp = static_cast<uint32_t>(rng_.range(0, 4));
    in.useImm = rng_.chance(50);
    in.reset = rng_.chance(4);  // ignored by ALU
    const hw::Opcode a = hw::Opcode::kAlu;
    // The source index is range-checked even with an immediate, so it stays in the window too.
    Factors d = factors(aw.size, l, fieldMax(a, hw::Field::kDstFactorOut), fieldMax(a, hw::Field::kDstFactorIn));
    Factors s = factors(aw.size, l, fieldMax(a, hw::Field::kSrcFactorOut), fieldMax(a, hw::Field::kSrcFactorIn));
    in.dstFactorOut = d.out, in.dstFactorIn = d.in;
    in.srcFactorOut = s.out, in.srcFactorIn = s.in;
    const int32_t imm = aluImmediate(in.aluOp);
    in.imm = in.useImm || rng_.chance(30) ? imm : 0;
    const bool garbageWgt = rng_.chance(30);  // ALU ignores the weight field
    for (uint32_t u = 0; u < l.n; ++u)
      it.kernel.push_back({indexIn(aw, d), indexIn(aw, s), garbageWgt ? static_cast<uint32_t>(rng_.range(0, uopFieldMax(2))) : 0});
    return it;
  }

  // A GEMM or ALU whose loops run zero times: it does nothing and reads no micro-op.
  Item emptyItem() {
    Item it;
    auto& in = it.insn;
    in.opcode = rng_.chance(50) ? hw::Opcode::kGemm : hw::Opcode::kAlu;
    if (in.opcode == hw::Opcode::kAlu) in.aluOp = static_cast<uint32_t>(rng_.range(0, 4));
    in.uopBgn = static_cast<uint32_t>(rng_.range(0, cfg_.uopDepth - 1));
    switch (rng_.range(0, 2)) {
      case 0: in.uopEnd = in.uopBgn; in.iterOut = 1; in.iterIn = 1; break;
      case 1: in.uopEnd = in.uopBgn + 1; in.iterOut = 0; in.iterIn = static_cast<uint32_t>(rng_.range(0, 3)); break;
      default: in.uopEnd = in.uopBgn + 1; in.iterOut = static_cast<uint32_t>(rng_.range(1, 3)); in.iterIn = 0; break;
    }
    return it;
  }

  // Appends a kernel to the micro-op region; returns its word offset there, or -1 if it is full.
  int64_t storeKernel(const std::vector<hw::Uop>& kernel, uint32_t extraWords) {
    if (uopBump_ + kernel.size() + extraWords > kUopRegionWords) return -1;
    Region& r = region(RegionKind::kUop);
    const uint64_t at = uopBump_;
    for (size_t u = 0; u < kernel.size(); ++u) {
      uint32_t w = isa_.encodeUop(kernel[u], "generated micro-op");
      for (int k = 0; k < 4; ++k) r.init[4 * (at + u) + k] = static_cast<uint8_t>(w >> (8 * k));
    }
    uopBump_ += kernel.size() + extraWords;  // extra words: loaded as they are, never executed
    return static_cast<int64_t>(at);
  }

  uint32_t kernelBase(uint32_t len) {
    switch (rng_.weighted({30, 20, 50})) {
      case 0: return 0;
      case 1: return cfg_.uopDepth - len;
      default: return static_cast<uint32_t>(rng_.range(0, cfg_.uopDepth - len));
    }
  }

  hw::Insn uopLoad(uint32_t sram, int64_t word, uint32_t n) {
    hw::Insn in;
    in.opcode = hw::Opcode::kLoad;
    in.memType = static_cast<uint32_t>(hw::MemId::kUop);
    in.sramBase = sram;
    in.dramBase = static_cast<uint32_t>(region(RegionKind::kUop).base / 4 + word);
    in.ySize = 1;
    in.xSize = n;
    in.xStride = rng_.chance(50) ? n : static_cast<uint32_t>(rng_.range(0, 0xffff));  // one row: unused
    return in;
  }

  // Places the kernels in the micro-op buffer (all behind one LOAD.UOP, or each loaded just
  // before its instruction) and emits the compute part.
  void placeKernels(const std::vector<Item>& items, std::vector<hw::Insn>& out) {
    uint64_t total = 0;
    for (const auto& it : items)
      if (!it.repeat) total += it.kernel.size();
    if (total > 0 && total <= cfg_.uopDepth && rng_.chance(40)) {
      const uint32_t extra = static_cast<uint32_t>(
          std::min<uint64_t>(rng_.chance(15) ? rng_.range(1, 4) : 0, cfg_.uopDepth - total));
      const uint32_t n = static_cast<uint32_t>(total) + extra;
      const uint32_t base = kernelBase(n);
      std::vector<hw::Uop> all;
      for (const auto& it : items)
        if (!it.repeat) all.insert(all.end(), it.kernel.begin(), it.kernel.end());
      const int64_t word = storeKernel(all, extra);
      if (word >= 0) {
        out.push_back(uopLoad(base, word, n));
        markWritten(kBufUop, base, n);
        uint32_t off = base, bgn = 0, end = 0;
        for (const auto& it : items) {
          hw::Insn in = it.insn;
          if (!it.kernel.empty() && !it.repeat) {
            bgn = off;
            end = off + static_cast<uint32_t>(it.kernel.size());
            off = end;
          }
          if (!it.kernel.empty() || it.repeat) {
            in.uopBgn = bgn;
            in.uopEnd = end;
          }
          out.push_back(in);
        }
        return;
      }
    }
    uint32_t bgn = 0, end = 0;
    bool previousKept = false;  // whether the instruction a repeat re-runs was emitted
    for (const auto& it : items) {
      hw::Insn in = it.insn;
      if (!it.kernel.empty() && !it.repeat) {
        const uint32_t n = static_cast<uint32_t>(it.kernel.size());
        const int64_t word = storeKernel(it.kernel, 0);
        previousKept = word >= 0;
        if (!previousKept) continue;  // the micro-op region is full: drop this instruction
        bgn = kernelBase(n);
        end = bgn + n;
        out.push_back(uopLoad(bgn, word, n));
        markWritten(kBufUop, bgn, n);
      } else if (it.repeat && !previousKept) {
        continue;
      }
      if (!it.kernel.empty() || it.repeat) {
        in.uopBgn = bgn;
        in.uopEnd = end;
      }
      out.push_back(in);
    }
  }

  // Every entry of `w` written, by LOAD.ACC, LOAD.ACC_8BIT (sign-extending) or reset GEMMs.
  void initAcc(std::vector<Item>& items, const Window& w) {
    uint64_t pos = w.base;
    while (pos < w.end()) {
      const uint64_t room = w.end() - pos;
      const size_t how = rng_.weighted({45, 30, 25});
      Item it;
      uint64_t n;
      if (how == 2) {
        n = rng_.range(1, std::min<uint64_t>(room, 64));
        it = resetItem(static_cast<uint32_t>(pos), static_cast<uint32_t>(n));
      } else {
        it.insn = makeLoad(how == 0 ? hw::MemId::kAcc : hw::MemId::kAcc8, pos, randomShape(room, true));
        n = hw::loadFootprint(it.insn);
      }
      items.push_back(it);
      markWritten(kBufAcc, pos, n);
      pos += n;
    }
  }

  // ---- stores ----
  void genStore(std::vector<hw::Insn>& out, const Window& aw) {
    const uint32_t t = aw.size;
    const uint32_t ys = static_cast<uint32_t>(rng_.range(1, std::min<uint32_t>(t, 16)));
    const uint32_t xs = static_cast<uint32_t>(rng_.range(1, std::min<uint32_t>(t / ys, 64)));
    hw::Insn in;
    in.opcode = hw::Opcode::kStore;
    in.memType = static_cast<uint32_t>(hw::MemId::kOut);
    in.sramBase = aw.base + static_cast<uint32_t>(rng_.range(0, t - ys * xs));
    in.xSize = xs;
    in.ySize = ys;
    // Rows never overlap within a store: the order of a store's own row writes is not something
    // a program should depend on.
    in.xStride = ys > 1 ? (rng_.chance(70) ? static_cast<uint32_t>(rng_.range(xs, xs + 6)) : xs)
                        : (rng_.chance(50) ? xs : static_cast<uint32_t>(rng_.range(0, 64)));
    const uint64_t e = static_cast<uint64_t>(cfg_.outElemBytes);
    const uint64_t bytes = (uint64_t(ys - 1) * in.xStride + xs) * e;
    static const uint64_t kAligns[3] = {1, 256, 4096};
    const uint64_t align = std::max<uint64_t>(e, kAligns[rng_.weighted({60, 25, 15})]);
    const size_t first = rng_.range(0, outRegions_.size() - 1);
    for (size_t k = 0; k < outRegions_.size(); ++k) {
      const size_t o = (first + k) % outRegions_.size();
      const Region& r = prog_.regions[outRegions_[o]];
      const uint64_t off = (outBump_[o] + align - 1) / align * align + e * rng_.range(0, 2);
      if (off + bytes > r.init.size()) continue;
      in.dramBase = static_cast<uint32_t>((r.base + off) / e);
      if (rng_.chance(3)) {
        in.ySize = 0;  // x_size > 0 but no rows: a STORE that writes nothing
      } else {
        outBump_[o] = off + bytes;
        stored_.push_back({o, off, off + bytes});
      }
      out.push_back(in);
      return;
    }
  }

  // ---- blocks ----
  Block genBlock() {
    Block blk;
    const size_t kind = rng_.weighted({45, 30, 20, 5});  // GEMM, ALU, both, only NOPs
    const bool gemm = kind == 0 || kind == 2, alu = kind == 1 || kind == 2;
    if (kind == 3) {
      for (auto* part : {&blk.load, &blk.compute, &blk.store})
        if (rng_.chance(60)) part->push_back(nop(part == &blk.load ? 0 : part == &blk.compute ? 1 : 2));
      return blk;
    }
    const Window iw = pickWindow(kBufInp), ww = pickWindow(kBufWgt), aw = pickWindow(kBufAcc);
    if (gemm) {
      if (!full(kBufInp, iw) || rng_.chance(75)) tileLoads(blk.load, hw::MemId::kInp, iw);
      if (!full(kBufWgt, ww) || rng_.chance(60)) tileLoads(blk.load, hw::MemId::kWgt, ww);
    }
    if (rng_.chance(12)) {  // prefetch into another window, as a double-buffered loop would
      const bool inp = rng_.chance(50);
      tileLoads(blk.load, inp ? hw::MemId::kInp : hw::MemId::kWgt, pickWindow(inp ? kBufInp : kBufWgt));
    }
    std::vector<Item> items;
    if (!full(kBufAcc, aw) || rng_.chance(50)) initAcc(items, aw);
    const uint64_t ops = rng_.range(1, P_.maxComputeOps);
    for (uint64_t k = 0; k < ops; ++k) {
      // The first op is what the block is for; the rest are a random mix.
      const size_t what = k == 0 ? (gemm ? 0 : 1) : rng_.weighted({gemm ? 50u : 0u, alu ? 50u : 0u, 8, 3});
      if (what == 0) items.push_back(gemmItem(aw, iw, ww));
      else if (what == 1) items.push_back(aluItem(aw));
      else if (what == 2) {
        const uint32_t n = static_cast<uint32_t>(rng_.range(1, std::min<uint32_t>(aw.size, 32)));
        items.push_back(resetItem(aw.base + static_cast<uint32_t>(rng_.range(0, aw.size - n)), n));
      } else {
        items.push_back(emptyItem());
      }
      if (!items.back().kernel.empty() && rng_.chance(15)) {
        Item again;
        again.insn = items.back().insn;
        again.repeat = true;
        items.push_back(again);
        // An immediate ALU op again with other ops and immediates, one to three of them, the way
        // a toolchain requantizes a tile (MUL, SHR, MAX, MIN over the same loops).
        if (again.insn.opcode == hw::Opcode::kAlu && again.insn.useImm && rng_.chance(70)) {
          const uint64_t steps = rng_.range(1, 3);
          for (uint64_t k = 0; k < steps; ++k) {
            hw::Insn& step = items.back().insn;
            step.aluOp = static_cast<uint32_t>(rng_.range(0, 4));
            step.imm = aluImmediate(step.aluOp);
            if (k + 1 < steps) items.push_back(again);
          }
        }
      }
    }
    placeKernels(items, blk.compute);
    const uint64_t stores = rng_.chance(85) ? rng_.range(1, P_.maxStores) : 0;
    for (uint64_t k = 0; k < stores; ++k) genStore(blk.store, aw);
    return blk;
  }

  hw::Insn nop(int stage) {
    hw::Insn in;
    if (stage == 2) {
      in.opcode = hw::Opcode::kStore;
      in.memType = static_cast<uint32_t>(hw::MemId::kOut);
    } else {
      in.opcode = hw::Opcode::kLoad;
      static const hw::MemId kTypes[2][3] = {{hw::MemId::kInp, hw::MemId::kWgt, hw::MemId::kInp},
                                             {hw::MemId::kUop, hw::MemId::kAcc, hw::MemId::kAcc8}};
      in.memType = static_cast<uint32_t>(kTypes[stage][rng_.range(0, 2)]);
    }
    in.xSize = 0;
    if (rng_.chance(25)) in.ySize = static_cast<uint32_t>(rng_.range(1, 3));
    return in;
  }

  // Load parts run up to `ahead` blocks before their compute part in the stream and stores up to
  // `behind` blocks after it, so fetch sees the prefetching order of a pipelined runtime.
  void interleave(const std::vector<Block>& blocks) {
    const int n = static_cast<int>(blocks.size());
    const int ahead = static_cast<int>(rng_.range(0, 2)), behind = static_cast<int>(rng_.range(0, 2));
    auto emit = [&](const std::vector<hw::Insn>& part, int b) {
      for (const auto& in : part) prog_.ops.push_back({nextId_++, static_cast<uint32_t>(b), in});
    };
    for (int t = 0; t < n + ahead + behind; ++t) {
      if (t < n) emit(blocks[t].load, t);
      if (t - ahead >= 0 && t - ahead < n) emit(blocks[t - ahead].compute, t - ahead);
      if (t - ahead - behind >= 0 && t - ahead - behind < n) emit(blocks[t - ahead - behind].store, t - ahead - behind);
    }
  }

  // Standalone dependency-only NOPs, each its own block.
  void addNops(uint32_t firstBlock) {
    const uint64_t count = rng_.range(0, 3);
    for (uint64_t k = 0; k < count; ++k) {
      const size_t at = rng_.range(0, prog_.ops.size());
      prog_.ops.insert(prog_.ops.begin() + static_cast<long>(at),
                       Op{nextId_++, firstBlock + static_cast<uint32_t>(k), nop(static_cast<int>(rng_.range(0, 2)))});
    }
  }

  // Orderings no data needs: extra tokens at random places.
  void addEdges() {
    const size_t n = prog_.ops.size();
    if (n < 2) return;
    const uint64_t count = rng_.range(0, 4);
    for (uint64_t k = 0; k < count; ++k)
      for (int tries = 0; tries < 10; ++tries) {
        size_t a = rng_.range(0, n - 1), b = rng_.range(0, n - 1);
        if (a == b) continue;
        if (a > b) std::swap(a, b);
        if (prog_.ops[a].insn.stage() == prog_.ops[b].insn.stage()) continue;
        prog_.edges.push_back({prog_.ops[a].id, prog_.ops[b].id});
        break;
      }
  }

  struct Stored {
    size_t out;          // index into outRegions_
    uint64_t lo, hi;     // byte offsets in that region
  };

  const hw::Config cfg_;
  hw::Isa isa_;
  Rng rng_;
  Params P_;
  Program prog_;
  uint32_t nextId_ = 0;
  uint32_t depth_[kBufCount] = {};
  std::vector<uint8_t> written_[kBufCount];
  std::vector<Window> windows_[kBufCount];
  int regionOf_[7] = {-1, -1, -1, -1, -1, -1, -1};
  std::vector<int> outRegions_;
  std::vector<uint64_t> outBump_;  // bytes of each OUT region below which nothing is stored again
  std::vector<Stored> stored_;
  uint64_t uopBump_ = 0;  // words of the micro-op region used
  uint64_t cost_ = 0;
};

}  // namespace

Program generate(const hw::Config& cfg, uint64_t seed, Size size) { return Generator(cfg, seed, size).run(); }

}  // namespace tessera::regress
