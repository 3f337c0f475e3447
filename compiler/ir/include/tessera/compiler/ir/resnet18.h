// ResNet-18 built in C++ as a float graph (seeded weights) and a seeded input, for benchmarks and tests that need no model file.
#pragma once

#include <cstdint>

#include "tessera/compiler/ir/graph.h"

namespace tessera::compiler::ir {

// torchvision's ResNet-18 (batch 1, input "data" float [1,3,224,224], output "logits" [1,1000]),
// opset 13, BatchNormalization kept as nodes. Weights are He-initialized and BatchNorm statistics
// non-trivial, from `seed`; no pretrained weights exist here.
Graph resnet18Graph(uint32_t seed);

// An input for it (and for the ResNet-18 ONNX files of scripts/models): "data", float
// [1,3,224,224], normally distributed (mean 0, deviation 1) from `seed`.
Tensor resnet18Input(uint32_t seed);

}  // namespace tessera::compiler::ir
