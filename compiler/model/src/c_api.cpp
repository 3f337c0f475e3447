// The C API over CompiledModel, ModelRunner and a Session owned by each opened model.
#include "tessera/c/model.h"

#include <cstring>
#include <memory>
#include <string>

#include "tessera/compiler/model/run.h"
#include "tessera/runtime/session.h"
#include "tessera/support/error.h"

using tessera::compiler::ir::DType;
using tessera::compiler::ir::Tensor;

struct TesseraModel {
  tessera::compiler::model::CompiledModel model;
  std::unique_ptr<tessera::runtime::Session> session;
  std::unique_ptr<tessera::compiler::model::ModelRunner> runner;
  std::map<std::string, Tensor> inputs;
  tessera::compiler::model::ModelRunResult last;
  std::string error;
};

namespace {

TesseraDType toC(DType t) {
  switch (t) {
    case DType::kFloat32: return TESSERA_FLOAT32;
    case DType::kUInt8: return TESSERA_UINT8;
    case DType::kInt8: return TESSERA_INT8;
    case DType::kInt32: return TESSERA_INT32;
    case DType::kInt64: return TESSERA_INT64;
    case DType::kBool: return TESSERA_BOOL;
  }
  return TESSERA_FLOAT32;
}

const Tensor* describe(const std::vector<Tensor>& list, int index) {
  return index >= 0 && size_t(index) < list.size() ? &list[size_t(index)] : nullptr;
}

int shapeOf(const Tensor* t, TesseraDType* dtype, int64_t* dims, int maxDims) {
  if (!t) return -1;
  if (dtype) *dtype = toC(t->dtype);
  for (size_t i = 0; i < t->shape.size() && int(i) < maxDims; ++i) dims[i] = t->shape[i];
  return int(t->shape.size());
}

template <typename F>
int guarded(TesseraModel* m, F&& body) {
  if (!m) return -1;
  try {
    m->error.clear();
    body();
    return 0;
  } catch (const std::exception& e) {
    m->error = e.what();
    return -1;
  }
}

}  // namespace

extern "C" {

TesseraModel* tessera_model_open(const char* path, const char* target, char* error, size_t errorSize) {
  auto fail = [&](const std::string& why) -> TesseraModel* {
    if (error && errorSize) {
      std::strncpy(error, why.c_str(), errorSize - 1);
      error[errorSize - 1] = 0;
    }
    return nullptr;
  };
  if (!path) return fail("tessera_model_open: no model path given");
  try {
    auto m = std::make_unique<TesseraModel>();
    m->model = tessera::compiler::model::CompiledModel::load(path);
    const tessera::hw::Config cfg = tessera::hw::Config::fromJson(m->model.configJson, std::string(path) + ": config");
    m->session = std::make_unique<tessera::runtime::Session>(target ? target : "fsim", cfg);
    m->runner = std::make_unique<tessera::compiler::model::ModelRunner>(m->model, *m->session);
    return m.release();
  } catch (const std::exception& e) {
    return fail(e.what());
  }
}

void tessera_model_close(TesseraModel* model) { delete model; }

int tessera_model_input_count(const TesseraModel* m) { return m ? int(m->model.inputs.size()) : -1; }
int tessera_model_output_count(const TesseraModel* m) { return m ? int(m->model.outputs.size()) : -1; }

const char* tessera_model_input_name(const TesseraModel* m, int index) {
  const Tensor* t = m ? describe(m->model.inputs, index) : nullptr;
  return t ? t->name.c_str() : nullptr;
}

const char* tessera_model_output_name(const TesseraModel* m, int index) {
  const Tensor* t = m ? describe(m->model.outputs, index) : nullptr;
  return t ? t->name.c_str() : nullptr;
}

int tessera_model_input_shape(const TesseraModel* m, int index, TesseraDType* dtype, int64_t* dims, int maxDims) {
  return shapeOf(m ? describe(m->model.inputs, index) : nullptr, dtype, dims, maxDims);
}

int tessera_model_output_shape(const TesseraModel* m, int index, TesseraDType* dtype, int64_t* dims, int maxDims) {
  return shapeOf(m ? describe(m->model.outputs, index) : nullptr, dtype, dims, maxDims);
}

int tessera_model_set_input(TesseraModel* m, const char* name, const void* data, size_t bytes) {
  return guarded(m, [&] {
    const Tensor* want = nullptr;
    for (const Tensor& t : m->model.inputs)
      if (name && t.name == name) want = &t;
    if (!want) throw tessera::Error("tessera_model_set_input", std::string("the model has no input named '") + (name ? name : "(null)") + "'");
    const size_t need = size_t(want->elements()) * tessera::compiler::ir::elementBytes(want->dtype);
    if (!data || bytes != need)
      throw tessera::Error("tessera_model_set_input", "input '" + want->name + "' (" + want->describe() + ") takes " +
                                                          std::to_string(need) + " bytes, " + std::to_string(bytes) + " given");
    Tensor t = *want;
    t.floats.clear();
    t.ints.clear();
    t.appendElements(static_cast<const uint8_t*>(data), want->elements());
    m->inputs[want->name] = std::move(t);
  });
}

int tessera_model_run(TesseraModel* m) {
  return guarded(m, [&] { m->last = m->runner->run(m->inputs); });
}

int tessera_model_get_output(TesseraModel* m, const char* name, void* data, size_t bytes) {
  return guarded(m, [&] {
    auto it = name ? m->last.outputs.find(name) : m->last.outputs.end();
    if (it == m->last.outputs.end())
      throw tessera::Error("tessera_model_get_output", std::string("no output named '") + (name ? name : "(null)") +
                                                           "' from the last run (did tessera_model_run succeed?)");
    const Tensor& t = it->second;
    const size_t need = size_t(t.elements()) * tessera::compiler::ir::elementBytes(t.dtype);
    if (!data || bytes != need)
      throw tessera::Error("tessera_model_get_output", "output '" + t.name + "' (" + t.describe() + ") is " +
                                                           std::to_string(need) + " bytes, the buffer " + std::to_string(bytes));
    const std::vector<uint8_t> bytesOut = t.elementBytes();
    std::memcpy(data, bytesOut.data(), bytesOut.size());
  });
}

uint64_t tessera_model_cycles(const TesseraModel* m) { return m ? m->last.counters.cycles : 0; }

const char* tessera_model_error(const TesseraModel* m) { return m ? m->error.c_str() : "no model"; }

}  // extern "C"
