"""Every numeric test of test_compiled.py again, compiled for AArch64 and run
under qemu-user.

`--mtriple=aarch64-linux-gnu --mcpu=neoverse-n1`: NEON, 32 vector registers of
4 f32 lanes (4 x 6 micro-tiles), no BF16 (bf16 rounded in integer
arithmetic). The libraries are cross-compiled, linked with Debian's aarch64
cross toolchain against the aarch64 pe runtime, and run by pe-call under
qemu-aarch64 (pe.emulated); the references and tolerances are
test_compiled.py's. Skipped, with the reason, where qemu-user, the aarch64
libc or the cross-built runtime are missing.
"""

import pytest

import test_compiled
from pe import emulated
from test_compiled import *  # noqa: F401,F403 - the tests and their module fixtures

MISSING = emulated.missing("aarch64")
pytestmark = pytest.mark.skipif(MISSING is not None, reason=f"AArch64: {MISSING}")

AARCH64 = ("--mtriple=aarch64-linux-gnu", "--mcpu=neoverse-n1")


@pytest.fixture(scope="module", autouse=True)
def _aarch64_target():
    """Compiles this module's fixtures for AArch64 (run under qemu)."""
    saved = test_compiled.TARGET_ARGS
    test_compiled.TARGET_ARGS = AARCH64
    yield
    test_compiled.TARGET_ARGS = saved
