"""pe.torch: torch.ops.pe.attention against the float64 reference (optional extras).

Tolerances: float32 within 2e-5 of float64 (unit-variance inputs); bfloat16
and float16 within 2^-7 of the output scale (inputs are rounded first, the
kernel computes in f32 and rounds the result once).
"""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import pe.torch as pt  # noqa: E402
from pe import reference  # noqa: E402

ROPE = {"theta": 10000.0, "rotary_dim": 32, "style": "interleaved",
        "scaling": {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64}}


def _qkv(B=2, Hq=8, Hkv=2, Sq=7, Skv=11, D=64, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    make = lambda h, s: torch.randn(B, h, s, D, generator=g).to(dtype)  # noqa: E731
    return make(Hq, Sq), make(Hkv, Skv), make(Hkv, Skv)


def _f64(t):
    return t.to(torch.float64).numpy()


@pytest.mark.parametrize("options", [
    dict(causal=True),
    dict(causal=True, window=3),
    dict(window=4),
    dict(causal=True, rope=ROPE),
    dict(causal=True, rope="#pe.rope<theta = 500000.0, rotary_dim = 64>", scale=0.3),
    dict(causal=True, alibi=8.0),
])
def test_against_reference(options):
    q, k, v = _qkv()
    qp = torch.tensor([[100, 101, 102, 103, 104, 105, 106], [3, 9, 11, 20, 21, 22, 40]])
    kp = torch.arange(96, 107).expand(2, 11)
    out = pt.attention(q, k, v, qp, kp, **options)
    rope = options.get("rope")
    ref_options = dict(options, rope=rope if isinstance(rope, dict) else None)
    if isinstance(rope, str):
        ref_options["rope"] = {"theta": 500000.0, "rotary_dim": 64}
    want = reference.attention(_f64(q), _f64(k), _f64(v), q_positions=qp.numpy(),
                               k_positions=kp.numpy(), **ref_options)
    assert out.shape == (2, 8, 7, 64) and out.dtype == torch.float32
    assert np.abs(out.numpy() - want).max() < 2e-5


def test_mask_and_default_positions():
    q, k, v = _qkv()
    mask = torch.zeros(2, 1, 7, 11)
    mask[0, 0, :, 2] = float("-inf")
    mask[1, 0, 3, :5] = -1.5
    out = pt.attention(q, k, v, mask=mask, causal=True)
    want = reference.attention(_f64(q), _f64(k), _f64(v), mask=mask.numpy(), causal=True)
    assert np.abs(out.numpy() - want).max() < 2e-5


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_half_precision(dtype):
    q, k, v = _qkv(dtype=dtype)
    out = pt.attention(q, k, v, causal=True, rope=ROPE)
    assert out.dtype == dtype
    want = reference.attention(_f64(q), _f64(k), _f64(v), causal=True, rope=ROPE)
    assert np.abs(_f64(out) - want).max() < 2.0 ** -7 * np.abs(want).max() + 1e-3


def test_views_and_kernel_reuse():
    """Non-contiguous inputs are accepted; one kernel serves every length and batch."""
    q, k, v = _qkv(Sq=5, Skv=5)
    before = pt.compiled_kernels()
    a = pt.attention(q.transpose(2, 3).contiguous().transpose(2, 3), k, v, causal=True)
    b = pt.attention(q, k, v, causal=True)
    torch.testing.assert_close(a, b, rtol=0, atol=0)
    q2, k2, v2 = _qkv(B=3, Sq=1, Skv=17)
    pt.attention(q2, k2, v2, causal=True)
    assert pt.compiled_kernels() - before <= 1


def test_small_calls_run_on_one_thread(monkeypatch):
    """A call below SERIAL_WORK multiply-adds runs on one thread (waking the
    pool would cost more than it saves); larger ones on torch's threads."""
    monkeypatch.setattr(torch, "get_num_threads", lambda: 4)
    meta = lambda *shape: torch.empty(*shape, device="meta")  # noqa: E731
    decode = (meta(1, 32, 1, 128), meta(1, 8, 500, 128), meta(1, 8, 500, 128))
    assert 32 * 500 * 256 < pt.SERIAL_WORK and pt._threads(*decode) == 1
    long = (meta(1, 32, 1, 128), meta(1, 8, 4096, 128), meta(1, 8, 4096, 128))
    assert pt._threads(*long) == 4
    prefill = (meta(1, 32, 512, 128), meta(1, 8, 512, 128), meta(1, 8, 512, 128))
    assert pt._threads(*prefill) == 4


def test_direct_and_dispatched_calls_agree():
    """Plain tensors skip the dispatcher; both routes give the same bits, and
    a tensor that asks for a gradient goes through the operator, which says
    it has none."""
    q, k, v = _qkv(Sq=1, Skv=40)
    direct = pt.attention(q, k, v, causal=True)
    qp, kp = torch.full((2, 1), 39), torch.arange(40).expand(2, 40).contiguous()
    spec = pt._spec(True, None, None, None, None)
    dispatched = torch.ops.pe.attention(q, k, v, qp, kp, None, None, spec)
    torch.testing.assert_close(direct, dispatched, rtol=0, atol=0)
    out = pt.attention(q.clone().requires_grad_(), k, v, causal=True)
    assert out.grad_fn is not None
    with pytest.raises(RuntimeError, match="no autograd formula"):
        out.sum().backward()


def test_errors():
    q, k, v = _qkv()
    with pytest.raises(ValueError, match="incompatible shapes"):
        pt.attention(q, k[:, :, :3], v, causal=True)
    with pytest.raises(ValueError, match="not a multiple of 3 key/value heads"):
        pt.attention(q, *_qkv(Hkv=3)[1:], causal=True)
    with pytest.raises(TypeError, match="key is torch.float16, expected torch.float32"):
        pt.attention(q, k.half(), v, causal=True)
    with pytest.raises(ValueError, match=r"q_positions must be \[7\] or \[2, 7\]"):
        pt.attention(q, k, v, torch.arange(3), causal=True)
    with pytest.raises(ValueError, match="mask must be"):
        pt.attention(q, k, v, mask=torch.zeros(2, 8, 7, 11))
    with pytest.raises(ValueError, match="window must be an integer >= 1"):
        pt.attention(q, k, v, window=0)
    with pytest.raises(TypeError, match="not float32, float16 or bfloat16"):
        pt.attention(q.double(), k.double(), v.double())


def test_torch_compile_traces_through():
    """The fake implementation lets torch.compile capture the op in one graph."""
    q, k, v = _qkv()
    rope = "#pe.rope<rotary_dim = 64>"

    def layer(q, k, v):
        return pt.attention(q * 2, k, v, causal=True, rope=rope).sum(dim=1)

    compiled = torch.compile(layer, fullgraph=True, backend="aot_eager")
    torch.testing.assert_close(compiled(q, k, v), layer(q, k, v), rtol=0, atol=0)
    from torch._subclasses.fake_tensor import FakeTensorMode
    with FakeTensorMode() as mode:
        fq, fk, fv = (mode.from_tensor(t) for t in (q, k, v))
        out = torch.ops.pe.attention(fq, fk, fv, torch.zeros(2, 7, dtype=torch.int64),
                                     torch.zeros(2, 11, dtype=torch.int64), None, None,
                                     pt._spec(True, None, None, None, None))
        assert out.shape == (2, 8, 7, 64)


MROPE = {"theta": 1000000.0, "rotary_dim": 64, "sections": [8, 12, 12]}


def _rope_streams(B=2, S=11, seed=3):
    return torch.randint(0, 50, (B, 3, S), generator=torch.Generator().manual_seed(seed))


def test_multi_stream_rope_direct_and_dispatched():
    """M-RoPE: q and k rotated by their own position streams inside the kernel,
    the positions placing the causal mask; the direct call and the operator
    (a tensor asking for a gradient) agree with the float64 reference."""
    q, k, v = _qkv()
    qr, kr = _rope_streams(S=7, seed=4), _rope_streams()
    out = pt.attention(q, k, v, causal=True, rope=MROPE, q_rope_positions=qr,
                       k_rope_positions=kr)
    want = reference.attention(_f64(q), _f64(k), _f64(v), causal=True, rope=MROPE,
                               q_rope_positions=qr.numpy(), k_rope_positions=kr.numpy())
    assert np.abs(out.numpy() - want).max() < 2e-5
    one = reference.attention(_f64(q), _f64(k), _f64(v), causal=True, rope=MROPE,
                              q_rope_positions=qr[:, :1].expand(2, 3, 7).numpy(),
                              k_rope_positions=kr[:, :1].expand(2, 3, 11).numpy())
    assert np.abs(one - want).max() > 1e-2  # the streams matter
    dispatched = pt.attention(q.clone().requires_grad_(), k, v, causal=True, rope=MROPE,
                              q_rope_positions=qr, k_rope_positions=kr)
    torch.testing.assert_close(dispatched.detach(), out, rtol=0, atol=0)


def test_multi_stream_rope_errors():
    q, k, v = _qkv()
    qr, kr = _rope_streams(S=7), _rope_streams()
    with pytest.raises(ValueError, match="exactly when the rope has sections"):
        pt.attention(q, k, v, rope=MROPE)
    with pytest.raises(ValueError, match="exactly when the rope has sections"):
        pt.attention(q, k, v, rope=ROPE, q_rope_positions=qr, k_rope_positions=kr)
    with pytest.raises(ValueError, match=r"k_rope_positions must be \[2, 3, 11\]"):
        pt.attention(q, k, v, rope=MROPE, q_rope_positions=qr, k_rope_positions=kr[:, :2])


# ---------------------------------------------------------------------------
# torch.ops.pe.append_kv and torch.ops.pe.paged_attention
# ---------------------------------------------------------------------------

def _paged_batch(layout="nhd", dtype=torch.float32, seed=1):
    """A paged cache of 24 pages of 4 tokens (2 KV heads of 32), 3 sequences."""
    g = torch.Generator().manual_seed(seed)
    page = (4, 2) if layout == "nhd" else (2, 4)
    kc = torch.randn(24, *page, 32, generator=g).to(dtype)
    vc = torch.randn(24, *page, 32, generator=g).to(dtype)
    table = torch.randperm(24, generator=g)[:18].reshape(3, 6).to(torch.int32)
    lens = torch.tensor([9, 1, 17], dtype=torch.int32)
    cu = torch.tensor([0, 1, 2, 6], dtype=torch.int32)  # decode, decode, a chunk of 4
    q = torch.randn(6, 8, 32, generator=g).to(dtype)
    return q, kc, vc, table, lens, cu


@pytest.mark.parametrize("layout", ["nhd", "hnd"])
def test_append_kv_writes_the_cache_in_place(layout):
    q, kc, vc, table, lens, cu = _paged_batch(layout)
    g = torch.Generator().manual_seed(3)
    k, v = torch.randn(3, 2, 32, generator=g), torch.randn(3, 2, 32, generator=g)
    slots = torch.tensor([5, -1, 70], dtype=torch.int64)
    positions = torch.tensor([5, 6, 1000], dtype=torch.int64)
    want_k, want_v = reference.append_kv(_f64(k), _f64(v), _f64(kc), _f64(vc), slots.numpy(),
                                         layout, positions.numpy(), ROPE)
    kc_before = kc.data_ptr()
    pt.append_kv(k, v, kc, vc, slots, positions, layout=layout, rope=ROPE)
    assert kc.data_ptr() == kc_before
    np.testing.assert_allclose(_f64(kc), want_k, atol=2e-6, rtol=0)
    np.testing.assert_array_equal(_f64(vc), want_v)
    with pytest.raises(RuntimeError, match="slot 96 .entry 0. is out of range for a cache "
                                           "of 96 slots"):
        pt.append_kv(k[:1], v[:1], kc, vc, torch.tensor([96]), positions[:1], layout=layout,
                     rope=ROPE)
    with pytest.raises(ValueError, match="positions are given exactly when rope is"):
        pt.append_kv(k, v, kc, vc, slots, layout=layout, rope=ROPE)


def test_append_kv_dense_cache():
    g = torch.Generator().manual_seed(5)
    k, v = torch.randn(2, 2, 3, 32, generator=g), torch.randn(2, 2, 3, 32, generator=g)
    kc, vc = torch.zeros(2, 2, 16, 32), torch.zeros(2, 2, 16, 32)
    slots = torch.tensor([4, 5, 6])
    pt.append_kv(k, v, kc, vc, slots, slots, layout="dense", rope=ROPE)
    want_k, want_v = reference.append_kv(_f64(k), _f64(v), np.zeros((2, 2, 16, 32)),
                                         np.zeros((2, 2, 16, 32)), slots.numpy(), "dense",
                                         slots.numpy(), ROPE)
    np.testing.assert_allclose(_f64(kc), want_k, atol=2e-6, rtol=0)
    np.testing.assert_array_equal(_f64(vc), want_v)


@pytest.mark.parametrize("layout", ["nhd", "dense"])
def test_append_kv_multi_stream_rope(layout):
    """M-RoPE keys: positions [A, T] (paged) or [A, S] shared by a dense batch."""
    rope = dict(theta=1000000.0, rotary_dim=32, sections=[4, 6, 6])
    g = torch.Generator().manual_seed(7)
    if layout == "dense":
        k, v = torch.randn(2, 2, 3, 32, generator=g), torch.randn(2, 2, 3, 32, generator=g)
        kc, vc = torch.zeros(2, 2, 16, 32), torch.zeros(2, 2, 16, 32)
        slots = torch.tensor([4, 5, 6])
    else:
        k, v = torch.randn(3, 2, 32, generator=g), torch.randn(3, 2, 32, generator=g)
        kc, vc = torch.zeros(24, 4, 2, 32), torch.zeros(24, 4, 2, 32)
        slots = torch.tensor([5, -1, 70])
    positions = torch.tensor([[7, 8, 9], [3, 30, 300], [1, 2, 2000]])
    want_k, want_v = reference.append_kv(_f64(k), _f64(v), _f64(kc), _f64(vc), slots.numpy(),
                                         layout, positions.numpy(), rope)
    pt.append_kv(k, v, kc, vc, slots, positions, layout=layout, rope=rope)
    np.testing.assert_allclose(_f64(kc), want_k, atol=2e-6, rtol=0)
    np.testing.assert_array_equal(_f64(vc), want_v)
    with pytest.raises(ValueError, match="a multi-stream rope takes positions"):
        pt.append_kv(k, v, kc, vc, slots, positions[0], layout=layout, rope=rope)


@pytest.mark.parametrize("layout", ["nhd", "hnd"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_paged_attention_against_reference(layout, dtype):
    q, kc, vc, table, lens, cu = _paged_batch(layout, dtype)
    out = pt.paged_attention(q, kc, vc, table, lens, cu, layout=layout, causal=True,
                             rope=ROPE, window=12)
    want = reference.paged_attention(_f64(q), _f64(kc), _f64(vc), table.numpy(), lens.numpy(),
                                     cu.numpy(), layout, causal=True, rope=ROPE, window=12)
    tolerance = 2e-5 if dtype == torch.float32 else 2 ** -7
    assert out.dtype == dtype and out.shape == (6, 8, 32)
    assert np.abs(_f64(out) - want).max() <= tolerance * max(1.0, np.abs(want).max())
    bad = table.clone()
    bad[2, 3] = 99
    with pytest.raises(RuntimeError, match="page 99 .sequence 2. is out of range"):
        pt.paged_attention(q, kc, vc, bad, lens, cu, layout=layout, causal=True)


@pytest.mark.parametrize("layout", ["nhd", "hnd"])
def test_paged_attention_sinks(layout):
    """gpt-oss's sinks (bf16, as its checkpoints hold them) through the direct call and the
    dispatched operator, against the reference; a wrong shape is an error."""
    q, kc, vc, table, lens, cu = _paged_batch(layout, torch.bfloat16)
    sinks = torch.linspace(-2.0, 4.0, 8).to(torch.bfloat16)
    out = pt.paged_attention(q, kc, vc, table, lens, cu, layout=layout, causal=True,
                             rope=ROPE, window=12, sinks=sinks)
    want = reference.paged_attention(_f64(q), _f64(kc), _f64(vc), table.numpy(), lens.numpy(),
                                     cu.numpy(), layout, causal=True, rope=ROPE, window=12,
                                     sinks=_f64(sinks))
    assert np.abs(_f64(out) - want).max() <= 2 ** -7 * max(1.0, np.abs(want).max())
    without = pt.paged_attention(q, kc, vc, table, lens, cu, layout=layout, causal=True,
                                 rope=ROPE, window=12)
    assert not torch.equal(out, without)
    spec = f"layout={layout} " + pt._spec(True, 12, None, ROPE, None, None, None)
    dispatched = torch.ops.pe.paged_attention(q, kc, vc, table, lens, cu, sinks, spec)
    torch.testing.assert_close(out, dispatched, rtol=0, atol=0)
    with pytest.raises(ValueError, match=r"sinks must be \[8\] floats"):
        pt.paged_attention(q, kc, vc, table, lens, cu, layout=layout, sinks=torch.zeros(3))


@pytest.mark.parametrize("heads", [8, 1])
def test_paged_attention_soft_mask(heads):
    """A soft mask [T, Hq|1, K] (K above every sequence's keys; the columns past a
    sequence's keys are NaN and never read) through the direct call and the operator,
    against the reference; a mask with too few rows is an error."""
    q, kc, vc, table, lens, cu = _paged_batch("nhd")
    g = torch.Generator().manual_seed(5)
    mask = torch.randn(q.shape[0], heads, 20, generator=g)
    mask[:, :, 18:] = float("nan")
    mask[0, :, 3] = float("-inf")
    out = pt.paged_attention(q, kc, vc, table, lens, cu, causal=True, rope=ROPE, mask=mask)
    want = reference.paged_attention(_f64(q), _f64(kc), _f64(vc), table.numpy(), lens.numpy(),
                                     cu.numpy(), "nhd", causal=True, rope=ROPE,
                                     mask=mask.numpy())
    assert np.abs(_f64(out) - want).max() < 2e-5
    unmasked = pt.paged_attention(q, kc, vc, table, lens, cu, causal=True, rope=ROPE)
    assert (out - unmasked).abs().max() > 1e-2
    spec = "layout=nhd " + pt._spec(True, None, None, ROPE, None, None, None)
    dispatched = torch.ops.pe.paged_attention(q, kc, vc, table, lens, cu, None, spec, mask)
    torch.testing.assert_close(out, dispatched, rtol=0, atol=0)
    with pytest.raises(ValueError, match=r"mask must be \[6, 8 or 1, K\]"):
        pt.paged_attention(q, kc, vc, table, lens, cu, mask=mask[1:])


@pytest.mark.parametrize("layout", ["nhd", "hnd"])
def test_paged_attention_multi_stream_rope(layout):
    """Qwen2-VL's M-RoPE on a paged cache: each query row rotated by its [A, T] column of
    streams, through the direct call and the operator, against the reference; rotating
    the rows by one stream alone is far off; wrong or missing positions are errors."""
    q, kc, vc, table, lens, cu = _paged_batch(layout)
    rope = dict(theta=1000000.0, rotary_dim=32, sections=[4, 6, 6])
    g = torch.Generator().manual_seed(11)
    rows = torch.randint(0, 500, (3, q.shape[0]), generator=g, dtype=torch.int64)
    out = pt.paged_attention(q, kc, vc, table, lens, cu, layout=layout, causal=True,
                             rope=rope, rope_positions=rows)
    want = reference.paged_attention(_f64(q), _f64(kc), _f64(vc), table.numpy(), lens.numpy(),
                                     cu.numpy(), layout, causal=True, rope=rope,
                                     rope_positions=rows.numpy())
    scale = max(1.0, np.abs(want).max())
    assert np.abs(_f64(out) - want).max() <= 2e-5 * scale
    one_stream = rows[:1].expand(3, -1).contiguous()
    wrong = pt.paged_attention(q, kc, vc, table, lens, cu, layout=layout, causal=True,
                               rope=rope, rope_positions=one_stream)
    assert np.abs(_f64(wrong) - want).max() > 1e-2 * scale
    spec = f"layout={layout} " + pt._spec(True, None, None, rope, None, None, None)
    dispatched = torch.ops.pe.paged_attention(q, kc, vc, table, lens, cu, None, spec, None,
                                              rows)
    torch.testing.assert_close(out, dispatched, rtol=0, atol=0)
    with pytest.raises(ValueError, match=r"rope_positions must be \[3, 6\]"):
        pt.paged_attention(q, kc, vc, table, lens, cu, layout=layout, rope=rope,
                           rope_positions=rows[:2])
    with pytest.raises(ValueError, match="given exactly with a multi-stream rope"):
        pt.paged_attention(q, kc, vc, table, lens, cu, layout=layout, rope=rope)
    with pytest.raises(ValueError, match="given exactly with a multi-stream rope"):
        pt.paged_attention(q, kc, vc, table, lens, cu, layout=layout, rope=ROPE,
                           rope_positions=rows)


def test_paged_attention_chunk_and_temperature():
    """Llama 4's NoPE layers on a paged cache: chunked attention and the query temperature
    at each sequence's query positions, against the reference."""
    q, kc, vc, table, lens, cu = _paged_batch("hnd", torch.float32)
    out = pt.paged_attention(q, kc, vc, table, lens, cu, layout="hnd", causal=True, chunk=4,
                             temperature=(3, 0.5))
    want = reference.paged_attention(_f64(q), _f64(kc), _f64(vc), table.numpy(), lens.numpy(),
                                     cu.numpy(), "hnd", causal=True, chunk=4,
                                     temperature=(3, 0.5))
    assert np.abs(_f64(out) - want).max() <= 2e-5 * max(1.0, np.abs(want).max())


def test_kv_cache_ops_trace_under_torch_compile():
    """The fake implementations let torch.compile capture a decode step (append in place,
    then paged attention) in one graph."""
    q, kc, vc, table, lens, cu = _paged_batch()
    g = torch.Generator().manual_seed(7)
    k, v = torch.randn(6, 2, 32, generator=g), torch.randn(6, 2, 32, generator=g)
    slots = torch.tensor([table[0, 2] * 4, table[1, 0] * 4 + 0, table[2, 3] * 4 + 1,
                          table[2, 3] * 4 + 2, table[2, 3] * 4 + 3, table[2, 4] * 4],
                         dtype=torch.int64)
    positions = torch.tensor([8, 0, 13, 14, 15, 16])

    def step(q, k, v, kc, vc):
        pt.append_kv(k, v, kc, vc, slots, positions, rope=ROPE)
        return pt.paged_attention(q, kc, vc, table, lens, cu, causal=True, rope=ROPE) * 2

    eager_kc, eager_vc = kc.clone(), vc.clone()
    want = step(q, k, v, eager_kc, eager_vc)
    compiled = torch.compile(step, fullgraph=True, backend="aot_eager")
    got = compiled(q, k, v, kc, vc)
    torch.testing.assert_close(got, want, rtol=0, atol=0)
    torch.testing.assert_close(kc, eager_kc, rtol=0, atol=0)


@pytest.mark.parametrize("dtype, tolerance", [(torch.float32, 1e-5), (torch.bfloat16, 1.6e-2)])
def test_attention_sinks(dtype, tolerance):
    """`sinks` (gpt-oss's per-head logits, any float dtype) against the reference, through
    the direct call and the dispatched operator, and against gpt-oss's own eager attention
    where transformers is installed."""
    q, k, v = _qkv(dtype=dtype)
    sinks = torch.linspace(-2.0, 3.0, 8).to(dtype)
    out = pt.attention(q, k, v, causal=True, window=5, sinks=sinks)
    want = reference.attention(_f64(q), _f64(k), _f64(v), causal=True, window=5,
                               sinks=_f64(sinks))
    err = np.abs(_f64(out) - want).max() / max(1.0, np.abs(want).max())
    assert err <= tolerance
    qp, kp = torch.arange(4, 11).expand(2, 7).contiguous(), torch.arange(11).expand(2, 11)
    spec = pt._spec(True, 5, None, None, None)
    dispatched = torch.ops.pe.attention(q, k, v, qp, kp.contiguous(), None,
                                        sinks.to(torch.float32), spec)
    torch.testing.assert_close(out, dispatched, rtol=0, atol=0)
    with pytest.raises(ValueError, match=r"sinks must be \[8\]"):
        pt.attention(q, k, v, sinks=torch.zeros(3))
    gpt_oss = pytest.importorskip("transformers.models.gpt_oss.modeling_gpt_oss")
    if dtype != torch.float32:
        return
    module = torch.nn.Module()
    module.sinks, module.num_key_value_groups, module.training = sinks, 4, False
    mask = torch.full((7, 11), float("-inf")).triu(5)[None, None].expand(2, 1, 7, 11)
    eager, _ = gpt_oss.eager_attention_forward(module, q, k, v, mask, scaling=0.125)
    ours = pt.attention(q, k, v, causal=True, scale=0.125, sinks=sinks)
    torch.testing.assert_close(ours.transpose(1, 2), eager, rtol=0, atol=1e-5)


@pytest.mark.parametrize("dtype, tolerance", [(torch.float32, 1e-5), (torch.bfloat16, 1.6e-2)])
def test_attention_shared_key(dtype, tolerance):
    """`shared_key` (latent attention's k_pe, [B, 1, Skv, 16] after each key head's 48
    channels) against the reference, whose keys are the concatenation; the direct call,
    the dispatched operator and its fake implementation under torch.compile agree."""
    g = torch.Generator().manual_seed(4)
    q = torch.randn(2, 8, 7, 64, generator=g).to(dtype)
    k = torch.randn(2, 2, 11, 48, generator=g).to(dtype)
    v = torch.randn(2, 2, 11, 32, generator=g).to(dtype)
    ks = torch.randn(2, 1, 11, 16, generator=g).to(dtype)
    rope = {"theta": 10000.0, "rotary_dim": 16, "rotary_offset": 48, "style": "interleaved"}
    out = pt.attention(q, k, v, causal=True, rope=rope, shared_key=ks)
    want = reference.attention(_f64(q), _f64(k), _f64(v), causal=True, rope=rope,
                               shared_key=_f64(ks))
    err = np.abs(_f64(out) - want).max() / max(1.0, np.abs(want).max())
    assert err <= tolerance
    qp, kp = torch.arange(4, 11).expand(2, 7).contiguous(), torch.arange(11).expand(2, 11)
    spec = pt._spec(True, None, None, rope, None)
    dispatched = torch.ops.pe.attention(q, k, v, qp, kp.contiguous(), None, None, spec,
                                        None, None, ks)
    torch.testing.assert_close(out, dispatched, rtol=0, atol=0)
    compiled = torch.compile(lambda *t: pt.attention(*t[:3], causal=True, rope=rope,
                                                     shared_key=t[3]),
                             fullgraph=True, backend="aot_eager")
    torch.testing.assert_close(compiled(q, k, v, ks), out, rtol=0, atol=0)
    with pytest.raises(ValueError, match=r"shared_key must be \[2, 1, 11, Ds\]"):
        pt.attention(q, k, v, shared_key=ks[:, :, :10])
    with pytest.raises(ValueError, match="incompatible shapes"):
        pt.attention(q, k, v, shared_key=ks[..., :8])
