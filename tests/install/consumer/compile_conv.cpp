// Compiles a convolution with the installed C++ compiler and runs it through the installed runtime on a
// target, checking every output against the host reference.
#include <cstdio>
#include <exception>

#include "tessera/compiler/op/compile.h"
#include "tessera/compiler/op/operator.h"
#include "tessera/compiler/op/program.h"
#include "tessera/hw/config.h"
#include "tessera/runtime/session.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: compile_conv TARGET\n");
    return 2;
  }
  try {
    using namespace tessera;
    const hw::Config cfg = hw::Config::load("default");
    const compiler::op::Operator op =
        compiler::op::Operator::parse("conv2d cin=32 h=14 w=14 cout=48 kernel=3 stride=1 pad=1 shift=9 bias=1 relu=1", "compile_conv");
    const compiler::op::OperatorData data = compiler::op::OperatorData::random(op, 7);
    const compiler::op::Program program = compiler::op::compile(cfg, op, data);
    runtime::Session session(argv[1], cfg);
    const compiler::op::RunResult run = compiler::op::runProgram(program, session, data);
    const auto expected = compiler::op::reference(op, data);
    size_t differ = 0;
    for (size_t i = 0; i < expected.size(); ++i) differ += run.output[i] != expected[i];
    std::printf("%s on %s: %zu instructions, %zu outputs, %zu differ from the reference\n", op.describe().c_str(),
                argv[1], program.insns.size(), expected.size(), differ);
    return differ == 0 && !expected.empty() ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "compile_conv: %s\n", e.what());
    return 1;
  }
}
