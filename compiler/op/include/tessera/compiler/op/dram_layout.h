// Host packing and unpacking between logical NCHW/OIHW tensors and VTA's blocked DRAM layouts.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/compiler/op/operator.h"
#include "tessera/hw/config.h"

namespace tessera::compiler::op {

// Activations NCHW{BATCH}n{BLOCK}c: [ceil(N/BATCH)][ceil(C/BLOCK)][H][W][BATCH][BLOCK] int8, padding
// lanes zero. BLOCK is BLOCK_IN for an operator's input and BLOCK_OUT for its output.
struct ActivationLayout {
  int n = 1, c = 1, h = 1, w = 1;  // logical shape
  int batch = 1, block = 1;       // the config's BATCH and channel block
  int batchBlocks() const { return (n + batch - 1) / batch; }
  int channelBlocks() const { return (c + block - 1) / block; }
  uint64_t bytes() const { return uint64_t(batchBlocks()) * channelBlocks() * h * w * batch * block; }
  std::string describe() const;  // "NCHW1n16c [1][4][56][56][1][16] (logical 1x64x56x56)"
};
ActivationLayout inputLayout(const hw::Config& cfg, int n, int c, int h, int w);
ActivationLayout outputLayout(const hw::Config& cfg, int n, int c, int h, int w);

// Where an operator's activations live. conv2d and dense read BLOCK_IN blocks and write BLOCK_OUT
// blocks; add and the poolings read and write BLOCK_OUT blocks (the accumulator's 8-bit layout that
// LOAD ACC_8BIT reads), so a convolution's output feeds them unchanged. add's two operands share
// `input`'s layout.
struct OperatorLayouts {
  ActivationLayout input, output;
};
OperatorLayouts operatorLayouts(const hw::Config& cfg, const Operator& op);

std::vector<int8_t> packActivations(const ActivationLayout& l, const std::vector<int8_t>& nchw);
std::vector<int8_t> unpackActivations(const ActivationLayout& l, const std::vector<int8_t>& packed);

// Weights OIHW{BLOCK_OUT}o{BLOCK_IN}i: [ceil(O/BO)][R][KH][KW][BO][BI] int8, padding zero, where each
// output-channel block holds the R input-channel blocks its reduction reads, from firstInBlock(ob) on.
// Without groups R = ceil(I/BI) from block 0: VTA's layout. With G groups (logical weights
// [O][I/G][KH][KW]) an output channel reads only its group's I/G inputs, so R covers the widest
// block's groups (a depthwise block's 16 channels read one input block: a diagonal 16x16 block) and
// the weights of other groups' channels inside those blocks are zero.
struct WeightLayout {
  int o = 1, i = 1, kh = 1, kw = 1;
  int blockOut = 1, blockIn = 1;
  int groups = 1;
  int outBlocks() const { return (o + blockOut - 1) / blockOut; }
  int inBlocks() const { return (i + blockIn - 1) / blockIn; }
  int reductionBlocks() const;        // R
  int firstInBlock(int ob) const;     // the first input-channel block output block ob reads
  uint64_t bytes() const { return uint64_t(outBlocks()) * reductionBlocks() * kh * kw * blockOut * blockIn; }
  std::string describe() const;
};
WeightLayout weightLayout(const hw::Config& cfg, int o, int i, int kh, int kw, int groups = 1);
// Logical [O][I/G][KH][KW] to the packed layout and back.
std::vector<int8_t> packWeights(const WeightLayout& l, const std::vector<int8_t>& oihw);
std::vector<int8_t> unpackWeights(const WeightLayout& l, const std::vector<int8_t>& packed);

// Weights given as an activation (Operator::runtimeWeights, an accelerator output reloaded as GEMM
// weights, as attention's products are): a 1x1 conv2d of G groups, C inputs and O outputs reads
// the activation [1][G*(C/G)][O/G][1] as its weights, W[g*Q + q][p] = A[0][g*P + p][q][0] with
// P = C/G and Q = O/G (each group's weights transposed: the activation's rows are its outputs).
// weightsView gives those logical [O][C/G][1][1] weights; weightsViewIsPacked says whether the
// activation's packed bytes are exactly the packed weights in `cfg` (BATCH 1, and P or Q one
// channel block with the other whole blocks), so the operator reads the activation's slot as
// its weights buffer with no copy.
std::vector<int64_t> weightsViewShape(const Operator& op);
std::vector<int8_t> weightsView(const Operator& op, const std::vector<int8_t>& activation);
bool weightsViewIsPacked(const hw::Config& cfg, const Operator& op);

// Bias as accumulator elements: [ceil(O/BO)][BATCH][BO] int32 little endian, each value repeated
// for every batch row so one vector ALU ADD applies it to a whole accumulator element.
std::vector<uint8_t> packBias(const hw::Config& cfg, const std::vector<int32_t>& bias);
// The `outChannels` biases of packBias's layout (the first batch row).
std::vector<int32_t> unpackBias(const hw::Config& cfg, const std::vector<uint8_t>& packed, int outChannels);

}  // namespace tessera::compiler::op
