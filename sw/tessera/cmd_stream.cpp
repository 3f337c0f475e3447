// tessera stream: generates an instruction stream in another VTA toolchain's shape and writes it as
// a `tessera sim` export (DRAM images, manifest, expected outputs from fsim).
#include <chrono>
#include <cstdio>
#include <filesystem>

#include "cli.h"
#include "tessera/hw/asm.h"
#include "tessera/support/error.h"
#include "tessera/hw/fsim.h"
#include "tessera/streams/streams.h"
#include "tessera/support/file_io.h"
#include "tessera/support/format.h"

namespace tessera::cli {

namespace {

namespace fs = std::filesystem;

}  // namespace

int cmdStream(const std::vector<std::string>& args) {
  po::options_description opts("options");
  std::string config, shape, dir;
  uint64_t seed = 1;
  double scale = 1.0;
  addConfigOption(opts, &config);
  opts.add_options()
      ("shape", po::value<std::string>(&shape), "the stream's shape (--list prints them)")
      ("output,o", po::value<std::string>(&dir), "DIR: write the export (images, manifest.txt, expected outputs) here")
      ("seed,s", po::value<uint64_t>(&seed)->default_value(1), "seed of the data and of the choices the shape leaves open")
      ("scale", po::value<double>(&scale)->default_value(1.0), "multiply the shape's size (tiles or rows) by this")
      ("list", "list the shapes")
      ("force,f", "write into a non-empty DIR, replacing files of the same name");
  po::positional_options_description pos;
  pos.add("shape", 1);
  po::variables_map vm;
  if (!parse("stream", "SHAPE [-o DIR] [--seed S] [--scale X] [--config C] [--force] | --list", args, opts, &pos, &vm))
    return 0;
  if (vm.count("list")) {
    for (const auto& s : streams::shapes()) std::printf("%-12s %s\n", s.name, s.description);
    return 0;
  }
  if (shape.empty()) throw po::error("a SHAPE is required (tessera stream --list prints them)");

  const hw::Config cfg = hw::Config::load(config);
  const streams::Stream s = streams::generate(cfg, shape, seed, scale);
  std::printf("stream %s seed %llu scale %g, config %s: %s\n", shape.c_str(), static_cast<unsigned long long>(seed), scale,
              cfg.name.c_str(), s.summary().c_str());

  // The expected outputs: the stream run on fsim (any simulator of the instruction set must agree).
  hw::Dram dram(cfg);
  streams::place(s, dram);
  hw::Fsim sim(cfg, dram);
  const auto t0 = std::chrono::steady_clock::now();
  sim.run(s.insnBase(), s.insnCount());
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::printf("ran on fsim in %.3f ms\n", ms);
  if (dir.empty()) return 0;

  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_empty(dir, ec) && !vm.count("force"))
    throw Error("--output " + dir, "is not empty (use --force to replace the files of an export there)");
  fs::create_directories(fs::path(dir) / "segment0", ec);
  if (ec) throw Error("--output " + dir, "cannot create the directory: " + ec.message());
  auto write = [&](const std::string& rel, const uint8_t* bytes, uint64_t n) {
    writeBinaryFile((fs::path(dir) / rel).string(), bytes, n, true);
  };
  const std::string json = cfg.toJson();
  write("config.json", reinterpret_cast<const uint8_t*>(json.data()), json.size());
  std::string m =
      "# tessera stream export: a generated stream in the layout of tessera run --export-sim (docs/graph.md).\n"
      "# load FILE ADDR BYTES REGION: a DRAM image at its physical address. insn ADDR COUNT: the stream.\n"
      "# output ADDR BYTES EXPECTED DUMP NAME: a range the stream stores, the bytes fsim left there, the dump file.\n"
      "version 1\n"
      "model stream " + shape + " seed " + std::to_string(seed) + " scale " + std::to_string(scale) + "\n" +
      "target fsim\nconfig " + cfg.name + " config.json\nsegments 1\nsegment 0\n";
  std::string loads, dumps;
  for (const auto& r : s.regions) {
    const std::string file = "segment0/" + r.name + ".bin";
    write(file, r.bytes.data(), r.bytes.size());
    m += "load " + file + " " + hex(r.base) + " " + std::to_string(r.bytes.size()) + " " + r.name + "\n";
    loads += " --load " + file + "@" + hex(r.base);
  }
  m += "insn " + hex(s.insnBase()) + " " + std::to_string(s.insnCount()) + "\n";
  for (size_t k = 0; k < s.outputs.size(); ++k) {
    const auto& o = s.outputs[k];
    std::vector<uint8_t> bytes(o.bytes);
    dram.read(o.base, bytes.data(), o.bytes, "output " + o.name);
    const std::string expected = "segment0/expected-" + std::to_string(k) + ".bin",
                      dump = "segment0/out-" + std::to_string(k) + ".bin";
    write(expected, bytes.data(), bytes.size());
    m += "output " + hex(o.base) + " " + std::to_string(o.bytes) + " " + expected + " " + dump + " " + o.name + "\n";
    dumps += " --dump " + hex(o.base) + ":" + std::to_string(o.bytes) + ":" + dump;
  }
  m += "command tessera sim --config config.json --target fsim" + loads + " --insn " + hex(s.insnBase()) + ":" +
       std::to_string(s.insnCount()) + dumps + " --force\n";
  write("manifest.txt", reinterpret_cast<const uint8_t*>(m.data()), m.size());
  std::printf("wrote %s/manifest.txt (replay: cd %s && the manifest's command line)\n", dir.c_str(), dir.c_str());
  return 0;
}

}  // namespace tessera::cli
