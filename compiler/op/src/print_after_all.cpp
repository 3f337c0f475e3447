// The --print-after-all banner both compilers share.
#include "tessera/compiler/op/print_after_all.h"

namespace tessera::compiler::op {

void printDumpBanner(std::ostream& os, const std::string& stage) { os << "\n*** IR dump after " << stage << " ***\n"; }

}  // namespace tessera::compiler::op
