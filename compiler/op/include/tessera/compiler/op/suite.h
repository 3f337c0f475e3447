// Operator suites: ResNet-18's convolution layers and its classifier, as `tessera bench resnet18` runs them.
#pragma once

#include <vector>

#include "tessera/compiler/op/operator.h"

namespace tessera::compiler::op {

struct SuiteLayer {
  Operator op;      // named C1..C11, FC
  int occurrences;  // how often the layer's shape appears in the network
};

// ResNet-18 at batch 1: C1 224x224x3->64 k7 p3 s2 ... C11 7x7x512->512 k3 p1 s1, and the final dense
// 512->1000. Convolutions have bias, shift 8 and ReLU (each is followed by a ReLU in the network up
// to the residual add); the dense layer has bias and shift 8.
std::vector<SuiteLayer> resnet18Suite();

// ResNet-18's layers on the vector ALU: P1 the stem's 3x3 stride-2 max pooling (112x112x64), A2..A5
// the residual adds of each stage (a + b, >>1 rounded, ReLU; two per stage), GAP the final 7x7
// global average pooling (512 channels).
std::vector<SuiteLayer> resnet18VectorSuite();

}  // namespace tessera::compiler::op
