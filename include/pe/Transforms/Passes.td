//===- Passes.td - code generation passes of pe-mlir --------*- tablegen -*-===//
#ifndef PE_TRANSFORMS_PASSES_TD
#define PE_TRANSFORMS_PASSES_TD

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

def PEDecomposeAggregatedOps : Pass<"pe-decompose-aggregated-ops"> {
  let summary = "Decompose aggregated linalg ops into the ops they stand for";
  let description = [{
    Ops that implement `linalg::AggregatedOpInterface` (`linalg.softmax`,
    the Winograd transforms) are replaced by their own decomposition into
    `linalg.fill` and `linalg.generic` (for softmax: the row maximum,
    `exp(x - max)`, its row sum, the quotient), which tiling,
    vectorization and bufferization handle. Importers emit
    `linalg.softmax` for every softmax that is not raised into
    `pe.attention`; without this pass such a function would not compile.
    An op whose decomposition fails is an error, never left for a later
    conversion to trip over.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect", "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect", "::mlir::tensor::TensorDialect"];
}

def PEBoolVectorsAsBytes : Pass<"pe-bool-vectors-as-bytes"> {
  let summary = "Load and store i1 vectors as bytes";
  let description = [{
    On the LLVM dialect. A memref of i1 holds one byte per element: that is
    how LLVM lays out an array of i1 (constants become `[N x i1]` globals),
    how scalar `i1` loads and stores address it, and how C callers pass
    bool arrays. A `<N x i1>` vector in memory, however, is N bits: a
    vectorized read of an i1 mask or condition would read the bits of its
    first bytes instead of its elements. Every `llvm.load`,
    `llvm.intr.masked.load`, `llvm.store` and `llvm.intr.masked.store` of
    an i1 vector is rewritten to move `<N x i8>`: loads compare the bytes
    with zero, stores zero-extend. (Gathers and scatters already address
    one element per lane.)
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def PETileAndVectorize : Pass<"pe-tile-and-vectorize", "func::FuncOp"> {
  let summary = "Tile linalg ops on tensors to vector-width rows and vectorize them";
  let description = [{
    Every linalg op is tiled with scf.for loops so that each tile covers
    `vector-width` elements of its innermost loop and one element of every
    other loop, then vectorized (masked where the innermost extent is dynamic
    or not a multiple of the width). Unit dimensions are cast away so that the
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

def PEOrderConstants : Pass<"pe-order-constants", "ModuleOp"> {
  let summary = "Name and order the constant globals of bufferization by their first use";
  let description = [{
    One-shot bufferization names the memref.global of each constant tensor
    `__constant_<shape>` (`_0`, `_1`, ... on a repeated shape) in the order
    in which it visits the functions, which varies from run to run. This
    pass renames them `__constant_<n>_<shape>` by the order of their first
    `memref.get_global` in the module and moves them to its top in that
    order, so that the same input always compiles to the same output.
  }];
  let dependentDialects = ["memref::MemRefDialect"];
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

//===----------------------------------------------------------------------===//
// GPU code generation
//===----------------------------------------------------------------------===//

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
    one-thread launch (a reduction to a scalar, for example), and a scalar
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
    attention kernels until their registers spill. A launch with nvgpu ops
    (a tensor-core kernel, unrolled already) gets every constant: the
    nvgpu-to-NVVM conversion before outlining casts a value where it is
    defined, and a cast on the host would be one more kernel parameter.
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
    frees as it frees the CPU build's results) before it returns, freeing
    every device buffer it made. Buffers at the boundary must have the
    identity layout.
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

#endif // PE_TRANSFORMS_PASSES_TD
