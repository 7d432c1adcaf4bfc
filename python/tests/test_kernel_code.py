"""The machine code of the attention kernels on every target: vector FMAs of
the target's width in the inner loops, and no spills there.

Each kernel is compiled to assembly (`pe-compile --emit=asm`, LLVM's verbose
assembly, which marks loops and names spills and reloads); the innermost
loops holding at least 8 FMAs (`pe.testing.inner_loops`) must use the
target's vectors (ymm for AVX2, zmm for AVX-512, `fmla v*.4s` for NEON,
`fmla z*.s` for SVE) and contain no `Spill` and no reload that is an
instruction of its own (a `Folded Reload` is an FMA's memory operand: a
loop-invariant row of Q that LLVM hoisted and reads back where the source
reads it from the kernel's scratch).
"""

from __future__ import annotations

import re
import subprocess

import pytest

from pe import runner
from pe.testing import inner_loops

PREFILL = """
func.func @prefill(%q: tensor<1x32x?x128x{t}>, %k: tensor<1x8x?x128x{t}>, %v: tensor<1x8x?x128x{t}>,
                   %p: tensor<?xi32>) -> tensor<1x32x?x128x{t}> {{
  %o = pe.attention %q, %k, %v q_positions(%p : tensor<?xi32>) k_positions(%p : tensor<?xi32>)
       causal rope(#pe.rope<theta = 500000.0, rotary_dim = 128, scaling = #pe.llama3<factor = 8.0,
       original_max_position_embeddings = 8192>>)
       : tensor<1x32x?x128x{t}>, tensor<1x8x?x128x{t}>, tensor<1x8x?x128x{t}> -> tensor<1x32x?x128x{t}>
  return %o : tensor<1x32x?x128x{t}>
}}
"""
# Decode over a cache of static length, as the benchmarks run it. (With a
# dynamic key count, LLVM keeps enough values live across the loop of the
# tiles with masked keys that AVX-512 and NEON spill an accumulator or two
# there; those tiles are the window's and the mask operand's edges.)
DECODE = """
func.func @decode(%q: tensor<1x32x1x128x{t}>, %k: tensor<1x8x4096x128x{t}>,
                  %v: tensor<1x8x4096x128x{t}>) -> tensor<1x32x1x128x{t}> {{
  %o = pe.attention %q, %k, %v causal
       : tensor<1x32x1x128x{t}>, tensor<1x8x4096x128x{t}>, tensor<1x8x4096x128x{t}>
       -> tensor<1x32x1x128x{t}>
  return %o : tensor<1x32x1x128x{t}>
}}
"""

# target: (pe-compile arguments, the FMA of the target's vectors)
TARGETS = {
    "avx2": (["--mtriple=x86_64-linux-gnu", "--mcpu=znver2"], r"vfmadd\d+ps\s.*%ymm"),
    "avx512": (["--mtriple=x86_64-linux-gnu", "--mcpu=cooperlake"], r"vfmadd\d+ps\s.*%zmm"),
    "neon": (["--mtriple=aarch64-linux-gnu", "--mcpu=neoverse-n1"], r"fmla\s+v\d+\.4s"),
    "neon-v2": (["--mtriple=aarch64-linux-gnu", "--mcpu=neoverse-v2"], r"fmla\s+v\d+\.4s"),
    "sve256": (["--mtriple=aarch64-linux-gnu", "--mcpu=neoverse-v1", "--sve-vector-bits=256"],
               r"fmla\s+z\d+\.s"),
}
ANY_FMA = r"\bv?fmadd\d+ps\b|\bfmla\b"


def function_text(text, name):
    """The assembly of function `name` (up to its .Lfunc_end label)."""
    start = text.index(f"\n{name}:")
    return text[start:text.index("\n.Lfunc_end", start)]


def assembly(ir, args):
    proc = subprocess.run([runner.PE_COMPILE, "-", "--emit=asm", "-o", "-", *args], input=ir,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.mark.parametrize("kernel", ["prefill", "decode"])
@pytest.mark.parametrize("target", sorted(TARGETS))
def test_inner_loops_fma_without_spills(target, kernel):
    args, fma = TARGETS[target]
    ir = (PREFILL if kernel == "prefill" else DECODE).format(t="f32")
    text = assembly(ir, args)
    if kernel == "prefill":
        # The prefill kernel alone: with a dynamic Sq the module also holds the
        # decode kernel for a call with one query, over a dynamic key count
        # (see DECODE's comment).
        text = function_text(text, "pe_attention_kernel")
    hot = [(header, body) for header, body in inner_loops(text)
           if sum(bool(re.search(ANY_FMA, line)) for line in body) >= 8]
    assert hot, "no inner loop of vector FMAs"
    for header, body in hot:
        fmas = [line for line in body if re.search(ANY_FMA, line)]
        assert all(re.search(fma, line) for line in fmas), \
            f"{header}: FMAs not of the target's vectors: {fmas[:3]}"
        spills = [line for line in body if "Spill" in line or
                  ("Reload" in line and "Folded Reload" not in line)]
        assert not spills, f"{header}: {len(spills)} spills/reloads: {spills[:3]}"
    if target == "avx2":
        assert "zmm" not in text, "AVX-512 registers in code for an AVX2 CPU"


@pytest.mark.parametrize("kernel", ["prefill", "decode"])
def test_bf16_kernels_use_the_targets_dot_products(kernel):
    """bf16: vdpbf16ps where AVX512-BF16 is, BFDOT on NEON with BF16, f32
    FMAs on AVX2 and NEON without BF16."""
    ir = (PREFILL if kernel == "prefill" else DECODE).format(t="bf16")
    assert "vdpbf16ps" in assembly(ir, TARGETS["avx512"][0])
    assert re.search(r"bfdot\s+v\d+\.4s", assembly(ir, TARGETS["neon-v2"][0]))
    avx2 = assembly(ir, TARGETS["avx2"][0])
    assert "vdpbf16ps" not in avx2 and re.search(TARGETS["avx2"][1], avx2)
    neon = assembly(ir, TARGETS["neon"][0])
    assert "bfdot" not in neon and re.search(TARGETS["neon"][1], neon)


@pytest.mark.parametrize("amx", ["auto", "off"])
def test_bf16_prefill_on_amx_where_the_target_has_it(amx):
    """bf16 prefill on AMX tiles (tdpbf16ps) by default on a CPU with AMX,
    with --amx=off on the dot products or FMAs; decode shapes never use AMX."""
    args = ["--mtriple=x86_64-linux-gnu", "--mcpu=sapphirerapids", f"--amx={amx}"]
    prefill = assembly(PREFILL.format(t="bf16"), args)
    assert ("tdpbf16ps" in prefill) == (amx == "auto")
    assert "tdpbf16ps" not in assembly(DECODE.format(t="bf16"), args)
