"""Every causal-LM architecture of the installed transformers with
attn_implementation="pe" (optional extras): tiny random models from each
type's default config (pe.hf_models), logits within 1e-5 of eager attention
and the same greedy tokens, or a refusal with a message; never a different
result and never an error from inside transformers.

The committed table (docs/transformers-models.md) is the expected result of
each type: a type whose result changes fails here until the table is
regenerated (`PYTHONPATH=python .venv/bin/python -m pe.hf_models --write
docs/transformers-models.md`).
"""

import copy
import os
import re

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from pe import hf_models  # noqa: E402
import pe.transformers  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TABLE = os.path.join(ROOT, "docs", "transformers-models.md")


def _config_status(text: str) -> str:
    """`read`, `read, not checked`, `refused`, `not checked` or `MISMATCH`."""
    return text.split(":")[0].split(" (")[0].strip()


def _committed() -> dict:
    """model type -> (result, config status, fused result) of the committed table."""
    rows = {}
    for line in open(TABLE):
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        if len(cells) == 6 and cells[0].startswith("`"):
            rows[cells[0].strip("`")] = (cells[2], _config_status(cells[4]),
                                         cells[5].split(":")[0])
    return rows


COMMITTED = _committed()


def test_table_lists_every_causal_lm():
    """The table was generated with the installed transformers (the pinned
    extras): it lists exactly its causal-LM model types."""
    assert sorted(COMMITTED) == hf_models.causal_lm_types()


@pytest.mark.parametrize("model_type", hf_models.causal_lm_types())
def test_architecture(model_type):
    """attn_implementation="pe" equals eager or is refused by pe."""
    row = hf_models.compare(model_type)
    assert row.ok, f"{model_type}: {row.status} {row.detail}"
    if row.status == "refused":
        assert row.detail.split(": ", 1)[1].startswith("pe"), row.detail
    assert row.status == COMMITTED[model_type][0], row.detail


@pytest.mark.parametrize("model_type", hf_models.causal_lm_types())
def test_config_reading(model_type):
    """pe's config reader agrees with the model transformers builds from the
    same config (scale, window, heads, RoPE frequencies of every layer), or
    refuses it with a message."""
    config = hf_models.read_config(model_type)
    assert not config.startswith("MISMATCH"), config
    assert _config_status(config) == COMMITTED[model_type][1], config


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
                 ("qwen3", dict(sliding_window=8, use_sliding_window=True, max_window_layers=1))]


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


# The failures these replaced, each named.
@pytest.mark.parametrize("model_type", ["exaone4", "exaone_moe", "moshi"])
def test_module_window_is_not_a_rule(model_type):
    """Full-attention layers of models whose modules keep a sliding_window
    attribute (for their mask builders) get no window from pe."""
    row = hf_models.compare(model_type)
    assert row.status == "equal", row.detail


@pytest.mark.parametrize("model_type", ["bloom", "codegen", "gpt_neox_japanese", "xglm", "mpt",
                                        "falcon", "gptj", "gpt_neo", "git"])
def test_models_with_their_own_attention_are_refused_when_built(model_type):
    pe.transformers.register()
    config = hf_models.tiny_config(model_type)
    name = hf_models.causal_lm_class(model_type)
    with pytest.raises(NotImplementedError, match=f"pe attention cannot run in {name}"):
        transformers.AutoModelForCausalLM.from_config(copy.deepcopy(config),
                                                      attn_implementation="pe")


def test_mask_kept_where_the_module_does_not_say_causal():
    """BigBird-Pegasus' decoder attention does not set is_causal: the causal
    mask must reach the kernel rather than be skipped."""
    assert hf_models.compare("bigbird_pegasus").status == "equal"


def test_refused_fuse_rope_leaves_the_model_alone():
    """SmolLM3 (layers without RoPE): the config is refused, nothing changes."""
    config = hf_models.tiny_config("smollm3")
    model = transformers.AutoModelForCausalLM.from_config(config, attn_implementation="eager")
    forwards = [m.forward for m in model.modules()]
    with pytest.raises(ValueError, match="layers without RoPE"):
        pe.transformers.fuse_rope(model)
    assert model.config._attn_implementation == "eager"
    assert [m.forward for m in model.modules()] == forwards
