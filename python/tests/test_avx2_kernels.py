"""Every numeric test of test_compiled.py again, on kernels built for AVX2.

`--mcpu=x86-64-v3` (AVX2, FMA, F16C; 16 vector registers of 8 f32 lanes, no
AVX512-BF16) is what the AMD Zen 2 and other AVX2-only CPUs run: 8-lane
kernels with 2 x 6 micro-tiles, bf16 rounded in integer arithmetic, bf16
attention on f32 FMAs. On a machine with AVX-512 this exercises that path
too, with the same references and tolerances; on an AVX2-only machine the
default build already is that path (test_compiled.py), and this file skips.
"""

import pytest

import test_compiled
from pe import runner
from test_compiled import *  # noqa: F401,F403 - the tests and their module fixtures

pytestmark = pytest.mark.skipif(
    "avx512f" not in runner._cpu_flags(),
    reason="this CPU has no AVX-512: test_compiled.py already runs its own AVX2 (or "
           "narrower) kernels")


@pytest.fixture(scope="module", autouse=True)
def _avx2_target():
    """Compiles this module's fixtures for x86-64-v3."""
    saved = test_compiled.TARGET_ARGS
    test_compiled.TARGET_ARGS = ("--mcpu=x86-64-v3",)
    yield
    test_compiled.TARGET_ARGS = saved
