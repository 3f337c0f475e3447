// tessera info: a configuration, its derived parameters and the instruction bit layouts.
#include <cstdio>

#include "cli.h"
#include "tessera/hw/config.h"
#include "tessera/support/error.h"
#include "tessera/hw/generate.h"
#include "tessera/hw/isa.h"

namespace tessera::cli {

int cmdInfo(const std::vector<std::string>& args) {
  po::options_description opts("options");
  std::string config, format;
  addConfigOption(opts, &config);
  opts.add_options()
      ("format,f", po::value<std::string>(&format)->default_value("text"),
       "text, json, or a generated header: cpp, hls, sv, tcl")
      ("list", "list the shipped configs, then the board configs");
  po::variables_map vm;
  if (!parse("info", "[--config FILE|NAME] [--format text|json|cpp|hls|sv|tcl] [--list]", args, opts, nullptr, &vm))
    return 0;
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
