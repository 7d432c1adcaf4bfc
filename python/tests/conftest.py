"""pytest configuration: the `pe` package in python/ importable without installing it, and
every test marked with the layer of the project it exercises.

Run one layer with ``-m LAYER`` (``pytest python/tests -m raising``). The layers:

* ``reference``: the float64 oracle itself (no compiler).
* ``dialect``: the pe dialect's folds and verifiers through pe-opt.
* ``frontend``: model configs read by the front end (pe-compile --config).
* ``raising``: importer IR raised into pe ops.
* ``cpu``: the CPU kernels and pipelines, compiled and run against the oracle (every
  target: AVX2, AVX-512, AMX, AArch64 under emulation).
* ``gpu``: the GPU pipelines (PTX, the GPU schedule run on the CPU, the GPU check).
* ``driver``: the tools, the C interface, run-time errors and bad input.
* ``integration``: PyTorch and transformers.

``sanitized`` marks what the ASan/UBSan run of CI repeats: the layers whose C++ paths only
pytest drives (frontend, raising, driver) and one sweep of the attention kernels' shapes.
"""

import os
import sys

# Under pytest-xdist, each worker's libraries (torch's intra-op threads,
# OpenBLAS) get their share of the cores, set before they are imported: with
# as many threads as cores in every worker they spin against each other (the
# two Hugging Face files took 180 s with two workers on two cores, 120 s with
# one thread each). Compiled kernels are not affected: their OpenMP regions
# name their thread count (--num-threads).
if os.environ.get("PYTEST_XDIST_WORKER_COUNT"):
    _share = max(1, (os.cpu_count() or 1) // int(os.environ["PYTEST_XDIST_WORKER_COUNT"]))
    for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_variable, str(_share))

import pytest  # noqa: E402

PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if PYTHON_DIR not in sys.path:
    sys.path.insert(0, PYTHON_DIR)

LAYERS = {
    "test_reference.py": "reference",
    "test_folds.py": "dialect",
    "test_config.py": "frontend",
    "test_raise.py": "raising",
    "test_importer_ops.py": "raising",
    "test_compiled.py": "cpu",
    "test_sinusoidal.py": "cpu",
    "test_rope_details.py": "cpu",
    "test_multi_stream_rope.py": "cpu",
    "test_chunk_and_temperature.py": "cpu",
    "test_tile_attention.py": "cpu",
    "test_fusion.py": "cpu",
    "test_nonfinite.py": "cpu",
    "test_softcap.py": "cpu",
    "test_sinks.py": "cpu",
    "test_mla_absorbed.py": "cpu",
    "test_mla_shared_key.py": "cpu",
    "test_kv_cache.py": "cpu",
    "test_kernel_code.py": "cpu",
    "test_targets.py": "cpu",
    "test_benchmark_report.py": "cpu",
    "test_avx2_kernels.py": "cpu",
    "test_aarch64.py": "cpu",
    "test_aarch64_sve.py": "cpu",
    "test_gpu_schedule.py": "gpu",
    "test_tensor_core_kernels.py": "gpu",
    "test_gpu_check.py": "gpu",
    "test_runner.py": "driver",
    "test_robustness.py": "driver",
    "test_torch_ops.py": "integration",
    "test_transformers.py": "integration",
    "test_continuous_batching.py": "integration",
    "test_hf_integration.py": "integration",
    "test_hf_models.py": "integration",
    "test_hf_models_fused.py": "integration",
    "test_fused_mrope.py": "integration",
}

SANITIZED_LAYERS = {"frontend", "raising", "driver"}

# The files that take longest (each minutes of compiling), in that order, run
# before all others: `pytest -n 2 --dist loadfile` hands the files to the two
# workers in collection order, and with the longest first both finish about
# together (alphabetically, one worker ran the longest file alone at the end).
LONGEST_FIRST = [
    "test_kv_cache.py",
    "test_tile_attention.py",
    "test_gpu_check.py",
    "test_aarch64_sve.py",
    "test_aarch64.py",
    "test_hf_models_fused.py",
    "test_fusion.py",
    "test_nonfinite.py",
    "test_compiled.py",
    "test_hf_models.py",
]


def pytest_configure(config):
    for layer in sorted(set(LAYERS.values())) + ["sanitized"]:
        config.addinivalue_line("markers", f"{layer}: see python/tests/conftest.py")


def pytest_collection_modifyitems(config, items):
    stale = sorted(set(LONGEST_FIRST) - set(LAYERS))
    if stale:
        raise pytest.UsageError(f"LONGEST_FIRST names files that are not tests: {stale}")
    for item in items:
        name = os.path.basename(str(item.fspath))
        layer = LAYERS.get(name)
        if layer is None:
            raise pytest.UsageError(f"{name} is in no layer: add it to LAYERS in conftest.py")
        item.add_marker(layer)
        if layer in SANITIZED_LAYERS:
            item.add_marker("sanitized")
    # Stable: the tests of a file keep their order.
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(os.path.basename(str(item.fspath)), len(rank)))
