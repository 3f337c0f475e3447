// Target options and config support: parsing, validation by key, $TESSERA_TARGET_OPTIONS, TargetInfo::supports.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "tessera/hw/config.h"
#include "tessera/hw/dram.h"
#include "tessera/support/error.h"
#include "tessera/runtime/session.h"
#include "tessera/runtime/target.h"

namespace {

using tessera::Error;
using tessera::hw::Config;
using tessera::runtime::TargetOptions;
namespace rt = tessera::runtime;

template <typename F>
Error errorOf(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "no tessera::Error thrown";
  return Error("", "");
}

bool haveTsim() {
  for (const auto* t : rt::availableTargets())
    if (t->name == "tsim") return true;
  return false;
}

// Sets an environment variable for one scope.
struct ScopedEnv {
  ScopedEnv(const char* name, const char* value) : name_(name) {
    const char* old = std::getenv(name);
    if (old) old_ = old, had_ = true;
    ::setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (had_) ::setenv(name_, old_.c_str(), 1);
    else ::unsetenv(name_);
  }
  const char* name_;
  std::string old_;
  bool had_ = false;
};

TEST(TargetOptions, ParsesKeyValueLists) {
  const TargetOptions o = rt::parseTargetOptions("trace=a.fst,mem-latency=3,trace=b.fst,", "test");
  EXPECT_EQ(o.size(), 2u);
  EXPECT_EQ(o.at("trace"), "b.fst") << "a later key replaces an earlier one";
  EXPECT_EQ(o.at("mem-latency"), "3");
  EXPECT_TRUE(rt::parseTargetOptions("", "test").empty());
  EXPECT_EQ(rt::parseTargetOptions("k=", "test").at("k"), "");
  const Error e = errorOf([] { rt::parseTargetOptions("mem-latency=3,oops", "TESSERA_TARGET_OPTIONS"); });
  EXPECT_EQ(e.where(), "TESSERA_TARGET_OPTIONS");
  EXPECT_NE(e.reason().find("'oops'"), std::string::npos) << e.what();
  EXPECT_THROW(rt::parseTargetOptions("=3", "test"), Error);
}

TEST(TargetOptions, UnknownKeysAreNamed) {
  const Config cfg = Config::load("default");
  tessera::hw::Dram dram(cfg);
  const Error e = errorOf([&] { rt::createTarget("fsim", cfg, dram, {{"trace", "x.fst"}}); });
  EXPECT_EQ(e.where(), "target option 'trace'");
  EXPECT_EQ(e.reason(), "unknown for target fsim (known: kernels)");
  EXPECT_NE(rt::createTarget("fsim", cfg, dram), nullptr) << "no options: fine";
  if (haveTsim()) {
    const Error t = errorOf([&] { rt::createTarget("tsim", cfg, dram, {{"latency", "3"}}); });
    EXPECT_EQ(t.where(), "target option 'latency'");
    EXPECT_NE(t.reason().find("known: trace, trace-force, mem-latency"), std::string::npos) << t.what();
  }
}

TEST(TargetOptions, SupportsSaysWhichConfigsATargetRuns) {
  for (const auto& name : tessera::hw::shippedConfigNames())
    EXPECT_TRUE(rt::findTarget("fsim").supports(Config::load(name))) << "fsim runs " << name;
  if (!haveTsim()) GTEST_SKIP() << "tsim is not built";
  const auto& tsim = rt::findTarget("tsim");
  EXPECT_TRUE(tsim.supports(Config::load("default")));
  Config odd = Config::load("default");
  odd.name = "odd";
  odd.logUopBuffSize = 14;
  odd.derive("test");
  EXPECT_FALSE(tsim.supports(odd));
  const Error e = errorOf([&] { rt::Session s("tsim", odd); });
  EXPECT_EQ(e.where(), "target tsim");
  EXPECT_NE(e.reason().find("tsim is not built for config 'odd'"), std::string::npos) << e.what();
}

TEST(TargetOptions, SessionReadsTheEnvironmentAndExplicitOptionsWin) {
  ScopedEnv env("TESSERA_TARGET_OPTIONS", "mem-latency=77,watchdog-cycles=5000");
  const Config cfg = Config::load("default");
  const Error e = errorOf([&] { rt::Session s("fsim", cfg); });
  EXPECT_EQ(e.where(), "target option 'mem-latency'") << "fsim is checked against the environment's keys too";
  if (!haveTsim()) GTEST_SKIP() << "tsim is not built";
  rt::Session s("tsim", cfg, {{"mem-latency", "5"}});
  EXPECT_EQ(s.targetOptions().at("mem-latency"), "5");
  EXPECT_EQ(s.targetOptions().at("watchdog-cycles"), "5000");
  EXPECT_EQ(s.createDevice()->name(), "tsim");
}

}  // namespace
