// The operator compiler's driver: the program's buffers, the tiling, the lowering and assembly, and printing each stage.
#include <chrono>
#include <cstdio>
#include <memory>
#include <sstream>

#include "lowering.h"
#include "schedule.h"
#include "tessera/compiler/op/compile.h"
#include "tessera/compiler/op/dram_layout.h"
#include "tessera/compiler/op/print_after_all.h"
#include "tessera/hw/asm.h"
#include "tessera/support/error.h"

namespace tessera::compiler::op {

using hw::MemId;

namespace {

std::unique_ptr<detail::OperatorLowering> makeLowering(const hw::Config& cfg, const Operator& op, const Tiling& t) {
  if (op.onVectorAlu()) return detail::makeVectorLowering(cfg, op, t);
  return detail::makeGemmLowering(cfg, op, t);
}

}  // namespace

Program compile(const hw::Config& cfg, const Operator& op, const OperatorData& data, const CompileOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::string where = op.name.empty() ? op.describe() : op.name;
  op.validate();
  if (!op.onVectorAlu()) {
    const size_t weights = size_t(op.outChannels) * op.groupInChannels() * op.kernelH * op.kernelW;
    if (!op.runtimeWeights && data.weights.size() != weights)
      throw Error(where, "weights have " + std::to_string(data.weights.size()) + " values, expected " +
                             std::to_string(weights));
    if (op.epilogue.bias && data.bias.size() != size_t(op.outChannels))
      throw Error(where, "bias has " + std::to_string(data.bias.size()) + " values, expected " +
                             std::to_string(op.outChannels));
    if (op.epilogue.perChannelMultiplier && data.multipliers.size() != size_t(op.outChannels))
      throw Error(where, "multipliers have " + std::to_string(data.multipliers.size()) + " values, expected " +
                             std::to_string(op.outChannels));
    if (op.epilogue.leakyPerChannel) {
      if (data.leakyMultipliers.size() != size_t(op.outChannels))
        throw Error(where, "slope multipliers have " + std::to_string(data.leakyMultipliers.size()) + " values for " +
                               std::to_string(op.outChannels) + " output channels");
      const int bits = op.epilogue.leakyPreShift + op.epilogue.leakyShift;
      for (size_t o = 0; o < data.leakyMultipliers.size(); ++o)
        if (bits < 31 && std::llabs(int64_t(data.leakyMultipliers[o])) > (int64_t(1) << bits))
          throw Error(where, "slope multiplier " + std::to_string(data.leakyMultipliers[o]) + " of channel " +
                                 std::to_string(o) + " is beyond 2^" + std::to_string(bits) + " (a slope outside [-1, 1])");
    }
    if (op.epilogue.lowBits && data.multipliersLow.size() != size_t(op.outChannels))
      throw Error(where, "low multiplier bits have " + std::to_string(data.multipliersLow.size()) +
                             " values, expected " + std::to_string(op.outChannels));
    // The older forms bound their products by 16-bit multipliers; clip bounds bound them whatever the multiplier.
    if (!op.epilogue.perChannelClip)
      for (int32_t m : data.multipliers)
        if (m < -32768 || m > 32767)
          throw Error(where, "per-channel multiplier " + std::to_string(m) + " is not a signed 16-bit value (any int32 needs clip=channel)");
    if (op.epilogue.perChannelClip &&
        (data.clipLow.size() != size_t(op.outChannels) || data.clipHigh.size() != size_t(op.outChannels)))
      throw Error(where, "clip bounds have " + std::to_string(data.clipLow.size()) + " low and " +
                             std::to_string(data.clipHigh.size()) + " high values, expected " +
                             std::to_string(op.outChannels) + " each");
  }
  std::ostream* out = options.printAfterAll;
  const OperatorLayouts layouts = operatorLayouts(cfg, op);
  if (out) {
    printDumpBanner(*out, "operator");
    *out << op.describe() << "\n";
    *out << "padded for config " << cfg.name << " (" << cfg.batch << "x" << cfg.blockIn << "x" << cfg.blockOut
         << "): input " << layouts.input.describe() << (op.kind == OpKind::kAdd ? " (both operands)" : "")
         << ", output " << layouts.output.describe() << "\n";
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
  const CostEstimate est = estimateCycles(cfg, op, t);

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
  // The vector-ALU operators read their operands with LOAD ACC_8BIT.
  const MemId inMem = op.onVectorAlu() ? MemId::kAcc8 : MemId::kInp;
  addBuffer("input", BufferRole::kInput, inMem, layouts.input.bytes(), layouts.input.describe());
  if (op.kind == OpKind::kAdd)
    addBuffer("input2", BufferRole::kInput, inMem, layouts.input.bytes(), layouts.input.describe());
  if (op.kind == OpKind::kScale) {  // one value per channel, in the accumulator's 8-bit layout
    const ActivationLayout l = outputLayout(cfg, op.batch, op.inChannels, 1, 1);
    addBuffer("input2", BufferRole::kInput, inMem, l.bytes(), l.describe());
  }
  if (op.residual)  // a fused residual add's operand, in the output's layout, read by LOAD ACC_8BIT
    addBuffer("input2", BufferRole::kInput, MemId::kAcc8, layouts.output.bytes(), layouts.output.describe());
  addBuffer("output", BufferRole::kOutput, MemId::kOut, layouts.output.bytes(), layouts.output.describe());
  if (!op.onVectorAlu()) {
    const WeightLayout wl = weightLayout(cfg, op.outChannels, op.inChannels, op.kernelH, op.kernelW, op.groups);
    if (op.runtimeWeights) {
      addBuffer("weights", BufferRole::kInput, MemId::kWgt, wl.bytes(), wl.describe());
    } else {
      const auto packedW = packWeights(wl, data.weights);
      addBuffer("weights", BufferRole::kConstant, MemId::kWgt, packedW.size(), wl.describe())
          ->data.assign(packedW.begin(), packedW.end());
    }
  }
  // A resident per-channel vector (bias, multipliers, clip bounds): packBias's layout, one
  // accumulator element per BLOCK_OUT channels, each value repeated per batch row.
  auto addChannelVector = [&](const std::string& name, const std::vector<int32_t>& values, const std::string& what) {
    const auto packed = packBias(cfg, values);
    addBuffer(name, BufferRole::kConstant, MemId::kAcc, packed.size(),
              "[" + std::to_string(packed.size() / cfg.accElemBytes) + "][" + std::to_string(cfg.batch) + "][" +
                  std::to_string(cfg.blockOut) + "] int32 (each " + what + " repeated per batch row)")
        ->data = packed;
  };
  if (op.epilogue.bias) {
    std::vector<int32_t> bias = op.inputZeroPoint ? detail::zeroPointBias(op, data) : data.bias;
    // With the bias after the multiply, the output zero point joins it (Z * 2^shift).
    if (op.epilogue.biasAfterMultiply && op.epilogue.outputZeroPoint)
      for (int32_t& b : bias) b = int32_t(uint32_t(b) + (uint32_t(op.epilogue.outputZeroPoint) << op.epilogue.shift));
    addChannelVector("bias", bias, "bias");
  }
  if (op.epilogue.perChannelMultiplier) addChannelVector("multipliers", data.multipliers, "multiplier");
  if (op.epilogue.lowBits) addChannelVector("multipliers_low", data.multipliersLow, "low multiplier");
  if (op.epilogue.leakyPerChannel) addChannelVector("leaky_multipliers", data.leakyMultipliers, "slope multiplier");
  if (op.epilogue.perChannelClip) {
    addChannelVector("clip_low", data.clipLow, "bound");
    addChannelVector("clip_high", data.clipHigh, "bound");
  }
  if (op.inputZeroPoint && !op.onVectorAlu()) {
    const detail::Geometry g = detail::geometry(cfg, op);
    if (g.zeroPointClasses) {
      const std::vector<int32_t> rows = detail::zeroPointCorrections(g, op, data);
      const auto packed = packBias(cfg, rows);
      addBuffer("zero_point_corrections", BufferRole::kConstant, MemId::kAcc, packed.size(),
                "[" + std::to_string(g.zeroPointClasses) + " border classes][" + std::to_string(g.COB) + "][" +
                    std::to_string(cfg.batch) + "][" + std::to_string(cfg.blockOut) +
                    "] int32 (the zero point times the weights of the taps outside the input)")
          ->data = packed;
    }
  }
  const std::vector<int32_t> scaleRows = detail::vectorScaleRows(op);
  if (!scaleRows.empty()) {
    std::vector<uint8_t> packed;
    for (int32_t v : scaleRows)
      for (int lane = 0; lane < cfg.batch * cfg.blockOut; ++lane)
        for (int k = 0; k < 4; ++k) packed.push_back(static_cast<uint8_t>(static_cast<uint32_t>(v) >> (8 * k)));
    addBuffer("scales", BufferRole::kConstant, MemId::kAcc, packed.size(),
              "[" + std::to_string(scaleRows.size()) + "][" + std::to_string(cfg.batch) + "][" +
                  std::to_string(cfg.blockOut) + "] int32 (each value in every lane)")
        ->data = packed;
  }
  addBuffer("uops", BufferRole::kConstant, MemId::kUop, 0, "32-bit micro-ops");

  const std::unique_ptr<detail::OperatorLowering> low = makeLowering(cfg, op, t);
  low->run(prog);
  low->placeKernels(prog);
  ProgramBuffer& ub = prog.buffers[size_t(prog.bufferIndex("uops"))];
  const hw::Isa isa(cfg);
  ub.data.resize(prog.uops.size() * 4);
  for (size_t i = 0; i < prog.uops.size(); ++i) {
    const uint32_t w = isa.encodeUop(prog.uops[i], "micro-op " + std::to_string(i));
    for (int k = 0; k < 4; ++k) ub.data[4 * i + size_t(k)] = static_cast<uint8_t>(w >> (8 * k));
  }
  ub.bytes = ub.data.size();
  if (prog.uops.size() > cfg.uopDepth)
    throw Error(where, "micro-op kernels need " + std::to_string(prog.uops.size()) + " entries, the buffer holds " +
                           std::to_string(cfg.uopDepth));

  if (out) {
    printDumpBanner(*out, "tiling search");
    *out << legal << " legal tilings; chosen " << low->tilingText() << "\n";
    *out << "estimated cycles " << static_cast<uint64_t>(est.cycles) << " (GEMM " << static_cast<uint64_t>(est.computeCycles)
         << ", loads " << static_cast<uint64_t>(est.loadCycles) << (op.onVectorAlu() ? "" : " mostly hidden")
         << ", vector ALU " << static_cast<uint64_t>(est.epilogueCycles) << ", stores "
         << static_cast<uint64_t>(est.storeCycles) << ")\n";
    printDumpBanner(*out, "loop nest");
    *out << low->loopNest();
    printDumpBanner(*out, "runtime calls");
    *out << low->runtimeCalls(prog);
  }
  low->assemble(prog);
  for (size_t i = 0; i < prog.insns.size(); ++i) {
    isa.encode(prog.insns[i], where + ": instruction " + std::to_string(i));
    isa.validate(prog.insns[i], i);
  }

  ProgramSummary& sum = prog.summary;
  sum.tiling = low->tilingText();
  low->summarize(sum);
  sum.uopEntries = prog.uops.size();
  sum.macs = op.macs();
  sum.estimatedCycles = est.cycles;
  sum.legalTilings = legal;
  if (out) {
    printDumpBanner(*out, "instruction selection (disassembly)");
    for (size_t i = 0; i < prog.insns.size(); ++i) {
      const int b = prog.insnBuffer[i];
      *out << i << ": " << hw::disassemble(isa, prog.insns[i])
           << (b >= 0 ? "   # dram_base relative to " + prog.buffers[size_t(b)].name : std::string()) << "\n";
    }
    for (size_t i = 0; i < prog.uops.size(); ++i) *out << "uop " << i << ": " << hw::disassembleUop(prog.uops[i]) << "\n";
    printDumpBanner(*out, "summary");
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
  if (p.op.onVectorAlu()) {
    // Micro-op executions of the ALU (and the reset GEMM): the vector ALU's work.
    uint64_t aluUops = 0;
    for (const auto& in : p.insns)
      if (in.opcode == hw::Opcode::kAlu || in.opcode == hw::Opcode::kGemm)
        aluUops += uint64_t(in.iterOut) * in.iterIn * (in.uopEnd - in.uopBgn);
    os << "ALU micro-ops     " << aluUops << " (" << aluUops * uint64_t(cfg.batch) * cfg.blockOut
       << " lane operations)\n";
    os << "estimated cycles  " << static_cast<uint64_t>(s.estimatedCycles) << "\n";
    return os.str();
  }
  os << "MACs              " << s.macs << " (" << s.paddedMacs << " executed with padding)\n";
  os << "estimated cycles  " << static_cast<uint64_t>(s.estimatedCycles) << " (ideal "
     << s.paddedMacs / (uint64_t(cfg.batch) * cfg.blockIn * cfg.blockOut) << ")\n";
  return os.str();
}

}  // namespace tessera::compiler::op
