//===- Passes.td - passes over the pe dialect ---------------*- tablegen -*-===//
#ifndef PE_DIALECT_PE_TRANSFORMS_PASSES_TD
#define PE_DIALECT_PE_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def PESpecializeRopeScaling : Pass<"pe-specialize-rope-scaling"> {
  let summary = "Fix sequence-length-dependent RoPE scalings for a maximum length";
  let description = [{
    Dynamic NTK and LongRoPE with `select = dynamic` pick their frequencies
    from the largest position of each call (Hugging Face), so keys cached by
    one call may be rotated differently from the next. Serving engines (vLLM,
    llama.cpp) decide once for the longest sequence they will see. This pass
    makes that decision for `max-seq-len` on every `#pe.rope` of the IR:

    - `#pe.dynamic_ntk<factor = s, max_position_embeddings = L>` becomes
      scaling-free RoPE with
      `theta' = theta (s N / L - (s - 1))^(r/(r-2))`, `N = max(max-seq-len, L)`;
    - `#pe.longrope<..., select = dynamic>` gets `select = long` when
      `max-seq-len > original_max_position_embeddings`, else `select = short`.

    Afterwards every frequency is a compile-time constant.
  }];
  let options = [
    Option<"maxSeqLen", "max-seq-len", "int64_t", /*default=*/"0",
           "Longest sequence (max position + 1) the compiled code will see; must be > 0">,
  ];
}

#endif // PE_DIALECT_PE_TRANSFORMS_PASSES_TD
