// The host executor's upsampling operators, Resize and ConvTranspose, with ONNX's reference semantics.
#pragma once

#include <cstdint>
#include <vector>

#include "tessera/compiler/ir/graph.h"

namespace tessera::compiler::host::detail {

// Resize (opsets 11 to 17): modes nearest (every nearest_mode) and linear, every
// coordinate_transformation_mode, scales or sizes as constant inputs, any rank. Nearest copies any
// element type; linear interpolates float32, weights and sums in double, rounded once. The cubic
// mode and malformed inputs throw tessera::Error naming the node. Without `computeData` only the
// output's dtype and shape are filled.
ir::Tensor resize(const ir::Node& n, int64_t opset, const std::vector<const ir::Tensor*>& inputs, bool computeData);

// ConvTranspose over N x C x H x W float32 input and C x (M / group) x KH x KW weights: strides,
// dilations, groups, pads, output_padding, output_shape and auto_pad; each output summed in double
// and rounded once.
ir::Tensor convTranspose(const ir::Node& n, int64_t opset, const std::vector<const ir::Tensor*>& inputs, bool computeData);

}  // namespace tessera::compiler::host::detail
