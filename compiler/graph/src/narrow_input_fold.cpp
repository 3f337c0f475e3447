// The narrow-input fold: a narrow first convolution's kernel columns and row stride phases become input channels.
#include <algorithm>

#include "passes.h"
#include "tessera/compiler/op/compile.h"
#include "tessera/support/error.h"

namespace tessera::compiler::graph::detail {

using ir::Attribute;
using ir::DType;
using ir::Graph;
using ir::Node;
using ir::Tensor;
using op::Operator;
using op::chooseTiling;
using op::estimateCycles;

// A convolution reading only a few channels wastes most of the GEMM core's input lanes. With P row
// phases (the row stride) and all KW kernel columns folded into channels, the same sums become a
// ceil(KH/P) x 1 convolution of stride 1 over C*KW*P channels, on an input the host rearranges
// once at the network's edge (tessera.FoldInput). Applied when the cost model says it is faster.
void foldNarrowInputs(const hw::Config& cfg, Graph& g) {
  std::vector<Node> out;
  for (Node& n : g.nodes) {
    const int producer = g.producer(n.inputs[0]);
    if (!isAccelerator(n) || n.opType != "conv2d" || (producer >= 0 && isAccelerator(g.nodes[size_t(producer)]))) {
      out.push_back(n);
      continue;
    }
    const Operator op = acceleratorOperator(g, n);
    const int P = op.strideH, KH2 = (op.kernelH + P - 1) / P, C2 = op.inChannels * op.kernelW * P;
    const int OH = op.outHeight(), OW = op.outWidth(), H2 = OH + KH2 - 1;
    if (op.runtimeWeights || op.groups != 1 || op.dilationH != 1 || op.dilationW != 1 || op.inChannels * 2 > cfg.blockIn ||
        (op.kernelW == 1 && P == 1)) {
      out.push_back(n);
      continue;
    }
    Operator folded = Operator::conv2d(op.batch, C2, H2, OW, op.outChannels, 1, 1, 0, op.epilogue);
    folded.kernelH = KH2;
    folded.kernelW = 1;
    // The host fills the padding with the zero point itself, so the folded taps need no border
    // corrections: the zero point's share is all in the bias.
    folded.inputZeroPoint = op.inputZeroPoint;
    folded.name = op.name;
    try {
      folded.validate();
      const double before = estimateCycles(cfg, op, chooseTiling(cfg, op)).cycles;
      const double after = estimateCycles(cfg, folded, chooseTiling(cfg, folded)).cycles;
      if (after >= before) {
        out.push_back(n);
        continue;
      }
    } catch (const tessera::Error&) {
      out.push_back(n);
      continue;
    }
    // Weights: w2[o][(c*KW + kx)*P + py][ky2][0] = w[o][c][P*ky2 + py][kx], zero past the kernel.
    const Tensor& w = g.tensor(n.inputs[1]);
    Tensor w2;
    w2.name = n.inputs[1] + "_folded";
    w2.dtype = DType::kInt8;
    w2.shape = {op.outChannels, C2, KH2, 1};
    w2.hasShape = true;
    w2.isConstant = true;
    w2.ints.assign(size_t(op.outChannels) * size_t(C2) * size_t(KH2), 0);
    for (int o = 0; o < op.outChannels; ++o)
      for (int c = 0; c < op.inChannels; ++c)
        for (int kx = 0; kx < op.kernelW; ++kx)
          for (int py = 0; py < P; ++py)
            for (int k2 = 0; k2 < KH2; ++k2) {
              const int ky = P * k2 + py;
              if (ky >= op.kernelH) continue;
              const int c2 = (c * op.kernelW + kx) * P + py;
              w2.ints[(size_t(o) * size_t(C2) + size_t(c2)) * size_t(KH2) + size_t(k2)] =
                  w.ints[((size_t(o) * size_t(op.inChannels) + size_t(c)) * size_t(op.kernelH) + size_t(ky)) *
                             size_t(op.kernelW) + size_t(kx)];
            }
    g.tensors[w2.name] = w2;
    Node fold;
    fold.name = n.name + "_fold_input";
    fold.domain = kTesseraDomain;
    fold.opType = "FoldInput";
    fold.inputs = {n.inputs[0]};
    Tensor x2 = g.tensor(n.inputs[0]);
    x2.name = n.inputs[0] + "_folded";
    x2.shape = {op.batch, C2, H2, OW};
    x2.isConstant = false;
    g.tensors[x2.name] = x2;
    fold.outputs = {x2.name};
    fold.attrs["kw"] = intAttribute(op.kernelW);
    fold.attrs["sw"] = intAttribute(op.strideW);
    fold.attrs["phases"] = intAttribute(P);
    fold.attrs["ph"] = intAttribute(op.padH);
    fold.attrs["pw"] = intAttribute(op.padW);
    if (op.inputZeroPoint) fold.attrs["pad_value"] = intAttribute(op.inputZeroPoint);
    fold.attrs["out_h"] = intAttribute(H2);
    fold.attrs["out_w"] = intAttribute(OW);
    out.push_back(fold);
    n.inputs[0] = x2.name;
    n.inputs[1] = w2.name;
    n.attrs["spec"].s = folded.spec();
    // The table reports the convolution's own MACs, not the folded kernel's zero taps.
    if (!n.has("logical_macs")) n.attrs["logical_macs"] = intAttribute(int64_t(op.macs()));
    out.push_back(n);
  }
  g.nodes = std::move(out);
  g.pruneTensors();
}

}  // namespace tessera::compiler::graph::detail
