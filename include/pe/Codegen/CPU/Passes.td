//===- Passes.td - CPU code generation passes --------------*- tablegen -*-===//
#ifndef PE_CODEGEN_CPU_PASSES_TD
#define PE_CODEGEN_CPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def PESetTarget : Pass<"pe-set-target", "ModuleOp"> {
  let summary = "Name the CPU the module is compiled for (its llvm.target attribute)";
  let description = [{
    Attaches `llvm.target = #llvm.target<triple = ..., chip = ...,
    features = ...>` to the module: the target that every later pass
    schedules for (`pe-tile-attention`, `pe-tile-rope`,
    `pe-tile-and-vectorize`, `pe-expand-bf16-conversions` read it) and that
    code generation compiles for (and, with `sve-vector-bits`, the module
    attribute `pe.sve_vector_bits`). `triple` empty means the host's; `cpu`
    empty or `native` means the host CPU with the host's features, to which
    `features` adds (`+a,-b`). With every option empty, a module that
    already names a target keeps it and any other gets the host. A target
    LLVM cannot build (an unknown triple or CPU) is an error.
  }];
  let options = [
    Option<"triple", "triple", "std::string", /*default=*/"\"\"",
           "Target triple, e.g. aarch64-linux-gnu (default: the host's)">,
    Option<"cpu", "cpu", "std::string", /*default=*/"\"\"",
           "Target CPU, an LLVM CPU name (default: the host CPU)">,
    Option<"features", "features", "std::string", /*default=*/"\"\"",
           "Target features added to the CPU's, e.g. +avx512f,-avx512bf16">,
    Option<"sveVectorBits", "sve-vector-bits", "int64_t", /*default=*/"0",
           "SVE vector length the code is built for (vector-length specific, "
           "a power of two from 128 to 2048; attribute pe.sve_vector_bits); "
           "0: any length">,
  ];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def PESetLLVMTarget : Pass<"pe-set-llvm-target", "ModuleOp"> {
  let summary = "Set the target CPU and features of every LLVM function";
  let description = [{
    Writes `target_cpu` and `target_features` on every `llvm.func`, so that
    LLVM IR translated from the module (and `llc` on it) generates code for
    that CPU, e.g. `cpu=sapphirerapids` or `features=+avx512f,+avx512bf16`.
    Empty options take both from the module's `llvm.target` attribute
    (`pe-set-target`); without options or attribute the functions are left
    as they are. A module's `pe.sve_vector_bits` becomes every function's
    `vscale_range`, so that LLVM computes its fixed-width vectors with SVE
    instructions of that length.
  }];
  let options = [
    Option<"cpu", "cpu", "std::string", /*default=*/"\"\"",
           "Target CPU (an LLVM CPU name)">,
    Option<"features", "features", "std::string", /*default=*/"\"\"",
           "Target features, e.g. +avx512f,+avx512bf16">,
  ];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def PETileAndVectorize : Pass<"pe-tile-and-vectorize", "func::FuncOp"> {
  let summary = "Tile linalg ops on tensors to vector-width rows and vectorize them";
  let description = [{
    Every linalg op is tiled with scf.for loops so that each tile covers
    `vector-width` elements of its innermost loop and one element of every
    other loop, then vectorized (masked where the innermost extent is dynamic
    or not a multiple of the width). An elementwise op on static shapes
    (identity or scalar operands only) is first collapsed to one loop over
    its elements, so a partial vector is masked once per op, not once per
    row. Unit dimensions are cast away so that the
    innermost computation is on 1-D vectors. The default width is one vector
    register of f32 of the module's target (`llvm.target`, else the host):
    `vector<16xf32>` with AVX-512, `vector<8xf32>` with AVX2,
    `vector<4xf32>` on NEON.

    Ops that fail to vectorize stay tiled and are lowered to scalar loops
    later; the pass never fails on them.
  }];
  let options = [
    Option<"vectorWidth", "vector-width", "int64_t", /*default=*/"0",
           "Elements per vector in the innermost loop (0: the f32 lanes of "
           "the target's vector registers)">,
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

def PELowerBf16Dot : Pass<"pe-lower-bf16-dot", "ModuleOp"> {
  let summary = "Dot products of bf16 pairs as the target's instruction";
  let description = [{
    Rewrites every `vector.contract` that is a dot product of bf16 pairs,
    `acc[i] + lhs[i][0] * rhs[i][0] + lhs[i][1] * rhs[i][1]` with
    `lhs, rhs : vector<N x 2 x bf16>` and `acc : vector<N x f32>` (the form
    the bf16 attention kernels emit, `buildBf16PairDot`), for the module's
    target (its `llvm.target`, else the host):

    - x86 with AVX512-BF16: `x86vector.avx512.dot` (`vdpbf16ps`) on 16 f32
      lanes;
    - AArch64 with BF16: `llvm.aarch64.neon.bfdot` on 2 or 4 f32 lanes (the
      ArmNeon dialect has no op for BFDOT; the intrinsic call declares no
      memory effects, which buffer deallocation rejects, so the pass runs
      after bufferization);
    - anywhere else: even and odd bf16 lanes extended to f32 and two FMAs
      per lane, `fma(l[2i+1], r[2i+1], fma(l[2i], r[2i], acc[i]))`.

    The instructions round and treat subnormal inputs as their hardware
    does: results agree with the FMAs to f32 rounding of the products, not
    bit for bit. Other contractions are left as they are.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::math::MathDialect",
                           "::mlir::vector::VectorDialect", "::mlir::LLVM::LLVMDialect",
                           "::mlir::x86vector::X86VectorDialect"];
}

def PEExpandBf16Conversions : Pass<"pe-expand-bf16-conversions", "ModuleOp"> {
  let summary = "Round f32 to bf16 in integer arithmetic where the target has no instruction for it";
  let description = [{
    Without AVX512-BF16 or AVX-NE-CONVERT (x86) or BF16 (AArch64), LLVM
    lowers an f32 -> bf16 truncation to a call of a compiler-rt helper
    (`__truncsfbf2`) that a kernel library does not link. This pass rewrites
    every `arith.truncf` from f32 to bf16 and `arith.extf` from bf16 to f32
    (scalars and vectors) into integer arithmetic (`buildBf16Bits`): round
    to nearest even (f32 subnormals included), infinities kept and overflow
    to infinity as IEEE rounding gives them, a NaN the quiet NaN of its sign
    and leading payload (as vcvtneps2bf16 gives it). Upstream's
    `populateExpandBFloat16Patterns` computes the same but chooses the NaN
    case by a select of the 16-bit results, which LLVM turns into a select
    of bf16 values and, on CPUs without bf16 instructions, back into calls
    of the helper. Targets with a fixed SVE vector length take the integer
    rounding too: LLVM 22 cannot select the element extracts of its SVE
    conversions of fixed-width bf16 vectors. On a target with the instruction the module is
    left as it is. The target is the module's `llvm.target` (the host
    without one).
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def PEBf16BitsAsI16 : Pass<"pe-bf16-bits-as-i16", "ModuleOp"> {
  let summary = "Move bf16 values as i16";
  let description = [{
    On the LLVM dialect, after `pe-expand-bf16-conversions`: every op that
    only moves bits (loads and stores, masked loads and stores, gathers and
    scatters, selects, shuffles, element inserts and extracts) and has a
    bf16 operand or result moves i16 instead, with bitcasts around it that
    LLVM folds away. LLVM legalizes bf16 values on CPUs without bf16
    instructions through f32, so an op such as a masked store of bf16
    lanes, which AVX2 scalarizes, would otherwise round each lane through a
    call of `__truncsfbf2`; and LLVM 22's SVE lowering of fixed-width
    vectors cannot select an element extract of bf16 (it stops with
    "Cannot select: extract_vector_elt"). On i16 the same instructions move
    the same bits on every target, so the pass runs on all of them.
    Numerics are unchanged: only bits move.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def PETileAttention : Pass<"pe-tile-attention"> {
  let summary = "Lower pe.attention to a flash-attention loop nest on buffers (CPU)";
  let description = [{
    Every `pe.attention` with static head dims becomes a tiled kernel that
    never forms the Sq x Skv score matrix. The work is split into tasks
    (batch row, KV head, group of query blocks[, range of key blocks]) run
    by an `scf.parallel` (OpenMP with the pipeline's `threads`). A block
    holds the rows (query i, head g of the KV head's group): the K/V tiles
    are loaded once for all heads of the group (GQA/MQA), and a prefill task
    packs each tile once for every block of its group.

    Per block: the query rows are rotated (fused RoPE, from f32 cos/sin
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

    Keys and values that are `pe.gather_pages` of the same sequence of one
    block table (what pe-expand-paged-attention builds) are read in place:
    the kernel takes the paged caches, the block table, the sequence and the
    length, and finds key row j at page block_table[sequence, j / page_size],
    row j mod page_size; the gathers' run-time checks come first.

    A shared key block (`shared_key`) is read in place while each key tile
    is packed; where the kernels cannot (keys over pages, a rotated range
    spanning the head's channels and the block's), the pass writes it into
    every key head first (pe-expand-shared-key).

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
           "micro-tile's keys (of 96 with amx, of 2 for decode); 0: the target's "
           "(FMA prefill: the keys whose rows fit 3/4 of L1d, e.g. 48 at D = 128 "
           "with 48 KiB; bf16 pair kernels: 96; decode: 16 on x86, 32 over hnd "
           "pages and elsewhere), fewer where the task's scratch would not fit "
           "half the target's L2">,
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

def PETilePagedDecode : Pass<"pe-tile-paged-decode"> {
  let summary = "Lower decode steps of pe.paged_attention to one batched, load-balanced kernel (CPU)";
  let description = [{
    Runs before `pe-expand-paged-attention`. A `pe.paged_attention` whose
    one-query decode plan is `pe-tile-attention`'s decode kernel becomes

      scf.if (every sequence has exactly one query)
        -> the op's run-time checks, then the batched decode kernel over the
           whole batch
      else
        -> the op itself, which pe-expand-paged-attention expands (with its
           checks)

    The batched kernel reads the pages in place (block table row b holds
    sequence b's pages, kv_lens[b] its keys; query position kv_lens[b] - 1).
    The query is rotated by the op's rope first (a pe.rope of the [T, Hq, 1,
    D] queries); a soft mask [T, H|1, K] is read as [T, H|1, 1, K], row b
    over sequence b's first kv_lens[b] columns. The work is balanced across
    threads whatever the lengths: the key blocks of every segment (a
    sequence, or a (sequence, KV head) where a task holds one head) are laid
    out in one list of U units and thread w of n = min(threads, U) takes
    units [w U / n, (w + 1) U / n); a segment that one thread holds whole is
    written directly, the pieces of one shared by threads are (O, m, l)
    partials that a second loop combines
    (O = sum_s exp(m_s - M) O_s / sum_s exp(m_s - M) l_s).
    A batch of many short sequences runs in one parallel region instead of
    one per sequence; a batch of long and short ones keeps every thread
    streaming the same number of keys.
  }];
  let options = [
    Option<"threads", "threads", "int64_t", /*default=*/"1",
           "Threads the batch is split over">,
    Option<"blockKeys", "block-keys", "int64_t", /*default=*/"0",
           "Keys per streamed K/V tile (pe-tile-attention's block-keys)">,
    Option<"bf16Dot", "bf16-dot", "bool", /*default=*/"false",
           "bf16 scores on bf16 dot products (pe-tile-attention's bf16-dot)">,
  ];
  let dependentDialects = [
    "::mlir::LLVM::LLVMDialect", "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect", "::mlir::func::FuncDialect",
    "::mlir::math::MathDialect", "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect", "::mlir::tensor::TensorDialect",
    "::mlir::vector::VectorDialect",
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

def PETileAppendKv : Pass<"pe-tile-append-kv"> {
  let summary = "Lower pe.append_kv to a vector loop that rotates each key as it writes it (CPU)";
  let description = [{
    Every `pe.append_kv` whose rows are whole vectors (the rotated half and
    the pass-through channels too; one position stream) becomes one loop
    over its tokens: each key row is read once, rotated in registers with
    its position's cos/sin row (the rows of the tokens' positions computed
    once, before the loop) and written into its slot; each value row is
    copied. Slots are checked first (-1 skips a token; any other slot
    outside the cache is a run-time error). The caches stay tensors written
    with `vector.transfer_write`, so bufferization updates them in place.
    Other appends are left to pe-lower-to-linalg, which rotates the new keys
    into a temporary before it copies them.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::bufferization::BufferizationDialect",
    "::mlir::linalg::LinalgDialect", "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect", "::mlir::vector::VectorDialect",
  ];
}

#endif // PE_CODEGEN_CPU_PASSES_TD
