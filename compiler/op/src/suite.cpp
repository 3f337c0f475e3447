// ResNet-18's layer suite.
#include "tessera/compiler/op/suite.h"

#include <string>

namespace tessera::compiler::op {

std::vector<SuiteLayer> resnet18Suite() {
  struct Shape {
    const char* name;
    int size, cin, cout, kernel, pad, stride, occurrences;
  };
  // Occurrences: the stem once; four 3x3 convolutions in stage 1; per later stage one strided 3x3,
  // one strided 1x1 shortcut and three unstrided 3x3.
  static const Shape kShapes[] = {
      {"C1", 224, 3, 64, 7, 3, 2, 1},     {"C2", 56, 64, 64, 3, 1, 1, 4},    {"C3", 56, 64, 128, 3, 1, 2, 1},
      {"C4", 56, 64, 128, 1, 0, 2, 1},    {"C5", 28, 128, 128, 3, 1, 1, 3},  {"C6", 28, 128, 256, 3, 1, 2, 1},
      {"C7", 28, 128, 256, 1, 0, 2, 1},   {"C8", 14, 256, 256, 3, 1, 1, 3},  {"C9", 14, 256, 512, 3, 1, 2, 1},
      {"C10", 14, 256, 512, 1, 0, 2, 1},  {"C11", 7, 512, 512, 3, 1, 1, 3}};
  std::vector<SuiteLayer> layers;
  Epilogue conv;
  conv.relu = true;
  for (const Shape& s : kShapes) {
    Operator op = Operator::conv2d(1, s.cin, s.size, s.size, s.cout, s.kernel, s.stride, s.pad, conv);
    op.name = s.name;
    layers.push_back({op, s.occurrences});
  }
  Operator fc = Operator::dense(1, 512, 1000, Epilogue());
  fc.name = "FC";
  layers.push_back({fc, 1});
  return layers;
}

std::vector<SuiteLayer> resnet18VectorSuite() {
  std::vector<SuiteLayer> layers;
  Operator pool = Operator::maxPool(1, 64, 112, 112, 3, 2, 1);
  pool.name = "P1";
  layers.push_back({pool, 1});
  Epilogue residual;
  residual.bias = false;
  residual.shift = 1;
  residual.round = true;
  residual.relu = true;
  const int sizes[] = {56, 28, 14, 7}, channels[] = {64, 128, 256, 512};
  for (int i = 0; i < 4; ++i) {
    Operator add = Operator::add(1, channels[i], sizes[i], sizes[i], residual);
    add.name = "A" + std::to_string(i + 2);
    layers.push_back({add, 2});
  }
  Operator gap = Operator::avgPool(1, 512, 7, 7, 7, 1, 0);
  gap.name = "GAP";
  layers.push_back({gap, 1});
  return layers;
}

}  // namespace tessera::compiler::op
