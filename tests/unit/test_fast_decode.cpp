// The simulators' fast decoding and validation (hw/src/fast_decode.h) against the reference: the same
// fields as Isa::decode, and accepted exactly when Isa::validate and the DRAM range check accept.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "../../hw/src/fast_decode.h"
#include "tessera/hw/config.h"
#include "tessera/hw/dram.h"
#include "tessera/support/error.h"
#include "tessera/hw/isa.h"
#include "tessera/hw/program.h"

namespace {

using namespace tessera::hw;

// Random words that are often close to valid: small sizes, SRAM bases and DRAM indices near the
// boundaries that matter (page 0, the buffer depths, the address space's end), every opcode,
// memory type and flag combination.
RawInsn randomRaw(const Isa& isa, std::mt19937_64& rng) {
  RawInsn raw{rng(), rng()};
  if (rng() % 4 == 0) return raw;  // pure noise, invalid fields included
  const uint32_t op = static_cast<uint32_t>(rng() % 6);
  Insn in;
  in.opcode = static_cast<Opcode>(op > 4 ? 4 : op);
  const uint32_t f = static_cast<uint32_t>(rng() % 16);
  in.popPrev = f & 1;
  in.popNext = f & 2;
  in.pushPrev = f & 4;
  in.pushNext = f & 8;
  const Config& c = isa.config();
  auto near = [&](uint64_t edge, uint64_t max) {
    const int64_t v = static_cast<int64_t>(edge) + static_cast<int64_t>(rng() % 9) - 4;
    return static_cast<uint32_t>(std::min<int64_t>(std::max<int64_t>(v, 0), static_cast<int64_t>(max)));
  };
  if (in.isMem()) {
    in.memType = static_cast<uint32_t>(rng() % 7 % 6);
    in.sramBase = rng() % 3 ? near(rng() % 2 ? 0 : c.sramDepth(static_cast<MemId>(in.memType)) - 8, 0xffff)
                            : static_cast<uint32_t>(rng() % 0x10000);
    in.dramBase = rng() % 3 ? static_cast<uint32_t>(rng() % 4096) : static_cast<uint32_t>(rng());
    in.ySize = static_cast<uint32_t>(rng() % 5);
    in.xSize = static_cast<uint32_t>(rng() % 6);
    in.xStride = static_cast<uint32_t>(rng() % 3 ? rng() % 8 : rng() % 0x10000);
    in.yPad0 = static_cast<uint32_t>(rng() % 3 == 0 ? rng() % 16 : 0);
    in.yPad1 = static_cast<uint32_t>(rng() % 3 == 0 ? rng() % 16 : 0);
    in.xPad0 = static_cast<uint32_t>(rng() % 3 == 0 ? rng() % 16 : 0);
    in.xPad1 = static_cast<uint32_t>(rng() % 3 == 0 ? rng() % 16 : 0);
  } else if (in.opcode != Opcode::kFinish || rng() % 2) {
    in.reset = rng() % 2;
    in.uopEnd = near(rng() % 2 ? 8 : c.uopDepth, (uint64_t(1) << (c.logUopDepth + 1)) - 1);
    in.uopBgn = near(in.uopEnd, (uint64_t(1) << c.logUopDepth) - 1);
    in.iterOut = static_cast<uint32_t>(rng() % 0x4000);
    in.iterIn = static_cast<uint32_t>(rng() % 0x4000);
    in.dstFactorOut = static_cast<uint32_t>(rng() % c.accDepth);
    in.srcFactorIn = static_cast<uint32_t>(rng() % c.accDepth);
    if (in.opcode == Opcode::kAlu) {
      in.aluOp = static_cast<uint32_t>(rng() % 8);
      in.useImm = rng() % 2;
      in.imm = static_cast<int32_t>(rng() % 0x10000) - 0x8000;
    } else {
      in.wgtFactorIn = static_cast<uint32_t>(rng() % c.wgtDepth);
    }
  }
  try {
    raw = isa.encode(in);
  } catch (const tessera::Error&) {
  }
  if (op > 4) raw.lo = (raw.lo & ~uint64_t(7)) | (5 + rng() % 3);  // an invalid opcode
  return raw;
}

TEST(FastDecoder, AgreesWithIsaDecodeValidateAndDramRangesOnEveryConfig) {
  for (const auto& name : shippedConfigNames()) {
    SCOPED_TRACE(name);
    const Config cfg = Config::load(name);
    const Isa isa(cfg);
    Dram dram(cfg);
    const detail::FastDecoder dec(isa, dram);
    std::mt19937_64 rng(17);
    int valid = 0;
    for (int n = 0; n < 200000; ++n) {
      const RawInsn raw = randomRaw(isa, rng);
      uint8_t bytes[16];
      Isa::rawToBytes(raw, bytes);
      uint64_t w[2];
      detail::loadWords(bytes, w);
      const Insn ref = isa.decode(raw);
      bool refValid = true;
      try {
        isa.validate(ref, 0);
        const DramRange r = dramRange(ref, cfg);
        if (r.end > r.first) dram.at(r.first, r.end - r.first, "test");
      } catch (const tessera::Error&) {
        refValid = false;
      }
      valid += refValid;
      ASSERT_EQ(dec.validWords(w), refValid) << "n=" << n << " lo=" << raw.lo << " hi=" << raw.hi;
      if (detail::FastDecoder::opcode(w) > 4) continue;
      Insn fast;
      std::memset(static_cast<void*>(&fast), 0x5a, sizeof fast);  // decode must write every field
      dec.decode(w, &fast);
      ASSERT_TRUE(fast == ref) << "n=" << n;
    }
    EXPECT_GT(valid, 20000);  // the generator reaches valid instructions often
  }
}

}  // namespace
