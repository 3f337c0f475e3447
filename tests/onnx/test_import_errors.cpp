// The importer's bad input: truncated, random, empty and missing files, opsets out of range, dynamic shapes, unsupported operators, inconsistent initializers.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cstdio>
#include <fstream>
#include <random>

#include "tessera/compiler/graph/compile.h"
#include "tessera/compiler/host/executor.h"
#include "tessera/compiler/onnx/import.h"
#include "tessera/hw/config.h"
#include "tessera/support/error.h"

namespace {

std::string tempPath(const std::string& name) { return ::testing::TempDir() + "/" + name; }

void writeBytes(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << bytes;
}

// A one-node model: y = Relu(x) (or another op type), x float [1, 4] unless `dynamic`.
onnx::ModelProto model(int64_t opset, const std::string& op = "Relu", bool dynamic = false) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* imp = m.add_opset_import();
  imp->set_domain("");
  imp->set_version(opset);
  auto* g = m.mutable_graph();
  g->set_name("tiny");
  auto* x = g->add_input();
  x->set_name("x");
  auto* tt = x->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  auto* d0 = tt->mutable_shape()->add_dim();
  if (dynamic) d0->set_dim_param("batch");
  else d0->set_dim_value(1);
  tt->mutable_shape()->add_dim()->set_dim_value(4);
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name("the_node");
  n->add_input("x");
  n->add_output("y");
  auto* y = g->add_output();
  y->set_name("y");
  y->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  return m;
}

std::string expectError(const std::string& path) {
  try {
    auto g = tessera::compiler::onnx::importOnnx(path);
    tessera::compiler::graph::compile(tessera::hw::Config::load("default"), g);
  } catch (const tessera::Error& e) {
    return e.what();
  }
  ADD_FAILURE() << path << " compiled";
  return "";
}

TEST(OnnxImport, ReadsAValidModel) {
  const std::string p = tempPath("valid.onnx");
  writeBytes(p, model(13).SerializeAsString());
  const auto g = tessera::compiler::onnx::importOnnx(p);
  EXPECT_EQ(g.opset, 13);
  ASSERT_EQ(g.inputs.size(), 1u);
  EXPECT_EQ(g.tensor("x").shape, (std::vector<int64_t>{1, 4}));
}

TEST(OnnxImport, TruncatedRandomEmptyAndMissingFilesAreNamed) {
  const std::string whole = model(13).SerializeAsString();
  const std::string truncated = tempPath("truncated.onnx");
  writeBytes(truncated, whole.substr(0, whole.size() / 2));
  EXPECT_NE(expectError(truncated).find("truncated.onnx"), std::string::npos);
  std::mt19937 rng(1);
  std::string noise(4096, '\0');
  for (char& c : noise) c = char(rng());
  const std::string random = tempPath("random.onnx");
  writeBytes(random, noise);
  EXPECT_NE(expectError(random).find("random.onnx"), std::string::npos);
  const std::string empty = tempPath("empty.onnx");
  writeBytes(empty, "");
  EXPECT_NE(expectError(empty).find("empty"), std::string::npos);
  EXPECT_NE(expectError(tempPath("missing.onnx")).find("missing.onnx"), std::string::npos);
}

TEST(OnnxImport, OpsetsOutsideElevenToSeventeenAreRefused) {
  for (int64_t opset : {10, 18}) {
    const std::string p = tempPath("opset" + std::to_string(opset) + ".onnx");
    // Softmax changed in opset 11, so an opset-10 file cannot be read as opset 11.
    writeBytes(p, model(opset, "Softmax").SerializeAsString());
    const std::string e = expectError(p);
    EXPECT_NE(e.find("opset " + std::to_string(opset)), std::string::npos) << e;
  }
}

TEST(OnnxImport, DynamicInputShapesNameTheTensorAndDimension) {
  const std::string p = tempPath("dynamic.onnx");
  writeBytes(p, model(13, "Relu", true).SerializeAsString());
  const std::string e = expectError(p);
  EXPECT_NE(e.find("input 'x'"), std::string::npos) << e;
  EXPECT_NE(e.find("dimension 0"), std::string::npos) << e;
  EXPECT_NE(e.find("batch"), std::string::npos) << e;
}

TEST(OnnxImport, MissingInputShapesNameTheTensor) {
  onnx::ModelProto m = model(13);
  m.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  const std::string p = tempPath("noshape.onnx");
  writeBytes(p, m.SerializeAsString());
  const std::string e = expectError(p);
  EXPECT_NE(e.find("input 'x'"), std::string::npos) << e;
  EXPECT_NE(e.find("no shape"), std::string::npos) << e;
}

// Also a detector's NMS inside the graph and other outputs whose size depends on the values.
TEST(OnnxImport, UnsupportedOperatorsNameTheNodeOpAndOpset) {
  for (const std::string op : {"Sin", "NonMaxSuppression", "NonZero"}) {
    const std::string p = tempPath(op + ".onnx");
    writeBytes(p, model(13, op).SerializeAsString());
    const std::string e = expectError(p);
    EXPECT_NE(e.find("the_node"), std::string::npos) << e;
    EXPECT_NE(e.find(op + " 'the_node' (opset 13)"), std::string::npos) << e;
  }
}

// Concat's bad attributes and shapes: each names the node and what is wrong, at compile time.
TEST(OnnxImport, ConcatShapeAndAxisErrorsNameTheNode) {
  auto concat = [](int64_t axis, bool withAxis, int64_t otherRows, int64_t otherCols) {
    onnx::ModelProto m = model(13, "Concat");
    auto* g = m.mutable_graph();
    auto* w = g->add_initializer();
    w->set_name("w");
    w->set_data_type(onnx::TensorProto::FLOAT);
    w->add_dims(otherRows);
    w->add_dims(otherCols);
    for (int64_t i = 0; i < otherRows * otherCols; ++i) w->add_float_data(float(i));
    auto* n = g->mutable_node(0);
    n->add_input("w");
    if (withAxis) {
      auto* a = n->add_attribute();
      a->set_name("axis");
      a->set_type(onnx::AttributeProto::INT);
      a->set_i(axis);
    }
    return m.SerializeAsString();
  };
  const std::string p = tempPath("concat.onnx");
  writeBytes(p, concat(0, true, 1, 5));  // [1,4] and [1,5] along axis 0
  std::string e = expectError(p);
  EXPECT_NE(e.find("the_node"), std::string::npos) << e;
  EXPECT_NE(e.find("outside axis 0"), std::string::npos) << e;
  writeBytes(p, concat(2, true, 1, 4));
  e = expectError(p);
  EXPECT_NE(e.find("axis 2 is out of range"), std::string::npos) << e;
  writeBytes(p, concat(0, false, 1, 4));
  e = expectError(p);
  EXPECT_NE(e.find("needs its axis attribute"), std::string::npos) << e;
}

// Slice's bad starts, ends, axes and steps name the node and what is wrong.
TEST(OnnxImport, SliceParameterErrorsNameTheNode) {
  auto slice = [](std::vector<std::vector<int64_t>> params) {
    onnx::ModelProto m = model(13, "Slice");
    auto* g = m.mutable_graph();
    const char* names[] = {"starts", "ends", "axes", "steps"};
    for (size_t i = 0; i < params.size(); ++i) {
      auto* t = g->add_initializer();
      t->set_name(names[i]);
      t->set_data_type(onnx::TensorProto::INT64);
      t->add_dims(int64_t(params[i].size()));
      for (int64_t v : params[i]) t->add_int64_data(v);
      g->mutable_node(0)->add_input(names[i]);
    }
    return m.SerializeAsString();
  };
  const std::string p = tempPath("slice.onnx");
  writeBytes(p, slice({{0}, {2}, {1}, {0}}));
  std::string e = expectError(p);
  EXPECT_NE(e.find("the_node"), std::string::npos) << e;
  EXPECT_NE(e.find("a step is 0"), std::string::npos) << e;
  writeBytes(p, slice({{0, 0}, {2}}));
  e = expectError(p);
  EXPECT_NE(e.find("differ in length"), std::string::npos) << e;
  writeBytes(p, slice({{0}, {2}, {5}}));
  e = expectError(p);
  EXPECT_NE(e.find("axis 5 is out of range"), std::string::npos) << e;
}

// Resize and Upsample: absurd scales or sizes, a cubic mode, and scales that are not constants
// are errors naming the node, never an allocation of the absurd size.
TEST(OnnxImport, ResizeParameterErrorsNameTheNode) {
  auto resize = [](const std::string& op, std::vector<float> scales, std::vector<int64_t> sizes, const std::string& mode,
                   bool scalesAsInput) {
    onnx::ModelProto m = model(13, op);
    auto* g = m.mutable_graph();
    auto* node = g->mutable_node(0);
    if (!mode.empty()) {
      auto* a = node->add_attribute();
      a->set_name("mode");
      a->set_type(onnx::AttributeProto::STRING);
      a->set_s(mode);
    }
    if (op == "Resize") node->add_input("");  // roi
    if (!scales.empty()) {
      auto* t = g->add_initializer();
      t->set_name("scales");
      t->set_data_type(onnx::TensorProto::FLOAT);
      t->add_dims(int64_t(scales.size()));
      for (float v : scales) t->add_float_data(v);
      if (!scalesAsInput) g->mutable_initializer()->RemoveLast();
      node->add_input("scales");
    } else {
      node->add_input("");
    }
    if (!sizes.empty()) {
      auto* t = g->add_initializer();
      t->set_name("sizes");
      t->set_data_type(onnx::TensorProto::INT64);
      t->add_dims(int64_t(sizes.size()));
      for (int64_t v : sizes) t->add_int64_data(v);
      node->add_input("sizes");
    }
    return m.SerializeAsString();
  };
  const std::string p = tempPath("resize.onnx");
  writeBytes(p, resize("Resize", {1.0f, 3e9f}, {}, "nearest", true));
  std::string e = expectError(p);
  EXPECT_NE(e.find("the_node"), std::string::npos) << e;
  EXPECT_NE(e.find("implausibly large"), std::string::npos) << e;
  writeBytes(p, resize("Resize", {}, {40000, 100000}, "nearest", true));
  e = expectError(p);
  EXPECT_NE(e.find("implausibly large"), std::string::npos) << e;
  writeBytes(p, resize("Resize", {1.0f, 2.0f}, {}, "cubic", true));
  e = expectError(p);
  EXPECT_NE(e.find("mode 'cubic' is not supported"), std::string::npos) << e;
  writeBytes(p, resize("Resize", {1.0f, 2.0f}, {1, 8}, "linear", true));
  e = expectError(p);
  EXPECT_NE(e.find("exactly one of scales"), std::string::npos) << e;
  writeBytes(p, resize("Resize", {1.0f, -2.0f}, {}, "linear", true));
  e = expectError(p);
  EXPECT_NE(e.find("is not positive"), std::string::npos) << e;
  writeBytes(p, resize("Upsample", {1.0f, 2.0f}, {}, "", false));  // scales named but never defined
  e = expectError(p);
  EXPECT_NE(e.find("scales"), std::string::npos) << e;
}

// Constant computations that would create more than Tessera's budget of elements (a shape gone
// wrong) are refused before anything is allocated, naming the node; a large one within it is not.
TEST(OnnxImport, RunawayConstantComputationsAreNamed) {
  auto constantOfShape = [](std::vector<int64_t> shape) {
    onnx::ModelProto m = model(13, "Add");
    auto* g = m.mutable_graph();
    auto* t = g->add_initializer();
    t->set_name("shape");
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(int64_t(shape.size()));
    for (int64_t v : shape) t->add_int64_data(v);
    auto* c = g->add_node();
    c->set_op_type("ConstantOfShape");
    c->set_name("the_fill");
    c->add_input("shape");
    c->add_output("fill");
    // Add(x, ReduceMax(fill)) keeps the fill in the graph.
    auto* r = g->add_node();
    r->set_op_type("ReduceMax");
    r->set_name("the_max");
    r->add_input("fill");
    r->add_output("fill_max");
    auto* a = r->add_attribute();
    a->set_name("keepdims");
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(0);
    g->mutable_node(0)->add_input("fill_max");
    // The fill and its reduction come before the Add.
    g->mutable_node()->SwapElements(0, 1);
    g->mutable_node()->SwapElements(1, 2);
    return m.SerializeAsString();
  };
  const std::string p = tempPath("fill.onnx");
  writeBytes(p, constantOfShape({1, 65, 1024, 1024}));  // 68M elements: past the budget of 2^26
  std::string e = expectError(p);
  EXPECT_NE(e.find("the_fill"), std::string::npos) << e;
  EXPECT_NE(e.find("ConstantOfShape"), std::string::npos) << e;
  EXPECT_NE(e.find("constant computations"), std::string::npos) << e;
  writeBytes(p, constantOfShape({1, 4, 1024, 1024}));  // 4M elements: within it
  auto g = tessera::compiler::onnx::importOnnx(p);
  EXPECT_NO_THROW(tessera::compiler::host::inferShapes(g));
}

TEST(OnnxImport, InitializerSizeMismatchesAreNamed) {
  onnx::ModelProto m = model(13, "Add");
  auto* init = m.mutable_graph()->add_initializer();
  init->set_name("b");
  init->set_data_type(onnx::TensorProto::FLOAT);
  init->add_dims(4);
  init->set_raw_data(std::string(12, '\0'));  // 3 floats for 4
  m.mutable_graph()->mutable_node(0)->add_input("b");
  const std::string p = tempPath("badinit.onnx");
  writeBytes(p, m.SerializeAsString());
  const std::string e = expectError(p);
  EXPECT_NE(e.find("tensor 'b'"), std::string::npos) << e;
  EXPECT_NE(e.find("12 bytes"), std::string::npos) << e;
}

TEST(OnnxImport, UndefinedTensorsAreNamed) {
  onnx::ModelProto m = model(13, "Add");
  m.mutable_graph()->mutable_node(0)->add_input("ghost");
  const std::string p = tempPath("ghost.onnx");
  writeBytes(p, m.SerializeAsString());
  const std::string e = expectError(p);
  EXPECT_NE(e.find("ghost"), std::string::npos) << e;
}

}  // namespace
