"""IR an importer emits compiles and computes exactly what it says, raised or not.

Two things that no `pe` op covers and the pipelines must still get right:

* ``linalg.softmax`` (every softmax an importer does not decompose itself) is
  decomposed by ``pe-decompose-aggregated-ops``;
* i1 tensors (boolean masks as constants or arguments, then ``arith.select``):
  an i1 buffer holds a byte per element, and vectorized code must read bytes,
  not bits (``pe-bool-vectors-as-bytes``).

Both are compiled for the CPU and as GPU code run on the CPU (``--target=gpu-on-cpu``)
and compared with numpy in float64. Tolerance (f32): 1e-6 absolute on softmax
probabilities in [0, 1] (exp and a sum of 8-16 terms in f32).
"""

import numpy as np
import pytest

from pe import runner

TARGETS = {"cpu": [], "gpu-on-cpu": ["--target=gpu-on-cpu", "--gpu-block-size=32"]}

MASKED_SOFTMAX = """
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @masked_softmax(%x: tensor<{n}x{n}xf32>, %keep: tensor<{n}x{n}xi1>) -> tensor<{n}x{n}xf32> {{
  %min = arith.constant -3.40282347E+38 : f32
  %e = tensor.empty() : tensor<{n}x{n}xf32>
  %m = linalg.generic {{indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]}}
      ins(%keep, %x : tensor<{n}x{n}xi1>, tensor<{n}x{n}xf32>) outs(%e : tensor<{n}x{n}xf32>) {{
  ^bb0(%k: i1, %v: f32, %o: f32):
    %s = arith.select %k, %v, %min : f32
    linalg.yield %s : f32
  }} -> tensor<{n}x{n}xf32>
  %s = linalg.softmax dimension({dim}) ins(%m : tensor<{n}x{n}xf32>) outs(%e : tensor<{n}x{n}xf32>) -> tensor<{n}x{n}xf32>
  return %s : tensor<{n}x{n}xf32>
}}
"""

CONSTANT_MASK = """
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @constant_mask(%x: tensor<{n}x{n}xf32>) -> tensor<{n}x{n}xf32> {{
  %ninf = arith.constant 0xFF800000 : f32
  %keep = arith.constant dense<{mask}> : tensor<{n}x{n}xi1>
  %e = tensor.empty() : tensor<{n}x{n}xf32>
  %m = linalg.generic {{indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]}}
      ins(%keep, %x : tensor<{n}x{n}xi1>, tensor<{n}x{n}xf32>) outs(%e : tensor<{n}x{n}xf32>) {{
  ^bb0(%k: i1, %v: f32, %o: f32):
    %s = arith.select %k, %v, %ninf : f32
    linalg.yield %s : f32
  }} -> tensor<{n}x{n}xf32>
  return %m : tensor<{n}x{n}xf32>
}}
"""


def _softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("n,dim", [(8, 1), (16, 1), (13, 0)])
def test_masked_softmax_from_bool_argument(target, n, dim):
    rng = np.random.default_rng(n + dim)
    x = rng.standard_normal((n, n)).astype(np.float32)
    keep = rng.random((n, n)) < 0.6
    keep[np.arange(n), np.arange(n)] = True  # no fully masked row or column
    module = runner.compile(MASKED_SOFTMAX.format(n=n, dim=dim), TARGETS[target])
    got = module.call("masked_softmax", x, keep)[0]
    masked = np.where(keep, x.astype(np.float64), -3.40282347e38)
    np.testing.assert_allclose(got, _softmax(masked, dim), atol=1e-6, rtol=0)


@pytest.mark.parametrize("target", TARGETS)
def test_causal_bool_constant(target):
    n = 11  # odd: vector tails too
    keep = np.tril(np.ones((n, n), bool))
    text = "[" + ", ".join("[" + ", ".join("true" if k else "false" for k in row) + "]"
                           for row in keep) + "]"
    module = runner.compile(CONSTANT_MASK.format(n=n, mask=text), TARGETS[target])
    x = np.random.default_rng(3).standard_normal((n, n)).astype(np.float32)
    got = module.call("constant_mask", x)[0]
    np.testing.assert_array_equal(got, np.where(keep, x, -np.inf))
