"""KV-cache appends (`pe.append_kv`) compiled and run in place, against the float64
reference (`pe.reference.append_kv`): dense `[B, Hkv, Smax, D]` caches and paged `nhd` /
`hnd` caches, every RoPE scaling of the compiled-RoPE tests and both pair styles, partial
rotary, f32/f16/bf16; slots of -1 skipped, repeated slots, bad slots and sizes returned as
errors with the cache untouched; the rotation fused from `pe.rope`; and a generation loop
that appends token by token and attends over the cache, equal to dense attention over the
whole sequence at every step.

Tolerances (relative to max(1, max |k|)): f32 1e-6, f16 2e-3, bf16 1.6e-2, the `pe.rope`
tolerances (the rotation is `pe.rope`'s, rounded once); values and unrotated channels are
copied exactly.
"""

from __future__ import annotations

import numpy as np
import pytest

from pe import reference, runner
from pe.ir import rope_attr
from pe.testing import round_to
from test_compiled import VARIANTS

TOLERANCE = {"f32": 1e-6, "f16": 2e-3, "bf16": 1.6e-2}
NUMPY = {"f32": np.dtype(np.float32), "f16": np.dtype(np.float16), "bf16": runner.BF16}
HEADS, DIM, VDIM, PAGE, PAGES, SMAX, BATCH = 2, 32, 16, 4, 6, 24, 2

# name: (variant of test_compiled.VARIANTS, rotary_dim, style); None: no rotation.
ROPES = {name: (name, DIM, "half") for name in VARIANTS}
ROPES.update({"interleaved": ("none", DIM, "interleaved"),
              "partial-interleaved-llama3": ("llama3", 12, "interleaved"),
              "partial-half": ("yarn", 20, "half"), "no-rope": None})
LOW_PRECISION_ROPES = ("none", "llama3", "yarn", "interleaved", "partial-half", "no-rope")


def _rope(name):
    """The IR attribute and the reference's keyword arguments of ROPES[name]."""
    if ROPES[name] is None:
        return None, None
    variant, r, style = ROPES[name]
    theta, scaling = VARIANTS[variant](r)
    return rope_attr(theta, r, style, scaling), dict(theta=theta, rotary_dim=r,
                                                      scaling=scaling, style=style)


def _types(layout, dtype):
    """(key, value, key cache, value cache, slots) tensor types."""
    if layout == "dense":
        rows = lambda d: f"tensor<{BATCH}x{HEADS}x?x{d}x{dtype}>"  # noqa: E731
        cache = lambda d: f"tensor<{BATCH}x{HEADS}x{SMAX}x{d}x{dtype}>"  # noqa: E731
        return rows(DIM), rows(VDIM), cache(DIM), cache(VDIM), f"tensor<{BATCH}x?xi64>"
    rows = lambda d: f"tensor<?x{HEADS}x{d}x{dtype}>"  # noqa: E731
    page = (PAGE, HEADS) if layout == "nhd" else (HEADS, PAGE)
    cache = lambda d: f"tensor<?x{page[0]}x{page[1]}x{d}x{dtype}>"  # noqa: E731
    return rows(DIM), rows(VDIM), cache(DIM), cache(VDIM), "tensor<?xi64>"


def _append_function(name, layout, dtype, rope):
    k, v, kc, vc, slots = _types(layout, dtype)
    positions = f" positions(%pos : {slots})" if rope else ""
    rotation = f" rope({rope})" if rope else ""
    pos_arg = f", %pos: {slots}" if rope else ""
    return f"""
func.func @{name}(%k: {k}, %v: {v}, %kc: {kc} {{pe.in_place}}, %vc: {vc} {{pe.in_place}},
                 %slots: {slots}{pos_arg}) -> ({kc}, {vc}) {{
  %a, %b = pe.append_kv %k, %v into %kc, %vc slots(%slots : {slots}){positions} layout({layout}){rotation}
           : {k}, {v} -> {kc}, {vc}
  return %a, %b : {kc}, {vc}
}}"""


def _names(dtype):
    return list(ROPES) if dtype == "f32" else list(LOW_PRECISION_ROPES)


def _function_name(rope_name):
    return "append_" + rope_name.replace("-", "_")


@pytest.fixture(scope="module", params=[(layout, dtype) for layout in ("dense", "nhd", "hnd")
                                        for dtype in ("f32", "f16", "bf16")],
                ids=lambda p: f"{p[0]}-{p[1]}")
def module(request):
    layout, dtype = request.param
    ir = "\n".join(_append_function(_function_name(n), layout, dtype, _rope(n)[0])
                   for n in _names(dtype))
    return layout, dtype, runner.compile(ir, ["--num-threads=1"])


def _inputs(layout, dtype, tokens, rng):
    """New rows, caches (filled, so untouched rows are checked too), slots and positions."""
    if layout == "dense":
        key_shape, value_shape = (BATCH, HEADS, tokens, DIM), (BATCH, HEADS, tokens, VDIM)
        cache_shape = lambda d: (BATCH, HEADS, SMAX, d)  # noqa: E731
        slots = np.stack([rng.permutation(SMAX)[:tokens] for _ in range(BATCH)])
        slots[0, -1] = -1
        positions = rng.integers(-50, 100000, size=(BATCH, tokens))
    else:
        key_shape, value_shape = (tokens, HEADS, DIM), (tokens, HEADS, VDIM)
        page = (PAGE, HEADS) if layout == "nhd" else (HEADS, PAGE)
        cache_shape = lambda d: (PAGES, *page, d)  # noqa: E731
        slots = rng.permutation(PAGES * PAGE)[:tokens]
        slots[1] = -1
        positions = rng.integers(-50, 100000, size=tokens)
    make = lambda shape: round_to(rng.standard_normal(shape) * 2, dtype)  # noqa: E731
    return (make(key_shape), make(value_shape), make(cache_shape(DIM)),
            make(cache_shape(VDIM)), slots.astype(np.int64), positions.astype(np.int64))


def _run(module, name, dtype, k, v, kc, vc, slots, pos, rope):
    """Calls the in-place append; returns the caller's caches after the call."""
    kc_buf, vc_buf = kc.astype(NUMPY[dtype]), vc.astype(NUMPY[dtype])
    args = [k.astype(NUMPY[dtype]), v.astype(NUMPY[dtype]), kc_buf, vc_buf, slots]
    results = module.call(name, *args, *([pos] if rope else []))
    assert results == [], "the in-place caches are not returned"
    return kc_buf.astype(np.float64), vc_buf.astype(np.float64)


def test_append_against_reference(module):
    layout, dtype, compiled = module
    rng = np.random.default_rng(7)
    for name in _names(dtype):
        attr, rope = _rope(name)
        k, v, kc, vc, slots, pos = _inputs(layout, dtype, 5, rng)
        got_k, got_v = _run(compiled, _function_name(name), dtype, k, v, kc, vc, slots, pos,
                            rope)
        want_k, want_v = reference.append_kv(k, v, kc, vc, slots, layout,
                                             pos if rope else None, rope)
        np.testing.assert_array_equal(got_v, want_v, err_msg=f"{name}: values")
        if rope is None:
            np.testing.assert_array_equal(got_k, want_k, err_msg=f"{name}: keys")
            continue
        err = np.abs(got_k - want_k).max() / max(1.0, np.abs(want_k).max())
        assert err <= TOLERANCE[dtype], f"{layout} {dtype} {name}: relative error {err:.3g}"
        untouched = want_k == kc
        np.testing.assert_array_equal(got_k[untouched], kc[untouched])


def test_repeated_slot_keeps_the_later_token(module):
    layout, dtype, compiled = module
    if layout == "dense":
        pytest.skip("covered by the paged layouts: the loop over tokens is the same")
    rng = np.random.default_rng(3)
    k, v, kc, vc, _, pos = _inputs(layout, dtype, 4, rng)
    slots = np.array([9, 3, 9, -1], dtype=np.int64)
    got_k, got_v = _run(compiled, "append_no_rope", dtype, k, v, kc, vc, slots, pos, None)
    want_k, want_v = reference.append_kv(k, v, kc, vc, slots, layout)
    np.testing.assert_array_equal(got_k, want_k)
    np.testing.assert_array_equal(got_v, want_v)


@pytest.mark.parametrize("bad", [-2, "capacity", "capacity+7"])
def test_bad_slot_is_an_error_and_nothing_is_written(module, bad):
    layout, dtype, compiled = module
    rng = np.random.default_rng(5)
    k, v, kc, vc, slots, pos = _inputs(layout, dtype, 3, rng)
    capacity = reference.cache_capacity(kc, layout)
    value = {"capacity": capacity, "capacity+7": capacity + 7}.get(bad, bad)
    slots.reshape(-1)[-1] = value
    kc_buf, vc_buf = kc.astype(NUMPY[dtype]), vc.astype(NUMPY[dtype])
    with pytest.raises(runner.KernelError) as error:
        compiled.call("append_llama3", k.astype(NUMPY[dtype]), v.astype(NUMPY[dtype]),
                      kc_buf, vc_buf, slots, pos)
    entry = slots.size - 1
    assert error.value.status == 6
    assert error.value.message == (f"pe.append_kv: slot {value} (entry {entry}) is out of "
                                   f"range for a cache of {capacity} slots")
    np.testing.assert_array_equal(kc_buf.astype(np.float64), kc)
    np.testing.assert_array_equal(vc_buf.astype(np.float64), vc)
    with pytest.raises(IndexError, match=f"slot {value} "):
        reference.append_kv(k, v, kc, vc, slots, layout, pos, _rope("llama3")[1])


def test_sizes_that_differ_are_errors(module):
    layout, dtype, compiled = module
    rng = np.random.default_rng(9)
    k, v, kc, vc, slots, pos = _inputs(layout, dtype, 3, rng)
    args = lambda s, p: (k.astype(NUMPY[dtype]), v.astype(NUMPY[dtype]),  # noqa: E731
                         kc.astype(NUMPY[dtype]), vc.astype(NUMPY[dtype]), s, p)
    with pytest.raises(runner.KernelError, match="the positions do not match the slots"):
        compiled.call("append_llama3", *args(slots, pos[..., :2]))
    with pytest.raises(runner.KernelError, match="the slots do not match the new rows"):
        compiled.call("append_llama3", *args(slots[..., :2], pos[..., :2]))


def test_in_place_arguments_are_the_callers_arrays(module):
    layout, dtype, compiled = module
    rng = np.random.default_rng(11)
    k, v, kc, vc, slots, pos = _inputs(layout, dtype, 2, rng)
    wrong_dtype = kc.astype(np.float64)
    with pytest.raises(TypeError, match="updated in place"):
        compiled.call("append_no_rope", k.astype(NUMPY[dtype]), v.astype(NUMPY[dtype]),
                      wrong_dtype, vc.astype(NUMPY[dtype]), slots)
    strided = np.repeat(kc.astype(NUMPY[dtype]), 2, axis=-1)[..., ::2]
    with pytest.raises(TypeError, match="C-contiguous"):
        compiled.call("append_no_rope", k.astype(NUMPY[dtype]), v.astype(NUMPY[dtype]),
                      strided, vc.astype(NUMPY[dtype]), slots)


@pytest.mark.parametrize("fuse", [True, False])
def test_rotation_fused_from_rope(fuse):
    """A paged append of pe.rope-rotated keys ([1, T, H, D] bshd, collapsed): fused into
    the append (pe-fuse-rope-into-append) or not, the same cache."""
    attr, rope = _rope("llama3")
    ir = f"""
func.func @append(%k: tensor<1x?x{HEADS}x{DIM}xf32>, %v: tensor<?x{HEADS}x{VDIM}xf32>,
                  %kc: tensor<{PAGES}x{PAGE}x{HEADS}x{DIM}xf32> {{pe.in_place}},
                  %vc: tensor<{PAGES}x{PAGE}x{HEADS}x{VDIM}xf32> {{pe.in_place}},
                  %slots: tensor<?xi64>, %pos: tensor<?xi64>)
    -> (tensor<{PAGES}x{PAGE}x{HEADS}x{DIM}xf32>, tensor<{PAGES}x{PAGE}x{HEADS}x{VDIM}xf32>) {{
  %r = pe.rope {attr} %k, %pos layout(bshd) : tensor<1x?x{HEADS}x{DIM}xf32>, tensor<?xi64>
  %rk = tensor.collapse_shape %r [[0, 1], [2], [3]] : tensor<1x?x{HEADS}x{DIM}xf32> into tensor<?x{HEADS}x{DIM}xf32>
  %a, %b = pe.append_kv %rk, %v into %kc, %vc slots(%slots : tensor<?xi64>) layout(nhd)
           : tensor<?x{HEADS}x{DIM}xf32>, tensor<?x{HEADS}x{VDIM}xf32>
           -> tensor<{PAGES}x{PAGE}x{HEADS}x{DIM}xf32>, tensor<{PAGES}x{PAGE}x{HEADS}x{VDIM}xf32>
  return %a, %b : tensor<{PAGES}x{PAGE}x{HEADS}x{DIM}xf32>, tensor<{PAGES}x{PAGE}x{HEADS}x{VDIM}xf32>
}}"""
    compiled = runner.compile(ir, [f"--fuse={str(fuse).lower()}", "--num-threads=1"])
    rng = np.random.default_rng(13)
    k, v, kc, vc, slots, pos = _inputs("nhd", "f32", 6, rng)
    kc_buf, vc_buf = kc.astype(np.float32), vc.astype(np.float32)
    compiled.call("append", k[None].astype(np.float32), v.astype(np.float32), kc_buf, vc_buf,
                  slots, pos)
    want_k, want_v = reference.append_kv(k, v, kc, vc, slots, "nhd", pos, rope)
    err = np.abs(kc_buf - want_k).max() / max(1.0, np.abs(want_k).max())
    assert err <= TOLERANCE["f32"]
    np.testing.assert_array_equal(vc_buf, want_v)


@pytest.mark.parametrize("dtype", ["f32", "bf16"])
def test_generation_loop_matches_dense_attention(dtype):
    """Decode step by step: append the new token's K (rotated) and V to a dense cache in
    place, rotate Q, attend causally over the whole cache (unwritten rows are in the
    future of every query); each step equals the reference attention over the whole
    sequence so far. GQA 4/2."""
    hq, steps, attr, rope = 4, 20, *_rope("yarn")
    t = lambda h, s, d=DIM: f"tensor<1x{h}x{s}x{d}x{dtype}>"  # noqa: E731
    ir = f"""
func.func @step(%q: {t(hq, 1)}, %k: {t(HEADS, 1)}, %v: {t(HEADS, 1)},
                %kc: {t(HEADS, SMAX)} {{pe.in_place}}, %vc: {t(HEADS, SMAX)} {{pe.in_place}},
                %pos: tensor<1xi64>, %kpos: tensor<{SMAX}xi64>)
    -> ({t(hq, 1)}, {t(HEADS, SMAX)}, {t(HEADS, SMAX)}) {{
  %a, %b = pe.append_kv %k, %v into %kc, %vc slots(%pos : tensor<1xi64>)
           positions(%pos : tensor<1xi64>) rope({attr})
           : {t(HEADS, 1)}, {t(HEADS, 1)} -> {t(HEADS, SMAX)}, {t(HEADS, SMAX)}
  %qr = pe.rope {attr} %q, %pos : {t(hq, 1)}, tensor<1xi64>
  %o = pe.attention %qr, %a, %b q_positions(%pos : tensor<1xi64>)
       k_positions(%kpos : tensor<{SMAX}xi64>) causal
       : {t(hq, 1)}, {t(HEADS, SMAX)}, {t(HEADS, SMAX)} -> {t(hq, 1)}
  return %o, %a, %b : {t(hq, 1)}, {t(HEADS, SMAX)}, {t(HEADS, SMAX)}
}}"""
    compiled = runner.compile(ir, ["--num-threads=1"])
    rng = np.random.default_rng(17)
    q = round_to(rng.standard_normal((1, hq, steps, DIM)), dtype)
    k = round_to(rng.standard_normal((1, HEADS, steps, DIM)), dtype)
    v = round_to(rng.standard_normal((1, HEADS, steps, DIM)), dtype)
    kc = np.zeros((1, HEADS, SMAX, DIM), NUMPY[dtype])
    vc = np.zeros((1, HEADS, SMAX, DIM), NUMPY[dtype])
    tolerance = {"f32": 1e-5, "bf16": 1.6e-2}[dtype]
    for s in range(steps):
        one = lambda x: x[:, :, s:s + 1].astype(NUMPY[dtype])  # noqa: E731
        (out,) = compiled.call("step", one(q), one(k), one(v), kc, vc,
                               np.array([s]), np.arange(SMAX))
        whole = reference.attention(q[:, :, :s + 1], k[:, :, :s + 1], v[:, :, :s + 1],
                                    causal=True, rope=rope)
        want = whole[:, :, s:s + 1]
        err = np.abs(out.astype(np.float64) - want).max() / max(1.0, np.abs(want).max())
        assert err <= tolerance, f"step {s}: relative error {err:.3g}"


@pytest.mark.parametrize("layout", ["dense", "nhd", "hnd"])
@pytest.mark.parametrize("dtype", ["f32", "bf16"])
def test_gpu_schedule_on_the_cpu(layout, dtype):
    """The GPU pipeline's kernels (slot checks and the scatter as GPU kernels, the caches
    updated in the caller's buffers) run on the CPU (`--target=gpu-on-cpu`)."""
    attr, rope = _rope("llama3")
    compiled = runner.compile(_append_function("append", layout, dtype, attr),
                              ["--target=gpu-on-cpu"])
    rng = np.random.default_rng(19)
    k, v, kc, vc, slots, pos = _inputs(layout, dtype, 5, rng)
    got_k, got_v = _run(compiled, "append", dtype, k, v, kc, vc, slots, pos, rope)
    want_k, want_v = reference.append_kv(k, v, kc, vc, slots, layout, pos, rope)
    np.testing.assert_array_equal(got_v, want_v)
    err = np.abs(got_k - want_k).max() / max(1.0, np.abs(want_k).max())
    assert err <= TOLERANCE[dtype], f"relative error {err:.3g}"
