// Every lowered host operator, JIT-compiled, against the C++ executor bit for bit; unlowered operators refused by name.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "tessera/compiler/codegen/codegen.h"
#include "tessera/compiler/model/run.h"
#include "tessera/runtime/session.h"
#include "tessera/support/error.h"

namespace {

using namespace tessera;
using compiler::model::CompiledModel;
using compiler::ir::Attribute;
using compiler::ir::DType;
using compiler::ir::Node;
using compiler::ir::Tensor;

Tensor tensor(const std::string& name, DType t, std::vector<int64_t> shape) {
  Tensor x;
  x.name = name;
  x.dtype = t;
  x.shape = std::move(shape);
  x.hasShape = true;
  return x;
}

// Values across the type's range; floats include the ones whose comparisons and rounding differ
// (signed zeros, halves, infinities, NaN).
Tensor randomData(Tensor t, std::mt19937& rng) {
  const int64_t n = t.elements();
  for (int64_t i = 0; i < n; ++i) {
    switch (t.dtype) {
      case DType::kFloat32: {
        static const float special[] = {0.0f, -0.0f, 0.5f, -1.5f, 2.5f, std::numeric_limits<float>::infinity(),
                                        -std::numeric_limits<float>::infinity(), std::nanf("")};
        t.floats.push_back(i % 7 == 3 ? special[size_t(i / 7) % 8] : std::uniform_real_distribution<float>(-6, 6)(rng));
        break;
      }
      case DType::kUInt8: t.ints.push_back(std::uniform_int_distribution<int>(0, 255)(rng)); break;
      case DType::kInt8: t.ints.push_back(std::uniform_int_distribution<int>(-128, 127)(rng)); break;
      case DType::kInt32: t.ints.push_back(std::uniform_int_distribution<int32_t>(-100000, 100000)(rng)); break;
      case DType::kInt64: t.ints.push_back(std::uniform_int_distribution<int64_t>(-1000, 1000)(rng)); break;
      case DType::kBool: t.ints.push_back(std::uniform_int_distribution<int>(0, 1)(rng)); break;
    }
  }
  return t;
}

Node node(const std::string& op, std::vector<std::string> ins, std::vector<std::string> outs) {
  Node n;
  n.name = op + "_node";
  n.opType = op;
  n.inputs = std::move(ins);
  n.outputs = std::move(outs);
  return n;
}

Attribute ints(std::vector<int64_t> v) {
  Attribute a;
  a.kind = Attribute::Kind::kInts;
  a.ints = std::move(v);
  return a;
}

Attribute integer(int64_t v) {
  Attribute a;
  a.kind = Attribute::Kind::kInt;
  a.i = v;
  return a;
}

// A host-only model: `nodes` in order over `inputs`, with `constants`, computing `outputs`.
CompiledModel hostModel(const std::vector<Tensor>& inputs, const std::vector<Tensor>& constants, const std::vector<Node>& nodes,
                        const std::vector<Tensor>& outputs, int64_t opset = 13) {
  CompiledModel m;
  m.configJson = hw::Config::load("default").toJson();
  m.source = "test";
  m.opset = opset;
  m.inputs = inputs;
  m.outputs = outputs;
  for (Tensor c : constants) {
    c.isConstant = true;
    m.constants[c.name] = c;
  }
  for (const Node& n : nodes) {
    compiler::model::Step s;
    s.kind = compiler::model::Step::Kind::kHost;
    s.index = int(m.hostSteps.size());
    m.hostSteps.push_back({n});
    m.steps.push_back(s);
  }
  return m;
}

// Equal bit for bit, except that any NaN equals any NaN: which operand's payload and sign an IEEE
// operation propagates is not fixed, and compilers commute operands (the executor built at -O1 and at
// -O3 gives NaNs of different signs for the same sum of infinities).
bool sameFloat(float a, float b) { return std::memcmp(&a, &b, 4) == 0 || (std::isnan(a) && std::isnan(b)); }

bool sameBits(const Tensor& a, const Tensor& b) {
  if (a.dtype != b.dtype || a.shape != b.shape || a.ints != b.ints || a.floats.size() != b.floats.size()) return false;
  for (size_t i = 0; i < a.floats.size(); ++i)
    if (!sameFloat(a.floats[i], b.floats[i])) return false;
  return true;
}

// Runs `m` on the executor and as JIT-compiled code on fsim; every output must match bit for bit.
void expectSame(const CompiledModel& m, unsigned seed = 1) {
  std::mt19937 rng(seed);
  std::map<std::string, Tensor> feeds;
  for (const Tensor& t : m.inputs) feeds[t.name] = randomData(t, rng);
  const compiler::model::ModelRunResult want = compiler::model::runReference(m, feeds);
  const compiler::codegen::JitModel code(m, "t");
  runtime::Session session("fsim", hw::Config::load("default"));
  runtime::AotSession aot(code.descriptor(), session);
  const compiler::model::ModelRunResult got = compiler::codegen::runGenerated(m, code.descriptor(), aot.handle(), feeds);
  for (const Tensor& o : m.outputs) {
    const Tensor& w = want.outputs.at(o.name);
    const Tensor& g = got.outputs.at(o.name);
    EXPECT_TRUE(sameBits(w, g)) << o.name << ": executor " << w.describe() << " vs generated " << g.describe();
    for (size_t i = 0; i < w.floats.size() && i < g.floats.size(); ++i)
      if (!sameFloat(w.floats[i], g.floats[i])) {
        ADD_FAILURE() << o.name << "[" << i << "]: executor " << w.floats[i] << ", generated " << g.floats[i];
        break;
      }
    for (size_t i = 0; i < w.ints.size() && i < g.ints.size(); ++i)
      if (w.ints[i] != g.ints[i]) {
        ADD_FAILURE() << o.name << "[" << i << "]: executor " << w.ints[i] << ", generated " << g.ints[i];
        break;
      }
  }
}

TEST(HostCodegen, SoftmaxLastAxisAndOpset11Flattening) {
  const Tensor x = tensor("x", DType::kFloat32, {2, 3, 5});
  // Finite inputs only: the executor and the code agree on NaN too, but a NaN row is all NaN.
  CompiledModel m = hostModel({x}, {}, {node("Clip", {"x", "lo", "hi"}, {"c"}), node("Softmax", {"c"}, {"y"})},
                              {tensor("y", DType::kFloat32, {2, 3, 5})});
  Tensor lo = tensor("lo", DType::kFloat32, {}), hi = tensor("hi", DType::kFloat32, {});
  lo.floats = {-5.0f};
  hi.floats = {5.0f};
  m.constants["lo"] = lo;
  m.constants["hi"] = hi;
  m.constants["lo"].isConstant = m.constants["hi"].isConstant = true;
  expectSame(m);
  m.opset = 11;
  m.hostSteps[1].node.attrs["axis"] = integer(1);
  expectSame(m, 2);
}

TEST(HostCodegen, TransposeFloatAndInt8) {
  Node t = node("Transpose", {"x"}, {"y"});
  t.attrs["perm"] = ints({0, 2, 3, 1});
  expectSame(hostModel({tensor("x", DType::kFloat32, {1, 2, 3, 4})}, {}, {t}, {tensor("y", DType::kFloat32, {1, 3, 4, 2})}));
  expectSame(hostModel({tensor("x", DType::kInt8, {2, 3, 4})}, {}, {node("Transpose", {"x"}, {"y"})},
                       {tensor("y", DType::kInt8, {4, 3, 2})}));
}

TEST(HostCodegen, ReluAndClipOnFloatsWithNanAndOnIntegers) {
  expectSame(hostModel({tensor("x", DType::kFloat32, {64})}, {}, {node("Relu", {"x"}, {"y"})}, {tensor("y", DType::kFloat32, {64})}));
  expectSame(hostModel({tensor("x", DType::kInt8, {64})}, {}, {node("Relu", {"x"}, {"y"})}, {tensor("y", DType::kInt8, {64})}));
  Tensor lo = tensor("lo", DType::kInt32, {}), hi = tensor("hi", DType::kInt32, {});
  lo.ints = {-500};
  hi.ints = {700};
  expectSame(hostModel({tensor("x", DType::kInt32, {64})}, {lo, hi}, {node("Clip", {"x", "lo", "hi"}, {"y"})},
                       {tensor("y", DType::kInt32, {64})}));
}

TEST(HostCodegen, ElementwiseBroadcastingAndIntegerWrapping) {
  for (const char* op : {"Add", "Sub", "Mul"}) {
    SCOPED_TRACE(op);
    expectSame(hostModel({tensor("a", DType::kFloat32, {2, 3, 4}), tensor("b", DType::kFloat32, {3, 1})}, {},
                         {node(op, {"a", "b"}, {"y"})}, {tensor("y", DType::kFloat32, {2, 3, 4})}));
    expectSame(hostModel({tensor("a", DType::kInt8, {4, 1}), tensor("b", DType::kInt8, {1, 5})}, {}, {node(op, {"a", "b"}, {"y"})},
                         {tensor("y", DType::kInt8, {4, 5})}));
    expectSame(hostModel({tensor("a", DType::kUInt8, {16}), tensor("b", DType::kUInt8, {16})}, {}, {node(op, {"a", "b"}, {"y"})},
                         {tensor("y", DType::kUInt8, {16})}));
    expectSame(hostModel({tensor("a", DType::kInt32, {2, 8}), tensor("b", DType::kInt32, {8})}, {}, {node(op, {"a", "b"}, {"y"})},
                         {tensor("y", DType::kInt32, {2, 8})}));
  }
}

// Pow of float bases (LayerNorm's square as PyTorch exports it): float exponents broadcast, and a
// constant integer exponent; an integer base is refused by name (the interpreter runs it).
TEST(HostCodegen, PowOfFloatBases) {
  expectSame(hostModel({tensor("a", DType::kFloat32, {2, 3, 4}), tensor("b", DType::kFloat32, {3, 1})}, {},
                       {node("Pow", {"a", "b"}, {"y"})}, {tensor("y", DType::kFloat32, {2, 3, 4})}));
  Tensor two = tensor("two", DType::kInt64, {});
  two.ints = {2};
  expectSame(hostModel({tensor("a", DType::kFloat32, {5, 7})}, {two}, {node("Pow", {"a", "two"}, {"y"})},
                       {tensor("y", DType::kFloat32, {5, 7})}));
  const CompiledModel ints = hostModel({tensor("a", DType::kInt32, {4})}, {two}, {node("Pow", {"a", "two"}, {"y"})},
                                       {tensor("y", DType::kInt32, {4})});
  try {
    compiler::codegen::JitModel code(ints, "t");
    FAIL() << "an integer Pow was lowered";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("Pow 'Pow_node' (opset 13): an integer base"), std::string::npos) << e.what();
  }
}

TEST(HostCodegen, QuantizeAndDequantizePerTensorAndPerAxis) {
  Tensor scale = tensor("s", DType::kFloat32, {3}), zp = tensor("z", DType::kInt8, {3});
  scale.floats = {0.05f, 0.013f, 0.5f};
  zp.ints = {-3, 0, 17};
  Tensor scale1 = tensor("s1", DType::kFloat32, {}), zpu = tensor("zu", DType::kUInt8, {});
  scale1.floats = {0.02f};
  zpu.ints = {128};
  // Per axis 1 to int8 and back; per tensor to uint8 and back; int32 input; the default uint8 output.
  Node q = node("QuantizeLinear", {"x", "s", "z"}, {"q"}), d = node("DequantizeLinear", {"q", "s", "z"}, {"d"});
  Node qi = node("QuantizeLinear", {"i", "s1", "zu"}, {"qi"}), du = node("DequantizeLinear", {"qi", "s1", "zu"}, {"di"});
  Node qd = node("QuantizeLinear", {"x", "s1"}, {"qd"});
  // Scale 1 with zero point 0 keeps the float sample's halves (0.5, -1.5, 2.5): rounding half to even.
  Tensor one = tensor("one", DType::kFloat32, {}), zero = tensor("zero", DType::kInt8, {});
  one.floats = {1.0f};
  zero.ints = {0};
  Node qh = node("QuantizeLinear", {"x", "one", "zero"}, {"qh"});
  expectSame(hostModel({tensor("x", DType::kFloat32, {2, 3, 2, 2}), tensor("i", DType::kInt32, {10})}, {scale, zp, scale1, zpu, one, zero},
                       {q, d, qi, du, qd, qh},
                       {tensor("q", DType::kInt8, {2, 3, 2, 2}), tensor("d", DType::kFloat32, {2, 3, 2, 2}),
                        tensor("qi", DType::kUInt8, {10}), tensor("di", DType::kFloat32, {10}), tensor("qd", DType::kUInt8, {2, 3, 2, 2}),
                        tensor("qh", DType::kInt8, {2, 3, 2, 2})}));
}

TEST(HostCodegen, ReshapesAliasAndConstantStepsFold) {
  Tensor shape = tensor("shape", DType::kInt64, {2});
  shape.ints = {3, -1};
  Tensor c1 = tensor("c1", DType::kFloat32, {4}), c2 = tensor("c2", DType::kFloat32, {4});
  c1.floats = {1, 2, 3, 4};
  c2.floats = {0.5f, 0.25f, -1, 8};
  Node f = node("Flatten", {"x"}, {"f"});
  f.attrs["axis"] = integer(2);
  expectSame(hostModel({tensor("x", DType::kFloat32, {2, 3, 2})}, {shape, c1, c2},
                       {node("Reshape", {"x", "shape"}, {"r"}), node("Identity", {"r"}, {"y"}), f,
                        node("Mul", {"c1", "c2"}, {"k"}), node("Add", {"f", "f"}, {"g"})},
                       {tensor("y", DType::kFloat32, {3, 4}), tensor("k", DType::kFloat32, {4}), tensor("g", DType::kFloat32, {6, 2})}));
}

Attribute real(float v) {
  Attribute a;
  a.kind = Attribute::Kind::kFloat;
  a.f = v;
  return a;
}

Attribute text(const std::string& v) {
  Attribute a;
  a.kind = Attribute::Kind::kString;
  a.s = v;
  return a;
}

// Weights with zeros among them (the executor skips a zero weight's taps, NaN inputs included).
Tensor weights(const std::string& name, std::vector<int64_t> shape, unsigned seed) {
  std::mt19937 rng(seed);
  Tensor w = randomData(tensor(name, DType::kFloat32, std::move(shape)), rng);
  for (size_t i = 0; i < w.floats.size(); ++i)
    if (!std::isfinite(w.floats[i]) || i % 5 == 1) w.floats[i] = i % 10 == 1 ? -0.0f : 0.0f;
  return w;
}

TEST(HostCodegen, ConvPaddingStridesDilationsGroupsAndBias) {
  Node c = node("Conv", {"x", "w", "b"}, {"y"});
  c.attrs["pads"] = ints({1, 2, 0, 1});
  c.attrs["strides"] = ints({2, 1});
  c.attrs["dilations"] = ints({1, 2});
  c.attrs["group"] = integer(2);
  Tensor b = weights("b", {4}, 3);
  expectSame(hostModel({tensor("x", DType::kFloat32, {2, 4, 7, 6})}, {weights("w", {4, 2, 3, 2}, 4), b}, {c},
                       {tensor("y", DType::kFloat32, {2, 4, 3, 7})}));
  Node same = node("Conv", {"x", "w"}, {"y"});
  same.attrs["auto_pad"] = text("SAME_LOWER");
  same.attrs["strides"] = ints({2, 2});
  expectSame(hostModel({tensor("x", DType::kFloat32, {1, 3, 5, 6})}, {weights("w", {2, 3, 3, 3}, 5)}, {same},
                       {tensor("y", DType::kFloat32, {1, 2, 3, 3})}));
}

TEST(HostCodegen, GemmAndMatMul) {
  Node g = node("Gemm", {"a", "b", "c"}, {"y"});
  g.attrs["transA"] = integer(1);
  g.attrs["transB"] = integer(1);
  g.attrs["alpha"] = real(0.75f);
  g.attrs["beta"] = real(-1.25f);
  expectSame(hostModel({tensor("a", DType::kFloat32, {5, 3}), tensor("b", DType::kFloat32, {4, 5})}, {weights("c", {4}, 6)}, {g},
                       {tensor("y", DType::kFloat32, {3, 4})}));
  expectSame(hostModel({tensor("a", DType::kFloat32, {3, 7}), tensor("b", DType::kFloat32, {7, 2})}, {}, {node("MatMul", {"a", "b"}, {"y"})},
                       {tensor("y", DType::kFloat32, {3, 2})}));
  // Batch dimensions broadcast both ways, and 1-D operands on either side.
  expectSame(hostModel({tensor("a", DType::kFloat32, {2, 1, 3, 4}), tensor("b", DType::kFloat32, {5, 4, 2})}, {},
                       {node("MatMul", {"a", "b"}, {"y"})}, {tensor("y", DType::kFloat32, {2, 5, 3, 2})}));
  expectSame(hostModel({tensor("a", DType::kFloat32, {4}), tensor("b", DType::kFloat32, {2, 4, 3})}, {},
                       {node("MatMul", {"a", "b"}, {"y"})}, {tensor("y", DType::kFloat32, {2, 3})}));
  expectSame(hostModel({tensor("a", DType::kFloat32, {2, 3, 4}), tensor("b", DType::kFloat32, {4})}, {},
                       {node("MatMul", {"a", "b"}, {"y"})}, {tensor("y", DType::kFloat32, {2, 3})}));
}

TEST(HostCodegen, PoolingAndBatchNormalization) {
  Node mp = node("MaxPool", {"x"}, {"m"});
  mp.attrs["kernel_shape"] = ints({3, 2});
  mp.attrs["pads"] = ints({1, 0, 1, 1});
  mp.attrs["strides"] = ints({2, 2});
  mp.attrs["ceil_mode"] = integer(1);
  Node ap = node("AveragePool", {"x"}, {"a"});
  ap.attrs = mp.attrs;
  Node api = node("AveragePool", {"x"}, {"ai"});
  api.attrs = mp.attrs;
  api.attrs["count_include_pad"] = integer(1);
  Node bn = node("BatchNormalization", {"x", "scale", "bias", "mean", "var"}, {"n"});
  bn.attrs["epsilon"] = real(1e-3f);
  Tensor var = weights("var", {3}, 7);
  for (float& v : var.floats) v = std::fabs(v) + 0.1f;
  expectSame(hostModel({tensor("x", DType::kFloat32, {2, 3, 7, 6})}, {weights("scale", {3}, 8), weights("bias", {3}, 9), weights("mean", {3}, 10), var},
                       {mp, ap, api, node("GlobalAveragePool", {"x"}, {"g"}), bn},
                       {tensor("m", DType::kFloat32, {2, 3, 4, 3}), tensor("a", DType::kFloat32, {2, 3, 4, 3}),
                        tensor("ai", DType::kFloat32, {2, 3, 4, 3}), tensor("g", DType::kFloat32, {2, 3, 1, 1}),
                        tensor("n", DType::kFloat32, {2, 3, 7, 6})}));
  Node mi = node("MaxPool", {"x"}, {"m"});
  mi.attrs["kernel_shape"] = ints({2, 2});
  expectSame(hostModel({tensor("x", DType::kInt8, {1, 2, 5, 5})}, {}, {mi}, {tensor("m", DType::kInt8, {1, 2, 4, 4})}));
}

TEST(HostCodegen, OutputDescriptionDisagreeingWithTheCodeIsRefused) {
  const CompiledModel m = hostModel({tensor("x", DType::kFloat32, {2, 3})}, {}, {node("Relu", {"x"}, {"y"})},
                                    {tensor("y", DType::kFloat32, {3, 3})});
  try {
    compiler::codegen::JitModel code(m, "t");
    FAIL() << "a wrong output description was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("output 'y' is described as float32[3,3] but computed as float32[2,3]"), std::string::npos)
        << e.what();
  }
}

TEST(HostCodegen, UnloweredOperatorIsNamed) {
  Node p = node("ConvInteger", {"x", "w"}, {"y"});
  p.name = "conv7";
  Tensor w = tensor("w", DType::kUInt8, {1, 1, 2, 2});
  w.ints = {1, 2, 3, 4};
  const CompiledModel m = hostModel({tensor("x", DType::kUInt8, {1, 1, 4, 4})}, {w}, {p}, {tensor("y", DType::kInt32, {1, 1, 3, 3})});
  try {
    compiler::codegen::JitModel code(m, "t");
    FAIL() << "ConvInteger was lowered";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("ConvInteger 'conv7' (opset 13)"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("has no LLVM code generation"), std::string::npos) << e.what();
  }
  compiler::codegen::EmitOptions o;
  o.symbol = "t";
  o.triple = "mips-linux-gnu";
  try {
    compiler::codegen::emit(m, compiler::codegen::Emit::kObject, o);
    FAIL() << "an unknown triple was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("target triple mips-linux-gnu: is not a supported target triple"), std::string::npos) << e.what();
  }
}

TEST(HostCodegen, EveryTripleEmitsIrAndObjects) {
  const CompiledModel m = hostModel({tensor("x", DType::kFloat32, {2, 5})}, {}, {node("Softmax", {"x"}, {"y"})},
                                    {tensor("y", DType::kFloat32, {2, 5})});
  for (const std::string& triple : compiler::codegen::supportedTriples()) {
    SCOPED_TRACE(triple);
    compiler::codegen::EmitOptions o;
    o.symbol = "softmax_model";
    o.triple = triple;
    const std::vector<uint8_t> ir = compiler::codegen::emit(m, compiler::codegen::Emit::kIr, o);
    EXPECT_NE(std::string(ir.begin(), ir.end()).find("define i32 @softmax_model_run"), std::string::npos);
    const std::vector<uint8_t> obj = compiler::codegen::emit(m, compiler::codegen::Emit::kObject, o);
    ASSERT_GT(obj.size(), 4u);
    EXPECT_EQ(std::string(obj.begin(), obj.begin() + 4), "\x7f" "ELF");
  }
}

}  // namespace
