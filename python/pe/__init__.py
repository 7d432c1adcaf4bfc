"""pe: Python side of the pe-mlir project.

* ``pe.reference``: independent float64 numpy reference implementations (the test oracle).
* ``pe.ir``: helpers that render `pe` dialect attributes and small MLIR functions as text.
"""

from . import ir, reference  # noqa: F401

__all__ = ["ir", "reference"]
