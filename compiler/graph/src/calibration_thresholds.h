// Calibration's clipping thresholds: where a tensor's range is cut, from the magnitudes seen.
#pragma once

#include <vector>

namespace tessera::compiler::graph::detail {

// The entropy method (as TensorRT's and ONNX Runtime's calibrators): of the clipping thresholds at
// the upper edges of a 2,048-bin histogram of magnitudes, the one whose 128-level quantization of
// the clipped distribution loses the least information (Kullback-Leibler divergence); candidates
// every 16 bins from 128 on.
float entropyThreshold(const std::vector<float>& magnitudes, float maxAbs);

// The MSE method (as NVIDIA's pytorch-quantization and OpenVINO offer): of the clipping thresholds
// at the upper edges of a 2,048-bin histogram of magnitudes, the one with the least expected squared
// error of the 127-step quantization: a value below the threshold costs the rounding's step^2/12, one
// above it its distance to the threshold squared (at its bin's centre); candidates every 4 bins from
// 64 on. Unlike the entropy method it weighs an error by its size, not by how rare the value is.
float mseThreshold(const std::vector<float>& magnitudes, float maxAbs);

}  // namespace tessera::compiler::graph::detail
