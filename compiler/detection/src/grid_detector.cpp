// Grid detector decoding, non-maximum suppression, mAP and box drawing (docs/detection.md).
#include "tessera/compiler/detection/grid_detector.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "tessera/support/error.h"

namespace tessera::compiler::detection {

namespace {

// Channels of a grid cell before the class probabilities.
constexpr int64_t kObjectness = 0, kCentreX = 1, kCentreY = 2, kWidth = 3, kHeight = 4, kFirstClass = 5;

}  // namespace

bool isGridDetector(const std::map<std::string, std::string>& metadata) {
  const auto it = metadata.find("detector");
  return it != metadata.end() && it->second == "grid";
}

GridLayout gridLayout(const ir::Tensor& output, int64_t imageH, int64_t imageW, const std::string& origin) {
  const std::vector<int64_t>& s = output.shape;
  if (s.size() != 4 || s[0] != 1 || s[1] <= kFirstClass || s[2] < 1 || s[3] < 1 || output.dtype != ir::DType::kFloat32)
    throw Error(origin, "is " + output.describe() + "; a grid detector's output is float32 [1, 5 + classes, GH, GW]");
  if (imageH < 1 || imageW < 1) throw Error(origin, "the input image size is unknown");
  return GridLayout{s[1] - kFirstClass, s[2], s[3], imageH, imageW};
}

std::vector<Box> decodeGrid(const ir::Tensor& output, const GridLayout& l, float scoreThreshold) {
  const int64_t plane = l.gridH * l.gridW;
  auto at = [&](int64_t channel, int64_t gy, int64_t gx) { return output.floats[size_t(channel * plane + gy * l.gridW + gx)]; };
  const float cellW = float(l.imageW) / float(l.gridW), cellH = float(l.imageH) / float(l.gridH);
  std::vector<Box> boxes;
  for (int64_t gy = 0; gy < l.gridH; ++gy)
    for (int64_t gx = 0; gx < l.gridW; ++gx) {
      int64_t best = 0;
      for (int64_t c = 1; c < l.classes; ++c)
        if (at(kFirstClass + c, gy, gx) > at(kFirstClass + best, gy, gx)) best = c;
      const float score = at(kObjectness, gy, gx) * at(kFirstClass + best, gy, gx);
      if (!(score >= scoreThreshold)) continue;
      Box b;
      b.cls = best;
      b.score = score;
      b.w = at(kWidth, gy, gx) * float(l.imageW);
      b.h = at(kHeight, gy, gx) * float(l.imageH);
      b.x = (float(gx) + at(kCentreX, gy, gx)) * cellW - b.w / 2;
      b.y = (float(gy) + at(kCentreY, gy, gx)) * cellH - b.h / 2;
      boxes.push_back(b);
    }
  std::stable_sort(boxes.begin(), boxes.end(), [](const Box& a, const Box& b) { return a.score > b.score; });
  return boxes;
}

float iou(const Box& a, const Box& b) {
  const float iw = std::max(0.0f, std::min(a.x + a.w, b.x + b.w) - std::max(a.x, b.x));
  const float ih = std::max(0.0f, std::min(a.y + a.h, b.y + b.h) - std::max(a.y, b.y));
  const float inter = iw * ih, uni = a.w * a.h + b.w * b.h - inter;
  return uni > 0 ? inter / uni : 0.0f;
}

std::vector<Box> nonMaxSuppression(std::vector<Box> boxes, float iouThreshold) {
  std::stable_sort(boxes.begin(), boxes.end(), [](const Box& a, const Box& b) { return a.score > b.score; });
  std::vector<Box> kept;
  for (const Box& b : boxes)
    if (std::none_of(kept.begin(), kept.end(), [&](const Box& k) { return k.cls == b.cls && iou(k, b) > iouThreshold; }))
      kept.push_back(b);
  return kept;
}

double meanAveragePrecision(const std::vector<ImageBoxes>& detections, const std::vector<ImageBoxes>& truth,
                            int64_t classes, float iouThreshold) {
  double sum = 0;
  int64_t counted = 0;
  for (int64_t cls = 0; cls < classes; ++cls) {
    struct Truth {
      Box box;
      bool matched = false;
    };
    std::map<int64_t, std::vector<Truth>> gt;
    size_t total = 0;
    for (const ImageBoxes& t : truth)
      for (const Box& b : t.boxes)
        if (b.cls == cls) {
          gt[t.image].push_back({b, false});
          ++total;
        }
    if (!total) continue;
    struct Scored {
      int64_t image;
      Box box;
    };
    std::vector<Scored> dets;
    for (const ImageBoxes& d : detections)
      for (const Box& b : d.boxes)
        if (b.cls == cls) dets.push_back({d.image, b});
    std::stable_sort(dets.begin(), dets.end(), [](const Scored& a, const Scored& b) { return a.box.score > b.box.score; });
    // Precision and recall after each detection, in score order.
    std::vector<double> precision, recall;
    size_t truePositives = 0;
    for (size_t i = 0; i < dets.size(); ++i) {
      Truth* match = nullptr;
      float best = iouThreshold;
      auto it = gt.find(dets[i].image);
      if (it != gt.end())
        for (Truth& t : it->second) {
          const float o = iou(dets[i].box, t.box);
          if (o >= best && !t.matched) {
            best = o;
            match = &t;
          }
        }
      if (match) {
        match->matched = true;
        ++truePositives;
      }
      precision.push_back(double(truePositives) / double(i + 1));
      recall.push_back(double(truePositives) / double(total));
    }
    // All-point interpolation: the area under the precision envelope (precision made non-increasing
    // in recall), summed where recall steps.
    double ap = 0, envelope = 0;
    for (size_t i = dets.size(); i-- > 0;) {
      envelope = std::max(envelope, precision[i]);
      const double previous = i ? recall[i - 1] : 0.0;
      if (recall[i] != previous) ap += (recall[i] - previous) * envelope;
    }
    sum += ap;
    ++counted;
  }
  return counted ? sum / double(counted) : 0.0;
}

void drawBoxes(io::Image& image, const std::vector<Box>& boxes) {
  // Distinct, saturated colours by class (gray images get a brightness).
  static constexpr std::array<std::array<uint8_t, 3>, 6> kColours = {
      {{255, 64, 64}, {64, 255, 64}, {64, 128, 255}, {255, 255, 0}, {255, 0, 255}, {0, 255, 255}}};
  constexpr int64_t kThickness = 2;
  auto put = [&](int64_t x, int64_t y, const std::array<uint8_t, 3>& rgb) {
    if (x < 0 || y < 0 || x >= image.width || y >= image.height) return;
    uint8_t* p = &image.pixels[size_t((y * image.width + x) * image.channels)];
    if (image.channels == 3) std::copy(rgb.begin(), rgb.end(), p);
    else p[0] = uint8_t((rgb[0] + rgb[1] + rgb[2]) / 3);
  };
  for (const Box& b : boxes) {
    const auto& rgb = kColours[size_t(b.cls) % kColours.size()];
    const int64_t x0 = int64_t(std::lround(b.x)), y0 = int64_t(std::lround(b.y));
    const int64_t x1 = int64_t(std::lround(b.x + b.w)) - 1, y1 = int64_t(std::lround(b.y + b.h)) - 1;
    for (int64_t t = 0; t < kThickness; ++t) {
      for (int64_t x = x0; x <= x1; ++x) {
        put(x, y0 + t, rgb);
        put(x, y1 - t, rgb);
      }
      for (int64_t y = y0; y <= y1; ++y) {
        put(x0 + t, y, rgb);
        put(x1 - t, y, rgb);
      }
    }
  }
}

}  // namespace tessera::compiler::detection
