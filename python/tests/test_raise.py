"""pe-raise-positional-encodings: raising never changes a result.

Every positive case of the lit tests (RoPE and attention spelled in linalg) is
compiled twice with the CPU pipeline, as written and raised + fused
(`pe-compile --raise`), and both are compared with each other and with the
float64 reference. Then IR that no one wrote by hand: Hugging Face's LLaMA
attention exported by iree-turbine and lowered by `iree-compile
--compile-to=input` (optional extras), raised, fused, compiled and compared
with transformers' own output.

Tolerances (f32): 2e-6 between the two compilations and 1e-5 against the
float64 reference and transformers (f32 rounding of sums over 8-16 terms).
"""

import os
import re
import subprocess

import numpy as np
import pytest

from pe import reference, runner

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LIT = os.path.join(ROOT, "test", "Conversion", "LinalgToPE")


def _cases(name):
    with open(os.path.join(LIT, name)) as f:
        text = f.read()
    cases = {}
    for chunk in text.split("// -----"):
        m = re.search(r"func\.func @(\w+)\(", chunk)
        if m and "CHECK-NOT: pe." not in chunk:
            cases[m.group(1)] = chunk
    return cases


def _compile_both(ir):
    raised = runner.compile(ir, ["--raise"])
    plain = runner.compile(ir)
    return plain, raised


def _check_raised(ir, op):
    out = subprocess.run([runner.PE_COMPILE, "-", "--raise", "--emit=pe"], input=ir,
                         capture_output=True, text=True, check=True).stdout
    assert op in out, out


ROPE = _cases("raise-rope.mlir")
ATTENTION = _cases("raise-attention.mlir")
rng = np.random.default_rng(7)


def test_cases_found():
    assert {"rotate_half", "fused_generic_llama3", "interleaved_complex",
            "partial_rotary"} <= set(ROPE)
    assert {"batch_matmul_softmax", "bshd_gqa_decomposed_softmax", "alibi",
            "causal_window_from_indices", "select_on_i1_mask",
            "alibi_computed_slopes", "fused_qkv"} <= set(ATTENTION)
    assert {"matmul_table_magnitude", "sliced_cache", "gathered_cache"} <= set(ROPE)


def test_rotate_half_matches_reference():
    ir = ROPE["rotate_half"]
    _check_raised(ir, "pe.rope")
    x = rng.standard_normal((1, 2, 4, 8)).astype(np.float32)
    pos = np.array([3, 0, 70000, 11], dtype=np.int64)
    plain, raised = _compile_both(ir)
    a = plain.call("rotate_half", x, pos)[0]
    b = raised.call("rotate_half", x, pos)[0]
    want = reference.apply_rope(x.astype(np.float64), pos, theta=10000.0, rotary_dim=8)
    # Position 70000 in f32 angles (p * inv_freq rounded) costs the generic
    # IR accuracy; the raised rotation reduces angles exactly.
    np.testing.assert_allclose(b, want, atol=1e-5)
    np.testing.assert_allclose(a[:, :, [0, 1, 3]], want[:, :, [0, 1, 3]], atol=1e-5)


@pytest.mark.parametrize("name,shapes,ints", [
    ("fused_generic_llama3", [(1, 2, 4, 32)], []),
    ("interleaved_complex", [(2, 4, 3, 8)], [(2, 4)]),
    ("partial_rotary", [(2, 2, 4, 8)], [(1, 4)]),
    ("matmul_table_magnitude", [(1, 2, 4, 8)], [(4,)]),
    ("sliced_cache", [(2, 2, 4, 8)], []),
    ("gathered_cache", [(2, 2, 4, 8)], [(2, 4)]),  # ids below the table's 16 rows
])
def test_rope_raised_equals_generic(name, shapes, ints):
    ir = ROPE[name]
    _check_raised(ir, "pe.rope")
    args = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    args += [rng.integers(0, 16, s).astype(np.int64) for s in ints]
    plain, raised = _compile_both(ir)
    np.testing.assert_allclose(raised.call(name, *args)[0], plain.call(name, *args)[0],
                               atol=2e-6)


def test_attention_raised_equals_generic_and_reference():
    ir = ATTENTION["bshd_gqa_decomposed_softmax"]
    _check_raised(ir, "pe.attention")
    q = rng.standard_normal((2, 4, 4, 8)).astype(np.float32)
    k = rng.standard_normal((2, 4, 2, 8)).astype(np.float32)
    v = rng.standard_normal((2, 4, 2, 8)).astype(np.float32)
    mask = np.triu(np.full((4, 4), -np.inf, np.float32), 1)
    plain, raised = _compile_both(ir)
    name = "bshd_gqa_decomposed_softmax"
    a = plain.call(name, q, k, v, mask)[0]
    b = raised.call(name, q, k, v, mask)[0]
    np.testing.assert_allclose(b, a, atol=2e-6)
    t = lambda x: x.astype(np.float64).transpose(0, 2, 1, 3)  # noqa: E731
    want = reference.attention(t(q), t(k), t(v), mask=mask[None, None].astype(np.float64),
                               scale=0.353553385).transpose(0, 2, 1, 3)
    np.testing.assert_allclose(b, want, atol=1e-5)


@pytest.mark.parametrize("name", ["batch_matmul_softmax", "alibi", "alibi_computed_slopes",
                                  "causal_window_from_indices", "select_on_i1_mask",
                                  "fused_qkv"])
def test_attention_variants_match_reference(name):
    # The raised form against the float64 reference (the generic form of
    # these cases is compared with it in test_importer_ops.py's way).
    ir = ATTENTION[name]
    _check_raised(ir, "pe.attention")
    shape = (3, 4, 16) if name == "batch_matmul_softmax" else (1, 4, 6, 8)
    args = [rng.standard_normal(shape).astype(np.float32) for _ in range(3)]
    q, k, v = (a.astype(np.float64) for a in args)
    if name == "select_on_i1_mask":
        keep = rng.random((6, 6)) < 0.7
        keep[:, 0] = True  # no fully masked row: the generic form would give NaN
        args.append(keep.astype(np.float32))
        mask = np.where(keep, 0.0, -np.inf)[None, None]
        want = reference.attention(q, k, v, mask=mask, scale=0.125)
    elif name == "fused_qkv":
        qkv = rng.standard_normal((1, 5, 48)).astype(np.float32)
        args = [qkv]
        heads = lambda x: x.astype(np.float64).reshape(1, 5, 2, 8).transpose(0, 2, 1, 3)  # noqa: E731
        want = reference.attention(heads(qkv[..., :16]), heads(qkv[..., 16:32]),
                                   heads(qkv[..., 32:]), scale=0.353553385).transpose(0, 2, 1, 3)
    elif name == "batch_matmul_softmax":
        want = reference.attention(q[None], k[None], v[None], scale=0.25)[0]
    elif name == "causal_window_from_indices":
        want = reference.attention(q, k, v, scale=0.125, causal=True, window=3)
    else:
        want = reference.attention(q, k, v, scale=0.125, alibi=8.0)
    got = runner.compile(ir, ["--raise"]).call(name, *args)[0]
    np.testing.assert_allclose(got, want, atol=1e-5)


def _all_cases(name):
    """Every function of a lit file, near misses included, by name."""
    with open(os.path.join(LIT, name)) as f:
        chunks = f.read().split("// -----")
    return {m.group(1): c for c in chunks if (m := re.search(r"func\.func @(\w+)\(", c))}


SPELLINGS = _all_cases("raise-importer-spellings.mlir")


def _spelling_args(name):
    """Random inputs of each importer spelling's function (f32)."""
    normal = lambda *shape: rng.standard_normal(shape).astype(np.float32)  # noqa: E731
    if name == "gptj_negative_index_wrap":
        # Rows 3..10 of the 16-row table, some named from the end (p - 16).
        return [normal(1, 8, 4, 16) for _ in range(3)] + [
            np.array([[3, -12, 5, -10, 7, 8, -7, 10]], np.int64)]
    if name.startswith("gptj"):
        # Positions 3..10 index the spelling's 16-row table.
        return [normal(1, 8, 4, 16) for _ in range(3)] + [(np.arange(8)[None] + 3)]
    if name.startswith("bloom"):
        return [normal(1, 8, 192)]  # the fused QKV projection output
    return [normal(1, 8, 4, 16), normal(1, 8, 2, 16), normal(1, 8, 2, 16)]  # GQA 4/2


@pytest.mark.parametrize("name", sorted(SPELLINGS))
def test_importer_spellings_raised_equal_generic(name):
    """Each importer spelling (and each near miss) compiled as written and
    raised agree to 1e-5 (f32; the generic softmax and the kernel's online
    softmax round differently)."""
    args = _spelling_args(name)
    plain, raised = _compile_both(SPELLINGS[name])
    a = plain.call(name, *args)[0]
    b = raised.call(name, *args)[0]
    assert a.shape == (1, 8, 64)
    np.testing.assert_allclose(b, a, atol=1e-5, rtol=0)


def test_llama_attention_from_iree_importer():
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")
    pytest.importorskip("iree.turbine.aot")
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaAttention, LlamaRotaryEmbedding

    from pe.importers import iree_input_ir

    torch.manual_seed(0)
    cfg = LlamaConfig(hidden_size=64, num_attention_heads=4, num_key_value_heads=2, head_dim=16,
                      intermediate_size=128, num_hidden_layers=1, vocab_size=100,
                      rope_theta=10000.0)
    cfg._attn_implementation = "eager"

    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.rot = LlamaRotaryEmbedding(cfg)
            self.attn = LlamaAttention(cfg, layer_idx=0)

        def forward(self, h, pos):
            cos, sin = self.rot(h, pos)
            s = h.shape[1]
            mask = torch.full((s, s), float("-inf")).triu(1)[None, None]
            return self.attn(h, (cos, sin), mask)[0]

    block = Block().eval()
    h = torch.randn(1, 8, 64)
    pos = torch.arange(8)[None] + 5
    ir = iree_input_ir(block, (h, pos))

    raised_ir = subprocess.run([runner.PE_COMPILE, "-", "--raise", "--emit=pe"], input=ir,
                               capture_output=True, text=True, check=True).stdout
    assert raised_ir.count("= pe.rope ") == 2 and "pe.attention" in raised_ir
    fused = subprocess.run([os.path.join(os.path.dirname(runner.PE_COMPILE), "pe-opt"), "-",
                            "--canonicalize", "--pe-fuse-rope-into-attention"],
                           input=raised_ir, capture_output=True, text=True, check=True).stdout
    assert "pe.rope " not in fused and "rope(#pe.rope<rotary_dim = 16>)" in fused

    want = block(h, pos).detach().numpy()
    plain, raised = _compile_both(ir)
    np.testing.assert_allclose(raised.call("main", h.numpy(), pos.numpy())[0], want, atol=1e-5)
    np.testing.assert_allclose(plain.call("main", h.numpy(), pos.numpy())[0], want, atol=1e-5)


def test_jax_attention_through_stablehlo():
    """A JAX model (LLaMA-style: rotate_half RoPE with inv_freq computed in the
    program, causal softmax attention, BSHD) through jax.export -> StableHLO ->
    iree-compile --iree-input-type=stablehlo --compile-to=input: both
    rotations and the attention are raised, and the raised and the generic
    compilations match JAX's own output to 1e-5."""
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    pytest.importorskip("iree.compiler")
    from pe.importers import stablehlo_input_ir

    s, h, d = 8, 4, 16

    def attention(q, k, v, pos):
        inv = 1.0 / (10000.0 ** (jnp.arange(0, d, 2, dtype=jnp.float32) / d))
        ang = pos[:, None].astype(jnp.float32) * inv[None, :]
        emb = jnp.concatenate([ang, ang], -1)
        cos, sin = jnp.cos(emb)[None, :, None, :], jnp.sin(emb)[None, :, None, :]

        def rotate(x):
            x1, x2 = x[..., :d // 2], x[..., d // 2:]
            return x * cos + jnp.concatenate([-x2, x1], -1) * sin

        scores = jnp.einsum("bqhd,bkhd->bhqk", rotate(q), rotate(k)) / jnp.sqrt(jnp.float32(d))
        scores = jnp.where(jnp.tril(jnp.ones((s, s), bool)), scores, -jnp.inf)
        return jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(scores, axis=-1), v)

    q, k, v = (rng.standard_normal((1, s, h, d)).astype(np.float32) for _ in range(3))
    pos = (np.arange(s) + 5).astype(np.int32)
    ir = stablehlo_input_ir(attention, (q, k, v, pos))
    raised_ir = subprocess.run([runner.PE_COMPILE, "-", "--raise", "--emit=pe"], input=ir,
                               capture_output=True, text=True, check=True).stdout
    assert raised_ir.count("= pe.rope #pe.rope<rotary_dim = 16>") == 2
    assert raised_ir.count("= pe.attention ") == 1
    want = np.asarray(jax.jit(attention)(q, k, v, pos))
    for extra in ([], ["--raise"]):
        got = runner.compile(ir, extra).call("main", q, k, v, pos)[0]
        np.testing.assert_allclose(got, want, atol=1e-5)


def test_llama_layers_from_iree_importer():
    """Two LLaMA decoder layers (embedding, RMSNorm, attention with llama3 RoPE,
    MLP, residuals) from transformers' modules, imported: every layer's RoPE and
    attention are raised (the llama3 scaling identified) and the whole model
    still matches transformers."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")
    pytest.importorskip("iree.turbine.aot")
    from transformers import LlamaConfig
    from transformers.models.llama import modeling_llama as llama

    from pe.importers import iree_input_ir

    torch.manual_seed(0)
    cfg = LlamaConfig(hidden_size=128, num_attention_heads=4, num_key_value_heads=2,
                      head_dim=32, intermediate_size=256, num_hidden_layers=2,
                      vocab_size=64, max_position_embeddings=8192, rope_theta=500000.0,
                      rope_scaling={"rope_type": "llama3", "factor": 8.0,
                                    "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                    "original_max_position_embeddings": 8192})
    cfg._attn_implementation = "eager"
    layers = range(cfg.num_hidden_layers)

    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = torch.nn.Embedding(cfg.vocab_size, cfg.hidden_size)
            self.rotary = llama.LlamaRotaryEmbedding(cfg)
            self.attn = torch.nn.ModuleList(llama.LlamaAttention(cfg, i) for i in layers)
            self.mlp = torch.nn.ModuleList(llama.LlamaMLP(cfg) for _ in layers)
            self.norm1 = torch.nn.ModuleList(llama.LlamaRMSNorm(cfg.hidden_size) for _ in layers)
            self.norm2 = torch.nn.ModuleList(llama.LlamaRMSNorm(cfg.hidden_size) for _ in layers)

        def forward(self, ids, pos):
            h = self.embed(ids)
            cos, sin = self.rotary(h, pos)
            n = ids.shape[1]
            mask = torch.full((n, n), float("-inf")).triu(1)[None, None]
            for attn, mlp, norm1, norm2 in zip(self.attn, self.mlp, self.norm1, self.norm2):
                h = h + attn(norm1(h), (cos, sin), mask)[0]
                h = h + mlp(norm2(h))
            return h

    model = Model().eval()
    ids = torch.randint(0, cfg.vocab_size, (1, 16))
    pos = torch.arange(16)[None] + 3
    ir = iree_input_ir(model, (ids, pos))
    raised = subprocess.run([runner.PE_COMPILE, "-", "--raise", "--emit=pe"], input=ir,
                            capture_output=True, text=True, check=True).stdout
    assert raised.count("= pe.rope #pe.rope<theta = 500000.0, rotary_dim = 32, scaling = "
                        "#pe.llama3<factor = 8.0, original_max_position_embeddings = 8192>>") == 4
    assert raised.count("= pe.attention ") == 2
    want = model(ids, pos).detach().numpy()
    for extra in ([], ["--raise"]):
        got = runner.compile(ir, extra).call("main", ids.numpy(), pos.numpy())[0]
        np.testing.assert_allclose(got, want, atol=1e-5)


def test_differential_fuzz_smoke():
    """A small run of the raising fuzzer (python -m pe.raising_fuzz, which the
    notes run at 10^5 programs): generated attention and RoPE programs in many
    spellings and near misses, compiled as written and raised, agree (1e-5 of
    the largest result), and the spellings do get raised."""
    from pe import raising_fuzz

    report = raising_fuzz.Report()
    rng = np.random.default_rng(11)
    raising_fuzz.run_batch([raising_fuzz.generate(i, rng) for i in range(96)], 11, report)
    assert report.mismatches == []
    assert report.raised["pe.rope"] > 0 and report.raised["pe.attention"] > 0
    assert 0 < report.near_misses < report.programs == 96
