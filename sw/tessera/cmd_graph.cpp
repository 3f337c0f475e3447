// The graph compiler's CLI: tessera compile/run/eval for whole models: ONNX in, compiled model files, answers, accuracy and timing out.
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <numeric>
#include <sstream>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cli.h"
#include "model_inputs.h"
#include "sim_export.h"
#include "tessera/compiler/codegen/codegen.h"
#include "tessera/compiler/detection/grid_detector.h"
#include "tessera/compiler/graph/compile.h"
#include "tessera/compiler/host/executor.h"
#include "tessera/compiler/io/tensor_io.h"
#include "tessera/compiler/model/chrome_trace.h"
#include "tessera/compiler/model/run.h"
#include "tessera/compiler/onnx/import.h"
#include "tessera/hw/asm.h"
#include "tessera/runtime/session.h"
#include "tessera/support/error.h"
#include "tessera/support/file_io.h"
#include "tessera/support/format.h"

namespace tessera::cli {

namespace fs = std::filesystem;
namespace codegen = compiler::codegen;
using compiler::model::CompiledModel;
using compiler::ir::DType;
using compiler::ir::Tensor;

// Model inputs and calibration samples from files (model_inputs.h), shared with tessera explore.
bool isOnnxFile(const std::string& path) {
  return path.size() > 5 && path.compare(path.size() - 5, 5, ".onnx") == 0;
}

// An image or sample converted to what a model input takes: float inputs get pixel / 255 (the
// convention the shipped models are trained with), integer inputs the raw values.
Tensor convertToInput(const Tensor& src, const Tensor& want, const std::string& origin) {
  if (src.dtype == want.dtype && src.shape == want.shape) return src;
  if (src.elements() != want.elements())
    throw Error(origin, "is " + src.describe() + ", input '" + want.name + "' takes " + want.describe());
  Tensor t = want;
  t.floats.clear();
  t.ints.clear();
  if (src.dtype == DType::kUInt8 && want.dtype == DType::kFloat32) {
    for (int64_t v : src.ints) t.floats.push_back(float(v) / 255.0f);
  } else if (src.dtype == want.dtype) {
    t.floats = src.floats;
    t.ints = src.ints;
  } else {
    throw Error(origin, "is " + src.describe() + ", input '" + want.name + "' takes " + want.describe());
  }
  return t;
}

Tensor readInputTensor(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error(path, "cannot open the input file");
  char magic[6] = {0};
  f.read(magic, 6);
  const bool npy = f.gcount() == 6 && std::string(magic + 1, 5) == "NUMPY" && uint8_t(magic[0]) == 0x93;
  return npy ? compiler::io::readNpy(path) : compiler::io::readImage(path);
}

Tensor readInputFile(const std::string& path, const Tensor& want) { return convertToInput(readInputTensor(path), want, path); }

// The samples an input file holds for a batch-1 input: one, or N stacked along the first axis of a
// .npy (shape [N, rest...] where the input is [1, rest...]).
std::vector<Tensor> readInputSamples(const std::string& path, const Tensor& want) {
  const Tensor src = readInputTensor(path);
  const bool stacked = !want.shape.empty() && want.shape[0] == 1 && src.shape.size() == want.shape.size() &&
                       src.shape[0] > 1 && std::equal(src.shape.begin() + 1, src.shape.end(), want.shape.begin() + 1);
  if (!stacked) return {convertToInput(src, want, path)};
  const int64_t n = src.shape[0], per = src.elements() / n;
  std::vector<Tensor> samples;
  for (int64_t i = 0; i < n; ++i) {
    Tensor one = src;
    one.shape[0] = 1;
    if (src.dtype == DType::kFloat32) one.floats.assign(src.floats.begin() + i * per, src.floats.begin() + (i + 1) * per);
    else one.ints.assign(src.ints.begin() + i * per, src.ints.begin() + (i + 1) * per);
    samples.push_back(convertToInput(one, want, path + " sample " + std::to_string(i)));
  }
  return samples;
}

// Per-sample results stacked along the first axis, in sample order.
Tensor stackSamples(const std::vector<const Tensor*>& parts) {
  Tensor t = *parts.front();
  if (t.shape.empty()) t.shape = {1};
  t.shape[0] *= int64_t(parts.size());
  for (size_t i = 1; i < parts.size(); ++i) {
    t.floats.insert(t.floats.end(), parts[i]->floats.begin(), parts[i]->floats.end());
    t.ints.insert(t.ints.end(), parts[i]->ints.begin(), parts[i]->ints.end());
  }
  return t;
}

// The value range --png maps to black..white: the option, else the model's `image_range` metadata (for output images),
// else the first of [0,1], [-1,1], [0,255] that holds every value, else the values' own range.
std::pair<float, float> pngRange(const std::string& option, const std::string& metadataRange, const std::vector<float>& v,
                                 std::string* how) {
  auto parse = [](const std::string& text, const std::string& origin) {
    const size_t comma = text.find(',');
    try {
      if (comma != std::string::npos) {
        size_t used = 0;
        const float lo = std::stof(text.substr(0, comma), &used);
        size_t used2 = 0;
        const float hi = std::stof(text.substr(comma + 1), &used2);
        if (used == comma && used2 == text.size() - comma - 1 && hi > lo) return std::make_pair(lo, hi);
      }
    } catch (const std::exception&) {
    }
    throw Error(origin, "'" + text + "' is not a range LO,HI with LO < HI");
  };
  if (!option.empty()) {
    *how = "--png-range";
    return parse(option, "--png-range");
  }
  if (!metadataRange.empty()) {
    *how = "the model's image_range metadata";
    return parse(metadataRange, "model metadata image_range");
  }
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  for (const auto& [a, b] : {std::make_pair(0.0f, 1.0f), std::make_pair(-1.0f, 1.0f), std::make_pair(0.0f, 255.0f)})
    if (*lo >= a && *hi <= b) {
      *how = "the smallest usual range holding every value";
      return {a, b};
    }
  *how = "the values' own range";
  return {*lo, *hi > *lo ? *hi : *lo + 1.0f};
}

Tensor fromIdx(const compiler::io::IdxImages& images, int64_t index, const Tensor& want, const std::string& origin) {
  Tensor t;
  t.dtype = DType::kUInt8;
  t.shape = {1, 1, images.rows, images.cols};
  t.hasShape = true;
  const uint64_t per = uint64_t(images.rows * images.cols);
  t.ints.assign(images.pixels.begin() + int64_t(per) * index, images.pixels.begin() + int64_t(per) * (index + 1));
  return convertToInput(t, want, origin + " image " + std::to_string(index));
}

// A directory of .npy samples (sorted by name) or an IDX image file (its first `count` images).
compiler::graph::Calibration loadCalibration(const std::string& path, const CompiledModel& shape, int count) {
  compiler::graph::Calibration c;
  c.origin = path;
  if (shape.inputs.size() != 1)
    throw Error(path, "calibration sets are supported for single-input models; this one has " +
                          std::to_string(shape.inputs.size()));
  const Tensor& want = shape.inputs[0];
  if (fs::is_directory(path)) {
    std::vector<std::string> files;
    for (const auto& e : fs::directory_iterator(path))
      if (e.path().extension() == ".npy") files.push_back(e.path().string());
    std::sort(files.begin(), files.end());
    if (files.empty()) throw Error(path, "holds no .npy calibration samples");
    for (const std::string& f : files) {
      if (int(c.samples.size()) >= count) break;
      c.samples.push_back({{want.name, convertToInput(compiler::io::readNpy(f), want, f)}});
    }
  } else if (path.size() > 4 && path.compare(path.size() - 4, 4, ".npy") == 0) {
    for (Tensor& t : readInputSamples(path, want)) {
      if (int(c.samples.size()) >= count) break;
      c.samples.push_back({{want.name, std::move(t)}});
    }
  } else {
    const compiler::io::IdxImages images = compiler::io::readIdxImages(path);
    for (int64_t i = 0; i < images.count && i < count; ++i) c.samples.push_back({{want.name, fromIdx(images, i, want, path)}});
  }
  return c;
}

// Input descriptions of an ONNX model, before compiling it (for reading calibration data).
CompiledModel describeInputs(const compiler::ir::Graph& g) {
  CompiledModel m;
  for (const std::string& in : g.inputs) m.inputs.push_back(g.tensor(in));
  return m;
}

namespace {

// Where the layers ran, as the reports word it: "9 of 9 layers, 100.0% of MACs on the accelerator".
std::string placementLabel(const compiler::model::Placement& p) {
  if (p.acceleratorLayers == 0) return "all " + std::to_string(p.layers) + " layers on the host";
  char share[32];
  std::snprintf(share, sizeof share, "%.1f%%", 100.0 * p.acceleratorMacShare());
  return std::to_string(p.acceleratorLayers) + " of " + std::to_string(p.layers) + " layers, " + share +
         " of MACs on the accelerator";
}

struct ModelArgs {
  std::string model, config, calibrate, output, calibrationMethod = "minmax";
  int calibrationCount = 64;
  bool printAfterAll = false, force = false, hostFloat = false;
};

// Calibration samples a command falls back on for a float model given without --calibrate (eval:
// its own data set), and what it then says it did.
struct DefaultCalibration {
  std::string path;  // an IDX image file; empty: a float model without --calibrate is refused
  std::string used;  // set when the fallback was taken: one line saying so
};

CompiledModel compileModelFile(const ModelArgs& a, const hw::Config& cfg, double* seconds,
                               compiler::ir::Graph* floatGraph, DefaultCalibration* fallback = nullptr) {
  const auto t0 = std::chrono::steady_clock::now();
  compiler::graph::Calibration methodCheck;  // a bad method is refused whether or not calibration runs
  compiler::graph::parseCalibrationMethod(a.calibrationMethod, "--calibration-method", methodCheck);
  if (a.hostFloat && !a.calibrate.empty())
    throw Error("--host-float", "runs a float model in float on the host; it cannot be combined with --calibrate");
  if (!isOnnxFile(a.model)) {
    if (!a.calibrate.empty() || a.hostFloat)
      throw Error(a.model, std::string("is a compiled model; ") + (a.hostFloat ? "--host-float" : "--calibrate") +
                               " applies when compiling an ONNX file");
    CompiledModel m = CompiledModel::load(a.model);
    *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return m;
  }
  compiler::ir::Graph g = compiler::onnx::importOnnx(a.model);
  if (floatGraph) *floatGraph = g;
  // Whether the model might be compiled a second time, calibrated from the fallback: its stages are
  // then printed only for the compilation that counts.
  const bool mayFallBack = fallback && !fallback->path.empty() && a.calibrate.empty() && !a.hostFloat;
  std::ostream* dumps = a.printAfterAll ? &std::cout : nullptr;
  compiler::graph::CompileOptions o;
  o.printAfterAll = mayFallBack ? nullptr : dumps;
  compiler::graph::Calibration calibration;
  if (!a.calibrate.empty()) {
    calibration = loadCalibration(a.calibrate, describeInputs(g), a.calibrationCount);
    compiler::graph::parseCalibrationMethod(a.calibrationMethod, "--calibration-method", calibration);
    o.calibration = &calibration;
  }
  CompiledModel m = compiler::graph::compile(cfg, g, o);
  if (o.calibration && m.segments.empty())
    std::fprintf(stderr, "warning: %s: no layer runs on the accelerator (none of its %zu layers fits it); every layer runs "
                         "in float on the host\n",
                 a.model.c_str(), m.layers.size());
  const bool unquantized = m.quantization == compiler::model::kFloatOnHost;
  const bool floatModel = unquantized && compiler::graph::calibrationApplies(g);
  if (a.hostFloat && !unquantized)
    throw Error(a.model, "is already quantized (" + m.quantization + "); --host-float applies to float models only");
  if (floatModel && !a.hostFloat) {
    // Uncalibrated, every layer would run in float on the host: calibrate from the command's own
    // samples if it has some, and say so; otherwise ask for them.
    if (!fallback || fallback->path.empty())
      throw Error(a.model, "is a float model: pass --calibrate DIR|IDX (samples to quantize it to int8 for the "
                           "accelerator) or --host-float (every layer in float on the host)");
    calibration = loadCalibration(fallback->path, describeInputs(g), a.calibrationCount);
    compiler::graph::parseCalibrationMethod(a.calibrationMethod, "--calibration-method", calibration);
    o.calibration = &calibration;
    o.printAfterAll = dumps;
    m = compiler::graph::compile(cfg, g, o);
    fallback->used = "calibrated on the first " + std::to_string(calibration.samples.size()) + " images of " +
                     fallback->path + " (no --calibrate given; pass one to choose the samples)";
  } else if (mayFallBack && dumps) {
    o.printAfterAll = dumps;
    m = compiler::graph::compile(cfg, g, o);
  }
  *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return m;
}

void addModelOptions(po::options_description& opts, ModelArgs& a) {
  addConfigOption(opts, &a.config);
  opts.add_options()
      ("model", po::value<std::string>(&a.model)->required(), "model.onnx or a compiled model.tsm")
      ("calibrate", po::value<std::string>(&a.calibrate), "float models: calibration samples, a directory of .npy files, one .npy of N stacked samples, or an IDX image file")
      ("calibration-count", po::value<int>(&a.calibrationCount)->default_value(64), "at most this many calibration samples")
      ("calibration-method", po::value<std::string>(&a.calibrationMethod)->default_value("minmax"),
       "minmax (the largest magnitude seen), entropy (the clipping that keeps the distribution closest in KL divergence), "
       "mse (the clipping with the least expected squared error) "
       "or percentile[:P] (the magnitude below P% of the values seen, default 99.99)")
      ("host-float", po::bool_switch(&a.hostFloat), "float models: run every layer in float on the host instead of calibrating for the accelerator")
      ("print-after-all", po::bool_switch(&a.printAfterAll), "print the graph after every pass");
}

std::vector<std::string> labelsOf(const CompiledModel& m, const std::string& labelsFile) {
  if (!labelsFile.empty()) return compiler::io::readLabels(labelsFile);
  std::vector<std::string> labels;
  auto it = m.metadata.find("labels");
  if (it == m.metadata.end()) return labels;
  std::stringstream ss(it->second);
  for (std::string l; std::getline(ss, l, ',');) labels.push_back(l);
  return labels;
}

std::vector<float> asFloats(const Tensor& t) {
  if (t.dtype == DType::kFloat32) return t.floats;
  return std::vector<float>(t.ints.begin(), t.ints.end());
}

std::vector<int> topK(const std::vector<float>& v, int k) {
  std::vector<int> idx(v.size());
  std::iota(idx.begin(), idx.end(), 0);
  k = std::min<int>(k, int(v.size()));
  std::partial_sort(idx.begin(), idx.begin() + k, idx.end(), [&](int a, int b) { return v[size_t(a)] > v[size_t(b)] || (v[size_t(a)] == v[size_t(b)] && a < b); });
  idx.resize(size_t(k));
  return idx;
}

// The host steps' time summed by op, largest first.
std::vector<std::pair<std::string, double>> hostTimeByOp(const CompiledModel& m, const compiler::model::ModelRunResult& r) {
  std::map<std::string, double> byOp;
  for (size_t i = 0; i < m.layers.size(); ++i)
    if (!m.layers[i].onAccelerator) byOp[m.layers[i].kind] += r.layers[i].hostMicros;
  std::vector<std::pair<std::string, double>> kinds(byOp.begin(), byOp.end());
  std::stable_sort(kinds.begin(), kinds.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  return kinds;
}

// `hostTimed`: whether host steps were timed one by one (generated code runs them as one function).
void printLayerTable(const CompiledModel& m, const compiler::model::ModelRunResult& r, const hw::Config& cfg, bool hostTimed) {
  const double lanes = double(cfg.batch) * cfg.blockIn * cfg.blockOut;
  std::printf("%-4s %-28s %-11s %-9s %14s %12s %8s %12s\n", "#", "layer", "ran on", "op", "MACs", "cycles", "GEMM%",
              "DRAM bytes");
  for (size_t i = 0; i < m.layers.size(); ++i) {
    const compiler::model::LayerInfo& l = m.layers[i];
    const compiler::model::LayerTiming& t = r.layers[i];
    char cycles[32] = "-", util[16] = "-";
    if (l.onAccelerator && t.cycles) {
      std::snprintf(cycles, sizeof cycles, "%s", thousands(t.cycles).c_str());
      if (l.macs) std::snprintf(util, sizeof util, "%.1f", 100.0 * double(l.macs) / (double(t.cycles) * lanes));
    } else if (!l.onAccelerator && hostTimed) {
      std::snprintf(cycles, sizeof cycles, "%.0f us", t.hostMicros);
    }
    std::string name = l.name.size() > 28 ? l.name.substr(0, 25) + "..." : l.name;
    std::printf("%-4zu %-28s %-11s %-9s %14s %12s %8s %12s\n", i, name.c_str(), l.onAccelerator ? "accelerator" : "host",
                l.kind.c_str(), l.macs ? thousands(l.macs).c_str() : "-", cycles, util,
                l.onAccelerator ? thousands(l.dramReadBytes + l.dramWriteBytes).c_str() : "-");
  }
  const compiler::model::Placement placed = compiler::model::placementOf(m);
  const uint64_t macs = placed.acceleratorMacs;
  std::printf("total: %s in %zu segment(s) (%s of %s MACs), %s instructions", placementLabel(placed).c_str(),
              m.segments.size(), thousands(macs).c_str(), thousands(placed.macs).c_str(),
              thousands(r.counters.totalInsns()).c_str());
  if (r.counters.cycles)
    std::printf(", %s cycles, GEMM-core utilization %.1f%%", thousands(r.counters.cycles).c_str(),
                100.0 * double(macs) / (double(r.counters.cycles) * lanes));
  std::printf(", %.3f s wall\n", r.seconds);
  uint64_t layerSum = 0;
  for (const auto& t : r.layers) layerSum += t.cycles;
  if (layerSum)
    std::printf("layer cycles: each accelerator layer's instructions run again alone (sum %s; the end-to-end figure "
                "above is the whole stream, one FINISH per segment)\n", thousands(layerSum).c_str());
  const auto kinds = hostTimeByOp(m, r);
  if (hostTimed && !kinds.empty() && r.seconds > 0) {
    double total = 0;
    for (const auto& [op, micros] : kinds) total += micros;
    std::printf("host steps: %.0f us, %.1f%% of the run's wall time; by op:", total, 100.0 * total / (r.seconds * 1e6));
    for (size_t i = 0; i < kinds.size() && i < 8; ++i)
      std::printf("%s %s %.0f us (%.1f%%)", i ? "," : "", kinds[i].first.c_str(), kinds[i].second,
                  100.0 * kinds[i].second / (r.seconds * 1e6));
    std::printf(kinds.size() > 8 ? ", ...\n" : "\n");
  }
}

nlohmann::json layersJson(const CompiledModel& m, const compiler::model::ModelRunResult& r, const hw::Config& cfg, bool hostTimed) {
  const double lanes = double(cfg.batch) * cfg.blockIn * cfg.blockOut;
  nlohmann::json layers = nlohmann::json::array();
  for (size_t i = 0; i < m.layers.size(); ++i) {
    const compiler::model::LayerInfo& l = m.layers[i];
    const compiler::model::LayerTiming& t = r.layers[i];
    nlohmann::json j = {{"name", l.name}, {"op", l.kind}, {"ran_on", l.onAccelerator ? "accelerator" : "host"},
                        {"macs", l.macs}, {"detail", l.detail}};
    if (l.onAccelerator) {
      j["segment"] = l.segment;
      j["dram_bytes"] = l.dramReadBytes + l.dramWriteBytes;
      j["estimated_cycles"] = l.estimatedCycles;
      if (t.cycles) {
        j["cycles"] = t.cycles;
        if (l.macs) j["gemm_utilization"] = double(l.macs) / (double(t.cycles) * lanes);
      }
    } else if (hostTimed) {
      j["host_microseconds"] = t.hostMicros;
    }
    layers.push_back(j);
  }
  return layers;
}

}  // namespace

int cmdCompileModel(const std::vector<std::string>& args) {
  po::options_description opts("options");
  ModelArgs a;
  addModelOptions(opts, a);
  std::string emit = "tsm", triple = "x86_64-linux-gnu", symbol;
  bool optimizedIr = false;
  opts.add_options()("output,o", po::value<std::string>(&a.output), "write the compiled model (or what --emit names) here")
      ("force", po::bool_switch(&a.force), "overwrite an existing output file")
      ("emit", po::value<std::string>(&emit)->default_value("tsm"),
       "tsm: the compiled model file; ll: the host side as LLVM IR (stdout without -o); obj or shared: the host side "
       "as native code for --triple, with a C header FILE.h beside it (docs/aot.md)")
      ("triple", po::value<std::string>(&triple)->default_value("x86_64-linux-gnu"),
       "--emit ll|obj|shared: x86_64-linux-gnu, armv7a-linux-gnueabihf or aarch64-linux-gnu")
      ("name", po::value<std::string>(&symbol), "--emit ll|obj|shared: the C name prefix (default: the model file's stem)")
      ("optimized", po::bool_switch(&optimizedIr), "--emit ll: the IR after LLVM's O2 pipeline, as objects are compiled from it");
  po::positional_options_description pos;
  pos.add("model", 1);
  po::variables_map vm;
  if (!parse("compile", "MODEL.onnx [--calibrate DIR|IDX] [--config C] [--print-after-all] -o MODEL.tsm [--force] "
             "| --emit ll|obj|shared [--triple T] [--name NAME] [--optimized] -o FILE",
             args, opts, &pos, &vm))
    return 0;
  codegen::Emit kind = codegen::Emit::kIr;
  if (emit == "ll") kind = codegen::Emit::kIr;
  else if (emit == "obj") kind = codegen::Emit::kObject;
  else if (emit == "shared") kind = codegen::Emit::kShared;
  else if (emit != "tsm") throw Error("--emit " + emit, "is not one of tsm, ll, obj, shared");
  if (optimizedIr && emit != "ll") throw Error("--optimized", "applies to --emit ll only");
  if (emit != "tsm") {
    // Refused before compiling: a bad triple or name, or a binary with nowhere to go.
    if (std::find(codegen::supportedTriples().begin(), codegen::supportedTriples().end(), triple) ==
        codegen::supportedTriples().end()) {
      std::string list;
      for (const std::string& t : codegen::supportedTriples()) list += (list.empty() ? "" : ", ") + t;
      throw Error("--triple " + triple, "is not a supported target triple (supported: " + list + ")");
    }
    if (kind != codegen::Emit::kIr && a.output.empty()) throw Error("--emit " + emit, "writes a binary file: give -o FILE");
    if (symbol.empty()) symbol = codegen::symbolNameFor(a.model);
    const bool identifier = !symbol.empty() && !std::isdigit(static_cast<unsigned char>(symbol[0])) &&
                            std::all_of(symbol.begin(), symbol.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
    if (!identifier) throw Error("--name " + symbol, "is not a C identifier");
  }
  const hw::Config cfg = hw::Config::load(a.config);
  double seconds = 0;
  const CompiledModel m = compileModelFile(a, cfg, &seconds, nullptr);
  const compiler::model::Placement placed = compiler::model::placementOf(m);
  const size_t onAccel = placed.acceleratorLayers;
  uint64_t insns = 0;
  for (const auto& s : m.segments) insns += s.insns.size();
  std::printf("compiled %s for %s in %.3f s: %s; %zu layers (%zu on the accelerator in %zu segment(s), %zu on the host; "
              "%.1f%% of MACs on the accelerator), %s instructions, %s bytes of constants, activation arena %s bytes (%s "
              "without reuse)\n",
              a.model.c_str(), cfg.name.c_str(), seconds, m.quantization.c_str(), placed.layers, onAccel,
              m.segments.size(), placed.hostLayers(), 100.0 * placed.acceleratorMacShare(), thousands(insns).c_str(),
              thousands(m.constantImage.size()).c_str(), thousands(m.arenaBytes).c_str(),
              thousands(m.arenaBytesWithoutReuse).c_str());
  if (onAccel)
    std::printf("  predicted: %s accelerator cycles (the cost model's, without simulating; tessera bench --model "
                "--target tsim measures them)\n",
                thousands(static_cast<uint64_t>(compiler::model::predictedCycles(m))).c_str());
  for (const auto& q : m.quantizationNotes)
    std::printf("  quantization: %s: %s (max abs error %.3g)\n", q.tensor.c_str(), q.change.c_str(), q.maxAbsError);
  if (emit != "tsm") {
    codegen::EmitOptions eo;
    eo.symbol = symbol;
    eo.triple = triple;
    eo.optimizeIr = optimizedIr;
    const std::vector<uint8_t> code = codegen::emit(m, kind, eo);
    if (a.output.empty()) {
      std::fwrite(code.data(), 1, code.size(), stdout);
      return 0;
    }
    writeBinaryFile(a.output, code, a.force);
    std::printf("wrote %s (%s, %s bytes)\n", a.output.c_str(), triple.c_str(), thousands(code.size()).c_str());
    if (kind != codegen::Emit::kIr) {
      const std::string h = (fs::path(a.output).parent_path() / (fs::path(a.output).stem().string() + ".h")).string();
      const std::string text = codegen::header(m, symbol);
      writeTextFile(h, text, a.force);
      std::printf("wrote %s: %s_model, %s_run\n", h.c_str(), symbol.c_str(), symbol.c_str());
    }
    return 0;
  }
  if (!a.output.empty()) {
    m.save(a.output, a.force);
    std::printf("wrote %s\n", a.output.c_str());
  }
  return 0;
}

int cmdRun(const std::vector<std::string>& args) {
  po::options_description opts("options");
  ModelArgs a;
  std::string target, outputDir, labelsFile;
  std::vector<std::string> inputs;
  std::string timeline, exportSim, png, pngRangeText;
  int top = 5;
  float scoreThreshold = 0.3f, nmsIou = 0.45f;
  bool json = false, noLayerCycles = false;
  std::string hostCodegen = "interp";
  addModelOptions(opts, a);
  addTargetOption(opts, &target, "fsim");
  opts.add_options()
      ("host-codegen", po::value<std::string>(&hostCodegen)->default_value("interp"),
       "interp: host operators by the C++ executor; jit: the model's host side compiled to native code by LLVM's ORC "
       "JIT (whole segments only: no layer cycles, timeline or export; docs/aot.md)")
      ("input,i", po::value<std::vector<std::string>>(&inputs)->composing(),
       "an input: FILE or NAME=FILE (.npy, PNG or PGM); one per graph input in order. A .npy of shape [N, ...] "
       "for a [1, ...] input holds N samples, run one after another (outputs stacked, the layer table the first's)")
      ("png", po::value<std::string>(&png), "write the first image output ([N, 1 or 3, H, W]; N samples tiled) as a PNG")
      ("png-range", po::value<std::string>(&pngRangeText),
       "LO,HI: the output values drawn black and white (default: the model's image_range metadata, else the "
       "smallest of 0,1 / -1,1 / 0,255 holding every value); for a detector, the input's")
      ("score-threshold", po::value<float>(&scoreThreshold)->default_value(0.3f),
       "detectors: the least score (objectness x class probability) of a box printed")
      ("nms-iou", po::value<float>(&nmsIou)->default_value(0.45f),
       "detectors: a box overlapping a better one of its class by more than this is dropped")
      ("output-dir", po::value<std::string>(&outputDir), "write every graph output as NAME.npy here")
      ("force", po::bool_switch(&a.force), "overwrite existing output files")
      ("labels", po::value<std::string>(&labelsFile), "class labels, one per line (default: the model's 'labels' metadata)")
      ("top", po::value<int>(&top)->default_value(5), "classes to print")
      ("json", po::bool_switch(&json), "print the results as one JSON object instead")
      ("no-layer-cycles", po::bool_switch(&noLayerCycles), "timed targets: skip re-running each layer alone for its cycles")
      ("timeline", po::value<std::string>(&timeline),
       "write a Chrome trace-event file (Perfetto, chrome://tracing): the layers, and on timed targets every "
       "instruction on fetch, load, compute (its GEMM and ALU pipes) and store")
      ("export-sim", po::value<std::string>(&exportSim),
       "DIR: write each accelerator segment's DRAM images, instruction stream, output bytes and a manifest "
       "with the `tessera sim` command that replays it (an existing non-empty DIR needs --force)");
  po::positional_options_description pos;
  pos.add("model", 1);
  po::variables_map vm;
  if (!parse("run", "MODEL.onnx|MODEL.tsm --input FILE ... [--target T] [--config C] [--calibrate DIR|IDX] [--output-dir DIR] [--export-sim DIR]",
             args, opts, &pos, &vm))
    return 0;
  if (hostCodegen != "interp" && hostCodegen != "jit")
    throw Error("--host-codegen " + hostCodegen, "is not one of interp, jit");
  const bool jit = hostCodegen == "jit";
  if (jit && (!timeline.empty() || !exportSim.empty()))
    throw Error("--host-codegen jit", "runs whole segments only; --timeline and --export-sim need --host-codegen interp");
  const hw::Config cfg = hw::Config::load(a.config);
  runtime::Session session(target, cfg);
  // Before compiling: a directory that cannot be written to is refused before any work is done.
  std::unique_ptr<SimExport> simExport;
  if (!exportSim.empty()) simExport = std::make_unique<SimExport>(exportSim, a.force, cfg, a.model, target);
  double compileSeconds = 0;
  const CompiledModel m = compileModelFile(a, cfg, &compileSeconds, nullptr);
  if (inputs.size() != m.inputs.size() && std::none_of(inputs.begin(), inputs.end(), [](const std::string& s) {
        return s.find('=') != std::string::npos;
      }))
    throw Error("--input", "the model takes " + std::to_string(m.inputs.size()) + " input(s), " +
                               std::to_string(inputs.size()) + " given");
  // Each input file holds one sample or N stacked ones; every input holds the same number.
  std::map<std::string, std::vector<Tensor>> inputSamples;
  size_t samples = 1;
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::string name, file = inputs[i];
    const size_t eq = file.find('=');
    if (eq != std::string::npos && !fs::exists(file)) {
      name = file.substr(0, eq);
      file = file.substr(eq + 1);
    } else {
      name = i < m.inputs.size() ? m.inputs[i].name : "";
    }
    auto want = std::find_if(m.inputs.begin(), m.inputs.end(), [&](const Tensor& t) { return t.name == name; });
    if (want == m.inputs.end()) throw Error("--input " + inputs[i], "the model has no input named '" + name + "'");
    std::vector<Tensor> list = readInputSamples(file, *want);
    if (list.size() > 1 && samples > 1 && list.size() != samples)
      throw Error("--input " + inputs[i], "holds " + std::to_string(list.size()) + " samples, another input " +
                                              std::to_string(samples));
    samples = std::max(samples, list.size());
    inputSamples[name] = std::move(list);
  }
  auto feedsFor = [&](size_t sample) {
    std::map<std::string, Tensor> feeds;
    for (const auto& [name, list] : inputSamples) feeds[name] = list.size() == 1 ? list[0] : list[sample];
    return feeds;
  };
  // The first sample is the one timed layer by layer, traced and exported; the others only run.
  std::vector<compiler::model::ModelRunResult> results;
  double jitHostMicros = 0, jitCompileSeconds = 0, allSeconds = 0;
  if (jit) {
    const codegen::JitModel code(m, codegen::symbolNameFor(a.model));
    runtime::AotSession aot(code.descriptor(), session);
    for (size_t k = 0; k < samples; ++k) {
      results.push_back(codegen::runGenerated(m, code.descriptor(), aot.handle(), feedsFor(k)));
      allSeconds += results.back().seconds;
      if (k == 0) results.back().counters = session.threadQueue().device().counters();
    }
    const compiler::model::ModelRunResult& first = results.front();
    // Everything but the segments' device runs: the host operators, packing and unpacking.
    jitHostMicros = (first.seconds - first.segmentSeconds) * 1e6;
    jitCompileSeconds = code.compileSeconds();
  } else {
    compiler::model::ModelRunner runner(m, session);
    bool observing = true;
    if (simExport)
      runner.observeSegments([&](const compiler::model::SegmentRunView& v, bool finished) {
        if (observing) simExport->observe(v, finished);
      });
    for (size_t k = 0; k < samples; ++k) {
      compiler::model::RunOptions runOptions;
      runOptions.layerCycles = !noLayerCycles && k == 0;
      runOptions.instructionSpans = !timeline.empty() && k == 0;
      results.push_back(runner.run(feedsFor(k), runOptions));
      allSeconds += results.back().seconds;
      observing = false;
    }
  }
  const compiler::model::ModelRunResult& r = results.front();
  std::map<std::string, Tensor> outputs;
  for (const Tensor& want : m.outputs) {
    std::vector<const Tensor*> parts;
    for (const auto& each : results) parts.push_back(&each.outputs.at(want.name));
    outputs[want.name] = samples == 1 ? *parts.front() : stackSamples(parts);
  }
  std::string manifest;
  if (simExport) manifest = simExport->writeManifest();
  const std::vector<std::string> labels = labelsOf(m, labelsFile);
  nlohmann::json report = {{"model", a.model}, {"target", target}, {"config", cfg.name}, {"quantization", m.quantization},
                           {"host_codegen", hostCodegen}};
  if (!json)
    std::printf("model %s (%s) on %s, config %s%s\n", a.model.c_str(), m.quantization.c_str(), target.c_str(), cfg.name.c_str(),
                jit ? ", host side compiled by the LLVM ORC JIT" : "");
  for (const Tensor& want : m.outputs) {
    const Tensor& result = outputs.at(want.name);
    const bool classes = result.shape.size() == 2 && result.shape[0] == int64_t(samples) && result.shape[1] > 1;
    if (json) {
      nlohmann::json j = {{"shape", result.shape}, {"dtype", compiler::ir::dtypeName(result.dtype)}};
      auto topOf = [&](const std::vector<float>& v) {
        nlohmann::json list = nlohmann::json::array();
        for (int k : topK(v, top))
          list.push_back({{"index", k}, {"label", size_t(k) < labels.size() ? labels[size_t(k)] : ""}, {"value", v[size_t(k)]}});
        return list;
      };
      if (samples == 1) {
        j["top"] = topOf(asFloats(result));
      } else {
        j["top"] = nlohmann::json::array();
        for (const auto& each : results) j["top"].push_back(topOf(asFloats(each.outputs.at(want.name))));
      }
      const std::vector<float> v = asFloats(result);
      if (v.size() <= 4096) j["values"] = v;
      report["outputs"][want.name] = j;
    } else if (classes && samples == 1) {
      const std::vector<float> v = asFloats(result);
      std::printf("output '%s' %s, top %d:\n", want.name.c_str(), result.describe().c_str(), std::min<int>(top, int(v.size())));
      for (int k : topK(v, top))
        std::printf("  %4d  %-20s %10.4f\n", k, size_t(k) < labels.size() ? labels[size_t(k)].c_str() : "", v[size_t(k)]);
    } else if (classes) {
      std::printf("output '%s' %s, top 1 of each sample:\n", want.name.c_str(), result.describe().c_str());
      for (size_t k = 0; k < samples; ++k) {
        const std::vector<float> v = asFloats(results[k].outputs.at(want.name));
        const int best = topK(v, 1).at(0);
        std::printf("  sample %-4zu %4d  %-20s %10.4f\n", k, best, size_t(best) < labels.size() ? labels[size_t(best)].c_str() : "",
                    v[size_t(best)]);
      }
    } else {
      const std::vector<float> v = asFloats(result);
      std::printf("output '%s' %s:", want.name.c_str(), result.describe().c_str());
      for (size_t i = 0; i < v.size() && i < 16; ++i) std::printf(" %g", v[i]);
      std::printf(v.size() > 16 ? " ...\n" : "\n");
    }
    if (!outputDir.empty()) {
      fs::create_directories(outputDir);
      std::string file = want.name;
      std::replace(file.begin(), file.end(), '/', '_');
      const std::string path = (fs::path(outputDir) / (file + ".npy")).string();
      compiler::io::writeNpy(path, result, a.force);
      if (!json) std::printf("  wrote %s\n", path.c_str());
    }
  }
  // A detector's boxes, per sample: decoded from its first output on the host, after non-maximum suppression.
  const bool detector = compiler::detection::isGridDetector(m.metadata);
  std::vector<std::vector<compiler::detection::Box>> boxes;
  if (detector) {
    if (!(scoreThreshold >= 0 && scoreThreshold <= 1)) throw Error("--score-threshold", "must be within 0..1");
    if (!(nmsIou >= 0 && nmsIou <= 1)) throw Error("--nms-iou", "must be within 0..1");
    const Tensor& in = m.inputs.at(0);
    if (in.shape.size() != 4) throw Error(a.model, "is a detector whose input is " + in.describe() + ", not an image");
    const std::string first = m.outputs.at(0).name;
    const auto layout = compiler::detection::gridLayout(results.front().outputs.at(first), in.shape[2], in.shape[3],
                                                        "detector output '" + first + "'");
    nlohmann::json all = nlohmann::json::array();
    for (size_t k = 0; k < samples; ++k) {
      boxes.push_back(compiler::detection::nonMaxSuppression(
          compiler::detection::decodeGrid(results[k].outputs.at(first), layout, scoreThreshold), nmsIou));
      nlohmann::json list = nlohmann::json::array();
      if (!json)
        std::printf("%s: %zu box(es) with score >= %g after NMS at IoU %g (decoded on the host)\n",
                    samples > 1 ? ("sample " + std::to_string(k)).c_str() : "boxes", boxes.back().size(), scoreThreshold, nmsIou);
      for (const auto& b : boxes.back()) {
        const std::string label = size_t(b.cls) < labels.size() ? labels[size_t(b.cls)] : std::to_string(b.cls);
        if (json)
          list.push_back({{"class", b.cls}, {"label", label}, {"score", b.score}, {"x", b.x}, {"y", b.y}, {"w", b.w}, {"h", b.h}});
        else
          std::printf("  %-12s score %.3f  x %6.1f  y %6.1f  w %6.1f  h %6.1f\n", label.c_str(), b.score, b.x, b.y, b.w, b.h);
      }
      all.push_back(list);
    }
    if (json) report["boxes"] = samples == 1 ? all[0] : all;
  }
  if (!png.empty() && detector) {
    // The input image(s) with the boxes drawn.
    const std::string name = m.inputs.at(0).name;
    std::vector<const Tensor*> parts;
    for (const Tensor& t : inputSamples.at(name)) parts.push_back(&t);
    const Tensor images = parts.size() == 1 ? *parts[0] : stackSamples(parts);
    std::string how;
    const auto [lo, hi] = pngRange(pngRangeText, "", asFloats(images), &how);
    compiler::io::Image canvas = compiler::io::tileImages(images, lo, hi, "input '" + name + "'");
    for (size_t k = 0; k < boxes.size(); ++k) {
      auto shifted = boxes[k];
      const auto [x0, y0] = compiler::io::tileOrigin(int64_t(k), int64_t(boxes.size()), images.shape[2], images.shape[3]);
      for (auto& b : shifted) {
        b.x += float(x0);
        b.y += float(y0);
      }
      compiler::detection::drawBoxes(canvas, shifted);
    }
    compiler::io::writePng(png, canvas, a.force);
    if (json) report["png"] = {{"path", png}, {"input", name}, {"range", {lo, hi}}};
    else std::printf("wrote %s: input '%s' with the boxes drawn (%g..%g as black..white, %s)\n", png.c_str(), name.c_str(), lo, hi, how.c_str());
  } else if (!png.empty()) {
    // The first output that holds images: [N, 1 or 3, H, W].
    auto isImage = [](const Tensor& t) { return t.shape.size() == 4 && (t.shape[1] == 1 || t.shape[1] == 3) && t.shape[2] > 1 && t.shape[3] > 1; };
    const Tensor* image = nullptr;
    std::string imageName;
    for (const Tensor& want : m.outputs)
      if (!image && isImage(outputs.at(want.name))) {
        image = &outputs.at(want.name);
        imageName = want.name;
      }
    if (!image) {
      std::string shapes;
      for (const Tensor& want : m.outputs) shapes += (shapes.empty() ? "" : ", ") + outputs.at(want.name).describe();
      throw Error("--png " + png, "no output of the model is an image [N, 1 or 3, H, W]: " + shapes);
    }
    std::string how;
    const auto meta = m.metadata.find("image_range");
    const auto [lo, hi] = pngRange(pngRangeText, meta == m.metadata.end() ? "" : meta->second, asFloats(*image), &how);
    compiler::io::writePng(png, compiler::io::tileImages(*image, lo, hi, "output '" + imageName + "'"), a.force);
    if (json) report["png"] = {{"path", png}, {"output", imageName}, {"range", {lo, hi}}};
    else std::printf("wrote %s: output '%s', %g..%g as black..white (%s)\n", png.c_str(), imageName.c_str(), lo, hi, how.c_str());
  }
  if (!timeline.empty()) {
    const std::string trace = compiler::model::chromeTrace(m, r);
    writeTextFile(timeline, trace, a.force);
    if (!json) std::printf("wrote %s\n", timeline.c_str());
  }
  if (!manifest.empty()) {
    if (json) report["export_sim"] = manifest;
    else std::printf("wrote %s: %zu segment(s) to replay with tessera sim\n", manifest.c_str(), m.segments.size());
  }
  if (json) {
    report["layers"] = layersJson(m, r, cfg, !jit);
    report["total"] = {{"cycles", r.counters.cycles}, {"instructions", r.counters.totalInsns()}, {"macs", r.counters.macs},
                    {"seconds", r.seconds}, {"segments", m.segments.size()}};
    if (jit) {
      report["total"]["host_side_microseconds"] = jitHostMicros;
    } else {
      nlohmann::json byOp = nlohmann::json::object();
      for (const auto& [op, micros] : hostTimeByOp(m, r)) byOp[op] = micros;
      report["total"]["host_microseconds_by_op"] = byOp;
    }
    if (samples > 1) report["samples"] = {{"count", samples}, {"seconds", allSeconds}, {"layers_and_total_of", "sample 0"}};
    std::printf("%s\n", report.dump(2).c_str());
  } else {
    if (samples > 1)
      std::printf("%zu samples in %.3f s wall; the table is sample 0's (every sample runs the same instructions)\n", samples,
                  allSeconds);
    printLayerTable(m, r, cfg, !jit);
  }
  if (jit && !json)
    std::printf("host side (JIT-compiled in %.3f s): %.1f us of the run's %.1f us outside the segments' device runs\n",
                jitCompileSeconds, jitHostMicros, r.seconds * 1e6);
  return 0;
}

namespace {

// The quantization step of a quantized file's output: the scale of the DequantizeLinear it comes
// from, through the float operations a file may put after it (a bias Add with a constant,
// Reshape, Flatten, Identity); 0 when there is none.
float outputStep(const compiler::ir::Graph& g, const std::string& output) {
  std::string t = output;
  for (int hops = 0; hops < 8; ++hops) {
    const int p = g.producer(t);
    if (p < 0) return 0.0f;
    const compiler::ir::Node& n = g.nodes[size_t(p)];
    if (n.opType == "DequantizeLinear" && n.inputs.size() > 1 && g.tensors.count(n.inputs[1]) &&
        g.tensor(n.inputs[1]).floats.size() == 1)
      return g.tensor(n.inputs[1]).floats[0];
    if (n.opType == "Add" && n.inputs.size() == 2) {
      const bool constantB = g.tensors.count(n.inputs[1]) && g.tensor(n.inputs[1]).isConstant;
      const bool constantA = g.tensors.count(n.inputs[0]) && g.tensor(n.inputs[0]).isConstant;
      if (constantA == constantB) return 0.0f;
      t = constantB ? n.inputs[0] : n.inputs[1];
      continue;
    }
    if ((n.opType == "Reshape" || n.opType == "Flatten" || n.opType == "Identity") && !n.inputs.empty()) {
      t = n.inputs[0];
      continue;
    }
    return 0.0f;
  }
  return 0.0f;
}

}  // namespace

int cmdEval(const std::vector<std::string>& args) {
  po::options_description opts("options");
  ModelArgs a;
  std::string target;
  std::vector<std::string> dataset;
  int64_t count = 0;
  bool json = false;
  addModelOptions(opts, a);
  addTargetOption(opts, &target, "fsim");
  opts.add_options()
      ("dataset", po::value<std::vector<std::string>>(&dataset)->multitoken(), "IDX_IMAGES IDX_LABELS")
      ("count", po::value<int64_t>(&count)->default_value(0), "evaluate the first N images (0: all)")
      ("json", po::bool_switch(&json), "print the results as one JSON object instead");
  po::positional_options_description pos;
  pos.add("model", 1);
  po::variables_map vm;
  if (!parse("eval", "MODEL.onnx|MODEL.tsm --dataset IDX_IMAGES IDX_LABELS [--count N] [--target T] [--calibrate DIR|IDX]",
             args, opts, &pos, &vm))
    return 0;
  if (dataset.size() != 2) throw Error("--dataset", "takes two files: IDX images and IDX labels");
  const hw::Config cfg = hw::Config::load(a.config);
  runtime::Session session(target, cfg);
  double compileSeconds = 0;
  compiler::ir::Graph floatGraph;
  DefaultCalibration fallback{dataset[0], ""};
  const CompiledModel m = compileModelFile(a, cfg, &compileSeconds, &floatGraph, &fallback);
  if (!json && !fallback.used.empty()) std::printf("%s\n", fallback.used.c_str());
  const bool haveFloat = isOnnxFile(a.model);
  const compiler::io::IdxImages images = compiler::io::readIdxImages(dataset[0]);
  const std::vector<uint8_t> labels = compiler::io::readIdxLabels(dataset[1]);
  if (int64_t(labels.size()) != images.count)
    throw Error(dataset[1], "has " + std::to_string(labels.size()) + " labels for " + std::to_string(images.count) + " images");
  if (m.inputs.size() != 1 || m.outputs.size() != 1) throw Error(a.model, "eval needs a model with one input and one output");
  const int64_t n = count > 0 ? std::min(count, images.count) : images.count;
  const bool floatReference = m.quantization.rfind("post-training", 0) == 0 || m.quantization.rfind("float", 0) == 0;
  compiler::model::ModelRunner runner(m, session);
  int64_t top1 = 0, top5 = 0, ftop1 = 0, ftop5 = 0, agree = 0;
  // For a QDQ or QOperator file: how far each output lies from the file's own semantics, in steps
  // of the output's quantization (the scale of the DequantizeLinear it comes from).
  const float step = floatReference || !haveFloat ? 0.0f : outputStep(floatGraph, m.outputs[0].name);
  int64_t stepHist[4] = {0, 0, 0, 0};
  const bool tty = isatty(fileno(stderr)) != 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < n; ++i) {
    const Tensor x = fromIdx(images, i, m.inputs[0], dataset[0]);
    const compiler::model::ModelRunResult r = runner.run({{m.inputs[0].name, x}});
    const std::vector<int> q = topK(asFloats(r.outputs.at(m.outputs[0].name)), 5);
    const int label = labels[size_t(i)];
    top1 += q[0] == label;
    top5 += std::find(q.begin(), q.end(), label) != q.end();
    if (haveFloat) {
      const auto values = compiler::host::evaluate(floatGraph, {{m.inputs[0].name, x}}, compiler::host::FloatKernels::kLibrary);
      const std::vector<int> f = topK(asFloats(values.at(m.outputs[0].name)), 5);
      ftop1 += f[0] == label;
      ftop5 += std::find(f.begin(), f.end(), label) != f.end();
      agree += f[0] == q[0];
      if (step > 0) {
        const std::vector<float> got = asFloats(r.outputs.at(m.outputs[0].name));
        const std::vector<float> want = asFloats(values.at(m.outputs[0].name));
        for (size_t k = 0; k < got.size() && k < want.size(); ++k)
          ++stepHist[std::min<long>(std::lround(std::fabs(double(got[k]) - double(want[k])) / double(step)), 3)];
      }
    }
    // A bar redrawn in place on a terminal; a line per tenth into a log.
    const bool tenth = (i + 1) * 10 / n != i * 10 / n;
    if (!json && (tty ? ((i + 1) % 50 == 0 || i + 1 == n) : tenth)) {
      const int width = 40, done = int(width * (i + 1) / n);
      std::fprintf(stderr, "%s[%s%s] %lld/%lld  top-1 %.2f%%%s", tty ? "\r" : "", std::string(size_t(done), '#').c_str(),
                   std::string(size_t(width - done), ' ').c_str(), (long long)(i + 1), (long long)n,
                   100.0 * double(top1) / double(i + 1), tty ? "" : "\n");
    }
  }
  if (!json && tty) std::fprintf(stderr, "\n");
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const compiler::model::Placement placed = compiler::model::placementOf(m);
  if (json) {
    nlohmann::json j = {{"model", a.model}, {"target", target}, {"config", cfg.name}, {"quantization", m.quantization},
                        {"images", n}, {"seconds", secs},
                        {"tessera", {{"top1", double(top1) / double(n)}, {"top5", double(top5) / double(n)},
                                     {"layers", placed.layers}, {"layers_on_accelerator", placed.acceleratorLayers},
                                     {"accelerator_mac_share", placed.acceleratorMacShare()}}}};
    if (!fallback.used.empty())
      j["calibration"] = {{"samples_from", dataset[0]}, {"note", fallback.used}};
    if (haveFloat)
      j[floatReference ? "host_float" : "host_file_semantics"] = {{"top1", double(ftop1) / double(n)}, {"top5", double(ftop5) / double(n)},
                         {"top1_agreement", double(agree) / double(n)}};
    const int64_t outputs = stepHist[0] + stepHist[1] + stepHist[2] + stepHist[3];
    if (outputs > 0)
      j["output_steps_from_file_semantics"] = {{"step", step}, {"outputs", outputs},
                                               {"exact", double(stepHist[0]) / double(outputs)},
                                               {"one", double(stepHist[1]) / double(outputs)},
                                               {"two", double(stepHist[2]) / double(outputs)},
                                               {"three_or_more", double(stepHist[3]) / double(outputs)}};
    std::printf("%s\n", j.dump(2).c_str());
    return 0;
  }
  std::printf("%lld images from %s, %s on %s (config %s), %.1f s\n", (long long)n, dataset[0].c_str(), m.quantization.c_str(),
              target.c_str(), cfg.name.c_str(), secs);
  std::printf("  Tessera (%s):  top-1 %.2f%%  top-5 %.2f%%\n", placementLabel(placed).c_str(), 100.0 * double(top1) / double(n),
              100.0 * double(top5) / double(n));
  if (haveFloat)
    // For QDQ and QOperator files the host runs the file's own quantized semantics, not a float model.
    std::printf(floatReference ? "  host float model:    top-1 %.2f%%  top-5 %.2f%%   (top-1 agreement %.2f%%)\n"
                               : "  host, file's own semantics: top-1 %.2f%%  top-5 %.2f%%   (top-1 agreement %.2f%%)\n",
                100.0 * double(ftop1) / double(n),
                100.0 * double(ftop5) / double(n), 100.0 * double(agree) / double(n));
  const int64_t outputs = stepHist[0] + stepHist[1] + stepHist[2] + stepHist[3];
  if (outputs > 0) {
    auto pct = [&](int64_t v) { return 100.0 * double(v) / double(outputs); };
    std::printf("  outputs against the file's own semantics (%lld values, step %g): exact %.2f%%, one step %.2f%% "
                "(within one step %.2f%%), two %.2f%%, three or more %.2f%%\n",
                (long long)outputs, double(step), pct(stepHist[0]), pct(stepHist[1]), pct(stepHist[0] + stepHist[1]),
                pct(stepHist[2]), pct(stepHist[3]));
  }
  return 0;
}

int cmdBenchModel(const std::vector<std::string>& args) {
  po::options_description opts("options");
  ModelArgs a;
  std::string target, input;
  bool json = false;
  addModelOptions(opts, a);
  addTargetOption(opts, &target, "tsim");
  opts.add_options()
      ("input,i", po::value<std::string>(&input), "the sample the network runs on (.npy, PNG or PGM)")
      ("json", po::bool_switch(&json), "print the figures as one JSON object");
  po::variables_map vm;
  if (!parse("bench", "--model MODEL.onnx|MODEL.tsm --input FILE [--calibrate DIR|IDX] [--target T] [--config C] [--json]",
             args, opts, nullptr, &vm))
    return 0;
  if (input.empty()) throw Error("tessera bench --model", "needs --input FILE: the sample the network runs on");
  const hw::Config cfg = hw::Config::load(a.config);
  runtime::Session session(target, cfg);
  double compileSeconds = 0;
  const CompiledModel m = compileModelFile(a, cfg, &compileSeconds, nullptr);
  if (m.inputs.size() != 1)
    throw Error(a.model, "takes " + std::to_string(m.inputs.size()) + " inputs; tessera bench --model runs single-input models");
  const std::map<std::string, Tensor> feeds = {{m.inputs[0].name, readInputFile(input, m.inputs[0])}};
  compiler::model::ModelRunner runner(m, session);
  const compiler::model::ModelRunResult r = runner.run(feeds, true);
  const compiler::model::ModelRunResult want = compiler::model::runReference(m, feeds);
  bool ok = true;
  for (const Tensor& o : m.outputs) {
    const Tensor &x = r.outputs.at(o.name), &y = want.outputs.at(o.name);
    ok = ok && x.floats == y.floats && x.ints == y.ints;
  }
  // Per layer kind: accelerator layers by their operator, the host's steps together.
  struct Kind {
    size_t layers = 0;
    uint64_t macs = 0, cycles = 0;
    double hostMicros = 0;
  };
  std::map<std::string, Kind> kinds;
  uint64_t accelMacs = 0;
  double hostMicros = 0;
  for (size_t i = 0; i < m.layers.size(); ++i) {
    const auto& l = m.layers[i];
    Kind& k = kinds[l.onAccelerator ? l.kind : "host"];
    ++k.layers;
    k.macs += l.macs;
    k.cycles += r.layers[i].cycles;
    k.hostMicros += r.layers[i].hostMicros;
    if (l.onAccelerator) accelMacs += l.macs;
    hostMicros += r.layers[i].hostMicros;
  }
  const double lanes = double(cfg.batch) * cfg.blockIn * cfg.blockOut;
  auto utilization = [&](uint64_t macs, uint64_t cycles) { return cycles ? double(macs) / (double(cycles) * lanes) : 0.0; };
  const compiler::model::Placement placement = compiler::model::placementOf(m);
  const double predicted = compiler::model::predictedCycles(m);
  // Signed relative error of the prediction against a timed target's count.
  const double predictionError = r.counters.cycles ? (predicted - double(r.counters.cycles)) / double(r.counters.cycles) : 0.0;
  if (json) {
    nlohmann::json byKind = nlohmann::json::object();
    for (const auto& [name, k] : kinds) {
      nlohmann::json j = {{"layers", k.layers}, {"macs", k.macs}};
      if (name == "host") j["host_seconds"] = k.hostMicros / 1e6;
      else if (k.cycles) j["cycles_run_alone"] = k.cycles, j["gemm_utilization"] = utilization(k.macs, k.cycles);
      byKind[name] = j;
    }
    nlohmann::json out = {{"benchmark", "model"}, {"model", a.model}, {"target", target}, {"config", cfg.name},
                                {"quantization", m.quantization}, {"layers", placement.layers},
                                {"layers_on_accelerator", placement.acceleratorLayers}, {"segments", m.segments.size()},
                                {"macs", placement.macs}, {"accelerator_macs", accelMacs},
                                {"accelerator_mac_share", placement.acceleratorMacShare()}, {"cycles", r.counters.cycles},
                                {"predicted_cycles", predicted},
                                {"gemm_utilization", utilization(accelMacs, r.counters.cycles)},
                                {"host_seconds", hostMicros / 1e6}, {"run_seconds", r.seconds},
                                {"compile_seconds", compileSeconds}, {"bit_exact_with_host_reference", ok}, {"by_kind", byKind}};
    if (r.counters.cycles) out["prediction_error"] = predictionError;
    std::printf("%s\n", out.dump(2).c_str());
    return ok ? 0 : 1;
  }
  std::printf("tessera bench --model %s: target %s, config %s, %s\n", a.model.c_str(), target.c_str(), cfg.name.c_str(),
              m.quantization.c_str());
  std::printf("  %s in %zu segment(s)\n", placementLabel(placement).c_str(), m.segments.size());
  if (r.counters.cycles)
    std::printf("  whole network: %s cycles, GEMM-core utilization %.1f%% (%s accelerator MACs at %.0f per cycle); "
                "predicted %s (%+.1f%%)\n",
                thousands(r.counters.cycles).c_str(), 100.0 * utilization(accelMacs, r.counters.cycles),
                thousands(accelMacs).c_str(), lanes, thousands(static_cast<uint64_t>(predicted)).c_str(),
                100.0 * predictionError);
  else
    std::printf("  whole network: %s counts no cycles (an untimed target; pass --target tsim for them); predicted %s\n",
                target.c_str(), thousands(static_cast<uint64_t>(predicted)).c_str());
  std::printf("  %-10s %7s %16s %14s %8s\n", "kind", "layers", "MACs", "cycles alone", "GEMM%");
  for (const auto& [name, k] : kinds) {
    if (name == "host") continue;
    char util[16] = "-";
    if (k.cycles && k.macs) std::snprintf(util, sizeof util, "%.1f", 100.0 * utilization(k.macs, k.cycles));
    std::printf("  %-10s %7zu %16s %14s %8s\n", name.c_str(), k.layers, thousands(k.macs).c_str(),
                k.cycles ? thousands(k.cycles).c_str() : "-", util);
  }
  if (kinds.count("host"))
    std::printf("  %-10s %7zu %16s %14s   host time %.1f ms\n", "host", kinds["host"].layers, thousands(kinds["host"].macs).c_str(),
                "-", kinds["host"].hostMicros / 1e3);
  std::printf("  run %.3f s wall on %s; compile %.3f s; check against the host reference: %s\n", r.seconds, target.c_str(),
              compileSeconds, ok ? "bit-exact" : "MISMATCH");
  return ok ? 0 : 1;
}

}  // namespace tessera::cli
