"""Fused (pe-cpu-pipeline with fuse=true) vs unfused (fuse=false) vs the
float64 reference, for IR written the unfused way: explicit pe.rope on Q and
K, explicit ALiBi bias masks, several layers at the same positions.

Tolerance: f32, relative to the output's magnitude, 1e-5 (softmax of f32
scores; see test_compiled.py).
"""

import numpy as np
import pytest

from pe import reference, runner
from pe.ir import attention_function, rope_attr

RTOL = 1e-5

ROPES = {
    "default-half": dict(theta=10000.0, rotary_dim=32, style="half", scaling=None),
    "llama3": dict(theta=500000.0, rotary_dim=32, style="half",
                   scaling={"type": "llama3", "factor": 8.0,
                            "original_max_position_embeddings": 64}),
    "yarn-partial": dict(theta=10000.0, rotary_dim=16, style="half",
                         scaling={"type": "yarn", "factor": 4.0,
                                  "original_max_position_embeddings": 64}),
    "interleaved": dict(theta=10000.0, rotary_dim=32, style="interleaved", scaling=None),
}

POSITIONS = {
    "contiguous": lambda s: np.arange(s),
    "offset": lambda s: 5000 + np.arange(s),
    "arbitrary": lambda s: np.sort(np.random.default_rng(3).choice(100000, s, replace=False)),
}


def _ir_rope_attention(rope, hq, hkv, s, d, window):
    attr = rope_attr(rope["theta"], rope["rotary_dim"], rope["style"], rope["scaling"])
    q, k = f"tensor<1x{hq}x?x{d}xf32>", f"tensor<1x{hkv}x?x{d}xf32>"
    return attention_function("layer", q, k, k, positions="tensor<?xi32>", rotate=attr,
                              causal=True, window=window)


def _check(got, want):
    scale = max(1.0, float(np.abs(want).max()))
    assert float(np.abs(got - want).max()) <= RTOL * scale


@pytest.mark.parametrize("rope_name", sorted(ROPES))
@pytest.mark.parametrize("pos_name", sorted(POSITIONS))
@pytest.mark.parametrize("heads,window", [((8, 2), None), ((4, 1), 7), ((4, 4), None)],
                         ids=["gqa", "mqa-window", "mha"])
def test_fused_rope(rope_name, pos_name, heads, window):
    rope = ROPES[rope_name]
    hq, hkv = heads
    s, d = 21, 32
    ir = _ir_rope_attention(rope, hq, hkv, s, d, window)
    fused = runner.compile(ir, extra_args=["--fuse=true"])
    unfused = runner.compile(ir, extra_args=["--fuse=false"])
    rng = np.random.default_rng(7)
    q = rng.standard_normal((1, hq, s, d)).astype(np.float32)
    k = rng.standard_normal((1, hkv, s, d)).astype(np.float32)
    v = rng.standard_normal((1, hkv, s, d)).astype(np.float32)
    p = POSITIONS[pos_name](s).astype(np.int32)
    want = reference.attention(q, k, v, q_positions=p, k_positions=p, causal=True,
                               window=window, rope=rope)
    (got_fused,) = fused.call("layer", q, k, v, p)
    (got_unfused,) = unfused.call("layer", q, k, v, p)
    _check(got_fused, want)
    _check(got_unfused, want)


@pytest.mark.parametrize("heads", [6, 8])
@pytest.mark.parametrize("mode", ["causal", "symmetric"])
def test_fused_alibi(heads, mode):
    s, d = 19, 16
    t = f"tensor<1x{heads}x{s}x{d}xf32>"
    layer = attention_function("layer", t, t, t, positions=f"tensor<{s}xi32>",
                               alibi_bias=mode, causal=True)
    fused_ir = runner.compile(layer, extra_args=["--fuse=true"])
    unfused_ir = runner.compile(layer, extra_args=["--fuse=false"])
    rng = np.random.default_rng(11)
    q, k, v = (rng.standard_normal((1, heads, s, d)).astype(np.float32) for _ in range(3))
    p = (100 + 3 * np.arange(s)).astype(np.int32)
    want = reference.attention(q, k, v, q_positions=p, k_positions=p, causal=True,
                               alibi=8.0)
    (got_fused,) = fused_ir.call("layer", q, k, v, p)
    (got_unfused,) = unfused_ir.call("layer", q, k, v, p)
    _check(got_fused, want)
    _check(got_unfused, want)


def test_shared_tables_four_layers():
    """Eight rotations at one set of positions share one table computation
    and give the same values as eight separate rotations."""
    attr = rope_attr(500000.0, 32, "half", {"type": "llama3", "factor": 8.0,
                                            "original_max_position_embeddings": 64})
    t = "tensor<1x4x?x32xf32>"
    body = "\n".join(f"  %x{i + 1} = pe.rope {attr} %x{i}, %p : {t}, tensor<?xi32>"
                     for i in range(8))
    ir = f"func.func @f(%x0: {t}, %p: tensor<?xi32>) -> {t} {{\n{body}\n  return %x8 : {t}\n}}\n"
    shared = runner.compile(ir, extra_args=["--fuse=true"])
    separate = runner.compile(ir, extra_args=["--fuse=false"])
    rng = np.random.default_rng(5)
    x = rng.standard_normal((1, 4, 13, 32)).astype(np.float32)
    p = (np.arange(13) * 977).astype(np.int32)
    want = x.astype(np.float64)
    for _ in range(8):
        want = reference.apply_rope(want, p, 500000.0, 32, {"type": "llama3", "factor": 8.0,
                                                           "original_max_position_embeddings": 64})
    (a,) = shared.call("f", x, p)
    (b,) = separate.call("f", x, p)
    np.testing.assert_allclose(a, want, rtol=0, atol=2e-6)
    np.testing.assert_allclose(b, want, rtol=0, atol=2e-6)


@pytest.mark.parametrize("threads", [2, 3])
def test_threads_bit_identical(threads):
    """Splitting outer parallel loops over OpenMP threads never splits a
    reduction: the results are the single-threaded ones, bit for bit."""
    rope = ROPES["llama3"]
    ir = _ir_rope_attention(rope, 8, 2, 29, 32, None)
    one = runner.compile(ir, extra_args=["--num-threads=1"])
    many = runner.compile(ir, extra_args=[f"--num-threads={threads}"])
    rng = np.random.default_rng(9)
    q = rng.standard_normal((1, 8, 29, 32)).astype(np.float32)
    k = rng.standard_normal((1, 2, 29, 32)).astype(np.float32)
    v = rng.standard_normal((1, 2, 29, 32)).astype(np.float32)
    p = (7 * np.arange(29)).astype(np.int32)
    (a,) = one.call("layer", q, k, v, p)
    (b,) = many.call("layer", q, k, v, p)
    np.testing.assert_array_equal(a, b)
    want = reference.attention(q, k, v, q_positions=p, k_positions=p, causal=True, rope=rope)
    _check(b, want)
