// Unit tests of the shared run-failure messages (hw/run_error.h) and the dependency-flag stream (hw/dep_stream.h).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tessera/hw/config.h"
#include "tessera/hw/dep_stream.h"
#include "tessera/hw/isa.h"
#include "tessera/hw/program.h"
#include "tessera/hw/run_error.h"

namespace {

using namespace tessera::hw;

Insn gemm() {
  Insn in;
  in.opcode = Opcode::kGemm;
  return in;
}

Insn loadInp(uint32_t x) {
  Insn in;
  in.opcode = Opcode::kLoad;
  in.memType = static_cast<uint32_t>(MemId::kInp);
  in.xSize = x;
  in.ySize = 1;
  return in;
}

// The exact words matter: fsim, hls, tsim and rtl-sc are compared word for word, and users grep them.
TEST(RunError, Messages) {
  const Config cfg = Config::load("default");
  EXPECT_STREQ(run_error::missingFinish(7).what(),
               "run of 7 instructions: the program ended without a FINISH instruction; the device would never signal done");
  EXPECT_EQ(run_error::waitsForToken(TokenQueue::kComputeToStore),
            std::string("waits for a token on queue ") + tokenQueueName(TokenQueue::kComputeToStore) + ", which is empty");
  EXPECT_EQ(run_error::waitsForSpace(TokenQueue::kLoadToCompute, 1024),
            std::string("waits for space on queue ") + tokenQueueName(TokenQueue::kLoadToCompute) +
                ", which is full (1024 tokens)");
  EXPECT_STREQ(run_error::sramIndexPastDepth(cfg, 3, gemm(), 5, run_error::Operand::kSrc, 2048).what(),
               (insnName(3, gemm()) + ", micro-op 5 with field src_factor_out/src_factor_in: the input (src) index "
                                      "reaches 2048 at the last loop iteration, past the buffer depth 2048")
                   .c_str());
  Insn alu;
  alu.opcode = Opcode::kAlu;
  EXPECT_STREQ(run_error::sramIndexPastDepth(cfg, 1, alu, 0, run_error::Operand::kSrc, run_error::kUnknownIndex,
                                             " (after 9 cycles)")
                   .what(),
               (insnName(1, alu) + ", micro-op 0 with field src_factor_out/src_factor_in: the accumulator (src) "
                                   "index goes past the buffer depth 2048 (after 9 cycles)")
                   .c_str());
  EXPECT_STREQ(run_error::budgetExceeded(2, gemm(), 100, 128).what(),
               (insnName(2, gemm()) + ": the run exceeds wait_cycles=100: at least 128 cycles of GEMM/ALU micro-ops "
                                      "by this instruction")
                   .c_str());
}

TEST(RunError, DeadlockAndUnbalancedFinishList_EveryClause) {
  run_error::Deadlock d;
  d.stageBlocked(Stage::kCompute, 4, gemm(), "waits");
  d.fetchStalled(9, loadInp(1), 512);
  EXPECT_STREQ(d.error(4).what(), ("deadlock at instruction 4: no stage can make progress: compute stage: " +
                                   insnName(4, gemm()) + " waits; fetch stalled at " + insnName(9, loadInp(1)) +
                                   ": the load instruction queue is full (512 entries)")
                                      .c_str());
  run_error::UnbalancedFinish u;
  EXPECT_TRUE(u.empty());
  u.neverExecuted(Stage::kLoad, 2, loadInp(1), "why");
  u.computeAfterFinish(3);
  u.neverFetched(8, loadInp(1), 10);
  u.tokensLeft(TokenQueue::kStoreToCompute, 2);
  EXPECT_FALSE(u.empty());
  EXPECT_STREQ(u.error(6).what(),
               ("FINISH at instruction 6: the program is not balanced at FINISH; load " + insnName(2, loadInp(1)) +
                " never executed (why); 3 compute instruction(s) after FINISH never executed; " +
                insnName(8, loadInp(1)) + " and 1 more after it were never fetched; 2 token(s) left on queue " +
                tokenQueueName(TokenQueue::kStoreToCompute))
                   .c_str());
  EXPECT_STREQ(run_error::deadlockAfterCycles(500, 300, "fetch idle").what(),
               "deadlock after 500 cycles: nothing moved for 300 cycles: fetch idle");
}

// One line per instruction: opcode, memory type, width and the four flags, to compare streams by eye.
std::string flags(const std::vector<Insn>& insns) {
  std::string s;
  for (const Insn& in : insns)
    s += std::string(opcodeName(in.opcode)) + (in.isMem() ? std::string(" ") + memIdName(in.memType) : "") +
         (in.isNop() ? " nop" : "") + " " + (in.popPrev ? "p" : "-") + (in.popNext ? "n" : "-") +
         (in.pushPrev ? "P" : "-") + (in.pushNext ? "N" : "-") + "\n";
  return s;
}

TEST(DependencyStream, PopsWaitOnTheNextInstructionPushesFoldIntoTheLast) {
  DependencyStream s(DependencyStream::Folding::kVtaRuntime);
  s.append(Stage::kLoad) = loadInp(4);
  s.push(Stage::kLoad, Stage::kCompute);  // folds into the LOAD
  s.pop(Stage::kLoad, Stage::kCompute);   // waits on the next compute instruction
  Insn& g = s.append(Stage::kCompute);
  const bool popPrev = g.popPrev;
  g = gemm();
  g.popPrev = popPrev;
  s.push(Stage::kCompute, Stage::kLoad);
  s.push(Stage::kCompute, Stage::kLoad);  // the GEMM already pushes there: a carrier takes it
  EXPECT_EQ(flags(s.insns()), "LOAD INP ---N\nGEMM p-P-\nLOAD UOP nop --P-\n");
  EXPECT_FALSE(s.popsPending());
}

TEST(DependencyStream, SecondPopOfOneDirectionGetsACarrier) {
  DependencyStream s(DependencyStream::Folding::kVtaRuntime);
  s.pop(Stage::kCompute, Stage::kStore);
  EXPECT_TRUE(s.popsPending());
  s.pop(Stage::kCompute, Stage::kStore);
  EXPECT_EQ(flags(s.insns()), "STORE UOP nop p---\n");
  s.commitPops(Stage::kStore);
  EXPECT_EQ(flags(s.insns()), "STORE UOP nop p---\nSTORE UOP nop p---\n");
  s.pop(Stage::kStore, Stage::kCompute);
  s.dropPendingPops();
  EXPECT_FALSE(s.popsPending());
  s.clear();
  EXPECT_TRUE(s.insns().empty());
}

// VTA's runtime gives a zero-width LOAD no stage; the compiler folds into its own carriers.
TEST(DependencyStream, FoldingIntoLoadCarriersIsTheOnlyDifference) {
  for (const auto folding : {DependencyStream::Folding::kVtaRuntime, DependencyStream::Folding::kIntoCarriers}) {
    DependencyStream s(folding);
    s.pop(Stage::kCompute, Stage::kLoad);
    s.push(Stage::kLoad, Stage::kCompute);  // commits the pop on a carrier, then pushes
    if (folding == DependencyStream::Folding::kVtaRuntime)
      EXPECT_EQ(flags(s.insns()), "LOAD INP nop -n--\nLOAD INP nop ---N\n");
    else
      EXPECT_EQ(flags(s.insns()), "LOAD INP nop -n-N\n");
  }
}

}  // namespace
