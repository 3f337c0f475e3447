// tessera info: a configuration, its derived parameters and the instruction bit layouts.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>

#include "cli.h"
#include "tessera/hw/config.h"
#include "tessera/hw/config_space.h"
#include "tessera/support/error.h"
#include "tessera/hw/generate.h"
#include "tessera/hw/isa.h"

namespace tessera::cli {

namespace {

// --space: the explored configuration space, every coarse point with its buffers, or why it has
// none, and the targets that cannot run it; --emit writes the points as config files. With
// `draw` (--draw N --seed S), N configs drawn at random from the space, buffers included, instead.
struct Draw {
  int count = 0;
  uint64_t seed = 1;
};
int printSpace(const std::string& emitDir, bool force, const std::optional<Draw>& draw) {
  const hw::ConfigSpace space = hw::ConfigSpace::shipped();
  std::vector<hw::SpacePoint> points;
  if (draw) {
    for (hw::Config& c : space.draw(draw->seed, draw->count)) {
      hw::SpacePoint p;
      p.name = c.name;
      p.valid = true;
      p.config = std::move(c);
      points.push_back(std::move(p));
    }
  } else {
    points = space.points();
  }
  std::printf("explored space %s: %s\n", space.origin().c_str(), space.description().c_str());
  std::printf("base config %s; coarse keys:", space.base().name.c_str());
  for (const auto& r : space.coarse()) std::printf(" %s %d..%d", r.key.c_str(), r.min, r.max);
  std::printf("\nbuffers (log2 bytes), the largest admitted within:");
  for (const auto& r : space.buffers()) std::printf(" %s %d..%d", r.key.c_str(), r.min, r.max);
  if (draw) std::printf("\n%d configs drawn with seed %llu", draw->count, static_cast<unsigned long long>(draw->seed));
  const int nameWidth = draw ? 28 : 14;  // a drawn config's name carries its buffers
  std::printf("\n\n%-*s %-9s %4s  %3s %3s %3s %3s  %s\n", nameWidth, "point", "GEMM", "bus", "uop", "inp", "wgt", "acc",
              "not on (why: below)");
  size_t valid = 0;
  std::vector<std::string> reasons;
  std::string tsv = "# point\tconfig file\trefused by (targets)\twhy the point has no config\n";
  for (const auto& p : points) {
    if (!p.valid) {
      std::printf("%-*s refused: %s\n", nameWidth, p.name.c_str(), p.refusal.c_str());
      tsv += p.name + "\t-\t-\t" + p.refusal + "\n";
      continue;
    }
    ++valid;
    const hw::Config& c = p.config;
    std::string refusedBy;
    for (const auto& t : space.limitedTargets()) {
      const std::vector<std::string> why = space.refusals(c, t);
      for (const auto& w : why)
        if (std::find(reasons.begin(), reasons.end(), w) == reasons.end()) reasons.push_back(w);
      if (!why.empty()) refusedBy += (refusedBy.empty() ? "" : ",") + t;
    }
    const std::string gemm = std::to_string(c.batch) + "x" + std::to_string(c.blockIn) + "x" + std::to_string(c.blockOut);
    std::printf("%-*s %-9s %4d  %3d %3d %3d %3d  %s\n", nameWidth, p.name.c_str(), gemm.c_str(), c.busWidth, c.logUopBuffSize,
                c.logInpBuffSize, c.logWgtBuffSize, c.logAccBuffSize, refusedBy.empty() ? "-" : refusedBy.c_str());
    tsv += p.name + "\t" + p.name + ".json\t" + (refusedBy.empty() ? "-" : refusedBy) + "\t-\n";
    if (!emitDir.empty()) {
      const std::string path = emitDir + "/" + p.name + ".json";
      if (!force && std::filesystem::exists(path)) throw Error(path, "exists (pass --force to overwrite)");
      std::ofstream(path) << c.toJson() << "\n";
    }
  }
  if (draw) std::printf("\n%zu configs\n", points.size());
  else std::printf("\n%zu points: %zu with a config, %zu refused\n", points.size(), valid, points.size() - valid);
  for (const auto& why : reasons) std::printf("  %s\n", why.c_str());
  if (!emitDir.empty()) {
    const std::string path = emitDir + "/points.tsv";
    if (!force && std::filesystem::exists(path)) throw Error(path, "exists (pass --force to overwrite)");
    std::ofstream out(path);
    out << tsv;
    if (!out) throw Error(path, "cannot write");
    std::printf("wrote %zu configs and points.tsv to %s\n", valid, emitDir.c_str());
  }
  return 0;
}

}  // namespace

int cmdInfo(const std::vector<std::string>& args) {
  po::options_description opts("options");
  std::string config, format;
  addConfigOption(opts, &config);
  opts.add_options()
      ("format,f", po::value<std::string>(&format)->default_value("text"),
       "text, json, or a generated header: cpp, hls, sv, tcl")
      ("list", "list the shipped configs, then the board configs")
      ("space", "print the configuration space co-design explores (hw/configs/space/explore.json): each point, "
                "its buffers, and the targets that cannot run it yet, with why")
      ("emit", po::value<std::string>(), "with --space: write each point's config as DIR/POINT.json and DIR/points.tsv")
      ("draw", po::value<int>(), "with --space: N configs drawn at random from the space, buffers included, instead of the points")
      ("seed", po::value<uint64_t>(), "with --draw: the draw's seed (default 1)")
      ("force", "with --emit: overwrite existing files");
  po::variables_map vm;
  if (!parse("info", "[--config FILE|NAME] [--format text|json|cpp|hls|sv|tcl] [--list] [--space [--draw N [--seed S]] [--emit DIR [--force]]]",
             args, opts, nullptr, &vm))
    return 0;
  if (vm.count("emit") && !vm.count("space")) throw Error("--emit", "only with --space");
  if (vm.count("force") && !vm.count("emit")) throw Error("--force", "only with --emit");
  if (vm.count("draw") && !vm.count("space")) throw Error("--draw", "only with --space");
  if (vm.count("seed") && !vm.count("draw")) throw Error("--seed", "only with --draw");
  std::optional<Draw> draw;
  if (vm.count("draw")) {
    draw = Draw{vm["draw"].as<int>(), vm.count("seed") ? vm["seed"].as<uint64_t>() : 1};
    if (draw->count < 1) throw Error("--draw " + std::to_string(draw->count), "draws at least one config");
  }
  if (vm.count("space")) {
    std::string dir;
    if (vm.count("emit")) {
      dir = vm["emit"].as<std::string>();
      std::error_code ec;
      std::filesystem::create_directories(dir, ec);
      if (ec || !std::filesystem::is_directory(dir)) throw Error("--emit " + dir, "cannot create the directory");
    }
    return printSpace(dir, vm.count("force") != 0, draw);
  }
  if (vm.count("list")) {
    for (const auto& n : hw::shippedConfigNames()) {
      auto c = hw::Config::load(n);
      std::printf("%-10s %s\n", n.c_str(), c.description.c_str());
    }
    for (const auto& n : hw::boardConfigNames()) {
      auto c = hw::Config::load(n);
      std::printf("%-10s (board config) %s\n", n.c_str(), c.description.c_str());
    }
    return 0;
  }
  auto cfg = hw::Config::load(config);
  if (format == "json") { std::printf("%s\n", cfg.toJson().c_str()); return 0; }
  if (format == "cpp") { std::printf("%s", hw::generateCppHeader(cfg).c_str()); return 0; }
  if (format == "hls") { std::printf("%s", hw::generateHlsHeader(cfg).c_str()); return 0; }
  if (format == "sv") { std::printf("%s", hw::generateSvInclude(cfg).c_str()); return 0; }
  if (format == "tcl") { std::printf("%s", hw::generateTcl(cfg).c_str()); return 0; }
  if (format != "text") throw Error("--format", "unknown format '" + format + "' (text, json, cpp, hls, sv, tcl)");

  std::printf("config %s%s%s\n", cfg.name.c_str(), cfg.description.empty() ? "" : ": ", cfg.description.c_str());
  std::printf("GEMM core %dx%dx%d (BATCH x BLOCK_IN x BLOCK_OUT), int%d inputs, int%d weights, int%d accumulators, "
              "%d-bit bus\n\n",
              cfg.batch, cfg.blockIn, cfg.blockOut, cfg.inpWidth, cfg.wgtWidth, cfg.accWidth, cfg.busWidth);
  std::printf("parameters:\n");
  for (const auto& [name, value] : hw::derivedParameters(cfg)) {
    if (name.rfind("INSN_", 0) == 0 || name.rfind("UOP_", 0) == 0) {
      if (name != "UOP_WIDTH" && name != "UOP_ELEM_BYTES" && name != "UOP_BUFF_DEPTH") continue;
    }
    std::printf("  %-28s %lld\n", name.c_str(), value);
  }
  hw::InsnLayout layout(cfg);
  auto printFormat = [](const char* title, const std::vector<hw::FieldPos>& f) {
    std::printf("\n%s instruction (bit: field[width]):\n", title);
    for (const auto& p : f)
      std::printf("  %3d..%-3d %-16s [%d]%s\n", p.lo, p.lo + p.width - 1, hw::fieldName(p.field), p.width,
                  p.isSigned ? " signed" : "");
  };
  printFormat("LOAD/STORE", layout.memFormat());
  printFormat("GEMM/FINISH", layout.gemmFormat());
  printFormat("ALU", layout.aluFormat());
  std::printf("\nmicro-op (32 bits):\n");
  const char* names[3] = {"dst_idx", "src_idx", "wgt_idx"};
  for (int i = 0; i < 3; ++i)
    std::printf("  %3d..%-3d %-16s [%d]\n", layout.uopFormat()[i].lo,
                layout.uopFormat()[i].lo + layout.uopFormat()[i].width - 1, names[i], layout.uopFormat()[i].width);
  return 0;
}

}  // namespace tessera::cli
