// Packing between logical tensors and VTA's blocked layouts (each element contiguous).
#include "tessera/compiler/op/dram_layout.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "tessera/support/error.h"

namespace tessera::compiler::op {

namespace {

size_t activationIndex(const ActivationLayout& l, int n, int c, int y, int x) {
  return ((((size_t(n / l.batch) * l.channelBlocks() + c / l.block) * l.h + y) * l.w + x) * l.batch + n % l.batch) *
             l.block +
         c % l.block;
}

void checkSize(size_t got, uint64_t want, const char* what) {
  if (got != want)
    throw Error(what, "expected " + std::to_string(want) + " bytes, got " + std::to_string(got));
}

}  // namespace

std::string ActivationLayout::describe() const {
  return "NCHW" + std::to_string(batch) + "n" + std::to_string(block) + "c [" + std::to_string(batchBlocks()) + "][" +
         std::to_string(channelBlocks()) + "][" + std::to_string(h) + "][" + std::to_string(w) + "][" +
         std::to_string(batch) + "][" + std::to_string(block) + "] (logical " + std::to_string(n) + "x" +
         std::to_string(c) + "x" + std::to_string(h) + "x" + std::to_string(w) + ")";
}

ActivationLayout inputLayout(const hw::Config& cfg, int n, int c, int h, int w) {
  return ActivationLayout{n, c, h, w, cfg.batch, cfg.blockIn};
}

ActivationLayout outputLayout(const hw::Config& cfg, int n, int c, int h, int w) {
  return ActivationLayout{n, c, h, w, cfg.batch, cfg.blockOut};
}

OperatorLayouts operatorLayouts(const hw::Config& cfg, const Operator& op) {
  OperatorLayouts l;
  l.input = op.onVectorAlu() ? outputLayout(cfg, op.batch, op.inChannels, op.height, op.width)
                             : inputLayout(cfg, op.batch, op.inChannels, op.height, op.width);
  l.output = outputLayout(cfg, op.batch, op.outChannels, op.outHeight(), op.outWidth());
  return l;
}

std::vector<int8_t> packActivations(const ActivationLayout& l, const std::vector<int8_t>& nchw) {
  checkSize(nchw.size(), uint64_t(l.n) * l.c * l.h * l.w, "packActivations");
  std::vector<int8_t> packed(l.bytes(), 0);
  size_t i = 0;
  for (int n = 0; n < l.n; ++n)
    for (int c = 0; c < l.c; ++c)
      for (int y = 0; y < l.h; ++y)
        for (int x = 0; x < l.w; ++x) packed[activationIndex(l, n, c, y, x)] = nchw[i++];
  return packed;
}

std::vector<int8_t> unpackActivations(const ActivationLayout& l, const std::vector<int8_t>& packed) {
  checkSize(packed.size(), l.bytes(), "unpackActivations");
  std::vector<int8_t> nchw(size_t(l.n) * l.c * l.h * l.w);
  size_t i = 0;
  for (int n = 0; n < l.n; ++n)
    for (int c = 0; c < l.c; ++c)
      for (int y = 0; y < l.h; ++y)
        for (int x = 0; x < l.w; ++x) nchw[i++] = packed[activationIndex(l, n, c, y, x)];
  return nchw;
}

namespace {
// The input-channel blocks [lo, hi) output block ob's groups read.
std::pair<int, int> groupInBlocks(const WeightLayout& l, int ob) {
  const int perIn = l.i / l.groups, perOut = l.o / l.groups;
  const int first = ob * l.blockOut, last = std::min(first + l.blockOut, l.o) - 1;
  const int lo = (first / perOut) * perIn, hi = (last / perOut + 1) * perIn;
  return {lo / l.blockIn, (hi + l.blockIn - 1) / l.blockIn};
}
}  // namespace

int WeightLayout::reductionBlocks() const {
  if (groups <= 1) return inBlocks();
  int r = 0;
  for (int ob = 0; ob < outBlocks(); ++ob) {
    const auto [lo, hi] = groupInBlocks(*this, ob);
    r = std::max(r, hi - lo);
  }
  return r;
}

int WeightLayout::firstInBlock(int ob) const {
  if (groups <= 1) return 0;
  return std::min(groupInBlocks(*this, ob).first, inBlocks() - reductionBlocks());
}

std::string WeightLayout::describe() const {
  std::string s = "OIHW" + std::to_string(blockOut) + "o" + std::to_string(blockIn) + "i [" + std::to_string(outBlocks()) +
                  "][" + std::to_string(reductionBlocks()) + "][" + std::to_string(kh) + "][" + std::to_string(kw) + "][" +
                  std::to_string(blockOut) + "][" + std::to_string(blockIn) + "] (logical " + std::to_string(o) + "x" +
                  std::to_string(i / groups) + "x" + std::to_string(kh) + "x" + std::to_string(kw);
  if (groups != 1)
    s += ", " + std::to_string(groups) + " groups: each output block reads " + std::to_string(reductionBlocks()) + " of " +
         std::to_string(inBlocks()) + " input blocks";
  return s + ")";
}

WeightLayout weightLayout(const hw::Config& cfg, int o, int i, int kh, int kw, int groups) {
  return WeightLayout{o, i, kh, kw, cfg.blockOut, cfg.blockIn, groups};
}

namespace {
// Offset of logical weight [o][c][ky][kx] (c among the group's inputs) in the packed layout.
size_t weightIndex(const WeightLayout& l, int rb, const std::vector<int>& first, int o, int c, int ky, int kx) {
  const int ob = o / l.blockOut, in = (o / (l.o / l.groups)) * (l.i / l.groups) + c;
  const int r = in / l.blockIn - first[size_t(ob)];
  return ((((size_t(ob) * rb + r) * l.kh + ky) * l.kw + kx) * l.blockOut + o % l.blockOut) * l.blockIn + in % l.blockIn;
}

std::vector<int> firstInBlocks(const WeightLayout& l) {
  std::vector<int> first(size_t(l.outBlocks()));
  for (int ob = 0; ob < l.outBlocks(); ++ob) first[size_t(ob)] = l.firstInBlock(ob);
  return first;
}
}  // namespace

std::vector<int8_t> packWeights(const WeightLayout& l, const std::vector<int8_t>& oihw) {
  const int perIn = l.i / l.groups;
  checkSize(oihw.size(), uint64_t(l.o) * perIn * l.kh * l.kw, "packWeights");
  std::vector<int8_t> packed(l.bytes(), 0);
  const int rb = l.reductionBlocks();
  const std::vector<int> first = firstInBlocks(l);
  // weightIndex's divisions once per (o, c), not per tap: a large dense layer (VGG's 100M weights)
  // spent most of its packing time in them. Consecutive taps lie a block apart.
  const size_t tapStride = size_t(l.blockOut) * l.blockIn, taps = size_t(l.kh) * l.kw;
  size_t src = 0;
  for (int o = 0; o < l.o; ++o)
    for (int c = 0; c < perIn; ++c, src += taps) {
      const size_t base = weightIndex(l, rb, first, o, c, 0, 0);
      for (size_t t = 0; t < taps; ++t) packed[base + t * tapStride] = oihw[src + t];
    }
  return packed;
}

std::vector<int64_t> weightsViewShape(const Operator& op) {
  return {int64_t(op.batch), int64_t(op.inChannels), op.groups > 0 ? int64_t(op.outChannels / op.groups) : 0, 1};
}

std::vector<int8_t> weightsView(const Operator& op, const std::vector<int8_t>& activation) {
  const int groups = op.groups, p = op.groupInChannels(), q = groups > 0 ? op.outChannels / groups : 0;
  checkSize(activation.size(), uint64_t(groups) * p * q, "weightsView");
  std::vector<int8_t> w(activation.size());
  for (int g = 0; g < groups; ++g)
    for (int j = 0; j < q; ++j)
      for (int c = 0; c < p; ++c) w[(size_t(g) * q + j) * p + c] = activation[(size_t(g) * p + c) * q + j];
  return w;
}

bool weightsViewIsPacked(const hw::Config& cfg, const Operator& op) {
  if (op.kernelH != 1 || op.kernelW != 1 || op.batch != 1 || cfg.batch != 1 || op.groups < 1 ||
      op.outChannels % op.groups)
    return false;
  const std::vector<int64_t> shape = weightsViewShape(op);
  const ActivationLayout al = outputLayout(cfg, 1, int(shape[1]), int(shape[2]), 1);
  const WeightLayout wl = weightLayout(cfg, op.outChannels, op.inChannels, 1, 1, op.groups);
  if (al.bytes() != wl.bytes() || uint64_t(op.inChannels) * uint64_t(shape[2]) != al.bytes()) return false;
  // Each element's position, 7 bits at a time (int8 probes), must land where the view puts it.
  const size_t count = size_t(op.inChannels) * size_t(shape[2]);
  for (size_t bit = 0; bit == 0 || (size_t(1) << bit) < count; bit += 7) {
    std::vector<int8_t> probe(count);
    for (size_t i = 0; i < count; ++i) probe[i] = int8_t((i >> bit) & 0x7f);
    if (unpackWeights(wl, packActivations(al, probe)) != weightsView(op, probe)) return false;
  }
  return true;
}

std::vector<int8_t> unpackWeights(const WeightLayout& l, const std::vector<int8_t>& packed) {
  checkSize(packed.size(), l.bytes(), "unpackWeights");
  const int perIn = l.i / l.groups, rb = l.reductionBlocks();
  const std::vector<int> first = firstInBlocks(l);
  std::vector<int8_t> oihw(size_t(l.o) * perIn * l.kh * l.kw);
  size_t dst = 0;
  for (int o = 0; o < l.o; ++o)
    for (int c = 0; c < perIn; ++c)
      for (int ky = 0; ky < l.kh; ++ky)
        for (int kx = 0; kx < l.kw; ++kx) oihw[dst++] = packed[weightIndex(l, rb, first, o, c, ky, kx)];
  return oihw;
}

std::vector<uint8_t> packBias(const hw::Config& cfg, const std::vector<int32_t>& bias) {
  const size_t blocks = (bias.size() + cfg.blockOut - 1) / cfg.blockOut;
  std::vector<uint8_t> packed(blocks * cfg.accElemBytes, 0);
  for (size_t o = 0; o < bias.size(); ++o)
    for (int b = 0; b < cfg.batch; ++b) {
      const uint32_t v = static_cast<uint32_t>(bias[o]);
      uint8_t* p = &packed[((o / cfg.blockOut) * cfg.batch + b) * cfg.blockOut * 4 + (o % cfg.blockOut) * 4];
      for (int k = 0; k < 4; ++k) p[k] = static_cast<uint8_t>(v >> (8 * k));
    }
  return packed;
}

std::vector<int32_t> unpackBias(const hw::Config& cfg, const std::vector<uint8_t>& packed, int outChannels) {
  const size_t blocks = (size_t(outChannels) + cfg.blockOut - 1) / cfg.blockOut;
  checkSize(packed.size(), blocks * cfg.accElemBytes, "unpackBias");
  std::vector<int32_t> bias(static_cast<size_t>(outChannels));
  for (size_t o = 0; o < bias.size(); ++o) {
    const uint8_t* p = &packed[(o / cfg.blockOut) * cfg.batch * cfg.blockOut * 4 + (o % cfg.blockOut) * 4];
    bias[o] = static_cast<int32_t>(uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24);
  }
  return bias;
}

}  // namespace tessera::compiler::op
