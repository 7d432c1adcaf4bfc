//===- Passes.td - target-independent code generation passes ---*- tablegen -*-===//
#ifndef PE_CODEGEN_COMMON_PASSES_TD
#define PE_CODEGEN_COMMON_PASSES_TD

include "mlir/Pass/PassBase.td"

def PEDecomposeAggregatedOps : Pass<"pe-decompose-aggregated-ops"> {
  let summary = "Decompose aggregated linalg ops into the ops they stand for";
  let description = [{
    Ops that implement `linalg::AggregatedOpInterface` (`linalg.softmax`,
    the Winograd transforms) are replaced by their own decomposition into
    `linalg.fill` and `linalg.generic` (for softmax: the row maximum,
    `exp(x - max)`, its row sum, the quotient), which tiling,
    vectorization and bufferization handle. Importers emit
    `linalg.softmax` for every softmax that is not raised into
    `pe.attention`; without this pass such a function would not compile.
    An op whose decomposition fails is an error, never left for a later
    conversion to trip over.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect", "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect", "::mlir::tensor::TensorDialect"];
}

def PELowerStridedCopies : Pass<"pe-lower-strided-copies", "func::FuncOp"> {
  let summary = "Copies between strided buffers as loops, not runtime calls";
  let description = [{
    A `memref.copy` whose source or target is not contiguous (a slice of a
    larger buffer, as bufferization creates for `tensor.insert_slice`) would
    become a call to MLIR's generic `memrefCopy`, which copies element by
    element through descriptors. It becomes a `linalg.copy` instead, lowered
    to loops that LLVM vectorizes. Contiguous copies stay `memref.copy`
    (a `memcpy`).
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def PEOrderConstants : Pass<"pe-order-constants", "ModuleOp"> {
  let summary = "Name and order the constant globals of bufferization by their first use";
  let description = [{
    One-shot bufferization names the memref.global of each constant tensor
    `__constant_<shape>` (`_0`, `_1`, ... on a repeated shape) in the order
    in which it visits the functions, which varies from run to run. This
    pass renames them `__constant_<n>_<shape>` by the order of their first
    `memref.get_global` in the module and moves them to its top in that
    order, so that the same input always compiles to the same output.
  }];
  let dependentDialects = ["memref::MemRefDialect"];
}

def PEFoldLoopCarriedDims : Pass<"pe-fold-loop-carried-dims", "func::FuncOp"> {
  let summary = "Sizes of loop-carried tensors as the sizes of their initial values";
  let description = [{
    Tiling leaves `tensor.dim` of `scf.for` results and iteration arguments
    (the sizes of a tensor that a loop nest fills). Such a size is the size
    of the loop's initial value whenever every iteration yields a tensor
    built from its iteration argument by ops that keep the shape
    (`tensor.insert_slice`, `vector.transfer_write`, any destination-style
    op, a nested loop that keeps it). This pass folds those sizes to the
    initial value's, together with the tensor.dim canonicalizations and
    SCF's loop canonicalization (affine.min/max of loop indices).

    Without it, one-shot bufferization's conflict analysis proves each
    `tensor.extract_slice` / `tensor.insert_slice` pair equivalent by a
    value-bounds query that walks back through every enclosing loop nest
    that produced the size (Presburger eliminations at each level): on the
    unfused reference lowering of paged attention, 1 s a function.
  }];
  let dependentDialects = ["::mlir::affine::AffineDialect", "::mlir::tensor::TensorDialect"];
}

def PEBoolVectorsAsBytes : Pass<"pe-bool-vectors-as-bytes"> {
  let summary = "Load and store i1 vectors as bytes";
  let description = [{
    On the LLVM dialect. A memref of i1 holds one byte per element: that is
    how LLVM lays out an array of i1 (constants become `[N x i1]` globals),
    how scalar `i1` loads and stores address it, and how C callers pass
    bool arrays. A `<N x i1>` vector in memory, however, is N bits: a
    vectorized read of an i1 mask or condition would read the bits of its
    first bytes instead of its elements. Every `llvm.load`,
    `llvm.intr.masked.load`, `llvm.store` and `llvm.intr.masked.store` of
    an i1 vector is rewritten to move `<N x i8>`: loads compare the bytes
    with zero, stores zero-extend. (Gathers and scatters already address
    one element per lane.)
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

#endif // PE_CODEGEN_COMMON_PASSES_TD
