//===- Passes.td - code generation passes of pe-mlir --------*- tablegen -*-===//
#ifndef PE_TRANSFORMS_PASSES_TD
#define PE_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def PETileAndVectorize : Pass<"pe-tile-and-vectorize", "func::FuncOp"> {
  let summary = "Tile linalg ops on tensors to vector-width rows and vectorize them";
  let description = [{
    Every linalg op is tiled with scf.for loops so that each tile covers
    `vector-width` elements of its innermost loop and one element of every
    other loop, then vectorized (masked where the innermost extent is dynamic
    or not a multiple of the width). Unit dimensions are cast away so that the
    innermost computation is on 1-D vectors, `vector<16xf32>` for f32 with
    the default width: one AVX-512 register.

    Ops that fail to vectorize stay tiled and are lowered to scalar loops
    later; the pass never fails on them.
  }];
  let options = [
    Option<"vectorWidth", "vector-width", "int64_t", /*default=*/"16",
           "Elements per vector in the innermost loop (16 f32 = 512 bits)">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect", "::mlir::vector::VectorDialect",
  ];
}

def PEDistributeOverThreads
    : Pass<"pe-distribute-over-threads", "func::FuncOp"> {
  let summary = "Split one parallel loop of every linalg op over threads";
  let description = [{
    Tiles each linalg op on tensors along one parallel loop into `threads`
    parts with an `scf.forall` (later an OpenMP parallel loop): the first
    parallel loop whose static extent is at least `threads` (heads, for
    attention and RoPE), else the first dynamic one (sequence). Reductions
    are never split, so results are bit-identical to one thread.
    `threads <= 1` leaves the IR unchanged.
  }];
  let options = [
    Option<"threads", "threads", "int64_t", /*default=*/"1",
           "Number of parts (threads)">,
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect", "::mlir::tensor::TensorDialect"];
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

def PEReadOnlyArguments : Pass<"pe-read-only-arguments", "func::FuncOp"> {
  let summary = "Keep the tensor arguments of public functions unmodified";
  let description = [{
    Marks every tensor argument of a public function
    `bufferization.writable = false`, so that one-shot bufferization copies
    instead of updating an input in place: compiled functions keep the value
    semantics of their tensors for C callers.
  }];
}

def PEDistinctResults : Pass<"pe-distinct-results", "func::FuncOp"> {
  let summary = "Give every tensor result of a public function a buffer of its own";
  let description = [{
    A public function that returns one tensor value more than once would,
    after bufferization, return one buffer in several results, and a C
    caller that frees every result would free it twice. A result whose buffer
    an earlier result already holds (the same value, or a cast, reshape or
    slice of it) becomes a copy (`bufferization.alloc_tensor() copy(...)`),
    so every result owns its buffer. (Returned arguments and constants are already
    copied by the buffer deallocation pipeline.) Private functions keep
    their results.
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect"];
}

def PESetLLVMTarget : Pass<"pe-set-llvm-target", "ModuleOp"> {
  let summary = "Set the target CPU and features of every LLVM function";
  let description = [{
    Writes `target_cpu` and `target_features` on every `llvm.func`, so that
    LLVM IR translated from the module (and `llc` on it) generates code for
    that CPU, e.g. `cpu=sapphirerapids` or `features=+avx512f,+avx512bf16`.
    Empty options leave the functions as they are.
  }];
  let options = [
    Option<"cpu", "cpu", "std::string", /*default=*/"\"\"",
           "Target CPU (an LLVM CPU name)">,
    Option<"features", "features", "std::string", /*default=*/"\"\"",
           "Target features, e.g. +avx512f,+avx512bf16">,
  ];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def PERequestCWrappers : Pass<"pe-request-c-wrappers", "func::FuncOp"> {
  let summary = "Request C interface wrappers for public functions and declarations";
  let description = [{
    Sets `llvm.emit_c_interface` on every public `func.func` (the entry
    points, `_mlir_ciface_NAME`) and every external declaration (so calls to
    the runtime go to its `_mlir_ciface_` names), but not on private
    definitions such as the shared `pe_attention_kernel` functions, which
    stay internal to the module.
  }];
}

#endif // PE_TRANSFORMS_PASSES_TD
