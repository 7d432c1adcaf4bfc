"""pe.transformers.fuse_rope on the vision-language families whose language
model rotates by M-RoPE position streams (Qwen2-VL, Qwen2.5-VL, Qwen3-VL,
GLM-4V): small random-weight models built from their configs, the fused
model (un-rotated q and k, the streams into pe.attention) against transformers'
eager attention, without and with a cache (dynamic and static), and a
Qwen2-VL model given an image, whose streams transformers computes from the
image grid itself. Tolerance: float32 logits and hidden states within 2e-5 of
eager (both round the same f32 inputs; eager and pe sum in different
orders)."""

import copy

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

import pe.transformers as pe_transformers  # noqa: E402

TOLERANCE = 2e-5
TEXT = dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2,
            num_attention_heads=4, num_key_value_heads=2, vocab_size=160,
            initializer_range=0.2)  # scores large enough that positions matter


def _text_model(family: str):
    """A small random text model of `family` (eager attention, eval mode)."""
    if family == "qwen2_vl":
        from transformers.models.qwen2_vl import Qwen2VLTextConfig as Config
        from transformers.models.qwen2_vl import Qwen2VLTextModel as Model
        rope = {"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [2, 3, 3]}
    elif family == "qwen2_5_vl":
        from transformers.models.qwen2_5_vl import Qwen2_5_VLTextConfig as Config
        from transformers.models.qwen2_5_vl import Qwen2_5_VLTextModel as Model
        rope = {"rope_type": "default", "rope_theta": 1000000.0, "mrope_section": [4, 2, 2]}
    elif family == "qwen3_vl":
        from transformers.models.qwen3_vl import Qwen3VLTextConfig as Config
        from transformers.models.qwen3_vl import Qwen3VLTextModel as Model
        rope = {"rope_type": "default", "rope_theta": 5000000.0, "mrope_section": [4, 2, 2],
                "mrope_interleaved": True}
    else:
        from transformers.models.glm4v import Glm4vTextConfig as Config
        from transformers.models.glm4v import Glm4vTextModel as Model
        rope = {"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [2, 1, 1],
                "partial_rotary_factor": 0.5}
    config = Config(**TEXT, rope_parameters=rope)
    if family == "qwen3_vl":
        config.head_dim = 16
    config._attn_implementation = "eager"
    torch.manual_seed(0)
    return Model(config).eval()


def _streams(batch: int, length: int) -> torch.Tensor:
    """Position streams [3, B, S] that differ per stream (a text run, then a 2 x 3
    grid, then text again), as transformers' get_rope_index lays them out."""
    t = torch.arange(length)
    grid = (t >= 2) & (t < 8)
    cell = (t - 2).clamp(0, 5)
    temporal = torch.where(grid, torch.full_like(t, 2), torch.where(t < 2, t, t - 3))
    height = torch.where(grid, 2 + cell // 3, temporal)
    width = torch.where(grid, 2 + cell % 3, temporal)
    rows = torch.stack([temporal, height, width])
    return rows[:, None].expand(3, batch, length).contiguous()


def _hidden(model, ids, streams, **kwargs):
    return model(ids, position_ids=streams, **kwargs)


@pytest.mark.parametrize("family", ["qwen2_vl", "qwen2_5_vl", "qwen3_vl", "glm4v"])
def test_fused_mrope_text_model(family):
    """The whole sequence, then the same sequence as a prefill and single-token
    steps through a dynamic cache: equal to eager; rotating by one stream
    instead would differ (the check can fail)."""
    model = _text_model(family)
    fused = pe_transformers.fuse_rope(copy.deepcopy(model))
    B, S = 2, 11
    ids = torch.randint(0, TEXT["vocab_size"], (B, S), generator=torch.Generator().manual_seed(1))
    streams = _streams(B, S)
    with torch.no_grad():
        want = _hidden(model, ids, streams).last_hidden_state
        got = _hidden(fused, ids, streams).last_hidden_state
        assert (got - want).abs().max().item() < TOLERANCE
        one_stream = _hidden(model, ids, streams[:1].expand(3, B, S)).last_hidden_state
        assert (one_stream - want).abs().max().item() > 100 * TOLERANCE
        out = _hidden(fused, ids[:, :7], streams[..., :7], use_cache=True)
        steps = [out.last_hidden_state]
        for i in range(7, S):
            out = _hidden(fused, ids[:, i:i + 1], streams[..., i:i + 1],
                          past_key_values=out.past_key_values, use_cache=True)
            steps.append(out.last_hidden_state)
        assert (torch.cat(steps, dim=1) - want).abs().max().item() < TOLERANCE


def test_fused_mrope_static_cache():
    """A static cache: the key streams are kept by slot beside the keys."""
    from transformers import StaticCache
    model = _text_model("qwen2_vl")
    fused = pe_transformers.fuse_rope(copy.deepcopy(model))
    B, S = 1, 10
    ids = torch.randint(0, TEXT["vocab_size"], (B, S), generator=torch.Generator().manual_seed(2))
    streams = _streams(B, S)
    cache = StaticCache(config=fused.config, max_cache_len=16)
    with torch.no_grad():
        want = _hidden(model, ids, streams).last_hidden_state
        first = _hidden(fused, ids[:, :6], streams[..., :6], past_key_values=cache,
                        use_cache=True).last_hidden_state
        rest = [_hidden(fused, ids[:, i:i + 1], streams[..., i:i + 1], past_key_values=cache,
                        use_cache=True).last_hidden_state for i in range(6, S)]
    assert (torch.cat([first, *rest], dim=1) - want).abs().max().item() < TOLERANCE


def _qwen2_vl_with_image():
    """A small random Qwen2-VL (vision tower included) and the inputs of one
    prompt holding a 4 x 6 patch image (6 image tokens after 2 x 2 merging)."""
    from transformers import Qwen2VLConfig, Qwen2VLForConditionalGeneration
    config = Qwen2VLConfig(
        text_config=dict(**TEXT, rope_parameters={
            "rope_type": "default", "rope_theta": 10000.0, "mrope_section": [2, 3, 3]}),
        vision_config=dict(depth=1, embed_dim=32, num_heads=2, hidden_size=64, mlp_ratio=2,
                           patch_size=14, spatial_merge_size=2, temporal_patch_size=2,
                           in_channels=3),
        image_token_id=150, video_token_id=151, vision_start_token_id=152,
        vision_end_token_id=153)
    config._attn_implementation = "eager"
    torch.manual_seed(0)
    model = Qwen2VLForConditionalGeneration(config).eval()
    ids = torch.tensor([[5, 6, 152] + [150] * 6 + [153, 7, 8, 9]])
    inputs = dict(input_ids=ids, pixel_values=torch.randn(24, 3 * 2 * 14 * 14),
                  image_grid_thw=torch.tensor([[1, 4, 6]]),
                  mm_token_type_ids=(ids == 150).int())
    return model, inputs


def test_fused_mrope_image_prompt_generation():
    """Qwen2-VL with an image: transformers computes the streams from the image
    grid (its vision tower's own rotary embedding is not the text one); the
    logits of the prompt and of every greedy step equal eager."""
    model, inputs = _qwen2_vl_with_image()
    fused = pe_transformers.fuse_rope(copy.deepcopy(model))
    with torch.no_grad():
        want = model(**inputs).logits
        got = fused(**inputs).logits
        assert (got - want).abs().max().item() < TOLERANCE
        runs = [m.generate(**inputs, max_new_tokens=5, do_sample=False, output_logits=True,
                           return_dict_in_generate=True) for m in (model, fused)]
    assert torch.equal(runs[0].sequences, runs[1].sequences)
    for a, b in zip(runs[0].logits, runs[1].logits):
        assert (a - b).abs().max().item() < TOLERANCE


def test_fused_mrope_needs_the_streams():
    """An attention layer called without the model's rotary embedding (so
    without position streams) is an error, not a rotation by other positions."""
    model = pe_transformers.fuse_rope(_text_model("qwen2_vl"))
    layer = model.layers[0].self_attn
    model._pe_streams.clear()
    hidden = torch.zeros(1, 3, TEXT["hidden_size"])
    with pytest.raises(ValueError, match="rotary embedding was not called"):
        layer(hidden, position_embeddings=None, attention_mask=None,
              position_ids=torch.arange(3)[None])
