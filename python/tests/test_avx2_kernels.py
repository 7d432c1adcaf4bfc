"""Every numeric test of test_compiled.py again, on kernels built for AVX2 and
run on an emulated AVX2-only CPU.

`--mtriple=x86_64-linux-gnu --mcpu=znver2` (AVX2, FMA, F16C; 16 vector
registers of 8 f32 lanes, no AVX-512) is the AMD Zen 2 this file stands in
for: 8-lane kernels with 2 x 6 micro-tiles, bf16 rounded in integer
arithmetic, bf16 attention on f32 FMAs. The libraries run under
`qemu-x86_64 -cpu EPYC-Rome` (Zen 2; pe.emulated), so an instruction that
CPU lacks (anything AVX-512, vdpbf16ps, AMX) faults and fails the test,
where on the AVX-512 machine underneath it would have run. Same references
and tolerances as test_compiled.py (without a qemu-user of 7.2 or later,
the kernels run natively, unguarded). On a CPU without AVX-512 the default
build already is this path (test_compiled.py), and this file skips.
"""

import pytest

import test_compiled
from pe import emulated, runner
from test_compiled import *  # noqa: F401,F403 - the tests and their module fixtures

ZEN2 = ("--mtriple=x86_64-linux-gnu", "--mcpu=znver2")
# Where qemu cannot emulate Zen 2 here, the same kernels run natively (no
# fault for a wider instruction then, the numerics still checked).
ZEN2_QEMU = None if emulated.missing_cpu_model() else "EPYC-Rome"

pytestmark = pytest.mark.skipif(
    "avx512f" not in runner._cpu_flags(),
    reason="this CPU has no AVX-512: test_compiled.py already runs its own AVX2 (or "
           "narrower) kernels")


@pytest.fixture(scope="module", autouse=True)
def _zen2_target():
    """Compiles this module's fixtures for Zen 2 and runs them on its emulation."""
    saved = test_compiled.TARGET_ARGS, test_compiled.QEMU_CPU
    test_compiled.TARGET_ARGS, test_compiled.QEMU_CPU = ZEN2, ZEN2_QEMU
    yield
    test_compiled.TARGET_ARGS, test_compiled.QEMU_CPU = saved
