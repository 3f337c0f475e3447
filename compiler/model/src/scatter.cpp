// Copy-free data movements: their specs parsed once for the graph compiler's linking and the host reference.
#include "tessera/compiler/model/scatter.h"

#include <cstdio>

#include "tessera/support/error.h"

namespace tessera::compiler::model {

bool isScatterKind(const std::string& kind) {
  return kind == "upsample" || kind == "dilate" || kind == "interleave" || kind == "select";
}

Scatter parseScatter(const std::string& kind, const std::string& spec, int64_t inH, int64_t inW, const std::string& what) {
  Scatter s;
  s.kind = kind;
  bool ok = false;
  char end = 0;
  if (kind == "upsample") {
    ok = std::sscanf(spec.c_str(), "upsample factor=%dx%d%c", &s.stepY, &s.stepX, &end) == 2;
    s.repeatY = s.stepY, s.repeatX = s.stepX;
    s.outH = int(inH * s.stepY), s.outW = int(inW * s.stepX);
  } else if (kind == "dilate") {
    ok = std::sscanf(spec.c_str(), "dilate stride=%dx%d offset=%dx%d size=%dx%d%c", &s.stepY, &s.stepX, &s.offsetY,
                     &s.offsetX, &s.outH, &s.outW, &end) == 6 &&
         s.offsetY >= 0 && s.offsetX >= 0;
  } else if (kind == "interleave") {
    int t = 0, l = 0;
    ok = std::sscanf(spec.c_str(), "interleave phases=%dx%d crop=%dx%d size=%dx%d%c", &s.phaseRows, &s.phaseCols, &t, &l,
                     &s.outH, &s.outW, &end) == 6 &&
         t >= 0 && l >= 0 && s.phaseRows >= 1 && s.phaseCols >= 1;
    s.stepY = s.phaseRows, s.stepX = s.phaseCols;
    s.offsetY = -t, s.offsetX = -l;
  } else if (kind == "select") {
    ok = std::sscanf(spec.c_str(), "select groups=%d group=%d%c", &s.phaseRows, &s.kept, &end) == 2 && s.phaseRows >= 1 &&
         s.kept >= 0 && s.kept < s.phaseRows;
    s.outH = int(inH), s.outW = int(inW);
  }
  ok = ok && s.stepY >= 1 && s.stepX >= 1 && s.outH >= 1 && s.outW >= 1 && inH >= 1 && inW >= 1 &&
       s.stepY <= (1 << 12) && s.stepX <= (1 << 12);
  // A dilate's pixels must all land inside its image.
  if (ok && kind == "dilate")
    ok = s.offsetY + (inH - 1) * s.stepY < s.outH && s.offsetX + (inW - 1) * s.stepX < s.outW;
  if (!ok) throw Error(what, "malformed " + kind + " spec '" + spec + "'");
  return s;
}

std::vector<int8_t> applyScatter(const Scatter& s, const std::vector<int8_t>& in, int64_t n, int64_t c, int64_t h, int64_t w) {
  const int64_t groups = s.phases(), outC = c / groups;
  std::vector<int8_t> out(size_t(n * outC * s.outH * s.outW), 0);
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch) {
      const int phase = int(ch / outC);
      if (!s.lands(phase)) continue;
      const int64_t plane = b * outC + ch % outC;
      for (int64_t y = 0; y < h; ++y)
        for (int64_t x = 0; x < w; ++x)
          for (int dy = 0; dy < s.repeatY; ++dy)
            for (int dx = 0; dx < s.repeatX; ++dx) {
              const int64_t ty = s.offsetYOf(phase) + y * s.stepY + dy, tx = s.offsetXOf(phase) + x * s.stepX + dx;
              if (ty < 0 || ty >= s.outH || tx < 0 || tx >= s.outW) continue;
              out[size_t((plane * s.outH + ty) * s.outW + tx)] = in[size_t(((b * c + ch) * h + y) * w + x)];
            }
    }
  return out;
}

}  // namespace tessera::compiler::model
