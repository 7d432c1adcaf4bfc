"""KV-cache appends (`pe.append_kv`) compiled and run in place, against the float64
reference (`pe.reference.append_kv`): dense `[B, Hkv, Smax, D]` caches and paged `nhd` /
`hnd` caches, every RoPE scaling of the compiled-RoPE tests and both pair styles, partial
rotary, f32/f16/bf16; slots of -1 skipped, repeated slots, bad slots and sizes returned as
errors with the cache untouched; the rotation fused from `pe.rope`; and a generation loop
that appends token by token and attends over the cache, equal to dense attention over the
whole sequence at every step. `pe.paged_attention` on the CPU kernels and the reference
lowering (ragged decode and prefill chunks, GQA/MQA, windows, ALiBi, soft-capping, RoPE on
the queries; bad block tables, lengths and cu_seqlens), and a continuous-batching loop.

Tolerances (relative to max(1, max |k|)): f32 1e-6, f16 2e-3, bf16 1.6e-2, the `pe.rope`
tolerances (the rotation is `pe.rope`'s, rounded once); values and unrotated channels are
copied exactly.
"""

from __future__ import annotations

import re

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


# Rotations of heads wider than DIM (the paged attention cases of head dim 128), and
# dynamic NTK scaled above 16 positions: sequences of the same batch on both sides.
EXTRA_VARIANTS = {"dynamic_ntk_L16": lambda r: (10000.0, {"type": "dynamic_ntk", "factor": 2.0,
                                                          "max_position_embeddings": 16})}
WIDE_ROPES = {"llama3-d128": ("llama3", 128, "half"),
              "yarn-d128-interleaved-96": ("yarn", 96, "interleaved"),
              "dynamic-ntk-L16": ("dynamic_ntk_L16", DIM, "half")}


def _rope(name):
    """The IR attribute and the reference's keyword arguments of ROPES[name]."""
    spec = ROPES[name] if name in ROPES else WIDE_ROPES[name]
    if spec is None:
        return None, None
    variant, r, style = spec
    theta, scaling = {**VARIANTS, **EXTRA_VARIANTS}[variant](r)
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


# Where the host has AVX-512, the narrow types' code is also built for AVX2
# (x86-64-v3: F16C, bf16 rounded in integer arithmetic), which an AVX2-only host
# builds by default.
AVX2 = ["--mcpu=x86-64-v3"] if "avx512f" in runner._cpu_flags() else None


# The GPU pipeline's append (pe-gpu-tile-append-kv: the slots written, then a thread per
# (token, KV head) row) run on the CPU.
GPU_ON_CPU = ["--target=gpu-on-cpu", "--gpu-block-size=32", "--gpu-max-blocks=3"]
TARGET_FLAGS = {"host": ["--num-threads=1"], "x86-64-v3": ["--num-threads=1", *(AVX2 or [])],
                "gpu-on-cpu": GPU_ON_CPU}


@pytest.fixture(scope="module",
                params=[(layout, dtype, "host") for layout in ("dense", "nhd", "hnd")
                        for dtype in ("f32", "f16", "bf16")] +
                       ([(layout, dtype, "x86-64-v3") for layout in ("dense", "nhd", "hnd")
                         for dtype in ("f16", "bf16")] if AVX2 else []) +
                       [(layout, dtype, "gpu-on-cpu") for layout in ("dense", "nhd", "hnd")
                        for dtype in ("f32", "bf16")],
                ids=lambda p: "-".join(p))
def module(request):
    layout, dtype, target = request.param
    ir = "\n".join(_append_function(_function_name(n), layout, dtype, _rope(n)[0])
                   for n in _names(dtype))
    return layout, dtype, runner.compile(ir, TARGET_FLAGS[target])


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
    """Slot 9 named twice (and, in the dense cache's second row, slot 5 twice in a row):
    the later token's rows are kept."""
    layout, dtype, compiled = module
    rng = np.random.default_rng(3)
    k, v, kc, vc, _, pos = _inputs(layout, dtype, 4, rng)
    slots = np.array([9, 3, 9, -1], dtype=np.int64)
    if layout == "dense":
        slots = np.array([[9, 3, 9, -1], [5, 5, -1, 2]], dtype=np.int64)
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


# Rotated blocks that the append kernel (pe-tile-append-kv) takes as whole vectors
# beside plain channels: D = 64, a half-split block first, an interleaved one last.
PARTIAL_APPENDS = {"half-first-32": dict(theta=10000.0, rotary_dim=32),
                   "interleaved-last-32": dict(theta=10000.0, rotary_dim=32, rotary_offset=32,
                                               style="interleaved")}


@pytest.mark.parametrize("name", list(PARTIAL_APPENDS))
@pytest.mark.parametrize("dtype", ["f32", "bf16"])
@pytest.mark.parametrize("target", ["host", "gpu-on-cpu"] + (["x86-64-v3"] if AVX2 else []))
def test_append_partial_rotary_blocks(name, dtype, target):
    """Keys of 64 channels whose rotated block is half of them (first or last), paged (nhd)
    and dense with slots [B, S] beside positions [S] shared by the batch, against the
    float64 reference: the channels outside the block are copied, the block rotated."""
    rope = PARTIAL_APPENDS[name]
    d, heads, pages, page, smax, batch, tokens = 64, 2, 6, 4, 16, 2, 5
    attr = rope_attr(**rope)
    paged = f"""func.func @paged(%k: tensor<?x{heads}x{d}x{dtype}>, %v: tensor<?x{heads}x{d}x{dtype}>,
    %kc: tensor<{pages}x{page}x{heads}x{d}x{dtype}> {{pe.in_place}},
    %vc: tensor<{pages}x{page}x{heads}x{d}x{dtype}> {{pe.in_place}},
    %s: tensor<?xi64>, %p: tensor<?xi64>)
    -> (tensor<{pages}x{page}x{heads}x{d}x{dtype}>, tensor<{pages}x{page}x{heads}x{d}x{dtype}>) {{
  %a, %b = pe.append_kv %k, %v into %kc, %vc slots(%s : tensor<?xi64>) positions(%p : tensor<?xi64>)
           layout(nhd) rope({attr}) : tensor<?x{heads}x{d}x{dtype}>, tensor<?x{heads}x{d}x{dtype}>
           -> tensor<{pages}x{page}x{heads}x{d}x{dtype}>, tensor<{pages}x{page}x{heads}x{d}x{dtype}>
  return %a, %b : tensor<{pages}x{page}x{heads}x{d}x{dtype}>, tensor<{pages}x{page}x{heads}x{d}x{dtype}>
}}"""
    rows, cache = f"tensor<{batch}x{heads}x?x{d}x{dtype}>", f"tensor<{batch}x{heads}x{smax}x{d}x{dtype}>"
    dense = f"""func.func @dense(%k: {rows}, %v: {rows}, %kc: {cache} {{pe.in_place}},
    %vc: {cache} {{pe.in_place}}, %s: tensor<{batch}x?xi64>, %p: tensor<?xi64>) -> ({cache}, {cache}) {{
  %a, %b = pe.append_kv %k, %v into %kc, %vc slots(%s : tensor<{batch}x?xi64>) positions(%p : tensor<?xi64>)
           rope({attr}) : {rows}, {rows} -> {cache}, {cache}
  return %a, %b : {cache}, {cache}
}}"""
    shared = dense.replace("@dense", "@dense_shared").replace(
        f"tensor<{batch}x?xi64>", "tensor<?xi64>")
    module = runner.compile(paged + dense + shared, TARGET_FLAGS[target])
    rng = np.random.default_rng(4)
    make = lambda shape: round_to(rng.standard_normal(shape) * 2, dtype)  # noqa: E731
    positions = rng.integers(0, 50000, size=tokens).astype(np.int64)
    cases = {"paged": ((tokens, heads, d), (pages, page, heads, d),
                       rng.permutation(pages * page)[:tokens].astype(np.int64), "nhd"),
             "dense": ((batch, heads, tokens, d), (batch, heads, smax, d),
                       np.stack([rng.permutation(smax)[:tokens] for _ in range(batch)]), "dense"),
             "dense_shared": ((batch, heads, tokens, d), (batch, heads, smax, d),
                              rng.permutation(smax)[:tokens], "dense")}
    for fn, (row_shape, cache_shape, slots, layout) in cases.items():
        k, v, kc, vc = make(row_shape), make(row_shape), make(cache_shape), make(cache_shape)
        got_k, got_v = _run(module, fn, dtype, k, v, kc, vc, slots.astype(np.int64),
                            positions, rope)
        want_k, want_v = reference.append_kv(k, v, kc, vc, slots, layout, positions, rope)
        np.testing.assert_array_equal(got_v, want_v, err_msg=f"{fn} {name}: values")
        err = np.abs(got_k - want_k).max() / max(1.0, np.abs(want_k).max())
        assert err <= TOLERANCE[dtype], f"{fn} {name} {dtype}: relative error {err:.3g}"
        # The channels outside the block are copied exactly.
        plain = slice(32, 64) if rope.get("rotary_offset") is None else slice(0, 32)
        np.testing.assert_array_equal(got_k[..., plain], want_k[..., plain],
                                      err_msg=f"{fn} {name}: plain channels")


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


@pytest.mark.parametrize("target", ["host", "gpu-on-cpu"])
def test_caches_read_elsewhere_keep_their_values(target):
    """Caches that are more than the append's: one tensor as both caches (the key result
    holds the keys, the value result the values); an append's result that two later
    appends start from and that is returned too (each later append writes its own copy,
    the first result comes back as it was). Against the float64 reference, applied in
    the same order."""
    attr, rope = _rope("llama3")
    k, v, kc, vc, slots = _types("nhd", "f32")
    t = f"{k}, {v} -> {kc}, {vc}"
    ir = f"""
func.func @both(%k: {k}, %v: {k}, %c: {kc}, %slots: {slots}, %pos: {slots}) -> ({kc}, {kc}) {{
  %a, %b = pe.append_kv %k, %v into %c, %c slots(%slots : {slots}) positions(%pos : {slots})
           layout(nhd) rope({attr}) : {k}, {k} -> {kc}, {kc}
  return %a, %b : {kc}, {kc}
}}
func.func @fork(%k: {k}, %v: {v}, %kc: {kc}, %vc: {vc}, %s0: {slots}, %s1: {slots},
                %s2: {slots}, %pos: {slots}) -> ({kc}, {vc}, {kc}, {vc}, {kc}, {vc}) {{
  %a0, %b0 = pe.append_kv %k, %v into %kc, %vc slots(%s0 : {slots}) positions(%pos : {slots})
             layout(nhd) rope({attr}) : {t}
  %a1, %b1 = pe.append_kv %k, %v into %a0, %b0 slots(%s1 : {slots}) positions(%pos : {slots})
             layout(nhd) rope({attr}) : {t}
  %a2, %b2 = pe.append_kv %k, %v into %a0, %b0 slots(%s2 : {slots}) positions(%pos : {slots})
             layout(nhd) rope({attr}) : {t}
  return %a0, %b0, %a1, %b1, %a2, %b2 : {kc}, {vc}, {kc}, {vc}, {kc}, {vc}
}}"""
    compiled = runner.compile(ir, TARGET_FLAGS[target])
    rng = np.random.default_rng(29)
    k, v, kc, vc, slots, pos = _inputs("nhd", "f32", 5, rng)
    f32 = lambda *xs: [x.astype(np.float32) for x in xs]  # noqa: E731

    def close(got, want, what):
        err = np.abs(got - want).max() / max(1.0, np.abs(want).max())
        assert err <= TOLERANCE["f32"], f"{what}: relative error {err:.3g}"

    k2 = round_to(rng.standard_normal(k.shape), "f32")
    got = compiled.call("both", *f32(k, k2, kc), slots, pos)
    want = reference.append_kv(k, k2, kc, kc, slots, "nhd", pos, rope)
    for g, w, what in zip(got, want, ("keys", "values")):
        close(g, w, f"one tensor as both caches: {what}")
    others = [rng.permutation(PAGES * PAGE)[:5].astype(np.int64) for _ in range(2)]
    got = compiled.call("fork", *f32(k, v, kc, vc), slots, *others, pos)
    first = reference.append_kv(k, v, kc, vc, slots, "nhd", pos, rope)
    want = [*first, *reference.append_kv(k, v, *first, others[0], "nhd", pos, rope),
            *reference.append_kv(k, v, *first, others[1], "nhd", pos, rope)]
    for i, (g, w) in enumerate(zip(got, want)):
        close(g, w, f"fork result {i}")


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


# Multi-stream ropes of DIM channels (16 pairs): Qwen2-VL's M-RoPE, Qwen3-VL's
# interleaved M-RoPE, ggml's 2-D vision rope.
MULTI_STREAM_ROPES = {
    "mrope": dict(theta=1000000.0, sections=[4, 6, 6]),
    "imrope": dict(theta=5000000.0, sections=[8, 4, 4], section_mode="interleaved"),
    "vision": dict(theta=10000.0, sections=[8, 8], section_mode="vision"),
}


def _multi_stream_function(name, layout, dtype):
    k, v, kc, vc, slots = _types(layout, dtype)
    streams = len(MULTI_STREAM_ROPES[name]["sections"])
    pos = (f"tensor<{streams}x?xi64>" if layout != "dense"
           else f"tensor<{BATCH}x{streams}x?xi64>")
    attr = rope_attr(rotary_dim=DIM, **MULTI_STREAM_ROPES[name])
    return f"""
func.func @append_{name}(%k: {k}, %v: {v}, %kc: {kc} {{pe.in_place}}, %vc: {vc} {{pe.in_place}},
                 %slots: {slots}, %pos: {pos}) -> ({kc}, {vc}) {{
  %a, %b = pe.append_kv %k, %v into %kc, %vc slots(%slots : {slots}) positions(%pos : {pos})
           layout({layout}) rope({attr}) : {k}, {v} -> {kc}, {vc}
  return %a, %b : {kc}, {vc}
}}"""


@pytest.mark.parametrize("layout", ["dense", "nhd", "hnd"])
@pytest.mark.parametrize("dtype, lowering", [("f32", "host"), ("bf16", "host"),
                                             ("f32", "gpu-on-cpu")])
def test_append_with_multi_stream_rope(layout, dtype, lowering):
    """Each new key rotated by its own position streams ([A, T] for pages, [B, A, S]
    dense; streams that differ, so that rotating by one stream alone is wrong) and
    written with its value, against the float64 reference; also on the GPU schedule.
    Rotating every stream by the first stream's positions moves the keys by more than 10
    tolerances (asserted, so the check can fail)."""
    flags = (["--num-threads=1"] if lowering == "host" else
             ["--target=gpu-on-cpu", "--gpu-block-size=32", "--gpu-max-blocks=3"])
    compiled = runner.compile("\n".join(_multi_stream_function(n, layout, dtype)
                                        for n in MULTI_STREAM_ROPES), flags)
    rng = np.random.default_rng(43)
    for name, rope in MULTI_STREAM_ROPES.items():
        k, v, kc, vc, slots, _ = _inputs(layout, dtype, 5, rng)
        streams = len(rope["sections"])
        shape = (streams, 5) if layout != "dense" else (BATCH, streams, 5)
        pos = rng.integers(0, 4000, size=shape).astype(np.int64)
        ref_rope = dict(rope, rotary_dim=DIM)
        got_k, got_v = _run(compiled, f"append_{name}", dtype, k, v, kc, vc, slots, pos, True)
        want_k, want_v = reference.append_kv(k, v, kc, vc, slots, layout, pos, ref_rope)
        np.testing.assert_array_equal(got_v, want_v, err_msg=name)
        scale = max(1.0, np.abs(want_k).max())
        err = np.abs(got_k - want_k).max() / scale
        assert err <= TOLERANCE[dtype], f"{layout} {dtype} {name}: relative error {err:.3g}"
        one_stream = np.repeat(pos[..., :1, :], streams, axis=-2)
        wrong_k, _ = reference.append_kv(k, v, kc, vc, slots, layout, one_stream, ref_rope)
        assert np.abs(wrong_k - want_k).max() / scale > 10 * TOLERANCE[dtype]


@pytest.mark.parametrize("layout", ["nhd", "dense"])
def test_multi_stream_positions_that_differ_are_errors(layout):
    compiled = runner.compile(_multi_stream_function("mrope", layout, "f32"),
                              ["--num-threads=1"])
    rng = np.random.default_rng(47)
    k, v, kc, vc, slots, _ = _inputs(layout, "f32", 4, rng)
    shape = (3, 3) if layout != "dense" else (BATCH, 3, 3)
    pos = rng.integers(0, 100, size=shape).astype(np.int64)
    with pytest.raises(runner.KernelError, match="the positions do not match the slots"):
        compiled.call("append_mrope", k.astype(np.float32), v.astype(np.float32),
                      kc.astype(np.float32), vc.astype(np.float32), slots, pos)


# ---------------------------------------------------------------------------
# pe.paged_attention
# ---------------------------------------------------------------------------

# (queries, keys) per sequence: decode, a prefill chunk against its cache, a whole
# prompt, a sequence without queries, a one-token sequence, a full block table.
SEQUENCES = [(1, 19), (5, 13), (7, 7), (0, 4), (1, 1), (3, 24)]
# A decode step: one query per sequence, which the CPU pipeline runs as one batched
# kernel whose threads share the key blocks of the batch (with 12-key tiles, the
# third sequence's are split between the two threads and combined).
DECODE_SEQUENCES = [(1, 19), (1, 1), (1, 24), (1, 4), (1, 13), (1, 7)]
PAGED_PAGE, PAGED_PAGES, MAX_PAGES = 4, 40, 6

# name: (Hq, Hkv, D, Dv, attributes)
PAGED_CASES = {
    "gqa-causal-llama3": (8, 2, 32, 32, dict(causal=True, rope="llama3")),
    "mqa-window": (4, 1, 32, 16, dict(causal=True, window=5)),
    "alibi-causal": (4, 4, 16, 16, dict(causal=True, alibi=8.0)),
    "softcap-gqa-scale": (4, 2, 32, 32, dict(causal=True, softcap=3.0, scale=0.3)),
    "bidirectional-interleaved": (4, 2, 32, 32, dict(rope="partial-interleaved-llama3")),
    # Llama 4's chunked attention: each query sees the keys of its chunk of 8 positions.
    "chunked-gqa-llama3": (8, 2, 32, 32, dict(causal=True, chunk=8, rope="llama3")),
    # gpt-oss: learned sinks (an f32 logit per query head), a sliding window, RoPE.
    "sinks-gqa-window": (8, 2, 32, 32, dict(causal=True, window=6, rope="llama3", sinks=True)),
    # Llama 4's NoPE layers: chunked, no rotation, query temperature at the query positions.
    "temperature-chunked": (8, 2, 32, 32, dict(causal=True, chunk=8, temperature=(4, 0.25))),
    # Soft masks, a row per query over its sequence's keys: per head, and one for all
    # heads beside a window.
    "mask-gqa-llama3": (8, 2, 32, 32, dict(causal=True, rope="llama3", mask=8)),
    "mask-shared-window": (4, 2, 16, 16, dict(causal=True, window=6, mask=1)),
    # Each sequence rotated at its own length: scaled above 16 keys, not below.
    "dynamic-ntk-gqa": (8, 2, 32, 32, dict(causal=True, rope="dynamic-ntk-L16")),
    # Qwen2-VL / Qwen3-VL: the queries rotated by their rows' M-RoPE streams.
    "mrope-gqa": (8, 2, 32, 32, dict(causal=True, streams="mrope")),
    "imrope-window": (4, 2, 32, 32, dict(causal=True, window=6, streams="imrope")),
}
# The GPU kernel refuses frequencies that depend on each sequence's length.
GPU_REFUSED = {"dynamic-ntk-gqa"}
# Head dim 128 (the GPU kernel streams the query's channels instead of holding them):
# run on the GPU schedule only, the CPU kernels' D = 128 paths having their own tests.
WIDE_PAGED_CASES = {
    "d128-gqa-llama3": (8, 2, 128, 128, dict(causal=True, rope="llama3-d128")),
    "d128-window-alibi-yarn": (4, 1, 128, 64, dict(causal=True, window=20, alibi=8.0,
                                                  rope="yarn-d128-interleaved-96")),
    "d128-softcap-sinks": (4, 2, 128, 128, dict(causal=True, softcap=20.0, sinks=True)),
}


def _paged_case(name):
    return PAGED_CASES[name] if name in PAGED_CASES else WIDE_PAGED_CASES[name]


# Key columns of the soft masks: more than any sequence's keys (24; or 2 more than the
# longest sequence's).
MASK_COLUMNS = 26
PAGED_LOWERINGS = {
    "kernels": ["--num-threads=2", "--attention-block-keys=8"],
    "reference": ["--fuse=false", "--tile-attention=false", "--tile-rope=false"],
    **({"kernels-x86-64-v3": ["--num-threads=2", *AVX2]} if AVX2 else {}),
    # The GPU kernel run on the CPU: 3 blocks of 32 threads, so that every
    # grid-stride loop iterates.
    "gpu-on-cpu": ["--target=gpu-on-cpu", "--gpu-block-size=32", "--gpu-max-blocks=3"],
}


def _paged_types(name, layout, dtype, page_size=PAGED_PAGE):
    hq, hkv, d, dv, _ = _paged_case(name)
    page = (page_size, hkv) if layout == "nhd" else (hkv, page_size)
    return (f"tensor<?x{hq}x{d}x{dtype}>", f"tensor<?x{page[0]}x{page[1]}x{d}x{dtype}>",
            f"tensor<?x{page[0]}x{page[1]}x{dv}x{dtype}>", f"tensor<?x{hq}x{dv}x{dtype}>")


def _paged_function(name, layout, dtype, page_size=PAGED_PAGE):
    attrs = _paged_case(name)[4]
    q, kc, vc, out = _paged_types(name, layout, dtype, page_size)
    spelled = ""
    if "scale" in attrs:
        spelled += f" scale({attrs['scale']})"
    if attrs.get("causal"):
        spelled += " causal"
    if "window" in attrs:
        spelled += f" window({attrs['window']})"
    if "chunk" in attrs:
        spelled += f" chunk({attrs['chunk']})"
    if "rope" in attrs:
        spelled += f" rope({_rope(attrs['rope'])[0]})"
    if "alibi" in attrs:
        spelled += f" alibi({attrs['alibi']})"
    if "softcap" in attrs:
        spelled += f" softcap({attrs['softcap']})"
    if "temperature" in attrs:
        floor, scale = attrs["temperature"]
        spelled += f" temperature(#pe.temperature<floor_scale = {floor}, attn_scale = {scale}>)"
    fn = "paged_" + name.replace("-", "_")
    sinks_param = sinks = ""
    if attrs.get("mask"):
        mt = f"tensor<?x{attrs['mask']}x?xf32>"
        sinks_param, sinks = f", %m: {mt}", f" mask(%m : {mt})"
    if attrs.get("sinks"):
        st = f"tensor<{_paged_case(name)[0]}xf32>"
        sinks_param, sinks = sinks_param + f", %s: {st}", sinks + f" sinks(%s : {st})"
    if "streams" in attrs:  # a multi-stream rope: each row's streams [A, T]
        pt = f"tensor<{len(MULTI_STREAM_ROPES[attrs['streams']]['sections'])}x?xi64>"
        sinks_param, sinks = sinks_param + f", %rp: {pt}", sinks + f" rope_positions(%rp : {pt})"
        rope = rope_attr(rotary_dim=_paged_case(name)[2], **MULTI_STREAM_ROPES[attrs["streams"]])
        spelled += f" rope({rope})"  # the last attribute of these cases
    return f"""
func.func @{fn}(%q: {q}, %kc: {kc}, %vc: {vc}, %bt: tensor<?x{MAX_PAGES}xi32>,
               %lens: tensor<?xi32>, %cu: tensor<?xi64>{sinks_param}) -> {out} {{
  %o = pe.paged_attention %q, %kc, %vc block_table(%bt : tensor<?x{MAX_PAGES}xi32>)
       kv_lens(%lens : tensor<?xi32>) cu_seqlens(%cu : tensor<?xi64>){sinks} layout({layout}){spelled}
       : {q}, {kc}, {vc} -> {out}
  return %o : {out}
}}"""


def _paged_modules():
    """The default kernels and the GPU schedule with every (layout, dtype);
    the reference lowering and the AVX2 kernels with two of the four, which
    hold each layout and each dtype once (the layout and the element type
    are separate concerns of each lowering, and a module of every case
    takes 15-25 s to compile)."""
    pairs = [("nhd", "f32"), ("hnd", "bf16")]
    for lowering in PAGED_LOWERINGS:
        if lowering in ("kernels", "gpu-on-cpu"):
            yield from ((layout, dtype, lowering) for layout in ("nhd", "hnd")
                        for dtype in ("f32", "bf16"))
        else:
            yield from ((layout, dtype, lowering) for layout, dtype in pairs)
            pairs = [(layout, "bf16" if dtype == "f32" else "f32") for layout, dtype in pairs]


@pytest.fixture(scope="module", params=list(_paged_modules()), ids=lambda p: "-".join(p))
def paged_module(request):
    layout, dtype, lowering = request.param
    names = [n for n in PAGED_CASES if lowering != "gpu-on-cpu" or n not in GPU_REFUSED]
    ir = "\n".join(_paged_function(n, layout, dtype) for n in names)
    return layout, dtype, runner.compile(ir, PAGED_LOWERINGS[lowering])


def _paged_inputs(name, layout, dtype, rng, sequences=SEQUENCES, page_size=PAGED_PAGE,
                  pages=PAGED_PAGES):
    hq, hkv, d, dv, _ = _paged_case(name)
    page = (page_size, hkv) if layout == "nhd" else (hkv, page_size)
    make = lambda shape: round_to(rng.standard_normal(shape), dtype)  # noqa: E731
    kc, vc = make((pages, *page, d)), make((pages, *page, dv))
    pool = rng.permutation(pages)
    table = pool[:len(sequences) * MAX_PAGES].reshape(len(sequences), MAX_PAGES)
    lens = np.array([keys for _, keys in sequences], dtype=np.int32)
    cu = np.concatenate([[0], np.cumsum([queries for queries, _ in sequences])])
    q = make((int(cu[-1]), hq, d))
    args = (q, kc, vc, table.astype(np.int32), lens, cu.astype(np.int64))
    if _paged_case(name)[4].get("mask"):
        columns = max(MASK_COLUMNS, max(keys for _, keys in sequences) + 2)
        args += (_soft_mask(_paged_case(name)[4]["mask"], sequences, rng, columns),)
    if _paged_case(name)[4].get("sinks"):  # some far above the scores, one -inf
        sinks = (rng.standard_normal(hq) * 3.0).astype(np.float32)
        sinks[-1] = -np.inf
        args += (sinks,)
    if "streams" in _paged_case(name)[4]:  # streams that differ from the positions
        count = len(MULTI_STREAM_ROPES[_paged_case(name)[4]["streams"]]["sections"])
        args += (rng.integers(0, 3000, size=(count, int(cu[-1]))).astype(np.int64),)
    return args


def _soft_mask(heads, sequences, rng, columns=MASK_COLUMNS):
    """A soft mask [T, heads, columns]: each query row hides a fifth of its
    sequence's keys (never its own), biases the others, and holds NaN in the
    columns past its sequence's keys, which must not be read."""
    rows = []
    for queries, keys in sequences:
        mask = rng.standard_normal((queries, heads, columns)).astype(np.float32)
        hidden = rng.random((queries, heads, keys)) < 0.2
        for i in range(queries):
            hidden[i, :, keys - queries + i] = False
        mask[:, :, :keys][hidden] = -np.inf
        mask[:, :, keys:] = np.nan
        rows.append(mask)
    return np.concatenate(rows)


def _paged_reference(name, layout, q, kc, vc, table, lens, cu, *extra):
    attrs = dict(_paged_case(name)[4])
    if "rope" in attrs:
        attrs["rope"] = _rope(attrs["rope"])[1]
    extra = list(extra)  # in the function's order: mask, sinks, rope positions
    attrs["mask"] = extra.pop(0) if attrs.get("mask") else None
    attrs["sinks"] = extra.pop(0) if attrs.get("sinks") else None
    if "streams" in attrs:
        attrs["rope"] = dict(MULTI_STREAM_ROPES[attrs.pop("streams")], rotary_dim=q.shape[2])
        attrs["rope_positions"] = extra.pop(0)
    return reference.paged_attention(q, kc, vc, table, lens, cu, layout, **attrs)


def test_paged_attention_against_reference(paged_module):
    layout, dtype, compiled = paged_module
    rng = np.random.default_rng(23)
    for name in PAGED_CASES:
        if "paged_" + name.replace("-", "_") not in compiled.functions:
            continue  # refused by the GPU kernel (test_gpu_pipeline_refuses_...)
        for batch, sequences in (("mixed", SEQUENCES), ("decode", DECODE_SEQUENCES)):
            args = _paged_inputs(name, layout, dtype, rng, sequences)
            cast = [a.astype(NUMPY[dtype]) if i < 3 else a for i, a in enumerate(args)]
            (got,) = compiled.call("paged_" + name.replace("-", "_"), *cast)
            want = _paged_reference(name, layout, *args)
            err = np.abs(got.astype(np.float64) - want).max() / max(1.0, np.abs(want).max())
            tolerance = {"f32": 1e-5, "bf16": 1.6e-2}[dtype]
            assert err <= tolerance, f"{layout} {dtype} {name} {batch}: relative error {err:.3g}"


# Decode batches with fewer key tiles than threads (4 threads, 8-key tiles): some
# threads hold no tile, the others share a sequence's tiles; and one sequence alone.
SHORT_DECODE_BATCHES = {
    "one-sequence": [(1, 24)],
    "two-tiles": [(1, 16)],  # nhd: the third thread's empty range lies inside the tiles
    "two-short": [(1, 1), (1, 9)],
    "decode": DECODE_SEQUENCES,
}


@pytest.mark.parametrize("layout", ["nhd", "hnd"])
def test_paged_decode_with_more_threads_than_tiles(layout):
    names = ["gqa-causal-llama3", "sinks-gqa-window", "mask-gqa-llama3"]
    compiled = runner.compile("\n".join(_paged_function(n, layout, "f32") for n in names),
                              ["--num-threads=4", "--attention-block-keys=8"])
    rng = np.random.default_rng(29)
    for name in names:
        for batch, sequences in SHORT_DECODE_BATCHES.items():
            args = _paged_inputs(name, layout, "f32", rng, sequences)
            (got,) = compiled.call("paged_" + name.replace("-", "_"), *args)
            want = _paged_reference(name, layout, *args)
            err = np.abs(got.astype(np.float64) - want).max() / max(1.0, np.abs(want).max())
            assert err <= 1e-5, f"{layout} {name} {batch}: relative error {err:.3g}"


def test_paged_decode_batch_checks_its_pages(paged_module):
    """A decode batch (one query per sequence) takes the batched kernel's branch, which
    checks the block table before reading it, as the per-sequence loop does."""
    layout, dtype, compiled = paged_module
    args = list(_paged_inputs("gqa-causal-llama3", layout, "f32", np.random.default_rng(31),
                              DECODE_SEQUENCES))
    args = [a.astype(NUMPY[dtype]) if i < 3 else a for i, a in enumerate(args)]
    args[3][2, 1] = PAGED_PAGES
    with pytest.raises(runner.KernelError,
                       match=re.escape(f"page {PAGED_PAGES} (sequence 2) is out of range")):
        compiled.call("paged_gqa_causal_llama3", *args)


@pytest.mark.parametrize("bad, message", [
    ("lens", "sequence 1 has 25 keys, outside [0, 24]"),
    ("negative-length", "sequence 2 has -1 keys, outside [0, 24]"),
    ("page", "page 40 (sequence 5) is out of range for a cache of 40 pages"),
    ("negative-page", "page -3 (sequence 0) is out of range for a cache of 40 pages"),
    ("too-many-queries", "sequence 2 has 7 queries (cu_seqlens) but 6 keys"),
    ("cu-start", "cu_seqlens does not start at 0: got 1, expected 0"),
    ("cu-end", "cu_seqlens does not end at the number of query rows: got 16, expected 17"),
    ("batch", "kv_lens or cu_seqlens do not match the block table's sequences"),
    ("empty-batch-start", "cu_seqlens does not start at 0: got 5, expected 0"),
    ("empty-batch-rows", "cu_seqlens does not end at the number of query rows: got 0, "
                         "expected 17"),
])
def test_paged_attention_bad_inputs_are_errors(paged_module, bad, message):
    layout, dtype, compiled = paged_module
    rng = np.random.default_rng(29)
    q, kc, vc, table, lens, cu = _paged_inputs("mqa-window", layout, dtype, rng)
    if bad == "lens":
        lens[1] = 25
    elif bad == "negative-length":
        lens[2] = -1
    elif bad == "page":
        table[5, 5] = PAGED_PAGES  # sequence 5 reads all 6 of its pages
    elif bad == "negative-page":
        table[0, 2] = -3
    elif bad == "too-many-queries":
        lens[2] = 6
    elif bad == "cu-start":
        cu = cu + 1
    elif bad == "cu-end":
        cu = np.concatenate([cu[:-1], [cu[-1] - 1]])
    elif bad == "batch":
        lens = lens[:-1]
    elif bad.startswith("empty-batch"):  # no sequences: cu_seqlens must be [0], no rows
        table, lens = table[:0], lens[:0]
        cu = np.array([5 if bad == "empty-batch-start" else 0], dtype=cu.dtype)
        q = q if bad == "empty-batch-rows" else q[:0]
    cast = [a.astype(NUMPY[dtype]) for a in (q, kc, vc)]
    with pytest.raises(runner.KernelError, match=re.escape(message)):
        compiled.call("paged_mqa_window", *cast, table, lens, cu)


@pytest.mark.parametrize("bad, message", [
    ("columns", "sequence 5 has 24 keys but the mask only 23 key columns"),
    ("rows", "the mask's rows differ from the query's: got 16, expected 17"),
])
def test_paged_soft_mask_bad_sizes_are_errors(paged_module, bad, message):
    layout, dtype, compiled = paged_module
    rng = np.random.default_rng(37)
    q, kc, vc, table, lens, cu, mask = _paged_inputs("mask-shared-window", layout, dtype, rng)
    mask = mask[:, :, :23] if bad == "columns" else mask[:-1]
    cast = [a.astype(NUMPY[dtype]) for a in (q, kc, vc)]
    with pytest.raises(runner.KernelError, match=re.escape(message)):
        compiled.call("paged_mask_shared_window", *cast, table, lens, cu,
                      np.ascontiguousarray(mask))


def test_pages_beyond_a_sequence_are_not_read(paged_module):
    """Block-table entries past a sequence's length (unused pages, -1 as engines pad) are
    neither checked nor read."""
    layout, dtype, compiled = paged_module
    rng = np.random.default_rng(31)
    q, kc, vc, table, lens, cu = _paged_inputs("alibi-causal", layout, dtype, rng)
    for b, length in enumerate(lens):
        table[b, -(-int(length) // PAGED_PAGE):] = -1
    cast = [a.astype(NUMPY[dtype]) for a in (q, kc, vc)]
    (got,) = compiled.call("paged_alibi_causal", *cast, table, lens, cu)
    want = _paged_reference("alibi-causal", layout, q, kc, vc, table, lens, cu)
    err = np.abs(got.astype(np.float64) - want).max() / max(1.0, np.abs(want).max())
    assert err <= {"f32": 1e-5, "bf16": 1.6e-2}[dtype]


@pytest.mark.parametrize("layout", ["nhd", "hnd"])
def test_continuous_batching_loop_matches_dense_attention(layout):
    """A serving loop over a paged cache: sequences of different lengths share each step
    (one prompt prefilled in chunks of 3 while two others decode, one of them joining
    later); each step appends its tokens' K (rotated) and V in place and attends over the
    pages; every output row equals dense attention over its sequence's whole history."""
    hq, hkv, d = 4, 2, 32
    attr, rope = _rope("llama3")
    page = (PAGED_PAGE, hkv) if layout == "nhd" else (hkv, PAGED_PAGE)
    cache = f"tensor<{PAGED_PAGES}x{page[0]}x{page[1]}x{d}xf32>"
    rows = lambda h: f"tensor<?x{h}x{d}xf32>"  # noqa: E731
    ir = f"""
func.func @step(%q: {rows(hq)}, %k: {rows(hkv)}, %v: {rows(hkv)},
                %kc: {cache} {{pe.in_place}}, %vc: {cache} {{pe.in_place}},
                %slots: tensor<?xi64>, %pos: tensor<?xi64>, %bt: tensor<?x{MAX_PAGES}xi32>,
                %lens: tensor<?xi32>, %cu: tensor<?xi32>) -> ({rows(hq)}, {cache}, {cache}) {{
  %a, %b = pe.append_kv %k, %v into %kc, %vc slots(%slots : tensor<?xi64>)
           positions(%pos : tensor<?xi64>) layout({layout}) rope({attr})
           : {rows(hkv)}, {rows(hkv)} -> {cache}, {cache}
  %o = pe.paged_attention %q, %a, %b block_table(%bt : tensor<?x{MAX_PAGES}xi32>)
       kv_lens(%lens : tensor<?xi32>) cu_seqlens(%cu : tensor<?xi32>) layout({layout})
       causal rope({attr}) : {rows(hq)}, {cache}, {cache} -> {rows(hq)}
  return %o, %a, %b : {rows(hq)}, {cache}, {cache}
}}"""
    compiled = runner.compile(ir, ["--num-threads=2"])
    rng = np.random.default_rng(37)
    total = [9, 14, 6]   # tokens of each sequence over the run
    join = [0, 0, 4]     # the step at which each sequence arrives
    prompt = [9, 2, 3]   # prompt tokens, prefilled 3 per step
    streams = [(rng.standard_normal((n, hq, d)), rng.standard_normal((n, hkv, d)),
                rng.standard_normal((n, hkv, d))) for n in total]
    table = rng.permutation(PAGED_PAGES)[:3 * MAX_PAGES].reshape(3, MAX_PAGES).astype(np.int32)
    kc = np.zeros((PAGED_PAGES, *page, d), np.float32)
    vc = np.zeros_like(kc)
    done = [0, 0, 0]
    for step in range(20):
        chunks = []
        for s in range(3):
            if step < join[s] or done[s] == total[s]:
                chunks.append(0)
                continue
            left_in_prompt = prompt[s] - done[s]
            chunks.append(min(3, left_in_prompt) if left_in_prompt > 0 else 1)
        if not any(chunks):
            break
        new = [(s, t) for s in range(3) for t in range(done[s], done[s] + chunks[s])]
        pick = lambda i: np.stack([streams[s][i][t] for s, t in new]).astype(np.float32)  # noqa
        positions = np.array([t for _, t in new], dtype=np.int64)
        slots = np.array([table[s, t // PAGED_PAGE] * PAGED_PAGE + t % PAGED_PAGE
                          for s, t in new], dtype=np.int64)
        lens = np.array([done[s] + chunks[s] for s in range(3)], dtype=np.int32)
        cu = np.concatenate([[0], np.cumsum(chunks)]).astype(np.int32)
        (out,) = compiled.call("step", pick(0), pick(1), pick(2), kc, vc, slots, positions,
                               table, lens, cu)
        for row, (s, t) in enumerate(new):
            q, k, v = (x[:t + 1].astype(np.float32).transpose(1, 0, 2)[None]
                       for x in streams[s])
            whole = reference.attention(q, k, v, causal=True, rope=rope)
            want = whole[0, :, t]
            err = np.abs(out[row] - want).max() / max(1.0, np.abs(want).max())
            assert err <= 1e-5, f"step {step}, sequence {s}, token {t}: {err:.3g}"
        done = [done[s] + chunks[s] for s in range(3)]
    assert done == total


# The GPU kernel splits the keys of the block table's capacity (6 pages of 16 keys) into
# ranges of 32: sequences that end inside, at and before a split's range, decode and
# prefill chunks in one batch.
GPU_SPLIT_PAGE = 16
GPU_SPLIT_SEQUENCES = [(1, 95), (1, 40), (3, 33), (1, 1), (0, 5), (2, 64), (1, 96), (4, 31)]


@pytest.mark.parametrize("layout", ["nhd", "hnd"])
def test_gpu_kernel_merges_key_splits(layout):
    """The GPU schedule on the CPU with keys split across threads (3 splits of 32 keys)
    and merged: every case, and heads of 128 channels, against the float64 reference."""
    names = [n for n in [*PAGED_CASES, *WIDE_PAGED_CASES] if n not in GPU_REFUSED]
    ir = "\n".join(_paged_function(n, layout, "f32", GPU_SPLIT_PAGE) for n in names)
    compiled = runner.compile(ir, PAGED_LOWERINGS["gpu-on-cpu"])
    rng = np.random.default_rng(41)
    sequences = GPU_SPLIT_SEQUENCES
    for name in names:
        args = _paged_inputs(name, layout, "f32", rng, sequences, GPU_SPLIT_PAGE,
                             pages=len(sequences) * MAX_PAGES)
        (got,) = compiled.call("paged_" + name.replace("-", "_"), *args)
        want = _paged_reference(name, layout, *args)
        err = np.abs(got.astype(np.float64) - want).max() / max(1.0, np.abs(want).max())
        assert err <= 1e-5, f"{layout} {name}: relative error {err:.3g}"


@pytest.mark.parametrize("case, reason", [
    ("wide", "its head dims exceed 1024"),
    ("dynamic-ntk", "its rope's frequencies depend on each sequence's length"),
    ("untiled", None),
])
def test_gpu_pipeline_refuses_what_its_kernel_does_not_take(case, reason):
    """A paged attention of head dim 1280 (above the kernel's 1024), one whose rotation
    depends on each sequence's length (the kernel's one table of row positions would
    give every sequence the batch's longest), and any without the kernel: a diagnostic
    naming why, not a library whose loop over the sequences would run in one GPU
    thread."""
    name = "dynamic-ntk-gqa" if case == "dynamic-ntk" else "mqa-window"
    ir = _paged_function(name, "nhd", "f32")
    if case == "wide":
        ir = ir.replace("x32xf32>", "x1280xf32>")
    flags = ["--target=gpu-on-cpu", *(["--tile-attention=false"] if case == "untiled" else [])]
    message = ("is not supported by pe-gpu-pipeline without pe-gpu-tile-attention"
               if reason is None else f"is not supported by the GPU kernel: {reason}")
    with pytest.raises(RuntimeError, match=re.escape(f"'pe.paged_attention' op {message}")):
        runner.compile(ir, flags)


# ---------------------------------------------------------------------------
# pe.gather_pages (what pe.paged_attention's expansion reads per sequence)
# ---------------------------------------------------------------------------

def _gather_function(layout):
    page = "4x2" if layout == "nhd" else "2x4"
    return f"""
func.func @gather(%c: tensor<?x{page}x8xf32>, %bt: tensor<?x3xi32>, %b: tensor<1xi64>,
                  %n: tensor<1xi64>) -> tensor<1x2x?x8xf32> {{
  %c0 = arith.constant 0 : index
  %bi = tensor.extract %b[%c0] : tensor<1xi64>
  %ni = tensor.extract %n[%c0] : tensor<1xi64>
  %seq = arith.index_cast %bi : i64 to index
  %len = arith.index_cast %ni : i64 to index
  %k = pe.gather_pages %c block_table(%bt : tensor<?x3xi32>) sequence(%seq) length(%len)
         layout({layout}) : tensor<?x{page}x8xf32> -> tensor<1x2x?x8xf32>
  return %k : tensor<1x2x?x8xf32>
}}"""


@pytest.mark.parametrize("layout", ["nhd", "hnd"])
def test_gather_pages_against_reference_and_bad_inputs(layout):
    """The copy lowering of pe.gather_pages (where no kernel reads the pages in place)
    equals the reference for every length; a sequence outside the block table, a length
    beyond its pages or a page outside the cache is an error naming it."""
    compiled = runner.compile(_gather_function(layout), ["--num-threads=1"])
    rng = np.random.default_rng(37)
    shape = (5, 4, 2, 8) if layout == "nhd" else (5, 2, 4, 8)
    cache = rng.standard_normal(shape).astype(np.float32)
    table = np.array([[3, 1, 4], [0, 2, 2]], np.int32)
    for seq, length in [(0, 10), (1, 12), (0, 0), (1, 1), (0, 4)]:
        (got,) = compiled.call("gather", cache, table, np.array([seq]), np.array([length]))
        want = reference.gather_pages(cache, table[seq], length, layout)
        np.testing.assert_array_equal(got[0], want)
    bad = table.copy()
    bad[1, 2] = 7
    for seq, length, message in [
            (2, 4, "pe.gather_pages: sequence 2 is outside the block table's 2 rows"),
            (-1, 4, "pe.gather_pages: sequence -1 is outside the block table's 2 rows"),
            (0, 13, "pe.gather_pages: sequence 0 has 13 keys, outside [0, 12]"),
            (1, 12, "pe.gather_pages: page 7 (sequence 1) is out of range for a cache of 5 "
             "pages")]:
        with pytest.raises(runner.KernelError, match=re.escape(message)):
            compiled.call("gather", cache, bad, np.array([seq]), np.array([length]))
    # Pages past the length are not read.
    (got,) = compiled.call("gather", cache, bad, np.array([1]), np.array([8]))
    np.testing.assert_array_equal(got[0], reference.gather_pages(cache, bad[1], 8, layout))
