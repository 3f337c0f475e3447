// .npy, IDX (gzip via zlib), PNG (libpng) and PGM readers and the .npy writer; each error names the file.
#include "tessera/compiler/io/tensor_io.h"

#include <png.h>
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "tessera/support/error.h"
#include "tessera/support/file_io.h"

namespace tessera::compiler::io {

using ir::DType;
using ir::Tensor;

namespace {

constexpr uint64_t kMaxBytes = uint64_t(1) << 32;


// gzip-compressed files are inflated (zlib), anything else returned as it is.
std::vector<uint8_t> readMaybeGzip(const std::string& path) {
  std::vector<uint8_t> raw = readBinaryFile(path);
  if (raw.size() < 2 || raw[0] != 0x1f || raw[1] != 0x8b) return raw;
  z_stream z;
  std::memset(&z, 0, sizeof z);
  if (inflateInit2(&z, 15 + 32) != Z_OK) throw Error(path, "cannot start the gzip decoder");
  std::vector<uint8_t> out;
  z.next_in = raw.data();
  z.avail_in = uInt(raw.size());
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    out.resize(out.size() + (1 << 20));
    z.next_out = out.data() + out.size() - (1 << 20);
    z.avail_out = 1 << 20;
    rc = inflate(&z, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) {
      inflateEnd(&z);
      throw Error(path, "is a corrupt or truncated gzip file");
    }
    if (out.size() > kMaxBytes) {
      inflateEnd(&z);
      throw Error(path, "inflates to more than 4 GiB");
    }
    if (rc == Z_OK && z.avail_in == 0 && z.avail_out != 0) {
      inflateEnd(&z);
      throw Error(path, "is a truncated gzip file");
    }
  }
  out.resize(out.size() - z.avail_out);
  inflateEnd(&z);
  return out;
}

uint32_t bigEndian32(const uint8_t* p) { return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | p[3]; }

struct NpyType {
  const char* descr;
  DType dtype;
  size_t size;
};
const NpyType kNpyTypes[] = {{"<f4", DType::kFloat32, 4}, {"|u1", DType::kUInt8, 1}, {"|i1", DType::kInt8, 1},
                             {"<i4", DType::kInt32, 4},   {"<i8", DType::kInt64, 8}, {"<u1", DType::kUInt8, 1},
                             {"<i1", DType::kInt8, 1},   {"|b1", DType::kBool, 1}};

std::string headerValue(const std::string& header, const std::string& key, const std::string& path) {
  const size_t k = header.find("'" + key + "'");
  if (k == std::string::npos) throw Error(path, "the .npy header has no '" + key + "'");
  size_t v = header.find(':', k);
  if (v == std::string::npos) throw Error(path, "malformed .npy header");
  ++v;
  while (v < header.size() && header[v] == ' ') ++v;
  size_t end = v;
  if (header[v] == '(') end = header.find(')', v) + 1;
  else if (header[v] == '\'') end = header.find('\'', v + 1) + 1;
  else end = header.find_first_of(",}", v);
  if (end == std::string::npos || end <= v) throw Error(path, "malformed .npy header value for '" + key + "'");
  return header.substr(v, end - v);
}

}  // namespace

Tensor readNpy(const std::string& path) {
  const std::vector<uint8_t> b = readBinaryFile(path);
  if (b.size() < 10 || b[0] != 0x93 || std::memcmp(b.data() + 1, "NUMPY", 5) != 0)
    throw Error(path, "is not a .npy file (bad magic)");
  const int major = b[6];
  size_t headerLen = 0, start = 0;
  if (major == 1) {
    headerLen = size_t(b[8]) | size_t(b[9]) << 8;
    start = 10;
  } else if (major == 2 || major == 3) {
    if (b.size() < 12) throw Error(path, "truncated .npy header");
    headerLen = size_t(b[8]) | size_t(b[9]) << 8 | size_t(b[10]) << 16 | size_t(b[11]) << 24;
    start = 12;
  } else {
    throw Error(path, ".npy format version " + std::to_string(major) + " is not supported");
  }
  if (start + headerLen > b.size()) throw Error(path, "truncated .npy header");
  const std::string header(reinterpret_cast<const char*>(b.data() + start), headerLen);
  std::string descr = headerValue(header, "descr", path);
  if (descr.size() < 2) throw Error(path, "malformed dtype");
  descr = descr.substr(1, descr.size() - 2);
  if (headerValue(header, "fortran_order", path) != "False")
    throw Error(path, "is in Fortran order; save it C-ordered (numpy.ascontiguousarray)");
  const NpyType* type = nullptr;
  for (const NpyType& t : kNpyTypes)
    if (descr == t.descr) type = &t;
  if (!type) throw Error(path, "dtype '" + descr + "' is not supported (float32, uint8, int8, int32, int64 little-endian, bool)");
  Tensor t;
  t.dtype = type->dtype;
  t.hasShape = true;
  const std::string shape = headerValue(header, "shape", path);
  std::string digits;
  uint64_t count = 1;
  for (size_t i = 1; i < shape.size(); ++i) {
    const char ch = shape[i];
    if (ch >= '0' && ch <= '9') {
      digits += ch;
    } else if (ch == ',' || ch == ')') {
      if (!digits.empty()) {
        if (digits.size() > 12) throw Error(path, "implausible dimension in shape " + shape);
        const int64_t d = std::stoll(digits);
        t.shape.push_back(d);
        count *= uint64_t(d);
        if (count > kMaxBytes) throw Error(path, "implausibly large shape " + shape);
        digits.clear();
      }
    } else if (ch != ' ' && ch != 'L') {
      throw Error(path, "malformed shape " + shape);
    }
  }
  const size_t data = start + headerLen;
  if (b.size() - data != count * type->size)
    throw Error(path, "holds " + std::to_string(b.size() - data) + " data bytes; shape " + shape + " of " + descr +
                          " needs " + std::to_string(count * type->size));
  t.appendElements(b.data() + data, int64_t(count));
  return t;
}

void writeNpy(const std::string& path, const Tensor& t, bool overwrite) {
  const NpyType* type = nullptr;
  for (const NpyType& k : kNpyTypes)
    if (k.dtype == t.dtype && !type) type = &k;
  std::string shape = "(";
  for (size_t i = 0; i < t.shape.size(); ++i) shape += std::to_string(t.shape[i]) + (t.shape.size() == 1 ? "," : i + 1 < t.shape.size() ? ", " : "");
  shape += ")";
  std::string header = std::string("{'descr': '") + type->descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  while ((10 + header.size() + 1) % 64) header += ' ';
  header += '\n';
  const std::string magic = "\x93NUMPY\x01";
  std::vector<uint8_t> out(magic.begin(), magic.end());
  out.push_back(0);
  out.push_back(uint8_t(header.size() & 0xff));
  out.push_back(uint8_t(header.size() >> 8));
  for (char ch : header) out.push_back(uint8_t(ch));
  const std::vector<uint8_t> data = t.elementBytes();
  if (data.size() != size_t(t.elements()) * type->size)
    throw Error(path, "tensor '" + t.name + "' holds fewer values than its shape " + shape + " needs");
  out.insert(out.end(), data.begin(), data.end());
  writeBinaryFile(path, out, overwrite);
}

IdxImages readIdxImages(const std::string& path) {
  const std::vector<uint8_t> b = readMaybeGzip(path);
  if (b.size() < 16 || bigEndian32(b.data()) != 0x00000803)
    throw Error(path, "is not an IDX image file (expected magic 0x00000803: unsigned bytes, 3 dimensions)");
  IdxImages r;
  r.count = bigEndian32(b.data() + 4);
  r.rows = bigEndian32(b.data() + 8);
  r.cols = bigEndian32(b.data() + 12);
  const uint64_t need = uint64_t(r.count) * uint64_t(r.rows) * uint64_t(r.cols);
  if (r.rows == 0 || r.cols == 0 || need > kMaxBytes) throw Error(path, "has implausible dimensions");
  if (b.size() - 16 < need)
    throw Error(path, "holds " + std::to_string(b.size() - 16) + " pixel bytes, its header promises " + std::to_string(need));
  r.pixels.assign(b.begin() + 16, b.begin() + 16 + int64_t(need));
  return r;
}

std::vector<uint8_t> readIdxLabels(const std::string& path) {
  const std::vector<uint8_t> b = readMaybeGzip(path);
  if (b.size() < 8 || bigEndian32(b.data()) != 0x00000801)
    throw Error(path, "is not an IDX label file (expected magic 0x00000801: unsigned bytes, 1 dimension)");
  const uint64_t n = bigEndian32(b.data() + 4);
  if (b.size() - 8 < n) throw Error(path, "holds " + std::to_string(b.size() - 8) + " labels, its header promises " + std::to_string(n));
  return std::vector<uint8_t>(b.begin() + 8, b.begin() + 8 + int64_t(n));
}

namespace {

Tensor readPgm(const std::string& path, const std::vector<uint8_t>& b) {
  size_t pos = 2;
  auto token = [&]() -> int64_t {
    while (pos < b.size()) {
      if (b[pos] == '#') {
        while (pos < b.size() && b[pos] != '\n') ++pos;
      } else if (std::isspace(b[pos])) {
        ++pos;
      } else {
        break;
      }
    }
    int64_t v = 0;
    size_t digits = 0;
    while (pos < b.size() && b[pos] >= '0' && b[pos] <= '9' && digits < 9) v = v * 10 + (b[pos++] - '0'), ++digits;
    if (!digits) throw Error(path, "malformed PGM header");
    return v;
  };
  const bool binary = b[1] == '5';
  const int64_t w = token(), h = token(), maxval = token();
  if (w <= 0 || h <= 0 || w * h > int64_t(1) << 28) throw Error(path, "implausible PGM size");
  if (maxval <= 0 || maxval > 65535) throw Error(path, "PGM maxval " + std::to_string(maxval) + " is out of range");
  Tensor t;
  t.dtype = DType::kUInt8;
  t.shape = {1, 1, h, w};
  t.hasShape = true;
  const int bytesPer = maxval > 255 ? 2 : 1;
  if (binary) {
    ++pos;  // the single whitespace after maxval
    if (b.size() < pos + size_t(w * h * bytesPer)) throw Error(path, "is a truncated PGM (fewer pixels than " + std::to_string(w) + "x" + std::to_string(h) + ")");
  }
  for (int64_t i = 0; i < w * h; ++i) {
    int64_t v;
    if (binary) v = bytesPer == 2 ? (int64_t(b[pos + 2 * size_t(i)]) << 8 | b[pos + 2 * size_t(i) + 1]) : b[pos + size_t(i)];
    else v = token();
    if (v > maxval) throw Error(path, "pixel value " + std::to_string(v) + " exceeds maxval");
    t.ints.push_back(maxval == 255 ? v : (v * 255 + maxval / 2) / maxval);
  }
  return t;
}

Tensor readPng(const std::string& path, const std::vector<uint8_t>& b) {
  png_image image;
  std::memset(&image, 0, sizeof image);
  image.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_memory(&image, b.data(), b.size()))
    throw Error(path, std::string("is not a readable PNG: ") + image.message);
  const bool colour = (image.format & PNG_FORMAT_FLAG_COLOR) != 0;
  image.format = colour ? PNG_FORMAT_RGB : PNG_FORMAT_GRAY;
  const int64_t w = image.width, h = image.height, c = colour ? 3 : 1;
  if (w * h > int64_t(1) << 28) {
    png_image_free(&image);
    throw Error(path, "implausibly large PNG");
  }
  std::vector<uint8_t> pixels(size_t(w * h * c));
  if (!png_image_finish_read(&image, nullptr, pixels.data(), 0, nullptr))
    throw Error(path, std::string("PNG decoding failed: ") + image.message);
  Tensor t;
  t.dtype = DType::kUInt8;
  t.shape = {1, c, h, w};
  t.hasShape = true;
  t.ints.resize(pixels.size());
  // Interleaved HWC to planar CHW.
  for (int64_t y = 0; y < h; ++y)
    for (int64_t x = 0; x < w; ++x)
      for (int64_t ch = 0; ch < c; ++ch) t.ints[size_t((ch * h + y) * w + x)] = pixels[size_t((y * w + x) * c + ch)];
  return t;
}

}  // namespace

Tensor readImage(const std::string& path) {
  const std::vector<uint8_t> b = readBinaryFile(path);
  if (b.size() >= 8 && png_sig_cmp(b.data(), 0, 8) == 0) return readPng(path, b);
  if (b.size() >= 2 && b[0] == 'P' && (b[1] == '5' || b[1] == '2')) return readPgm(path, b);
  throw Error(path, "is neither a PNG nor a PGM (P5/P2) image");
}

namespace {

// Black pixels between tiled images.
constexpr int64_t kGap = 2;

int64_t tileColumns(int64_t count) { return int64_t(std::ceil(std::sqrt(double(count)))); }

}  // namespace

std::pair<int64_t, int64_t> tileOrigin(int64_t index, int64_t count, int64_t h, int64_t w) {
  const int64_t columns = tileColumns(count);
  return {(index % columns) * (w + kGap), (index / columns) * (h + kGap)};
}

Image tileImages(const Tensor& images, float lo, float hi, const std::string& origin) {
  std::vector<int64_t> shape = images.shape;
  if (shape.size() == 3) shape.insert(shape.begin(), 1);
  if (shape.size() != 4 || (shape[1] != 1 && shape[1] != 3) || shape[0] < 1 || shape[2] < 1 || shape[3] < 1)
    throw Error(origin, "is " + images.describe() + ", not images: [N, C, H, W] with C = 1 (gray) or 3 (colour) is needed");
  if (!(hi > lo)) throw Error(origin, "the value range to map to 0..255 is empty");
  const int64_t n = shape[0], c = shape[1], h = shape[2], w = shape[3];
  const int64_t columns = tileColumns(n), rows = (n + columns - 1) / columns;
  Image img;
  img.channels = c;
  img.width = columns * w + (columns - 1) * kGap;
  img.height = rows * h + (rows - 1) * kGap;
  if (img.width * img.height > int64_t(1) << 28) throw Error(origin, "tiles into an implausibly large image");
  img.pixels.assign(size_t(img.width * img.height * c), 0);
  const bool isFloat = images.dtype == ir::DType::kFloat32;
  for (int64_t i = 0; i < n; ++i) {
    const auto [x0, y0] = tileOrigin(i, n, h, w);
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t y = 0; y < h; ++y)
        for (int64_t x = 0; x < w; ++x) {
          const size_t at = size_t(((i * c + ch) * h + y) * w + x);
          const double v = isFloat ? double(images.floats.at(at)) : double(images.ints.at(at));
          const double scaled = std::round((v - lo) / (double(hi) - lo) * 255.0);
          img.pixels[size_t(((y0 + y) * img.width + x0 + x) * c + ch)] = uint8_t(std::clamp(scaled, 0.0, 255.0));
        }
  }
  return img;
}

void writePng(const std::string& path, const Image& image, bool overwrite) {
  if (image.channels != 1 && image.channels != 3) throw Error(path, "a PNG is written from 1 or 3 channels");
  if (image.pixels.size() != size_t(image.width * image.height * image.channels))
    throw Error(path, "the image holds fewer pixels than its size needs");
  png_image png;
  std::memset(&png, 0, sizeof png);
  png.version = PNG_IMAGE_VERSION;
  png.width = png_uint_32(image.width);
  png.height = png_uint_32(image.height);
  png.format = image.channels == 3 ? PNG_FORMAT_RGB : PNG_FORMAT_GRAY;
  // First call sizes the buffer, the second fills it.
  png_alloc_size_t size = 0;
  if (!png_image_write_to_memory(&png, nullptr, &size, 0, image.pixels.data(), 0, nullptr))
    throw Error(path, std::string("PNG encoding failed: ") + png.message);
  std::vector<uint8_t> bytes(size);
  if (!png_image_write_to_memory(&png, bytes.data(), &size, 0, image.pixels.data(), 0, nullptr))
    throw Error(path, std::string("PNG encoding failed: ") + png.message);
  bytes.resize(size);
  writeBinaryFile(path, bytes, overwrite);
}

std::vector<std::string> readLabels(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw Error(path, "cannot open the label file");
  std::vector<std::string> labels;
  for (std::string line; std::getline(f, line);) {
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.pop_back();
    labels.push_back(line);
  }
  while (!labels.empty() && labels.back().empty()) labels.pop_back();
  if (labels.empty()) throw Error(path, "holds no labels");
  return labels;
}

}  // namespace tessera::compiler::io
