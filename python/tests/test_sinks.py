"""Attention sinks (`pe.attention ... sinks(%s)`: one logit per query head in the softmax's
denominator, gpt-oss's `sinks`) compiled every way it runs, against the float64 reference:
the CPU kernels (prefill tiles and decode with its key splits, f32 FMAs, bf16 on f32 FMAs,
on dot products and on AMX tiles where the CPU has them; the AVX2 kernels for
`--mcpu=x86-64-v3` on any AVX2 host), the reference lowering, and the GPU SIMT kernel's
schedule run on the CPU (`--target=gpu-on-cpu`). The sinks are of the scores' size (they
take a good part of each row's weight), with one head's sink -inf (no sink) and one large
(most of the weight). Rows whose every key is masked give 0.

Tolerances: f32 1e-5 and bf16 1.6e-2, relative to max(1, max |out|), as for `pe.attention`.
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


def _case(name, dtype, seed=0, sinks=True, mask_rows=False):
    """IR, arguments and float64 result of case `name`; with `mask_rows` the mask hides
    every key from the first query rows."""
    hq, hkv, sq, skv, d, attrs = CASES[name]
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((1, hq, sq, d)) * 1.5
    k = rng.standard_normal((1, hkv, skv, d)) * 1.5
    v = rng.standard_normal((1, hkv, skv, d))
    q, k, v = (round_to(x, dtype).astype(np.float32) for x in (q, k, v))
    mask = None
    if attrs.get("mask"):
        mask = rng.standard_normal((1, hq, sq, skv)).astype(np.float32)
        if mask_rows:
            mask[:, :, :3] = -np.inf
    s = round_to(rng.standard_normal(hq) * 2.0, dtype).astype(np.float32)
    s[1], s[2] = -np.inf, 8.0
    positions = np.arange(skv - sq, skv, dtype=np.int64), np.arange(skv, dtype=np.int64)
    t = lambda h, n: f"tensor<1x{h}x{n}x{d}x{dtype}>"  # noqa: E731
    op_attrs = {key: attrs[key] for key in ("causal", "window", "alibi") if key in attrs}
    if attrs.get("rope"):
        op_attrs["rope"] = rope_attr(**ROPE)
    ir = attention_function(
        "attn", t(hq, sq), t(hkv, skv), t(hkv, skv), positions=("tensor<?xi64>", "tensor<?xi64>"),
        mask=f"tensor<1x{hq}x{sq}x{skv}xf32>" if mask is not None else None,
        sinks=f"tensor<{hq}x{dtype}>" if sinks else None, **op_attrs)
    args = [q, k, v, *positions] + ([mask] if mask is not None else []) + ([s] if sinks else [])
    want = reference.attention(q, k, v, mask=mask, q_positions=positions[0],
                               k_positions=positions[1], causal=attrs.get("causal", False),
                               window=attrs.get("window"), alibi=attrs.get("alibi"),
                               rope=ROPE if attrs.get("rope") else None,
                               sinks=s if sinks else None)
    return ir, args, want



def _args(args, dtype):
    """The sinks in the function's element type (the last argument)."""
    if dtype == "bf16":
        args = args[:-1] + [runner.bf16_array(args[-1])]
    return args


@pytest.mark.parametrize("lowering", sorted(LOWERINGS))
@pytest.mark.parametrize("name", sorted(CASES))
def test_sinks_f32(name, lowering):
    if lowering == "kernels-avx2" and "avx2" not in runner._cpu_flags():
        pytest.skip("the CPU has no AVX2")
    ir, args, want = _case(name, "f32")
    (got,) = runner.compile(ir, extra_args=LOWERINGS[lowering]).call("attn", *args)
    _check(got, want, "f32", f"{name} ({lowering})")


@pytest.mark.parametrize("kernel", sorted(BF16_KERNELS))
@pytest.mark.parametrize("name", sorted(CASES))
def test_sinks_bf16(name, kernel):
    if bf16_kernel_missing(kernel):
        pytest.skip(bf16_kernel_missing(kernel))
    ir, args, want = _case(name, "bf16", seed=1)
    mod = runner.compile(ir, extra_args=LOWERINGS["kernels"] + list(BF16_KERNELS[kernel]))
    (got,) = mod.call("attn", *_args(args, "bf16"))
    _check(got, want, "bf16", f"{name} ({kernel})")


@pytest.mark.parametrize("lowering", ["kernels", "reference", "gpu-schedule"])
def test_rows_without_visible_keys_are_zero(lowering):
    """With sinks a row whose keys are all masked gives its weight to the sink, whose
    value is 0: the row is 0 (and the other rows are exact)."""
    ir, args, want = _case("mask-gqa", "f32", mask_rows=True)
    assert not want[:, :, :3].any()
    (got,) = runner.compile(ir, extra_args=LOWERINGS[lowering]).call("attn", *args)
    assert not np.asarray(got)[:, :, :3].any()
    _check(got, want, "f32", lowering)


def test_sinks_change_the_result():
    """The sinks take weight from the keys (so the tests above can tell they were applied),
    and a sink of -inf leaves its head's plain attention."""
    _, _, want = _case("gqa-causal-rope", "f32")
    _, _, plain = _case("gqa-causal-rope", "f32", sinks=False)
    assert np.abs(want - plain).max() > 0.1
    np.testing.assert_allclose(want[:, 1], plain[:, 1], rtol=0, atol=1e-12)
    assert np.abs(want[:, 2]).mean() < 0.5 * np.abs(plain[:, 2]).mean()
