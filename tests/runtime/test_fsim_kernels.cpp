// fsim's kernels option: a named kernel set runs as named or is refused with the reason, never replaced by another.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "tessera/hw/config.h"
#include "tessera/support/error.h"
#include "tessera/hw/fsim.h"
#include "tessera/runtime/session.h"
#include "tessera/runtime/target.h"

namespace {

using tessera::hw::Config;
using tessera::hw::Fsim;
namespace rt = tessera::runtime;

// ctest's exit code for "skipped" in the forced-kernel runs (SKIP_RETURN_CODE in tests/CMakeLists.txt).
constexpr int kSkipExitCode = 77;

std::string forcedKernels() {
  const char* env = std::getenv("TESSERA_TARGET_OPTIONS");
  const auto options = rt::parseTargetOptions(env ? env : "", "TESSERA_TARGET_OPTIONS");
  const auto it = options.find("kernels");
  return it == options.end() ? "" : it->second;
}

// A forced-kernel run (ctest runtime_kernels_SET) of a set this CPU lacks tests nothing here: it
// ends the whole binary as a skip, saying why, before any test runs, rather than passing.
class SkipWhenTheCpuLacksTheForcedSet : public ::testing::Environment {
 public:
  void SetUp() override {
    const std::string set = forcedKernels();
    if (set.empty()) return;
    const std::string why = Fsim::kernelSetCpuProblem(set);
    if (why.empty()) return;
    std::printf("SKIPPED: TESSERA_TARGET_OPTIONS forces fsim kernels=%s: %s\n", set.c_str(), why.c_str());
    std::fflush(stdout);
    std::_Exit(kSkipExitCode);
  }
};
::testing::Environment* const kSkipEnvironment = ::testing::AddGlobalTestEnvironment(new SkipWhenTheCpuLacksTheForcedSet);

TEST(FsimKernels, ANamedSetRunsAsNamedOrIsRefusedWithTheReason) {
  for (const char* set : {"generic", "avx2", "avx512bw", "avx512-vnni"})
    for (const auto& name : tessera::hw::shippedConfigNames()) {
      const Config cfg = Config::load(name);
      const std::string why = Fsim::kernelSetProblem(cfg, set);
      const std::string at = std::string("kernels=") + set + " on " + name;
      if (why.empty()) {
        rt::Session session("fsim", cfg, {{"kernels", set}});
        EXPECT_EQ(session.createDevice()->variant(), set) << at;
        continue;
      }
      try {
        rt::Session session("fsim", cfg, {{"kernels", set}});
        ADD_FAILURE() << at << ": accepted although " << why;
      } catch (const tessera::Error& e) {
        EXPECT_EQ(e.where(), "target fsim") << at;
        EXPECT_EQ(e.reason(), "kernels=" + std::string(set) + ": " + why) << at;
      }
      // The same refusal from fsim itself, for users of hw::Fsim without the runtime.
      tessera::hw::Dram dram(cfg);
      EXPECT_THROW(Fsim(cfg, dram, set), tessera::Error) << at;
    }
}

TEST(FsimKernels, EverySetTheCpuHasRunsTheDefaultShape) {
  // 1x16x16 has kernels in every set: a refusal there is the selection being wrong, not the shape.
  const Config cfg = Config::load("default");
  for (const char* set : {"generic", "avx2", "avx512bw", "avx512-vnni"})
    if (Fsim::kernelSetCpuProblem(set).empty()) {
      EXPECT_EQ(Fsim::kernelSetProblem(cfg, set), "") << set;
    }
  EXPECT_EQ(Fsim::kernelSetCpuProblem("generic"), "");
  EXPECT_NE(Fsim::kernelSetCpuProblem("avx3").find("unknown kernel set"), std::string::npos);
}

TEST(FsimKernels, AForcedRunTestsTheSetOnSomeConfig) {
  // Without this, a forced-kernel run on a CPU lacking the set would skip every fsim test one by
  // one and pass; it must end as a skip of the whole run instead (the environment above).
  const std::string set = forcedKernels();
  if (set.empty()) GTEST_SKIP() << "not a forced-kernel run (TESSERA_TARGET_OPTIONS has no kernels=)";
  int runnable = 0;
  for (const auto& name : tessera::hw::shippedConfigNames()) runnable += Fsim::kernelSetProblem(Config::load(name), set).empty();
  EXPECT_GT(runnable, 0) << "kernels=" << set << " runs no shipped config";
}

TEST(FsimKernels, AutoPicksAVectorSetWhereTheCpuHasOne) {
  const Config cfg = Config::load("default");
  tessera::hw::Dram dram(cfg);
  const std::string picked = Fsim(cfg, dram).backendName();
  if (Fsim::kernelSetCpuProblem("avx2").empty()) {
    EXPECT_NE(picked, "generic");
  } else {
    EXPECT_EQ(picked, "generic");
  }
}

}  // namespace
