// tessera explore: co-design for a model and a part: the space searched by prediction, the best configs verified with Yosys and tsim.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli.h"
#include "model_inputs.h"
#include "model_cache.h"
#include "progress.h"
#include "subprocess.h"
#include "tessera/compiler/explore/explore.h"
#include "tessera/compiler/io/tensor_io.h"
#include "tessera/compiler/graph/compile.h"
#include "tessera/compiler/model/run.h"
#include "tessera/compiler/onnx/import.h"
#include "tessera/hw/area.h"
#include "tessera/hw/config_space.h"
#include "tessera/hw/generate.h"
#include "tessera/runtime/session.h"
#include "tessera/support/error.h"
#include "tessera/support/format.h"

#ifndef TESSERA_SOURCE_DIR
#define TESSERA_SOURCE_DIR ""
#endif

namespace tessera::cli {

namespace fs = std::filesystem;
namespace ex = compiler::explore;
using compiler::ir::DType;
using compiler::ir::Tensor;
using compiler::model::CompiledModel;

namespace {

// LUTs a Xilinx LUT-RAM or shift-register cell occupies, as scripts/fpga/yosys_report.py counts them
// (ctest explore_verified_front checks the two counts agree).
const std::pair<const char*, int> kLutRamLuts[] = {
    {"RAM32X1S", 1}, {"RAM64X1S", 1}, {"RAM128X1S", 2}, {"RAM256X1S", 4}, {"RAM512X1S", 8}, {"RAM32X1D", 2},
    {"RAM64X1D", 2}, {"RAM128X1D", 4}, {"RAM256X1D", 8}, {"RAM32M", 4},    {"RAM64M", 4},    {"RAM32M16", 8},
    {"RAM64M8", 8},  {"SRL16E", 1},    {"SRLC16E", 1},   {"SRLC32E", 1}};

void writeFile(const fs::path& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  if (!f || !(f << text)) throw Error(path.string(), "cannot be written");
}

std::string readFile(const fs::path& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// A verified point: Yosys' counts and tsim's cycles, or why each was not measured.
struct Verified {
  bool haveYosys = false, haveTsim = false, bitExact = false;
  hw::Resources yosys;
  double tsimCycles = 0;
  std::string yosysNote, tsimNote;
  std::string tsimModels;  // where tsim's model came from when this process's build had none

};

// Yosys synth_xilinx of the RTL for `cfg` (the script of scripts/fpga/yosys_report.py), its cells
// counted by kind.
void verifyWithYosys(const hw::Config& cfg, const hw::Part& part, const std::string& yosys, const fs::path& rtl,
                     const fs::path& work, Verified* v) {
  std::vector<std::string> sources;
  std::error_code ec;
  if (fs::is_directory(rtl, ec))
    for (const auto& e : fs::directory_iterator(rtl))
      if (e.path().extension() == ".sv") sources.push_back(e.path().string());
  if (sources.empty()) {
    v->yosysNote = "not run: no RTL sources in " + rtl.string() + " (pass --rtl DIR)";
    return;
  }
  std::sort(sources.begin(), sources.end());
  fs::create_directories(work);
  writeFile(work / "tessera_config.svh", hw::generateSvInclude(cfg));
  std::string script = "read_verilog -sv -I" + work.string() + " -I" + rtl.string();
  for (const std::string& s : sources) script += " " + s;
  script += "\nhierarchy -check -top tessera_top\ndelete -port tessera_top/trace_*\n";
  script += "synth_xilinx -family " + part.family + " -top tessera_top\n";
  // Flattened (no optimization after it) the top's cells are the hierarchy's sum; Yosys 0.23's
  // `stat -json -top` writes its hierarchy tree into the JSON, so the top is counted flat instead.
  script += "flatten\ntee -q -o " + (work / "stat.json").string() + " stat -json tessera_top\n";
  writeFile(work / "synth.ys", script);
  const int rc = runTool({yosys, "-q", "-s", (work / "synth.ys").string()}, (work / "yosys.log").string());
  if (rc != 0) {
    v->yosysNote = rc == 127 ? "not run: " + yosys + " not found (scripts/install-deps.sh installs Yosys)"
                             : "Yosys failed (exit " + std::to_string(rc) + "): see " + (work / "yosys.log").string();
    return;
  }
  nlohmann::json stat;
  std::string text = readFile(work / "stat.json");
  // Yosys 0.23 leaves a comma after the modules' object when no "design" section follows it.
  const size_t close = text.find_last_of('}');
  if (close != std::string::npos) {
    const size_t before = text.find_last_not_of(" \t\r\n", close == 0 ? 0 : close - 1);
    if (before != std::string::npos && text[before] == ',') text.erase(before, 1);
  }
  try {
    stat = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    v->yosysNote = "Yosys' statistics " + (work / "stat.json").string() + " are not JSON: " + e.what();
    return;
  }
  if (!stat.contains("modules") || !stat["modules"].contains("\\tessera_top")) {
    v->yosysNote = "Yosys' statistics " + (work / "stat.json").string() + " have no module tessera_top";
    return;
  }
  const auto& cells = stat["modules"]["\\tessera_top"]["num_cells_by_type"];
  const bool ultra = part.family == "xcup";
  for (auto it = cells.begin(); it != cells.end(); ++it) {
    const std::string type = it.key();
    const double n = it.value().get<double>();
    if (type.size() == 4 && type.compare(0, 3, "LUT") == 0 && type[3] >= '1' && type[3] <= '6') v->yosys.lut += n;
    else if (type == "FDRE" || type == "FDSE" || type == "FDCE" || type == "FDPE" || type == "FDRE_1" || type == "FDSE_1" ||
             type == "FDCE_1" || type == "FDPE_1")
      v->yosys.ff += n;
    else if (type == (ultra ? "RAMB36E2" : "RAMB36E1")) v->yosys.bram36 += n;
    else if (type == (ultra ? "RAMB18E2" : "RAMB18E1")) v->yosys.bram36 += n / 2;
    else if (type == (ultra ? "DSP48E2" : "DSP48E1")) v->yosys.dsp += n;
    else
      for (const auto& [name, luts] : kLutRamLuts)
        if (type == name) v->yosys.lut += n * luts;
  }
  v->haveYosys = true;
}

// A seeded random input for `want` (cycles on the accelerator do not depend on the values).
Tensor randomInput(const Tensor& want) {
  Tensor t = want;
  std::mt19937 rng(1);
  const int64_t n = want.elements();
  t.floats.clear();
  t.ints.clear();
  if (want.dtype == DType::kFloat32) {
    std::uniform_real_distribution<float> d(0.0f, 1.0f);
    for (int64_t i = 0; i < n; ++i) t.floats.push_back(d(rng));
  } else {
    std::uniform_int_distribution<int> d(0, 127);
    for (int64_t i = 0; i < n; ++i) t.ints.push_back(d(rng));
  }
  return t;
}

void verifyOnTsim(const CompiledModel& m, const hw::Config& cfg, const std::map<std::string, Tensor>& feeds, Verified* v) {
  try {
    runtime::Session session("tsim", cfg);
    compiler::model::ModelRunner runner(m, session);
    const compiler::model::ModelRunResult r = runner.run(feeds, true);
    const compiler::model::ModelRunResult want = compiler::model::runReference(m, feeds);
    v->bitExact = true;
    for (const Tensor& o : m.outputs) {
      const Tensor &x = r.outputs.at(o.name), &y = want.outputs.at(o.name);
      v->bitExact = v->bitExact && x.floats == y.floats && x.ints == y.ints;
    }
    v->tsimCycles = static_cast<double>(r.counters.cycles);
    v->haveTsim = true;
  } catch (const std::exception& e) {
    v->tsimNote = std::string("not run: ") + e.what();
  }
}

// Whether this process's tsim has no model for `cfg` (its refusal says so and names the configs it
// has); a config the space refuses for the RTL is not a missing model.
bool tsimLacksModel(const hw::Config& cfg) {
  try {
    runtime::Session session("tsim", cfg);
    return false;
  } catch (const Error& e) {
    return std::string(e.what()).find("is not built for config") != std::string::npos;
  }
}

// The same verification in a child `tessera bench --json` whose plugin search path puts the model
// cache's tsim first (this process has loaded its build's tsim, which lacks the model).
void verifyOnCachedTsim(const CompiledModel& m, const hw::Config& cfg, const std::map<std::string, Tensor>& feeds,
                        const std::string& pluginDir, const fs::path& work, Verified* v) {
  fs::create_directories(work);
  const fs::path tsm = work / "model.tsm", sample = work / "input.npy", config = work / "config.json", log = work / "tsim.log";
  m.save(tsm.string(), true);
  compiler::io::writeNpy(sample.string(), feeds.begin()->second, true);
  writeFile(config, cfg.toJson() + "\n");
  const char* old = std::getenv("TESSERA_PLUGIN_PATH");
  const int rc = runTool({"/proc/self/exe", "bench", "--model", tsm.string(), "--config", config.string(), "--input", sample.string(),
                          "--target", "tsim", "--json"},
                         log.string(), {{"TESSERA_PLUGIN_PATH", pluginDir + (old && *old ? ":" + std::string(old) : "")}});
  const std::string text = readFile(log);
  const size_t open = text.find('{'), close = text.rfind('}');
  if (rc != 0 || open == std::string::npos || close == std::string::npos) {
    v->tsimNote = "not run: tessera bench on the cached model failed (exit " + std::to_string(rc) + "): see " + log.string();
    return;
  }
  try {
    const nlohmann::json j = nlohmann::json::parse(text.substr(open, close - open + 1));
    v->tsimCycles = j.at("cycles").get<double>();
    v->bitExact = j.at("bit_exact_with_host_reference").get<bool>();
    v->haveTsim = true;
    v->tsimModels = pluginDir;
  } catch (const nlohmann::json::exception& e) {
    v->tsimNote = "not run: tessera bench on the cached model printed no figures (" + std::string(e.what()) + "): see " + log.string();
  }
}

std::string resourcesText(const hw::Resources& r) {
  char buf[128];
  std::snprintf(buf, sizeof buf, "%s LUT %s FF %.0f DSP %g BRAM36", thousands(uint64_t(std::lround(r.lut))).c_str(),
                thousands(uint64_t(std::lround(r.ff))).c_str(), r.dsp, r.bram36);
  return buf;
}

nlohmann::json resourcesJson(const hw::Resources& r) {
  return {{"lut", r.lut}, {"ff", r.ff}, {"dsp", r.dsp}, {"bram36", r.bram36}};
}

// The front as a gnuplot script: cycles against LUTs and against DSPs, the part's capacity a line.
// The front is over cycles, LUTs, DSPs and block RAM at once, so its points are marked, not joined.
std::string plotScript(const ex::Exploration& e, const hw::Part& part, const std::string& model, const fs::path& data,
                       const fs::path& svg) {
  double maxLut = double(part.luts), maxDsp = double(part.dsps);
  for (const ex::Candidate& c : e.candidates)
    if (c.evaluated) maxLut = std::max(maxLut, c.resources.lut), maxDsp = std::max(maxDsp, c.resources.dsp);
  std::ostringstream p;
  p << "# gnuplot script tessera explore wrote: the explored configs of " << model << " on " << part.name << "\n";
  p << "set terminal svg size 1100,480 dynamic noenhanced font 'sans,11'\nset output '" << svg.string() << "'\n";
  p << "set multiplot layout 1,2 title '" << fs::path(model).filename().string() << " on " << part.name
    << ": predicted cycles of the configs that fit (dots), the Pareto front (circles), verified (squares: tsim cycles, Yosys counts)'\n";
  p << "set ylabel 'cycles per inference'\nset grid\nset key top right\nset format y '%.1s%c'\nset yrange [0:*]\n";
  for (int panel = 0; panel < 2; ++panel) {
    const int col = panel == 0 ? 3 : 5;
    const double capacity = panel == 0 ? double(part.luts) : double(part.dsps);
    p << "set xlabel '" << (panel == 0 ? "LUTs" : "DSPs") << "'\nset xrange [0:" << 1.08 * (panel == 0 ? maxLut : maxDsp) << "]\n";
    p << "set arrow 1 from first " << capacity << ", graph 0 to first " << capacity << ", graph 1 nohead lw 2 lc rgb '#cc0000'\n";
    p << "set label 1 '" << part.name << " capacity' at first " << capacity << ", graph 0.05 right offset -0.5,0 tc rgb '#cc0000'\n";
    p << "plot '" << data.string() << "' index 0 using " << col << ":2 with points pt 7 ps 0.5 lc rgb '#7777aa' title 'predicted', "
      << "'' index 1 using " << col << ":2 with points pt 6 ps 1.5 lw 2 lc rgb '#0044aa' title 'Pareto front', "
      << "'' index 2 using " << col << ":2 with points pt 5 ps 1.2 lc rgb '#009900' title 'verified'\n";
    p << "unset arrow 1\nunset label 1\n";
  }
  p << "unset multiplot\n";
  return p.str();
}

}  // namespace

int cmdExplore(const std::vector<std::string>& args) {
  po::options_description opts("options");
  std::string areaFile, model, partName, calibrate, objectiveText = "latency", out, pointsText, verifyText = "yosys,tsim", input;
  std::string yosys = "yosys", rtl = std::string(TESSERA_SOURCE_DIR).empty() ? "rtl" : std::string(TESSERA_SOURCE_DIR) + "/rtl";
  std::string modelCacheDir, source;
  int budget = 40, top = 3, calibrationCount = 64;
  bool json = false, force = false, noModelBuild = false;
  opts.add_options()
      ("model", po::value<std::string>(&model), "the ONNX model (compiled for every config the search evaluates)")
      ("part", po::value<std::string>(&partName), "the FPGA part: xc7z020, xc7z010, xczu3eg, xczu7ev (hw/configs/space/parts.json)")
      ("calibrate", po::value<std::string>(&calibrate), "DIR|IDX|NPY: samples to quantize a float model (as tessera compile)")
      ("calibration-count", po::value<int>(&calibrationCount)->default_value(64), "samples of --calibrate used")
      ("objective", po::value<std::string>(&objectiveText)->default_value("latency"),
       "latency (seconds per inference), throughput (images per second) or latency-per-lut (seconds x LUTs)")
      ("budget", po::value<int>(&budget)->default_value(40), "model compilations (cycle predictions) the search may spend")
      ("top", po::value<int>(&top)->default_value(3), "the best configs verified with --verify (0: none)")
      ("verify", po::value<std::string>(&verifyText)->default_value("yosys,tsim"),
       "what verifies the best configs: yosys (real resource counts), tsim (real cycles), both, or none")
      ("points", po::value<std::string>(&pointsText), "POINT,...: search only these coarse points (tessera info --space)")
      ("input,i", po::value<std::string>(&input), "the sample tsim runs (default: a seeded random tensor; cycles do not depend on it)")
      ("out,o", po::value<std::string>(&out), "DIR: the front (table, plot), the chosen config, its compiled model and FPGA commands")
      ("force", po::bool_switch(&force), "write into --out even if it holds a previous exploration")
      ("area-model", po::value<std::string>(&areaFile), "FILE: an area model tessera-area-fit wrote (default: the shipped hw/configs/space/area.json)")
      ("yosys", po::value<std::string>(&yosys)->default_value("yosys"), "the Yosys executable")
      ("rtl", po::value<std::string>(&rtl)->default_value(rtl), "the RTL sources Yosys synthesizes")
      ("model-cache", po::value<std::string>(&modelCacheDir),
       "DIR: where tsim's models for configs this build lacks are built and kept (as tessera build-models)")
      ("source", po::value<std::string>(&source), "DIR: Tessera's source tree those models are built from")
      ("no-model-build", po::bool_switch(&noModelBuild), "never build a model: configs tsim lacks stay unverified on tsim")
      ("json", po::bool_switch(&json), "print the results as one JSON object");
  po::positional_options_description pos;
  pos.add("model", 1);
  po::variables_map vm;
  if (!parse("explore", "MODEL.onnx --part P [--calibrate DIR] [--objective latency|throughput|latency-per-lut] [--budget N] "
                        "[--top K] [--verify yosys,tsim|none] [--out DIR] [--json]",
             args, opts, &pos, &vm))
    return 0;
  if (model.empty()) throw Error("tessera explore", "needs MODEL.onnx");
  if (partName.empty()) throw Error("tessera explore", "needs --part P (one of hw/configs/space/parts.json: xc7z020, xc7z010, xczu3eg, xczu7ev)");
  if (!isOnnxFile(model))
    throw Error(model, "is not an ONNX file; tessera explore compiles the model for every config it evaluates, so it takes the ONNX model");
  if (top < 0) throw Error("--top " + std::to_string(top), "must be 0 or more");
  if (calibrationCount <= 0) throw Error("--calibration-count", "must be at least 1");
  bool verifyYosys = false, verifyTsim = false;
  {
    std::stringstream list(verifyText);
    for (std::string item; std::getline(list, item, ',');) {
      if (item == "yosys") verifyYosys = true;
      else if (item == "tsim") verifyTsim = true;
      else if (item != "none") throw Error("--verify " + verifyText, "'" + item + "' is not yosys, tsim or none");
    }
  }
  ex::Options o;
  o.part = hw::partNamed(partName);
  o.objective = ex::parseObjective(objectiveText, "--objective");
  o.budget = budget;
  {
    std::stringstream list(pointsText);
    for (std::string p; std::getline(list, p, ',');)
      if (!p.empty()) o.points.push_back(p);
  }
  if (!out.empty() && fs::exists(fs::path(out) / "explore.json") && !force)
    throw Error(out, "holds a previous exploration (explore.json); pass --force to overwrite it or choose another --out");
  if (!areaFile.empty() && !fs::is_regular_file(areaFile)) throw Error("--area-model " + areaFile, "no such file");
  const hw::AreaModel area = areaFile.empty() ? hw::AreaModel::shipped() : hw::AreaModel::fromJson(readFile(areaFile), areaFile);
  const hw::ConfigSpace space = hw::ConfigSpace::shipped();
  if (!area.hasFamily(o.part.family))
    throw Error("--part " + o.part.name, "is an " + o.part.family + " part, and the area model (hw/configs/space/area.json) "
                                         "has no fitted model for family " + o.part.family + " yet (tessera-area-fit fits one from Yosys reports; docs/explore.md" +
                                         (o.part.family == "ice40" ? ", 'Parts': no point of the space fits an iCE40 UP5K" : "") + ")");

  const compiler::ir::Graph graph = compiler::onnx::importOnnx(model);
  compiler::graph::Calibration calibration;
  compiler::graph::CompileOptions co;
  if (!calibrate.empty()) {
    calibration = loadCalibration(calibrate, describeInputs(graph), calibrationCount);
    co.calibration = &calibration;
  } else if (compiler::graph::calibrationApplies(graph)) {
    throw Error(model, "is a float model: pass --calibrate DIR|IDX (samples to quantize it to int8 for the accelerator); "
                       "explore predicts the accelerator's cycles, which a float model run on the host does not have");
  }
  const CompiledModel shape = describeInputs(graph);
  if (!shape.inputs.empty() && !shape.inputs[0].shape.empty() && shape.inputs[0].shape[0] > 0)
    o.imagesPerRun = static_cast<int>(shape.inputs[0].shape[0]);

  auto compileFor = [&](const hw::Config& cfg) { return compiler::graph::compile(cfg, graph, co); };
  ProgressLine progress(!json && ProgressLine::stderrIsTerminal());
  const ex::Exploration e = ex::explore(
      space, area, o,
      [&](const hw::Config& cfg) {
        const CompiledModel m = compileFor(cfg);
        if (m.segments.empty()) throw Error(model, "no layer runs on the accelerator for config " + cfg.name);
        return compiler::model::predictedCycles(m);
      },
      [&](int done, int of, const std::string& name) {
        progress.set("explore: " + std::to_string(done) + "/" + std::to_string(of) + " configs evaluated (last " + name + ")");
      });
  progress.set("");
  if (e.ranking.empty()) {
    std::string why;
    for (const ex::Candidate& c : e.candidates)
      if (!c.pruned.empty()) why += "\n  " + c.point + ": " + c.pruned;
    throw Error(model, "has no config of the space that fits " + o.part.name + " and compiles it:" + why);
  }

  // Verification of the best configs.
  std::vector<size_t> best(e.ranking.begin(), e.ranking.begin() + std::min<size_t>(size_t(top), e.ranking.size()));
  std::vector<Verified> verified(best.size());
  const fs::path outDir = out.empty() ? fs::path() : fs::path(out);
  const fs::path workRoot = out.empty() ? fs::temp_directory_path() / ("tessera-explore-" + std::to_string(::getpid())) : outDir / "verify";
  std::map<std::string, Tensor> feeds;
  if (verifyTsim && !best.empty()) {
    if (shape.inputs.size() != 1) throw Error(model, "takes several inputs; tessera explore verifies single-input models on tsim");
    feeds[shape.inputs[0].name] = input.empty() ? randomInput(shape.inputs[0]) : readInputFile(input, shape.inputs[0]);
  }
  // tsim's models for the configs this build lacks, built once for all of them into the model cache.
  std::vector<bool> lacking(best.size(), false);
  std::vector<hw::Config> toBuild;
  for (size_t k = 0; k < best.size() && verifyTsim; ++k)
    if ((lacking[k] = tsimLacksModel(e.candidates[best[k]].config))) toBuild.push_back(e.candidates[best[k]].config);
  std::string cachedPlugins, cacheProblem = "this build's tsim has no model for it and --no-model-build was given";
  if (!toBuild.empty() && !noModelBuild) {
    try {
      cachedPlugins = buildModels(modelCache(modelCacheDir, source), toBuild,
                                  [&](const std::string& s) { progress.set("explore: " + s); })
                          .pluginDir;
    } catch (const Error& err) {
      cacheProblem = std::string("this build's tsim has no model for it, and building one failed: ") + err.what();
    }
  }
  for (size_t k = 0; k < best.size(); ++k) {
    const ex::Candidate& c = e.candidates[best[k]];
    Verified& v = verified[k];
    if (verifyTsim && lacking[k] && cachedPlugins.empty()) {
      v.tsimNote = "not run: " + cacheProblem;
    } else if (verifyTsim && lacking[k]) {
      progress.set("explore: tsim runs " + c.config.name + " (model from the cache)");
      verifyOnCachedTsim(compileFor(c.config), c.config, feeds, cachedPlugins, workRoot / c.config.name, &v);
    } else if (verifyTsim) {
      progress.set("explore: tsim runs " + c.config.name);
      verifyOnTsim(compileFor(c.config), c.config, feeds, &v);
    } else {
      v.tsimNote = "not run (--verify)";
    }
    if (verifyYosys) {
      progress.set("explore: Yosys synthesizes " + c.config.name + " for " + o.part.family);
      verifyWithYosys(c.config, o.part, yosys, rtl, workRoot / c.config.name, &v);
    } else {
      v.yosysNote = "not run (--verify)";
    }
  }
  progress.set("");
  if (out.empty() && fs::exists(workRoot)) fs::remove_all(workRoot);

  const ex::Candidate& chosen = e.candidates[e.ranking.front()];
  const Verified* chosenV = best.empty() ? nullptr : &verified.front();
  const bool chosenFitsVerified = !chosenV || !chosenV->haveYosys || hw::fitOf(chosenV->yosys, o.part).fits;

  // The results as JSON (printed with --json, written to DIR/explore.json).
  nlohmann::json j = {{"model", model}, {"part", o.part.name}, {"family", o.part.family}, {"clock_mhz", o.part.clockMhz},
                      {"clock_basis", o.part.clockBasis}, {"objective", ex::objectiveName(o.objective)},
                      {"budget", o.budget}, {"compilations", e.compilations}, {"images_per_run", o.imagesPerRun},
                      {"images_per_second_basis", "accelerator cycles only, at the part's assumed clock; the model's host steps are not counted"}};
  nlohmann::json cands = nlohmann::json::array();
  for (size_t i = 0; i < e.candidates.size(); ++i) {
    const ex::Candidate& c = e.candidates[i];
    nlohmann::json cj = {{"point", c.point}, {"config", c.config.name}};
    if (c.pruned.empty() || c.evaluated) {
      cj["buffers_log2_bytes"] = {{"uop", c.config.logUopBuffSize}, {"inp", c.config.logInpBuffSize},
                                  {"wgt", c.config.logWgtBuffSize}, {"acc", c.config.logAccBuffSize}};
      cj["predicted_resources"] = resourcesJson(c.resources);
      cj["fits"] = c.fit.fits;
    }
    if (c.evaluated) {
      cj["predicted_cycles"] = c.predictedCycles;
      cj["predicted_images_per_second"] = ex::imagesPerSecond(c.predictedCycles, o);
      cj["pareto"] = c.pareto;
    }
    if (!c.pruned.empty()) cj["pruned"] = c.pruned;
    const auto it = std::find(best.begin(), best.end(), i);
    if (it != best.end()) {
      const Verified& v = verified[size_t(it - best.begin())];
      cj["rank"] = it - best.begin() + 1;
      if (v.haveTsim) cj["tsim_cycles"] = v.tsimCycles, cj["tsim_bit_exact"] = v.bitExact;
      else cj["tsim_note"] = v.tsimNote;
      if (!v.tsimModels.empty()) cj["tsim_models"] = v.tsimModels;
      if (v.haveYosys) cj["yosys_resources"] = resourcesJson(v.yosys), cj["yosys_fits"] = hw::fitOf(v.yosys, o.part).fits;
      else cj["yosys_note"] = v.yosysNote;
    }
    cands.push_back(cj);
  }
  j["candidates"] = cands;
  j["chosen"] = chosen.config.name;

  if (!out.empty()) {
    fs::create_directories(outDir);
    writeFile(outDir / "chosen.json", chosen.config.toJson());
    const CompiledModel m = compileFor(chosen.config);
    m.save((outDir / "model.tsm").string(), true);
    // The table of every evaluated config, and the plot's data: predicted, Pareto, verified.
    std::ostringstream tsv, data;
    tsv << "config\tpoint\tpredicted_cycles\tpredicted_lut\tpredicted_ff\tpredicted_dsp\tpredicted_bram36\tfits\tpareto\t"
           "tsim_cycles\tyosys_lut\tyosys_ff\tyosys_dsp\tyosys_bram36\tnote\n";
    for (size_t i = 0; i < e.candidates.size(); ++i) {
      const ex::Candidate& c = e.candidates[i];
      const auto it = std::find(best.begin(), best.end(), i);
      const Verified* v = it != best.end() ? &verified[size_t(it - best.begin())] : nullptr;
      tsv << c.config.name << "\t" << c.point << "\t";
      if (c.evaluated) tsv << c.predictedCycles;
      tsv << "\t" << c.resources.lut << "\t" << c.resources.ff << "\t" << c.resources.dsp << "\t" << c.resources.bram36 << "\t"
          << (c.fit.fits ? "yes" : "no") << "\t" << (c.pareto ? "yes" : "no") << "\t";
      if (v && v->haveTsim) tsv << v->tsimCycles;
      tsv << "\t";
      if (v && v->haveYosys) tsv << v->yosys.lut << "\t" << v->yosys.ff << "\t" << v->yosys.dsp << "\t" << v->yosys.bram36;
      else tsv << "\t\t\t";
      tsv << "\t" << c.pruned << "\n";
    }
    writeFile(outDir / "front.tsv", tsv.str());
    for (const ex::Candidate& c : e.candidates)
      if (c.evaluated && c.fit.fits)
        data << c.config.name << " " << c.predictedCycles << " " << c.resources.lut << " " << c.resources.ff << " "
             << c.resources.dsp << "\n";
    data << "\n\n";
    std::vector<const ex::Candidate*> front;
    for (const ex::Candidate& c : e.candidates)
      if (c.pareto) front.push_back(&c);
    std::sort(front.begin(), front.end(), [](const ex::Candidate* a, const ex::Candidate* b) { return a->resources.lut < b->resources.lut; });
    for (const ex::Candidate* c : front)
      data << c->config.name << " " << c->predictedCycles << " " << c->resources.lut << " " << c->resources.ff << " "
           << c->resources.dsp << "\n";
    data << "\n\n";
    bool anyVerified = false;
    for (size_t k = 0; k < best.size(); ++k) {
      const Verified& v = verified[k];
      if (!v.haveTsim && !v.haveYosys) continue;
      const ex::Candidate& c = e.candidates[best[k]];
      const hw::Resources& r = v.haveYosys ? v.yosys : c.resources;
      data << c.config.name << " " << (v.haveTsim ? v.tsimCycles : c.predictedCycles) << " " << r.lut << " " << r.ff << " "
           << r.dsp << "\n";
      anyVerified = true;
    }
    if (!anyVerified) data << "none nan nan nan nan\n";
    writeFile(outDir / "front.dat", data.str());
    writeFile(outDir / "front.gp", plotScript(e, o.part, model, outDir / "front.dat", outDir / "front.svg"));
    const int rc = runTool({"gnuplot", (outDir / "front.gp").string()}, (outDir / "gnuplot.log").string());
    j["plot"] = rc == 0 ? (outDir / "front.svg").string()
                        : std::string(rc == 127 ? "not drawn: gnuplot not found (scripts/install-deps.sh installs gnuplot-nox)"
                                                : "not drawn: gnuplot failed, see " + (outDir / "gnuplot.log").string());
    // The FPGA flows for the chosen config.
    std::ostringstream flow;
    flow << "# FPGA flows for " << chosen.config.name << " (tessera explore " << model << " --part " << o.part.name << ")\n\n";
    flow << "Resource report with Yosys (no Vivado needed; " << (outDir / "generated").string()
         << " holds the config's generated headers):\n\n"
         << "    python3 scripts/fpga/yosys_report.py --gen " << (outDir / "generated").string()
         << " --rtl rtl --boards scripts/fpga/boards.tcl --parts hw/configs/space/parts.json --family " << o.part.family
         << " --work " << (outDir / "yosys").string() << " --check\n\n";
    if (!o.part.flowBoard.empty())
      flow << "Bitstream with Vivado (RTL flow; FLOW=hls for the HLS design):\n\n    CONFIG=" << (outDir / "chosen.json").string()
           << " scripts/fpga/build.sh " << o.part.flowBoard << "\n\n";
    else
      flow << "No board of scripts/fpga/boards.tcl carries " << o.part.name << ": add one to build a bitstream.\n\n";
    flow << "Run the compiled model (" << (outDir / "model.tsm").string() << ") on tsim, when tsim is built for this config "
         << "(cmake -DTESSERA_TSIM_CONFIGS=...;" << " a config runs on the model built for equal parameters):\n\n"
         << "    tessera bench --model " << (outDir / "model.tsm").string() << " --config " << (outDir / "chosen.json").string()
         << " --target tsim --input SAMPLE\n";
    writeFile(outDir / "FLOW.md", flow.str());
    fs::create_directories(outDir / "generated");
    writeFile(outDir / "generated/tessera_config.svh", hw::generateSvInclude(chosen.config));
    writeFile(outDir / "generated/tessera_config.tcl", hw::generateTcl(chosen.config));
    writeFile(outDir / "generated/tessera_config.h", hw::generateCppHeader(chosen.config));
    writeFile(outDir / "generated/hls_config.h", hw::generateHlsHeader(chosen.config));
    writeFile(outDir / "explore.json", j.dump(2) + "\n");
  }

  if (json) {
    std::printf("%s\n", j.dump(2).c_str());
    return chosenFitsVerified ? 0 : 1;
  }
  size_t evaluated = 0, fitting = 0;
  for (const ex::Candidate& c : e.candidates) {
    evaluated += c.evaluated;
    fitting += c.evaluated && c.fit.fits;
  }
  std::printf("tessera explore %s on %s (%s, %s; clock %.0f MHz, %s)\n", model.c_str(), o.part.name.c_str(), o.part.family.c_str(),
              o.part.boards.c_str(), o.part.clockMhz, o.part.clockBasis.c_str());
  std::printf("  objective %s; %d of %d compilations spent; %zu configs evaluated, %zu fit\n", ex::objectiveName(o.objective).c_str(),
              e.compilations, o.budget, evaluated, fitting);
  std::printf("\n  %-38s %14s %10s %38s  %s\n", "config (GEMM core)", "pred. cycles", "accel. img/s", "predicted resources", "");
  for (size_t r = 0; r < e.ranking.size(); ++r) {
    const ex::Candidate& c = e.candidates[e.ranking[r]];
    char core[32];
    std::snprintf(core, sizeof core, " (%dx%dx%d)", c.config.batch, c.config.blockIn, c.config.blockOut);
    std::printf("  %-38s %14s %10.1f %38s  %s\n", (c.config.name + core).c_str(),
                thousands(uint64_t(c.predictedCycles)).c_str(), ex::imagesPerSecond(c.predictedCycles, o),
                resourcesText(c.resources).c_str(), c.pareto ? "Pareto" : "");
  }
  size_t prunedCount = 0;
  for (const ex::Candidate& c : e.candidates) prunedCount += !c.pruned.empty();
  if (prunedCount) {
    // Points pruned for the same reason are listed together (the reason without the point's own name).
    std::vector<std::pair<std::string, std::vector<std::string>>> groups;
    for (const ex::Candidate& c : e.candidates) {
      if (c.pruned.empty()) continue;
      std::string reason = c.pruned;
      const std::string self = c.point + ": ";
      for (size_t at; (at = reason.find(self)) != std::string::npos;) reason.erase(at, self.size());
      const std::string name = c.config.name.empty() ? c.point : c.config.name;
      auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == reason; });
      if (it == groups.end()) groups.push_back({reason, {name}});
      else it->second.push_back(name);
    }
    std::printf("\n  not evaluated (%zu):\n", prunedCount);
    for (const auto& [reason, names] : groups) {
      std::string list;
      for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
      std::printf("    %s: %s\n", list.c_str(), reason.c_str());
    }
  }
  if (!best.empty()) std::printf("\n  verified (the best %zu):\n", best.size());
  for (size_t k = 0; k < best.size(); ++k) {
    const ex::Candidate& c = e.candidates[best[k]];
    const Verified& v = verified[k];
    std::printf("  %zu. %s\n", k + 1, c.config.name.c_str());
    if (v.haveTsim)
      std::printf("       tsim:  %s cycles (predicted %s, %+.1f%%), %.1f images/s of accelerator time at an assumed %.0f MHz, %s\n",
                  thousands(uint64_t(v.tsimCycles)).c_str(), thousands(uint64_t(c.predictedCycles)).c_str(),
                  100.0 * (c.predictedCycles - v.tsimCycles) / v.tsimCycles, ex::imagesPerSecond(v.tsimCycles, o),
                  o.part.clockMhz, v.bitExact ? "bit-exact with the host reference" : "MISMATCH with the host reference");
    if (!v.tsimModels.empty()) std::printf("              (tsim's model built on request, from %s)\n", v.tsimModels.c_str());
    else
      std::printf("       tsim:  %s\n", v.tsimNote.c_str());
    if (v.haveYosys) {
      const hw::Fit f = hw::fitOf(v.yosys, o.part);
      std::printf("       Yosys: %s (predicted %s); %s\n", resourcesText(v.yosys).c_str(), resourcesText(c.resources).c_str(),
                  f.fits ? ("fits " + o.part.name).c_str() : ("does not fit: " + f.overflow).c_str());
    } else {
      std::printf("       Yosys: %s\n", v.yosysNote.c_str());
    }
  }
  std::printf("\n  chosen: %s (GEMM core %dx%dx%d, buffers uop/inp/wgt/acc 2^%d/2^%d/2^%d/2^%d bytes)\n", chosen.config.name.c_str(),
              chosen.config.batch, chosen.config.blockIn, chosen.config.blockOut, chosen.config.logUopBuffSize,
              chosen.config.logInpBuffSize, chosen.config.logWgtBuffSize, chosen.config.logAccBuffSize);
  if (!out.empty())
    std::printf("  wrote %s: chosen.json, model.tsm, front.tsv, %s, FLOW.md, generated/, explore.json\n", out.c_str(),
                j["plot"].get<std::string>().rfind("not drawn", 0) == 0 ? "front.gp (plot not drawn: see explore.json)" : "front.svg");
  if (!chosenFitsVerified) {
    std::printf("  the chosen config does not fit %s by Yosys' count: the area model was wrong for it\n", o.part.name.c_str());
    return 1;
  }
  return 0;
}

}  // namespace tessera::cli
