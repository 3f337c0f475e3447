// Networks built in C++ as float graphs (seeded weights), for benchmarks and tests that need no model file.
#pragma once

#include <cstdint>

#include "tessera/compiler/ir/graph.h"

namespace tessera::compiler::ir {

// torchvision's ResNet-18 (batch 1, input "data" float [1,3,224,224], output "logits" [1,1000]),
// opset 13, BatchNormalization kept as nodes. Weights are He-initialized and BatchNorm statistics
// non-trivial, from `seed`; no pretrained weights exist here.
ir::Graph resnet18Graph(uint32_t seed);

}  // namespace tessera::compiler::ir
