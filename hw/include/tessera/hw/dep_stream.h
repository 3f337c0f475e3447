// An instruction stream built with VTA's dependency-flag rules, shared by the runtime's command queue and the compiler.
#pragma once

#include <vector>

#include "tessera/hw/isa.h"

namespace tessera::hw {

// Turns "stage A pushes a token to stage B" and "stage B pops it" into instruction flags: a pop
// waits on the next instruction of the popping stage, a push folds into the previous instruction
// when that one ran on the pushing stage, and a zero-width LOAD/STORE (a carrier) takes what cannot
// be folded. Every stage change of a program goes through here, so the runtime's streams and the
// compiler's follow one rule.
class DependencyStream {
 public:
  // Which instructions a push may fold into. VTA's runtime gives a zero-width LOAD no stage, so it
  // never takes a later push (kVtaRuntime, whose streams must match VTA's instruction for
  // instruction); the compiler lets the carrier it made for a stage's pops take that stage's next
  // push too, one instruction fewer (kIntoCarriers).
  enum class Folding { kVtaRuntime, kIntoCarriers };

  explicit DependencyStream(Folding folding) : folding_(folding) {}

  // Appends an instruction dispatched to `stage` that carries the pops pending there; the caller
  // fills in the rest. The reference is valid until the next call that adds an instruction.
  Insn& append(Stage stage);
  // Stage `to` waits for a token from `from` before its next instruction. A second pop of the same
  // direction before that instruction gets a carrier of its own.
  void pop(Stage from, Stage to);
  // Stage `from` sends a token to `to` after its latest instruction (or a carrier).
  void push(Stage from, Stage to);
  // Puts the pops pending on `stage` on a carrier now.
  void commitPops(Stage stage);
  bool popsPending() const;
  void dropPendingPops();

  std::vector<Insn>& insns() { return insns_; }
  const std::vector<Insn>& insns() const { return insns_; }
  // Forgets the instructions and the pending pops.
  void clear();

 private:
  Insn& carrier(Stage stage);
  bool foldsInto(const Insn& last, Stage stage) const;

  Folding folding_;
  std::vector<Insn> insns_;
  bool popPrev_[3] = {false, false, false}, popNext_[3] = {false, false, false};
};

}  // namespace tessera::hw
