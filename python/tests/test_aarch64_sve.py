"""Every numeric test of test_compiled.py again, compiled for AArch64 with SVE
of 256 bits and run under qemu-user with that vector length.

`--mtriple=aarch64-linux-gnu --mcpu=neoverse-v1 --sve-vector-bits=256` (Graviton
3): 8 f32 lanes computed with SVE instructions (LLVM's SVE lowering of
fixed-width vectors, `vscale_range(2, 2)`), BF16; qemu runs `-cpu max` with
a 256-bit vector length. The references and tolerances are test_compiled.py's.
Skipped, with the reason, where qemu-user, the aarch64 libc or the
cross-built runtime are missing.
"""

import pytest

import test_compiled
from pe import emulated
from test_compiled import *  # noqa: F401,F403 - the tests and their module fixtures

MISSING = emulated.missing("aarch64")
pytestmark = pytest.mark.skipif(MISSING is not None, reason=f"AArch64: {MISSING}")

AARCH64 = ("--mtriple=aarch64-linux-gnu", "--mcpu=neoverse-v1", "--sve-vector-bits=256")


@pytest.fixture(scope="module", autouse=True)
def _sve_target():
    """Compiles this module's fixtures for AArch64 with 256-bit SVE (run under qemu)."""
    saved = test_compiled.TARGET_ARGS
    test_compiled.TARGET_ARGS = AARCH64
    yield
    test_compiled.TARGET_ARGS = saved
