"""pe-mlir CPU benchmarks: timings side by side with the machine's limits.

    .venv/bin/python benchmarks/run.py [--quick] [--out benchmarks/results]

Every case is timed in one run as median (min, max) of >= 5 runs after a
warm-up (short cases up to 50 runs): the compiled code with fusion and the pe-tile-* kernels
(pe-cpu-pipeline defaults), the reference lowering (fuse=false,
tile-attention=false, tile-rope=false: the pe-lower-to-linalg path), the
float64 numpy reference, and PyTorch (scaled_dot_product_attention with the
RoPE applied as Hugging Face does, 2 threads) when torch is installed. The
machine's limits are measured in the same run: the f32 FMA peak of a compiled
FMA loop written for the target's vector registers (independent chains of
its widest vectors, as many as its register file holds; checked against
clock x 2 FMA pipes x lanes), the bf16 dot-product peak of a compiled
vdpbf16ps loop (where the CPU has avx512_bf16), a STREAM-like copy bandwidth
(numpy) and the read bandwidth of compiled read-only sweeps (the best of
three prefetch strategies; 1 and 2 threads), both before and after the
cases: a run whose limits moved by more than 10 % is marked contended. The load average before and after is
recorded. Each case runs in its own process, so its peak RSS is its own.
The report ends with the CPU targets (CPU_TARGETS, by the ISA of the
kernels: f32 prefill S = 2048 and 512 as fractions of the FMA peak, decode
of the read bandwidth, 1.5x ggml), each marked met or not beside the limit
measured in the same run.
ggml's RoPE + flash attention (llama.cpp's CPU path, f32, same threads) is
timed beside pe's prefill and decode when benchmarks/ggml/build.sh has
built it.

`--mcpu=CPU` compiles every pe contender for another CPU of this machine's
ISA family (e.g. x86-64-v3 for AVX2 kernels on an AVX-512 machine) and
probes the FMA peak with that CPU's vectors: a stated tuning, reported as
such.
The KV-cache cases (paged decode, append, chunked prefill) time the same work
on dense tensors beside the paged form; the append is timed from Python and, in
its own row, from a C program (benchmarks/c/append_timer.c, linked with the
library pe-compile writes), whose per-call time has no Python in it.
The compile time of a 32-layer model (and 1, 8, 16 layers) is measured too,
and, with transformers installed, a model's forward with each attention
implementation (eager, SDPA, pe, pe with RoPE fused).
Writes results.json, results.md and results.png (matplotlib) to --out.

Process settings: the defaults (glibc's malloc as it is), except that
OpenBLAS uses 1 thread (its idle threads spin and would take cores from the 2
measured threads). The compiled contenders write into caller-provided result
arrays (the `_into` entries, `runner.Module.call(..., out=...)`), allocated
once per case, as a serving loop does; the RoPE case also times the
allocating entry (`fused_alloc`: fresh result buffers each call, whose pages
fault on first touch).
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy

import argparse
import ctypes
import json
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from pe import reference, runner  # noqa: E402
from pe.ir import attention_function  # noqa: E402
from pe.testing import BF16_KERNELS, bf16_kernel_missing  # noqa: E402

REFERENCE_LOWERING = ["--fuse=false", "--tile-attention=false", "--tile-rope=false"]

LLAMA3 = {"type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
          "original_max_position_embeddings": 8192}
# The compiled code runs on both cores (OpenMP), as PyTorch does; --mcpu
# (PE_BENCH_MCPU in the case processes) is added to every pe compilation.
THREADS = "--num-threads=2"
MCPU = os.environ.get("PE_BENCH_MCPU", "")
TARGET_ARGS = [f"--mcpu={MCPU}"] if MCPU else []
GGML = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build", "ggml",
                    "ggml_attention")


def compile_pe(ir, extra_args=()):
    """runner.compile with the benchmark's target (--mcpu)."""
    return runner.compile(ir, extra_args=[*extra_args, *TARGET_ARGS])


def target_description(args=()):
    """`pe-compile --print-target` for the benchmark's target."""
    out = subprocess.run([runner.PE_COMPILE, "--print-target", *TARGET_ARGS, *args],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)
ROPE_ATTR = ("#pe.rope<theta = 500000.0, rotary_dim = 128, scaling = #pe.llama3<factor = 8.0, "
             "original_max_position_embeddings = 8192>>")


def timeit(fn, repeat):
    """Median (min, max) of at least `repeat` runs after a warm-up; short cases
    run more often (up to 50 runs within about a second) to steady the median."""
    start = time.perf_counter()
    fn()  # warm-up
    first = time.perf_counter() - start
    repeat = max(repeat, min(50, int(1.0 / max(first, 1e-6))))
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return {"median_ms": 1e3 * statistics.median(times), "min_ms": 1e3 * min(times),
            "max_ms": 1e3 * max(times), "runs": repeat}


def in_threads(fn, threads):
    """Runs fn in `threads` Python threads at once (compiled code and numpy
    release the GIL)."""
    def run():
        workers = [threading.Thread(target=fn) for _ in range(threads)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
    return run


# ---------------------------------------------------------------------------
# Machine limits
# ---------------------------------------------------------------------------

def fma_ir(lanes, chains, name="fma_peak"):
    """`chains` independent FMA chains of vector<lanes x f32>, summed at the end:
    x <- x a + b with x carried (x a + b with constant a and b would be folded
    into an add of the constant a b, which measures the adder instead); x
    tends to b / (1 - a) = 2, a normal number all along."""
    v = f"vector<{lanes}xf32>"
    init = ", ".join(f"%x{i} = %z" for i in range(chains))
    types = ", ".join([v] * chains)
    body = "\n".join(f"    %y{i} = vector.fma %x{i}, %a, %b : {v}" for i in range(chains))
    sums = [f"  %s0 = arith.addf %r#0, %r#1 : {v}"]
    sums += [f"  %s{i - 1} = arith.addf %s{i - 2}, %r#{i} : {v}" for i in range(2, chains)]
    return f"""
func.func @{name}(%n: index) -> {v} {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = arith.constant dense<0.5> : {v}
  %b = arith.constant dense<1.0> : {v}
  %z = arith.constant dense<0.0> : {v}
  %r:{chains} = scf.for %i = %c0 to %n step %c1 iter_args({init}) -> ({types}) {{
{body}
    scf.yield {", ".join(f"%y{i}" for i in range(chains))} : {types}
  }}
{chr(10).join(sums)}
  return %s{chains - 2} : {v}
}}
"""


def fma_chains(target):
    """Independent chains that hide the FMA latency (4-5 cycles x 2 pipes)
    and fit the register file with the two constant operands and room to
    spare: 12 on 16- and 32-register ISAs."""
    return min(12, target["vector_registers"] - 4)


FMA_IR = fma_ir(16, 12)


# vdpbf16ps (x86vector.avx512.dot): acc[i] += a[2i] b[2i] + a[2i+1] b[2i+1],
# 32 bf16 products = 64 flops per instruction; 12 independent chains.
DOT_IR = FMA_IR.replace("@fma_peak", "@dot_peak").replace(
    "dense<0.5> : vector<16xf32>", "dense<1.0> : vector<32xbf16>").replace(
    "dense<1.0> : vector<16xf32>", "dense<0.5> : vector<32xbf16>")
DOT_IR = "\n".join(
    line.replace("vector.fma %x", "x86vector.avx512.dot %x").replace(
        " : vector<16xf32>", " : vector<32xbf16> -> vector<16xf32>")
    if "vector.fma" in line else line for line in DOT_IR.splitlines())

def amx_ir(rounds=32):
    """tdpbf16ps (amx.tile_mulf: a 16 x 16 f32 tile += 16 x 32 bf16 x 32 x 16
    bf16, 16384 flops) on tiles that stay in registers: per step two operand
    tiles loaded from L1, four accumulators zeroed, `rounds` x 4 products,
    four stores. Tiles cannot cross a loop iteration, so each step starts
    afresh."""
    t_in, t_acc = "!amx.tile<16x32xbf16>", "!amx.tile<16x16xf32>"
    lines = [
        "func.func private @pe_runtime_enable_amx()",
        "func.func @amx_peak(%n: index) -> vector<16xf32> {",
        "  call @pe_runtime_enable_amx() : () -> ()",
        "  %c0 = arith.constant 0 : index",
        "  %c1 = arith.constant 1 : index",
        "  %c16 = arith.constant 16 : index",
        "  %ones = arith.constant dense<1.0> : vector<32xbf16>",
        "  %src = memref.alloca() {alignment = 64 : i64} : memref<16x32xbf16>",
        "  %dst = memref.alloca() {alignment = 64 : i64} : memref<16x16xf32>",
        "  scf.for %r = %c0 to %c16 step %c1 {",
        "    vector.store %ones, %src[%r, %c0] : memref<16x32xbf16>, vector<32xbf16>",
        "  }",
        "  scf.for %i = %c0 to %n step %c1 {",
        f"    %a = amx.tile_load %src[%c0, %c0] : memref<16x32xbf16> into {t_in}",
        f"    %b = amx.tile_load %src[%c0, %c0] : memref<16x32xbf16> into {t_in}",
    ]
    acc = []
    for t in range(4):
        lines.append(f"    %z{t} = amx.tile_zero : {t_acc}")
        acc.append(f"%z{t}")
    for r in range(rounds):
        for t in range(4):
            lines.append(f"    %p{t}_{r} = amx.tile_mulf %a, %b, {acc[t]} : {t_in}, {t_in}, {t_acc}")
            acc[t] = f"%p{t}_{r}"
    lines += [f"    amx.tile_store %dst[%c0, %c0], {a} : memref<16x16xf32>, {t_acc}" for a in acc]
    lines += ["  }",
              "  %v = vector.load %dst[%c0, %c0] : memref<16x16xf32>, vector<16xf32>",
              "  return %v : vector<16xf32>", "}"]
    return "\n".join(lines) + "\n"


# The read bandwidth: sweeps of 4 independent 64-byte loads a step, summed,
# with prefetches (bytes ahead, locality) of every line read: as the decode
# kernels issue them (4 KiB ahead into L1, 6 KiB into L2: AttentionTask's
# prefetchAhead), 32 KiB ahead, or none (the hardware prefetchers alone).
# The limit is the best of them.
READ_PREFETCHES = {"none": (), "kernel": ((4096, 3), (6144, 2)), "far": ((32768, 3),)}
READ_PROBE = ("the best of compiled read-only sweeps: no prefetch, the decode kernels' "
              "prefetches, 32 KiB ahead")


def read_ir(prefetches):
    """A read-only sweep, 4 independent sums of 16-lane vectors (256 bytes
    an iteration), with `prefetches` ahead of each of its 4 lines."""
    lines = []
    for p, (ahead, locality) in enumerate(prefetches):
        lines.append(f"    %f{p} = arith.addi %i, %ahead{p} : index")
        for q in range(4):
            lines.append(f"    %f{p}_{q}a = arith.addi %f{p}, %c{16 * q} : index")
            lines.append(f"    %f{p}_{q} = arith.minsi %f{p}_{q}a, %last : index")
            lines.append(f"    memref.prefetch %m[%f{p}_{q}], read, locality<{locality}>, data"
                         " : memref<?xf32>")
    aheads = "\n".join(f"  %ahead{p} = arith.constant {ahead // 4} : index"
                        for p, (ahead, _) in enumerate(prefetches))
    body = "\n".join(lines)
    return f"""
func.func @read_peak(%x: tensor<?xf32>) -> vector<16xf32> {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %c48 = arith.constant 48 : index
  %c64 = arith.constant 64 : index
  %pad = arith.constant 0.0 : f32
  %z = arith.constant dense<0.0> : vector<16xf32>
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %m = bufferization.to_buffer %x read_only : tensor<?xf32> to memref<?xf32>
  %last = arith.subi %n, %c1 : index
{aheads}
  %r:4 = scf.for %i = %c0 to %n step %c64 iter_args(%a0 = %z, %a1 = %z, %a2 = %z, %a3 = %z)
      -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {{
{body}
    %i1 = arith.addi %i, %c16 : index
    %i2 = arith.addi %i, %c32 : index
    %i3 = arith.addi %i, %c48 : index
    %v0 = vector.transfer_read %x[%i], %pad {{in_bounds = [true]}} : tensor<?xf32>, vector<16xf32>
    %v1 = vector.transfer_read %x[%i1], %pad {{in_bounds = [true]}} : tensor<?xf32>, vector<16xf32>
    %v2 = vector.transfer_read %x[%i2], %pad {{in_bounds = [true]}} : tensor<?xf32>, vector<16xf32>
    %v3 = vector.transfer_read %x[%i3], %pad {{in_bounds = [true]}} : tensor<?xf32>, vector<16xf32>
    %b0 = arith.addf %a0, %v0 : vector<16xf32>
    %b1 = arith.addf %a1, %v1 : vector<16xf32>
    %b2 = arith.addf %a2, %v2 : vector<16xf32>
    %b3 = arith.addf %a3, %v3 : vector<16xf32>
    scf.yield %b0, %b1, %b2, %b3 : vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>
  }}
  %s0 = arith.addf %r#0, %r#1 : vector<16xf32>
  %s1 = arith.addf %r#2, %r#3 : vector<16xf32>
  %s = arith.addf %s0, %s1 : vector<16xf32>
  return %s : vector<16xf32>
}}
"""


def into(mod, name, *args):
    """A call of `name` that writes its results into arrays allocated here once
    (64-byte aligned, so the kernels write them in place)."""
    outs = []
    for t in mod.entries[name].results:
        dtype = np.dtype(runner._NUMPY[t.element])
        n = int(np.prod(t.shape)) * dtype.itemsize
        raw = np.empty(n + 64, np.uint8)
        start = (-raw.ctypes.data) % 64
        outs.append(raw[start:start + n].view(dtype).reshape(t.shape))
    return lambda: mod.call(name, *args, out=outs)


def _loop_peak(ir, name, flops_per_iteration, repeat, args=(), n=20_000_000):
    """GFLOP/s of a compiled loop `name(n) -> vector` of n steps (1 and 2
    threads)."""
    mod = compile_pe(ir, args)
    # Returns a vector: the entry stores it through its leading pointer.
    fn = getattr(mod._lib, mod.entries[name].symbol)
    fn.argtypes = [ctypes.c_void_p, ctypes.c_int64]
    fn.restype = ctypes.c_int32
    result = ctypes.create_string_buffer(64)
    out = {}
    for threads in (1, 2):
        t = timeit(in_threads(lambda: fn(result, n), threads), repeat)
        out[threads] = threads * n * flops_per_iteration / (t["median_ms"] * 1e-3) / 1e9
    return out


def fma_peak(repeat, target):
    """GFLOP/s of independent FMA chains of the target's widest vectors
    (2 flops x lanes each)."""
    lanes, chains = target["f32_lanes"], fma_chains(target)
    return _loop_peak(fma_ir(lanes, chains), "fma_peak", chains * lanes * 2, repeat)


def clock_mhz():
    """The clock the kernel reports (/proc/cpuinfo `cpu MHz`, first CPU)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("cpu MHz"):
                    return float(line.split(":", 1)[1])
    except OSError:
        pass
    return None


def nominal_fma_peak(target, threads):
    """threads x clock x 2 FMA pipes x lanes x 2 flops (GFLOP/s): the x86 cores
    in use issue two vector FMAs per cycle (on Zen 4 and some Zen 5 parts a
    512-bit FMA takes both 256-bit pipes, so AVX-512 reaches the AVX2 rate
    there)."""
    mhz = clock_mhz()
    if mhz is None:
        return None
    return threads * mhz * 1e-3 * 2 * target["f32_lanes"] * 2


def dot_peak(repeat):
    """GFLOP/s of 12 independent vdpbf16ps chains (64 flops each), where the
    CPU has avx512_bf16 (else None)."""
    try:
        with open("/proc/cpuinfo") as f:
            if "avx512_bf16" not in f.read():
                return None
    except OSError:
        return None
    return _loop_peak(DOT_IR, "dot_peak", 12 * 64, repeat)


def read_bandwidth(repeat, prefetches=None):
    """GB/s of a compiled read-only sweep over 256 MiB per thread, far beyond
    the caches: the best of READ_PREFETCHES' sweeps, per thread count, or
    the sweep with `prefetches`."""
    if prefetches is None:
        sweeps = [read_bandwidth(repeat, p) for p in READ_PREFETCHES.values()]
        return {t: max(s[t] for s in sweeps) for t in (1, 2)}
    mod = compile_pe(read_ir(prefetches))
    fn = getattr(mod._lib, mod.entries["read_peak"].symbol)
    fn.restype = ctypes.c_int32
    n = 256 * 1024 * 1024 // 4
    out = {}
    for threads in (1, 2):
        bufs = [np.ones(n, np.float32) for _ in range(threads)]
        descs = [runner.dense_descriptor(b.ctypes.data, b.shape,
                                         mod.entries["read_peak"].arguments[0], "read")
                 for b in bufs]
        results = [ctypes.create_string_buffer(64) for _ in range(threads)]
        it = iter(range(10**9))

        def one():
            i = next(it) % threads
            fn(results[i], ctypes.byref(descs[i]))
        t = timeit(in_threads(one, threads), repeat)
        out[threads] = threads * n * 4 / (t["median_ms"] * 1e-3) / 1e9
    return out


def copy_bandwidth(repeat):
    """GB/s of a large copy (read + write bytes), numpy."""
    n = 64 * 1024 * 1024 // 4  # 64 MiB of f32 per buffer, far beyond the caches
    out = {}
    for threads in (1, 2):
        bufs = [(np.ones(n, np.float32), np.empty(n, np.float32)) for _ in range(threads)]
        it = iter(range(10**9))

        def one():
            src, dst = bufs[next(it) % threads]
            np.copyto(dst, src)
        t = timeit(in_threads(one, threads), repeat)
        out[threads] = threads * 2 * n * 4 / (t["median_ms"] * 1e-3) / 1e9
    return out


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def amx_peak(repeat):
    """GFLOP/s of tdpbf16ps on tiles in registers (1 and 2 threads), where the
    CPU has AMX: 4 x 32 products of 16384 flops per step."""
    return _loop_peak(amx_ir(), "amx_peak", 4 * 32 * 16384, repeat, ["--amx=on"], 20_000)


def bf16_kernels():
    """The bf16 kernels this host runs and the target takes (pe.testing.BF16_KERNELS:
    pe-compile refuses the x86 dot-product and AMX kernels without 16-lane
    vectors), and the one pe-compile chooses for prefill and for decode without
    options."""
    target = target_description()
    wide = target["isa"] != "x86" or target["f32_lanes"] == 16
    runs = [k for k in BF16_KERNELS
            if bf16_kernel_missing(k) is None and (k == "fma" or wide)]
    dot = "dot" if target["schedule"]["bf16_dot_products"] else "fma"
    return runs, ("amx" if target["amx"] else dot), dot


# Of which limit a bf16 kernel's rate is a fraction.
BF16_LIMIT = {"amx": "amx_gflops", "dot": "dot_gflops", "fma": "fma_gflops"}


# ---------------------------------------------------------------------------
# Cases
# ---------------------------------------------------------------------------

def rope_case(s, repeat, torch):
    t = f"tensor<1x32x{s}x128xf32>"
    ir = f"""
func.func @rope(%q: {t}, %k: {t}, %p: tensor<{s}xi32>) -> ({t}, {t}) {{
  %qr = pe.rope {ROPE_ATTR} %q, %p : {t}, tensor<{s}xi32>
  %kr = pe.rope {ROPE_ATTR} %k, %p : {t}, tensor<{s}xi32>
  return %qr, %kr : {t}, {t}
}}
"""
    rng = np.random.default_rng(0)
    q = rng.standard_normal((1, 32, s, 128)).astype(np.float32)
    k = rng.standard_normal((1, 32, s, 128)).astype(np.float32)
    p = np.arange(s, dtype=np.int32)
    row = {"case": f"rope q,k [1,32,{s},128] f32, llama3", "kind": "bandwidth",
           # q and k read, q' and k' written.
           "bytes": 4 * q.size * 4}
    for name, flags in (("fused", []), ("unfused", REFERENCE_LOWERING)):
        mod = compile_pe(ir, flags + [THREADS])
        row[name] = timeit(into(mod, "rope", q, k, p), repeat)
        if name == "fused":
            row["fused_alloc"] = timeit(lambda: mod.call("rope", q, k, p), repeat)
    if s <= 1024:
        row["numpy"] = timeit(lambda: (reference.apply_rope(q, p, 500000.0, 128, LLAMA3),
                                       reference.apply_rope(k, p, 500000.0, 128, LLAMA3)),
                              max(1, repeat // 2))
    if torch is not None:
        row["pytorch"] = timeit(torch_rope(torch, q, k, p), repeat)
    return row


def torch_rope(torch, q, k, p):
    from transformers import LlamaConfig
    from transformers.models.llama import modeling_llama
    config = LlamaConfig(hidden_size=32 * 128, num_attention_heads=32, head_dim=128,
                         rope_theta=500000.0, max_position_embeddings=131072,
                         rope_scaling={"rope_type": "llama3", "factor": 8.0,
                                       "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                       "original_max_position_embeddings": 8192})
    rotary = modeling_llama.LlamaRotaryEmbedding(config=config)
    qt, kt = torch.from_numpy(q), torch.from_numpy(k)
    pt = torch.from_numpy(p.astype(np.int64))[None]

    def run():
        with torch.no_grad():
            cos, sin = rotary(qt, pt)
            return modeling_llama.apply_rotary_pos_emb(qt, kt, cos, sin)
    return run


def prefill_case(s, hkv, repeat, torch, variant="rope", dtype="f32"):
    hq, d = 32, 128
    qt, kt = f"tensor<1x{hq}x{s}x{d}x{dtype}>", f"tensor<1x{hkv}x{s}x{d}x{dtype}>"
    ir = attention_function("layer", qt, kt, kt, positions=f"tensor<{s}xi32>", causal=True,
                            **({"rotate": ROPE_ATTR} if variant == "rope" else
                               {"alibi_bias": "causal"}))
    rng = np.random.default_rng(1)
    q = rng.standard_normal((1, hq, s, d)).astype(np.float32)
    k = rng.standard_normal((1, hkv, s, d)).astype(np.float32)
    v = rng.standard_normal((1, hkv, s, d)).astype(np.float32)
    p = np.arange(s, dtype=np.int32)
    # Causal: only the unmasked half (S(S+1)/2 scores) counts, 2 matmuls.
    flops = 2 * 2 * hq * d * s * (s + 1) / 2
    args = (q, k, v, p)
    if dtype == "bf16":
        args = tuple(runner.bf16_array(x) for x in (q, k, v)) + (p,)
        q, k, v = (x.astype(np.float32) for x in args[:3])  # the same values for PyTorch
    row = {"case": f"prefill {variant} B=1 Hq={hq} Hkv={hkv} D={d} S={s} causal {dtype}",
           "kind": "compute", "flops": flops}
    mod = compile_pe(ir, [THREADS])
    row["fused"] = timeit(into(mod, "layer", *args), repeat)
    if variant == "rope" and dtype == "f32":
        add_ggml(row, mod, "layer", args, q, k, v, repeat, rope=True)
    if dtype == "bf16":
        add_bf16_kernels(row, ir, "layer", args, repeat, prefill=True)
    if s <= 2048 and dtype == "f32":
        mod = compile_pe(ir, REFERENCE_LOWERING + [THREADS])
        row["unfused"] = timeit(into(mod, "layer", *args), repeat)
    elif dtype == "f32":
        row["unfused_skipped"] = "skipped: 8.6 GB scores"
    if s <= 512 and dtype == "f32":
        kwargs = dict(q_positions=p, k_positions=p, causal=True)
        if variant == "rope":
            kwargs["rope"] = {"theta": 500000.0, "rotary_dim": 128, "scaling": LLAMA3}
        else:
            kwargs["alibi"] = 8.0
        row["numpy"] = timeit(lambda: reference.attention(q, k, v, **kwargs), max(1, repeat // 2))
    if torch is not None and not (variant == "alibi" and s > 2048):
        row["pytorch"] = timeit(torch_prefill(torch, q, k, v, p, variant, dtype), repeat)
    elif torch is not None:
        row["pytorch_skipped"] = "skipped: 8.6 GB bias"
    return row


def add_bf16_kernels(row, ir, name, args, repeat, prefill):
    """The default bf16 kernel's name and limit, and every other bf16 kernel
    this host runs (forced by its options) timed beside it as fused_KERNEL."""
    runs, prefill_kernel, decode_kernel = bf16_kernels()
    row["kernel"] = prefill_kernel if prefill else decode_kernel
    if prefill:  # decode is a fraction of the read bandwidth, whatever it computes with
        row["limit"] = BF16_LIMIT[row["kernel"]]
    for kernel in runs:
        if kernel != row["kernel"] and (prefill or kernel != "amx"):
            mod = compile_pe(ir, [THREADS, *BF16_KERNELS[kernel]])
            row[f"fused_{kernel}"] = timeit(into(mod, name, *args), repeat)


def ggml_attention(q, k, v, repeat, rope):
    """ggml's RoPE (llama3 factors, NeoX pairs) + causal flash attention on
    the same f32 inputs ([1, H, S, D]), 2 threads: (times as `timeit`, the
    output as [1, Hq, Sq, D]), or None without build/ggml/ggml_attention
    (benchmarks/ggml/build.sh). `rope` 2: a decode step with a KV cache (the
    last key and value are the new token's, rotated and written into the
    cache; see ggml_attention.c)."""
    if not os.access(GGML, os.X_OK):
        return None
    _, hq, sq, d = q.shape
    _, hkv, skv, _ = k.shape
    with tempfile.TemporaryDirectory(prefix="pe-ggml-") as folder:
        for name, x in (("q", q), ("k", k), ("v", v)):
            np.ascontiguousarray(x[0].transpose(1, 0, 2), np.float32).tofile(f"{folder}/{name}.bin")
        # llama.cpp's rope_freqs: each unscaled frequency over its llama3-scaled one.
        factors = (reference.rope_inv_freq(500000.0, d) /
                   reference.rope_inv_freq(500000.0, d, LLAMA3)).astype(np.float32)
        factors.tofile(f"{folder}/factors.bin")
        with open(f"{folder}/params.txt", "w") as f:
            f.write("500000.0\n")
        proc = subprocess.run([GGML, folder, str(sq), str(skv), str(hq), str(hkv), str(d), "2",
                               str(max(repeat, 5)), str(int(rope))],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"ggml_attention failed ({proc.returncode}): "
                               f"{proc.stderr.strip()[-300:]}")
        times = [float(l.split()[1]) for l in proc.stdout.splitlines() if l.startswith("ms ")]
        out = np.fromfile(f"{folder}/out.bin", np.float32).reshape(sq, hq, d)
    timing = {"median_ms": statistics.median(times), "min_ms": min(times),
              "max_ms": max(times), "runs": len(times)}
    return timing, out.transpose(1, 0, 2)[None]


def add_ggml(row, mod, name, args, q, k, v, repeat, rope):
    """ggml's time beside pe's in `row`, and the largest difference of their
    outputs (a check that both compute the same attention); a ggml that
    fails is noted in the row, not fatal."""
    try:
        ggml = ggml_attention(q, k, v, repeat, rope=rope)
    except RuntimeError as error:
        row["ggml_skipped"] = str(error)
        return
    if ggml:
        row["ggml"] = ggml[0]
        (ours,) = mod.call(name, *args)
        row["ggml_max_abs_difference"] = float(np.abs(ours - ggml[1]).max())


def add_ggml_decode_steps(row, queries, dense, repeat):
    """ggml's decode step with a KV cache for each sequence of a batch (its new
    token's key rotated and written into the cache, Q rotated, flash attention
    over the cache; llama.cpp runs sequences of different lengths this way, one
    contiguous cache each): the sum of the sequences' medians (mins, maxes)."""
    total = {"median_ms": 0.0, "min_ms": 0.0, "max_ms": 0.0, "runs": repeat}
    for q, (k, v) in zip(queries, dense):
        try:
            ggml = ggml_attention(q, k, v, repeat, rope=2)
        except RuntimeError as error:
            row["ggml_skipped"] = str(error)
            return
        if ggml is None:
            return
        if not np.isfinite(ggml[1]).all():
            row["ggml_skipped"] = "ggml's decode step gave non-finite values"
            return
        for key in ("median_ms", "min_ms", "max_ms"):
            total[key] += ggml[0][key]
        total["runs"] = min(total["runs"], ggml[0]["runs"])
    row["ggml"] = total


def torch_prefill(torch, q, k, v, p, variant, dtype="f32"):
    import torch.nn.functional as F
    hq, hkv = q.shape[1], k.shape[1]
    qt, kt, vt = torch.from_numpy(q), torch.from_numpy(k), torch.from_numpy(v)
    if dtype == "bf16":
        qt, kt, vt = qt.bfloat16(), kt.bfloat16(), vt.bfloat16()
    from transformers import LlamaConfig
    from transformers.models.llama import modeling_llama
    config = LlamaConfig(hidden_size=hq * 128, num_attention_heads=hq, head_dim=128,
                         rope_theta=500000.0, max_position_embeddings=131072,
                         rope_scaling={"rope_type": "llama3", "factor": 8.0,
                                       "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                       "original_max_position_embeddings": 8192})
    rotary = modeling_llama.LlamaRotaryEmbedding(config=config)
    pt = torch.from_numpy(p.astype(np.int64))[None]
    s = q.shape[2]
    bias = None
    if variant == "alibi":
        slopes = torch.from_numpy(reference.alibi_slopes(hq).astype(np.float32))
        pos = torch.from_numpy(p.astype(np.float32))
        rel = pos[None, :] - pos[:, None]  # k - q
        bias = slopes[:, None, None] * rel[None]
        bias = bias.masked_fill(rel[None] > 0, float("-inf"))[None]

    def run():
        with torch.no_grad():
            qq, kk = qt, kt
            if variant == "rope":
                cos, sin = rotary(qt, pt)
                qq, kk = modeling_llama.apply_rotary_pos_emb(qt, kt, cos.to(qt.dtype),
                                                             sin.to(qt.dtype))
            kk = kk.repeat_interleave(hq // hkv, dim=1)
            vv = vt.repeat_interleave(hq // hkv, dim=1)
            if bias is None:
                return F.scaled_dot_product_attention(qq, kk, vv, is_causal=True)
            return F.scaled_dot_product_attention(qq, kk, vv, attn_mask=bias)
    return run


def decode_case(skv, repeat, torch, dtype="f32"):
    hq, hkv, d = 32, 8, 128
    qt, kt = f"tensor<1x{hq}x1x{d}x{dtype}>", f"tensor<1x{hkv}x{skv}x{d}x{dtype}>"
    ir = attention_function("decode", qt, kt, kt, causal=True)
    rng = np.random.default_rng(2)
    q = rng.standard_normal((1, hq, 1, d)).astype(np.float32)
    k = rng.standard_normal((1, hkv, skv, d)).astype(np.float32)
    v = rng.standard_normal((1, hkv, skv, d)).astype(np.float32)
    element_bytes = 2 if dtype == "bf16" else 4
    row = {"case": f"decode 1 query, Skv={skv}, Hq={hq} Hkv={hkv} D={d} {dtype}",
           "kind": "bandwidth",
           "bytes": 2 * k.size * element_bytes}  # the KV read
    args = (q, k, v)
    if dtype == "bf16":
        args = tuple(runner.bf16_array(x) for x in args)
        q, k, v = (x.astype(np.float32) for x in args)  # the same values for PyTorch
    mod = compile_pe(ir, [THREADS])
    row["fused"] = timeit(into(mod, "decode", *args), repeat)
    if dtype == "f32":
        add_ggml(row, mod, "decode", args, q, k, v, repeat, rope=False)
    if dtype == "bf16":
        add_bf16_kernels(row, ir, "decode", args, repeat, prefill=False)
    mod = compile_pe(ir, REFERENCE_LOWERING + [THREADS])
    row["unfused"] = timeit(into(mod, "decode", *args), repeat)
    if torch is not None:
        import torch.nn.functional as F
        qq, kk, vv = (torch.from_numpy(x) for x in (q, k, v))

        def run():
            with torch.no_grad():
                return F.scaled_dot_product_attention(
                    qq, kk.repeat_interleave(hq // hkv, dim=1),
                    vv.repeat_interleave(hq // hkv, dim=1))
        row["pytorch"] = timeit(run, repeat)
    return row


def model_ir(layers):
    """`layers` attention layers at shared positions with llama3 RoPE (GQA 32/8)."""
    q, k = "tensor<1x32x?x128xf32>", "tensor<1x8x?x128xf32>"
    lines = [f"func.func @model(%x: {q}, %k: {k}, %v: {k}, %p: tensor<?xi32>) -> {q} {{"]
    prev = "%x"
    for i in range(layers):
        lines += [f"  %q{i} = pe.rope {ROPE_ATTR} {prev}, %p : {q}, tensor<?xi32>",
                  f"  %k{i} = pe.rope {ROPE_ATTR} %k, %p : {k}, tensor<?xi32>",
                  f"  %o{i} = pe.attention %q{i}, %k{i}, %v q_positions(%p : tensor<?xi32>) "
                  f"k_positions(%p : tensor<?xi32>) causal : {q}, {k}, {k} -> {q}"]
        prev = f"%o{i}"
    lines += [f"  return {prev} : {q}", "}"]
    return "\n".join(lines) + "\n"


def compile_case(repeat):
    """Seconds of `pe-compile --emit=obj` (whole pipeline + LLVM -O3) per model size."""
    row = {"case": "compile 32-layer model to an object (pe-compile --emit=obj)",
           "kind": "compile", "layers": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for layers in (1, 8, 16, 32):
            src, obj = os.path.join(tmp, f"m{layers}.mlir"), os.path.join(tmp, "m.o")
            with open(src, "w") as f:
                f.write(model_ir(layers))
            cmd = [runner.PE_COMPILE, src, "--emit=obj", THREADS, "-o", obj]
            t = timeit(lambda: subprocess.run(cmd, check=True), max(3, repeat // 2))
            row["layers"][layers] = t
    row["fused"] = row["layers"][32]
    return row


MODEL_IMPLEMENTATIONS = ["eager", "sdpa", "pe", "pe_fused"]


def _llama_8b_two_layers():
    """Llama-3.1-8B's config with 2 layers and a 1024-token vocabulary
    (random weights), f32, in eval mode; "pe" registered."""
    import torch
    import transformers
    import pe.transformers
    torch.set_num_threads(2)
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "configs",
                        "llama-3.1-8b.json")
    fields = dict(json.load(open(path)), num_hidden_layers=2, vocab_size=1024,
                  bos_token_id=None, eos_token_id=None)
    config = transformers.AutoConfig.for_model(**fields)
    pe.transformers.register()
    torch.manual_seed(0)
    return transformers.AutoModelForCausalLM.from_config(config, attn_implementation="eager",
                                                         dtype=torch.float32).eval()


def _models(skip=()):
    """The model of each implementation in MODEL_IMPLEMENTATIONS (minus
    `skip`), switched as a user switches (`set_attn_implementation`); pe_fused
    on a copy with the same weights (pe.transformers.fuse_rope replaces the
    attention modules' forward), so that the rounds can alternate."""
    import copy
    import pe.transformers
    model = _llama_8b_two_layers()
    models = {}
    for name in MODEL_IMPLEMENTATIONS:
        if name in skip:
            continue
        if name == "pe_fused":
            models[name] = copy.deepcopy(model)
            pe.transformers.fuse_rope(models[name])
        else:
            models[name] = model
    return models


def _fused_after(models, call, repeat):
    """pe_fused's rounds after the others' on the same model (no copy: at
    S = 8192 SDPA's score tensors and a second model do not fit in 24 GiB)."""
    import pe.transformers
    model = next(iter(models.values()))
    pe.transformers.fuse_rope(model)
    return _rounds({"pe_fused": model}, call, repeat)


def _rounds(models, call, repeat):
    """`call(model)` for each implementation in turn, `repeat` rounds after a
    warm-up round (an implementation switch before each call): the timings
    of each as `timeit` gives them, and each one's first result. Alternating
    keeps a drift of the shared machine from favouring one implementation."""
    times = {name: [] for name in models}
    results = {}
    for round_ in range(repeat + 1):
        for name, model in models.items():
            if name != "pe_fused":
                model.set_attn_implementation(name)
            start = time.perf_counter()
            out = call(model)
            elapsed = time.perf_counter() - start
            if round_ == 0:
                results[name] = out
            else:
                times[name].append(elapsed)
    rows = {name: {"median_ms": 1e3 * statistics.median(t), "min_ms": 1e3 * min(t),
                   "max_ms": 1e3 * max(t), "runs": len(t)} for name, t in times.items()}
    return rows, results


def model_case(s, repeat):
    """A transformers model's forward (no cache) with each attention
    implementation: transformers' eager and SDPA, pe attention
    (attn_implementation="pe") and pe with RoPE fused (pe.transformers.fuse_rope).
    The model: `_llama_8b_two_layers`, batch 1, S tokens; the implementations
    alternate round by round (`_rounds`)."""
    import torch
    row = {"case": f"Llama-3.1-8B shapes, 2 layers, forward S={s} f32 (transformers)",
           "kind": "model"}
    skip = ()
    scores = 32 * s * s * 4  # bytes of one layer's f32 scores
    if s > EAGER_MAX_S:
        skip = ("eager",)
        row["eager_skipped"] = (f"skipped: eager attention holds [32, {s}, {s}] f32 scores "
                                f"({scores / 2**30:.0f} GiB) twice")
    if 2 * scores > 0.5 * os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"):
        # transformers' SDPA (torch 2.5.1, GQA, CPU) reached 24 GB resident at
        # S = 8192 and was killed for memory on a 24 GiB machine.
        skip += ("sdpa",)
        row["sdpa_skipped"] = (f"skipped: SDPA was killed for memory at this size on a 24 GiB "
                               f"machine ([32, {s}, {s}] f32 scores: {scores / 2**30:.0f} GiB)")
    ids = torch.randint(0, 1024, (1, s), generator=torch.Generator().manual_seed(1))

    def forward(model):
        with torch.no_grad():
            return model(ids, use_cache=False).logits
    if s > EAGER_MAX_S:
        models = _models(skip + ("pe_fused",))
        times, logits = _rounds(models, forward, repeat)
        fused_times, fused_logits = _fused_after(models, forward, repeat)
        times.update(fused_times)
        logits.update(fused_logits)
        row["pe_fused_rounds"] = "after the others' (one model in memory)"
    else:
        times, logits = _rounds(_models(skip), forward, repeat)
    row.update(times)
    reference = next(name for name in ("eager", "sdpa", "pe") if name in logits)
    row["logit_reference"] = reference
    row["max_logit_difference_vs_eager"] = {
        name: float((logits[name] - logits[reference]).abs().max()) for name in logits}
    return row


GENERATED_TOKENS = 128
EAGER_MAX_S = 4096  # longer: eager's score tensors do not fit beside the rest in 24 GiB


def model_generate_case(s, repeat):
    """A greedy generation of 128 tokens with a dynamic cache after an S-token
    prompt, with each attention implementation (`model_case`'s model,
    alternating round by round): the prefill and 128 decode steps. The tokens
    of each are compared with eager's (`tokens_equal_eager`)."""
    import torch
    ids = torch.randint(0, 1024, (1, s), generator=torch.Generator().manual_seed(1))
    row = {"case": f"Llama-3.1-8B shapes, 2 layers, {s}-token prompt + {GENERATED_TOKENS} "
                   f"generated tokens f32 (transformers generate)", "kind": "model"}

    def generate(model):
        with torch.no_grad():
            return model.generate(ids, attention_mask=torch.ones_like(ids),
                                  max_new_tokens=GENERATED_TOKENS,
                                  min_new_tokens=GENERATED_TOKENS, do_sample=False,
                                  pad_token_id=0)
    times, tokens = _rounds(_models(), generate, repeat)
    row.update(times)
    row["max_logit_difference_vs_eager"] = {
        name: 0.0 if torch.equal(tokens[name], tokens["eager"]) else float("nan")
        for name in tokens}
    row["tokens_equal_eager"] = {name: bool(torch.equal(tokens[name], tokens["eager"]))
                                 for name in tokens}
    return row


def raise_case(s, repeat):
    """Hugging Face LLaMA attention as an importer delivers it: RoPE (llama3
    scaling, positions given) + repeat_kv + eager attention with a causal mask
    (Llama-3.1-8B shapes: GQA 32/8, D = 128, batch 1), exported by iree-turbine
    and lowered by `iree-compile --compile-to=input`, then compiled with the CPU
    pipeline as it is (generic linalg) and with `--raise` (raised into pe.rope +
    pe.attention, RoPE fused into the flash-attention kernel). Same inputs,
    same threads; the output of both is checked against transformers'."""
    import torch
    from transformers import LlamaConfig
    from transformers.models.llama import modeling_llama as llama
    from pe.importers import iree_input_ir
    torch.set_num_threads(2)
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "configs",
                        "llama-3.1-8b.json")
    config = LlamaConfig(**json.load(open(path)))

    class Attention(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.rotary = llama.LlamaRotaryEmbedding(config)

        def forward(self, q, k, v, positions):
            cos, sin = self.rotary(v, positions)
            q, k = llama.apply_rotary_pos_emb(q, k, cos, sin)
            groups = q.shape[1] // k.shape[1]
            k, v = llama.repeat_kv(k, groups), llama.repeat_kv(v, groups)
            n = q.shape[2]
            mask = torch.full((n, n), float("-inf")).triu(1)[None, None]
            scores = torch.matmul(q, k.transpose(2, 3)) * q.shape[-1] ** -0.5 + mask
            return torch.matmul(torch.softmax(scores, dim=-1, dtype=torch.float32), v)

    gen = torch.Generator().manual_seed(0)
    q = torch.randn(1, 32, s, 128, generator=gen)
    k = torch.randn(1, 8, s, 128, generator=gen)
    v = torch.randn(1, 8, s, 128, generator=gen)
    positions = torch.arange(s)[None]
    module = Attention().eval()
    ir = iree_input_ir(module, (q, k, v, positions))
    want = module(q, k, v, positions).numpy()
    # In the table: `fused` is the raised compilation, `unfused` the generic one.
    row = {"case": f"HF LLaMA attention (iree-turbine import) raised vs generic S={s} f32",
           "kind": "compute", "flops": 2 * 2 * 32 * 128 * s * (s + 1) / 2}
    args = [q.numpy(), k.numpy(), v.numpy(), positions.numpy()]
    for name, extra in (("unfused", []), ("fused", ["--raise"])):
        mod = compile_pe(ir, [THREADS, *extra])
        out = mod.call("main", *args)[0]
        row[f"{name}_max_error"] = float(np.abs(out - want).max())
        row[name] = timeit(lambda: mod.call("main", *args), repeat)
    return row


# The KV lengths of the paged decode batch: 1k to 32k keys.
PAGED_LENGTHS = [1024, 2048, 3000, 4096, 8192, 12000, 16384, 32768]
PAGE_SIZE = 16


def paged_cache(lengths, hkv, d, rng, dtype, layout="nhd"):
    """A paged cache (`layout` nhd or hnd, pages in a random order) holding `lengths`
    keys per sequence; the block table, and each sequence's keys and values as dense
    [1, Hkv, L, D] arrays (the same values)."""
    pages = [-(-int(n) // PAGE_SIZE) for n in lengths]
    order = rng.permutation(sum(pages))
    table = np.zeros((len(lengths), max(pages)), np.int32)
    start = 0
    for b, n in enumerate(pages):
        table[b, :n] = order[start:start + n]
        start += n
    kc = rng.standard_normal((sum(pages), PAGE_SIZE, hkv, d)).astype(np.float32)
    vc = rng.standard_normal((sum(pages), PAGE_SIZE, hkv, d)).astype(np.float32)
    if dtype == "bf16":
        kc, vc = runner.bf16_array(kc), runner.bf16_array(vc)
    dense = []
    for b, n in enumerate(lengths):
        rows = lambda c: c[table[b, :pages[b]]].reshape(-1, hkv, d)[:n].transpose(1, 0, 2)[None]  # noqa
        dense.append((np.ascontiguousarray(rows(kc)), np.ascontiguousarray(rows(vc))))
    if layout == "hnd":
        kc, vc = (np.ascontiguousarray(c.transpose(0, 2, 1, 3)) for c in (kc, vc))
    return kc, vc, table, dense


def paged_ir(name, hq, hkv, d, dtype, extra="", layout="nhd"):
    q = f"tensor<?x{hq}x{d}x{dtype}>"
    page = f"{PAGE_SIZE}x{hkv}" if layout == "nhd" else f"{hkv}x{PAGE_SIZE}"
    c = f"tensor<?x{page}x{d}x{dtype}>"
    return f"""func.func @{name}(%q: {q}, %kc: {c}, %vc: {c}, %bt: tensor<?x?xi32>,
                 %lens: tensor<?xi32>, %cu: tensor<?xi32>) -> {q} {{
  %o = pe.paged_attention %q, %kc, %vc block_table(%bt : tensor<?x?xi32>)
       kv_lens(%lens : tensor<?xi32>) cu_seqlens(%cu : tensor<?xi32>) layout({layout}) causal{extra}
       : {q}, {c}, {c} -> {q}
  return %o : {q}
}}"""


def paged_decode_case(repeat, torch, dtype="f32", layout="nhd", lengths=PAGED_LENGTHS):
    """One decode step of 8 requests of 1k..32k keys (or of `lengths`) over a paged
    cache, beside the same sequences as dense tensors (one pe.attention call each, or
    one batched call where every length is the same) and PyTorch's SDPA over the
    gathered pages (nhd, 1k..32k)."""
    hq, hkv, d = 32, 8, 128
    rng = np.random.default_rng(4)
    many = list(lengths) != PAGED_LENGTHS
    lengths = np.array(lengths, np.int32)
    kc, vc, table, dense = paged_cache(lengths, hkv, d, rng, dtype, layout)
    q = rng.standard_normal((len(lengths), hq, d)).astype(np.float32)
    if dtype == "bf16":
        q = runner.bf16_array(q)
    cu = np.arange(len(lengths) + 1, dtype=np.int32)
    element_bytes = 2 if dtype == "bf16" else 4
    requests = (f"{len(lengths)} requests of {lengths[0]} keys" if many
                else "8 requests of 1k..32k keys")
    row = {"case": f"paged decode ({layout}), {requests} (page {PAGE_SIZE}), "
                   f"Hq={hq} Hkv={hkv} D={d} {dtype}",
           "kind": "bandwidth", "bytes": 2 * int(lengths.sum()) * hkv * d * element_bytes}
    mod = compile_pe(paged_ir("paged", hq, hkv, d, dtype, layout=layout), [THREADS])
    row["fused"] = timeit(into_dynamic(mod, "paged", q.shape, q, kc, vc, table, lengths, cu),
                          repeat)
    qt, kt = f"tensor<1x{hq}x1x{d}x{dtype}>", f"tensor<1x{hkv}x?x{d}x{dtype}>"
    dense_mod = compile_pe(attention_function("decode", qt, kt, kt, causal=True), [THREADS])
    queries = [np.ascontiguousarray(q[b][None, :, None]) for b in range(len(lengths))]
    outs = [np.empty((1, hq, 1, d), q.dtype) for _ in lengths]

    def dense_step():
        for (k, v), qq, out in zip(dense, queries, outs):
            dense_mod.call("decode", qq, k, v, out=out)
    if many:  # every length the same: one batched dense call
        bt = f"tensor<?x{hkv}x{lengths[0]}x{d}x{dtype}>"
        dense_mod = compile_pe(attention_function(
            "decode", f"tensor<?x{hq}x1x{d}x{dtype}>", bt, bt, causal=True), [THREADS])
        kb = np.ascontiguousarray(np.concatenate([k for k, _ in dense]))
        vb = np.ascontiguousarray(np.concatenate([v for _, v in dense]))
        dense_step = into_dynamic(dense_mod, "decode", (len(lengths), hq, 1, d),
                                  np.ascontiguousarray(q[:, :, None]), kb, vb)
    row["dense"] = timeit(dense_step, repeat)
    if many:
        return row
    if dtype == "f32" and layout == "nhd":
        add_ggml_decode_steps(row, queries, dense, repeat)
    if torch is not None and dtype == "f32" and layout == "nhd":
        import torch.nn.functional as F
        kt_, vt_, tb = torch.from_numpy(kc), torch.from_numpy(vc), torch.from_numpy(table)
        qq = torch.from_numpy(q)

        def run():
            with torch.no_grad():
                for b, n in enumerate(PAGED_LENGTHS):
                    pages = tb[b, :-(-n // PAGE_SIZE)].long()
                    k = kt_.index_select(0, pages).reshape(-1, hkv, d)[:n].transpose(0, 1)
                    v = vt_.index_select(0, pages).reshape(-1, hkv, d)[:n].transpose(0, 1)
                    F.scaled_dot_product_attention(
                        qq[b][:, None], k.repeat_interleave(hq // hkv, dim=0),
                        v.repeat_interleave(hq // hkv, dim=0))
        row["pytorch"] = timeit(run, repeat)
    return row


def into_dynamic(mod, name, out_shape, *args):
    """A call of `name` (one result of `out_shape`) into an array allocated once."""
    dtype = np.dtype(runner._NUMPY[mod.entries[name].results[0].element])
    raw = np.empty(int(np.prod(out_shape)) * dtype.itemsize + 64, np.uint8)
    start = (-raw.ctypes.data) % 64
    out = raw[start:start + int(np.prod(out_shape)) * dtype.itemsize].view(dtype)
    out = out.reshape(out_shape)
    return lambda: mod.call(name, *args, out=out)


APPEND_PAGES, APPEND_HEADS, APPEND_DIM, APPEND_TOKENS = 4096, 8, 128, 8


def append_ir(pages, hkv, d):
    """`@append`: rows rotated (llama3 RoPE) and written with their values into a paged
    cache of `pages` pages in place."""
    rope = ("#pe.rope<theta = 500000.0, rotary_dim = 128, scaling = #pe.llama3<factor = 8.0, "
            "original_max_position_embeddings = 8192>>")
    c = f"tensor<{pages}x{PAGE_SIZE}x{hkv}x{d}xf32>"
    rows = f"tensor<?x{hkv}x{d}xf32>"
    ir = f"""func.func @append(%k: {rows}, %v: {rows}, %kc: {c} {{pe.in_place}}, %vc: {c} {{pe.in_place}},
                  %slots: tensor<?xi64>, %pos: tensor<?xi64>) -> ({c}, {c}) {{
  %a, %b = pe.append_kv %k, %v into %kc, %vc slots(%slots : tensor<?xi64>)
           positions(%pos : tensor<?xi64>) layout(nhd) rope({rope}) : {rows}, {rows} -> {c}, {c}
  return %a, %b : {c}, {c}
}}"""
    return ir


def append_case(repeat):
    """8 new tokens (one per request) rotated and written with their values into a paged
    cache in place, called from Python: bytes read and written against the copy
    bandwidth."""
    pages, hkv, d, tokens = APPEND_PAGES, APPEND_HEADS, APPEND_DIM, APPEND_TOKENS
    rng = np.random.default_rng(6)
    kc = np.zeros((pages, PAGE_SIZE, hkv, d), np.float32)
    vc = np.zeros_like(kc)
    k = rng.standard_normal((tokens, hkv, d)).astype(np.float32)
    v = rng.standard_normal((tokens, hkv, d)).astype(np.float32)
    slots = rng.permutation(pages * PAGE_SIZE)[:tokens].astype(np.int64)
    positions = rng.integers(0, 32768, tokens).astype(np.int64)
    row = {"case": f"append {tokens} tokens with RoPE into a paged cache, Hkv={hkv} D={d} f32 "
                   "(Python call, 1 thread)",
           "kind": "bandwidth", "limit": "copy_gbs", "threads": 1, "bytes": 2 * 2 * k.size * 4}
    mod = compile_pe(append_ir(pages, hkv, d), ["--num-threads=1"])
    row["fused"] = timeit(lambda: mod.call("append", k, v, kc, vc, slots, positions), repeat)
    return row


def append_c_case(repeat):
    """The same append called by a C program (benchmarks/c/append_timer.c, linked with
    the library pe-compile writes), each call to slots of its own: the time per call
    without Python's."""
    pages, hkv, d, tokens = APPEND_PAGES, APPEND_HEADS, APPEND_DIM, APPEND_TOKENS
    row = {"case": f"append {tokens} tokens with RoPE into a paged cache, Hkv={hkv} D={d} f32 "
                   "(C call, 1 thread)",
           "kind": "bandwidth", "limit": "copy_gbs", "threads": 1,
           "bytes": 2 * 2 * tokens * hkv * d * 4}
    cc = next((c for c in ("cc", "clang-22", "gcc") if shutil.which(c)), None)
    if cc is None:
        row["fused_skipped"] = "skipped: no C compiler"
        return row
    here = os.path.dirname(os.path.abspath(__file__))
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "append.mlir")
        with open(src, "w") as f:
            f.write(append_ir(pages, hkv, d))
        subprocess.run([runner.PE_COMPILE, src, "--emit=shared", "--num-threads=1",
                        "--prefix=bench_", f"--header={tmp}/bench.h", "-o",
                        f"{tmp}/libbench.so", *TARGET_ARGS], check=True)
        exe = os.path.join(tmp, "append_timer")
        subprocess.run([cc, "-O2", "-std=c11", "-Wall", "-Werror", f"-I{tmp}", os.path.join(here, "c",
                        "append_timer.c"), f"-L{tmp}", "-lbench", f"-Wl,-rpath,{tmp}",
                        "-o", exe], check=True)
        out = subprocess.run([exe, str(pages), str(PAGE_SIZE), str(hkv), str(d), str(tokens)],
                             check=True, capture_output=True, text=True).stdout
    row["fused"] = json.loads(out)
    return row


def chunked_prefill_case(repeat, torch, dtype="f32"):
    """A prefill chunk of 512 queries against a 16k cache that holds it (llama3 RoPE on
    the queries, GQA 32/8, D=128, nhd pages), beside the same attention on dense
    tensors; bf16 with each bf16 kernel this host runs."""
    hq, hkv, d, chunk, length = 32, 8, 128, 512, 16384
    rng = np.random.default_rng(8)
    kc, vc, table, dense = paged_cache([length], hkv, d, rng, dtype)
    q = rng.standard_normal((chunk, hq, d)).astype(np.float32)
    if dtype == "bf16":
        q = runner.bf16_array(q)
    rope = ("#pe.rope<theta = 500000.0, rotary_dim = 128, scaling = #pe.llama3<factor = 8.0, "
            "original_max_position_embeddings = 8192>>")
    visible = chunk * (length - chunk) + chunk * (chunk + 1) // 2
    row = {"case": f"chunked prefill {chunk} queries against {length // 1024}k keys (paged), "
                   f"Hq={hq} Hkv={hkv} D={d} {dtype}", "kind": "compute",
           "flops": 4 * hq * d * visible}
    paged = paged_ir("chunk", hq, hkv, d, dtype, f" rope({rope})")
    mod = compile_pe(paged, [THREADS])
    args = (q, kc, vc, table, np.array([length], np.int32), np.array([0, chunk], np.int32))
    row["fused"] = timeit(into_dynamic(mod, "chunk", q.shape, *args), repeat)
    if dtype == "bf16":
        runs, row["kernel"], _ = bf16_kernels()
        row["limit"] = BF16_LIMIT[row["kernel"]]
        for kernel in runs:
            if kernel != row["kernel"]:
                other = compile_pe(paged, [THREADS, *BF16_KERNELS[kernel]])
                row[f"fused_{kernel}"] = timeit(into_dynamic(other, "chunk", q.shape, *args),
                                                repeat)
    qt, kt = f"tensor<1x{hq}x{chunk}x{d}x{dtype}>", f"tensor<1x{hkv}x{length}x{d}x{dtype}>"
    pos = np.arange(length - chunk, length, dtype=np.int64), np.arange(length, dtype=np.int64)
    dense_ir = attention_function("chunk", qt, kt, kt, causal=True, rope=rope,
                                  positions=(f"tensor<{chunk}xi64>", f"tensor<{length}xi64>"))
    dense_mod = compile_pe(dense_ir, [THREADS])
    qd = np.ascontiguousarray(q.transpose(1, 0, 2)[None])
    # The dense keys rotated at their positions by the same RoPE: the fused rope
    # rotates both, so hand it unrotated keys (their values do not matter for time).
    row["dense"] = timeit(into(dense_mod, "chunk", qd, dense[0][0], dense[0][1], *pos), repeat)
    return row


def mla_absorbed_ir(name, batch, heads, skv, dtype, in_place):
    """`@name`: absorbed latent attention decode (one query per sequence), DeepSeek-V3's
    shapes: H heads of 512 + 64 channels against one KV head, the latent c_kv then the
    rotated k_pe; the values the latent's first 512 channels (`in_place`: a slice of the
    keys, which the kernel reads in place; else their own operand)."""
    d, latent = 576, 512
    q, c = f"tensor<{batch}x{heads}x1x{d}x{dtype}>", f"tensor<{batch}x1x{skv}x{d}x{dtype}>"
    v, o = f"tensor<{batch}x1x{skv}x{latent}x{dtype}>", f"tensor<{batch}x{heads}x1x{latent}x{dtype}>"
    rope = "#pe.rope<theta = 10000.0, rotary_dim = 64, rotary_offset = 512, style = interleaved>"
    value = (f"%v = tensor.extract_slice %c[0, 0, 0, 0] [{batch}, 1, {skv}, {latent}] "
             f"[1, 1, 1, 1] : {c} to {v}") if in_place else ""
    args = f"%q: {q}, %c: {c}" + ("" if in_place else f", %v: {v}")
    return f"""func.func @{name}({args}) -> {o} {{
  {value}
  %o = pe.attention %q, %c, %v causal rope({rope}) : {q}, {c}, {v} -> {o}
  return %o : {o}
}}"""


def mla_absorbed_case(skv, repeat, dtype="f32"):
    """Absorbed latent attention decode (DeepSeek-V3: 128 heads, latent 512 + rope 64) of 4
    sequences: the values read in place from the latent cache (fused) beside the same
    attention given a separate copy of the values (dense) and PyTorch's SDPA."""
    batch, heads, d, latent = 4, 128, 576, 512
    rng = np.random.default_rng(8)
    q = rng.standard_normal((batch, heads, 1, d)).astype(np.float32)
    c = rng.standard_normal((batch, 1, skv, d)).astype(np.float32)
    v = np.ascontiguousarray(c[..., :latent])
    if dtype == "bf16":
        q, c, v = (runner.bf16_array(x) for x in (q, c, v))
    row = {"case": f"absorbed MLA decode B={batch} H={heads} D=512+64 Skv={skv} {dtype}",
           "kind": "compute", "flops": 2 * batch * heads * skv * (d + latent)}
    fused = compile_pe(mla_absorbed_ir("mla", batch, heads, skv, dtype, True), [THREADS])
    row["fused"] = timeit(into(fused, "mla", q, c), repeat)
    dense = compile_pe(mla_absorbed_ir("mla", batch, heads, skv, dtype, False), [THREADS])
    row["dense"] = timeit(into(dense, "mla", q, c, v), repeat)
    return row


def mla_prefill_case(s, repeat, dtype="f32"):
    """Expanded latent attention prefill (DeepSeek-V3's heads: 128 own key channels and
    the 64 rotated channels of k_pe that all heads share, values of 128; 16 heads, causal,
    S queries and keys): the block read in place (fused, pe.attention's shared_key)
    beside the same attention over keys that repeat the block in every head (dense, the
    layout transformers' expand_kv builds; the copy itself not timed)."""
    from pe.ir import attention_function
    heads, nope, rope_dim, dv = 16, 128, 64, 128
    rng = np.random.default_rng(9)
    q = rng.standard_normal((1, heads, s, nope + rope_dim)).astype(np.float32)
    k = rng.standard_normal((1, heads, s, nope)).astype(np.float32)
    v = rng.standard_normal((1, heads, s, dv)).astype(np.float32)
    ks = rng.standard_normal((1, 1, s, rope_dim)).astype(np.float32)
    full = np.ascontiguousarray(np.concatenate([k, np.repeat(ks, heads, axis=1)], axis=3))
    if dtype == "bf16":
        q, k, v, ks, full = (runner.bf16_array(x) for x in (q, k, v, ks, full))
    t = lambda h, d: f"tensor<1x{h}x{s}x{d}x{dtype}>"  # noqa: E731
    rope = ("#pe.rope<theta = 10000.0, rotary_dim = 64, rotary_offset = 128, "
            "style = interleaved>")
    row = {"case": f"MLA prefill (shared k_pe) S={s} H={heads} D=128+64 Dv=128 {dtype}",
           "kind": "compute",
           "flops": 2 * heads * (s * (s + 1) // 2) * (nope + rope_dim + dv)}
    fused = attention_function("mla", t(heads, nope + rope_dim), t(heads, nope), t(heads, dv),
                               out=t(heads, dv), shared_key=t(1, rope_dim), causal=True,
                               rope=rope)
    row["fused"] = timeit(into(compile_pe(fused, [THREADS]), "mla", q, k, v, ks), repeat)
    dense = attention_function("mla", t(heads, nope + rope_dim), t(heads, nope + rope_dim),
                               t(heads, dv), out=t(heads, dv), causal=True, rope=rope)
    row["dense"] = timeit(into(compile_pe(dense, [THREADS]), "mla", q, full, v), repeat)
    return row


def run_case(kind, s, hkv, repeat):
    """One case in this process (the parent starts one process per case)."""
    try:
        import torch
        torch.set_num_threads(2)
    except ImportError:
        torch = None
    if kind == "rope":
        row = rope_case(s, repeat, torch)
    elif kind == "prefill-rope":
        row = prefill_case(s, hkv, repeat, torch, "rope")
    elif kind == "prefill-rope-bf16":
        row = prefill_case(s, hkv, repeat, torch, "rope", "bf16")
    elif kind == "prefill-alibi":
        row = prefill_case(s, hkv, repeat, torch, "alibi")
    elif kind == "decode":
        row = decode_case(s, repeat, torch)
    elif kind == "decode-bf16":
        row = decode_case(s, repeat, torch, "bf16")
    elif kind == "paged-decode":
        row = paged_decode_case(repeat, torch)
    elif kind == "paged-decode-bf16":
        row = paged_decode_case(repeat, torch, "bf16")
    elif kind == "paged-decode-hnd":
        row = paged_decode_case(repeat, torch, "f32", "hnd")
    elif kind == "paged-decode-many":
        row = paged_decode_case(repeat, torch, "f32", "nhd", [256] * 64)
    elif kind == "paged-decode-many-hnd":
        row = paged_decode_case(repeat, torch, "f32", "hnd", [256] * 64)
    elif kind == "append":
        row = append_case(repeat)
    elif kind == "append-c":
        row = append_c_case(repeat)
    elif kind == "chunked-prefill":
        row = chunked_prefill_case(repeat, torch)
    elif kind == "chunked-prefill-bf16":
        row = chunked_prefill_case(repeat, torch, "bf16")
    elif kind == "mla-absorbed":
        row = mla_absorbed_case(s, repeat)
    elif kind == "mla-absorbed-bf16":
        row = mla_absorbed_case(s, repeat, "bf16")
    elif kind == "mla-prefill":
        row = mla_prefill_case(s, repeat)
    elif kind == "mla-prefill-bf16":
        row = mla_prefill_case(s, repeat, "bf16")
    elif kind == "model":
        row = model_case(s, repeat)
    elif kind == "model-generate":
        row = model_generate_case(s, repeat)
    elif kind == "raise":
        row = raise_case(s, repeat)
    else:
        row = compile_case(repeat)
    row["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return row


# ---------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------

def measure_limits(repeat, target):
    """The machine's limits, for the target's vectors."""
    limits = {"fma_gflops": fma_peak(repeat, target), "copy_gbs": copy_bandwidth(repeat),
              "read_gbs": read_bandwidth(repeat)}
    if target["bf16_dot"] and target["isa"] == "x86":
        dot = dot_peak(repeat)
        if dot is not None:
            limits["dot_gflops"] = dot
    if target["amx"] and runner.host_has_amx():
        limits["amx_gflops"] = amx_peak(repeat)
    return limits


def fraction(row, name, limits):
    if name not in row or row["kind"] == "compile":
        return None
    seconds = row[name]["median_ms"] * 1e-3
    if row["kind"] == "compute":
        rate = row["flops"] / seconds / 1e9
        # Of the f32 FMA limit, or of the limit of the instructions the
        # kernel computes with (the bf16 dot product).
        return rate, rate / limits[row.get("limit", "fma_gflops")][2], "GFLOP/s"
    # Bytes read (the KV cache, the RoPE input and output): of the read
    # bandwidth where measured, else of the copy bandwidth; bytes written (a
    # cache append): of the copy bandwidth. A case that runs on one thread
    # (the append: tokens are written in order, a repeated slot keeps the
    # later one) is a fraction of the one-thread limit.
    rate = row["bytes"] / seconds / 1e9
    limit = limits[row["limit"]] if "limit" in row else \
        limits.get("read_gbs", limits["copy_gbs"])
    return rate, rate / limit[row.get("threads", 2)], "GB/s"


LIMIT_NAMES = {"fma_gflops": "f32 FMA peak", "copy_gbs": "copy bandwidth",
               "read_gbs": "read bandwidth", "dot_gflops": "vdpbf16ps peak",
               "amx_gflops": "AMX peak"}


def limit_moves(moved):
    """Each limit's move over the run, largest first: which one made it
    contended, and whether the limit a case's fraction uses held."""
    return ", ".join(f"{LIMIT_NAMES.get(k, k)} {100 * v:.0f} %"
                     for k, v in sorted(moved.items(), key=lambda kv: -kv[1]))


# The CPU targets the benchmark is held to, per ISA (the FMA fraction of f32
# prefill S = 2048 differs: AVX-512's wider registers hold a larger micro-tile).
PREFILL_CASE = "prefill rope B=1 Hq=32 Hkv=8 D=128 S={s} causal f32"
CPU_TARGETS = [
    (PREFILL_CASE.format(s=2048), "of the 2-thread FMA peak", {"AVX2": 0.65, "AVX-512": 0.75}),
    (PREFILL_CASE.format(s=512), "of the 2-thread FMA peak", {"AVX2": 0.55, "AVX-512": 0.55}),
    ("decode 1 query, Skv=32768, Hq=32 Hkv=8 D=128 f32", "of the 2-thread read bandwidth",
     {"AVX2": 0.80, "AVX-512": 0.80}),
]
GGML_TARGET = 1.5  # times ggml's rope + flash_attn_ext, same shapes, same run


def target_isa(target):
    """The ISA the targets name: AVX-512 where the kernels use 16-lane f32
    vectors, AVX2 where 8 (None off x86: no timed targets there)."""
    if not target.get("triple", "x86_64").startswith("x86"):
        return None
    return {16: "AVX-512", 8: "AVX2"}.get(target.get("f32_lanes"))


def targets_table(rows, limits, target):
    """Lines of a table: each target, the figure measured, the limit it is a
    fraction of, and whether it is met."""
    isa = target_isa(target)
    if isa is None:
        return []
    by_case = {row["case"]: row for row in rows}
    lines = [f"Targets ({isa}; this run's limits):", "",
             "| target | measured | limit (same run) | met |", "|---|---|---|---|"]
    for case, of, need in CPU_TARGETS:
        row = by_case.get(case)
        fr = fraction(row, "fused", limits) if row else None
        if fr is None:
            continue
        limit = fr[0] / fr[1]
        lines.append(f"| {case}: >= {100 * need[isa]:.0f} % {of} | {fr[0]:.1f} {fr[2]} = "
                     f"{100 * fr[1]:.1f} % | {limit:.1f} {fr[2]} | "
                     f"{'yes' if fr[1] >= need[isa] else '**no**'} |")
    for row in rows:
        if "ggml" in row and "fused" in row:
            ratio = row["ggml"]["median_ms"] / row["fused"]["median_ms"]
            lines.append(f"| {row['case']}: >= {GGML_TARGET}x ggml | {ratio:.2f}x "
                         f"({row['fused']['median_ms']:.1f} vs {row['ggml']['median_ms']:.1f} ms) "
                         f"| - | {'yes' if ratio >= GGML_TARGET else '**no**'} |")
    return lines if len(lines) > 4 else []


def write_report(out, limits, rows, meta):
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump({"meta": meta, "limits": limits, "cases": rows}, f, indent=2)
    names = ["fused", "fused_alloc", "unfused", "dense", "numpy", "pytorch", "ggml"]
    target = meta.get("target", {})
    schedule = target.get("schedule", {})
    tile = schedule.get("micro_tile", {})
    nominal = meta.get("nominal_fma_gflops", {})
    lines = ["# pe-mlir CPU benchmarks", "",
             f"Machine: {meta['machine']}; {meta['date']}; command: `{meta['command']}`; "
             f"load average {meta.get('load_average_before', ['?'])[0]:.2f} before, "
             f"{meta.get('load_average_after', ['?'])[0]:.2f} after"
             + ("; **contended: the limits moved by "
                f"{100 * max(meta['limits_moved'].values()):.0f} % between the start and the "
                f"end of the run** ({limit_moves(meta['limits_moved'])})"
                if meta.get("contended") else
                "; the limits measured again after the cases moved by at most "
                f"{100 * max(meta.get('limits_moved', {'-': 0}).values()):.0f} %") + ".", "",
             f"Target: {target.get('summary', '?')}; schedule: {schedule.get('attention_rows', '?')} "
             f"rows per task, micro-tiles of {tile.get('vectors', '?')} vectors x "
             f"{tile.get('columns', '?')} columns ({tile.get('accumulators', '?')} accumulators), "
             f"{schedule.get('keys_per_tile_d128', '?')} keys per tile at D = 128. "
             "FMA probe: " + (f"{fma_chains(target)} chains of {target['f32_lanes']}-lane vectors"
                              if target else "?")
             + (f"; clock x 2 pipes x lanes x 2 flops gives {nominal[1]:.0f} / {nominal[2]:.0f} "
                f"GFLOP/s (1 / 2 threads) at the clock /proc/cpuinfo reports"
                if nominal.get(1) else "") + ".", "",
             "Limits measured in the same run: f32 FMA peak "
             f"{limits['fma_gflops'][1]:.0f} GFLOP/s (1 thread), {limits['fma_gflops'][2]:.0f} GFLOP/s "
             f"(2 threads); copy bandwidth {limits['copy_gbs'][1]:.1f} GB/s (1 thread), "
             f"{limits['copy_gbs'][2]:.1f} GB/s (2 threads)"
             + (f"; read bandwidth {limits['read_gbs'][1]:.1f} / {limits['read_gbs'][2]:.1f} GB/s "
                f"({meta.get('read_probe', 'a compiled read-only sweep')})"
                if "read_gbs" in limits else "")
             + (f"; bf16 dot product (vdpbf16ps) {limits['dot_gflops'][1]:.0f} / "
                f"{limits['dot_gflops'][2]:.0f} GFLOP/s" if "dot_gflops" in limits else "")
             + (f"; AMX tdpbf16ps {limits['amx_gflops'][1]:.0f} / "
                f"{limits['amx_gflops'][2]:.0f} GFLOP/s" if "amx_gflops" in limits else "")
             + ". Fractions below are of the 2-thread limits (bandwidth: of the read "
             "bandwidth where measured), those of the cases marked 1 thread of the 1-thread "
             "limits. "
             "Causal prefill counts only unmasked work (S(S+1)/2 scores, 2 matmuls). "
             "Times: median of the runs (min-max), ms. The compiled code and PyTorch run on 2 threads.", "",
             "| case | " + " | ".join(names) + " | fused rate | fused / limit | fused vs unfused | fused vs PyTorch | fused vs ggml | peak RSS MB |",
             "|---|" + "---|" * (len(names) + 6)]
    model_rows = [row for row in rows if row["kind"] == "model"]
    rows = [row for row in rows if row["kind"] != "model"]
    for row in rows:
        cells = []
        for n in names:
            if n in row:
                t = row[n]
                cells.append(f"{t['median_ms']:.1f} ({t['min_ms']:.1f}-{t['max_ms']:.1f})")
            else:
                cells.append(row.get(f"{n}_skipped", "-"))
        fr = fraction(row, "fused", limits)
        rate = f"{fr[0]:.1f} {fr[2]}" if fr else "-"
        frac = f"{100 * fr[1]:.1f} %" if fr else "-"
        vs_unfused = (f"{row['unfused']['median_ms'] / row['fused']['median_ms']:.2f}x"
                      if "unfused" in row and "fused" in row else "-")
        vs_torch = (f"{row['pytorch']['median_ms'] / row['fused']['median_ms']:.2f}x"
                    if "pytorch" in row and "fused" in row else "-")
        vs_ggml = (f"{row['ggml']['median_ms'] / row['fused']['median_ms']:.2f}x"
                   if "ggml" in row and "fused" in row else "-")
        lines.append(f"| {row['case']} | " + " | ".join(cells) +
                     f" | {rate} | {frac} | {vs_unfused} | {vs_torch} | {vs_ggml} | "
                     f"{row.get('peak_rss_mb', 0):.0f} |")
    if model_rows:
        lines += ["", "A model's forward with each attention implementation of transformers "
                  "(median (min-max) ms, 2 threads; `pe_fused`: pe.transformers.fuse_rope, "
                  "RoPE inside the kernel; the largest logit difference from eager in brackets, "
                  "for a generation 0 when the tokens equal eager's):",
                  "", "| case | " + " | ".join(MODEL_IMPLEMENTATIONS) + " | pe_fused vs sdpa |",
                  "|---|" + "---|" * (len(MODEL_IMPLEMENTATIONS) + 1)]
        for row in model_rows:
            cells = [f"{row[n]['median_ms']:.1f} ({row[n]['min_ms']:.1f}-{row[n]['max_ms']:.1f}) "
                     f"[{row['max_logit_difference_vs_eager'][n]:.1e}"
                     f"{'' if row.get('logit_reference', 'eager') == 'eager' else ' vs ' + row['logit_reference']}]"
                     if n in row else row.get(f"{n}_skipped", "-")
                     for n in MODEL_IMPLEMENTATIONS]
            ratio = (f"{row['sdpa']['median_ms'] / row['pe_fused']['median_ms']:.2f}x"
                     if "sdpa" in row else "-")
            lines.append(f"| {row['case']} | " + " | ".join(cells) + f" | {ratio} |")
    targets = targets_table(rows, limits, target)
    if targets:
        lines += [""] + targets
    for note in meta.get("notes", []):
        lines += ["", note]
    with open(os.path.join(out, "results.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(11, 0.6 * len(rows) + 2))
        y = np.arange(len(rows))
        width = 0.2
        for i, n in enumerate(names):
            vals = [row[n]["median_ms"] if n in row else np.nan for row in rows]
            ax.barh(y + (i - 2) * width, vals, width, label=n)
        ax.set_yticks(y)
        ax.set_yticklabels([r["case"] for r in rows], fontsize=7)
        ax.set_xscale("log")
        ax.set_xlabel("median time (ms, log scale)")
        ax.legend()
        ax.set_title("pe-mlir CPU benchmarks")
        fig.tight_layout()
        fig.savefig(os.path.join(out, "results.png"), dpi=110)
    except ImportError:
        pass


BF16_KERNEL_NAMES = {"amx": "AMX tiles", "dot": "bf16 dot products", "fma": "f32 FMAs"}


def bf16_note(rows):
    """bf16 prefill and decode: the kernel pe-compile chose, every other bf16
    kernel this host runs beside it, and the f32 kernel of the same case."""
    parts = ["bf16: pe-compile chooses the kernel for the target (--amx=auto: AMX tiles for "
             "prefill where the CPU has AMX; --bf16-dot=auto: dot products where the CPU has "
             "them and, on this host, they outrun f32 FMAs by its measured rates); each "
             "prefill fraction is of the limit of the chosen kernel's instructions, each "
             "decode fraction of the read bandwidth"]
    for row in rows:
        if "kernel" not in row:
            continue
        fused = row["fused"]["median_ms"]
        text = f"{row['case']}: {fused:.1f} ms on {BF16_KERNEL_NAMES[row['kernel']]} (default)"
        for kernel in BF16_KERNELS:
            if f"fused_{kernel}" in row:
                other = row[f"fused_{kernel}"]["median_ms"]
                text += (f", {other:.1f} ms on {BF16_KERNEL_NAMES[kernel]} "
                         f"({' '.join(BF16_KERNELS[kernel])}, {other / fused:.2f}x)")
        f32 = next((r for r in rows if r["case"] == row["case"].replace(" bf16", " f32")
                    and "fused" in r), None)
        if f32:
            text += f", {f32['fused']['median_ms'] / fused:.2f}x the f32 kernel"
        parts.append(text)
    missing = [f"{k} ({bf16_kernel_missing(k)})" for k in BF16_KERNELS if bf16_kernel_missing(k)]
    if missing:
        parts.append("not run on this CPU: " + ", ".join(missing))
    return "; ".join(parts) + "."


def report_notes(rows):
    """The notes under the table."""
    notes = [
        "The process runs with its defaults (glibc malloc untuned). fused and unfused write "
        "into result arrays the caller allocated once (the `_into` entries); fused_alloc is "
        "the fused code returning freshly allocated results, whose pages fault on first "
        "touch at every call.",
        "Every case runs in its own process; peak RSS is that process's maximum resident set "
        "(inputs, outputs and every contender of the case included).",
        "The reference lowering is not run at S = 8192: it materializes the Sq x Skv scores "
        "(8.6 GB in f32 at S = 8192, Hq = 32) and its temporaries, more than this machine's "
        "24 GB. PyTorch's ALiBi at S = 8192 would need the same 8.6 GB as its attn_mask.",
        bf16_note(rows),
    ]
    comp = next((r for r in rows if r["kind"] == "compile"), None)
    if comp:
        notes.append("Compile time of an L-layer model (shared positions, llama3 RoPE, GQA 32/8) "
                     "to an object, median seconds: " + ", ".join(
                         f"L = {l}: {t['median_ms'] / 1e3:.2f} s"
                         for l, t in comp["layers"].items()) +
                     ". Layers of one shape share one attention kernel function, so the "
                     "per-layer cost is the layer's own IR (call, table sharing), not a new kernel.")
    return notes


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes only")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "results"))
    parser.add_argument("--mcpu", default="",
                        help="compile pe's contenders (and the FMA probe) for this CPU of "
                             "the machine's ISA family, e.g. x86-64-v3 (default: the host)")
    parser.add_argument("--only", default="",
                        help="comma-separated cases KIND:S:HKV to run instead of all, e.g. "
                             "prefill-rope:2048:8,decode:32768:0")
    parser.add_argument("--case", help=argparse.SUPPRESS)  # KIND:S:HKV, one case, JSON out
    parser.add_argument("--render", action="store_true",
                        help="only rewrite results.md/png from --out/results.json")
    args = parser.parse_args()
    if args.render:
        with open(os.path.join(args.out, "results.json")) as f:
            data = json.load(f)
        # The notes describe the machine of the run (its bf16 kernels): kept.
        data["meta"].setdefault("notes", report_notes(data["cases"]))
        data["limits"] = {name: {int(t): v for t, v in by.items()}
                          for name, by in data["limits"].items()}
        if "nominal_fma_gflops" in data["meta"]:
            data["meta"]["nominal_fma_gflops"] = {
                int(t): v for t, v in data["meta"]["nominal_fma_gflops"].items()}
        write_report(args.out, data["limits"], data["cases"], data["meta"])
        return
    if args.case:
        kind, s, hkv = args.case.split(":")
        row = run_case(kind, int(s), int(hkv), args.repeat)
        print("ROW " + json.dumps(row))
        return

    if args.mcpu:
        os.environ["PE_BENCH_MCPU"] = args.mcpu  # for this process and the cases
        global MCPU, TARGET_ARGS
        MCPU, TARGET_ARGS = args.mcpu, [f"--mcpu={args.mcpu}"]
    target = target_description()
    load_before = os.getloadavg()
    limits = measure_limits(args.repeat, target)
    print("target:", target["summary"], flush=True)
    print("limits:", json.dumps(limits), flush=True)
    rows = []
    rope_s = [512] if args.quick else [4096]
    prefill_s = [128, 256] if args.quick else [512, 2048, 8192]
    decode_skv = [1024] if args.quick else [4096, 32768]
    cases = [("rope", s, 0) for s in rope_s]
    cases += [("prefill-rope", s, hkv) for s in prefill_s for hkv in (8, 32)]
    cases += [("prefill-rope-bf16", prefill_s[min(1, len(prefill_s) - 1)], 8)]
    cases += [("prefill-alibi", s, 32) for s in prefill_s]
    cases += [("decode", s, 0) for s in decode_skv]
    cases += [("decode-bf16", decode_skv[-1], 0)]
    cases += [("paged-decode", 0, 0), ("paged-decode-bf16", 0, 0), ("paged-decode-hnd", 0, 0),
              ("paged-decode-many", 0, 0), ("paged-decode-many-hnd", 0, 0),
              ("append", 0, 0), ("append-c", 0, 0),
              ("chunked-prefill", 0, 0), ("chunked-prefill-bf16", 0, 0)]
    cases += [("mla-absorbed", decode_skv[0], 0), ("mla-absorbed-bf16", decode_skv[0], 0)]
    mla_s = prefill_s[min(1, len(prefill_s) - 1)]
    cases += [("mla-prefill", mla_s, 0), ("mla-prefill-bf16", mla_s, 0)]
    cases += [("compile", 0, 0)]
    try:
        import torch  # noqa: F401
        import transformers  # noqa: F401
        cases += [("model", s, 0) for s in ([128] if args.quick else [512, 2048, 8192])]
        cases += [("model-generate", 128 if args.quick else 512, 0)]
    except ImportError:
        print("transformers is not installed: no model case", flush=True)
    try:
        import iree.turbine  # noqa: F401
        cases += [("raise", s, 0) for s in ([128] if args.quick else [512, 2048])]
    except ImportError:
        print("iree-turbine is not installed: no raising case", flush=True)
    if args.only:
        cases = [(kind, int(s), int(hkv)) for kind, s, hkv in
                 (case.split(":") for case in args.only.split(","))]
    for kind, s, hkv in cases:
        proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--case",
                               f"{kind}:{s}:{hkv}", "--repeat", str(args.repeat)],
                              capture_output=True, text=True)
        lines = [l for l in proc.stdout.splitlines() if l.startswith("ROW ")]
        if proc.returncode != 0 or not lines:
            raise RuntimeError(f"case {kind}:{s}:{hkv} failed:\n{proc.stdout}\n{proc.stderr}")
        row = json.loads(lines[-1][4:])
        rows.append(row)
        print(json.dumps(row), flush=True)
    limits_after = measure_limits(args.repeat, target)
    moved = {name: max(abs(limits_after[name][t] / limits[name][t] - 1) for t in (1, 2))
             for name in limits}
    notes = report_notes(rows)
    meta = {"machine": f"{cpu_model()}, {os.cpu_count()} cores",
            "date": time.strftime("%Y-%m-%d"),
            "command": "python benchmarks/run.py" + (" --quick" if args.quick else "")
                       + (f" --only={args.only}" if args.only else "")
                       + (f" --mcpu={args.mcpu}" if args.mcpu else ""),
            "target": {k: target[k] for k in ("triple", "cpu", "summary", "vector_bits",
                                              "vector_registers", "f32_lanes", "schedule")},
            "load_average_before": load_before, "load_average_after": os.getloadavg(),
            "limits_after": limits_after, "limits_moved": moved,
            "contended": max(moved.values()) > 0.10,
            "nominal_fma_gflops": {t: nominal_fma_peak(target, t) for t in (1, 2)},
            "read_probe": READ_PROBE,
            "notes": notes}
    write_report(args.out, limits, rows, meta)
    print(open(os.path.join(args.out, "results.md")).read())


if __name__ == "__main__":
    main()
