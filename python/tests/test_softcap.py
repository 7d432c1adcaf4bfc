"""Logit soft-capping (`pe.attention ... softcap(c)`: softmax(c tanh(scale Q'K'^T / c) + bias
+ mask) V, Gemma 2's `attn_logit_softcapping`) compiled every way it runs, against the
float64 reference: the CPU kernels (prefill tiles and decode, f32 FMAs, bf16 on f32 FMAs, on
dot products and on AMX tiles where the CPU has them; the AVX2 kernels for
`--mcpu=x86-64-v3` on any AVX2 host), the reference lowering, and the GPU
SIMT kernel's schedule run on the CPU (`--target=gpu-on-cpu`). Caps small enough that most
scores are bent (|s| up to 3c here) and caps so large that the op is the plain attention.

Tolerances: f32 1e-5 and bf16 1.6e-2, relative to max(1, max |out|), as for `pe.attention`
without soft-capping: the kernels' tanh is upstream MLIR's rational approximation (a few
ulp of f32), the reference lowering's a libm call.
"""

from __future__ import annotations

import numpy as np
import pytest

from pe import reference, runner
from pe.ir import attention_function, rope_attr
from pe.testing import (ATTENTION_CASES, ATTENTION_LOWERINGS, ATTENTION_ROPE, BF16_KERNELS,
                        bf16_kernel_missing, round_to)
from pe.testing import check_attention as _check

CASES, LOWERINGS, ROPE = ATTENTION_CASES, ATTENTION_LOWERINGS, ATTENTION_ROPE


def _case(name, dtype, cap, seed=0, bent=2.0):
    """IR, arguments and float64 result of case `name` with soft-capping `cap` (None:
    none), on inputs whose scaled scores are of order 3 x `bent`."""
    hq, hkv, sq, skv, d, attrs = CASES[name]
    rng = np.random.default_rng(seed)
    spread = np.sqrt(3.0 * bent)
    q = rng.standard_normal((1, hq, sq, d)) * spread
    k = rng.standard_normal((1, hkv, skv, d)) * spread
    v = rng.standard_normal((1, hkv, skv, d))
    q, k, v = (round_to(x, dtype).astype(np.float32) for x in (q, k, v))
    mask = rng.standard_normal((1, hq, sq, skv)).astype(np.float32) if attrs.get("mask") else None
    positions = np.arange(skv - sq, skv, dtype=np.int64), np.arange(skv, dtype=np.int64)
    t = lambda h, s: f"tensor<1x{h}x{s}x{d}x{dtype}>"  # noqa: E731
    op_attrs = {key: attrs[key] for key in ("causal", "window", "alibi") if key in attrs}
    if attrs.get("rope"):
        op_attrs["rope"] = rope_attr(**ROPE)
    ir = attention_function(
        "attn", t(hq, sq), t(hkv, skv), t(hkv, skv), positions=("tensor<?xi64>", "tensor<?xi64>"),
        mask=f"tensor<1x{hq}x{sq}x{skv}xf32>" if mask is not None else None,
        softcap=cap, **op_attrs)
    args = [q, k, v, *positions] + ([mask] if mask is not None else [])
    want = reference.attention(q, k, v, mask=mask, q_positions=positions[0],
                               k_positions=positions[1], causal=attrs.get("causal", False),
                               window=attrs.get("window"), alibi=attrs.get("alibi"),
                               rope=ROPE if attrs.get("rope") else None, softcap=cap)
    return ir, args, want



@pytest.mark.parametrize("lowering", sorted(LOWERINGS))
@pytest.mark.parametrize("name", sorted(CASES))
def test_softcap_f32(name, lowering):
    if lowering == "kernels-avx2" and "avx2" not in runner._cpu_flags():
        pytest.skip("the CPU has no AVX2")
    ir, args, want = _case(name, "f32", cap=2.0)
    (got,) = runner.compile(ir, extra_args=LOWERINGS[lowering]).call("attn", *args)
    _check(got, want, "f32", f"{name} ({lowering})")


@pytest.mark.parametrize("kernel", sorted(BF16_KERNELS))
@pytest.mark.parametrize("name", sorted(CASES))
def test_softcap_bf16(name, kernel):
    if bf16_kernel_missing(kernel):
        pytest.skip(bf16_kernel_missing(kernel))
    ir, args, want = _case(name, "bf16", cap=2.0, seed=1)
    mod = runner.compile(ir, extra_args=LOWERINGS["kernels"] + list(BF16_KERNELS[kernel]))
    (got,) = mod.call("attn", *args)
    _check(got, want, "bf16", f"{name} ({kernel})")


def test_softcap_bends_the_scores():
    """The cap changes the result (so the tests above can tell it was applied), and a cap
    far above every score leaves the plain attention."""
    ir, args, want = _case("gqa-causal-rope", "f32", cap=2.0)
    _, _, plain = _case("gqa-causal-rope", "f32", cap=None)
    assert np.abs(want - plain).max() > 0.1
    ir, args, want = _case("gqa-causal-rope", "f32", cap=1e6)  # scores of order 6
    q, k, v, qp, kp = args
    plain = reference.attention(q, k, v, q_positions=qp, k_positions=kp, causal=True, rope=ROPE)
    np.testing.assert_allclose(want, plain, rtol=0, atol=1e-9)
    (got,) = runner.compile(ir, extra_args=LOWERINGS["kernels"]).call("attn", *args)
    _check(got, plain, "f32", "cap 1e6")
