// Internal to the operator compiler: the tile geometry both the cost model and the lowering derive from a tiling.
#pragma once

#include <string>
#include <vector>

#include "tessera/compiler/op/compile.h"
#include "tessera/hw/config.h"
#include "tessera/hw/isa.h"

namespace tessera::compiler::op::detail {

// An operator's spatial shape: input and output height and width, kernel, stride and padding.
struct SpatialShape {
  int H = 1, W = 1, OH = 1, OW = 1, KH = 1, KW = 1, SH = 1, SW = 1, PH = 0, PW = 0, DH = 1, DW = 1;
  int extentH() const { return (KH - 1) * DH + 1; }  // input rows (columns) one output's taps span
  int extentW() const { return (KW - 1) * DW + 1; }
};
SpatialShape spatialShape(const Operator& op);

// The operator in blocks, as the accelerator sees it.
struct Geometry : SpatialShape {
  int B = 1, BI = 1, BO = 1;             // the config's BATCH, BLOCK_IN, BLOCK_OUT
  int NB = 1, CIB = 1, COB = 1;          // batch blocks, input- and output-channel blocks (padded)
  // The input-channel blocks one output block's reduction reads (CIB without groups; fewer with
  // groups, dram_layout.h's WeightLayout), from firstInBlock[ob] on.
  int RB = 1;
  std::vector<int> firstInBlock;
  int biasEntries = 0;                   // accumulator entries holding the bias (COB, or 0)
  int inpCap = 0, wgtCap = 0, accCap = 0;  // entries of one half of each buffer
  int accHalf = 0;                       // accumulator index where the second half starts (its second bank)
  int multEntries = 0;                   // accumulator entries holding per-channel multipliers (COB, or 0)
  int clipEntries = 0;                   // accumulator entries holding per-channel clip bounds (2 COB, or 0)
  // Accumulator indices of the resident per-channel vectors (each COB entries, when present).
  int biasBase = 0, multBase = 0, clipLowBase = 0, clipHighBase = 0;
  // A fused residual add: each tile takes a second region of its half for the residual operand,
  // and a wide one three resident rows (its multipliers and rounding) at scaleRowBase.
  int accRegions = 1;
  int scaleRows = 0, scaleRowBase = 0;
  int residualAluOps = 0;  // ALU instructions of the residual add per tile (the vector ADD included)
  int residualRow = 0;     // the first of a wide residual add's rows, among the scale rows
  // Low multiplier bits (Epilogue::lowBits): their resident vector, the region (after the tile's
  // and the residual's) holding the copy of the clipped accumulator they multiply, and the
  // epilogue's ALU instructions that read a vector source row other than the held one (two
  // cycles per entry: the copy and the sum).
  int multLowBase = 0, scratchRegion = 0, leakyMultBase = 0;
  int twoCycleAluOps = 0;
  int immAluOps = 0;                     // ALU instructions with an immediate per tile (mul, shr, min, max)
  int vectorAluOps = 0;                  // ALU instructions with a resident per-channel operand per tile
  // An input zero point (Operator::inputZeroPoint) with padding: the resident correction rows (COB
  // entries per border class, at zeroPointBase) the border outputs add.
  int zeroPointClasses = 0, zeroPointBase = 0;
};
Geometry geometry(const hw::Config& cfg, const Operator& op);

// The border classes of an operator with an input zero point: output rows (and columns) are told
// apart by how many kernel rows fall above and below the input (left and right of it); a class is
// a (row kind, column kind) pair with at least one tap outside the input.
struct BorderClasses {
  struct Kind {
    int before = 0, after = 0;  // taps outside the input before its start and after its end
    bool operator==(const Kind& o) const { return before == o.before && after == o.after; }
  };
  std::vector<Kind> rowKinds, colKinds;  // distinct kinds; kind 0 of each, if any, is the interior
  std::vector<int> rowKindOf, colKindOf;  // per output row / column
  std::vector<int> classOf;               // per (row kind, column kind): class index, or -1 (interior)
  int classes = 0;
  int classAt(int y, int x) const { return classOf[size_t(rowKindOf[size_t(y)]) * colKinds.size() + size_t(colKindOf[size_t(x)])]; }
};
BorderClasses borderClasses(const Geometry& g);

// One vector ALU instruction adding a border class's correction row to a run of a tile's outputs:
// `count` outputs from (row, col) of the tile, along the row (or down the column).
struct BorderRun {
  int row = 0, col = 0, count = 0, cls = 0;
  bool down = false;
};
std::vector<BorderRun> borderRuns(const Geometry& g, const BorderClasses& b, const Tiling& t, int yt, int xt);
// The bias with the input zero point's share of every output folded in: bias - Z * sum of the
// channel's weights (wrapping, as the ALU adds).
std::vector<int32_t> zeroPointBias(const Operator& op, const OperatorData& data);
// The correction rows, class by class, each COB * BLOCK_OUT values (zero past the channels): Z times
// the sum of the weights of the taps outside the input, which the folded bias took away.
std::vector<int32_t> zeroPointCorrections(const Geometry& g, const Operator& op, const OperatorData& data);

// What a tiling implies for one tile and one reduction step.
struct TileShape {
  int ih = 0, iw = 0;          // SRAM rows and columns of one input-channel block's window
  int rowStep = 1;             // DRAM rows per SRAM row (the stride, when the kernel is one row tall)
  int srcRowFactor = 0;        // input entries between the windows of consecutive output rows
  bool coInner = true;         // micro-op order: (ci, ky, kx, co) with loops (y, x); else (ky, kx, x) with loops (y, ci)
  int gemmUops = 0;            // micro-ops of one GEMM kernel
  int inpEntries = 0, wgtEntries = 0, accEntries = 0;  // per half
  int uopEntries = 0;          // every kernel of the program
  int stepsPerTile = 0;
  long tiles = 0;
  // Accumulator regions tiles take in turn: 2 (one per bank), or 4 (two per bank) when two tiles
  // (with their residual and scratch regions) fit a bank's half.
  int slots = 2;
};
TileShape tileShape(const Geometry& g, const Tiling& t);

// Rows (or columns) of one tile's input window: `pad0` padding entries, then `size` from DRAM
// starting at `first` (stepping `step`), then `pad1` padding entries.
struct Window {
  int first = 0, size = 0, pad0 = 0, pad1 = 0;
};
Window window(int outStart, int stride, int pad, int extent, int count, int step, int inputSize);

// Largest value a field of `op`'s format can hold.
int64_t fieldMax(const hw::InsnLayout& layout, hw::Opcode op, hw::Field f);

// The operator as the vector ALU sees it: planes of BATCH x BLOCK_OUT lanes, one accumulator entry
// per pixel. Operands arrive by LOAD ACC_8BIT (sign-extended int8) and leave by STORE.
struct VectorGeometry : SpatialShape {
  bool isAdd = false, isMax = false, isScale = false;
  // A padded average whose input has a zero point: its padding entries are set to it, as a max
  // pool's are set to -128.
  bool padZeroPoint = false;
  int P = 1;  // planes: batch blocks x channel blocks
  int accCap = 0;  // entries of one accumulator half
  int rows = 0, rowBase = 0;  // resident scale rows (wide=1) above both halves
};

VectorGeometry vectorGeometry(const hw::Config& cfg, const Operator& op);

// One tile in the accumulator half: the input window of each plane (`ih` x `iw`, LOAD padding
// included), then the output region [tco][th][tw]. add's "window" is its first operand, which is
// also its output; its second operand follows.
struct VectorTile {
  int ih = 1, iw = 1;
  // An average with one output per plane and no padding (a global pool) whose window does not fit
  // beside its outputs takes it in chunks of `windowRows` rows, summing each into the outputs
  // before the next is loaded (ACC_8BIT loads and the ALU run in order on the compute stage).
  int windowRows = 1, chunks = 1;
  int windowEntries = 0;  // per half: all planes' windows, or their current chunks (add: the first operand)
  int outEntries = 0;     // per half: [tco][th][tw]
  int accEntries = 0;     // per half
  int outBase = 0;        // offset of the output region in a half
  int uopBound = 0;       // micro-ops of every kernel, at most
};

VectorTile vectorTile(const VectorGeometry& g, const Tiling& t);

// add and the poolings (vector_schedule.cpp): tiles of `tco` planes (batch block x channel
// block) x `th` output rows x `tw` output columns; `tci` is always 1.
std::string vectorTilingProblem(const hw::Config& cfg, const Operator& op, const Tiling& t);
CostEstimate vectorEstimate(const hw::Config& cfg, const Operator& op, const Tiling& t, const CostParams& params);
int vectorPlanes(const hw::Config& cfg, const Operator& op);
// A wide add's or average pool's resident rows (Epilogue::wideScales), in accumulator order: add
// (and a wide fused residual add) mul_a, mul_b and the rounding constant; avgpool mul and the
// rounding constant. Each fills every lane of its accumulator entry; empty for the other forms.
std::vector<int32_t> vectorScaleRows(const Operator& op);

}  // namespace tessera::compiler::op::detail
