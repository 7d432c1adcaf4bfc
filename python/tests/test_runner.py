"""pe.runner and the C interface it calls: errors reach Python as exceptions,
arguments are never silently converted, results can be written into caller
arrays, bf16 is ml_dtypes.bfloat16, scalar results come back, and a compiled
module leaves no files behind.

Numbers are compared with the float64 reference (pe.reference): f32 RoPE
within 1e-5 absolute for |x| <= 2.5; written-in-place results are compared
bit for bit with the allocating call of the same library."""

from __future__ import annotations

import gc
import os
import re
import subprocess

import ml_dtypes
import numpy as np
import pytest

import pe
from pe import reference, runner

pytestmark = pytest.mark.skipif(not os.access(runner.PE_COMPILE, os.X_OK),
                                reason=f"pe-compile not found at {runner.PE_COMPILE}")

ROPE = """
func.func @rope(%x: tensor<1x4x?x32xf32>, %p: tensor<?xi64>) -> tensor<1x4x?x32xf32> {
  %y = pe.rope #pe.rope<rotary_dim = 32> %x, %p : tensor<1x4x?x32xf32>, tensor<?xi64>
  return %y : tensor<1x4x?x32xf32>
}
func.func @rope32(%x: tensor<1x4x?x32xf32>, %p: tensor<?xi32>) -> tensor<1x4x?x32xf32> {
  %y = pe.rope #pe.rope<rotary_dim = 32> %x, %p : tensor<1x4x?x32xf32>, tensor<?xi32>
  return %y : tensor<1x4x?x32xf32>
}
func.func @rope_bf16(%x: tensor<1x4x?x32xbf16>, %p: tensor<?xi64>) -> tensor<1x4x?x32xbf16> {
  %y = pe.rope #pe.rope<rotary_dim = 32> %x, %p : tensor<1x4x?x32xbf16>, tensor<?xi64>
  return %y : tensor<1x4x?x32xbf16>
}
func.func @lookup(%table: tensor<4x2xf32>, %pos: tensor<?xi64>) -> tensor<?x2xf32> {
  %e = pe.learned %table[%pos] : tensor<4x2xf32>, tensor<?xi64> -> tensor<?x2xf32>
  return %e : tensor<?x2xf32>
}
func.func @count(%x: tensor<?xf32>) -> index {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  return %n : index
}
func.func @slopes_and_count(%x: tensor<?xf32>) -> (tensor<4xf32>, index) {
  %s = pe.alibi_slopes : tensor<4xf32>
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  return %s, %n : tensor<4xf32>, index
}
"""


@pytest.fixture(scope="module")
def mod():
    return runner.compile(ROPE)


def _inputs(s=5):
    rng = np.random.default_rng(0)
    x = rng.uniform(-2.5, 2.5, (1, 4, s, 32)).astype(np.float32)
    p = np.array([3, 10, 11, 700, 12][:s], dtype=np.int64)
    return x, p


def test_rope_matches_the_reference(mod):
    x, p = _inputs()
    (got,) = mod.call("rope", x, p)
    want = reference.apply_rope(x.astype(np.float64), p, 10000.0, 32)
    assert np.abs(got - want).max() <= 1e-5


def test_size_mismatch_raises_and_the_process_goes_on(mod):
    x, p = _inputs()
    with pytest.raises(runner.KernelError, match=re.escape(
            "pe.rope: the number of positions differs from the sequence length: got 4, "
            "expected 5")) as caught:
        mod.call("rope", x, p[:4])
    assert caught.value.status == 1 and caught.value.function == "rope"
    (again,) = mod.call("rope", x, p)  # the module still works
    assert np.isfinite(again).all()


def test_learned_position_out_of_range_raises(mod):
    table = np.arange(8, dtype=np.float32).reshape(4, 2)
    with pytest.raises(runner.KernelError, match=re.escape(
            "pe.learned: position 4 (entry 1) is out of range for a table of 4 rows")) as caught:
        mod.call("lookup", table, np.array([1, 4, 0]))
    assert caught.value.status == 2
    (rows,) = mod.call("lookup", table, np.array([1, 3, 0]))
    assert np.array_equal(rows, table[[1, 3, 0]])


def test_static_shape_is_checked_before_the_call(mod):
    x, p = _inputs()
    with pytest.raises(ValueError, match=r"expected shape \(1, 4, -1, 32\)"):
        mod.call("rope", x[:, :2], p)


@pytest.mark.parametrize("value, error, message", [
    (np.array([0.0, 1.0, 2.0, 3.0, 4.0]), TypeError, "expected integers"),
    (np.array([0, 1, 2, 3, 2**31]), OverflowError, "outside the range of i32"),
])
def test_positions_are_never_cast(mod, value, error, message):
    x, _ = _inputs()
    with pytest.raises(error, match=message):
        mod.call("rope32", x, value)


def test_floats_that_would_round_are_refused(mod):
    x, p = _inputs()
    with pytest.raises(ValueError, match="is not exactly a f32"):
        mod.call("rope", x.astype(np.float64) + 1e-12, p)
    with pytest.raises(ValueError, match="is not exactly a bf16"):
        mod.call("rope_bf16", x, p)


def test_bf16_in_and_out_as_ml_dtypes(mod):
    x, p = _inputs()
    xb = x.astype(ml_dtypes.bfloat16)
    (got,) = mod.call("rope_bf16", xb, p)
    assert got.dtype == np.dtype(ml_dtypes.bfloat16)
    want = reference.apply_rope(xb.astype(np.float64), p, 10000.0, 32)
    # bf16: 2 ulps of the values' scale (2.5 * 2^-7).
    assert np.abs(got.astype(np.float64) - want).max() <= 2 * 2.5 * 2.0**-7
    # A float32 array holding bf16 values exactly is taken as it is.
    (same,) = mod.call("rope_bf16", xb.astype(np.float32), p)
    assert np.array_equal(same.view(np.uint16), got.view(np.uint16))


def _aligned(shape, dtype, misalign=0):
    """A C-contiguous array whose data starts `misalign` bytes after a 64-byte boundary."""
    dtype = np.dtype(dtype)
    n = int(np.prod(shape)) * dtype.itemsize
    raw = np.zeros(n + 128, np.uint8)
    start = (-raw.ctypes.data) % 64 + misalign
    return raw[start:start + n].view(dtype).reshape(shape)


@pytest.mark.parametrize("misalign", [0, 4])
def test_results_into_caller_arrays(mod, misalign):
    x, p = _inputs()
    (want,) = mod.call("rope", x, p)
    out = _aligned(x.shape, np.float32, misalign)
    (got,) = mod.call("rope", x, p, out=out)
    assert got is out
    assert np.array_equal(out, want)


def test_wrong_outputs_are_refused(mod):
    x, p = _inputs()
    with pytest.raises(TypeError, match="C-contiguous array of float32"):
        mod.call("rope", x, p, out=np.zeros(x.shape, np.float64))
    with pytest.raises(TypeError, match="C-contiguous array of float32"):
        mod.call("rope", x, p, out=np.zeros((1, 4, 32, 5), np.float32).transpose(0, 1, 3, 2))
    with pytest.raises(runner.KernelError, match="an output buffer does not have the "
                                                 "result's size: got 4, expected 5"):
        mod.call("rope", x, p, out=np.zeros((1, 4, 4, 32), np.float32))


def test_scalar_results(mod):
    assert mod.call("count", np.zeros(7, np.float32)) == [7]
    slopes, n = mod.call("slopes_and_count", np.zeros(3, np.float32))
    assert n == 3
    assert np.allclose(slopes, reference.alibi_slopes(4), rtol=0, atol=1e-7)
    out = np.zeros(4, np.float32)
    got = mod.call("slopes_and_count", np.zeros(9, np.float32), out=out)
    assert got[0] is out and got[1] == 9 and np.array_equal(out, slopes)


def test_a_module_leaves_no_files():
    module = runner.compile(ROPE)
    folder = os.path.dirname(module.library)
    assert os.path.exists(module.library)
    del module
    gc.collect()
    assert not os.path.exists(folder)


def test_package_and_version():
    assert pe.runner is runner
    line = subprocess.run([runner.PE_COMPILE, "--version"], capture_output=True,
                          text=True).stdout
    assert f"pe-mlir version {pe.__version__}" in line


def test_library_that_does_not_load(tmp_path):
    """A library the loader refuses raises runner.LoadError naming it and the
    loader's reason, not a bare OSError."""
    lib = tmp_path / "libbroken.so"
    lib.write_bytes(b"not an ELF file")
    interface = tmp_path / "libbroken.json"
    interface.write_text('{"last_error": "x_last_error", "functions": []}')
    with pytest.raises(runner.LoadError, match=r"pe: cannot load the kernel library .*libbroken"):
        runner.load(str(lib))
