// Tiling: legality against the config's SRAMs and instruction fields, the cycle cost model, the search.
#include <algorithm>
#include <cmath>
#include <vector>

#include "schedule.h"
#include "tessera/compiler/op/dram_layout.h"
#include "tessera/hw/isa.h"
#include "tessera/support/error.h"

namespace tessera::compiler::op {

using detail::Geometry;
using detail::TileShape;

namespace detail {

SpatialShape spatialShape(const Operator& op) {
  SpatialShape w;
  w.H = op.height;
  w.W = op.width;
  w.OH = op.outHeight();
  w.OW = op.outWidth();
  w.KH = op.kernelH;
  w.KW = op.kernelW;
  w.SH = op.strideH;
  w.SW = op.strideW;
  w.PH = op.padH;
  w.PW = op.padW;
  w.DH = op.dilationH;
  w.DW = op.dilationW;
  return w;
}

Geometry geometry(const hw::Config& cfg, const Operator& op) {
  op.validate();
  Geometry g;
  static_cast<SpatialShape&>(g) = spatialShape(op);
  g.B = cfg.batch;
  g.BI = cfg.blockIn;
  g.BO = cfg.blockOut;
  g.NB = (op.batch + g.B - 1) / g.B;
  g.CIB = (op.inChannels + g.BI - 1) / g.BI;
  g.COB = (op.outChannels + g.BO - 1) / g.BO;
  const WeightLayout wl = weightLayout(cfg, op.outChannels, op.inChannels, op.kernelH, op.kernelW, op.groups);
  g.RB = op.onVectorAlu() ? 1 : wl.reductionBlocks();
  g.firstInBlock.assign(size_t(g.COB), 0);
  for (int ob = 0; ob < g.COB && !op.onVectorAlu(); ++ob) g.firstInBlock[size_t(ob)] = wl.firstInBlock(ob);
  g.biasEntries = op.epilogue.bias ? g.COB : 0;
  g.inpCap = static_cast<int>(cfg.inpDepth / 2);
  g.wgtCap = static_cast<int>(cfg.wgtDepth / 2);
  g.multEntries = op.epilogue.perChannelMultiplier ? g.COB : 0;
  g.clipEntries = op.epilogue.perChannelClip ? 2 * g.COB : 0;
  // Tiles alternate between the accumulator's two banks (the index's top bit), so the GEMM pipe
  // fills one while the ALU pipe runs the other's epilogue without competing for a bank port
  // (docs/rtl.md). The resident per-channel vectors take the tops of the banks, alternately, so
  // both halves keep the same room.
  const int bankDepth = static_cast<int>(cfg.accDepth) / 2;
  g.accHalf = bankDepth;
  int used[2] = {0, 0}, placed = 0;
  auto place = [&](bool present, int entries, int& base) {
    if (!present) return;
    const int bank = placed++ % 2 == 0 ? 1 : 0;
    used[bank] += entries;
    base = (bank + 1) * bankDepth - used[bank];
  };
  // The scratch region holds LeakyRelu's t, the low bits' product, then HardSwish's t (one after
  // the other).
  const bool scratch = op.epilogue.leaky || op.epilogue.lowBits ||
                       op.epilogue.activation == Epilogue::Activation::kHardSwish || op.epilogue.piecewiseActivation();
  g.accRegions = 1 + (op.residual ? 1 : 0) + (scratch ? 1 : 0);
  g.scratchRegion = op.residual ? 2 : 1;
  g.scaleRows = static_cast<int>(vectorScaleRows(op).size());
  g.residualRow = (op.epilogue.lowBits && op.epilogue.round) ? 1 : 0;
  place(g.biasEntries != 0, g.COB, g.biasBase);
  place(g.multEntries != 0, g.COB, g.multBase);
  place(g.clipEntries != 0, g.COB, g.clipLowBase);
  place(g.clipEntries != 0, g.COB, g.clipHighBase);
  place(op.epilogue.lowBits != 0, g.COB, g.multLowBase);
  place(op.epilogue.leakyPerChannel, g.COB, g.leakyMultBase);
  place(g.scaleRows != 0, g.scaleRows, g.scaleRowBase);
  if (op.inputZeroPoint && (g.PH || g.PW)) g.zeroPointClasses = borderClasses(g).classes;
  place(g.zeroPointClasses != 0, g.zeroPointClasses * g.COB, g.zeroPointBase);
  g.accCap = bankDepth - std::max(used[0], used[1]);
  if (op.residual) {
    const Epilogue& r = op.residualEpilogue;
    // MUL a, MUL b (unless 1), ADD a += b, ADD the rounding, SHR, MIN, MAX.
    g.residualAluOps = (op.residualA != 1) + (op.residualB != 1) + 1 + r.round + (r.shift != 0) + 2 +
                       (r.outputZeroPoint != 0 && !(r.wideScales && r.round));
  }
  g.immAluOps = (op.epilogue.perChannelClip ? 0 : 2) + (op.epilogue.multiplier != 1) + op.epilogue.round +
                (op.epilogue.outputZeroPoint && !op.epilogue.lowBits && !op.epilogue.biasAfterMultiply) +
                (op.epilogue.shift != 0) + (op.epilogue.preShift != 0) + 2 * (op.epilogue.preClip != 0);
  g.vectorAluOps = (g.biasEntries ? 1 : 0) + (g.multEntries ? 1 : 0) + (g.clipEntries ? 2 : 0);
  if (op.epilogue.lowBits) {
    // The copy's reset and the low product's shift; its multiply by the low bits; the copy and the
    // sum read another row per entry.
    g.immAluOps += 2;
    g.vectorAluOps += 1;
    g.twoCycleAluOps = 2;
  }
  if (op.epilogue.leaky) {
    // The copy's reset, the shifts and the multiply; the copy and the max read another row.
    g.immAluOps += 2 + (op.epilogue.leakyPreShift != 0) + (op.epilogue.leakyShift != 0) - op.epilogue.leakyPerChannel;
    g.twoCycleAluOps += 2;
    g.vectorAluOps += op.epilogue.leakyPerChannel;  // the multiply reads the channel's row
  }
  if (op.epilogue.piecewiseActivation()) {
    // The copy's reset, the first clamp, each stage's multiply, shift and clamp, the offset; the
    // shift of p, the multiply, rounding, shift and the two clips to int8. The copy and each
    // stage's + v read another row per entry (silu: v * t too).
    const Epilogue& e = op.epilogue;
    const int stages = Epilogue::kActivationStages;
    g.immAluOps += 1 + 2 + stages * (3 + (e.activationSlopeShift != 0)) + (e.activationOffset != 0) +
                   (e.activationPreShift != 0) + 5;
    g.twoCycleAluOps += 1 + stages + (e.activation == Epilogue::Activation::kSilu);
  } else if (op.epilogue.activation != Epilogue::Activation::kNone) {
    // t's add, max and min; the multiply, rounding, shift and the two clips to int8. HardSwish:
    // also the copy's reset and p's shift; the copy and v * t read another row per entry.
    g.immAluOps += 8;
    if (op.epilogue.activation == Epilogue::Activation::kHardSwish) {
      g.immAluOps += 2;
      g.twoCycleAluOps += 2;
    }
  }
  return g;
}

BorderClasses borderClasses(const Geometry& g) {
  BorderClasses b;
  // Kernel taps k with out * stride + k * dilation - pad outside [0, size): the first `before`, the
  // last `after` (rounded up: a tap lands outside once its offset passes the edge).
  auto kinds = [](int outs, int stride, int pad, int kernel, int dilation, int size, std::vector<BorderClasses::Kind>& list,
                  std::vector<int>& of) {
    list.push_back({0, 0});
    for (int o = 0; o < outs; ++o) {
      const int start = o * stride - pad;
      const int before = start < 0 ? (-start + dilation - 1) / dilation : 0;
      const int inside = size - start;  // offsets 0 .. inside - 1 land in the input
      const int reach = inside <= 0 ? 0 : (inside + dilation - 1) / dilation;  // taps before the far edge
      BorderClasses::Kind k{std::clamp(before, 0, kernel), std::clamp(kernel - reach, 0, kernel)};
      const auto it = std::find(list.begin(), list.end(), k);
      of.push_back(int(it - list.begin()));
      if (it == list.end()) list.push_back(k);
    }
  };
  kinds(g.OH, g.SH, g.PH, g.KH, g.DH, g.H, b.rowKinds, b.rowKindOf);
  kinds(g.OW, g.SW, g.PW, g.KW, g.DW, g.W, b.colKinds, b.colKindOf);
  b.classOf.assign(b.rowKinds.size() * b.colKinds.size(), -1);
  for (size_t r = 0; r < b.rowKinds.size(); ++r)
    for (size_t c = 0; c < b.colKinds.size(); ++c)
      if (r != 0 || c != 0) b.classOf[r * b.colKinds.size() + c] = b.classes++;
  return b;
}

std::vector<BorderRun> borderRuns(const Geometry& g, const BorderClasses& b, const Tiling& t, int yt, int xt) {
  (void)g;
  std::vector<BorderRun> runs, singles;
  for (int r = 0; r < t.th; ++r) {
    const int y = yt * t.th + r;
    for (int c = 0; c < t.tw;) {
      const int cls = b.classAt(y, xt * t.tw + c);
      int end = c + 1;
      while (end < t.tw && b.classAt(y, xt * t.tw + end) == cls) ++end;
      if (cls >= 0) (end - c > 1 ? runs : singles).push_back({r, c, end - c, cls, false});
      c = end;
    }
  }
  // Single outputs of one class in one column on consecutive rows (a left or right border) merge
  // into one run down the column.
  std::stable_sort(singles.begin(), singles.end(), [](const BorderRun& a, const BorderRun& b) {
    return a.col != b.col ? a.col < b.col : a.row < b.row;
  });
  for (size_t i = 0; i < singles.size();) {
    size_t j = i + 1;
    while (j < singles.size() && singles[j].col == singles[i].col && singles[j].cls == singles[i].cls &&
           singles[j].row == singles[j - 1].row + 1)
      ++j;
    runs.push_back({singles[i].row, singles[i].col, int(j - i), singles[i].cls, j - i > 1});
    i = j;
  }
  return runs;
}

std::vector<int32_t> zeroPointBias(const Operator& op, const OperatorData& data) {
  const size_t per = size_t(op.groupInChannels()) * op.kernelH * op.kernelW;
  std::vector<int32_t> out(data.bias);
  for (size_t o = 0; o < out.size(); ++o) {
    uint32_t sum = 0;
    for (size_t j = 0; j < per; ++j) sum += uint32_t(int32_t(data.weights[o * per + j]));
    out[o] = int32_t(uint32_t(out[o]) - uint32_t(op.inputZeroPoint) * sum);
  }
  return out;
}

std::vector<int32_t> zeroPointCorrections(const Geometry& g, const Operator& op, const OperatorData& data) {
  const BorderClasses b = borderClasses(g);
  const int O = op.outChannels, C = op.groupInChannels(), KH = op.kernelH, KW = op.kernelW;
  // Each tap's weights summed over the (group's) input channels.
  std::vector<int64_t> tap(size_t(O) * KH * KW, 0);
  for (int o = 0; o < O; ++o)
    for (int c = 0; c < C; ++c)
      for (int k = 0; k < KH * KW; ++k) tap[size_t(o) * KH * KW + k] += data.weights[(size_t(o) * C + c) * KH * KW + k];
  const size_t rowLen = size_t(g.COB) * g.BO;
  std::vector<int32_t> rows(size_t(b.classes) * rowLen, 0);
  for (size_t rk = 0; rk < b.rowKinds.size(); ++rk)
    for (size_t ck = 0; ck < b.colKinds.size(); ++ck) {
      const int cls = b.classOf[rk * b.colKinds.size() + ck];
      if (cls < 0) continue;
      const auto& r = b.rowKinds[rk];
      const auto& c = b.colKinds[ck];
      for (int o = 0; o < O; ++o) {
        int64_t outside = 0;
        for (int ky = 0; ky < KH; ++ky)
          for (int kx = 0; kx < KW; ++kx)
            if (ky < r.before || ky >= KH - r.after || kx < c.before || kx >= KW - c.after)
              outside += tap[(size_t(o) * KH + ky) * KW + kx];
        rows[size_t(cls) * rowLen + size_t(o)] = int32_t(uint32_t(uint64_t(outside) * uint32_t(op.inputZeroPoint)));
      }
    }
  return rows;
}

TileShape tileShape(const Geometry& g, const Tiling& t) {
  TileShape s;
  s.rowStep = g.KH == 1 ? g.SH : 1;  // a one-row kernel needs every stride-th row only
  s.ih = g.KH == 1 ? t.th : (t.th - 1) * g.SH + g.extentH();
  s.iw = (t.tw - 1) * g.SW + g.extentW();
  s.srcRowFactor = (g.KH == 1 ? 1 : g.SH) * s.iw;
  // Consecutive micro-ops must write different accumulator entries (VTA's rule): with one output
  // channel block per tile the innermost micro-op dimension is the output column instead.
  s.coInner = t.tco >= 2 || t.tw < 2;
  s.gemmUops = s.coInner ? t.tci * g.KH * g.KW * t.tco : g.KH * g.KW * t.tw;
  s.inpEntries = t.tci * s.ih * s.iw;
  s.wgtEntries = t.tco * t.tci * g.KH * g.KW;
  s.accEntries = t.tco * t.th * t.tw;
  // Four GEMM kernels (input half x accumulator half), a reset and an immediate-ALU kernel per
  // accumulator half, and a bias kernel per (output-channel tile, accumulator half).
  s.slots = 2 * s.accEntries * g.accRegions <= g.accCap ? 4 : 2;
  // Per accumulator region: two GEMM kernels (one per input half), a reset and an immediate-ALU
  // kernel, a per-channel kernel per (output-channel tile) and vector operand; a residual add's
  // and the low multiplier bits' kernels.
  s.uopEntries = s.slots * (2 * s.gemmUops + 2 + (g.COB / t.tco) * g.vectorAluOps);
  if (g.accRegions >= 2) s.uopEntries += s.slots * (2 + 3 + 5);
  if (g.zeroPointClasses && t.th > 0 && t.tw > 0 && g.OH % t.th == 0 && g.OW % t.tw == 0) {
    // One micro-op per border run of each tile (and accumulator region and output-channel tile);
    // the runs of tiles alike are the same kernels.
    const BorderClasses b = borderClasses(g);
    long runs = 0;
    for (int yt = 0; yt < g.OH / t.th; ++yt)
      for (int xt = 0; xt < g.OW / t.tw; ++xt) runs += long(borderRuns(g, b, t, yt, xt).size());
    s.uopEntries += int(std::min<long>(runs * s.slots * (g.COB / std::max(t.tco, 1)), 1 << 30));
  }
  s.stepsPerTile = g.RB / t.tci;
  s.tiles = long(g.NB) * (g.COB / t.tco) * (g.OH / t.th) * (g.OW / t.tw);
  return s;
}

Window window(int outStart, int stride, int pad, int extent, int count, int step, int inputSize) {
  (void)extent;
  Window w;
  const int start = outStart * stride - pad;
  for (int r = 0; r < count; ++r) {
    const int i = start + r * step;
    if (i < 0) ++w.pad0;
    else if (i >= inputSize) ++w.pad1;
  }
  w.size = count - w.pad0 - w.pad1;
  w.first = start + w.pad0 * step;
  return w;
}

int64_t fieldMax(const hw::InsnLayout& layout, hw::Opcode op, hw::Field f) {
  return (int64_t(1) << layout.width(op, f)) - 1;
}

}  // namespace detail

namespace {

using detail::fieldMax;

std::vector<int> divisors(int n) {
  std::vector<int> d;
  for (int i = 1; i <= n; ++i)
    if (n % i == 0) d.push_back(i);
  return d;
}

}  // namespace

std::string tilingProblem(const hw::Config& cfg, const Operator& op, const Tiling& t) {
  if (op.onVectorAlu()) return detail::vectorTilingProblem(cfg, op, t);
  const Geometry g = detail::geometry(cfg, op);
  if (t.tco <= 0 || t.th <= 0 || t.tw <= 0 || t.tci <= 0) return "tile sizes must be positive";
  if (g.COB % t.tco) return "tco=" + std::to_string(t.tco) + " does not divide " + std::to_string(g.COB) + " output-channel blocks";
  if (g.OH % t.th) return "th=" + std::to_string(t.th) + " does not divide " + std::to_string(g.OH) + " output rows";
  if (g.OW % t.tw) return "tw=" + std::to_string(t.tw) + " does not divide " + std::to_string(g.OW) + " output columns";
  if (g.RB % t.tci)
    return "tci=" + std::to_string(t.tci) + " does not divide " + std::to_string(g.RB) + " input-channel blocks" +
           (g.RB != g.CIB ? " (those of an output block's groups)" : "");
  // A tile's output blocks share one reduction: the same input blocks.
  for (int ob = 0; ob < g.COB; ++ob)
    if (g.firstInBlock[size_t(ob)] != g.firstInBlock[size_t(ob - ob % t.tco)])
      return "tco=" + std::to_string(t.tco) + " puts output blocks of groups reading different input blocks in one tile";
  if (g.accCap <= 0) return "the accumulator cannot hold the bias and two tiles";
  const TileShape s = detail::tileShape(g, t);
  auto over = [](const char* what, long need, long have) {
    return std::string(what) + " needs " + std::to_string(need) + " entries, a half holds " + std::to_string(have);
  };
  if (s.inpEntries > g.inpCap) return over("input tile", s.inpEntries, g.inpCap);
  if (s.wgtEntries > g.wgtCap) return over("weight tile", s.wgtEntries, g.wgtCap);
  if (s.accEntries * g.accRegions > g.accCap)
    return over(g.accRegions > 1 ? "accumulator tile with its residual operand or scratch region" : "accumulator tile",
                s.accEntries * g.accRegions, g.accCap);
  if (s.uopEntries > static_cast<long>(cfg.uopDepth))
    return "micro-op kernels need " + std::to_string(s.uopEntries) + " entries, the buffer holds " +
           std::to_string(cfg.uopDepth);
  const hw::InsnLayout layout(cfg);
  using hw::Field;
  using hw::Opcode;
  auto fits = [&](Opcode o, Field f, int64_t v) { return v <= fieldMax(layout, o, f); };
  // GEMM loops: (y, x) or (y, ci); the ALU and reset loops walk the tile's entries.
  const int64_t inIter = s.coInner ? t.tw : t.tci;
  if (!fits(Opcode::kGemm, Field::kIterOut, t.th) || !fits(Opcode::kGemm, Field::kIterIn, inIter) ||
      !fits(Opcode::kAlu, Field::kIterOut, s.accEntries))
    return "loop extents exceed the iteration fields";
  if (!fits(Opcode::kGemm, Field::kDstFactorOut, t.tw) || !fits(Opcode::kGemm, Field::kSrcFactorOut, s.srcRowFactor) ||
      !fits(Opcode::kGemm, Field::kSrcFactorIn, s.coInner ? g.SW : s.ih * s.iw) ||
      !fits(Opcode::kGemm, Field::kWgtFactorIn, s.coInner ? 0 : g.KH * g.KW))
    return "loop factors exceed the GEMM factor fields";
  const int64_t memMax = (int64_t(1) << hw::kMemSizeBits) - 1, padMax = (int64_t(1) << hw::kMemPadBits) - 1;
  if (s.iw > memMax || s.ih > memMax || int64_t(s.rowStep) * g.W > memMax || int64_t(g.RB) * g.KH * g.KW > memMax ||
      int64_t(t.tci) * g.KH * g.KW > memMax || int64_t(g.OH) * g.OW > memMax || int64_t(t.th) * g.OW > memMax)
    return "a LOAD or STORE size or stride exceeds its 16-bit field";
  const detail::Window top = detail::window(0, g.SH, g.PH, g.H, s.ih, s.rowStep, g.H);
  const detail::Window bottom = detail::window(g.OH - t.th, g.SH, g.PH, g.H, s.ih, s.rowStep, g.H);
  const detail::Window left = detail::window(0, g.SW, g.PW, g.W, s.iw, 1, g.W);
  const detail::Window right = detail::window(g.OW - t.tw, g.SW, g.PW, g.W, s.iw, 1, g.W);
  for (const auto& w : {top, bottom, left, right}) {
    if (w.pad0 > padMax || w.pad1 > padMax) return "padding of a tile exceeds the 4-bit LOAD pad fields";
    if (w.size <= 0) return "a tile's input window lies entirely in the padding";
  }
  return "";
}

CostEstimate estimateCycles(const hw::Config& cfg, const Operator& op, const Tiling& t, const CostParams& p) {
  if (op.onVectorAlu()) return detail::vectorEstimate(cfg, op, t, p);
  const Geometry g = detail::geometry(cfg, op);
  const TileShape s = detail::tileShape(g, t);
  // One burst per row after the first burst's latency (hw::DramTiming::rowReadCycles).
  auto read = [&](double rows, double rowBytes) {
    return p.loadInsnCycles + p.dram.readLatency + p.dram.rowReadCycles(rows, rowBytes, cfg.busBytes);
  };
  const double entries = s.accEntries;
  const double load = t.tci * read(s.ih, double(s.iw) * cfg.inpElemBytes) +
                      read(t.tco, double(t.tci) * g.KH * g.KW * cfg.wgtElemBytes);
  const double compute = double(s.gemmUops) * (s.coInner ? double(t.th) * t.tw : double(t.th) * t.tci) *
                             (s.coInner ? 1.0 : t.tco) +
                         p.computeInsnCycles;
  const double reset = entries + p.computeInsnCycles;
  const double convEpilogue = g.immAluOps * (entries + p.computeInsnCycles) +
                              // each channel block's source row is read once, then held (tessera_uop_pipe.sv)
                              g.vectorAluOps * (entries + t.tco + p.computeInsnCycles) +
                              g.twoCycleAluOps * (2 * entries + p.computeInsnCycles);
  const int stores = t.tw == g.OW ? 1 : t.tco;
  const double store = stores * p.storeInsnCycles + p.dram.writeLatency +
                       entries * cfg.outElemBytes / p.dram.busRate(cfg.busBytes);
  // A fused residual add: the operand's LOAD runs on the compute stage with both pipes empty (the
  // GEMM pipe waits for it), and its ALU instructions join the epilogue (the vector ADD reads two
  // rows per entry).
  const double residualLoad =
      op.residual ? (t.tw == g.OW ? read(t.tco, double(t.th) * g.OW * cfg.acc8ElemBytes)
                                        : t.tco * read(t.th, double(t.tw) * cfg.acc8ElemBytes)) +
                              p.computeInsnCycles
                        : 0.0;
  const double residualAlu = op.residual ? g.residualAluOps * (entries + p.computeInsnCycles) + entries : 0.0;
  const double epilogue = convEpilogue + residualAlu;
  // The compute stage's GEMM pipe runs the reduction steps back to back while its ALU pipe runs
  // the previous tile's epilogue and the next tile's reset in the other accumulator bank
  // (docs/rtl.md). Instructions leave the queue in order, so the GEMM pipe waits after a step
  // until the ALU pipe has taken all but the last epilogue instruction issued after it. The last
  // one pushes the store's token, which waits for the older GEMM step to finish; the store
  // follows, and the reset of the tile after next waits for it (the two tiles share a bank).
  const double gemmStep = std::max(compute, load);
  const double lastAlu = entries + p.computeInsnCycles;
  // The epilogue's instructions go out over the first steps (all but the last when there are three
  // or more), so the GEMM pipe waits only when a step's share outlasts the step.
  const double spread = s.stepsPerTile >= 3 ? double(s.stepsPerTile - 1) : 1.0;
  const double gemmSide = s.stepsPerTile * gemmStep + spread * std::max(0.0, (epilogue - lastAlu) / spread - gemmStep) +
                          residualLoad;
  // With four regions the reset waits for the store of the tile four back, long done: the ALU
  // pipe's work and the store only need to keep up.
  const double storeSide = s.slots == 4 ? std::max(epilogue + reset, store) + residualLoad
                                        : std::max(epilogue, gemmStep) + store + reset + residualLoad;
  const double tile = std::max(gemmSide, storeSide);
  CostEstimate e;
  const double setup = read(1, double(s.uopEntries) * cfg.uopBytes) + (g.biasEntries ? read(1, double(g.COB) * cfg.accElemBytes) : 0) +
                       (g.multEntries ? read(1, double(g.COB) * cfg.accElemBytes) : 0) +
                       (g.clipEntries ? 2 * read(1, double(g.COB) * cfg.accElemBytes) : 0) +
                       (g.scaleRows ? read(1, double(g.scaleRows) * cfg.accElemBytes) : 0) +
                       (op.epilogue.lowBits ? read(1, double(g.COB) * cfg.accElemBytes) : 0);
  e.cycles = setup + load + reset + double(s.tiles) * tile + residualLoad + epilogue + store;
  e.computeCycles = double(s.tiles) * s.stepsPerTile * compute;
  e.loadCycles = double(s.tiles) * s.stepsPerTile * load;
  e.storeCycles = double(s.tiles) * store;
  e.epilogueCycles = double(s.tiles) * (reset + epilogue);
  return e;
}

Tiling chooseTiling(const hw::Config& cfg, const Operator& op, uint64_t* legal, const CostParams& params) {
  const Geometry g = detail::geometry(cfg, op);
  Tiling best;
  double bestCycles = 0;
  uint64_t count = 0;
  std::string firstProblem;
  // The vector-ALU operators tile planes (tco) and have no reduction over channels (tci = 1).
  const bool vector = op.onVectorAlu();
  for (int tco : divisors(vector ? detail::vectorPlanes(cfg, op) : g.COB))
    for (int tci : vector ? std::vector<int>{1} : divisors(g.RB))
      for (int th : divisors(g.OH))
        for (int tw : divisors(g.OW)) {
          const Tiling t{tco, th, tw, tci};
          const std::string problem = tilingProblem(cfg, op, t);
          if (!problem.empty()) {
            if (firstProblem.empty() || (tco == 1 && tci == 1 && th == 1 && tw == 1)) firstProblem = problem;
            continue;
          }
          ++count;
          const double c = estimateCycles(cfg, op, t, params).cycles;
          if (count == 1 || c < bestCycles) {
            best = t;
            bestCycles = c;
          }
        }
  if (legal) *legal = count;
  if (!count)
    throw Error(op.name.empty() ? op.describe() : op.name,
                "no tiling fits config " + cfg.name + " (smallest tiling: " + firstProblem + ")");
  return best;
}

}  // namespace tessera::compiler::op
