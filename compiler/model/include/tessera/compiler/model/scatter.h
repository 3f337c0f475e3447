// Copy-free data movements (upsample, dilate, interleave, select): where a layer's stores put each entry, and their host reference.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tessera::compiler::model {

// An accelerator layer kind without instructions whose producer stores each input entry elsewhere:
//   "upsample factor=SHxSW": each pixel repeated SH times down and SW across (nearest Resize);
//   "dilate stride=SHxSW offset=TxL size=OHxOW": the pixels SH rows and SW columns apart from
//     (T, L) in an OH x OW image of zeros (a transposed convolution's zero insertion and padding);
//   "interleave phases=SHxSW crop=TxL size=OHxOW": the input's channels are SH*SW groups of C/(SH*SW)
//     (phase-major, as DepthToSpace's DCR mode); channel (ry*SW + rx)*M + m at (y, x) goes to channel
//     m at (y*SH + ry - T, x*SW + rx - L) of an OH x OW image, dropped outside it (the stride
//     phases of a transposed convolution put together and cropped);
//   "select groups=N group=I": the input's channels are N equal groups of whole channel blocks and
//     only group I is kept, in place (one of the Q, K and V parts of a fused projection).
// Input pixel (y, x) of channel group `phase` lands at (offsetY(phase) + y*stepY + dy,
// offsetX(phase) + x*stepX + dx) for dy < repeatY, dx < repeatX, where inside the image.
struct Scatter {
  std::string kind;
  int stepY = 1, stepX = 1, repeatY = 1, repeatX = 1;
  int offsetY = 0, offsetX = 0;  // of phase 0 (may be negative: interleave's crop)
  int phaseRows = 1, phaseCols = 1;  // interleave: SH x SW channel groups; select: N x 1
  int kept = -1;                     // select: the one group that lands (-1: every group)
  int outH = 0, outW = 0;
  int phases() const { return phaseRows * phaseCols; }
  bool lands(int phase) const { return kept < 0 || phase == kept; }
  // Only an interleave's groups land at different positions.
  int offsetYOf(int phase) const { return offsetY + (kept < 0 ? phase / phaseCols : 0); }
  int offsetXOf(int phase) const { return offsetX + (kept < 0 ? phase % phaseCols : 0); }
  // Whether untouched output positions must read as zero (a dilate's), so the output's DRAM is
  // never shared and starts zeroed.
  bool needsZeros() const { return kind == "dilate"; }
};

// The movement an accelerator layer of `kind` with `spec` does to an input of H x W pixels;
// throws tessera::Error naming `what` if the spec is malformed or does not fit the input.
Scatter parseScatter(const std::string& kind, const std::string& spec, int64_t inH, int64_t inW, const std::string& what);
bool isScatterKind(const std::string& kind);

// The host reference: `in` logical [N][C][H][W] to [N][C / phases][outH][outW], zeros where nothing lands.
std::vector<int8_t> applyScatter(const Scatter& s, const std::vector<int8_t>& in, int64_t n, int64_t c, int64_t h, int64_t w);

}  // namespace tessera::compiler::model
