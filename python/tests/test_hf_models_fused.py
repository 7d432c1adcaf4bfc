"""pe's config reader and pe.transformers.fuse_rope for every causal-LM
architecture of the installed transformers (optional extras): the config
read agrees with the attention calls of the model transformers builds from
the same config, and fused RoPE equals eager attention, or pe refuses with a
message. Expected results: the committed docs/transformers-models.md (see
test_hf_models.py, which runs the "pe" attention column)."""

import os

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from pe import hf_models  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
COMMITTED = hf_models.read_table(os.path.join(ROOT, "docs", "transformers-models.md"))


@pytest.mark.parametrize("model_type", hf_models.causal_lm_types())
def test_config_reading(model_type):
    """pe's config reader agrees with the model transformers builds from the
    same config (scale, window, heads, RoPE frequencies of every layer), or
    refuses it with a message."""
    config = hf_models.read_config(model_type)
    assert not config.startswith("MISMATCH"), config
    assert hf_models.config_status(config) == COMMITTED[model_type][1], config


@pytest.mark.parametrize("model_type", hf_models.causal_lm_types())
def test_fused_rope(model_type):
    """pe.transformers.fuse_rope on the eager model: equal to eager (RoPE
    inside the kernel, every layer), or refused with a message."""
    fused = hf_models.fused_result(model_type)
    assert not fused.startswith(("WRONG", "CRASH")), fused
    assert fused.split(":")[0] == COMMITTED[model_type][2], fused


# Options the default configs leave off: q/k norms, clipping, windows.
FUSED_OPTIONS = [("stablelm", dict(qk_layernorm=True)), ("cohere", dict(use_qk_norm=True)),
                 ("phi", dict(qk_layernorm=True)), ("olmo", dict(clip_qkv=0.05)),
                 ("olmoe", dict(clip_qkv=0.05)), ("mistral", dict(sliding_window=8)),
                 ("qwen3", dict(sliding_window=8, use_sliding_window=True, max_window_layers=1)),
                 # Latent attention: DeepSeek's YaRN (its mscale^2 in the softmax scale, read
                 # from the config) and rotate-half pairs.
                 ("deepseek_v3", dict(rope_scaling=dict(
                     rope_type="yarn", factor=4.0, original_max_position_embeddings=16,
                     mscale=1.0, mscale_all_dim=0.707))),
                 ("deepseek_v3", dict(rope_interleave=False)),
                 # NoPE layers (the tiny default has none: 2 layers, an interval of 4).
                 ("smollm3", dict(no_rope_layers=[0, 1])),
                 ("smollm3", dict(no_rope_layers=[1, 0])),
                 ("glm4_moe_lite", dict(rope_interleave=False))]


@pytest.mark.parametrize("model_type,fields", FUSED_OPTIONS,
                         ids=[f"{t}-{'-'.join(f)}" for t, f in FUSED_OPTIONS])
def test_fused_rope_options(model_type, fields):
    row = hf_models.compare(model_type, fused=True, **fields)
    assert row.status == "equal", row.detail


# Windows the default configs leave off, set: each family's rule for which
# layers a sliding window applies to.
WINDOWED = [("mistral", {}), ("starcoder2", {}), ("phimoe", {}), ("qwen3_moe", {}),
            ("qwen3_moe", dict(use_sliding_window=True)),
            ("qwen2", dict(use_sliding_window=True, max_window_layers=1)),
            ("qwen2_moe", dict(use_sliding_window=True, max_window_layers=1)),
            ("qwen3", dict(use_sliding_window=True, max_window_layers=1)),
            ("olmo3", dict(layer_types=["full_attention", "sliding_attention"])),
            ("ministral", dict(layer_types=["sliding_attention", "full_attention"]))]


@pytest.mark.parametrize("model_type,fields", WINDOWED, ids=[
    f"{t}-{'-'.join(f) or 'window'}" for t, f in WINDOWED])
def test_config_windows(model_type, fields):
    assert hf_models.read_mismatches(model_type, sliding_window=8, **fields) == []


def test_config_gpt_neo_windows():
    """GPT-Neo's local layers (its own attention code, checked through the
    banded masks of its layers) with a window shorter than the tiny model's
    positions; a reader that lost the window is caught."""
    assert hf_models.read_mismatches("gpt_neo", window_size=5) == []
    read = hf_models.read_mismatches("gpt_neo", window_size=5,
                                     attention_types=[[["global", "global"], 1]])
    assert read == []  # both layers global: no band in the model either


# Latent attention as pe reads it from the config: the rotated block after
# qk_nope_head_dim plain channels, values of v_head_dim, and DeepSeek's YaRN
# softmax scale (get_mscale(factor, mscale_all_dim)^2 / sqrt(qk head dim)),
# each against the model transformers builds (read_mismatches checks the value
# head dim, the block's offset, the scale and the frequencies of every layer).
LATENT_CONFIGS = [("deepseek_v3", dict(rope_scaling=dict(
                      rope_type="yarn", factor=40.0, original_max_position_embeddings=4,
                      mscale=1.0, mscale_all_dim=1.0))),
                  ("deepseek_v2", dict(v_head_dim=24)),
                  ("minicpm3", dict(qk_nope_head_dim=16, v_head_dim=4))]


# NoPE layers as pe reads them: the probe sees which layers rotate (a call of
# the modeling file's RoPE function before the layer's attention call).
LATENT_CONFIGS += [("smollm3", dict(no_rope_layers=[0, 1])),
                   ("smollm3", dict(no_rope_layer_interval=1)),
                   ("exaone4", dict(layer_types=["full_attention", "sliding_attention"]))]


@pytest.mark.parametrize("model_type,fields", LATENT_CONFIGS,
                         ids=[t + "-" + "-".join(f) for t, f in LATENT_CONFIGS])
def test_config_latent_attention(model_type, fields):
    assert hf_models.read_mismatches(model_type, **fields) == []


def test_config_latent_attention_scale_is_read():
    """A reader that ignored mscale_all_dim would give 1/sqrt(16) here."""
    from pe import config as pe_config
    read = pe_config.read(hf_models.tiny_config("deepseek_v3", rope_scaling=dict(
        rope_type="yarn", factor=40.0, original_max_position_embeddings=4,
        mscale=1.0, mscale_all_dim=1.0)))
    m = 0.1 * __import__("math").log(40.0) + 1.0
    assert read.kind(0).scale == pytest.approx(m * m / 4.0, rel=1e-12)
    assert (read.head_dim, read.value_head_dim) == (16, 8)
    assert read.kind(0).rope["rotary_offset"] == 8
    assert "rotary_offset = 8" in read.kind(0).rope_attr



@pytest.mark.parametrize("model_type", ["deepseek_v3", "minicpm3"])
def test_latent_attention_shares_the_rotated_key_block(model_type, monkeypatch):
    """Fused latent attention passes k_pe once per token (pe.attention's shared_key)
    instead of calling the module's expand_kv, which copies it into every key head: with
    expand_kv refused on the fused model, its logits still equal eager's, and every pe
    attention call had a shared block [B, 1, S, qk_rope_head_dim]."""
    import copy

    import torch
    import transformers

    from pe import torch as pe_torch
    from pe import transformers as pe_transformers
    config = hf_models.tiny_config(model_type)
    torch.manual_seed(0)
    eager = transformers.AutoModelForCausalLM.from_config(
        copy.deepcopy(config), attn_implementation="eager").eval()
    ids = torch.randint(0, hf_models.VOCAB, (2, 9), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        want = eager(ids).logits
    fused = copy.deepcopy(eager)
    pe_transformers.fuse_rope(fused)

    def refused(*args, **kwargs):
        raise AssertionError("expand_kv copies the shared key block into every head")
    for module in fused.modules():
        if hasattr(module, "expand_kv"):
            module.expand_kv = refused
    shared = []
    original = pe_torch.attention

    def recording(*args, **kwargs):
        shared.append(kwargs.get("shared_key"))
        return original(*args, **kwargs)
    monkeypatch.setattr(pe_torch, "attention", recording)
    with torch.no_grad():
        got = fused(ids).logits
    torch.testing.assert_close(got, want, rtol=0, atol=hf_models.TOLERANCE)
    rope_dim = config.qk_rope_head_dim
    assert shared and all(s is not None and s.shape[1] == 1 and s.shape[3] == rope_dim
                          for s in shared), [None if s is None else s.shape for s in shared]
