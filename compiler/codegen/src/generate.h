// Internal to the code generator: a compiled model's host side as an LLVM module, shared by the object writer and the JIT.
#pragma once

#include <memory>
#include <string>

#include <llvm/IR/DataLayout.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include "tessera/compiler/model/compiled_model.h"

namespace tessera::compiler::codegen::detail {

// The module defining <symbol>_run and <symbol>_model for `triple` with `layout`; verified.
std::unique_ptr<llvm::Module> generateModule(const model::CompiledModel& model, const std::string& symbol, llvm::LLVMContext& context,
                                        const std::string& triple, const llvm::DataLayout& layout);

}  // namespace tessera::compiler::codegen::detail
