"""pe inside transformers (optional extras): the "pe" attention implementation
and fused RoPE in small random-weight models built from configs (no
download), and the example configs' RoPE against transformers' own.

Tolerances: logits of float32 models within 1e-5 of transformers' eager
attention (measured: below 3e-7); greedy generation gives identical tokens.
Frequencies: transformers computes them in float32, so within 2e-6 relative
(docs/variants.md, "Numerics"); attention factors within 1e-6.
"""

import copy
import glob
import json
import os
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

import pe.torch  # noqa: E402,F401
import pe.transformers  # noqa: E402
from pe import config as pe_config  # noqa: E402
from pe import reference, runner  # noqa: E402
from pe.ir import format_f64  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = sorted(glob.glob(os.path.join(ROOT, "examples", "configs", "*.json")))

BASE = dict(vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
            num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256)
MODELS = {
    "llama3": transformers.LlamaConfig(
        **BASE, rope_theta=500000.0,
        rope_scaling={"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                      "high_freq_factor": 4.0, "original_max_position_embeddings": 32}),
    "mistral-window": transformers.MistralConfig(**BASE, sliding_window=5),
    "qwen2-yarn": transformers.Qwen2Config(
        **BASE, rope_scaling={"rope_type": "yarn", "factor": 4.0,
                              "original_max_position_embeddings": 64}),
}


def _models(name, fused):
    torch.manual_seed(0)
    cfg = MODELS[name]
    make = lambda impl: transformers.AutoModelForCausalLM.from_config(  # noqa: E731
        copy.deepcopy(cfg), attn_implementation=impl).eval()
    pe.transformers.register()
    eager = make("eager")
    other = make("eager" if fused else "pe")
    other.load_state_dict(eager.state_dict())
    if fused:
        pe.transformers.fuse_rope(other)
    return eager, other


@pytest.fixture
def pe_calls(monkeypatch):
    """Counts the calls of the pe kernel (so that a test sees pe attention ran)."""
    calls = []
    original = pe.torch.attention

    def counted(*args, **kwargs):
        calls.append(kwargs.get("rope"))
        return original(*args, **kwargs)
    monkeypatch.setattr(pe.torch, "attention", counted)
    return calls


@pytest.mark.parametrize("fused", [False, True], ids=["pe", "pe-fused-rope"])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_logits_and_generation(name, fused, pe_calls):
    eager, model = _models(name, fused)
    assert model.config._attn_implementation == "pe"
    x = torch.randint(0, 128, (2, 13), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        want, got = eager(x).logits, model(x).logits
    assert (want - got).abs().max().item() < 1e-5
    layers = MODELS[name].num_hidden_layers
    assert len(pe_calls) == layers  # one pe.attention per layer
    assert all((rope is not None) == fused for rope in pe_calls)  # RoPE inside only when fused
    ids = x[:1, :6]
    options = dict(max_new_tokens=12, do_sample=False, pad_token_id=0)
    with torch.no_grad():
        assert torch.equal(eager.generate(ids, **options), model.generate(ids, **options))
    assert len(pe_calls) == layers * 13  # the prefill and 11 decode steps, then the last token


@pytest.mark.parametrize("fused", [False, True], ids=["pe", "pe-fused-rope"])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_padded_batch(name, fused):
    """Left padding: the mask reaches the kernel; the visible positions agree,
    and a padded batch generates what eager attention generates."""
    eager, model = _models(name, fused)
    x = torch.randint(0, 128, (2, 9), generator=torch.Generator().manual_seed(2))
    mask = torch.ones_like(x)
    mask[1, :4] = 0
    with torch.no_grad():
        want = eager(x, attention_mask=mask).logits
        got = model(x, attention_mask=mask).logits
        assert (want - got)[mask.bool()].abs().max().item() < 1e-5
        options = dict(attention_mask=mask, max_new_tokens=6, do_sample=False, pad_token_id=0)
        assert torch.equal(eager.generate(x, **options), model.generate(x, **options))


@pytest.mark.parametrize("name", ["llama3", "qwen2-yarn"])  # sliding caches cannot crop
def test_fused_cache_crop_and_copy(name):
    """The fused path follows a cropped cache (assisted decoding) and a copied
    prompt cache, as eager attention does."""
    eager, model = _models(name, fused=True)
    x = torch.randint(0, 128, (1, 12), generator=torch.Generator().manual_seed(3))
    results = []
    for m in (eager, model):
        cache = transformers.DynamicCache(config=m.config)
        with torch.no_grad():
            m(x[:, :8], past_key_values=cache)
            prompt = copy.deepcopy(cache)
            cache.crop(5)
            cropped = m(x[:, 5:9], past_key_values=cache).logits
            reused = m(x[:, 8:12], past_key_values=prompt).logits
        results.append((cropped, reused))
    for want, got in zip(*results):
        assert (want - got).abs().max().item() < 1e-5


@pytest.mark.parametrize("name", sorted(MODELS))
def test_fused_static_cache(name):
    """A static cache (a sliding one rolls its slots once full: Mistral's
    window 5) with a left-padded batch: the fused path keeps the positions
    of each slot and generates what eager attention generates."""
    eager, model = _models(name, fused=True)
    x = torch.randint(0, 128, (2, 9), generator=torch.Generator().manual_seed(4))
    mask = torch.ones_like(x)
    mask[1, :3] = 0
    options = dict(attention_mask=mask, max_new_tokens=10, min_new_tokens=10, do_sample=False,
                   pad_token_id=0, cache_implementation="static",
                   return_dict_in_generate=True, output_logits=True)
    with torch.no_grad():
        want, got = eager.generate(x, **options), model.generate(x, **options)
    assert torch.equal(want.sequences, got.sequences)
    assert max((a - b).abs().max().item() for a, b in zip(want.logits, got.logits)) < 1e-5


def test_errors():
    eager, model = _models("llama3", fused=False)
    module = model.model.layers[0].self_attn
    q = torch.zeros(1, 4, 3, 16)
    k = torch.zeros(1, 2, 3, 16)
    with pytest.raises(ValueError, match="softcap must be a number > 0, got 0.0"):
        pe.transformers.attention_forward(module, q, k, k, None, softcap=0.0)
    with pytest.raises(NotImplementedError, match="dropout"):
        pe.transformers.attention_forward(module, q, k, k, None, dropout=0.1)
    with pytest.raises(ValueError, match=r"sinks must be \[4\] \(one per query head\)"):
        pe.transformers.attention_forward(module, q, k, k, None, s_aux=torch.zeros(3))
    with pytest.raises(NotImplementedError, match="packed sequences"):
        pe.transformers.attention_forward(module, q, k, k, None,
                                          cu_seq_lens_q=torch.tensor([0, 3]))
    with pytest.raises(ValueError, match="do not use RoPE"):
        pe.transformers.fuse_rope(transformers.GPT2LMHeadModel(transformers.GPT2Config(
            n_embd=32, n_layer=1, n_head=2, vocab_size=64)))


def _transformers_config(source, tmp_path):
    (tmp_path / "config.json").write_text(json.dumps(source))
    return transformers.AutoConfig.from_pretrained(str(tmp_path))


def _rotary_class(cfg):
    from transformers.models.auto.modeling_auto import MODEL_MAPPING
    module = sys.modules[MODEL_MAPPING[type(cfg)].__module__]
    return next(getattr(module, n) for n in dir(module) if n.endswith("RotaryEmbedding"))


def _transformers_rope(cfg, layer_type):
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS
    params = cfg.rope_parameters
    kwargs = {}
    if layer_type in params:
        params, kwargs = params[layer_type], {"layer_type": layer_type}
    init = (_rotary_class(cfg).compute_default_rope_parameters
            if params["rope_type"] == "default" else ROPE_INIT_FUNCTIONS[params["rope_type"]])
    inv_freq, factor = init(cfg, None, **kwargs)
    return inv_freq.double().numpy(), float(factor)


# GPT-J (fixed sinusoids), BLOOM (ALiBi) and the learned ones: tests below.
ROPE_EXAMPLES = [p for p in EXAMPLES if json.load(open(p))["model_type"]
                 not in ("gptj", "bloom", "gpt2", "bert")]


@pytest.mark.parametrize("path", ROPE_EXAMPLES, ids=lambda p: os.path.basename(p)[:-5])
def test_example_frequencies_match_transformers(path, tmp_path):
    """Each kind's inverse frequencies (the compiled pe.rope_frequencies) and
    attention factor equal transformers' own for the same config.json; and
    transformers' standardized v5 form of the config (to_dict) reads the same."""
    source = json.load(open(path))
    cfg = _transformers_config(source, tmp_path)
    model = pe_config.read(source)
    for kind in model.kinds:
        rope = kind.rope_parameters
        half = rope["rotary_dim"] // 2
        inv_hf, factor_hf = _transformers_rope(cfg, kind.layer_type)
        ir = (f"func.func @f() -> tensor<{half}xf64> {{\n"
              f"  %f = pe.rope_frequencies {kind.rope_attr} -> tensor<{half}xf64>\n"
              f"  return %f : tensor<{half}xf64>\n}}\n")
        (inv_pe,) = runner.compile(ir).call("f")
        np.testing.assert_allclose(inv_pe, inv_hf, rtol=2e-6, atol=0)
        assert reference.rope_attention_factor(rope.get("scaling")) == pytest.approx(
            factor_hf, rel=1e-6)
    assert pe_config.read(cfg).kinds == model.kinds


def test_bloom_alibi_matches_transformers():
    """BLOOM (112 heads, not a power of two): transformers' ALiBi tensor is
    slope[h] * key position; the softmax is invariant to the per-row term, so
    it equals pe's -slope (q - k) row by row. The slopes of the example's
    max_bias agree: transformers raises a float32 base to integer powers, a
    few float32 ulps (1e-6 relative); pe's f32 slopes are the float64 ones
    rounded once."""
    from transformers.models.bloom.modeling_bloom import build_alibi_tensor
    model = pe_config.read(os.path.join(ROOT, "examples", "configs", "bloom.json"))
    (kind,) = model.kinds
    heads = model.num_attention_heads
    alibi = build_alibi_tensor(torch.ones(1, 5), heads, torch.float32)  # [H, 1, 5]
    slopes_hf = alibi[:, 0, 1].double().numpy()  # position 1 times the slope
    slopes_pe = reference.alibi_slopes(heads, kind.alibi)
    np.testing.assert_allclose(slopes_pe, slopes_hf, rtol=1e-6, atol=0)
    ir = (f"func.func @s() -> tensor<{heads}xf32> {{\n"
          f"  %s = pe.alibi_slopes max_bias({format_f64(kind.alibi)}) : tensor<{heads}xf32>\n"
          f"  return %s : tensor<{heads}xf32>\n}}\n")
    (slopes,) = runner.compile(ir).call("s")
    np.testing.assert_allclose(slopes, slopes_pe, rtol=2.0 ** -24, atol=0)


def test_gptj_rotary_matches_transformers():
    """GPT-J: transformers' fixed sin/cos table (base 10000 over rotary_dim)
    gives pe's frequencies for the example's interleaved RoPE."""
    from transformers.models.gptj.modeling_gptj import create_sinusoidal_positions
    model = pe_config.read(os.path.join(ROOT, "examples", "configs", "gpt-j-6b.json"))
    rope = model.kinds[0].rope_parameters
    assert rope["style"] == "interleaved"
    table = create_sinusoidal_positions(2, rope["rotary_dim"])  # row 1: sin(f), cos(f)
    inv_hf = torch.atan2(table[1, :rope["rotary_dim"] // 2],
                         table[1, rope["rotary_dim"] // 2:]).double().numpy()
    inv_pe = reference.rope_inv_freq(rope["theta"], rope["rotary_dim"], rope.get("scaling"))
    np.testing.assert_allclose(inv_pe, inv_hf, rtol=2e-6, atol=0)
