//===- LibraryInterface.cpp - what a compiled library exports -------------===//
//
// The C ABI (pe-export-c-interface): a tensor is a strided memref
// descriptor { T *allocated, *aligned; int64_t offset, sizes[rank],
// strides[rank]; } passed by pointer, an index or integer scalar by value.
// Every entry returns an int32_t status (enum pe_status). Results come
// first, through one pointer: the descriptor itself for one tensor result, a
// struct of descriptors for several, the value for one scalar result.
// Result buffers are allocated with malloc by the callee; the outputs of an
// `_into` entry are the caller's.
//
//===----------------------------------------------------------------------===//
#include "LibraryInterface.h"

#include "pe/CInterface/Passes.h"
#include "pe/Codegen/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/JSON.h"

using namespace mlir;

namespace {
/// One exported entry: the function `name`, exported as `symbol`, with its
/// buffer signature; the last `outputs` arguments are written.
struct Entry {
  std::string name, symbol;
  FunctionType signature;
  int64_t outputs;
  Location loc;
  /// Arguments that the entry updates in place (pe.in_place).
  SmallVector<int64_t> inPlace = {};
};
} // namespace

static SmallVector<Entry> exportedEntries(ModuleOp module, StringRef prefix) {
  SmallVector<Entry> entries;
  for (auto fn : module.getOps<LLVM::LLVMFuncOp>()) {
    auto signature = fn->getAttrOfType<TypeAttr>(pe::kCInterfaceAttr);
    if (!signature || fn.getSymName().starts_with("_mlir_ciface_"))
      continue;
    auto outputs = fn->getAttrOfType<IntegerAttr>(pe::kOutputsAttr);
    entries.push_back({fn.getSymName().str(), (prefix + fn.getSymName()).str(),
                       cast<FunctionType>(signature.getValue()),
                       outputs ? outputs.getInt() : 0, fn.getLoc()});
    if (auto inPlace =
            fn->getAttrOfType<DenseI64ArrayAttr>(pe::kInPlaceArgumentsAttr))
      entries.back().inPlace.assign(inPlace.asArrayRef().begin(),
                                    inPlace.asArrayRef().end());
  }
  return entries;
}

/// The C spelling of an element type, and its short name (the dtype).
/// Integers narrower than 32 bits have a C form only as tensor elements (a
/// scalar argument would depend on the ABI's extension of narrow values).
static std::optional<std::pair<StringRef, StringRef>> cElement(Type valueType) {
  Type type = getElementTypeOrSelf(valueType);
  if (!isa<ShapedType>(valueType) && type.isInteger() && type.getIntOrFloatBitWidth() < 32)
    return std::nullopt;
  if (type.isF32())
    return std::pair{"float", "f32"};
  if (type.isF64())
    return std::pair{"double", "f64"};
  if (type.isF16())
    return std::pair{"uint16_t", "f16"}; // IEEE half bits
  if (type.isBF16())
    return std::pair{"uint16_t", "bf16"}; // bfloat16 bits
  if (type.isInteger(1))
    return std::pair{"bool", "i1"}; // a byte per element, 0 or 1
  if (type.isInteger(8))
    return std::pair{"int8_t", "i8"};
  if (type.isInteger(16))
    return std::pair{"int16_t", "i16"};
  if (type.isInteger(32))
    return std::pair{"int32_t", "i32"};
  if (type.isInteger(64))
    return std::pair{"int64_t", "i64"};
  if (type.isIndex())
    return std::pair{"int64_t", "index"};
  return std::nullopt;
}

namespace {
struct HeaderWriter {
  llvm::StringSet<> declared;
  std::string structs;

  /// The C type of a value of `type`, declaring descriptor structs on the way.
  FailureOr<std::string> cType(Type type, Location loc) {
    auto element = cElement(type);
    if (!element || (!isa<MemRefType>(type) && isa<ShapedType>(type)))
      return emitError(loc) << "no C form for type " << type;
    auto memref = dyn_cast<MemRefType>(type);
    if (!memref)
      return element->first.str();
    std::string name = ("pe_memref_" + std::to_string(memref.getRank()) + "d_" +
                        (element->second == "index" ? "i64" : element->second))
                           .str();
    if (declared.insert(name).second) {
      // Guarded: the headers of two libraries can share the struct.
      std::string guard = StringRef(name).upper() + "_DEFINED";
      llvm::raw_string_ostream s(structs);
      s << "#ifndef " << guard << "\n#define " << guard << "\ntypedef struct "
        << name << " {\n  " << element->first << " *allocated;\n  "
        << element->first << " *aligned;\n  int64_t offset;\n";
      if (memref.getRank() > 0)
        s << "  int64_t sizes[" << memref.getRank() << "];\n  int64_t strides["
          << memref.getRank() << "];\n";
      s << "} " << name << ";\n#endif\n\n";
    }
    return name;
  }
};
} // namespace

static constexpr char kStatusCodes[] =
    "#ifndef PE_STATUS_CODES\n#define PE_STATUS_CODES\n"
    "/* What every function returns (also in pe-c/Runtime.h). */\n"
    "enum pe_status {\n"
    "  PE_OK = 0,\n"
    "  PE_ERROR_SIZE = 1,     /* sizes known only at run time disagree */\n"
    "  PE_ERROR_POSITION = 2, /* a pe.learned position outside its table */\n"
    "  PE_ERROR_ARGUMENT = 3, /* a descriptor differs from the declared type */\n"
    "  PE_ERROR_CPU = 4,      /* the CPU or OS refused a feature (AMX) */\n"
    "  PE_ERROR_GPU = 5,      /* the CUDA driver failed or is missing */\n"
    "  PE_ERROR_SLOT = 6,     /* a KV-cache slot or page outside its cache */\n"
    "};\n#endif\n\n";

LogicalResult pe::emitCHeader(ModuleOp module, StringRef prefix, StringRef guard,
                              llvm::raw_ostream &os, bool deviceBuffers) {
  HeaderWriter writer;
  std::string decls;
  llvm::raw_string_ostream d(decls);
  for (const Entry &e : exportedEntries(module, prefix)) {
    FunctionType type = e.signature;
    SmallVector<std::string> params;
    if (type.getNumResults() == 1) {
      FailureOr<std::string> r = writer.cType(type.getResult(0), e.loc);
      if (failed(r))
        return failure();
      params.push_back(*r + " *result");
    } else if (type.getNumResults() > 1) {
      std::string resultStruct = e.symbol + "_results";
      std::string fields;
      for (auto [i, t] : llvm::enumerate(type.getResults())) {
        FailureOr<std::string> r = writer.cType(t, e.loc);
        if (failed(r))
          return failure();
        fields += "  " + *r + " r" + std::to_string(i) + ";\n";
      }
      d << "typedef struct {\n" << fields << "} " << resultStruct << ";\n\n";
      params.push_back(resultStruct + " *results");
    }
    const int64_t firstOutput = type.getNumInputs() - e.outputs;
    for (auto [i, t] : llvm::enumerate(type.getInputs())) {
      FailureOr<std::string> a = writer.cType(t, e.loc);
      if (failed(a))
        return failure();
      if (!isa<MemRefType>(t))
        params.push_back(*a + " arg" + std::to_string(i));
      else if (int64_t(i) >= firstOutput)
        params.push_back(*a + " *out" + std::to_string(i - firstOutput));
      else if (llvm::is_contained(e.inPlace, int64_t(i)))
        params.push_back(*a + " *inout" + std::to_string(i));
      else
        params.push_back("const " + *a + " *arg" + std::to_string(i));
    }
    d << "int32_t " << e.symbol << "(";
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
            "`allocated`;\n"
            " * the `_into` functions write their outputs into `out` buffers. "
            "f16 and bf16\n";
  os << "/* Generated by pe-compile: the C interface of the functions of this "
        "module.\n"
     << " * Tensors are dense row-major memref descriptors passed by pointer; "
        "results come\n"
     << ownership << " * elements are their 16-bit patterns. Every function "
        "returns PE_OK or an\n"
     << " * error status; " << prefix
     << "last_error() then describes it. */\n"
     << "#ifndef " << guard << "\n#define " << guard << "\n\n"
     << "#include <stdbool.h>\n#include <stdint.h>\n\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n"
     << kStatusCodes << writer.structs << decls << "const char *" << prefix
     << "last_error(void);\n\n"
     << "#ifdef __cplusplus\n}\n#endif\n\n#endif /* " << guard << " */\n";
  return success();
}

/// {"kind": "tensor", "dtype": "f32", "shape": [1, -1]}, a scalar, or
/// {"kind": "other", "type": "vector<16xf32>"} for a type without a C form
/// (callable from C through the entry, but not described further).
static LogicalResult writeValue(llvm::json::OStream &j, Type type, Location loc) {
  auto element = cElement(type);
  if (!element || (!isa<MemRefType>(type) && isa<ShapedType>(type))) {
    std::string spelled;
    llvm::raw_string_ostream(spelled) << type;
    j.object([&] {
      j.attribute("kind", "other");
      j.attribute("type", spelled);
    });
    return success();
  }
  j.object([&] {
    auto memref = dyn_cast<MemRefType>(type);
    j.attribute("kind", memref ? "tensor" : "scalar");
    j.attribute("dtype", element->second);
    if (memref)
      j.attributeArray("shape", [&] {
        for (int64_t size : memref.getShape())
          j.value(ShapedType::isDynamic(size) ? int64_t(-1) : size);
      });
  });
  return success();
}

LogicalResult pe::emitInterfaceJson(ModuleOp module, StringRef prefix,
                                    llvm::raw_ostream &os) {
  llvm::json::OStream j(os, 2);
  LogicalResult result = success();
  j.object([&] {
    j.attribute("prefix", prefix);
    j.attribute("last_error", (prefix + "last_error").str());
    j.attributeArray("functions", [&] {
      for (const Entry &e : exportedEntries(module, prefix)) {
        j.object([&] {
          j.attribute("name", e.name);
          j.attribute("symbol", e.symbol);
          j.attribute("outputs", e.outputs);
          j.attributeArray("in_place", [&] {
            for (int64_t i : e.inPlace)
              j.value(i);
          });
          j.attributeArray("arguments", [&] {
            for (Type t : e.signature.getInputs())
              if (failed(writeValue(j, t, e.loc)))
                result = failure();
          });
          j.attributeArray("results", [&] {
            for (Type t : e.signature.getResults())
              if (failed(writeValue(j, t, e.loc)))
                result = failure();
          });
        });
      }
    });
  });
  os << "\n";
  return result;
}
