"""pe: Python side of the pe-mlir project.

* ``pe.reference``: independent float64 numpy reference implementations (the test oracle).
* ``pe.ir``: helpers that render `pe` dialect attributes and small MLIR functions as text.
* ``pe.runner``: compile pe IR with `pe-compile` and call it on numpy arrays.
"""

from . import ir, reference, runner  # noqa: F401
from ._version import __version__  # noqa: F401

__all__ = ["ir", "reference", "runner", "__version__"]
