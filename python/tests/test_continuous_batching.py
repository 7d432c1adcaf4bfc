"""pe's paged attention inside transformers' continuous batching (optional extras).

`pe.transformers.register()` adds `attn_implementation="paged|pe"`: each layer
writes its new keys and values into transformers' own paged cache with
`pe.append_kv` and attends over the pages in place with `pe.paged_attention`.
`model.generate_batch` with it must produce what transformers' own paged SDPA
path produces for the same requests: the same greedy tokens and log
probabilities within float32 rounding (1e-5: both compute attention in f32,
in a different order), with prompts long enough to be prefilled in chunks and
pages of 4 tokens, so that decode and chunked prefill run over many pages.
"""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
pytest.importorskip("psutil")  # transformers sizes its CPU cache with it

from transformers import GenerationConfig, LlamaConfig, LlamaForCausalLM  # noqa: E402
from transformers.generation.configuration_utils import ContinuousBatchingConfig  # noqa: E402

import pe.transformers  # noqa: E402


def _generate(model, implementation, prompts, new_tokens):
    model.set_attn_implementation(implementation)
    generation = GenerationConfig(max_new_tokens=new_tokens, do_sample=False,
                                  eos_token_id=None, pad_token_id=0)
    batching = ContinuousBatchingConfig(block_size=4, num_blocks=96, max_batch_tokens=16,
                                        return_logprobs=True)
    out = model.generate_batch(prompts, generation_config=generation, progress_bar=False,
                               continuous_batching_config=batching)
    return {r.request_id: (r.generated_tokens, np.array(r.logprobs)) for r in out.values()}


@pytest.mark.parametrize("heads, kv_heads", [(4, 2), (4, 4), (8, 1)])
def test_generate_batch_matches_transformers_paged_sdpa(heads, kv_heads):
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=128, hidden_size=64, intermediate_size=128,
                         num_hidden_layers=2, num_attention_heads=heads,
                         num_key_value_heads=kv_heads, max_position_embeddings=256)
    model = LlamaForCausalLM(config).eval()
    pe.transformers.register()
    # Prompt lengths 1 to 30 (prefilled in chunks of at most 16 batch tokens).
    prompts = [[1, 2, 3, 4, 5], [7, 8, 9], list(range(10, 40)), [3], list(range(50, 67))]
    want = _generate(model, "paged|sdpa", prompts, 12)
    got = _generate(model, pe.transformers.PAGED_NAME, prompts, 12)
    assert got.keys() == want.keys()
    for request, (tokens, logprobs) in want.items():
        assert got[request][0] == tokens, request
        assert np.abs(got[request][1] - logprobs).max() <= 1e-5, request


def test_rows_outside_page_order_are_refused():
    """A cache group whose rows are not whole pages in position order (a
    sliding-window ring buffer) is refused, never read as if it were."""
    cu = torch.tensor([0, 6, 9])
    rows = torch.tensor([8, 9, 10, 11, 0, 1, 4, 5, 6])
    table = pe.transformers._sequence_pages(rows, cu, 4)
    assert table.tolist() == [[2, 0], [1, 0]]
    ring = torch.tensor([8, 9, 10, 11, 1, 0, 4, 5, 6])
    with pytest.raises(NotImplementedError, match="whole pages in position order"):
        pe.transformers._sequence_pages(ring, cu, 4)
