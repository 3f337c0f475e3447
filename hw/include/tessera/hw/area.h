// FPGA parts (hw/configs/space/parts.json) and the area model: the resources a config's RTL takes on
// a part's family, predicted from features of the config with coefficients fitted to Yosys
// (hw/configs/space/area.json, written by tessera-area-fit).
#pragma once

#include <string>
#include <vector>

#include "tessera/hw/config.h"

namespace tessera::hw {

// An FPGA part and its capacity.
struct Part {
  std::string name;     // e.g. xc7z020 (the prefix of a full part string such as xc7z020clg400-1)
  std::string boards;   // boards that carry it, for messages
  std::string flowBoard;  // the board of scripts/fpga/boards.tcl whose bitstream flow targets it; empty: none
  std::string family;   // xc7, xcup (Yosys synth_xilinx families) or ice40
  long luts = 0, ffs = 0, dsps = 0, urams = 0;
  double bram36 = 0;    // 36 Kb block RAMs (two RAMB18 make one)
  long ebr = 0, spram = 0;  // iCE40 only: 4 Kb embedded block RAMs, 256 Kb single-port RAMs
  double clockMhz = 0;
  std::string clockBasis;  // why that clock: an assumption or a measurement, in words
};

// The parts shipped in hw/configs/space/parts.json, embedded at build time.
std::vector<Part> shippedParts();
// The part named `name` (or whose name prefixes it: xc7z020clg400-1 is xc7z020); throws naming the
// known parts otherwise.
Part partNamed(const std::string& name);
// Parses a parts file; `origin` names it in errors.
std::vector<Part> partsFromJson(const std::string& text, const std::string& origin);
std::string shippedPartsJson();

// Resources on a Xilinx family, counted as scripts/fpga/yosys_report.py counts them.
struct Resources {
  double lut = 0, ff = 0, dsp = 0, bram36 = 0;
};

// What fits: each resource against a part's capacity, the first that does not fit named.
struct Fit {
  bool fits = true;
  std::string overflow;  // e.g. "BRAM36 152 > 140"; empty when it fits
  double worstShare = 0; // the largest resource's share of the part (0..)
};
Fit fitOf(const Resources& r, const Part& part);

// Block RAM (RAMB36 equivalents) of the config's SRAMs and instruction queues, derived from the
// RTL's structure (tessera_top's lanes and banks) and the 7-series/UltraScale block RAM shapes:
// exact, not fitted.
double blockRam36(const Config& c);
// Whether the RTL puts the instruction queues in LUT RAM for this config (tessera_top's rule: its
// SRAMs take 2 Mbit or more), rather than block RAM.
bool queuesInLutRam(const Config& c);

// The features the fitted resources (LUT, FF, DSP) are linear in; the names are area.json's keys.
struct AreaFeature {
  std::string name;
  double value = 0;
};
std::vector<AreaFeature> areaFeatures(const Config& c);
std::vector<std::string> areaFeatureNames();

// One family's fitted coefficients: resource -> one coefficient per feature.
struct FamilyAreaModel {
  std::string family;
  std::vector<double> lut, ff, dsp;  // in areaFeatureNames() order
  std::vector<std::string> fittedOn, heldOut;  // config names
  double heldOutMaxError = 0;       // the largest relative error on held-out configs, any resource
  std::string yosysVersion;
};

class AreaModel {
 public:
  // The model shipped in hw/configs/space/area.json, embedded at build time.
  static AreaModel shipped();
  static AreaModel fromJson(const std::string& text, const std::string& origin);
  std::string toJson() const;

  // Predicted resources of `c` on `family`; throws if the family has no fitted model.
  Resources predict(const Config& c, const std::string& family) const;
  bool hasFamily(const std::string& family) const;
  const FamilyAreaModel& family(const std::string& family) const;
  const std::vector<FamilyAreaModel>& families() const { return families_; }
  void setFamily(const FamilyAreaModel& f);

 private:
  std::string origin_;
  std::vector<FamilyAreaModel> families_;
};
std::string shippedAreaJson();

}  // namespace tessera::hw
