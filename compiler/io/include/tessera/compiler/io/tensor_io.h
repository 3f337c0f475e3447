// Tensors and data sets from and to files: NumPy .npy, IDX (optionally gzipped), PNG and PGM images, label lists.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tessera/compiler/ir/graph.h"

namespace tessera::compiler::io {

// NumPy .npy (format 1.0-3.0, little-endian, C order): float32, uint8, int8, int32, int64.
ir::Tensor readNpy(const std::string& path);
// Refuses to replace an existing file unless `overwrite`; writes a temporary file and renames it.
void writeNpy(const std::string& path, const ir::Tensor& t, bool overwrite);

// IDX image and label files (MNIST's format), plain or gzip-compressed.
struct IdxImages {
  int64_t count = 0, rows = 0, cols = 0;
  std::vector<uint8_t> pixels;  // count x rows x cols
};
IdxImages readIdxImages(const std::string& path);
std::vector<uint8_t> readIdxLabels(const std::string& path);

// A PNG (libpng; gray, gray+alpha, RGB, RGBA, palette; 8 or 16 bit) or PGM (P5/P2) image as uint8
// [1, C, H, W] with C = 1 (gray) or 3 (colour; alpha dropped). The format is sniffed from the bytes.
ir::Tensor readImage(const std::string& path);

// An 8-bit image as PNG stores it: rows top to bottom, pixels interleaved, 1 (gray) or 3 (RGB) channels.
struct Image {
  int64_t width = 0, height = 0, channels = 1;
  std::vector<uint8_t> pixels;  // height x width x channels
};

// The images of a [N, C, H, W] or [C, H, W] tensor (C = 1 or 3) tiled into one: ceil(sqrt(N)) per row,
// 2-pixel black gaps; the value `lo` maps to 0 and `hi` to 255, clamped. `origin` names the tensor in errors.
Image tileImages(const ir::Tensor& images, float lo, float hi, const std::string& origin);
// Where tileImages puts image `index` of `count` images of h x w: its top-left corner (x, y).
std::pair<int64_t, int64_t> tileOrigin(int64_t index, int64_t count, int64_t h, int64_t w);

// Writes a PNG (libpng); refuses to replace an existing file unless `overwrite`.
void writePng(const std::string& path, const Image& image, bool overwrite);

// One label per line.
std::vector<std::string> readLabels(const std::string& path);

}  // namespace tessera::compiler::io
