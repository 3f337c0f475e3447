// The host executor: ONNX operators with their reference semantics, shape inference, whole-graph evaluation.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "tessera/compiler/ir/graph.h"

namespace tessera::compiler::host {

// Fills the dtype and shape of every tensor the nodes compute. Throws tessera::Error naming the
// node, its op type and the opset for an unsupported operator or inconsistent shapes.
void inferShapes(ir::Graph& g);

// Whether the host executor runs `n` (ONNX default domain, opsets 11..17).
bool hostSupports(const ir::Node& n, int64_t opset);

// Runs one node: inputs in the node's input order (nullptr for omitted optional inputs); returns
// its outputs with data (floats for float32, ints otherwise). Integer operators are exact;
// QuantizeLinear rounds half to even and saturates, as ONNX specifies.
std::vector<ir::Tensor> runHostNode(const ir::Node& n, const std::vector<const ir::Tensor*>& inputs,
                                       int64_t opset);

// The padding of a convolution's or pooling's 2-D window from its `auto_pad` and `pads` attributes
// (explicit, SAME_UPPER, SAME_LOWER or VALID) over an H x W input, for a kernel of extent
// (kernel - 1) * dilation + 1 and the given strides. Malformed attributes go to `fail`, which throws.
struct WindowPads {
  int64_t top = 0, left = 0, bottom = 0, right = 0;
};
WindowPads windowPads(const ir::Node& n, int64_t inH, int64_t inW, int64_t extentH, int64_t extentW, int64_t strideH,
                      int64_t strideW, const std::function<void(const std::string&)>& fail);

// Slice's window over an input of `shape` from its constant starts, ends, axes and steps (inputs 1
// to 4), with ONNX's clamping: the output shape, and per axis the first index and the step. The
// executor and the code generator share it. Malformed inputs throw tessera::Error naming the node.
struct SliceWindow {
  std::vector<int64_t> shape, start, step;
};
SliceWindow sliceWindow(const ir::Node& n, int64_t opset, const std::vector<int64_t>& shape,
                        const std::vector<const ir::Tensor*>& inputs);

// ReduceSum's, ReduceMean's and ReduceMax's plan over an input of `shape`: which axes are reduced
// (the `axes` attribute, or from opset 13 ReduceSum's constant second input; none given: all of
// them, or none with noop_with_empty_axes) and the output shape (keepdims keeps them as 1s).
// Shared by the executor and the code generator; malformed axes throw tessera::Error naming the node.
struct Reduction {
  std::vector<int64_t> shape;  // the output's
  std::vector<bool> reduced;   // per input axis
};
Reduction reduction(const ir::Node& n, int64_t opset, const std::vector<int64_t>& shape,
                    const std::vector<const ir::Tensor*>& inputs);

// How float Conv and Gemm are computed. kReference: each output summed in double and rounded once,
// in the order the code generator reproduces (host steps of compiled models run this way, bit-exact
// with generated code). kLibrary: OpenBLAS's float sgemm (im2col for convolutions), many times
// faster, equal to kReference within float rounding; for whole-graph float evaluations that only
// need the values (calibration, eval's float reference).
enum class FloatKernels { kReference, kLibrary };

// The whole graph on the host from the given inputs; returns every tensor it computed.
std::map<std::string, ir::Tensor> evaluate(const ir::Graph& g, const std::map<std::string, ir::Tensor>& inputs,
                                           FloatKernels kernels = FloatKernels::kReference);

}  // namespace tessera::compiler::host
