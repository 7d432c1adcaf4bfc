"""Multi-head latent attention in its expanded form with a shared key block.

DeepSeek-V2/V3's prefill (and transformers' MLA modules) give each query head 192
channels, 128 of its own ("nope") followed by 64 rotated ones, and each key head its own
128 channels followed by one rotated block `k_pe` that every head shares. In `pe` that
block is pe.attention's `shared_key` operand ([B, 1, Skv, 64]): no per-head copy of it
exists, the CPU kernels read it in place while they pack each key tile, and the rope
(`rotary_offset = 128`) rotates it there; so does the GPU's SIMT kernel (the GPU schedule
below). Lowerings without such a kernel (the reference lowering, the GPU's tensor-core
kernel, keys over a paged cache, a rotation that spans both tensors) write the block into
every key head first (pe-expand-shared-key).

Checked against the float64 reference (whose keys are the concatenation) for decode and
prefill, GQA and MHA, f32 and bf16, on every lowering; the kernel's IR reads the block
buffer; the expansion's run-time checks reject a block of another batch or length.
Tolerances: pe.testing.ATTENTION_TOLERANCE.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from pe import ir, reference, runner
from pe.testing import ATTENTION_LOWERINGS, check_attention, round_to, run_pe_opt

NOPE, ROPE_DIM, VALUE_DIM = 128, 64, 128
ROPE = dict(theta=10000.0, rotary_dim=ROPE_DIM, rotary_offset=NOPE, style="interleaved",
            scaling={"type": "yarn", "factor": 40.0, "original_max_position_embeddings": 4096,
                     "beta_fast": 32.0, "beta_slow": 1.0, "mscale": 1.0,
                     "mscale_all_dim": 1.0})
SCALE = (0.1 * math.log(40.0) + 1.0) ** 2 / math.sqrt(NOPE + ROPE_DIM)


def shared_key_ir(heads: int, kv_heads: int, dtype: str, rope=ROPE, nope=NOPE) -> str:
    t = lambda h, d: f"tensor<?x{h}x?x{d}x{dtype}>"  # noqa: E731
    pos = "tensor<?x?xi64>"
    return ir.attention_function(
        "mla", t(heads, nope + ROPE_DIM), t(kv_heads, nope), t(kv_heads, VALUE_DIM),
        out=t(heads, VALUE_DIM), positions=(pos, pos), shared_key=t(1, ROPE_DIM),
        scale=SCALE, causal=True, rope=ir.rope_attr(**rope) if rope else None)


@pytest.fixture(scope="module", params=list(ATTENTION_LOWERINGS), ids=str)
def lowering(request):
    flags = ATTENTION_LOWERINGS[request.param]
    if "--mcpu=x86-64-v3" in flags and "avx2" not in runner._cpu_flags():
        pytest.skip("an AVX2 host")
    return flags


@pytest.fixture(scope="module")
def modules(lowering):
    return {(heads, kv, dtype): runner.compile(shared_key_ir(heads, kv, dtype), lowering)
            for heads, kv in ((8, 8), (8, 2)) for dtype in ("f32", "bf16")}


def inputs(rng, batch, heads, kv_heads, sq, length, dtype):
    q = round_to(rng.standard_normal((batch, heads, sq, NOPE + ROPE_DIM)), dtype)
    k = round_to(rng.standard_normal((batch, kv_heads, length, NOPE)), dtype)
    v = round_to(rng.standard_normal((batch, kv_heads, length, VALUE_DIM)), dtype)
    ks = round_to(rng.standard_normal((batch, 1, length, ROPE_DIM)), dtype)
    k_pos = np.tile(np.arange(length, dtype=np.int64) + 2000, (batch, 1))
    return q, k, v, ks, k_pos[:, length - sq:].copy(), k_pos


@pytest.mark.parametrize("dtype", ["f32", "bf16"])
@pytest.mark.parametrize("heads,kv_heads", [(8, 8), (8, 2)], ids=["mha", "gqa"])
@pytest.mark.parametrize("sq", [1, 37])
def test_shared_key_against_reference(modules, dtype, heads, kv_heads, sq):
    rng = np.random.default_rng(sq + kv_heads)
    q, k, v, ks, q_pos, k_pos = inputs(rng, 2, heads, kv_heads, sq, 61, dtype)
    (got,) = modules[heads, kv_heads, dtype].call("mla", q, k, v, q_pos, k_pos, ks)
    want = reference.attention(q, k, v, q_positions=q_pos, k_positions=k_pos, scale=SCALE,
                               causal=True, rope=ROPE, shared_key=ks)
    check_attention(got, want, dtype, f"MLA shared key {dtype} {heads}/{kv_heads} Sq={sq}")
    # The inputs tell a kernel that read another batch row's block: its result would be
    # this far from the reference.
    swapped = reference.attention(q, k, v, q_positions=q_pos, k_positions=k_pos, scale=SCALE,
                                  causal=True, rope=ROPE, shared_key=ks[::-1])
    assert np.abs(swapped - want).max() > 0.1


def test_reference_is_the_concatenation():
    """The float64 reference with a shared block equals attention over keys that repeat
    it per head (computed here with numpy's own concatenation)."""
    rng = np.random.default_rng(5)
    q, k, v, ks, q_pos, k_pos = inputs(rng, 1, 4, 2, 3, 9, "f32")
    full = np.concatenate([k, np.repeat(ks, 2, axis=1)], axis=3)
    want = reference.attention(q, full, v, q_positions=q_pos, k_positions=k_pos,
                               scale=SCALE, causal=True, rope=ROPE)
    got = reference.attention(q, k, v, q_positions=q_pos, k_positions=k_pos, scale=SCALE,
                              causal=True, rope=ROPE, shared_key=ks)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


# The rotations of test_unrotated_own_and_unaligned_blocks: none, and one of the key
# heads' own first 64 channels (the block passes through).
OWN_ROPE = dict(theta=10000.0, rotary_dim=ROPE_DIM)


@pytest.mark.parametrize("rope", ["block", "own", "none"])
def test_unrotated_own_and_unaligned_blocks(rope):
    """A rotation of the heads' own channels (the block passes through), and none (the
    decode kernel then packs keys only because a head spans two tensors), with an own
    part of 36 channels (not a whole number of vectors: scalar copies), on the kernels."""
    rng = np.random.default_rng(11)
    nope = NOPE if rope != "none" else 36
    attr = {"block": ROPE, "own": OWN_ROPE, "none": None}[rope]
    module = runner.compile(shared_key_ir(4, 2, "f32", rope=attr, nope=nope),
                            ATTENTION_LOWERINGS["kernels"])
    for sq in (1, 19):
        q = rng.standard_normal((1, 4, sq, nope + ROPE_DIM)).astype(np.float32)
        k = rng.standard_normal((1, 2, 40, nope)).astype(np.float32)
        v = rng.standard_normal((1, 2, 40, VALUE_DIM)).astype(np.float32)
        ks = rng.standard_normal((1, 1, 40, ROPE_DIM)).astype(np.float32)
        k_pos = np.arange(40, dtype=np.int64)[None]
        q_pos = k_pos[:, 40 - sq:].copy()
        (got,) = module.call("mla", q, k, v, q_pos, k_pos, ks)
        want = reference.attention(q, k, v, q_positions=q_pos, k_positions=k_pos,
                                   scale=SCALE, causal=True, rope=attr, shared_key=ks)
        check_attention(got, want, "f32", f"shared key, rope={rope}, nope={nope}, Sq={sq}")


def test_kernel_reads_the_block_in_place():
    """The CPU kernel takes the shared block as an argument of its own ([B, 1, S, 64]): no
    [B, Hkv, S, 192] key tensor is built."""
    lowered = run_pe_opt(shared_key_ir(8, 2, "f32"),
                         ["--pe-set-target=triple=x86_64-linux-gnu cpu=skylake-avx512",
                          "--pe-tile-attention"])
    call = next(line for line in lowered.splitlines() if "call @pe_attention_kernel" in line)
    assert "memref<?x1x?x64xf32" in call, call
    assert "?x2x?x192xf32" not in lowered


@pytest.mark.parametrize("passes", [["--pe-expand-shared-key"], ["--pe-lower-to-linalg"]],
                         ids=["expand", "lower-to-linalg"])
def test_lowerings_without_a_kernel_expand_the_block(passes):
    """pe-expand-shared-key, and pe-lower-to-linalg on its own, write the block into
    every key head (keys of [B, Hkv, S, 192]); no shared_key is left (and after the
    lowering no pe.attention)."""
    lowered = run_pe_opt(shared_key_ir(8, 2, "f32"), passes)
    assert "shared_key" not in lowered
    assert "tensor<?x2x?x192xf32>" in lowered
    if passes == ["--pe-lower-to-linalg"]:
        assert "pe.attention" not in lowered


def test_mismatched_block_is_a_runtime_error():
    """A block of another length or batch than the keys' is refused at run time, naming
    it, on the kernels and on the reference lowering."""
    rng = np.random.default_rng(2)
    q, k, v, ks, q_pos, k_pos = inputs(rng, 2, 8, 2, 1, 20, "f32")
    for flags in (ATTENTION_LOWERINGS["kernels"], ATTENTION_LOWERINGS["reference"]):
        module = runner.compile(shared_key_ir(8, 2, "f32"), flags)
        for block in (ks[:, :, :19], ks[:1]):
            with pytest.raises(runner.KernelError,
                               match="shared_key differs in batch or length"):
                module.call("mla", q, k, v, q_pos, k_pos, block)
