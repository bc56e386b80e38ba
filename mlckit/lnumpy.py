"""``mlckit.lnumpy``: a PrimFunc as low-level NumPy (see :mod:`mlckit.backend.lnumpy`).

Example::

    import mlckit
    print(mlckit.lnumpy.to_source(mm_relu))
"""

from mlckit.backend.lnumpy import (
    ArgumentError,
    GeneratedSource,
    LNumpyFunction,
    OutOfBoundsError,
    build,
    to_source,
)

__all__ = ["ArgumentError", "GeneratedSource", "LNumpyFunction", "OutOfBoundsError", "build",
           "to_source"]
