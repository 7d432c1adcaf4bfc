//===- Passes.td - conversions out of the pe dialect --------*- tablegen -*-===//
#ifndef PE_CONVERSION_PASSES_TD
#define PE_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def PERaisePositionalEncodings : Pass<"pe-raise-positional-encodings"> {
  let summary = "Raise RoPE and attention (with masks and ALiBi) from linalg on tensors into pe ops";
  let description = [{
    Recognizes, in linalg/tensor/arith/math IR on tensors as importers
    produce it (named ops, one op per `linalg.generic`, or fused generics),
    rotary embeddings and attention, and replaces them by `pe.rope` and
    `pe.attention`, so that the fusion passes and the kernels apply. The
    recognition is a proof, not a textual match: every element of a
    candidate is evaluated symbolically through the ops that compute it
    (indexing maps, scalar bodies, slices, concatenations, reshapes,
    transposes, broadcasts, reductions), and the result is checked against
    the op's definition.

    - RoPE (`pe.rope`): for every channel c of the last dim,
      `R[c] = m X[c] cos(p f_i) -+ m X[c'] sin(p f_i)` with c' the partner of
      the `half` (c +- r/2) or `interleaved` (c ^ 1) style, the minus sign on
      the first member of each pair, both members turning by the same
      frequency `f_i`, and `R[c] = X[c]` for the channels `c >= r` (partial
      rotary). Positions are an i32/i64 tensor (`[S]` or `[B, S]`, seen
      through casts and reshapes) or an iota. The frequencies come from a
      constant table times the positions (outer product, K = 1 matmul,
      broadcast multiply); they are identified as the unscaled, linear or
      Llama 3.1 configuration when one matches each frequency to 2e-6, and
      are otherwise kept exactly, as LongRoPE per-pair factors over a fitted
      theta (`select = short`), with the magnitude `m` as its attention
      factor. Layout `bhsd` or `bshd` from the dim the positions index.
    - Attention (`pe.attention`): a contraction `O = sum_j P[.., i, j] V`
      where `P` is a softmax over the contraction index `j`
      (`linalg.softmax`, or `exp(x - max x) / sum exp(x - max x)`, with
      divisions, reciprocals and keep-dim reshapes in any spelling) of
      `x = c * sum_d Q[b, h, i, d] K[b, h / n, j, d] + bias`: `Q`, `K`, `V` in
      any dim order (BHSD, BSHD, batch and heads merged), KV heads shared by
      `n` query heads (repeat_kv's broadcast + reshape), `c` the scale
      (multiply or divide), `bias` an additive mask read at
      `(b | -, h | -, i, j)` and/or ALiBi `c' slope[h] (k_pos[j] - q_pos[i])`
      with slopes of `pe.alibi_slopes` for some max_bias (the query term may
      be absent: it is constant along every softmax row).

    With `verify`, each rewrite is also checked after it is proven: the
    function before and after it are compiled for the CPU and run on the
    same random inputs (static shapes only), and a rewrite whose result
    differs beyond `verify-tolerance` is undone and its op left alone with a
    remark giving the difference. The check needs the JIT (tools that link
    pe's execution library install it; `verify` is an error otherwise).

    Anything not proven is left unchanged; with `remarks`, every op that
    has the shape of an attention or a rotation but is left alone gets a
    remark naming the step of the proof that failed. A fully masked query
    row, which the generic softmax turns into NaN, yields 0 after raising
    (as every `pe.attention` does).
  }];
  let options = [
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "Explain, as remarks, why attention- and rotation-shaped ops are left alone">,
    Option<"verify", "verify", "bool", /*default=*/"false",
           "Check every rewrite by running the function before and after it "
           "(CPU pipeline + JIT, random inputs) and refuse, with a remark, one "
           "that changes a result beyond verify-tolerance">,
    Option<"verifyTolerance", "verify-tolerance", "double", /*default=*/"1e-4",
           "Largest accepted difference of a result, relative to max(1, max |result|)">,
  ];
  let dependentDialects = [
    "::mlir::pe::PEDialect", "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect",
  ];
}

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
