// fsim's SRAM layouts (hw/src/fsim_kernels_impl.h): each vector set's weight packer writes byte for byte what the
// portable packer of its layout writes, and input packing biases and pads as the layout says.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "../../hw/src/fsim_kernels_impl.h"
#include "tessera/hw/fsim.h"

namespace {

using namespace tessera::hw;
using namespace tessera::hw::kernels;

// Random int8 values with the extremes (-128, 127, 0) well represented.
std::vector<int8_t> randomValues(size_t n, std::mt19937& rng) {
  std::vector<int8_t> v(n);
  for (auto& x : v) {
    const uint32_t r = rng();
    x = r % 8 == 0 ? int8_t(-128) : r % 8 == 1 ? int8_t(127) : r % 8 == 2 ? int8_t(0) : static_cast<int8_t>(r >> 8);
  }
  return v;
}

Shape shape16(int groups, int wgtEntryBytes) {
  Shape sh;
  sh.batch = 1;
  sh.blockIn = 16;
  sh.blockOut = 16;
  sh.accLanes = 16;
  sh.groups = groups;
  sh.inpEntryBytes = 4 * groups;
  sh.wgtEntryBytes = wgtEntryBytes;
  return sh;
}

// Packs n weight entries with `pack` into a buffer first filled with a marker, so a byte the
// packer leaves unwritten shows.
std::vector<uint8_t> packWith(PackFn pack, const Shape& sh, const std::vector<int8_t>& src, int n) {
  std::vector<uint8_t> out(size_t(n) * sh.wgtEntryBytes, 0xa5);
  pack(sh, out.data(), src.data(), n);
  return out;
}

TEST(FsimPacking, VectorWeightPackersWriteWhatThePortableOnesWrite) {
  std::mt19937 rng(28);
  const int n = 37;
  const std::vector<int8_t> src = randomValues(size_t(n) * 256, rng);
  const Shape pairs = shape16(8, 8 * 16 * 4), quads = shape16(4, 4 * 16 * 4 + 4 * 16);
  const std::vector<uint8_t> wantPairs = packWith(generic::packWgtPairs, pairs, src, n);
  const std::vector<uint8_t> wantQuads = packWith(generic::packWgtQuads, quads, src, n);
  int tested = 0;
#if defined(__x86_64__)
  const struct {
    const char* set;
    PackFn pack;
    const Shape& shape;
    const std::vector<uint8_t>& want;
  } sets[] = {{"avx2", avx2::packWgt(pairs), pairs, wantPairs},
              {"avx512bw", avx512::packWgt(pairs), pairs, wantPairs},
              {"avx512-vnni", vnni::packWgt(quads), quads, wantQuads}};
  for (const auto& s : sets) {
    if (!Fsim::kernelSetCpuProblem(s.set).empty()) continue;
    SCOPED_TRACE(s.set);
    // 16x16 weights have a vector packer of their own in every set.
    EXPECT_NE(s.pack, s.shape.groups == 8 ? PackFn(generic::packWgtPairs) : PackFn(generic::packWgtQuads));
    EXPECT_EQ(packWith(s.pack, s.shape, src, n), s.want);
    ++tested;
  }
#endif
  if (!tested) GTEST_SKIP() << "this CPU has no vector kernel set";
}

TEST(FsimPacking, QuadInputsAreBiasedAndPaddedLanesHoldTheBiasedZero) {
  std::mt19937 rng(17);
  // BLOCK_IN 16 (four whole quads) and BLOCK_IN 2 (one quad, two padding lanes), BATCH 1 and 2.
  for (const int blockIn : {16, 2})
    for (const int batch : {1, 2}) {
      SCOPED_TRACE("BLOCK_IN " + std::to_string(blockIn) + " BATCH " + std::to_string(batch));
      Shape sh;
      sh.batch = batch;
      sh.blockIn = blockIn;
      sh.groups = (blockIn + 3) / 4;
      sh.inpEntryBytes = batch * 4 * sh.groups;
      const int n = 9;
      const std::vector<int8_t> src = randomValues(size_t(n) * batch * blockIn, rng);
      std::vector<uint8_t> got(size_t(n) * sh.inpEntryBytes, 0xa5);
      generic::packInpQuads(sh, got.data(), src.data(), n);
      for (int e = 0; e < n; ++e)
        for (int b = 0; b < batch; ++b)
          for (int k = 0; k < 4 * sh.groups; ++k) {
            const int x = k < blockIn ? src[(size_t(e) * batch + b) * blockIn + k] : 0;
            ASSERT_EQ(got[size_t(e) * sh.inpEntryBytes + b * 4 * sh.groups + k], uint8_t(x + 128))
                << "entry " << e << " b " << b << " k " << k;
          }
    }
}

}  // namespace
