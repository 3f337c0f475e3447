// Semantics of the VTA runtime and driver C API: queues, kernel caching, flushing, debug modes, errors.
#include <gtest/gtest.h>

#include <cstring>
#include <sstream>
#include <thread>

#include "tessera/hw/asm.h"
#include "tessera/hw/isa.h"
#include "tessera/runtime/session.h"
#include "tessera/runtime/tessera.h"
#include "tessera/sw/workloads.h"
#include "vta/driver.h"
#include "vta/runtime.h"

namespace {

using tessera::hw::Insn;
using tessera::hw::Opcode;
using tessera::runtime::Session;

class RuntimeApi : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(TesseraInit("fsim", "default"), 0); }
  void TearDown() override { TesseraClearError(); }
  std::string lastError() { return TesseraLastError() ? TesseraLastError() : ""; }
};

struct OneUop {
  uint32_t dst, src, wgt;
};

int gemmOneUop(void* sig) {
  OneUop u;
  std::memcpy(&u, sig, sizeof u);
  VTAUopPush(0, 0, u.dst, u.src, u.wgt, 0, 0, 0);
  return 0;
}

int countOpcode(const std::vector<Insn>& prog, Opcode op, uint32_t memType = 99) {
  int n = 0;
  for (const auto& in : prog)
    if (in.opcode == op && (memType == 99 || in.memType == memType) && !(in.isMem() && in.xSize == 0)) ++n;
  return n;
}

TEST_F(RuntimeApi, MicroOpKernelIsRecordedOnceAndLoadedOnce) {
  static int calls = 0;
  calls = 0;
  auto finit = [](void* sig) {
    ++calls;
    return gemmOneUop(sig);
  };
  void* handle = nullptr;
  OneUop u{1, 2, 3};
  ASSERT_EQ(VTAPushGEMMOp(&handle, finit, &u, sizeof u), 0) << lastError();
  ASSERT_EQ(VTAPushGEMMOp(&handle, finit, &u, sizeof u), 0) << lastError();
  EXPECT_NE(handle, nullptr);
  EXPECT_EQ(calls, 1);
  const auto& prog = Session::global().threadQueue().pendingInstructions();
  EXPECT_EQ(countOpcode(prog, Opcode::kLoad, 0), 1) << "a cached kernel must not be loaded again";
  EXPECT_EQ(countOpcode(prog, Opcode::kGemm), 2);
  // A different signature is a different kernel.
  OneUop v{4, 2, 3};
  ASSERT_EQ(VTAPushGEMMOp(&handle, finit, &v, sizeof v), 0);
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(countOpcode(Session::global().threadQueue().pendingInstructions(), Opcode::kLoad, 0), 2);
  VTASynchronize(VTATLSCommandHandle(), 1000);
  EXPECT_EQ(lastError(), "");
}

TEST_F(RuntimeApi, MicroOpCacheEvictsWhenTheBufferIsFull) {
  // Kernels of 3000 micro-ops: two fit the 8192-entry buffer, the third evicts the first.
  struct Big {
    uint32_t base;
  };
  auto finit = [](void* sig) {
    Big b;
    std::memcpy(&b, sig, sizeof b);
    for (uint32_t i = 0; i < 3000; ++i) VTAUopPush(0, 1, (b.base + i) % 2048, 0, 0, 0, 0, 0);
    return 0;
  };
  void* handle = nullptr;
  for (uint32_t k : {0u, 1u, 2u, 0u}) {
    Big b{k * 100};
    ASSERT_EQ(VTAPushGEMMOp(&handle, finit, &b, sizeof b), 0) << lastError();
  }
  const auto& prog = Session::global().threadQueue().pendingInstructions();
  EXPECT_EQ(countOpcode(prog, Opcode::kLoad, 0), 4) << "the first kernel was evicted and must be reloaded";
  std::vector<uint32_t> begins;
  for (const auto& in : prog)
    if (in.opcode == Opcode::kGemm) begins.push_back(in.uopBgn);
  ASSERT_EQ(begins.size(), 4u);
  EXPECT_EQ(begins[0], 0u);
  EXPECT_EQ(begins[1], 3000u);
  EXPECT_EQ(begins[2], 0u);  // wrapped around
  EXPECT_EQ(begins[3], 3000u);
  VTASynchronize(VTATLSCommandHandle(), 1u << 31);
  EXPECT_EQ(lastError(), "");
}

TEST_F(RuntimeApi, QueueFlushesByItselfWhenFull) {
  void* buf = VTABufferAlloc(4096);
  VTACommandHandle cmd = VTATLSCommandHandle();
  auto& dev = Session::global().threadQueue().device();
  uint64_t runsBefore = dev.counters().runs;
  // More loads than the 4 MiB instruction staging buffer holds.
  for (int i = 0; i < 270000; ++i) VTALoadBuffer2D(cmd, buf, 0, 1, 1, 1, 0, 0, 0, 0, i % 64, 2);
  ASSERT_EQ(lastError(), "");
  EXPECT_EQ(dev.counters().runs, runsBefore + 1) << "the queue should have synchronized once on its own";
  VTASynchronize(cmd, 1000);
  EXPECT_EQ(dev.counters().runs, runsBefore + 2);
  EXPECT_EQ(dev.counters().insns[0], 270000u);
  VTABufferFree(buf);
}

TEST_F(RuntimeApi, DebugModeDumpsInstructionsAndMicroOps) {
  std::ostringstream os;
  auto& q = Session::global().threadQueue();
  q.setDebugStream(&os);
  VTASetDebugMode(VTATLSCommandHandle(), VTA_DEBUG_DUMP_INSN | VTA_DEBUG_DUMP_UOP);
  tessera::sw::GemmProblem p;
  p.m = 16;
  p.n = p.k = 32;
  EXPECT_TRUE(tessera::sw::runBlockedGemm(p).correct);
  std::string out = os.str();
  EXPECT_NE(out.find("LOAD.INP"), std::string::npos);
  EXPECT_NE(out.find("GEMM deps="), std::string::npos);
  EXPECT_NE(out.find("FINISH"), std::string::npos);
  EXPECT_NE(out.find("UOP dst="), std::string::npos);
  VTASetDebugMode(VTATLSCommandHandle(), 0);
  q.setDebugStream(&std::cout);
}

TEST_F(RuntimeApi, ForceSerialModeStillComputesCorrectly) {
  VTASetDebugMode(VTATLSCommandHandle(), VTA_DEBUG_FORCE_SERIAL);
  tessera::sw::GemmProblem p;
  p.m = 128;
  p.n = p.k = 64;
  auto r = tessera::sw::runBlockedGemm(p);
  EXPECT_TRUE(r.correct) << r.firstMismatch;
  VTASetDebugMode(VTATLSCommandHandle(), 0);
}

TEST_F(RuntimeApi, BadDependencyPairIsAnErrorAndBlocksTheQueue) {
  VTACommandHandle cmd = VTATLSCommandHandle();
  EXPECT_NE(VTADepPop(cmd, 1, 3), 0);
  EXPECT_NE(lastError().find("no token queue"), std::string::npos) << lastError();
  // The queue refuses work until the error is acknowledged.
  EXPECT_NE(VTADepPush(cmd, 1, 2), 0);
  EXPECT_NE(lastError().find("refusing work"), std::string::npos) << lastError();
  TesseraClearError();
  EXPECT_EQ(VTADepPush(cmd, 1, 2), 0);
  EXPECT_EQ(VTADepPop(cmd, 1, 2), 0);
  VTASynchronize(cmd, 1000);
  EXPECT_EQ(lastError(), "");
}

TEST_F(RuntimeApi, ClearingAnErrorDiscardsTheHalfBuiltStream) {
  void* buf = VTABufferAlloc(4096);
  VTACommandHandle cmd = VTATLSCommandHandle();
  auto& dev = Session::global().threadQueue().device();
  uint64_t loadsBefore = dev.counters().insns[0];
  VTALoadBuffer2D(cmd, buf, 0, 1, 1, 1, 0, 0, 0, 0, 0, 2);
  EXPECT_NE(VTADepPop(cmd, 3, 1), 0);
  TesseraClearError();
  VTASynchronize(cmd, 1000);
  EXPECT_EQ(lastError(), "");
  EXPECT_EQ(dev.counters().insns[0], loadsBefore) << "the load queued before the error must not run";
  VTABufferFree(buf);
}

TEST_F(RuntimeApi, LoadPastTheEndOfABufferIsAnError) {
  void* buf = VTABufferAlloc(16 * 10);
  VTALoadBuffer2D(VTATLSCommandHandle(), buf, 5, 3, 2, 4, 0, 0, 0, 0, 0, 2);  // reaches element 12
  EXPECT_NE(lastError().find("VTALoadBuffer2D"), std::string::npos) << lastError();
  EXPECT_NE(lastError().find("160-byte buffer"), std::string::npos) << lastError();
  TesseraClearError();
  VTABufferFree(buf);
}

TEST_F(RuntimeApi, FieldOverflowNamesTheField) {
  void* buf = VTABufferAlloc(1 << 20);
  VTALoadBuffer2D(VTATLSCommandHandle(), buf, 0, 1, 1, 1, 16, 0, 0, 0, 0, 2);  // x_pad_0 has 4 bits
  EXPECT_NE(lastError().find("x_pad_0"), std::string::npos) << lastError();
  TesseraClearError();
  VTABufferFree(buf);
}

TEST_F(RuntimeApi, StoreMustReadTheOutMemory) {
  void* buf = VTABufferAlloc(4096);
  VTAStoreBuffer2D(VTATLSCommandHandle(), 0, 3, buf, 0, 1, 1, 1);
  EXPECT_NE(lastError().find("src_memory_type"), std::string::npos) << lastError();
  TesseraClearError();
  VTABufferFree(buf);
}

TEST_F(RuntimeApi, MicroOpCallsOutsideFinitAreErrors) {
  VTAUopPush(0, 0, 0, 0, 0, 0, 0, 0);
  EXPECT_NE(lastError().find("outside the finit"), std::string::npos) << lastError();
}

TEST_F(RuntimeApi, ErrorsInsideFinitFailThePush) {
  auto finit = [](void*) {
    VTAUopPush(0, 0, 1 << 20, 0, 0, 0, 0, 0);  // dst does not fit the micro-op field
    return 0;
  };
  void* handle = nullptr;
  int sig = 0;
  EXPECT_NE(VTAPushGEMMOp(&handle, finit, &sig, sizeof sig), 0);
  EXPECT_NE(lastError().find("dst_idx"), std::string::npos) << lastError();
}

TEST_F(RuntimeApi, ConsecutiveMicroOpsMayNotWriteTheSameAccumulator) {
  auto finit = [](void*) {
    VTAUopPush(0, 0, 5, 0, 0, 0, 0, 0);
    VTAUopPush(0, 0, 5, 1, 1, 0, 0, 0);
    return 0;
  };
  void* handle = nullptr;
  EXPECT_NE(VTAPushGEMMOp(&handle, finit, nullptr, 0), 0);
  EXPECT_NE(lastError().find("hazard"), std::string::npos) << lastError();
}

TEST_F(RuntimeApi, UnknownTargetAndConfigAreNamed) {
  EXPECT_NE(TesseraInit("warp-drive", "default"), 0);
  EXPECT_NE(lastError().find("warp-drive"), std::string::npos);
  EXPECT_NE(lastError().find("fsim"), std::string::npos) << "the error lists the available targets";
  EXPECT_NE(TesseraInit("fsim", "/no/such/config.json"), 0);
  EXPECT_NE(lastError().find("/no/such/config.json"), std::string::npos);
  EXPECT_EQ(TesseraInit("fsim", "small"), 0);
  EXPECT_STREQ(TesseraConfigName(), "small");
  EXPECT_STREQ(TesseraTargetName(), "fsim");
}

TEST_F(RuntimeApi, DriverRunsAHandWrittenProgram) {
  tessera::hw::Isa isa(Session::global().config());
  // ACC load of one element, ALU ADD immediate, STORE: written in assembly and run via the driver.
  int32_t* data = static_cast<int32_t*>(VTAMemAlloc(64 * 2, VTA_CACHED));
  int8_t* out = static_cast<int8_t*>(VTAMemAlloc(16, VTA_CACHED));
  uint32_t* uops = static_cast<uint32_t*>(VTAMemAlloc(4, VTA_CACHED));
  ASSERT_NE(data, nullptr);
  for (int i = 0; i < 16; ++i) data[i] = i - 8;
  uops[0] = isa.encodeUop({0, 0, 0});
  char text[1024];
  std::snprintf(text, sizeof text,
                "LOAD.UOP deps=- sram_base=0 dram_base=%u y_size=1 x_size=1 x_stride=1\n"
                "LOAD.ACC deps=- sram_base=0 dram_base=%u y_size=1 x_size=1 x_stride=1\n"
                "ALU.ADD deps=push_next uop_bgn=0 uop_end=1 iter_out=1 iter_in=1 use_imm=1 imm=-3\n"
                "STORE.OUT deps=pop_prev|push_prev sram_base=0 dram_base=%u y_size=1 x_size=1 x_stride=1\n"
                "LOAD.UOP deps=pop_next\n"
                "FINISH\n",
                VTAMemGetPhyAddr(uops) / 4, VTAMemGetPhyAddr(data) / 64, VTAMemGetPhyAddr(out) / 16);
  auto prog = tessera::hw::assemble(isa, text, "test").insns;
  auto bytes = tessera::hw::programBytes(prog);
  void* insns = VTAMemAlloc(bytes.size(), VTA_CACHED);
  VTAMemCopyFromHost(insns, bytes.data(), bytes.size());
  VTADeviceHandle dev = VTADeviceAlloc();
  ASSERT_EQ(VTADeviceRun(dev, VTAMemGetPhyAddr(insns), static_cast<uint32_t>(prog.size()), 1000), 0) << lastError();
  for (int i = 0; i < 16; ++i) EXPECT_EQ(out[i], i - 11);
  VTADeviceFree(dev);
  VTAMemFree(insns);
  VTAMemFree(uops);
  VTAMemFree(out);
  VTAMemFree(data);
}

TEST_F(RuntimeApi, DriverReportsADeadlockedProgram) {
  tessera::hw::Isa isa(Session::global().config());
  auto prog = tessera::hw::assemble(isa, "GEMM deps=pop_prev uop_bgn=0 uop_end=0 iter_out=1 iter_in=1\nFINISH\n", "t").insns;
  auto bytes = tessera::hw::programBytes(prog);
  void* insns = VTAMemAlloc(bytes.size(), VTA_CACHED);
  VTAMemCopyFromHost(insns, bytes.data(), bytes.size());
  VTADeviceHandle dev = VTADeviceAlloc();
  EXPECT_NE(VTADeviceRun(dev, VTAMemGetPhyAddr(insns), 2, 1000), 0);
  EXPECT_NE(lastError().find("deadlock at instruction 0"), std::string::npos) << lastError();
  EXPECT_NE(lastError().find("l2g"), std::string::npos) << lastError();
  VTADeviceFree(dev);
  VTAMemFree(insns);
}

TEST_F(RuntimeApi, DriverStopsARunPastItsWaitCycles) {
  tessera::hw::Isa isa(Session::global().config());
  // One reset micro-op repeated 16383 x 16383 times: far more work than 1000 cycles.
  auto prog = tessera::hw::assemble(isa,
                                    "GEMM deps=- reset=1 uop_bgn=0 uop_end=1 iter_out=16383 iter_in=16383\nFINISH\n", "t")
                  .insns;
  auto bytes = tessera::hw::programBytes(prog);
  void* insns = VTAMemAlloc(bytes.size(), VTA_CACHED);
  VTAMemCopyFromHost(insns, bytes.data(), bytes.size());
  VTADeviceHandle dev = VTADeviceAlloc();
  EXPECT_NE(VTADeviceRun(dev, VTAMemGetPhyAddr(insns), 2, 1000), 0);
  EXPECT_NE(lastError().find("exceeds wait_cycles=1000"), std::string::npos) << lastError();
  VTADeviceFree(dev);
  VTAMemFree(insns);
}

TEST_F(RuntimeApi, MemoryAllocationsAreContiguousPageAlignedAndAboveThePageZero) {
  void* a = VTAMemAlloc(100, VTA_CACHED);
  void* b = VTAMemAlloc(5000, VTA_CACHED);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  vta_phy_addr_t pa = VTAMemGetPhyAddr(a), pb = VTAMemGetPhyAddr(b);
  EXPECT_GE(pa, 0x1000u);
  EXPECT_EQ(pa % 4096, 0u);
  EXPECT_EQ(pb % 4096, 0u);
  EXPECT_TRUE(pb >= pa + 4096 || pa >= pb + 8192);
  VTAMemFree(a);
  VTAMemFree(b);
  int local = 0;
  EXPECT_EQ(VTAMemGetPhyAddr(&local), 0u);
  EXPECT_NE(lastError().find("not accelerator memory"), std::string::npos);
}

TEST_F(RuntimeApi, BufferCopyChecksBounds) {
  void* buf = VTABufferAlloc(64);
  char host[128] = {};
  VTABufferCopy(host, 0, buf, 32, 64, VTA_MEMCPY_H2D);
  EXPECT_NE(lastError().find("past the end"), std::string::npos) << lastError();
  TesseraClearError();
  VTABufferFree(buf);
}

TEST_F(RuntimeApi, ThreadsHaveIndependentQueues) {
  bool ok[2] = {false, false};
  std::thread threads[2];
  for (int t = 0; t < 2; ++t)
    threads[t] = std::thread([t, &ok] {
      try {
        tessera::sw::GemmProblem p;
        p.m = 64;
        p.n = p.k = 64;
        p.seed = 40 + t;
        ok[t] = tessera::sw::runBlockedGemm(p).correct;
      } catch (const std::exception& e) {
        ADD_FAILURE() << "thread " << t << ": " << e.what();
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_TRUE(ok[0]);
  EXPECT_TRUE(ok[1]);
}

}  // namespace
