"""Code for every CPU: the target description, bf16/f16 conversions without
the instructions for them, and libraries that load wherever they are run.

`pe-compile --print-target` must describe this machine as /proc/cpuinfo does;
every library, for every x86 level and for AArch64, must load with all of its
symbols resolved (no compiler-rt helper such as `__truncsfbf2` left
undefined); f32 -> bf16 and f32 -> f16 conversions must round to nearest even
bit for bit as `ml_dtypes` does, whether the target has an instruction for
them (AVX512-BF16, F16C, AArch64 BF16) or the compiler emits the rounding as
integer arithmetic (AVX2, baseline x86-64, Neoverse N1). The only difference
allowed is in NaN: any quiet NaN.
"""

from __future__ import annotations

import ctypes
import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest

from pe import emulated, ir, reference, runner
from pe.ir import rope_attr
from pe.testing import check_attention, inner_loops, round_to

ml_dtypes = pytest.importorskip("ml_dtypes")

pytestmark = pytest.mark.skipif(not os.access(runner.PE_COMPILE, os.X_OK),
                                reason=f"pe-compile not found at {runner.PE_COMPILE}")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HOST_FLAGS = runner._cpu_flags()
AARCH64_MISSING = emulated.missing("aarch64")


def describe(*args):
    out = subprocess.run([runner.PE_COMPILE, "--print-target", *args], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)


def x86_levels():
    """The x86 levels this machine runs: baseline, v2, v3 and (AVX-512) v4."""
    levels = ["x86-64", "x86-64-v2"]
    if {"avx2", "fma", "f16c"} <= HOST_FLAGS:
        levels.append("x86-64-v3")
    if {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= HOST_FLAGS:
        levels.append("x86-64-v4")
    return levels


def test_host_description_matches_cpuinfo():
    host = describe()
    if not HOST_FLAGS:
        pytest.skip("no /proc/cpuinfo flags")
    assert host["isa"] == "x86"
    assert host["vector_bits"] == (512 if "avx512f" in HOST_FLAGS else
                                   256 if "avx2" in HOST_FLAGS else 128)
    assert host["vector_registers"] == (32 if "avx512f" in HOST_FLAGS else 16)
    assert host["f32_lanes"] * 32 == host["vector_bits"]
    assert host["fma"] == ("fma" in HOST_FLAGS)
    assert host["f16_convert"] == ("f16c" in HOST_FLAGS)
    assert host["bf16_dot"] == ("avx512_bf16" in HOST_FLAGS)
    assert host["amx"] == ({"amx_tile", "amx_bf16"} <= HOST_FLAGS)
    tile = host["schedule"]["micro_tile"]
    # accumulators + operand vectors + one broadcast fit the registers, one to spare
    assert tile["accumulators"] + tile["vectors"] + 1 <= host["vector_registers"] - 1


def conversion_ir(n):
    return f"""
func.func @to_bf16(%x: tensor<{n}xf32>) -> tensor<{n}xbf16> {{
  %e = tensor.empty() : tensor<{n}xbf16>
  %y = linalg.generic {{indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                        iterator_types = ["parallel"]}} ins(%x : tensor<{n}xf32>) outs(%e : tensor<{n}xbf16>) {{
  ^bb0(%a: f32, %b: bf16):
    %t = arith.truncf %a : f32 to bf16
    linalg.yield %t : bf16
  }} -> tensor<{n}xbf16>
  return %y : tensor<{n}xbf16>
}}
func.func @to_f16(%x: tensor<{n}xf32>) -> tensor<{n}xf16> {{
  %e = tensor.empty() : tensor<{n}xf16>
  %y = linalg.generic {{indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                        iterator_types = ["parallel"]}} ins(%x : tensor<{n}xf32>) outs(%e : tensor<{n}xf16>) {{
  ^bb0(%a: f32, %b: f16):
    %t = arith.truncf %a : f32 to f16
    linalg.yield %t : f16
  }} -> tensor<{n}xf16>
  return %y : tensor<{n}xf16>
}}
func.func @from_bf16(%x: tensor<{n}xbf16>) -> tensor<{n}xf32> {{
  %e = tensor.empty() : tensor<{n}xf32>
  %y = linalg.generic {{indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                        iterator_types = ["parallel"]}} ins(%x : tensor<{n}xbf16>) outs(%e : tensor<{n}xf32>) {{
  ^bb0(%a: bf16, %b: f32):
    %t = arith.extf %a : bf16 to f32
    linalg.yield %t : f32
  }} -> tensor<{n}xf32>
  return %y : tensor<{n}xf32>
}}
"""


def special_values():
    """Ties (even and odd), the ends of the ranges, subnormals, infinities,
    overflow to infinity in bf16 and in f16, signed zeros, and random bits."""
    bits = [0x00000000, 0x80000000, 0x3F808000, 0x3F818000, 0x3F80C000, 0x3F807FFF,
            0x7F7FFFFF, 0xFF7FFFFF, 0x7F7F8000, 0x00000001, 0x80000001, 0x007FFFFF,
            0x00800000, 0x7F800000, 0xFF800000, 0x477FEFFF, 0x477FF000, 0x38800000,
            0x33800000, 0x33000001, 0x387FE000]
    rng = np.random.default_rng(7)
    bits += list(rng.integers(0, 2**32, 4096 - len(bits) - 3, dtype=np.uint64))
    values = np.array(bits, dtype=np.uint32).view(np.float32).copy()
    values = values[np.isfinite(values) | np.isinf(values)]
    nans = np.array([0x7FC00000, 0xFFC00001, 0x7F800001], dtype=np.uint32).view(np.float32)
    return np.concatenate([values, nans])


def check_conversions(mod):
    x = special_values()
    nan = np.isnan(x)
    (b,) = mod.call("to_bf16", x)
    (h,) = mod.call("to_f16", x)
    with np.errstate(over="ignore", invalid="ignore"):
        want_b = x.astype(ml_dtypes.bfloat16)
        want_h = x.astype(np.float16)
    got_bits, want_bits = b.view(np.uint16), want_b.view(np.uint16)
    assert np.array_equal(got_bits[~nan], want_bits[~nan]), \
        x[~nan][got_bits[~nan] != want_bits[~nan]][:8]
    assert np.isnan(b[nan].astype(np.float32)).all()
    assert ((got_bits[nan] & 0x7FC0) == 0x7FC0).all()  # quiet NaNs
    got_h, want_hb = h.view(np.uint16), want_h.view(np.uint16)
    assert np.array_equal(got_h[~nan], want_hb[~nan]), x[~nan][got_h[~nan] != want_hb[~nan]][:8]
    assert np.isnan(h[nan]).all()
    (back,) = mod.call("from_bf16", want_b)
    assert np.array_equal(back.view(np.uint32)[~nan],
                          want_b.astype(np.float32).view(np.uint32)[~nan])


def undefined_symbols(library):
    out = subprocess.run(["nm", "-D", "--undefined-only", library], check=True,
                         capture_output=True, text=True).stdout
    return {line.split()[-1].split("@")[0] for line in out.splitlines() if line.strip()}


def assert_no_helpers(library):
    """No compiler-rt/libgcc conversion helper is left to the dynamic loader."""
    helpers = {s for s in undefined_symbols(library)
               if s.startswith(("__trunc", "__extend", "__float", "__fix"))}
    assert not helpers, f"{library} needs {sorted(helpers)}"


@pytest.mark.parametrize("cpu", x86_levels())
def test_x86_conversions_round_to_nearest_even(cpu):
    """Every x86 level this machine runs, with or without F16C and
    AVX512-BF16: the library loads (every symbol resolved) and rounds."""
    mod = runner.compile(conversion_ir(len(special_values())), [f"--mcpu={cpu}"])
    assert_no_helpers(mod.library)
    check_conversions(mod)


@pytest.mark.parametrize("cpu", ["x86-64", "x86-64-v3", "znver2", "znver4", "sapphirerapids"])
def test_attention_libraries_need_no_helper(cpu, tmp_path):
    """bf16 and f16 attention, RoPE and tables for CPUs without AVX512-BF16
    (and baseline x86-64 without F16C) reference no conversion helper, and the
    levels this machine runs load."""
    ir = open(os.path.join(os.path.dirname(__file__), "..", "..", "examples",
                           "every-op.mlir")).read()
    library = str(tmp_path / "libk.so")
    subprocess.run([runner.PE_COMPILE, "-", "--emit=shared", "-o", library, f"--mcpu={cpu}"],
                   input=ir, check=True, capture_output=True, text=True)
    assert_no_helpers(library)
    if cpu in x86_levels():
        ctypes.CDLL(library)  # RTLD_NOW: every symbol resolved


@pytest.mark.skipif(AARCH64_MISSING is not None, reason=f"AArch64: {AARCH64_MISSING}")
@pytest.mark.parametrize("cpu", ["neoverse-n1", "neoverse-v2", "neoverse-v1 sve256"])
def test_aarch64_conversions_round_to_nearest_even(cpu):
    """Neoverse N1 has no BF16 (the rounding is integer IR); V2 has BFCVT;
    V1 at a fixed SVE length of 256 bits computes with SVE instructions."""
    name, _, sve = cpu.partition(" ")
    args = ["--mtriple=aarch64-linux-gnu", f"--mcpu={name}"]
    if sve:
        args.append("--sve-vector-bits=256")
    mod = runner.compile(conversion_ir(len(special_values())), args)
    check_conversions(mod)


def test_jit_refuses_features_the_host_lacks(tmp_path):
    """--emit=jit runs here: a target with features this CPU lacks is refused
    with their names rather than run into an illegal instruction."""
    main = tmp_path / "main.mlir"
    main.write_text("func.func @main() { return }\n")
    missing = "sapphirerapids" if "amx_tile" not in HOST_FLAGS else None
    if missing is None:
        pytest.skip("this CPU has every feature of the CPUs named here")
    proc = subprocess.run([runner.PE_COMPILE, str(main), "--emit=jit", f"--mcpu={missing}"],
                          capture_output=True, text=True)
    assert proc.returncode == 1
    assert "lacks features of the target" in proc.stderr and "amx" in proc.stderr
    proc = subprocess.run([runner.PE_COMPILE, str(main), "--emit=jit",
                           "--mtriple=aarch64-linux-gnu", "--mcpu=neoverse-n1"],
                          capture_output=True, text=True)
    assert proc.returncode == 1 and "runs on this machine" in proc.stderr


def _describe_with_cache(cache_dir, *args):
    env = dict(os.environ, PE_CACHE_DIR=str(cache_dir))
    out = subprocess.run([runner.PE_COMPILE, "--print-target", *args], check=True,
                         capture_output=True, text=True, env=env).stdout
    return json.loads(out)


def test_named_cpus_use_their_bf16_dot_products():
    """For a named CPU the feature decides: dot products wherever it has them
    (the host's own model named bare too: it is the model, not the host)."""
    for cpu, dot in (("znver4", True), ("sapphirerapids", True), ("x86-64-v3", False)):
        named = describe(f"--mcpu={cpu}")
        assert named["schedule"]["bf16_dot_products"] is dot, cpu
        assert "measured_one_core_gflops" not in named


@pytest.mark.skipif("avx512_bf16" not in HOST_FLAGS, reason="the CPU has no avx512_bf16")
def test_host_bf16_dot_products_chosen_by_measured_rates(tmp_path):
    """On the host the measured rates decide (cached per machine): the cache
    file is written once with plausible rates, and the choice follows the
    rates it holds (dot products at 1.2x the FMA rate or more)."""
    first = _describe_with_cache(tmp_path)
    files = list(tmp_path.glob("throughput-*.json"))
    assert len(files) == 1
    cached = json.loads(files[0].read_text())
    rates = first["measured_one_core_gflops"]
    assert cached["fma_gflops"] == rates["f32_fma"]
    # One core: at least 4 lanes x 2 flops x 1 GHz, at most 2 pipes x 16
    # lanes x 2 flops x 6 GHz.
    for rate in (rates["f32_fma"], rates["bf16_dot"] / 2):
        assert 8 <= rate <= 384
    assert first["schedule"]["bf16_dot_products"] == (rates["bf16_dot"] >= 1.2 * rates["f32_fma"])
    for dot, chosen in ((2.0, True), (0.5, False), (1.1, False)):
        files[0].write_text(json.dumps(dict(cached, bf16_dot_gflops=dot * cached["fma_gflops"])))
        assert _describe_with_cache(tmp_path)["schedule"]["bf16_dot_products"] is chosen
    # Another host's (or a damaged) file is measured again and replaced.
    files[0].write_text(json.dumps(dict(cached, host="another-cpu")))
    again = _describe_with_cache(tmp_path)
    assert json.loads(files[0].read_text())["host"] == cached["host"]
    assert again["measured_one_core_gflops"]["f32_fma"] > 0


# An AVX2-only machine, emulated: qemu-x86_64 -cpu EPYC-Rome (AMD Zen 2: AVX2,
# FMA, F16C; no AVX-512, no AVX512-BF16, no AMX). pe-compile itself runs on
# it, so the host it detects and the code it picks are that machine's, and
# the library runs on it, where any instruction Zen 2 lacks faults.
ZEN2 = "EPYC-Rome"
ZEN2_MISSING = emulated.missing_cpu_model()
needs_host_qemu = pytest.mark.skipif(ZEN2_MISSING is not None,
                                     reason=f"emulated Zen 2: {ZEN2_MISSING}")


@needs_host_qemu
def test_emulated_zen2_host_description():
    zen2 = json.loads(emulated.print_target_as_host(ZEN2))
    assert (zen2["isa"], zen2["cpu"]) == ("x86", "znver2")
    assert (zen2["vector_bits"], zen2["vector_registers"], zen2["f32_lanes"]) == (256, 16, 8)
    assert zen2["fma"] and zen2["f16_convert"]
    assert not (zen2["bf16_dot"] or zen2["bf16_convert"] or zen2["amx"])
    features = zen2["features"].split(",")
    assert "+avx2" in features and "-avx512f" in features
    schedule = zen2["schedule"]
    assert schedule["micro_tile"] == {"vectors": 2, "columns": 6, "accumulators": 12}
    assert not schedule["bf16_dot_products"]


def _zen2_functions():
    """(IR, reference of each function from its inputs) of the attention shapes an
    AVX2 host compiles for itself: bf16 GQA prefill with llama3 RoPE, bf16 decode
    with YaRN over split keys, f16 with a window and ALiBi, f32 with a mask, and an
    f16 `pe.rope`."""
    llama3 = dict(theta=500000.0, rotary_dim=64, style="half",
                  scaling={"type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                           "high_freq_factor": 4.0, "original_max_position_embeddings": 64})
    yarn = dict(theta=10000.0, rotary_dim=32, style="interleaved",
                scaling={"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32})
    t = lambda shape, dtype: "tensor<" + "x".join(map(str, shape)) + f"x{dtype}>"
    cases = {  # name: (dtype, q, kv, attrs, mask)
        "prefill_bf16": ("bf16", (1, 8, 40, 64), (1, 2, 40, 64), dict(causal=True, rope=llama3), False),
        "decode_bf16": ("bf16", (1, 8, 1, 64), (1, 2, 700, 64), dict(rope=yarn), False),
        "window_alibi_f16": ("f16", (1, 4, 33, 32), (1, 4, 33, 32),
                             dict(causal=True, window=8, alibi=8.0), False),
        "mask_f32": ("f32", (2, 6, 17, 48), (2, 3, 21, 48), {}, True),
    }
    funcs, refs = [], {}
    for name, (dtype, q, kv, attrs, mask) in cases.items():
        m = t((q[0], q[1], q[2], kv[2]), "f32") if mask else None
        op_attrs = dict(attrs, rope=rope_attr(**attrs["rope"])) if "rope" in attrs else attrs
        funcs.append(ir.attention_function(name, t(q, dtype), t(kv, dtype), t(kv, dtype),
                                           mask=m, **op_attrs))
        refs[name] = (dtype, q, kv, attrs, mask)
    x = t((1, 3, 25, 64), "f16")
    funcs.append(f"func.func @rope_f16(%x: {x}, %p: tensor<25xi64>) -> {x} {{\n"
                 f"  %y = pe.rope {rope_attr(**yarn)} %x, %p : {x}, tensor<25xi64>\n"
                 f"  return %y : {x}\n}}\n")
    return "\n".join(funcs), refs, yarn


@needs_host_qemu
def test_emulated_zen2_host_compiles_and_runs_for_itself():
    """pe-compile with no target on the emulated Zen 2: the library has no
    512-bit register, no bf16 dot product and no undefined helper, and every
    function matches the float64 reference on that CPU."""
    text, refs, yarn = _zen2_functions()
    mod = emulated.compile_as_host(ZEN2, text, timeout=600)
    asm = subprocess.run(["objdump", "-d", mod.library], check=True, capture_output=True,
                         text=True).stdout
    assert "%ymm" in asm and "%zmm" not in asm and "vdpbf16ps" not in asm
    assert_no_helpers(mod.library)
    rng = np.random.default_rng(2)
    for name, (dtype, q_shape, kv_shape, attrs, mask) in refs.items():
        q, k, v = (round_to(rng.standard_normal(s), dtype) for s in (q_shape, kv_shape, kv_shape))
        args = [q, k, v]
        if mask:
            m = np.where(rng.random(q_shape[:3] + kv_shape[2:3]) < 0.2, -np.inf,
                         rng.standard_normal(q_shape[:3] + kv_shape[2:3])).astype(np.float32)
            args.append(m)
        want = reference.attention(q, k, v, mask=m if mask else None, **attrs)
        call = [a.astype(np.float16) if dtype == "f16" and i < 3 else a.astype(np.float32)
                for i, a in enumerate(args)]
        (got,) = mod.call(name, *call)
        check_attention(got, want, dtype, f"emulated Zen 2 {name}")
    x = round_to(rng.standard_normal((1, 3, 25, 64)), "f16")
    p = np.sort(rng.choice(5000, 25, replace=False)).astype(np.int64)
    (got,) = mod.call("rope_f16", x.astype(np.float16), p)
    want = reference.apply_rope(x, p, **yarn)
    assert np.abs(np.asarray(got, np.float64) - want).max() <= 2e-3 * max(1.0, np.abs(want).max())


@needs_host_qemu
def test_emulated_zen2_faults_on_avx512_code():
    """The emulation is a real AVX2-only CPU: a library built for AVX-512 dies
    there with SIGILL (so the AVX2 runs of the suite can fail), and the same
    function built for Zen 2 runs."""
    x = "tensor<1x4x16x128xf32>"
    text = (f"func.func @rope(%x: {x}, %p: tensor<16xi64>) -> {x} {{\n"
            f"  %y = pe.rope {rope_attr()} %x, %p : {x}, tensor<16xi64>\n"
            f"  return %y : {x}\n}}\n")
    x_in = np.ones((1, 4, 16, 128), np.float32)
    p = np.arange(16, dtype=np.int64)
    wide = runner.compile(text, ["--mtriple=x86_64-linux-gnu", "--mcpu=skylake-avx512"],
                          qemu_cpu=ZEN2)
    with pytest.raises(RuntimeError, match="Illegal instruction"):
        wide.call("rope", x_in, p)
    narrow = runner.compile(text, ["--mtriple=x86_64-linux-gnu", "--mcpu=znver2"], qemu_cpu=ZEN2)
    (got,) = narrow.call("rope", x_in, p)
    # f32: the rotated values are at most sqrt(2), a few of their ulps (2^-23 each).
    assert np.abs(got - reference.apply_rope(x_in, p)).max() <= 2e-6


@needs_host_qemu
def test_emulated_zen2_benchmark_probes_its_fma_peak_with_ymm_chains(tmp_path):
    """benchmarks/run.py's FMA probe, as that machine builds it for itself: one
    independent chain of 256-bit FMAs per accumulator (12 on 16 registers),
    every accumulator in a register of its own, none spilled in the loop, so
    the peak it measures is the machine's FMA rate (a probe of 128-bit FMAs or
    of too few chains reports half of it; one whose multiply LLVM folds, x +
    a b with constant a and b, measures the adder)."""
    sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
    import run as bench  # noqa: E402  (benchmarks/run.py)

    target = json.loads(emulated.print_target_as_host(ZEN2))
    lanes, chains = target["f32_lanes"], bench.fma_chains(target)
    assert (lanes, chains) == (8, 12)
    src, out = tmp_path / "probe.mlir", tmp_path / "probe.s"
    src.write_text(bench.fma_ir(lanes, chains))
    emulated.pe_compile_as_host(ZEN2, [str(src), "--emit=asm", "-o", str(out)], timeout=600)
    asm = out.read_text()
    loops = [lines for _, lines in inner_loops(asm) if any("vfmadd" in l for l in lines)]
    assert len(loops) == 1, loops
    body = "\n".join(loops[0])
    fmas = re.findall(r"vfmadd\d+ps\s+%ymm\d+, %ymm\d+, (%ymm\d+)", body)
    assert len(fmas) == chains and len(set(fmas)) == chains, body
    assert "%rsp" not in body and "%zmm" not in asm
