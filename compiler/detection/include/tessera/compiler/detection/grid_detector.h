// A single-stage grid detector's output read as boxes: decoding, non-maximum suppression, mAP@IoU, and boxes drawn on an image.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tessera/compiler/io/tensor_io.h"
#include "tessera/compiler/ir/graph.h"

namespace tessera::compiler::detection {

// A box in input pixels: top-left corner and size.
struct Box {
  int64_t cls = 0;
  float score = 0, x = 0, y = 0, w = 0, h = 0;
};

// The "grid" layout (docs/beyond-classification.md): an output [1, 5 + classes, GH, GW] after sigmoid whose
// channels per cell are objectness, the box centre's x and y within the cell (0..1), its width and
// height as fractions of the input, and one probability per class.
struct GridLayout {
  int64_t classes = 0, gridH = 0, gridW = 0, imageH = 0, imageW = 0;
};

// Whether a model's metadata names a detector this library decodes (key "detector", value "grid").
bool isGridDetector(const std::map<std::string, std::string>& metadata);

// The layout of `output` for an input of imageH x imageW; throws tessera::Error naming `origin` when
// the output is not [1, 5 + classes, GH, GW] with classes >= 1.
GridLayout gridLayout(const ir::Tensor& output, int64_t imageH, int64_t imageW, const std::string& origin);

// The cells whose score (objectness x best class probability) reaches `scoreThreshold`, one box
// each, best first.
std::vector<Box> decodeGrid(const ir::Tensor& output, const GridLayout& layout, float scoreThreshold);

// Intersection over union; 0 for empty boxes.
float iou(const Box& a, const Box& b);

// Greedy per-class suppression: boxes in score order, each dropped if it overlaps a kept box of its
// class by more than `iouThreshold`.
std::vector<Box> nonMaxSuppression(std::vector<Box> boxes, float iouThreshold);

// One image's detections, or its ground truth (score unused).
struct ImageBoxes {
  int64_t image = 0;
  std::vector<Box> boxes;
};

// mAP at `iouThreshold` (VOC all-point interpolation), the mean over the classes that have ground
// truth; each ground-truth box matches at most one detection, in score order.
double meanAveragePrecision(const std::vector<ImageBoxes>& detections, const std::vector<ImageBoxes>& truth,
                            int64_t classes, float iouThreshold);

// Each box's outline (2 pixels, a colour per class) on an RGB or gray image.
void drawBoxes(io::Image& image, const std::vector<Box>& boxes);

}  // namespace tessera::compiler::detection
