// Program objects: counting, the binary file format of docs/compiler.md, and running through the runtime.
#include "tessera/compiler/op/program.h"

#include <chrono>
#include <cstring>

#include "tessera/compiler/op/binary_io.h"
#include "tessera/compiler/op/dram_layout.h"
#include "tessera/hw/asm.h"
#include "tessera/runtime/session.h"
#include "tessera/support/error.h"
#include "tessera/support/file_io.h"

namespace tessera::compiler::op {


namespace {

constexpr char kMagic[8] = {'T', 'S', 'R', 'A', 'P', 'R', 'G', '1'};
constexpr uint32_t kVersion = 1;

uint64_t memBytes(const hw::Insn& in, const hw::Config& cfg) {
  return uint64_t(in.ySize) * in.xSize * uint64_t(cfg.dramElemBytes(static_cast<hw::MemId>(in.memType)));
}

}  // namespace

int Program::bufferIndex(const std::string& name) const {
  for (size_t i = 0; i < buffers.size(); ++i)
    if (buffers[i].name == name) return static_cast<int>(i);
  throw Error("program", "has no buffer named '" + name + "'");
}

void Program::countInsns(uint64_t byOpcode[5], uint64_t* nops) const {
  for (int i = 0; i < 5; ++i) byOpcode[i] = 0;
  *nops = 0;
  for (const auto& in : insns) {
    if (in.isNop()) ++*nops;
    else ++byOpcode[static_cast<int>(in.opcode)];
  }
}

uint64_t Program::dramReadBytes(const hw::Config& cfg) const {
  uint64_t n = 0;
  for (const auto& in : insns)
    if (in.opcode == hw::Opcode::kLoad) n += memBytes(in, cfg);
  return n;
}

uint64_t Program::dramWriteBytes(const hw::Config& cfg) const {
  uint64_t n = 0;
  for (const auto& in : insns)
    if (in.opcode == hw::Opcode::kStore) n += memBytes(in, cfg);
  return n;
}

OperatorData Program::constants() const {
  const hw::Config cfg = hw::Config::fromJson(configJson, "program config");
  OperatorData d;
  if (op.onVectorAlu()) return d;
  // Weights given at run time are no constant: the caller supplies them with the inputs.
  if (!op.runtimeWeights) {
    const ProgramBuffer& w = buffers[size_t(bufferIndex("weights"))];
    const std::vector<int8_t> packedW(w.data.begin(), w.data.end());
    d.weights = unpackWeights(weightLayout(cfg, op.outChannels, op.inChannels, op.kernelH, op.kernelW, op.groups), packedW);
  }
  if (op.epilogue.bias) d.bias = unpackBias(cfg, buffers[size_t(bufferIndex("bias"))].data, op.outChannels);
  if (op.epilogue.biasAfterMultiply && op.epilogue.outputZeroPoint)  // folded in with the bias
    for (int32_t& b : d.bias) b = int32_t(uint32_t(b) - (uint32_t(op.epilogue.outputZeroPoint) << op.epilogue.shift));
  if (op.inputZeroPoint && op.epilogue.bias) {
    // The buffer holds the bias with the zero point's share folded in (-Z * sum of the weights).
    const size_t per = size_t(op.groupInChannels()) * op.kernelH * op.kernelW;
    for (size_t o = 0; o < d.bias.size(); ++o) {
      uint32_t sum = 0;
      for (size_t j = 0; j < per; ++j) sum += uint32_t(int32_t(d.weights[o * per + j]));
      d.bias[o] = int32_t(uint32_t(d.bias[o]) + uint32_t(op.inputZeroPoint) * sum);
    }
  }
  if (op.epilogue.perChannelMultiplier)
    d.multipliers = unpackBias(cfg, buffers[size_t(bufferIndex("multipliers"))].data, op.outChannels);
  if (op.epilogue.lowBits)
    d.multipliersLow = unpackBias(cfg, buffers[size_t(bufferIndex("multipliers_low"))].data, op.outChannels);
  if (op.epilogue.leakyPerChannel)
    d.leakyMultipliers = unpackBias(cfg, buffers[size_t(bufferIndex("leaky_multipliers"))].data, op.outChannels);
  if (op.epilogue.perChannelClip) {
    d.clipLow = unpackBias(cfg, buffers[size_t(bufferIndex("clip_low"))].data, op.outChannels);
    d.clipHigh = unpackBias(cfg, buffers[size_t(bufferIndex("clip_high"))].data, op.outChannels);
  }
  return d;
}

std::vector<uint8_t> Program::serialize() const {
  const hw::Config cfg = hw::Config::fromJson(configJson, "program config");
  const hw::Isa isa(cfg);
  BinaryWriter w;
  w.b.insert(w.b.end(), kMagic, kMagic + 8);
  w.u32(kVersion);
  w.str(configJson);
  w.str(op.spec());
  w.u32(static_cast<uint32_t>(buffers.size()));
  for (const auto& b : buffers) {
    w.str(b.name);
    w.u32(static_cast<uint32_t>(b.role));
    w.u32(b.memType);
    w.u64(b.bytes);
    w.str(b.layout);
    w.bytes(b.data);
  }
  w.u32(static_cast<uint32_t>(uops.size()));
  for (const auto& u : uops) w.u32(isa.encodeUop(u));
  w.u32(static_cast<uint32_t>(insns.size()));
  for (size_t i = 0; i < insns.size(); ++i) {
    const hw::RawInsn raw = isa.encode(insns[i]);
    w.u64(raw.lo);
    w.u64(raw.hi);
    w.u32(static_cast<uint32_t>(insnBuffer[i]));
  }
  w.str(summary.tiling);
  for (uint64_t v : {summary.tiles, summary.steps, summary.inpEntries, summary.wgtEntries, summary.accEntries,
                     summary.uopEntries, summary.macs, summary.paddedMacs, summary.legalTilings})
    w.u64(v);
  w.f64(summary.estimatedCycles);
  w.u64(fnv1a(w.b.data(), w.b.size()));
  return w.b;
}

Program Program::deserialize(const std::vector<uint8_t>& bytes, const std::string& origin) {
  BinaryReader r = openChecked(bytes, kMagic, kVersion, "program file", origin);
  const size_t body = bytes.size() - 8;
  Program p;
  p.configJson = r.str("config");
  const hw::Config cfg = hw::Config::fromJson(p.configJson, origin + ": config");
  const hw::Isa isa(cfg);
  p.op = Operator::parse(r.str("operator"), origin + ": operator");
  const uint32_t nBuffers = r.u32("buffer count");
  for (uint32_t i = 0; i < nBuffers; ++i) {
    ProgramBuffer b;
    b.name = r.str("buffer name");
    const uint32_t role = r.u32("buffer role");
    if (role > 2) throw Error(origin, "buffer '" + b.name + "' has invalid role " + std::to_string(role));
    b.role = static_cast<BufferRole>(role);
    b.memType = r.u32("buffer memory type");
    if (b.memType > 5) throw Error(origin, "buffer '" + b.name + "' has invalid memory type");
    b.bytes = r.u64("buffer size");
    b.layout = r.str("buffer layout");
    b.data = r.bytes("buffer data");
    if (!b.data.empty() && b.data.size() != b.bytes)
      throw Error(origin, "buffer '" + b.name + "' holds " + std::to_string(b.data.size()) + " bytes, declares " +
                              std::to_string(b.bytes));
    p.buffers.push_back(std::move(b));
  }
  const uint32_t nUops = r.u32("micro-op count");
  for (uint32_t i = 0; i < nUops; ++i) p.uops.push_back(isa.decodeUop(r.u32("micro-op")));
  const uint32_t nInsns = r.u32("instruction count");
  for (uint32_t i = 0; i < nInsns; ++i) {
    hw::RawInsn raw;
    raw.lo = r.u64("instruction");
    raw.hi = r.u64("instruction");
    const hw::Insn in = isa.decode(raw);
    isa.validate(in, i);
    const int32_t buf = static_cast<int32_t>(r.u32("instruction buffer"));
    if (buf < -1 || buf >= static_cast<int32_t>(p.buffers.size()))
      throw Error(origin, "instruction " + std::to_string(i) + " refers to buffer " + std::to_string(buf) +
                              " of " + std::to_string(p.buffers.size()));
    if (buf >= 0 && p.buffers[size_t(buf)].memType != in.memType)
      throw Error(origin, "instruction " + std::to_string(i) + " indexes buffer '" + p.buffers[size_t(buf)].name +
                              "' with the wrong element type");
    p.insns.push_back(in);
    p.insnBuffer.push_back(buf);
  }
  p.summary.tiling = r.str("summary");
  for (uint64_t* v : {&p.summary.tiles, &p.summary.steps, &p.summary.inpEntries, &p.summary.wgtEntries,
                      &p.summary.accEntries, &p.summary.uopEntries, &p.summary.macs, &p.summary.paddedMacs,
                      &p.summary.legalTilings})
    *v = r.u64("summary");
  p.summary.estimatedCycles = r.f64("summary");
  if (r.pos() != body) throw Error(origin, "unexpected bytes after the summary");
  // The operator's constants (weights, bias, per-channel vectors) must all be in the file, so that
  // an accepted program can be run and checked.
  try {
    (void)p.constants();
  } catch (const Error& e) {
    throw Error(origin, std::string("its buffers do not hold its operator's constants: ") + e.what());
  }
  return p;
}

void Program::save(const std::string& path, bool overwrite) const { writeBinaryFile(path, serialize(), overwrite); }

Program Program::load(const std::string& path) { return deserialize(readBinaryFile(path), path); }

RunResult runProgram(const Program& program, runtime::Session& session, const OperatorData& data,
                     uint32_t waitCycles) {
  const hw::Config& cfg = session.config();
  if (cfg.toJson() != program.configJson)
    throw Error("runProgram", "the program was compiled for another configuration than the session's (" + cfg.name + ")");
  const Operator& op = program.op;
  const OperatorLayouts layouts = operatorLayouts(cfg, op);
  const ActivationLayout& outL = layouts.output;
  auto pack = [&](const std::vector<int8_t>& x, const char* what) {
    if (x.size() != uint64_t(op.batch) * op.inChannels * op.height * op.width)
      throw Error("runProgram", std::string(what) + " has " + std::to_string(x.size()) + " values, " + op.describe() +
                                    " takes " + std::to_string(uint64_t(op.batch) * op.inChannels * op.height * op.width));
    return packActivations(layouts.input, x);
  };
  const std::vector<int8_t> packedIn = pack(data.input, "input");
  std::vector<int8_t> packedIn2;
  if (op.kind == OpKind::kAdd) packedIn2 = pack(data.input2, "input2");
  if (op.kind == OpKind::kScale) {  // one value per channel
    if (data.input2.size() != uint64_t(op.batch) * op.inChannels)
      throw Error("runProgram", "input2 has " + std::to_string(data.input2.size()) + " values, " + op.describe() +
                                    " takes " + std::to_string(uint64_t(op.batch) * op.inChannels) + " (one per channel)");
    packedIn2 = packActivations(outputLayout(cfg, op.batch, op.inChannels, 1, 1), data.input2);
  }
  if (op.residual) {
    // A fused residual add's operand has the output's shape and layout.
    const uint64_t want = uint64_t(op.batch) * op.outChannels * op.outHeight() * op.outWidth();
    if (data.input2.size() != want)
      throw Error("runProgram", "input2 has " + std::to_string(data.input2.size()) + " values, " + op.describe() +
                                    " takes " + std::to_string(want) + " (the output's shape)");
    packedIn2 = packActivations(outL, data.input2);
  }

  std::vector<int8_t> packedWeights;
  if (op.runtimeWeights) {
    const uint64_t want = uint64_t(op.outChannels) * op.groupInChannels() * op.kernelH * op.kernelW;
    if (data.weights.size() != want)
      throw Error("runProgram", "weights have " + std::to_string(data.weights.size()) + " values, " + op.describe() +
                                    " takes " + std::to_string(want) + " at run time");
    packedWeights = packWeights(weightLayout(cfg, op.outChannels, op.inChannels, op.kernelH, op.kernelW, op.groups), data.weights);
  }

  // Buffers are freed on every path, including errors.
  struct Buffers {
    runtime::Session& s;
    std::vector<runtime::DataBuffer*> all;
    ~Buffers() {
      for (auto* b : all) s.freeBuffer(b);
    }
  } bufs{session, {}};
  const hw::Isa isa(cfg);
  std::vector<uint64_t> base(program.buffers.size());
  for (size_t i = 0; i < program.buffers.size(); ++i) {
    const ProgramBuffer& b = program.buffers[i];
    runtime::DataBuffer* d = session.allocBuffer(std::max<uint64_t>(b.bytes, 1));
    bufs.all.push_back(d);
    const uint64_t elem = uint64_t(cfg.dramElemBytes(static_cast<hw::MemId>(b.memType)));
    if (d->phys % elem)
      throw Error("runProgram", "buffer '" + b.name + "' is not aligned to its " + std::to_string(elem) + "-byte elements");
    base[i] = d->phys / elem;
    if (b.role == BufferRole::kConstant) std::memcpy(d->host, b.data.data(), b.data.size());
    if (b.role == BufferRole::kInput) {
      const std::vector<int8_t>& src = b.name == "input2" ? packedIn2 : b.name == "weights" ? packedWeights : packedIn;
      if (src.size() != b.bytes) throw Error("runProgram", "input size does not match buffer '" + b.name + "'");
      std::memcpy(d->host, src.data(), src.size());
    }
  }
  runtime::DataBuffer* code = session.allocBuffer(program.insns.size() * 16);
  bufs.all.push_back(code);
  for (size_t i = 0; i < program.insns.size(); ++i) {
    hw::Insn in = program.insns[i];
    if (program.insnBuffer[i] >= 0) in.dramBase = static_cast<uint32_t>(in.dramBase + base[size_t(program.insnBuffer[i])]);
    hw::Isa::rawToBytes(isa.encode(in, "instruction " + std::to_string(i)), code->host + 16 * i);
  }
  runtime::Target& device = session.threadQueue().device();
  const hw::Counters before = device.counters();
  const auto t0 = std::chrono::steady_clock::now();
  device.run(code->phys, static_cast<uint32_t>(program.insns.size()), waitCycles);
  RunResult r;
  r.deviceSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.counters = device.counters().since(before);
  const runtime::DataBuffer* outBuf = bufs.all[size_t(program.bufferIndex("output"))];
  std::vector<int8_t> packedOut(outL.bytes());
  std::memcpy(packedOut.data(), outBuf->host, packedOut.size());
  r.output = unpackActivations(outL, packedOut);
  return r;
}

}  // namespace tessera::compiler::op
