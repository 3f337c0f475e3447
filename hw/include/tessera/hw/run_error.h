// The words every model uses when a run fails (fault, deadlock, unbalanced FINISH), composed once so fsim, hls and tsim agree.
#pragma once

#include <cstdint>
#include <string>

#include "tessera/hw/config.h"
#include "tessera/support/error.h"
#include "tessera/hw/isa.h"

namespace tessera::hw::run_error {

// Why a stage's head instruction cannot issue.
std::string waitsForToken(TokenQueue queue);
std::string waitsForSpace(TokenQueue queue, uint64_t depth);

// A run whose instructions hold no FINISH: the device would never signal done.
Error missingFinish(uint64_t count);

// The GEMM/ALU work of a run passed its wait_cycles budget at instruction `index`.
Error budgetExceeded(size_t index, const Insn& insn, uint64_t budget, uint64_t workSoFar);

// The micro-op operands whose SRAM index a GEMM/ALU loop can push past its buffer.
enum class Operand : int { kDst = 0, kSrc = 1, kWgt = 2 };
// A GEMM/ALU micro-op's `operand` index goes past its buffer's depth. `reached` is the index the
// last loop iteration reaches when the model knows it (pass kUnknownIndex when it does not: the RTL
// reports only that it happened); `suffix` adds what only one model knows (e.g. when, in cycles).
constexpr uint64_t kUnknownIndex = ~uint64_t(0);
Error sramIndexPastDepth(const Config& cfg, size_t index, const Insn& insn, uint64_t uop, Operand operand,
                         uint64_t reached, const std::string& suffix = "");

// "No stage can make progress": one clause per blocked stage head and for a stalled fetch.
class Deadlock {
 public:
  void stageBlocked(Stage stage, size_t index, const Insn& insn, const std::string& why);
  void fetchStalled(size_t index, const Insn& insn, uint64_t insnQueueDepth);
  // The error, located at instruction `at` (the earliest one that is stuck).
  Error error(uint64_t at) const;

 private:
  std::string clauses_;
};

// A timed model's watchdog: nothing moved for `idleCycles` of a run that had gone `runCycles`;
// `state` describes every module.
Error deadlockAfterCycles(uint64_t runCycles, uint64_t idleCycles, const std::string& state);

// FINISH retired while work or tokens were left: one clause per thing left over.
class UnbalancedFinish {
 public:
  void neverExecuted(Stage stage, size_t index, const Insn& insn, const std::string& why);
  // The same, for a model that names the instruction itself (a timed model may name an index
  // past the program when its state is inconsistent).
  void neverExecuted(Stage stage, const std::string& insnName, const std::string& why);
  void computeAfterFinish(uint64_t count);
  // Instruction `index` was never fetched, nor were the `count - index - 1` after it.
  void neverFetched(size_t index, const Insn& insn, uint64_t count);
  void neverFetched(size_t index, const std::string& insnName, uint64_t count);
  void tokensLeft(TokenQueue queue, uint64_t tokens);
  bool empty() const { return clauses_.empty(); }
  Error error(uint64_t finishIndex) const;

 private:
  std::string clauses_;
};

}  // namespace tessera::hw::run_error
