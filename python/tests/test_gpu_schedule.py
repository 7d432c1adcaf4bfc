"""Every numeric test of test_compiled.py again, on the GPU kernels' schedule.

`pe-compile --target=gpu-on-cpu` compiles each op as for the GPU (the GPU RoPE kernel over
16-byte chunks, every other op's loops mapped to blocks and threads with grid-stride loops,
deferred error reports, the kernels' polynomial sin/cos/exp) and then runs each launch's
blocks and threads in sequence on the CPU. The same references and tolerances as for the
CPU build apply, so a wrong index, guard or mask in a GPU kernel fails here, without a GPU.
"""

import pytest

import test_compiled
from test_compiled import *  # noqa: F401,F403 - the tests and their module fixtures

# Small launches (3 blocks of 32 threads), so that every thread walks its grid-stride loop
# many times and the guards at the ends of the iteration spaces are exercised.
GPU_ON_CPU = ("--target=gpu-on-cpu", "--gpu-block-size=32", "--gpu-max-blocks=3")


@pytest.fixture(scope="module", autouse=True)
def _gpu_schedule():
    """Compiles this module's fixtures with --target=gpu-on-cpu."""
    saved = test_compiled.TARGET_ARGS
    test_compiled.TARGET_ARGS = GPU_ON_CPU
    yield
    test_compiled.TARGET_ARGS = saved
