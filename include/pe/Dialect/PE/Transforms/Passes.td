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

def PEFuseRopeIntoAttention : Pass<"pe-fuse-rope-into-attention"> {
  let summary = "Fuse the rotations of Q and K into the attention that reads them";
  let description = [{
    `attention(rope(q, pq), rope(k, pk), v)` with one RoPE configuration and
    the BHSD layout becomes `attention(q, k, v) rope(...)` with
    `q_positions(pq)` and `k_positions(pk)`, so that no rotated Q or K needs
    to exist as a tensor. Fused only when the meaning is kept:

    - both rotations use the same `#pe.rope` and `layout(bhsd)`, and carry no
      precomputed tables;
    - the attention's own positions, if given, are the rotations' positions
      (they also place the causal/window masks and ALiBi); if not given and
      the attention masks by position (causal, window, alibi), the rotations'
      positions must be the attention's defaults, which the pass cannot know,
      so it does not fuse.

    A rotation that has other users (a rotated K also written to a KV cache)
    stays for them; the attention still reads the unrotated input.
  }];
}

def PEFuseRopeIntoAppend : Pass<"pe-fuse-rope-into-append"> {
  let summary = "Rotate keys as they are written into a KV cache";
  let description = [{
    `append_kv(rope(k, p), v)` becomes `append_kv(k, v) positions(p)
    rope(...)`: the keys are rotated once, as they enter the cache, and no
    rotated copy of them is a tensor of its own. For a dense cache the
    rotation is a `layout(bhsd)` `pe.rope` of the new keys; for a paged cache
    the new keys `[T, Hkv, D]` are the `tensor.collapse_shape` of a
    `layout(bshd)` rotation of `[1, T, Hkv, D]` (positions `[T]` or
    `[1, T]`). Rotations by given tables are not fused. A rotation with
    other users stays for them.
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
}

def PEExpandSharedKey : Pass<"pe-expand-shared-key", "ModuleOp"> {
  let summary = "pe.attention's shared key block written into every key head";
  let description = [{
    Rewrites each `pe.attention` with a `shared_key` (`[B, 1, Skv, Ds]`,
    multi-head latent attention's rotated `k_pe`) into the same attention
    over `[B, Hkv, Skv, D]` keys whose last `Ds` channels repeat the block
    (a `linalg.generic`), after the run-time checks of the block's batch and
    length against the key's. For the lowerings that read keys from one
    tensor: pe-lower-to-linalg does the same itself; pe-tile-attention and
    pe-gpu-tile-attention expand only the ops their kernels cannot read in
    place. Runs on a module (it declares the runtime
    functions of the checks).
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def PEExpandPagedAttention : Pass<"pe-expand-paged-attention", "ModuleOp"> {
  let summary = "pe.paged_attention as one pe.attention per sequence";
  let description = [{
    Checks the block table, `kv_lens` and `cu_seqlens` on the calling thread
    (run-time errors naming the sequence), then loops over the sequences:
    the sequence's query rows transposed to `[1, Hq, Sq, D]` (and rotated by
    `pe.rope` at positions `L - Sq + i` for `rope`), its keys and values as
    `pe.gather_pages` of its pages (`[1, Hkv, L, D|Dv]`), one `pe.attention`
    with the op's scale, masks, ALiBi and soft-capping (whose default
    positions are the sequence's), and the result rows written back into
    the packed `[T, Hq, Dv]`. The attention kernels of the CPU pipeline then
    compute every sequence, reading the pages in place. Runs on a module (it declares the runtime
    functions of the checks).

    With `gpu` (pe-gpu-pipeline, after pe-gpu-tile-attention, whose paged
    kernel computes the op or refuses it), an op left (tile-attention=false)
    is refused with a diagnostic instead: the loop over the sequences reads
    `cu_seqlens`, `kv_lens` and the block table on the host, which the GPU
    pipeline would outline into one thread.
  }];
  let options = [
    Option<"gpu", "gpu", "bool", /*default=*/"false",
           "Refuse pe.paged_attention (pe-gpu-pipeline)">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect"];
}

def PEFuseAlibiIntoAttention : Pass<"pe-fuse-alibi-into-attention"> {
  let summary = "Fuse an explicit ALiBi bias mask into the attention";
  let description = [{
    `attention(q, k, v) mask(alibi_bias(alibi_slopes, qp, kp))` (the bias
    used directly as the rank-4 mask, or its rank-3 form expanded to
    `[1, H, Sq, Skv]`) becomes `attention(q, k, v) alibi(max_bias) causal`
    with `q_positions(qp)` and `k_positions(kp)`: the bias is computed inside
    each score tile and never materialized. A causal bias adds `causal`; a
    symmetric bias is fused only into an attention that is already causal,
    where `-m |q - k| = -m (q - k)` on every visible key. The slopes must be
    `pe.alibi_slopes` for the attention's query heads, and the attention's
    own positions, if given, must be the bias's.
  }];
}

def PEShareRopeTables : Pass<"pe-share-rope-tables"> {
  let summary = "One cos/sin table computation per (positions, RoPE configuration)";
  let description = [{
    Every group of two or more `pe.rope` ops of one function that rotate by
    the same positions value with the same `#pe.rope` gets one
    `pe.rope_tables` (f32), placed right after the positions are defined, and
    each rotation reads it through `tables(...)`. In a model whose layers all
    use the same positions, the tables are computed once instead of once per
    layer and per Q/K.
  }];
}

#endif // PE_DIALECT_PE_TRANSFORMS_PASSES_TD
