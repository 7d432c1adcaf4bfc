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
import subprocess

import numpy as np
import pytest

from pe import emulated, runner

ml_dtypes = pytest.importorskip("ml_dtypes")

pytestmark = pytest.mark.skipif(not os.access(runner.PE_COMPILE, os.X_OK),
                                reason=f"pe-compile not found at {runner.PE_COMPILE}")

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
    """For a named CPU the feature decides: dot products wherever it has them."""
    host = describe()["cpu"]  # naming the host's own CPU is the host
    for cpu, dot in (("znver4", True), ("sapphirerapids", True), ("x86-64-v3", False)):
        if cpu != host:
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
