"""pe: Python side of the pe-mlir project.

* ``pe.config``: a model's Hugging Face config.json as pe attributes, IR and kernels.
* ``pe.reference``: independent float64 numpy reference implementations (the test oracle).
* ``pe.ir``: helpers that render `pe` dialect attributes and small MLIR functions as text.
* ``pe.runner``: compile pe IR with `pe-compile` and call it on numpy arrays.
* ``pe.gpu_manifest``: run a function of a GPU manifest without LLVM (CuPy; import it explicitly).
* ``pe.torch``: the compiled kernels as PyTorch operators (needs torch; import it explicitly).
* ``pe.transformers``: pe attention inside Hugging Face transformers (needs transformers).
"""

from . import config, ir, reference, runner  # noqa: F401
from ._version import __version__  # noqa: F401

__all__ = ["config", "ir", "reference", "runner", "__version__"]
