// A compiled model's host side as LLVM IR: host operators as loops specialized to their shapes, segments as runtime calls, constants as globals.
#include "generate.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <set>

#include <llvm/IR/Constants.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include "tessera/compiler/codegen/codegen.h"
#include "tessera/compiler/host/executor.h"
#include "tessera/compiler/op/dram_layout.h"
#include "tessera/hw/isa.h"
#include "tessera/runtime/aot.h"
#include "tessera/support/error.h"

namespace tessera::compiler::codegen {

using Shape = std::vector<int64_t>;
using host::WindowPads;
using host::hostSupports;
using host::inferShapes;
using host::runHostNode;
using host::windowPads;
using ir::DType;
using ir::Node;
using ir::Tensor;
using model::CompiledModel;
using model::Segment;
using model::SegmentTensor;
using model::Step;
using op::ActivationLayout;

const std::vector<std::string>& supportedHostOps() {
  static const std::vector<std::string> ops = {"Identity", "Dropout", "Flatten", "Reshape", "Transpose", "Relu", "Clip",
                                               "Add", "Sub", "Mul", "Softmax", "QuantizeLinear", "DequantizeLinear",
                                               "Conv", "Gemm", "MatMul", "MaxPool", "AveragePool", "GlobalAveragePool",
                                               "BatchNormalization", "Constant", "tessera.FoldInput", "Sigmoid",
                                               "HardSigmoid", "HardSwish", "Tanh", "LeakyRelu", "Elu", "Erf",
                                               "Concat", "Squeeze", "Unsqueeze", "Slice", "ReduceSum",
                                               "ReduceMean", "ReduceMax", "Gather", "Div", "PRelu",
                                               "Expand", "Pad", "Sqrt", "Reciprocal", "Pow"};
  return ops;
}

namespace detail {
namespace {

int64_t count(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

std::vector<int64_t> stridesOf(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (int k = int(s.size()) - 2; k >= 0; --k) st[size_t(k)] = st[size_t(k) + 1] * s[size_t(k) + 1];
  return st;
}

// A tensor while the run function is being built: where its row-major data lives.
struct Buf {
  llvm::Value* ptr = nullptr;  // element pointer
  DType dtype = DType::kFloat32;
  Shape shape;
};

class ModuleGenerator {
 public:
  ModuleGenerator(const CompiledModel& m, const std::string& symbol, llvm::LLVMContext& ctx, const std::string& triple,
           const llvm::DataLayout& layout)
      : m_(m), symbol_(symbol), ctx_(ctx), mod_(std::make_unique<llvm::Module>(symbol, ctx)), b_(ctx) {
    mod_->setTargetTriple(triple);
    mod_->setDataLayout(layout);
    i8_ = b_.getInt8Ty();
    i32_ = b_.getInt32Ty();
    i64_ = b_.getInt64Ty();
    f32_ = b_.getFloatTy();
    f64_ = b_.getDoubleTy();
    i8p_ = i8_->getPointerTo();
    sessionTy_ = llvm::StructType::create(ctx, "TesseraAotSession");
  }

  std::unique_ptr<llvm::Module> run() {
    inferShapes();
    buildRunFunction();
    buildDescriptor();
    std::string problems;
    llvm::raw_string_ostream os(problems);
    if (llvm::verifyModule(*mod_, &os))
      throw Error(m_.source, "the generated LLVM IR does not verify (a code generator bug): " + os.str());
    return std::move(mod_);
  }

 private:
  const CompiledModel& m_;
  std::string symbol_;
  llvm::LLVMContext& ctx_;
  std::unique_ptr<llvm::Module> mod_;
  llvm::IRBuilder<> b_;
  llvm::Type *i8_, *i32_, *i64_, *f32_, *f64_;
  llvm::PointerType* i8p_;
  llvm::StructType* sessionTy_;
  llvm::Function* fn_ = nullptr;
  llvm::BasicBlock* entry_ = nullptr;
  llvm::Value* session_ = nullptr;
  llvm::Value* scratch_ = nullptr;
  llvm::Value* arena_ = nullptr;
  llvm::BasicBlock* fail_ = nullptr;
  uint64_t scratchBytes_ = 0;
  ir::Graph shapes_;  // every tensor's dtype and shape, from the host executor's own shape rules
  std::map<std::string, Buf> values_;
  std::map<std::string, Tensor> folded_;  // host steps computed here at compile time (all inputs constant)

  // ---- types and constants -------------------------------------------------------------------

  llvm::Type* elemType(DType t) const {
    switch (t) {
      case DType::kFloat32: return f32_;
      case DType::kUInt8:
      case DType::kInt8:
      case DType::kBool: return i8_;
      case DType::kInt32: return i32_;
      case DType::kInt64: return i64_;
    }
    return i8_;
  }
  llvm::Constant* i64c(int64_t v) { return llvm::ConstantInt::get(i64_, uint64_t(v), true); }

  // A constant global under a name no other value has. The module creates it (getOrInsertGlobal):
  // GCC 12 at -O1 takes `new GlobalVariable` for a mismatched new/delete pair (LLVM's User
  // allocates with a placement operator new), a false positive -Werror would stop on.
  llvm::GlobalVariable* global(llvm::Constant* data, const std::string& name, llvm::GlobalValue::LinkageTypes linkage) {
    std::string unique = name;
    for (int k = 1; mod_->getNamedValue(unique); ++k) unique = name + "." + std::to_string(k);
    mod_->getOrInsertGlobal(unique, data->getType());
    llvm::GlobalVariable* g = mod_->getNamedGlobal(unique);
    g->setInitializer(data);
    g->setConstant(true);
    g->setLinkage(linkage);
    return g;
  }
  llvm::GlobalVariable* constantArray(llvm::Constant* data, const std::string& name) {
    return global(data, name, llvm::GlobalValue::PrivateLinkage);
  }
  llvm::Constant* firstElement(llvm::GlobalVariable* g) {
    llvm::Constant* zero = llvm::ConstantInt::get(i64_, 0);
    return llvm::ConstantExpr::getInBoundsGetElementPtr(g->getValueType(), g, llvm::ArrayRef<llvm::Constant*>{zero, zero});
  }
  llvm::Constant* cString(const std::string& s, const std::string& name) {
    return firstElement(constantArray(llvm::ConstantDataArray::getString(ctx_, s), name));
  }

  // A constant tensor's data as a global of its element type.
  llvm::Constant* tensorData(const Tensor& t, const std::string& name) {
    const size_t n = t.dtype == DType::kFloat32 ? t.floats.size() : t.ints.size();
    if (n == 0) return llvm::ConstantPointerNull::get(elemType(t.dtype)->getPointerTo());
    llvm::Constant* data = nullptr;
    switch (t.dtype) {
      case DType::kFloat32: data = llvm::ConstantDataArray::get(ctx_, llvm::ArrayRef<float>(t.floats)); break;
      case DType::kUInt8:
      case DType::kInt8:
      case DType::kBool: {
        std::vector<uint8_t> v(t.ints.begin(), t.ints.end());
        data = llvm::ConstantDataArray::get(ctx_, llvm::ArrayRef<uint8_t>(v));
        break;
      }
      case DType::kInt32: {
        std::vector<uint32_t> v;
        for (int64_t x : t.ints) v.push_back(uint32_t(x));
        data = llvm::ConstantDataArray::get(ctx_, llvm::ArrayRef<uint32_t>(v));
        break;
      }
      case DType::kInt64: {
        std::vector<uint64_t> v(t.ints.begin(), t.ints.end());
        data = llvm::ConstantDataArray::get(ctx_, llvm::ArrayRef<uint64_t>(v));
        break;
      }
    }
    return firstElement(constantArray(data, name));
  }

  // ---- shapes ----------------------------------------------------------------------------------

  // Host steps see the model's inputs, its constants and the segments' outputs; the executor's
  // own shape inference gives every other tensor, so generated code and interpreter agree on them.
  void inferShapes() {
    shapes_.opset = m_.opset;
    shapes_.origin = m_.source;
    for (const Tensor& t : m_.inputs) shapes_.tensors[t.name] = t;
    for (const auto& kv : m_.constants) shapes_.tensors[kv.first] = kv.second;
    for (const Segment& s : m_.segments)
      for (const SegmentTensor& st : s.outputs) {
        Tensor t;
        t.name = st.tensor;
        t.dtype = DType::kInt8;
        t.shape = st.shape;
        t.hasShape = true;
        shapes_.tensors[st.tensor] = t;
      }
    for (const Step& step : m_.steps)
      if (step.kind == Step::Kind::kHost) shapes_.nodes.push_back(m_.hostSteps[size_t(step.index)].node);
    compiler::host::inferShapes(shapes_);
  }

  [[noreturn]] void fail(const Node& n, const std::string& why) const { throw Error(m_.source + ": " + n.label(m_.opset), why); }

  // ---- loops and element access ----------------------------------------------------------------

  // for (i = 0; i < n; ++i) body(i), with n > 0 known here.
  void loop(int64_t n, const std::string& name, const std::function<void(llvm::Value*)>& body) {
    if (n <= 0) return;
    llvm::BasicBlock* pre = b_.GetInsertBlock();
    llvm::BasicBlock* head = llvm::BasicBlock::Create(ctx_, name, fn_);
    llvm::BasicBlock* exit = llvm::BasicBlock::Create(ctx_, name + ".end", fn_);
    b_.CreateBr(head);
    b_.SetInsertPoint(head);
    llvm::PHINode* i = b_.CreatePHI(i64_, 2, name + ".i");
    i->addIncoming(i64c(0), pre);
    body(i);
    llvm::Value* next = b_.CreateAdd(i, i64c(1), name + ".next", true, true);
    i->addIncoming(next, b_.GetInsertBlock());
    b_.CreateCondBr(b_.CreateICmpSLT(next, i64c(n)), head, exit);
    b_.SetInsertPoint(exit);
  }

  // Nested loops over every index of `shape` (outermost first).
  void forEach(const Shape& shape, const std::string& name, const std::function<void(const std::vector<llvm::Value*>&)>& body) {
    std::vector<llvm::Value*> idx;
    std::function<void(size_t)> level = [&](size_t k) {
      if (k == shape.size()) {
        body(idx);
        return;
      }
      loop(shape[k], name + std::to_string(k), [&](llvm::Value* i) {
        idx.push_back(i);
        level(k + 1);
        idx.pop_back();
      });
    };
    level(0);
  }

  llvm::Value* linear(const std::vector<llvm::Value*>& idx, const std::vector<int64_t>& strides) {
    llvm::Value* at = i64c(0);
    for (size_t k = 0; k < idx.size(); ++k)
      if (strides[k] != 0) at = b_.CreateAdd(at, b_.CreateMul(idx[k], i64c(strides[k]), "", true, true), "", true, true);
    return at;
  }

  llvm::Value* load(const Buf& t, llvm::Value* at) {
    llvm::Type* ty = elemType(t.dtype);
    return b_.CreateLoad(ty, b_.CreateInBoundsGEP(ty, t.ptr, at));
  }
  void store(const Buf& t, llvm::Value* at, llvm::Value* v) {
    llvm::Type* ty = elemType(t.dtype);
    b_.CreateStore(v, b_.CreateInBoundsGEP(ty, t.ptr, at));
  }

  llvm::Value* toDouble(llvm::Value* v, DType t) {
    if (t == DType::kFloat32) return b_.CreateFPExt(v, f64_);
    if (t == DType::kUInt8) return b_.CreateUIToFP(v, f64_);
    return b_.CreateSIToFP(v, f64_);
  }
  llvm::Value* toI64(llvm::Value* v, DType t) { return t == DType::kUInt8 ? b_.CreateZExt(v, i64_) : b_.CreateSExtOrBitCast(v, i64_); }

  // std::max(a, b) and std::min(a, b) exactly: the first operand unless the comparison says otherwise.
  llvm::Value* stdMax(llvm::Value* a, llvm::Value* v) { return b_.CreateSelect(b_.CreateFCmpOLT(a, v), v, a); }
  llvm::Value* stdMin(llvm::Value* a, llvm::Value* v) { return b_.CreateSelect(b_.CreateFCmpOLT(v, a), v, a); }

  llvm::Value* intrinsic(llvm::Intrinsic::ID id, llvm::Value* v) {
    return b_.CreateCall(llvm::Intrinsic::getDeclaration(mod_.get(), id, {v->getType()}), {v});
  }

  llvm::FunctionCallee runtimeFn(const char* name, llvm::Type* ret, std::vector<llvm::Type*> args) {
    return mod_->getOrInsertFunction(name, llvm::FunctionType::get(ret, args, false));
  }

  // ---- buffers ---------------------------------------------------------------------------------

  Buf newBuffer(const std::string& tensor) {
    const Tensor& t = shapes_.tensor(tensor);
    const uint64_t bytes = uint64_t(count(t.shape)) * ir::elementBytes(t.dtype);
    const uint64_t at = (scratchBytes_ + 15) / 16 * 16;
    scratchBytes_ = at + bytes;
    Buf buf;
    buf.dtype = t.dtype;
    buf.shape = t.shape;
    buf.ptr = b_.CreateBitCast(b_.CreateInBoundsGEP(i8_, scratch_, i64c(int64_t(at))), elemType(t.dtype)->getPointerTo(),
                               tensor);
    return buf;
  }

  const Tensor* constantTensor(const std::string& name) const {
    auto f = folded_.find(name);
    if (f != folded_.end()) return &f->second;
    auto c = m_.constants.find(name);
    return c == m_.constants.end() ? nullptr : &c->second;
  }

  Buf value(const std::string& name) {
    auto it = values_.find(name);
    if (it != values_.end()) return it->second;
    const Tensor* c = constantTensor(name);
    if (!c) throw Error(m_.source, "tensor '" + name + "' is not computed before it is used");
    Buf buf;
    buf.dtype = c->dtype;
    buf.shape = c->shape;
    buf.ptr = tensorData(*c, "const." + name);
    return values_[name] = buf;
  }

  // ---- the run function ------------------------------------------------------------------------

  llvm::FunctionType* runType() {
    return llvm::FunctionType::get(i32_, {sessionTy_->getPointerTo(), i8p_->getPointerTo(), i8p_->getPointerTo()}, false);
  }

  void buildRunFunction() {
    fn_ = llvm::Function::Create(runType(), llvm::GlobalValue::ExternalLinkage, symbol_ + "_run", mod_.get());
    fn_->addFnAttr(llvm::Attribute::NoUnwind);
    auto arg = fn_->arg_begin();
    session_ = &*arg++;
    session_->setName("session");
    llvm::Value* inputs = &*arg++;
    inputs->setName("inputs");
    llvm::Value* outputs = &*arg;
    outputs->setName("outputs");
    entry_ = llvm::BasicBlock::Create(ctx_, "entry", fn_);
    fail_ = llvm::BasicBlock::Create(ctx_, "segment.failed", fn_);
    b_.SetInsertPoint(fail_);
    b_.CreateRet(llvm::ConstantInt::get(i32_, uint64_t(-1), true));
    b_.SetInsertPoint(entry_);
    scratch_ = b_.CreateCall(runtimeFn("tessera_aot_scratch", i8p_, {sessionTy_->getPointerTo()}), {session_}, "scratch");
    arena_ = b_.CreateCall(runtimeFn("tessera_aot_arena", i8p_, {sessionTy_->getPointerTo()}), {session_}, "arena");

    for (size_t i = 0; i < m_.inputs.size(); ++i) {
      const Tensor& t = m_.inputs[i];
      Buf buf;
      buf.dtype = t.dtype;
      buf.shape = t.shape;
      llvm::Value* p = b_.CreateLoad(i8p_, b_.CreateConstInBoundsGEP1_64(i8p_, inputs, i));
      buf.ptr = b_.CreateBitCast(p, elemType(t.dtype)->getPointerTo(), "in." + t.name);
      values_[t.name] = buf;
    }
    for (const Step& step : m_.steps) {
      if (step.kind == Step::Kind::kSegment) generateSegment(step.index);
      else generateHostStep(m_.hostSteps[size_t(step.index)].node);
    }
    for (size_t i = 0; i < m_.outputs.size(); ++i) {
      const Tensor& want = m_.outputs[i];
      const Buf v = value(want.name);
      // The caller sizes the output buffers from the model's description: the code must agree.
      if (v.shape != want.shape || v.dtype != want.dtype) {
        Tensor got = want;
        got.dtype = v.dtype;
        got.shape = v.shape;
        throw Error(m_.source, "output '" + want.name + "' is described as " + want.describe() + " but computed as " + got.describe());
      }
      llvm::Value* p = b_.CreateLoad(i8p_, b_.CreateConstInBoundsGEP1_64(i8p_, outputs, i));
      const uint64_t bytes = uint64_t(count(v.shape)) * ir::elementBytes(v.dtype);
      if (bytes) b_.CreateMemCpy(p, llvm::MaybeAlign(1), b_.CreateBitCast(v.ptr, i8p_), llvm::MaybeAlign(1), bytes);
    }
    b_.CreateRet(llvm::ConstantInt::get(i32_, 0));
    // Keep the failure block last, where a reader of the IR expects it.
    fail_->moveAfter(&fn_->back());
  }

  // Inputs packed into the arena in the accelerator's blocked layout, the stream run by the
  // runtime, outputs unpacked to row-major NCHW: the layout changes at the segment's edges.
  void generateSegment(int si) {
    const Segment& seg = m_.segments[size_t(si)];
    const hw::Config cfg = hw::Config::fromJson(m_.configJson, m_.source + ": config");
    const std::string tag = "seg" + std::to_string(si);
    for (const SegmentTensor& st : seg.inputs) {
      const Buf src = value(st.tensor);
      if (ir::elementBytes(src.dtype) != 1)
        throw Error(m_.source, "segment " + std::to_string(si) + " input '" + st.tensor + "' is " +
                                   ir::dtypeName(src.dtype) + ", the accelerator takes 8-bit tensors");
      ActivationLayout l;
      l.n = st.n, l.c = st.c, l.h = st.h, l.w = st.w, l.batch = cfg.batch, l.block = st.block;
      if (uint64_t(count(src.shape)) != uint64_t(l.n) * l.c * l.h * l.w)
        throw Error(m_.source, "tensor '" + st.tensor + "' has " + std::to_string(count(src.shape)) + " values, segment " +
                                   std::to_string(si) + " expects " + std::to_string(uint64_t(l.n) * l.c * l.h * l.w));
      llvm::Value* base = b_.CreateInBoundsGEP(i8_, arena_, i64c(int64_t(st.offset)), tag + ".in." + st.tensor);
      b_.CreateMemSet(base, b_.getInt8(0), l.bytes(), llvm::MaybeAlign(1));
      Buf dst{base, DType::kInt8, {}};
      forEach({l.n, l.c, l.h, l.w}, tag + ".pack", [&](const std::vector<llvm::Value*>& i) {
        llvm::Value* from = linear(i, stridesOf({l.n, l.c, l.h, l.w}));
        store(dst, packedIndex(l, i), load(src, from));
      });
    }
    llvm::Value* ok = b_.CreateCall(runtimeFn("tessera_aot_run_segment", i32_, {sessionTy_->getPointerTo(), i32_}),
                                    {session_, llvm::ConstantInt::get(i32_, uint64_t(si))}, tag + ".status");
    llvm::BasicBlock* next = llvm::BasicBlock::Create(ctx_, tag + ".done", fn_);
    b_.CreateCondBr(b_.CreateICmpEQ(ok, llvm::ConstantInt::get(i32_, 0)), next, fail_);
    b_.SetInsertPoint(next);
    for (const SegmentTensor& st : seg.outputs) {
      ActivationLayout l;
      l.n = st.n, l.c = st.c, l.h = st.h, l.w = st.w, l.batch = cfg.batch, l.block = st.block;
      Buf src{b_.CreateInBoundsGEP(i8_, arena_, i64c(int64_t(st.offset)), tag + ".out." + st.tensor), DType::kInt8, {}};
      Buf dst = newBuffer(st.tensor);
      forEach({l.n, l.c, l.h, l.w}, tag + ".unpack", [&](const std::vector<llvm::Value*>& i) {
        store(dst, linear(i, stridesOf({l.n, l.c, l.h, l.w})), load(src, packedIndex(l, i)));
      });
      values_[st.tensor] = dst;
    }
  }

  // compiler::activationIndex: [n/BATCH][c/BLOCK][y][x][n%BATCH][c%BLOCK].
  llvm::Value* packedIndex(const ActivationLayout& l, const std::vector<llvm::Value*>& i) {
    auto div = [&](llvm::Value* v, int d) { return d == 1 ? v : b_.CreateUDiv(v, i64c(d)); };
    auto rem = [&](llvm::Value* v, int d) { return d == 1 ? static_cast<llvm::Value*>(i64c(0)) : b_.CreateURem(v, i64c(d)); };
    llvm::Value* at = b_.CreateAdd(b_.CreateMul(div(i[0], l.batch), i64c(l.channelBlocks())), div(i[1], l.block));
    at = b_.CreateAdd(b_.CreateMul(at, i64c(l.h)), i[2]);
    at = b_.CreateAdd(b_.CreateMul(at, i64c(l.w)), i[3]);
    at = b_.CreateAdd(b_.CreateMul(at, i64c(l.batch)), rem(i[0], l.batch));
    return b_.CreateAdd(b_.CreateMul(at, i64c(l.block)), rem(i[1], l.block));
  }

  // ---- host operators --------------------------------------------------------------------------

  void generateHostStep(const Node& n) {
    const bool known = n.domain.empty() || n.domain == "ai.onnx" ? std::count(supportedHostOps().begin(), supportedHostOps().end(), n.opType) > 0
                                                                 : n.domain == "tessera" && n.opType == "FoldInput";
    // A step whose inputs are all constants is computed now by the host executor itself.
    const bool allConstant = std::all_of(n.inputs.begin(), n.inputs.end(), [&](const std::string& in) {
      return in.empty() || (!values_.count(in) && constantTensor(in));
    });
    if (allConstant && (known || hostSupports(n, m_.opset))) {
      std::vector<const Tensor*> ins;
      for (const std::string& in : n.inputs) ins.push_back(in.empty() ? nullptr : constantTensor(in));
      std::vector<Tensor> outs = runHostNode(n, ins, m_.opset);
      for (size_t i = 0; i < outs.size() && i < n.outputs.size(); ++i)
        if (!n.outputs[i].empty()) folded_[n.outputs[i]] = std::move(outs[i]);
      return;
    }
    if (!known) {
      std::string list;
      for (const std::string& op : supportedHostOps()) list += (list.empty() ? "" : ", ") + op;
      fail(n, "host operator " + (n.domain.empty() ? n.opType : n.domain + "." + n.opType) +
                  " has no LLVM code generation (the host interpreter runs it; generated: " + list + ")");
    }
    const std::string& op = n.opType;
    if (n.outputs.empty() || n.outputs[0].empty()) fail(n, "has no output");
    const std::string& outName = n.outputs[0];
    auto input = [&](size_t i) {
      if (i >= n.inputs.size() || n.inputs[i].empty()) fail(n, "input " + std::to_string(i) + " is missing");
      return value(n.inputs[i]);
    };
    const Tensor& outT = shapes_.tensor(outName);
    if (op == "Identity" || op == "Dropout" || op == "Flatten" || op == "Reshape" || op == "Squeeze" || op == "Unsqueeze") {
      // Row-major data is unchanged: the output is the input's buffer under a new shape.
      Buf x = input(0);
      x.shape = outT.shape;
      values_[outName] = x;
      return;
    }
    if (op == "Constant") fail(n, "a Constant step must have been folded");
    const Buf x = input(0);
    Buf y = newBuffer(outName);
    values_[outName] = y;
    const std::string tag = n.opType;
    if (op == "Relu" || op == "Clip") {
      double lo = op == "Relu" ? 0.0 : -std::numeric_limits<double>::infinity(), hi = std::numeric_limits<double>::infinity();
      if (op == "Clip") {
        lo = scalarInput(n, 1, float(lo));
        hi = scalarInput(n, 2, float(hi));
      }
      forEach({count(x.shape)}, tag, [&](const std::vector<llvm::Value*>& i) {
        llvm::Value* v = load(x, i[0]);
        if (x.dtype == DType::kFloat32) {
          v = stdMin(stdMax(v, llvm::ConstantFP::get(f32_, lo)), llvm::ConstantFP::get(f32_, hi));
        } else {
          llvm::Value* d = stdMin(stdMax(toDouble(v, x.dtype), llvm::ConstantFP::get(f64_, lo)), llvm::ConstantFP::get(f64_, hi));
          v = b_.CreateTrunc(b_.CreateFPToSI(d, i64_), elemType(x.dtype));
        }
        store(y, i[0], v);
      });
      return;
    }
    if (op == "Sigmoid" || op == "Tanh" || op == "Erf" || op == "HardSigmoid" || op == "HardSwish" || op == "LeakyRelu" ||
        op == "Elu" || op == "Sqrt" || op == "Reciprocal") {
      // The executor's formulas (host/src/executor.cpp, kFloatActivations): in double, rounded once.
      if (x.dtype != DType::kFloat32) fail(n, "takes float32 only");
      const double alpha = n.attrFloat("alpha", op == "HardSigmoid" ? 0.2f : op == "LeakyRelu" ? 0.01f : 1.0f);
      const double beta = n.attrFloat("beta", 0.5f);
      auto f64 = [&](double v) { return llvm::ConstantFP::get(f64_, v); };
      auto clamp01 = [&](llvm::Value* v) { return stdMin(stdMax(v, f64(0.0)), f64(1.0)); };
      const char* libm = op == "Tanh" ? "tanh" : op == "Erf" ? "erf" : op == "Sqrt" ? "sqrt" : "exp";
      llvm::FunctionCallee fn = runtimeFn(libm, f64_, {f64_});
      forEach({count(x.shape)}, tag, [&](const std::vector<llvm::Value*>& i) {
        llvm::Value* xf = load(x, i[0]);
        llvm::Value* v = b_.CreateFPExt(xf, f64_);
        llvm::Value* r = nullptr;
        if (op == "Sigmoid") {
          r = b_.CreateFDiv(f64(1.0), b_.CreateFAdd(f64(1.0), b_.CreateCall(fn, {b_.CreateFNeg(v)})));
        } else if (op == "Tanh" || op == "Erf" || op == "Sqrt") {
          r = b_.CreateCall(fn, {v});
        } else if (op == "Reciprocal") {
          r = b_.CreateFDiv(f64(1.0), v);
        } else if (op == "HardSigmoid") {
          r = clamp01(b_.CreateFAdd(b_.CreateFMul(f64(alpha), v), f64(beta)));
        } else if (op == "HardSwish") {
          r = b_.CreateFMul(v, clamp01(b_.CreateFAdd(b_.CreateFMul(v, f64(1.0 / 6.0)), f64(0.5))));
        } else {
          // LeakyRelu and Elu: the negative side scaled, the rest passed through unrounded.
          llvm::Value* neg = op == "LeakyRelu"
                                 ? b_.CreateFMul(f64(alpha), v)
                                 : b_.CreateFMul(f64(alpha), b_.CreateFSub(b_.CreateCall(fn, {v}), f64(1.0)));
          store(y, i[0], b_.CreateSelect(b_.CreateFCmpOLT(xf, llvm::ConstantFP::get(f32_, 0.0)),
                                         b_.CreateFPTrunc(neg, f32_), xf));
          return;
        }
        store(y, i[0], b_.CreateFPTrunc(r, f32_));
      });
      return;
    }
    if (op == "Pad") {
      // Each output element from its input coordinate on every axis, reflected or clamped to the
      // edge; in constant mode a clamped load replaced by the fill outside the input (the executor
      // has checked the pads at compile time).
      const Tensor* pads = n.inputs.size() > 1 ? constantTensor(n.inputs[1]) : nullptr;
      if (!pads) fail(n, "the pads must be a constant for generated code");
      if (count(x.shape) == 0) fail(n, "an empty input has no LLVM code generation");
      const std::string mode = n.attrString("mode", "constant");
      double fill = 0;
      if (n.inputs.size() > 2 && !n.inputs[2].empty()) {
        const Tensor* v = constantTensor(n.inputs[2]);
        if (!v) fail(n, "constant_value must be a constant for generated code");
        fill = v->dtype == DType::kFloat32 ? double(v->floats.at(0)) : double(v->ints.at(0));
      }
      llvm::Value* fillValue = x.dtype == DType::kFloat32
                                   ? static_cast<llvm::Value*>(llvm::ConstantFP::get(f32_, fill))
                                   : llvm::ConstantInt::get(elemType(x.dtype), uint64_t(int64_t(fill)), true);
      const std::vector<int64_t> sx = stridesOf(x.shape), sy = stridesOf(y.shape);
      forEach(y.shape, tag, [&](const std::vector<llvm::Value*>& i) {
        llvm::Value* at = i64c(0);
        llvm::Value* inside = b_.getTrue();
        for (size_t d = 0; d < x.shape.size(); ++d) {
          const int64_t dim = x.shape[d];
          llvm::Value* c = b_.CreateSub(i[d], i64c(pads->ints.at(d)));
          llvm::Value* below = b_.CreateICmpSLT(c, i64c(0));
          llvm::Value* above = b_.CreateICmpSGE(c, i64c(dim));
          if (mode == "reflect") {
            c = b_.CreateSelect(below, b_.CreateNeg(c), b_.CreateSelect(above, b_.CreateSub(i64c(2 * (dim - 1)), c), c));
          } else {
            if (mode == "constant") inside = b_.CreateAnd(inside, b_.CreateNot(b_.CreateOr(below, above)));
            c = b_.CreateSelect(below, i64c(0), b_.CreateSelect(above, i64c(dim - 1), c));
          }
          at = b_.CreateAdd(at, b_.CreateMul(c, i64c(sx[d])));
        }
        llvm::Value* v = load(x, at);
        if (mode == "constant") v = b_.CreateSelect(inside, v, fillValue);
        store(y, linear(i, sy), v);
      });
      return;
    }
    if (op == "Expand") {
      const std::vector<int64_t> sx = broadcastStrides(x.shape, y.shape), sy = stridesOf(y.shape);
      forEach(y.shape, tag, [&](const std::vector<llvm::Value*>& i) { store(y, linear(i, sy), load(x, linear(i, sx))); });
      return;
    }
    if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div" || op == "PRelu") {
      // Integer division fails on a zero divisor in the executor; generated code has no error path.
      if (op == "Div" && x.dtype != DType::kFloat32) fail(n, "integer Div has no LLVM code generation (the host interpreter runs it)");
      const Buf a = input(1);
      const std::vector<int64_t> sx = broadcastStrides(x.shape, y.shape), sa = broadcastStrides(a.shape, y.shape);
      const std::vector<int64_t> sy = stridesOf(y.shape);
      forEach(y.shape, tag, [&](const std::vector<llvm::Value*>& i) {
        llvm::Value* u = load(x, linear(i, sx));
        llvm::Value* v = load(a, linear(i, sa));
        llvm::Value* r = nullptr;
        if (x.dtype == DType::kFloat32)
          r = op == "Add"   ? b_.CreateFAdd(u, v)
              : op == "Sub" ? b_.CreateFSub(u, v)
              : op == "Mul" ? b_.CreateFMul(u, v)
              : op == "Div" ? b_.CreateFDiv(u, v)
                            : b_.CreateSelect(b_.CreateFCmpOLT(u, llvm::ConstantFP::get(f32_, 0.0)), b_.CreateFMul(u, v), u);
        else  // wraps at the type's width, as the executor's wrapTo does
          r = op == "Add" ? b_.CreateAdd(u, v) : op == "Sub" ? b_.CreateSub(u, v) : b_.CreateMul(u, v);
        store(y, linear(i, sy), r);
      });
      return;
    }
    if (op == "Pow") {
      // The executor's formula for a float base: std::pow in double of the base and the exponent
      // (float or integer), rounded once (LayerNorm's square as PyTorch exports it).
      if (x.dtype != DType::kFloat32) fail(n, "an integer base has no LLVM code generation (the host interpreter runs it)");
      const Buf e = input(1);
      if (e.dtype == DType::kBool) fail(n, "takes numbers, not bool");
      const std::vector<int64_t> sx = broadcastStrides(x.shape, y.shape), se = broadcastStrides(e.shape, y.shape);
      const std::vector<int64_t> sy = stridesOf(y.shape);
      llvm::FunctionCallee pow = runtimeFn("pow", f64_, {f64_, f64_});
      forEach(y.shape, tag, [&](const std::vector<llvm::Value*>& i) {
        llvm::Value* u = b_.CreateFPExt(load(x, linear(i, sx)), f64_);
        llvm::Value* v = load(e, linear(i, se));
        v = e.dtype == DType::kFloat32 ? b_.CreateFPExt(v, f64_) : b_.CreateSIToFP(v, f64_);
        store(y, linear(i, sy), b_.CreateFPTrunc(b_.CreateCall(pow, {u, v}), f32_));
      });
      return;
    }
    if (op == "ReduceSum" || op == "ReduceMean" || op == "ReduceMax") {
      // The executor's order: each output element in row-major order, its reduced elements in
      // row-major order, accumulated in double and rounded once.
      if (x.dtype != DType::kFloat32) fail(n, "takes float32 only");
      Tensor shapeOfX;
      shapeOfX.shape = x.shape;
      const std::vector<const Tensor*> ins = constantOperands(n, shapeOfX);
      const host::Reduction r = host::reduction(n, m_.opset, x.shape, ins);
      const std::vector<int64_t> sx = stridesOf(x.shape);
      std::vector<int64_t> keptShape, keptStride, redShape, redStride;
      for (size_t d = 0; d < x.shape.size(); ++d) {
        (r.reduced[d] ? redShape : keptShape).push_back(x.shape[d]);
        (r.reduced[d] ? redStride : keptStride).push_back(sx[d]);
      }
      int64_t redCount = 1;
      for (int64_t d : redShape) redCount *= d;
      const bool isMax = op == "ReduceMax";
      llvm::IRBuilder<> atEntry(entry_, entry_->getFirstInsertionPt());
      llvm::Value* acc = atEntry.CreateAlloca(f64_, nullptr, "reduce.acc");
      llvm::Value* out = atEntry.CreateAlloca(i64_, nullptr, "reduce.out");
      b_.CreateStore(i64c(0), out);
      forEach(keptShape, tag, [&](const std::vector<llvm::Value*>& i) {
        llvm::Value* base = linear(i, keptStride);
        b_.CreateStore(isMax ? llvm::ConstantFP::getInfinity(f64_, true) : llvm::ConstantFP::get(f64_, 0.0), acc);
        forEach(redShape, tag + ".r", [&](const std::vector<llvm::Value*>& j) {
          llvm::Value* v = b_.CreateFPExt(load(x, b_.CreateAdd(base, linear(j, redStride))), f64_);
          llvm::Value* a = b_.CreateLoad(f64_, acc);
          b_.CreateStore(isMax ? stdMax(a, v) : b_.CreateFAdd(a, v), acc);
        });
        llvm::Value* result = b_.CreateLoad(f64_, acc);
        if (op == "ReduceMean") result = b_.CreateFDiv(result, llvm::ConstantFP::get(f64_, double(redCount)));
        llvm::Value* o = b_.CreateLoad(i64_, out);
        store(y, o, b_.CreateFPTrunc(result, f32_));
        b_.CreateStore(b_.CreateAdd(o, i64c(1)), out);
      });
      return;
    }
    if (op == "Gather") {
      // Constant indices: one copy of the input's slice per index, its position known here.
      const Tensor* idx = n.inputs.size() > 1 ? constantTensor(n.inputs[1]) : nullptr;
      if (!idx) fail(n, "the indices must be a constant for generated code");
      const int64_t rank = int64_t(x.shape.size());
      int64_t axis = n.attrInt("axis", 0);
      if (axis < 0) axis += rank;
      const int64_t dim = x.shape[size_t(axis)];
      int64_t outer = 1, inner = 1;
      for (int64_t d = 0; d < axis; ++d) outer *= x.shape[size_t(d)];
      for (int64_t d = axis + 1; d < rank; ++d) inner *= x.shape[size_t(d)];
      const int64_t picks = int64_t(idx->ints.size());
      for (int64_t k = 0; k < picks; ++k) {
        const int64_t i = idx->ints[size_t(k)] < 0 ? idx->ints[size_t(k)] + dim : idx->ints[size_t(k)];
        forEach({outer, inner}, tag, [&](const std::vector<llvm::Value*>& j) {
          store(y, b_.CreateAdd(linear(j, {picks * inner, 1}), i64c(k * inner)),
                load(x, b_.CreateAdd(linear(j, {dim * inner, 1}), i64c(i * inner))));
        });
      }
      return;
    }
    if (op == "Slice") {
      // y[i] = x[sum over axes of (start + i * step) * stride]: one offset and scaled strides.
      Tensor shapeOfX;
      shapeOfX.shape = x.shape;
      const std::vector<const Tensor*> ins = constantOperands(n, shapeOfX);
      const host::SliceWindow w = host::sliceWindow(n, m_.opset, x.shape, ins);
      const std::vector<int64_t> sx = stridesOf(x.shape), sy = stridesOf(y.shape);
      std::vector<int64_t> scaled(sx.size());
      int64_t offset = 0;
      for (size_t d = 0; d < sx.size(); ++d) {
        scaled[d] = sx[d] * w.step[d];
        offset += w.start[d] * sx[d];
      }
      forEach(y.shape, tag, [&](const std::vector<llvm::Value*>& i) {
        store(y, linear(i, sy), load(x, b_.CreateAdd(linear(i, scaled), i64c(offset))));
      });
      return;
    }
    if (op == "Concat") {
      // Each input copied into its slice of the axis (the executor checked the shapes).
      int64_t axis = n.attrInt("axis", 0);
      if (axis < 0) axis += int64_t(y.shape.size());
      const std::vector<int64_t> sy = stridesOf(y.shape);
      int64_t offset = 0;
      for (size_t k = 0; k < n.inputs.size(); ++k) {
        const Buf part = k == 0 ? x : input(k);
        const int64_t start = offset * sy[size_t(axis)];
        forEach(part.shape, tag, [&](const std::vector<llvm::Value*>& i) {
          store(y, b_.CreateAdd(linear(i, sy), i64c(start)), load(part, linear(i, stridesOf(part.shape))));
        });
        offset += part.shape[size_t(axis)];
      }
      return;
    }
    if (op == "Transpose") {
      std::vector<int64_t> perm = n.attrInts("perm", {});
      if (perm.empty())
        for (int64_t k = int64_t(x.shape.size()) - 1; k >= 0; --k) perm.push_back(k);
      const std::vector<int64_t> in = stridesOf(x.shape);
      std::vector<int64_t> from;
      for (int64_t p : perm) from.push_back(in[size_t(p)]);
      forEach(y.shape, tag, [&](const std::vector<llvm::Value*>& i) { store(y, linear(i, stridesOf(y.shape)), load(x, linear(i, from))); });
      return;
    }
    if (op == "Softmax") return generateSoftmax(n, x, y);
    if (op == "QuantizeLinear" || op == "DequantizeLinear") return generateQuantization(n, x, y);
    if (op == "FoldInput") return generateFoldInput(n, x, y);
    if (op == "Conv") return generateConv(n, x, input(1), n.inputs.size() > 2 && !n.inputs[2].empty() ? input(2) : Buf{}, y);
    if (op == "Gemm" || op == "MatMul") return generateMatrixProduct(n, x, input(1), n.inputs.size() > 2 && !n.inputs[2].empty() ? input(2) : Buf{}, y);
    if (op == "MaxPool" || op == "AveragePool" || op == "GlobalAveragePool") return generatePool(n, x, y);
    if (op == "BatchNormalization") return generateBatchNorm(n, x, y);
    fail(n, "host operator " + op + " has no LLVM code generation");
  }

  // ---- float operators with double accumulators, in the executor's order --------------------

  struct Window {
    int64_t kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1, pt = 0, pl = 0, pb = 0, pr = 0, oh = 1, ow = 1;
  };

  // The executor's window rules (strides, dilations, explicit or SAME padding); the output extent
  // comes from shape inference, so ceil mode needs nothing more here.
  Window windowOf(const Node& n, const Shape& x, const Shape& y, int64_t kh, int64_t kw, bool global) {
    Window w;
    w.kh = kh, w.kw = kw, w.oh = y.at(2), w.ow = y.at(3);
    if (global) return w;
    const Shape strides = n.attrInts("strides", {1, 1}), dil = n.attrInts("dilations", {1, 1});
    if (strides.size() != 2 || dil.size() != 2) fail(n, "strides and dilations need two values");
    w.sh = strides[0], w.sw = strides[1], w.dh = dil[0], w.dw = dil[1];
    const int64_t ekh = (kh - 1) * w.dh + 1, ekw = (kw - 1) * w.dw + 1;
    const WindowPads pads = windowPads(n, x[2], x[3], ekh, ekw, w.sh, w.sw, [&](const std::string& why) { fail(n, why); });
    w.pt = pads.top, w.pl = pads.left, w.pb = pads.bottom, w.pr = pads.right;
    return w;
  }

  llvm::Value* inRange(llvm::Value* v, int64_t lo, int64_t hi) {
    return b_.CreateAnd(b_.CreateICmpSGE(v, i64c(lo)), b_.CreateICmpSLT(v, i64c(hi)));
  }

  llvm::Value* entryAlloca(llvm::Type* t, const std::string& name) {
    llvm::IRBuilder<> atEntry(entry_, entry_->getFirstInsertionPt());
    return atEntry.CreateAlloca(t, nullptr, name);
  }

  // for (i = lo; i < hi; ++i) body(i), bounds known only at run time.
  void loopRange(llvm::Value* lo, llvm::Value* hi, const std::string& name, const std::function<void(llvm::Value*)>& body) {
    llvm::BasicBlock* pre = b_.GetInsertBlock();
    llvm::BasicBlock* head = llvm::BasicBlock::Create(ctx_, name, fn_);
    llvm::BasicBlock* exit = llvm::BasicBlock::Create(ctx_, name + ".end", fn_);
    b_.CreateCondBr(b_.CreateICmpSLT(lo, hi), head, exit);
    b_.SetInsertPoint(head);
    llvm::PHINode* i = b_.CreatePHI(i64_, 2, name + ".i");
    i->addIncoming(lo, pre);
    body(i);
    llvm::Value* next = b_.CreateAdd(i, i64c(1), name + ".next", true, true);
    i->addIncoming(next, b_.GetInsertBlock());
    b_.CreateCondBr(b_.CreateICmpSLT(next, hi), head, exit);
    b_.SetInsertPoint(exit);
  }

  void ifThen(llvm::Value* cond, const std::string& name, const std::function<void()>& body) {
    llvm::BasicBlock* then = llvm::BasicBlock::Create(ctx_, name, fn_);
    llvm::BasicBlock* merge = llvm::BasicBlock::Create(ctx_, name + ".end", fn_);
    b_.CreateCondBr(cond, then, merge);
    b_.SetInsertPoint(then);
    body();
    b_.CreateBr(merge);
    b_.SetInsertPoint(merge);
  }

  // ceil(a / d) for d > 0 and any sign of a (sdiv truncates toward zero, the ceiling for negatives).
  llvm::Value* ceilDiv(llvm::Value* a, int64_t d) {
    return b_.CreateSDiv(b_.CreateAdd(a, b_.CreateSelect(b_.CreateICmpSGT(a, i64c(0)), i64c(d - 1), i64c(0))), i64c(d));
  }

  llvm::Value* scratchDoubles(int64_t n, const std::string& name) {
    const uint64_t at = (scratchBytes_ + 15) / 16 * 16;
    scratchBytes_ = at + uint64_t(n) * 8;
    return b_.CreateBitCast(b_.CreateInBoundsGEP(i8_, scratch_, i64c(int64_t(at))), f64_->getPointerTo(), name);
  }

  // The executor's order: per output plane, a double accumulator per element; for each (input
  // channel, ky, kx) with a nonzero weight, every output row whose input row exists adds x * w over
  // the columns whose input column exists. Each element thus sums its taps in (channel, ky, kx)
  // order, as the executor does, and the column loop vectorizes (no sum is reassociated). Then the
  // bias (0 without one) is added and the sum rounded once to float32.
  void generateConv(const Node& n, const Buf& x, const Buf& w, const Buf& bias, const Buf& y) {
    if (x.dtype != DType::kFloat32 || w.dtype != DType::kFloat32) fail(n, "Conv takes float32");
    if (x.shape.size() != 4 || w.shape.size() != 4) fail(n, "only 2-D convolutions are generated");
    const Window win = windowOf(n, x.shape, y.shape, w.shape[2], w.shape[3], false);
    const int64_t group = n.attrInt("group", 1), O = w.shape[0], CG = w.shape[1], C = x.shape[1], H = x.shape[2], W = x.shape[3];
    if (group < 1 || C != CG * group || O % group) fail(n, "channels and weights do not match the group");
    const int64_t OG = O / group, plane = win.oh * win.ow;
    llvm::Value* acc = scratchDoubles(plane, "conv.acc." + n.outputs[0]);
    llvm::Value* zero = llvm::ConstantFP::get(f64_, 0.0);
    forEach({x.shape[0], O}, "conv", [&](const std::vector<llvm::Value*>& i) {
      b_.CreateMemSet(acc, b_.getInt8(0), uint64_t(plane) * 8, llvm::MaybeAlign(8));  // +0.0 is all zero bits
      llvm::Value* g = b_.CreateSDiv(i[1], i64c(OG));
      forEach({CG, win.kh, win.kw}, "conv.tap", [&](const std::vector<llvm::Value*>& t) {
        llvm::Value* wv = b_.CreateFPExt(load(w, linear({i[1], t[0], t[1], t[2]}, stridesOf(w.shape))), f64_);
        ifThen(b_.CreateNot(b_.CreateFCmpOEQ(wv, zero)), "conv.nonzero", [&] {
          llvm::Value* cin = b_.CreateAdd(b_.CreateMul(g, i64c(CG)), t[0]);
          llvm::Value* colOffset = b_.CreateSub(b_.CreateMul(t[2], i64c(win.dw)), i64c(win.pl));
          llvm::Value* lo = ceilDiv(b_.CreateNeg(colOffset), win.sw);
          lo = b_.CreateSelect(b_.CreateICmpSLT(lo, i64c(0)), i64c(0), lo);
          llvm::Value* hi = ceilDiv(b_.CreateSub(i64c(W), colOffset), win.sw);
          hi = b_.CreateSelect(b_.CreateICmpSGT(hi, i64c(win.ow)), i64c(win.ow), hi);
          loop(win.oh, "conv.row", [&](llvm::Value* oy) {
            llvm::Value* iy = b_.CreateSub(b_.CreateAdd(b_.CreateMul(oy, i64c(win.sh)), b_.CreateMul(t[1], i64c(win.dh))), i64c(win.pt));
            ifThen(inRange(iy, 0, H), "conv.rowinside", [&] {
              llvm::Value* rowBase = b_.CreateAdd(linear({i[0], cin, iy}, {C * H * W, H * W, W}), colOffset);
              llvm::Value* accRow = b_.CreateMul(oy, i64c(win.ow));
              loopRange(lo, hi, "conv.col", [&](llvm::Value* ox) {
                llvm::Value* xv = b_.CreateFPExt(load(x, b_.CreateAdd(rowBase, b_.CreateMul(ox, i64c(win.sw)))), f64_);
                llvm::Value* a = b_.CreateInBoundsGEP(f64_, acc, b_.CreateAdd(accRow, ox));
                b_.CreateStore(b_.CreateFAdd(b_.CreateLoad(f64_, a), b_.CreateFMul(xv, wv)), a);
              });
            });
          });
        });
      });
      llvm::Value* bv = bias.ptr ? b_.CreateFPExt(load(bias, i[1]), f64_) : zero;
      llvm::Value* base = b_.CreateMul(b_.CreateAdd(b_.CreateMul(i[0], i64c(O)), i[1]), i64c(plane));
      loop(plane, "conv.out", [&](llvm::Value* p) {
        llvm::Value* v = b_.CreateLoad(f64_, b_.CreateInBoundsGEP(f64_, acc, p));
        store(y, b_.CreateAdd(base, p), b_.CreateFPTrunc(b_.CreateFAdd(v, bv), f32_));
      });
    });
  }

  // Gemm (transA, transB, alpha, beta, a broadcast C) and MatMul (numpy rules: 1-D operands, batch
  // dimensions broadcast): double sums in k order, rounded once to float32.
  void generateMatrixProduct(const Node& n, const Buf& a, const Buf& bm, const Buf& c, const Buf& y) {
    const bool gemm = n.opType == "Gemm";
    if (a.dtype != DType::kFloat32 || bm.dtype != DType::kFloat32) fail(n, n.opType + " takes float32");
    Shape as = a.shape, bs = bm.shape;
    if (gemm && (as.size() != 2 || bs.size() != 2)) fail(n, "Gemm takes 2-D operands");
    if (as.empty() || bs.empty()) fail(n, "MatMul needs at least 1-D operands");
    if (as.size() == 1) as.insert(as.begin(), 1);
    if (bs.size() == 1) bs.push_back(1);
    const bool ta = gemm && n.attrInt("transA", 0), tb = gemm && n.attrInt("transB", 0);
    const int64_t M = ta ? as[as.size() - 1] : as[as.size() - 2], K = ta ? as[as.size() - 2] : as.back();
    const int64_t N = tb ? bs[bs.size() - 2] : bs.back();
    // Batch dimensions: the output's, and each operand's broadcast strides over them in whole matrices.
    const Shape ab(as.begin(), as.end() - 2), bb(bs.begin(), bs.end() - 2);
    Shape batch(std::max(ab.size(), bb.size()), 1);
    for (size_t k = 0; k < batch.size(); ++k) {
      const size_t fromEnd = batch.size() - k;
      const int64_t da = fromEnd <= ab.size() ? ab[ab.size() - fromEnd] : 1, db = fromEnd <= bb.size() ? bb[bb.size() - fromEnd] : 1;
      batch[k] = da == 1 ? db : da;
    }
    const std::vector<int64_t> sa = broadcastStrides(ab, batch), sb = broadcastStrides(bb, batch), so = stridesOf(batch);
    const double alpha = gemm ? double(n.attrFloat("alpha", 1.0f)) : 1.0, beta = gemm ? double(n.attrFloat("beta", 1.0f)) : 1.0;
    const std::vector<int64_t> cs = c.ptr ? broadcastStrides(c.shape, {M, N}) : std::vector<int64_t>{};
    llvm::Value* acc = entryAlloca(f64_, "matmul.acc");
    Shape loops = batch;
    loops.push_back(M);
    loops.push_back(N);
    forEach(loops, n.opType, [&](const std::vector<llvm::Value*>& i) {
      const std::vector<llvm::Value*> t(i.begin(), i.end() - 2);
      llvm::Value* m = i[i.size() - 2];
      llvm::Value* col = i.back();
      llvm::Value* aBase = b_.CreateMul(linear(t, sa), i64c(M * K));
      llvm::Value* bBase = b_.CreateMul(linear(t, sb), i64c(K * N));
      b_.CreateStore(llvm::ConstantFP::get(f64_, 0.0), acc);
      loop(K, n.opType + ".k", [&](llvm::Value* k) {
        llvm::Value* av = load(a, b_.CreateAdd(aBase, ta ? linear({k, m}, {M, 1}) : linear({m, k}, {K, 1})));
        llvm::Value* bv = load(bm, b_.CreateAdd(bBase, tb ? linear({col, k}, {K, 1}) : linear({k, col}, {N, 1})));
        b_.CreateStore(b_.CreateFAdd(b_.CreateLoad(f64_, acc), b_.CreateFMul(b_.CreateFPExt(av, f64_), b_.CreateFPExt(bv, f64_))), acc);
      });
      llvm::Value* v = b_.CreateLoad(f64_, acc);
      if (gemm) {
        v = b_.CreateFMul(llvm::ConstantFP::get(f64_, alpha), v);
        if (c.ptr)
          v = b_.CreateFAdd(v, b_.CreateFMul(llvm::ConstantFP::get(f64_, beta), b_.CreateFPExt(load(c, linear({m, col}, cs)), f64_)));
      }
      // Row-major output [batch..., M, N] (1-D operands drop M or N, which leaves the order alone).
      store(y, b_.CreateAdd(b_.CreateMul(linear(t, so), i64c(M * N)), linear({m, col}, {N, 1})), b_.CreateFPTrunc(v, f32_));
    });
  }

  // Max in double from -inf (std::max), or the sum of the taps inside divided by their count (with
  // the explicit padding's count under count_include_pad), as the executor does.
  void generatePool(const Node& n, const Buf& x, const Buf& y) {
    const bool global = n.opType == "GlobalAveragePool", max = n.opType == "MaxPool";
    if (x.shape.size() != 4) fail(n, "only 2-D (N,C,H,W) pooling is generated");
    if (!max && x.dtype != DType::kFloat32) fail(n, n.opType + " takes float32");
    if (max && n.outputs.size() > 1 && !n.outputs[1].empty()) fail(n, "the Indices output is not supported");
    int64_t kh = x.shape[2], kw = x.shape[3];
    if (!global) {
      const Shape ks = n.attrInts("kernel_shape", {});
      if (ks.size() != 2) fail(n, "kernel_shape needs two values");
      kh = ks[0], kw = ks[1];
    }
    const Window win = windowOf(n, x.shape, y.shape, kh, kw, global);
    const bool includePad = n.attrInt("count_include_pad", 0) != 0;
    const int64_t H = x.shape[2], W = x.shape[3];
    llvm::Value* best = entryAlloca(f64_, "pool.best");
    llvm::Value* sum = entryAlloca(f64_, "pool.sum");
    llvm::Value* cnt = entryAlloca(i64_, "pool.count");
    forEach({x.shape[0] * x.shape[1], win.oh, win.ow}, n.opType, [&](const std::vector<llvm::Value*>& i) {
      b_.CreateStore(llvm::ConstantFP::getInfinity(f64_, true), best);
      b_.CreateStore(llvm::ConstantFP::get(f64_, 0.0), sum);
      b_.CreateStore(i64c(0), cnt);
      forEach({win.kh, win.kw}, n.opType + ".tap", [&](const std::vector<llvm::Value*>& t) {
        llvm::Value* iy = b_.CreateSub(b_.CreateAdd(b_.CreateMul(i[1], i64c(win.sh)), b_.CreateMul(t[0], i64c(win.dh))), i64c(win.pt));
        llvm::Value* ix = b_.CreateSub(b_.CreateAdd(b_.CreateMul(i[2], i64c(win.sw)), b_.CreateMul(t[1], i64c(win.dw))), i64c(win.pl));
        llvm::Value* inside = b_.CreateAnd(inRange(iy, 0, H), inRange(ix, 0, W));
        // count_include_pad counts the explicit padding, never what ceil mode reaches beyond it.
        llvm::Value* counted = includePad ? b_.CreateAnd(inRange(iy, -win.pt, H + win.pb), inRange(ix, -win.pl, W + win.pr)) : inside;
        llvm::Value* at = linear({i[0], b_.CreateSelect(inside, iy, i64c(0)), b_.CreateSelect(inside, ix, i64c(0))}, {H * W, W, 1});
        llvm::Value* v = toDouble(load(x, at), x.dtype);
        llvm::Value* b = b_.CreateLoad(f64_, best);
        b_.CreateStore(b_.CreateSelect(inside, stdMax(b, v), b), best);
        llvm::Value* s0 = b_.CreateLoad(f64_, sum);
        b_.CreateStore(b_.CreateSelect(inside, b_.CreateFAdd(s0, v), s0), sum);
        b_.CreateStore(b_.CreateAdd(b_.CreateLoad(i64_, cnt), b_.CreateZExt(counted, i64_)), cnt);
      });
      llvm::Value* out = nullptr;
      if (max) {
        llvm::Value* v = b_.CreateLoad(f64_, best);
        out = x.dtype == DType::kFloat32 ? b_.CreateFPTrunc(v, f32_) : b_.CreateTrunc(b_.CreateFPToSI(v, i64_), elemType(x.dtype));
      } else {
        llvm::Value* c = b_.CreateLoad(i64_, cnt);
        c = b_.CreateSelect(b_.CreateICmpSLT(c, i64c(1)), i64c(1), c);
        out = b_.CreateFPTrunc(b_.CreateFDiv(b_.CreateLoad(f64_, sum), b_.CreateSIToFP(c, f64_)), f32_);
      }
      store(y, linear(i, {win.oh * win.ow, win.ow, 1}), out);
    });
  }

  // Inference batch normalization: the per-channel factor scale / sqrt(var + eps) computed here in
  // double exactly as the executor does (sqrt is correctly rounded), the rest per element.
  void generateBatchNorm(const Node& n, const Buf& x, const Buf& y) {
    if (x.shape.size() < 2 || x.dtype != DType::kFloat32) fail(n, "takes a float32 input of rank 2 or more");
    if (n.attrInt("training_mode", 0)) fail(n, "training mode is not supported");
    const int64_t C = x.shape[1];
    std::vector<const Tensor*> p;
    for (size_t k = 1; k < 5; ++k) {
      const Tensor* t = k < n.inputs.size() ? constantTensor(n.inputs[k]) : nullptr;
      if (!t || t->dtype != DType::kFloat32 || int64_t(t->floats.size()) != C)
        fail(n, "input " + std::to_string(k) + " must be a constant float32 of " + std::to_string(C) + " values for generated code");
      p.push_back(t);
    }
    const float eps = n.attrFloat("epsilon", 1e-5f);
    std::vector<double> k(static_cast<size_t>(C)), mean(static_cast<size_t>(C)), shift(static_cast<size_t>(C));
    for (int64_t ch = 0; ch < C; ++ch) {
      k[size_t(ch)] = double(p[0]->floats[size_t(ch)]) / std::sqrt(double(p[3]->floats[size_t(ch)]) + eps);
      mean[size_t(ch)] = double(p[2]->floats[size_t(ch)]);
      shift[size_t(ch)] = double(p[1]->floats[size_t(ch)]);
    }
    auto table = [&](const std::vector<double>& v, const std::string& name) {
      return firstElement(constantArray(llvm::ConstantDataArray::get(ctx_, llvm::ArrayRef<double>(v)), name + "." + n.outputs[0]));
    };
    llvm::Value *kT = table(k, "bn.factor"), *mT = table(mean, "bn.mean"), *sT = table(shift, "bn.bias");
    const int64_t inner = count(x.shape) / (x.shape[0] * C);
    forEach({count(x.shape)}, "bn", [&](const std::vector<llvm::Value*>& i) {
      llvm::Value* ch = b_.CreateURem(b_.CreateUDiv(i[0], i64c(inner)), i64c(C));
      auto at = [&](llvm::Value* t) { return b_.CreateLoad(f64_, b_.CreateInBoundsGEP(f64_, t, ch)); };
      llvm::Value* v = b_.CreateFSub(b_.CreateFPExt(load(x, i[0]), f64_), at(mT));
      store(y, i[0], b_.CreateFPTrunc(b_.CreateFAdd(b_.CreateFMul(v, at(kT)), at(sT)), f32_));
    });
  }

  // Strides of an operand broadcast to `out` (0 along its broadcast dimensions).
  static std::vector<int64_t> broadcastStrides(const Shape& s, const Shape& out) {
    std::vector<int64_t> st(out.size(), 0);
    const std::vector<int64_t> own = stridesOf(s);
    const size_t off = out.size() - s.size();
    for (size_t k = off; k < out.size(); ++k)
      if (s[k - off] != 1) st[k] = own[k - off];
    return st;
  }

  // A node's operands for the executor's shared planners (host::sliceWindow, host::reduction):
  // `first` for input 0, whose shape alone they read, then the node's constants; an operand that
  // is not a constant is refused.
  std::vector<const Tensor*> constantOperands(const Node& n, const Tensor& first) {
    std::vector<const Tensor*> ins = {&first};
    for (size_t k = 1; k < n.inputs.size(); ++k) {
      const Tensor* t = n.inputs[k].empty() ? nullptr : constantTensor(n.inputs[k]);
      if (!n.inputs[k].empty() && !t) fail(n, "input " + std::to_string(k) + " ('" + n.inputs[k] + "') must be a constant");
      ins.push_back(t);
    }
    return ins;
  }

  float scalarInput(const Node& n, size_t i, float fallback) {
    if (i >= n.inputs.size() || n.inputs[i].empty()) return fallback;
    const Tensor* t = constantTensor(n.inputs[i]);
    if (!t) fail(n, "input " + std::to_string(i) + " ('" + n.inputs[i] + "') must be a constant for generated code");
    if ((t->dtype == DType::kFloat32 ? t->floats.size() : t->ints.size()) != 1) fail(n, "input " + std::to_string(i) + " must be a scalar");
    return t->dtype == DType::kFloat32 ? t->floats[0] : float(double(t->ints[0]));
  }

  void generateSoftmax(const Node& n, const Buf& x, const Buf& y) {
    int64_t axis = n.attrInt("axis", m_.opset >= 13 ? -1 : 1);
    if (axis < 0) axis += int64_t(x.shape.size());
    int64_t len = x.shape.at(size_t(axis)), inner = 1;
    for (size_t k = size_t(axis) + 1; k < x.shape.size(); ++k) inner *= x.shape[k];
    if (m_.opset < 13) {
      len *= inner;
      inner = 1;
    }
    const int64_t outer = count(x.shape) / (len * inner);
    llvm::IRBuilder<> atEntry(entry_, entry_->getFirstInsertionPt());
    llvm::Value* mx = atEntry.CreateAlloca(f64_, nullptr, "softmax.max");
    llvm::Value* sum = atEntry.CreateAlloca(f64_, nullptr, "softmax.sum");
    llvm::FunctionCallee exp = runtimeFn("exp", f64_, {f64_});
    // The executor's order of operations, in double: max, sum of exp(v - max), exp(v - max) / sum.
    loop(outer, "softmax.o", [&](llvm::Value* o) {
      loop(inner, "softmax.in", [&](llvm::Value* in) {
        auto at = [&](llvm::Value* k) { return b_.CreateAdd(b_.CreateMul(b_.CreateAdd(b_.CreateMul(o, i64c(len)), k), i64c(inner)), in); };
        b_.CreateStore(llvm::ConstantFP::getInfinity(f64_, true), mx);
        b_.CreateStore(llvm::ConstantFP::get(f64_, 0.0), sum);
        loop(len, "softmax.max", [&](llvm::Value* k) {
          b_.CreateStore(stdMax(b_.CreateLoad(f64_, mx), b_.CreateFPExt(load(x, at(k)), f64_)), mx);
        });
        loop(len, "softmax.sum", [&](llvm::Value* k) {
          llvm::Value* e = b_.CreateCall(exp, {b_.CreateFSub(b_.CreateFPExt(load(x, at(k)), f64_), b_.CreateLoad(f64_, mx))});
          b_.CreateStore(b_.CreateFAdd(b_.CreateLoad(f64_, sum), e), sum);
        });
        loop(len, "softmax.div", [&](llvm::Value* k) {
          llvm::Value* e = b_.CreateCall(exp, {b_.CreateFSub(b_.CreateFPExt(load(x, at(k)), f64_), b_.CreateLoad(f64_, mx))});
          store(y, at(k), b_.CreateFPTrunc(b_.CreateFDiv(e, b_.CreateLoad(f64_, sum)), f32_));
        });
      });
    });
  }

  void generateQuantization(const Node& n, const Buf& x, const Buf& y) {
    const bool quantize = n.opType == "QuantizeLinear";
    if (n.inputs.size() < 2 || n.inputs[1].empty()) fail(n, "input 1 (the scale) is missing");
    const Tensor* scale = constantTensor(n.inputs[1]);
    const Tensor* zp = n.inputs.size() > 2 && !n.inputs[2].empty() ? constantTensor(n.inputs[2]) : nullptr;
    if (!scale || (n.inputs.size() > 2 && !n.inputs[2].empty() && !zp))
      fail(n, "the scale and zero point must be constants for generated code");
    // The per-element parameter index: 0 per tensor, the coordinate along `axis` per channel.
    int64_t axis = n.attrInt("axis", 1), inner = 1, extent = 1;
    const bool perAxis = scale->elements() != 1;
    if (perAxis) {
      if (axis < 0) axis += int64_t(x.shape.size());
      if (axis < 0 || axis >= int64_t(x.shape.size()) || x.shape[size_t(axis)] != scale->elements())
        fail(n, "per-axis scale does not match the input's shape");
      extent = x.shape[size_t(axis)];
      for (size_t k = size_t(axis) + 1; k < x.shape.size(); ++k) inner *= x.shape[k];
    }
    Buf scales{tensorData(*scale, "scale." + n.outputs[0]), DType::kFloat32, scale->shape};
    Tensor zeros;
    zeros.dtype = DType::kInt64;
    zeros.shape = scale->shape;
    for (int64_t i = 0; i < scale->elements(); ++i) zeros.ints.push_back(zp ? zp->ints.at(size_t(i)) : 0);
    Buf zps{tensorData(zeros, "zero_point." + n.outputs[0]), DType::kInt64, zeros.shape};
    double lo = 0, hi = 0;
    if (quantize) {
      lo = y.dtype == DType::kUInt8 ? 0.0 : -128.0;
      hi = y.dtype == DType::kUInt8 ? 255.0 : 127.0;
    }
    forEach({count(x.shape)}, n.opType, [&](const std::vector<llvm::Value*>& i) {
      llvm::Value* p = perAxis ? b_.CreateURem(b_.CreateUDiv(i[0], i64c(inner)), i64c(extent)) : static_cast<llvm::Value*>(i64c(0));
      llvm::Value* s = load(scales, p);
      llvm::Value* z = load(zps, p);
      llvm::Value* v = load(x, i[0]);
      if (quantize) {
        // float(x) / scale rounded half to even in float, plus the zero point, rounded and
        // saturated in double: the executor's saturateTo.
        llvm::Value* f = x.dtype == DType::kFloat32 ? v : b_.CreateFPTrunc(toDouble(v, x.dtype), f32_);
        llvm::Value* q = b_.CreateFPExt(intrinsic(llvm::Intrinsic::nearbyint, b_.CreateFDiv(f, s)), f64_);
        llvm::Value* r = intrinsic(llvm::Intrinsic::nearbyint, b_.CreateFAdd(q, b_.CreateSIToFP(z, f64_)));
        llvm::Value* loC = llvm::ConstantFP::get(f64_, lo), *hiC = llvm::ConstantFP::get(f64_, hi);
        r = b_.CreateSelect(b_.CreateFCmpOLT(r, loC), loC, b_.CreateSelect(b_.CreateFCmpOLT(hiC, r), hiC, r));
        store(y, i[0], b_.CreateTrunc(b_.CreateFPToSI(r, i64_), i8_));
      } else {
        llvm::Value* d = b_.CreateSIToFP(b_.CreateSub(toI64(v, x.dtype), z), f64_);
        store(y, i[0], b_.CreateFPTrunc(b_.CreateFMul(d, b_.CreateFPExt(s, f64_)), f32_));
      }
    });
  }

  // tessera.FoldInput: y[b][(c*KW + kx)*P + py][y'][x'] = x[b][c][P*y' + py - ph][sw*x' + kx - pw], pad_value outside.
  void generateFoldInput(const Node& n, const Buf& x, const Buf& y) {
    if (x.shape.size() != 4 || y.shape.size() != 4) fail(n, "folds N,C,H,W tensors");
    const int64_t kw = n.attrInt("kw", 1), sw = n.attrInt("sw", 1), phases = n.attrInt("phases", 1);
    const int64_t ph = n.attrInt("ph", 0), pw = n.attrInt("pw", 0), oh = y.shape[2], ow = y.shape[3];
    const int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3];
    llvm::Value* pad = llvm::ConstantInt::get(elemType(y.dtype), uint64_t(n.attrInt("pad_value", 0)), true);
    forEach({N, C, kw, phases, oh, ow}, "fold", [&](const std::vector<llvm::Value*>& i) {
      llvm::Value* iy = b_.CreateSub(b_.CreateAdd(b_.CreateMul(i[4], i64c(phases)), i[3]), i64c(ph));
      llvm::Value* ix = b_.CreateSub(b_.CreateAdd(b_.CreateMul(i[5], i64c(sw)), i[2]), i64c(pw));
      llvm::Value* inside = b_.CreateAnd(b_.CreateAnd(b_.CreateICmpSGE(iy, i64c(0)), b_.CreateICmpSLT(iy, i64c(H))),
                                         b_.CreateAnd(b_.CreateICmpSGE(ix, i64c(0)), b_.CreateICmpSLT(ix, i64c(W))));
      llvm::Value* channel = b_.CreateAdd(b_.CreateMul(b_.CreateAdd(b_.CreateMul(i[1], i64c(kw)), i[2]), i64c(phases)), i[3]);
      llvm::Value* to = linear({i[0], channel, i[4], i[5]}, stridesOf(y.shape));
      // Clamped coordinates keep the load in bounds; the select then picks the padding.
      llvm::Value* cy = b_.CreateSelect(inside, iy, i64c(0)), *cx = b_.CreateSelect(inside, ix, i64c(0));
      llvm::Value* v = load(x, linear({i[0], i[1], cy, cx}, stridesOf(x.shape)));
      store(y, to, b_.CreateSelect(inside, v, pad));
    });
  }

  // ---- the descriptor --------------------------------------------------------------------------

  void buildDescriptor() {
    const hw::Config cfg = hw::Config::fromJson(m_.configJson, m_.source + ": config");
    const hw::Isa isa(cfg);
    llvm::PointerType* i64p = i64_->getPointerTo();
    llvm::StructType* segTy = llvm::StructType::create(ctx_, {i32_, i64p, i8p_}, "TesseraAotSegment");
    llvm::StructType* tensorTy = llvm::StructType::create(ctx_, {i8p_, i32_, i32_, i64p}, "TesseraAotTensor");
    std::vector<llvm::Constant*> segs;
    for (size_t si = 0; si < m_.segments.size(); ++si) {
      const Segment& s = m_.segments[si];
      std::vector<uint64_t> words;
      std::vector<uint8_t> regions;
      for (size_t i = 0; i < s.insns.size(); ++i) {
        const hw::RawInsn raw = isa.encode(s.insns[i]);
        words.push_back(raw.lo);
        words.push_back(raw.hi);
        regions.push_back(uint8_t(s.insnRegion[i]));
      }
      const std::string tag = "segment" + std::to_string(si);
      segs.push_back(llvm::ConstantStruct::get(
          segTy, {llvm::ConstantInt::get(i32_, s.insns.size()),
                  words.empty() ? llvm::ConstantPointerNull::get(i64p)
                                : firstElement(constantArray(llvm::ConstantDataArray::get(ctx_, llvm::ArrayRef<uint64_t>(words)), tag + ".insns")),
                  regions.empty() ? llvm::ConstantPointerNull::get(i8p_)
                                  : firstElement(constantArray(llvm::ConstantDataArray::get(ctx_, llvm::ArrayRef<uint8_t>(regions)), tag + ".regions"))}));
    }
    auto tensors = [&](const std::vector<Tensor>& list, const std::string& what) -> llvm::Constant* {
      std::vector<llvm::Constant*> items;
      for (size_t i = 0; i < list.size(); ++i) {
        const Tensor& t = list[i];
        std::vector<uint64_t> dims(t.shape.begin(), t.shape.end());
        const std::string tag = what + std::to_string(i);
        items.push_back(llvm::ConstantStruct::get(
            tensorTy, {cString(t.name, tag + ".name"), llvm::ConstantInt::get(i32_, uint64_t(t.dtype)),
                       llvm::ConstantInt::get(i32_, dims.size()),
                       dims.empty() ? llvm::ConstantPointerNull::get(i64p)
                                    : firstElement(constantArray(llvm::ConstantDataArray::get(ctx_, llvm::ArrayRef<uint64_t>(dims)), tag + ".dims"))}));
      }
      if (items.empty()) return llvm::ConstantPointerNull::get(tensorTy->getPointerTo());
      return firstElement(constantArray(llvm::ConstantArray::get(llvm::ArrayType::get(tensorTy, items.size()), items), what + "s"));
    };
    llvm::Constant* segArray = segs.empty() ? static_cast<llvm::Constant*>(llvm::ConstantPointerNull::get(segTy->getPointerTo()))
                                            : firstElement(constantArray(llvm::ConstantArray::get(llvm::ArrayType::get(segTy, segs.size()), segs), "segments"));
    llvm::Constant* image = m_.constantImage.empty()
                                ? static_cast<llvm::Constant*>(llvm::ConstantPointerNull::get(i8p_))
                                : firstElement(constantArray(llvm::ConstantDataArray::get(ctx_, llvm::ArrayRef<uint8_t>(m_.constantImage)), "constant_image"));
    llvm::StructType* modelTy = llvm::StructType::create(
        ctx_, {i32_, i8p_, i8p_, i8p_, i64_, i64_, i64_, i32_, segTy->getPointerTo(), i32_, i32_, tensorTy->getPointerTo(),
               tensorTy->getPointerTo(), runType()->getPointerTo()},
        "TesseraAotModel");
    llvm::Constant* desc = llvm::ConstantStruct::get(
        modelTy, {llvm::ConstantInt::get(i32_, TESSERA_AOT_ABI_VERSION), cString(symbol_, "model.name"),
                  cString(m_.configJson, "model.config"), image, llvm::ConstantInt::get(i64_, m_.constantImage.size()),
                  llvm::ConstantInt::get(i64_, m_.arenaBytes), llvm::ConstantInt::get(i64_, scratchBytes_),
                  llvm::ConstantInt::get(i32_, m_.segments.size()), segArray, llvm::ConstantInt::get(i32_, m_.inputs.size()),
                  llvm::ConstantInt::get(i32_, m_.outputs.size()), tensors(m_.inputs, "input"), tensors(m_.outputs, "output"), fn_});
    if (mod_->getNamedValue(symbol_ + "_model")) throw Error(m_.source, "the name " + symbol_ + "_model is taken in the module");
    global(desc, symbol_ + "_model", llvm::GlobalValue::ExternalLinkage);
  }
};

}  // namespace

std::unique_ptr<llvm::Module> generateModule(const CompiledModel& model, const std::string& symbol, llvm::LLVMContext& context,
                                        const std::string& triple, const llvm::DataLayout& layout) {
  return ModuleGenerator(model, symbol, context, triple, layout).run();
}

}  // namespace detail
}  // namespace tessera::compiler::codegen
