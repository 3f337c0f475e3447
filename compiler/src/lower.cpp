// Lowering a tiled operator to runtime calls, micro-op kernels and instructions, and printing each stage.
#include <chrono>
#include <cstdio>
#include <sstream>

#include "schedule.h"
#include "tessera/compiler/compile.h"
#include "tessera/compiler/layout.h"
#include "tessera/hw/asm.h"
#include "tessera/hw/error.h"

namespace tessera::compiler {

using detail::Geometry;
using detail::TileShape;
using hw::Insn;
using hw::MemId;
using hw::Opcode;

namespace {

// A micro-op kernel: its micro-ops and the two loops of the GEMM/ALU instructions that run it.
struct Kernel {
  std::string name;
  std::vector<hw::Uop> uops;
  uint32_t iterOut = 1, iterIn = 1;
  uint32_t dstOut = 0, dstIn = 0, srcOut = 0, srcIn = 0, wgtOut = 0, wgtIn = 0;
  uint32_t begin = 0;  // index in the micro-op buffer
};

// One call of VTA's runtime API as the lowering issues it. LOAD/STORE/GEMM/ALU calls carry the
// instruction they become (without dependency flags, dram_base relative to `buffer`).
struct Call {
  enum Kind { kInsn, kPush, kPop } kind = kInsn;
  Insn insn;
  int buffer = -1;
  int kernel = -1;
  int from = 0, to = 0;  // hw::Stage values
};

const char* stageMacro(int s) {
  static const char* names[] = {"VTA_STAGE_LOAD", "VTA_STAGE_COMPUTE", "VTA_STAGE_STORE"};
  return names[s];
}

// Turns calls into an instruction stream the way VTA's runtime does: a pop waits on the next
// instruction of the popping stage, a push is folded into the previous instruction when that one
// ran on the pushing stage, and zero-width LOAD/STORE instructions carry what cannot be folded.
class Assembler {
 public:
  void insn(const Insn& in, int buffer) {
    const int s = static_cast<int>(in.stage());
    insns_.push_back(in);
    buffers_.push_back(buffer);
    insns_.back().popPrev = popPrev_[s];
    insns_.back().popNext = popNext_[s];
    popPrev_[s] = popNext_[s] = false;
  }
  void pop(int from, int to) {
    bool& pending = from < to ? popPrev_[to] : popNext_[to];
    if (pending) flushPops(to);
    pending = true;
  }
  void push(int from, int to) {
    flushPops(from);
    if (!insns_.empty() && static_cast<int>(insns_.back().stage()) == from) {
      Insn& last = insns_.back();
      bool& flag = from < to ? last.pushNext : last.pushPrev;
      if (!flag) {
        flag = true;
        return;
      }
    }
    Insn& n = carrier(from);
    (from < to ? n.pushNext : n.pushPrev) = true;
  }
  void flushPops(int stage) {
    if (!popPrev_[stage] && !popNext_[stage]) return;
    Insn& n = carrier(stage);
    n.popPrev = popPrev_[stage];
    n.popNext = popNext_[stage];
    popPrev_[stage] = popNext_[stage] = false;
  }
  void finish() {
    push(2, 1);
    push(0, 1);
    pop(2, 1);
    pop(0, 1);
    Insn fin;
    fin.opcode = Opcode::kFinish;
    insn(fin, -1);
  }
  std::vector<Insn> insns_;
  std::vector<int32_t> buffers_;

 private:
  Insn& carrier(int stage) {
    Insn n;
    n.opcode = stage == 2 ? Opcode::kStore : Opcode::kLoad;
    n.memType = static_cast<uint32_t>(stage == 0 ? MemId::kInp : MemId::kUop);
    insns_.push_back(n);
    buffers_.push_back(-1);
    return insns_.back();
  }
  bool popPrev_[3] = {false, false, false}, popNext_[3] = {false, false, false};
};

Insn memInsn(Opcode op, MemId mem, uint32_t sram, uint32_t dram, uint32_t y, uint32_t x, uint32_t stride) {
  Insn in;
  in.opcode = op;
  in.memType = static_cast<uint32_t>(mem);
  in.sramBase = sram;
  in.dramBase = dram;
  in.ySize = y;
  in.xSize = x;
  in.xStride = stride;
  return in;
}

class Lowering {
 public:
  Lowering(const hw::Config& cfg, const Operator& op, const Tiling& t)
      : cfg_(cfg), op_(op), t_(t), g_(detail::geometry(cfg, op)), s_(detail::tileShape(g_, t)) {}

  void run(Program& prog) {
    buildKernels();
    uint32_t next = 0;
    for (auto& k : kernels_) {
      k.begin = next;
      next += static_cast<uint32_t>(k.uops.size());
      prog.uops.insert(prog.uops.end(), k.uops.begin(), k.uops.end());
    }
    const int uopBuf = prog.bufferIndex("uops"), inBuf = prog.bufferIndex("input"), wBuf = prog.bufferIndex("weights");
    const int outBuf = prog.bufferIndex("output");
    const int biasBuf = op_.epilogue.bias ? prog.bufferIndex("bias") : -1;
    const uint32_t nUops = static_cast<uint32_t>(prog.uops.size());
    add(memInsn(Opcode::kLoad, MemId::kUop, 0, 0, 1, nUops, nUops), uopBuf);
    if (biasBuf >= 0)
      add(memInsn(Opcode::kLoad, MemId::kAcc, static_cast<uint32_t>(g_.biasBase), 0, 1, uint32_t(g_.COB), uint32_t(g_.COB)),
          biasBuf);
    long step = 0, tile = 0;
    for (int nb = 0; nb < g_.NB; ++nb)
      for (int cot = 0; cot < g_.COB / t_.tco; ++cot)
        for (int yt = 0; yt < g_.OH / t_.th; ++yt)
          for (int xt = 0; xt < g_.OW / t_.tw; ++xt, ++tile) {
            const int q = static_cast<int>(tile % 2);
            const uint32_t acc = static_cast<uint32_t>(q * g_.accCap);
            if (tile >= 2) pop(2, 1);
            gemm(resetKernel_[q], true);
            const detail::Window rows = detail::window(yt * t_.th, g_.SH, g_.PH, g_.H, s_.ih, s_.rowStep, g_.H);
            const detail::Window cols = detail::window(xt * t_.tw, g_.SW, g_.PW, g_.W, s_.iw, 1, g_.W);
            for (int cit = 0; cit < s_.stepsPerTile; ++cit, ++step) {
              const int p = static_cast<int>(step % 2);
              if (step >= 2) pop(1, 0);
              for (int ci = 0; ci < t_.tci; ++ci) {
                Insn in = memInsn(Opcode::kLoad, MemId::kInp,
                                  static_cast<uint32_t>(p * g_.inpCap + ci * s_.ih * s_.iw),
                                  static_cast<uint32_t>(((nb * g_.CIB + cit * t_.tci + ci) * g_.H + rows.first) * g_.W +
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
                          static_cast<uint32_t>((cot * t_.tco * g_.CIB + cit * t_.tci) * int(kk)), uint32_t(t_.tco),
                          uint32_t(t_.tci) * kk, uint32_t(g_.CIB) * kk),
                  wBuf);
              push(0, 1);
              pop(0, 1);
              gemm(gemmKernel_[p][q], false);
              push(1, 0);
            }
            if (biasBuf >= 0) alu(biasKernel_[size_t(cot) * 2 + size_t(q)], hw::AluOp::kAdd, false, 0);
            if (op_.epilogue.multiplier != 1) alu(immKernel_[q], hw::AluOp::kMul, true, op_.epilogue.multiplier);
            if (op_.epilogue.shift != 0) alu(immKernel_[q], hw::AluOp::kShr, true, op_.epilogue.shift);
            alu(immKernel_[q], hw::AluOp::kMin, true, 127);
            alu(immKernel_[q], hw::AluOp::kMax, true, op_.epilogue.relu ? 0 : -128);
            push(1, 2);
            pop(1, 2);
            const uint32_t outBase = static_cast<uint32_t>(((nb * g_.COB + cot * t_.tco) * g_.OH + yt * t_.th) * g_.OW +
                                                           xt * t_.tw);
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
            push(2, 1);
          }
    // The last releases of each half are never waited for; take them so no token is left at FINISH.
    for (long i = 0; i < std::min<long>(step, 2); ++i) pop(1, 0);
    for (long i = 0; i < std::min<long>(tile, 2); ++i) pop(2, 1);
    steps_ = step;
    tiles_ = tile;
  }

  void assemble(Program& prog) {
    Assembler a;
    for (const Call& c : calls_) {
      if (c.kind == Call::kInsn) a.insn(c.insn, c.buffer);
      else if (c.kind == Call::kPush) a.push(c.from, c.to);
      else a.pop(c.from, c.to);
    }
    a.finish();
    prog.insns = std::move(a.insns_);
    prog.insnBuffer = std::move(a.buffers_);
  }

  // The tiled loop nest as pseudo-code, with the SRAM region each tile lives in.
  std::string loopNest() const {
    std::ostringstream os;
    const int kk = g_.KH * g_.KW;
    os << "// tiles: " << t_.tco << " of " << g_.COB << " output-channel blocks x " << t_.th << " of " << g_.OH
       << " rows x " << t_.tw << " of " << g_.OW << " columns; reduction steps of " << t_.tci << " of " << g_.CIB
       << " input-channel blocks\n";
    os << "uop[0:" << s_.uopEntries << "]  <- all micro-op kernels          // uop SRAM, loaded once\n";
    if (g_.biasEntries)
      os << "acc[" << g_.biasBase << ":" << g_.biasBase + g_.COB << "] <- bias[0:" << g_.COB
         << "]                     // accumulator SRAM, resident\n";
    os << "for nb in 0.." << g_.NB << ":                                  // batch blocks of " << g_.B << "\n";
    os << " for cot in 0.." << g_.COB / t_.tco << ":\n";
    os << "  for yt in 0.." << g_.OH / t_.th << ":\n";
    os << "   for xt in 0.." << g_.OW / t_.tw << ":                          // tile t, acc half h = t % 2\n";
    os << "    acc[h*" << g_.accCap << " + co*" << t_.th * t_.tw << " + y*" << t_.tw << " + x] : int32 [" << t_.tco
       << "][" << t_.th << "][" << t_.tw << "] = 0      // accumulator SRAM, " << s_.accEntries << " of " << g_.accCap
       << " entries per half\n";
    os << "    for cit in 0.." << s_.stepsPerTile << ":                       // step s, inp/wgt half p = s % 2\n";
    os << "     inp[p*" << g_.inpCap << "] : int8 [" << t_.tci << "][" << s_.ih << "][" << s_.iw
       << "] <- input[nb][cit*" << t_.tci << "+ci][yt*" << t_.th * g_.SH << "-" << g_.PH << " + r"
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
    os << "       acc[co][y][x] += inp[ci][y*" << (g_.KH == 1 ? 1 : g_.SH) << "+ky][x*" << g_.SW
       << "+kx] . wgt[co][ci][ky][kx]   // " << g_.B << "x" << g_.BI << "x" << g_.BO << " per micro-op\n";
    os << "    acc = ";
    std::string e = "acc";
    if (g_.biasEntries) e = "(" + e + " + bias[cot*" + std::to_string(t_.tco) + "+co])";
    if (op_.epilogue.multiplier != 1) e = "(" + e + " * " + std::to_string(op_.epilogue.multiplier) + ")";
    if (op_.epilogue.shift) e = "(" + e + " >> " + std::to_string(op_.epilogue.shift) + ")";
    os << "max(min(" << e << ", 127), " << (op_.epilogue.relu ? 0 : -128) << ")      // vector ALU\n";
    os << "    output[nb][cot*" << t_.tco << "+co][yt*" << t_.th << "+y][xt*" << t_.tw
       << "+x] <- int8(acc)        // STORE\n";
    (void)kk;
    return os.str();
  }

  // The runtime calls: kernel definitions (finit bodies) and the call sequence.
  std::string runtimeCalls(const Program& prog) const {
    std::ostringstream os;
    for (const Kernel& k : kernels_) {
      os << "finit " << k.name << " (micro-ops " << k.begin << ".." << k.begin + k.uops.size() << "):\n";
      os << "  VTAUopLoopBegin(" << k.iterOut << ", " << k.dstOut << ", " << k.srcOut << ", " << k.wgtOut << ");\n";
      os << "  VTAUopLoopBegin(" << k.iterIn << ", " << k.dstIn << ", " << k.srcIn << ", " << k.wgtIn << ");\n";
      for (const auto& u : k.uops) os << "  VTAUopPush(" << u.dst << ", " << u.src << ", " << u.wgt << ");\n";
      os << "  VTAUopLoopEnd(); VTAUopLoopEnd();\n";
    }
    for (const Call& c : calls_) {
      if (c.kind != Call::kInsn) {
        os << (c.kind == Call::kPush ? "VTADepPush" : "VTADepPop") << "(cmd, " << stageMacro(c.from) << ", "
           << stageMacro(c.to) << ");\n";
        continue;
      }
      const Insn& in = c.insn;
      const std::string buf = c.buffer >= 0 ? prog.buffers[size_t(c.buffer)].name : "?";
      if (in.opcode == Opcode::kLoad)
        os << "VTALoadBuffer2D(cmd, " << buf << ", " << in.dramBase << ", " << in.xSize << ", " << in.ySize << ", "
           << in.xStride << ", " << in.xPad0 << ", " << in.yPad0 << ", " << in.xPad1 << ", " << in.yPad1 << ", "
           << in.sramBase << ", " << hw::memIdName(in.memType) << ");\n";
      else if (in.opcode == Opcode::kStore)
        os << "VTAStoreBuffer2D(cmd, " << in.sramBase << ", OUT, " << buf << ", " << in.dramBase << ", " << in.xSize
           << ", " << in.ySize << ", " << in.xStride << ");\n";
      else if (in.opcode == Opcode::kGemm)
        os << "VTAPushGEMMOp(" << kernels_[size_t(c.kernel)].name << (in.reset ? ", reset" : "") << ");\n";
      else
        os << "VTAPushALUOp(" << kernels_[size_t(c.kernel)].name << ", " << hw::aluOpName(in.aluOp)
           << (in.useImm ? ", imm=" + std::to_string(in.imm) : std::string(", vector")) << ");\n";
    }
    os << "VTASynchronize(cmd, ...);\n";
    return os.str();
  }

  long steps_ = 0, tiles_ = 0;

 private:
  void add(const Insn& in, int buffer) {
    Call c;
    c.insn = in;
    c.buffer = buffer;
    calls_.push_back(c);
  }
  void push(int from, int to) {
    Call c;
    c.kind = Call::kPush;
    c.from = from;
    c.to = to;
    calls_.push_back(c);
  }
  void pop(int from, int to) {
    Call c;
    c.kind = Call::kPop;
    c.from = from;
    c.to = to;
    calls_.push_back(c);
  }
  Insn kernelInsn(int kernel, Opcode op) const {
    const Kernel& k = kernels_[size_t(kernel)];
    Insn in;
    in.opcode = op;
    in.uopBgn = k.begin;
    in.uopEnd = k.begin + static_cast<uint32_t>(k.uops.size());
    in.iterOut = k.iterOut;
    in.iterIn = k.iterIn;
    in.dstFactorOut = k.dstOut;
    in.dstFactorIn = k.dstIn;
    in.srcFactorOut = k.srcOut;
    in.srcFactorIn = k.srcIn;
    if (op == Opcode::kGemm) {
      in.wgtFactorOut = k.wgtOut;
      in.wgtFactorIn = k.wgtIn;
    }
    return in;
  }
  void gemm(int kernel, bool reset) {
    Call c;
    c.insn = kernelInsn(kernel, Opcode::kGemm);
    c.insn.reset = reset;
    c.kernel = kernel;
    calls_.push_back(c);
  }
  void alu(int kernel, hw::AluOp op, bool useImm, int32_t imm) {
    Call c;
    c.insn = kernelInsn(kernel, Opcode::kAlu);
    c.insn.aluOp = static_cast<uint32_t>(op);
    c.insn.useImm = useImm;
    c.insn.imm = imm;
    c.kernel = kernel;
    calls_.push_back(c);
  }

  // Micro-op kernels: shared by every tile and step with the same buffer halves.
  void buildKernels() {
    const uint32_t entries = uint32_t(s_.accEntries);
    for (int q = 0; q < 2; ++q) {
      const uint32_t acc = uint32_t(q * g_.accCap);
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
                                    inp + uint32_t((ci * s_.ih + ky) * s_.iw + kx),
                                    wgt + uint32_t(((co * t_.tci + ci) * g_.KH + ky) * g_.KW + kx)});
        } else {
          k.iterIn = uint32_t(t_.tci);
          k.srcIn = uint32_t(s_.ih * s_.iw);
          k.wgtIn = uint32_t(g_.KH * g_.KW);
          for (int ky = 0; ky < g_.KH; ++ky)
            for (int kx = 0; kx < g_.KW; ++kx)
              for (int x = 0; x < t_.tw; ++x)
                k.uops.push_back({acc + uint32_t(x), inp + uint32_t(ky * s_.iw + kx + x * g_.SW),
                                  wgt + uint32_t(ky * g_.KW + kx)});
        }
        gemmKernel_[p][q] = static_cast<int>(kernels_.size());
        kernels_.push_back(std::move(k));
      }
      Kernel r;
      r.name = "reset_h" + std::to_string(q);
      r.uops.push_back({acc, 0, 0});
      r.iterOut = entries;
      r.dstOut = 1;
      resetKernel_[q] = static_cast<int>(kernels_.size());
      kernels_.push_back(r);
      Kernel a;
      a.name = "alu_imm_h" + std::to_string(q);
      a.uops.push_back({acc, acc, 0});
      a.iterOut = entries;
      a.dstOut = a.srcOut = 1;
      immKernel_[q] = static_cast<int>(kernels_.size());
      kernels_.push_back(a);
    }
    if (!g_.biasEntries) return;
    for (int cot = 0; cot < g_.COB / t_.tco; ++cot)
      for (int q = 0; q < 2; ++q) {
        Kernel b;
        b.name = "bias_c" + std::to_string(cot) + "_h" + std::to_string(q);
        for (int co = 0; co < t_.tco; ++co)
          b.uops.push_back({uint32_t(q * g_.accCap + co * t_.th * t_.tw), uint32_t(g_.biasBase + cot * t_.tco + co), 0});
        b.iterOut = uint32_t(t_.th * t_.tw);
        b.dstOut = 1;
        biasKernel_.push_back(static_cast<int>(kernels_.size()));
        kernels_.push_back(b);
      }
  }

  const hw::Config& cfg_;
  const Operator& op_;
  Tiling t_;
  Geometry g_;
  TileShape s_;
  std::vector<Kernel> kernels_;
  std::vector<Call> calls_;
  int gemmKernel_[2][2] = {{0, 0}, {0, 0}};
  int resetKernel_[2] = {0, 0}, immKernel_[2] = {0, 0};
  std::vector<int> biasKernel_;
};

std::string tilingText(const Geometry& g, const Tiling& t, const TileShape& s) {
  std::ostringstream os;
  os << "tco=" << t.tco << " th=" << t.th << " tw=" << t.tw << " tci=" << t.tci << " (tile " << t.tco * g.BO
     << " out-channels x " << t.th << "x" << t.tw << ", steps of " << t.tci * g.BI << " in-channels; micro-ops "
     << (s.coInner ? "(ci,ky,kx,co) loops (y,x)" : "(ky,kx,x) loops (y,ci)") << ")";
  return os.str();
}

void banner(std::ostream& os, const char* stage) {
  os << "\n*** IR dump after " << stage << " ***\n";
}

}  // namespace

Program compile(const hw::Config& cfg, const Operator& op, const OperatorData& data, const CompileOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::string where = op.name.empty() ? op.describe() : op.name;
  op.validate();
  if (data.weights.size() != size_t(op.outChannels) * op.inChannels * op.kernelH * op.kernelW)
    throw Error(where, "weights have " + std::to_string(data.weights.size()) + " values, expected " +
                           std::to_string(size_t(op.outChannels) * op.inChannels * op.kernelH * op.kernelW));
  if (op.epilogue.bias && data.bias.size() != size_t(op.outChannels))
    throw Error(where, "bias has " + std::to_string(data.bias.size()) + " values, expected " +
                           std::to_string(op.outChannels));
  std::ostream* out = options.printAfterAll;
  const Geometry g = detail::geometry(cfg, op);
  if (out) {
    banner(*out, "operator");
    *out << op.describe() << "\n";
    *out << "padded for config " << cfg.name << " (" << cfg.batch << "x" << cfg.blockIn << "x" << cfg.blockOut
         << "): batch " << g.NB * g.B << ", in-channels " << g.CIB * g.BI << ", out-channels " << g.COB * g.BO << "\n";
  }

  Program prog;
  prog.configJson = cfg.toJson();
  prog.op = op;
  Tiling t = options.tiling;
  uint64_t legal = 0;
  if (t == Tiling{}) {
    t = chooseTiling(cfg, op, &legal);
  } else {
    const std::string problem = tilingProblem(cfg, op, t);
    if (!problem.empty()) throw Error(where, "requested tiling: " + problem);
    legal = 1;
  }
  const TileShape s = detail::tileShape(g, t);
  const CostEstimate est = estimateCycles(cfg, op, t);

  const ActivationLayout in = inputLayout(cfg, op.batch, op.inChannels, op.height, op.width);
  const ActivationLayout outL = outputLayout(cfg, op.batch, op.outChannels, op.outHeight(), op.outWidth());
  const WeightLayout wl = weightLayout(cfg, op.outChannels, op.inChannels, op.kernelH, op.kernelW);
  auto addBuffer = [&](const std::string& name, BufferRole role, MemId mem, uint64_t bytes, const std::string& layout) {
    ProgramBuffer b;
    b.name = name;
    b.role = role;
    b.memType = static_cast<uint32_t>(mem);
    b.bytes = bytes;
    b.layout = layout;
    prog.buffers.push_back(b);
    return &prog.buffers.back();
  };
  addBuffer("input", BufferRole::kInput, MemId::kInp, in.bytes(), in.describe());
  addBuffer("output", BufferRole::kOutput, MemId::kOut, outL.bytes(), outL.describe());
  const auto packedW = packWeights(wl, data.weights);
  addBuffer("weights", BufferRole::kConstant, MemId::kWgt, packedW.size(), wl.describe())
      ->data.assign(packedW.begin(), packedW.end());
  if (op.epilogue.bias) {
    const auto packedB = packBias(cfg, data.bias);
    addBuffer("bias", BufferRole::kConstant, MemId::kAcc, packedB.size(),
              "[" + std::to_string(g.COB) + "][" + std::to_string(cfg.batch) + "][" + std::to_string(cfg.blockOut) +
                  "] int32 (each bias repeated per batch row)")
        ->data = packedB;
  }
  addBuffer("uops", BufferRole::kConstant, MemId::kUop, 0, "32-bit micro-ops");

  Lowering low(cfg, op, t);
  low.run(prog);
  ProgramBuffer& ub = prog.buffers[size_t(prog.bufferIndex("uops"))];
  const hw::Isa isa(cfg);
  ub.data.resize(prog.uops.size() * 4);
  for (size_t i = 0; i < prog.uops.size(); ++i) {
    const uint32_t w = isa.encodeUop(prog.uops[i], "micro-op " + std::to_string(i));
    for (int k = 0; k < 4; ++k) ub.data[4 * i + size_t(k)] = static_cast<uint8_t>(w >> (8 * k));
  }
  ub.bytes = ub.data.size();

  if (out) {
    banner(*out, "tiling search");
    *out << legal << " legal tilings; chosen " << tilingText(g, t, s) << "\n";
    *out << "estimated cycles " << static_cast<uint64_t>(est.cycles) << " (GEMM " << static_cast<uint64_t>(est.computeCycles)
         << ", loads " << static_cast<uint64_t>(est.loadCycles) << " mostly hidden, reset+epilogue "
         << static_cast<uint64_t>(est.epilogueCycles) << ", stores " << static_cast<uint64_t>(est.storeCycles) << ")\n";
    banner(*out, "loop nest");
    *out << low.loopNest();
    banner(*out, "runtime calls");
    *out << low.runtimeCalls(prog);
  }
  low.assemble(prog);
  for (size_t i = 0; i < prog.insns.size(); ++i) {
    isa.encode(prog.insns[i], where + ": instruction " + std::to_string(i));
    isa.validate(prog.insns[i], i);
  }

  ProgramSummary& sum = prog.summary;
  sum.tiling = tilingText(g, t, s);
  sum.tiles = uint64_t(low.tiles_);
  sum.steps = uint64_t(low.steps_);
  sum.inpEntries = uint64_t(std::min<long>(low.steps_, 2)) * uint64_t(s.inpEntries);
  sum.wgtEntries = uint64_t(std::min<long>(low.steps_, 2)) * uint64_t(s.wgtEntries);
  sum.accEntries = uint64_t(std::min<long>(low.tiles_, 2)) * uint64_t(s.accEntries) + uint64_t(g.biasEntries);
  sum.uopEntries = prog.uops.size();
  sum.macs = op.macs();
  sum.paddedMacs = uint64_t(g.NB) * g.B * g.COB * g.BO * g.OH * g.OW * g.CIB * g.BI * g.KH * g.KW;
  sum.estimatedCycles = est.cycles;
  sum.legalTilings = legal;
  if (out) {
    banner(*out, "instruction selection (disassembly)");
    for (size_t i = 0; i < prog.insns.size(); ++i) {
      const int b = prog.insnBuffer[i];
      *out << i << ": " << hw::disassemble(isa, prog.insns[i])
           << (b >= 0 ? "   # dram_base relative to " + prog.buffers[size_t(b)].name : std::string()) << "\n";
    }
    for (size_t i = 0; i < prog.uops.size(); ++i) *out << "uop " << i << ": " << hw::disassembleUop(prog.uops[i]) << "\n";
    banner(*out, "summary");
    *out << formatSummary(cfg, prog);
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    char buf[64];
    std::snprintf(buf, sizeof buf, "compile time      %.3f ms (printing included)\n", secs * 1e3);
    *out << buf;
  }
  return prog;
}

std::string formatSummary(const hw::Config& cfg, const Program& p) {
  std::ostringstream os;
  uint64_t ops[5], nops = 0;
  p.countInsns(ops, &nops);
  const ProgramSummary& s = p.summary;
  auto pct = [](uint64_t a, uint64_t b) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f%%", b ? 100.0 * double(a) / double(b) : 0.0);
    return std::string(buf);
  };
  os << "operator          " << p.op.describe() << "\n";
  os << "tiling            " << s.tiling << "\n";
  os << "tiles             " << s.tiles << " output tiles, " << s.steps << " load/compute steps (double-buffered)\n";
  os << "SRAM occupancy    inp " << s.inpEntries << "/" << cfg.inpDepth << " (" << pct(s.inpEntries, cfg.inpDepth)
     << "), wgt " << s.wgtEntries << "/" << cfg.wgtDepth << " (" << pct(s.wgtEntries, cfg.wgtDepth) << "), acc "
     << s.accEntries << "/" << cfg.accDepth << " (" << pct(s.accEntries, cfg.accDepth) << "), uop " << s.uopEntries
     << "/" << cfg.uopDepth << " (" << pct(s.uopEntries, cfg.uopDepth) << ")\n";
  os << "instructions      " << p.insns.size() << ": LOAD " << ops[0] << ", GEMM " << ops[2] << ", ALU " << ops[4]
     << ", STORE " << ops[1] << ", FINISH " << ops[3] << ", dependency NOPs " << nops << "\n";
  os << "micro-ops         " << p.uops.size() << " in " << "the micro-op buffer (kernels shared by every tile)\n";
  os << "DRAM bytes        read " << p.dramReadBytes(cfg) << ", written " << p.dramWriteBytes(cfg)
     << " (LOAD/STORE data; instruction fetch not included)\n";
  os << "MACs              " << s.macs << " (" << s.paddedMacs << " executed with padding)\n";
  os << "estimated cycles  " << static_cast<uint64_t>(s.estimatedCycles) << " (ideal "
     << s.paddedMacs / (uint64_t(cfg.batch) * cfg.blockIn * cfg.blockOut) << ")\n";
  return os.str();
}

}  // namespace tessera::compiler
