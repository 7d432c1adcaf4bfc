//===- ExportCInterface.cpp - pe-export-c-interface -----------------------===//
//
// The exported C interface of a compiled module (LLVM dialect, after the
// pipeline). For every public function @f (marked `pe.c_interface` with its
// buffer signature by pe-request-c-wrappers) it defines
//
//   int32_t PREFIXf(<the parameters of _mlir_ciface_f>)
//
// which checks every buffer descriptor against the declared type (static
// sizes, non-negative dynamic ones, the dense row-major layout of the
// identity-layout boundary, offset 0, a data pointer for non-empty buffers),
// then runs _mlir_ciface_f through pe_runtime_call and returns its status
// (enum pe_status, include/pe-c/Runtime.h); a function whose C interface
// returns a scalar stores it through a leading `result` pointer. It also
// defines `const char *PREFIXlast_error(void)`. Every other definition of
// the module becomes internal: two libraries compiled with different
// prefixes export disjoint names.
//
//===----------------------------------------------------------------------===//
#include "pe/CInterface/Passes.h"

#include "pe-c/Runtime.h"

#include "mlir/Dialect/LLVMIR/FunctionCallUtils.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"

namespace mlir::pe {
#define GEN_PASS_DEF_PEEXPORTCINTERFACE
#include "pe/CInterface/Passes.h.inc"
} // namespace mlir::pe

using namespace mlir;

/// [A-Za-z_][A-Za-z0-9_]*
static bool isCIdentifier(StringRef name) {
  return !name.empty() && !llvm::isDigit(name.front()) &&
         llvm::all_of(name, [](char c) { return llvm::isAlnum(c) || c == '_'; });
}

namespace {
/// Builds the exported entry of one function.
struct EntryBuilder {
  ModuleOp module;
  LLVM::LLVMFuncOp wrapper; // _mlir_ciface_f
  FunctionType signature;   // f's buffer signature
  std::string exported;

  MLIRContext *ctx() { return module.getContext(); }
  Type ptr() { return LLVM::LLVMPointerType::get(ctx()); }
  Type i64() { return IntegerType::get(ctx(), 64); }
  Type i32() { return IntegerType::get(ctx(), 32); }

  /// Whether _mlir_ciface_f returns a value (one scalar result) that the
  /// entry stores through a leading pointer.
  bool returnsValue() {
    return !isa<LLVM::LLVMVoidType>(wrapper.getFunctionType().getReturnType());
  }

  /// The wrapper parameter of buffer argument `i` of the signature.
  unsigned wrapperParameter(unsigned i) {
    unsigned results = signature.getNumResults();
    bool resultPointer =
        results > 1 || (results == 1 && isa<MemRefType>(signature.getResult(0)));
    return i + (resultPointer ? 1 : 0);
  }

  /// void body(void **frame): _mlir_ciface_f(*frame[0], ...), scalars
  /// loaded through their slots, a returned value stored through slot 0.
  LLVM::LLVMFuncOp buildBody(OpBuilder &b, Location loc) {
    auto type = LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx()), {ptr()});
    auto body = LLVM::LLVMFuncOp::create(b, loc, "__pe_body_" + exported, type,
                                         LLVM::Linkage::Internal);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(body.addEntryBlock(b));
    Value frame = body.getArgument(0);
    auto slot = [&](unsigned i) -> Value {
      Value at = LLVM::GEPOp::create(b, loc, ptr(), ptr(), frame,
                                     ArrayRef<LLVM::GEPArg>{int32_t(i)});
      return LLVM::LoadOp::create(b, loc, ptr(), at);
    };
    unsigned first = returnsValue() ? 1 : 0;
    SmallVector<Value> args;
    for (auto [i, t] : llvm::enumerate(wrapper.getFunctionType().getParams())) {
      Value p = slot(i + first);
      args.push_back(isa<LLVM::LLVMPointerType>(t) ? p
                                                   : LLVM::LoadOp::create(b, loc, t, p));
    }
    auto call = LLVM::CallOp::create(b, loc, wrapper, args);
    // The caller's `result` need not be aligned as the type (a vector) asks.
    if (returnsValue())
      LLVM::StoreOp::create(b, loc, call.getResult(), slot(0), /*alignment=*/1);
    LLVM::ReturnOp::create(b, loc, ValueRange{});
    return body;
  }

  /// Adds the checks of the descriptor `desc` of buffer argument `operand`:
  /// each failing one branches to `fail` with (operand, kind, dim, got,
  /// expected). Leaves `b` in the block after the checks.
  void checkDescriptor(OpBuilder &b, Location loc, Value desc, MemRefType type,
                       int64_t operand, Block *fail) {
    const int64_t rank = type.getRank();
    auto constant = [&](int64_t v) -> Value {
      return LLVM::ConstantOp::create(b, loc, i64(), v);
    };
    Type array = LLVM::LLVMArrayType::get(i64(), rank);
    SmallVector<Type> fields = {ptr(), ptr(), i64()};
    if (rank > 0)
      fields.append({array, array});
    Type descType = LLVM::LLVMStructType::getLiteral(ctx(), fields);
    auto field = [&](ArrayRef<LLVM::GEPArg> at) -> Value {
      Value p = LLVM::GEPOp::create(b, loc, ptr(), descType, desc, at);
      return LLVM::LoadOp::create(b, loc, i64(), p);
    };
    auto check = [&](Value bad, int64_t kind, Value dim, Value got, Value want) {
      Block *next = b.getInsertionBlock()->splitBlock(b.getInsertionPoint());
      b.setInsertionPointToEnd(next->getPrevNode());
      LLVM::CondBrOp::create(b, loc, bad, fail,
                             ValueRange{constant(operand), constant(kind), dim, got, want},
                             next, ValueRange{});
      b.setInsertionPointToStart(next);
    };
    auto cmp = [&](LLVM::ICmpPredicate p, Value x, Value y) -> Value {
      return LLVM::ICmpOp::create(b, loc, p, x, y);
    };
    Value zero = constant(0), one = constant(1);
    SmallVector<Value> sizes;
    for (int64_t d = 0; d < rank; ++d) {
      Value size = field({0, 3, int32_t(d)});
      sizes.push_back(size);
      if (type.isDynamicDim(d))
        check(cmp(LLVM::ICmpPredicate::slt, size, zero), PE_ARGUMENT_NEGATIVE,
              constant(d), size, zero);
      else if (Value want = constant(type.getDimSize(d)))
        check(cmp(LLVM::ICmpPredicate::ne, size, want), PE_ARGUMENT_SIZE,
              constant(d), size, want);
    }
    Value elements = one;
    for (Value size : sizes)
      elements = LLVM::MulOp::create(b, loc, elements, size);
    Value nonEmpty = cmp(LLVM::ICmpPredicate::sgt, elements, zero);
    // Dense row-major: stride[d] = prod(size[d+1:]) wherever size[d] > 1 (in
    // a non-empty buffer; an empty one is never read), offset 0 - what the
    // identity layout of the boundary assumes. Other layouts are read
    // through their descriptors.
    Value expected = one;
    for (int64_t d = type.getLayout().isIdentity() ? rank - 1 : -1; d >= 0; --d) {
      Value stride = field({0, 4, int32_t(d)});
      Value used = LLVM::AndOp::create(
          b, loc, nonEmpty, cmp(LLVM::ICmpPredicate::sgt, sizes[d], one));
      Value differs = cmp(LLVM::ICmpPredicate::ne, stride, expected);
      check(LLVM::AndOp::create(b, loc, used, differs), PE_ARGUMENT_STRIDE,
            constant(d), stride, expected);
      expected = LLVM::MulOp::create(b, loc, expected, sizes[d]);
    }
    if (type.getLayout().isIdentity()) {
      Value offset = field({0, 2});
      check(cmp(LLVM::ICmpPredicate::ne, offset, zero), PE_ARGUMENT_OFFSET, zero,
            offset, zero);
    }
    Value aligned = LLVM::LoadOp::create(
        b, loc, ptr(), LLVM::GEPOp::create(b, loc, ptr(), descType, desc,
                                           ArrayRef<LLVM::GEPArg>{0, 1}));
    Value address = LLVM::PtrToIntOp::create(b, loc, i64(), aligned);
    Value isNull = cmp(LLVM::ICmpPredicate::eq, address, zero);
    check(LLVM::AndOp::create(b, loc, isNull, nonEmpty), PE_ARGUMENT_NULL, zero,
          address, one);
  }

  /// int32_t PREFIXf(...): checks, then pe_runtime_call(body, frame).
  void build(OpBuilder &b, LLVM::LLVMFuncOp call, LLVM::LLVMFuncOp argumentError) {
    Location loc = wrapper.getLoc();
    LLVM::LLVMFuncOp body = buildBody(b, loc);
    SmallVector<Type> params;
    if (returnsValue())
      params.push_back(ptr());
    llvm::append_range(params, wrapper.getFunctionType().getParams());
    auto entry = LLVM::LLVMFuncOp::create(b, loc, exported,
                                          LLVM::LLVMFunctionType::get(i32(), params));
    OpBuilder::InsertionGuard guard(b);
    Block *start = entry.addEntryBlock(b);
    Block *fail = b.createBlock(&entry.getBody(), entry.getBody().end(),
                                {i64(), i64(), i64(), i64(), i64()},
                                SmallVector<Location>(5, loc));
    b.setInsertionPointToStart(start);
    unsigned first = returnsValue() ? 1 : 0;
    for (auto [i, t] : llvm::enumerate(signature.getInputs()))
      if (auto memref = dyn_cast<MemRefType>(t))
        checkDescriptor(b, loc, entry.getArgument(first + wrapperParameter(i)), memref,
                        int64_t(i), fail);
    // The frame: one pointer per parameter (scalars through a slot).
    Value count = LLVM::ConstantOp::create(b, loc, i64(), std::max<int64_t>(1, params.size()));
    Value frame = LLVM::AllocaOp::create(b, loc, ptr(), ptr(), count);
    for (auto [i, t] : llvm::enumerate(params)) {
      Value value = entry.getArgument(i);
      if (!isa<LLVM::LLVMPointerType>(t)) {
        Value one = LLVM::ConstantOp::create(b, loc, i64(), 1);
        Value cell = LLVM::AllocaOp::create(b, loc, ptr(), t, one);
        LLVM::StoreOp::create(b, loc, value, cell);
        value = cell;
      }
      Value at = LLVM::GEPOp::create(b, loc, ptr(), ptr(), frame,
                                     ArrayRef<LLVM::GEPArg>{int32_t(i)});
      LLVM::StoreOp::create(b, loc, value, at);
    }
    Value bodyAddress = LLVM::AddressOfOp::create(b, loc, body);
    auto status = LLVM::CallOp::create(b, loc, call, ValueRange{bodyAddress, frame});
    LLVM::ReturnOp::create(b, loc, status.getResult());

    b.setInsertionPointToStart(fail);
    Value name = LLVM::createGlobalString(loc, b, "__pe_name_" + exported,
                                          StringRef(exported.c_str(), exported.size() + 1),
                                          LLVM::Linkage::Internal);
    SmallVector<Value> args = {name};
    llvm::append_range(args, fail->getArguments());
    auto code = LLVM::CallOp::create(b, loc, argumentError, args);
    LLVM::ReturnOp::create(b, loc, code.getResult());
  }
};

struct ExportCInterfacePass
    : pe::impl::PEExportCInterfaceBase<ExportCInterfacePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (!isCIdentifier(prefix)) {
      module.emitError() << "pe-export-c-interface: the prefix '" << prefix
                         << "' is not a C identifier";
      return signalPassFailure();
    }
    SymbolTable symbols(module);
    SmallVector<std::pair<LLVM::LLVMFuncOp, LLVM::LLVMFuncOp>> exported;
    for (auto fn : module.getOps<LLVM::LLVMFuncOp>()) {
      auto signature = fn->getAttrOfType<TypeAttr>(pe::kCInterfaceAttr);
      if (!signature || fn.isExternal() || fn.getSymName().starts_with("_mlir_ciface_"))
        continue;
      if (!isCIdentifier(fn.getSymName())) {
        fn.emitError() << "the public function @\"" << fn.getSymName()
                       << "\" has no C name (letters, digits and '_', not starting "
                          "with a digit): rename it or make it private";
        return signalPassFailure();
      }
      auto wrapper =
          symbols.lookup<LLVM::LLVMFuncOp>(("_mlir_ciface_" + fn.getSymName()).str());
      if (!wrapper) {
        fn.emitError() << "pe-export-c-interface: @" << fn.getSymName()
                       << " has no C interface wrapper (run pe-request-c-wrappers "
                          "before the conversion to LLVM)";
        return signalPassFailure();
      }
      exported.emplace_back(fn, wrapper);
    }

    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    Type ptr = LLVM::LLVMPointerType::get(&getContext());
    Type i32 = b.getI32Type(), i64 = b.getI64Type();
    auto declare = [&](StringRef name, ArrayRef<Type> params, Type result) {
      return LLVM::lookupOrCreateFn(b, module, name, params, result);
    };
    FailureOr<LLVM::LLVMFuncOp> call = declare("pe_runtime_call", {ptr, ptr}, i32);
    FailureOr<LLVM::LLVMFuncOp> argumentError = declare(
        "pe_runtime_argument_error", {ptr, i64, i64, i64, i64, i64}, i32);
    FailureOr<LLVM::LLVMFuncOp> lastError = declare("pe_runtime_last_error", {}, ptr);
    if (failed(call) || failed(argumentError) || failed(lastError))
      return signalPassFailure();

    llvm::StringSet<> names;
    auto claim = [&](Operation *at, const std::string &name) {
      if (symbols.lookup(name) || !names.insert(name).second) {
        at->emitError() << "pe-export-c-interface: the exported name '" << name
                        << "' is already a symbol of the module: choose another prefix";
        return false;
      }
      return true;
    };
    std::string lastErrorName = prefix + "last_error";
    if (!claim(module, lastErrorName))
      return signalPassFailure();
    for (auto [fn, wrapper] : exported) {
      auto signature = fn->getAttrOfType<TypeAttr>(pe::kCInterfaceAttr);
      EntryBuilder entry{module, wrapper, cast<FunctionType>(signature.getValue()),
                         prefix + fn.getSymName().str()};
      if (!claim(fn, entry.exported))
        return signalPassFailure();
      entry.build(b, *call, *argumentError);
    }
    // Every other definition stays inside the library.
    for (Operation &op : *module.getBody()) {
      if (auto fn = dyn_cast<LLVM::LLVMFuncOp>(op)) {
        if (!fn.isExternal() && !names.contains(fn.getSymName()))
          fn.setLinkage(LLVM::Linkage::Internal);
      } else if (auto global = dyn_cast<LLVM::GlobalOp>(op)) {
        bool defined = global.getValue() || !global.getInitializerRegion().empty();
        if (defined && global.getLinkage() == LLVM::Linkage::External)
          global.setLinkage(LLVM::Linkage::Internal);
      }
    }
    // const char *PREFIXlast_error(void)
    auto last = LLVM::LLVMFuncOp::create(b, module.getLoc(), lastErrorName,
                                         LLVM::LLVMFunctionType::get(ptr, {}));
    b.setInsertionPointToStart(last.addEntryBlock(b));
    auto message = LLVM::CallOp::create(b, module.getLoc(), *lastError, ValueRange{});
    LLVM::ReturnOp::create(b, module.getLoc(), message.getResult());
  }
};
} // namespace
