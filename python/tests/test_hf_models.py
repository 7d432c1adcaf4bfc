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

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from pe import hf_models  # noqa: E402
import pe.transformers  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TABLE = os.path.join(ROOT, "docs", "transformers-models.md")


COMMITTED = hf_models.read_table(TABLE)


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
    """Hunyuan (q and k normalized after RoPE): the config is refused, nothing changes."""
    config = hf_models.tiny_config("hunyuan_v1_dense")
    model = transformers.AutoModelForCausalLM.from_config(config, attn_implementation="eager")
    forwards = [m.forward for m in model.modules()]
    with pytest.raises(ValueError, match="q and k normalized by a weighted norm after RoPE"):
        pe.transformers.fuse_rope(model)
    assert model.config._attn_implementation == "eager"
    assert [m.forward for m in model.modules()] == forwards
