// The host side of a compiled model as LLVM code: IR text, native objects and shared libraries, and an in-process JIT.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tessera/compiler/model/run.h"
#include "tessera/runtime/aot.h"

namespace tessera::compiler::codegen {

// The triples `tessera compile --triple` accepts (docs/aot.md), in the order the docs list them.
const std::vector<std::string>& supportedTriples();

// The ONNX operators (default domain) and Tessera's own (tessera.FoldInput) the generator turns
// to loops; other host steps are refused naming the node.
const std::vector<std::string>& supportedHostOps();

// A C identifier for a model file ("models/fashion_cnn.onnx" -> "fashion_cnn").
std::string symbolNameFor(const std::string& modelPath);

enum class Emit { kIr, kObject, kShared };

struct EmitOptions {
  std::string symbol;  // <symbol>_run, <symbol>_model; a C identifier
  std::string triple;  // one of supportedTriples()
  bool optimize = true;     // the LLVM O2 pipeline before writing an object
  bool optimizeIr = false;  // IR text after that pipeline too (by default it is printed as generated)
};

// The model's host side for `options.triple`: IR text (as generated and verified, or optimized), or
// an object or shared library (optimized). Throws tessera::Error naming the triple, node or file on failure.
std::vector<uint8_t> emit(const model::CompiledModel& model, Emit kind, const EmitOptions& options);

// The C header declaring what an object or shared library defines: the descriptor and the run
// function, with the inputs' and outputs' names, dtypes and shapes.
std::string header(const model::CompiledModel& model, const std::string& symbol);

// The same IR compiled in this process through LLVM's ORC JIT.
class JitModel {
 public:
  JitModel(const model::CompiledModel& model, const std::string& symbol);
  ~JitModel();
  JitModel(const JitModel&) = delete;
  JitModel& operator=(const JitModel&) = delete;
  const TesseraAotModel& descriptor() const { return *descriptor_; }
  double compileSeconds() const { return compileSeconds_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  const TesseraAotModel* descriptor_ = nullptr;
  double compileSeconds_ = 0;
};

// Runs generated code (JIT or linked) on `session`: checks the inputs as ModelRunner does,
// converts them to row-major buffers and the outputs back. Only outputs, seconds and segmentSeconds are filled;
// `layers` has one zero entry per layer.
model::ModelRunResult runGenerated(const model::CompiledModel& model, const TesseraAotModel& code, TesseraAotSession* session,
                            const std::map<std::string, ir::Tensor>& inputs);

}  // namespace tessera::compiler::codegen
