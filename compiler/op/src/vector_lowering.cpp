// The vector lowering: add, max pooling and average pooling as ALU runtime calls and micro-op kernels for a chosen tiling.
#include <algorithm>
#include <sstream>

#include "lowering.h"
#include "schedule.h"

namespace tessera::compiler::op::detail {

using hw::AluOp;
using hw::MemId;
using hw::Opcode;
using hw::Stage;

namespace {

class VectorLowering : public OperatorLowering {
 public:
  VectorLowering(const hw::Config& cfg, const Operator& op, const Tiling& t)
      : op_(op), t_(t), g_(vectorGeometry(cfg, op)), s_(vectorTile(g_, t)) {}

  void run(Program& prog) override {
    const int inBuf = prog.bufferIndex("input"), outBuf = prog.bufferIndex("output");
    const int in2Buf = g_.isAdd || g_.isScale ? prog.bufferIndex("input2") : -1;
    loadUops(prog.bufferIndex("uops"));
    if (g_.rows)
      add(memInsn(Opcode::kLoad, MemId::kAcc, uint32_t(g_.rowBase), 0, 1, uint32_t(g_.rows), uint32_t(g_.rows)),
          prog.bufferIndex("scales"));
    long tile = 0;
    for (int pt = 0; pt < g_.P / t_.tco; ++pt)
      for (int yt = 0; yt < g_.OH / t_.th; ++yt)
        for (int xt = 0; xt < g_.OW / t_.tw; ++xt, ++tile) {
          const int q = static_cast<int>(tile % 2);
          const uint32_t base = uint32_t(q * g_.accCap);
          const int plane0 = pt * t_.tco;
          if (tile >= 2) pop(Stage::kStore, Stage::kCompute);
          const Window rows = window(yt * t_.th, g_.SH, g_.PH, g_.H, s_.ih, 1, g_.H);
          const Window cols = window(xt * t_.tw, g_.SW, g_.PW, g_.W, s_.iw, 1, g_.W);
          if (s_.chunks == 1) loadWindow(inBuf, base, plane0, rows, cols);
          if (g_.isAdd) {
            const uint32_t b = base + uint32_t(s_.windowEntries);
            loadWindow(in2Buf, b, plane0, rows, cols);
            addTile(base, b);
          } else if (g_.isScale) {
            // b's entries of the tile's planes: consecutive in DRAM, one LOAD.
            const uint32_t b = base + uint32_t(s_.windowEntries);
            add(memInsn(Opcode::kLoad, MemId::kAcc8, b, uint32_t(plane0), 1, uint32_t(t_.tco), uint32_t(t_.tco)), in2Buf);
            scaleTile(base, b);
          } else if (s_.chunks > 1) {
            chunkedAverageTile(inBuf, base, plane0, cols);
          } else {
            poolTile(base, rows, cols);
          }
          push(Stage::kCompute, Stage::kStore);
          pop(Stage::kCompute, Stage::kStore);
          storeTile(outBuf, base + uint32_t(s_.outBase), plane0, yt, xt);
          push(Stage::kStore, Stage::kCompute);
        }
    for (long i = 0; i < std::min<long>(tile, 2); ++i) pop(Stage::kStore, Stage::kCompute);
    tiles_ = tile;
  }

  std::string loopNest() const override {
    std::ostringstream os;
    const std::string half = "h*" + std::to_string(g_.accCap);
    os << "// tiles: " << t_.tco << " of " << g_.P << " planes (batch block x channel block) x " << t_.th << " of "
       << g_.OH << " rows x " << t_.tw << " of " << g_.OW << " columns; all on the compute stage's vector ALU\n";
    os << "uop[0:..] <- all micro-op kernels          // uop SRAM, loaded once\n";
    if (g_.rows)
      os << "acc[" << g_.rowBase << ":" << g_.rowBase + g_.rows << "] <- scales[0:" << g_.rows
         << "]                  // multipliers and rounding constant, resident; each read once per instruction\n";
    os << "for pt in 0.." << g_.P / t_.tco << ":\n";
    os << " for yt in 0.." << g_.OH / t_.th << ":\n";
    os << "  for xt in 0.." << g_.OW / t_.tw << ":                 // tile t, acc half h = t % 2 ("
       << s_.accEntries << " of " << g_.accCap << " entries)\n";
    if (g_.isScale) {
      os << "   a = acc[" << half << "] : int32 [" << t_.tco << "][" << t_.th << "][" << t_.tw
         << "] <- sext(input[pt*" << t_.tco << "+p][yt*" << t_.th << "+y][xt*" << t_.tw << "+x])   // LOAD ACC_8BIT\n";
      os << "   b = acc[" << half << "+" << s_.windowEntries << "] : int32 [" << t_.tco << "] <- sext(input2[pt*" << t_.tco
         << "+p])   // LOAD ACC_8BIT, one entry per plane\n";
      os << "   a = max(min((a * b[p] * " << op_.epilogue.multiplier << " + " << (1 << (op_.epilogue.shift - 1)) << ") >> "
         << op_.epilogue.shift << ", 127), " << (op_.epilogue.relu ? 0 : -128) << ")   // vector ALU"
         << (g_.rows ? " (multiplier and rounding from resident rows)" : "") << "\n";
      os << "   output[pt*" << t_.tco << "+p][yt*" << t_.th << "+y][xt*" << t_.tw << "+x] <- int8(a)   // STORE\n";
      return os.str();
    }
    if (g_.isAdd) {
      os << "   a = acc[" << half << "] : int32 [" << t_.tco << "][" << t_.th << "][" << t_.tw
         << "] <- sext(input[pt*" << t_.tco << "+p][yt*" << t_.th << "+y][xt*" << t_.tw << "+x])   // LOAD ACC_8BIT\n";
      os << "   b = acc[" << half << "+" << s_.windowEntries << "] : int32 [" << t_.tco << "][" << t_.th << "][" << t_.tw
         << "] <- sext(input2[...])                                 // LOAD ACC_8BIT\n";
      std::string e = "a";
      if (op_.scaleA != 1) e += " * " + std::to_string(op_.scaleA);
      e += " + b";
      if (op_.scaleB != 1) e += " * " + std::to_string(op_.scaleB);
      if (op_.epilogue.round) e = "(" + e + " + " + std::to_string(1 << (op_.epilogue.shift - 1)) + ")";
      if (op_.epilogue.shift) e = "(" + e + ") >> " + std::to_string(op_.epilogue.shift);
      os << "   a = max(min(" << e << ", 127), " << (op_.epilogue.relu ? 0 : -128) << ")   // vector ALU\n";
      os << "   output[pt*" << t_.tco << "+p][yt*" << t_.th << "+y][xt*" << t_.tw << "+x] <- int8(a)   // STORE\n";
      return os.str();
    }
    os << "   win = acc[" << half << "] : int32 [" << t_.tco << "][" << s_.ih << "][" << s_.iw << "] <- sext(input[pt*"
       << t_.tco << "+p][yt*" << t_.th * g_.SH << "-" << g_.PH << " + r][xt*" << t_.tw * g_.SW << "-" << g_.PW
       << " + c])   // LOAD ACC_8BIT, padding zero\n";
    os << "   out = acc[" << half << "+" << s_.outBase << "] : int32 [" << t_.tco << "][" << t_.th << "][" << t_.tw
       << "]\n";
    if (g_.isMax) {
      os << "   out = min(out, -128); win[padding] = min(win[padding], -128)   // padding never wins\n";
      os << "   for ky in 0.." << g_.KH << ", kx in 0.." << g_.KW << ":                  // one ALU MAX each\n";
      os << "    out[p][y][x] = max(out[p][y][x], win[p][y*" << g_.SH << "+ky][x*" << g_.SW << "+kx])\n";
    } else {
      int32_t m = 1;
      int sh = 0;
      poolScale(op_, &m, &sh);
      if (g_.padZeroPoint)
        os << "   win[padding] = " << (op_.inputZeroPoint < 0 ? "min" : "max") << "(win[padding], " << op_.inputZeroPoint
           << ")   // padding stands for 0: the input's zero point\n";
      os << "   out = 0                                      // GEMM reset\n";
      os << "   for ky in 0.." << g_.KH << ", kx in 0.." << g_.KW << ":                  // one ALU ADD each\n";
      os << "    out[p][y][x] += win[p][y*" << g_.SH << "+ky][x*" << g_.SW << "+kx]\n";
      std::string e = "out";
      if (m != 1) e += " * " + std::to_string(m);
      if (sh) e = "(" + e + " + " + std::to_string(1 << (sh - 1)) + ") >> " + std::to_string(sh);
      os << "   out = max(min(" << e << ", 127), -128)   // divide by " << g_.KH * g_.KW << "\n";
    }
    os << "   output[pt*" << t_.tco << "+p][yt*" << t_.th << "+y][xt*" << t_.tw << "+x] <- int8(out)   // STORE\n";
    return os.str();
  }

  std::string tilingText() const override {
    std::ostringstream os;
    os << "tco=" << t_.tco << " th=" << t_.th << " tw=" << t_.tw << " tci=1 (tile " << t_.tco << " planes x " << t_.th
       << "x" << t_.tw << " outputs; vector ALU)";
    return os.str();
  }

  void summarize(ProgramSummary& sum) const override {
    sum.tiles = uint64_t(tiles_);
    sum.steps = uint64_t(tiles_);
    sum.inpEntries = sum.wgtEntries = 0;
    sum.accEntries = uint64_t(std::min<long>(tiles_, 2)) * uint64_t(s_.accEntries);
    sum.paddedMacs = 0;
  }

 private:
  // LOAD ACC_8BIT of every plane's window into consecutive ih x iw blocks at `base`. Whole planes
  // without padding are contiguous in DRAM and go in one 2D LOAD.
  void loadWindow(int buffer, uint32_t base, int plane0, const Window& rows, const Window& cols) {
    const int64_t memMax = (int64_t(1) << hw::kMemSizeBits) - 1;
    // (A chunked window's last chunk may be shorter: its planes still lie windowRows rows apart.)
    const bool contiguous = cols.size == g_.W && !cols.pad0 && !cols.pad1 && !rows.pad0 && !rows.pad1 &&
                            (rows.size == s_.windowRows || t_.tco == 1);
    if (contiguous && int64_t(rows.size) * g_.W <= memMax && int64_t(g_.H) * g_.W <= memMax) {
      add(memInsn(Opcode::kLoad, MemId::kAcc8, base, uint32_t((plane0 * g_.H + rows.first) * g_.W), uint32_t(t_.tco),
                  uint32_t(rows.size * g_.W), uint32_t(g_.H * g_.W)),
          buffer);
      return;
    }
    for (int j = 0; j < t_.tco; ++j) {
      hw::Insn in = memInsn(Opcode::kLoad, MemId::kAcc8, base + uint32_t(j * s_.windowRows * s_.iw),
                            uint32_t(((plane0 + j) * g_.H + rows.first) * g_.W + cols.first), uint32_t(rows.size),
                            uint32_t(cols.size), uint32_t(g_.W));
      in.yPad0 = uint32_t(rows.pad0);
      in.yPad1 = uint32_t(rows.pad1);
      in.xPad0 = uint32_t(cols.pad0);
      in.xPad1 = uint32_t(cols.pad1);
      add(in, buffer);
    }
  }

  void storeTile(int buffer, uint32_t out, int plane0, int yt, int xt) {
    const int64_t memMax = (int64_t(1) << hw::kMemSizeBits) - 1;
    if (t_.tw == g_.OW && int64_t(t_.th) * g_.OW <= memMax && int64_t(g_.OH) * g_.OW <= memMax) {
      add(memInsn(Opcode::kStore, MemId::kOut, out, uint32_t((plane0 * g_.OH + yt * t_.th) * g_.OW), uint32_t(t_.tco),
                  uint32_t(t_.th * g_.OW), uint32_t(g_.OH * g_.OW)),
          buffer);
      return;
    }
    for (int j = 0; j < t_.tco; ++j)
      add(memInsn(Opcode::kStore, MemId::kOut, out + uint32_t(j * t_.th * t_.tw),
                  uint32_t(((plane0 + j) * g_.OH + yt * t_.th) * g_.OW + xt * t_.tw), uint32_t(t_.th), uint32_t(t_.tw),
                  uint32_t(g_.OW)),
          buffer);
  }

  // A kernel over the [tco][th][tw] region at `dst` (source `src`, same shape).
  int regionKernel(const char* name, uint32_t dst, uint32_t src) {
    Kernel k;
    k.name = std::string(name) + "_" + std::to_string(dst);
    k.uops.push_back({dst, src, 0});
    k.iterOut = uint32_t(t_.tco * t_.th);
    k.dstOut = k.srcOut = uint32_t(t_.tw);
    k.iterIn = uint32_t(t_.tw);
    k.dstIn = k.srcIn = 1;
    return kernel(std::move(k));
  }

  // An immediate ALU operation over `rows` rows of `cols` entries starting at `dst`, rows `stride` apart.
  void immRows(uint32_t dst, uint32_t rows, uint32_t cols, uint32_t stride, AluOp op, int32_t imm) {
    Kernel k;
    k.name = "fix_" + std::to_string(dst) + "_" + std::to_string(rows) + "x" + std::to_string(cols);
    k.uops.push_back({dst, dst, 0});
    k.iterOut = rows;
    k.dstOut = k.srcOut = stride;
    k.iterIn = cols;
    k.dstIn = k.srcIn = 1;
    alu(kernel(std::move(k)), op, true, imm);
  }

  // The region at `dst` combined with resident scale row `row`: the source never changes, so the
  // compute stage holds it and each micro-op takes one cycle.
  int rowKernel(uint32_t dst, int row) {
    Kernel k;
    k.name = "row" + std::to_string(row) + "_" + std::to_string(dst);
    k.uops.push_back({dst, uint32_t(g_.rowBase + row), 0});
    k.iterOut = uint32_t(t_.tco * t_.th);
    k.dstOut = uint32_t(t_.tw);
    k.srcOut = 0;
    k.iterIn = uint32_t(t_.tw);
    k.dstIn = 1;
    k.srcIn = 0;
    return kernel(std::move(k));
  }

  // MUL, or ADD, by an immediate or (wide) by resident row `row`.
  void scale(int regionKernel, uint32_t dst, AluOp op, int row, int32_t value) {
    if (g_.rows) alu(rowKernel(dst, row), op, false, 0);
    else alu(regionKernel, op, true, value);
  }

  void addTile(uint32_t a, uint32_t b) {
    const int ka = regionKernel("a", a, a), kb = regionKernel("b", b, b), kab = regionKernel("a_plus_b", a, b);
    if (op_.scaleA != 1) scale(ka, a, AluOp::kMul, 0, op_.scaleA);
    if (op_.scaleB != 1) scale(kb, b, AluOp::kMul, 1, op_.scaleB);
    alu(kab, AluOp::kAdd, false, 0);
    if (op_.epilogue.round) scale(ka, a, AluOp::kAdd, 2, g_.rows ? 0 : 1 << (op_.epilogue.shift - 1));
    if (op_.epilogue.shift) alu(ka, AluOp::kShr, true, op_.epilogue.shift);
    // The output zero point: in the rounding row (wide), else an immediate after the shift.
    if (op_.epilogue.outputZeroPoint && !(g_.rows && op_.epilogue.round))
      alu(ka, AluOp::kAdd, true, op_.epilogue.outputZeroPoint);
    alu(ka, AluOp::kMin, true, 127);
    alu(ka, AluOp::kMax, true, op_.epilogue.relu ? op_.epilogue.outputZeroPoint : -128);
  }

  void scaleTile(uint32_t a, uint32_t b) {
    const int ka = regionKernel("a", a, a);
    // a *= b: one micro-op; the outer loop walks the planes (b's entries), the inner one a plane's
    // entries with b's held.
    Kernel k;
    k.name = "a_times_b_" + std::to_string(a);
    k.uops.push_back({a, b, 0});
    k.iterOut = uint32_t(t_.tco);
    k.dstOut = uint32_t(t_.th * t_.tw);
    k.srcOut = 1;
    k.iterIn = uint32_t(t_.th * t_.tw);
    k.dstIn = 1;
    k.srcIn = 0;
    alu(kernel(std::move(k)), AluOp::kMul, false, 0);
    scale(ka, a, AluOp::kMul, 0, op_.epilogue.multiplier);
    scale(ka, a, AluOp::kAdd, 1, g_.rows ? 0 : 1 << (op_.epilogue.shift - 1));
    alu(ka, AluOp::kShr, true, op_.epilogue.shift);
    alu(ka, AluOp::kMin, true, 127);
    alu(ka, AluOp::kMax, true, op_.epilogue.relu ? 0 : -128);
  }

  // A global average whose window comes in chunks of rows: reset, then per chunk its LOAD and one
  // ALU ADD per window position of the chunk (the same kernels for every chunk), then the divide.
  void chunkedAverageTile(int inBuf, uint32_t win, int plane0, const Window& cols) {
    const uint32_t out = win + uint32_t(s_.outBase);
    resetOutputs(out);
    for (int first = 0; first < g_.KH; first += s_.windowRows) {
      Window rows;
      rows.first = first;
      rows.size = std::min(s_.windowRows, g_.KH - first);
      loadWindow(inBuf, win, plane0, rows, cols);
      windowOps(win, out, rows.size);
    }
    finishAverage(out);
  }

  void resetOutputs(uint32_t out) {
    Kernel r;
    r.name = "reset_" + std::to_string(out);
    r.uops.push_back({out, 0, 0});
    r.iterOut = uint32_t(t_.tco * t_.th);
    r.dstOut = uint32_t(t_.tw);
    r.iterIn = uint32_t(t_.tw);
    r.dstIn = 1;
    gemm(kernel(std::move(r)), true);
  }

  // One instruction per window position (rows 0..kh of the window region); its micro-ops walk the
  // planes, its loops the outputs, so consecutive micro-ops write different entries whenever a tile
  // has more than one output.
  void windowOps(uint32_t win, uint32_t out, int kh) {
    const uint32_t plane = uint32_t(s_.windowRows * s_.iw), iw = uint32_t(s_.iw);
    for (int ky = 0; ky < kh; ++ky)
      for (int kx = 0; kx < g_.KW; ++kx) {
        Kernel k;
        k.name = "window_" + std::to_string(win) + "_" + std::to_string(ky) + "_" + std::to_string(kx);
        for (int j = 0; j < t_.tco; ++j)
          k.uops.push_back({out + uint32_t(j * t_.th * t_.tw), win + uint32_t(j) * plane + uint32_t(ky) * iw + uint32_t(kx), 0});
        k.iterOut = uint32_t(t_.th);
        k.dstOut = uint32_t(t_.tw);
        k.srcOut = uint32_t(g_.SH) * iw;
        k.iterIn = uint32_t(t_.tw);
        k.dstIn = 1;
        k.srcIn = uint32_t(g_.SW);
        alu(kernel(std::move(k)), g_.isMax ? AluOp::kMax : AluOp::kAdd, false, 0);
      }
  }

  // An average's divide (or rescale) and clip of the summed outputs.
  void finishAverage(uint32_t out) {
    const int ko = regionKernel("out", out, out);
    int32_t m = 1;
    int sh = 0;
    poolScale(op_, &m, &sh);
    if (m != 1) scale(ko, out, AluOp::kMul, 0, m);
    if (sh) {
      scale(ko, out, AluOp::kAdd, 1, g_.rows ? 0 : 1 << (sh - 1));
      alu(ko, AluOp::kShr, true, sh);
    }
    alu(ko, AluOp::kMin, true, 127);
    alu(ko, AluOp::kMax, true, -128);
  }

  void poolTile(uint32_t win, const Window& rows, const Window& cols) {
    const uint32_t out = win + uint32_t(s_.outBase);
    const int ko = regionKernel("out", out, out);
    const uint32_t plane = uint32_t(s_.ih * s_.iw), iw = uint32_t(s_.iw), ih = uint32_t(s_.ih);
    // The LOAD's padding is zeros. A max pool's must never win: min(x, -128) is -128 for any int32
    // x >= -128 and leaves smaller values below every input. An average's stands for 0, which is
    // the input's zero point Z when it has one: max(0, Z) or min(0, Z). Both fix-ups are idempotent,
    // so the corners, which a row and a column fix-up both reach, stay right.
    const int32_t padImm = g_.isMax ? -128 : op_.inputZeroPoint;
    const AluOp padOp = g_.isMax || padImm < 0 ? AluOp::kMin : AluOp::kMax;
    if (g_.isMax) alu(ko, AluOp::kMin, true, -128);
    else resetOutputs(out);
    if (g_.isMax || op_.inputZeroPoint) {
      const uint32_t tco = uint32_t(t_.tco);
      if (rows.pad0) immRows(win, tco, uint32_t(rows.pad0) * iw, plane, padOp, padImm);
      if (rows.pad1) immRows(win + (ih - uint32_t(rows.pad1)) * iw, tco, uint32_t(rows.pad1) * iw, plane, padOp, padImm);
      if (cols.pad0) immRows(win, tco * ih, uint32_t(cols.pad0), iw, padOp, padImm);
      if (cols.pad1) immRows(win + iw - uint32_t(cols.pad1), tco * ih, uint32_t(cols.pad1), iw, padOp, padImm);
    }
    windowOps(win, out, g_.KH);
    if (!g_.isMax) finishAverage(out);
  }

  const Operator& op_;
  Tiling t_;
  VectorGeometry g_;
  VectorTile s_;
  long tiles_ = 0;
};

}  // namespace

std::unique_ptr<OperatorLowering> makeVectorLowering(const hw::Config& cfg, const Operator& op, const Tiling& t) {
  return std::make_unique<VectorLowering>(cfg, op, t);
}

}  // namespace tessera::compiler::op::detail
