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
    dispatched = torch.ops.pe.attention(q, k, v, qp, kp, None, spec)
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
                                     torch.zeros(2, 11, dtype=torch.int64), None,
                                     pt._spec(True, None, None, None, None))
        assert out.shape == (2, 8, 7, 64)
