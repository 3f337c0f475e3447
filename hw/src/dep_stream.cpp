// VTA's dependency-flag folding over a growing instruction stream.
#include "tessera/hw/dep_stream.h"

namespace tessera::hw {

Insn& DependencyStream::append(Stage stage) {
  const int s = static_cast<int>(stage);
  insns_.emplace_back();
  Insn& in = insns_.back();
  in.popPrev = popPrev_[s];
  in.popNext = popNext_[s];
  popPrev_[s] = popNext_[s] = false;
  return in;
}

Insn& DependencyStream::carrier(Stage stage) {
  Insn& in = append(stage);
  in.opcode = stage == Stage::kStore ? Opcode::kStore : Opcode::kLoad;
  in.memType = static_cast<uint32_t>(stage == Stage::kLoad ? MemId::kInp : MemId::kUop);
  return in;
}

void DependencyStream::pop(Stage from, Stage to) {
  const int t = static_cast<int>(to);
  bool& pending = from < to ? popPrev_[t] : popNext_[t];
  if (pending) commitPops(to);
  pending = true;
}

bool DependencyStream::foldsInto(const Insn& last, Stage stage) const {
  if (folding_ == Folding::kVtaRuntime && last.opcode == Opcode::kLoad && last.xSize == 0) return false;
  return last.stage() == stage;
}

void DependencyStream::push(Stage from, Stage to) {
  commitPops(from);
  if (!insns_.empty() && foldsInto(insns_.back(), from)) {
    bool& flag = from < to ? insns_.back().pushNext : insns_.back().pushPrev;
    if (!flag) {
      flag = true;
      return;
    }
  }
  Insn& in = carrier(from);
  (from < to ? in.pushNext : in.pushPrev) = true;
}

void DependencyStream::commitPops(Stage stage) {
  const int s = static_cast<int>(stage);
  if (popPrev_[s] || popNext_[s]) carrier(stage);
}

bool DependencyStream::popsPending() const {
  for (int s = 0; s < 3; ++s)
    if (popPrev_[s] || popNext_[s]) return true;
  return false;
}

void DependencyStream::dropPendingPops() {
  for (int s = 0; s < 3; ++s) popPrev_[s] = popNext_[s] = false;
}

void DependencyStream::clear() {
  insns_.clear();
  dropPendingPops();
}

}  // namespace tessera::hw
