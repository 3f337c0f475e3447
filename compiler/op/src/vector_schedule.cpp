// The vector-ALU operators' schedule (add, max and average pooling): geometry, tiling legality and the cost model.
#include <algorithm>

#include "schedule.h"

namespace tessera::compiler::op::detail {

using hw::Field;
using hw::Opcode;

VectorGeometry vectorGeometry(const hw::Config& cfg, const Operator& op) {
  op.validate();
  VectorGeometry g;
  static_cast<SpatialShape&>(g) = spatialShape(op);
  g.isAdd = op.kind == OpKind::kAdd;
  g.isMax = op.kind == OpKind::kMaxPool;
  g.isScale = op.kind == OpKind::kScale;
  g.padZeroPoint = op.kind == OpKind::kAvgPool && op.inputZeroPoint && (g.PH || g.PW);
  g.P = ((op.batch + cfg.batch - 1) / cfg.batch) * ((op.inChannels + cfg.blockOut - 1) / cfg.blockOut);
  g.rows = static_cast<int>(vectorScaleRows(op).size());
  g.accCap = (static_cast<int>(cfg.accDepth) - g.rows) / 2;
  g.rowBase = static_cast<int>(cfg.accDepth) - g.rows;
  return g;
}

VectorTile vectorTile(const VectorGeometry& g, const Tiling& t) {
  VectorTile s;
  s.ih = (t.th - 1) * g.SH + g.KH;
  s.iw = (t.tw - 1) * g.SW + g.KW;
  s.windowRows = s.ih;
  s.outEntries = t.tco * t.th * t.tw;
  const bool chunkable = !g.isAdd && !g.isMax && !g.isScale && t.th == 1 && t.tw == 1 && g.PH == 0 && g.PW == 0;
  if (chunkable && t.tco * s.ih * s.iw + s.outEntries > g.accCap) {
    s.windowRows = std::max(1, (g.accCap - s.outEntries) / std::max(1, t.tco * s.iw));
    s.chunks = (s.ih + s.windowRows - 1) / s.windowRows;
  }
  s.windowEntries = t.tco * s.windowRows * s.iw;
  // add and scale compute in their first operand's region; scale's second operand is one entry per plane.
  s.outBase = g.isAdd || g.isScale ? 0 : s.windowEntries;
  s.accEntries = s.windowEntries + (g.isScale ? t.tco : s.outEntries);
  // Per half: one micro-op per (window position, plane); regions; padding fix-ups (top/left share
  // one, bottom and right one per distinct padding width).
  const int padFixups = g.isMax || g.padZeroPoint ? 1 + 2 * (1 << hw::kMemPadBits) : 0;
  s.uopBound = (g.isAdd || g.isScale ? 2 * 3 : 2 * (std::min(g.KH, s.windowRows) * g.KW * t.tco + 2 + padFixups)) + 2 * g.rows;
  return s;
}

namespace {

// What one tile costs on the timed targets (docs/compiler.md): ACC_8BIT loads and the ALU run on
// the compute stage one after the other; the store of a tile overlaps the next tile.
struct VectorCost {
  double load = 0, alu = 0, store = 0, setup = 0;
  long tiles = 0;
};

}  // namespace

int vectorPlanes(const hw::Config& cfg, const Operator& op) { return vectorGeometry(cfg, op).P; }

std::vector<int32_t> vectorScaleRows(const Operator& op) {
  const Epilogue& e = op.epilogue;
  if (op.kind == OpKind::kConv2d || op.kind == OpKind::kDense) {
    std::vector<int32_t> rows;
    // The rounding row carries the output zero point too (Epilogue::outputZeroPoint).
    if (e.lowBits && e.round)
      rows.push_back(int32_t(uint32_t(1) << (e.shift - 1)) + int32_t(uint32_t(e.outputZeroPoint) << e.shift));
    if (op.residual && op.residualEpilogue.wideScales) {
      const Epilogue& r = op.residualEpilogue;
      const uint32_t rounding = r.round ? uint32_t(1) << (r.shift - 1) : 0;
      rows.insert(rows.end(), {op.residualA, op.residualB,
                               int32_t(rounding + (uint32_t(r.outputZeroPoint) << r.shift) -
                                       uint32_t(e.outputZeroPoint) * uint32_t(op.residualA) -
                                       uint32_t(op.residualZeroPointB) * uint32_t(op.residualB))});
    }
    return rows;
  }
  if (!e.wideScales) return {};
  const int32_t rounding = e.round ? int32_t(1) << (e.shift - 1) : 0;
  if (op.kind == OpKind::kAdd) {
    // With zero points: (a - za) * A + (b - zb) * B + 2^(s-1) + Z * 2^s, the constants in one row
    // (wrapping, as the ALU adds).
    const uint32_t row = uint32_t(rounding) + (uint32_t(e.outputZeroPoint) << e.shift) -
                         uint32_t(op.zeroPointA) * uint32_t(op.scaleA) - uint32_t(op.zeroPointB) * uint32_t(op.scaleB);
    return {op.scaleA, op.scaleB, int32_t(row)};
  }
  if (op.kind == OpKind::kAvgPool) return {e.multiplier, poolRounding(op)};
  if (op.kind == OpKind::kScale) return {e.multiplier, rounding};
  return {};
}

std::string vectorTilingProblem(const hw::Config& cfg, const Operator& op, const Tiling& t) {
  const VectorGeometry g = vectorGeometry(cfg, op);
  if (t.tco <= 0 || t.th <= 0 || t.tw <= 0 || t.tci <= 0) return "tile sizes must be positive";
  if (t.tci != 1) return "tci must be 1 for " + kindName(op.kind) + " (it has no channel reduction)";
  if (g.P % t.tco) return "tco=" + std::to_string(t.tco) + " does not divide " + std::to_string(g.P) + " planes";
  if (g.OH % t.th) return "th=" + std::to_string(t.th) + " does not divide " + std::to_string(g.OH) + " output rows";
  if (g.OW % t.tw) return "tw=" + std::to_string(t.tw) + " does not divide " + std::to_string(g.OW) + " output columns";
  const VectorTile s = vectorTile(g, t);
  if (s.accEntries > g.accCap)
    return "accumulator tile needs " + std::to_string(s.accEntries) + " entries, a half holds " +
           std::to_string(g.accCap);
  if (s.uopBound > static_cast<long>(cfg.uopDepth))
    return "micro-op kernels need up to " + std::to_string(s.uopBound) + " entries, the buffer holds " +
           std::to_string(cfg.uopDepth);
  const hw::InsnLayout layout(cfg);
  auto fits = [&](Opcode o, Field f, int64_t v) { return v <= fieldMax(layout, o, f); };
  // Region loops (tco*th, tw) with factor tw; window loops (th, tw) with factors (SH*iw, SW); the
  // padding fix-ups walk (tco, pad rows*iw) and (tco*ih, pad columns) with factors ih*iw and iw.
  if (!fits(Opcode::kAlu, Field::kIterOut, int64_t(t.tco) * std::max(t.th, s.windowRows)) ||
      !fits(Opcode::kAlu, Field::kIterIn, int64_t(std::max(t.tw, s.iw)) * std::max(1, g.PH + 1)))
    return "loop extents exceed the iteration fields";
  if (!fits(Opcode::kAlu, Field::kDstFactorOut, std::max(t.tw, s.windowRows * s.iw)) ||
      !fits(Opcode::kAlu, Field::kSrcFactorOut, std::max(int64_t(g.SH) * s.iw, int64_t(s.windowRows) * s.iw)) ||
      !fits(Opcode::kAlu, Field::kSrcFactorIn, g.SW))
    return "loop factors exceed the ALU factor fields";
  // scale's multiply by b walks (tco, th*tw) with factor th*tw.
  if (g.isScale && (!fits(Opcode::kAlu, Field::kIterIn, int64_t(t.th) * t.tw) ||
                    !fits(Opcode::kAlu, Field::kDstFactorOut, int64_t(t.th) * t.tw)))
    return "loop extents exceed the iteration fields";
  const int64_t memMax = (int64_t(1) << hw::kMemSizeBits) - 1, padMax = (int64_t(1) << hw::kMemPadBits) - 1;
  if (s.ih > memMax || s.iw > memMax || g.W > memMax || g.OW > memMax || t.tco > memMax)
    return "a LOAD or STORE size or stride exceeds its 16-bit field";
  const Window top = window(0, g.SH, g.PH, g.H, s.ih, 1, g.H);
  const Window bottom = window(g.OH - t.th, g.SH, g.PH, g.H, s.ih, 1, g.H);
  const Window left = window(0, g.SW, g.PW, g.W, s.iw, 1, g.W);
  const Window right = window(g.OW - t.tw, g.SW, g.PW, g.W, s.iw, 1, g.W);
  for (const auto& w : {top, bottom, left, right}) {
    if (w.pad0 > padMax || w.pad1 > padMax) return "padding of a tile exceeds the 4-bit LOAD pad fields";
    if (w.size <= 0) return "a tile's input window lies entirely in the padding";
  }
  return "";
}

namespace {

VectorCost vectorCost(const hw::Config& cfg, const Operator& op, const Tiling& t, const CostParams& p) {
  const VectorGeometry g = vectorGeometry(cfg, op);
  const VectorTile s = vectorTile(g, t);
  auto read = [&](double rows, double rowBytes) {
    return p.loadInsnCycles + p.dram.readLatency + p.dram.rowReadCycles(rows, rowBytes, cfg.busBytes);
  };
  VectorCost c;
  c.tiles = long(g.P / t.tco) * (g.OH / t.th) * (g.OW / t.tw);
  const double e = s.outEntries;
  const double acc8 = cfg.acc8ElemBytes;
  // The ALU takes one micro-op per cycle with an immediate or a held source row (a wide form's
  // resident scale rows), and one per two cycles with a vector source that changes every micro-op.
  auto imm = [&](double n) { return n + p.computeInsnCycles; };
  auto vec = [&](double n) { return 2 * n + p.computeInsnCycles; };
  // Whole rows of unpadded planes are contiguous in DRAM and load in one instruction for all planes.
  const bool merged = s.iw == g.W && g.PH == 0 && g.PW == 0;
  const double window = s.chunks > 1 ? s.chunks * read(t.tco, double(s.windowRows) * s.iw * acc8)
                        : merged     ? read(t.tco, double(s.ih) * s.iw * acc8)
                                     : t.tco * read(s.ih, s.iw * acc8);
  if (g.isScale) {
    // a's window and one entry per plane of b; the multiply by b holds each plane's row.
    c.load = window + read(1, t.tco * acc8);
    c.alu = imm(e) + 5 * imm(e);
  } else if (g.isAdd) {
    c.load = 2 * window;
    const int immOps = (op.scaleA != 1) + (op.scaleB != 1) + op.epilogue.round + (op.epilogue.shift != 0) + 2 +
                       (op.epilogue.outputZeroPoint != 0 && !(op.epilogue.wideScales && op.epilogue.round));
    c.alu = vec(e) + immOps * imm(e);
  } else {
    c.load = window;
    int32_t m = 1;
    int sh = 0;
    poolScale(op, &m, &sh);
    // max: the initial min and the padding fix-ups (short, on border tiles only); avg: reset, divide,
    // clip, and the fix-ups with a zero point.
    const int immOps = g.isMax ? 1 : 1 + (m != 1) + 2 * (sh != 0) + 2;
    const double fixups = (g.isMax || g.padZeroPoint) && (g.PH || g.PW) ? 2 * p.computeInsnCycles : 0;
    c.alu = g.KH * g.KW * vec(e) + immOps * imm(e) + fixups;
  }
  c.store = (t.tw == g.OW ? 1 : t.tco) * p.storeInsnCycles + p.dram.writeLatency +
            e * cfg.outElemBytes / p.dram.busRate(cfg.busBytes);
  const double uops = (g.isAdd || g.isScale ? 6 : 2.0 * (std::min(g.KH, s.windowRows) * g.KW * t.tco + 2)) + 2 * g.rows;  // both halves, fix-ups aside
  c.setup = read(1, uops * cfg.uopBytes) + (g.rows ? read(1, double(g.rows) * cfg.accElemBytes) : 0);
  return c;
}

}  // namespace

CostEstimate vectorEstimate(const hw::Config& cfg, const Operator& op, const Tiling& t, const CostParams& p) {
  const VectorCost c = vectorCost(cfg, op, t, p);
  const double busy = c.load + c.alu;
  CostEstimate e;
  e.cycles = c.setup + double(c.tiles) * (busy + std::max(0.0, c.store - busy)) + c.store;
  e.loadCycles = double(c.tiles) * c.load;
  e.epilogueCycles = double(c.tiles) * c.alu;
  e.storeCycles = double(c.tiles) * c.store;
  return e;
}

}  // namespace tessera::compiler::op::detail
