// tessera-area-fit: fits the area model's coefficients to Yosys resource reports and writes area.json.
//
// Each report is scripts/fpga/yosys_report.py's JSON for one config (a shipped config's or a space
// point's name) and one family. Per family, the LUT, FF and DSP coefficients are the least-squares
// fit of relative error (LAPACK's dgelss, from OpenBLAS) over the reports not held out; the held-out
// reports are predicted and their errors printed and recorded, as is the derived block RAM's error
// on every report.
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tessera/hw/area.h"
#include "tessera/hw/config.h"
#include "tessera/support/error.h"

extern "C" void dgelss_(const int* m, const int* n, const int* nrhs, double* a, const int* lda, double* b, const int* ldb,
                        double* s, const double* rcond, int* rank, double* work, const int* lwork, int* info);

namespace {

using tessera::Error;
using namespace tessera::hw;

struct Sample {
  std::string config, family, yosys;
  Config cfg;
  Resources measured;
};

Sample readReport(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(path, "cannot be read");
  std::stringstream ss;
  ss << in.rdbuf();
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(ss.str());
  } catch (const nlohmann::json::exception& e) {
    throw Error(path, std::string("invalid JSON: ") + e.what());
  }
  for (const char* key : {"config", "family", "total"})
    if (!j.contains(key)) throw Error(path, std::string("is not a yosys_report.py report (no '") + key + "')");
  Sample s;
  s.config = j.at("config").get<std::string>();
  s.family = j.at("family").get<std::string>();
  s.yosys = j.value("yosys_version", std::string());
  s.cfg = Config::load(s.config);
  const auto& t = j.at("total");
  s.measured.lut = t.value("lut", 0.0);
  s.measured.ff = t.value("ff", 0.0);
  s.measured.dsp = t.value("dsp", 0.0);
  s.measured.bram36 = t.value("bram36_equiv", 0.0);
  return s;
}

// Least squares of relative error: minimize sum ((x_i . c - y_i) / y_i)^2.
std::vector<double> fit(const std::vector<const Sample*>& rows, double Resources::*what, const std::string& where) {
  const int n = static_cast<int>(areaFeatureNames().size());
  const int m = static_cast<int>(rows.size());
  if (m == 0) throw Error(where, "no reports to fit");
  const int ld = std::max(m, n);
  std::vector<double> a(static_cast<size_t>(ld) * n, 0.0), b(static_cast<size_t>(ld), 0.0), s(static_cast<size_t>(n));
  for (int i = 0; i < m; ++i) {
    const double y = rows[static_cast<size_t>(i)]->measured.*what;
    const double w = y > 0 ? 1.0 / y : 1.0;
    const std::vector<AreaFeature> x = areaFeatures(rows[static_cast<size_t>(i)]->cfg);
    for (int k = 0; k < n; ++k) a[static_cast<size_t>(k) * ld + i] = x[static_cast<size_t>(k)].value * w;  // column-major
    b[static_cast<size_t>(i)] = y * w;
  }
  const int nrhs = 1;
  const double rcond = 1e-10;
  int rank = 0, info = 0, lwork = -1;
  double query = 0;
  dgelss_(&m, &n, &nrhs, a.data(), &ld, b.data(), &ld, s.data(), &rcond, &rank, &query, &lwork, &info);
  lwork = static_cast<int>(query);
  std::vector<double> work(static_cast<size_t>(lwork));
  dgelss_(&m, &n, &nrhs, a.data(), &ld, b.data(), &ld, s.data(), &rcond, &rank, work.data(), &lwork, &info);
  if (info != 0) throw Error(where, "least squares failed (dgelss info " + std::to_string(info) + ")");
  return std::vector<double>(b.begin(), b.begin() + n);
}

double relError(double predicted, double measured) {
  return measured != 0 ? (predicted - measured) / measured : (predicted == 0 ? 0.0 : 1.0);
}

int run(int argc, char** argv) {
  std::vector<std::string> reports;
  std::set<std::string> heldOut;
  std::string output;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if ((arg == "--held-out" || arg == "-o") && i + 1 >= argc) throw Error(arg, "needs a value");
    if (arg == "--held-out") {
      std::stringstream list(argv[++i]);
      for (std::string name; std::getline(list, name, ',');)
        if (!name.empty()) heldOut.insert(name);
    } else if (arg == "-o") {
      output = argv[++i];
    } else if (arg == "-h" || arg == "--help") {
      std::printf("usage: tessera-area-fit [--held-out CONFIG,...] [-o area.json] REPORT.json...\n"
                  "Fits the area model to scripts/fpga/yosys_report.py reports (one per config and family).\n");
      return 0;
    } else if (!arg.empty() && arg[0] == '-') {
      throw Error(arg, "unknown option (known: --held-out, -o)");
    } else {
      reports.push_back(arg);
    }
  }
  if (reports.empty()) throw Error("tessera-area-fit", "no reports given (usage: --help)");
  std::map<std::string, std::vector<Sample>> byFamily;
  for (const std::string& r : reports) {
    Sample s = readReport(r);
    byFamily[s.family].push_back(s);
  }
  AreaModel model;
  int status = 0;
  for (auto& [family, samples] : byFamily) {
    std::vector<const Sample*> train, test;
    for (const Sample& s : samples) (heldOut.count(s.config) ? test : train).push_back(&s);
    FamilyAreaModel f;
    f.family = family;
    f.lut = fit(train, &Resources::lut, family + " LUT");
    f.ff = fit(train, &Resources::ff, family + " FF");
    f.dsp = fit(train, &Resources::dsp, family + " DSP");
    for (const Sample* s : train) f.fittedOn.push_back(s->config);
    for (const Sample* s : test) f.heldOut.push_back(s->config);
    for (const Sample& s : samples)
      if (f.yosysVersion.empty()) f.yosysVersion = s.yosys;
    model.setFamily(f);
    std::printf("%s: fitted on %zu configs, %zu held out\n", family.c_str(), train.size(), test.size());
    std::printf("  %-28s %-9s %17s %17s %11s %17s\n", "config", "set", "LUT (err)", "FF (err)", "DSP (err)",
                "BRAM36 (err)");
    double worst = 0;
    for (const Sample& s : samples) {
      const Resources p = model.predict(s.cfg, family);
      const bool held = heldOut.count(s.config) > 0;
      const double e[] = {relError(p.lut, s.measured.lut), relError(p.ff, s.measured.ff), relError(p.dsp, s.measured.dsp),
                          relError(p.bram36, s.measured.bram36)};
      if (held)
        for (double x : e) worst = std::max(worst, std::fabs(x));
      std::printf("  %-28s %-9s %8.0f (%+5.1f%%) %8.0f (%+5.1f%%) %4.0f (%+4.1f%%) %7.1f/%-5.1f (%+4.1f%%)\n",
                  s.config.c_str(), held ? "held out" : "fitted", s.measured.lut, 100 * e[0], s.measured.ff, 100 * e[1],
                  s.measured.dsp, 100 * e[2], p.bram36, s.measured.bram36, 100 * e[3]);
      // Block RAM is derived from the RTL's structure: any difference from Yosys is a model bug.
      if (std::fabs(p.bram36 - s.measured.bram36) > 1e-9) status = 1;
    }
    model.setFamily([&] {
      FamilyAreaModel g = model.family(family);
      g.heldOutMaxError = worst;
      return g;
    }());
    std::printf("  largest held-out error: %.1f%%\n", 100 * worst);
  }
  if (status) std::fprintf(stderr, "tessera-area-fit: the derived block RAM differs from Yosys' count above\n");
  if (!output.empty()) {
    std::ofstream out(output);
    if (!out) throw Error(output, "cannot be written");
    out << model.toJson();
    std::printf("wrote %s\n", output.c_str());
  }
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tessera-area-fit: %s\n", e.what());
    return 2;
  }
}
