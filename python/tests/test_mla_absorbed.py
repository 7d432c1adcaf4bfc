"""Absorbed multi-head latent attention (DeepSeek-V2/V3 decode over the compressed cache).

In the absorbed form each query head is projected into the latent space: q is
[B, H, Sq, 512 + 64] (its latent part and its rotated rope part), the cache holds one
KV head per token, the latent c_kv (512 channels) followed by the rotated k_pe (64),
and the values are the latent itself: `v = latent[..., :512]`. In `pe` that is one
pe.attention of H query heads against one KV head (MQA) whose value operand is a
`tensor.extract_slice` of the key operand; the CPU kernel reads the values in place from
the latent rows (no copy of the cache) and rotates the trailing 64 channels
(`rotary_offset = 512`).

Checked against the float64 reference for decode and a prefill chunk, f32 and bf16,
DeepSeek's interleaved YaRN rope with its mscale, on the kernels (several tilings and
threads, AVX2), the reference lowering and the GPU lowering's schedule on the CPU (the SIMT
kernel, dense and paged, streaming the 576 channels of a query and key row per key).
Tolerances: pe.testing.ATTENTION_TOLERANCE.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from pe import reference, runner
from pe.testing import ATTENTION_LOWERINGS, check_attention, round_to

LATENT, ROPE_DIM = 512, 64
ROPE = dict(theta=10000.0, rotary_dim=ROPE_DIM, rotary_offset=LATENT, style="interleaved",
            scaling={"type": "yarn", "factor": 40.0, "original_max_position_embeddings": 4096,
                     "beta_fast": 32.0, "beta_slow": 1.0, "mscale": 1.0,
                     "mscale_all_dim": 1.0})
# DeepSeek-V3's softmax scale: mscale^2 / sqrt(qk head dim 192).
SCALE = (0.1 * math.log(40.0) + 1.0) ** 2 / math.sqrt(192)
LOWERINGS = {name: ATTENTION_LOWERINGS[name]
             for name in ("kernels", "kernels-default", "kernels-avx2", "reference",
                                     "gpu-schedule")}


def absorbed_ir(heads: int, dtype: str) -> str:
    from pe import ir
    d = LATENT + ROPE_DIM
    q, latent = f"tensor<?x{heads}x?x{d}x{dtype}>", f"tensor<?x1x?x{d}x{dtype}>"
    out, v = f"tensor<?x{heads}x?x{LATENT}x{dtype}>", f"tensor<?x1x?x{LATENT}x{dtype}>"
    return f"""func.func @absorbed(%q: {q}, %c: {latent}, %qp: tensor<?x?xi64>,
                     %kp: tensor<?x?xi64>) -> {out} {{
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %b = tensor.dim %c, %c0 : {latent}
  %s = tensor.dim %c, %c2 : {latent}
  %v = tensor.extract_slice %c[0, 0, 0, 0] [%b, 1, %s, {LATENT}] [1, 1, 1, 1] : {latent} to {v}
  %o = pe.attention %q, %c, %v q_positions(%qp : tensor<?x?xi64>) k_positions(%kp : tensor<?x?xi64>)
       scale({ir.format_f64(SCALE)}) causal rope({ir.rope_attr(**ROPE)})
       : {q}, {latent}, {v} -> {out}
  return %o : {out}
}}"""


@pytest.fixture(scope="module", params=list(LOWERINGS), ids=str)
def modules(request):
    flags = LOWERINGS[request.param]
    if "--mcpu=x86-64-v3" in flags and "avx2" not in runner._cpu_flags():
        pytest.skip("an AVX2 host")
    return {dtype: runner.compile(absorbed_ir(16, dtype), flags) for dtype in ("f32", "bf16")}


@pytest.mark.parametrize("dtype", ["f32", "bf16"])
@pytest.mark.parametrize("sq", [1, 5])
def test_absorbed_against_reference(modules, dtype, sq):
    rng = np.random.default_rng(sq)
    batch, heads, length = 2, 16, 77
    q = round_to(rng.standard_normal((batch, heads, sq, LATENT + ROPE_DIM)), dtype)
    latent = round_to(rng.standard_normal((batch, 1, length, LATENT + ROPE_DIM)), dtype)
    k_pos = np.tile(np.arange(length, dtype=np.int64) + 3000, (batch, 1))
    q_pos = k_pos[:, length - sq:].copy()
    (got,) = modules[dtype].call("absorbed", q, latent, q_pos, k_pos)
    want = reference.attention(q, latent, latent[..., :LATENT], q_positions=q_pos,
                               k_positions=k_pos, scale=SCALE, causal=True, rope=ROPE)
    check_attention(got, want, dtype, f"absorbed MLA {dtype} Sq={sq}")
    # The values are the latent's first 512 channels, not the rope block's: a kernel
    # that read v from anywhere else would be far off.
    shifted = reference.attention(q, latent, latent[..., ROPE_DIM:], q_positions=q_pos,
                                  k_positions=k_pos, scale=SCALE, causal=True, rope=ROPE)
    assert np.abs(shifted - want).max() > 0.1


def test_kernel_reads_the_values_in_place():
    """The kernel is called with the latent buffer as both keys and values: no copy."""
    from pe.testing import run_pe_opt
    lowered = run_pe_opt(absorbed_ir(16, "f32"), ["--pe-set-target=triple=x86_64-linux-gnu cpu=skylake-avx512",
                                                  "--pe-tile-attention"])
    call = next(line for line in lowered.splitlines() if "call @pe_attention_kernel" in line)
    args = call.split("(", 1)[1].split(")")[0].split(", ")
    assert args[1] == args[2], call


def test_many_heads_bf16_with_the_target_defaults():
    """DeepSeek-V3's 128 heads in bf16 with pe-compile's defaults (AMX where the host has
    it): a task of 128 rows of 576 channels does not fit the AMX kernel's scratch, so the
    plan falls back to the dot products or the f32 FMA kernel; checked as above."""
    rng = np.random.default_rng(3)
    heads, length = 128, 45
    q = round_to(rng.standard_normal((1, heads, 1, LATENT + ROPE_DIM)), "bf16")
    latent = round_to(rng.standard_normal((1, 1, length, LATENT + ROPE_DIM)), "bf16")
    k_pos = np.arange(length, dtype=np.int64)[None]
    q_pos = k_pos[:, -1:].copy()
    module = runner.compile(absorbed_ir(heads, "bf16"), ["--num-threads=2"])
    (got,) = module.call("absorbed", q, latent, q_pos, k_pos)
    want = reference.attention(q, latent, latent[..., :LATENT], q_positions=q_pos,
                               k_positions=k_pos, scale=SCALE, causal=True, rope=ROPE)
    check_attention(got, want, "bf16", "absorbed MLA, 128 heads")


def paged_absorbed_ir(heads: int, dtype: str, layout: str) -> str:
    """Absorbed latent attention served from a paged latent cache: one pe.paged_attention
    whose value cache is the first 512 channels of the key cache (one KV head)."""
    from pe import ir
    d = LATENT + ROPE_DIM
    page = "16x1" if layout == "nhd" else "1x16"
    q, out = f"tensor<?x{heads}x{d}x{dtype}>", f"tensor<?x{heads}x{LATENT}x{dtype}>"
    cache, values = f"tensor<?x{page}x{d}x{dtype}>", f"tensor<?x{page}x{LATENT}x{dtype}>"
    return f"""func.func @paged(%q: {q}, %c: {cache}, %bt: tensor<?x?xi32>, %lens: tensor<?xi32>,
                  %cu: tensor<?xi32>) -> {out} {{
  %c0 = arith.constant 0 : index
  %p = tensor.dim %c, %c0 : {cache}
  %v = tensor.extract_slice %c[0, 0, 0, 0] [%p, {page.replace("x", ", ")}, {LATENT}] [1, 1, 1, 1]
       : {cache} to {values}
  %o = pe.paged_attention %q, %c, %v block_table(%bt : tensor<?x?xi32>)
       kv_lens(%lens : tensor<?xi32>) cu_seqlens(%cu : tensor<?xi32>) layout({layout})
       scale({ir.format_f64(SCALE)}) causal rope({ir.rope_attr(**ROPE)})
       : {q}, {cache}, {values} -> {out}
  return %o : {out}
}}"""


PAGED_LOWERINGS = {"kernels": ["--num-threads=2"],
                   "gpu-schedule": ATTENTION_LOWERINGS["gpu-schedule"]}


@pytest.mark.parametrize("lowering", list(PAGED_LOWERINGS))
@pytest.mark.parametrize("layout", ["nhd", "hnd"])
@pytest.mark.parametrize("dtype", ["f32", "bf16"])
@pytest.mark.parametrize("queries", [[1, 1, 1], [1, 6, 2]], ids=["decode", "chunks"])
def test_paged_absorbed_against_reference(layout, dtype, queries, lowering):
    """A batch of 3 sequences (45, 130 and 17 tokens) over a paged latent cache (pages in a
    random order), decode and chunked prefill, against the float64 reference; the values
    are read from the key cache's pages (no copy, checked below for the CPU kernel). On the
    GPU schedule: the SIMT paged kernel."""
    rng = np.random.default_rng(len(layout) + sum(queries))
    heads, d, page = 16, LATENT + ROPE_DIM, 16
    lengths = np.array([45, 130, 17], np.int32)
    pages = -(-lengths // page)
    order = rng.permutation(int(pages.sum()) + 2)
    table = np.zeros((3, int(pages.max())), np.int32)
    table[0, :pages[0]] = order[:pages[0]]
    table[1, :pages[1]] = order[pages[0]:pages[0] + pages[1]]
    table[2, :pages[2]] = order[pages[0] + pages[1]:pages.sum()]
    shape = (len(order), page, 1, d) if layout == "nhd" else (len(order), 1, page, d)
    cache = round_to(rng.standard_normal(shape), dtype)
    cu = np.concatenate([[0], np.cumsum(queries)]).astype(np.int32)
    q = round_to(rng.standard_normal((int(cu[-1]), heads, d)), dtype)
    module = runner.compile(paged_absorbed_ir(heads, dtype, layout), PAGED_LOWERINGS[lowering])
    (got,) = module.call("paged", q, cache, table, lengths, cu)
    want = reference.paged_attention(q, cache, cache[..., :LATENT], table, lengths, cu,
                                     layout=layout, scale=SCALE, causal=True, rope=ROPE)
    check_attention(got, want, dtype, f"paged absorbed MLA {layout} {dtype} {queries}")
    shifted = reference.paged_attention(q, cache, cache[..., ROPE_DIM:], table, lengths, cu,
                                        layout=layout, scale=SCALE, causal=True, rope=ROPE)
    assert np.abs(shifted - want).max() > 0.1


@pytest.mark.parametrize("layout", ["nhd", "hnd"])
def test_paged_kernel_reads_the_latent_pages_in_place(layout):
    """The kernel is called with the key cache as both keys and values, and no buffer is
    allocated for them (one KV head: an nhd page is an hnd page, read in place)."""
    from pe.testing import run_pe_opt
    lowered = run_pe_opt(paged_absorbed_ir(16, "f32", layout),
                         ["--pe-set-target=triple=x86_64-linux-gnu cpu=skylake-avx512",
                          "--pe-expand-paged-attention", "--pe-tile-attention"])
    calls = [line for line in lowered.splitlines() if "call @pe_attention_kernel" in line]
    assert calls
    for call in calls:
        args = call.split("(", 1)[1].split(")")[0].split(", ")
        assert args[1] == args[2], call
    assert "x576xf32>" not in "".join(line for line in lowered.splitlines()
                                      if "memref.alloc(" in line)
