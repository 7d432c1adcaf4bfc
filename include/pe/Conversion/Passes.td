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

def PETileAttention : Pass<"pe-tile-attention"> {
  let summary = "Lower pe.attention to a flash-attention loop nest on buffers (CPU)";
  let description = [{
    Every `pe.attention` with static head dims becomes a tiled kernel that
    never forms the Sq x Skv score matrix. The work is split into tasks
    (batch row, KV head, block of queries[, range of key blocks]) run by an
    `scf.parallel` (OpenMP with the pipeline's `threads`). A task holds the
    rows (query i, head g of the KV head's group): the K/V tiles it streams
    are loaded once for all heads of the group (GQA/MQA).

    Per task: the query rows are rotated (fused RoPE, from f32 cos/sin
    tables computed once per position), scaled and stored transposed,
    Qt[d][row]. Per block of Bk keys: skipped when every key is causally
    masked or outside the window for every row; else K is rotated into a
    Bk x D tile as it streams and V converted to f32; S^T = K Qt is formed
    with vectors along the rows (so row maxima and sums need no horizontal
    reductions); ALiBi, the mask operand, causal/window masks and the key
    tail are applied inside the tile only for blocks that need them; then
    the online softmax: m' = max(m, max_j s), alpha = exp(m - m'),
    p = exp(s - m'), l = alpha l + sum_j p, O = alpha O + P V (with m' read
    as 0 while a row is fully masked, so no NaN appears and such a row ends
    as 0). The output is O / l, rounded once to the element type.

    The register-level shape comes from the module's target (`llvm.target`,
    else the host; see `pe-set-target`): vectors of the target's f32 lanes
    (16 with AVX-512, 8 with AVX2, 4 on NEON) and micro-tiles that its
    vector registers hold (4 x 6 accumulators of 32 registers, 2 x 6 of 16):
    docs/compiling.md, "Schedules from the target".

    Each kernel is a private function `pe_attention_kernel*` on buffers; an
    attention whose kernel body and type equal an existing kernel's calls that
    one, so a model whose layers share a shape compiles one kernel.

    NaN and inf follow docs/dialect.md: a NaN score makes its row NaN, a
    masked key adds nothing whatever its value holds (the P V FMAs are
    masked by p != 0 in tiles where keys can be masked).

    Runs on a symbol table (a module), where it adds the kernels.

    With `bf16-dot`, bf16 prefill computes both products with bf16 dot
    products (`vector.contract` of bf16 pairs into f32 lanes, which
    `pe-lower-bf16-dot` makes vdpbf16ps with AVX512-BF16 and BFDOT on
    AArch64 NEON with BF16; the kernel is chosen on 16-lane x86 and 4-lane
    AArch64 vectors only): the prefill schedule with Q^T, P^T and V in bf16 pairs, P
    rounded to bf16 for P V, softmax statistics f32.

    With `amx`, bf16 prefill computes both products on AMX tiles (16 x 16
    f32 accumulators of 16 x 32 bf16 operands): S^T = K Q^T with Q^T in
    VNNI pairs, and O = P V with P transposed to bf16 rows and V in VNNI
    pairs; softmax statistics stay f32.

    Decode-like calls (fewer tasks than 2 x threads) split the key blocks
    among tasks, which write (O, m, l) partials that a second loop combines:
    O = sum_s exp(m_s - M) O_s / sum_s exp(m_s - M) l_s, M = max_s m_s.
  }];
  let options = [
    Option<"threads", "threads", "int64_t", /*default=*/"1",
           "Threads the tasks run on (decides key splitting for decode)">,
    Option<"blockKeys", "block-keys", "int64_t", /*default=*/"0",
           "Keys per streamed K/V tile, rounded up to a multiple of the "
           "micro-tile's keys (of 96 with amx); 0: 96, fewer where the task's "
           "scratch would not fit half the target's L2">,
    Option<"rows", "rows", "int64_t", /*default=*/"0",
           "Query rows (queries x heads of a group) per task, rounded up to "
           "whole vectors; 0: the target's default (64)">,
    Option<"amx", "amx", "bool", /*default=*/"false",
           "bf16 attention on AMX tiles (the target must have amx-bf16; the "
           "code calls pe_runtime_enable_amx)">,
    Option<"bf16Dot", "bf16-dot", "bool", /*default=*/"false",
           "bf16 attention on bf16 dot products: vdpbf16ps with AVX-512 (the "
           "target must have avx512bf16), BFDOT on AArch64 NEON (the target must "
           "have bf16); amx takes precedence">,
  ];
  let dependentDialects = [
    "::mlir::amx::AMXDialect", "::mlir::LLVM::LLVMDialect",
    "::mlir::arith::ArithDialect", "::mlir::bufferization::BufferizationDialect",
    "::mlir::func::FuncDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect", "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect", "::mlir::tensor::TensorDialect",
    "::mlir::vector::VectorDialect",
  ];
}

def PEGpuTileRope : Pass<"pe-gpu-tile-rope"> {
  let summary = "Lower pe.rope to one parallel loop over 16-byte chunks of its rows (GPU)";
  let description = [{
    Every `pe.rope` whose rotated half (r/2) and pass-through channels
    (D - r) are whole chunks of 16 bytes (4 f32, 8 f16 or bf16 elements)
    becomes one `scf.parallel` over (batch, position, head, chunk) on
    buffers, the chunk index innermost so that neighbouring GPU threads
    touch neighbouring bytes: a thread reads its chunk of x and the partner
    chunk (half pairs: r/2 channels apart; interleaved pairs: the chunk
    itself, split into even and odd members) with 16-byte aligned vector
    loads (`ld.global.v4`), rotates in f32 with the cos/sin chunk of its
    position (tables shared through `tables(...)` or computed once per
    (position, frequency) with the exact angle reduction), and writes the
    result chunks once with 16-byte stores; pass-through chunks are copied.
    x is read and the result written exactly once. A run-time check
    reports a buffer that is not 16-byte aligned. Other shapes are left to
    pe-lower-to-linalg.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::bufferization::BufferizationDialect",
    "::mlir::func::FuncDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect", "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect", "::mlir::tensor::TensorDialect",
    "::mlir::vector::VectorDialect",
  ];
}

def PEGpuTileAttention : Pass<"pe-gpu-tile-attention"> {
  let summary = "Lower pe.attention to a fused flash-attention loop without scores in memory (GPU)";
  let description = [{
    Every `pe.attention` with static head counts and head dims D, Dv <= 64
    becomes one `scf.parallel` over (batch, query head, query, chunk of up
    to 8 value channels), innermost the chunk, one GPU thread per
    iteration: the thread rotates its query row (rope(q), f32
    registers, RoPE of every style and scaling from cos/sin tables computed
    once per positions tensor with the exact angle reduction), then streams
    the keys of its KV head (GQA/MQA: query head h reads h / (Hq / Hkv)),
    rotating each key row as it is read, and keeps the online softmax
    (running max, sum and output chunk) in registers: causal and window
    masks, ALiBi and the mask operand are applied per score (tiles of 32
    keys that the causal/window masks hide entirely are skipped); a masked
    key weighs exactly 0 and a row without a visible key is 0. Neither rotated
    Q/K nor the scores reach memory. Decode (a static query count of at
    most 8) splits the keys into up to 128 ranges of at least 32 keys (fewer
    when the rows alone make about 33792 threads), one
    thread per (row, chunk, split), and merges the splits' (max, sum,
    output) in a second loop. Computed in f32 for every element type,
    rounded once. This is the path without tensor cores (every
    element type, every chip); wider heads (a D = 128 query row does not
    fit a thread's registers) and dynamic head dims are left to
    pe-lower-to-linalg.

    With `tensor-cores` (sm_80 and newer), a bf16/f16 attention with head
    dims that are multiples of 16 up to 128 becomes `pe.gpu_mma_attention`
    on its buffers instead, the tensor-core kernel that pe-gpu-mma-attention
    builds after bufferization; for decode with its keys split across
    blocks, followed by the loop that merges the splits.
  }];
  let options = [
    Option<"tensorCores", "tensor-cores", "bool", /*default=*/"false",
           "bf16/f16 attention to pe.gpu_mma_attention (tensor cores, sm_80+)">,
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_90a\"",
           "The GPU the launches are sized for (its multiprocessors, threads "
           "and registers, pe/Target/GpuChip.h)">,
    Option<"multiprocessors", "multiprocessors", "int64_t", /*default=*/"0",
           "Multiprocessors of the product (0: the chip's reference part, "
           "e.g. 132 for sm_90a, 108 for sm_80)">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::bufferization::BufferizationDialect",
    "::mlir::func::FuncDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect", "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect", "::mlir::tensor::TensorDialect",
    "::mlir::vector::VectorDialect",
  ];
}

def PEGpuMmaAttention : Pass<"pe-gpu-mma-attention"> {
  let summary = "Build the tensor-core flash-attention kernel of pe.gpu_mma_attention (sm_80+)";
  let description = [{
    Every `pe.gpu_mma_attention` becomes one `gpu.launch`: a block of four
    warps per (row tile of 64, KV head, batch), where the rows of a tile
    are (query, head of the KV head's group) pairs, query-major, so that
    the heads of a GQA/MQA group share each K/V tile; 16 rows per warp.
    Q is read once, rotated in f32 (every RoPE style and scaling, from the
    f32 tables) and stored to shared memory as bf16/f16. Per tile of 64
    keys (32 for head dims over 64): K is read, rotated and stored to
    shared memory (copied by `cp.async` without RoPE), V is copied by
    `cp.async` one tile ahead (two stages), S = Q K^T and O += P V run on
    `mma.sync` m16n8k16 with `ldmatrix` fragments (V transposed by
    `ldmatrix.trans`) and f32 accumulators, and the online softmax keeps
    its row max and sum in registers (row reductions by shuffles among the
    four lanes of a row). Tiles that causal/window masks hide from every
    row of the block are skipped; ALiBi and the mask operand are applied
    per score, causal/window masks and the key tail only in the tiles that
    need them. With `splits(n)` the grid also runs over n key ranges, each
    block writing its range's unnormalized output and (max, sum) for a
    merge. Rotated Q/K and the scores never reach global memory.

    With `warpgroup` (sm_90a) the block is one warpgroup and both products
    are warpgroup MMA (`wgmma.mma_async` m64nNk16) on operands that stay in
    shared memory: Q, K, V and the rounded weights P are stored as 8 x 8
    core matrices (no swizzle) and read through matrix descriptors, V as an
    MN-major (transposed) operand.
  }];
  let options = [
    Option<"warpgroup", "warpgroup", "bool", /*default=*/"false",
           "Products on warpgroup MMA (wgmma, sm_90a) instead of mma.sync">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::gpu::GPUDialect",
    "::mlir::memref::MemRefDialect", "::mlir::NVVM::NVVMDialect",
    "::mlir::nvgpu::NVGPUDialect", "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect", "::mlir::LLVM::LLVMDialect",
  ];
}

def PETileRope : Pass<"pe-tile-rope"> {
  let summary = "Lower pe.rope to a vectorized, task-parallel loop nest on buffers (CPU)";
  let description = [{
    Every `pe.rope` whose rotated half (r/2) and pass-through channels
    (D - r) are whole vectors (the f32 lanes of the module's target: 16
    with AVX-512, 8 with AVX2, 4 on NEON) becomes one pass over its input: per
    task (batch row, block of positions) and per head, each row is read
    once, rotated with the f32 cos/sin row of its position (tables shared
    through `tables(...)` or computed once per position), and written once
    with non-temporal stores. A block's table rows stay in L1 across the
    heads. Other shapes are left to pe-lower-to-linalg.
  }];
  let options = [
    Option<"threads", "threads", "int64_t", /*default=*/"1",
           "Threads the tasks run on">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::bufferization::BufferizationDialect",
    "::mlir::linalg::LinalgDialect", "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect", "::mlir::vector::VectorDialect",
  ];
}

#endif // PE_CONVERSION_PASSES_TD
