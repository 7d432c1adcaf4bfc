"""Adversarial inputs that once crashed, hung or silently computed garbage:
each must now compile and compute the reference's result, or end in a clear
error.
"""

import subprocess
import time

import numpy as np
import pytest

from pe import reference, runner

INT64_MAX = 2**63 - 1


def _chain(n: int, pos_type: str = "i32") -> str:
    t = "tensor<1x2x6x32xf32>"
    lines = [f"func.func @chain(%x0: {t}, %p: tensor<6x{pos_type}>) -> {t} {{"]
    for i in range(n):
        lines.append(f"  %x{i + 1} = pe.rope #pe.rope<rotary_dim = 32> %x{i}, %p : {t}, tensor<6x{pos_type}>")
    lines += [f"  return %x{n} : {t}", "}"]
    return "\n".join(lines)


@pytest.mark.parametrize("n", [1000, 10000])
def test_chained_rotations_compose(n):
    """n chained rotations by p fold into one rotation by n p (exact in i64 for i32
    positions) before any table is shared or kernel built: compile time and memory
    stay those of one rotation (1,000 chained ropes took 61 s and 3 GB, 10,000 ran
    out of memory)."""
    start = time.monotonic()
    mod = runner.compile(_chain(n))
    elapsed = time.monotonic() - start
    assert elapsed < 30, f"{n} chained ropes took {elapsed:.1f} s to compile"
    rng = np.random.default_rng(n)
    x = rng.standard_normal((1, 2, 6, 32)).astype(np.float32)
    p = np.array([0, 1, 7, 1000, 2**16, -2**16], dtype=np.int32)
    (got,) = mod.call("chain", x, p)
    want = reference.apply_rope(x, n * p.astype(np.int64), 10000.0, 32)
    np.testing.assert_allclose(got, want, atol=2e-6)


def test_composed_positions_do_not_wrap():
    """Two rotations at i32 positions near the limits compose to positions beyond
    i32 (the sum in i32 would wrap to another angle). At position 2^32 a
    rotation is exact to about p 2^-51 (an ulp of the float64 frequency, which
    two implementations may round differently)."""
    mod = runner.compile(_chain(2))
    x = np.random.default_rng(2).standard_normal((1, 2, 6, 32)).astype(np.float32)
    p = np.array([2**31 - 1, -2**31, 2**30, 3, -5, 0], dtype=np.int32)
    (got,) = mod.call("chain", x, p)
    doubled = 2 * p.astype(np.int64)
    want = reference.apply_rope(x, doubled, 10000.0, 32)
    tolerance = 1e-6 + np.abs(doubled)[None, None, :, None] * 2.0**-51 * np.abs(x).max()
    assert (np.abs(got - want) <= tolerance).all()
    wrapped = reference.apply_rope(x, doubled.astype(np.int32), 10000.0, 32)
    assert np.abs(got - wrapped).max() > 0.1


def test_chained_rotations_of_i64_positions_stay_exact():
    """With i64 positions the sum p1 + p2 could wrap: the chain is not composed, and
    the result is still exact at positions near INT64_MAX."""
    mod = runner.compile(_chain(3, "i64"))
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1, 2, 6, 32)).astype(np.float32)
    p = np.array([0, 5, INT64_MAX, INT64_MAX - 1, 2**62, -2**63], dtype=np.int64)
    (got,) = mod.call("chain", x, p)
    assert mod.functions == ["chain"]
    want = x.astype(np.float64)
    for _ in range(3):
        want = reference.apply_rope(want, p, 10000.0, 32)
    # Each rotation exact to about p 2^-51 (see above); three in a row.
    tolerance = 1e-6 + 3 * np.abs(p.astype(np.float64))[None, None, :, None] * 2.0**-51 * 4
    assert (np.abs(got - want) <= tolerance).all()


def test_longrope_choice_at_int64_max():
    """max(positions) + 1 saturates at INT64_MAX in the compiled choice between
    LongRoPE's factor lists, as in the fold (it used to wrap to INT64_MIN and pick
    the short factors)."""
    ir = """
func.func @tables(%p: tensor<?xi64>) -> (tensor<?x2xf32>, tensor<?x2xf32>) {
  %c, %s = pe.rope_tables #pe.rope<rotary_dim = 4, scaling = #pe.longrope<short_factor = [1.0, 1.0], long_factor = [4.0, 16.0], original_max_position_embeddings = 16>> %p : tensor<?xi64> -> tensor<?x2xf32>
  return %c, %s : tensor<?x2xf32>, tensor<?x2xf32>
}"""
    mod = runner.compile(ir)
    p = np.array([0, 3, INT64_MAX], dtype=np.int64)
    cos, sin = mod.call("tables", p)
    scaling = {"type": "longrope", "short_factor": [1.0, 1.0], "long_factor": [4.0, 16.0],
               "original_max_position_embeddings": 16}
    want_cos, want_sin = reference.rope_tables(p, 10000.0, 4, scaling)
    # Rows 0 and 1 show the choice (the row at INT64_MAX is exact only to about
    # p 2^-51, the float64 frequency's ulp).
    np.testing.assert_allclose(cos[:2], want_cos[:2], atol=1e-6)
    np.testing.assert_allclose(sin[:2], want_sin[:2], atol=1e-6)
    short_cos, _ = reference.rope_tables(p[:2], 10000.0, 4, dict(scaling, select="short"))
    assert np.abs(cos[1] - short_cos[1]).max() > 0.1


# ---------------------------------------------------------------------------
# The C ABI and the runner
# ---------------------------------------------------------------------------

TWICE = """
func.func @twice(%x: tensor<1x1x4x32xELEM>, %p: tensor<4xi32>) -> (tensor<1x1x4x32xELEM>, tensor<1x1x4x32xELEM>) {
  %y = pe.rope #pe.rope<rotary_dim = 32> %x, %p : tensor<1x1x4x32xELEM>, tensor<4xi32>
  return %y, %y : tensor<1x1x4x32xELEM>, tensor<1x1x4x32xELEM>
}"""


@pytest.mark.parametrize("elem", ["f32", "bf16"])
def test_value_returned_twice(elem):
    """A value returned twice is two buffers (each freed once by the runner, or by a
    C caller following docs/c-abi.md); both results read right, call after call
    (the second used to be read from freed memory)."""
    mod = runner.compile(TWICE.replace("ELEM", elem))
    rng = np.random.default_rng(4)
    p = np.arange(4, dtype=np.int32)
    for _ in range(20):
        x = rng.standard_normal((1, 1, 4, 32)).astype(np.float32)
        if elem == "bf16":
            x = runner.from_bf16_bits(runner.to_bf16_bits(x))
        first, second = mod.call("twice", x, p)
        assert first is not second
        np.testing.assert_array_equal(first, second)
        want = reference.apply_rope(x, p, 10000.0, 32)
        np.testing.assert_allclose(first, want, atol=1e-6 if elem == "f32" else 1e-2)


ROPE = """
func.func @rope(%x: tensor<1x1x?x32xf32>, %p: tensor<?xi32>) -> tensor<1x1x?x32xf32> {
  %y = pe.rope #pe.rope<rotary_dim = 32> %x, %p : tensor<1x1x?x32xf32>, tensor<?xi32>
  return %y : tensor<1x1x?x32xf32>
}
func.func @frequencies(%n: index) -> tensor<16xf32> {
  %f = pe.rope_frequencies #pe.rope<rotary_dim = 32, scaling = #pe.dynamic_ntk<factor = 2.0, max_position_embeddings = 8>> seq_len %n -> tensor<16xf32>
  return %f : tensor<16xf32>
}"""


@pytest.fixture(scope="module")
def rope_module():
    return runner.compile(ROPE)


def test_runner_rejects_lossy_arguments(rope_module):
    x = np.zeros((1, 1, 3, 32), dtype=np.float32)
    with pytest.raises(TypeError, match="expected integers for a tensor of i32, got float64"):
        rope_module.call("rope", x, np.array([0.0, 1.5, 2.0]))
    with pytest.raises(OverflowError, match="2147483648 is outside the range of i32"):
        rope_module.call("rope", x, np.array([0, 1, 2**31], dtype=np.int64))
    with pytest.raises(ValueError, match="is not exactly a f32"):
        rope_module.call("rope", np.full((1, 1, 3, 32), 0.1), np.arange(3))
    with pytest.raises(TypeError, match="expected an integer for index, got float"):
        rope_module.call("frequencies", 4.7)
    with pytest.raises(TypeError, match="expected an integer for index, got bool"):
        rope_module.call("frequencies", True)
    with pytest.raises(OverflowError, match="outside the range of index"):
        rope_module.call("frequencies", 2**63)


def test_runner_converts_exact_arguments(rope_module):
    """Exact conversions stay allowed: float64 values that are f32 values, int64
    positions within i32, Python lists."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((1, 1, 3, 32)).astype(np.float32)
    (a,) = rope_module.call("rope", x.astype(np.float64), [0, 1, 2])
    (b,) = rope_module.call("rope", x, np.arange(3, dtype=np.int32))
    np.testing.assert_array_equal(a, b)
    (f,) = rope_module.call("frequencies", np.int64(4))
    assert f.shape == (16,)


def test_reference_nan_rows():
    """The float64 reference itself: a NaN query gives a NaN row (it used to give
    zeros), a NaN value behind the causal mask changes nothing."""
    rng = np.random.default_rng(6)
    q = rng.standard_normal((1, 1, 4, 8))
    k = rng.standard_normal((1, 1, 4, 8))
    v = rng.standard_normal((1, 1, 4, 8))
    q[0, 0, 1, 0] = np.nan
    v[0, 0, 3, 0] = np.nan
    out = reference.attention(q, k, v, causal=True)
    assert np.isnan(out[0, 0, 1]).all()
    assert np.isfinite(out[0, 0, [0, 2]]).all()
    assert np.isnan(out[0, 0, 3, 0]) and np.isfinite(out[0, 0, 3, 1:]).all()


def test_reference_positions_near_int64_limits():
    """The reference's masks and ALiBi distances do not wrap near INT64_MIN/MAX."""
    qp = np.array([INT64_MAX], dtype=np.int64)
    kp = np.array([-2**63, INT64_MAX - 1, INT64_MAX], dtype=np.int64)
    bias = reference.alibi_bias([0.5], qp, kp, mode="causal")
    assert bias[0, 0, 0] == -0.5 * 2.0**64  # q - k = 2^64 - 1, rounded
    assert bias[0, 0, 1] == -0.5 and bias[0, 0, 2] == 0.0
    q = np.ones((1, 1, 1, 4))
    v = np.arange(12, dtype=np.float64).reshape(1, 1, 3, 4)
    out = reference.attention(q, q.repeat(3, axis=2), v, q_positions=qp, k_positions=kp,
                              window=2)
    # Only keys within the window (INT64_MAX - 1 and INT64_MAX) are seen.
    np.testing.assert_allclose(out[0, 0, 0], v[0, 0, 1:].mean(axis=0))
