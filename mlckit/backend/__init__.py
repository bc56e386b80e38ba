"""Backends: TIR PrimFunc -> readable Python source -> callable.

- ``lnumpy``: the reference interpreter, low-level NumPy in the MLC course's style, with
  bounds checks on every buffer access (``mlckit.backend.lnumpy``).
- ``numba_cpu``: the same source flavoured for ``numba.njit`` (``prange``, unrolling,
  hoisted allocations), compiled and cached (``mlckit.backend.numba_cpu``).

Both share one code generator (``codegen.py``) and one argument checker (``signature.py``).
Numba is imported only when a numba kernel is built, so ``import mlckit`` stays fast.

Example::

    from mlckit.backend import lnumpy
    print(lnumpy.to_source(mm_relu))
"""

from .signature import ArgumentError

__all__ = ["ArgumentError"]
