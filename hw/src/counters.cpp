// Formatting and accumulation of target counters.
#include "tessera/hw/counters.h"

#include <cstdio>

#include "tessera/hw/isa.h"

namespace tessera::hw {

uint64_t Counters::totalLoadBytes() const {
  uint64_t t = 0;
  for (uint64_t b : loadBytes) t += b;
  return t;
}

Counters& Counters::operator+=(const Counters& o) {
  for (int i = 0; i < 5; ++i) insns[i] += o.insns[i];
  nops += o.nops;
  for (int i = 0; i < 6; ++i) loadBytes[i] += o.loadBytes[i];
  storeBytes += o.storeBytes;
  gemmUops += o.gemmUops;
  gemmResetUops += o.gemmResetUops;
  macs += o.macs;
  aluUops += o.aluUops;
  aluElemOps += o.aluElemOps;
  cycles += o.cycles;
  runs += o.runs;
  for (int i = 0; i < 4; ++i) {
    busyCycles[i] += o.busyCycles[i];
    stallCycles[i] += o.stallCycles[i];
  }
  dramReadBeats += o.dramReadBeats;
  dramWriteBeats += o.dramWriteBeats;
  return *this;
}

Counters Counters::since(const Counters& b) const {
  Counters d = *this;
  for (int i = 0; i < 5; ++i) d.insns[i] -= b.insns[i];
  d.nops -= b.nops;
  for (int i = 0; i < 6; ++i) d.loadBytes[i] -= b.loadBytes[i];
  d.storeBytes -= b.storeBytes;
  d.gemmUops -= b.gemmUops;
  d.gemmResetUops -= b.gemmResetUops;
  d.macs -= b.macs;
  d.aluUops -= b.aluUops;
  d.aluElemOps -= b.aluElemOps;
  d.cycles -= b.cycles;
  d.runs -= b.runs;
  for (int i = 0; i < 4; ++i) {
    d.busyCycles[i] -= b.busyCycles[i];
    d.stallCycles[i] -= b.stallCycles[i];
  }
  d.dramReadBeats -= b.dramReadBeats;
  d.dramWriteBeats -= b.dramWriteBeats;
  return d;
}

std::string Counters::format() const {
  std::string s;
  char line[160];
  auto add = [&](const char* name, uint64_t v) {
    std::snprintf(line, sizeof line, "  %-22s %llu\n", name, static_cast<unsigned long long>(v));
    s += line;
  };
  s += "instructions:\n";
  add("LOAD", insns[0]);
  add("STORE", insns[1]);
  add("GEMM", insns[2]);
  add("ALU", insns[4]);
  add("FINISH", insns[3]);
  add("NOP (dependency only)", nops);
  add("total", totalInsns());
  s += "memory traffic (bytes):\n";
  for (uint32_t id : {0u, 1u, 2u, 3u, 5u}) {
    std::string n = std::string("load ") + memIdName(id);
    add(n.c_str(), loadBytes[id]);
  }
  add("store OUT", storeBytes);
  s += "compute:\n";
  add("GEMM micro-ops", gemmUops);
  add("GEMM reset micro-ops", gemmResetUops);
  add("MACs", macs);
  add("ALU micro-ops", aluUops);
  add("ALU element ops", aluElemOps);
  if (cycles) {
    s += "timing:\n";
    add("cycles", cycles);
    static const char* kModules[4] = {"fetch", "load", "compute", "store"};
    for (int m = 0; m < 4; ++m) {
      std::string busy = std::string(kModules[m]) + " busy", stall = std::string(kModules[m]) + " stall";
      add(busy.c_str(), busyCycles[m]);
      add(stall.c_str(), stallCycles[m]);
    }
    add("DRAM read beats", dramReadBeats);
    add("DRAM write beats", dramWriteBeats);
  }
  return s;
}

std::string Counters::toJson() const {
  char buf[2048];
  std::snprintf(buf, sizeof buf,
                "{\"load\": %llu, \"store\": %llu, \"gemm\": %llu, \"alu\": %llu, \"finish\": %llu, \"nop\": %llu, "
                "\"load_bytes_uop\": %llu, \"load_bytes_wgt\": %llu, \"load_bytes_inp\": %llu, "
                "\"load_bytes_acc\": %llu, \"load_bytes_acc8\": %llu, \"store_bytes\": %llu, "
                "\"gemm_uops\": %llu, \"gemm_reset_uops\": %llu, \"macs\": %llu, \"alu_uops\": %llu, "
                "\"alu_elem_ops\": %llu, \"cycles\": %llu, \"fetch_busy\": %llu, \"fetch_stall\": %llu, "
                "\"load_busy\": %llu, \"load_stall\": %llu, \"compute_busy\": %llu, \"compute_stall\": %llu, "
                "\"store_busy\": %llu, \"store_stall\": %llu, \"dram_read_beats\": %llu, "
                "\"dram_write_beats\": %llu}",
                (unsigned long long)insns[0], (unsigned long long)insns[1], (unsigned long long)insns[2],
                (unsigned long long)insns[4], (unsigned long long)insns[3], (unsigned long long)nops,
                (unsigned long long)loadBytes[0], (unsigned long long)loadBytes[1], (unsigned long long)loadBytes[2],
                (unsigned long long)loadBytes[3], (unsigned long long)loadBytes[5], (unsigned long long)storeBytes,
                (unsigned long long)gemmUops, (unsigned long long)gemmResetUops, (unsigned long long)macs,
                (unsigned long long)aluUops, (unsigned long long)aluElemOps, (unsigned long long)cycles,
                (unsigned long long)busyCycles[0], (unsigned long long)stallCycles[0],
                (unsigned long long)busyCycles[1], (unsigned long long)stallCycles[1],
                (unsigned long long)busyCycles[2], (unsigned long long)stallCycles[2],
                (unsigned long long)busyCycles[3], (unsigned long long)stallCycles[3],
                (unsigned long long)dramReadBeats, (unsigned long long)dramWriteBeats);
  return buf;
}

}  // namespace tessera::hw
