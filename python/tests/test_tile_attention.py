"""The flash-attention kernel (pe-tile-attention) against the float64 reference
and against the reference lowering (--tile-attention=false).

Small tiles (--attention-rows=16, --attention-block-keys=48) make short
sequences span many query blocks and key tiles, with tails in both; the
default tiles are covered too. Threads 1 and 2: with 2 threads a call with
fewer tasks than 4 splits its key tiles, so MQA/decode cases run the
split-and-combine path.

Tolerances, relative to max(1, max |reference|): f32 1e-5; f16 2e-3; bf16
1.6e-2 (2 ulps of the element type near 1.0; the f32-FMA kernel rounds once,
the vdpbf16ps kernel also rounds the rotated Q and K and the weights P to
bf16, which stays well within it: about 5e-3 measured).

bf16 runs both kernels: f32 FMAs on converted values (--bf16-dot=off) and
AVX512-BF16 dot products (--bf16-dot=on, where the CPU has avx512_bf16).
"""

import zlib

import numpy as np
import pytest

from pe import emulated, reference, runner
from pe.ir import rope_attr
from pe.testing import BF16_KERNELS, bf16_kernel_missing, round_to

REL = {"f32": 1e-5, "f16": 2e-3, "bf16": 1.6e-2}
SMALL_TILES = ("--attention-rows=16", "--attention-block-keys=48")

LLAMA3 = {"type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
          "high_freq_factor": 4.0, "original_max_position_embeddings": 64}
ROPES = {
    "none": None,
    "half-llama3": dict(theta=500000.0, rotary_dim=32, style="half", scaling=LLAMA3),
    "interleaved": dict(theta=10000.0, rotary_dim=32, style="interleaved", scaling=None),
    "partial-scalar": dict(theta=10000.0, rotary_dim=8, style="half", scaling=None),
    "partial-yarn": dict(theta=10000.0, rotary_dim=16, style="interleaved",
                         scaling={"type": "yarn", "factor": 4.0,
                                  "original_max_position_embeddings": 32}),
}


def _rng(name):
    return np.random.default_rng(zlib.crc32(name.encode()))


def _ir(dtype, hq, hkv, sq, skv, d, dv, *, causal, window, rope, alibi, mask, positions,
        b=None, fname="attn"):
    """Dynamic batch and sequence dims, or all static when `b` is given (static
    decode shapes select the row-major decode kernels)."""
    bd, sqd, skd = ("?", "?", "?") if b is None else (b, sq, skv)
    q = f"tensor<{bd}x{hq}x{sqd}x{d}x{dtype}>"
    k = f"tensor<{bd}x{hkv}x{skd}x{d}x{dtype}>"
    v = f"tensor<{bd}x{hkv}x{skd}x{dv}x{dtype}>"
    o = f"tensor<{bd}x{hq}x{sqd}x{dv}x{dtype}>"
    args = [f"%q: {q}", f"%k: {k}", f"%v: {v}"]
    attrs = ""
    if mask:
        m = f"tensor<{bd}x{hq}x{sqd}x{skd}xf32>"
        args.append(f"%m: {m}")
        attrs += f" mask(%m : {m})"
    if positions == "batch":
        pq, pk = f"tensor<{bd}x{sqd}xi64>", f"tensor<{bd}x{skd}xi64>"
        args += [f"%qp: {pq}", f"%kp: {pk}"]
        attrs += f" q_positions(%qp : {pq}) k_positions(%kp : {pk})"
    elif positions == "far":
        pq, pk = f"tensor<{sqd}xi64>", f"tensor<{skd}xi64>"
        args += [f"%qp: {pq}", f"%kp: {pk}"]
        attrs += f" q_positions(%qp : {pq}) k_positions(%kp : {pk})"
    elif positions is not None:
        pq, pk = f"tensor<{sqd}xi32>", f"tensor<{skd}xi32>"
        args += [f"%qp: {pq}", f"%kp: {pk}"]
        attrs += f" q_positions(%qp : {pq}) k_positions(%kp : {pk})"
    if causal:
        attrs += " causal"
    if window:
        attrs += f" window({window})"
    if rope:
        attrs += f" rope({rope_attr(rope['theta'], rope['rotary_dim'], rope['style'], rope['scaling'])})"
    if alibi:
        attrs += f" alibi({alibi})"
    return f"""
func.func @{fname}({", ".join(args)}) -> {o} {{
  %o = pe.attention %q, %k, %v{attrs} : {q}, {k}, {v} -> {o}
  return %o : {o}
}}
"""


CASES = {
    # name: (hq, hkv, b, sq, skv, d, dv, options)
    "gqa-prefill-rope": (8, 2, 1, 150, 150, 32, 32, dict(causal=True, rope="half-llama3")),
    "gqa-prefill-interleaved-offset": (8, 2, 2, 70, 130, 32, 32,
                                       dict(causal=True, rope="interleaved", positions="offset")),
    "mha-window-causal": (4, 4, 1, 200, 200, 32, 32, dict(causal=True, window=37)),
    "mha-window-symmetric": (4, 4, 1, 120, 120, 32, 48, dict(window=29, rope="half-llama3")),
    "mqa-decode-split": (8, 1, 1, 1, 500, 32, 32, dict(causal=True, rope="half-llama3")),
    "mqa-decode-4-queries": (2, 1, 1, 4, 333, 32, 32, dict(causal=True)),
    "decode-alibi-mask": (8, 2, 2, 1, 150, 32, 48, dict(causal=True, alibi=8.0, mask=True)),
    "decode-rope-bf16-shapes": (4, 1, 1, 2, 97, 64, 32, dict(causal=True, rope="interleaved",
                                                            positions="offset")),
    "decode-mha": (4, 4, 3, 1, 49, 32, 32, dict(window=20, rope="half-llama3")),
    # 7 rows: the rows' shared reduction pads an odd count (and on 4-lane
    # NEON ends with two vectors of sums); no rope: bf16 keys read in place.
    "decode-7-rows": (7, 1, 2, 1, 130, 32, 32, dict(causal=True)),
    "gqa-decode-batch": (4, 2, 2, 2, 260, 32, 32, dict(causal=True, positions="batch",
                                                      rope="interleaved")),
    "alibi-causal": (6, 6, 1, 110, 110, 32, 32, dict(causal=True, alibi=8.0)),
    "gqa-yarn-partial-offset": (8, 2, 1, 77, 141, 32, 32,
                                dict(causal=True, rope="partial-yarn", positions="offset")),
    # ALiBi scores grow with |q - k|: f32 holds them to ~1e-7 relative, so
    # positions stay within a few hundred (as in models using ALiBi).
    "alibi-gqa-arbitrary": (8, 2, 1, 60, 140, 32, 32, dict(alibi=8.0, positions="nearby")),
    "mask-gqa": (4, 2, 2, 50, 97, 32, 32, dict(mask=True)),
    "mask-causal-rope": (4, 1, 1, 66, 66, 32, 32, dict(mask=True, causal=True, rope="half-llama3")),
    "odd-dims-partial-rope": (3, 1, 1, 45, 100, 24, 20, dict(causal=True, rope="partial-scalar")),
    "arbitrary-positions-rope": (8, 2, 1, 90, 90, 32, 32, dict(causal=True, rope="half-llama3",
                                                              positions="arbitrary")),
    "fully-masked-rows": (4, 2, 1, 40, 40, 32, 32, dict(causal=True, positions="reversed")),
    # Positions spread over 2^40: distances are not exact in f32, the masks
    # compare 64-bit positions.
    "far-positions-window": (4, 2, 1, 40, 120, 32, 32, dict(causal=True, window=2**36,
                                                           positions="far")),
    "empty-keys": (4, 2, 1, 5, 0, 32, 32, dict()),
    "empty-queries": (4, 2, 1, 0, 50, 32, 32, dict(causal=True)),
}


def _inputs(name, dtype, hq, hkv, b, sq, skv, d, dv, opts):
    rng = _rng(name)
    q = round_to(rng.standard_normal((b, hq, sq, d)), dtype)
    k = round_to(rng.standard_normal((b, hkv, skv, d)), dtype)
    v = round_to(rng.standard_normal((b, hkv, skv, dv)), dtype)
    args = [q, k, v]
    kwargs = dict(causal=opts.get("causal", False), window=opts.get("window"),
                  alibi=opts.get("alibi"), rope=ROPES[opts.get("rope", "none")])
    if opts.get("mask"):
        m = np.where(rng.random((b, hq, sq, skv)) < 0.2, -np.inf,
                     rng.standard_normal((b, hq, sq, skv))).astype(np.float32)
        args.append(m)
        kwargs["mask"] = m
    pos = opts.get("positions")
    if pos == "offset":
        qp, kp = 1000 + skv - sq + np.arange(sq), 1000 + np.arange(skv)
    elif pos == "arbitrary":
        kp = np.sort(rng.choice(100000, skv, replace=False))
        qp = np.sort(rng.choice(100000, sq, replace=False))
    elif pos == "nearby":
        kp = np.sort(rng.choice(300, skv, replace=False))
        qp = np.sort(rng.choice(300, sq, replace=False))
    elif pos == "far":
        kp = np.sort(rng.choice(2**40, skv, replace=False))
        qp = np.sort(rng.choice(2**40, sq, replace=False))
    elif pos == "reversed":
        # Queries before every key: rows fully masked under causal.
        qp = np.arange(sq)
        kp = np.arange(skv) + sq // 2
    elif pos == "batch":
        qp = np.stack([skv - sq + np.arange(sq) + 7 * i for i in range(b)])
        kp = np.stack([np.arange(skv) + 7 * i for i in range(b)])
    if pos is not None:
        dt = np.int64 if pos in ("batch", "far") else np.int32
        args += [qp.astype(dt), kp.astype(dt)]
        kwargs.update(q_positions=qp, k_positions=kp)
    if pos is None:
        opts = dict(opts, positions=None)
    return args, kwargs


def _check(got, want, dtype, what):
    scale = max(1.0, float(np.abs(want).max(initial=0.0)))
    err = float(np.abs(np.asarray(got, np.float64) - want).max(initial=0.0))
    assert np.isfinite(got).all(), f"{what}: non-finite output"
    assert err <= REL[dtype] * scale, f"{what}: max error {err:.3g} > {REL[dtype]} * {scale:.3g}"


def _fn(name, static=False):
    """The function of case `name` in a library of several cases."""
    return "attn_" + name.replace("-", "_") + ("_static" if static else "")


def _group(names, static=False):
    """Cases compiled into one library: (name, static shapes) for each of `names`;
    `static` is a bool, or the names whose shapes are static."""
    return tuple((n, static if isinstance(static, bool) else n in static) for n in names)


def _compile(group, dtype, tiles, threads, tile=True, target=(), qemu_cpu=None):
    """One library of every case in `group` (`_group`), function `_fn(name, static)`
    each, compiled once per process for all the tests that use it (a failed
    compilation too: its error is raised again for every test of the group)."""
    key = (group, dtype, tiles, threads, tile, target, qemu_cpu)
    if key not in _LIBRARIES:
        try:
            _LIBRARIES[key] = _compile_group(*key)
        except RuntimeError as error:
            _LIBRARIES[key] = error
    if isinstance(_LIBRARIES[key], RuntimeError):
        raise _LIBRARIES[key]
    return _LIBRARIES[key]


_LIBRARIES = {}


def _compile_group(group, dtype, tiles, threads, tile, target, qemu_cpu):
    funcs = []
    for name, static in group:
        hq, hkv, b, sq, skv, d, dv, opts = CASES[name]
        funcs.append(_ir(dtype, hq, hkv, sq, skv, d, dv, causal=opts.get("causal", False),
                         window=opts.get("window"), rope=ROPES[opts.get("rope", "none")],
                         alibi=opts.get("alibi"), mask=opts.get("mask", False),
                         positions=opts.get("positions"), b=b if static else None,
                         fname=_fn(name, static)))
    extra = [f"--num-threads={threads}", f"--tile-attention={'true' if tile else 'false'}"]
    return runner.compile("\n".join(funcs), extra_args=extra + list(tiles) + list(target),
                          qemu_cpu=qemu_cpu)


@pytest.mark.sanitized
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("tiles", ["small", "default"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_tiled_matches_reference(name, tiles, threads):
    hq, hkv, b, sq, skv, d, dv, opts = CASES[name]
    mod = _compile(_group(sorted(CASES)), "f32", SMALL_TILES if tiles == "small" else (), threads)
    args, kwargs = _inputs(name, "f32", hq, hkv, b, sq, skv, d, dv, opts)
    want = reference.attention(*args[:3], **kwargs)
    (got,) = mod.call(_fn(name), *args)
    assert got.shape == want.shape
    _check(got, want, "f32", name)


DECODE = ["mqa-decode-split", "mqa-decode-4-queries", "gqa-decode-batch", "decode-alibi-mask",
          "decode-rope-bf16-shapes", "decode-mha", "decode-7-rows"]


STATIC = DECODE + ["gqa-prefill-rope", "empty-keys"]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("name", STATIC)
def test_static_shapes(name, threads):
    """Static shapes; for decode (Sq x group <= 8 rows) the row-major kernels."""
    hq, hkv, b, sq, skv, d, dv, opts = CASES[name]
    mod = _compile(_group(STATIC, static=True), "f32", SMALL_TILES, threads)
    args, kwargs = _inputs(name, "f32", hq, hkv, b, sq, skv, d, dv, opts)
    want = reference.attention(*args[:3], **kwargs)
    (got,) = mod.call(_fn(name, static=True), *args)
    _check(got, want, "f32", name)


LOW_PRECISION = [("f16", "fma"), ("bf16", "fma"), ("bf16", "dot"), ("bf16", "amx")]
LOW_PRECISION_CASES = ["gqa-prefill-rope", "mqa-decode-split", "alibi-causal", "mask-causal-rope",
                       "odd-dims-partial-rope", "decode-rope-bf16-shapes", "decode-7-rows"]


def _skip_without_bf16_kernel(kernel):
    if bf16_kernel_missing(kernel):
        pytest.skip(bf16_kernel_missing(kernel))


@pytest.mark.parametrize("dtype,kernel", LOW_PRECISION, ids=["-".join(x) for x in LOW_PRECISION])
@pytest.mark.parametrize("static", [False, True], ids=["dynamic", "static"])
@pytest.mark.parametrize("name", LOW_PRECISION_CASES)
def test_tiled_low_precision(name, dtype, kernel, static):
    _skip_without_bf16_kernel(kernel)
    hq, hkv, b, sq, skv, d, dv, opts = CASES[name]
    mod = _compile(_group(LOW_PRECISION_CASES, static), dtype,
                   SMALL_TILES + tuple(BF16_KERNELS[kernel]), 2)
    args, kwargs = _inputs(name, dtype, hq, hkv, b, sq, skv, d, dv, opts)
    want = reference.attention(*args[:3], **kwargs)
    call_args = [a.astype(np.float16) if dtype == "f16" and i < 3 else
                 a.astype(np.float32) if i < 3 else a for i, a in enumerate(args)]
    (got,) = mod.call(_fn(name, static), *call_args)
    _check(np.asarray(got, np.float64), want, dtype, name)


LOWERINGS = ["gqa-prefill-rope", "mask-gqa", "mha-window-symmetric"]


@pytest.mark.parametrize("name", LOWERINGS)
def test_tiled_matches_reference_lowering(name):
    """Both lowerings of one function agree (f32)."""
    hq, hkv, b, sq, skv, d, dv, opts = CASES[name]
    args, _ = _inputs(name, "f32", hq, hkv, b, sq, skv, d, dv, opts)
    (tiled,) = _compile(_group(sorted(CASES)), "f32", SMALL_TILES, 2).call(_fn(name), *args)
    (linalg,) = _compile(_group(LOWERINGS), "f32", (), 1, tile=False).call(_fn(name), *args)
    _check(tiled, np.asarray(linalg, np.float64), "f32", name)


def test_threads_do_not_change_results():
    """The key split of decode and the task order of prefill do not change a
    task's arithmetic except for the split's combine step: prefill results
    with 1 and 2 threads are bit-identical."""
    name = "gqa-prefill-rope"
    hq, hkv, b, sq, skv, d, dv, opts = CASES[name]
    args, _ = _inputs(name, "f32", hq, hkv, b, sq, skv, d, dv, opts)
    group = _group(sorted(CASES))
    (one,) = _compile(group, "f32", SMALL_TILES, 1).call(_fn(name), *args)
    (two,) = _compile(group, "f32", SMALL_TILES, 2).call(_fn(name), *args)
    assert np.array_equal(one, two)


BF16_DOT = ["gqa-prefill-rope", "gqa-prefill-interleaved-offset", "gqa-yarn-partial-offset",
            "mha-window-causal", "mha-window-symmetric", "alibi-causal", "alibi-gqa-arbitrary",
            "mask-gqa", "mask-causal-rope", "arbitrary-positions-rope", "fully-masked-rows",
            "far-positions-window", "mqa-decode-split", "mqa-decode-4-queries",
            "gqa-decode-batch", "decode-alibi-mask", "empty-keys", "empty-queries"]


@pytest.mark.skipif(not runner.host_has_avx512_bf16(), reason="the CPU has no avx512_bf16")
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("tiles", ["small", "default"])
@pytest.mark.parametrize("name", BF16_DOT)
def test_bf16_dot(name, tiles, threads):
    """bf16 attention on vdpbf16ps dot products (--bf16-dot=on) against the
    float64 reference: GQA/MQA/MHA, causal, windows, ALiBi, masks, RoPE styles
    and scalings, arbitrary and far positions, and decode shapes (dynamic
    shapes: one query runs the decode kernel, more the prefill schedule; with
    2 threads the key split and combine)."""
    hq, hkv, b, sq, skv, d, dv, opts = CASES[name]
    extra = tuple(BF16_KERNELS["dot"]) + (SMALL_TILES if tiles == "small" else ())
    mod = _compile(_group(BF16_DOT), "bf16", extra, threads)
    args, kwargs = _inputs(name, "bf16", hq, hkv, b, sq, skv, d, dv, opts)
    want = reference.attention(*args[:3], **kwargs)
    (got,) = mod.call(_fn(name), *[a.astype(np.float32) if i < 3 else a
                                   for i, a in enumerate(args)])
    _check(np.asarray(got, np.float64), want, "bf16", name)


@pytest.mark.skipif(not runner.host_has_avx512_bf16(), reason="the CPU has no avx512_bf16")
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("name", DECODE)
def test_bf16_dot_decode(name, threads):
    """Static decode shapes (<= 8 rows): the decode kernel's dot-product scores
    and pair products of P V (--bf16-dot=on) against the float64 reference."""
    hq, hkv, b, sq, skv, d, dv, opts = CASES[name]
    mod = _compile(_group(DECODE, static=True), "bf16", tuple(BF16_KERNELS["dot"]) + SMALL_TILES,
                   threads)
    args, kwargs = _inputs(name, "bf16", hq, hkv, b, sq, skv, d, dv, opts)
    want = reference.attention(*args[:3], **kwargs)
    (got,) = mod.call(_fn(name, static=True), *[a.astype(np.float32) if i < 3 else a
                                                for i, a in enumerate(args)])
    _check(np.asarray(got, np.float64), want, "bf16", name)


@pytest.mark.skipif(not runner.host_has_amx(), reason="the CPU has no AMX (amx_bf16, amx_tile)")
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("tiles", ["small", "default"])
@pytest.mark.parametrize("name", ["gqa-prefill-rope", "gqa-prefill-interleaved-offset",
                                  "mha-window-causal", "mha-window-symmetric", "alibi-causal",
                                  "mask-causal-rope", "fully-masked-rows", "empty-keys"])
def test_amx_bf16(name, tiles, threads):
    """bf16 attention on AMX tiles (--amx=on) against the float64 reference: blocks of
    16 rows (small tiles: single tile products) and of 64 (2 x 2 blocks of products),
    value heads of 32 and 48 channels (2 x 2 and 2 x 1 blocks), partial key tiles."""
    hq, hkv, b, sq, skv, d, dv, opts = CASES[name]
    ir = _ir("bf16", hq, hkv, sq, skv, d, dv, causal=opts.get("causal", False),
             window=opts.get("window"), rope=ROPES[opts.get("rope", "none")],
             alibi=opts.get("alibi"), mask=opts.get("mask", False),
             positions=opts.get("positions"))
    mod = runner.compile(ir, extra_args=[f"--num-threads={threads}", "--amx=on"] +
                         list(SMALL_TILES if tiles == "small" else ()))
    args, kwargs = _inputs(name, "bf16", hq, hkv, b, sq, skv, d, dv, opts)
    want = reference.attention(*args[:3], **kwargs)
    (got,) = mod.call("attn", *[a.astype(np.float32) if i < 3 else a for i, a in enumerate(args)])
    _check(np.asarray(got, np.float64), want, "bf16", name)


@pytest.mark.skipif(runner.host_has_amx(), reason="the CPU has AMX")
@pytest.mark.skipif("avx512f" not in runner._cpu_flags(),
                    reason="the CPU has no AVX-512: pe-compile refuses --amx=on for its "
                           "256-bit vectors (test_targets, pe-compile-errors.test)")
def test_amx_code_on_a_cpu_without_amx():
    """Code compiled with --amx=on (for an AMX machine) returns PE_ERROR_CPU with a
    message on a CPU without AMX instead of faulting on its first tile instruction."""
    ir = _ir("bf16", 8, 2, 20, 20, 32, 32, causal=True, window=None, rope=None, alibi=None,
             mask=False, positions=None)
    mod = runner.compile(ir, extra_args=["--amx=on"])
    q = np.ones((1, 8, 20, 32), np.float32)
    k = np.ones((1, 2, 20, 32), np.float32)
    with pytest.raises(runner.KernelError, match="refused the AMX tile state") as caught:
        mod.call("attn", q, k, k)
    assert caught.value.status == 4


# The kernels of other targets, each on an emulated CPU (qemu-user): 8-lane
# AVX2 on AMD Zen 2 (2 x 6 micro-tiles, bf16 through integer rounding; any
# wider instruction faults there), 4-lane AArch64 NEON (4 x 6) and 8-lane SVE
# (one thread: cross-compiled libraries have no OpenMP). Every case, both
# layouts of decode, and the low-precision paths. Each entry: pe-compile
# arguments, threads, qemu CPU model (None: the architecture's default), why
# it cannot run here (None: it can).
# Without qemu-user 7.2 or later, the AVX2 kernels run natively on an AVX2
# host (no fault for a wider instruction then).
_ZEN2_QEMU = None if emulated.missing_cpu_model() else "EPYC-Rome"
OTHER_TARGETS = {
    "avx2": (("--mtriple=x86_64-linux-gnu", "--mcpu=znver2"), 2, _ZEN2_QEMU,
             None if _ZEN2_QEMU or "avx2" in runner._cpu_flags() else "the CPU has no AVX2"),
    "aarch64": (("--mtriple=aarch64-linux-gnu", "--mcpu=neoverse-n1"), 1, None,
                emulated.missing("aarch64")),
    # SVE at 256 bits (Graviton 3): 8-lane kernels computed with SVE
    # instructions, run with qemu's vector length set to 256 bits.
    "sve256": (("--mtriple=aarch64-linux-gnu", "--mcpu=neoverse-v1", "--sve-vector-bits=256"),
               1, None, emulated.missing("aarch64")),
}
# bf16 on BFDOT dot products (NEON with BF16, Neoverse V2: pe-compile's
# default --bf16-dot=auto), for the low-precision cases.
BF16_DOT_TARGETS = {
    "neon-bfdot": (("--mtriple=aarch64-linux-gnu", "--mcpu=neoverse-v2"), 1, None,
                   emulated.missing("aarch64")),
}


def _target(which):
    args, threads, qemu_cpu, missing = {**OTHER_TARGETS, **BF16_DOT_TARGETS}[which]
    if missing:
        pytest.skip(f"{which}: {missing}")
    return args, threads, qemu_cpu


@pytest.mark.parametrize("which", sorted(OTHER_TARGETS))
@pytest.mark.parametrize("name", sorted(CASES))
def test_other_targets(name, which):
    target, threads, qemu_cpu = _target(which)
    hq, hkv, b, sq, skv, d, dv, opts = CASES[name]
    mod = _compile(_group(sorted(CASES), DECODE), "f32", SMALL_TILES, threads, target=target,
                   qemu_cpu=qemu_cpu)
    args, kwargs = _inputs(name, "f32", hq, hkv, b, sq, skv, d, dv, opts)
    want = reference.attention(*args[:3], **kwargs)
    (got,) = mod.call(_fn(name, name in DECODE), *args)
    _check(got, want, "f32", f"{which} {name}")


OTHER_LOW_PRECISION = ["gqa-prefill-rope", "mqa-decode-split", "mask-causal-rope",
                       "odd-dims-partial-rope", "decode-rope-bf16-shapes"]


@pytest.mark.parametrize("which", sorted(OTHER_TARGETS) + sorted(BF16_DOT_TARGETS))
@pytest.mark.parametrize("dtype", ["bf16", "f16"])
@pytest.mark.parametrize("name", OTHER_LOW_PRECISION)
def test_other_targets_low_precision(name, dtype, which):
    target, threads, qemu_cpu = _target(which)
    hq, hkv, b, sq, skv, d, dv, opts = CASES[name]
    mod = _compile(_group(OTHER_LOW_PRECISION, DECODE), dtype, SMALL_TILES, threads,
                   target=target, qemu_cpu=qemu_cpu)
    args, kwargs = _inputs(name, dtype, hq, hkv, b, sq, skv, d, dv, opts)
    want = reference.attention(*args[:3], **kwargs)
    call_args = [a.astype(np.float16) if dtype == "f16" and i < 3 else
                 a.astype(np.float32) if i < 3 else a for i, a in enumerate(args)]
    (got,) = mod.call(_fn(name, name in DECODE), *call_args)
    _check(np.asarray(got, np.float64), want, dtype, f"{which} {name}")
