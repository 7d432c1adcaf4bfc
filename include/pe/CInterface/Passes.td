//===- Passes.td - passes of the C interface of compiled functions ---*- tablegen -*-===//
#ifndef PE_CINTERFACE_PASSES_TD
#define PE_CINTERFACE_PASSES_TD

include "mlir/Pass/PassBase.td"

def PEReadOnlyArguments : Pass<"pe-read-only-arguments", "func::FuncOp"> {
  let summary = "Keep the tensor arguments of public functions unmodified";
  let description = [{
    Marks every tensor argument of a public function
    `bufferization.writable = false`, so that one-shot bufferization copies
    instead of updating an input in place: compiled functions keep the value
    semantics of their tensors for C callers. Arguments marked `pe.in_place`
    are the exception (`bufferization.writable = true`; pe-in-place-results).
  }];
}

def PEInPlaceResults : Pass<"pe-in-place-results", "ModuleOp"> {
  let summary = "Drop the results of public functions that update a pe.in_place argument";
  let description = [{
    After one-shot bufferization. A tensor argument marked `pe.in_place` (a
    KV cache) is writable; the function returns its new value, which must
    then be the argument's own buffer. That result is dropped (the caller's
    buffer already holds it) and the function gets `pe.in_place_arguments`,
    the indices of those arguments. An in-place argument whose new value is
    not returned, or not computed in its buffer (its old value is read after
    the update, so bufferization had to copy), is an error naming it.
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

def PEDestinationEntries : Pass<"pe-destination-entries", "ModuleOp"> {
  let summary = "Add a destination-passing entry @f_into for every public function @f";
  let description = [{
    After bufferization and deallocation: @f_into takes one output buffer per
    buffer result of @f, after @f's arguments (attribute `pe.outputs`: how
    many), and returns only @f's other results. A result that @f allocates
    is computed in the output buffer itself when that buffer is aligned as
    the allocation asks (the kernels' 64-byte outputs), else computed apart
    and copied; any other result is copied. Dynamic sizes of an output that
    differ from the result's stop with PE_CHECK_DESTINATION_SHAPE.

    Both entries call one private @f_shared (the body, taking the outputs
    and an i1 `into` after the arguments): @f with placeholder outputs and
    false, @f_into with its outputs and true. The module holds each body
    once.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
}

def PERequestCWrappers : Pass<"pe-request-c-wrappers", "func::FuncOp"> {
  let summary = "Request C interface wrappers for public functions and declarations";
  let description = [{
    Sets `llvm.emit_c_interface` on every public `func.func` (the entry
    points, `_mlir_ciface_NAME`) and every external declaration (so calls to
    the runtime go to its `_mlir_ciface_` names), but not on private
    definitions such as the shared `pe_attention_kernel` functions, which
    stay internal to the module. Public definitions also get `pe.c_interface`,
    their buffer signature, which pe-export-c-interface reads after the
    conversion to LLVM.
  }];
}

def PEExportCInterface : Pass<"pe-export-c-interface", "ModuleOp"> {
  let summary = "Export checked, status-returning C entries PREFIXf for the public functions";
  let description = [{
    On the LLVM dialect after a pipeline. For every function that
    pe-request-c-wrappers marked `pe.c_interface`, defines
    `int32_t PREFIXf(...)` with the parameters of `_mlir_ciface_f`: it checks
    every buffer descriptor against the declared type (static sizes,
    non-negative dynamic sizes, dense row-major strides, offset 0, a data
    pointer for non-empty buffers; PE_ERROR_ARGUMENT), then runs the function
    through `pe_runtime_call`, so that a run-time check failing inside
    returns its status instead of ending the process. Also defines
    `const char *PREFIXlast_error(void)`; every other definition becomes
    internal.
  }];
  let options = [
    Option<"prefix", "prefix", "std::string", /*default=*/"\"pe_\"",
           "Prefix of every exported name (a C identifier)">,
  ];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

#endif // PE_CINTERFACE_PASSES_TD
