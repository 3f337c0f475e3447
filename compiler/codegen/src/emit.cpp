// Generated host code out of LLVM: IR text, objects and shared libraries per triple, the C header, the ORC JIT, and running it.
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <sstream>

#include <unistd.h>

#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/ADT/Triple.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/OptimizationLevel.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>

#include "generate.h"
#include "tessera/compiler/codegen/codegen.h"
#include "tessera/support/error.h"
#include "tessera/support/file_io.h"

namespace tessera::compiler::codegen {

using ir::DType;
using ir::Tensor;
using model::CompiledModel;
using model::ModelRunResult;
using model::checkModelInputs;

namespace {

// The boards each triple stands for decide the CPU: generic x86-64 (no FMA, AVX: the object runs
// on any x86-64 Linux), the Pynq-Z1's Cortex-A9 with NEON, the Ultra96's and ZCU104's Cortex-A53.
struct TripleInfo {
  const char* triple;
  const char* cpu;
  const char* features;
  const char* linker;  // the C compiler driver that links a shared library for it
};
const TripleInfo kTriples[] = {
    {"x86_64-linux-gnu", "x86-64", "", "cc"},
    {"armv7a-linux-gnueabihf", "cortex-a9", "+neon,+vfp3", "arm-linux-gnueabihf-gcc"},
    {"aarch64-linux-gnu", "cortex-a53", "+neon", "aarch64-linux-gnu-gcc"},
};

const TripleInfo& tripleInfo(const std::string& triple) {
  for (const TripleInfo& t : kTriples)
    if (triple == t.triple) return t;
  std::string list;
  for (const TripleInfo& t : kTriples) list += (list.empty() ? "" : ", ") + std::string(t.triple);
  throw Error("target triple " + triple, "is not a supported target triple (supported: " + list + ")");
}

void initializeLlvm() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeAllTargetInfos();
    llvm::InitializeAllTargets();
    llvm::InitializeAllTargetMCs();
    llvm::InitializeAllAsmPrinters();
  });
}

std::unique_ptr<llvm::TargetMachine> targetMachine(const std::string& triple) {
  const TripleInfo& info = tripleInfo(triple);
  initializeLlvm();
  // The Debian-style names leave out the vendor; unnormalized, LLVM would read "linux" as the vendor
  // and miss the OS and the EABI environment (armhf then calls GNU libgcc helpers with the wrong ABI).
  const std::string full = llvm::Triple::normalize(triple);
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(full, error);
  if (!target) throw Error("target triple " + triple, "LLVM has no backend for it: " + error);
  llvm::TargetOptions options;
  // gnueabihf passes floats in VFP registers; LLVM takes that from the options, not the triple.
  if (triple.find("gnueabihf") != std::string::npos) options.FloatABIType = llvm::FloatABI::Hard;
  std::unique_ptr<llvm::TargetMachine> tm(target->createTargetMachine(full, info.cpu, info.features, options,
                                                                      llvm::Reloc::PIC_, llvm::None, llvm::CodeGenOpt::Default));
  if (!tm) throw Error("target triple " + triple, "LLVM cannot create a target machine for it");
  return tm;
}

// LLVM's O2 pipeline: the loops get unrolled, vectorized where the target's IEEE rules allow, and
// their index arithmetic strength-reduced. No fast-math flags are set, so results stay bit-exact.
void optimize(llvm::Module& mod, llvm::TargetMachine* tm) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(tm);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O2);
  mpm.run(mod, mam);
}

std::vector<uint8_t> objectFile(llvm::Module& mod, llvm::TargetMachine& tm) {
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager pm;
  if (tm.addPassesToEmitFile(pm, os, nullptr, llvm::CGFT_ObjectFile))
    throw Error("target triple " + tm.getTargetTriple().str(), "LLVM cannot emit object files for it");
  pm.run(mod);
  return std::vector<uint8_t>(buffer.begin(), buffer.end());
}

// A shared library is the object linked by the triple's C compiler driver (LLVM 14 has no linker
// library); its references to tessera_aot_* are resolved by the runtime the program loads.
std::vector<uint8_t> sharedLibrary(const std::vector<uint8_t>& object, const std::string& triple) {
  const TripleInfo& info = tripleInfo(triple);
  namespace fs = std::filesystem;
  std::string dirTemplate = (fs::temp_directory_path() / "tessera-aot-XXXXXX").string();
  if (!mkdtemp(dirTemplate.data())) throw Error(fs::temp_directory_path().string(), "cannot create a temporary directory");
  const fs::path dir = dirTemplate;
  const std::string obj = (dir / "model.o").string(), so = (dir / "model.so").string(), log = (dir / "link.log").string();
  try {
    writeBinaryFile(obj, object, false);
  } catch (const Error&) {
    fs::remove_all(dir);
    throw;
  }
  const std::string command = std::string(info.linker) + " -shared -o '" + so + "' '" + obj + "' -lm > '" + log + "' 2>&1";
  const int status = std::system(command.c_str());
  if (status != 0) {
    const std::string output = readTextFile(log);
    fs::remove_all(dir);
    throw Error("shared library for " + triple, std::string("linking with ") + info.linker + " failed (is its toolchain installed? " +
                                                        "scripts/install-deps.sh installs the cross compilers): " + output);
  }
  std::vector<uint8_t> data = readBinaryFile(so);
  fs::remove_all(dir);
  return data;
}

const char* cType(DType t) {
  switch (t) {
    case DType::kFloat32: return "float";
    case DType::kUInt8: return "uint8_t";
    case DType::kInt8: return "int8_t";
    case DType::kInt32: return "int32_t";
    case DType::kInt64: return "int64_t";
    case DType::kBool: return "uint8_t";  // 0 or 1
  }
  return "?";
}

}  // namespace

const std::vector<std::string>& supportedTriples() {
  static const std::vector<std::string> list = [] {
    std::vector<std::string> v;
    for (const TripleInfo& t : kTriples) v.push_back(t.triple);
    return v;
  }();
  return list;
}

std::string symbolNameFor(const std::string& modelPath) {
  std::string stem = std::filesystem::path(modelPath).stem().string();
  std::string s;
  for (char c : stem) s += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) s = "model_" + s;
  return s;
}

std::vector<uint8_t> emit(const CompiledModel& model, Emit kind, const EmitOptions& options) {
  std::unique_ptr<llvm::TargetMachine> tm = targetMachine(options.triple);
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> mod =
      detail::generateModule(model, options.symbol, context, tm->getTargetTriple().str(), tm->createDataLayout());
  if (kind == Emit::kIr) {
    if (options.optimizeIr) optimize(*mod, tm.get());
    std::string text;
    llvm::raw_string_ostream os(text);
    mod->print(os, nullptr);
    os.flush();
    return std::vector<uint8_t>(text.begin(), text.end());
  }
  if (options.optimize) optimize(*mod, tm.get());
  std::vector<uint8_t> object = objectFile(*mod, *tm);
  if (kind == Emit::kObject) return object;
  return sharedLibrary(object, options.triple);
}

std::string header(const CompiledModel& model, const std::string& symbol) {
  std::ostringstream h;
  std::string guard = symbol;
  for (char& c : guard) c = char(std::toupper(static_cast<unsigned char>(c)));
  h << "/* " << symbol << ": the host side of " << model.source << " compiled ahead of time by tessera compile (docs/aot.md). */\n"
    << "#ifndef " << guard << "_TESSERA_H\n#define " << guard << "_TESSERA_H\n\n"
    << "#include \"tessera/runtime/aot.h\"\n\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n"
    << "/* Open a session with tessera_aot_open(&" << symbol << "_model, target, error, size). */\n"
    << "extern const TesseraAotModel " << symbol << "_model;\n\n"
    << "/* Inputs, row-major, in this order:\n";
  auto describe = [&](const std::vector<Tensor>& list) {
    for (size_t i = 0; i < list.size(); ++i) {
      h << " *   [" << i << "] " << list[i].name << ": " << cType(list[i].dtype) << "[";
      for (size_t k = 0; k < list[i].shape.size(); ++k) h << (k ? "][" : "") << list[i].shape[k];
      h << "] (" << list[i].elements() << " values)\n";
    }
  };
  describe(model.inputs);
  h << " * Outputs:\n";
  describe(model.outputs);
  h << " * Returns 0, or -1 with tessera_aot_error(session) saying why. */\n"
    << "int " << symbol << "_run(TesseraAotSession* session, const void* const* inputs, void* const* outputs);\n\n"
    << "#ifdef __cplusplus\n}\n#endif\n\n#endif\n";
  return h.str();
}

// ---------------------------------------------------------------------------------------------

struct JitModel::Impl {
  std::unique_ptr<llvm::orc::LLJIT> jit;
};

namespace {

template <typename T>
[[noreturn]] void jitFailure(const std::string& where, T&& error) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << error;
  throw Error(where, "the ORC JIT failed: " + os.str());
}

}  // namespace

JitModel::JitModel(const CompiledModel& model, const std::string& symbol) : impl_(std::make_unique<Impl>()) {
  const auto t0 = std::chrono::steady_clock::now();
  initializeLlvm();
  auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!jtmb) jitFailure(model.source, jtmb.takeError());
  auto tm = jtmb->createTargetMachine();
  if (!tm) jitFailure(model.source, tm.takeError());
  auto jit = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(*jtmb).create();
  if (!jit) jitFailure(model.source, jit.takeError());
  impl_->jit = std::move(*jit);
  llvm::orc::LLJIT& j = *impl_->jit;

  // The runtime entry points by address (the executable need not export them); libc's and libm's
  // (memset, memcpy, exp) from the process.
  llvm::orc::MangleAndInterner mangle(j.getExecutionSession(), j.getDataLayout());
  llvm::orc::SymbolMap runtime;
  auto add = [&](const char* name, auto* fn) {
    runtime[mangle(name)] = llvm::JITEvaluatedSymbol(llvm::pointerToJITTargetAddress(fn), llvm::JITSymbolFlags::Exported);
  };
  add("tessera_aot_scratch", &tessera_aot_scratch);
  add("tessera_aot_arena", &tessera_aot_arena);
  add("tessera_aot_run_segment", &tessera_aot_run_segment);
  if (auto e = j.getMainJITDylib().define(llvm::orc::absoluteSymbols(runtime))) jitFailure(model.source, std::move(e));
  auto process = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(j.getDataLayout().getGlobalPrefix());
  if (!process) jitFailure(model.source, process.takeError());
  j.getMainJITDylib().addGenerator(std::move(*process));

  auto context = std::make_unique<llvm::LLVMContext>();
  std::unique_ptr<llvm::Module> mod =
      detail::generateModule(model, symbol, *context, j.getTargetTriple().str(), j.getDataLayout());
  optimize(*mod, tm->get());
  if (auto e = j.addIRModule(llvm::orc::ThreadSafeModule(std::move(mod), std::move(context)))) jitFailure(model.source, std::move(e));
  auto sym = j.lookup(symbol + "_model");
  if (!sym) jitFailure(model.source, sym.takeError());
  descriptor_ = llvm::jitTargetAddressToPointer<const TesseraAotModel*>(sym->getAddress());
  compileSeconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

JitModel::~JitModel() = default;

ModelRunResult runGenerated(const CompiledModel& m, const TesseraAotModel& code, TesseraAotSession* session,
                            const std::map<std::string, Tensor>& inputs) {
  const auto start = std::chrono::steady_clock::now();
  if (code.input_count != m.inputs.size() || code.output_count != m.outputs.size())
    throw Error(m.source, "the generated code has " + std::to_string(code.input_count) + " inputs and " +
                              std::to_string(code.output_count) + " outputs, the model " + std::to_string(m.inputs.size()) +
                              " and " + std::to_string(m.outputs.size()));
  checkModelInputs(m, inputs);
  std::vector<std::vector<uint8_t>> in;
  for (const Tensor& want : m.inputs) in.push_back(inputs.at(want.name).elementBytes());
  std::vector<std::vector<uint8_t>> out;
  for (const Tensor& want : m.outputs) out.emplace_back(size_t(want.elements()) * ir::elementBytes(want.dtype));
  std::vector<const void*> inPtrs;
  for (auto& v : in) inPtrs.push_back(v.data());
  std::vector<void*> outPtrs;
  for (auto& v : out) outPtrs.push_back(v.data());
  const double segmentMicros = tessera_aot_segment_micros(session);
  if (code.run(session, inPtrs.data(), outPtrs.data()) != 0) throw Error(m.source, tessera_aot_error(session));
  ModelRunResult r;
  r.layers.resize(m.layers.size());
  for (size_t i = 0; i < m.outputs.size(); ++i) {
    Tensor t = m.outputs[i];
    t.floats.clear();
    t.ints.clear();
    t.isConstant = false;
    t.appendElements(out[i].data(), t.elements());
    r.outputs[t.name] = std::move(t);
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.segmentSeconds = (tessera_aot_segment_micros(session) - segmentMicros) * 1e-6;
  return r;
}

}  // namespace tessera::compiler::codegen
