// The banner that opens every --print-after-all dump, in the operator compiler and the graph compiler alike.
#pragma once

#include <ostream>
#include <string>

namespace tessera::compiler::op {

// A blank line, then "*** IR dump after <stage> ***". The stage's dump follows it.
void printDumpBanner(std::ostream& os, const std::string& stage);

}  // namespace tessera::compiler::op
