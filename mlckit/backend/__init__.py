"""Backends: TIR PrimFunc -> readable Python source -> callable.

- ``lnumpy``: the reference interpreter, low-level NumPy in the MLC course's style, with
  bounds checks on every buffer access (``mlckit.backend.lnumpy``).
- ``numba_cpu``: TVM's lowered TIR printed for ``numba.njit`` (``prange``, registers as
  scalars, vector lanes), compiled and cached (``mlckit.backend.numba_cpu``).
- ``numba_cuda``: lowered TIR printed as ``numba.cuda`` kernels and their launches.

They share one code generator (``codegen.py``) and one argument checker (``signature.py``);
the generator only prints, every rewrite is a TIR pass run before it.
Numba is imported only when a numba kernel is built, so ``import mlckit`` stays fast.

Example::

    from mlckit.backend import lnumpy
    print(lnumpy.to_source(mm_relu))
"""

from .signature import ArgumentError

__all__ = ["ArgumentError"]
