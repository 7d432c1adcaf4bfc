//===- Passes.td - conversions out of the pe dialect --------*- tablegen -*-===//
#ifndef PE_CONVERSION_PASSES_TD
#define PE_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def PELowerToLinalg : Pass<"pe-lower-to-linalg"> {
  let summary = "Lower every pe op to linalg, tensor, arith and math on tensors";
  let description = [{
    The reference, unfused lowering. Frequencies and slopes become constants
    (double precision, rounded once); sequence-length dependent scalings
    compute theirs at run time from `max(positions) + 1`. Angles
    `p * inv_freq` are formed exactly in f64 (an FMA recovers the product's
    rounding error) and reduced modulo 2 pi with a two-part 2 pi before an f32
    cos/sin, so an f32 rotation at position 2^20 stays within 1e-6 of a
    float64 evaluation. cos/sin are computed once per (position, frequency)
    and broadcast over heads and batch rows.

    `pe.attention` becomes matmul + scale + bias/mask + softmax + matmul with
    GQA by reshaping the query heads into (Hkv, group); causal and window
    masks are computed from the query/key positions; a fully masked row
    yields 0. `pe.learned` checks its positions at run time and calls
    `pe_runtime_learned_out_of_range(position, index, rows)` (lib/Runtime)
    for the first bad one (it does not return); the gather itself never
    reads out of bounds.
    Dynamic sizes that the verifier could not compare (positions against the
    sequence, key against value, mask against scores) are checked at run time
    by calls to `pe_runtime_size_mismatch(check, got, expected)`, which stops
    the program with a message naming the op and both sizes.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::func::FuncDialect",
    "::mlir::linalg::LinalgDialect", "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect", "::mlir::tensor::TensorDialect",
  ];
}

#endif // PE_CONVERSION_PASSES_TD
