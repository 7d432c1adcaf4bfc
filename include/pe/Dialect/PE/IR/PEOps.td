//===- PEOps.td - operations of the pe dialect --------------*- tablegen -*-===//
#ifndef PE_DIALECT_PE_IR_PEOPS_TD
#define PE_DIALECT_PE_IR_PEOPS_TD

include "mlir/IR/OpBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "pe/Dialect/PE/IR/PEDialect.td"
include "pe/Dialect/PE/IR/PEAttrs.td"

// Every static tensor shape of the op has a byte size that fits in 64 bits.
def PE_BoundedShapes : NativeOpTrait<"BoundedShapes"> {
  let cppNamespace = "::mlir::pe";
}

class PE_Op<string mnemonic, list<Trait> traits = []>
    : Op<PE_Dialect, mnemonic, !listconcat(traits, [Pure, PE_BoundedShapes])> {
  let hasVerifier = 1;
}

// Activations and tables: f32, f16 or bf16 (f16 and bf16 compute in f32).
def PE_FloatTensor : RankedTensorOf<[F32, F16, BF16]>;
def PE_PositionsTensor : RankedTensorOf<[I32, I64]>;

//===----------------------------------------------------------------------===//
// RoPE
//===----------------------------------------------------------------------===//

def PE_RopeFrequenciesOp : PE_Op<"rope_frequencies"> {
  let summary = "the inverse frequencies of a RoPE configuration";
  let description = [{
    `inv_freq[i]`, `i < rotary_dim/2`, of `#pe.rope` after its scaling
    (formulas: `#pe.rope` and the scaling attributes). `seq_len` is the
    sequence length of the call for the scalings that depend on it (dynamic
    NTK, LongRoPE with `select = dynamic`); without it those scalings behave
    as for a sequence within the original context.

    Folds to a dense constant whenever `seq_len` is absent or constant; the
    values are computed in double and rounded once to the element type.

    ```mlir
    %f = pe.rope_frequencies #pe.rope<theta = 500000.0, rotary_dim = 128,
           scaling = #pe.llama3<factor = 8.0, original_max_position_embeddings = 8192>>
           -> tensor<64xf32>
    ```
  }];
  let arguments = (ins PE_RopeAttr:$rope, Optional<Index>:$seq_len);
  let results = (outs 1DTensorOf<[F32, F64]>:$result);
  let assemblyFormat = [{
    qualified($rope) (`seq_len` $seq_len^)? attr-dict `->` type($result)
  }];
  let hasFolder = 1;
}

def PE_RopeTablesOp : PE_Op<"rope_tables", [AllTypesMatch<["cos", "sin"]>]> {
  let summary = "cos and sin tables of a RoPE configuration at given positions";
  let description = [{
    For positions `p` of shape `[S]` or `[B, S]`:
    `cos[..., s, i] = m * cos(p[..., s] * inv_freq[i])`,
    `sin[..., s, i] = m * sin(p[..., s] * inv_freq[i])`, `i < rotary_dim/2`,
    with `m` the attention factor of the scaling. The angle is reduced modulo
    2 pi with double-level accuracy before cos/sin. One table serves every
    head and batch row. For scalings that depend on the sequence length,
    `seq_len = max(p) + 1`.

    Folds to constants when the positions are constant.

    ```mlir
    %cos, %sin = pe.rope_tables #pe.rope<rotary_dim = 64> %pos
                   : tensor<?xi32> -> tensor<?x32xf32>
    ```
  }];
  let arguments = (ins PE_PositionsTensor:$positions, PE_RopeAttr:$rope);
  let results = (outs PE_FloatTensor:$cos, PE_FloatTensor:$sin);
  let assemblyFormat = [{
    qualified($rope) $positions attr-dict `:` type($positions) `->` type($cos)
  }];
  let hasFolder = 1;
}

def PE_RopeOp : PE_Op<"rope", [AllTypesMatch<["input", "result"]>,
                               AttrSizedOperandSegments]> {
  let summary = "rotary position embedding";
  let description = [{
    Rotates `input` (`[B, H, S, D]` with `layout(bhsd)`, the default, or
    `[B, S, H, D]` with `layout(bshd)`) by `positions` (`[S]`, shared by the
    batch, or `[B, S]`). For the pairs `(c0, c1)` of the style (`half`:
    `(i, i + r/2)`; `interleaved`: `(2i, 2i + 1)`), `i < r/2`, `r = rotary_dim`:

    ```
    out[c0] = m (x[c0] cos a - x[c1] sin a)
    out[c1] = m (x[c1] cos a + x[c0] sin a),   a = p * inv_freq[i]
    ```

    Channels `r .. D-1` are copied (partial rotary). f16/bf16 inputs are
    rotated in f32 and rounded once.

    `tables(%cos, %sin)` passes precomputed f32 tables of these positions and
    this configuration (`pe.rope_tables`, shape `positions.shape + [r/2]`),
    which the rotation reads instead of computing its own;
    `pe-share-rope-tables` introduces them so that every rotation at the same
    positions shares one table computation.

    Folds to its input when every position is 0 and `m` is 1; a rotation of a
    rotation by the same configuration becomes one rotation by the summed
    positions when the frequencies are fixed and `m` is 1.

    ```mlir
    %y = pe.rope #pe.rope<theta = 10000.0, rotary_dim = 64, style = interleaved>
           %x, %pos layout(bshd) : tensor<2x?x8x64xbf16>, tensor<2x?xi64>
    ```
  }];
  let arguments = (ins PE_FloatTensor:$input, PE_PositionsTensor:$positions,
      Optional<RankedTensorOf<[F32]>>:$cos, Optional<RankedTensorOf<[F32]>>:$sin,
      PE_RopeAttr:$rope,
      DefaultValuedAttr<PE_Layout, "::mlir::pe::Layout::bhsd">:$layout);
  let results = (outs PE_FloatTensor:$result);
  let assemblyFormat = [{
    qualified($rope) $input `,` $positions (`layout` `(` $layout^ `)`)?
    (`tables` `(` $cos^ `,` $sin `:` type($cos) `,` type($sin) `)`)? attr-dict
    `:` type($input) `,` type($positions)
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Value":$input, "::mlir::Value":$positions,
                   "::mlir::pe::RopeAttr":$rope, "::mlir::pe::Layout":$layout), [{
      build($_builder, $_state, input.getType(), input, positions,
            /*cos=*/::mlir::Value(), /*sin=*/::mlir::Value(), rope, layout);
    }]>,
  ];
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

//===----------------------------------------------------------------------===//
// Absolute encodings
//===----------------------------------------------------------------------===//

def PE_SinusoidalOp : PE_Op<"sinusoidal"> {
  let summary = "absolute sinusoidal embedding (positions or diffusion timesteps)";
  let description = [{
    For positions `p` (`[S]` or `[B, S]`; integers, or floats for fractional
    diffusion timesteps) and `dim` = the last result dim, `h = floor(dim/2)`,
    the angles `a_k = scale * p * w_k` of the frequencies

    - `w_k = base^(-2k/dim)` (`spacing(paper)`, the default: Vaswani,
      Marian, DistilBERT);
    - `w_k = exp(-k ln(base) / (h - 1))` (`spacing(fairseq)`:
      tensor2tensor, fairseq, M2M100, Speech2Text);
    - `w_k = exp(-k ln(base) / (h - s))` (`freq_shift(s)`: diffusers'
      `downscale_freq_shift`; ggml's timestep embedding is `freq_shift(0)`),

    give `h` sin and `h` cos channels:

    - `layout(interleaved)`: `e[2k] = sin(a_k)`, `e[2k+1] = cos(a_k)`;
    - `layout(concat)`: `e[k] = sin(a_k)`, `e[h + k] = cos(a_k)`;
    - `cos_first` swaps the two series (diffusers' `flip_sin_to_cos`,
      ggml's `[cos | sin]`).

    An odd `dim` states its last channel: `odd(zero)` is 0 (fairseq,
    diffusers, ggml); `odd(sin)` gives the sin series one more frequency,
    `sin(a_h)`, the last channel of its block (Marian, DistilBERT).
    `padding_idx(i)` makes the rows of integer position `i` zero (fairseq's
    pad row). Folds to a constant when the positions are constant integers.

    ```mlir
    %e = pe.sinusoidal %pos layout(concat) spacing(fairseq) : tensor<16xi64> -> tensor<16x512xf32>
    %t = pe.sinusoidal %ts layout(concat) freq_shift(0.0) cos_first : tensor<4xf32> -> tensor<4x320xf32>
    ```
  }];
  let arguments = (ins AnyTypeOf<[PE_PositionsTensor, RankedTensorOf<[F16, BF16, F32, F64]>]>:$positions,
      DefaultValuedAttr<F64Attr, "10000.0">:$base,
      DefaultValuedAttr<PE_SinusoidalLayout,
          "::mlir::pe::SinusoidalLayout::interleaved">:$layout,
      DefaultValuedAttr<PE_SinusoidalSpacing,
          "::mlir::pe::SinusoidalSpacing::paper">:$spacing,
      OptionalAttr<F64Attr>:$freq_shift,
      DefaultValuedAttr<F64Attr, "1.0">:$scale,
      UnitAttr:$cos_first,
      OptionalAttr<PE_SinusoidalOdd>:$odd,
      OptionalAttr<I64Attr>:$padding_idx);
  let results = (outs PE_FloatTensor:$result);
  let assemblyFormat = [{
    $positions (`base` `(` $base^ `)`)? (`layout` `(` $layout^ `)`)?
    (`spacing` `(` $spacing^ `)`)? (`freq_shift` `(` $freq_shift^ `)`)?
    (`scale` `(` $scale^ `)`)? (`cos_first` $cos_first^)? (`odd` `(` $odd^ `)`)?
    (`padding_idx` `(` $padding_idx^ `)`)? attr-dict `:` type($positions) `->` type($result)
  }];
  let extraClassDeclaration = [{
    /// The table's shape as the frequency formula and the lowering see it.
    ::mlir::pe::formula::SinusoidalTable getTable();
  }];
  let hasFolder = 1;
}

def PE_LearnedOp : PE_Op<"learned"> {
  let summary = "learned absolute embedding: rows of a table at positions";
  let description = [{
    `out[..., s, :] = table[p[..., s], :]` for a table `[N, D]` and positions
    `[S]` or `[B, S]`. A position outside `[0, N)` is an error: a verifier
    error when the positions are constant, a runtime error naming the
    position and `N` otherwise (never a clamp, never an out-of-bounds read).

    ```mlir
    %e = pe.learned %wpe[%pos] : tensor<1024x768xf32>, tensor<?xi64> -> tensor<?x768xf32>
    ```
  }];
  let arguments = (ins PE_FloatTensor:$table, PE_PositionsTensor:$positions);
  let results = (outs PE_FloatTensor:$result);
  let assemblyFormat = [{
    $table `[` $positions `]` attr-dict `:` type($table) `,` type($positions)
    `->` type($result)
  }];
}

//===----------------------------------------------------------------------===//
// ALiBi
//===----------------------------------------------------------------------===//

def PE_AlibiSlopesOp : PE_Op<"alibi_slopes"> {
  let summary = "ALiBi slopes for any number of heads";
  let description = [{
    For `H` = the result size and `n = 2^floor(log2 H)`:
    `slope[h] = 2^(-max_bias (h+1) / n)` for `h < n`, and
    `slope[h] = 2^(-(max_bias/2) (2(h-n)+1) / n)` for `h >= n` (the extra
    heads interleave between the first ones; `max_bias = 8` is the paper).
    Always folds to a constant.

    ```mlir
    %s = pe.alibi_slopes : tensor<12xf32>
    ```
  }];
  let arguments = (ins DefaultValuedAttr<F64Attr, "8.0">:$max_bias);
  let results = (outs 1DTensorOf<[F32, F64]>:$result);
  let assemblyFormat = [{
    (`max_bias` `(` $max_bias^ `)`)? attr-dict `:` type($result)
  }];
  let hasFolder = 1;
}

def PE_AlibiBiasOp : PE_Op<"alibi_bias"> {
  let summary = "ALiBi bias from slopes and query/key positions";
  let description = [{
    `bias[h, i, j] = -slope[h] * (q_pos[i] - k_pos[j])` with `causal`, where
    keys after the query (`k_pos[j] > q_pos[i]`) get `-inf`; with `symmetric`,
    `bias[h, i, j] = -slope[h] * |q_pos[i] - k_pos[j]|`. Positions are `[S]`
    or `[B, S]`; the result is `[H, Sq, Skv]`, or `[B, H, Sq, Skv]` when
    either positions tensor has a batch dimension.

    ```mlir
    %b = pe.alibi_bias causal %slopes, %qpos, %kpos
           : tensor<8xf32>, tensor<16xi32>, tensor<16xi32> -> tensor<8x16x16xf32>
    ```
  }];
  let arguments = (ins PE_AlibiMode:$mode, 1DTensorOf<[F32, F16, BF16]>:$slopes,
      PE_PositionsTensor:$q_positions, PE_PositionsTensor:$k_positions);
  let results = (outs PE_FloatTensor:$result);
  let assemblyFormat = [{
    $mode $slopes `,` $q_positions `,` $k_positions attr-dict `:` type($slopes)
    `,` type($q_positions) `,` type($k_positions) `->` type($result)
  }];
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

def PE_AttentionOp : PE_Op<"attention", [AttrSizedOperandSegments]> {
  let summary = "scaled dot-product attention with positional encodings";
  let description = [{
    `out = softmax(scale * Q' K'^T + bias + mask) V` per batch `b` and query
    head `h`, with `q: [B, Hq, Sq, D]`, `k: [B, Hkv, Skv, D]`,
    `v: [B, Hkv, Skv, Dv]`, `out: [B, Hq, Sq, Dv]`. Query head `h` reads
    key/value head `h / (Hq / Hkv)` (GQA; MQA for `Hkv = 1`).

    - `scale` defaults to `1 / sqrt(D)`.
    - Positions: `q_positions` (`[Sq]` or `[B, Sq]`) default to
      `Skv - Sq + i` (the queries are the last `Sq` tokens), `k_positions`
      (`[Skv]` or `[B, Skv]`) to `j`.
    - `causal`: key `j` is masked for query `i` when `k_pos[j] > q_pos[i]`.
    - `window(W)`: key `j` is masked when `q_pos[i] - k_pos[j] >= W`, and,
      without `causal`, also when `k_pos[j] - q_pos[i] >= W`.
    - `chunk(C)`: chunked attention (Llama 4's `attention_chunk_size`, vLLM's
      chunked local attention): key `j` is masked when
      `floor(k_pos[j] / C) != floor(q_pos[i] / C)`, each query sees only the
      keys of its own chunk of `C` positions.
    - `mask`: an additive `[B|1, Hq|1, Sq, Skv]` tensor.
    - `rope`: `Q' = rope(Q, q_pos)`, `K' = rope(K, k_pos)` with that
      configuration (`pe.rope` semantics); otherwise `Q' = Q`, `K' = K`.
      A multi-stream `rope` (sections) rotates by
      `rope_positions(%q_rope_positions, %k_rope_positions)` instead
      (`[A, Sq]` / `[B, A, Sq]` and `[A, Skv]` / `[B, A, Skv]`; M-RoPE's
      temporal, height and width positions), while `q_pos` and `k_pos` keep
      placing the masks and ALiBi.
    - `alibi(max_bias)`: `bias = -slope[h] * (q_pos[i] - k_pos[j])` with the
      slopes of `pe.alibi_slopes` for `Hq` heads, added after the scale.
    - `temperature(#pe.temperature<floor_scale = F, attn_scale = A>)`: query
      temperature tuning (Llama 4's NoPE layers): the scores of query `i` are
      multiplied by `t(q_pos[i])` (see `#pe.temperature`) with the scale,
      before the soft-cap, the bias and the masks.
    - `softcap(c)`: logit soft-capping (Gemma 2's `attn_logit_softcapping`):
      the scaled scores become `c * tanh(s / c)` before the bias and the
      masks are added, so `out = softmax(c tanh(scale Q' K'^T / c) + bias +
      mask) V`.
    - `sinks`: attention sinks (gpt-oss's `sinks`, the `s_aux` of vLLM's and
      FlashAttention's kernels), one logit per query head `[Hq]` in the
      softmax's denominator only: with the final scores `s_ij`,
      `out_i = sum_j exp(s_ij) v_j / (exp(sinks[h]) + sum_j exp(s_ij))`, a
      key that every query sees and whose value is 0.
    - `shared_key` (`[B, 1, Skv, Ds]`): the last `Ds` channels of every key
      head, one block per token shared by all heads (multi-head latent
      attention's rotated `k_pe`): key head `h` is
      `concat(key[b, h, j], shared_key[b, 0, j])`, so `key` holds the other
      `D - Ds` channels. No per-head copy of the block need exist: the CPU
      kernels and the GPU SIMT kernel read it in place.

    A query row whose keys are all masked yields 0, never NaN.

    ```mlir
    %o = pe.attention %q, %k, %v causal rope(#pe.rope<theta = 500000.0, rotary_dim = 128>)
           : tensor<1x32x?x128xbf16>, tensor<1x8x?x128xbf16>, tensor<1x8x?x128xbf16>
           -> tensor<1x32x?x128xbf16>
    ```
  }];
  let arguments = (ins PE_FloatTensor:$query, PE_FloatTensor:$key,
      PE_FloatTensor:$value, Optional<PE_FloatTensor>:$mask,
      Optional<PE_PositionsTensor>:$q_positions,
      Optional<PE_PositionsTensor>:$k_positions,
      Optional<PE_FloatTensor>:$sinks,
      Optional<PE_PositionsTensor>:$q_rope_positions,
      Optional<PE_PositionsTensor>:$k_rope_positions,
      Optional<PE_FloatTensor>:$shared_key,
      OptionalAttr<F64Attr>:$scale, UnitAttr:$causal,
      OptionalAttr<I64Attr>:$window, OptionalAttr<I64Attr>:$chunk,
      OptionalAttr<PE_RopeAttr>:$rope,
      OptionalAttr<F64Attr>:$alibi, OptionalAttr<F64Attr>:$softcap,
      OptionalAttr<PE_TemperatureAttr>:$temperature);
  let results = (outs PE_FloatTensor:$result);
  let assemblyFormat = [{
    $query `,` $key `,` $value
    (`mask` `(` $mask^ `:` type($mask) `)`)?
    (`q_positions` `(` $q_positions^ `:` type($q_positions) `)`)?
    (`k_positions` `(` $k_positions^ `:` type($k_positions) `)`)?
    (`sinks` `(` $sinks^ `:` type($sinks) `)`)?
    (`shared_key` `(` $shared_key^ `:` type($shared_key) `)`)?
    (`scale` `(` $scale^ `)`)? (`causal` $causal^)? (`window` `(` $window^ `)`)?
    (`chunk` `(` $chunk^ `)`)? (`rope` `(` qualified($rope)^ `)`)?
    (`rope_positions` `(` $q_rope_positions^ `,` $k_rope_positions `:`
        type($q_rope_positions) `,` type($k_rope_positions) `)`)?
    (`alibi` `(` $alibi^ `)`)?
    (`softcap` `(` $softcap^ `)`)?
    (`temperature` `(` qualified($temperature)^ `)`)? attr-dict
    `:` type($query) `,` type($key) `,` type($value) `->` type($result)
  }];
  let extraClassDeclaration = [{
    /// The softmax scale: the attribute, or 1/sqrt(D).
    double getEffectiveScale();
    /// The channels of the shared key block, Ds (0 without one).
    int64_t getSharedKeyDim();
  }];
}

//===----------------------------------------------------------------------===//
// KV cache
//===----------------------------------------------------------------------===//

def PE_AppendKvOp : PE_Op<"append_kv", [
    AllTypesMatch<["key_cache", "new_key_cache"]>,
    AllTypesMatch<["value_cache", "new_value_cache"]>]> {
  let summary = "write new keys (rotated) and values into a KV cache";
  let description = [{
    The caches with the new tokens' rows written at their slots; every other
    row is unchanged. With `rope`, a key row is rotated by its position
    (`pe.rope` semantics, f32 arithmetic, rounded once) as it is written, so
    the cache holds rotated keys.

    - `layout(dense)` (the default): `key: [B, Hkv, S, D]`,
      `value: [B, Hkv, S, Dv]`, caches `[B, Hkv, Smax, D|Dv]`, `slots` and
      `positions` `[S]` (shared by the batch) or `[B, S]`:
      `key_cache[b, h, slots[b, s]] = rope(key[b, h, s], positions[b, s])`.
    - `layout(nhd)` / `layout(hnd)`: packed tokens `key: [T, Hkv, D]`,
      `value: [T, Hkv, Dv]`, pages `[P, page_size, Hkv, D|Dv]` (`nhd`) or
      `[P, Hkv, page_size, D|Dv]` (`hnd`), `slots` and `positions` `[T]`:
      token `t` goes to row `slots[t] mod page_size` of page
      `floor(slots[t] / page_size)` (vLLM's `slot_mapping`).

    A slot of -1 skips its token (vLLM's padding tokens). Any other slot
    outside `[0, capacity)` (`Smax`, or `P * page_size`) is an error: a
    verifier error when the slots are constant, a run-time error naming the
    slot otherwise; nothing is written out of bounds. Tokens are written in
    order, so a slot given twice holds the later token. `positions` are
    given exactly when `rope` is.

    ```mlir
    %kc, %vc = pe.append_kv %k, %v into %k_cache, %v_cache
                 slots(%slots : tensor<?xi64>) positions(%pos : tensor<?xi64>)
                 layout(nhd) rope(#pe.rope<theta = 500000.0, rotary_dim = 128>)
                 : tensor<?x8x128xbf16>, tensor<?x8x128xbf16>
                 -> tensor<4096x16x8x128xbf16>, tensor<4096x16x8x128xbf16>
    ```
  }];
  let arguments = (ins PE_FloatTensor:$key, PE_FloatTensor:$value,
      PE_FloatTensor:$key_cache, PE_FloatTensor:$value_cache,
      PE_PositionsTensor:$slots, Optional<PE_PositionsTensor>:$positions,
      DefaultValuedAttr<PE_CacheLayout, "::mlir::pe::CacheLayout::dense">:$layout,
      OptionalAttr<PE_RopeAttr>:$rope);
  let results = (outs PE_FloatTensor:$new_key_cache,
                      PE_FloatTensor:$new_value_cache);
  let assemblyFormat = [{
    $key `,` $value `into` $key_cache `,` $value_cache
    `slots` `(` $slots `:` type($slots) `)`
    (`positions` `(` $positions^ `:` type($positions) `)`)?
    (`layout` `(` $layout^ `)`)? (`rope` `(` qualified($rope)^ `)`)? attr-dict
    `:` type($key) `,` type($value) `->` type($key_cache) `,` type($value_cache)
  }];
  let extraClassDeclaration = [{
    /// Whether the cache is paged (`nhd` or `hnd`).
    bool isPaged() { return getLayout() != ::mlir::pe::CacheLayout::dense; }
  }];
}

def PE_PagedAttentionOp : PE_Op<"paged_attention", [AttrSizedOperandSegments]> {
  let summary = "attention of ragged query batches over a paged KV cache";
  let description = [{
    The attention of serving engines: sequence `b` of a batch owns the
    pages `block_table[b, 0..]` of the cache and has `L_b = kv_lens[b]` keys
    there, key `j` at row `j mod page_size` of page
    `block_table[b, floor(j / page_size)]`. Its queries are the packed rows
    `cu_seqlens[b] .. cu_seqlens[b + 1] - 1` of `query` (`[T, Hq, D]`), the
    last `Sq_b` tokens of the sequence: query `i` has position
    `L_b - Sq_b + i`, key `j` position `j`. Decode is `Sq_b = 1`; a chunk of a
    prefill attends to the cache, which already holds the chunk
    (`pe.append_kv` first).

    Per sequence this is `pe.attention` (with those positions) of
    `rope(Q_b)` (the keys in the cache are already rotated) over the
    sequence's keys and values, with `sinks` (`[Hq]`, gpt-oss's), `scale`,
    `causal`, `window`, `chunk`, `alibi`, `softcap` and `temperature` (at the
    query positions `L_b - Sq_b + i`) as there; GQA / MQA when `Hq` is a
    multiple of `Hkv`. A soft `mask` (`[T, Hq|1, K]`, additive, `-inf` hides
    a key) gives each packed query row its own row over the sequence's keys:
    column `j < L_b` is added to the score of key `j` (the columns from `L_b`
    on are not read), so sequence `b` attends with the mask `mask[cu_seqlens[b]
    .. cu_seqlens[b + 1] - 1, :, 0 .. L_b - 1]` (FlashInfer's boolean
    `custom_mask` is 0 / `-inf`). The
    result is packed as `query`: `[T, Hq, Dv]`. Pages `[P, page_size, Hkv,
    D|Dv]` (`layout(nhd)`, the default) or `[P, Hkv, page_size, D|Dv]`
    (`layout(hnd)`).

    Run-time errors, before anything is computed: `cu_seqlens` not starting
    at 0, not ending at `T` or giving a sequence more queries than keys; a
    length outside `[0, M * page_size]` (`M` = the block table's columns); a
    page that a sequence reads outside `[0, P)`; a mask of fewer rows than `T`
    or fewer key columns than a sequence has keys.

    ```mlir
    %o = pe.paged_attention %q, %k_cache, %v_cache
           block_table(%bt : tensor<8x2048xi32>) kv_lens(%lens : tensor<8xi32>)
           cu_seqlens(%cu : tensor<9xi32>) causal
           rope(#pe.rope<theta = 500000.0, rotary_dim = 128>)
           : tensor<?x32x128xbf16>, tensor<?x16x8x128xbf16>, tensor<?x16x8x128xbf16>
           -> tensor<?x32x128xbf16>
    ```
  }];
  let arguments = (ins PE_FloatTensor:$query, PE_FloatTensor:$key_cache,
      PE_FloatTensor:$value_cache, PE_PositionsTensor:$block_table,
      PE_PositionsTensor:$kv_lens, PE_PositionsTensor:$cu_seqlens,
      Optional<PE_FloatTensor>:$mask, Optional<PE_FloatTensor>:$sinks,
      Optional<PE_PositionsTensor>:$rope_positions,
      DefaultValuedAttr<PE_CacheLayout, "::mlir::pe::CacheLayout::nhd">:$layout,
      OptionalAttr<F64Attr>:$scale, UnitAttr:$causal,
      OptionalAttr<I64Attr>:$window, OptionalAttr<I64Attr>:$chunk,
      OptionalAttr<PE_RopeAttr>:$rope,
      OptionalAttr<F64Attr>:$alibi, OptionalAttr<F64Attr>:$softcap,
      OptionalAttr<PE_TemperatureAttr>:$temperature);
  let results = (outs PE_FloatTensor:$result);
  let assemblyFormat = [{
    $query `,` $key_cache `,` $value_cache
    `block_table` `(` $block_table `:` type($block_table) `)`
    `kv_lens` `(` $kv_lens `:` type($kv_lens) `)`
    `cu_seqlens` `(` $cu_seqlens `:` type($cu_seqlens) `)`
    (`mask` `(` $mask^ `:` type($mask) `)`)?
    (`sinks` `(` $sinks^ `:` type($sinks) `)`)?
    (`rope_positions` `(` $rope_positions^ `:` type($rope_positions) `)`)?
    (`layout` `(` $layout^ `)`)? (`scale` `(` $scale^ `)`)? (`causal` $causal^)?
    (`window` `(` $window^ `)`)? (`chunk` `(` $chunk^ `)`)?
    (`rope` `(` qualified($rope)^ `)`)?
    (`alibi` `(` $alibi^ `)`)? (`softcap` `(` $softcap^ `)`)?
    (`temperature` `(` qualified($temperature)^ `)`)? attr-dict
    `:` type($query) `,` type($key_cache) `,` type($value_cache) `->` type($result)
  }];
  let extraClassDeclaration = [{
    /// The softmax scale: the attribute, or 1/sqrt(D).
    double getEffectiveScale();
    /// The page size and the dimensions of the heads and channels of a cache.
    int64_t getPageSizeDim() { return getLayout() == ::mlir::pe::CacheLayout::nhd ? 1 : 2; }
    int64_t getHeadsDim() { return getLayout() == ::mlir::pe::CacheLayout::nhd ? 2 : 1; }
  }];
}

def PE_GatherPagesOp : PE_Op<"gather_pages"> {
  let summary = "one sequence's keys or values of a paged cache, as a dense tensor";
  let description = [{
    The first `length` rows of sequence `sequence` of a paged cache, head
    major: `result[0, h, j, :] = cache[p, j mod page_size, h, :]` (`nhd`) or
    `cache[p, h, j mod page_size, :]` (`hnd`) with
    `p = block_table[sequence, floor(j / page_size)]`. The result is
    `[1, Hkv, length, D]`, the layout of `pe.attention`'s keys and values.

    `pe-expand-paged-attention` builds one per sequence as the keys and the
    values of a `pe.attention`; the CPU attention kernels read such operands
    in place, page by page, so the copy exists only where another lowering
    takes it (`pe-lower-to-linalg`). Run-time errors, before anything is
    read: `sequence` outside the block table's rows, `length` outside
    `[0, M * page_size]`, a page it reads outside `[0, P)`.

    ```mlir
    %k = pe.gather_pages %k_cache block_table(%bt : tensor<8x2048xi32>)
           sequence(%b) length(%len) layout(hnd)
           : tensor<?x8x16x128xbf16> -> tensor<1x8x?x128xbf16>
    ```
  }];
  let arguments = (ins PE_FloatTensor:$cache, PE_PositionsTensor:$block_table,
      Index:$sequence, Index:$length,
      DefaultValuedAttr<PE_CacheLayout, "::mlir::pe::CacheLayout::nhd">:$layout);
  let results = (outs PE_FloatTensor:$result);
  let assemblyFormat = [{
    $cache `block_table` `(` $block_table `:` type($block_table) `)`
    `sequence` `(` $sequence `)` `length` `(` $length `)`
    (`layout` `(` $layout^ `)`)? attr-dict `:` type($cache) `->` type($result)
  }];
  let extraClassDeclaration = [{
    /// The dimensions of the page size and of the heads of the cache.
    int64_t getPageSizeDim() { return getLayout() == ::mlir::pe::CacheLayout::nhd ? 1 : 2; }
    int64_t getHeadsDim() { return getLayout() == ::mlir::pe::CacheLayout::nhd ? 2 : 1; }
  }];
}

//===----------------------------------------------------------------------===//
// Kernels on buffers
//===----------------------------------------------------------------------===//

#endif // PE_DIALECT_PE_IR_PEOPS_TD
