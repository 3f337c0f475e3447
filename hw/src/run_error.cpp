// Composition of the run-failure messages shared by fsim, hls and tsim.
#include "tessera/hw/run_error.h"

#include "tessera/hw/program.h"

namespace tessera::hw::run_error {

namespace {

std::string operandName(Operand operand, bool gemm) {
  switch (operand) {
    case Operand::kDst: return "accumulator (dst)";
    case Operand::kSrc: return gemm ? "input (src)" : "accumulator (src)";
    case Operand::kWgt: return "weight (wgt)";
  }
  return "?";
}

uint64_t operandDepth(const Config& cfg, Operand operand, bool gemm) {
  switch (operand) {
    case Operand::kDst: return cfg.accDepth;
    case Operand::kSrc: return gemm ? cfg.inpDepth : cfg.accDepth;
    case Operand::kWgt: return cfg.wgtDepth;
  }
  return 0;
}

// The outer/inner factor fields that move an operand's index across the loop nest.
std::string factorFields(Operand operand) {
  const Field out = operand == Operand::kDst   ? Field::kDstFactorOut
                    : operand == Operand::kSrc ? Field::kSrcFactorOut
                                               : Field::kWgtFactorOut;
  return std::string(fieldName(out)) + "/" + fieldName(static_cast<Field>(int(out) + 1));
}

void append(std::string& clauses, const std::string& clause, const char* separator) {
  clauses += (clauses.empty() ? std::string() : std::string(separator)) + clause;
}

}  // namespace

std::string waitsForToken(TokenQueue queue) {
  return std::string("waits for a token on queue ") + tokenQueueName(queue) + ", which is empty";
}

std::string waitsForSpace(TokenQueue queue, uint64_t depth) {
  return std::string("waits for space on queue ") + tokenQueueName(queue) + ", which is full (" +
         std::to_string(depth) + " tokens)";
}

Error missingFinish(uint64_t count) {
  return Error("run of " + std::to_string(count) + " instructions",
               "the program ended without a FINISH instruction; the device would never signal done");
}

Error budgetExceeded(size_t index, const Insn& insn, uint64_t budget, uint64_t workSoFar) {
  return Error(insnName(index, insn), "the run exceeds wait_cycles=" + std::to_string(budget) + ": at least " +
                                          std::to_string(workSoFar) +
                                          " cycles of GEMM/ALU micro-ops by this instruction");
}

Error sramIndexPastDepth(const Config& cfg, size_t index, const Insn& insn, uint64_t uop, Operand operand,
                         uint64_t reached, const std::string& suffix) {
  const bool gemm = insn.opcode == Opcode::kGemm;
  const std::string depth = std::to_string(operandDepth(cfg, operand, gemm));
  const std::string what = "the " + operandName(operand, gemm) + " index ";
  return Error(insnName(index, insn) + ", micro-op " + std::to_string(uop) + " with field " + factorFields(operand),
               (reached == kUnknownIndex
                    ? what + "goes past the buffer depth " + depth
                    : what + "reaches " + std::to_string(reached) + " at the last loop iteration, past the buffer depth " +
                          depth) +
                   suffix);
}

void Deadlock::stageBlocked(Stage stage, size_t index, const Insn& insn, const std::string& why) {
  append(clauses_, std::string(stageName(stage)) + " stage: " + insnName(index, insn) + " " + why, "; ");
}

void Deadlock::fetchStalled(size_t index, const Insn& insn, uint64_t insnQueueDepth) {
  append(clauses_,
         "fetch stalled at " + insnName(index, insn) + ": the " + stageName(insn.stage()) +
             " instruction queue is full (" + std::to_string(insnQueueDepth) + " entries)",
         "; ");
}

Error Deadlock::error(uint64_t at) const {
  return Error("deadlock at instruction " + std::to_string(at), "no stage can make progress: " + clauses_);
}

Error deadlockAfterCycles(uint64_t runCycles, uint64_t idleCycles, const std::string& state) {
  return Error("deadlock after " + std::to_string(runCycles) + " cycles",
               "nothing moved for " + std::to_string(idleCycles) + " cycles: " + state);
}

void UnbalancedFinish::neverExecuted(Stage stage, size_t index, const Insn& insn, const std::string& why) {
  neverExecuted(stage, insnName(index, insn), why);
}

void UnbalancedFinish::neverExecuted(Stage stage, const std::string& insnName, const std::string& why) {
  clauses_ += std::string("; ") + stageName(stage) + " " + insnName + " never executed (" + why + ")";
}

void UnbalancedFinish::computeAfterFinish(uint64_t count) {
  clauses_ += "; " + std::to_string(count) + " compute instruction(s) after FINISH never executed";
}

void UnbalancedFinish::neverFetched(size_t index, const Insn& insn, uint64_t count) {
  neverFetched(index, insnName(index, insn), count);
}

void UnbalancedFinish::neverFetched(size_t index, const std::string& insnName, uint64_t count) {
  clauses_ += "; " + insnName + " and " + std::to_string(count - index - 1) + " more after it were never fetched";
}

void UnbalancedFinish::tokensLeft(TokenQueue queue, uint64_t tokens) {
  clauses_ += "; " + std::to_string(tokens) + " token(s) left on queue " + tokenQueueName(queue);
}

Error UnbalancedFinish::error(uint64_t finishIndex) const {
  return Error("FINISH at instruction " + std::to_string(finishIndex), "the program is not balanced at FINISH" + clauses_);
}

}  // namespace tessera::hw::run_error
