//===- Passes.td - NVIDIA GPU code generation passes -------*- tablegen -*-===//
#ifndef PE_CODEGEN_GPU_PASSES_TD
#define PE_CODEGEN_GPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def PEGpuMapParallelLoops : Pass<"pe-gpu-map-parallel-loops", "func::FuncOp"> {
  let summary = "Run every outermost scf.parallel as a GPU kernel over one linear index";
  let description = [{
    Each outermost `scf.parallel` of a host function (as
    `convert-linalg-to-parallel-loops` leaves them: parallel dimensions only,
    reductions as `scf.for` inside) becomes a `gpu.launch` of 1-D blocks of
    `block-size` threads. The iteration space, whatever its rank and however
    dynamic its bounds, is numbered by one linear index `t` in
    `[0, N)` with `N` the product of the trip counts; a thread takes
    `t = blockIdx.x * block-size + threadIdx.x` and then every `t` a grid
    apart (a grid-stride loop, so grids stay within the hardware limit for
    any `N`), and recovers the loop indices with
    `affine.delinearize_index` (the innermost dimension fastest, so
    neighbouring threads touch neighbouring elements). The grid is
    `min(ceil(N / block-size), max-blocks)`; an empty iteration space
    launches nothing (CUDA rejects empty grids).

    The upstream `gpu-map-parallel-loops` + `convert-parallel-loops-to-gpu`
    map at most three dimensions and need constant inner bounds; the pe
    lowerings produce up to five dynamic ones.

    Host work that reads or writes buffers outside parallel loops runs on
    the GPU too, so that host code never dereferences a device pointer: an
    outermost `scf.for` or `memref.store` that touches memory becomes a
    one-thread launch (a reduction to a scalar, for example), except an
    `scf.for` that carries no values, holds no loop and writes no memory
    (an op's run-time check of each entry of an index tensor: its
    iterations are independent), which is launched as a parallel loop; a
    scalar
    `memref.load` copies its element to a device scratch buffer in a
    one-thread launch and from there to a host stack slot (`gpu.memcpy`).

    Every launch names its kernel `@pe_kernels::@<function>_kernel_<n>`, so
    that `gpu-kernel-outlining` puts all kernels of a module in one GPU
    module (one PTX file). Module-level constants a kernel reads
    (`memref.get_global`) are rematerialized inside the launch, so that
    outlining copies the global into the GPU module.
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "Threads per block (1 to 1024)">,
    Option<"maxBlocks", "max-blocks", "int64_t", /*default=*/"65536",
           "Most blocks per launch (1 to 2^31 - 1); more work loops in the grid">,
  ];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect", "::mlir::affine::AffineDialect",
    "::mlir::arith::ArithDialect", "::mlir::scf::SCFDialect",
    "::mlir::memref::MemRefDialect"
  ];
}

def PEGpuVectorizeLoops : Pass<"pe-gpu-vectorize-loops", "func::FuncOp"> {
  let summary = "Compute 16 bytes of the innermost dimension per parallel iteration, as vectors";
  let description = [{
    Before `pe-gpu-map-parallel-loops` turns each iteration of an outermost
    `scf.parallel` into a GPU thread: when the loop's body is straight-line
    arith, math and memref loads and stores, its innermost dimension runs
    0..T with T a multiple of V = 16 / (element bytes of its stores), and
    every store writes [..., innermost index] of a buffer with unit
    innermost stride, one iteration takes V consecutive elements. Values
    that depend on the innermost index become vectors of V lanes (the index
    itself first + [0, V)), the others stay scalars and are broadcast where
    mixed; loads at [..., innermost index] become one vector load and
    stores one vector store (a body with any other lane-dependent load, a
    gather, is left alone). A body whose lane-dependent values include f64
    takes 16 bytes of them (V = 2), so that its registers do not spill. An
    access is marked 16-byte aligned when its buffer is an allocation of the
    function, row-major with an innermost size that is a multiple of V or
    seen through views with static offsets and outer strides that are
    multiples of V (then `ld/st.global.v4`);
    otherwise it keeps its element's alignment. Other loops are unchanged.
  }];
  let dependentDialects = ["::mlir::vector::VectorDialect", "::mlir::arith::ArithDialect"];
}

def PEGpuTensorCoreOccupancy
    : Pass<"pe-gpu-tensor-core-occupancy", "gpu::GPUModuleOp"> {
  let summary = "Give tensor-core kernels a thread's whole register budget";
  let description = [{
    Marks every kernel that holds a warp-level matrix product
    (`nvvm.mma.sync`, `nvvm.wgmma.mma_async`) with `nvvm.minctasm = 1` (PTX `.minnctapersm 1`):
    one block per SM suffices, so ptxas may give each thread up to 255
    registers. Without it ptxas may cap such a kernel at 128 registers to
    fit more blocks, and spill the fragments the kernel keeps in registers.
  }];
  let dependentDialects = ["::mlir::NVVM::NVVMDialect"];
}

def PEGpuSinkConstants : Pass<"pe-gpu-sink-constants", "func::FuncOp"> {
  let summary = "Copy the vector constants a gpu.launch uses into it, before outlining";
  let description = [{
    Canonicalization hoists constants out of `gpu.launch` bodies (which are
    not isolated from above), and kernel outlining would pass each one as
    a kernel parameter. This pass copies the vector ones (the splats of
    `pe-gpu-vectorize-loops`) back in (`sinkOperationsIntoLaunchOp`), so
    that kernels hold them as immediates and a manifest never meets a
    vector among a launch's operands. Scalar sizes stay parameters: as
    immediates they let LLVM unroll the reduction loops of the reference
    attention kernels until their registers spill. A tensor-core kernel
    (a launch that pe-gpu-mma-attention marks `pe.tensor_core_kernel`, or
    any launch with nvgpu ops; unrolled already) gets every constant: the
    nvgpu-to-NVVM conversion before outlining casts a value where it is
    defined, a cast on the host would be one more kernel parameter, and
    its inline assembly takes immediates.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def PEGpuDeviceMemory : Pass<"pe-gpu-device-memory", "func::FuncOp"> {
  let summary = "Place the buffers of host functions in GPU memory";
  let description = [{
    After `pe-gpu-map-parallel-loops`, the host functions of a GPU module
    work on device memory: their memref arguments are device pointers, and
    so are the buffers they allocate. This pass rewrites, outside
    `gpu.launch`:
    - `memref.alloc` -> `gpu.alloc`, `memref.dealloc` -> `gpu.dealloc`;
    - `memref.copy` between identity layouts -> `gpu.memcpy` (strided
      copies are loops by then: `pe-lower-strided-copies`).
    Host code then never dereferences a device pointer: every other access
    runs in a kernel (`pe-gpu-map-parallel-loops`).
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect", "::mlir::memref::MemRefDialect"];
}

def PEGpuHostBuffers : Pass<"pe-gpu-host-buffers", "func::FuncOp"> {
  let summary = "Public host functions of a GPU module take and return host memory";
  let description = [{
    After `pe-gpu-device-memory` the functions of a GPU module work on device
    pointers, which suits callers whose tensors already live on the GPU
    (PyTorch, CuPy). For a caller that should switch from the CPU build to
    the GPU build and change nothing else, this pass makes each public
    function copy its memref arguments to new device buffers on entry and
    its memref results to new host buffers (`memref.alloc`, which the caller
    frees as it frees the CPU build's results) before it returns, and the
    device copies of the arguments it updates in place
    (`pe.in_place_arguments`, set by `pe-in-place-results`: KV caches) back
    into the caller's buffers, freeing every device buffer it made. Buffers
    at the boundary must have the identity layout.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect", "::mlir::memref::MemRefDialect"];
}

def PEGpuLaunchToLoops : Pass<"pe-gpu-launch-to-loops", "func::FuncOp"> {
  let summary = "Run GPU launches as sequential loops on the CPU (checking a GPU schedule)";
  let description = [{
    Every `gpu.launch` (before outlining) becomes scf.for loops over its
    blocks and threads running the kernel body in sequence, with the block
    and thread ids and the grid and block sizes bound; `gpu.alloc`,
    `gpu.dealloc` and `gpu.memcpy` become memref ops. The result compiles
    with the CPU pipeline's lowering, so the index arithmetic, guards,
    vector accesses and deferred error reports of the GPU kernels run - and
    are checked against a reference - without a GPU (`pe-gpu-on-cpu-pipeline`,
    `pe-compile --target=gpu-on-cpu`). Kernels with barriers or dynamic
    shared memory, whose threads cannot run one after another, are refused.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect"];
}

def PEGpuLowerMath : Pass<"pe-gpu-lower-math"> {
  let summary = "Math in GPU kernels as PTX instructions and polynomials, not libdevice calls";
  let description = [{
    The NVVM conversion turns every `math` op into a call of libdevice
    (`__nv_fmaf`, `__nv_sinf`, ...), which only a CUDA toolkit provides; PTX
    written without one would not load. This pass (which `pe-gpu-pipeline`
    runs on each GPU module; on any op it rewrites the math inside, so the
    same numerics can be checked on the CPU):
    - writes `math.fma` as the LLVM intrinsic (PTX `fma.rn`), and
      `roundeven`, `floor`, `ceil`, `trunc`, `absf`, `copysign` on scalars
      exactly in arith (adding and subtracting copysign(2^p, x) rounds to
      nearest even; sign operations on the bits);
    - computes f16/bf16 math in f32, and f32 transcendentals (`sin`, `cos`,
      `exp`, `log`, `tanh`, `erf`, ...) with upstream's polynomial
      approximations (`populateMathPolynomialApproximationPatterns`).
    - f64 `exp` (run-time RoPE frequencies) with a range reduction by a
      two-part ln2 and a degree-13 polynomial (within 2 ulp).
    What remains (other f64 transcendentals, `sqrt`) is left to libdevice,
    which `gpu-module-to-binary` links when it finds a CUDA toolkit.
  }];
  let dependentDialects = [
    "::mlir::LLVM::LLVMDialect", "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect", "::mlir::vector::VectorDialect"
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

def PEGpuTileAppendKv : Pass<"pe-gpu-tile-append-kv"> {
  let summary = "Lower pe.append_kv to a parallel loop over the new rows that rotates K as it writes it (GPU)";
  let description = [{
    Every `pe.append_kv` whose key and value rows are whole chunks of 16
    bytes of the cache (and whose rope, if any, has one position stream and
    rotated pairs of whole chunks) becomes two parallel loops:

    1. over the tokens: the slot each one writes, or -1 where its slot is
       -1 or a later token of its batch row names the same slot (tokens
       are written in order, so the later one is kept);
    2. an `scf.parallel` over (batch row, token, KV head): a thread reads
       its key row in 16-byte chunks, rotates them in f32 with its
       position's cos/sin row (the tables computed once, as pe.rope computes
       them) and writes them into the row of its slot, then copies the value
       row. The rows written are disjoint, so the order of the threads does
       not matter. The caches are the buffers bufferization gives them:
       the caller's for a `pe.in_place` argument, another op's result in
       place, a copy of an argument that is not `pe.in_place`. So that no
       other reader can share them, each cache must have this op as its
       only use (the caches of a serving step's append do).

    The op's run-time checks (sizes, slots in [-1, capacity), every buffer
    16-byte aligned) come first. Other shapes and caches with other uses
    are left to pe-lower-to-linalg, whose loop over the tokens runs in one
    GPU thread.
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
    Every `pe.attention` with static head counts and head dims D, Dv <= 1024
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
    element type, every chip). Above 64 channels (a D = 128 query row does
    not fit a thread's registers) the dot product steps through the
    channels in loops, reading the query again for every key; wider heads
    and dynamic head dims are left to pe-lower-to-linalg.

    Every `pe.paged_attention` with static head counts and head dims up
    to 1024 becomes the same thread over a paged cache (above 64 channels
    the thread reads its query's channels again for every key instead of
    holding them in registers): one `scf.parallel`
    over (packed query row t, query head, value chunk, key split); the
    thread finds its sequence b by bisecting `cu_seqlens`, rotates its query
    at position `kv_lens[b] - cu_seqlens[b + 1] + t` (tables of the rows'
    positions), and reads its sequence's keys (stored rotated) and values
    in place through the block table. The keys split into ranges of the
    block table's capacity (at least 32 keys, as many as the chip needs
    threads; ranges past a sequence's keys are empty), merged by a second
    loop when there is more than one. Decode, ragged and chunked prefill
    run the same grid. The op's run-time checks come first.

    With `tensor-cores` (sm_80 and newer), a bf16/f16 attention with head
    dims that `pe_gpu.mma_attention` takes (multiples of 16 up to 256; value
    heads up to 512 with query/key heads up to 576 where the chip allows a
    block the shared memory of their tiles) becomes `pe_gpu.mma_attention`
    on its buffers instead, the tensor-core kernel that pe-gpu-mma-attention
    builds after bufferization; for decode with its keys split across
    blocks, followed by the loop that merges the splits.
  }];
  let options = [
    Option<"tensorCores", "tensor-cores", "bool", /*default=*/"false",
           "bf16/f16 attention to pe_gpu.mma_attention (tensor cores, sm_80+)">,
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_90a\"",
           "The GPU the launches are sized for (its multiprocessors, threads "
           "and registers, pe/Target/GpuChip.h)">,
    Option<"multiprocessors", "multiprocessors", "int64_t", /*default=*/"0",
           "Multiprocessors of the product (0: the chip's reference part, "
           "e.g. 132 for sm_90a, 108 for sm_80)">,
    Option<"warpgroupMma", "warpgroup-mma", "bool", /*default=*/"true",
           "Whether pe-gpu-mma-attention will use warpgroup MMA where the "
           "chip has it (off: mma.sync, whose wide blocks decide where K is "
           "rotated)">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::bufferization::BufferizationDialect",
    "::mlir::func::FuncDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect", "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect", "::mlir::tensor::TensorDialect",
    "::mlir::vector::VectorDialect", "::mlir::pe_gpu::PEGPUDialect",
  ];
}

def PEGpuMmaAttention : Pass<"pe-gpu-mma-attention"> {
  let summary = "Build the tensor-core flash-attention kernel of pe_gpu.mma_attention (sm_80+)";
  let description = [{
    Every `pe_gpu.mma_attention` becomes one `gpu.launch`: a block of four
    warps (eight, two channel groups that each take half of the head dims,
    for value heads over 256 channels) per (row tile of 64, KV head,
    batch), where the rows of a tile
    are (query, head of the KV head's group) pairs, query-major, so that
    the heads of a GQA/MQA group share each K/V tile; 16 rows per warp.
    Q is read once, rotated in f32 (every RoPE style and scaling, from the
    f32 tables) and stored to shared memory as bf16/f16. Per tile of 64
    keys (32 for head dims over 64, 16 for value heads over 128): K is
    read, rotated and stored to
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
    MN-major (transposed) operand. With `warp-specialize` too, prefill
    (default or explicit positions) with K read as it is and more than 64
    rows (or a dynamic query count) takes blocks of three
    warpgroups over 128 rows: a producer copies K and V by `cp.async` into
    four stages, each with a full and an empty mbarrier, and two consumers
    of 64 rows run the tile loop on them, issuing S of a tile with P V of
    the tile before (`wgmma.wait_group 1` before the softmax) and taking
    turns to issue on named barriers; `setmaxnreg` moves registers from
    the producer to the consumers (24 and 240 with 64-key tiles, 40 and 232
    with 32-key tiles or explicit positions under masks). With `tma` too, the producer is one thread that
    loads each stage by TMA (`cp.async.bulk.tensor` on the stage's full
    mbarrier, 128-byte swizzle, tensor maps of K and V encoded on the host)
    where the head dims are multiples of 64 and K and V have contiguous
    channels; the consumers read those stages through swizzled matrix
    descriptors.
  }];
  let options = [
    Option<"warpgroup", "warpgroup", "bool", /*default=*/"false",
           "Products on warpgroup MMA (wgmma, sm_90a) instead of mma.sync">,
    Option<"warpSpecialize", "warp-specialize", "bool", /*default=*/"true",
           "With warpgroup: prefill kernels as a producer warpgroup and two "
           "consumer warpgroups of 64 rows (mbarrier stages, setmaxnreg)">,
    Option<"tma", "tma", "bool", /*default=*/"false",
           "With warp-specialize: K and V loaded by TMA with 128-byte swizzle "
           "(head dims that are multiples of 64) instead of cp.async">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::gpu::GPUDialect",
    "::mlir::memref::MemRefDialect", "::mlir::NVVM::NVVMDialect",
    "::mlir::nvgpu::NVGPUDialect", "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect", "::mlir::LLVM::LLVMDialect",
  ];
}

#endif // PE_CODEGEN_GPU_PASSES_TD
