// Drives tessera_board_spram (the board memory's RAM) with random byte-enabled writes and reads and checks every read against a reference memory.
#include <cstdint>
#include <cstdio>
#include <memory>
#include <random>
#include <vector>

#include "Vtessera_board_spram.h"
#include "verilated.h"

int main(int argc, char** argv) {
  Verilated::commandArgs(argc, argv);
  auto ram = std::make_unique<Vtessera_board_spram>();
  constexpr uint32_t kWords = 32768;
  std::vector<uint32_t> want(kWords, 0);
  std::vector<uint8_t> known(kWords, 0);  // bytes written so far, one bit per byte lane
  std::mt19937 rng(1234);
  auto tick = [&] {
    ram->clk_i = 0;
    ram->eval();
    ram->clk_i = 1;
    ram->eval();
  };
  int reads = 0, failures = 0;
  uint32_t held = 0;
  bool holding = false;
  for (int op = 0; op < 200000; ++op) {
    // Addresses cluster in a few rows of both 16K-word banks, so reads find written data.
    const uint32_t addr = (rng() % 2 ? 0x4000u : 0u) | (rng() % 64) * 97 % 0x4000;
    const int kind = rng() % 3;
    ram->we_i = 0;
    ram->re_i = 0;
    ram->addr_i = addr;
    if (kind == 0) {
      const uint32_t data = rng(), be = rng() % 16;
      ram->we_i = be;
      ram->wdata_i = data;
      for (int b = 0; b < 4; ++b)
        if (be >> b & 1) {
          want[addr] = (want[addr] & ~(0xffu << (8 * b))) | (data & (0xffu << (8 * b)));
          known[addr] |= uint8_t(1 << b);
        }
      holding = false;  // a write leaves the SPRAM's output undefined until the next read
    } else if (kind == 1) {
      ram->re_i = 1;
    }
    tick();
    if (kind == 1) {
      ++reads;
      uint32_t mask = 0;
      for (int b = 0; b < 4; ++b)
        if (known[addr] >> b & 1) mask |= 0xffu << (8 * b);
      if ((ram->rdata_o & mask) != (want[addr] & mask) && ++failures <= 5)
        std::printf("read of word 0x%x gave 0x%08x, wanted 0x%08x (mask 0x%08x)\n", addr, ram->rdata_o, want[addr], mask);
      held = ram->rdata_o;
      holding = true;
    } else if (kind == 2 && holding && ram->rdata_o != held && ++failures <= 5) {
      std::printf("an idle cycle changed the read data from 0x%08x to 0x%08x\n", held, ram->rdata_o);
    }
  }
  ram->final();
  std::printf("%d reads checked, %d failures\n", reads, failures);
  return failures == 0 && reads > 0 ? 0 : 1;
}
