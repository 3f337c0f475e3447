// tessera disasm / tessera asm: binary programs to text and back.
#include <cstdio>
#include <fstream>
#include <sstream>

#include "cli.h"
#include "tessera/hw/asm.h"
#include "tessera/support/error.h"
#include "tessera/support/file_io.h"

namespace tessera::cli {

int cmdDisasm(const std::vector<std::string>& args) {
  po::options_description opts("options");
  std::string config, file;
  addConfigOption(opts, &config);
  opts.add_options()
      ("file", po::value<std::string>(&file)->required(), "binary program (16 bytes per instruction)")
      ("uops", "the file holds micro-ops (4 bytes each) instead of instructions");
  po::positional_options_description pos;
  pos.add("file", 1);
  po::variables_map vm;
  if (!parse("disasm", "FILE [--config FILE|NAME] [--uops]", args, opts, &pos, &vm)) return 0;
  hw::Isa isa(hw::Config::load(config));
  if (vm.count("uops")) {
    auto uops = hw::readUopFile(file);
    for (size_t i = 0; i < uops.size(); ++i)
      std::printf("%5zu: %s\n", i, hw::disassembleUop(isa.decodeUop(uops[i])).c_str());
    return 0;
  }
  std::printf("%s", hw::disassembleProgram(isa, hw::readProgramFile(file)).c_str());
  return 0;
}

int cmdAsm(const std::vector<std::string>& args) {
  po::options_description opts("options");
  std::string config, file, out, uopOut;
  addConfigOption(opts, &config);
  opts.add_options()
      ("file", po::value<std::string>(&file)->required(), "text program, one instruction or UOP per line")
      ("output,o", po::value<std::string>(&out)->required(), "binary instruction file to write")
      ("uop-output,u", po::value<std::string>(&uopOut), "binary micro-op file for the UOP lines")
      ("force,f", "replace existing output files");
  po::positional_options_description pos;
  pos.add("file", 1);
  po::variables_map vm;
  if (!parse("asm", "FILE -o OUT [--uop-output UOPS] [--config FILE|NAME] [--force]", args, opts, &pos, &vm)) return 0;
  hw::Isa isa(hw::Config::load(config));
  auto result = hw::assemble(isa, readTextFile(file), file);
  if (!result.uops.empty() && uopOut.empty())
    throw Error(file, "the program has " + std::to_string(result.uops.size()) +
                          " UOP lines; give --uop-output to write them");
  if (result.insns.empty() && result.uops.empty()) throw Error(file, "no instructions or micro-ops found");
  const bool force = vm.count("force") != 0;
  if (!result.insns.empty()) writeBinaryFile(out, hw::programBytes(result.insns), force);
  if (!result.uops.empty()) writeBinaryFile(uopOut, hw::uopBytes(result.uops), force);
  std::printf("assembled %zu instructions%s\n", result.insns.size(),
              result.uops.empty() ? "" : (" and " + std::to_string(result.uops.size()) + " micro-ops").c_str());
  return 0;
}

}  // namespace tessera::cli
