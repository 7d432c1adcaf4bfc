//===- ExpandSharedKey.cpp - pe-expand-shared-key -------------------------===//
//
// pe.attention's shared key block (shared_key) written into every key head,
// for the lowerings that read each key head from one tensor.
//
//===----------------------------------------------------------------------===//
#include "pe/Dialect/PE/Transforms/Passes.h"
#include "pe/Dialect/PE/Utils/OperandChecks.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::pe {
#define GEN_PASS_DEF_PEEXPANDSHAREDKEY
#include "pe/Dialect/PE/Transforms/Passes.h.inc"
} // namespace mlir::pe

using namespace mlir;
using namespace mlir::pe;

namespace {
struct ExpandSharedKeyPass : pe::impl::PEExpandSharedKeyBase<ExpandSharedKeyPass> {
  void runOnOperation() override { expandSharedKeys(getOperation()); }
};
} // namespace
