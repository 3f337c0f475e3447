// The GEMM lowering: conv2d and dense as runtime calls and micro-op kernels for a chosen tiling.
#include <memory>
#include <sstream>

#include "lowering.h"
#include "schedule.h"
#include "tessera/support/error.h"

namespace tessera::compiler::op::detail {

using hw::Insn;
using hw::MemId;
using hw::Opcode;
using hw::Stage;

namespace {

// conv2d and dense on the GEMM core: output tiles double-buffered in the accumulator, reduction
// steps double-buffered in the input and weight buffers, the epilogue on the vector ALU.
class GemmLowering : public OperatorLowering {
 public:
  GemmLowering(const hw::Config& cfg, const Operator& op, const Tiling& t)
      : op_(op), t_(t), g_(detail::geometry(cfg, op)), s_(detail::tileShape(g_, t)) {}

  void run(Program& prog) override {
    buildKernels();
    const int uopBuf = prog.bufferIndex("uops"), inBuf = prog.bufferIndex("input"), wBuf = prog.bufferIndex("weights");
    const int outBuf = prog.bufferIndex("output");
    const int biasBuf = op_.epilogue.bias ? prog.bufferIndex("bias") : -1;
    const int multBuf = op_.epilogue.perChannelMultiplier ? prog.bufferIndex("multipliers") : -1;
    const int clipLowBuf = op_.epilogue.perChannelClip ? prog.bufferIndex("clip_low") : -1;
    const int clipHighBuf = op_.epilogue.perChannelClip ? prog.bufferIndex("clip_high") : -1;
    loadUops(uopBuf);
    if (biasBuf >= 0)
      add(memInsn(Opcode::kLoad, MemId::kAcc, static_cast<uint32_t>(g_.biasBase), 0, 1, uint32_t(g_.COB), uint32_t(g_.COB)),
          biasBuf);
    if (multBuf >= 0)
      add(memInsn(Opcode::kLoad, MemId::kAcc, static_cast<uint32_t>(g_.multBase), 0, 1, uint32_t(g_.COB), uint32_t(g_.COB)),
          multBuf);
    if (clipLowBuf >= 0) {
      add(memInsn(Opcode::kLoad, MemId::kAcc, static_cast<uint32_t>(g_.clipLowBase), 0, 1, uint32_t(g_.COB), uint32_t(g_.COB)),
          clipLowBuf);
      add(memInsn(Opcode::kLoad, MemId::kAcc, static_cast<uint32_t>(g_.clipHighBase), 0, 1, uint32_t(g_.COB),
                  uint32_t(g_.COB)),
          clipHighBuf);
    }
    if (op_.epilogue.lowBits)
      add(memInsn(Opcode::kLoad, MemId::kAcc, static_cast<uint32_t>(g_.multLowBase), 0, 1, uint32_t(g_.COB),
                  uint32_t(g_.COB)),
          prog.bufferIndex("multipliers_low"));
    if (op_.epilogue.leakyPerChannel)
      add(memInsn(Opcode::kLoad, MemId::kAcc, static_cast<uint32_t>(g_.leakyMultBase), 0, 1, uint32_t(g_.COB),
                  uint32_t(g_.COB)),
          prog.bufferIndex("leaky_multipliers"));
    const int in2Buf = op_.residual ? prog.bufferIndex("input2") : -1;
    if (g_.scaleRows)
      add(memInsn(Opcode::kLoad, MemId::kAcc, static_cast<uint32_t>(g_.scaleRowBase), 0, 1, uint32_t(g_.scaleRows),
                  uint32_t(g_.scaleRows)),
          prog.bufferIndex("scales"));
    if (g_.zeroPointClasses)
      add(memInsn(Opcode::kLoad, MemId::kAcc, static_cast<uint32_t>(g_.zeroPointBase), 0, 1,
                  uint32_t(g_.zeroPointClasses * g_.COB), uint32_t(g_.zeroPointClasses * g_.COB)),
          prog.bufferIndex("zero_point_corrections"));
    // A tile's epilogue and store are issued between the next tile's reduction steps: the
    // compute stage runs those GEMMs on one accumulator bank while its ALU pipe requantizes the
    // finished tile in the other (docs/rtl.md), and the next tile's reset goes right after the
    // last GEMM of the tile before it, so it overlaps that GEMM too.
    bool havePending = false;
    FinishedTile pending{};
    long step = 0, tile = 0;
    for (int nb = 0; nb < g_.NB; ++nb)
      for (int cot = 0; cot < g_.COB / t_.tco; ++cot)
        for (int yt = 0; yt < g_.OH / t_.th; ++yt)
          for (int xt = 0; xt < g_.OW / t_.tw; ++xt, ++tile) {
            // Tiles take the accumulator's regions in turn: consecutive tiles alternate banks, and
            // with four regions a tile's reset waits for the store of the tile four back.
            const int q = static_cast<int>(tile % s_.slots);
            if (tile >= s_.slots) pop(Stage::kStore, Stage::kCompute);
            gemm(resetKernel_[q], true);
            if (havePending && in2Buf >= 0) loadResidual(pending, in2Buf);
            std::vector<EpilogueOp> pendingOps;
            if (havePending) pendingOps = epilogueOps(pending, biasBuf, multBuf, clipLowBuf);
            const detail::Window rows = detail::window(yt * t_.th, g_.SH, g_.PH, g_.H, s_.ih, s_.rowStep, g_.H);
            const detail::Window cols = detail::window(xt * t_.tw, g_.SW, g_.PW, g_.W, s_.iw, 1, g_.W);
            // The tile's output blocks read the same input blocks (tilingProblem), from this one.
            const int firstIn = g_.firstInBlock[size_t(cot * t_.tco)];
            for (int cit = 0; cit < s_.stepsPerTile; ++cit, ++step) {
              const int p = static_cast<int>(step % 2);
              if (step >= 2) pop(Stage::kCompute, Stage::kLoad);
              for (int ci = 0; ci < t_.tci; ++ci) {
                Insn in = memInsn(Opcode::kLoad, MemId::kInp,
                                  static_cast<uint32_t>(p * g_.inpCap + ci * s_.ih * s_.iw),
                                  static_cast<uint32_t>(((nb * g_.CIB + firstIn + cit * t_.tci + ci) * g_.H + rows.first) *
                                                            g_.W +
                                                        cols.first),
                                  uint32_t(rows.size), uint32_t(cols.size), uint32_t(s_.rowStep * g_.W));
                in.yPad0 = uint32_t(rows.pad0);
                in.yPad1 = uint32_t(rows.pad1);
                in.xPad0 = uint32_t(cols.pad0);
                in.xPad1 = uint32_t(cols.pad1);
                add(in, inBuf);
              }
              const uint32_t kk = uint32_t(g_.KH * g_.KW);
              add(memInsn(Opcode::kLoad, MemId::kWgt, static_cast<uint32_t>(p * g_.wgtCap),
                          static_cast<uint32_t>((cot * t_.tco * g_.RB + cit * t_.tci) * int(kk)), uint32_t(t_.tco),
                          uint32_t(t_.tci) * kk, uint32_t(g_.RB) * kk),
                  wBuf);
              push(Stage::kLoad, Stage::kCompute);
              pop(Stage::kLoad, Stage::kCompute);
              gemm(gemmKernel_[p][q], false);
              push(Stage::kCompute, Stage::kLoad);
              // The finished tile's epilogue goes out over the first steps, all but the last when
              // there are three or more (so its store overlaps the last); then its store.
              if (havePending) {
                const size_t spread = s_.stepsPerTile >= 3 ? size_t(s_.stepsPerTile - 1) : 1;
                const size_t n = pendingOps.size();
                if (size_t(cit) < spread) issueOps(pendingOps, size_t(cit) * n / spread, (size_t(cit) + 1) * n / spread);
                if (size_t(cit) + 1 == spread) {
                  storeTile(pending, outBuf);
                  havePending = false;
                }
              }
            }
            pending = FinishedTile{nb, cot, yt, xt, q};
            havePending = true;
          }
    if (havePending && in2Buf >= 0) loadResidual(pending, in2Buf);
    if (havePending) {
      const std::vector<EpilogueOp> ops = epilogueOps(pending, biasBuf, multBuf, clipLowBuf);
      issueOps(ops, 0, ops.size());
      storeTile(pending, outBuf);
    }
    // The last releases of each half are never waited for; take them so no token is left at FINISH.
    for (long i = 0; i < std::min<long>(step, 2); ++i) pop(Stage::kCompute, Stage::kLoad);
    for (long i = 0; i < std::min<long>(tile, s_.slots); ++i) pop(Stage::kStore, Stage::kCompute);
    steps_ = step;
    tiles_ = tile;
  }

  // The tiled loop nest as pseudo-code, with the SRAM region each tile lives in.
  std::string loopNest() const override {
    std::ostringstream os;
    const int kk = g_.KH * g_.KW;
    os << "// tiles: " << t_.tco << " of " << g_.COB << " output-channel blocks x " << t_.th << " of " << g_.OH
       << " rows x " << t_.tw << " of " << g_.OW << " columns; reduction steps of " << t_.tci << " of " << g_.RB
       << " input-channel blocks";
    if (g_.RB != g_.CIB)
      os << " (" << op_.groups << " groups: output block ob reads input blocks first[ob].." << "first[ob]+" << g_.RB - 1
         << " of " << g_.CIB << "; the weights of other groups' channels in them are zero)";
    os << "\n";
    os << "uop[0:" << s_.uopEntries << "]  <- all micro-op kernels          // uop SRAM, loaded once\n";
    if (g_.biasEntries)
      os << "acc[" << g_.biasBase << ":" << g_.biasBase + g_.COB << "] <- bias[0:" << g_.COB
         << "]                     // accumulator SRAM, resident\n";
    if (g_.multEntries)
      os << "acc[" << g_.multBase << ":" << g_.multBase + g_.COB << "] <- multiplier[0:" << g_.COB
         << "]               // accumulator SRAM, resident\n";
    if (g_.clipEntries)
      os << "acc[" << g_.clipLowBase << ":" << g_.clipLowBase + g_.COB << "], acc[" << g_.clipHighBase << ":"
         << g_.clipHighBase + g_.COB << "] <- clip low[0:" << g_.COB << "], high[0:"
         << g_.COB << "]      // accumulator SRAM, resident\n";
    if (g_.zeroPointClasses)
      os << "acc[" << g_.zeroPointBase << ":" << g_.zeroPointBase + g_.zeroPointClasses * g_.COB
         << "] <- input zero point's border corrections[" << g_.zeroPointClasses << " classes][0:" << g_.COB
         << "]   // accumulator SRAM, resident\n";
    os << "for nb in 0.." << g_.NB << ":                                  // batch blocks of " << g_.B << "\n";
    os << " for cot in 0.." << g_.COB / t_.tco << ":\n";
    os << "  for yt in 0.." << g_.OH / t_.th << ":\n";
    os << "   for xt in 0.." << g_.OW / t_.tw << ":                          // tile t, acc region h = t % "
       << s_.slots << "\n";
    os << "    acc[(h%2)*" << g_.accHalf << " + (h/2)*" << s_.accEntries * g_.accRegions << " + co*" << t_.th * t_.tw << " + y*" << t_.tw << " + x] : int32 [" << t_.tco
       << "][" << t_.th << "][" << t_.tw << "] = 0      // accumulator SRAM, " << s_.accEntries << " of " << g_.accCap
       << " entries per half\n";
    os << "    for cit in 0.." << s_.stepsPerTile << ":                       // step s, inp/wgt half p = s % 2\n";
    os << "     inp[p*" << g_.inpCap << "] : int8 [" << t_.tci << "][" << s_.ih << "][" << s_.iw
       << "] <- input[nb][" << (g_.RB != g_.CIB ? "first[cot*" + std::to_string(t_.tco) + "] + " : "") << "cit*" << t_.tci << "+ci][yt*" << t_.th * g_.SH << "-" << g_.PH << " + r"
       << (s_.rowStep > 1 ? "*" + std::to_string(s_.rowStep) : "") << "][xt*" << t_.tw * g_.SW << "-" << g_.PW
       << " + c]  (LOAD pads the border; " << s_.inpEntries << " of " << g_.inpCap << " entries)\n";
    os << "     wgt[p*" << g_.wgtCap << "] : int8 [" << t_.tco << "][" << t_.tci << "][" << g_.KH << "][" << g_.KW
       << "] <- weights[cot*" << t_.tco << "+co][cit*" << t_.tci << "+ci]  (" << s_.wgtEntries << " of " << g_.wgtCap
       << " entries)\n";
    if (s_.coInner)
      os << "     for y in 0.." << t_.th << ", x in 0.." << t_.tw << ":          // GEMM loops\n"
         << "      for ci, ky, kx, co (" << s_.gemmUops << " micro-ops):\n";
    else
      os << "     for y in 0.." << t_.th << ", ci in 0.." << t_.tci << ":         // GEMM loops\n"
         << "      for ky, kx, x (" << s_.gemmUops << " micro-ops):\n";
    const std::string dy = g_.DH == 1 ? "ky" : "ky*" + std::to_string(g_.DH), dx = g_.DW == 1 ? "kx" : "kx*" + std::to_string(g_.DW);
    os << "       acc[co][y][x] += inp[ci][y*" << (g_.KH == 1 ? 1 : g_.SH) << "+" << dy << "][x*" << g_.SW
       << "+" << dx << "] . wgt[co][ci][ky][kx]   // " << g_.B << "x" << g_.BI << "x" << g_.BO << " per micro-op\n";
    if (g_.zeroPointClasses)
      os << "    acc[co][y][x] += correction[class(yt*" << t_.th << "+y, xt*" << t_.tw << "+x)][cot*" << t_.tco
         << "+co]  // border outputs only: the input zero point times the taps outside the input\n";
    os << "    acc = ";
    std::string e = "acc";
    const std::string bias = " + bias[cot*" + std::to_string(t_.tco) + "+co])";
    if (g_.biasEntries && !op_.epilogue.biasAfterMultiply) e = "(" + e + bias;
    if (op_.epilogue.leaky) {
      // LeakyRelu on the sum before anything else: its own line, then the requantization of acc.
      const Epilogue& l = op_.epilogue;
      if (e != "acc") os << e << "\n    acc = ";
      os << "max(acc, ((acc >> " << l.leakyPreShift << ") * "
         << (l.leakyPerChannel ? "slope[cot*" + std::to_string(t_.tco) + "+co]" : std::to_string(l.leakyMultiplier)) << ") >> "
         << l.leakyShift << ")      // " << (l.leakyPerChannel ? "PRelu" : "LeakyRelu") << ", t in the scratch region\n    acc = ";
      e = "acc";
    }
    if (op_.epilogue.preShift) e = "(" + e + " >> " + std::to_string(op_.epilogue.preShift) + ")";
    if (op_.epilogue.preClip)
      e = "clip(" + e + ", " + std::to_string(-op_.epilogue.preClip) + ", " + std::to_string(op_.epilogue.preClip) + ")";
    if (g_.clipEntries)
      e = "clip(" + e + ", low[cot*" + std::to_string(t_.tco) + "+co], high[cot*" + std::to_string(t_.tco) + "+co])";
    if (g_.multEntries) e = "(" + e + " * multiplier[cot*" + std::to_string(t_.tco) + "+co])";
    if (op_.epilogue.multiplier != 1) e = "(" + e + " * " + std::to_string(op_.epilogue.multiplier) + ")";
    if (op_.epilogue.biasAfterMultiply) e = "(" + e + bias;
    if (op_.epilogue.round) e = "(" + e + " + " + std::to_string(1 << (op_.epilogue.shift - 1)) + ")";
    if (op_.epilogue.shift) e = "(" + e + " >> " + std::to_string(op_.epilogue.shift) + ")";
    if (g_.clipEntries && op_.epilogue.activation != Epilogue::Activation::kNone) {
      const Epilogue& a = op_.epilogue;
      const bool swish = a.activationTimesInput();
      os << e << "      // vector ALU; the bounds keep v in the activation's input range\n";
      if (a.piecewiseActivation()) {
        os << "    t = clip(acc, +-" << a.activationBounds[0] << ")      // "
           << (a.activation == Epilogue::Activation::kSilu ? "t in the scratch region" : "v kept in the scratch region")
           << "\n";
        for (size_t i = 0; i < a.activationSlopes.size(); ++i)
          os << "    t = clip(((t * " << a.activationSlopes[i] << ") >> " << a.activationSlopeShift << ") + v, +-"
             << a.activationBounds[i + 1] << ")\n";
        if (a.activationOffset) os << "    t = t + " << a.activationOffset << "\n";
      } else {
        os << "    t = clip(acc + " << a.activationOffset << ", 0, " << a.activationCeiling << ")"
           << (swish ? "      // in the scratch region" : "") << "\n";
      }
      const std::string p = swish                     ? "(v * t) >> " + std::to_string(a.activationPreShift)
                            : a.piecewiseActivation() ? "t >> " + std::to_string(a.activationPreShift)
                                                      : std::string("t");
      os << "    acc = max(min((" << p
         << ") * " << a.activationMultiplier << " + " << (1 << (a.activationShift - 1)) << ") >> " << a.activationShift
         << ", 127), -128)      // " << activationTitle(a.activation) << "\n";
    } else if (g_.clipEntries)
      os << e << "      // vector ALU; the bounds keep it in int8\n";
    else
      os << "max(min(" << e << ", 127), " << (op_.epilogue.relu ? 0 : -128) << ")      // vector ALU\n";
    if (op_.residual) {
      os << "    res[co][y][x] = sext(residual[nb][cot*" << t_.tco << "+co][yt*" << t_.th << "+y][xt*" << t_.tw
         << "+x])   // LOAD ACC_8BIT into acc[h*" << g_.accHalf << " + " << s_.accEntries << " + ...]\n";
      const Epilogue& r = op_.residualEpilogue;
      std::string a = "acc";
      if (op_.residualA != 1) a += "*" + std::to_string(op_.residualA);
      a += " + res";
      if (op_.residualB != 1) a += "*" + std::to_string(op_.residualB);
      if (r.round) a = "(" + a + " + " + std::to_string(1 << (r.shift - 1)) + ")";
      if (r.shift) a = "(" + a + ") >> " + std::to_string(r.shift);
      os << "    acc = max(min(" << a << ", 127), " << (r.relu ? 0 : -128) << ")      // vector ALU: the fused residual add"
         << (g_.scaleRows ? " (multipliers and rounding from resident rows acc[" + std::to_string(g_.scaleRowBase) + "..])"
                          : "")
         << "\n";
    }
    os << "    output[nb][cot*" << t_.tco << "+co][yt*" << t_.th << "+y][xt*" << t_.tw
       << "+x] <- int8(acc)        // STORE\n";
    (void)kk;
    return os.str();
  }

  std::string tilingText() const override {
    std::ostringstream os;
    os << "tco=" << t_.tco << " th=" << t_.th << " tw=" << t_.tw << " tci=" << t_.tci << " (tile " << t_.tco * g_.BO
       << " out-channels x " << t_.th << "x" << t_.tw << ", steps of " << t_.tci * g_.BI << " in-channels; micro-ops "
       << (s_.coInner ? "(ci,ky,kx,co) loops (y,x)" : "(ky,kx,x) loops (y,ci)") << ")";
    return os.str();
  }

  void summarize(ProgramSummary& sum) const override {
    sum.tiles = uint64_t(tiles_);
    sum.steps = uint64_t(steps_);
    sum.inpEntries = uint64_t(std::min<long>(steps_, 2)) * uint64_t(s_.inpEntries);
    sum.wgtEntries = uint64_t(std::min<long>(steps_, 2)) * uint64_t(s_.wgtEntries);
    sum.accEntries = uint64_t(std::min<long>(tiles_, s_.slots)) * uint64_t(s_.accEntries) * uint64_t(g_.accRegions) +
                     uint64_t(g_.biasEntries) + uint64_t(g_.multEntries) + uint64_t(g_.clipEntries) +
                     uint64_t(g_.scaleRows);
    sum.paddedMacs = uint64_t(g_.NB) * g_.B * g_.COB * g_.BO * g_.OH * g_.OW * g_.RB * g_.BI * g_.KH * g_.KW;
  }

 private:
  // A tile whose reduction is done: where its outputs go, and its accumulator half.
  struct FinishedTile {
    int nb, cot, yt, xt, q;
  };

  // One vector-ALU instruction of an epilogue (or the reset GEMM of its scratch region).
  struct EpilogueOp {
    int kernel = 0;
    bool reset = false;
    hw::AluOp op = hw::AluOp::kAdd;
    bool useImm = false;
    int32_t imm = 0;
  };

  // A finished tile's epilogue (requantization, and the fused residual add), in order.
  std::vector<EpilogueOp> epilogueOps(const FinishedTile& f, int biasBuf, int multBuf, int clipLowBuf) {
    const int q = f.q;
    const size_t ch = size_t(f.cot) * size_t(s_.slots) + size_t(q);
    std::vector<EpilogueOp> ops;
    auto vec = [&](int kernel, hw::AluOp op) { ops.push_back({kernel, false, op, false, 0}); };
    auto imm = [&](hw::AluOp op, int32_t value, int kernel) { ops.push_back({kernel, false, op, true, value}); };
    // An input zero point's border corrections, onto the raw sums (the bias holds its interior share).
    for (int k : borderKernels(f)) vec(k, hw::AluOp::kAdd);
    const bool biasFirst = biasBuf >= 0 && !op_.epilogue.biasAfterMultiply;
    if (biasFirst) vec(biasKernel_[ch], hw::AluOp::kAdd);
    if (op_.epilogue.leaky) {
      // LeakyRelu on the sum: t = ((acc >> P) * M) >> S in the scratch region, then acc = max(acc, t).
      const Epilogue& e = op_.epilogue;
      ops.push_back({scratchResetKernel_[q], true, hw::AluOp::kAdd, false, 0});
      vec(scratchCopyKernel_[q], hw::AluOp::kAdd);
      if (e.leakyPreShift) imm(hw::AluOp::kShr, e.leakyPreShift, scratchKernel_[q]);
      if (e.leakyPerChannel) vec(leakyMultKernel_[ch], hw::AluOp::kMul);
      else imm(hw::AluOp::kMul, e.leakyMultiplier, scratchKernel_[q]);
      if (e.leakyShift) imm(hw::AluOp::kShr, e.leakyShift, scratchKernel_[q]);
      vec(scratchSumKernel_[q], hw::AluOp::kMax);
    }
    if (op_.epilogue.preShift) imm(hw::AluOp::kShr, op_.epilogue.preShift, immKernel_[q]);
    if (op_.epilogue.preClip) {
      imm(hw::AluOp::kMin, op_.epilogue.preClip, immKernel_[q]);
      imm(hw::AluOp::kMax, -op_.epilogue.preClip, immKernel_[q]);
    }
    if (clipLowBuf >= 0) {
      vec(clipHighKernel_[ch], hw::AluOp::kMin);
      vec(clipLowKernel_[ch], hw::AluOp::kMax);
    }
    if (op_.epilogue.lowBits) {
      // The low product (acc * mlow) >> lowbits, on a copy of the clipped accumulator.
      ops.push_back({scratchResetKernel_[q], true, hw::AluOp::kAdd, false, 0});
      vec(scratchCopyKernel_[q], hw::AluOp::kAdd);
      vec(multLowKernel_[ch], hw::AluOp::kMul);
      imm(hw::AluOp::kShr, op_.epilogue.lowBits, scratchKernel_[q]);
    }
    if (multBuf >= 0) vec(multKernel_[ch], hw::AluOp::kMul);
    if (op_.epilogue.lowBits) vec(scratchSumKernel_[q], hw::AluOp::kAdd);
    if (op_.epilogue.multiplier != 1) imm(hw::AluOp::kMul, op_.epilogue.multiplier, immKernel_[q]);
    if (biasBuf >= 0 && !biasFirst) vec(biasKernel_[ch], hw::AluOp::kAdd);
    if (op_.epilogue.round && op_.epilogue.lowBits) vec(roundRowKernel_[q], hw::AluOp::kAdd);
    else if (op_.epilogue.round) imm(hw::AluOp::kAdd, 1 << (op_.epilogue.shift - 1), immKernel_[q]);
    if (op_.epilogue.shift != 0) imm(hw::AluOp::kShr, op_.epilogue.shift, immKernel_[q]);
    // The output zero point: in the rounding row (lowbits) or the bias (bias=after), else here.
    if (op_.epilogue.outputZeroPoint && !op_.epilogue.lowBits && !op_.epilogue.biasAfterMultiply)
      imm(hw::AluOp::kAdd, op_.epilogue.outputZeroPoint, immKernel_[q]);
    if (!op_.epilogue.perChannelClip) {
      imm(hw::AluOp::kMin, 127, immKernel_[q]);
      imm(hw::AluOp::kMax, op_.epilogue.relu ? op_.epilogue.outputZeroPoint : -128, immKernel_[q]);
    }
    const Epilogue& e = op_.epilogue;
    if (e.piecewiseActivation()) {
      // The nested clamps. silu keeps v in the main region and builds t in the scratch region, to
      // multiply them; sigmoid and tanh keep v in the scratch region and build t in place, so their
      // result is already where the STORE reads.
      const bool silu = e.activation == Epilogue::Activation::kSilu;
      const int tKernel = silu ? scratchKernel_[q] : immKernel_[q];
      const int addV = silu ? scratchCopyKernel_[q] : scratchSumKernel_[q];
      ops.push_back({scratchResetKernel_[q], true, hw::AluOp::kAdd, false, 0});
      vec(scratchCopyKernel_[q], hw::AluOp::kAdd);
      imm(hw::AluOp::kMin, e.activationBounds[0], tKernel);
      imm(hw::AluOp::kMax, -e.activationBounds[0], tKernel);
      for (size_t i = 0; i < e.activationSlopes.size(); ++i) {
        imm(hw::AluOp::kMul, e.activationSlopes[i], tKernel);
        if (e.activationSlopeShift) imm(hw::AluOp::kShr, e.activationSlopeShift, tKernel);
        vec(addV, hw::AluOp::kAdd);
        imm(hw::AluOp::kMin, e.activationBounds[i + 1], tKernel);
        imm(hw::AluOp::kMax, -e.activationBounds[i + 1], tKernel);
      }
      if (e.activationOffset) imm(hw::AluOp::kAdd, e.activationOffset, tKernel);
      if (silu) vec(scratchSumKernel_[q], hw::AluOp::kMul);  // v * t
      if (e.activationPreShift) imm(hw::AluOp::kShr, e.activationPreShift, immKernel_[q]);
      imm(hw::AluOp::kMul, e.activationMultiplier, immKernel_[q]);
      imm(hw::AluOp::kAdd, 1 << (e.activationShift - 1), immKernel_[q]);
      imm(hw::AluOp::kShr, e.activationShift, immKernel_[q]);
      imm(hw::AluOp::kMin, 127, immKernel_[q]);
      imm(hw::AluOp::kMax, -128, immKernel_[q]);
    } else if (e.activation != Epilogue::Activation::kNone) {
      // t = clip(v + K, 0, C): in the scratch region beside v for HardSwish, in place for HardSigmoid.
      const bool swish = e.activation == Epilogue::Activation::kHardSwish;
      const int tKernel = swish ? scratchKernel_[q] : immKernel_[q];
      if (swish) {
        ops.push_back({scratchResetKernel_[q], true, hw::AluOp::kAdd, false, 0});
        vec(scratchCopyKernel_[q], hw::AluOp::kAdd);
      }
      imm(hw::AluOp::kAdd, e.activationOffset, tKernel);
      imm(hw::AluOp::kMax, 0, tKernel);
      imm(hw::AluOp::kMin, e.activationCeiling, tKernel);
      if (swish) {
        vec(scratchSumKernel_[q], hw::AluOp::kMul);  // v * t
        imm(hw::AluOp::kShr, e.activationPreShift, immKernel_[q]);
      }
      imm(hw::AluOp::kMul, e.activationMultiplier, immKernel_[q]);
      imm(hw::AluOp::kAdd, 1 << (e.activationShift - 1), immKernel_[q]);
      imm(hw::AluOp::kShr, e.activationShift, immKernel_[q]);
      imm(hw::AluOp::kMin, 127, immKernel_[q]);
      imm(hw::AluOp::kMax, -128, immKernel_[q]);
    }
    if (op_.residual) {
      // The add's arithmetic on the epilogue's result (region a) and the residual (region b), in
      // the order and with the immediates or resident rows the add operator uses (vector_lowering.cpp).
      const Epilogue& r = op_.residualEpilogue;
      const bool wide = r.wideScales;
      if (op_.residualA != 1) {
        if (wide) vec(residualRowKernel_[q][0], hw::AluOp::kMul);
        else imm(hw::AluOp::kMul, op_.residualA, immKernel_[q]);
      }
      if (op_.residualB != 1) {
        if (wide) vec(residualRowKernel_[q][1], hw::AluOp::kMul);
        else imm(hw::AluOp::kMul, op_.residualB, residualKernel_[q]);
      }
      vec(residualSumKernel_[q], hw::AluOp::kAdd);
      if (r.round) {
        if (wide) vec(residualRowKernel_[q][2], hw::AluOp::kAdd);
        else imm(hw::AluOp::kAdd, 1 << (r.shift - 1), immKernel_[q]);
      }
      if (r.shift) imm(hw::AluOp::kShr, r.shift, immKernel_[q]);
      if (r.outputZeroPoint && !(wide && r.round)) imm(hw::AluOp::kAdd, r.outputZeroPoint, immKernel_[q]);
      imm(hw::AluOp::kMin, 127, immKernel_[q]);
      imm(hw::AluOp::kMax, r.relu ? r.outputZeroPoint : -128, immKernel_[q]);
    }
    return ops;
  }

  // One ALU kernel per border run of the tile: its outputs of every channel block add their class's
  // correction row (the same source row along the run).
  std::vector<int> borderKernels(const FinishedTile& f) {
    std::vector<int> out;
    if (!g_.zeroPointClasses) return out;
    if (!borders_) borders_ = std::make_unique<detail::BorderClasses>(detail::borderClasses(g_));
    for (const detail::BorderRun& r : detail::borderRuns(g_, *borders_, t_, f.yt, f.xt)) {
      Kernel k;
      k.name = "zero_point_border_c" + std::to_string(f.cot) + "_h" + std::to_string(f.q);
      k.uops.push_back({regionBase(f.q) + uint32_t(r.row * t_.tw + r.col),
                        uint32_t(g_.zeroPointBase + r.cls * g_.COB + f.cot * t_.tco), 0});
      k.iterOut = uint32_t(t_.tco);
      k.dstOut = uint32_t(t_.th * t_.tw);
      k.srcOut = 1;
      k.iterIn = uint32_t(r.count);
      k.dstIn = uint32_t(r.down ? t_.tw : 1);
      out.push_back(kernel(std::move(k)));
    }
    return out;
  }

  void issueOps(const std::vector<EpilogueOp>& ops, size_t begin, size_t end) {
    for (size_t i = begin; i < end && i < ops.size(); ++i) {
      if (ops[i].reset) gemm(ops[i].kernel, true);
      else alu(ops[i].kernel, ops[i].op, ops[i].useImm, ops[i].imm);
    }
  }

  // A finished tile's STORE, after its epilogue: tokens to the store module and back.
  void storeTile(const FinishedTile& f, int outBuf) {
    const uint32_t acc = regionBase(f.q);
    push(Stage::kCompute, Stage::kStore);
    pop(Stage::kCompute, Stage::kStore);
    const uint32_t outBase = tileBase(f);
    if (t_.tw == g_.OW) {
      add(memInsn(Opcode::kStore, MemId::kOut, acc, outBase, uint32_t(t_.tco), uint32_t(t_.th * g_.OW),
                  uint32_t(g_.OH * g_.OW)),
          outBuf);
    } else {
      for (int co = 0; co < t_.tco; ++co)
        add(memInsn(Opcode::kStore, MemId::kOut, acc + uint32_t(co * t_.th * t_.tw),
                    outBase + uint32_t(co * g_.OH * g_.OW), uint32_t(t_.th), uint32_t(t_.tw), uint32_t(g_.OW)),
            outBuf);
    }
    push(Stage::kStore, Stage::kCompute);
  }

  // Accumulator index of region q: its bank (q % 2) and its slot in the bank (q / 2).
  uint32_t regionBase(int q) const {
    return static_cast<uint32_t>((q % 2) * g_.accHalf + (q / 2) * s_.accEntries * g_.accRegions);
  }

  // DRAM element index of a tile's first output (the output's layout, which ACC_8BIT shares).
  uint32_t tileBase(const FinishedTile& f) const {
    return static_cast<uint32_t>(((f.nb * g_.COB + f.cot * t_.tco) * g_.OH + f.yt * t_.th) * g_.OW + f.xt * t_.tw);
  }

  // A fused residual add's operand for a finished tile: LOAD ACC_8BIT into the second region of its
  // half, laid out as the tile ([co][y][x]), with the addressing of the tile's STORE.
  void loadResidual(const FinishedTile& f, int in2Buf) {
    const uint32_t b = regionBase(f.q) + static_cast<uint32_t>(s_.accEntries), base = tileBase(f);
    if (t_.tw == g_.OW) {
      add(memInsn(Opcode::kLoad, MemId::kAcc8, b, base, uint32_t(t_.tco), uint32_t(t_.th * g_.OW), uint32_t(g_.OH * g_.OW)),
          in2Buf);
    } else {
      for (int co = 0; co < t_.tco; ++co)
        add(memInsn(Opcode::kLoad, MemId::kAcc8, b + uint32_t(co * t_.th * t_.tw), base + uint32_t(co * g_.OH * g_.OW),
                    uint32_t(t_.th), uint32_t(t_.tw), uint32_t(g_.OW)),
            in2Buf);
    }
  }

  // Micro-op kernels: shared by every tile and step with the same buffer halves.
  void buildKernels() {
    const uint32_t entries = uint32_t(s_.accEntries);
    for (int q = 0; q < s_.slots; ++q) {
      const uint32_t acc = regionBase(q);
      for (int p = 0; p < 2; ++p) {
        const uint32_t inp = uint32_t(p * g_.inpCap), wgt = uint32_t(p * g_.wgtCap);
        Kernel k;
        k.name = "gemm_p" + std::to_string(p) + "_h" + std::to_string(q);
        k.iterOut = uint32_t(t_.th);
        k.dstOut = uint32_t(t_.tw);
        k.srcOut = uint32_t(s_.srcRowFactor);
        if (s_.coInner) {
          k.iterIn = uint32_t(t_.tw);
          k.dstIn = 1;
          k.srcIn = uint32_t(g_.SW);
          for (int ci = 0; ci < t_.tci; ++ci)
            for (int ky = 0; ky < g_.KH; ++ky)
              for (int kx = 0; kx < g_.KW; ++kx)
                for (int co = 0; co < t_.tco; ++co)
                  k.uops.push_back({acc + uint32_t(co * t_.th * t_.tw),
                                    inp + uint32_t((ci * s_.ih + ky * g_.DH) * s_.iw + kx * g_.DW),
                                    wgt + uint32_t(((co * t_.tci + ci) * g_.KH + ky) * g_.KW + kx)});
        } else {
          k.iterIn = uint32_t(t_.tci);
          k.srcIn = uint32_t(s_.ih * s_.iw);
          k.wgtIn = uint32_t(g_.KH * g_.KW);
          for (int ky = 0; ky < g_.KH; ++ky)
            for (int kx = 0; kx < g_.KW; ++kx)
              for (int x = 0; x < t_.tw; ++x)
                k.uops.push_back({acc + uint32_t(x), inp + uint32_t(ky * g_.DH * s_.iw + kx * g_.DW + x * g_.SW),
                                  wgt + uint32_t(ky * g_.KW + kx)});
        }
        gemmKernel_[p][q] = kernel(std::move(k));
      }
      Kernel r;
      r.name = "reset_h" + std::to_string(q);
      r.uops.push_back({acc, 0, 0});
      r.iterOut = entries;
      r.dstOut = 1;
      resetKernel_[q] = kernel(r);
      Kernel a;
      a.name = "alu_imm_h" + std::to_string(q);
      a.uops.push_back({acc, acc, 0});
      a.iterOut = entries;
      a.dstOut = a.srcOut = 1;
      immKernel_[q] = kernel(a);
      if (op_.residual) {
        // The residual operand's region (b) right after the tile's (a): b alone, a += b, and the
        // wide form's rows applied over a region (the source stays on the row, so it is held).
        const uint32_t b = acc + entries;
        Kernel rb = a;
        rb.name = "residual_h" + std::to_string(q);
        rb.uops = {{b, b, 0}};
        residualKernel_[q] = kernel(rb);
        Kernel sum = a;
        sum.name = "residual_sum_h" + std::to_string(q);
        sum.uops = {{acc, b, 0}};
        residualSumKernel_[q] = kernel(sum);
        for (int k = 0; k < 3 && op_.residualEpilogue.wideScales; ++k) {
          Kernel row;
          row.name = "residual_row" + std::to_string(k) + "_h" + std::to_string(q);
          row.uops = {{k == 1 ? b : acc, uint32_t(g_.scaleRowBase + g_.residualRow + k), 0}};
          row.iterOut = entries;
          row.dstOut = 1;
          row.srcOut = 0;
          residualRowKernel_[q][k] = kernel(row);
        }
      }
      if (op_.epilogue.leaky || op_.epilogue.lowBits || op_.epilogue.activation == Epilogue::Activation::kHardSwish ||
          op_.epilogue.piecewiseActivation()) {
        // The scratch region (c) after the tile's (and the residual's): reset, c += acc (the copy),
        // c alone, acc += c (or acc *= c), and the rounding row over the tile.
        const uint32_t c = acc + uint32_t(g_.scratchRegion) * entries;
        Kernel reset = r;
        reset.name = "scratch_reset_h" + std::to_string(q);
        reset.uops = {{c, 0, 0}};
        scratchResetKernel_[q] = kernel(reset);
        Kernel copy = a;
        copy.name = "scratch_copy_h" + std::to_string(q);
        copy.uops = {{c, acc, 0}};
        scratchCopyKernel_[q] = kernel(copy);
        Kernel alone = a;
        alone.name = "scratch_h" + std::to_string(q);
        alone.uops = {{c, c, 0}};
        scratchKernel_[q] = kernel(alone);
        Kernel sum = a;
        sum.name = "scratch_sum_h" + std::to_string(q);
        sum.uops = {{acc, c, 0}};
        scratchSumKernel_[q] = kernel(sum);
        if (op_.epilogue.round && op_.epilogue.lowBits) {
          Kernel row;
          row.name = "round_row_h" + std::to_string(q);
          row.uops = {{acc, uint32_t(g_.scaleRowBase), 0}};
          row.iterOut = entries;
          row.dstOut = 1;
          row.srcOut = 0;
          roundRowKernel_[q] = kernel(row);
        }
      }
    }
    // Per-channel vectors resident in the accumulator (bias, multipliers, clip bounds), applied to
    // a tile's channels by one vector ALU instruction each: one micro-op, the outer loop over the
    // tile's channel blocks and the inner one over its positions, so consecutive micro-ops read
    // the same source row.
    auto channelKernels = [&](const char* what, int base, std::vector<int>& out) {
      for (int cot = 0; cot < g_.COB / t_.tco; ++cot)
        for (int q = 0; q < s_.slots; ++q) {
          Kernel b;
          b.name = std::string(what) + "_c" + std::to_string(cot) + "_h" + std::to_string(q);
          b.uops.push_back({regionBase(q), uint32_t(base + cot * t_.tco), 0});
          b.iterOut = uint32_t(t_.tco);
          b.dstOut = uint32_t(t_.th * t_.tw);
          b.srcOut = 1;
          b.iterIn = uint32_t(t_.th * t_.tw);
          b.dstIn = 1;
          out.push_back(kernel(b));
        }
    };
    // Like the multipliers, but applied to the scratch copy: the low bits, and PRelu's slopes.
    auto scratchChannelKernels = [&](const char* name, int base, std::vector<int>& out) {
      for (int cot = 0; cot < g_.COB / t_.tco; ++cot)
        for (int q = 0; q < s_.slots; ++q) {
          Kernel b;
          b.name = std::string(name) + "_c" + std::to_string(cot) + "_h" + std::to_string(q);
          b.uops.push_back({regionBase(q) + uint32_t(g_.scratchRegion) * entries, uint32_t(base + cot * t_.tco), 0});
          b.iterOut = uint32_t(t_.tco);
          b.dstOut = uint32_t(t_.th * t_.tw);
          b.srcOut = 1;
          b.iterIn = uint32_t(t_.th * t_.tw);
          b.dstIn = 1;
          out.push_back(kernel(b));
        }
    };
    if (op_.epilogue.lowBits) scratchChannelKernels("mul_low", g_.multLowBase, multLowKernel_);
    if (op_.epilogue.leakyPerChannel) scratchChannelKernels("slope", g_.leakyMultBase, leakyMultKernel_);
    if (g_.biasEntries) channelKernels("bias", g_.biasBase, biasKernel_);
    if (g_.multEntries) channelKernels("mul", g_.multBase, multKernel_);
    if (g_.clipEntries) {
      channelKernels("clip_low", g_.clipLowBase, clipLowKernel_);
      channelKernels("clip_high", g_.clipHighBase, clipHighKernel_);
    }
  }

  const Operator& op_;
  Tiling t_;
  Geometry g_;
  TileShape s_;
  long steps_ = 0, tiles_ = 0;
  // Kernels by input half p and accumulator region q (at most four regions).
  int gemmKernel_[2][4] = {};
  int resetKernel_[4] = {}, immKernel_[4] = {};
  int residualKernel_[4] = {}, residualSumKernel_[4] = {}, residualRowKernel_[4][3] = {};
  int scratchResetKernel_[4] = {}, scratchCopyKernel_[4] = {}, scratchKernel_[4] = {};
  int scratchSumKernel_[4] = {}, roundRowKernel_[4] = {};
  std::vector<int> multLowKernel_, leakyMultKernel_;
  std::vector<int> biasKernel_, multKernel_, clipLowKernel_, clipHighKernel_;
  std::unique_ptr<detail::BorderClasses> borders_;
};

}  // namespace

std::unique_ptr<OperatorLowering> makeGemmLowering(const hw::Config& cfg, const Operator& op, const Tiling& t) {
  return std::make_unique<GemmLowering>(cfg, op, t);
}

}  // namespace tessera::compiler::op::detail
