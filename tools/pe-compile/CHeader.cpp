//===- CHeader.cpp - the C header of compiled pe functions ----------------===//
//
// The C ABI is MLIR's C interface: a tensor is passed as a pointer to a
// strided memref descriptor { T *allocated, *aligned; int64_t offset,
// sizes[rank], strides[rank]; }, an index or integer scalar by value. Results
// come first, through a pointer: the descriptor itself for one tensor result,
// a struct of descriptors for several. Result buffers are allocated with
// malloc by the callee; the caller releases `allocated` with free() unless it
// is the `allocated` pointer of an argument (a result may alias an input).
//
//===----------------------------------------------------------------------===//
#include "CHeader.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;

/// The C spelling of an element type, and a short tag for struct names.
static std::optional<std::pair<StringRef, StringRef>> cElement(Type type) {
  if (type.isF32())
    return std::pair{"float", "f32"};
  if (type.isF64())
    return std::pair{"double", "f64"};
  if (type.isF16())
    return std::pair{"uint16_t", "f16"}; // IEEE half bits
  if (type.isBF16())
    return std::pair{"uint16_t", "bf16"}; // bfloat16 bits
  if (type.isInteger(32))
    return std::pair{"int32_t", "i32"};
  if (type.isInteger(64) || type.isIndex())
    return std::pair{"int64_t", "i64"};
  return std::nullopt;
}

/// [A-Za-z_][A-Za-z0-9_]*
static bool isCIdentifier(StringRef name) {
  return !name.empty() && !llvm::isDigit(name.front()) &&
         llvm::all_of(name, [](char c) { return llvm::isAlnum(c) || c == '_'; });
}

namespace {
struct HeaderWriter {
  llvm::raw_ostream &os;
  llvm::StringSet<> declared;
  std::string structs;

  /// The C type of a value of `type`, declaring descriptor structs on the way.
  FailureOr<std::string> cType(Type type, Location loc) {
    if (auto tensor = dyn_cast<RankedTensorType>(type)) {
      auto element = cElement(tensor.getElementType());
      if (!element)
        return emitError(loc) << "no C form for element type "
                              << tensor.getElementType();
      std::string name = ("pe_memref_" + std::to_string(tensor.getRank()) +
                          "d_" + element->second)
                             .str();
      if (declared.insert(name).second) {
        llvm::raw_string_ostream s(structs);
        s << "typedef struct {\n  " << element->first << " *allocated;\n  "
          << element->first << " *aligned;\n  int64_t offset;\n";
        if (tensor.getRank() > 0)
          s << "  int64_t sizes[" << tensor.getRank() << "];\n  int64_t strides["
            << tensor.getRank() << "];\n";
        s << "} " << name << ";\n\n";
      }
      return name;
    }
    if (auto element = cElement(type); element && !isa<FloatType>(type))
      return element->first.str();
    return emitError(loc) << "no C form for type " << type;
  }
};
} // namespace

LogicalResult pe::emitCHeader(ModuleOp module, StringRef guard, llvm::raw_ostream &os,
                              bool deviceBuffers) {
  HeaderWriter writer{os, {}, {}};
  std::string decls;
  llvm::raw_string_ostream d(decls);
  for (auto fn : module.getOps<func::FuncOp>()) {
    if (fn.isPrivate() || fn.isExternal())
      continue;
    Location loc = fn.getLoc();
    if (!isCIdentifier(fn.getSymName()))
      return emitError(loc) << "the public function @\"" << fn.getSymName()
                            << "\" has no C name (letters, digits and '_', "
                               "not starting with a digit): rename it or make "
                               "it private";
    FunctionType type = fn.getFunctionType();
    SmallVector<std::string> params;
    // Results first, through one pointer.
    if (type.getNumResults() == 1) {
      FailureOr<std::string> r = writer.cType(type.getResult(0), loc);
      if (failed(r))
        return failure();
      params.push_back(*r + " *result");
    } else if (type.getNumResults() > 1) {
      std::string resultStruct = ("pe_" + fn.getSymName() + "_results").str();
      std::string fields;
      for (auto [i, t] : llvm::enumerate(type.getResults())) {
        FailureOr<std::string> r = writer.cType(t, loc);
        if (failed(r))
          return failure();
        fields += "  " + *r + " r" + std::to_string(i) + ";\n";
      }
      d << "typedef struct {\n" << fields << "} " << resultStruct << ";\n\n";
      params.push_back(resultStruct + " *results");
    }
    for (auto [i, t] : llvm::enumerate(type.getInputs())) {
      FailureOr<std::string> a = writer.cType(t, loc);
      if (failed(a))
        return failure();
      bool byPointer = isa<RankedTensorType>(t);
      params.push_back(*a + (byPointer ? " *" : " ") + "arg" + std::to_string(i));
    }
    d << "void _mlir_ciface_" << fn.getSymName() << "(";
    llvm::interleaveComma(params, d);
    d << ");\n\n";
  }
  StringRef ownership =
      deviceBuffers
          ? " * first. Every buffer is GPU memory (device pointers); result "
            "buffers are\n"
            " * allocated by the callee on the GPU: cuMemFree() `allocated`. f16 "
            "and bf16\n"
          : " * first. Result buffers are malloc'ed by the callee: free() "
            "`allocated`\n"
            " * unless it equals the `allocated` pointer of an argument. f16 and "
            "bf16\n";
  os << "/* Generated by pe-compile: the C interface of the functions of this "
        "module.\n"
     << " * Tensors are strided memref descriptors passed by pointer; results "
        "come\n"
     << ownership << " * elements are their 16-bit patterns. */\n"
     << "#ifndef " << guard << "\n#define " << guard << "\n\n"
     << "#include <stdint.h>\n\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n"
     << writer.structs << decls
     << "#ifdef __cplusplus\n}\n#endif\n\n#endif /* " << guard << " */\n";
  return success();
}
