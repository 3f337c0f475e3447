// Grid decoding, non-maximum suppression, mAP against hand-worked cases; images tiled, boxes drawn, PNGs written and read back.
#include <gtest/gtest.h>

#include <filesystem>
#include <unistd.h>

#include "tessera/compiler/detection/grid_detector.h"
#include "tessera/compiler/io/tensor_io.h"
#include "tessera/support/error.h"

namespace {

namespace det = tessera::compiler::detection;
namespace io = tessera::compiler::io;
using tessera::compiler::ir::DType;
using tessera::compiler::ir::Tensor;

Tensor gridOutput(int64_t classes, int64_t grid) {
  Tensor t;
  t.dtype = DType::kFloat32;
  t.shape = {1, 5 + classes, grid, grid};
  t.hasShape = true;
  t.floats.assign(size_t(t.elements()), 0.0f);
  return t;
}

void setCell(Tensor& t, int64_t gy, int64_t gx, const std::vector<float>& channels) {
  const int64_t grid = t.shape[2];
  for (size_t c = 0; c < channels.size(); ++c) t.floats[size_t((int64_t(c) * grid + gy) * grid + gx)] = channels[c];
}

det::Box box(int64_t cls, float score, float x, float y, float w, float h) { return det::Box{cls, score, x, y, w, h}; }

TEST(GridDetector, DecodesACellIntoInputPixels) {
  Tensor out = gridOutput(3, 8);
  // Cell (row 2, column 5) of 8-pixel cells in a 64x64 input: centre at (5.5, 2.25) cells, 16x32 pixels.
  setCell(out, 2, 5, {0.9f, 0.5f, 0.25f, 0.25f, 0.5f, 0.1f, 0.8f, 0.2f});
  setCell(out, 6, 1, {0.2f, 0.5f, 0.5f, 0.1f, 0.1f, 0.9f, 0.0f, 0.0f});  // score 0.18: below 0.3
  const auto layout = det::gridLayout(out, 64, 64, "out");
  EXPECT_EQ(layout.classes, 3);
  const auto boxes = det::decodeGrid(out, layout, 0.3f);
  ASSERT_EQ(boxes.size(), 1u);
  EXPECT_EQ(boxes[0].cls, 1);
  EXPECT_FLOAT_EQ(boxes[0].score, 0.9f * 0.8f);
  EXPECT_FLOAT_EQ(boxes[0].w, 16.0f);
  EXPECT_FLOAT_EQ(boxes[0].h, 32.0f);
  EXPECT_FLOAT_EQ(boxes[0].x, 5.5f * 8 - 8);
  EXPECT_FLOAT_EQ(boxes[0].y, 2.25f * 8 - 16);
  EXPECT_EQ(det::decodeGrid(out, layout, 0.1f).size(), 2u);
}

TEST(GridDetector, RefusesAnOutputThatIsNotAGrid) {
  Tensor logits;
  logits.dtype = DType::kFloat32;
  logits.shape = {1, 10};
  logits.floats.assign(10, 0.0f);
  try {
    det::gridLayout(logits, 64, 64, "output 'logits'");
    FAIL() << "a [1,10] output was read as a grid";
  } catch (const tessera::Error& e) {
    EXPECT_NE(std::string(e.what()).find("output 'logits'"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(det::isGridDetector({{"labels", "a,b"}}));
  EXPECT_TRUE(det::isGridDetector({{"detector", "grid"}}));
}

TEST(GridDetector, SuppressesOverlapsWithinAClassOnly) {
  const auto kept = det::nonMaxSuppression(
      {box(0, 0.5f, 0, 0, 10, 10), box(0, 0.9f, 1, 1, 10, 10), box(1, 0.7f, 1, 1, 10, 10), box(0, 0.4f, 30, 30, 5, 5)}, 0.45f);
  ASSERT_EQ(kept.size(), 3u);
  EXPECT_FLOAT_EQ(kept[0].score, 0.9f);
  EXPECT_EQ(kept[1].cls, 1);
  EXPECT_FLOAT_EQ(kept[2].score, 0.4f);
  EXPECT_FLOAT_EQ(det::iou(box(0, 0, 0, 0, 10, 10), box(0, 0, 5, 0, 10, 10)), 50.0f / 150.0f);
}

TEST(GridDetector, MeanAveragePrecisionOfWorkedCases) {
  const std::vector<det::ImageBoxes> truth = {{0, {box(0, 0, 0, 0, 10, 10)}}, {1, {box(0, 0, 20, 20, 10, 10)}}};
  // Both found, best first: AP 1.
  EXPECT_DOUBLE_EQ(det::meanAveragePrecision({{0, {box(0, 0.8f, 0, 0, 10, 10)}}, {1, {box(0, 0.7f, 20, 20, 10, 10)}}}, truth, 1, 0.5f), 1.0);
  // A false positive ranked first: precision 1/2 then 2/3 as recall reaches 1/2 and 1; the envelope is 2/3 throughout.
  EXPECT_NEAR(det::meanAveragePrecision({{0, {box(0, 0.9f, 40, 40, 10, 10), box(0, 0.8f, 0, 0, 10, 10)}},
                                         {1, {box(0, 0.7f, 20, 20, 10, 10)}}},
                                        truth, 1, 0.5f),
              2.0 / 3.0, 1e-12);
  // One of two found: recall stops at 1/2.
  EXPECT_DOUBLE_EQ(det::meanAveragePrecision({{0, {box(0, 0.8f, 0, 0, 10, 10)}}}, truth, 1, 0.5f), 0.5);
  // The same box twice: the second is a false positive (a truth matches once); a box of the wrong class or image does not count.
  EXPECT_DOUBLE_EQ(det::meanAveragePrecision({{0, {box(0, 0.8f, 0, 0, 10, 10), box(0, 0.7f, 0, 0, 10, 10), box(1, 0.9f, 0, 0, 10, 10)}},
                                              {2, {box(0, 0.95f, 20, 20, 10, 10)}}},
                                             truth, 2, 0.5f),
                   0.5 * 0.5);
  // Overlap 0.47 is not a match at 0.5.
  EXPECT_DOUBLE_EQ(det::meanAveragePrecision({{0, {box(0, 0.8f, 3.6f, 0, 10, 10)}}}, {{0, {box(0, 0, 0, 0, 10, 10)}}}, 1, 0.5f), 0.0);
}

TEST(Images, TiledDrawnWrittenAndReadBack) {
  Tensor images;
  images.dtype = DType::kFloat32;
  images.shape = {3, 3, 12, 16};
  images.hasShape = true;
  images.floats.assign(size_t(images.elements()), 0.5f);
  images.floats[0] = -1.0f;  // clamped to black
  images.floats[size_t(2 * 3 * 12 * 16 + 1)] = 1.0f;  // image 2, red, (0, 1): white-ish red
  io::Image canvas = io::tileImages(images, 0.0f, 1.0f, "images");
  // Three images tile as two columns and two rows with 2-pixel gaps.
  EXPECT_EQ(canvas.width, 2 * 16 + 2);
  EXPECT_EQ(canvas.height, 2 * 12 + 2);
  EXPECT_EQ(io::tileOrigin(2, 3, 12, 16), std::make_pair(int64_t(0), int64_t(14)));
  auto pixel = [&](const io::Image& im, int64_t x, int64_t y, int64_t c) { return im.pixels[size_t((y * im.width + x) * im.channels + c)]; };
  EXPECT_EQ(pixel(canvas, 0, 0, 0), 0);
  EXPECT_EQ(pixel(canvas, 1, 0, 0), 128);
  EXPECT_EQ(pixel(canvas, 16, 0, 0), 0);  // the gap
  EXPECT_EQ(pixel(canvas, 1, 14, 0), 255);
  det::drawBoxes(canvas, {box(1, 0.9f, 2, 3, 8, 6)});
  EXPECT_EQ(pixel(canvas, 2, 3, 1), 255);   // the outline in class 1's colour (green)
  EXPECT_EQ(pixel(canvas, 5, 5, 1), 128);   // inside untouched
  const std::string path = (std::filesystem::temp_directory_path() / ("tessera_png_" + std::to_string(getpid()) + ".png")).string();
  io::writePng(path, canvas, false);
  EXPECT_THROW(io::writePng(path, canvas, false), tessera::Error);  // never replaces a file unasked
  const Tensor back = io::readImage(path);
  std::filesystem::remove(path);
  ASSERT_EQ(back.shape, (std::vector<int64_t>{1, 3, canvas.height, canvas.width}));
  for (int64_t c = 0; c < 3; ++c)
    for (int64_t y = 0; y < canvas.height; ++y)
      for (int64_t x = 0; x < canvas.width; ++x)
        ASSERT_EQ(back.ints[size_t((c * canvas.height + y) * canvas.width + x)], pixel(canvas, x, y, c)) << x << "," << y;
  Tensor logits;
  logits.dtype = DType::kFloat32;
  logits.shape = {1, 10};
  EXPECT_THROW(io::tileImages(logits, 0, 1, "logits"), tessera::Error);
}

}  // namespace
